package server_test

import (
	"testing"

	"github.com/matryer/is"
)

// Regression tests of the outside-in QA pass over checkout sessions (issue 5) and activation
// (issue 6). Each test names the discrepancy it pins.

// SPEC 4.5: a live key yields testmode_required, whatever the session id (it used to answer 404
// for an id unknown in live mode before looking at the key's environment).
func TestVerifyTestHelperLiveKeyBeforeLookup(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	for _, action := range []string{"succeed", "fail", "expire"} {
		r := e.Do("POST", "/v1/test-helpers/checkout-sessions/cs_doesnotexist/"+action, e.Live, nil)
		is.Equal(r.ErrCode(), "testmode_required") // live key, unknown id
	}
	cs := e.coSimple(e.Test, nil)
	r := e.Do("POST", "/v1/test-helpers/checkout-sessions/"+cs.Str("id")+"/succeed", e.Live, nil)
	is.Equal(r.ErrCode(), "testmode_required") // live key, test session
}

// SPEC 3.3/4.5: the succeed and fail helpers work on any open session, also when it offers only
// boleto (which needs a document, a name and an address) or requires buyer data the session does
// not have yet (they used to answer 400 parameter_missing customer_document).
func TestVerifyTestHelpersFillRequiredBuyerData(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)

	boleto := e.coSimple(e.Test, map[string]any{"payment_method_types": []string{"boleto"}})
	r := e.Do("POST", "/v1/test-helpers/checkout-sessions/"+boleto.Str("id")+"/succeed", e.Test, nil)
	is.Equal(r.Status, 200)
	is.Equal(r.Body["object"], "payment_intent")
	is.Equal(r.Body["status"], "succeeded")
	s := e.Do("GET", "/v1/checkout-sessions/"+boleto.Str("id"), e.Test, nil)
	is.Equal(s.Body["status"], "complete")
	is.Equal(s.Body["payment_status"], "paid")
	is.Equal(digStr(s.Body, "payment_data.type"), "boleto")

	boletoFail := e.coSimple(e.Test, map[string]any{"payment_method_types": []string{"boleto"}})
	r = e.Do("POST", "/v1/test-helpers/checkout-sessions/"+boletoFail.Str("id")+"/fail", e.Test, nil)
	is.Equal(r.Status, 200)
	is.Equal(r.Body["status"], "requires_payment_method")
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+boletoFail.Str("id"), e.Test, nil).Body["status"], "open")

	req := e.coSimple(e.Test, map[string]any{"require_document": true, "require_phone": true, "require_billing_address": true})
	r = e.Do("POST", "/v1/test-helpers/checkout-sessions/"+req.Str("id")+"/succeed", e.Test, nil)
	is.Equal(r.Status, 200)
	is.Equal(r.Body["status"], "succeeded")
	s = e.Do("GET", "/v1/checkout-sessions/"+req.Str("id"), e.Test, nil)
	is.Equal(s.Body["payment_status"], "paid")
	is.Equal(s.Body["customer_document_type"], "cpf")

	// Data the session already has is kept.
	pre := e.coSimple(e.Test, map[string]any{"payment_method_types": []string{"boleto"}, "customer_document": "11.222.333/0001-81", "customer_name": "Loja X"})
	is.Equal(e.Do("POST", "/v1/test-helpers/checkout-sessions/"+pre.Str("id")+"/succeed", e.Test, nil).Status, 200)
	s = e.Do("GET", "/v1/checkout-sessions/"+pre.Str("id"), e.Test, nil)
	is.Equal(s.Body["customer_document"], "11222333000181")
	is.Equal(s.Body["customer_name"], "Loja X")
}

// Stripe convention (CONTRACT: follow Stripe where silent): a payment link's metadata is copied to
// every checkout session it creates, so it is echoed in the checkout.session.* webhooks.
func TestVerifyPaymentLinkMetadataCopiedToSessions(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	price := e.coPrice(e.Test, "Ingresso", 5000, nil)
	l := e.Do("POST", "/v1/payment-links", e.Test, map[string]any{"line_items": []any{map[string]any{"price": price, "quantity": 1}}, "metadata": map[string]string{"campaign": "natal"}})
	is.Equal(l.Status, 200)
	b := e.newBrowser(t)
	is.Equal(b.get(l.Str("url")).Status, 303)
	sessions := e.Do("GET", "/v1/checkout-sessions?payment_link="+l.Str("id"), e.Test, nil)
	is.Equal(len(sessions.IDs()), 1)
	cs := sessions.Data()[0]
	is.Equal(cs["metadata"], map[string]any{"campaign": "natal"})
	evs := e.coEvents(e.Test, "checkout.session.created", cs["id"].(string))
	is.Equal(len(evs), 1)
	is.Equal(dig(evs[0], "data.object.metadata"), map[string]any{"campaign": "natal"})
}

// SPEC 2.4: payment_method_types is frozen, empty for a live session created before activation.
// Confirming such a session after the activation says why nothing can be paid (the message used
// to read "This checkout session offers ; ..." or ask for payment_method_type).
func TestVerifyConfirmSessionWithoutMethods(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cs := e.coSimple(e.Live, nil)
	is.Equal(cs.Body["payment_method_types"], []any{})
	e.setActivation("active")
	got := e.Do("GET", "/v1/checkout-sessions/"+cs.Str("id"), e.Live, nil)
	is.Equal(got.Body["payment_method_types"], []any{}) // frozen
	for _, body := range []map[string]any{coCard("4242424242424242"), {"customer_email": "ana@example.com"}} {
		r := e.Do("POST", "/v1/checkout-sessions/"+cs.Str("id")+"/confirm", e.Live, body)
		is.Equal(r.Status, 400)
		is.Equal(r.ErrCode(), "invalid_request")
		is.Equal(r.ErrParam(), "payment_method_type")
	}
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+cs.Str("id"), e.Live, nil).Body["status"], "open")
}
