package billing

import (
	"troco/db"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/invoices"
)

// Outcome is what collecting an invoice did.
type Outcome int

// The outcomes of a collection attempt.
const (
	// Paid: the invoice is paid.
	Paid Outcome = iota
	// Waiting: nothing failed and the invoice is still open: a payment settles later (a
	// processing card, a PIX or boleto in flight) or the customer pays it by its due instant.
	Waiting
	// Failed: the attempt failed (declined, no usable payment method); dunning applies.
	Failed
)

// Collector collects a finalized (open) invoice of a subscription. It is the only part of a
// renewal that depends on how the customer pays: the renewal, the state machine and dunning do
// not change when a new way of paying (Pix Automático) adds a Collector for its collection
// method. A Collector returns an error only for a failure of troco itself (the transaction is
// then rolled back); a refused payment is the Failed outcome.
type Collector interface {
	Collect(tx *db.Tx, a domain.Actor, sub *domain.Subscription, inv *domain.Invoice) (Outcome, error)
}

// collector returns the Collector of a collection method.
func (svc *Service) collector(method string) Collector {
	if c, ok := svc.Collectors[method]; ok && c != nil {
		return c
	}
	if method == domain.CollectionSendInvoice {
		return sendInvoice{}
	}
	return cardCollector{svc.Invoices}
}

// cardCollector charges the subscription's default card (else the customer's newest saved card)
// through the payments engine, as an off-session reuse of the saved card: in the sandbox the
// reuse outcomes of the test cards apply, in live mode the card processor charges it.
type cardCollector struct{ inv *invoices.Service }

func (c cardCollector) Collect(tx *db.Tx, a domain.Actor, sub *domain.Subscription, inv *domain.Invoice) (Outcome, error) {
	paid, err := c.inv.Pay(tx, a, inv.ID, invoices.PayParams{PaymentMethod: sub.DefaultPaymentMethod})
	if err == nil {
		if paid.Status == domain.InvoicePaid {
			return Paid, nil
		}
		return Waiting, nil
	}
	e, ok := domain.AsError(err)
	if !ok {
		return Failed, err
	}
	if e.KeepChanges {
		return Failed, nil // declined: Pay recorded the attempt and emitted invoice.payment_failed
	}
	// Refused before any charge (no saved card, the card was detached): record the attempt.
	fresh, err := tx.FindInvoiceByID(a.Scope, inv.ID)
	if err != nil {
		return Failed, err
	}
	before := *fresh
	fresh.AttemptCount++
	if err := tx.UpdateInvoice(a.Scope, fresh); err != nil {
		return Failed, err
	}
	return Failed, core.Emit(tx, a, invoices.EventPaymentFailed, fresh, &before)
}

// sendInvoice leaves the invoice to the customer: it is due at its due instant.
type sendInvoice struct{}

func (sendInvoice) Collect(*db.Tx, domain.Actor, *domain.Subscription, *domain.Invoice) (Outcome, error) {
	return Waiting, nil
}
