package server_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/db"
	"troco/server"
	"troco/server/domain"
	"troco/server/payments"
	"troco/server/processors"
	"troco/server/processors/apipix"
	"troco/server/processors/apipix/pixtest"
	"troco/server/processors/cielo"
	"troco/server/processors/cielo/cielotest"
)

// Live mode end to end: troco's real connectors against conformance doubles of Cielo API 3.0
// and of a PSP's API Pix, started on loopback.

const (
	liveMerchantKey  = "mk-live-secret-0123456789abcdefghijklmnopq"
	liveClientSecret = "pix-client-secret-do-not-log"
	liveChave        = "recebimentos@loja.example"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type liveEnv struct {
	*testEnv
	Cielo    *cielotest.Double
	CieloSrv *httptest.Server
	PSP      *pixtest.Double
	PSPSrv   *httptest.Server
	PKI      *pixtest.PKI
	Pix      *apipix.Client
	Logs     *syncBuffer
}

// newLiveEnv starts the doubles, a troco server whose live mode uses them (client timeout
// timeout), registers the PIX webhook and activates the organization.
func newLiveEnv(t *testing.T, timeout time.Duration) *liveEnv {
	t.Helper()
	return newLiveEnvWrapped(t, timeout, nil)
}

// newLiveEnvWrapped is newLiveEnv with the card connector wrapped (fault injection).
func newLiveEnvWrapped(t *testing.T, timeout time.Duration, wrap func(payments.Processor) payments.Processor) *liveEnv {
	t.Helper()
	is := is.New(t)
	pki, err := pixtest.NewPKI()
	is.NoErr(err)
	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))

	cd := cielotest.New("merchant-0001", liveMerchantKey)
	cieloSrv := httptest.NewTLSServer(cd)
	t.Cleanup(cieloSrv.Close)
	cieloHTTP := &http.Client{Transport: cieloSrv.Client().Transport, Timeout: timeout}

	psp := pixtest.New("client-0001", liveClientSecret, liveChave)
	pspSrv := httptest.NewUnstartedServer(psp)
	pspSrv.TLS = pixtest.TLSConfig(pki)
	pspSrv.StartTLS()
	t.Cleanup(pspSrv.Close)
	pixHTTP := &http.Client{Timeout: timeout, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pki.Pool(), Certificates: []tls.Certificate{pki.Client}}}}

	cc := cielo.New(cielo.Config{BaseURL: cieloSrv.URL, QueryURL: cieloSrv.URL, MerchantID: "merchant-0001", MerchantKey: liveMerchantKey, Client: cieloHTTP, Log: log})
	pc := apipix.New(apipix.Config{BaseURL: pspSrv.URL, TokenURL: pspSrv.URL + "/oauth/token", ClientID: "client-0001", ClientSecret: liveClientSecret,
		Chave: liveChave, Client: pixHTTP, Log: log, RecAccount: &apipix.RecAccount{Agencia: "0001", Conta: "123456", TipoConta: "CORRENTE"}})
	router := &processors.Router{Card: cc, Pix: pc}
	if wrap != nil {
		router.Card = wrap(cc)
	}
	e := newEnv(t, func(c *server.Config) {
		c.Live = router
		c.PixWebhookCA = pki.Pool()
		c.Logger = log
	})
	e.activate(t)
	is.NoErr(pc.RegisterWebhook(context.Background(), e.URL()+"/processors/pix/webhook"))
	is.NoErr(pc.RegisterRecWebhooks(context.Background(), e.URL()+"/processors/pix/webhook"))
	roots := x509.NewCertPool()
	roots.AddCert(e.srv.Certificate())
	psp.WebhookClient = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pki.PSP}}}}
	return &liveEnv{testEnv: e, Cielo: cd, CieloSrv: cieloSrv, PSP: psp, PSPSrv: pspSrv, PKI: pki, Pix: pc, Logs: logs}
}

// reconcile moves the clock past the reconciliation delay and runs the jobs.
func (e *liveEnv) reconcile(d time.Duration) {
	e.t.Helper()
	e.Clock.Advance(d)
	if err := e.Jobs.RunDue(context.Background()); err != nil {
		e.t.Fatalf("jobs: %v", err)
	}
}

func (e *liveEnv) noSecretsInLogs(t *testing.T, card string) {
	t.Helper()
	logs := e.Logs.String()
	for _, s := range []string{card, liveMerchantKey, liveClientSecret} {
		if s != "" && strings.Contains(logs, s) {
			t.Fatalf("logs contain a secret or card number %q", s)
		}
	}
}

const (
	liveApprove = "4111111111111111" // last digit 1: Cielo approves
	liveDecline = "4000000000000002" // last digit 2: Cielo 05, not authorized
)

func TestLiveUnconfiguredAnswers503NamingTheFlag(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	e.activate(t)
	pi := e.payIntent(e.Live, 5000, map[string]any{"payment_method_types": []string{"credit_card", "pix", "boleto"}})
	r := e.payConfirm(e.Live, pi.Str("id"), map[string]any{"card": payCard(liveApprove)})
	is.Equal(r.Status, 503)
	is.Equal(r.ErrCode(), "processor_unavailable")
	is.True(strings.Contains(string(r.Raw), "--card-provider cielo"))
	r = e.payConfirm(e.Live, pi.Str("id"), map[string]any{"payment_method_type": "pix"})
	is.Equal(r.Status, 503)
	is.True(strings.Contains(string(r.Raw), "--pix-provider api-pix"))
	is.Equal(e.payCount(e.Live, "/v1/charges"), 0) // nothing written
}

func TestLiveCardApprovedWithInstallments(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(e.Logs.String())
		}
	})
	pi := e.payIntent(e.Live, 30000, map[string]any{"payment_method_types": []string{"credit_card"}})
	r := e.payConfirm(e.Live, pi.Str("id"), map[string]any{"card": payCard(liveApprove), "installments": 3})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "succeeded")
	ch := e.Do("GET", "/v1/charges/"+r.Str("latest_charge"), e.Live, nil)
	is.Equal(digNum(ch.Body, "payment_method_details.card.installments"), int64(3))
	is.True(digStr(ch.Body, "payment_method_details.card.authorization_code") != "")
	is.Equal(ch.Str("status"), "succeeded")
	is.Equal(e.Cielo.ChargeCount(), 1)
	is.Equal(len(e.payEvents(e.Live, "payment_intent.succeeded", pi.Str("id"))), 1)
	e.noSecretsInLogs(t, liveApprove)
}

func TestLiveCardDeclinedIs402(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	pi := e.payIntent(e.Live, 5000, nil)
	r := e.payConfirm(e.Live, pi.Str("id"), map[string]any{"card": payCard(liveDecline)})
	is.Equal(r.Status, 402)
	is.Equal(r.ErrCode(), "generic_decline")
	is.Equal(digStr(r.Body, "error.payment_intent.status"), "requires_payment_method")
	is.Equal(digStr(r.Body, "error.payment_intent.last_payment_error.category"), "issuer_declined")
	// The same intent accepts another card.
	r = e.payConfirm(e.Live, pi.Str("id"), map[string]any{"card": payCard(liveApprove)})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "succeeded")
}

func TestLiveCardUnknownReturnCodeIsProcessingError(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	pi := e.payIntent(e.Live, 5000, nil)
	r := e.payConfirm(e.Live, pi.Str("id"), map[string]any{"card": payCard("4000000000000119")}) // last digit 9: an unlisted code
	is.Equal(r.Status, 402)
	is.Equal(r.ErrCode(), "processing_error")
	is.True(strings.Contains(e.Logs.String(), "unknown return code"))
}

func TestLiveCardCaptureAndVoid(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	pi := e.payIntent(e.Live, 8000, map[string]any{"capture_method": "manual"})
	r := e.payConfirm(e.Live, pi.Str("id"), map[string]any{"card": payCard(liveApprove)})
	is.Equal(r.Str("status"), "requires_capture")
	r = e.Do("POST", "/v1/payment-intents/"+pi.Str("id")+"/capture", e.Live, map[string]any{"amount_to_capture": 6000})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "succeeded")
	is.Equal(digNum(r.Body, "amount_received"), int64(6000))

	pi2 := e.payIntent(e.Live, 7000, map[string]any{"capture_method": "manual"})
	r = e.payConfirm(e.Live, pi2.Str("id"), map[string]any{"card": payCard(liveApprove)})
	is.Equal(r.Str("status"), "requires_capture")
	r = e.Do("POST", "/v1/payment-intents/"+pi2.Str("id")+"/cancel", e.Live, map[string]any{})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "canceled")
	// Capturing the voided authorization is refused by troco's own state, not sent.
	r = e.Do("POST", "/v1/payment-intents/"+pi2.Str("id")+"/capture", e.Live, map[string]any{})
	is.Equal(r.Status, 409)
}

func TestLiveCardRefundAndRefundOverAmount(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	pi := e.payIntent(e.Live, 10000, nil)
	r := e.payConfirm(e.Live, pi.Str("id"), map[string]any{"card": payCard(liveApprove)})
	is.Equal(r.Status, 200)
	ch := r.Str("latest_charge")
	r = e.Do("POST", "/v1/refunds", e.Live, map[string]any{"charge": ch, "amount": 4000})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "succeeded")
	r = e.Do("POST", "/v1/refunds", e.Live, map[string]any{"charge": ch, "amount": 7000})
	is.Equal(r.Status, 400)
	is.Equal(r.ErrParam(), "amount")
	r = e.Do("POST", "/v1/refunds", e.Live, map[string]any{"charge": ch})
	is.Equal(r.Status, 200)
	is.Equal(digNum(r.Body, "amount"), int64(6000))
	c := e.Do("GET", "/v1/charges/"+ch, e.Live, nil)
	is.Equal(c.Body["refunded"], true)
}

func TestLiveProcessorDown(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	e.CieloSrv.Close()
	pi := e.payIntent(e.Live, 5000, nil)
	r := e.payConfirm(e.Live, pi.Str("id"), map[string]any{"card": payCard(liveApprove)})
	is.Equal(r.Status, 402)
	is.Equal(r.ErrCode(), "processing_error")
	is.Equal(digStr(r.Body, "error.payment_intent.status"), "requires_payment_method")
	is.Equal(e.Cielo.ChargeCount(), 0)
}

func TestLiveCardTimeoutAfterChargingIsNotChargedTwice(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 300*time.Millisecond)
	e.Cielo.HangFor = time.Second
	// The sale is made but its answer is lost: the connector looks the order up and finds it.
	e.Cielo.DropNextAnswers(1)
	pi := e.payIntent(e.Live, 5000, nil)
	r := e.payConfirm(e.Live, pi.Str("id"), map[string]any{"card": payCard(liveApprove)})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "succeeded")
	is.Equal(e.Cielo.ChargeCount(), 1)
}

func TestLiveCardAnswerLostUntilReconciliation(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 300*time.Millisecond)
	e.Cielo.HangFor = time.Second
	e.Cielo.DropNextAnswers(1)
	// The PSP charges, its answer is lost, and it stays unreachable for the lookup.
	go func() {
		for e.Cielo.ChargeCount() == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		e.Cielo.SetUnavailable(true)
	}()
	pi := e.payIntent(e.Live, 5000, nil)
	r := e.payConfirm(e.Live, pi.Str("id"), map[string]any{"card": payCard(liveApprove)})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "processing") // outcome unknown: nothing answered as failed
	// A second confirm while the outcome is unknown does not charge again.
	r = e.payConfirm(e.Live, pi.Str("id"), map[string]any{"card": payCard(liveApprove)})
	is.Equal(r.Str("status"), "processing")
	e.Cielo.SetUnavailable(false)
	e.reconcile(3 * time.Minute)
	got := e.Do("GET", "/v1/payment-intents/"+pi.Str("id"), e.Live, nil)
	is.Equal(got.Str("status"), "succeeded")
	is.Equal(e.Cielo.ChargeCount(), 1)
	is.Equal(len(e.payEvents(e.Live, "payment_intent.succeeded", pi.Str("id"))), 1)
}

// livePix confirms a PIX intent and returns the intent id, charge id and txid.
func (e *liveEnv) livePix(amount int64) (piID, chID, txid string) {
	e.t.Helper()
	pi := e.payIntent(e.Live, amount, map[string]any{"payment_method_types": []string{"pix"}})
	r := e.payConfirm(e.Live, pi.Str("id"), map[string]any{"payment_method_type": "pix", "customer_email": "ana@example.com"})
	if r.Status != 200 || r.Str("status") != "pending" {
		e.t.Fatalf("pix confirm: %d %s", r.Status, r.Raw)
	}
	code := digStr(r.Body, "next_action.pix.code")
	if code == "" {
		code = digStr(r.Body, "payment_data.pix.code")
	}
	if !strings.HasPrefix(code, "000201") || !strings.Contains(code, "pix.example.com/qr/v2/") {
		e.t.Fatalf("the BR Code is not the PSP's: %q (%s)", code, r.Raw)
	}
	ch := e.Do("GET", "/v1/charges/"+r.Str("latest_charge"), e.Live, nil)
	return pi.Str("id"), ch.Str("id"), digStr(ch.Body, "payment_method_details.pix.txid")
}

func TestLivePixPaidByWebhook(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	is.Equal(e.PSP.Webhook(liveChave), e.URL()+"/processors/pix/webhook")
	piID, _, txid := e.livePix(2590)
	is.True(len(txid) >= 26 && len(txid) <= 35)
	is.NoErr(e.PSP.Pay(txid, -1, true))
	got := e.Do("GET", "/v1/payment-intents/"+piID, e.Live, nil)
	is.Equal(got.Str("status"), "succeeded")
	is.Equal(digNum(got.Body, "amount_received"), int64(2590))

	// A replay of the same notification changes nothing.
	is.NoErr(e.PSP.Notify(e.PSP.Webhook(liveChave), e.PSP.LastPix(txid)))
	is.Equal(len(e.payEvents(e.Live, "payment_intent.succeeded", piID)), 1)
	e.noSecretsInLogs(t, "")
}

func TestLivePixWebhookRefusals(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	piID, _, txid := e.livePix(1000)
	body := `{"pix":[{"endToEndId":"E12345678202601011200abcdef123456","txid":"` + txid + `","valor":"10.00","horario":"2026-01-01T12:00:00Z"}]}`

	// Without a client certificate.
	noCert := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: e.PSP.WebhookClient.Transport.(*http.Transport).TLSClientConfig.RootCAs}}}
	res, err := noCert.Post(e.URL()+"/processors/pix/webhook/pix", "application/json", strings.NewReader(body))
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, 401)

	// A certificate from another authority is refused during the handshake or by the handler.
	other, err := pixtest.NewPKI()
	is.NoErr(err)
	bad := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: e.PSP.WebhookClient.Transport.(*http.Transport).TLSClientConfig.RootCAs,
		Certificates: []tls.Certificate{other.PSP}}}}
	if res, err := bad.Post(e.URL()+"/processors/pix/webhook/pix", "application/json", strings.NewReader(body)); err == nil {
		res.Body.Close()
		is.Equal(res.StatusCode, 401)
	}

	// A forged notification with the PSP's certificate but a PIX the PSP never received.
	res, err = e.PSP.WebhookClient.Post(e.URL()+"/processors/pix/webhook/pix", "application/json", strings.NewReader(body))
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, 200)
	is.Equal(e.Do("GET", "/v1/payment-intents/"+piID, e.Live, nil).Str("status"), "pending")

	// An unknown txid is acknowledged and ignored.
	unknown := strings.Replace(body, txid, "tr000000000000000000000000000000", 1)
	res, err = e.PSP.WebhookClient.Post(e.URL()+"/processors/pix/webhook/pix", "application/json", strings.NewReader(unknown))
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, 200)

	// A payment of the wrong amount does not settle the charge.
	is.NoErr(e.PSP.Pay(txid, 999, true))
	is.Equal(e.Do("GET", "/v1/payment-intents/"+piID, e.Live, nil).Str("status"), "pending")
	is.True(strings.Contains(e.Logs.String(), "paid amount differs"))
}

func TestLivePixWebhookLostReconciliation(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	piID, _, txid := e.livePix(4200)
	is.NoErr(e.PSP.Pay(txid, -1, false)) // paid, but the notification never arrives
	is.Equal(e.Do("GET", "/v1/payment-intents/"+piID, e.Live, nil).Str("status"), "pending")
	e.reconcile(3 * time.Minute)
	got := e.Do("GET", "/v1/payment-intents/"+piID, e.Live, nil)
	is.Equal(got.Str("status"), "succeeded")
}

func TestLivePixRefundedAsDevolucao(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	_, chID, txid := e.livePix(5000)
	is.NoErr(e.PSP.Pay(txid, -1, true))
	r := e.Do("POST", "/v1/refunds", e.Live, map[string]any{"charge": chID, "amount": 2000})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "succeeded")
	r = e.Do("POST", "/v1/refunds", e.Live, map[string]any{"charge": chID, "amount": 3001})
	is.Equal(r.Status, 400)
	r = e.Do("POST", "/v1/refunds", e.Live, map[string]any{"charge": chID})
	is.Equal(r.Status, 200)
	is.Equal(digNum(r.Body, "amount"), int64(3000))
}

func TestLivePixExpiredTokenMidRequest(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	e.PSP.ExpireTokens() // the cached token is refused: the connector fetches a new one
	piID, _, _ := e.livePix(1500)
	is.Equal(e.Do("GET", "/v1/payment-intents/"+piID, e.Live, nil).Str("status"), "pending")
	is.Equal(e.PSP.TokenCallCount(), 2)
}

func TestLivePixTimeoutAfterCreatingTheCharge(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 300*time.Millisecond)
	e.PSP.DropNextCobAnswers(1, time.Second)
	piID, _, _ := e.livePix(1500)
	is.Equal(e.Do("GET", "/v1/payment-intents/"+piID, e.Live, nil).Str("status"), "pending")
	is.Equal(e.PSP.CobCount(), 1)
}

func TestLivePixPSPDown(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	e.PSPSrv.Close()
	pi := e.payIntent(e.Live, 1500, map[string]any{"payment_method_types": []string{"pix"}})
	r := e.payConfirm(e.Live, pi.Str("id"), map[string]any{"payment_method_type": "pix"})
	is.Equal(r.Status, 402)
	is.Equal(r.ErrCode(), "processing_error")
	is.Equal(digStr(r.Body, "error.payment_intent.status"), "requires_payment_method")
}

func TestLiveSavedCardChargedAgainByToken(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	cus := e.payCustomer(e.Live, "ana@example.com")
	pi := e.payIntent(e.Live, 5000, map[string]any{"customer": cus})
	r := e.payConfirm(e.Live, pi.Str("id"), map[string]any{"card": payCard(liveApprove), "save_payment_method": true})
	is.Equal(r.Status, 200)
	pm := r.Str("payment_method")
	is.True(pm != "")
	var sealed string
	is.NoErr(e.DB.Read(context.Background(), func(tx *db.Tx) error {
		var err error
		sealed, err = tx.FindCardToken(domain.Scope{OrgID: e.Org.ID, Livemode: true}, pm)
		return err
	}))
	is.True(strings.HasPrefix(sealed, "v1:")) // the Cielo token is stored sealed

	pi2 := e.payIntent(e.Live, 7000, map[string]any{"customer": cus})
	r = e.payConfirm(e.Live, pi2.Str("id"), map[string]any{"payment_method": pm})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "succeeded")
	is.Equal(e.Cielo.ChargeCount(), 2)

	// A live card saved without a token (none here: a typed card not saved) cannot be reused.
	pi3 := e.payIntent(e.Live, 3000, nil)
	r = e.payConfirm(e.Live, pi3.Str("id"), map[string]any{"card": payCard(liveApprove)})
	is.Equal(r.Status, 200)
	pi4 := e.payIntent(e.Live, 3000, nil)
	r = e.payConfirm(e.Live, pi4.Str("id"), map[string]any{"payment_method": r.Str("payment_method")})
	is.Equal(r.Status, 400)
	is.Equal(r.ErrParam(), "payment_method")
}

func TestLiveCheckoutSessionPaidByCard(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	cs := e.coSimple(e.Live, map[string]any{"payment_method_types": []string{"credit_card", "pix"}})
	r := e.Do("POST", "/v1/checkout-sessions/"+cs.Str("id")+"/confirm", e.Live, map[string]any{"card": payCard(liveApprove), "installments": 2,
		"customer_email": "ana@example.com"})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "complete")
	is.Equal(r.Str("payment_status"), "paid")
	is.Equal(e.Cielo.ChargeCount(), 1)
}

func TestLiveCheckoutSessionPaidByPixWebhook(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	cs := e.coSimple(e.Live, map[string]any{"payment_method_types": []string{"pix"}})
	r := e.Do("POST", "/v1/checkout-sessions/"+cs.Str("id")+"/confirm", e.Live, map[string]any{"payment_method_type": "pix", "customer_email": "ana@example.com"})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("payment_status"), "unpaid")
	pi := e.Do("GET", "/v1/payment-intents/"+r.Str("payment_intent"), e.Live, nil)
	ch := e.Do("GET", "/v1/charges/"+pi.Str("latest_charge"), e.Live, nil)
	is.NoErr(e.PSP.Pay(digStr(ch.Body, "payment_method_details.pix.txid"), -1, true))
	got := e.Do("GET", "/v1/checkout-sessions/"+cs.Str("id"), e.Live, nil)
	is.Equal(got.Str("payment_status"), "paid")
}

// An invoice collected in live mode charges the customer's saved card through Cielo (its token),
// through the same two-phase path as a confirm.
func TestLiveInvoicePaidWithSavedCard(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	cus := e.payCustomer(e.Live, "ana@example.com")
	pi := e.payIntent(e.Live, 1000, map[string]any{"customer": cus})
	r := e.payConfirm(e.Live, pi.Str("id"), map[string]any{"card": payCard(liveApprove), "save_payment_method": true})
	is.Equal(r.Status, 200)
	inv := e.Do("POST", "/v1/invoices", e.Live, map[string]any{"customer": cus, "lines": []any{map[string]any{"amount": 5000, "description": "Consultoria"}}})
	is.Equal(inv.Status, 200)
	r = e.Do("POST", "/v1/invoices/"+inv.Str("id")+"/pay", e.Live, map[string]any{})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "paid")
	is.Equal(digNum(r.Body, "attempt_count"), int64(1))
	is.Equal(e.Cielo.ChargeCount(), 2)

	// A declined saved card (Cielo refuses it) is a 402 and the invoice stays open.
	cus2 := e.payCustomer(e.Live, "bia@example.com")
	pi2 := e.payIntent(e.Live, 1000, map[string]any{"customer": cus2})
	is.Equal(e.payConfirm(e.Live, pi2.Str("id"), map[string]any{"card": payCard(liveApprove), "save_payment_method": true}).Status, 200)
	e.CieloSrv.Close()
	inv2 := e.Do("POST", "/v1/invoices", e.Live, map[string]any{"customer": cus2, "lines": []any{map[string]any{"amount": 3000, "description": "Mensalidade"}}})
	r = e.Do("POST", "/v1/invoices/"+inv2.Str("id")+"/pay", e.Live, map[string]any{})
	is.Equal(r.Status, 402)
	is.Equal(r.ErrCode(), "processing_error")
	is.Equal(e.Do("GET", "/v1/invoices/"+inv2.Str("id"), e.Live, nil).Str("status"), "open")
}

// A sale Cielo leaves Pending is followed by the reconciliation until the acquirer decides.
func TestLiveCardPendingUntilTheAcquirerDecides(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	e.Cielo.PendNextSales(1)
	pi := e.payIntent(e.Live, 5000, nil)
	r := e.payConfirm(e.Live, pi.Str("id"), map[string]any{"card": payCard(liveApprove)})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "pending")
	e.reconcile(3 * time.Minute) // still pending at Cielo: nothing changes
	is.Equal(e.Do("GET", "/v1/payment-intents/"+pi.Str("id"), e.Live, nil).Str("status"), "pending")
	var ref string
	is.NoErr(e.DB.Read(context.Background(), func(tx *db.Tx) error {
		c, err := tx.FindChargeCall(domain.Scope{OrgID: e.Org.ID, Livemode: true}, r.Str("latest_charge"), "authorize")
		if err == nil {
			ref = c.Reference
		}
		return err
	}))
	is.True(e.Cielo.Decide(ref, true))
	e.reconcile(3 * time.Minute)
	got := e.Do("GET", "/v1/payment-intents/"+pi.Str("id"), e.Live, nil)
	is.Equal(got.Str("status"), "succeeded")
	is.Equal(len(e.payEvents(e.Live, "payment_intent.succeeded", pi.Str("id"))), 1)
}

// The hosted checkout in live mode: the buyer's card goes to Cielo (decline shown, then an
// approval), and a double submission charges nothing more.
func TestLiveHostedCheckoutPayByCard(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	s := e.coSimple(e.Live, map[string]any{"success_url": "https://loja.example/ok"})
	b := e.newBrowser(t)
	p := b.get(s.Str("url"))
	d := b.post("/checkout/"+s.Str("id")+"/confirm", cardForm(p, liveDecline))
	is.Equal(d.Status, 402)
	is.True(d.testID("error-message"))
	f := cardForm(d, liveApprove)
	ok := b.post("/checkout/"+s.Str("id")+"/confirm", f)
	is.Equal(ok.Status, 303)
	is.Equal(ok.Location, "https://loja.example/ok")
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+s.Str("id"), e.Live, nil).Str("payment_status"), "paid")
	again := b.post("/checkout/"+s.Str("id")+"/confirm", f)
	is.Equal(again.Status, 303)
	is.Equal(e.Cielo.ChargeCount(), 1)
	e.noSecretsInLogs(t, liveApprove)
}

// Cielo answers 503 to the sale: troco cannot know whether it charged, so the intent waits in
// processing; the reconciliation finds no sale for the order and fails the attempt (nothing was
// charged), and the intent accepts another card.
func TestLiveCardUnknownOutcomeNeverChargedFailsAfterReconciliation(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	e.Cielo.SetUnavailable(true)
	pi := e.payIntent(e.Live, 5000, nil)
	r := e.payConfirm(e.Live, pi.Str("id"), map[string]any{"card": payCard(liveApprove)})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "processing")
	e.Cielo.SetUnavailable(false)
	e.reconcile(3 * time.Minute) // the order is unknown to Cielo, but it may still be in flight
	is.Equal(e.Do("GET", "/v1/payment-intents/"+pi.Str("id"), e.Live, nil).Str("status"), "processing")
	e.reconcile(3 * time.Minute)
	got := e.Do("GET", "/v1/payment-intents/"+pi.Str("id"), e.Live, nil)
	is.Equal(got.Str("status"), "requires_payment_method")
	is.Equal(digStr(got.Body, "last_payment_error.code"), "processing_error")
	is.Equal(len(e.payEvents(e.Live, "payment_intent.payment_failed", pi.Str("id"))), 1)
	is.Equal(e.Cielo.ChargeCount(), 0)
	r = e.payConfirm(e.Live, pi.Str("id"), map[string]any{"card": payCard(liveApprove)})
	is.Equal(r.Str("status"), "succeeded")
}

func TestLiveInvoicePaidOnce(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	cus := e.payCustomer(e.Live, "ana@example.com")
	pi := e.payIntent(e.Live, 1000, map[string]any{"customer": cus})
	is.Equal(e.payConfirm(e.Live, pi.Str("id"), map[string]any{"card": payCard(liveApprove), "save_payment_method": true}).Status, 200)
	inv := e.Do("POST", "/v1/invoices", e.Live, map[string]any{"customer": cus, "lines": []any{map[string]any{"amount": 5000, "description": "Consultoria"}}})
	r := e.Do("POST", "/v1/invoices/"+inv.Str("id")+"/pay", e.Live, map[string]any{})
	is.Equal(r.Str("status"), "paid")
	is.Equal(len(e.payEvents(e.Live, "invoice.paid", inv.Str("id"))), 1)
}

// A checkout session confirmed while Cielo's answer is lost completes unpaid with its intent
// processing; the reconciliation then settles the intent and the session becomes paid.
func TestLiveCheckoutSessionPaidAfterReconciliation(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 300*time.Millisecond)
	e.Cielo.HangFor = time.Second
	e.Cielo.DropNextAnswers(1)
	go func() {
		for e.Cielo.ChargeCount() == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		e.Cielo.SetUnavailable(true)
	}()
	cs := e.coSimple(e.Live, nil)
	r := e.Do("POST", "/v1/checkout-sessions/"+cs.Str("id")+"/confirm", e.Live, map[string]any{"card": payCard(liveApprove), "customer_email": "ana@example.com"})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "complete")
	is.Equal(r.Str("payment_status"), "unpaid")
	e.Cielo.SetUnavailable(false)
	e.reconcile(3 * time.Minute)
	got := e.Do("GET", "/v1/checkout-sessions/"+cs.Str("id"), e.Live, nil)
	is.Equal(got.Str("payment_status"), "paid")
	is.Equal(e.Cielo.ChargeCount(), 1)
}

// crashAfterCharge is the card connector of a server that dies right after the processor
// charged: the answer is never recorded (the request's goroutine panics).
type crashAfterCharge struct {
	payments.Processor
	armed atomic.Bool
}

func (c *crashAfterCharge) AuthorizeCard(ctx context.Context, req payments.CardRequest) (payments.CardResult, error) {
	r, err := c.Processor.AuthorizeCard(ctx, req)
	if c.armed.Swap(false) {
		panic("simulated crash after the processor charged")
	}
	return r, err
}

// The server dies between the processor's approval and recording it, during a checkout session
// confirmation: the reservation survives; the reconciliation finds the sale, records the payment
// and completes the session as paid, with no second charge.
func TestLiveCrashAfterChargingCheckoutSessionCompletedByReconciliation(t *testing.T) {
	is := is.New(t)
	crash := &crashAfterCharge{}
	crash.armed.Store(true)
	e := newLiveEnvWrapped(t, 2*time.Second, func(p payments.Processor) payments.Processor { crash.Processor = p; return crash })
	cs := e.coSimple(e.Live, nil)
	r := e.Do("POST", "/v1/checkout-sessions/"+cs.Str("id")+"/confirm", e.Live, map[string]any{"card": payCard(liveApprove), "customer_email": "ana@example.com"})
	is.Equal(r.Status, 500) // the crash
	got := e.Do("GET", "/v1/checkout-sessions/"+cs.Str("id"), e.Live, nil)
	is.Equal(got.Str("status"), "open")
	is.Equal(e.Do("GET", "/v1/payment-intents/"+got.Str("payment_intent"), e.Live, nil).Str("status"), "processing")
	is.Equal(e.Cielo.ChargeCount(), 1)

	e.reconcile(3 * time.Minute)
	got = e.Do("GET", "/v1/checkout-sessions/"+cs.Str("id"), e.Live, nil)
	is.Equal(got.Str("status"), "complete")
	is.Equal(got.Str("payment_status"), "paid")
	is.Equal(e.Do("GET", "/v1/payment-intents/"+got.Str("payment_intent"), e.Live, nil).Str("status"), "succeeded")
	is.Equal(len(e.coEvents(e.Live, "checkout.session.completed", cs.Str("id"))), 1)
	is.Equal(e.Cielo.ChargeCount(), 1)
}

// A send_invoice invoice with a due date and late fees paid by PIX in live mode is a charge with
// a due date at the PSP (cobv): calendario.dataDeVencimento is the invoice's due date in
// Brasília, multa and juros are its fine_rate and interest_rate; the PSP's webhook settles it.
func TestLiveInvoicePixWithDueDateIsACobV(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	cus := e.Do("POST", "/v1/customers", e.Live, map[string]any{"email": "ana@example.com", "name": "Ana Souza", "document": "529.982.247-25"})
	is.Equal(cus.Status, 200)
	// Due at 01:30Z on the 10th day: still the 9th in Brasília (UTC-3).
	dueAt := time.Date(e.Clock.Now().Year(), e.Clock.Now().Month(), e.Clock.Now().Day(), 1, 30, 0, 0, time.UTC).AddDate(0, 0, 10)
	inv := e.Do("POST", "/v1/invoices", e.Live, map[string]any{"customer": cus.Str("id"), "collection_method": "send_invoice",
		"due_date": dueAt.Format(time.RFC3339), "fine_rate": 200, "interest_rate": 100,
		"lines": []any{map[string]any{"amount": 150000, "description": "Consultoria mensal"}}})
	is.Equal(inv.Status, 200)
	fin := e.Do("POST", "/v1/invoices/"+inv.Str("id")+"/finalize", e.Live, nil)
	is.Equal(fin.Status, 200)

	// The customer chooses PIX on the hosted invoice page.
	b := e.newBrowser(t)
	pg := b.get(hostedPath(t, fin.Str("hosted_invoice_url")))
	is.Equal(pg.Status, 200)
	is.Equal(b.postInvoice(inv.Str("id"), "pay", url.Values{"s": {pg.hidden().Get("s")}, "method": {"pix"}}).Status, 303)
	opened := e.Do("GET", "/v1/invoices/"+inv.Str("id"), e.Live, nil)
	piID := opened.Str("payment_intent")
	is.True(piID != "")
	r := e.Do("GET", "/v1/payment-intents/"+piID, e.Live, nil)
	is.Equal(r.Str("status"), "pending")
	code := digStr(r.Body, "next_action.pix.code")
	ch := e.Do("GET", "/v1/charges/"+r.Str("latest_charge"), e.Live, nil)
	txid := digStr(ch.Body, "payment_method_details.pix.txid")
	kind, cob := e.PSP.Charge(txid)
	is.Equal(kind, "cobv")
	is.Equal(cob["pixCopiaECola"], code) // the BR Code is the PSP's
	cal := cob["calendario"].(map[string]any)
	is.Equal(cal["dataDeVencimento"], dueAt.AddDate(0, 0, -1).Format("2006-01-02"))
	valor := cob["valor"].(map[string]any)
	is.Equal(valor["original"], "1500.00")
	is.Equal(valor["multa"], map[string]any{"modalidade": float64(2), "valorPerc": "2.00"})
	is.Equal(valor["juros"], map[string]any{"modalidade": float64(3), "valorPerc": "1.00"})
	is.Equal(cob["devedor"], map[string]any{"nome": "Ana Souza", "cpf": "52998224725"})
	is.Equal(e.PSP.CobCount(), 1)
	is.Equal(len(e.payEvents(e.Live, "invoice.payment_failed", inv.Str("id"))), 0) // waiting is not failing

	// The PSP's webhook settles it: the intent succeeds and the invoice is paid, once.
	is.NoErr(e.PSP.Pay(txid, -1, true))
	is.Equal(e.Do("GET", "/v1/payment-intents/"+piID, e.Live, nil).Str("status"), "succeeded")
	got := e.Do("GET", "/v1/invoices/"+inv.Str("id"), e.Live, nil)
	is.Equal(got.Str("status"), "paid")
	is.NoErr(e.PSP.Notify(e.PSP.Webhook(liveChave), e.PSP.LastPix(txid)))
	is.Equal(len(e.payEvents(e.Live, "invoice.paid", inv.Str("id"))), 1)
}
