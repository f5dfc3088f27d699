package domain

import (
	"slices"
	"strings"
)

// PrefixEmail is the id prefix of an e-mail message (em_…).
const PrefixEmail = "em_"

// The kinds of e-mail troco sends to customers; an organization turns each on or off.
const (
	EmailReceipt              = "receipt"
	EmailBoleto               = "boleto"
	EmailPix                  = "pix"
	EmailInvoice              = "invoice"
	EmailInvoiceUpcoming      = "invoice_upcoming"
	EmailPaymentFailed        = "payment_failed"
	EmailInvoiceOverdue       = "invoice_overdue"
	EmailSubscriptionCanceled = "subscription_canceled"
	EmailRefund               = "refund"
)

// EmailKinds lists every kind, in the order the API reference prints them.
var EmailKinds = []string{EmailReceipt, EmailBoleto, EmailPix, EmailInvoice, EmailInvoiceUpcoming, EmailPaymentFailed, EmailInvoiceOverdue, EmailSubscriptionCanceled, EmailRefund}

// Email statuses: pending until the mailer handles it, then sent (delivered to the SMTP server,
// or stored in the sandbox mailbox in test mode), skipped (never sent; skip_reason says why) or
// failed (every retry failed).
const (
	EmailStatusPending = "pending"
	EmailStatusSent    = "sent"
	EmailStatusSkipped = "skipped"
	EmailStatusFailed  = "failed"
)

// Reasons an e-mail was skipped.
const (
	EmailSkipNoAddress      = "no_email_address"
	EmailSkipInvalidAddress = "invalid_email_address"
	EmailSkipDisabled       = "kind_disabled"
	EmailSkipNoSMTP         = "smtp_not_configured"
	EmailSkipNotApplicable  = "not_applicable"
)

// Email is one message to a customer, as GET /v1/test-helpers/emails shows it.
type Email struct {
	ID            string  `json:"id"`
	Object        string  `json:"object"`
	To            *string `json:"to"`
	Subject       string  `json:"subject"`
	Kind          string  `json:"kind"`
	Locale        string  `json:"locale"`
	Text          string  `json:"text"`
	HTML          string  `json:"html"`
	RelatedObject string  `json:"related_object"`
	Event         string  `json:"event"`
	Status        string  `json:"status"`
	SkipReason    *string `json:"skip_reason"`
	Livemode      bool    `json:"livemode"`
	CreatedAt     Time    `json:"created_at"`
}

// EmailSettings turns each kind of customer e-mail on or off (every kind is on by default).
type EmailSettings map[string]bool

// Enabled reports whether kind is sent.
func (s EmailSettings) Enabled(kind string) bool {
	on, set := s[kind]
	return !set || on
}

// Complete returns the settings with every kind present, as the API shows them.
func (s EmailSettings) Complete() EmailSettings {
	out := EmailSettings{}
	for _, k := range EmailKinds {
		out[k] = s.Enabled(k)
	}
	return out
}

// ValidateEmailSettings checks that every key names a kind.
func ValidateEmailSettings(param string, s map[string]bool) error {
	for k := range s {
		if !slices.Contains(EmailKinds, k) {
			return Invalid(param+"["+k+"]", "%s[%s] is not a kind of e-mail; kinds are %s.", param, k, strings.Join(EmailKinds, ", "))
		}
	}
	return nil
}

// EmailTrigger is the message an event causes: its kind and the object it is about.
type EmailTrigger struct {
	Kind          string
	RelatedObject string
}

// EmailForEvent is the one table of which events send which e-mail. It is read by
// db.Tx.InsertEvent, so the message is queued in the same transaction as the event; events that
// other parts of troco add later (invoice.upcoming, customer.subscription.deleted) start sending
// as soon as they are emitted. obj is the event's object as emitted; changed, for an *.updated
// event, holds the previous values of the fields that changed.
func EmailForEvent(typ string, obj any, changed map[string]any) (EmailTrigger, bool) {
	switch o := obj.(type) {
	case *Charge:
		// A receipt once the money is taken: an immediate capture or a settled PIX/boleto
		// (charge.succeeded with captured), or the capture of an authorization (charge.captured).
		if (typ == "charge.succeeded" && o.Captured) || typ == "charge.captured" {
			return EmailTrigger{EmailReceipt, o.ID}, true
		}
	case *PaymentIntent:
		// A PIX code or a boleto was issued: the buyer must now pay it.
		// A regenerated boleto (new due date and line) is sent again.
		_, reissued := changed["next_action"]
		reissued = reissued && typ == "payment_intent.updated" && o.Status == PIStatusPending
		if (typ == "payment_intent.pending" || typ == "payment_intent.requires_action" || reissued) && o.PaymentData != nil {
			switch {
			case o.PaymentData.Boleto != nil:
				return EmailTrigger{EmailBoleto, o.ID}, true
			case o.PaymentData.Pix != nil:
				return EmailTrigger{EmailPix, o.ID}, true
			}
		}
	case *Refund:
		if typ == "refund.created" && !o.Release {
			return EmailTrigger{EmailRefund, o.ID}, true
		}
	case *Invoice:
		switch typ {
		case "invoice.finalized":
			if o.CollectionMethod == "send_invoice" {
				return EmailTrigger{EmailInvoice, o.ID}, true
			}
		case "invoice.upcoming":
			// The upcoming invoice is a preview without an id: the message is about its subscription.
			related := o.ID
			if related == "" && o.Subscription != nil {
				related = *o.Subscription
			}
			return EmailTrigger{EmailInvoiceUpcoming, related}, true
		case "invoice.payment_failed":
			return EmailTrigger{EmailPaymentFailed, o.ID}, true
		case "invoice.overdue":
			// The overdue notice, at the due instant (the start of the 24-hour periods that
			// count fines and interest).
			return EmailTrigger{EmailInvoiceOverdue, o.ID}, true
		}
	case *Subscription:
		if typ == "customer.subscription.deleted" {
			return EmailTrigger{EmailSubscriptionCanceled, o.ID}, true
		}
	}
	return EmailTrigger{}, false
}
