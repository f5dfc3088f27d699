package server_test

import (
	"testing"

	"github.com/matryer/is"
)

// TestPaymentIntentConfirmChecksCustomerPhone: the customer_phone a confirmation request sends
// (confirm, or create with confirm: true) follows the checkout's rule and message; a customer's
// stored free-text phone still passes through the internal paths (checkout, invoices).
func TestPaymentIntentConfirmChecksCustomerPhone(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	price := e.coPrice(e.Test, "Camiseta", 5000, nil)
	cs := e.coSession(e.Test, map[string]any{"line_items": []any{map[string]any{"price": price, "quantity": 1}}})
	want := e.Do("POST", "/v1/checkout-sessions/"+cs.Str("id")+"/confirm", e.Test, with(coCard("4242424242424242"), "customer_phone", "abc"))
	is.Equal(want.Status, 400)
	is.Equal(want.ErrParam(), "customer_phone")

	for _, phone := range []string{"abc", "12", "+55 11 91234-5678 ramal 2", "1234567890123456"} {
		pi := e.payIntent(e.Test, 5000, nil)
		r := e.payConfirm(e.Test, pi.Str("id"), with(coCard("4242424242424242"), "customer_phone", phone))
		is.Equal(r.Status, 400)
		is.Equal(r.ErrCode(), "invalid_request")
		is.Equal(r.ErrParam(), "customer_phone")
		if phone == "abc" {
			is.Equal(r.ErrMessage(), want.ErrMessage()) // the checkout's words
		}
		is.Equal(e.Do("GET", "/v1/payment-intents/"+pi.Str("id"), e.Test, nil).Str("status"), "requires_payment_method") // nothing charged
		c := e.Do("POST", "/v1/payment-intents", e.Test, with(with(coCard("4242424242424242"), "amount", 5000), "confirm", true, "customer_phone", phone))
		is.Equal(c.Status, 400)
		is.Equal(c.ErrParam(), "customer_phone")
	}
	ok := e.payConfirm(e.Test, e.payIntent(e.Test, 5000, nil).Str("id"), with(coCard("4242424242424242"), "customer_phone", " +55 (11) 91234-5678 "))
	is.Equal(ok.Status, 200)
	ch := e.Do("GET", "/v1/charges/"+ok.Str("latest_charge"), e.Test, nil)
	is.Equal(ch.Body["billing_details"].(map[string]any)["phone"], "+55 (11) 91234-5678")

	// A customer's phone is free text (an extension, a note): the checkout and a confirmation
	// without customer_phone still carry it.
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "bia@example.com", "name": "Bia Souza", "phone": "11 3333-4444 ramal 12, à tarde"})
	is.Equal(cus.Status, 200)
	s2 := e.coSession(e.Test, map[string]any{"customer": cus.Str("id"), "line_items": []any{map[string]any{"price": price, "quantity": 1}}})
	d := e.Do("POST", "/v1/checkout-sessions/"+s2.Str("id")+"/confirm", e.Test, coCard("4242424242424242"))
	is.Equal(d.Status, 200)
	pi := e.payIntent(e.Test, 5000, map[string]any{"customer": cus.Str("id")})
	is.Equal(e.payConfirm(e.Test, pi.Str("id"), coCard("4242424242424242")).Status, 200)
}

// with returns a copy of m with the key/value pairs set.
func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}
