package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/server/calendar"
)

// pixAuthApproved creates an authorization for cus (whose e-mail rule approves it at once) and
// returns its id and the pix_automatico payment method the approval created.
func (e *testEnv) pixAuthApproved(t *testing.T, cus string, maxAmount int64) (string, string) {
	t.Helper()
	r := e.Do("POST", "/v1/pix-authorizations", e.Test, map[string]any{"customer": cus, "max_amount": maxAmount, "interval": "month"})
	if r.Status != 200 || r.Str("status") != "approved" || r.Str("payment_method") == "" {
		t.Fatalf("create pix authorization: %d %s", r.Status, r.Raw)
	}
	return r.Str("id"), r.Str("payment_method")
}

// TestPixAutomaticoSubscriptionYear: a monthly subscription paid by Pix Automático over a year of
// time travel. Each renewal invoice is charged by PIX at its due instant under the authorization;
// a renewal above max_amount fails (invoice.payment_failed, past_due, nothing charged) and is
// recovered by the retry on the next business day once the customer approved a new
// authorization; after the authorization is canceled the next renewal fails clearly, is retried
// on the next three business days without charging anything, then the subscription is canceled.
func TestPixAutomaticoSubscriptionYear(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.pixAuthCustomer(t, e.Test, "pixauto_approve@example.com")
	authA, pmA := e.pixAuthApproved(t, cus, 5000)
	basic := e.coPrice(e.Test, "Academia", 5000, map[string]any{"interval": "month"})
	pro := e.coPrice(e.Test, "Academia Plus", 9000, map[string]any{"interval": "month"})

	r := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": basic}}, "default_payment_method": pmA})
	is.Equal(r.Str("status"), "active")
	id := r.Str("id")
	item := r.Body["items"].([]any)[0].(map[string]any)["id"].(string)
	first := e.Do("GET", "/v1/invoices/"+r.Str("latest_invoice"), e.Test, nil)
	is.Equal(first.Str("status"), "paid")
	ch := e.Do("GET", "/v1/charges/"+first.Str("charge"), e.Test, nil)
	is.Equal(ch.Status, 200)
	is.Equal(ch.Str("payment_method"), pmA)
	is.Equal(digStr(ch.Body, "payment_method_details.type"), "pix")
	paidCharges := 1

	renew := func() (resp, time.Time) {
		t.Helper()
		end := e.sub(id).Time("current_period_end")
		e.travel(end)
		s := e.sub(id)
		return s, end
	}
	// Three renewals paid by PIX at their due instant.
	for range 3 {
		s, end := renew()
		is.Equal(s.Str("status"), "active")
		inv := e.Do("GET", "/v1/invoices/"+s.Str("latest_invoice"), e.Test, nil)
		is.Equal(inv.Str("status"), "paid")
		is.Equal(inv.Num("amount_paid"), int64(5000))
		is.Equal(inv.Num("attempt_count"), int64(1))
		paidAt, err := time.Parse(time.RFC3339, digStr(inv.Body, "status_transitions.paid_at"))
		is.NoErr(err)
		is.True(!paidAt.Before(end))
		paidCharges++
	}

	// The plan goes up to R$ 90,00, above the authorization's max_amount: the renewal fails.
	is.Equal(e.Do("POST", "/v1/subscriptions/"+id, e.Test, map[string]any{"items": []any{map[string]any{"id": item, "price": pro}}, "proration_behavior": "none"}).Status, 200)
	s, end := renew()
	is.Equal(s.Str("status"), "past_due")
	inv := e.Do("GET", "/v1/invoices/"+s.Str("latest_invoice"), e.Test, nil)
	invID := inv.Str("id")
	is.Equal(inv.Str("status"), "open")
	is.Equal(inv.Num("amount_due"), int64(9000))
	is.Equal(inv.Num("attempt_count"), int64(1))
	is.Equal(inv.Body["payment_intent"], nil) // refused before anything was charged
	is.Equal(len(e.payEvents(e.Test, "invoice.payment_failed", invID)), 1)
	// Why: on the invoice and in the event.
	is.Equal(digStr(inv.Body, "last_payment_error.category"), "invalid")
	is.True(strings.Contains(digStr(inv.Body, "last_payment_error.message"), "max_amount"))
	is.True(strings.Contains(digStr(e.payEvents(e.Test, "invoice.payment_failed", invID)[0], "data.object.last_payment_error.message"), "max_amount"))
	retryAt := inv.Time("next_payment_attempt")
	cal := (*calendar.Calendar)(nil)
	wantDay := cal.Next(calendar.Today(end))
	is.Equal(calendar.Today(retryAt), wantDay) // the next business day
	is.True(cal.IsBusinessDay(calendar.Today(retryAt)))

	// The customer approves a new authorization up to R$ 100,00; the retry charges it.
	authB, pmB := e.pixAuthApproved(t, cus, 10000)
	is.Equal(e.Do("POST", "/v1/subscriptions/"+id, e.Test, map[string]any{"default_payment_method": pmB}).Status, 200)
	e.travel(retryAt)
	inv = e.Do("GET", "/v1/invoices/"+invID, e.Test, nil)
	is.Equal(inv.Str("status"), "paid")
	is.Equal(inv.Num("attempt_count"), int64(2))
	is.Equal(len(e.payEvents(e.Test, "invoice.paid", invID)), 1)
	is.Equal(e.sub(id).Str("status"), "active")
	paidCharges++
	is.Equal(e.Do("GET", "/v1/pix-authorizations/"+authA, e.Test, nil).Str("status"), "approved")

	// Renewals until the year is over, under the new authorization.
	for e.Clock.Now().Before(r.Time("current_period_start").AddDate(0, 10, 0)) {
		s, _ := renew()
		is.Equal(s.Str("status"), "active")
		is.Equal(e.Do("GET", "/v1/invoices/"+s.Str("latest_invoice"), e.Test, nil).Str("status"), "paid")
		paidCharges++
	}

	// A crash-retry of a paid invoice's charge never charges twice: the same reference returns
	// the charge already made (checked through the count of charges below).

	// The customer cancels the authorization: the next renewal fails clearly, nothing charged.
	is.Equal(e.Do("POST", "/v1/pix-authorizations/"+authB+"/cancel", e.Test, nil).Status, 200)
	s, end = renew()
	is.Equal(s.Str("status"), "past_due")
	inv = e.Do("GET", "/v1/invoices/"+s.Str("latest_invoice"), e.Test, nil)
	invID = inv.Str("id")
	is.Equal(inv.Str("status"), "open")
	is.Equal(inv.Body["payment_intent"], nil)
	day := calendar.Today(end)
	for retry := 1; retry <= 3; retry++ {
		at := inv.Time("next_payment_attempt")
		day = cal.Next(day)
		is.Equal(calendar.Today(at), day) // retries on the next three business days
		e.travel(at)
		inv = e.Do("GET", "/v1/invoices/"+invID, e.Test, nil)
		is.Equal(inv.Num("attempt_count"), int64(retry+1))
	}
	is.Equal(len(e.payEvents(e.Test, "invoice.payment_failed", invID)), 4)
	is.Equal(e.sub(id).Str("status"), "canceled") // the default final action
	is.Equal(inv.Str("status"), "uncollectible")
	is.Equal(e.payCount(e.Test, "/v1/charges?customer="+cus), paidCharges)
}

// TestPixAutomaticoSubscriptionInsufficientFunds: under an authorization whose payer never has
// the funds (the pixauto_insufficient e-mail rule), the renewal's PIX charge fails with
// insufficient_funds on the invoice's payment intent, is retried on the next three business
// days (invoice.payment_failed each time) and the subscription ends canceled, nothing charged.
// A pix_automatico payment method of another customer is refused naming the param.
func TestPixAutomaticoSubscriptionInsufficientFunds(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.pixAuthCustomer(t, e.Test, "pixauto_approve@example.com")
	_, pmOK := e.pixAuthApproved(t, cus, 5000)
	is.Equal(e.Do("POST", "/v1/customers/"+cus, e.Test, map[string]any{"email": "pixauto_insufficient@example.com"}).Status, 200)
	_, pmPoor := e.pixAuthApproved(t, cus, 5000)
	price := e.coPrice(e.Test, "Academia", 5000, map[string]any{"interval": "month"})

	// Another customer's or organization's pix_automatico payment method.
	other := e.pixAuthCustomer(t, e.Test, "pixauto_approve@example.com")
	_, pmOther := e.pixAuthApproved(t, other, 5000)
	bad := e.Do("POST", "/v1/subscriptions", e.Test, map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pmOther})
	is.Equal(bad.Status, 400)
	is.Equal(bad.ErrParam(), "default_payment_method")
	_, otherKey := e.NewOrg("Outra Ltda", false)
	oCus := e.Do("POST", "/v1/customers", otherKey, map[string]any{"email": "pixauto_approve@example.com"}).Str("id")
	oAuth := e.Do("POST", "/v1/pix-authorizations", otherKey, map[string]any{"customer": oCus, "max_amount": 5000, "interval": "month"})
	is.Equal(oAuth.Str("status"), "approved")
	bad = e.Do("POST", "/v1/subscriptions", e.Test, map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": oAuth.Str("payment_method")})
	is.Equal(bad.Status, 404) // another organization's objects do not exist here
	is.Equal(bad.ErrParam(), "default_payment_method")

	id := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pmOK}).Str("id")
	bad = e.Do("POST", "/v1/subscriptions/"+id, e.Test, map[string]any{"default_payment_method": pmOther})
	is.Equal(bad.Status, 400)
	is.Equal(bad.ErrParam(), "default_payment_method")
	is.Equal(e.Do("POST", "/v1/subscriptions/"+id, e.Test, map[string]any{"default_payment_method": pmPoor}).Status, 200)

	end := e.sub(id).Time("current_period_end")
	e.travel(end)
	s := e.sub(id)
	is.Equal(s.Str("status"), "past_due")
	inv := e.Do("GET", "/v1/invoices/"+s.Str("latest_invoice"), e.Test, nil)
	invID := inv.Str("id")
	pi := e.Do("GET", "/v1/payment-intents/"+inv.Str("payment_intent"), e.Test, nil)
	is.Equal(pi.Str("status"), "requires_payment_method")
	is.Equal(digStr(pi.Body, "last_payment_error.code"), "insufficient_funds")
	cal := (*calendar.Calendar)(nil)
	day := calendar.Today(end)
	for retry := 1; retry <= 3; retry++ {
		at := inv.Time("next_payment_attempt")
		day = cal.Next(day)
		is.Equal(calendar.Today(at), day)
		e.travel(at)
		inv = e.Do("GET", "/v1/invoices/"+invID, e.Test, nil)
		is.Equal(inv.Num("attempt_count"), int64(retry+1))
	}
	is.Equal(len(e.payEvents(e.Test, "invoice.payment_failed", invID)), 4)
	is.Equal(e.sub(id).Str("status"), "canceled")
	succeeded, failed := 0, 0
	for _, c := range e.Do("GET", "/v1/charges?limit=100&customer="+cus, e.Test, nil).Data() {
		switch c["status"] {
		case "succeeded":
			succeeded++
		case "failed":
			failed++
		}
	}
	is.Equal(succeeded, 1) // the first invoice only
	is.Equal(failed, 4)    // the renewal and its three retries
}

// TestPixAutomaticoInsufficientFundsIsAnIssuerDecline: a recurring PIX the payer's bank refuses for
// lack of funds carries the category of every insufficient_funds decline (issuer_declined), the
// same category the live connector gives a refusal by the payer's bank, on the payment intent,
// its charge and the invoice.
func TestPixAutomaticoInsufficientFundsIsAnIssuerDecline(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.pixAuthCustomer(t, e.Test, "pixauto_insufficient@example.com")
	_, pm := e.pixAuthApproved(t, cus, 5000)
	price := e.coPrice(e.Test, "Academia", 5000, map[string]any{"interval": "month"})
	r := e.Do("POST", "/v1/subscriptions", e.Test, map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pm})
	is.Equal(r.Status, 200)
	inv := e.Do("GET", "/v1/invoices/"+r.Str("latest_invoice"), e.Test, nil)
	is.Equal(digStr(inv.Body, "last_payment_error.code"), "insufficient_funds")
	is.Equal(digStr(inv.Body, "last_payment_error.category"), "issuer_declined")
	pi := e.Do("GET", "/v1/payment-intents/"+inv.Str("payment_intent"), e.Test, nil)
	is.Equal(digStr(pi.Body, "last_payment_error.category"), "issuer_declined")
	ch := e.Do("GET", "/v1/charges/"+pi.Str("latest_charge"), e.Test, nil)
	is.Equal(digStr(ch.Body, "payment_error.category"), "issuer_declined")
}
