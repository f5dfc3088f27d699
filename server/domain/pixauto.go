package domain

// PrefixPixAuthorization is the id prefix of Pix Automático authorizations.
const PrefixPixAuthorization = "pixauth_"

// PixAuthorization is a payer's consent to recurring PIX charges (Pix Automático): up to
// MaxAmount per charge, every Interval, from StartDate to EndDate (open-ended when null).
type PixAuthorization struct {
	ID          string   `json:"id"`
	Object      string   `json:"object"`
	Status      string   `json:"status"`
	URL         string   `json:"url"`
	BRCode      string   `json:"brcode"`
	Customer    string   `json:"customer"`
	MaxAmount   int64    `json:"max_amount"`
	Currency    string   `json:"currency"`
	Interval    string   `json:"interval"`
	StartDate   string   `json:"start_date"`
	EndDate     *string  `json:"end_date"`
	Description *string  `json:"description"`
	Metadata    Metadata `json:"metadata"`
	// PaymentMethod is the pm_ of type pix_automatico its approval created.
	PaymentMethod *string `json:"payment_method"`
	// ExpiresAt is when a pending authorization nobody answered expires.
	ExpiresAt  Time `json:"expires_at"`
	CanceledAt Time `json:"canceled_at"`
	Livemode   bool `json:"livemode"`
	CreatedAt  Time `json:"created_at"`
	UpdatedAt  Time `json:"updated_at"`
}

// Pix Automático authorization statuses, intervals and the payment method type approval creates.
const (
	PixAuthPending  = "pending"
	PixAuthApproved = "approved"
	PixAuthRejected = "rejected"
	PixAuthCanceled = "canceled"
	PixAuthExpired  = "expired"

	MethodPixAutomatico = "pix_automatico"
)

// PixAuthIntervals are the recurrences an authorization may have.
var PixAuthIntervals = []string{"week", "month", "quarter", "year"}
