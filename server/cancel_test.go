package server_test

import (
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestCancelUncapturedMarksChargeRefunded: canceling a card payment intent in requires_capture
// releases the authorization as Stripe shows it: the charge stays succeeded and uncaptured, is
// refunded with amount_refunded = amount, and carries a refund of the whole amount; refund.created
// and charge.refunded are emitted; no ledger entry is written (no money moved) and the buyer gets
// no refund e-mail.
func TestCancelUncapturedMarksChargeRefunded(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "bia@example.com", "name": "Bia"}).Str("id")
	id := e.payIntent(e.Test, 10000, map[string]any{"capture_method": "manual", "customer": cus}).Str("id")
	r := e.payConfirm(e.Test, id, map[string]any{"card": payCard("4242424242424242")})
	is.Equal(r.Str("status"), "requires_capture")
	chID := r.Str("latest_charge")

	c := e.Do("POST", "/v1/payment-intents/"+id+"/cancel", e.Test, map[string]any{"cancellation_reason": "requested_by_customer"})
	is.Equal(c.Status, 200)
	is.Equal(c.Str("status"), "canceled")
	is.Equal(digNum(c.Body, "amount_capturable"), int64(0))
	is.Equal(digNum(c.Body, "amount_received"), int64(0))

	ch := e.Do("GET", "/v1/charges/"+chID, e.Test, nil)
	is.Equal(ch.Str("status"), "succeeded") // the authorization succeeded; it was released
	is.Equal(ch.Body["captured"], false)
	is.Equal(ch.Body["refunded"], true)
	is.Equal(digNum(ch.Body, "amount_refunded"), int64(10000))
	is.Equal(digNum(ch.Body, "amount_captured"), int64(0))
	refunds := dig(ch.Body, "refunds.data").([]any)
	is.Equal(len(refunds), 1) // the refund of the whole amount
	rf := refunds[0].(map[string]any)
	is.Equal(rf["amount"], float64(10000))
	is.Equal(rf["status"], "succeeded")
	is.Equal(rf["payment_intent"], id)
	is.Equal(rf["reason"], nil)
	is.Equal(e.Do("GET", "/v1/refunds/"+rf["id"].(string), e.Test, nil).Status, 200)
	is.Equal(len(e.payEvents(e.Test, "refund.created", rf["id"].(string))), 1)
	ev := e.payEvents(e.Test, "charge.refunded", chID)
	is.Equal(len(ev), 1)
	is.Equal(dig(ev[0], "data.previous_attributes.refunded"), false)
	is.Equal(len(e.payEvents(e.Test, "payment_intent.canceled", id)), 1)

	is.Equal(e.payCount(e.Test, "/v1/transactions?payment_intent="+id), 0) // no money moved, nothing in the ledger
	again := e.Do("POST", "/v1/refunds", e.Test, map[string]any{"charge": chID})
	is.Equal(again.Status, 400) // nothing to refund
	is.Equal(again.ErrParam(), "charge")
	e.advance(time.Second)
	is.Equal(len(e.mailbox(e.Test, "kind=refund")), 0) // the buyer was never charged: no refund e-mail

	// A waiting PIX canceled keeps its failed charge, with nothing refunded.
	pix := e.payIntent(e.Test, 5000, nil).Str("id")
	e.payConfirm(e.Test, pix, map[string]any{"payment_method_type": "pix", "customer_email": "succeed_delayed@example.com"})
	p := e.Do("POST", "/v1/payment-intents/"+pix+"/cancel", e.Test, nil)
	pch := e.Do("GET", "/v1/charges/"+p.Str("latest_charge"), e.Test, nil)
	is.Equal(pch.Str("status"), "failed")
	is.Equal(pch.Body["refunded"], false)
	is.Equal(digNum(pch.Body, "amount_refunded"), int64(0))
}

// TestUncapturedAuthorizationExpiresAfterSevenDays: an authorization neither captured nor
// canceled is canceled automatically seven days after it was made (Stripe's window): reason
// automatic, the charge released (refunded, uncaptured), charge.expired; one captured in time
// is not touched.
func TestUncapturedAuthorizationExpiresAfterSevenDays(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.payIntent(e.Test, 8000, map[string]any{"capture_method": "manual"}).Str("id")
	r := e.payConfirm(e.Test, id, map[string]any{"card": payCard("4242424242424242")})
	is.Equal(r.Str("status"), "requires_capture")
	chID := r.Str("latest_charge")
	kept := e.payIntent(e.Test, 8000, map[string]any{"capture_method": "manual"}).Str("id")
	e.payConfirm(e.Test, kept, map[string]any{"card": payCard("4242424242424242")})

	e.advance(6 * 24 * time.Hour)
	is.Equal(e.Do("GET", "/v1/payment-intents/"+id, e.Test, nil).Str("status"), "requires_capture") // still in its window
	is.Equal(e.Do("POST", "/v1/payment-intents/"+kept+"/capture", e.Test, map[string]any{}).Status, 200)
	e.advance(24*time.Hour + time.Minute)

	pi := e.Do("GET", "/v1/payment-intents/"+id, e.Test, nil)
	is.Equal(pi.Str("status"), "canceled")
	is.Equal(pi.Str("cancellation_reason"), "automatic")
	ch := e.Do("GET", "/v1/charges/"+chID, e.Test, nil)
	is.Equal(ch.Body["captured"], false)
	is.Equal(ch.Body["refunded"], true)
	is.Equal(digNum(ch.Body, "amount_refunded"), int64(8000))
	is.Equal(len(e.payEvents(e.Test, "charge.expired", chID)), 1)
	is.Equal(len(e.payEvents(e.Test, "payment_intent.canceled", id)), 1)
	is.Equal(e.payCount(e.Test, "/v1/transactions?payment_intent="+id), 0)
	is.Equal(e.Do("POST", "/v1/payment-intents/"+id+"/capture", e.Test, map[string]any{}).Status, 409) // too late

	is.Equal(e.Do("GET", "/v1/payment-intents/"+kept, e.Test, nil).Str("status"), "succeeded") // captured in time
	is.Equal(len(e.Do("GET", "/v1/events?type=charge.expired", e.Test, nil).Data()), 1)        // only the one left uncaptured
}

// TestLiveCancelUncapturedMarksChargeRefunded: in live mode the cancel voids the authorization at
// the acquirer (Cielo) first, then shows the release on the charge as in test mode; no ledger
// entry, no automatic expiry scheduled (the acquirer's window applies).
func TestLiveCancelUncapturedMarksChargeRefunded(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	pi := e.payIntent(e.Live, 7000, map[string]any{"capture_method": "manual"}).Str("id")
	r := e.payConfirm(e.Live, pi, map[string]any{"card": payCard(liveApprove)})
	is.Equal(r.Str("status"), "requires_capture")
	chID := r.Str("latest_charge")
	c := e.Do("POST", "/v1/payment-intents/"+pi+"/cancel", e.Live, map[string]any{})
	is.Equal(c.Status, 200)
	is.Equal(c.Str("status"), "canceled")
	ch := e.Do("GET", "/v1/charges/"+chID, e.Live, nil)
	is.Equal(ch.Body["captured"], false)
	is.Equal(ch.Body["refunded"], true)
	is.Equal(digNum(ch.Body, "amount_refunded"), int64(7000))
	is.Equal(len(dig(ch.Body, "refunds.data").([]any)), 1)
	is.Equal(e.payCount(e.Live, "/v1/transactions?payment_intent="+pi), 0)
	is.Equal(len(e.payEvents(e.Live, "charge.refunded", chID)), 1)
}

// TestCancelReasonsTheCallerMayGive: the API accepts Stripe's four caller reasons; the ones troco
// sets itself (automatic, void_invoice, …) are refused with 400 naming cancellation_reason.
func TestCancelReasonsTheCallerMayGive(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.payIntent(e.Test, 1000, nil).Str("id")
	for _, r := range []string{"automatic", "void_invoice", "expired", "failed_invoice"} {
		c := e.Do("POST", "/v1/payment-intents/"+id+"/cancel", e.Test, map[string]any{"cancellation_reason": r})
		is.Equal(c.Status, 400)
		is.Equal(c.ErrParam(), "cancellation_reason")
	}
	c := e.Do("POST", "/v1/payment-intents/"+id+"/cancel", e.Test, map[string]any{"cancellation_reason": "abandoned"})
	is.Equal(c.Status, 200)
	is.Equal(c.Str("cancellation_reason"), "abandoned")
}
