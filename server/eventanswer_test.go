package server_test

import (
	"fmt"
	"testing"

	"github.com/matryer/is"
)

// TestAnswersTakenFromEvents: a created and a confirmed payment intent are answered with the
// bytes their event holds for the object (mutateEventObject; every test also re-encodes such an
// answer and fails on a difference): the same bytes a retrieve gives right after, the same on
// an idempotent replay, and the event's own object; a declined card still answers its 402.
func TestAnswersTakenFromEvents(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	card := func(n string) map[string]any {
		return map[string]any{"payment_method_type": "credit_card", "card": map[string]any{"number": n, "exp_month": 12, "exp_year": 2030, "cvc": "123"}}
	}
	for i, key := range []string{"", "answers-1"} {
		var h []string
		if key != "" {
			h = []string{"Idempotency-Key", key}
		}
		body := map[string]any{"amount": 1000 + i, "currency": "brl", "description": "Pedido <7> & ação", "metadata": map[string]any{"k": "<v>"}}
		created := e.Do("POST", "/v1/payment-intents", e.Test, body, h...)
		is.Equal(created.Status, 200)
		id := created.Str("id")
		got := e.Do("GET", "/v1/payment-intents/"+id, e.Test, nil)
		is.Equal(string(created.Raw), string(got.Raw))

		var ch []string
		if key != "" {
			ch = []string{"Idempotency-Key", key + "-confirm"}
		}
		confirmed := e.Do("POST", "/v1/payment-intents/"+id+"/confirm", e.Test, card("4242424242424242"), ch...)
		is.Equal(confirmed.Status, 200)
		is.Equal(confirmed.Str("status"), "succeeded")
		got = e.Do("GET", "/v1/payment-intents/"+id, e.Test, nil)
		is.Equal(string(confirmed.Raw), string(got.Raw))
		if key != "" {
			again := e.Do("POST", "/v1/payment-intents/"+id+"/confirm", e.Test, card("4242424242424242"), ch...)
			is.Equal(again.Status, 200)
			is.Equal(string(again.Raw), string(confirmed.Raw))
		}
		events := e.Do("GET", "/v1/events?type=payment_intent.succeeded&limit=1", e.Test, nil)
		data := events.Body["data"].([]any)
		is.Equal(len(data), 1)
		obj := data[0].(map[string]any)["data"].(map[string]any)["object"].(map[string]any)
		is.Equal(obj["id"], id)
		is.Equal(fmt.Sprint(obj), fmt.Sprint(confirmed.Body))
	}

	created := e.Do("POST", "/v1/payment-intents", e.Test, map[string]any{"amount": 5000, "currency": "brl"})
	declined := e.Do("POST", "/v1/payment-intents/"+created.Str("id")+"/confirm", e.Test, card("4000000000000002"))
	is.Equal(declined.Status, 402)
	is.Equal(declined.ErrCode(), "generic_decline")
}

// TestConfirmFingerprintPreparedOffWriter: the fingerprint of a card typed at confirmation, or
// at a create with confirm: true (computed before the writer), is the one the same card gets as
// a payment method, and another organization gets another one.
func TestConfirmFingerprintPreparedOffWriter(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cardBody := map[string]any{"number": "4242424242424242", "exp_month": 12, "exp_year": 2030, "cvc": "123"}
	fingerprint := func(token string) string {
		pi := e.Do("POST", "/v1/payment-intents", token, map[string]any{"amount": 1000, "currency": "brl"})
		cf := e.Do("POST", "/v1/payment-intents/"+pi.Str("id")+"/confirm", token, map[string]any{"payment_method_type": "credit_card", "card": cardBody})
		is.Equal(cf.Status, 200)
		pm := e.Do("GET", "/v1/payment-methods/"+cf.Str("payment_method"), token, nil)
		is.Equal(pm.Status, 200)
		return digStr(pm.Body, "card.fingerprint")
	}
	fromConfirm := fingerprint(e.Test)
	saved := e.Do("POST", "/v1/payment-methods", e.Test, map[string]any{"type": "credit_card", "card": cardBody})
	is.Equal(saved.Status, 200)
	is.True(fromConfirm != "")
	is.Equal(fromConfirm, digStr(saved.Body, "card.fingerprint"))
	_, other := e.NewOrg("Outra Ltda", false)
	is.True(fingerprint(other) != fromConfirm)

	// A create with confirm: true prepares it off the writer too: the same fingerprint.
	one := e.Do("POST", "/v1/payment-intents", e.Test, map[string]any{"amount": 1000, "confirm": true, "card": cardBody})
	is.Equal(one.Status, 200)
	pm := e.Do("GET", "/v1/payment-methods/"+one.Str("payment_method"), e.Test, nil)
	is.Equal(digStr(pm.Body, "card.fingerprint"), fromConfirm)
}
