package domain

// Payment intent statuses (SPEC 3.4). Pending and RequiresAction are both "waiting": the spec
// names the waiting state of a delayed PIX or boleto both ways; troco uses pending.
const (
	PIStatusRequiresPaymentMethod = "requires_payment_method"
	PIStatusRequiresConfirmation  = "requires_confirmation"
	PIStatusRequiresAction        = "requires_action"
	PIStatusPending               = "pending"
	PIStatusProcessing            = "processing"
	PIStatusRequiresCapture       = "requires_capture"
	PIStatusSucceeded             = "succeeded"
	PIStatusCanceled              = "canceled"
)

// PIStatuses are every payment intent status: the values the list's status filter accepts, and
// the only ones stored (an unfiltered list reads the status index one range per status).
var PIStatuses = []string{PIStatusRequiresPaymentMethod, PIStatusRequiresConfirmation, PIStatusRequiresAction,
	PIStatusPending, PIStatusProcessing, PIStatusRequiresCapture, PIStatusSucceeded, PIStatusCanceled}

// Charge statuses (SPEC 3.5; pending is Stripe's third value, for attempts still waiting).
const (
	ChargeStatusSucceeded = "succeeded"
	ChargeStatusPending   = "pending"
	ChargeStatusFailed    = "failed"
)

// Setup intent statuses.
const (
	SetupStatusRequiresPaymentMethod = "requires_payment_method"
	// SetupStatusProcessing: a live card is being saved with the card processor.
	SetupStatusProcessing = "processing"
	SetupStatusSucceeded  = "succeeded"
	SetupStatusCanceled   = "canceled"
)

// Payment method types (CONTRACT 4).
const (
	MethodCreditCard = "credit_card"
	MethodPix        = "pix"
	MethodBoleto     = "boleto"
)

// Capture methods of a payment intent.
const (
	CaptureAutomatic = "automatic"
	CaptureManual    = "manual"
)

// Error codes of the payment engine that SPEC 7 and CONTRACT do not list.
const (
	CodePaymentIntentUnexpectedState = "payment_intent_unexpected_state"
	CodeSetupIntentUnexpectedState   = "setup_intent_unexpected_state"
	CodeProcessorUnavailable         = "processor_unavailable"
	CodeChargeAlreadyRefunded        = "charge_already_refunded"
	CodeChargeDisputed               = "charge_disputed"
	CodePaymentAttemptExpired        = "payment_intent_payment_attempt_expired"
	CodePaymentCanceled              = "payment_canceled"
)

// PaymentError is SPEC 2.7: the reason a charge failed, also an intent's last_payment_error.
// In test mode the two network fields are always null.
type PaymentError struct {
	Category           string  `json:"category"`
	Code               string  `json:"code"`
	Message            string  `json:"message"`
	AdviceCode         *string `json:"advice_code"`
	NetworkDeclineCode *string `json:"network_decline_code"`
	NetworkAdviceCode  *string `json:"network_advice_code"`
}

// BillingDetails is the buyer data of a payment: the charge's billing_details, a payment
// method's billing_details, and what a confirmation collected.
type BillingDetails struct {
	Address      *Address `json:"address"`
	Email        *string  `json:"email"`
	Name         *string  `json:"name"`
	Phone        *string  `json:"phone"`
	Document     *string  `json:"document"`
	DocumentType *string  `json:"document_type"`
}

// PaymentData is the inner object shared by a payment intent's next_action and a checkout
// session's payment_data (CONTRACT 4); exactly one of Pix, Boleto, CreditCard is set.
type PaymentData struct {
	Type       string          `json:"type"`
	Pix        *PixData        `json:"pix,omitempty"`
	Boleto     *BoletoData     `json:"boleto,omitempty"`
	CreditCard *CreditCardData `json:"credit_card,omitempty"`
}

// PixData is what a buyer needs to pay by PIX.
type PixData struct {
	Code      string `json:"code"`
	ImageURL  string `json:"image_url"`
	ExpiresAt Time   `json:"expires_at"`
}

// BoletoData is what a buyer needs to pay a boleto.
type BoletoData struct {
	DigitableLine string `json:"digitable_line"`
	Barcode       string `json:"barcode"`
	DueDate       string `json:"due_date"`
	URL           string `json:"url"`
	// PixCode is the BR Code of the same charge (boleto híbrido): paying either settles it.
	PixCode string `json:"pix_code"`
}

// CreditCardData summarises the card a payment used.
type CreditCardData struct {
	Brand        string `json:"brand"`
	Last4        string `json:"last4"`
	Installments int    `json:"installments"`
}

// PaymentIntent is the canonical state of a payment (SPEC 3.4).
type PaymentIntent struct {
	ID                  string        `json:"id"`
	Object              string        `json:"object"`
	Amount              int64         `json:"amount"`
	AmountCapturable    int64         `json:"amount_capturable"`
	AmountReceived      int64         `json:"amount_received"`
	CanceledAt          Time          `json:"canceled_at"`
	CancellationReason  *string       `json:"cancellation_reason"`
	CaptureMethod       string        `json:"capture_method"`
	ClientSecret        string        `json:"client_secret"`
	CreatedAt           Time          `json:"created_at"`
	Currency            string        `json:"currency"`
	Customer            *string       `json:"customer"`
	Description         *string       `json:"description"`
	Installments        *int          `json:"installments"`
	InterestPayer       string        `json:"interest_payer"`
	LastPaymentError    *PaymentError `json:"last_payment_error"`
	LatestCharge        *string       `json:"latest_charge"`
	Livemode            bool          `json:"livemode"`
	Metadata            Metadata      `json:"metadata"`
	NextAction          *PaymentData  `json:"next_action"`
	PaymentMethod       *string       `json:"payment_method"`
	PaymentMethodType   *string       `json:"payment_method_type"`
	PaymentMethodTypes  []string      `json:"payment_method_types"`
	StatementDescriptor *string       `json:"statement_descriptor"`
	Status              string        `json:"status"`
	UpdatedAt           Time          `json:"updated_at"`

	// PaymentData is the data of the latest attempt (PIX code, boleto, card summary); it is
	// shown as next_action while the intent waits for the buyer and kept for checkout sessions.
	PaymentData *PaymentData `json:"-"`
	// Buyer is what the latest confirmation collected about the payer.
	Buyer BillingDetails `json:"-"`
}

// Waiting reports whether the intent waits for an asynchronous outcome (PIX, boleto, or a
// card still processing).
func (pi *PaymentIntent) Waiting() bool {
	switch pi.Status {
	case PIStatusPending, PIStatusRequiresAction, PIStatusProcessing:
		return true
	}
	return false
}

// RefreshNextAction derives next_action: the PIX or boleto data while the buyer must act.
func (pi *PaymentIntent) RefreshNextAction() {
	pi.NextAction = nil
	if pi.PaymentData == nil || (pi.Status != PIStatusPending && pi.Status != PIStatusRequiresAction) {
		return
	}
	if pi.PaymentData.Type == MethodPix || pi.PaymentData.Type == MethodBoleto {
		d := *pi.PaymentData
		pi.NextAction = &d
	}
}

// Charge is one attempt to collect a payment intent (SPEC 2.3).
type Charge struct {
	ID                   string               `json:"id"`
	Object               string               `json:"object"`
	Amount               int64                `json:"amount"`
	AmountCaptured       int64                `json:"amount_captured"`
	AmountRefunded       int64                `json:"amount_refunded"`
	BillingDetails       BillingDetails       `json:"billing_details"`
	Captured             bool                 `json:"captured"`
	CreatedAt            Time                 `json:"created_at"`
	Currency             string               `json:"currency"`
	Customer             *string              `json:"customer"`
	Description          *string              `json:"description"`
	Disputed             bool                 `json:"disputed"`
	Invoice              *string              `json:"invoice"`
	Livemode             bool                 `json:"livemode"`
	Metadata             Metadata             `json:"metadata"`
	Paid                 bool                 `json:"paid"`
	PaymentError         *PaymentError        `json:"payment_error"`
	PaymentIntent        string               `json:"payment_intent"`
	PaymentMethod        *string              `json:"payment_method"`
	PaymentMethodDetails PaymentMethodDetails `json:"payment_method_details"`
	ReceiptURL           *string              `json:"receipt_url"`
	Refunded             bool                 `json:"refunded"`
	Refunds              List[*Refund]        `json:"refunds"`
	Status               string               `json:"status"`
	UpdatedAt            Time                 `json:"updated_at"`
}

// PaymentMethodDetails describes the instrument a charge used; Type names the one set field.
type PaymentMethodDetails struct {
	Type   string         `json:"type"`
	Card   *CardDetails   `json:"card,omitempty"`
	Pix    *PixDetails    `json:"pix,omitempty"`
	Boleto *BoletoDetails `json:"boleto,omitempty"`
}

// CardDetails is payment_method_details.card of SPEC 2.3.
type CardDetails struct {
	AmountAuthorized  *int64     `json:"amount_authorized"`
	AuthorizationCode *string    `json:"authorization_code"`
	Brand             string     `json:"brand"`
	Checks            CardChecks `json:"checks"`
	Country           string     `json:"country"`
	ExpMonth          int        `json:"exp_month"`
	ExpYear           int        `json:"exp_year"`
	Fingerprint       string     `json:"fingerprint"`
	Funding           string     `json:"funding"`
	Installments      int        `json:"installments"`
	Last4             string     `json:"last4"`
	Network           string     `json:"network"`
}

// CardChecks are the verification results of a card charge: unchecked, pass or fail.
type CardChecks struct {
	AddressLine1Check      string `json:"address_line1_check"`
	AddressPostalCodeCheck string `json:"address_postal_code_check"`
	CVCCheck               string `json:"cvc_check"`
}

// PixDetails is payment_method_details.pix.
type PixDetails struct {
	Code      string `json:"code"`
	TxID      string `json:"txid"`
	ExpiresAt Time   `json:"expires_at"`
	// FineAmount and InterestAmount are the multa and juros paid on top of the charge's amount
	// when the PIX of an invoice was paid after the invoice's due date (amount_captured
	// includes them); 0 otherwise.
	FineAmount     int64 `json:"fine_amount"`
	InterestAmount int64 `json:"interest_amount"`
}

// BoletoDetails is payment_method_details.boleto.
type BoletoDetails struct {
	Barcode       string `json:"barcode"`
	DigitableLine string `json:"digitable_line"`
	DueDate       string `json:"due_date"`
	// PixCode and PixTxID are the PIX of the same charge printed on the boleto (boleto híbrido).
	PixCode string `json:"pix_code"`
	PixTxID string `json:"pix_txid"`
	// PaidWith says how a paid boleto was paid: boleto (barcode) or pix; null until then.
	PaidWith *string `json:"paid_with"`
	// FineAmount and InterestAmount are the multa and juros paid on top of the charge's amount
	// when the boleto of an invoice was paid after its due date (amount_captured includes
	// them); 0 otherwise.
	FineAmount     int64 `json:"fine_amount"`
	InterestAmount int64 `json:"interest_amount"`
}

// How a boleto híbrido was paid (payment_method_details.boleto.paid_with).
const (
	PaidWithBoleto = "boleto"
	PaidWithPix    = "pix"
)

// Refund returns part or all of a captured charge.
type Refund struct {
	ID            string   `json:"id"`
	Object        string   `json:"object"`
	Amount        int64    `json:"amount"`
	Charge        string   `json:"charge"`
	CreatedAt     Time     `json:"created_at"`
	Currency      string   `json:"currency"`
	Livemode      bool     `json:"livemode"`
	Metadata      Metadata `json:"metadata"`
	PaymentIntent string   `json:"payment_intent"`
	Reason        *string  `json:"reason"`
	Status        string   `json:"status"`
	UpdatedAt     Time     `json:"updated_at"`
	// Release marks, while the refund is being emitted, the refund that records the release of
	// an uncaptured authorization (no money moved: no refund e-mail). Not stored.
	Release bool `json:"-"`
}

// PaymentMethod is an instrument: a card (which can be saved on a customer), or the PIX or
// boleto buyer data of one payment.
type PaymentMethod struct {
	ID             string         `json:"id"`
	Object         string         `json:"object"`
	BillingDetails BillingDetails `json:"billing_details"`
	Card           *PaymentCard   `json:"card"`
	CreatedAt      Time           `json:"created_at"`
	Customer       *string        `json:"customer"`
	Livemode       bool           `json:"livemode"`
	Metadata       Metadata       `json:"metadata"`
	Type           string         `json:"type"`
	UpdatedAt      Time           `json:"updated_at"`

	// SimBehavior is, in test mode, the SPEC 7.1 behaviour of the card (never its number);
	// empty means "approves".
	SimBehavior string `json:"-"`
}

// PaymentCard is what troco keeps of a card: never its number or CVC.
type PaymentCard struct {
	Brand       string `json:"brand"`
	Country     string `json:"country"`
	ExpMonth    int    `json:"exp_month"`
	ExpYear     int    `json:"exp_year"`
	Fingerprint string `json:"fingerprint"`
	Funding     string `json:"funding"`
	Last4       string `json:"last4"`
	Network     string `json:"network"`
}

// SetupIntent saves a card for later payments without charging it.
type SetupIntent struct {
	ID                 string        `json:"id"`
	Object             string        `json:"object"`
	CancellationReason *string       `json:"cancellation_reason"`
	ClientSecret       string        `json:"client_secret"`
	CreatedAt          Time          `json:"created_at"`
	Customer           *string       `json:"customer"`
	Description        *string       `json:"description"`
	LastSetupError     *PaymentError `json:"last_setup_error"`
	Livemode           bool          `json:"livemode"`
	Metadata           Metadata      `json:"metadata"`
	PaymentMethod      *string       `json:"payment_method"`
	PaymentMethodTypes []string      `json:"payment_method_types"`
	Status             string        `json:"status"`
	Usage              string        `json:"usage"`
	UpdatedAt          Time          `json:"updated_at"`
}

// Transaction is one ledger entry (SPEC 2.9, CONTRACT 5): one per instalment of a card sale,
// one per PIX or boleto payment, and one (negative) per refund.
type Transaction struct {
	ID                string  `json:"id"`
	Object            string  `json:"object"`
	Amount            int64   `json:"amount"`
	AvailableOn       string  `json:"available_on"`
	Charge            string  `json:"charge"`
	CreatedAt         Time    `json:"created_at"`
	Currency          string  `json:"currency"`
	FeeAmount         int64   `json:"fee_amount"`
	Installment       *int    `json:"installment"`
	InstallmentCount  *int    `json:"installment_count"`
	InterestAmount    int64   `json:"interest_amount"`
	Livemode          bool    `json:"livemode"`
	NetAmount         int64   `json:"net_amount"`
	PaymentIntent     string  `json:"payment_intent"`
	PaymentMethodType string  `json:"payment_method_type"`
	Refund            *string `json:"refund"`
	SettledAt         Time    `json:"settled_at"`
	Status            string  `json:"status"`
	Type              string  `json:"type"`
	UpdatedAt         Time    `json:"updated_at"`
}

// Ledger transaction types and statuses.
const (
	TxnTypeCharge = "charge"
	TxnTypeRefund = "refund"
	TxnPending    = "pending"
)
