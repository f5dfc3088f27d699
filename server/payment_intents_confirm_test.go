package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/server/payments"
)

// POST /v1/payment-intents with confirm: true creates and confirms in one request: the same
// rules, events and objects as create followed by confirm.

// orgEventTypes lists the types of every event of token's organization, oldest first.
func (e *testEnv) orgEventTypes(token string) []string {
	e.t.Helper()
	r := e.Do("GET", "/v1/events?limit=100", token, nil)
	if r.Status != 200 {
		e.t.Fatalf("list events: %d %s", r.Status, r.Raw)
	}
	var types []string
	for _, ev := range r.Data() {
		types = append(types, ev["type"].(string))
	}
	slices.Reverse(types)
	return types
}

var (
	idPattern   = regexp.MustCompile(`\b([a-z]+)_[A-Za-z0-9]{24}\b`)
	timePattern = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
	sigPattern  = regexp.MustCompile(`([?&]s=)[A-Za-z0-9_-]+`)
	// A client secret's random part, and a BR Code (it holds the seller's name and its txid).
	secretPattern = regexp.MustCompile(`_secret_[A-Za-z0-9]+`)
	brCodePattern = regexp.MustCompile(`"000201[^"]*"`)
	// A card's authorization code is random; its fingerprint is keyed per organization.
	randomPattern = regexp.MustCompile(`"(authorization_code|fingerprint)":"[^"]*"`)
)

// normalized is an object's JSON with its ids, secrets, times and signatures blanked, so the
// objects of two flows compare equal when they differ only by those.
func normalized(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	s := secretPattern.ReplaceAllString(string(b), "_secret_S")
	s = brCodePattern.ReplaceAllString(s, `"BRCODE"`)
	s = randomPattern.ReplaceAllString(s, `"${1}":"R"`)
	s = idPattern.ReplaceAllString(s, "${1}_X")
	s = regexp.MustCompile(`\b([a-z]+)_[A-Za-z0-9]{24}_secret_S`).ReplaceAllString(s, "${1}_X_secret_S")
	s = timePattern.ReplaceAllString(s, "T")
	return sigPattern.ReplaceAllString(s, "${1}S")
}

// paidObjects is what a card payment leaves: the intent, its charge and its ledger entries.
func (e *testEnv) paidObjects(token, piID string) (pi, ch map[string]any, txns []map[string]any) {
	e.t.Helper()
	pi = e.Do("GET", "/v1/payment-intents/"+piID, token, nil).Body
	ch = e.Do("GET", "/v1/charges/"+pi["latest_charge"].(string), token, nil).Body
	return pi, ch, e.Do("GET", "/v1/transactions?payment_intent="+piID, token, nil).Data()
}

func TestCreateWithConfirmIsTheTwoCallsInOne(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	params := map[string]any{"amount": 25000, "description": "Plano anual", "metadata": map[string]string{"order": "42"}}
	confirm := map[string]any{"card": payCard("4242424242424242"), "installments": 3, "customer_email": "ana@example.com"}

	// Two calls, in one organization.
	_, two := e.NewOrg("Duas Chamadas", false)
	pi2 := e.payIntent(two, 25000, map[string]any{"description": "Plano anual", "metadata": map[string]string{"order": "42"}})
	r2 := e.payConfirm(two, pi2.Str("id"), confirm)
	is.Equal(r2.Status, 200)

	// One call, in another.
	_, one := e.NewOrg("Uma Chamada", false)
	body := map[string]any{"confirm": true}
	for k, v := range params {
		body[k] = v
	}
	for k, v := range confirm {
		body[k] = v
	}
	r1 := e.Do("POST", "/v1/payment-intents", one, body)
	is.Equal(r1.Status, 200) // created and confirmed
	is.Equal(r1.Str("status"), "succeeded")
	is.Equal(digNum(r1.Body, "amount_received"), digNum(r2.Body, "amount_received"))
	is.Equal(normalized(t, r1.Body), normalized(t, r2.Body)) // the same answer as the confirm

	// The same events in the same order: payment_intent.created, then the confirmation's.
	types := e.orgEventTypes(one)
	is.Equal(types, e.orgEventTypes(two))
	is.Equal(types[0], "payment_intent.created")
	is.True(slices.Contains(types, "charge.succeeded"))
	is.Equal(types[len(types)-1], "payment_intent.succeeded")
	created := e.payEvents(one, "payment_intent.created", r1.Str("id"))
	is.Equal(len(created), 1)
	is.Equal(digStr(created[0], "data.object.status"), "requires_payment_method") // created as it was before the confirmation
	succeeded := e.payEvents(one, "payment_intent.succeeded", r1.Str("id"))
	is.Equal(len(succeeded), 1)
	is.Equal(normalized(t, dig(succeeded[0], "data.previous_attributes")),
		normalized(t, dig(e.payEvents(two, "payment_intent.succeeded", pi2.Str("id"))[0], "data.previous_attributes")))
	is.Equal(digStr(created[0], "request.id"), digStr(succeeded[0], "request.id")) // one request

	// The same intent, charge and ledger entries.
	piA, chA, txA := e.paidObjects(one, r1.Str("id"))
	piB, chB, txB := e.paidObjects(two, pi2.Str("id"))
	is.Equal(normalized(t, piA), normalized(t, piB))
	is.Equal(normalized(t, chA), normalized(t, chB))
	is.Equal(normalized(t, txA), normalized(t, txB))
	is.True(len(txA) > 0) // ledger entries written (one per instalment)
	is.Equal(e.payCount(one, "/v1/charges"), 1)

	// The buyer gets the receipt, as after a confirm.
	is.Equal(len(e.mailbox(one, "to=ana@example.com&kind=receipt")), 1)
	is.Equal(len(e.mailbox(two, "to=ana@example.com&kind=receipt")), 1)

	// Manual capture: requires_capture, as a confirm answers.
	r := e.Do("POST", "/v1/payment-intents", one, map[string]any{"amount": 5000, "capture_method": "manual", "confirm": true, "card": payCard("4242424242424242")})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "requires_capture")
	is.Equal(e.Do("POST", "/v1/payment-intents/"+r.Str("id")+"/capture", one, nil).Str("status"), "succeeded")

	// With a customer: the buyer's data comes from it (read once, at create), as after a confirm.
	customer := map[string]any{"name": "Ana Souza", "email": "ana.souza@example.com", "phone": "+5511999990000",
		"address": map[string]any{"line1": "Rua Augusta", "number": "100", "city": "São Paulo", "state": "SP", "postal_code": "01305-000", "country": "BR"}}
	cusOne := e.Do("POST", "/v1/customers", one, customer)
	is.Equal(cusOne.Status, 200)
	cusTwo := e.Do("POST", "/v1/customers", two, customer)
	is.Equal(cusTwo.Status, 200)
	r = e.Do("POST", "/v1/payment-intents", one, map[string]any{"amount": 7000, "customer": cusOne.Str("id"), "confirm": true, "card": payCard("4242424242424242")})
	is.Equal(r.Status, 200)
	pi2 = e.payIntent(two, 7000, map[string]any{"customer": cusTwo.Str("id")})
	r2 = e.payConfirm(two, pi2.Str("id"), map[string]any{"card": payCard("4242424242424242")})
	is.Equal(r2.Status, 200)
	piA, chA, _ = e.paidObjects(one, r.Str("id"))
	piB, chB, _ = e.paidObjects(two, pi2.Str("id"))
	is.Equal(normalized(t, piA), normalized(t, piB))
	is.Equal(normalized(t, chA), normalized(t, chB))
	is.Equal(digStr(chA, "billing_details.email"), "ana.souza@example.com")
	is.Equal(digStr(chA, "billing_details.address.city"), "São Paulo")

	// confirm: false is a plain create.
	r = e.Do("POST", "/v1/payment-intents", one, map[string]any{"amount": 5000, "confirm": false})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "requires_payment_method")
}

func TestCreateWithConfirmDeclinedKeepsTheIntent(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	r := e.Do("POST", "/v1/payment-intents", e.Test, map[string]any{"amount": 5000, "confirm": true, "card": payCard("4000000000000002")})
	is.Equal(r.Status, 402) // declined
	is.Equal(r.ErrType(), "card_error")
	is.Equal(r.ErrCode(), "generic_decline")
	id := digStr(r.Body, "error.payment_intent.id")
	is.True(id != "") // the error carries the created intent
	is.Equal(digStr(r.Body, "error.payment_intent.status"), "requires_payment_method")
	is.Equal(digStr(r.Body, "error.payment_intent.last_payment_error.code"), "generic_decline")
	chID := digStr(r.Body, "error.charge")

	pi := e.Do("GET", "/v1/payment-intents/"+id, e.Test, nil)
	is.Equal(pi.Status, 200) // kept
	is.Equal(pi.Str("latest_charge"), chID)
	ch := e.Do("GET", "/v1/charges/"+chID, e.Test, nil)
	is.Equal(ch.Str("status"), "failed") // the failed charge is kept
	is.Equal(e.orgEventTypes(e.Test), []string{"payment_intent.created", "charge.failed", "payment_intent.payment_failed"})

	// The intent takes another card, as after a declined confirm.
	ok := e.payConfirm(e.Test, id, map[string]any{"card": payCard("4242424242424242")})
	is.Equal(ok.Status, 200)
	is.Equal(ok.Str("status"), "succeeded")
}

func TestCreateWithConfirmRefusalCreatesNothing(t *testing.T) {
	e := newEnv(t)
	_, cmp := e.NewOrg("Comparação", false)
	boletoNoDocument := boletoBuyer("ana@example.com")
	delete(boletoNoDocument, "customer_document")
	cases := []struct {
		name    string
		body    map[string]any
		status  int
		code    string
		param   string
		confirm bool // the confirm endpoint answers the same for these confirm parameters
	}{
		{"bad card number", map[string]any{"card": payCard("4242424242424241")}, 402, "invalid_number", "card[number]", true},
		{"expired card", map[string]any{"card": map[string]any{"number": "4242424242424242", "exp_month": 1, "exp_year": 2020, "cvc": "123"}}, 402, "expired_card", "card[exp_month]", true},
		{"too many installments", map[string]any{"card": payCard("4242424242424242"), "installments": 13}, 400, "invalid_request", "installments", true},
		{"no card", map[string]any{"payment_method_type": "credit_card"}, 400, "parameter_missing", "card", true},
		{"no method", map[string]any{}, 400, "parameter_missing", "payment_method_type", true},
		{"unknown method", map[string]any{"payment_method_type": "cash"}, 400, "invalid_request", "payment_method_type", true},
		{"unknown saved card", map[string]any{"payment_method": "pm_doesnotexist"}, 404, "resource_missing", "payment_method", true},
		{"boleto without document", boletoNoDocument, 400, "parameter_missing", "customer_document", true},
		{"bad e-mail", map[string]any{"payment_method_type": "pix", "customer_email": "not-an-email"}, 400, "invalid_request", "customer_email", true},
		{"client_secret", map[string]any{"card": payCard("4242424242424242"), "client_secret": "pi_x_secret_y"}, 400, "invalid_request", "client_secret", false},
		{"no amount", map[string]any{"amount": nil, "card": payCard("4242424242424242")}, 400, "parameter_missing", "amount", false},
		{"card wrong type", map[string]any{"card": "4242424242424242"}, 400, "invalid_request", "card", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			e := withT(e, t)
			body := map[string]any{"amount": 5000, "confirm": true}
			for k, v := range c.body {
				if v == nil {
					delete(body, k)
				} else {
					body[k] = v
				}
			}
			r := e.Do("POST", "/v1/payment-intents", e.Test, body)
			is.Equal(r.Status, c.status)
			is.Equal(r.ErrCode(), c.code)
			is.Equal(r.ErrParam(), c.param)
			is.Equal(dig(r.Body, "error.payment_intent"), nil) // no intent was kept to name
			if c.confirm {
				// The confirm endpoint answers the same on an intent made by a plain create.
				pi := e.payIntent(cmp, 5000, nil)
				delete(body, "amount")
				delete(body, "confirm")
				rc := e.payConfirm(cmp, pi.Str("id"), body)
				is.Equal(rc.Status, r.Status)
				is.Equal(rc.ErrCode(), r.ErrCode())
				is.Equal(rc.ErrParam(), r.ErrParam())
			}
		})
	}
	is := is.New(t)
	is.Equal(e.payCount(e.Test, "/v1/payment-intents"), 0) // nothing created
	is.Equal(e.payCount(e.Test, "/v1/charges"), 0)
	is.Equal(e.payCount(e.Test, "/v1/payment-methods"), 0)
	is.Equal(len(e.orgEventTypes(e.Test)), 0)
}

func TestCreateConfirmParamsNeedConfirm(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	sent := map[string]any{
		"card": payCard("4242424242424242"), "payment_method": "pm_x", "payment_method_type": "pix", "installments": 2,
		"customer_email": "ana@example.com", "customer_name": "Ana", "customer_document": "52998224725", "customer_phone": "+5511999999999",
		"billing_address": map[string]any{"line1": "Rua A"}, "boleto_due_date": "2030-01-10", "save_payment_method": false, "client_secret": "x",
	}
	for k, v := range sent {
		for _, confirm := range []any{nil, false} {
			body := map[string]any{"amount": 5000, k: v}
			if confirm != nil {
				body["confirm"] = confirm
			}
			r := e.Do("POST", "/v1/payment-intents", e.Test, body)
			is.Equal(r.Status, 400)
			is.Equal(r.ErrCode(), "invalid_request")
			is.Equal(r.ErrParam(), k) // names the parameter that needs confirm
		}
	}
	// Unknown parameters are refused as before; confirm must be a boolean.
	r := e.Do("POST", "/v1/payment-intents", e.Test, map[string]any{"amount": 5000, "return_url": "https://example.com"})
	is.Equal(r.Status, 400)
	is.Equal(r.ErrParam(), "return_url")
	r = e.Do("POST", "/v1/payment-intents", e.Test, map[string]any{"amount": 5000, "confirm": "yes"})
	is.Equal(r.Status, 400)
	is.Equal(r.ErrParam(), "confirm")
	// Update is not a confirmation: confirm is unknown there.
	pi := e.payIntent(e.Test, 5000, nil)
	r = e.Do("POST", "/v1/payment-intents/"+pi.Str("id"), e.Test, map[string]any{"confirm": true})
	is.Equal(r.Status, 400)
	is.Equal(r.ErrParam(), "confirm")
	is.Equal(e.payCount(e.Test, "/v1/payment-intents"), 1) // only the plain create
}

func TestCreateWithConfirmIdempotent(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	body := map[string]any{"amount": 7000, "confirm": true, "card": payCard("4242424242424242")}
	first := e.Do("POST", "/v1/payment-intents", e.Test, body, "Idempotency-Key", "order-1")
	is.Equal(first.Status, 200)
	again := e.Do("POST", "/v1/payment-intents", e.Test, body, "Idempotency-Key", "order-1")
	is.Equal(again.Status, 200)
	is.Equal(again.Header.Get("Idempotent-Replayed"), "true")
	is.Equal(string(again.Raw), string(first.Raw))         // the same answer
	is.Equal(e.payCount(e.Test, "/v1/payment-intents"), 1) // one intent
	is.Equal(e.payCount(e.Test, "/v1/charges"), 1)         // charged once

	// A declined attempt replays its 402 without a second charge.
	decl := map[string]any{"amount": 7000, "confirm": true, "card": payCard("4000000000000002")}
	d1 := e.Do("POST", "/v1/payment-intents", e.Test, decl, "Idempotency-Key", "order-2")
	d2 := e.Do("POST", "/v1/payment-intents", e.Test, decl, "Idempotency-Key", "order-2")
	is.Equal(d1.Status, 402)
	is.Equal(d2.Status, 402)
	is.Equal(string(d2.Raw), string(d1.Raw))
	is.Equal(e.payCount(e.Test, "/v1/charges"), 2)

	// Another body under the same key is refused.
	body["amount"] = 7001
	r := e.Do("POST", "/v1/payment-intents", e.Test, body, "Idempotency-Key", "order-1")
	is.Equal(r.Status, 400)
	is.Equal(r.ErrCode(), "idempotency_key_reused")
}

func TestCreateWithConfirmPixAndBoleto(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, two := e.NewOrg("Duas Chamadas", false)
	_, one := e.NewOrg("Uma Chamada", false)

	pix := map[string]any{"payment_method_type": "pix", "customer_email": "ana@example.com"}
	body := map[string]any{"amount": 4000, "confirm": true}
	for k, v := range pix {
		body[k] = v
	}
	r := e.Do("POST", "/v1/payment-intents", one, body)
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "pending") // waits for the PIX
	is.True(digStr(r.Body, "next_action.pix.code") != "")
	rc := e.payConfirm(two, e.payIntent(two, 4000, nil).Str("id"), pix)
	is.Equal(rc.Status, 200)
	is.Equal(normalized(t, r.Body), normalized(t, rc.Body))
	is.Equal(e.orgEventTypes(one), e.orgEventTypes(two))
	is.Equal(e.orgEventTypes(one)[0], "payment_intent.created")

	// The PIX is paid: the intent succeeds as after a confirm.
	s := e.Do("POST", "/v1/test-helpers/payment-intents/"+r.Str("id")+"/succeed", one, nil)
	is.Equal(s.Status, 200)
	is.Equal(s.Str("status"), "succeeded")

	boleto := boletoBuyer("bia@example.com")
	boleto["amount"], boleto["confirm"] = 9000, true
	b := e.Do("POST", "/v1/payment-intents", one, boleto)
	is.Equal(b.Status, 200)
	is.Equal(b.Str("status"), "pending")
	is.True(digStr(b.Body, "next_action.boleto.barcode") != "" || dig(b.Body, "next_action.boleto") != nil)
}

func TestCreateWithConfirmLiveRules(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	body := map[string]any{"amount": 5000, "confirm": true, "card": payCard("4242424242424242")}
	r := e.Do("POST", "/v1/payment-intents", e.Live, body)
	is.Equal(r.Status, 409) // the organization is not activated
	is.Equal(r.ErrCode(), "organization_not_activated")
	is.Equal(e.payCount(e.Live, "/v1/payment-intents"), 0) // nothing created

	// Too many instalments is the same 400 in both modes, before the activation.
	tooMany := map[string]any{"amount": 5000, "confirm": true, "card": payCard("4242424242424242"), "installments": 13}
	is.Equal(e.Do("POST", "/v1/payment-intents", e.Live, tooMany).ErrParam(), "installments")

	e.activate(t)
	r = e.Do("POST", "/v1/payment-intents", e.Live, body)
	is.Equal(r.Status, 503) // no live processor configured
	is.Equal(r.ErrCode(), "processor_unavailable")
	is.Equal(e.payCount(e.Live, "/v1/payment-intents"), 0)
	is.Equal(e.payCount(e.Live, "/v1/charges"), 0)
}

// A live network processor is called between two runs of the request (reserve, call, apply):
// the second run confirms the intent the first created, and never creates another.
func TestLiveCreateWithConfirm(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	body := map[string]any{"amount": 30000, "confirm": true, "card": payCard(liveApprove), "installments": 3}
	r := e.Do("POST", "/v1/payment-intents", e.Live, body, "Idempotency-Key", "live-1")
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "succeeded")
	is.Equal(e.Cielo.ChargeCount(), 1)
	again := e.Do("POST", "/v1/payment-intents", e.Live, body, "Idempotency-Key", "live-1")
	is.Equal(string(again.Raw), string(r.Raw)) // replayed
	is.Equal(e.Cielo.ChargeCount(), 1)         // not charged twice
	is.Equal(e.payCount(e.Live, "/v1/payment-intents"), 1)
	is.Equal(e.orgEventTypes(e.Live)[0], "payment_intent.created")
	is.Equal(len(e.payEvents(e.Live, "payment_intent.succeeded", r.Str("id"))), 1)

	d := e.Do("POST", "/v1/payment-intents", e.Live, map[string]any{"amount": 5000, "confirm": true, "card": payCard(liveDecline)})
	is.Equal(d.Status, 402)
	is.Equal(d.ErrCode(), "generic_decline")
	is.Equal(digStr(d.Body, "error.payment_intent.status"), "requires_payment_method")
	is.Equal(e.payCount(e.Live, "/v1/payment-intents"), 2) // the declined intent is kept
	e.noSecretsInLogs(t, liveApprove)
}

// crashOnce is a card processor whose first authorization kills the request before it is sent,
// as a crash of troco between the reservation and the call would.
type crashOnce struct {
	payments.Processor
	crashed atomic.Bool
}

func (c *crashOnce) AuthorizeCard(ctx context.Context, req payments.CardRequest) (payments.CardResult, error) {
	if c.crashed.CompareAndSwap(false, true) {
		panic(http.ErrAbortHandler)
	}
	return c.Processor.AuthorizeCard(ctx, req)
}

// A retry of a one-request live payment whose first attempt died between the reservation and the
// processor's answer replays the intent that attempt created: it never creates or charges another.
func TestLiveCreateWithConfirmRetryAfterCrash(t *testing.T) {
	is := is.New(t)
	e := newLiveEnvWrapped(t, 2*time.Second, func(p payments.Processor) payments.Processor { return &crashOnce{Processor: p} })
	body := map[string]any{"amount": 12000, "confirm": true, "card": payCard(liveApprove)}
	_, err := e.TryDo("POST", "/v1/payment-intents", e.Live, body, "Idempotency-Key", "crash-1")
	is.True(err != nil) // the connection died with the request
	ids := e.Do("GET", "/v1/payment-intents", e.Live, nil).IDs()
	is.Equal(len(ids), 1) // the first run's intent, reserved
	r := e.Do("POST", "/v1/payment-intents", e.Live, body, "Idempotency-Key", "crash-1")
	is.Equal(r.Status, 200)
	is.Equal(r.Header.Get("Idempotent-Replayed"), "true")
	is.Equal(r.Str("id"), ids[0]) // the same intent
	is.Equal(r.Str("status"), "processing")
	is.Equal(e.payCount(e.Live, "/v1/payment-intents"), 1) // no second intent
	is.Equal(e.Cielo.ChargeCount(), 0)                     // and no charge

	// A request without a crash: the final answer replaces the provisional one.
	ok := e.Do("POST", "/v1/payment-intents", e.Live, body, "Idempotency-Key", "crash-2")
	is.Equal(ok.Status, 200)
	is.Equal(ok.Str("status"), "succeeded")
	again := e.Do("POST", "/v1/payment-intents", e.Live, body, "Idempotency-Key", "crash-2")
	is.Equal(string(again.Raw), string(ok.Raw))
	is.Equal(e.Cielo.ChargeCount(), 1)
}

// holdFirst is a card processor whose first authorization waits until released, as a slow
// acquirer would: the request that made it is still running meanwhile.
type holdFirst struct {
	payments.Processor
	started atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (h *holdFirst) AuthorizeCard(ctx context.Context, req payments.CardRequest) (payments.CardResult, error) {
	if h.started.CompareAndSwap(false, true) {
		close(h.entered)
		<-h.release
	}
	return h.Processor.AuthorizeCard(ctx, req)
}

// A duplicate of a one-request live payment that arrives while the first is still waiting for the
// processor is told to retry later, as a duplicate confirm is: it is not answered the intent the
// first run stored for a crash (processing), which would be a replay of an answer the key never
// gave (the first request answers succeeded).
func TestLiveCreateWithConfirmDuplicateWhileProcessorAnswers(t *testing.T) {
	is := is.New(t)
	hold := &holdFirst{entered: make(chan struct{}), release: make(chan struct{})}
	e := newLiveEnvWrapped(t, 5*time.Second, func(p payments.Processor) payments.Processor {
		hold.Processor = p
		return hold
	})
	body := map[string]any{"amount": 12000, "confirm": true, "card": payCard(liveApprove)}
	type answer struct {
		r   resp
		err error
	}
	first := make(chan answer, 1)
	go func() {
		r, err := e.TryDo("POST", "/v1/payment-intents", e.Live, body, "Idempotency-Key", "slow-1")
		first <- answer{r, err}
	}()
	select {
	case <-hold.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the processor was never called")
	}
	dup := e.Do("POST", "/v1/payment-intents", e.Live, body, "Idempotency-Key", "slow-1")
	close(hold.release)
	is.Equal(dup.Status, 409) // still being processed: retry later
	is.Equal(dup.ErrCode(), "idempotency_key_in_progress")
	is.Equal(dup.Header.Get("Idempotent-Replayed"), "")

	a := <-first
	is.NoErr(a.err)
	is.Equal(a.r.Status, 200)
	is.Equal(a.r.Str("status"), "succeeded")
	again := e.Do("POST", "/v1/payment-intents", e.Live, body, "Idempotency-Key", "slow-1")
	is.Equal(again.Header.Get("Idempotent-Replayed"), "true")
	is.Equal(string(again.Raw), string(a.r.Raw)) // the first request's answer
	is.Equal(e.Cielo.ChargeCount(), 1)
	is.Equal(e.payCount(e.Live, "/v1/payment-intents"), 1)
}
