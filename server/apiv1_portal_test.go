package server_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/db"
	"troco/server"
	"troco/server/core"
	"troco/server/domain"
)

// portalToken creates a customer portal session for cus and returns its customer session token.
func (e *testEnv) portalToken(cus string) string {
	e.t.Helper()
	r := e.Do("POST", "/v1/customer-portal-sessions", e.Test, map[string]any{"customer": cus, "return_url": "https://acme.example/conta"})
	if r.Status != 200 || !strings.HasPrefix(r.Str("customer_session_token"), "troco_cst_") {
		e.t.Fatalf("portal session: %d %s", r.Status, r.Raw)
	}
	return r.Str("customer_session_token")
}

// TestAPIV1CustomerPortal: a customer session token reads and acts on its one customer's
// subscriptions, invoices and payment methods through /api/v1/customer-portal/, with page
// lists; another customer's objects are 404 and unchanged; the token is refused on Core paths
// and Core credentials are refused here; an expired token is 401.
func TestAPIV1CustomerPortal(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "ana@example.com")
	pm := e.subSavedCard(cus, "4242424242424242")
	price := e.coPrice(e.Test, "Plano Pro", 4990, map[string]any{"interval": "month"})
	sub := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pm})
	other := e.payCustomer(e.Test, "bruno@example.com")
	otherPM := e.subSavedCard(other, "4242424242424242")
	otherSub := e.subCreate(map[string]any{"customer": other, "items": []any{map[string]any{"price": price}}, "default_payment_method": otherPM})
	// A draft invoice of the customer is not theirs to see yet.
	draft := e.Do("POST", "/v1/invoices", e.Test, map[string]any{"customer": cus, "collection_method": "send_invoice", "days_until_due": 3})
	is.Equal(draft.Status, 200)

	tok := e.portalToken(cus)
	const base = "/api/v1/customer-portal"

	me := e.Do("GET", base+"/customer", tok, nil)
	is.Equal(me.Status, 200)
	is.Equal(me.Str("id"), cus)

	// Subscriptions: only the customer's, in a page list.
	subs := e.Do("GET", base+"/subscriptions", tok, nil)
	is.Equal(subs.Status, 200)
	is.Equal(subs.IDs(), []string{sub.Str("id")})
	is.Equal(subs.Body["pagination"], map[string]any{"page": 1.0, "limit": 10.0, "total": 1.0, "total_pages": 1.0})
	is.Equal(subs.Data()[0]["currency"], "BRL")
	g := e.Do("GET", base+"/subscriptions/"+sub.Str("id"), tok, nil)
	is.Equal(g.Status, 200)
	is.Equal(g.Str("status"), "active")
	is.Equal(e.Do("GET", base+"/subscriptions/"+otherSub.Str("id"), tok, nil).Status, 404)
	is.Equal(e.Do("GET", base+"/subscriptions?status=nope", tok, nil).ErrParam(), "status")

	// Cancel at period end, then keep; another customer's subscription is 404 and unchanged.
	updated := e.subEventCount("customer.subscription.updated", sub.Str("id"))
	c := e.Do("POST", base+"/subscriptions/"+sub.Str("id")+"/cancel", tok, nil)
	is.Equal(c.Status, 200)
	is.Equal(c.Body["cancel_at_period_end"], true)
	is.Equal(e.sub(sub.Str("id")).Body["cancel_at_period_end"], true) // the same subscription on /v1
	k := e.Do("POST", base+"/subscriptions/"+sub.Str("id")+"/keep", tok, nil)
	is.Equal(k.Status, 200)
	is.Equal(k.Body["cancel_at_period_end"], false)
	x := e.Do("POST", base+"/subscriptions/"+otherSub.Str("id")+"/cancel", tok, nil)
	is.Equal(x.Status, 404)
	is.Equal(x.ErrCode(), "resource_missing")
	is.Equal(e.sub(otherSub.Str("id")).Body["cancel_at_period_end"], false)
	is.Equal(e.Do("POST", base+"/subscriptions/"+sub.Str("id")+"/cancel", tok, map[string]any{"prorate": true}).ErrParam(), "prorate")
	// The same events as the hosted portal and /v1: customer.subscription.updated, twice.
	is.Equal(e.subEventCount("customer.subscription.updated", sub.Str("id")), updated+2)

	// Invoices: the customer's finalized ones, with the links to their page and PDF.
	invs := e.Do("GET", base+"/invoices", tok, nil)
	is.Equal(invs.Status, 200)
	is.Equal(invs.IDs(), []string{sub.Str("latest_invoice")})
	inv := e.Do("GET", base+"/invoices/"+sub.Str("latest_invoice"), tok, nil)
	is.Equal(inv.Status, 200)
	is.True(strings.Contains(inv.Str("invoice_pdf"), "/invoices/"+sub.Str("latest_invoice")+"/pdf?s="))
	is.True(inv.Str("hosted_invoice_url") != "")
	is.Equal(inv.Str("currency"), "BRL")
	is.Equal(e.Do("GET", base+"/invoices/"+draft.Str("id"), tok, nil).Status, 404)
	is.Equal(e.Do("GET", base+"/invoices/"+otherSub.Str("latest_invoice"), tok, nil).Status, 404)
	is.Equal(e.Do("GET", base+"/invoices?subscription="+otherSub.Str("id"), tok, nil).IDs(), []string(nil))

	// Payment methods; a new card replaces the default of the running subscriptions.
	pms := e.Do("GET", base+"/payment-methods", tok, nil)
	is.Equal(pms.IDs(), []string{pm})
	is.Equal(e.Do("GET", base+"/payment-methods/"+pm, tok, nil).Status, 200)
	is.Equal(e.Do("GET", base+"/payment-methods/"+otherPM, tok, nil).Status, 404)
	is.Equal(e.Do("POST", base+"/payment-methods", tok, map[string]any{}).ErrParam(), "card")
	declined := e.Do("POST", base+"/payment-methods", tok, map[string]any{"card": payCard("4000000000000002")})
	is.Equal(declined.Status, 402)
	is.Equal(e.sub(sub.Str("id")).Str("default_payment_method"), pm) // unchanged
	card := e.Do("POST", base+"/payment-methods", tok, map[string]any{"card": payCard("5555555555554444")})
	is.Equal(card.Status, 201)
	is.Equal(card.Header.Get("Location"), base+"/payment-methods/"+card.Str("id"))
	is.Equal(card.Body["customer"], cus)
	is.True(!strings.Contains(string(card.Raw), "5555555555554444"))
	is.Equal(e.sub(sub.Str("id")).Str("default_payment_method"), card.Str("id"))
	is.Equal(e.sub(otherSub.Str("id")).Str("default_payment_method"), otherPM) // another customer's: untouched

	// Page bounds and cursor parameters, as on every /api/v1 list.
	for _, q := range []struct{ q, param string }{{"page=0", "page"}, {"limit=101", "limit"}, {"starting_after=sub_x", "starting_after"}} {
		is.Equal(e.Do("GET", base+"/subscriptions?"+q.q, tok, nil).ErrParam(), q.param)
	}
	is.Equal(e.Do("GET", base+"/customer?x=1", tok, nil).Status, 400)

	// Idempotency keys are per customer: the same key on another customer's own request runs.
	otherTok := e.portalToken(other)
	a1 := e.Do("POST", base+"/subscriptions/"+sub.Str("id")+"/cancel", tok, nil, "Idempotency-Key", "same-key")
	a2 := e.Do("POST", base+"/subscriptions/"+otherSub.Str("id")+"/cancel", otherTok, nil, "Idempotency-Key", "same-key")
	is.Equal(a1.Status, 200)
	is.Equal(a2.Status, 200)
	is.Equal(a2.Str("id"), otherSub.Str("id"))
	a3 := e.Do("POST", base+"/subscriptions/"+sub.Str("id")+"/cancel", tok, nil, "Idempotency-Key", "same-key")
	is.Equal(a3.Header.Get("Idempotent-Replayed"), "true")

	// Credentials: the customer token is refused on Core paths, Core credentials here.
	core := e.Do("GET", "/api/v1/subscriptions", tok, nil)
	is.Equal(core.Status, 403)
	is.Equal(core.ErrCode(), "permission_denied")
	is.Equal(e.Do("GET", "/v1/subscriptions", tok, nil).Status, 401)
	key := e.Do("GET", base+"/subscriptions", e.Test, nil)
	is.Equal(key.Status, 403)
	is.True(strings.Contains(key.ErrMessage(), "customer session token"))
	k2 := e.newKeyFull(e.Org.ID, domain.ScopeRead)
	jwt := e.accessToken(k2.ID, k2.Token, "").Str("access_token")
	is.Equal(e.Do("GET", base+"/subscriptions", jwt, nil).Status, 403)
	for _, bad := range []string{"", "troco_cst_forged", "nonsense"} {
		r := e.Do("GET", base+"/subscriptions", bad, nil)
		is.Equal(r.Status, 401)
		is.Equal(r.ErrCode(), "authentication_failed")
	}

	// An hour later the token has expired.
	e.Clock.Advance(61 * time.Minute)
	exp := e.Do("GET", base+"/subscriptions", tok, nil)
	is.Equal(exp.Status, 401)
	is.True(strings.Contains(exp.ErrMessage(), "expired"))
	is.Equal(e.Do("POST", base+"/subscriptions/"+sub.Str("id")+"/keep", tok, nil).Status, 401)
	is.Equal(e.sub(sub.Str("id")).Body["cancel_at_period_end"], true) // nothing changed
}

func (r resp) ErrMessage() string {
	m, _ := r.Body["error"].(map[string]any)
	s, _ := m["message"].(string)
	return s
}

// TestAPIV1RequestLogRefused: /api/v1 requests refused before their handler (a token without
// the scope, a revoked key's token, a customer token on a Core path, a Core key on the portal
// path, an invalid Idempotency-Key, the rate limit) are in the organization's request log, as on
// /v1, with bodies redacted; a token troco cannot verify belongs to no organization.
func TestAPIV1RequestLogRefused(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, func(c *server.Config) { c.RateLimit = true })
	read := e.newKeyFull(e.Org.ID, domain.ScopeRead)
	ro := e.accessToken(read.ID, read.Token, "").Str("access_token")
	gone := e.newKeyFull(e.Org.ID, domain.ScopeRead, domain.ScopeWrite)
	goneJWT := e.accessToken(gone.ID, gone.Token, "").Str("access_token")
	is.NoErr(e.DB.Write(context.Background(), func(tx *db.Tx) error {
		_, err := core.RevokeAPIKey(tx, gone.ID, "ana@acme.test", "leaked")
		return err
	}))
	cus := e.payCustomer(e.Test, "ana@example.com")
	tok := e.portalToken(cus)
	test := domain.Scope{OrgID: e.Org.ID}
	apiLogs := func(n int) []*domain.RequestLog {
		t.Helper()
		var out []*domain.RequestLog
		for range 200 {
			out = nil
			for _, l := range waitLogs(t, e, test, db.RequestLogFilter{}, 0) {
				if strings.HasPrefix(l.Path, "/api/v1/") {
					out = append(out, l)
				}
			}
			if len(out) >= n {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		return out
	}

	is.Equal(e.Do("POST", "/api/v1/products", ro, map[string]any{"name": "P"}).Status, 403)
	is.Equal(e.Do("GET", "/api/v1/products", goneJWT, nil).Status, 401)
	is.Equal(e.Do("GET", "/api/v1/products", tok, nil).Status, 403)
	is.Equal(e.Do("GET", "/api/v1/customer-portal/subscriptions", read.Token, nil).Status, 403)
	is.Equal(e.Do("POST", "/api/v1/products", e.Test, map[string]any{"name": "P"}, "Idempotency-Key", strings.Repeat("k", 256)).Status, 400)
	card := e.Do("POST", "/api/v1/customer-portal/payment-methods", tok, map[string]any{"card": payCard("4000000000000002")})
	is.Equal(card.Status, 402)
	// Not logged: nobody troco knows.
	is.Equal(e.Do("GET", "/api/v1/products", "a.b.c", nil).Status, 401)
	is.Equal(e.Do("GET", "/api/v1/customer-portal/subscriptions", "troco_cst_forged", nil).Status, 401)

	logs := apiLogs(6)
	is.Equal(len(logs), 6)
	byPath := map[string]*domain.RequestLog{}
	for _, l := range logs {
		byPath[l.Method+" "+l.Path+" "+strconv.Itoa(l.Status)] = l
		is.True(!strings.Contains(l.RequestBody, "4000000000000002"))
		is.True(!strings.Contains(l.RequestBody, tok))
	}
	is.Equal(byPath["POST /api/v1/products 403"].KeyID, read.ID)
	is.Equal(byPath["GET /api/v1/products 401"].KeyID, gone.ID)
	is.True(strings.Contains(byPath["GET /api/v1/products 401"].ResponseBody, "revoked"))
	is.True(byPath["GET /api/v1/products 403"] != nil) // the customer token on a Core path
	is.Equal(byPath["GET /api/v1/customer-portal/subscriptions 403"].KeyID, read.ID)
	is.True(byPath["POST /api/v1/products 400"] != nil)
	pm := byPath["POST /api/v1/customer-portal/payment-methods 402"]
	is.True(pm != nil)
	is.True(strings.Contains(pm.RequestBody, "[redacted]"))

	// The per-minute limit: the 429 is logged too.
	var last resp
	for range 101 {
		if last = e.Do("GET", "/api/v1/customer-portal/subscriptions", tok, nil); last.Status == 429 {
			break
		}
	}
	is.Equal(last.Status, 429)
	is.True(last.Header.Get("Retry-After") != "")
	found := false
	for i := 0; i < 200 && !found; i++ {
		for _, l := range apiLogs(7) {
			found = found || l.Status == 429 && l.Path == "/api/v1/customer-portal/subscriptions"
		}
		time.Sleep(20 * time.Millisecond) // the log is written in batches
	}
	is.True(found)
}
