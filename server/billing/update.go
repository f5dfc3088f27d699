package billing

import (
	"fmt"
	"slices"
	"time"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/invoices"
)

// Proration behaviours of an update.
const (
	ProrationCreate = "create_prorations"
	ProrationNone   = "none"
)

// Behaviours of pause_collection (Stripe's).
var pauseBehaviors = []string{"keep_as_draft", "mark_uncollectible", "void"}

// PauseParams is pause_collection in an update.
type PauseParams struct {
	Behavior  *string `json:"behavior"`
	ResumesAt *string `json:"resumes_at"`
}

// UpdateParams is the body of POST /v1/subscriptions/{id}.
type UpdateParams struct {
	Items                []ItemParams                  `json:"items"`
	Quantity             *int64                        `json:"quantity"`
	ProrationBehavior    *string                       `json:"proration_behavior"`
	DefaultPaymentMethod *string                       `json:"default_payment_method"`
	CancelAtPeriodEnd    *bool                         `json:"cancel_at_period_end"`
	PauseCollection      domain.Opt[PauseParams]       `json:"pause_collection"`
	Coupon               domain.Opt[string]            `json:"coupon"`
	Metadata             domain.Opt[map[string]string] `json:"metadata"`
}

func stateConflict(sub *domain.Subscription, action string) *domain.Error {
	return domain.Conflict(domain.CodeResourceStateConflict, "Subscription %s is %s; it cannot be %s.", sub.ID, sub.Status, action)
}

// Update changes a subscription (CONTRACT 12): items (price change, quantity) with proration of
// the rest of the current period onto the next invoice (proration_behavior create_prorations, the
// default, or none), the default card, cancel_at_period_end, pause_collection (an object pauses,
// null resumes), the coupon and metadata. A canceled or expired subscription cannot be changed.
func (svc *Service) Update(tx *db.Tx, a domain.Actor, id string, p UpdateParams) (*domain.Subscription, error) {
	sub, err := Get(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if domain.SubscriptionFinal(sub.Status) {
		return nil, stateConflict(sub, "updated")
	}
	st, err := loadState(tx, a.Scope, sub.ID)
	if err != nil {
		return nil, err
	}
	before := *sub
	behavior := ProrationCreate
	if p.ProrationBehavior != nil {
		if *p.ProrationBehavior != ProrationCreate && *p.ProrationBehavior != ProrationNone {
			return nil, domain.Invalid("proration_behavior", "proration_behavior must be create_prorations or none; got %q.", *p.ProrationBehavior)
		}
		behavior = *p.ProrationBehavior
	}
	if p.Quantity != nil {
		if len(p.Items) > 0 {
			return nil, domain.Invalid("quantity", "Send quantity (a subscription of one item) or items, not both.")
		}
		if len(sub.Items) != 1 {
			return nil, domain.Invalid("quantity", "quantity changes a subscription of one item; this one has %d: send items with their ids.", len(sub.Items))
		}
		if *p.Quantity < 1 || *p.Quantity > MaxQuantity {
			return nil, domain.Invalid("quantity", "quantity must be between 1 and %d; got %d.", MaxQuantity, *p.Quantity)
		}
		id := sub.Items[0].ID
		p.Items = []ItemParams{{ID: &id, Quantity: p.Quantity}}
	}
	if len(p.Items) > 0 {
		items, err := svc.changeItems(tx, a.Scope, sub, p.Items)
		if err != nil {
			return nil, err
		}
		if behavior == ProrationCreate {
			st.Pending = append(st.Pending, prorations(tx, a.Scope, sub, sub.Items, items)...)
		}
		sub.Items = items
	}
	if p.DefaultPaymentMethod != nil {
		pm, err := savedCard(tx, a.Scope, "default_payment_method", *p.DefaultPaymentMethod, sub.Customer)
		if err != nil {
			return nil, err
		}
		sub.DefaultPaymentMethod = &pm.ID
	}
	if p.CancelAtPeriodEnd != nil {
		sub.CancelAtPeriodEnd = *p.CancelAtPeriodEnd
		// Stripe's convention: cancel_at is the instant a subscription set to cancel will end.
		sub.CancelAt = domain.Time{}
		if sub.CancelAtPeriodEnd {
			sub.CancelAt = sub.CurrentPeriodEnd
		}
	}
	if p.Coupon.Set {
		if p.Coupon.Null || p.Coupon.V == "" {
			sub.Coupon = nil
		} else if sub.Coupon == nil || *sub.Coupon != p.Coupon.V { // the coupon it has already: nothing changes
			c, err := findCoupon(tx, a.Scope, p.Coupon.V, sub.Currency)
			if err != nil {
				return nil, err
			}
			sub.Coupon = &c.ID
			st.CouponFrom, st.CouponInvoices = tx.Now.Unix(), 0
		}
	}
	if p.Metadata.Set {
		if err := domain.ValidateMetadata(p.Metadata.V); err != nil {
			return nil, err
		}
		if p.Metadata.Null {
			sub.Metadata = domain.Metadata{}
		} else {
			sub.Metadata = domain.MergeMetadata(sub.Metadata, p.Metadata.V)
		}
	}
	var pauseEvent string
	if p.PauseCollection.Set {
		if p.PauseCollection.Null {
			if sub.Status == domain.SubscriptionPaused {
				next, err := domain.NextSubscriptionStatus(sub.Status, domain.SubResumed, svc.Final)
				if err != nil {
					return nil, err
				}
				sub.Status, sub.PauseCollection, pauseEvent = next, nil, domain.EventSubscriptionResumed
			}
		} else {
			pc, err := pauseOf(tx.Now, p.PauseCollection.V)
			if err != nil {
				return nil, err
			}
			if sub.Status != domain.SubscriptionPaused {
				next, err := domain.NextSubscriptionStatus(sub.Status, domain.SubPaused, svc.Final)
				if err != nil {
					return nil, stateConflict(sub, "paused")
				}
				sub.Status, pauseEvent = next, domain.EventSubscriptionPaused
			}
			sub.PauseCollection = pc
		}
	}
	if err := tx.UpdateSubscription(a.Scope, sub); err != nil {
		return nil, err
	}
	if pauseEvent != "" {
		if err := core.Emit(tx, a, pauseEvent, sub, &before); err != nil {
			return nil, err
		}
	}
	if err := core.Emit(tx, a, domain.EventSubscriptionUpdated, sub, &before); err != nil {
		return nil, err
	}
	return sub, svc.schedule(tx, a.Scope, sub, st)
}

func pauseOf(now time.Time, p PauseParams) (*domain.PauseCollection, error) {
	if p.Behavior == nil {
		return nil, domain.Missing("pause_collection[behavior]")
	}
	if !slices.Contains(pauseBehaviors, *p.Behavior) {
		return nil, domain.Invalid("pause_collection[behavior]", "pause_collection[behavior] must be keep_as_draft, mark_uncollectible or void; got %q.", *p.Behavior)
	}
	pc := &domain.PauseCollection{Behavior: *p.Behavior}
	if p.ResumesAt != nil {
		t, err := domain.ParseDueDate("pause_collection[resumes_at]", *p.ResumesAt)
		if err != nil {
			return nil, err
		}
		if !t.After(now) {
			return nil, domain.Invalid("pause_collection[resumes_at]", "pause_collection[resumes_at] must be in the future.")
		}
		pc.ResumesAt = domain.At(t)
	}
	return pc, nil
}

// changeItems applies items (an id changes or deletes that item; no id adds one) and checks the
// result: at least one item, one currency and the subscription's billing interval.
func (svc *Service) changeItems(tx *db.Tx, s domain.Scope, sub *domain.Subscription, params []ItemParams) ([]domain.SubscriptionItem, error) {
	items := slices.Clone(sub.Items)
	for i, p := range params {
		if p.ID == nil {
			if p.Deleted != nil && *p.Deleted {
				return nil, domain.Missing(fmt.Sprintf("items[%d][id]", i))
			}
			added, err := resolveItems(tx, s, []ItemParams{p})
			if err != nil {
				return nil, renameParam(err, i)
			}
			items = append(items, added[0])
			continue
		}
		k := slices.IndexFunc(items, func(it domain.SubscriptionItem) bool { return it.ID == *p.ID })
		if k < 0 {
			return nil, domain.NotFound(fmt.Sprintf("items[%d][id]", i), "subscription item", *p.ID)
		}
		if p.Deleted != nil && *p.Deleted {
			items = slices.Delete(items, k, k+1)
			continue
		}
		it := items[k]
		if p.Price != nil && *p.Price != it.Price.ID {
			q := it.Quantity
			if p.Quantity != nil {
				q = *p.Quantity
			}
			changed, err := resolveItems(tx, s, []ItemParams{{Price: p.Price, Quantity: &q}})
			if err != nil {
				return nil, renameParam(err, i)
			}
			it.Price = changed[0].Price
		}
		if p.Quantity != nil {
			if *p.Quantity < 1 || *p.Quantity > MaxQuantity {
				return nil, domain.Invalid(fmt.Sprintf("items[%d][quantity]", i), "quantity must be between 1 and %d; got %d.", MaxQuantity, *p.Quantity)
			}
			it.Quantity = *p.Quantity
		}
		items[k] = it
	}
	if len(items) == 0 {
		return nil, domain.Invalid("items", "A subscription keeps at least one item; cancel it instead.")
	}
	want := cycle(sub)
	for i, it := range items {
		if it.Price.Currency != sub.Currency {
			return nil, domain.Invalid("items", "Price %s is in %s; the subscription is in %s.", it.Price.ID, it.Price.Currency, sub.Currency)
		}
		if !sameCycle(*it.Price.Recurring, want) {
			return nil, domain.Invalid("items", "Price %s bills every %d %s; the subscription bills every %d %s (cancel it and start a new one to change the interval).",
				it.Price.ID, max(it.Price.Recurring.IntervalCount, 1), it.Price.Recurring.Interval, max(want.IntervalCount, 1), want.Interval)
		}
		for _, other := range items[:i] {
			if other.Price.ID == it.Price.ID {
				return nil, domain.Invalid("items", "Price %s appears twice; use one item with a quantity.", it.Price.ID)
			}
		}
	}
	return items, nil
}

func renameParam(err error, i int) error {
	if e, ok := domain.AsError(err); ok && e.Param != "" {
		c := *e
		c.Param = fmt.Sprintf("items[%d]%s", i, e.Param[len("items[0]"):])
		return &c
	}
	return err
}

// prorations returns the lines that settle a change of items for the rest of the current
// period: a credit for the unused time of what was billed and a charge for the remaining time of
// what replaces it, for every item whose price or quantity changed. Nothing during a trial.
func prorations(tx *db.Tx, s domain.Scope, sub *domain.Subscription, old, next []domain.SubscriptionItem) []domain.InvoiceLine {
	if sub.Status == domain.SubscriptionTrialing || sub.Status == domain.SubscriptionIncomplete {
		return nil
	}
	start, end := sub.CurrentPeriodStart.Time, sub.CurrentPeriodEnd.Time
	remaining, whole := end.Sub(tx.Now), end.Sub(start)
	if remaining <= 0 {
		return nil
	}
	// The date a line names is the customer's civil date (its invoice renders in their zone).
	var cus *domain.Customer
	if c, err := tx.FindCustomerByID(s, sub.Customer); err == nil {
		cus = c
	}
	from := tx.Now.In(domain.CustomerZone(cus)).Format("2006-01-02")
	same := func(a, b domain.SubscriptionItem) bool { return a.Price.ID == b.Price.ID && a.Quantity == b.Quantity }
	var out []domain.InvoiceLine
	line := func(it domain.SubscriptionItem, sign int64, unused bool) {
		amount := sign * domain.Prorate(it.Price.UnitAmount*it.Quantity, remaining, whole)
		if amount == 0 {
			return
		}
		price, product := it.Price, it.Price.Product
		d := domain.ProrationText(unused, describe(it, tx, s), from)
		out = append(out, domain.InvoiceLine{ID: domain.NewID(domain.PrefixLineItem), Object: "line_item", Description: &d, Price: &price, Product: &product,
			Quantity: 1, UnitAmount: amount, SubtotalAmount: amount, TotalAmount: amount})
	}
	for _, o := range old {
		if !slices.ContainsFunc(next, func(n domain.SubscriptionItem) bool { return same(o, n) }) {
			line(o, -1, true)
		}
	}
	for _, n := range next {
		if !slices.ContainsFunc(old, func(o domain.SubscriptionItem) bool { return same(o, n) }) {
			line(n, 1, false)
		}
	}
	return out
}

// CancelParams is the body of POST /v1/subscriptions/{id}/cancel.
type CancelParams struct {
	// InvoiceNow bills what is pending (prorations, the credit of prorate) in a final invoice.
	InvoiceNow *bool `json:"invoice_now"`
	// Prorate credits the unused time of the current period.
	Prorate *bool `json:"prorate"`
}

// Cancel cancels a subscription now (customer.subscription.deleted). Canceling at the period's
// end is an update (cancel_at_period_end). Canceling twice is a 409.
func (svc *Service) Cancel(tx *db.Tx, a domain.Actor, id string, p CancelParams) (*domain.Subscription, error) {
	sub, err := Get(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if domain.SubscriptionFinal(sub.Status) {
		return nil, stateConflict(sub, "canceled")
	}
	if err := svc.end(tx, a, sub, tx.Now, p); err != nil {
		return nil, err
	}
	return Get(tx, a.Scope, id)
}

func init() { core.OnDeleteCustomer(cancelCustomerSubscriptions) }

// cancelCustomerSubscriptions cancels now, without prorations or a final invoice, every
// subscription of a customer being deleted that has not ended (DeleteCustomer's hook), so none
// renews or duns a customer that no longer exists.
func cancelCustomerSubscriptions(tx *db.Tx, a domain.Actor, customer string) error {
	svc := New(nil, "")
	var after string
	for {
		page, more, err := tx.ListSubscriptions(a.Scope, db.SubscriptionFilter{Customer: customer}, db.ListParams{Limit: 100, StartingAfter: after})
		if err != nil {
			return err
		}
		for _, sub := range page {
			if domain.SubscriptionFinal(sub.Status) {
				continue
			}
			if err := svc.end(tx, a, sub, tx.Now, CancelParams{}); err != nil {
				return err
			}
		}
		if !more || len(page) == 0 {
			return nil
		}
		after = page[len(page)-1].ID
	}
}

// end cancels a subscription whose service ends at the instant at.
func (svc *Service) end(tx *db.Tx, a domain.Actor, sub *domain.Subscription, at time.Time, p CancelParams) error {
	st, err := loadState(tx, a.Scope, sub.ID)
	if err != nil {
		return err
	}
	if p.Prorate != nil && *p.Prorate {
		st.Pending = append(st.Pending, prorations(tx, a.Scope, sub, sub.Items, nil)...)
	}
	next, err := domain.NextSubscriptionStatus(sub.Status, domain.SubCanceled, svc.Final)
	if err != nil {
		return stateConflict(sub, "canceled")
	}
	before := *sub
	sub.Status = next
	sub.CanceledAt = domain.At(tx.Now)
	sub.EndedAt = domain.At(at)
	if p.InvoiceNow != nil && *p.InvoiceNow && len(st.Pending) > 0 {
		inv, nextSt, err := buildInvoice(tx, a.Scope, &domain.Subscription{ID: sub.ID, Currency: sub.Currency, Customer: sub.Customer,
			CollectionMethod: sub.CollectionMethod, Livemode: sub.Livemode, DaysUntilDue: sub.DaysUntilDue, FineRate: sub.FineRate, InterestRate: sub.InterestRate},
			st, domain.BillingSubscriptionUpdate, sub.CurrentPeriodStart.Time, at, true)
		if err != nil {
			return err
		}
		st = nextSt
		st.Pending = nil // a credit beyond the final invoice is not kept (no customer balance)
		if err := invoices.Insert(tx, a, inv); err != nil {
			return err
		}
		sub.LatestInvoice = &inv.ID
		if err := tx.UpdateSubscription(a.Scope, sub); err != nil {
			return err
		}
		if err := svc.finalizeAndCollect(tx, a, sub, inv); err != nil {
			return err
		}
		fresh, err := tx.FindSubscriptionByID(a.Scope, sub.ID)
		if err != nil {
			return err
		}
		*sub = *fresh
	} else {
		st.Pending = nil
		if err := tx.UpdateSubscription(a.Scope, sub); err != nil {
			return err
		}
	}
	if err := core.Emit(tx, a, domain.EventSubscriptionDeleted, sub, &before); err != nil {
		return err
	}
	return svc.schedule(tx, a.Scope, sub, st)
}

// Resume resumes a paused subscription (customer.subscription.resumed).
func (svc *Service) Resume(tx *db.Tx, a domain.Actor, id string) (*domain.Subscription, error) {
	sub, err := Get(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if sub.Status != domain.SubscriptionPaused {
		return nil, stateConflict(sub, "resumed (only a paused subscription can be)")
	}
	return svc.resume(tx, a, sub)
}

func (svc *Service) resume(tx *db.Tx, a domain.Actor, sub *domain.Subscription) (*domain.Subscription, error) {
	before := *sub
	next, err := domain.NextSubscriptionStatus(sub.Status, domain.SubResumed, svc.Final)
	if err != nil {
		return nil, stateConflict(sub, "resumed")
	}
	sub.Status, sub.PauseCollection = next, nil
	if err := tx.UpdateSubscription(a.Scope, sub); err != nil {
		return nil, err
	}
	if err := core.Emit(tx, a, domain.EventSubscriptionResumed, sub, &before); err != nil {
		return nil, err
	}
	if err := core.Emit(tx, a, domain.EventSubscriptionUpdated, sub, &before); err != nil {
		return nil, err
	}
	st, err := loadState(tx, a.Scope, sub.ID)
	if err != nil {
		return nil, err
	}
	return sub, svc.schedule(tx, a.Scope, sub, st)
}
