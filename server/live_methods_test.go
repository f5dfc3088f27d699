package server_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/server"
	"troco/server/processors"
	"troco/server/processors/cielo"
	"troco/server/processors/cielo/cielotest"
)

// TestLiveDefaultMethodsAreTheConfiguredOnes: a live intent created without
// payment_method_types offers the methods a configured processor takes (no boleto connector:
// no boleto), so a buyer is never offered a method whose confirmation answers
// processor_unavailable; test mode offers all three; a live server with no processor at all
// keeps all three and its confirmations name the flag to set.
func TestLiveDefaultMethodsAreTheConfiguredOnes(t *testing.T) {
	is := is.New(t)
	types := func(r resp) []any { v, _ := r.Body["payment_method_types"].([]any); return v }

	le := newLiveEnv(t, 5*time.Second) // Cielo and the API Pix
	pi := le.payIntent(le.Live, 5000, nil)
	is.Equal(types(pi), []any{"credit_card", "pix"})
	r := le.payConfirm(le.Live, pi.Str("id"), map[string]any{"payment_method_type": "boleto"})
	is.Equal(r.Status, 400) // not offered, rather than 503 after being offered
	is.Equal(r.ErrParam(), "payment_method_type")
	is.Equal(types(le.payIntent(le.Test, 5000, nil)), []any{"credit_card", "pix", "boleto"}) // the sandbox simulates all
	c := le.Do("POST", "/v1/payment-intents", le.Live, map[string]any{"amount": 5000, "confirm": true, "card": payCard(liveApprove)})
	is.Equal(c.Status, 200)
	is.Equal(c.Str("status"), "succeeded")
	is.Equal(types(c), []any{"credit_card", "pix"})

	// Checkout sessions offer the same by default, on /v1 and /api/v1; a subscription session
	// and an explicit list are unchanged.
	price := le.coPrice(le.Live, "Camiseta", 5000, nil)
	items := []any{map[string]any{"price": price, "quantity": 1}}
	is.Equal(types(le.coSession(le.Live, map[string]any{"line_items": items})), []any{"credit_card", "pix"})
	is.Equal(types(le.coSession(le.Test, map[string]any{"line_items": []any{map[string]any{"price": le.coPrice(le.Test, "Camiseta", 5000, nil), "quantity": 1}}})),
		[]any{"credit_card", "pix", "boleto"})
	v2 := le.Do("POST", "/api/v1/checkouts", le.Live, map[string]any{"line_items": items})
	is.Equal(v2.Status, 201)
	is.Equal(types(le.Do("GET", "/v1/checkout-sessions/"+v2.Str("id"), le.Live, nil)), []any{"credit_card", "pix"}) // read through /v1
	is.Equal(types(le.coSession(le.Live, map[string]any{"line_items": items, "payment_method_types": []string{"pix", "boleto"}})), []any{"pix", "boleto"})

	// Cards only.
	cd := httptest.NewTLSServer(cielotest.New("merchant-0001", liveMerchantKey))
	t.Cleanup(cd.Close)
	cc := cielo.New(cielo.Config{BaseURL: cd.URL, QueryURL: cd.URL, MerchantID: "merchant-0001", MerchantKey: liveMerchantKey,
		Client: &http.Client{Transport: cd.Client().Transport, Timeout: 5 * time.Second}})
	ce := newEnv(t, func(c *server.Config) { c.Live = &processors.Router{Card: cc} })
	ce.activate(t)
	is.Equal(types(ce.payIntent(ce.Live, 5000, nil)), []any{"credit_card"})

	// Nothing configured: all three, and a confirmation names the flag.
	ne := newEnv(t)
	ne.activate(t)
	np := ne.payIntent(ne.Live, 5000, nil)
	is.Equal(types(np), []any{"credit_card", "pix", "boleto"})
	is.Equal(ne.payConfirm(ne.Live, np.Str("id"), map[string]any{"payment_method_type": "pix"}).ErrCode(), "processor_unavailable")
}
