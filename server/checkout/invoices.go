package checkout

import (
	"troco/db"
	"troco/server/domain"
	"troco/server/invoices"
)

// syncInvoice keeps the session's canonical invoice in step with its payment (SPEC 2.4): with
// invoice_creation in payment mode, a paid session gets a paid invoice; a subscription-mode
// session gets its subscription's first invoice at completion, paid when the first payment is.
// It runs where a session completes and where its payment settles, before the session is saved.
func syncInvoice(tx *db.Tx, a domain.Actor, cs *domain.CheckoutSession, pi *domain.PaymentIntent) error {
	inv, err := invoices.ForCheckoutSession(tx, a, cs, pi)
	if err != nil || inv == nil {
		return err
	}
	cs.Invoice = &inv.ID
	return nil
}
