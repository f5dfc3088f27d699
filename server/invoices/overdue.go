package invoices

import (
	"time"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
)

// Arrears (SPEC 3.6, 9.2). An open send_invoice invoice whose due instant has passed unpaid is
// in arrears from that instant (an absolute UTC instant; the dashboard time zone plays no
// part): the overdue job emits invoice.overdue once for it and, when it bills a subscription,
// the subscription becomes past_due. Paying or voiding the last such invoice of a subscription
// makes it active again. Fines, interest and reminders do not exist yet; when they do they count
// 24-hour periods from the same due instant.

// RunOverdue handles up to limit invoices that reached their due instant at or before now, each
// in its own scope, and returns how many it handled. Run it inside a write transaction (the job
// does): the invoices are claimed there, so replicas never handle one twice.
func RunOverdue(tx *db.Tx, now time.Time, limit int) (int, error) {
	due, err := tx.ClaimOverdueInvoices(now.Unix(), limit)
	if err != nil {
		return 0, err
	}
	for _, d := range due {
		a := domain.Actor{Scope: d.Scope}
		if err := core.Emit(tx, a, EventOverdue, d.Invoice, nil); err != nil {
			return 0, err
		}
		if err := enterArrears(tx, a, d.Invoice); err != nil {
			return 0, err
		}
	}
	return len(due), nil
}

// enterArrears moves the subscription an overdue invoice bills to past_due.
func enterArrears(tx *db.Tx, a domain.Actor, inv *domain.Invoice) error {
	if inv.Subscription == nil {
		return nil
	}
	sub, err := tx.FindSubscriptionByID(a.Scope, *inv.Subscription)
	if err != nil {
		return err
	}
	next, err := domain.NextSubscriptionStatus(sub.Status, domain.SubInvoiceOverdue, "")
	if err != nil || next == sub.Status {
		return nil // the overdue invoice changes nothing in this status (canceled, incomplete)
	}
	before := *sub
	sub.Status = next
	if err := tx.UpdateSubscription(a.Scope, sub); err != nil {
		return err
	}
	return core.Emit(tx, a, domain.EventSubscriptionUpdated, sub, &before)
}

// leaveArrears makes a past_due or unpaid subscription active again once none of its invoices is
// still owed past its due instant or after a failed attempt (the invoice just paid or voided was
// the last one), and an incomplete subscription active once its first invoice is paid.
func leaveArrears(tx *db.Tx, a domain.Actor, inv *domain.Invoice) error {
	if inv.Subscription == nil {
		return nil
	}
	sub, err := tx.FindSubscriptionByID(a.Scope, *inv.Subscription)
	if err != nil {
		return err
	}
	ev := domain.SubArrearsCleared
	switch sub.Status {
	case domain.SubscriptionPastDue, domain.SubscriptionUnpaid:
		n, err := tx.CountOverdueInvoices(a.Scope, sub.ID)
		if err != nil || n > 0 {
			return err
		}
	case domain.SubscriptionIncomplete:
		if inv.Status != domain.InvoicePaid || (sub.LatestInvoice != nil && *sub.LatestInvoice != inv.ID) {
			return nil
		}
		ev = domain.SubFirstPaymentSucceeded
	default:
		return nil
	}
	next, err := domain.NextSubscriptionStatus(sub.Status, ev, "")
	if err != nil {
		return err
	}
	if !sub.TrialEnd.IsZero() && tx.Now.Before(sub.TrialEnd.Time) {
		next = domain.SubscriptionTrialing
	}
	before := *sub
	sub.Status = next
	if err := tx.UpdateSubscription(a.Scope, sub); err != nil {
		return err
	}
	return core.Emit(tx, a, domain.EventSubscriptionUpdated, sub, &before)
}
