package server_test

import (
	"slices"
	"testing"

	"github.com/matryer/is"
)

// Regression tests of the external verification of the payments core (issue 3).

// TestVerifyIntentStatusFilter: GET /v1/payment-intents?status= accepts only payment intent
// statuses (400 naming status otherwise), and pending and requires_action both find a waiting
// PIX (SPEC 3.4 treats both names as the waiting state).
func TestVerifyIntentStatusFilter(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.payIntent(e.Test, 5000, nil).Str("id")
	r := e.payConfirm(e.Test, id, map[string]any{"payment_method_type": "pix", "customer_email": "pending@example.com"})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "pending")
	for _, st := range []string{"pending", "requires_action"} {
		r = e.Do("GET", "/v1/payment-intents?status="+st, e.Test, nil)
		is.Equal(r.Status, 200)
		is.True(slices.Contains(r.IDs(), id)) // the waiting intent, under either name
	}
	r = e.Do("GET", "/v1/payment-intents?status=succeeded", e.Test, nil)
	is.Equal(r.Status, 200)
	is.True(!slices.Contains(r.IDs(), id))
	r = e.Do("GET", "/v1/payment-intents?status=bogus", e.Test, nil)
	is.Equal(r.Status, 400)
	is.Equal(r.ErrCode(), "invalid_request")
	is.Equal(r.ErrParam(), "status")
}

// TestVerifyEnumListFilters: the type filters of payment methods and transactions accept only
// their values (400 naming type otherwise), like the status filter of payment intents.
func TestVerifyEnumListFilters(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	for _, path := range []string{"/v1/payment-methods?type=", "/v1/transactions?type="} {
		r := e.Do("GET", path+"bogus", e.Test, nil)
		is.Equal(r.Status, 400)
		is.Equal(r.ErrCode(), "invalid_request")
		is.Equal(r.ErrParam(), "type")
	}
	is.Equal(e.Do("GET", "/v1/payment-methods?type=credit_card", e.Test, nil).Status, 200)
	is.Equal(e.Do("GET", "/v1/transactions?type=refund", e.Test, nil).Status, 200)
}

// TestVerifyConfirmWithClientSecret: POST /v1/payment-intents/{id}/confirm works without an API
// key when the body carries the intent's client_secret (CONTRACT 4), as the checkout session
// confirm does; a missing or wrong secret, or an unknown id, is 401 and changes nothing.
func TestVerifyConfirmWithClientSecret(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	pi := e.payIntent(e.Test, 5000, nil)
	id, secret := pi.Str("id"), pi.Str("client_secret")

	r := e.Do("POST", "/v1/payment-intents/"+id+"/confirm", "", map[string]any{"card": payCard("4242424242424242")})
	is.Equal(r.Status, 401) // neither key nor secret
	r = e.Do("POST", "/v1/payment-intents/"+id+"/confirm", "", map[string]any{"client_secret": secret + "x", "card": payCard("4242424242424242")})
	is.Equal(r.Status, 401) // wrong secret
	is.Equal(r.ErrCode(), "authentication_failed")
	r = e.Do("POST", "/v1/payment-intents/pi_nope/confirm", "", map[string]any{"client_secret": secret, "card": payCard("4242424242424242")})
	is.Equal(r.Status, 401) // another intent's secret
	is.Equal(e.Do("GET", "/v1/payment-intents/"+id, e.Test, nil).Str("status"), "requires_payment_method")

	r = e.Do("POST", "/v1/payment-intents/"+id+"/confirm", "", map[string]any{"client_secret": secret, "card": payCard("4242424242424242")}, "Idempotency-Key", "cs-"+id)
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "succeeded")
	is.Equal(r.Body["livemode"], false)
	again := e.Do("POST", "/v1/payment-intents/"+id+"/confirm", "", map[string]any{"client_secret": secret, "card": payCard("4242424242424242")}, "Idempotency-Key", "cs-"+id)
	is.Equal(again.Status, 200)
	is.Equal(again.Header.Get("Idempotent-Replayed"), "true")
	is.Equal(e.payCount(e.Test, "/v1/charges?payment_intent="+id), 1)
	is.Equal(len(e.payEvents(e.Test, "payment_intent.succeeded", id)), 1)
}

// TestVerifyTestHelperLiveKey: a payment intent test helper called with a live key answers
// testmode_required whatever the id, a test-mode intent's included (SPEC 4.5, 5.12), and
// changes nothing.
func TestVerifyTestHelperLiveKey(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.payIntent(e.Test, 2000, nil).Str("id")
	for _, path := range []string{id, "pi_nope"} {
		for _, action := range []string{"succeed", "expire"} {
			r := e.Do("POST", "/v1/test-helpers/payment-intents/"+path+"/"+action, e.Live, nil)
			is.Equal(r.Status, 403)
			is.Equal(r.ErrCode(), "testmode_required")
		}
	}
	is.Equal(e.Do("GET", "/v1/payment-intents/"+id, e.Test, nil).Str("status"), "requires_payment_method") // untouched
}

// Fingerprints identify a card within one organization and environment only.
func TestFingerprintIsScopedToOrganization(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, otherTest := e.NewOrg("Other Ltda", false)
	fp := func(token string) string {
		r := e.Do("POST", "/v1/payment-methods", token, map[string]any{"type": "credit_card", "card": payCard("4242424242424242")})
		is.Equal(r.Status, 200) // create payment method
		c, _ := r.Body["card"].(map[string]any)
		s, _ := c["fingerprint"].(string)
		is.True(s != "")
		return s
	}
	a1, a2, b := fp(e.Test), fp(e.Test), fp(otherTest)
	is.Equal(a1, a2) // same card, same organization: same fingerprint
	is.True(a1 != b) // another organization cannot correlate the card
}

// TestVerifyLenientCardFields: exp_month and exp_year may be strings of digits, the year may have
// two digits and the cvc may be a number, as card forms send them; anything else is a 400 naming
// the card param, and unknown card fields are refused.
func TestVerifyLenientCardFields(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	for _, c := range []map[string]any{
		{"number": "4242424242424242", "exp_month": "12", "exp_year": "2030", "cvc": "123"},
		{"number": "4242424242424242", "exp_month": 12, "exp_year": 30, "cvc": 123},
	} {
		r := e.payConfirm(e.Test, e.payIntent(e.Test, 5000, nil).Str("id"), map[string]any{"card": c})
		is.Equal(r.Status, 200)
		is.Equal(r.Str("status"), "succeeded")
		ch := e.Do("GET", "/v1/charges/"+r.Str("latest_charge"), e.Test, nil)
		is.Equal(digNum(ch.Body, "payment_method_details.card.exp_year"), int64(2030))
	}
	for _, tc := range []struct {
		card  map[string]any
		param string
	}{
		{map[string]any{"number": "4242424242424242", "exp_month": "twelve", "exp_year": 2030, "cvc": "123"}, "card[exp_month]"},
		{map[string]any{"number": "4242424242424242", "exp_month": 12, "exp_year": true, "cvc": "123"}, "card[exp_year]"},
		{map[string]any{"number": "4242424242424242", "exp_month": 12, "exp_year": 2030, "cvc": 1.5}, "card[cvc]"},
		{map[string]any{"number": 4242424242424242, "exp_month": 12, "exp_year": 2030, "cvc": "123"}, "card[number]"},
		{map[string]any{"number": "4242424242424242", "exp_month": 12, "exp_year": 2030, "cvc": "123", "pin": "1"}, "card[pin]"},
	} {
		r := e.payConfirm(e.Test, e.payIntent(e.Test, 5000, nil).Str("id"), map[string]any{"card": tc.card})
		is.Equal(r.Status, 400)
		is.Equal(r.ErrCode(), "invalid_request")
		is.Equal(r.ErrParam(), tc.param)
	}
}
