package domain

// Checkout session statuses (SPEC 3.3).
const (
	CheckoutOpen     = "open"
	CheckoutComplete = "complete"
	CheckoutExpired  = "expired"
)

// Checkout session payment statuses (SPEC 2.4).
const (
	CheckoutUnpaid            = "unpaid"
	CheckoutPaid              = "paid"
	CheckoutNoPaymentRequired = "no_payment_required"
)

// Checkout session modes, derived from the line items.
const (
	CheckoutModePayment      = "payment"
	CheckoutModeSubscription = "subscription"
)

// CheckoutPaymentMethodTypes are the methods a session may offer, in the order they are shown.
var CheckoutPaymentMethodTypes = []string{"credit_card", "pix", "boleto"}

// Submit button types of SPEC 2.4.
var SubmitTypes = []string{"auto", "pay", "subscribe", "book", "donate"}

// Checkout templates of SPEC 2.4 (null means the organization's default).
var CheckoutTemplates = []string{"minimal", "booking"}

// BorderStyles a branding override may choose.
var BorderStyles = []string{"rounded", "rectangular", "pill"}

// CheckoutSessionLifetimeHours is how long a session stays open (SPEC 8).
const CheckoutSessionLifetimeHours = 24

// CheckoutSession is one purchase attempt (SPEC 2.4, field names of CONTRACT 3).
type CheckoutSession struct {
	ID                      string                `json:"id"`
	Object                  string                `json:"object"`
	AllowPromotionCodes     bool                  `json:"allow_promotion_codes"`
	Branding                *Branding             `json:"branding"`
	CancelURL               *string               `json:"cancel_url"`
	ClientSecret            string                `json:"client_secret"`
	CreatedAt               Time                  `json:"created_at"`
	Currency                string                `json:"currency"`
	Customer                *string               `json:"customer"`
	CustomerDocument        *string               `json:"customer_document"`
	CustomerDocumentType    *string               `json:"customer_document_type"`
	CustomerEmail           *string               `json:"customer_email"`
	CustomerName            *string               `json:"customer_name"`
	CustomerPhone           *string               `json:"customer_phone"`
	Discount                *string               `json:"discount"`
	DiscountAmount          int64                 `json:"discount_amount"`
	ExpiresAt               Time                  `json:"expires_at"`
	Invoice                 *string               `json:"invoice"`
	InvoiceCreation         bool                  `json:"invoice_creation"`
	LineItems               []LineItem            `json:"line_items"`
	Livemode                bool                  `json:"livemode"`
	Metadata                Metadata              `json:"metadata"`
	Mode                    string                `json:"mode"`
	PaymentData             *PaymentData          `json:"payment_data"`
	PaymentIntent           *string               `json:"payment_intent"`
	PaymentLink             *string               `json:"payment_link"`
	PaymentMethodCollection string                `json:"payment_method_collection"`
	PaymentMethodOptions    *PaymentMethodOptions `json:"payment_method_options"`
	PaymentMethodTypes      []string              `json:"payment_method_types"`
	PaymentStatus           string                `json:"payment_status"`
	RequireBillingAddress   bool                  `json:"require_billing_address"`
	RequireDocument         bool                  `json:"require_document"`
	RequirePhone            bool                  `json:"require_phone"`
	Status                  string                `json:"status"`
	SubmitType              string                `json:"submit_type"`
	Subscription            *string               `json:"subscription"`
	SubtotalAmount          int64                 `json:"subtotal_amount"`
	SuccessURL              *string               `json:"success_url"`
	TaxAmount               int64                 `json:"tax_amount"`
	Template                *string               `json:"template"`
	TotalAmount             int64                 `json:"total_amount"`
	UpdatedAt               Time                  `json:"updated_at"`
	URL                     string                `json:"url"`
}

// Offers reports whether the frozen payment_method_types include method.
func (s *CheckoutSession) Offers(method string) bool {
	for _, m := range s.PaymentMethodTypes {
		if m == method {
			return true
		}
	}
	return false
}

// LineItem is one charged item of a session, with its price and product resolved at creation.
type LineItem struct {
	ID             string  `json:"id"`
	Object         string  `json:"object"`
	Description    *string `json:"description"`
	Price          Price   `json:"price"`
	Product        Product `json:"product"`
	Quantity       int64   `json:"quantity"`
	SubtotalAmount int64   `json:"subtotal_amount"`
	TotalAmount    int64   `json:"total_amount"`
}

// Branding is a visual override of the hosted page; a null field inherits the organization's.
type Branding struct {
	DisplayName     *string `json:"display_name"`
	LogoURL         *string `json:"logo_url"`
	PrimaryColor    *string `json:"primary_color"`
	BackgroundColor *string `json:"background_color"`
	BorderStyle     *string `json:"border_style"`
}

// PaymentMethodOptions are per-method options shown on the hosted page (null for methods not offered).
type PaymentMethodOptions struct {
	CreditCard *CardMethodOptions   `json:"credit_card"`
	Pix        *PixMethodOptions    `json:"pix"`
	Boleto     *BoletoMethodOptions `json:"boleto"`
}

// CardMethodOptions cap the instalments offered and say who pays their interest.
type CardMethodOptions struct {
	MaxInstallments int    `json:"max_installments"`
	InterestPayer   string `json:"interest_payer"`
}

// PixMethodOptions set how long a PIX code stays payable.
type PixMethodOptions struct {
	ExpiresAfterSeconds int64 `json:"expires_after_seconds"`
}

// BoletoMethodOptions set the default due date, in days after confirmation.
type BoletoMethodOptions struct {
	ExpiresAfterDays int `json:"expires_after_days"`
}

// PaymentLink is a reusable URL; each visit creates a fresh checkout session from its template.
type PaymentLink struct {
	ID                      string                `json:"id"`
	Object                  string                `json:"object"`
	Active                  bool                  `json:"active"`
	AllowPromotionCodes     bool                  `json:"allow_promotion_codes"`
	Branding                *Branding             `json:"branding"`
	CancelURL               *string               `json:"cancel_url"`
	CreatedAt               Time                  `json:"created_at"`
	Currency                string                `json:"currency"`
	InvoiceCreation         bool                  `json:"invoice_creation"`
	LineItems               []PaymentLinkItem     `json:"line_items"`
	Livemode                bool                  `json:"livemode"`
	Metadata                Metadata              `json:"metadata"`
	PaymentMethodCollection string                `json:"payment_method_collection"`
	PaymentMethodOptions    *PaymentMethodOptions `json:"payment_method_options"`
	PaymentMethodTypes      []string              `json:"payment_method_types"`
	RequireBillingAddress   bool                  `json:"require_billing_address"`
	RequireDocument         bool                  `json:"require_document"`
	RequirePhone            bool                  `json:"require_phone"`
	SubmitType              string                `json:"submit_type"`
	SuccessURL              *string               `json:"success_url"`
	Template                *string               `json:"template"`
	UpdatedAt               Time                  `json:"updated_at"`
	URL                     string                `json:"url"`
}

// PaymentLinkItem is a price and quantity; it is resolved into a line item for each new session.
type PaymentLinkItem struct {
	Price    string `json:"price"`
	Quantity int64  `json:"quantity"`
}

// Subscription bills a customer on a recurring interval; periods are absolute instants (SPEC 9.2).
// Its statuses and their transitions are in subscription.go.
type Subscription struct {
	ID                   string             `json:"id"`
	Object               string             `json:"object"`
	BillingCycleAnchor   Time               `json:"billing_cycle_anchor"`
	CancelAt             Time               `json:"cancel_at"`
	CancelAtPeriodEnd    bool               `json:"cancel_at_period_end"`
	CanceledAt           Time               `json:"canceled_at"`
	CheckoutSession      *string            `json:"checkout_session"`
	CollectionMethod     string             `json:"collection_method"`
	Coupon               *string            `json:"coupon"`
	CreatedAt            Time               `json:"created_at"`
	Currency             string             `json:"currency"`
	CurrentPeriodEnd     Time               `json:"current_period_end"`
	CurrentPeriodStart   Time               `json:"current_period_start"`
	Customer             string             `json:"customer"`
	DaysUntilDue         *int               `json:"days_until_due"`
	DefaultPaymentMethod *string            `json:"default_payment_method"`
	EndedAt              Time               `json:"ended_at"`
	FineRate             int64              `json:"fine_rate"`
	InterestRate         int64              `json:"interest_rate"`
	Items                []SubscriptionItem `json:"items"`
	LatestInvoice        *string            `json:"latest_invoice"`
	Livemode             bool               `json:"livemode"`
	Metadata             Metadata           `json:"metadata"`
	PauseCollection      *PauseCollection   `json:"pause_collection"`
	Status               string             `json:"status"`
	TrialEnd             Time               `json:"trial_end"`
	TrialStart           Time               `json:"trial_start"`
	UpdatedAt            Time               `json:"updated_at"`
}

// PauseCollection is how a paused subscription treats the invoices of its renewals and, when
// set, the instant it resumes by itself.
type PauseCollection struct {
	Behavior  string `json:"behavior"`
	ResumesAt Time   `json:"resumes_at"`
}

// SubscriptionItem is one recurring price of a subscription.
type SubscriptionItem struct {
	ID       string `json:"id"`
	Object   string `json:"object"`
	Price    Price  `json:"price"`
	Quantity int64  `json:"quantity"`
}
