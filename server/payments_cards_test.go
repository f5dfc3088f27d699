package server_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"troco/server/card"
)

// TestCardTable runs every row of SPEC 7.1, generated from the one table the simulator reads:
// create + confirm over HTTPS with a test key, then the outcome, the charge, the events and, for
// a decline, the 402 and a successful re-confirmation with 4242.
func TestCardTable(t *testing.T) {
	env := newEnv(t)
	for _, tc := range card.TestCards() {
		t.Run(tc.Number+"_"+string(tc.Outcome)+"_"+tc.Code, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			e := withT(env, t)
			if tc.ReuseOutcome != "" {
				checkReuseRow(t, e, tc)
				return
			}
			pi := e.payIntent(e.Test, 10000, nil)
			id := pi.Str("id")
			r := e.payConfirm(e.Test, id, map[string]any{"card": payCard(tc.Number)})
			if tc.Outcome != card.OutcomeDeclined {
				is.Equal(r.Status, 200) // confirm
				is.Equal(r.Str("status"), string(tc.Outcome))
				is.Equal(r.Body["last_payment_error"], nil)
				ch := e.Do("GET", "/v1/charges/"+r.Str("latest_charge"), e.Test, nil)
				is.Equal(ch.Status, 200)
				is.Equal(ch.Body["payment_error"], nil)
				want := map[card.Outcome]string{card.OutcomeSucceeded: "succeeded", card.OutcomeRequiresCapture: "succeeded", card.OutcomeProcessing: "pending", card.OutcomePending: "pending"}[tc.Outcome]
				is.Equal(ch.Str("status"), want)
				is.Equal(ch.Body["captured"], tc.Outcome == card.OutcomeSucceeded)
				return
			}
			is.Equal(r.Status, 402) // declined
			is.Equal(r.ErrType(), "card_error")
			is.Equal(r.ErrCode(), tc.Code)
			is.Equal(digStr(r.Body, "error.message"), tc.Message)
			is.Equal(digStr(r.Body, "error.advice_code"), string(tc.AdviceCode))
			is.Equal(digStr(r.Body, "error.payment_intent.id"), id)
			is.Equal(digStr(r.Body, "error.payment_intent.status"), "requires_payment_method")
			lpe := "error.payment_intent.last_payment_error."
			is.Equal(digStr(r.Body, lpe+"category"), string(tc.Category))
			is.Equal(digStr(r.Body, lpe+"code"), tc.Code)
			is.Equal(digStr(r.Body, lpe+"message"), tc.Message)
			is.Equal(digStr(r.Body, lpe+"advice_code"), string(tc.AdviceCode))
			pe := dig(r.Body, "error.payment_intent.last_payment_error").(map[string]any)
			is.True(pe["network_decline_code"] == nil && pe["network_advice_code"] == nil) // null in test mode
			_, hasNet := pe["network_decline_code"]
			is.True(hasNet) // present, as null

			chID := digStr(r.Body, "error.charge")
			ch := e.Do("GET", "/v1/charges/"+chID, e.Test, nil)
			is.Equal(ch.Status, 200)
			is.Equal(ch.Str("status"), "failed")
			is.Equal(ch.Body["paid"], false)
			is.Equal(ch.Body["captured"], false)
			is.Equal(digNum(ch.Body, "amount_captured"), int64(0))
			is.Equal(digStr(ch.Body, "payment_error.code"), tc.Code)
			is.Equal(digStr(ch.Body, "payment_error.category"), string(tc.Category))
			is.Equal(digStr(ch.Body, "payment_method_details.card.last4"), tc.Number[12:])
			failed := e.payEvents(e.Test, "charge.failed", chID)
			is.Equal(len(failed), 1) // charge.failed emitted
			is.Equal(digStr(failed[0], "data.object.payment_error.code"), tc.Code)
			is.Equal(len(e.payEvents(e.Test, "payment_intent.payment_failed", id)), 1)

			again := e.payConfirm(e.Test, id, map[string]any{"card": payCard("4242424242424242")})
			is.Equal(again.Status, 200) // a declined intent accepts a new confirmation
			is.Equal(again.Str("status"), "succeeded")
			is.Equal(again.Body["last_payment_error"], nil)
		})
	}
}

// checkReuseRow: the first charge succeeds and saves the card; a new intent confirmed with the
// saved payment method gets the reuse outcome.
func checkReuseRow(t *testing.T, e *testEnv, tc card.TestCard) {
	is := is.New(t)
	cus := e.payCustomer(e.Test, "reuse@example.com")
	first := e.payConfirm(e.Test, e.payIntent(e.Test, 5000, map[string]any{"customer": cus}).Str("id"),
		map[string]any{"card": payCard(tc.Number), "save_payment_method": true})
	is.Equal(first.Status, 200)
	is.Equal(first.Str("status"), string(tc.Outcome)) // first charge
	pm := first.Str("payment_method")
	saved := e.Do("GET", "/v1/payment-methods/"+pm, e.Test, nil)
	is.Equal(saved.Str("customer"), cus) // saved on the customer
	is.True(!strings.Contains(string(saved.Raw), tc.Number))

	id := e.payIntent(e.Test, 5000, map[string]any{"customer": cus}).Str("id")
	r := e.payConfirm(e.Test, id, map[string]any{"payment_method": pm})
	if tc.ReuseOutcome == card.OutcomeDeclined {
		is.Equal(r.Status, 402) // reuse declines
		is.Equal(r.ErrCode(), tc.Code)
		is.Equal(digStr(r.Body, "error.payment_intent.status"), "requires_payment_method")
		is.Equal(digStr(r.Body, "error.payment_intent.last_payment_error.category"), string(tc.Category))
		return
	}
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), string(tc.ReuseOutcome)) // reuse outcome
	is.Equal(r.Str("payment_method"), pm)
}

// TestSavedCardReuseOfOrdinaryCards: a saved card that is not a reuse row behaves as on its first
// charge; the charge reports the card actually used, without a CVC check.
func TestSavedCardReuse(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "ana@example.com")
	first := e.payConfirm(e.Test, e.payIntent(e.Test, 5000, map[string]any{"customer": cus}).Str("id"),
		map[string]any{"card": payCard("5555555555554444"), "save_payment_method": true})
	is.Equal(first.Status, 200)
	pm := first.Str("payment_method")
	r := e.payConfirm(e.Test, e.payIntent(e.Test, 7000, map[string]any{"customer": cus}).Str("id"), map[string]any{"payment_method": pm})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "succeeded")
	ch := e.Do("GET", "/v1/charges/"+r.Str("latest_charge"), e.Test, nil)
	is.Equal(digStr(ch.Body, "payment_method_details.card.brand"), "mastercard")
	is.Equal(digStr(ch.Body, "payment_method_details.card.last4"), "4444")
	is.Equal(digStr(ch.Body, "payment_method_details.card.checks.cvc_check"), "unchecked") // no CVC on reuse
	is.Equal(ch.Str("payment_method"), pm)

	other := e.payCustomer(e.Test, "bruno@example.com")
	r = e.payConfirm(e.Test, e.payIntent(e.Test, 7000, map[string]any{"customer": other}).Str("id"), map[string]any{"payment_method": pm})
	is.Equal(r.Status, 400) // another customer's card
	is.Equal(r.ErrParam(), "payment_method")

	r = e.payConfirm(e.Test, e.payIntent(e.Test, 7000, nil).Str("id"), map[string]any{"card": payCard("4242424242424242"), "save_payment_method": true})
	is.Equal(r.Status, 400) // saving needs a customer
	is.Equal(r.ErrParam(), "save_payment_method")
}

// TestCardFormatErrors: Luhn, expiry and CVC problems answer 402 card_error naming the param,
// before any charge; the intent is unchanged.
func TestCardFormatErrors(t *testing.T) {
	env := newEnv(t)
	cases := []struct {
		name  string
		card  map[string]any
		code  string
		param string
	}{
		{"luhn", map[string]any{"number": "4242424242424241"}, "invalid_number", "card[number]"},
		{"letters", map[string]any{"number": "4242abcd42424242"}, "invalid_number", "card[number]"},
		{"month", map[string]any{"exp_month": 13}, "invalid_expiry_month", "card[exp_month]"},
		{"year", map[string]any{"exp_year": 99}, "invalid_expiry_year", "card[exp_year]"},
		{"expired", map[string]any{"exp_month": 1, "exp_year": 2020}, "expired_card", "card[exp_month]"},
		{"cvc", map[string]any{"cvc": "12"}, "invalid_cvc", "card[cvc]"},
		{"amex cvc", map[string]any{"number": "378282246310005", "cvc": "123"}, "invalid_cvc", "card[cvc]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			e := withT(env, t)
			body := payCard("4242424242424242")
			for k, v := range c.card {
				body[k] = v
			}
			pi := e.payIntent(e.Test, 10000, nil)
			r := e.payConfirm(e.Test, pi.Str("id"), map[string]any{"card": body})
			is.Equal(r.Status, 402)
			is.Equal(r.ErrType(), "card_error")
			is.Equal(r.ErrCode(), c.code)
			is.Equal(r.ErrParam(), c.param)
			is.Equal(digStr(r.Body, "error.payment_intent.status"), "requires_payment_method")
			is.True(!strings.Contains(string(r.Raw), "4242424242424241")) // never echoed
			after := e.Do("GET", "/v1/payment-intents/"+pi.Str("id"), e.Test, nil)
			is.Equal(string(after.Raw), string(pi.Raw))                                 // unchanged
			is.Equal(e.payCount(e.Test, "/v1/charges?payment_intent="+pi.Str("id")), 0) // no charge
		})
	}
}

// TestUnknownCardApprovesInTestOnly: any valid card approves in test; in live the table means
// nothing, and without a processor a live confirm is refused and writes nothing.
func TestUnknownCardAndLiveMode(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	r := e.payConfirm(e.Test, e.payIntent(e.Test, 10000, nil).Str("id"), map[string]any{"card": payCard("6062825624254001")})
	is.Equal(r.Status, 200) // unknown valid card (hipercard) approves in test mode
	is.Equal(r.Str("status"), "succeeded")

	live := e.payIntent(e.Live, 10000, nil)
	is.Equal(live.Body["livemode"], true)
	r = e.payConfirm(e.Live, live.Str("id"), map[string]any{"card": payCard("4000000000000002")})
	is.Equal(r.Status, 409) // before activation
	is.Equal(r.ErrCode(), "organization_not_activated")
	is.Equal(r.ErrType(), "invalid_request_error")
	is.True(strings.Contains(digStr(r.Body, "error.message"), "not ready to accept payments"))
	// SPEC 7: too many instalments is the same 400 in both environments, activated or not.
	tooMany := map[string]any{"card": payCard("4242424242424242"), "installments": 13}
	r = e.payConfirm(e.Live, live.Str("id"), tooMany)
	is.Equal(r.Status, 400)
	is.Equal(r.ErrParam(), "installments")
	is.Equal(digStr(r.Body, "error.message"), digStr(e.payConfirm(e.Test, e.payIntent(e.Test, 10000, nil).Str("id"), tooMany).Body, "error.message"))

	e.activate(t)
	events := e.payCount(e.Live, "/v1/events")
	r = e.payConfirm(e.Live, live.Str("id"), map[string]any{"card": payCard("4000000000000002")})
	is.Equal(r.Status, 503) // no live processor: a clear error, no decline from the test table
	is.Equal(r.ErrCode(), "processor_unavailable")
	is.Equal(r.ErrType(), "api_error")
	after := e.Do("GET", "/v1/payment-intents/"+live.Str("id"), e.Live, nil)
	is.Equal(string(after.Raw), string(live.Raw))                                          // nothing written
	is.Equal(e.payCount(e.Live, "/v1/charges"), 0)                                         // nothing charged
	is.Equal(e.payCount(e.Live, "/v1/events"), events)                                     // no event
	is.Equal(e.payCount(e.Live, "/v1/payment-methods"), 0)                                 // no card kept
	r = e.payConfirm(e.Live, live.Str("id"), map[string]any{"payment_method_type": "pix"}) // PIX too
	is.Equal(r.ErrCode(), "processor_unavailable")
}

// TestCardMissingFieldsAreParameterMissing: a card object without its number, expiry or CVC is
// a request missing a required parameter (400 parameter_missing naming card[…]), on every
// endpoint that takes a typed card, not a 402 decline of a card that was never given; an empty
// or malformed value stays the 402 format decline.
func TestCardMissingFieldsAreParameterMissing(t *testing.T) {
	env := newEnv(t)
	for _, field := range []string{"number", "exp_month", "exp_year", "cvc"} {
		for _, null := range []bool{false, true} {
			name := field + " absent"
			if null {
				name = field + " null"
			}
			t.Run(name, func(t *testing.T) {
				is := is.New(t)
				e := withT(env, t)
				c := payCard("4242424242424242")
				delete(c, field)
				if null {
					c[field] = nil
				}
				param := "card[" + field + "]"

				pi := e.payIntent(e.Test, 10000, nil)
				r := e.payConfirm(e.Test, pi.Str("id"), map[string]any{"card": c})
				is.Equal(r.Status, 400)
				is.Equal(r.ErrCode(), "parameter_missing")
				is.Equal(r.ErrParam(), param)
				is.Equal(e.payCount(e.Test, "/v1/charges?payment_intent="+pi.Str("id")), 0) // nothing attempted

				r = e.Do("POST", "/v1/payment-methods", e.Test, map[string]any{"type": "credit_card", "card": c})
				is.Equal(r.Status, 400)
				is.Equal(r.ErrCode(), "parameter_missing")
				is.Equal(r.ErrParam(), param)

				si := e.Do("POST", "/v1/setup-intents", e.Test, map[string]any{})
				is.Equal(si.Status, 200)
				r = e.Do("POST", "/v1/setup-intents/"+si.Str("id")+"/confirm", e.Test, map[string]any{"card": c})
				is.Equal(r.Status, 400)
				is.Equal(r.ErrCode(), "parameter_missing")
				is.Equal(r.ErrParam(), param)
			})
		}
	}
	t.Run("empty number stays a decline", func(t *testing.T) {
		is := is.New(t)
		e := withT(env, t)
		c := payCard("")
		pi := e.payIntent(e.Test, 10000, nil)
		r := e.payConfirm(e.Test, pi.Str("id"), map[string]any{"card": c})
		is.Equal(r.Status, 402)
		is.Equal(r.ErrCode(), "invalid_number")
		is.Equal(r.ErrParam(), "card[number]")
	})
}
