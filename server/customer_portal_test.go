package server_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestCustomerPortal: a portal session's url opens once (within five minutes) and starts a
// one-hour browser session in which the customer sees their subscriptions and invoices, cancels
// at period end and keeps a subscription, and replaces the saved card; another customer's objects
// are out of reach; bad requests are clear errors.
func TestCustomerPortal(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "ana@example.com")
	pm := e.subSavedCard(cus, "4242424242424242")
	price := e.coPrice(e.Test, "Plano Pro", 4990, map[string]any{"interval": "month"})
	sub := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pm})
	other := e.payCustomer(e.Test, "bruno@example.com")
	otherSub := e.subCreate(map[string]any{"customer": other, "items": []any{map[string]any{"price": price}}, "default_payment_method": e.subSavedCard(other, "4242424242424242")})

	// Bad requests.
	_, oKey := e.NewOrg("Outra Ltda", false)
	oCus := e.Do("POST", "/v1/customers", oKey, map[string]any{"email": "o@example.com"}).Str("id")
	is.Equal(e.Do("POST", "/v1/customer-portal-sessions", e.Test, map[string]any{"customer": oCus, "return_url": "https://acme.example/conta"}).Status, 404)
	is.Equal(e.Do("POST", "/v1/customer-portal-sessions", e.Test, map[string]any{"customer": cus}).ErrParam(), "return_url")
	is.Equal(e.Do("POST", "/v1/customer-portal-sessions", e.Test, map[string]any{"customer": cus, "return_url": "ftp://x"}).ErrParam(), "return_url")
	is.Equal(e.Do("POST", "/v1/customer-portal-sessions", e.Test, map[string]any{"customer": cus, "return_url": "https://acme.example", "locale": "fr"}).ErrParam(), "locale")

	r := e.Do("POST", "/v1/customer-portal-sessions", e.Test, map[string]any{"customer": cus, "return_url": "https://acme.example/conta"})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("object"), "customer_portal_session")
	is.True(strings.HasPrefix(r.Str("id"), "cps_"))
	is.True(strings.HasPrefix(r.Str("customer_session_token"), "troco_cst_"))
	is.Equal(r.Str("return_url"), "https://acme.example/conta")
	created, _ := time.Parse(time.RFC3339, r.Str("created_at"))
	expires, _ := time.Parse(time.RFC3339, r.Str("expires_at"))
	is.Equal(expires.Sub(created), 5*time.Minute)
	u, _ := url.Parse(r.Str("url"))
	// A replay (Idempotency-Key) answers without the bearer secrets, which are never stored.
	k1 := e.Do("POST", "/v1/customer-portal-sessions", e.Test, map[string]any{"customer": cus, "return_url": "https://acme.example"}, "Idempotency-Key", "portal-1")
	k2 := e.Do("POST", "/v1/customer-portal-sessions", e.Test, map[string]any{"customer": cus, "return_url": "https://acme.example"}, "Idempotency-Key", "portal-1")
	is.True(k1.Str("customer_session_token") != "")
	is.Equal(k2.Header.Get("Idempotent-Replayed"), "true")
	is.Equal(k2.Str("id"), k1.Str("id"))
	is.Equal(k2.Str("customer_session_token"), "")
	is.Equal(k2.Str("url"), "")

	b := e.newBrowser(t)
	open := b.get(u.RequestURI())
	is.Equal(open.Status, 303)
	home := b.get(open.Location)
	is.Equal(home.Status, 200)
	is.True(home.testID("portal-sub-" + sub.Str("id")))
	is.True(!home.testID("portal-sub-" + otherSub.Str("id")))
	is.True(home.testID("portal-inv-" + sub.Str("latest_invoice")))
	is.True(home.testID("portal-pdf-" + sub.Str("latest_invoice")))
	is.Equal(home.textOf("portal-sub-status-"+sub.Str("id")), "Ativa")
	is.True(strings.Contains(home.Body, "https://acme.example/conta"))

	// Single use: a second browser gets the expired page.
	is.Equal(e.newBrowser(t).get(u.RequestURI()).Status, 404)

	csrf := home.hidden().Get("csrf")
	is.True(csrf != "")
	// Cancel at period end, then keep it.
	is.Equal(b.post("/portal/subscriptions/"+sub.Str("id")+"/cancel", url.Values{"csrf": {csrf}}).Status, 303)
	is.Equal(e.sub(sub.Str("id")).Body["cancel_at_period_end"], true)
	is.Equal(b.post("/portal/subscriptions/"+sub.Str("id")+"/resume", url.Values{"csrf": {csrf}}).Status, 303)
	is.Equal(e.sub(sub.Str("id")).Body["cancel_at_period_end"], false)
	// Without the CSRF token, or on another customer's subscription: nothing changes.
	is.Equal(b.post("/portal/subscriptions/"+sub.Str("id")+"/cancel", url.Values{"csrf": {"x"}}).Status, 403)
	res := b.post("/portal/subscriptions/"+otherSub.Str("id")+"/cancel", url.Values{"csrf": {csrf}})
	is.True(strings.Contains(res.Location, "e=resource_missing"))
	is.Equal(e.sub(otherSub.Str("id")).Body["cancel_at_period_end"], false)

	// A holder name with a bidirectional override is refused as the API refuses it; nothing is saved.
	res = b.post("/portal/card", url.Values{"csrf": {csrf}, "number": {"5555 5555 5555 4444"}, "exp_month": {"12"}, "exp_year": {"31"}, "cvc": {"123"}, "holder_name": {"Ana \u202eX"}})
	is.Equal(res.Status, 303)
	is.True(strings.Contains(res.Location, "e=invalid_request"))
	is.Equal(e.sub(sub.Str("id")).Str("default_payment_method"), pm)

	// Replace the card: a setup intent saves it and the subscription charges it from now on.
	res = b.post("/portal/card", url.Values{"csrf": {csrf}, "number": {"5555 5555 5555 4444"}, "exp_month": {"12"}, "exp_year": {"31"}, "cvc": {"123"}, "holder_name": {"Ana Souza"}})
	is.Equal(res.Status, 303)
	is.True(strings.Contains(res.Location, "m=card_saved"))
	newPM := e.sub(sub.Str("id")).Str("default_payment_method")
	is.True(newPM != pm)
	is.Equal(e.Do("GET", "/v1/payment-methods/"+newPM, e.Test, nil).Str("customer"), cus)
	is.True(strings.Contains(b.get("/portal").textOf("portal-card"), "4444"))

	// A url not opened within five minutes expires; the browser session ends after an hour.
	late := e.Do("POST", "/v1/customer-portal-sessions", e.Test, map[string]any{"customer": cus, "return_url": "https://acme.example"})
	lu, _ := url.Parse(late.Str("url"))
	e.Clock.Advance(5*time.Minute + time.Second)
	is.Equal(e.newBrowser(t).get(lu.RequestURI()).Status, 404)
	e.Clock.Advance(time.Hour)
	is.Equal(b.get("/portal").Status, 401)
	is.Equal(b.post("/portal/subscriptions/"+sub.Str("id")+"/cancel", url.Values{"csrf": {csrf}}).Status, 401)
	is.Equal(e.sub(sub.Str("id")).Body["cancel_at_period_end"], false)
}

// TestCustomerPortalOverdueInvoice: the portal labels an open invoice past its due instant
// "Vencida" (as its hosted page does) with a link to view and pay it, and a paid one "Paga"
// with a link only to view it.
func TestCustomerPortalOverdueInvoice(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "ana@example.com")
	pm := e.subSavedCard(cus, "4242424242424242")
	price := e.coPrice(e.Test, "Plano Pro", 4990, map[string]any{"interval": "month"})
	paid := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pm})
	owed := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "collection_method": "send_invoice", "days_until_due": 1})
	e.travel(e.Do("GET", "/v1/invoices/"+owed.Str("latest_invoice"), e.Test, nil).Time("due_date").Add(time.Hour))

	r := e.Do("POST", "/v1/customer-portal-sessions", e.Test, map[string]any{"customer": cus, "return_url": "https://acme.example/conta"})
	u, _ := url.Parse(r.Str("url"))
	b := e.newBrowser(t)
	home := b.get(b.get(u.RequestURI()).Location)
	is.Equal(home.Status, 200)
	is.Equal(home.textOf("portal-inv-status-"+owed.Str("latest_invoice")), "Vencida")
	is.Equal(home.textOf("portal-inv-status-"+paid.Str("latest_invoice")), "Paga")
	row := home.Body[strings.Index(home.Body, `data-testid="portal-inv-`+paid.Str("latest_invoice")+`"`):]
	row = row[:strings.Index(row, "</tr>")]
	is.True(strings.Contains(row, ">Ver<"))
	is.True(!strings.Contains(row, "pagar"))
	// One status rule and one badge for both pages: the portal's row shows the invoice's status
	// exactly as the invoice's own hosted page does.
	for _, sub := range []resp{owed, paid} {
		inv := e.Do("GET", "/v1/invoices/"+sub.Str("latest_invoice"), e.Test, nil)
		hosted := b.get(hostedPath(t, inv.Str("hosted_invoice_url")))
		portalBadge := classOf(home, "portal-inv-status-"+inv.Str("id"))
		is.True(strings.HasPrefix(portalBadge, "badge st-"))
		is.Equal(portalBadge, classOf(hosted, "invoice-status"))
		is.Equal(home.textOf("portal-inv-status-"+inv.Str("id")), hosted.textOf("invoice-status"))
	}
}

// classOf returns the class attribute of the element with data-testid id ("" when none).
func classOf(p page, id string) string {
	m := regexp.MustCompile(`<[a-z]+ class="([^"]*)" data-testid="` + regexp.QuoteMeta(id) + `"`).FindStringSubmatch(p.Body)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestCustomerPortalLabelsExpiredIncompleteSubscription: a subscription whose first payment was
// never made (incomplete_expired) is listed with a status the customer can read, in both
// languages, never the internal key.
func TestCustomerPortalLabelsExpiredIncompleteSubscription(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "ana@example.com")
	bad := e.subSavedCard(cus, "4000009000000623")
	price := e.coPrice(e.Test, "Plano", 2990, map[string]any{"interval": "month"})
	sub := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": bad})
	is.Equal(sub.Str("status"), "incomplete")
	e.travel(e.Clock.Now().Add(23 * time.Hour))
	is.Equal(e.sub(sub.Str("id")).Str("status"), "incomplete_expired")

	for lang, want := range map[string]string{"pt-BR": "Incompleta expirada", "en": "Incomplete, expired"} {
		r := e.Do("POST", "/v1/customer-portal-sessions", e.Test, map[string]any{"customer": cus, "return_url": "https://acme.example/conta", "locale": lang})
		is.Equal(r.Status, 200)
		u, _ := url.Parse(r.Str("url"))
		b := e.newBrowser(t)
		home := b.get(b.get(u.RequestURI()).Location)
		is.Equal(home.Status, 200)
		is.Equal(home.textOf("portal-sub-status-"+sub.Str("id")), want) // a readable status
		is.True(!strings.Contains(home.Body, "st_"))                    // no message key leaks
	}
}
