package server_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"troco/server/core"
	"troco/server/domain"
)

// Behaviour an integrator of /api/v1 relies on, found by driving the running binary from outside.

// TestAPIV1DeleteWithIdempotencyKey: a DELETE with an Idempotency-Key answers 204 (not 500), the
// object is gone, and the replay is the same 204.
func TestAPIV1DeleteWithIdempotencyKey(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	p := e.Do("POST", "/api/v1/products", e.Test, map[string]any{"name": "Caneca"})
	is.Equal(p.Status, 201)
	path := "/api/v1/products/" + p.Str("id")
	d := e.Do("DELETE", path, e.Test, nil, "Idempotency-Key", "del-1")
	is.Equal(d.Status, 204)
	is.Equal(len(d.Raw), 0)
	is.Equal(e.Do("GET", path, e.Test, nil).Status, 404) // deleted
	again := e.Do("DELETE", path, e.Test, nil, "Idempotency-Key", "del-1")
	is.Equal(again.Status, 204) // the stored answer, not a 404
	is.Equal(again.Header.Get("Idempotent-Replayed"), "true")
	is.Equal(len(again.Raw), 0)
}

// TestAPIV1CurrencyAsAnswered: /api/v1 answers currency codes upper case (BRL), so it takes them
// back that way too (and lower case, as /v1); metadata values are the caller's own and are
// never rewritten, in either direction.
func TestAPIV1CurrencyAsAnswered(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	p := e.Do("POST", "/api/v1/products", e.Test, map[string]any{"name": "Plano",
		"default_price_data": map[string]any{"unit_amount": 2990, "currency": "BRL"}, "metadata": map[string]any{"currency": "reais"}})
	is.Equal(p.Status, 201)
	is.Equal(p.Body["metadata"], map[string]any{"currency": "reais"}) // as sent
	prices := p.Body["prices"].([]any)
	is.Equal(prices[0].(map[string]any)["currency"], "BRL")
	is.Equal(e.Do("POST", "/api/v1/products", e.Test, map[string]any{"name": "Outro",
		"default_price_data": map[string]any{"unit_amount": 100, "currency": "brl"}}).Status, 201)
	// Another currency or spelling is still refused, naming the field.
	for _, cur := range []string{"USD", "Brl"} {
		r := e.Do("POST", "/api/v1/products", e.Test, map[string]any{"name": "X",
			"default_price_data": map[string]any{"unit_amount": 100, "currency": cur}})
		is.Equal(r.Status, 400)
		is.Equal(r.ErrParam(), "default_price_data[currency]")
	}
	// The document says so: its request bodies take brl or BRL.
	schemas := openAPIDoc(t, e, "/api/v1/openapi.json")["components"].(map[string]any)["schemas"].(map[string]any)
	is.Equal(schemas["Currency"].(map[string]any)["enum"], []any{"brl", "BRL"})
	priceData := schemas["PriceData"].(map[string]any)["properties"].(map[string]any)["currency"].(map[string]any)
	is.Equal(priceData["enum"], []any{"brl", "BRL"})
	// The stored metadata is the caller's value on /v1 too.
	v1 := e.Do("GET", "/v1/products/"+p.Str("id"), e.Test, nil)
	is.Equal(v1.Body["metadata"], map[string]any{"currency": "reais"})
	c := e.Do("POST", "/api/v1/customers", e.Test, map[string]any{"name": "Ana", "metadata": map[string]any{"currency": "Real"}})
	is.Equal(c.Body["metadata"], map[string]any{"currency": "Real"})
	is.Equal(e.Do("GET", "/api/v1/customers/"+c.Str("id"), e.Test, nil).Body["metadata"], map[string]any{"currency": "Real"})
}

// TestAPIV1OpenAPIPortalCustomer: GET /api/v1/customer-portal/customer answers the customer, and
// its document says so (not a page), so generated clients type it right.
func TestAPIV1OpenAPIPortalCustomer(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	api := openAPIDoc(t, e, "/api/v1/openapi.json")
	item := api["paths"].(map[string]any)["/api/v1/customer-portal/customer"].(map[string]any)
	ok := item["get"].(map[string]any)["responses"].(map[string]any)["200"].(map[string]any)
	schema := ok["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
	is.Equal(schema["$ref"], "#/components/schemas/ApiObject") // one object
	_, page := schema["properties"]
	is.True(!page)

	cst := e.portalToken(e.payCustomer(e.Test, "ana@example.com"))
	r := e.Do("GET", "/api/v1/customer-portal/customer", cst, nil)
	is.Equal(r.Status, 200)
	is.Equal(r.Str("object"), "customer")

	// The refund of a sale has its own path (the Location of its creation).
	rf := api["paths"].(map[string]any)["/api/v1/sales/{id}/refunds/{refund}"].(map[string]any)
	get := rf["get"].(map[string]any)
	is.Equal(get["operationId"], "getSalesByIdRefundsByRefund")
	is.Equal(len(rf["parameters"].([]any)), 2)
}

// TestAPIV1CoreParity: the organization update, webhook secret rotation and deliveries, and
// event redelivery of /v1 exist on /api/v1 too, through access tokens; a token narrowed to
// write from an admin key does not act with admin rights.
func TestAPIV1CoreParity(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	key := e.newKeyFull(e.Org.ID, domain.ScopeRead, domain.ScopeWrite)
	jwt := e.accessToken(key.ID, key.Token, "").Str("access_token")

	// The organization: update (the /v1 body), 200, its event.
	org := "/api/v1/organizations/" + e.Org.ID
	u := e.Do("POST", org, jwt, map[string]any{"display_name": "Loja da Ana"})
	is.Equal(u.Status, 200)
	is.Equal(u.Str("display_name"), "Loja da Ana")
	is.Equal(e.Do("GET", org, jwt, nil).Str("display_name"), "Loja da Ana")
	is.Equal(e.Do("POST", org, jwt, map[string]any{"colour": "red"}).ErrParam(), "colour")
	_, other := e.NewOrg("Other", false)
	is.Equal(e.Do("POST", org, other, map[string]any{"display_name": "mine"}).Status, 404)
	is.Equal(e.Do("GET", org, jwt, nil).Str("display_name"), "Loja da Ana") // unchanged

	// fee_plan needs admin: an admin key's token narrowed to write is refused, the full one is not.
	admin, err := e.CreateKey(core.APIKeyInput{OrgID: e.Org.ID, Livemode: true, Scopes: []string{domain.ScopeAdmin}})
	is.NoErr(err)
	fee := map[string]any{"fee_plan": map[string]any{"card_fee_rate": 299}}
	narrow := e.accessToken(admin.ID, admin.Token, "write")
	is.Equal(narrow.Str("scope"), "write")
	r := e.Do("POST", org, narrow.Str("access_token"), fee)
	is.Equal(r.Status, 403)
	full := e.accessToken(admin.ID, admin.Token, "").Str("access_token")
	is.Equal(e.Do("POST", org, full, fee).Status, 200)

	// Webhooks: rotate the secret (shown once), list the deliveries page by page.
	wh := e.Do("POST", "/api/v1/webhooks", jwt, map[string]any{"url": "https://example.com/hook", "enabled_events": []string{"*"}})
	is.Equal(wh.Status, 201)
	rot := e.Do("POST", "/api/v1/webhooks/"+wh.Str("id")+"/rotate-secret", jwt, map[string]any{"expire_current_secret_in_seconds": 0})
	is.Equal(rot.Status, 200)
	is.True(strings.HasPrefix(rot.Str("secret"), "whsec_"))
	is.True(rot.Str("secret") != wh.Str("secret"))
	is.Equal(e.Do("POST", "/api/v1/webhooks/"+wh.Str("id")+"/rotate-secret", other, nil).Status, 404)
	c := e.Do("POST", "/api/v1/customers", jwt, map[string]any{"name": "Ana"})
	is.Equal(c.Status, 201)
	d := e.Do("GET", "/api/v1/webhooks/"+wh.Str("id")+"/deliveries?limit=1", jwt, nil)
	is.Equal(d.Status, 200)
	is.Equal(d.Body["pagination"].(map[string]any)["limit"], 1.0)
	is.Equal(e.Do("GET", "/api/v1/webhooks/"+wh.Str("id")+"/deliveries?status=maybe", jwt, nil).ErrParam(), "status")
	is.Equal(e.Do("GET", "/api/v1/webhooks/"+wh.Str("id")+"/deliveries", other, nil).Status, 404)

	// Events: redeliver the customer's event to the endpoint.
	ev := e.Do("GET", "/api/v1/events?type=customer.created&limit=1", jwt, nil).Data()[0]
	rd := e.Do("POST", "/api/v1/events/"+ev["id"].(string)+"/redeliver", jwt, map[string]any{"webhook_endpoint": wh.Str("id")})
	is.Equal(rd.Status, 200)
	is.Equal(e.Do("POST", "/api/v1/events/"+ev["id"].(string)+"/redeliver", other, nil).Status, 404)
}

// TestAPIV1OpenAPIHeadersAndLimits: the /api/v1 document states this interface's limits (per
// minute, RateLimit-* headers) rather than those of /v1, and the Location of every creation.
func TestAPIV1OpenAPIHeadersAndLimits(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	api := openAPIDoc(t, e, "/api/v1/openapi.json")
	comps := api["components"].(map[string]any)
	limited := comps["responses"].(map[string]any)["RateLimited"].(map[string]any)
	is.True(strings.Contains(limited["description"].(string), "100 per minute in test mode, 1,000 in live mode"))
	is.True(limited["headers"].(map[string]any)["RateLimit-Reset"] != nil)
	is.True(limited["headers"].(map[string]any)["Retry-After"] != nil)
	created := 0
	for p, item := range api["paths"].(map[string]any) {
		for method, o := range item.(map[string]any) {
			op, ok := o.(map[string]any)
			if !ok || p == "/api/v1/oauth/token" {
				continue
			}
			for code, r := range op["responses"].(map[string]any) {
				if code != "200" && code != "201" && code != "204" {
					continue
				}
				h, _ := r.(map[string]any)["headers"].(map[string]any)
				if h["RateLimit-Remaining"] == nil {
					t.Errorf("%s %s %s: no RateLimit-Remaining", method, p, code)
				}
				if code == "201" {
					created++
					if h["Location"] == nil {
						t.Errorf("%s %s 201: no Location", method, p)
					}
				}
			}
		}
	}
	is.True(created >= 10)
	// And the server answers Location.
	r := e.Do("POST", "/api/v1/customers", e.Test, map[string]any{"name": "Ana"})
	is.Equal(r.Status, 201)
	is.Equal(r.Header.Get("Location"), "/api/v1/customers/"+r.Str("id"))
}
