package checkout

import (
	"errors"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
)

// GetSubscription returns a subscription of the scope.
func GetSubscription(tx *db.Tx, s domain.Scope, id string) (*domain.Subscription, error) {
	sub, err := tx.FindSubscriptionByID(s, id)
	if errors.Is(err, db.ErrNotFound) {
		return nil, domain.NotFound("id", "subscription", id)
	}
	return sub, err
}

// startSubscription creates the subscription a completed subscription-mode session starts: one
// item per recurring price, the first period starting now and ending one cycle (or the trial)
// later, as instants (SPEC 9.2: renewal happens at current_period_end).
// A subscription whose first payment still waits (PIX, boleto, a processing card) starts
// incomplete and becomes active when it settles.
func startSubscription(tx *db.Tx, a domain.Actor, cs *domain.CheckoutSession, customer string, paymentMethod *string, paid bool) (*domain.Subscription, error) {
	start := tx.Now.UTC()
	sub := &domain.Subscription{
		ID: domain.NewID(domain.PrefixSubscription), Object: "subscription", CheckoutSession: &cs.ID,
		CollectionMethod: "charge_automatically", Currency: cs.Currency, Customer: customer, DefaultPaymentMethod: paymentMethod,
		Livemode: a.Livemode, Metadata: domain.MergeMetadata(nil, cs.Metadata), Status: domain.SubscriptionActive,
		CreatedAt: domain.At(start), UpdatedAt: domain.At(start), CurrentPeriodStart: domain.At(start),
	}
	var cycle *domain.Recurring
	trialDays := 0
	for _, li := range cs.LineItems {
		r := li.Price.Recurring
		if r == nil {
			continue
		}
		if cycle == nil {
			c := *r
			cycle = &c
		}
		if r.TrialPeriodDays != nil && *r.TrialPeriodDays > trialDays {
			trialDays = *r.TrialPeriodDays
		}
		sub.Items = append(sub.Items, domain.SubscriptionItem{ID: domain.NewID("si_"), Object: "subscription_item", Price: li.Price, Quantity: li.Quantity})
	}
	if cycle == nil {
		return nil, errors.New("checkout: subscription session without a recurring price")
	}
	if !paid {
		sub.Status = domain.SubscriptionIncomplete
	}
	if trialDays > 0 {
		if paid {
			sub.Status = domain.SubscriptionTrialing
		}
		end := start.AddDate(0, 0, trialDays)
		sub.TrialEnd = domain.At(end)
		sub.CurrentPeriodEnd = domain.At(end)
	} else {
		sub.CurrentPeriodEnd = domain.At(periodEnd(start, *cycle))
	}
	if err := tx.CreateSubscription(a.Scope, sub); err != nil {
		return nil, err
	}
	return sub, core.Emit(tx, a, "subscription.created", sub, nil)
}

// activateSubscription makes an incomplete subscription active once its first payment settles.
func activateSubscription(tx *db.Tx, a domain.Actor, id string) error {
	sub, err := tx.FindSubscriptionByID(a.Scope, id)
	if err != nil {
		return err
	}
	if sub.Status != domain.SubscriptionIncomplete {
		return nil
	}
	before := *sub
	sub.Status = domain.SubscriptionActive
	if !sub.TrialEnd.IsZero() {
		sub.Status = domain.SubscriptionTrialing
	}
	if err := tx.UpdateSubscription(a.Scope, sub); err != nil {
		return err
	}
	return core.Emit(tx, a, "subscription.updated", sub, &before)
}
