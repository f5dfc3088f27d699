// Package billing holds recurring billing: subscriptions (creation, changes with proration,
// cancellation, pause and resume), their renewals at the end instant of each period, dunning,
// trial and upcoming-invoice notices. The statuses and their transitions are one state machine,
// domain.NextSubscriptionStatus; every change here goes through it. Like package core, every
// operation is a function on a write transaction that writes the change and its events together.
//
// Where the rules live:
//   - billing.go: the service, creation (the API's and the checkout session's), retrieval.
//   - update.go: update (items, quantity, proration, payment method, pause), cancel, resume.
//   - renew.go: the job: renewals, collection, dunning, notices, scheduling.
//   - collect.go: how a renewal invoice is collected (the pluggable collection methods).
package billing

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"troco/db"
	"troco/server/core"
	"troco/server/discounts"
	"troco/server/domain"
	"troco/server/invoices"
	"troco/server/payments"
)

// Limits of a subscription (troco's choices).
const (
	MaxItems        = 20
	MaxQuantity     = 10000
	MaxTrialDays    = 730
	incompleteLimit = 23 * time.Hour // an incomplete subscription expires 23 hours after creation
	upcomingBefore  = 7 * 24 * time.Hour
	trialNotice     = 3 * 24 * time.Hour
)

// Service holds what billing needs besides a transaction.
type Service struct {
	Payments *payments.Service
	Invoices *invoices.Service
	// Final is what the last failed dunning retry does: canceled (the default) or unpaid.
	Final domain.DunningFinal
	// Collectors collect a finalized invoice by its collection method; nil entries fall back to
	// the built-in ones (card for charge_automatically, nothing for send_invoice).
	Collectors map[string]Collector

	// pending are the live processor calls reserved in the current transaction (TakePending).
	pending []PendingCall
}

// New returns a billing service over the payments engine.
func New(pay *payments.Service, final domain.DunningFinal) *Service {
	if final == "" {
		final = domain.DunningCanceled
	}
	return &Service{Payments: pay, Invoices: &invoices.Service{Payments: pay}, Final: final}
}

// ItemParams is one entry of items.
type ItemParams struct {
	ID       *string `json:"id"`
	Price    *string `json:"price"`
	Quantity *int64  `json:"quantity"`
	Deleted  *bool   `json:"deleted"`
}

// CreateParams is the body of POST /v1/subscriptions.
type CreateParams struct {
	Customer             *string           `json:"customer"`
	Items                []ItemParams      `json:"items"`
	CollectionMethod     *string           `json:"collection_method"`
	DaysUntilDue         *int              `json:"days_until_due"`
	DefaultPaymentMethod *string           `json:"default_payment_method"`
	TrialPeriodDays      *int              `json:"trial_period_days"`
	TrialEnd             *string           `json:"trial_end"`
	Coupon               *string           `json:"coupon"`
	Metadata             map[string]string `json:"metadata"`
	CancelAtPeriodEnd    *bool             `json:"cancel_at_period_end"`
	FineRate             *int64            `json:"fine_rate"`
	InterestRate         *int64            `json:"interest_rate"`
}

// state is what billing keeps about a subscription that is not public.
type state struct {
	// Pending are proration lines waiting for the next invoice.
	Pending []domain.InvoiceLine `json:"pending,omitempty"`
	// CouponFrom is when the coupon started to apply (Unix seconds).
	CouponFrom int64 `json:"coupon_from,omitempty"`
	// CouponInvoices counts the invoices the coupon discounted (a once coupon stops after one).
	CouponInvoices int `json:"coupon_invoices,omitempty"`
}

func loadState(tx *db.Tx, s domain.Scope, id string) (*state, error) {
	raw, err := tx.SubscriptionBilling(s, id)
	if err != nil {
		return nil, err
	}
	var st state
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		return nil, fmt.Errorf("billing: decode state of %s: %w", id, err)
	}
	return &st, nil
}

// Get returns a subscription of the scope.
func Get(tx *db.Tx, s domain.Scope, id string) (*domain.Subscription, error) {
	sub, err := tx.FindSubscriptionByID(s, id)
	if errors.Is(err, db.ErrNotFound) {
		return nil, domain.NotFound("id", "subscription", id)
	}
	return sub, err
}

// resolveItems checks items against the catalogue of the scope: recurring prices, one currency,
// one interval, quantities 1..MaxQuantity.
func resolveItems(tx *db.Tx, s domain.Scope, params []ItemParams) ([]domain.SubscriptionItem, error) {
	if len(params) == 0 {
		return nil, domain.Missing("items")
	}
	if len(params) > MaxItems {
		return nil, domain.Invalid("items", "A subscription has at most %d items.", MaxItems)
	}
	var out []domain.SubscriptionItem
	for i, p := range params {
		param := fmt.Sprintf("items[%d][price]", i)
		if p.Price == nil || *p.Price == "" {
			return nil, domain.Missing(param)
		}
		price, err := tx.FindPriceByID(s, *p.Price)
		if errors.Is(err, db.ErrNotFound) {
			return nil, domain.NotFound(param, "price", *p.Price)
		}
		if err != nil {
			return nil, err
		}
		if price.Recurring == nil {
			return nil, domain.Invalid(param, "Price %s is a one-time price; a subscription needs recurring prices.", price.ID)
		}
		if !price.IsActive {
			return nil, domain.Invalid(param, "Price %s is not active.", price.ID)
		}
		q := int64(1)
		if p.Quantity != nil {
			q = *p.Quantity
		}
		if q < 1 || q > MaxQuantity {
			return nil, domain.Invalid(fmt.Sprintf("items[%d][quantity]", i), "quantity must be between 1 and %d; got %d.", MaxQuantity, q)
		}
		if len(out) > 0 {
			first := out[0].Price
			if price.Currency != first.Currency {
				return nil, domain.Invalid(param, "Every item of a subscription has the same currency: %s is %s, %s is %s.", price.ID, price.Currency, first.ID, first.Currency)
			}
			if !sameCycle(*price.Recurring, *first.Recurring) {
				return nil, domain.Invalid(param, "Every item of a subscription has the same billing interval: %s bills every %d %s, %s every %d %s.",
					price.ID, max(price.Recurring.IntervalCount, 1), price.Recurring.Interval, first.ID, max(first.Recurring.IntervalCount, 1), first.Recurring.Interval)
			}
			if slices.ContainsFunc(out, func(it domain.SubscriptionItem) bool { return it.Price.ID == price.ID }) {
				return nil, domain.Invalid(param, "Price %s appears twice; use one item with a quantity.", price.ID)
			}
		}
		out = append(out, domain.SubscriptionItem{ID: domain.NewID("si_"), Object: "subscription_item", Price: *price, Quantity: q})
	}
	return out, nil
}

func sameCycle(a, b domain.Recurring) bool {
	return a.Interval == b.Interval && max(a.IntervalCount, 1) == max(b.IntervalCount, 1)
}

// cycle is the billing cycle of a subscription (its items share one).
func cycle(sub *domain.Subscription) domain.Recurring {
	if len(sub.Items) == 0 || sub.Items[0].Price.Recurring == nil {
		return domain.Recurring{Interval: "month", IntervalCount: 1}
	}
	return *sub.Items[0].Price.Recurring
}

// savedCard checks that id is a card of the scope attached to customer.
func savedCard(tx *db.Tx, s domain.Scope, param, id, customer string) (*domain.PaymentMethod, error) {
	pm, err := tx.FindPaymentMethodByID(s, id)
	if errors.Is(err, db.ErrNotFound) {
		return nil, domain.NotFound(param, "payment method", id)
	}
	if err != nil {
		return nil, err
	}
	if pm.Type != domain.MethodPixAutomatico && (pm.Type != domain.MethodCreditCard || pm.Card == nil) {
		return nil, domain.Invalid(param, "Payment method %s is neither a card nor a Pix Automático payment method; subscriptions are charged on a saved card or under an approved Pix Automático authorization.", pm.ID)
	}
	if pm.Type == domain.MethodPixAutomatico && (pm.Customer == nil || *pm.Customer != customer) {
		return nil, domain.Invalid(param, "Payment method %s comes from a Pix Automático authorization of another customer; the subscription's customer %s must approve their own authorization.", pm.ID, customer)
	}
	if pm.Customer == nil || *pm.Customer != customer {
		return nil, domain.Invalid(param, "Payment method %s is not attached to customer %s (it was detached or belongs to another customer); attach it first.", pm.ID, customer)
	}
	return pm, nil
}

func findCoupon(tx *db.Tx, s domain.Scope, id, currency string) (*domain.Coupon, error) {
	c, err := tx.FindCouponByID(s, id)
	if errors.Is(err, db.ErrNotFound) {
		return nil, domain.NotFound("coupon", "coupon", id)
	}
	if err != nil {
		return nil, err
	}
	if r := discounts.CouponProblem(c, tx.Now); r != "" {
		return nil, domain.Invalid("coupon", "Coupon %s cannot be applied: %s.", c.ID, r)
	}
	if c.Currency != nil && *c.Currency != currency {
		return nil, domain.Invalid("coupon", "Coupon %s is in %s; the subscription is in %s.", c.ID, *c.Currency, currency)
	}
	return c, nil
}

// Create creates a subscription from the API (CONTRACT 12): it checks everything first, starts
// the subscription (Start), bills the first period (a zero invoice during a trial) and collects
// it. A charge_automatically subscription whose first payment is declined stays incomplete with
// its first invoice open (it can be paid for 23 hours); a send_invoice one is active at once and
// its first invoice is due days_until_due later.
func (svc *Service) Create(tx *db.Tx, a domain.Actor, p CreateParams) (*domain.Subscription, error) {
	if p.Customer == nil || *p.Customer == "" {
		return nil, domain.Missing("customer")
	}
	cus, err := tx.FindCustomerByID(a.Scope, *p.Customer)
	if errors.Is(err, db.ErrNotFound) {
		return nil, domain.NotFound("customer", "customer", *p.Customer)
	}
	if err != nil {
		return nil, err
	}
	items, err := resolveItems(tx, a.Scope, p.Items)
	if err != nil {
		return nil, err
	}
	method := domain.CollectionChargeAutomatically
	if p.CollectionMethod != nil {
		if !slices.Contains(domain.CollectionMethods, *p.CollectionMethod) {
			return nil, domain.Invalid("collection_method", "collection_method must be charge_automatically or send_invoice; got %q.", *p.CollectionMethod)
		}
		method = *p.CollectionMethod
	}
	var days *int
	switch {
	case method == domain.CollectionSendInvoice && p.DaysUntilDue == nil:
		e := domain.Missing("days_until_due")
		e.Message = "days_until_due is required when collection_method is send_invoice."
		return nil, e
	case method == domain.CollectionChargeAutomatically && p.DaysUntilDue != nil:
		return nil, domain.Invalid("days_until_due", "days_until_due applies only to send_invoice.")
	case p.DaysUntilDue != nil:
		if *p.DaysUntilDue < 0 || *p.DaysUntilDue > domain.MaxDaysUntilDue {
			return nil, domain.Invalid("days_until_due", "days_until_due must be between 0 and %d; got %d.", domain.MaxDaysUntilDue, *p.DaysUntilDue)
		}
		d := *p.DaysUntilDue
		days = &d
	}
	fine, interest, err := invoices.LateRates(method, p.FineRate, p.InterestRate)
	if err != nil {
		return nil, err
	}
	var trialEnd time.Time
	switch {
	case p.TrialPeriodDays != nil && p.TrialEnd != nil:
		return nil, domain.Invalid("trial_end", "Send trial_period_days or trial_end, not both.")
	case p.TrialPeriodDays != nil:
		if *p.TrialPeriodDays < 1 || *p.TrialPeriodDays > MaxTrialDays {
			return nil, domain.Invalid("trial_period_days", "trial_period_days must be between 1 and %d; got %d.", MaxTrialDays, *p.TrialPeriodDays)
		}
		trialEnd = tx.Now.UTC().Truncate(time.Second).Add(time.Duration(*p.TrialPeriodDays) * 24 * time.Hour)
	case p.TrialEnd != nil:
		t, err := domain.ParseDueDate("trial_end", *p.TrialEnd)
		if err != nil {
			return nil, err
		}
		if !t.After(tx.Now) {
			return nil, domain.Invalid("trial_end", "trial_end must be in the future; got %s.", *p.TrialEnd)
		}
		if t.Sub(tx.Now) > MaxTrialDays*24*time.Hour {
			return nil, domain.Invalid("trial_end", "A trial lasts at most %d days.", MaxTrialDays)
		}
		trialEnd = t
	}
	var pmID *string
	if p.DefaultPaymentMethod != nil {
		pm, err := savedCard(tx, a.Scope, "default_payment_method", *p.DefaultPaymentMethod, cus.ID)
		if err != nil {
			return nil, err
		}
		pmID = &pm.ID
	} else if method == domain.CollectionChargeAutomatically && trialEnd.IsZero() {
		e := domain.Missing("default_payment_method")
		e.Message = "default_payment_method is required for a charge_automatically subscription without a trial: save a card for the customer (setup intent) and name it, or use collection_method send_invoice."
		return nil, e
	}
	var coupon *domain.Coupon
	if p.Coupon != nil {
		if coupon, err = findCoupon(tx, a.Scope, *p.Coupon, items[0].Price.Currency); err != nil {
			return nil, err
		}
	}
	if err := domain.ValidateMetadata(p.Metadata); err != nil {
		return nil, err
	}
	sub := &domain.Subscription{
		ID: domain.NewID(domain.PrefixSubscription), Object: "subscription", CollectionMethod: method, Currency: items[0].Price.Currency,
		Customer: cus.ID, DaysUntilDue: days, DefaultPaymentMethod: pmID, Items: items, Livemode: a.Livemode,
		Metadata: domain.MergeMetadata(nil, p.Metadata), FineRate: fine, InterestRate: interest,
		CancelAtPeriodEnd: p.CancelAtPeriodEnd != nil && *p.CancelAtPeriodEnd,
	}
	if coupon != nil {
		sub.Coupon = &coupon.ID
	}
	if err := svc.Start(tx, a, sub, StartOptions{TrialEnd: trialEnd, Bill: true}); err != nil {
		return nil, err
	}
	return Get(tx, a.Scope, sub.ID)
}

// StartOptions says how Start begins a subscription.
type StartOptions struct {
	// TrialEnd, when set, makes the first period a trial ending then.
	TrialEnd time.Time
	// Bill creates, finalizes and collects the first invoice (the API). A checkout session has
	// already collected its first payment and makes the invoice itself.
	Bill bool
	// Paid says the first payment already succeeded (a checkout session); otherwise the
	// subscription starts incomplete until it does. Ignored with Bill.
	Paid bool
	// CouponInvoices counts the invoices the subscription's coupon already discounted before it
	// started (a subscription-mode session's discounted first payment), so a once coupon is spent.
	CouponInvoices int
}

// Start is the one way a subscription begins, from the API and from a subscription-mode
// checkout session: the billing cycle is anchored at now (or at the trial's end), the first
// period runs to one interval later (or to the trial's end) as instants, the status is set by the
// first payment, and customer.subscription.created is emitted.
func (svc *Service) Start(tx *db.Tx, a domain.Actor, sub *domain.Subscription, o StartOptions) error {
	now := tx.Now.UTC().Truncate(time.Second)
	sub.Object, sub.Livemode = "subscription", a.Livemode
	sub.CreatedAt, sub.UpdatedAt, sub.CurrentPeriodStart = domain.At(now), domain.At(now), domain.At(now)
	if sub.Metadata == nil {
		sub.Metadata = domain.Metadata{}
	}
	if sub.CollectionMethod == "" {
		sub.CollectionMethod = domain.CollectionChargeAutomatically
	}
	if !o.TrialEnd.IsZero() {
		sub.TrialStart, sub.TrialEnd = domain.At(now), domain.At(o.TrialEnd)
		sub.BillingCycleAnchor = domain.At(o.TrialEnd)
		sub.CurrentPeriodEnd = domain.At(o.TrialEnd)
	} else {
		sub.BillingCycleAnchor = domain.At(now)
		sub.CurrentPeriodEnd = domain.At(domain.AddInterval(now, cycle(sub), 1))
	}
	if sub.CancelAtPeriodEnd {
		sub.CancelAt = sub.CurrentPeriodEnd // Stripe's convention: cancel_at shows when it ends
	}
	switch {
	case o.Bill && !o.TrialEnd.IsZero():
		sub.Status = domain.SubscriptionTrialing
	case o.Bill && sub.CollectionMethod == domain.CollectionSendInvoice:
		sub.Status = domain.SubscriptionActive
	case o.Bill:
		sub.Status = domain.SubscriptionIncomplete // until the first invoice is paid
	case !o.Paid:
		sub.Status = domain.SubscriptionIncomplete
	case !o.TrialEnd.IsZero():
		sub.Status = domain.SubscriptionTrialing
	default:
		sub.Status = domain.SubscriptionActive
	}
	if err := tx.CreateSubscription(a.Scope, sub); err != nil {
		return err
	}
	st := &state{}
	if sub.Coupon != nil {
		st.CouponFrom, st.CouponInvoices = now.Unix(), o.CouponInvoices
	}
	if err := core.Emit(tx, a, domain.EventSubscriptionCreated, sub, nil); err != nil {
		return err
	}
	if o.Bill {
		inv, err := svc.billPeriod(tx, a, sub, st, domain.BillingSubscriptionCreate)
		if err != nil {
			return err
		}
		if err := svc.schedule(tx, a.Scope, sub, st); err != nil {
			return err
		}
		if err := svc.finalizeAndCollect(tx, a, sub, inv); err != nil {
			return err
		}
		// Reload: paying the invoice may have changed the status.
		fresh, err := tx.FindSubscriptionByID(a.Scope, sub.ID)
		if err != nil {
			return err
		}
		*sub = *fresh
	} else if err := svc.schedule(tx, a.Scope, sub, st); err != nil {
		return err
	}
	// Anything already due (the notice of a trial shorter than three days) happens now.
	return svc.advance(tx, a, sub.ID)
}

// describe is the text of an item's invoice line.
func describe(it domain.SubscriptionItem, tx *db.Tx, s domain.Scope) string {
	name := it.Price.ID
	if it.Price.Name != nil && *it.Price.Name != "" {
		name = *it.Price.Name
	} else if prod, err := tx.FindProductByID(s, it.Price.Product); err == nil {
		name = prod.Name
	}
	return fmt.Sprintf("%d × %s", it.Quantity, strings.TrimSpace(name))
}
