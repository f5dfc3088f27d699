package server_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/db"
	"troco/server/domain"
	"troco/server/payments"
)

// Live setup intents: the card is saved at Cielo (Cartão Protegido, POST /1/card, against the
// conformance double over HTTPS) on the two-phase path, its token stored sealed; the saved card
// then pays by token.

const liveSecond = "5555555555554444" // last digit 4: Cielo approves

func (e *liveEnv) sealedToken(pm string) (string, error) {
	var sealed string
	err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		var err error
		sealed, err = tx.FindCardToken(domain.Scope{OrgID: e.Org.ID, Livemode: true}, pm)
		return err
	})
	return sealed, err
}

func TestLiveSetupIntentSavesTheCardAtCielo(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	cus := e.payCustomer(e.Live, "ana@example.com")
	si := e.Do("POST", "/v1/setup-intents", e.Live, map[string]any{"customer": cus})
	is.Equal(si.Status, 200)
	r := e.Do("POST", "/v1/setup-intents/"+si.Str("id")+"/confirm", e.Live, map[string]any{"card": payCard(liveApprove), "client_secret": si.Str("client_secret")})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "succeeded")
	pm := r.Str("payment_method")
	is.Equal(e.Do("GET", "/v1/payment-methods/"+pm, e.Live, nil).Str("customer"), cus)
	is.Equal(e.Cielo.TokenCount(), 1)
	is.Equal(e.Cielo.ChargeCount(), 0) // saving charges nothing
	sealed, err := e.sealedToken(pm)
	is.NoErr(err)
	is.True(strings.HasPrefix(sealed, "v1:")) // the CardToken is stored sealed
	is.Equal(len(e.payEvents(e.Live, "setup_intent.succeeded", si.Str("id"))), 1)
	is.Equal(len(e.payEvents(e.Live, "payment_method.attached", pm)), 1)
	// Confirming again is refused; the processor is not called again.
	is.Equal(e.Do("POST", "/v1/setup-intents/"+si.Str("id")+"/confirm", e.Live, map[string]any{"card": payCard(liveApprove)}).Status, 409)
	is.Equal(e.Cielo.TokenCount(), 1)

	// The saved card pays by its token: a subscription's first invoice.
	price := e.coPrice(e.Live, "Plano", 4990, map[string]any{"interval": "month"})
	body := map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pm}
	s := e.Do("POST", "/v1/subscriptions", e.Live, body, "Idempotency-Key", "live-sub-1")
	is.Equal(s.Status, 200)
	is.Equal(s.Str("status"), "active") // the create answers after the charge is applied
	is.Equal(e.Do("GET", "/v1/invoices/"+s.Str("latest_invoice"), e.Live, nil).Str("status"), "paid")
	is.Equal(e.Cielo.ChargeCount(), 1)
	again := e.Do("POST", "/v1/subscriptions", e.Live, body, "Idempotency-Key", "live-sub-1")
	is.Equal(again.Header.Get("Idempotent-Replayed"), "true") // the stored answer is the final one
	is.Equal(again.Str("id"), s.Str("id"))
	is.Equal(again.Str("status"), "active")
	is.Equal(e.Cielo.ChargeCount(), 1)
	masked, byToken := e.Cielo.LastSaleCard()
	is.True(byToken)
	is.True(strings.HasSuffix(masked, "1111"))
	e.noSecretsInLogs(t, liveApprove)
	is.True(!strings.Contains(e.Logs.String(), strings.TrimPrefix(sealed, "v1:")))
}

// TestLiveSetupIntentRefusedOrUnreachable: Cielo refusing the card data is a 402 that names it
// and leaves the setup intent to retry; Cielo down (connection refused, or 503) is a
// processing_error with nothing saved; a live payment method that Cielo never saved cannot be
// set up, and a card brand Cielo does not take is declined without a call.
func TestLiveSetupIntentRefusedOrUnreachable(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	cus := e.payCustomer(e.Live, "ana@example.com")
	si := e.Do("POST", "/v1/setup-intents", e.Live, map[string]any{"customer": cus}).Str("id")

	e.Cielo.RefuseNextTokens(1)
	r := e.Do("POST", "/v1/setup-intents/"+si+"/confirm", e.Live, map[string]any{"card": payCard(liveApprove)})
	is.Equal(r.Status, 402)
	is.Equal(r.ErrCode(), "invalid_request")
	is.True(strings.Contains(digStr(r.Body, "error.message"), "could not be saved"))
	is.Equal(digStr(r.Body, "error.setup_intent.status"), "requires_payment_method")
	is.Equal(digStr(r.Body, "error.setup_intent.last_setup_error.code"), "invalid_request")
	is.Equal(len(e.payEvents(e.Live, "setup_intent.setup_failed", si)), 1)
	is.Equal(e.Cielo.TokenCount(), 0)
	is.Equal(len(e.Do("GET", "/v1/payment-methods?customer="+cus, e.Live, nil).Data()), 0) // nothing attached

	e.Cielo.SetUnavailable(true)
	r = e.Do("POST", "/v1/setup-intents/"+si+"/confirm", e.Live, map[string]any{"card": payCard(liveApprove)})
	is.Equal(r.Status, 402)
	is.Equal(r.ErrCode(), "processing_error")
	is.Equal(digStr(r.Body, "error.setup_intent.status"), "requires_payment_method")
	e.Cielo.SetUnavailable(false)

	e.CieloSrv.Close()
	r = e.Do("POST", "/v1/setup-intents/"+si+"/confirm", e.Live, map[string]any{"card": payCard(liveApprove)})
	is.Equal(r.Status, 402)
	is.Equal(r.ErrCode(), "processing_error")
	is.Equal(e.Do("GET", "/v1/setup-intents/"+si, e.Live, nil).Str("status"), "requires_payment_method")
	is.Equal(len(e.payEvents(e.Live, "setup_intent.setup_failed", si)), 3)

	// A live payment method never saved at Cielo (created without a payment) cannot be set up.
	pm := e.Do("POST", "/v1/payment-methods", e.Live, map[string]any{"type": "credit_card", "card": payCard(liveApprove)})
	is.Equal(pm.Status, 200)
	r = e.Do("POST", "/v1/setup-intents/"+si+"/confirm", e.Live, map[string]any{"payment_method": pm.Str("id")})
	is.Equal(r.Status, 400)
	is.Equal(r.ErrParam(), "payment_method")
	r = e.Do("POST", "/v1/payment-methods/"+pm.Str("id")+"/attach", e.Live, map[string]any{"customer": cus})
	is.Equal(r.Status, 400)
	is.True(strings.Contains(digStr(r.Body, "error.message"), "setup intent"))
}

// saveFails is a card connector whose save answer is lost (an error that is not "not sent"):
// the call stays reserved until the reconciliation settles it.
type saveFails struct{ payments.Processor }

func (saveFails) SaveCard(context.Context, payments.SaveCardRequest) (payments.SaveCardResult, error) {
	return payments.SaveCardResult{}, errors.New("connection reset after sending")
}

func TestLiveSetupIntentAnswerLostIsFailedByReconciliation(t *testing.T) {
	is := is.New(t)
	e := newLiveEnvWrapped(t, 2*time.Second, func(p payments.Processor) payments.Processor { return saveFails{p} })
	si := e.Do("POST", "/v1/setup-intents", e.Live, nil).Str("id")
	r := e.Do("POST", "/v1/setup-intents/"+si+"/confirm", e.Live, map[string]any{"card": payCard(liveApprove)})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "processing") // the answer is unknown
	is.Equal(e.Do("POST", "/v1/setup-intents/"+si+"/cancel", e.Live, nil).Status, 409)
	// Confirming again while processing answers the same processing setup intent.
	is.Equal(e.Do("POST", "/v1/setup-intents/"+si+"/confirm", e.Live, map[string]any{"card": payCard(liveApprove)}).Str("status"), "processing")
	e.reconcile(payments.UnknownAfter + time.Minute)
	got := e.Do("GET", "/v1/setup-intents/"+si, e.Live, nil)
	is.Equal(got.Str("status"), "requires_payment_method")
	is.Equal(digStr(got.Body, "last_setup_error.code"), "processing_error")
	is.Equal(len(e.payEvents(e.Live, "setup_intent.setup_failed", si)), 1)
}

// TestLivePortalReplacesTheCardAndTheRenewalChargesIt: in live mode the customer portal saves
// the new card at Cielo and makes it the subscription's default; the next renewal charges it by
// its token. A card Cielo refuses changes nothing and says why.
func TestLivePortalReplacesTheCardAndTheRenewalChargesIt(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	cus := e.payCustomer(e.Live, "ana@example.com")
	si := e.Do("POST", "/v1/setup-intents", e.Live, map[string]any{"customer": cus}).Str("id")
	pm := e.Do("POST", "/v1/setup-intents/"+si+"/confirm", e.Live, map[string]any{"card": payCard(liveApprove)}).Str("payment_method")
	price := e.coPrice(e.Live, "Plano", 4990, map[string]any{"interval": "month"})
	s := e.Do("POST", "/v1/subscriptions", e.Live, map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pm})
	is.Equal(s.Str("status"), "active")
	sub := s.Str("id")

	ps := e.Do("POST", "/v1/customer-portal-sessions", e.Live, map[string]any{"customer": cus, "return_url": "https://acme.example/conta"})
	is.Equal(ps.Status, 200)
	u, _ := url.Parse(ps.Str("url"))
	b := e.newBrowser(t)
	home := b.get(b.get(u.RequestURI()).Location)
	is.Equal(home.Status, 200)
	csrf := home.hidden().Get("csrf")

	form := url.Values{"csrf": {csrf}, "number": {"5555 5555 5555 4444"}, "exp_month": {"12"}, "exp_year": {"39"}, "cvc": {"123"}, "holder_name": {"Ana Souza"}}
	e.Cielo.RefuseNextTokens(1)
	res := b.post("/portal/card", form)
	is.Equal(res.Status, 303)
	is.True(strings.Contains(res.Location, "e=invalid_request"))
	is.Equal(e.Do("GET", "/v1/subscriptions/"+sub, e.Live, nil).Str("default_payment_method"), pm) // unchanged
	is.True(strings.Contains(b.get(res.Location).Body, "Os dados do cartão foram recusados"))

	res = b.post("/portal/card", form)
	is.Equal(res.Status, 303)
	is.True(strings.Contains(res.Location, "m=card_saved"))
	newPM := e.Do("GET", "/v1/subscriptions/"+sub, e.Live, nil).Str("default_payment_method")
	is.True(newPM != pm)
	_, err := e.sealedToken(newPM)
	is.NoErr(err)
	is.Equal(e.Cielo.TokenCount(), 2)
	is.True(strings.Contains(b.get("/portal").textOf("portal-card"), "4444"))

	charges := e.Cielo.ChargeCount()
	got := e.Do("GET", "/v1/subscriptions/"+sub, e.Live, nil)
	e.Clock.Advance(got.Time("current_period_end").Sub(e.Clock.Now()) + time.Second)
	is.NoErr(e.Jobs.RunDue(context.Background()))
	got = e.Do("GET", "/v1/subscriptions/"+sub, e.Live, nil)
	is.Equal(got.Str("status"), "active")
	inv := e.Do("GET", "/v1/invoices/"+got.Str("latest_invoice"), e.Live, nil)
	is.Equal(inv.Str("status"), "paid")
	is.Equal(inv.Str("billing_reason"), "subscription_cycle")
	is.Equal(e.Cielo.ChargeCount(), charges+1)
	masked, byToken := e.Cielo.LastSaleCard()
	is.True(byToken)
	is.True(strings.HasSuffix(masked, "4444")) // the replaced card, charged by its Cielo token
	e.noSecretsInLogs(t, liveSecond)
}

// TestLiveTrialCheckoutSavesTheCardAtCielo: a live subscription-mode checkout session with a
// trial and payment_method_collection always charges nothing now and saves the card at Cielo
// (it used to fail, the card could not be saved without a payment); the first renewal, at the
// trial's end, charges that card by its token. A card Cielo refuses leaves the session open.
func TestLiveTrialCheckoutSavesTheCardAtCielo(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	price := e.coPrice(e.Live, "Plano", 4990, map[string]any{"interval": "month", "trial_period_days": 7})
	cs := e.coSession(e.Live, map[string]any{"line_items": []any{map[string]any{"price": price, "quantity": 1}}})
	is.Equal(cs.Str("mode"), "subscription")
	id := cs.Str("id")

	e.Cielo.RefuseNextTokens(1)
	// No e-mail: the customer is created once and reused by every run and attempt.
	r := e.Do("POST", "/v1/checkout-sessions/"+id+"/confirm", e.Live, map[string]any{"card": payCard(liveApprove)})
	is.Equal(r.Status, 402)
	is.Equal(r.ErrCode(), "invalid_request")
	open := e.Do("GET", "/v1/checkout-sessions/"+id, e.Live, nil)
	is.Equal(open.Str("status"), "open")
	is.Equal(open.Body["customer"], nil) // filled only once the session completes

	r = e.Do("POST", "/v1/checkout-sessions/"+id+"/confirm", e.Live, map[string]any{"card": payCard(liveApprove)})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "complete")
	is.Equal(r.Str("payment_status"), "no_payment_required")
	is.Equal(e.Cielo.TokenCount(), 1)
	is.Equal(e.Cielo.ChargeCount(), 0)
	sub := e.Do("GET", "/v1/subscriptions/"+r.Str("subscription"), e.Live, nil)
	is.Equal(sub.Str("status"), "trialing")
	pm := sub.Str("default_payment_method")
	is.True(pm != "")
	_, err := e.sealedToken(pm)
	is.NoErr(err)
	is.Equal(len(e.Do("GET", "/v1/customers", e.Live, nil).Data()), 1) // one customer across the runs and attempts
	is.Equal(r.Str("customer"), sub.Str("customer"))

	e.Clock.Advance(sub.Time("trial_end").Sub(e.Clock.Now()) + time.Second)
	is.NoErr(e.Jobs.RunDue(context.Background()))
	sub = e.Do("GET", "/v1/subscriptions/"+sub.Str("id"), e.Live, nil)
	is.Equal(sub.Str("status"), "active")
	is.Equal(e.Do("GET", "/v1/invoices/"+sub.Str("latest_invoice"), e.Live, nil).Str("status"), "paid")
	is.Equal(e.Cielo.ChargeCount(), 1)
	_, byToken := e.Cielo.LastSaleCard()
	is.True(byToken)
}

// TestLiveAPIV1PortalSavesTheCardAtCielo: the /api/v1 customer-portal path saves a new card in
// live mode through Cielo (the same setup intent across the reserve and apply runs) and makes it
// the subscription's default; a refused card is a 402 that changes nothing.
func TestLiveAPIV1PortalSavesTheCardAtCielo(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	cus := e.payCustomer(e.Live, "ana@example.com")
	si := e.Do("POST", "/v1/setup-intents", e.Live, map[string]any{"customer": cus}).Str("id")
	pm := e.Do("POST", "/v1/setup-intents/"+si+"/confirm", e.Live, map[string]any{"card": payCard(liveApprove)}).Str("payment_method")
	price := e.coPrice(e.Live, "Plano", 4990, map[string]any{"interval": "month"})
	sub := e.Do("POST", "/v1/subscriptions", e.Live, map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pm}).Str("id")
	ps := e.Do("POST", "/v1/customer-portal-sessions", e.Live, map[string]any{"customer": cus, "return_url": "https://acme.example/conta"})
	tok := ps.Str("customer_session_token")

	e.Cielo.RefuseNextTokens(1)
	r := e.Do("POST", "/api/v1/customer-portal/payment-methods", tok, map[string]any{"card": payCard(liveSecond)})
	is.Equal(r.Status, 402)
	is.Equal(r.ErrCode(), "invalid_request")
	is.Equal(e.Do("GET", "/v1/subscriptions/"+sub, e.Live, nil).Str("default_payment_method"), pm)

	r = e.Do("POST", "/api/v1/customer-portal/payment-methods", tok, map[string]any{"card": payCard(liveSecond)})
	is.Equal(r.Status, 201)
	newPM := r.Str("id")
	is.Equal(e.Do("GET", "/v1/subscriptions/"+sub, e.Live, nil).Str("default_payment_method"), newPM)
	_, err := e.sealedToken(newPM)
	is.NoErr(err)
	is.Equal(e.Cielo.TokenCount(), 2)
	is.Equal(len(e.Do("GET", "/v1/setup-intents?customer="+cus, e.Live, nil).Data()), 3) // one per attempt, none left over
}
