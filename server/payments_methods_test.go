package server_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestPaymentMethods: create (never keeping the number), attach with verification, list by
// customer, detach.
func TestPaymentMethods(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "ana@example.com")
	r := e.Do("POST", "/v1/payment-methods", e.Test, map[string]any{"type": "credit_card", "card": payCard("4242424242424242"), "metadata": map[string]string{"k": "v"}})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("object"), "payment_method")
	is.Equal(r.Str("type"), "credit_card")
	is.Equal(digStr(r.Body, "card.brand"), "visa")
	is.Equal(digStr(r.Body, "card.last4"), "4242")
	is.True(digStr(r.Body, "card.fingerprint") != "")
	is.Equal(r.Body["customer"], nil)
	is.True(!strings.Contains(string(r.Raw), "4242424242424242") && !strings.Contains(string(r.Raw), `"cvc"`))
	pm := r.Str("id")
	same := e.Do("POST", "/v1/payment-methods", e.Test, map[string]any{"type": "credit_card", "card": payCard("4242 4242 4242 4242")})
	is.Equal(digStr(same.Body, "card.fingerprint"), digStr(r.Body, "card.fingerprint")) // the same card, the same fingerprint

	bad := e.Do("POST", "/v1/payment-methods", e.Test, map[string]any{"type": "credit_card", "card": payCard("4242424242424241")})
	is.Equal(bad.Status, 402)
	is.Equal(bad.ErrCode(), "invalid_number")
	is.Equal(bad.ErrParam(), "card[number]")
	is.Equal(e.Do("POST", "/v1/payment-methods", e.Test, map[string]any{"type": "pix"}).ErrParam(), "type")
	is.Equal(e.Do("POST", "/v1/payment-methods", e.Test, map[string]any{"type": "credit_card"}).ErrParam(), "card")

	r = e.Do("POST", "/v1/payment-methods/"+pm+"/attach", e.Test, map[string]any{"customer": cus})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("customer"), cus)
	is.Equal(len(e.payEvents(e.Test, "payment_method.attached", pm)), 1)
	list := e.Do("GET", "/v1/payment-methods?customer="+cus, e.Test, nil)
	is.Equal(list.IDs(), []string{pm})
	other := e.payCustomer(e.Test, "bruno@example.com")
	is.Equal(e.Do("POST", "/v1/payment-methods/"+pm+"/attach", e.Test, map[string]any{"customer": other}).ErrParam(), "customer")

	declining := e.Do("POST", "/v1/payment-methods", e.Test, map[string]any{"type": "credit_card", "card": payCard("4000000000009995")}).Str("id")
	r = e.Do("POST", "/v1/payment-methods/"+declining+"/attach", e.Test, map[string]any{"customer": cus})
	is.Equal(r.Status, 402) // a decline card cannot be saved
	is.Equal(r.ErrCode(), "insufficient_funds")
	is.Equal(e.Do("GET", "/v1/payment-methods/"+declining, e.Test, nil).Body["customer"], nil)
	// Unattached, it still declines when charged.
	d := e.payConfirm(e.Test, e.payIntent(e.Test, 5000, nil).Str("id"), map[string]any{"payment_method": declining})
	is.Equal(d.Status, 402)
	is.Equal(d.ErrCode(), "insufficient_funds")

	r = e.Do("POST", "/v1/payment-methods/"+pm+"/detach", e.Test, nil)
	is.Equal(r.Status, 200)
	is.Equal(r.Body["customer"], nil)
	is.Equal(len(e.payEvents(e.Test, "payment_method.detached", pm)), 1)
	is.Equal(e.Do("GET", "/v1/payment-methods?customer="+cus, e.Test, nil).IDs(), []string(nil))
	is.Equal(e.Do("POST", "/v1/payment-methods/"+pm+"/detach", e.Test, nil).Status, 400) // not attached
	is.Equal(e.Do("GET", "/v1/payment-methods/pm_000000000000000000000000", e.Test, nil).Status, 404)
}

// TestSetupIntents: saving a card without a charge; the SPEC 7.1 decline cards decline setup too;
// the saved card then pays.
func TestSetupIntents(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "ana@example.com")
	si := e.Do("POST", "/v1/setup-intents", e.Test, map[string]any{"customer": cus, "metadata": map[string]string{"plan": "pro"}})
	is.Equal(si.Status, 200)
	is.Equal(si.Str("object"), "setup_intent")
	is.Equal(si.Str("status"), "requires_payment_method")
	is.True(strings.HasPrefix(si.Str("client_secret"), si.Str("id")+"_secret_"))
	id := si.Str("id")

	r := e.Do("POST", "/v1/setup-intents/"+id+"/confirm", e.Test, map[string]any{"card": payCard("4000009000000250")})
	is.Equal(r.Status, 402) // stolen_card declines the setup
	is.Equal(r.ErrCode(), "stolen_card")
	is.Equal(digStr(r.Body, "error.setup_intent.status"), "requires_payment_method")
	is.Equal(digStr(r.Body, "error.setup_intent.last_setup_error.category"), "blocked")
	is.Equal(r.Body["error"].(map[string]any)["payment_intent"], nil)
	is.Equal(len(e.payEvents(e.Test, "setup_intent.setup_failed", id)), 1)

	r = e.Do("POST", "/v1/setup-intents/"+id+"/confirm", e.Test, map[string]any{"card": payCard("4242424242424242"), "client_secret": si.Str("client_secret")})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "succeeded")
	is.Equal(r.Body["last_setup_error"], nil)
	pm := r.Str("payment_method")
	is.Equal(e.Do("GET", "/v1/payment-methods/"+pm, e.Test, nil).Str("customer"), cus) // saved on the customer
	is.Equal(len(e.payEvents(e.Test, "setup_intent.succeeded", id)), 1)
	is.Equal(e.Do("POST", "/v1/setup-intents/"+id+"/confirm", e.Test, map[string]any{"card": payCard("4242424242424242")}).Status, 409)
	is.Equal(e.Do("POST", "/v1/setup-intents/"+id+"/cancel", e.Test, nil).Status, 409)

	pay := e.payConfirm(e.Test, e.payIntent(e.Test, 5000, map[string]any{"customer": cus}).Str("id"), map[string]any{"payment_method": pm})
	is.Equal(pay.Str("status"), "succeeded") // the saved card pays

	other := e.Do("POST", "/v1/setup-intents", e.Test, nil).Str("id")
	r = e.Do("POST", "/v1/setup-intents/"+other+"/cancel", e.Test, map[string]any{"cancellation_reason": "abandoned"})
	is.Equal(r.Str("status"), "canceled")
	is.Equal(e.Do("GET", "/v1/setup-intents?customer="+cus, e.Test, nil).IDs(), []string{id})
	is.Equal(e.Do("POST", "/v1/setup-intents", e.Test, map[string]any{"payment_method_types": []string{"pix"}}).ErrParam(), "payment_method_types")

	live := e.Do("POST", "/v1/setup-intents", e.Live, nil).Str("id")
	r = e.Do("POST", "/v1/setup-intents/"+live+"/confirm", e.Live, map[string]any{"card": payCard("4242424242424242")})
	is.Equal(r.ErrCode(), "organization_not_activated") // live needs an active organization
	e.activate(t)
	r = e.Do("POST", "/v1/setup-intents/"+live+"/confirm", e.Live, map[string]any{"card": payCard("4242424242424242")})
	is.Equal(r.ErrCode(), "processor_unavailable") // and a processor
}
