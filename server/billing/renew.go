package billing

import (
	"encoding/json"
	"errors"
	"time"

	"troco/db"
	"troco/server/core"
	"troco/server/discounts"
	"troco/server/domain"
	"troco/server/invoices"
)

// settleCheck is how long after an in-flight renewal payment the job looks at it again.
const settleCheck = 5 * time.Minute

// buildInvoice makes the draft invoice of the subscription's current period (not stored): one
// line per item (zero during a trial), the proration lines waiting in st, the coupon's discount.
// A credit larger than the charges is carried to the next invoice, so a total is never negative;
// on a subscription's final invoice (final) there is no next invoice and the balancing line says
// the credit is dropped.
func buildInvoice(tx *db.Tx, s domain.Scope, sub *domain.Subscription, st *state, reason string, start, end time.Time, final bool) (*domain.Invoice, *state, error) {
	next := *st
	now := domain.At(tx.Now)
	inv := &domain.Invoice{
		ID: domain.NewID(domain.PrefixInvoice), Object: "invoice", Status: domain.InvoiceDraft, Currency: sub.Currency,
		Customer: sub.Customer, CollectionMethod: sub.CollectionMethod, Livemode: sub.Livemode, Metadata: domain.Metadata{},
		Subscription: &sub.ID, BillingReason: reason, PeriodStart: domain.At(start), PeriodEnd: domain.At(end),
		CreatedAt: now, UpdatedAt: now,
	}
	trial := !sub.TrialEnd.IsZero() && !end.After(sub.TrialEnd.Time)
	var lines []domain.InvoiceLine
	for _, it := range sub.Items {
		price, product := it.Price, it.Price.Product
		desc := describe(it, tx, s)
		amount := it.Price.UnitAmount * it.Quantity
		unit := it.Price.UnitAmount
		if trial {
			desc = domain.TrialText(desc)
			amount, unit = 0, 0
		}
		lines = append(lines, domain.InvoiceLine{ID: domain.NewID(domain.PrefixLineItem), Object: "line_item", Description: &desc,
			Price: &price, Product: &product, Quantity: it.Quantity, UnitAmount: unit, SubtotalAmount: amount, TotalAmount: amount})
	}
	lines = append(lines, st.Pending...)
	next.Pending = nil
	var subtotal int64
	for _, l := range lines {
		subtotal += l.SubtotalAmount
	}
	if subtotal < 0 {
		// Carry the credit: a line that brings this invoice to zero and the same amount, negative,
		// waiting for the next one.
		d := domain.TextCreditCarried
		if final {
			d = domain.TextCreditDropped
		}
		lines = append(lines, domain.InvoiceLine{ID: domain.NewID(domain.PrefixLineItem), Object: "line_item", Description: &d, Quantity: 1,
			UnitAmount: -subtotal, SubtotalAmount: -subtotal, TotalAmount: -subtotal})
		c := domain.TextCreditPrevious
		next.Pending = []domain.InvoiceLine{{ID: domain.NewID(domain.PrefixLineItem), Object: "line_item", Description: &c, Quantity: 1,
			UnitAmount: subtotal, SubtotalAmount: subtotal, TotalAmount: subtotal}}
		subtotal = 0
	}
	if sub.Coupon != nil && subtotal > 0 {
		c, err := tx.FindCouponAnyState(s, *sub.Coupon)
		if err != nil && !errors.Is(err, db.ErrNotFound) {
			return nil, nil, err
		}
		if err == nil && couponApplies(c, st, start) {
			inv.DiscountAmount = discounts.Amount(subtotal, c)
			next.CouponInvoices++
		}
	}
	inv.Lines = domain.NewList(domain.InvoiceLinesURL(inv.ID), lines, false)
	if sub.CollectionMethod == domain.CollectionSendInvoice {
		days := 0
		if sub.DaysUntilDue != nil {
			days = *sub.DaysUntilDue
		}
		d := days
		inv.DaysUntilDue = &d
		// Due days_until_due civil days after the period starts, at 12:00:00Z (SPEC 4.6, 9.2).
		inv.DueDate = domain.At(domain.ResolveDaysUntilDue(start, days))
		inv.FineRate, inv.InterestRate = sub.FineRate, sub.InterestRate
	}
	inv.SetTotals()
	return inv, &next, nil
}

// couponApplies says whether the coupon discounts an invoice for a period starting at start.
func couponApplies(c *domain.Coupon, st *state, start time.Time) bool {
	switch c.Duration {
	case "once":
		return st.CouponInvoices == 0
	case "repeating":
		if c.DurationInMonths == nil {
			return false
		}
		return start.Before(domain.AddInterval(time.Unix(st.CouponFrom, 0), domain.Recurring{Interval: "month"}, *c.DurationInMonths))
	default:
		return true
	}
}

// billPeriod stores the draft invoice of the current period and points latest_invoice at it.
func (svc *Service) billPeriod(tx *db.Tx, a domain.Actor, sub *domain.Subscription, st *state, reason string) (*domain.Invoice, error) {
	inv, next, err := buildInvoice(tx, a.Scope, sub, st, reason, sub.CurrentPeriodStart.Time, sub.CurrentPeriodEnd.Time, false)
	if err != nil {
		return nil, err
	}
	*st = *next
	if err := invoices.Insert(tx, a, inv); err != nil {
		return nil, err
	}
	sub.LatestInvoice = &inv.ID
	if err := tx.UpdateSubscription(a.Scope, sub); err != nil {
		return nil, err
	}
	return inv, nil
}

// finalizeAndCollect finalizes a draft invoice of the subscription and collects it with the
// collector of its collection method; a failed attempt starts (or continues) dunning.
func (svc *Service) finalizeAndCollect(tx *db.Tx, a domain.Actor, sub *domain.Subscription, inv *domain.Invoice) error {
	if err := invoices.FinalizeDraft(tx, a, inv); err != nil {
		return err
	}
	if inv.Status != domain.InvoiceOpen {
		return nil // nothing to collect (zero)
	}
	out, err := svc.collect(tx, a, sub, inv)
	if err != nil {
		return err
	}
	if out == Failed {
		return svc.attemptFailed(tx, a, sub.ID, inv.ID)
	}
	return nil
}

// attemptFailed handles a failed collection attempt of a subscription's invoice (dunning): the
// first invoice of an incomplete subscription waits for a payment until the subscription
// expires; a later invoice puts the subscription past_due and is retried on the dunning days
// after its first attempt; when the last retry fails the final action applies (canceled or
// unpaid).
func (svc *Service) attemptFailed(tx *db.Tx, a domain.Actor, subID, invID string) error {
	sub, err := tx.FindSubscriptionByID(a.Scope, subID)
	if err != nil {
		return err
	}
	inv, err := tx.FindInvoiceByID(a.Scope, invID)
	if err != nil {
		return err
	}
	if sub.Status == domain.SubscriptionIncomplete || domain.SubscriptionFinal(sub.Status) {
		return nil
	}
	if err := tx.MarkInvoiceInArrears(a.Scope, inv.ID, tx.Now.Unix()); err != nil {
		return err
	}
	ev := domain.SubPaymentFailed
	before := *inv
	var rs RetryScheduler // the collector's own retry days (Pix Automático: business days)
	if c, err := svc.collectorOf(tx, a.Scope, sub); err != nil {
		return err
	} else if s, ok := c.(RetryScheduler); ok {
		rs = s
	}
	if !scheduleRetry(sub, inv, rs) {
		ev = domain.SubRetriesExhausted
	}
	if err := tx.UpdateInvoice(a.Scope, inv); err != nil {
		return err
	}
	if inv.NextPaymentAttempt != before.NextPaymentAttempt {
		if err := core.Emit(tx, a, invoices.EventUpdated, inv, &before); err != nil {
			return err
		}
	}
	next, err := domain.NextSubscriptionStatus(sub.Status, ev, svc.Final)
	if err != nil {
		return nil // the event changes nothing in this status (paused)
	}
	if next == domain.SubscriptionCanceled {
		if _, err := svc.Invoices.MarkUncollectibleIfOpen(tx, a, inv.ID); err != nil {
			return err
		}
		return svc.end(tx, a, sub, tx.Now, CancelParams{})
	}
	return setStatus(tx, a, sub, next)
}

// scheduleRetry sets the next_payment_attempt of a subscription's invoice whose attempt
// (counted in attempt_count) was declined: the next retry, counted from the renewal instant (the
// period's start) for a renewal invoice, else from the first attempt, on the dunning days or on
// rs's days when the collector has its own (nil: the dunning days); none when the retries are
// exhausted (it then reports false). A subscription that is incomplete or ended is not retried
// and its invoice is left alone.
func scheduleRetry(sub *domain.Subscription, inv *domain.Invoice, rs RetryScheduler) bool {
	if sub.Status == domain.SubscriptionIncomplete || domain.SubscriptionFinal(sub.Status) {
		return true
	}
	retry := inv.AttemptCount - 1 // retries done so far
	first := inv.StatusTransitions.FinalizedAt.Time
	if inv.BillingReason == domain.BillingSubscriptionCycle && !inv.PeriodStart.IsZero() {
		first = inv.PeriodStart.Time
	}
	var at time.Time
	if rs != nil {
		at = rs.RetryAt(first, retry)
	} else if retry < len(domain.DunningRetryDays) {
		at = first.Add(time.Duration(domain.DunningRetryDays[retry]) * 24 * time.Hour)
	}
	if at.IsZero() {
		inv.NextPaymentAttempt = domain.Time{}
		return false
	}
	inv.NextPaymentAttempt = domain.At(at)
	return true
}

// setStatus changes a subscription's status and emits customer.subscription.updated.
func setStatus(tx *db.Tx, a domain.Actor, sub *domain.Subscription, next string) error {
	if next == sub.Status {
		return nil
	}
	before := *sub
	sub.Status = next
	if err := tx.UpdateSubscription(a.Scope, sub); err != nil {
		return err
	}
	return core.Emit(tx, a, domain.EventSubscriptionUpdated, sub, &before)
}

// transition applies ev through the state machine.
func (svc *Service) transition(tx *db.Tx, a domain.Actor, sub *domain.Subscription, ev domain.SubscriptionEvent) error {
	next, err := domain.NextSubscriptionStatus(sub.Status, ev, svc.Final)
	if err != nil {
		return err
	}
	return setStatus(tx, a, sub, next)
}

// RunDue is the billing job: it claims up to limit subscriptions with work due at now and does
// it (notices, renewals, retries, expiry, automatic resume), each claimed inside tx, so several
// replicas never renew one twice. It returns how many it claimed.
func (svc *Service) RunDue(tx *db.Tx, now time.Time, limit int) (int, error) {
	due, err := tx.ClaimDueSubscriptions(now.Unix(), limit)
	if err != nil {
		return 0, err
	}
	for _, d := range due {
		if err := svc.advance(tx, domain.Actor{Scope: d.Scope}, d.Subscription.ID); err != nil {
			return 0, err
		}
	}
	return len(due), nil
}

// advance does everything due for one subscription at tx.Now, in order (several periods when the
// clock jumped), then schedules its next wake-up.
func (svc *Service) advance(tx *db.Tx, a domain.Actor, id string) error {
	now := tx.Now
	for range 1000 {
		sub, err := tx.FindSubscriptionByID(a.Scope, id)
		if err != nil {
			return err
		}
		st, err := loadState(tx, a.Scope, id)
		if err != nil {
			return err
		}
		if domain.SubscriptionFinal(sub.Status) {
			return svc.schedule(tx, a.Scope, sub, st)
		}
		if sub.Status == domain.SubscriptionIncomplete {
			if now.Before(sub.CreatedAt.Add(incompleteLimit)) {
				return svc.schedule(tx, a.Scope, sub, st)
			}
			waiting, err := svc.paymentWaiting(tx, a.Scope, sub)
			if err != nil {
				return err
			}
			if waiting {
				// A PIX or boleto of the first payment is still payable: look again in an hour.
				raw, _ := json.Marshal(st)
				at := now.Add(time.Hour).Unix()
				return tx.SetSubscriptionSchedule(a.Scope, sub.ID, &at, string(raw))
			}
			if sub.LatestInvoice != nil {
				if _, err := svc.Invoices.VoidIfOpen(tx, a, *sub.LatestInvoice); err != nil {
					return err
				}
			}
			if err := svc.transition(tx, a, sub, domain.SubFirstPaymentExpired); err != nil {
				return err
			}
			continue
		}
		if sub.Status == domain.SubscriptionPaused && sub.PauseCollection != nil && !sub.PauseCollection.ResumesAt.IsZero() && !now.Before(sub.PauseCollection.ResumesAt.Time) {
			if _, err := svc.resume(tx, a, sub); err != nil {
				return err
			}
			continue
		}
		end := sub.CurrentPeriodEnd.Time
		// The trial ends in three days (or less: a short trial): once per trial end.
		if sub.Status == domain.SubscriptionTrialing && !sub.TrialEnd.IsZero() && !now.Before(sub.TrialEnd.Add(-trialNotice)) && now.Before(sub.TrialEnd.Time) {
			first, err := tx.RecordSubscriptionNotice(sub.ID, "trial_will_end", sub.TrialEnd.Unix())
			if err != nil {
				return err
			}
			if first {
				if err := core.Emit(tx, a, domain.EventSubscriptionTrialWillEnd, sub, nil); err != nil {
					return err
				}
			}
		}
		// A dunning retry that is due.
		if sub.LatestInvoice != nil {
			inv, err := tx.FindInvoiceByID(a.Scope, *sub.LatestInvoice)
			if err != nil {
				return err
			}
			if inv.Status == domain.InvoiceOpen && !inv.NextPaymentAttempt.IsZero() && !now.Before(inv.NextPaymentAttempt.Time) && inv.NextPaymentAttempt.Before(end) {
				if err := svc.retry(tx, a, sub, inv); err != nil {
					return err
				}
				continue
			}
			failed, err := svc.settledUnhandled(tx, a.Scope, sub, inv)
			if err != nil {
				return err
			}
			if failed {
				if err := svc.attemptFailed(tx, a, sub.ID, inv.ID); err != nil {
					return err
				}
				continue
			}
		}
		// The renewal invoice is coming (a week before the period ends).
		if upcomingDue(sub, now) {
			first, err := tx.RecordSubscriptionNotice(sub.ID, "invoice.upcoming", end.Unix())
			if err != nil {
				return err
			}
			if first {
				if err := emitUpcoming(tx, a, sub, st); err != nil {
					return err
				}
			}
		}
		if now.Before(end) {
			return svc.schedule(tx, a.Scope, sub, st)
		}
		// The period ended: cancel or renew at its end instant.
		if sub.CancelAtPeriodEnd || (!sub.CancelAt.IsZero() && !sub.CancelAt.After(end)) {
			if err := svc.end(tx, a, sub, end, CancelParams{}); err != nil {
				return err
			}
			continue
		}
		if err := svc.renew(tx, a, sub, st); err != nil {
			return err
		}
	}
	return errors.New("billing: too many steps for one subscription")
}

// paymentWaiting reports whether the first payment of a subscription is still in flight: the
// payment intent of its checkout session or of its first invoice waits for settlement.
func (svc *Service) paymentWaiting(tx *db.Tx, s domain.Scope, sub *domain.Subscription) (bool, error) {
	var piID *string
	if sub.LatestInvoice != nil {
		inv, err := tx.FindInvoiceByID(s, *sub.LatestInvoice)
		if err != nil {
			return false, err
		}
		piID = inv.PaymentIntent
	}
	if piID == nil && sub.CheckoutSession != nil {
		cs, err := tx.FindCheckoutSessionByID(s, *sub.CheckoutSession)
		if err != nil && !errors.Is(err, db.ErrNotFound) {
			return false, err
		}
		if err == nil {
			piID = cs.PaymentIntent
		}
	}
	if piID == nil {
		return false, nil
	}
	pi, err := svc.Payments.GetIntent(tx, s, *piID)
	if err != nil {
		return false, err
	}
	return pi.Waiting(), nil
}

// settledUnhandled reports whether the latest invoice's last attempt failed after the renewal
// handled it (a live card answer or a processing card resolved later, a declined manual payment),
// so dunning has not started: the invoice is open, attempted, without a retry scheduled, and its
// payment intent is no longer in flight. A recorded live answer not applied yet is applied here.
func (svc *Service) settledUnhandled(tx *db.Tx, s domain.Scope, sub *domain.Subscription, inv *domain.Invoice) (bool, error) {
	switch sub.Status {
	case domain.SubscriptionActive, domain.SubscriptionTrialing, domain.SubscriptionPastDue:
	default:
		return false, nil
	}
	if inv.Status != domain.InvoiceOpen || sub.CollectionMethod != domain.CollectionChargeAutomatically || inv.AttemptCount == 0 ||
		!inv.NextPaymentAttempt.IsZero() || inv.PaymentIntent == nil {
		return false, nil
	}
	if open, err := svc.Payments.HasOpenCall(tx, s, *inv.PaymentIntent); err != nil || open {
		return false, err // the reconciliation job, or ExecutePending, applies it
	}
	pi, err := svc.Payments.GetIntent(tx, s, *inv.PaymentIntent)
	if err != nil {
		return false, err
	}
	switch pi.Status {
	case domain.PIStatusRequiresPaymentMethod, domain.PIStatusCanceled:
		return true, nil
	}
	return false, nil
}

func upcomingDue(sub *domain.Subscription, now time.Time) bool {
	switch sub.Status {
	case domain.SubscriptionActive, domain.SubscriptionTrialing, domain.SubscriptionPastDue:
	default:
		return false
	}
	end := sub.CurrentPeriodEnd.Time
	if sub.CancelAtPeriodEnd || end.Sub(sub.CurrentPeriodStart.Time) <= upcomingBefore {
		return false
	}
	return !now.Before(end.Add(-upcomingBefore)) && now.Before(end)
}

// retry is a dunning retry of the latest invoice.
func (svc *Service) retry(tx *db.Tx, a domain.Actor, sub *domain.Subscription, inv *domain.Invoice) error {
	inv.NextPaymentAttempt = domain.Time{}
	if err := tx.UpdateInvoice(a.Scope, inv); err != nil {
		return err
	}
	out, err := svc.collect(tx, a, sub, inv)
	if err != nil {
		return err
	}
	if out == Failed {
		return svc.attemptFailed(tx, a, sub.ID, inv.ID)
	}
	return nil
}

// renew starts the next period at the end instant of the current one and bills it: the invoice
// is created and finalized and, unless collection is paused or the subscription is unpaid,
// collected. A trial that ends here makes the subscription active (then past_due if the payment
// fails).
func (svc *Service) renew(tx *db.Tx, a domain.Actor, sub *domain.Subscription, st *state) error {
	before := *sub
	start := sub.CurrentPeriodEnd.Time
	if _, err := tx.FindSubscriptionPeriodInvoice(a.Scope, sub.ID, start.Unix()); err == nil {
		return errors.New("billing: the period " + start.Format(time.RFC3339) + " of " + sub.ID + " is already billed")
	} else if !errors.Is(err, db.ErrNotFound) {
		return err
	}
	sub.CurrentPeriodStart = domain.At(start)
	sub.CurrentPeriodEnd = domain.At(domain.NextPeriodEnd(sub.BillingCycleAnchor.Time, cycle(sub), start))
	if sub.Status == domain.SubscriptionTrialing && !sub.TrialEnd.IsZero() && !start.Before(sub.TrialEnd.Time) {
		next, err := domain.NextSubscriptionStatus(sub.Status, domain.SubTrialEnded, svc.Final)
		if err != nil {
			return err
		}
		sub.Status = next
	}
	inv, err := svc.billPeriod(tx, a, sub, st, domain.BillingSubscriptionCycle)
	if err != nil {
		return err
	}
	if err := core.Emit(tx, a, domain.EventSubscriptionUpdated, sub, &before); err != nil {
		return err
	}
	if err := svc.saveState(tx, a.Scope, sub.ID, st); err != nil {
		return err
	}
	switch {
	case sub.Status == domain.SubscriptionPaused:
		behavior := "keep_as_draft"
		if sub.PauseCollection != nil {
			behavior = sub.PauseCollection.Behavior
		}
		switch behavior {
		case "mark_uncollectible":
			if err := invoices.FinalizeDraft(tx, a, inv); err != nil {
				return err
			}
			_, err := svc.Invoices.MarkUncollectibleIfOpen(tx, a, inv.ID)
			return err
		case "void":
			if err := invoices.FinalizeDraft(tx, a, inv); err != nil {
				return err
			}
			_, err := svc.Invoices.VoidIfOpen(tx, a, inv.ID)
			return err
		}
		return nil // keep_as_draft
	case sub.Status == domain.SubscriptionUnpaid:
		// Unpaid: invoices are still issued but not attempted; paying them reactivates it.
		return invoices.FinalizeDraft(tx, a, inv)
	}
	return svc.finalizeAndCollect(tx, a, sub, inv)
}

func (svc *Service) saveState(tx *db.Tx, s domain.Scope, id string, st *state) error {
	sub, err := tx.FindSubscriptionByID(s, id)
	if err != nil {
		return err
	}
	return svc.schedule(tx, s, sub, st)
}

// schedule stores the billing state and the next instant the job has work for the subscription:
// the earliest of the trial notice, a dunning retry, the upcoming-invoice notice, the period end,
// the expiry of an incomplete subscription and an automatic resume. It may be early (the job
// then finds nothing to do and schedules again), never late.
func (svc *Service) schedule(tx *db.Tx, s domain.Scope, sub *domain.Subscription, st *state) error {
	raw, err := json.Marshal(st)
	if err != nil {
		return err
	}
	var next time.Time
	consider := func(t time.Time) {
		if t.IsZero() {
			return
		}
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	if !domain.SubscriptionFinal(sub.Status) {
		end := sub.CurrentPeriodEnd.Time
		switch sub.Status {
		case domain.SubscriptionIncomplete:
			consider(sub.CreatedAt.Add(incompleteLimit))
		default:
			consider(end)
			if sub.Status == domain.SubscriptionTrialing && !sub.TrialEnd.IsZero() {
				if t := sub.TrialEnd.Add(-trialNotice); t.After(tx.Now) {
					consider(t)
				}
			}
			if t := end.Add(-upcomingBefore); t.After(tx.Now) && end.Sub(sub.CurrentPeriodStart.Time) > upcomingBefore {
				consider(t)
			}
			if sub.PauseCollection != nil {
				consider(sub.PauseCollection.ResumesAt.Time)
			}
			if !sub.CancelAt.IsZero() {
				consider(sub.CancelAt.Time)
			}
			if sub.LatestInvoice != nil {
				inv, err := tx.FindInvoiceByID(s, *sub.LatestInvoice)
				if err != nil {
					return err
				}
				if inv.Status == domain.InvoiceOpen && inv.NextPaymentAttempt.Before(end) {
					consider(inv.NextPaymentAttempt.Time)
				}
				inDunning := sub.Status == domain.SubscriptionActive || sub.Status == domain.SubscriptionTrialing || sub.Status == domain.SubscriptionPastDue
				if inDunning && inv.Status == domain.InvoiceOpen && inv.PaymentIntent != nil && inv.NextPaymentAttempt.IsZero() && inv.AttemptCount > 0 {
					// A payment in flight (a live card, a processing card): look again once it
					// had time to settle, so a failure starts dunning.
					consider(tx.Now.Add(settleCheck))
				}
			}
		}
	}
	if !next.IsZero() && !next.After(tx.Now) {
		// Whatever was due has been done by the caller; never spin on an instant in the past.
		next = tx.Now.Add(time.Minute)
	}
	var at *int64
	if !next.IsZero() {
		v := next.Unix()
		at = &v
	}
	return tx.SetSubscriptionSchedule(s, sub.ID, at, string(raw))
}

// EmitUpcoming emits invoice.upcoming for a subscription now, with the preview of its next
// renewal invoice (troco trigger; the job emits it a week before each renewal).
func (svc *Service) EmitUpcoming(tx *db.Tx, a domain.Actor, id string) error {
	sub, err := Get(tx, a.Scope, id)
	if err != nil {
		return err
	}
	st, err := loadState(tx, a.Scope, id)
	if err != nil {
		return err
	}
	return emitUpcoming(tx, a, sub, st)
}

func emitUpcoming(tx *db.Tx, a domain.Actor, sub *domain.Subscription, st *state) error {
	end := sub.CurrentPeriodEnd.Time
	next := domain.NextPeriodEnd(sub.BillingCycleAnchor.Time, cycle(sub), end)
	preview, _, err := buildInvoice(tx, a.Scope, sub, st, domain.BillingSubscriptionCycle, end, next, false)
	if err != nil {
		return err
	}
	preview.ID = "" // an upcoming invoice is a preview: it has no id
	preview.Lines.URL = ""
	return core.Emit(tx, a, domain.EventInvoiceUpcoming, preview, nil)
}

// RunOne does what is due for one subscription at now, if it is still due (claimed inside tx,
// like RunDue). It is the job's fallback when a batch failed: one subscription that cannot be
// renewed must not hold back the others.
func (svc *Service) RunOne(tx *db.Tx, s domain.Scope, id string, now time.Time) error {
	ok, err := tx.ClaimSubscription(s, id, now.Unix())
	if err != nil || !ok {
		return err
	}
	return svc.advance(tx, domain.Actor{Scope: s}, id)
}
