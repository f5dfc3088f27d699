package server_test

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/server/fees"
)

// TestPaymentIntentCreateValidation: amount, currency, customer and option errors name their param.
func TestPaymentIntentCreateValidation(t *testing.T) {
	e := newEnv(t)
	other, otherKey := e.NewOrg("Outra", false)
	_ = other
	foreignCus := e.payCustomer(otherKey, "x@example.com")
	cases := []struct {
		name   string
		body   map[string]any
		status int
		param  string
	}{
		{"missing amount", map[string]any{}, 400, "amount"},
		{"amount below minimum", map[string]any{"amount": 49}, 400, "amount"},
		{"amount not integer", map[string]any{"amount": 10.5}, 400, "amount"},
		{"amount as string", map[string]any{"amount": "1000"}, 400, "amount"},
		{"upper-case currency", map[string]any{"amount": 1000, "currency": "BRL"}, 400, "currency"},
		{"other currency", map[string]any{"amount": 1000, "currency": "usd"}, 400, "currency"},
		{"unknown customer", map[string]any{"amount": 1000, "customer": "cus_000000000000000000000000"}, 404, "customer"},
		{"foreign customer", map[string]any{"amount": 1000, "customer": foreignCus}, 404, "customer"},
		{"bad method", map[string]any{"amount": 1000, "payment_method_types": []string{"bitcoin"}}, 400, "payment_method_types"},
		{"empty methods", map[string]any{"amount": 1000, "payment_method_types": []string{}}, 400, "payment_method_types"},
		{"bad capture", map[string]any{"amount": 1000, "capture_method": "later"}, 400, "capture_method"},
		{"bad payer", map[string]any{"amount": 1000, "interest_payer": "merchant"}, 400, "interest_payer"},
		{"bad metadata", map[string]any{"amount": 1000, "metadata": map[string]string{"bad key!": "v"}}, 400, "metadata"},
		{"unknown field", map[string]any{"amount": 1000, "amount_total": 5}, 400, "amount_total"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			r := e.Do("POST", "/v1/payment-intents", e.Test, c.body)
			is.Equal(r.Status, c.status)
			is.Equal(r.ErrParam(), c.param)
		})
	}
}

// TestPaymentIntentLifecycle: defaults, update rules, list filters and events with
// previous_attributes.
func TestPaymentIntentLifecycle(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "ana@example.com")
	pi := e.payIntent(e.Test, 10000, map[string]any{"customer": cus, "metadata": map[string]string{"order": "42"}})
	id := pi.Str("id")
	is.Equal(pi.Str("object"), "payment_intent")
	is.Equal(pi.Str("status"), "requires_payment_method")
	is.Equal(pi.Str("currency"), "brl")
	is.Equal(pi.Str("capture_method"), "automatic")
	is.Equal(pi.Str("interest_payer"), "organization")
	is.Equal(dig(pi.Body, "payment_method_types"), []any{"credit_card", "pix", "boleto"})
	is.True(strings.HasPrefix(pi.Str("client_secret"), id+"_secret_"))
	is.Equal(pi.Body["livemode"], false)
	is.Equal(len(e.payEvents(e.Test, "payment_intent.created", id)), 1)

	r := e.Do("POST", "/v1/payment-intents/"+id, e.Test, map[string]any{"description": "Pedido 42", "amount": 12000})
	is.Equal(r.Status, 200)
	is.Equal(digNum(r.Body, "amount"), int64(12000))
	ev := e.payEvents(e.Test, "payment_intent.updated", id)
	is.Equal(len(ev), 1)
	is.Equal(dig(ev[0], "data.previous_attributes"), map[string]any{"amount": 10000.0, "description": nil}) // previous values

	r = e.payConfirm(e.Test, id, map[string]any{"payment_method_type": "pix"})
	is.Equal(r.Str("status"), "pending")
	r = e.Do("POST", "/v1/payment-intents/"+id, e.Test, map[string]any{"amount": 5000})
	is.Equal(r.Status, 409) // the amount is frozen once a payment is under way
	r = e.Do("POST", "/v1/payment-intents/"+id, e.Test, map[string]any{"metadata": map[string]string{"note": "x"}})
	is.Equal(r.Status, 200) // metadata still changes

	other := e.payIntent(e.Test, 3000, nil).Str("id")
	list := e.Do("GET", "/v1/payment-intents?status=pending", e.Test, nil)
	is.Equal(list.IDs(), []string{id})
	list = e.Do("GET", "/v1/payment-intents?customer="+cus, e.Test, nil)
	is.Equal(list.IDs(), []string{id})
	list = e.Do("GET", "/v1/payment-intents?created_at[gte]="+time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), e.Test, nil)
	is.Equal(list.IDs(), []string{other, id})
	is.Equal(e.Do("GET", "/v1/payment-intents?colour=red", e.Test, nil).Status, 400)

	r = e.payConfirm(e.Test, other, map[string]any{"payment_method_type": "pix", "client_secret": "pi_wrong_secret_x"})
	is.Equal(r.Status, 400) // a wrong client_secret
	is.Equal(r.ErrParam(), "client_secret")
	r = e.payConfirm(e.Test, e.payIntent(e.Test, 3000, map[string]any{"payment_method_types": []string{"pix"}}).Str("id"), map[string]any{"card": payCard("4242424242424242")})
	is.Equal(r.Status, 400) // method not offered
	is.Equal(r.ErrParam(), "payment_method_type")
	r = e.payConfirm(e.Test, e.payIntent(e.Test, 3000, nil).Str("id"), map[string]any{})
	is.Equal(r.Status, 400) // which method?
	is.Equal(r.ErrCode(), "parameter_missing")
	is.Equal(r.ErrParam(), "payment_method_type")
}

// TestInstallmentsAndLedger: the ceiling (CONTRACT 5) with the same 400 in both modes; one ledger
// entry per instalment, pending, settled_at null; interest_payer both ways.
func TestInstallmentsAndLedger(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	e.activate(t)
	messages := map[string]string{}
	for _, key := range []string{e.Test, e.Live} {
		for _, n := range []int{11, 13, 0} {
			r := e.payConfirm(key, e.payIntent(key, 5000, nil).Str("id"), map[string]any{"card": payCard("4242424242424242"), "installments": n})
			is.Equal(r.Status, 400) // over the ceiling (10 for R$ 50,00), before any charge
			is.Equal(r.ErrCode(), "invalid_request")
			is.Equal(r.ErrParam(), "installments")
			msg := digStr(r.Body, "error.message")
			if prev, ok := messages[strconv.Itoa(n)]; ok {
				is.Equal(msg, prev) // the same message in test and live
			}
			messages[strconv.Itoa(n)] = msg
		}
	}
	is.Equal(e.payCount(e.Test, "/v1/charges"), 0)

	plan := fees.DefaultPlan
	for _, payer := range []string{"organization", "buyer"} {
		t.Run(payer, func(t *testing.T) {
			is := is.New(t)
			e := withT(e, t)
			id := e.payIntent(e.Test, 100000, map[string]any{"interest_payer": payer}).Str("id")
			r := e.payConfirm(e.Test, id, map[string]any{"card": payCard("4242424242424242"), "installments": 10})
			is.Equal(r.Status, 200)
			is.Equal(digNum(r.Body, "installments"), int64(10))
			option := fees.OptionFor(100000, fees.InterestPayer(payer), fees.DefaultInstallmentInterestRate, 10)
			ch := e.Do("GET", "/v1/charges/"+r.Str("latest_charge"), e.Test, nil)
			is.Equal(digNum(ch.Body, "amount"), option.TotalAmount) // buyer: interest added to the total
			is.Equal(digNum(ch.Body, "payment_method_details.card.installments"), int64(10))
			if payer == "buyer" {
				is.True(option.TotalAmount > 100000)
			} else {
				is.Equal(option.TotalAmount, int64(100000))
			}
			txns := e.Do("GET", "/v1/transactions?limit=100&payment_intent="+id, e.Test, nil).Data()
			is.Equal(len(txns), 10) // one entry per instalment
			var gross, fee, interest, net int64
			seen := map[int64]bool{}
			for _, tx := range txns {
				is.Equal(tx["status"], "pending")
				is.Equal(tx["settled_at"], nil)
				is.Equal(tx["object"], "transaction")
				is.Equal(digNum(tx, "installment_count"), int64(10))
				seen[digNum(tx, "installment")] = true
				gross += digNum(tx, "amount")
				fee += digNum(tx, "fee_amount")
				interest += digNum(tx, "interest_amount")
				net += digNum(tx, "net_amount")
				is.Equal(digNum(tx, "amount")-digNum(tx, "fee_amount")-digNum(tx, "interest_amount"), digNum(tx, "net_amount"))
			}
			is.Equal(len(seen), 10)
			is.Equal(gross, option.TotalAmount)
			is.Equal(fee, plan.Fee(fees.MethodCreditCard, option.TotalAmount))
			if payer == "organization" {
				is.Equal(interest, option.InterestAmount) // the organization's net bears the interest
			} else {
				is.Equal(interest, int64(0))
			}
			is.Equal(net, gross-fee-interest)
			one := e.Do("GET", "/v1/transactions/"+txns[0]["id"].(string), e.Test, nil)
			is.Equal(one.Status, 200)
		})
	}
}

// TestPaymentPreview: max_count and options, the same in both modes (CONTRACT 5, SPEC 4.8).
func TestPaymentPreview(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	test := e.Do("POST", "/v1/payment-previews", e.Test, map[string]any{"amount": 5000, "payment_method_type": "credit_card"})
	is.Equal(test.Status, 200)
	is.Equal(test.Str("object"), "payment_preview")
	is.Equal(test.Body["livemode"], false)
	is.Equal(digNum(test.Body, "installments.max_count"), int64(10))
	opts := dig(test.Body, "installments.options").([]any)
	is.Equal(len(opts), 10)
	is.Equal(digNum(opts[2].(map[string]any), "count"), int64(3))
	live := e.Do("POST", "/v1/payment-previews", e.Live, map[string]any{"amount": 5000, "payment_method_type": "credit_card"})
	is.Equal(live.Status, 200) // no charge, so no activation needed
	is.Equal(live.Body["livemode"], true)
	is.Equal(dig(live.Body, "installments"), dig(test.Body, "installments")) // same options

	buyer := e.Do("POST", "/v1/payment-previews", e.Test, map[string]any{"amount": 10000, "interest_payer": "buyer"})
	o := fees.OptionFor(10000, fees.InterestPayerBuyer, fees.DefaultInstallmentInterestRate, 2)
	second := dig(buyer.Body, "installments.options").([]any)[1].(map[string]any)
	is.Equal(digNum(second, "total_amount"), o.TotalAmount)
	is.Equal(digNum(second, "interest_amount"), o.InterestAmount)
	is.Equal(digNum(second, "installment_amount"), o.InstallmentAmount)

	is.Equal(e.Do("POST", "/v1/payment-previews", e.Test, map[string]any{}).ErrParam(), "amount")
	is.Equal(e.Do("POST", "/v1/payment-previews", e.Test, map[string]any{"amount": 5000, "payment_method_type": "pix"}).ErrParam(), "payment_method_type")
	is.Equal(digNum(e.Do("POST", "/v1/payment-previews", e.Test, map[string]any{"amount": 900}).Body, "installments.max_count"), int64(1))
}

// TestCaptureAndCancel: manual capture full and partial, the 3220 card, cancel rules.
func TestCaptureAndCancel(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.payIntent(e.Test, 10000, map[string]any{"capture_method": "manual"}).Str("id")
	r := e.payConfirm(e.Test, id, map[string]any{"card": payCard("4242424242424242")})
	is.Equal(r.Str("status"), "requires_capture") // manual capture holds every approved card
	is.Equal(digNum(r.Body, "amount_capturable"), int64(10000))
	chID := r.Str("latest_charge")
	ch := e.Do("GET", "/v1/charges/"+chID, e.Test, nil)
	is.Equal(ch.Body["captured"], false)
	is.Equal(ch.Body["paid"], true)
	is.Equal(e.payCount(e.Test, "/v1/transactions?payment_intent="+id), 0) // nothing captured yet

	is.Equal(e.Do("POST", "/v1/payment-intents/"+id+"/capture", e.Test, map[string]any{"amount_to_capture": 20000}).ErrParam(), "amount_to_capture")
	r = e.Do("POST", "/v1/payment-intents/"+id+"/capture", e.Test, map[string]any{"amount_to_capture": 6000})
	is.Equal(r.Status, 200) // partial capture
	is.Equal(r.Str("status"), "succeeded")
	is.Equal(digNum(r.Body, "amount_received"), int64(6000))
	is.Equal(digNum(r.Body, "amount_capturable"), int64(0))
	ch = e.Do("GET", "/v1/charges/"+chID, e.Test, nil)
	is.Equal(ch.Body["captured"], true)
	is.Equal(digNum(ch.Body, "amount_captured"), int64(6000))
	is.Equal(digNum(ch.Body, "amount"), int64(10000))
	captured := e.payEvents(e.Test, "charge.captured", chID)
	is.Equal(len(captured), 1)
	is.Equal(dig(captured[0], "data.previous_attributes.captured"), false)
	succeeded := e.payEvents(e.Test, "payment_intent.succeeded", id)
	is.Equal(digStr(succeeded[0], "data.previous_attributes.status"), "requires_capture")
	is.Equal(e.payCount(e.Test, "/v1/transactions?payment_intent="+id), 1)
	is.Equal(e.Do("POST", "/v1/payment-intents/"+id+"/capture", e.Test, nil).Status, 409) // only once
	is.Equal(e.Do("POST", "/v1/payment-intents/"+id+"/cancel", e.Test, nil).Status, 409)  // not after success

	id = e.payIntent(e.Test, 10000, nil).Str("id")
	r = e.payConfirm(e.Test, id, map[string]any{"card": payCard("4000000000003220")})
	is.Equal(r.Str("status"), "requires_capture") // the capture-required test card
	is.Equal(e.Do("POST", "/v1/payment-intents/"+id+"/cancel", e.Test, map[string]any{"cancellation_reason": "soon"}).ErrParam(), "cancellation_reason")
	r = e.Do("POST", "/v1/payment-intents/"+id+"/cancel", e.Test, map[string]any{"cancellation_reason": "requested_by_customer"})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "canceled")
	is.Equal(r.Str("cancellation_reason"), "requested_by_customer")
	is.True(r.Str("canceled_at") != "")
	is.Equal(len(e.payEvents(e.Test, "payment_intent.canceled", id)), 1)
	is.Equal(e.payConfirm(e.Test, id, map[string]any{"card": payCard("4242424242424242")}).Status, 409) // canceled is final

	id = e.payIntent(e.Test, 10000, nil).Str("id")
	r = e.payConfirm(e.Test, id, map[string]any{"payment_method_type": "pix", "customer_email": "succeed_delayed@example.com"})
	r = e.Do("POST", "/v1/payment-intents/"+id+"/cancel", e.Test, nil)
	is.Equal(r.Str("status"), "canceled") // a waiting PIX can be canceled
	ch = e.Do("GET", "/v1/charges/"+r.Str("latest_charge"), e.Test, nil)
	is.Equal(ch.Str("status"), "failed")
	is.Equal(digStr(ch.Body, "payment_error.code"), "payment_canceled")
	e.Clock.Advance(5 * time.Minute)
	is.NoErr(e.Jobs.RunDue(t.Context()))
	is.Equal(e.Do("GET", "/v1/payment-intents/"+id, e.Test, nil).Str("status"), "canceled") // the delayed rule no longer applies

	id = e.payIntent(e.Test, 10000, nil).Str("id")
	e.payConfirm(e.Test, id, map[string]any{"card": payCard("4000009000000425")})
	is.Equal(e.Do("POST", "/v1/payment-intents/"+id+"/cancel", e.Test, nil).Status, 409) // processing cannot be canceled
}

// TestRefunds: partial and full, over-refund, the charge's refunds envelope, events and ledger.
func TestRefunds(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.payIntent(e.Test, 10000, nil).Str("id")
	chID := e.payConfirm(e.Test, id, map[string]any{"card": payCard("4242424242424242")}).Str("latest_charge")

	r := e.Do("POST", "/v1/refunds", e.Test, map[string]any{"charge": chID, "amount": 3000, "reason": "requested_by_customer", "metadata": map[string]string{"ticket": "9"}})
	is.Equal(r.Status, 200) // partial refund
	is.Equal(r.Str("object"), "refund")
	is.Equal(r.Str("status"), "succeeded")
	is.Equal(digNum(r.Body, "amount"), int64(3000))
	is.Equal(r.Str("payment_intent"), id)
	re1 := r.Str("id")
	ch := e.Do("GET", "/v1/charges/"+chID, e.Test, nil)
	is.Equal(digNum(ch.Body, "amount_refunded"), int64(3000))
	is.Equal(ch.Body["refunded"], false)
	is.Equal(digStr(ch.Body, "refunds.object"), "list")
	is.Equal(digStr(ch.Body, "refunds.url"), "/v1/refunds?charge="+chID)
	is.Equal(len(dig(ch.Body, "refunds.data").([]any)), 1)
	ev := e.payEvents(e.Test, "charge.refunded", chID)
	is.Equal(len(ev), 1)
	is.Equal(dig(ev[0], "data.previous_attributes.amount_refunded"), 0.0)
	is.Equal(len(e.payEvents(e.Test, "refund.created", re1)), 1)

	r = e.Do("POST", "/v1/refunds", e.Test, map[string]any{"charge": chID, "amount": 7001})
	is.Equal(r.Status, 400) // more than remains
	is.Equal(r.ErrParam(), "amount")
	is.Equal(e.Do("POST", "/v1/refunds", e.Test, map[string]any{"charge": chID, "amount": 0}).ErrParam(), "amount")
	is.Equal(e.Do("POST", "/v1/refunds", e.Test, map[string]any{"charge": chID, "reason": "because"}).ErrParam(), "reason")
	r = e.Do("POST", "/v1/refunds", e.Test, map[string]any{"payment_intent": id})
	is.Equal(r.Status, 200) // the rest, by payment intent
	is.Equal(digNum(r.Body, "amount"), int64(7000))
	ch = e.Do("GET", "/v1/charges/"+chID, e.Test, nil)
	is.Equal(ch.Body["refunded"], true)
	is.Equal(digNum(ch.Body, "amount_refunded"), int64(10000))
	r = e.Do("POST", "/v1/refunds", e.Test, map[string]any{"charge": chID})
	is.Equal(r.Status, 400)
	is.Equal(r.ErrCode(), "charge_already_refunded")

	is.Equal(e.payCount(e.Test, "/v1/refunds?charge="+chID), 2)
	is.Equal(e.payCount(e.Test, "/v1/refunds?payment_intent="+id), 2)
	is.Equal(e.Do("GET", "/v1/refunds/"+re1, e.Test, nil).Status, 200)
	refundTxns := e.Do("GET", "/v1/transactions?type=refund&charge="+chID, e.Test, nil).Data()
	is.Equal(len(refundTxns), 2) // a negative ledger entry per refund
	is.Equal(digNum(refundTxns[0], "amount"), int64(-7000))
	is.Equal(digNum(refundTxns[0], "net_amount"), int64(-7000))

	is.Equal(e.Do("POST", "/v1/refunds", e.Test, map[string]any{}).ErrCode(), "parameter_missing")
	held := e.payIntent(e.Test, 10000, map[string]any{"capture_method": "manual"}).Str("id")
	heldCh := e.payConfirm(e.Test, held, map[string]any{"card": payCard("4242424242424242")}).Str("latest_charge")
	is.Equal(e.Do("POST", "/v1/refunds", e.Test, map[string]any{"charge": heldCh}).ErrParam(), "charge") // not captured
	failed := e.payConfirm(e.Test, e.payIntent(e.Test, 10000, nil).Str("id"), map[string]any{"card": payCard("4000000000000002")})
	is.Equal(e.Do("POST", "/v1/refunds", e.Test, map[string]any{"charge": digStr(failed.Body, "error.charge")}).ErrParam(), "charge")
}

// TestConcurrentConfirms: N confirms of one intent make exactly one charge attempt.
func TestConcurrentConfirms(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.payIntent(e.Test, 10000, nil).Str("id")
	const n = 8
	var wg sync.WaitGroup
	statuses := make([]int, n)
	codes := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := e.TryDo("POST", "/v1/payment-intents/"+id+"/confirm", e.Test, map[string]any{"card": payCard("4242424242424242")})
			statuses[i], codes[i], errs[i] = r.Status, r.ErrCode(), err
		}()
	}
	wg.Wait()
	ok := 0
	for i := range n {
		is.NoErr(errs[i])
		if statuses[i] == 200 {
			ok++
			continue
		}
		is.Equal(statuses[i], 409) // the later ones see the first one's state
		is.Equal(codes[i], "payment_intent_unexpected_state")
	}
	is.Equal(ok, 1)                                                        // exactly one attempt
	is.Equal(e.payCount(e.Test, "/v1/charges?payment_intent="+id), 1)      // one charge
	is.Equal(e.payCount(e.Test, "/v1/transactions?payment_intent="+id), 1) // one ledger entry
}

// TestIdempotentConfirm: a retry with the same Idempotency-Key returns the same result and
// charges nothing more, for an approval and for a decline.
func TestIdempotentConfirm(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	for _, number := range []string{"4242424242424242", "4000000000009995"} {
		id := e.payIntent(e.Test, 10000, nil).Str("id")
		body := map[string]any{"card": payCard(number)}
		first := e.payConfirm(e.Test, id, body, "Idempotency-Key", "confirm-"+id)
		again := e.payConfirm(e.Test, id, body, "Idempotency-Key", "confirm-"+id)
		is.Equal(again.Status, first.Status)
		is.Equal(again.Header.Get("Idempotent-Replayed"), "true")
		is.Equal(string(again.Raw), string(first.Raw))                    // the same answer
		is.Equal(e.payCount(e.Test, "/v1/charges?payment_intent="+id), 1) // one charge
	}
}

// TestConcurrentIdempotentConfirms: duplicates of one keyed confirm sent together each get the
// first one's answer or 409 idempotency_key_in_progress, never the answer of running again on the
// state the first one left (409 payment_intent_unexpected_state), and one charge is made.
func TestConcurrentIdempotentConfirms(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	body := map[string]any{"card": payCard("4242424242424242")}
	for range 40 {
		id := e.payIntent(e.Test, 10000, nil).Str("id")
		const n = 16
		var wg sync.WaitGroup
		results := make([]resp, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(time.Duration(i) * 200 * time.Microsecond) // spread over the first one's commit
				results[i], errs[i] = e.TryDo("POST", "/v1/payment-intents/"+id+"/confirm", e.Test, body, "Idempotency-Key", "dup-"+id)
			}()
		}
		wg.Wait()
		ran := 0
		for i, r := range results {
			is.NoErr(errs[i])
			switch {
			case r.Status == 200 && r.Header.Get("Idempotent-Replayed") == "true":
			case r.Status == 200:
				ran++
			case r.Status == 409 && r.ErrCode() == "idempotency_key_in_progress":
			default:
				t.Fatalf("duplicate %d: %d %s", i, r.Status, r.Raw)
			}
		}
		is.Equal(ran, 1)                                                  // one ran, the others replayed or were told to retry
		is.Equal(e.payCount(e.Test, "/v1/charges?payment_intent="+id), 1) // one charge
	}
}

// TestGoldenPaymentObjects: the public shape of a payment intent and a charge.
func TestGoldenPaymentObjects(t *testing.T) {
	e := newEnv(t)
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "ana@example.com", "name": "Ana Souza", "document": "52998224725"})
	id := e.payIntent(e.Test, 25000, map[string]any{"customer": cus.Str("id"), "description": "Pedido 1001", "metadata": map[string]string{"order_id": "1001"},
		"statement_descriptor": "ACME*PEDIDO"}).Str("id")
	card := payCard("4242424242424242")
	card["exp_year"] = 2034
	pi := e.payConfirm(e.Test, id, map[string]any{"card": card, "installments": 3, "customer_phone": "+5511987654321",
		"billing_address": map[string]any{"line1": "Rua Augusta", "number": "1500", "neighborhood": "Consolação", "city": "São Paulo", "state": "SP", "postal_code": "01304001"}})
	ch := e.Do("GET", "/v1/charges/"+pi.Str("latest_charge"), e.Test, nil)
	e.Do("POST", "/v1/refunds", e.Test, map[string]any{"charge": pi.Str("latest_charge"), "amount": 5000})
	refunded := e.Do("GET", "/v1/charges/"+pi.Str("latest_charge"), e.Test, nil)
	for name, r := range map[string]resp{"payment_intent.json": pi, "charge.json": ch, "charge_refunded.json": refunded} {
		t.Run(name, func(t *testing.T) {
			if r.Status != 200 {
				t.Fatalf("%d %s", r.Status, r.Raw)
			}
			checkGolden(t, name, payNormalise(t, r.Raw))
		})
	}
}

var embeddedID = regexp.MustCompile(`\b(pi|ch|pm|cus|re|txn|seti)_[0-9A-Za-z]{24}`)

// payNormalise replaces the values that change on every run (secrets, keyed fingerprints,
// authorization codes, ids inside URLs) before checkGolden normalises ids and timestamps.
func payNormalise(t *testing.T, raw []byte) []byte {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, val := range x {
				switch k {
				case "client_secret", "fingerprint", "authorization_code":
					if val != nil {
						x[k] = "<" + k + ">"
					}
				default:
					x[k] = walk(val)
				}
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case string:
			if len(x) > 30 {
				return embeddedID.ReplaceAllString(x, "${1}_*")
			}
		}
		return v
	}
	out, _ := json.Marshal(walk(v))
	return out
}
