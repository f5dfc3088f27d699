package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/db"
	"troco/server"
	"troco/server/clock"
	"troco/server/domain"
	"troco/server/jobs"
)

// Helpers of the recurring billing tests (issue 12).

// subSavedCard saves a test card on cus through a setup intent (the card's first, approved use),
// so that every later charge is a reuse (SPEC 7.1).
func (e *testEnv) subSavedCard(cus, number string) string {
	e.t.Helper()
	si := e.Do("POST", "/v1/setup-intents", e.Test, map[string]any{"customer": cus})
	if si.Status != 200 {
		e.t.Fatalf("create setup intent: %d %s", si.Status, si.Raw)
	}
	r := e.Do("POST", "/v1/setup-intents/"+si.Str("id")+"/confirm", e.Test, map[string]any{"card": payCard(number)})
	if r.Status != 200 || r.Str("payment_method") == "" {
		e.t.Fatalf("confirm setup intent: %d %s", r.Status, r.Raw)
	}
	return r.Str("payment_method")
}

// subCreate creates a subscription, failing the test otherwise.
func (e *testEnv) subCreate(body map[string]any) resp {
	e.t.Helper()
	r := e.Do("POST", "/v1/subscriptions", e.Test, body)
	if r.Status != 200 {
		e.t.Fatalf("create subscription: %d %s", r.Status, r.Raw)
	}
	return r
}

// travel moves the clock to t (a little after, never before) through advance-clock, which runs
// every due job.
func (e *testEnv) travel(t time.Time) {
	e.t.Helper()
	secs := int64(t.Sub(e.Clock.Now())/time.Second) + 1
	if secs < 1 {
		secs = 1
	}
	r := e.Do("POST", "/v1/test-helpers/advance-clock", e.Test, map[string]any{"seconds": secs})
	if r.Status != 200 {
		e.t.Fatalf("advance clock: %d %s", r.Status, r.Raw)
	}
}

func (e *testEnv) sub(id string) resp { return e.Do("GET", "/v1/subscriptions/"+id, e.Test, nil) }

func (r resp) Time(k string) time.Time {
	t, _ := time.Parse(time.RFC3339, r.Str(k))
	return t
}

func (r resp) Num(k string) int64 {
	f, _ := r.Body[k].(float64)
	return int64(f)
}

// subInvoices lists a subscription's invoices, newest first.
func (e *testEnv) subInvoices(sub string) []map[string]any {
	e.t.Helper()
	r := e.Do("GET", "/v1/invoices?limit=100&subscription="+sub, e.Test, nil)
	if r.Status != 200 {
		e.t.Fatalf("list invoices: %d %s", r.Status, r.Raw)
	}
	return r.Data()
}

// subEventCount counts events of typ about subscription-related object id.
func (e *testEnv) subEventCount(typ, id string) int {
	return len(e.payEvents(e.Test, typ, id))
}

// TestSubscriptionYearOfRenewals: a card subscription renews twelve times in a year of time
// travel, each renewal at the end instant of its period, keeping the anchor day; every renewal
// invoice is paid with the saved card, with its events.
func TestSubscriptionYearOfRenewals(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "ana@example.com")
	pm := e.subSavedCard(cus, "4242424242424242")
	price := e.coPrice(e.Test, "Plano Pro", 4990, map[string]any{"interval": "month"})
	r := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price, "quantity": 2}}, "default_payment_method": pm,
		"metadata": map[string]string{"plan": "pro"}})
	is.Equal(r.Str("status"), "active")
	is.Equal(r.Str("object"), "subscription")
	id := r.Str("id")
	anchor := r.Time("billing_cycle_anchor")
	is.Equal(r.Time("current_period_start"), anchor)
	is.Equal(r.Time("current_period_end"), domain.AddInterval(anchor, domain.Recurring{Interval: "month"}, 1))
	first := e.Do("GET", "/v1/invoices/"+r.Str("latest_invoice"), e.Test, nil)
	is.Equal(first.Str("status"), "paid")
	is.Equal(first.Num("amount_paid"), int64(9980))
	is.Equal(first.Str("billing_reason"), "subscription_create")
	is.Equal(e.subEventCount("customer.subscription.created", id), 1)

	for month := 1; month <= 12; month++ {
		end := e.sub(id).Time("current_period_end")
		// One second before the end instant: nothing renews.
		e.Clock.Advance(end.Sub(e.Clock.Now()) - time.Second)
		is.NoErr(e.Jobs.RunDue(context.Background()))
		is.Equal(len(e.subInvoices(id)), month)
		e.travel(end)
		s := e.sub(id)
		is.Equal(s.Str("status"), "active")
		is.Equal(s.Time("current_period_start"), end)
		is.Equal(s.Time("current_period_end"), domain.AddInterval(anchor, domain.Recurring{Interval: "month"}, month+1))
		inv := e.Do("GET", "/v1/invoices/"+s.Str("latest_invoice"), e.Test, nil)
		is.Equal(inv.Str("status"), "paid")
		is.Equal(inv.Str("billing_reason"), "subscription_cycle")
		is.Equal(inv.Num("amount_paid"), int64(9980))
		is.Equal(inv.Time("period_start"), end)
		is.True(inv.Str("charge") != "")
	}
	invs := e.subInvoices(id)
	is.Equal(len(invs), 13) // the first and twelve renewals: one per period
	is.Equal(len(e.payEvents(e.Test, "invoice.paid", invs[0]["id"].(string))), 1)
	// invoice.upcoming a week before each renewal (a preview without an id).
	ups := e.Do("GET", "/v1/events?limit=100&type=invoice.upcoming", e.Test, nil).Data()
	is.Equal(len(ups), 12)
	is.Equal(digStr(ups[0], "data.object.subscription"), id)
	is.Equal(digNum(ups[0], "data.object.amount_due"), int64(9980))
	var renewals int
	for _, ev := range e.payEvents(e.Test, "customer.subscription.updated", id) {
		if _, ok := dig(ev, "data.previous_attributes.current_period_end").(string); ok {
			renewals++
		}
	}
	is.Equal(renewals, 12)

	// Listing with filters.
	is.Equal(len(e.Do("GET", "/v1/subscriptions?status=active&customer="+cus, e.Test, nil).Data()), 1)
	is.Equal(len(e.Do("GET", "/v1/subscriptions?price="+price, e.Test, nil).Data()), 1)
	is.Equal(len(e.Do("GET", "/v1/subscriptions?status=canceled", e.Test, nil).Data()), 0)
	is.Equal(e.Do("GET", "/v1/subscriptions?status=sleeping", e.Test, nil).ErrParam(), "status")
}

// TestSubscriptionAdvanceClockYear: one advance-clock of a year renews every period in seconds.
func TestSubscriptionAdvanceClockYear(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "ana@example.com")
	pm := e.subSavedCard(cus, "4242424242424242")
	price := e.coPrice(e.Test, "Plano", 2990, map[string]any{"interval": "month"})
	id := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pm}).Str("id")
	start := e.Clock.Now()
	r := e.Do("POST", "/v1/test-helpers/advance-clock", e.Test, map[string]any{"seconds": 366 * 24 * 3600})
	is.Equal(r.Status, 200)
	invs := e.subInvoices(id)
	is.Equal(len(invs), 13)
	for _, inv := range invs {
		is.Equal(inv["status"], "paid")
	}
	is.True(e.sub(id).Time("current_period_end").After(start.Add(365 * 24 * time.Hour)))
}

// TestSubscriptionDeclineThenRecovery: a renewal on a card that declines on reuse puts the
// subscription past_due (invoice.payment_failed); after the customer's card is replaced, the
// retry on day 3 pays it and the subscription is active again.
func TestSubscriptionDeclineThenRecovery(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "ana@example.com")
	good := e.subSavedCard(cus, "4242424242424242")
	price := e.coPrice(e.Test, "Plano", 2990, map[string]any{"interval": "month"})
	id := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": good}).Str("id")
	bad := e.subSavedCard(cus, "4000009000000623") // approved once (saved), declined on reuse
	is.Equal(e.Do("POST", "/v1/subscriptions/"+id, e.Test, map[string]any{"default_payment_method": bad}).Status, 200)

	end := e.sub(id).Time("current_period_end")
	e.travel(end)
	s := e.sub(id)
	is.Equal(s.Str("status"), "past_due")
	inv := s.Str("latest_invoice")
	ir := e.Do("GET", "/v1/invoices/"+inv, e.Test, nil)
	is.Equal(ir.Str("status"), "open")
	is.Equal(ir.Num("attempt_count"), int64(1))
	is.Equal(ir.Time("next_payment_attempt"), end.Add(3*24*time.Hour))
	is.Equal(e.subEventCount("invoice.payment_failed", inv), 1)

	is.Equal(e.Do("POST", "/v1/subscriptions/"+id, e.Test, map[string]any{"default_payment_method": good}).Status, 200)
	e.travel(end.Add(3 * 24 * time.Hour))
	is.Equal(e.sub(id).Str("status"), "active")
	ir = e.Do("GET", "/v1/invoices/"+inv, e.Test, nil)
	is.Equal(ir.Str("status"), "paid")
	is.Equal(ir.Num("attempt_count"), int64(2))
	is.Equal(e.subEventCount("invoice.paid", inv), 1)
	var back bool
	for _, ev := range e.payEvents(e.Test, "customer.subscription.updated", id) {
		if digStr(ev, "data.object.status") == "active" && digStr(ev, "data.previous_attributes.status") == "past_due" {
			back = true
		}
	}
	is.True(back)
	// The next renewal is normal again.
	e.travel(e.sub(id).Time("current_period_end"))
	is.Equal(e.sub(id).Str("status"), "active")
	is.Equal(len(e.subInvoices(id)), 3)
}

// TestSubscriptionDunningFinal: a renewal that keeps declining is retried on days 3, 5 and 7
// after its first attempt; when the last retry fails the subscription is canceled (the default)
// or unpaid (--dunning-final unpaid), with its events.
func TestSubscriptionDunningFinal(t *testing.T) {
	for _, final := range []string{"canceled", "unpaid"} {
		t.Run(final, func(t *testing.T) {
			is := is.New(t)
			e := newEnv(t, func(c *server.Config) { c.DunningFinal = domain.DunningFinal(final) })
			cus := e.payCustomer(e.Test, "ana@example.com")
			good := e.subSavedCard(cus, "4242424242424242")
			price := e.coPrice(e.Test, "Plano", 2990, map[string]any{"interval": "month"})
			id := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": good}).Str("id")
			bad := e.subSavedCard(cus, "4000009000000623")
			is.Equal(e.Do("POST", "/v1/subscriptions/"+id, e.Test, map[string]any{"default_payment_method": bad}).Status, 200)
			end := e.sub(id).Time("current_period_end")
			e.travel(end)
			inv := e.sub(id).Str("latest_invoice")
			for i, day := range []int{3, 5, 7} {
				at := end.Add(time.Duration(day) * 24 * time.Hour)
				e.Clock.Advance(at.Sub(e.Clock.Now()) - time.Second)
				is.NoErr(e.Jobs.RunDue(context.Background()))
				is.Equal(e.Do("GET", "/v1/invoices/"+inv, e.Test, nil).Num("attempt_count"), int64(i+1)) // not yet
				e.travel(at)
				is.Equal(e.Do("GET", "/v1/invoices/"+inv, e.Test, nil).Num("attempt_count"), int64(i+2))
				if day < 7 {
					is.Equal(e.sub(id).Str("status"), "past_due")
				}
			}
			is.Equal(e.subEventCount("invoice.payment_failed", inv), 4)
			s := e.sub(id)
			is.Equal(s.Str("status"), final)
			ir := e.Do("GET", "/v1/invoices/"+inv, e.Test, nil)
			if final == "canceled" {
				is.Equal(e.subEventCount("customer.subscription.deleted", id), 1)
				is.Equal(ir.Str("status"), "uncollectible")
				is.True(s.Str("ended_at") != "")
				// Nothing more happens.
				e.travel(end.Add(90 * 24 * time.Hour))
				is.Equal(len(e.subInvoices(id)), 2)
				return
			}
			is.Equal(ir.Str("status"), "open")
			// Unpaid: renewals are issued but not attempted; paying what is owed reactivates it.
			next := s.Time("current_period_end")
			e.travel(next)
			s = e.sub(id)
			is.Equal(s.Str("status"), "unpaid")
			later := e.Do("GET", "/v1/invoices/"+s.Str("latest_invoice"), e.Test, nil)
			is.Equal(later.Str("status"), "open")
			is.Equal(later.Num("attempt_count"), int64(0))
			is.Equal(e.Do("POST", "/v1/invoices/"+inv+"/pay", e.Test, map[string]any{"payment_method": good}).Status, 200)
			is.Equal(e.sub(id).Str("status"), "active")
		})
	}
}

// TestSubscriptionSendInvoiceLate: a send_invoice subscription's renewal invoice is due
// days_until_due later at 12:00:00Z; at that instant the subscription is past_due; paid late it
// owes the fine once and interest per whole 24-hour period since the due instant.
func TestSubscriptionSendInvoiceLate(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "ana@example.com")
	price := e.coPrice(e.Test, "Consultoria", 100000, map[string]any{"interval": "month"})
	r := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "collection_method": "send_invoice",
		"days_until_due": 5, "fine_rate": 200, "interest_rate": 100})
	id := r.Str("id")
	is.Equal(r.Str("status"), "active")
	first := e.Do("GET", "/v1/invoices/"+r.Str("latest_invoice"), e.Test, nil)
	is.Equal(first.Str("status"), "open")
	is.Equal(first.Str("due_date"), noonUTC(e.Clock.Now(), 5))
	is.Equal(e.Do("POST", "/v1/invoices/"+first.Str("id")+"/pay", e.Test, map[string]any{"paid_out_of_band": true}).Status, 200)

	end := r.Time("current_period_end")
	e.travel(end)
	s := e.sub(id)
	is.Equal(s.Str("status"), "active")
	inv := s.Str("latest_invoice")
	ir := e.Do("GET", "/v1/invoices/"+inv, e.Test, nil)
	due := ir.Time("due_date")
	is.Equal(ir.Str("due_date"), noonUTC(end, 5))
	is.Equal(ir.Num("amount_due"), int64(100000))

	e.travel(due)
	is.Equal(e.sub(id).Str("status"), "past_due")
	is.Equal(e.subEventCount("invoice.overdue", inv), 1)
	// Ten whole days and a bit after the due instant: fine 2% once, interest 1% × 10/30.
	e.travel(due.Add(10*24*time.Hour + 3*time.Hour))
	ir = e.Do("GET", "/v1/invoices/"+inv, e.Test, nil)
	is.Equal(ir.Num("fine_amount"), int64(2000))
	is.Equal(ir.Num("interest_amount"), int64(333))
	is.Equal(ir.Num("amount_due"), int64(102333))
	pr := e.Do("POST", "/v1/invoices/"+inv+"/pay", e.Test, map[string]any{"paid_out_of_band": true})
	is.Equal(pr.Status, 200)
	is.Equal(pr.Num("amount_paid"), int64(102333))
	is.Equal(e.sub(id).Str("status"), "active")
	// What was paid stays: later reads do not grow it.
	e.travel(due.Add(40 * 24 * time.Hour))
	is.Equal(e.Do("GET", "/v1/invoices/"+inv, e.Test, nil).Num("amount_paid"), int64(102333))
}

// TestSubscriptionTrial: a 14-day trial bills zero now, sends trial_will_end three days before
// its end, and charges the card at the end instant.
func TestSubscriptionTrial(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "ana@example.com")
	pm := e.subSavedCard(cus, "4242424242424242")
	price := e.coPrice(e.Test, "Plano", 2990, map[string]any{"interval": "month"})
	r := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pm, "trial_period_days": 14})
	id := r.Str("id")
	is.Equal(r.Str("status"), "trialing")
	trialEnd := r.Time("trial_end")
	is.Equal(r.Time("current_period_end"), trialEnd)
	is.Equal(e.Do("GET", "/v1/invoices/"+r.Str("latest_invoice"), e.Test, nil).Num("amount_due"), int64(0))

	e.Clock.Advance(trialEnd.Add(-3*24*time.Hour).Sub(e.Clock.Now()) - time.Minute)
	is.NoErr(e.Jobs.RunDue(context.Background()))
	is.Equal(e.subEventCount("customer.subscription.trial_will_end", id), 0)
	e.travel(trialEnd.Add(-3 * 24 * time.Hour))
	is.Equal(e.subEventCount("customer.subscription.trial_will_end", id), 1)
	e.travel(trialEnd.Add(-24 * time.Hour))
	is.Equal(e.subEventCount("customer.subscription.trial_will_end", id), 1) // once

	e.travel(trialEnd)
	s := e.sub(id)
	is.Equal(s.Str("status"), "active")
	is.Equal(s.Time("current_period_start"), trialEnd)
	is.Equal(s.Time("current_period_end"), domain.AddInterval(trialEnd, domain.Recurring{Interval: "month"}, 1))
	inv := e.Do("GET", "/v1/invoices/"+s.Str("latest_invoice"), e.Test, nil)
	is.Equal(inv.Str("status"), "paid")
	is.Equal(inv.Num("amount_paid"), int64(2990))
}

// TestSubscriptionProrationOnUpgrade: changing to a dearer price halfway through a period credits
// the unused half of the old price and charges half of the new one on the next invoice.
func TestSubscriptionProrationOnUpgrade(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "ana@example.com")
	pm := e.subSavedCard(cus, "4242424242424242")
	basic := e.coPrice(e.Test, "Básico", 3000, map[string]any{"interval": "day", "interval_count": 30})
	pro := e.coPrice(e.Test, "Pro", 9000, map[string]any{"interval": "day", "interval_count": 30})
	r := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": basic}}, "default_payment_method": pm})
	id := r.Str("id")
	item := r.Body["items"].([]any)[0].(map[string]any)["id"].(string)
	start, end := r.Time("current_period_start"), r.Time("current_period_end")
	is.Equal(end.Sub(start), 30*24*time.Hour)
	e.Clock.Advance(start.Add(15 * 24 * time.Hour).Sub(e.Clock.Now()))
	u := e.Do("POST", "/v1/subscriptions/"+id, e.Test, map[string]any{"items": []any{map[string]any{"id": item, "price": pro}}})
	is.Equal(u.Status, 200)
	is.Equal(digStr(u.Body["items"].([]any)[0].(map[string]any), "price.id"), pro)

	e.travel(end)
	inv := e.Do("GET", "/v1/invoices/"+e.sub(id).Str("latest_invoice"), e.Test, nil)
	lines := inv.Body["lines"].(map[string]any)["data"].([]any)
	is.Equal(len(lines), 3)
	var amounts []int64
	for _, l := range lines {
		amounts = append(amounts, int64(l.(map[string]any)["subtotal_amount"].(float64)))
	}
	is.Equal(amounts, []int64{9000, -1500, 4500}) // the new period, unused Básico, remaining Pro
	is.Equal(inv.Num("amount_paid"), int64(12000))

	// proration_behavior none: nothing pending.
	item = e.sub(id).Body["items"].([]any)[0].(map[string]any)["id"].(string)
	is.Equal(e.Do("POST", "/v1/subscriptions/"+id, e.Test, map[string]any{"items": []any{map[string]any{"id": item, "price": basic}}, "proration_behavior": "none"}).Status, 200)
	e.travel(e.sub(id).Time("current_period_end"))
	inv = e.Do("GET", "/v1/invoices/"+e.sub(id).Str("latest_invoice"), e.Test, nil)
	is.Equal(inv.Num("amount_paid"), int64(3000))
}

// TestSubscriptionCancelPauseResume: cancel at period end, cancel now with proration invoiced,
// pause (void) and resume, with their events.
func TestSubscriptionCancelPauseResume(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "ana@example.com")
	pm := e.subSavedCard(cus, "4242424242424242")
	price := e.coPrice(e.Test, "Plano", 3000, map[string]any{"interval": "day", "interval_count": 30})
	mk := func() string {
		return e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pm}).Str("id")
	}

	// At period end.
	a := mk()
	set := e.Do("POST", "/v1/subscriptions/"+a, e.Test, map[string]any{"cancel_at_period_end": true})
	is.Equal(set.Str("status"), "active")
	end := e.sub(a).Time("current_period_end")
	is.Equal(set.Time("cancel_at"), end) // Stripe's convention: cancel_at is when it will end
	unset := e.Do("POST", "/v1/subscriptions/"+a, e.Test, map[string]any{"cancel_at_period_end": false})
	is.Equal(unset.Body["cancel_at"], nil)
	is.Equal(e.Do("POST", "/v1/subscriptions/"+a, e.Test, map[string]any{"cancel_at_period_end": true}).Time("cancel_at"), end)
	created := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pm, "cancel_at_period_end": true})
	is.Equal(created.Time("cancel_at"), created.Time("current_period_end"))
	e.travel(end)
	s := e.sub(a)
	is.Equal(s.Str("status"), "canceled")
	is.Equal(s.Time("ended_at"), end)
	is.Equal(len(e.subInvoices(a)), 1)
	is.Equal(e.subEventCount("customer.subscription.deleted", a), 1)

	// Now, with the unused third credited on a final invoice (zero, the credit is not kept).
	b := mk()
	e.Clock.Advance(20 * 24 * time.Hour)
	c := e.Do("POST", "/v1/subscriptions/"+b+"/cancel", e.Test, map[string]any{"prorate": true, "invoice_now": true})
	is.Equal(c.Status, 200)
	is.Equal(c.Str("status"), "canceled")
	final := e.Do("GET", "/v1/invoices/"+c.Str("latest_invoice"), e.Test, nil)
	is.Equal(final.Str("billing_reason"), "subscription_update")
	is.Equal(final.Num("amount_due"), int64(0))
	// The final invoice's balancing line does not promise a next invoice that will never come.
	for _, l := range final.Body["lines"].(map[string]any)["data"].([]any) {
		d, _ := l.(map[string]any)["description"].(string)
		is.True(!strings.Contains(d, "next invoice")) // a canceled subscription has no next invoice
	}
	// Twice: 409, and a canceled subscription cannot be updated.
	is.Equal(e.Do("POST", "/v1/subscriptions/"+b+"/cancel", e.Test, nil).Status, 409)
	u := e.Do("POST", "/v1/subscriptions/"+b, e.Test, map[string]any{"metadata": map[string]string{"k": "v"}})
	is.Equal(u.Status, 409)
	is.Equal(u.ErrCode(), "resource_state_conflict")

	// Pause with behavior void, resume.
	p := mk()
	r := e.Do("POST", "/v1/subscriptions/"+p, e.Test, map[string]any{"pause_collection": map[string]any{"behavior": "void"}})
	is.Equal(r.Str("status"), "paused")
	is.Equal(e.subEventCount("customer.subscription.paused", p), 1)
	e.travel(e.sub(p).Time("current_period_end"))
	inv := e.Do("GET", "/v1/invoices/"+e.sub(p).Str("latest_invoice"), e.Test, nil)
	is.Equal(inv.Str("status"), "void")
	is.Equal(e.Do("POST", "/v1/subscriptions/"+a+"/resume", e.Test, nil).Status, 409) // not paused
	r = e.Do("POST", "/v1/subscriptions/"+p+"/resume", e.Test, nil)
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "active")
	is.Equal(e.subEventCount("customer.subscription.resumed", p), 1)
	e.travel(e.sub(p).Time("current_period_end"))
	is.Equal(e.Do("GET", "/v1/invoices/"+e.sub(p).Str("latest_invoice"), e.Test, nil).Str("status"), "paid")
}

// TestSubscriptionBadInput: every refused request is a clear error naming its param, and
// nothing is created.
func TestSubscriptionBadInput(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "ana@example.com")
	pm := e.subSavedCard(cus, "4242424242424242")
	monthly := e.coPrice(e.Test, "Mensal", 2990, map[string]any{"interval": "month"})
	yearly := e.coPrice(e.Test, "Anual", 29900, map[string]any{"interval": "year"})
	oneTime := e.coPrice(e.Test, "Avulso", 2990, nil)

	other, otherKey := e.NewOrg("Outra Ltda", false)
	_ = other
	oCus := e.Do("POST", "/v1/customers", otherKey, map[string]any{"email": "o@example.com"}).Str("id")
	oPrice := func() string {
		r := e.Do("POST", "/v1/products", otherKey, map[string]any{"name": "X", "default_price_data": map[string]any{"unit_amount": 100, "currency": "brl", "recurring": map[string]any{"interval": "month"}}})
		return r.Str("default_price")
	}()
	oPM := func() string {
		si := e.Do("POST", "/v1/setup-intents", otherKey, map[string]any{"customer": oCus})
		return e.Do("POST", "/v1/setup-intents/"+si.Str("id")+"/confirm", otherKey, map[string]any{"card": payCard("4242424242424242")}).Str("payment_method")
	}()
	detached := e.subSavedCard(cus, "5555555555554444")
	is.Equal(e.Do("POST", "/v1/payment-methods/"+detached+"/detach", e.Test, nil).Status, 200)

	item := func(price string) []any { return []any{map[string]any{"price": price}} }
	cases := []struct {
		name   string
		body   map[string]any
		status int
		param  string
	}{
		{"no customer", map[string]any{"items": item(monthly), "default_payment_method": pm}, 400, "customer"},
		{"another org's customer", map[string]any{"customer": oCus, "items": item(monthly)}, 404, "customer"},
		{"another org's price", map[string]any{"customer": cus, "items": item(oPrice), "default_payment_method": pm}, 404, "items[0][price]"},
		{"another org's card", map[string]any{"customer": cus, "items": item(monthly), "default_payment_method": oPM}, 404, "default_payment_method"},
		{"one-time price", map[string]any{"customer": cus, "items": item(oneTime), "default_payment_method": pm}, 400, "items[0][price]"},
		{"mixed intervals", map[string]any{"customer": cus, "items": []any{map[string]any{"price": monthly}, map[string]any{"price": yearly}}, "default_payment_method": pm}, 400, "items[1][price]"},
		{"past trial_end", map[string]any{"customer": cus, "items": item(monthly), "default_payment_method": pm, "trial_end": e.Clock.Now().Add(-time.Hour).UTC().Format(time.RFC3339)}, 400, "trial_end"},
		{"trial both ways", map[string]any{"customer": cus, "items": item(monthly), "trial_end": e.Clock.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339), "trial_period_days": 3}, 400, "trial_end"},
		{"detached card", map[string]any{"customer": cus, "items": item(monthly), "default_payment_method": detached}, 400, "default_payment_method"},
		{"no card", map[string]any{"customer": cus, "items": item(monthly)}, 400, "default_payment_method"},
		{"no items", map[string]any{"customer": cus, "default_payment_method": pm}, 400, "items"},
		{"quantity zero", map[string]any{"customer": cus, "items": []any{map[string]any{"price": monthly, "quantity": 0}}, "default_payment_method": pm}, 400, "items[0][quantity]"},
		{"send_invoice without days", map[string]any{"customer": cus, "items": item(monthly), "collection_method": "send_invoice"}, 400, "days_until_due"},
		{"fine on a card", map[string]any{"customer": cus, "items": item(monthly), "default_payment_method": pm, "fine_rate": 100}, 400, "fine_rate"},
		{"fine above 2%", map[string]any{"customer": cus, "items": item(monthly), "collection_method": "send_invoice", "days_until_due": 3, "fine_rate": 201}, 400, "fine_rate"},
		{"unknown coupon", map[string]any{"customer": cus, "items": item(monthly), "default_payment_method": pm, "coupon": "nope"}, 404, "coupon"},
		{"unknown field", map[string]any{"customer": cus, "items": item(monthly), "default_payment_method": pm, "colour": "red"}, 400, "colour"},
	}
	for _, c := range cases {
		r := e.Do("POST", "/v1/subscriptions", e.Test, c.body)
		if r.Status != c.status || r.ErrParam() != c.param {
			t.Errorf("%s: got %d %q, want %d %q: %s", c.name, r.Status, r.ErrParam(), c.status, c.param, r.Raw)
		}
	}
	is.Equal(len(e.Do("GET", "/v1/subscriptions", e.Test, nil).Data()), 0)
	is.Equal(len(e.Do("GET", "/v1/invoices", e.Test, nil).Data()), 0)

	// Another organization cannot see or change a subscription.
	id := e.subCreate(map[string]any{"customer": cus, "items": item(monthly), "default_payment_method": pm}).Str("id")
	for _, req := range []struct{ method, path string }{{"GET", ""}, {"POST", ""}, {"POST", "/cancel"}, {"POST", "/resume"}} {
		is.Equal(e.Do(req.method, "/v1/subscriptions/"+id+req.path, otherKey, map[string]any{}).Status, 404)
	}
	is.Equal(e.Do("GET", "/v1/subscriptions/"+id, e.Live, nil).Status, 404) // nor the live environment
	// Updating with the wrong interval or another org's card.
	is.Equal(e.Do("POST", "/v1/subscriptions/"+id, e.Test, map[string]any{"items": []any{map[string]any{"price": yearly}}}).ErrParam(), "items")
	is.Equal(e.Do("POST", "/v1/subscriptions/"+id, e.Test, map[string]any{"default_payment_method": oPM}).Status, 404)
	is.Equal(e.Do("POST", "/v1/subscriptions/"+id, e.Test, map[string]any{"pause_collection": map[string]any{"behavior": "sleep"}}).ErrParam(), "pause_collection[behavior]")
	// Parameters are named in Stripe's bracket style everywhere, as checkout's line_items[1][price].
	is.Equal(e.Do("POST", "/v1/subscriptions/"+id, e.Test, map[string]any{"items": []any{map[string]any{"id": "si_nope"}}}).ErrParam(), "items[0][id]")
	is.Equal(e.Do("POST", "/v1/subscriptions/"+id, e.Test, map[string]any{"items": []any{map[string]any{"price": monthly}, map[string]any{"price": monthly, "quantity": 0}}}).ErrParam(), "items[1][quantity]")
	is.Equal(e.sub(id).Str("status"), "active")
}

// TestSubscriptionFirstPaymentDeclined: a first payment declined on reuse leaves the subscription
// incomplete with its invoice open; unpaid after 23 hours it expires and the invoice is voided.
func TestSubscriptionFirstPaymentDeclined(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "ana@example.com")
	bad := e.subSavedCard(cus, "4000009000000623")
	price := e.coPrice(e.Test, "Plano", 2990, map[string]any{"interval": "month"})
	r := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": bad})
	is.Equal(r.Str("status"), "incomplete")
	inv := r.Str("latest_invoice")
	is.Equal(e.Do("GET", "/v1/invoices/"+inv, e.Test, nil).Str("status"), "open")
	is.Equal(e.subEventCount("invoice.payment_failed", inv), 1)
	e.travel(e.Clock.Now().Add(23 * time.Hour))
	is.Equal(e.sub(r.Str("id")).Str("status"), "incomplete_expired")
	is.Equal(e.Do("GET", "/v1/invoices/"+inv, e.Test, nil).Str("status"), "void")

	// Paid within the 23 hours: active.
	good := e.subSavedCard(cus, "4242424242424242")
	r = e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": bad})
	is.Equal(e.Do("POST", "/v1/invoices/"+r.Str("latest_invoice")+"/pay", e.Test, map[string]any{"payment_method": good}).Status, 200)
	is.Equal(e.sub(r.Str("id")).Str("status"), "active")
}

// TestSubscriptionReplicas: two servers on one database file run the renewal job at the same
// instant; every subscription renews once.
func TestSubscriptionReplicas(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "ana@example.com")
	pm := e.subSavedCard(cus, "4242424242424242")
	price := e.coPrice(e.Test, "Plano", 2990, map[string]any{"interval": "month"})
	var ids []string
	for range 20 {
		ids = append(ids, e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pm}).Str("id"))
	}
	other := e.replica()
	e.Clock.Advance(32 * 24 * time.Hour)
	other.Clock.Advance(32 * 24 * time.Hour)
	done := make(chan error, 2)
	go func() { done <- e.Jobs.RunDue(context.Background()) }()
	go func() { done <- other.Jobs.RunDue(context.Background()) }()
	is.NoErr(<-done)
	is.NoErr(<-done)
	for _, id := range ids {
		invs := e.subInvoices(id)
		is.Equal(len(invs), 2)
		is.Equal(fmt.Sprint(invs[0]["status"]), "paid")
	}
	is.Equal(len(e.Do("GET", "/v1/charges?limit=100", e.Test, nil).Data()), 40)
}

// replica is a second server on the same database file, with its own clock and job runner (as
// another machine would run), sharing the first's secrets.
func (e *testEnv) replica() *testEnv {
	e.t.Helper()
	clk := clock.NewOffset(clock.Real{}, e.Clock.Offset())
	d, err := db.Open(context.Background(), e.Path, db.Options{Schema: schemaSQL(e.t), PostgresSchema: pgSchemaSQL(e.t), Clock: clk, Synchronous: "NORMAL"})
	if err != nil {
		e.t.Fatalf("open replica database: %v", err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := e.Config
	cfg.DB, cfg.Clock, cfg.Jobs = d, clk, jobs.NewRunner(clk, log)
	srv := httptest.NewTLSServer(server.New(cfg))
	e.t.Cleanup(func() {
		srv.Close()
		d.Close()
	})
	r := *e
	r.srv, r.DB, r.Clock, r.Jobs, r.Client = srv, d, clk, cfg.Jobs, srv.Client()
	return &r
}

// TestSubscriptionCoupon: a coupon on a subscription discounts the invoices its duration covers:
// once the first, repeating those of the periods starting within its months, forever all.
func TestSubscriptionCoupon(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "ana@example.com")
	pm := e.subSavedCard(cus, "4242424242424242")
	price := e.coPrice(e.Test, "Plano", 10000, map[string]any{"interval": "month"})
	for _, c := range []struct {
		coupon map[string]any
		paid   []int64 // first invoice, then three renewals
	}{
		{map[string]any{"percent_off": 50, "duration": "once"}, []int64{5000, 10000, 10000, 10000}},
		{map[string]any{"amount_off": 2500, "currency": "brl", "duration": "repeating", "duration_in_months": 2}, []int64{7500, 7500, 10000, 10000}},
		{map[string]any{"percent_off": 10, "duration": "forever"}, []int64{9000, 9000, 9000, 9000}},
	} {
		coupon := e.Do("POST", "/v1/coupons", e.Test, c.coupon)
		is.Equal(coupon.Status, 200)
		id := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pm, "coupon": coupon.Str("id")}).Str("id")
		is.Equal(e.sub(id).Str("coupon"), coupon.Str("id"))
		for range 3 {
			e.travel(e.sub(id).Time("current_period_end"))
		}
		invs := e.subInvoices(id)
		is.Equal(len(invs), 4)
		for i, want := range c.paid {
			inv := invs[len(invs)-1-i] // oldest first
			is.Equal(int64(inv["amount_paid"].(float64)), want)
		}
	}
}

// TestSubscriptionCheckoutIfRequired: a subscription-mode checkout with a trial and
// payment_method_collection if_required starts through the same function as the API (trial
// notice, renewal job); at the trial's end, with no card to charge, the invoice fails and the
// subscription is past_due until a card is saved and the retry pays it.
func TestSubscriptionCheckoutIfRequired(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	trial := e.coPrice(e.Test, "Teste", 4990, map[string]any{"interval": "month", "trial_period_days": 7})
	ts := e.coSession(e.Test, map[string]any{"line_items": []any{map[string]any{"price": trial}}, "payment_method_collection": "if_required"})
	tr := e.Do("POST", "/v1/checkout-sessions/"+ts.Str("id")+"/confirm", e.Test, map[string]any{"customer_email": "t@example.com"})
	is.Equal(tr.Status, 200)
	id := tr.Str("subscription")
	s := e.sub(id)
	is.Equal(s.Str("status"), "trialing")
	is.Equal(s.Str("checkout_session"), ts.Str("id"))
	end := s.Time("trial_end")
	e.travel(end.Add(-3 * 24 * time.Hour))
	is.Equal(e.subEventCount("customer.subscription.trial_will_end", id), 1)
	e.travel(end)
	s = e.sub(id)
	is.Equal(s.Str("status"), "past_due")
	inv := s.Str("latest_invoice")
	is.Equal(e.subEventCount("invoice.payment_failed", inv), 1)
	// The customer saves a card; the day-3 retry charges it.
	pm := e.subSavedCard(tr.Str("customer"), "4242424242424242")
	is.Equal(e.Do("POST", "/v1/subscriptions/"+id, e.Test, map[string]any{"default_payment_method": pm}).Status, 200)
	e.travel(end.Add(3 * 24 * time.Hour))
	is.Equal(e.sub(id).Str("status"), "active")
	is.Equal(e.Do("GET", "/v1/invoices/"+inv, e.Test, nil).Str("status"), "paid")
}

// TestSubscriptionJobIsolatesFailure: a subscription the job cannot renew (here its next period
// already has an invoice, which the database refuses to duplicate) is postponed and logged; the
// others renew. The three are made a second apart (as they may be on a loaded machine): the
// clock travels to the end of the last one's period, so every period has ended.
func TestSubscriptionJobIsolatesFailure(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "ana@example.com")
	pm := e.subSavedCard(cus, "4242424242424242")
	price := e.coPrice(e.Test, "Plano", 2990, map[string]any{"interval": "month"})
	var ids []string
	for range 3 {
		ids = append(ids, e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pm}).Str("id"))
		e.travel(e.Clock.Now().Add(time.Second))
	}
	broken := ids[1]
	end := e.sub(broken).Time("current_period_end")
	err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
		now := domain.At(tx.Now)
		return tx.CreateInvoice(domain.Scope{OrgID: e.Org.ID}, &domain.Invoice{ID: domain.NewID(domain.PrefixInvoice), Status: domain.InvoiceDraft, Currency: "brl",
			Customer: cus, CollectionMethod: domain.CollectionChargeAutomatically, Subscription: &broken, BillingReason: domain.BillingSubscriptionCycle,
			PeriodStart: domain.At(end), Metadata: domain.Metadata{}, CreatedAt: now, UpdatedAt: now})
	})
	is.NoErr(err)
	last := e.sub(ids[2]).Time("current_period_end")
	is.True(last.After(end))
	e.travel(last)
	is.Equal(len(e.subInvoices(ids[0])), 2)
	is.Equal(len(e.subInvoices(ids[2])), 2)
	is.Equal(e.sub(broken).Time("current_period_end"), end) // not renewed, not lost: retried later
	is.Equal(e.sub(broken).Str("status"), "active")
}

// TestProrationLineDateIsTheCustomersDay: a proration line names the day of the change as the
// customer sees it (their zone), not the UTC date: at 02:00Z it is still the day before in Manaus.
func TestProrationLineDateIsTheCustomersDay(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "ana@example.com", "timezone": "America/Manaus"}).Str("id")
	pm := e.subSavedCard(cus, "4242424242424242")
	price := e.coPrice(e.Test, "Plano", 4990, map[string]any{"interval": "month"})
	sub := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pm})
	now := e.Clock.Now().UTC()
	at := time.Date(now.Year(), now.Month(), now.Day(), 2, 0, 0, 0, time.UTC).Add(10 * 24 * time.Hour)
	e.travel(at)
	is.Equal(e.Do("POST", "/v1/subscriptions/"+sub.Str("id"), e.Test, map[string]any{"quantity": 2}).Status, 200)
	e.travel(e.sub(sub.Str("id")).Time("current_period_end"))
	inv := e.Do("GET", "/v1/invoices/"+e.sub(sub.Str("id")).Str("latest_invoice"), e.Test, nil)
	var descs []string
	for _, l := range inv.Body["lines"].(map[string]any)["data"].([]any) {
		descs = append(descs, l.(map[string]any)["description"].(string))
	}
	want := "(from " + at.Add(-4*time.Hour).Format("2006-01-02") + ")"
	found := false
	for _, d := range descs {
		if len(d) > len(want) && d[:17] == "Remaining time on" {
			is.Equal(d[len(d)-len(want):], want)
			found = true
		}
	}
	is.True(found)
}

// TestSubscriptionRetryWaitsForThePayersPayment: during dunning, a customer who starts a PIX on the
// hosted invoice page is paying: the retry due meanwhile does not charge the card, and is not a
// failed attempt (no invoice.payment_failed, no "payment failed" e-mail, no step towards the
// final cancelation). When the PIX is paid the subscription is active; when it expires instead,
// dunning goes on with the next retry.
func TestSubscriptionRetryWaitsForThePayersPayment(t *testing.T) {
	for _, pays := range []bool{true, false} {
		is := is.New(t)
		e := newEnv(t)
		cus := e.payCustomer(e.Test, "ana@example.com")
		good := e.subSavedCard(cus, "4242424242424242")
		price := e.coPrice(e.Test, "Plano", 2990, map[string]any{"interval": "month"})
		id := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": good}).Str("id")
		bad := e.subSavedCard(cus, "4000009000000623")
		is.Equal(e.Do("POST", "/v1/subscriptions/"+id, e.Test, map[string]any{"default_payment_method": bad}).Status, 200)
		end := e.sub(id).Time("current_period_end")
		e.travel(end)
		inv := e.sub(id).Str("latest_invoice")
		is.Equal(e.subEventCount("invoice.payment_failed", inv), 1)

		pix := e.Do("POST", "/v1/invoices/"+inv+"/pay", e.Test, map[string]any{"payment_method_type": "pix"}) // as the hosted page does
		is.Equal(pix.Status, 200)
		pi := pix.Str("payment_intent")
		attempts := pix.Num("attempt_count")
		e.travel(end.Add(3*24*time.Hour + time.Minute)) // the first retry is due
		ir := e.Do("GET", "/v1/invoices/"+inv, e.Test, nil)
		is.Equal(ir.Str("payment_intent"), pi) // the PIX is still the invoice's payment
		is.Equal(ir.Num("attempt_count"), attempts)
		is.Equal(ir.Body["last_payment_error"] == nil || digStr(ir.Body, "last_payment_error.code") != "resource_state_conflict", true)
		is.Equal(e.subEventCount("invoice.payment_failed", inv), 1) // not a failed attempt
		is.Equal(e.sub(id).Str("status"), "past_due")

		if pays {
			is.Equal(e.Do("POST", "/v1/test-helpers/payment-intents/"+pi+"/succeed", e.Test, nil).Status, 200)
			is.Equal(e.Do("GET", "/v1/invoices/"+inv, e.Test, nil).Str("status"), "paid")
			is.Equal(e.sub(id).Str("status"), "active")
			continue
		}
		is.Equal(e.Do("POST", "/v1/test-helpers/payment-intents/"+pi+"/expire", e.Test, nil).Status, 200)
		e.travel(e.Clock.Now().Add(time.Hour))
		ir = e.Do("GET", "/v1/invoices/"+inv, e.Test, nil)
		is.Equal(ir.Str("status"), "open")
		is.True(ir.Time("next_payment_attempt").After(e.Clock.Now())) // dunning goes on
		is.Equal(e.sub(id).Str("status"), "past_due")
	}
}

// TestSubscriptionUpdateQuantityNamesQuantity: an out-of-range top-level quantity is refused
// naming quantity, the parameter the caller sent, and changes nothing.
func TestSubscriptionUpdateQuantityNamesQuantity(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "ana@example.com")
	pm := e.subSavedCard(cus, "4242424242424242")
	price := e.coPrice(e.Test, "Plano", 2990, map[string]any{"interval": "month"})
	sub := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pm})
	for _, q := range []int{0, 10001} {
		r := e.Do("POST", "/v1/subscriptions/"+sub.Str("id"), e.Test, map[string]any{"quantity": q})
		is.Equal(r.Status, 400)
		is.Equal(r.ErrParam(), "quantity")
	}
	items := e.sub(sub.Str("id")).Body["items"].([]any)
	is.Equal(items[0].(map[string]any)["quantity"], float64(1)) // unchanged
}

// TestSubscriptionCheckoutDiscountCarriesToRenewals: a subscription-mode checkout session's
// discount becomes the subscription's coupon, so its duration holds for the renewals as on a
// subscription created with coupon: a forever coupon discounts every renewal, a once coupon only
// the first payment the session took, and a promotion code brings its coupon.
func TestSubscriptionCheckoutDiscountCarriesToRenewals(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	price := e.coPrice(e.Test, "Plano", 10000, map[string]any{"interval": "month"})
	for _, c := range []struct {
		coupon map[string]any
		promo  bool
		paid   []int64 // first payment, then two renewals
	}{
		{map[string]any{"percent_off": 50, "duration": "forever"}, false, []int64{5000, 5000, 5000}},
		{map[string]any{"percent_off": 50, "duration": "once"}, false, []int64{5000, 10000, 10000}},
		{map[string]any{"amount_off": 2500, "currency": "brl", "duration": "repeating", "duration_in_months": 2}, true, []int64{7500, 7500, 10000}},
	} {
		coupon := e.Do("POST", "/v1/coupons", e.Test, c.coupon)
		is.Equal(coupon.Status, 200)
		discount := coupon.Str("id")
		if c.promo {
			promo := e.Do("POST", "/v1/promotion-codes", e.Test, map[string]any{"coupon": discount})
			is.Equal(promo.Status, 200)
			discount = promo.Str("id")
		}
		cs := e.coSession(e.Test, map[string]any{"line_items": []any{map[string]any{"price": price}}, "discount": discount})
		r := e.Do("POST", "/v1/checkout-sessions/"+cs.Str("id")+"/confirm", e.Test, map[string]any{
			"payment_method_type": "credit_card", "card": payCard("4242424242424242"), "customer_email": "ana@example.com"})
		is.Equal(r.Status, 200)
		id := r.Str("subscription")
		is.Equal(e.sub(id).Str("coupon"), coupon.Str("id")) // the session's discount is the subscription's coupon
		for range 2 {
			e.travel(e.sub(id).Time("current_period_end"))
		}
		invs := e.subInvoices(id)
		is.Equal(len(invs), 3)
		for i, want := range c.paid {
			inv := invs[len(invs)-1-i] // oldest first
			is.Equal(int64(inv["amount_paid"].(float64)), want)
		}
	}
}

// TestSubscriptionCouponCountsAsRedemption: a subscription that applies a coupon redeems it, as
// a paid checkout session does: times_redeemed counts it and max_redemptions holds (a coupon
// spent by one subscription cannot start another). A subscription-mode session's coupon counts
// once, for the session.
func TestSubscriptionCouponCountsAsRedemption(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "ana@example.com")
	pm := e.subSavedCard(cus, "4242424242424242")
	price := e.coPrice(e.Test, "Plano", 10000, map[string]any{"interval": "month"})
	one := e.Do("POST", "/v1/coupons", e.Test, map[string]any{"percent_off": 20, "duration": "forever", "max_redemptions": 1}).Str("id")
	item := []any{map[string]any{"price": price}}
	first := e.subCreate(map[string]any{"customer": cus, "items": item, "default_payment_method": pm, "coupon": one}).Str("id")
	c := e.Do("GET", "/v1/coupons/"+one, e.Test, nil)
	is.Equal(c.Body["times_redeemed"], float64(1))
	is.Equal(c.Body["valid"], false)
	again := e.Do("POST", "/v1/subscriptions", e.Test, map[string]any{"customer": cus, "items": item, "default_payment_method": pm, "coupon": one})
	is.Equal(again.Status, 400) // used up
	is.Equal(again.ErrParam(), "coupon")
	other := e.subCreate(map[string]any{"customer": cus, "items": item, "default_payment_method": pm}).Str("id")
	upd := e.Do("POST", "/v1/subscriptions/"+other, e.Test, map[string]any{"coupon": one})
	is.Equal(upd.Status, 400) // nor through an update
	is.Equal(upd.ErrParam(), "coupon")
	same := e.Do("POST", "/v1/subscriptions/"+first, e.Test, map[string]any{"coupon": one})
	is.Equal(same.Status, 200) // sending the coupon a subscription already has changes nothing
	is.Equal(e.Do("GET", "/v1/coupons/"+one, e.Test, nil).Body["times_redeemed"], float64(1))

	two := e.Do("POST", "/v1/coupons", e.Test, map[string]any{"percent_off": 20, "duration": "forever", "max_redemptions": 2}).Str("id")
	cs := e.coSession(e.Test, map[string]any{"line_items": item, "discount": two})
	r := e.Do("POST", "/v1/checkout-sessions/"+cs.Str("id")+"/confirm", e.Test, map[string]any{
		"payment_method_type": "credit_card", "card": payCard("4242424242424242"), "customer_email": "bia@example.com"})
	is.Equal(r.Status, 200)
	is.Equal(e.Do("GET", "/v1/coupons/"+two, e.Test, nil).Body["times_redeemed"], float64(1)) // the session, not twice
	is.Equal(e.Do("POST", "/v1/subscriptions/"+other, e.Test, map[string]any{"coupon": two}).Status, 200)
	is.Equal(e.Do("GET", "/v1/coupons/"+two, e.Test, nil).Body["times_redeemed"], float64(2))
}

// TestSubscriptionCanceledWhenItsCustomerIsDeleted: deleting a customer cancels its running
// subscriptions at once (customer.subscription.deleted), as Stripe does, so none of them renews
// and charges (or duns) a customer that no longer exists; ended ones are left as they are.
func TestSubscriptionCanceledWhenItsCustomerIsDeleted(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "ana@example.com")
	pm := e.subSavedCard(cus, "4242424242424242")
	price := e.coPrice(e.Test, "Plano", 2990, map[string]any{"interval": "month"})
	item := []any{map[string]any{"price": price}}
	active := e.subCreate(map[string]any{"customer": cus, "items": item, "default_payment_method": pm}).Str("id")
	trial := e.subCreate(map[string]any{"customer": cus, "items": item, "trial_period_days": 7}).Str("id")
	ended := e.subCreate(map[string]any{"customer": cus, "items": item, "default_payment_method": pm}).Str("id")
	is.Equal(e.Do("POST", "/v1/subscriptions/"+ended+"/cancel", e.Test, nil).Status, 200)
	other := e.payCustomer(e.Test, "bia@example.com")
	kept := e.subCreate(map[string]any{"customer": other, "items": item, "default_payment_method": e.subSavedCard(other, "4242424242424242")}).Str("id")

	is.Equal(e.Do("DELETE", "/v1/customers/"+cus, e.Test, nil).Status, 200)
	for _, id := range []string{active, trial} {
		s := e.sub(id)
		is.Equal(s.Str("status"), "canceled")
		is.Equal(e.subEventCount("customer.subscription.deleted", id), 1)
	}
	is.Equal(e.subEventCount("customer.subscription.deleted", ended), 1) // canceled once, before
	is.Equal(e.sub(kept).Str("status"), "active")                        // another customer's
	before := len(e.subInvoices(active))
	e.travel(e.sub(kept).Time("current_period_end"))
	is.Equal(len(e.subInvoices(active)), before) // no renewal
	is.Equal(e.sub(active).Str("status"), "canceled")
}
