package domain

import (
	"strings"
	"time"
)

// Invoice statuses (SPEC 3.6 leaves them open; Stripe's set).
const (
	InvoiceDraft         = "draft"
	InvoiceOpen          = "open"
	InvoicePaid          = "paid"
	InvoiceVoid          = "void"
	InvoiceUncollectible = "uncollectible"
)

// InvoiceStatuses lists every status, for list filters.
var InvoiceStatuses = []string{InvoiceDraft, InvoiceOpen, InvoicePaid, InvoiceVoid, InvoiceUncollectible}

// Collection methods of SPEC 2.9 and 4.6.
const (
	CollectionChargeAutomatically = "charge_automatically"
	CollectionSendInvoice         = "send_invoice"
)

// CollectionMethods lists the accepted collection methods.
var CollectionMethods = []string{CollectionChargeAutomatically, CollectionSendInvoice}

// MaxDaysUntilDue bounds days_until_due (ten years; SPEC 4.6 only says non-negative).
const MaxDaysUntilDue = 3650

// Invoice is a billing document (SPEC 2.9, 4.6): what a customer owes, how it is collected and
// when it is due. due_date is an absolute instant (SPEC 9.2); amounts are centavos.
type Invoice struct {
	ID               string  `json:"id"`
	Object           string  `json:"object"`
	AmountDue        int64   `json:"amount_due"`
	AmountPaid       int64   `json:"amount_paid"`
	AmountRemaining  int64   `json:"amount_remaining"`
	AttemptCount     int     `json:"attempt_count"`
	BillingReason    string  `json:"billing_reason"`
	Charge           *string `json:"charge"`
	CheckoutSession  *string `json:"checkout_session"`
	CollectionMethod string  `json:"collection_method"`
	CreatedAt        Time    `json:"created_at"`
	Currency         string  `json:"currency"`
	Customer         string  `json:"customer"`
	DaysUntilDue     *int    `json:"days_until_due"`
	Description      *string `json:"description"`
	DiscountAmount   int64   `json:"discount_amount"`
	DueDate          Time    `json:"due_date"`
	FineAmount       int64   `json:"fine_amount"`
	HostedInvoiceURL *string `json:"hosted_invoice_url"`
	InvoicePDF       *string `json:"invoice_pdf"`
	FineRate         int64   `json:"fine_rate"`
	InterestAmount   int64   `json:"interest_amount"`
	InterestRate     int64   `json:"interest_rate"`
	// LastPaymentError is why the last payment attempt failed (the failed intent's
	// last_payment_error, or the refusal of an attempt that charged nothing); null once paid.
	LastPaymentError   *PaymentError            `json:"last_payment_error"`
	Lines              List[InvoiceLine]        `json:"lines"`
	Livemode           bool                     `json:"livemode"`
	Metadata           Metadata                 `json:"metadata"`
	NextPaymentAttempt Time                     `json:"next_payment_attempt"`
	Number             *string                  `json:"number"`
	PaidOutOfBand      bool                     `json:"paid_out_of_band"`
	PaymentIntent      *string                  `json:"payment_intent"`
	PeriodEnd          Time                     `json:"period_end"`
	PeriodStart        Time                     `json:"period_start"`
	Status             string                   `json:"status"`
	StatusTransitions  InvoiceStatusTransitions `json:"status_transitions"`
	Subscription       *string                  `json:"subscription"`
	SubtotalAmount     int64                    `json:"subtotal_amount"`
	TaxAmount          int64                    `json:"tax_amount"`
	TotalAmount        int64                    `json:"total_amount"`
	UpdatedAt          Time                     `json:"updated_at"`
}

// InvoiceStatusTransitions records when an invoice reached each status.
type InvoiceStatusTransitions struct {
	FinalizedAt           Time `json:"finalized_at"`
	MarkedUncollectibleAt Time `json:"marked_uncollectible_at"`
	PaidAt                Time `json:"paid_at"`
	VoidedAt              Time `json:"voided_at"`
}

// InvoiceLine is one line of an invoice: a price times a quantity, or a free amount with a
// description.
type InvoiceLine struct {
	ID             string  `json:"id"`
	Object         string  `json:"object"`
	Description    *string `json:"description"`
	Price          *Price  `json:"price"`
	Product        *string `json:"product"`
	Quantity       int64   `json:"quantity"`
	UnitAmount     int64   `json:"unit_amount"`
	SubtotalAmount int64   `json:"subtotal_amount"`
	TotalAmount    int64   `json:"total_amount"`
}

// InvoiceLinesURL is the url of an invoice's lines list envelope.
func InvoiceLinesURL(id string) string { return "/v1/invoices/" + id + "/lines" }

// SetTotals recomputes the amounts that follow from the lines and the payment state: subtotal is
// the sum of the lines, total = subtotal − discount + tax, amount_due = total and
// amount_remaining = amount_due − amount_paid.
func (inv *Invoice) SetTotals() {
	var sub int64
	for _, l := range inv.Lines.Data {
		sub += l.SubtotalAmount
	}
	inv.SubtotalAmount = sub
	inv.TotalAmount = sub - inv.DiscountAmount + inv.TaxAmount
	inv.AmountDue = inv.TotalAmount + inv.FineAmount + inv.InterestAmount
	inv.AmountRemaining = inv.AmountDue - inv.AmountPaid
}

// Billing reasons of an invoice (Stripe's).
const (
	BillingManual             = "manual"
	BillingSubscriptionCreate = "subscription_create"
	BillingSubscriptionCycle  = "subscription_cycle"
	BillingSubscriptionUpdate = "subscription_update"
)

// ApplyLateCharges brings the fine and interest of an open invoice up to now (SPEC 9.2: counted
// from the due instant in 24-hour periods); amount_due and amount_remaining include them. Paid,
// void and draft invoices keep what they have.
func (inv *Invoice) ApplyLateCharges(now time.Time) {
	if inv.Status != InvoiceOpen && inv.Status != InvoiceUncollectible {
		return
	}
	if inv.FineRate == 0 && inv.InterestRate == 0 {
		return
	}
	inv.FineAmount, inv.InterestAmount = LateCharges(inv.TotalAmount, inv.FineRate, inv.InterestRate, inv.DueDate.Time, now)
	inv.SetTotals()
}

// DueNoon is the instant a civil day converted by the service stands for (SPEC 9.2):
// 12:00:00Z of that UTC date.
func DueNoon(year int, month time.Month, day int) time.Time {
	return time.Date(year, month, day, 12, 0, 0, 0, time.UTC)
}

// ResolveDaysUntilDue turns days_until_due into a due instant (SPEC 4.6.3, 9.2): the UTC civil
// date of now plus days, at 12:00:00Z. 0 is today.
func ResolveDaysUntilDue(now time.Time, days int) time.Time {
	y, m, d := now.UTC().Date()
	return DueNoon(y, m, d+days)
}

// ParseDueDate parses due_date (SPEC 4.6.4, 4.6.5): a full RFC 3339 timestamp with Z or a
// numeric offset, returned as the same instant in UTC. A date alone, a time without a zone, an
// impossible date (30 February) or a fraction of a second other than zero is a 400 naming
// param.
func ParseDueDate(param, s string) (time.Time, error) {
	const hint = "%s must be a full RFC 3339 timestamp with Z or a numeric offset, such as 2026-12-01T12:00:00Z or 2026-12-01T09:00:00-03:00"
	// time.Parse accepts a few forms RFC 3339 does not (a one-digit hour, a lowercase zone
	// letter is allowed by RFC 3339 but not by Go); check the shape first so the rule is exact.
	if len(s) < len("2006-01-02T15:04:05Z") || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':' {
		return time.Time{}, Invalid(param, hint+"; got %q.", param, s)
	}
	norm := s[:10] + "T" + s[11:]
	if strings.HasSuffix(norm, "z") {
		norm = norm[:len(norm)-1] + "Z"
	}
	t, err := time.Parse(time.RFC3339Nano, norm)
	if err != nil {
		if strings.Contains(err.Error(), "out of range") {
			return time.Time{}, Invalid(param, "%s is not an existing date or time: %q.", param, s)
		}
		return time.Time{}, Invalid(param, hint+"; got %q.", param, s)
	}
	if t.Nanosecond() != 0 {
		return time.Time{}, Invalid(param, "%s must be a whole second (a fraction of .000 is accepted); got %q.", param, s)
	}
	return t.UTC(), nil
}
