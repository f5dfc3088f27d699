package server_test

import (
	"testing"

	"github.com/matryer/is"
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
	// Another currency is still refused, naming the field.
	r := e.Do("POST", "/api/v1/products", e.Test, map[string]any{"name": "X",
		"default_price_data": map[string]any{"unit_amount": 100, "currency": "USD"}})
	is.Equal(r.Status, 400)
	is.Equal(r.ErrParam(), "default_price_data[currency]")
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
