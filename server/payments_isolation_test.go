package server_test

import (
	"testing"
)

// The payment resources join the isolation suite of isolation_test.go.
func init() {
	isolationResources = append(isolationResources, paymentIsolationResources...)
	isolationExempt["POST /v1/payment-previews"] = "computes instalment options from the request and the caller's own organization; it reads or writes no object"
	isolationExempt["POST /v1/refunds"] = "refunds only the caller's own charges: the charges and payment_intents resources check a foreign charge or intent is a 404"
}

// payConfirmed creates and confirms (4242) an intent in a's scope and returns the intent answer.
func payConfirmed(t *testing.T, e *testEnv, a isoActor) resp {
	t.Helper()
	id := mustCreate(t, e, a, "/v1/payment-intents", map[string]any{"amount": 5000})
	r := a.do(e, "POST", "/v1/payment-intents/"+id+"/confirm", map[string]any{"card": payCard("4242424242424242")})
	if r.Status != 200 {
		t.Fatalf("%s: confirm: %d %s", a.name, r.Status, r.Raw)
	}
	return r
}

var paymentIsolationResources = []isoResource{
	{
		name: "payment_intents",
		create: func(t *testing.T, e *testEnv, a isoActor) string {
			return mustCreate(t, e, a, "/v1/payment-intents", map[string]any{"amount": 5000, "metadata": map[string]string{"iso": "1"}})
		},
		get: "/v1/payment-intents/:id",
		routes: []isoRoute{
			{"GET", "/v1/payment-intents", nil},
			{"POST", "/v1/payment-intents", nil},
			{"GET", "/v1/payment-intents/:id", nil},
			{"POST", "/v1/payment-intents/:id", map[string]any{"description": "hijacked", "amount": 1}},
			{"POST", "/v1/payment-intents/:id/confirm", map[string]any{"card": payCard("4242424242424242")}},
			{"POST", "/v1/payment-intents/:id/capture", nil},
			{"POST", "/v1/payment-intents/:id/cancel", nil},
			{"POST", "/v1/payment-intents/:id/regenerate-boleto", nil},
			{"GET", "/v1/payment-intents/:id/pix.png", nil},
			{"POST", "/v1/test-helpers/payment-intents/:id/succeed", nil},
			{"POST", "/v1/test-helpers/payment-intents/:id/expire", nil},
		},
		refs: []isoReference{
			{name: "refund of a foreign intent", method: "POST", path: "/v1/refunds", body: func(id string) any { return map[string]any{"payment_intent": id} }, wantStatus: 404, wantParam: "payment_intent"},
			{name: "charges of a foreign intent", method: "GET", path: "/v1/charges?payment_intent=:id", wantStatus: 200, wantEmpty: true},
			{name: "ledger of a foreign intent", method: "GET", path: "/v1/transactions?payment_intent=:id", wantStatus: 200, wantEmpty: true},
		},
	},
	{
		name:   "charges",
		create: func(t *testing.T, e *testEnv, a isoActor) string { return payConfirmed(t, e, a).Str("latest_charge") },
		get:    "/v1/charges/:id",
		routes: []isoRoute{
			{"GET", "/v1/charges", nil},
			{"GET", "/v1/charges/:id", nil},
		},
		refs: []isoReference{
			{name: "refund of a foreign charge", method: "POST", path: "/v1/refunds", body: func(id string) any { return map[string]any{"charge": id} }, wantStatus: 404, wantParam: "charge"},
			{name: "refunds of a foreign charge", method: "GET", path: "/v1/refunds?charge=:id", wantStatus: 200, wantEmpty: true},
		},
	},
	{
		name: "refunds",
		create: func(t *testing.T, e *testEnv, a isoActor) string {
			return mustCreate(t, e, a, "/v1/refunds", map[string]any{"charge": payConfirmed(t, e, a).Str("latest_charge"), "amount": 100})
		},
		get: "/v1/refunds/:id",
		routes: []isoRoute{
			{"GET", "/v1/refunds", nil},
			{"GET", "/v1/refunds/:id", nil},
		},
	},
	{
		name: "transactions",
		create: func(t *testing.T, e *testEnv, a isoActor) string {
			id := payConfirmed(t, e, a).Str("id")
			r := a.do(e, "GET", "/v1/transactions?payment_intent="+id, nil)
			if r.Status != 200 || len(r.IDs()) != 1 {
				t.Fatalf("%s: ledger: %d %s", a.name, r.Status, r.Raw)
			}
			return r.IDs()[0]
		},
		get: "/v1/transactions/:id",
		routes: []isoRoute{
			{"GET", "/v1/transactions", nil},
			{"GET", "/v1/transactions/:id", nil},
		},
	},
	{
		name: "payment_methods",
		create: func(t *testing.T, e *testEnv, a isoActor) string {
			return mustCreate(t, e, a, "/v1/payment-methods", map[string]any{"type": "credit_card", "card": payCard("4242424242424242")})
		},
		get: "/v1/payment-methods/:id",
		routes: []isoRoute{
			{"GET", "/v1/payment-methods", nil},
			{"POST", "/v1/payment-methods", nil},
			{"GET", "/v1/payment-methods/:id", nil},
			{"POST", "/v1/payment-methods/:id/attach", map[string]any{"customer": "cus_000000000000000000000000"}},
			{"POST", "/v1/payment-methods/:id/detach", nil},
		},
		refs: []isoReference{
			{name: "payment methods filtered by type", method: "GET", path: "/v1/payment-methods?type=credit_card", wantStatus: 200},
		},
	},
	{
		name: "setup_intents",
		create: func(t *testing.T, e *testEnv, a isoActor) string {
			return mustCreate(t, e, a, "/v1/setup-intents", map[string]any{"metadata": map[string]string{"iso": "1"}})
		},
		get: "/v1/setup-intents/:id",
		routes: []isoRoute{
			{"GET", "/v1/setup-intents", nil},
			{"POST", "/v1/setup-intents", nil},
			{"GET", "/v1/setup-intents/:id", nil},
			{"POST", "/v1/setup-intents/:id/confirm", map[string]any{"card": payCard("4242424242424242")}},
			{"POST", "/v1/setup-intents/:id/cancel", nil},
		},
	},
}
