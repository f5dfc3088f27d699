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
	if sub.Status != domain.SubscriptionActive && sub.Status != domain.SubscriptionTrialing {
		return nil
	}
	before := *sub
	sub.Status = domain.SubscriptionPastDue
	if err := tx.UpdateSubscription(a.Scope, sub); err != nil {
		return err
	}
	return core.Emit(tx, a, "subscription.updated", sub, &before)
}

// leaveArrears makes a past_due subscription active again once none of its invoices is still
// owed past its due instant (the invoice just paid or voided was the last one).
func leaveArrears(tx *db.Tx, a domain.Actor, inv *domain.Invoice) error {
	if inv.Subscription == nil {
		return nil
	}
	sub, err := tx.FindSubscriptionByID(a.Scope, *inv.Subscription)
	if err != nil {
		return err
	}
	if sub.Status != domain.SubscriptionPastDue {
		return nil
	}
	n, err := tx.CountOverdueInvoices(a.Scope, sub.ID)
	if err != nil || n > 0 {
		return err
	}
	before := *sub
	sub.Status = domain.SubscriptionActive
	if !sub.TrialEnd.IsZero() && tx.Now.Before(sub.TrialEnd.Time) {
		sub.Status = domain.SubscriptionTrialing
	}
	if err := tx.UpdateSubscription(a.Scope, sub); err != nil {
		return err
	}
	return core.Emit(tx, a, "subscription.updated", sub, &before)
}
