package invoices

import (
	"troco/db"
	"troco/server/core"
	"troco/server/domain"
)

// ForCheckoutSession keeps the canonical invoice of a checkout session (SPEC 2.4) in step with
// its payment. The checkout package calls it where a session completes and where its payment
// settles, before it saves the session; the caller stores the returned id in the session's
// invoice field (nil: the session has no invoice).
//
//   - payment mode with invoice_creation: once the session is paid (or needs no payment), a paid
//     invoice of its line items, linked to the session and its payment intent.
//   - subscription mode, always: at completion the subscription's first invoice, paid when the
//     first payment succeeded (or nothing is due now: a trial), open with the session's payment
//     intent while that payment waits; the subscription's latest_invoice points to it.
//   - a session that already has its invoice: an open one becomes paid once the session is paid.
func ForCheckoutSession(tx *db.Tx, a domain.Actor, cs *domain.CheckoutSession, pi *domain.PaymentIntent) (*domain.Invoice, error) {
	paid := cs.PaymentStatus == domain.CheckoutPaid || cs.PaymentStatus == domain.CheckoutNoPaymentRequired
	if cs.Invoice != nil {
		inv, err := tx.FindInvoiceByID(a.Scope, *cs.Invoice)
		if err != nil {
			return nil, err
		}
		if paid && (inv.Status == domain.InvoiceOpen || inv.Status == domain.InvoiceUncollectible) {
			return inv, markPaid(tx, a, inv, pi)
		}
		return inv, nil
	}
	if cs.Customer == nil {
		return nil, nil
	}
	subscription := cs.Mode == domain.CheckoutModeSubscription && cs.Subscription != nil
	if !subscription && !(cs.InvoiceCreation && paid) {
		return nil, nil
	}
	now := domain.At(tx.Now)
	inv := &domain.Invoice{
		ID: domain.NewID(domain.PrefixInvoice), Object: "invoice", Status: domain.InvoiceDraft, Currency: cs.Currency,
		Customer: *cs.Customer, CollectionMethod: domain.CollectionChargeAutomatically, Livemode: a.Livemode,
		Metadata: domain.MergeMetadata(nil, cs.Metadata), CheckoutSession: &cs.ID, CreatedAt: now, UpdatedAt: now,
	}
	if subscription {
		inv.Subscription = cs.Subscription
	}
	lines := make([]domain.InvoiceLine, 0, len(cs.LineItems))
	for _, li := range cs.LineItems {
		price, product := li.Price, li.Product.ID
		lines = append(lines, domain.InvoiceLine{ID: domain.NewID(domain.PrefixLineItem), Object: "line_item", Description: li.Description,
			Price: &price, Product: &product, Quantity: li.Quantity, UnitAmount: li.Price.UnitAmount,
			SubtotalAmount: li.SubtotalAmount, TotalAmount: li.TotalAmount})
	}
	inv.Lines = domain.NewList(domain.InvoiceLinesURL(inv.ID), lines, false)
	// The session's amounts are the invoice's: what the buyer was shown is what the invoice says.
	inv.SubtotalAmount, inv.DiscountAmount, inv.TaxAmount, inv.TotalAmount = cs.SubtotalAmount, cs.DiscountAmount, cs.TaxAmount, cs.TotalAmount
	inv.AmountDue, inv.AmountRemaining = cs.TotalAmount, cs.TotalAmount
	if pi != nil {
		inv.PaymentIntent = &pi.ID
		inv.Charge = pi.LatestCharge
		inv.AttemptCount = 1
		if err := tx.SetChargesInvoice(a.Scope, pi.ID, inv.ID); err != nil {
			return nil, err
		}
	}
	if err := tx.CreateInvoice(a.Scope, inv); err != nil {
		return nil, err
	}
	if err := core.Emit(tx, a, EventCreated, inv, nil); err != nil {
		return nil, err
	}
	if subscription {
		sub, err := tx.FindSubscriptionByID(a.Scope, *cs.Subscription)
		if err != nil {
			return nil, err
		}
		before := *sub
		sub.LatestInvoice = &inv.ID
		if err := tx.UpdateSubscription(a.Scope, sub); err != nil {
			return nil, err
		}
		if err := core.Emit(tx, a, domain.EventSubscriptionUpdated, sub, &before); err != nil {
			return nil, err
		}
	}
	// finalize pays an invoice of zero at once; a paid session's invoice is paid by its intent.
	if err := finalize(tx, a, inv); err != nil {
		return nil, err
	}
	if paid && inv.Status == domain.InvoiceOpen {
		if err := markPaid(tx, a, inv, pi); err != nil {
			return nil, err
		}
	}
	return inv, nil
}
