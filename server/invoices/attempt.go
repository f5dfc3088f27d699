package invoices

import (
	"errors"
	"fmt"
	"net/http"

	"troco/db"
	"troco/server/domain"
)

// attempt is what a new payment of an invoice does with the payment intent of its last attempt,
// as decided by nextAttempt. At most one field is set; none: create a new payment intent.
type attempt struct {
	// Reapply is an intent whose live processor call (reserved by an earlier run of the same
	// request) has been made: confirming it again applies the answer. Only a request for the
	// intent's own method reapplies it; another method is refused while the answer is awaited
	// (a PIX asked for would otherwise answer with the card's intent).
	Reapply *domain.PaymentIntent
	// Keep is a PIX or boleto still waiting for the payer for the amount due now, by the method
	// asked for: it is still good, nothing new starts.
	Keep *domain.PaymentIntent
	// Reuse is an intent a declined or unconfirmed attempt left for the amount due now that
	// accepts the method asked for: the new attempt confirms it again.
	Reuse *domain.PaymentIntent
}

// nextAttempt is the one rule for "may another payment of this invoice start now", used by the
// hosted invoice page, POST /v1/invoices/{id}/pay (saved card, PIX, boleto or paid out of band)
// and recurring billing's collection. method is credit_card, pix or boleto ("" for a payment
// made outside troco); payer is true when the payer starts it (the hosted page, or a PIX or
// boleto issued for the payer to pay). While a payment that may still succeed is open it answers
// 409 resource_state_conflict: a card pending at the acquirer or authorized and awaiting capture,
// anything processing (a live call whose answer is lost, a Pix Automático charge at the payer's
// bank). A PIX or boleto waiting for the payer is kept when the same method is asked for the
// same amount (Keep), replaced (canceled here; 409 when it can no longer be) by a payment the
// payer starts, and is a 409 for the merchant's saved-card charge or out-of-band record (the
// payer may be paying it).
func (svc *Service) nextAttempt(tx *db.Tx, a domain.Actor, inv *domain.Invoice, method string, payer bool) (attempt, error) {
	if inv.PaymentIntent == nil {
		return attempt{}, nil
	}
	pi, err := svc.Payments.GetIntent(tx, a.Scope, *inv.PaymentIntent)
	if err != nil {
		return attempt{}, err
	}
	card := slicesHas(pi.PaymentMethodTypes, domain.MethodCreditCard)
	switch pi.Status {
	case domain.PIStatusCanceled:
		return attempt{}, nil
	case domain.PIStatusRequiresPaymentMethod, domain.PIStatusRequiresConfirmation:
		if pi.Amount == inv.AmountRemaining && method != "" && slicesHas(pi.PaymentMethodTypes, method) {
			return attempt{Reuse: pi}, nil
		}
		return attempt{}, nil
	case domain.PIStatusProcessing:
		open, err := svc.Payments.HasOpenCall(tx, a.Scope, pi.ID)
		if err != nil {
			return attempt{}, err
		}
		if open && method != "" && slicesHas(pi.PaymentMethodTypes, method) {
			return attempt{Reapply: pi}, nil
		}
		held, err := svc.Payments.PixAutoInFlight(tx, a.Scope, pi)
		if err != nil {
			return attempt{}, err
		}
		if held {
			return attempt{}, paymentInProgress(pi, "A Pix Automático charge of this invoice is in progress with the payer's bank; wait for it to settle.")
		}
		return attempt{}, paymentInProgress(pi, "")
	case domain.PIStatusPending, domain.PIStatusRequiresAction:
		if card {
			return attempt{}, paymentInProgress(pi, "A card payment of this invoice is waiting for the card network's answer; wait for it to settle.")
		}
		if pi.Amount == inv.AmountRemaining && method != domain.MethodCreditCard && method != "" && slicesHas(pi.PaymentMethodTypes, method) {
			return attempt{Keep: pi}, nil
		}
		if !payer {
			return attempt{}, paymentInProgress(pi, fmt.Sprintf("A %s of this invoice (payment intent %s) is waiting for the payer; wait until it is paid or expires, or cancel it (POST /v1/payment-intents/%s/cancel) first.", methodName(pi), pi.ID, pi.ID))
		}
		if _, err := svc.Payments.CancelIfOpen(tx, a, pi.ID, "abandoned"); err != nil {
			return attempt{}, paymentInProgress(pi, "")
		}
		return attempt{}, nil
	}
	if pi.Status == domain.PIStatusRequiresCapture {
		return attempt{}, paymentInProgress(pi, fmt.Sprintf("A card payment of this invoice (payment intent %s) is authorized and awaiting capture; capture it to pay the invoice, or cancel it (POST /v1/payment-intents/%s/cancel) first.", pi.ID, pi.ID))
	}
	// Succeeded (the invoice is being marked paid).
	return attempt{}, paymentInProgress(pi, "")
}

// methodName is how a 409 names a waiting payment: PIX or boleto.
func methodName(pi *domain.PaymentIntent) string {
	if slicesHas(pi.PaymentMethodTypes, domain.MethodBoleto) {
		return "boleto"
	}
	return "PIX"
}

// InProgress reports whether pi, an invoice's payment intent, is a payment that may still succeed,
// so that nextAttempt refuses every other payment of the invoice whatever the method: a card
// pending at the card network (or awaiting its authentication), anything processing, a card
// authorized and awaiting capture. The hosted invoice page uses it to say so instead of offering
// a payment that would be refused. A PIX or boleto waiting for the payer is not in progress in
// this sense: the page shows it and the payer may replace it.
func InProgress(pi *domain.PaymentIntent) bool {
	switch pi.Status {
	case domain.PIStatusProcessing, domain.PIStatusRequiresCapture:
		return true
	case domain.PIStatusPending, domain.PIStatusRequiresAction:
		return slicesHas(pi.PaymentMethodTypes, domain.MethodCreditCard)
	}
	return false
}

// IsPaymentInProgress reports whether err is nextAttempt's refusal: another payment of the
// invoice is under way (a PIX or boleto the payer may be paying, a card not settled yet), so
// nothing was attempted. Recurring billing waits for that payment instead of counting a failed
// attempt. Other 409s of the same code (an invoice already paid, say) are not it.
func IsPaymentInProgress(err error) bool {
	var p *inProgressError
	return errors.As(err, &p)
}

// inProgressError marks nextAttempt's 409 (IsPaymentInProgress); it answers as the *domain.Error
// it wraps.
type inProgressError struct{ e *domain.Error }

func (p *inProgressError) Error() string { return p.e.Error() }
func (p *inProgressError) Unwrap() error { return p.e }

// paymentInProgress is the 409 of a payment that cannot start while pi may still pay the
// invoice; msg replaces the general message.
func paymentInProgress(pi *domain.PaymentIntent, msg string) error {
	if msg == "" {
		msg = fmt.Sprintf("A payment of this invoice is in progress (payment intent %s is %s); wait for it to settle.", pi.ID, pi.Status)
	}
	return &inProgressError{&domain.Error{Status: http.StatusConflict, Type: domain.TypeInvalidRequest, Code: domain.CodeResourceStateConflict, Message: msg}}
}
