package checkout

import (
	"errors"
	"time"

	"troco/db"
	"troco/server/billing"
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

// startSubscription creates the subscription a completed subscription-mode session starts,
// through the same function as POST /v1/subscriptions (billing.Start): one item per recurring
// price, the first period starting now and ending one cycle (or the trial) later, as instants
// (SPEC 9.2: renewal happens at current_period_end). The session already collected the first
// payment (or saved the card, or nothing with payment_method_collection if_required) and makes
// the first invoice itself. A subscription whose first payment still waits (PIX, boleto, a
// processing card) starts incomplete and becomes active when it settles.
func (svc *Service) startSubscription(tx *db.Tx, a domain.Actor, cs *domain.CheckoutSession, customer string, paymentMethod *string, paid bool) (*domain.Subscription, error) {
	sub := &domain.Subscription{
		ID: domain.NewID(domain.PrefixSubscription), CheckoutSession: &cs.ID,
		CollectionMethod: domain.CollectionChargeAutomatically, Currency: cs.Currency, Customer: customer, DefaultPaymentMethod: paymentMethod,
		Metadata: domain.MergeMetadata(nil, cs.Metadata),
	}
	trialDays := 0
	for _, li := range cs.LineItems {
		r := li.Price.Recurring
		if r == nil {
			continue
		}
		if r.TrialPeriodDays != nil && *r.TrialPeriodDays > trialDays {
			trialDays = *r.TrialPeriodDays
		}
		sub.Items = append(sub.Items, domain.SubscriptionItem{ID: domain.NewID("si_"), Object: "subscription_item", Price: li.Price, Quantity: li.Quantity})
	}
	if len(sub.Items) == 0 {
		return nil, errors.New("checkout: subscription session without a recurring price")
	}
	var trialEnd time.Time
	if trialDays > 0 {
		trialEnd = tx.Now.UTC().Truncate(time.Second).Add(time.Duration(trialDays) * 24 * time.Hour)
	}
	// The session's discount (a coupon, or a promotion code's coupon) is the subscription's
	// coupon: its duration goes on over the renewals; the session's first payment used it once.
	couponInvoices := 0
	if cs.Discount != nil {
		d, err := findApplied(tx, a.Scope, *cs.Discount, true)
		if err != nil {
			return nil, err
		}
		sub.Coupon = &d.coupon.ID
		if cs.DiscountAmount > 0 {
			couponInvoices = 1
		}
	}
	if err := billing.New(svc.Payments, "").Start(tx, a, sub, billing.StartOptions{TrialEnd: trialEnd, Paid: paid, CouponInvoices: couponInvoices}); err != nil {
		return nil, err
	}
	return sub, nil
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
	next, err := domain.NextSubscriptionStatus(sub.Status, domain.SubFirstPaymentSucceeded, "")
	if err != nil {
		return err
	}
	before := *sub
	sub.Status = next
	if !sub.TrialEnd.IsZero() && tx.Now.Before(sub.TrialEnd.Time) {
		sub.Status = domain.SubscriptionTrialing
	}
	if err := tx.UpdateSubscription(a.Scope, sub); err != nil {
		return err
	}
	return core.Emit(tx, a, domain.EventSubscriptionUpdated, sub, &before)
}
