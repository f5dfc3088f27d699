package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/server/processors/apipix/pixtest"
)

// TestCrashDuringPixAutomaticoCharge runs `troco serve` in live mode against the API Pix double
// and kills it (SIGKILL) while a subscription's renewal is being charged by Pix Automático: the
// PSP has created the recurring charge but troco has not recorded its answer. After a restart
// the reconciliation job finds the charge at the PSP (never creates a second one), the PSP's
// settlement pays the invoice once, with one charge.
func TestCrashDuringPixAutomaticoCharge(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns the server")
	}
	is := is.New(t)
	dir, addr := t.TempDir(), freeAddr(t)
	dbPath := filepath.Join(dir, "troco.db")

	// The PSP double, on loopback, with its PKI in files for serve's flags.
	pki, err := pixtest.NewPKI()
	is.NoErr(err)
	pspDir := filepath.Join(dir, "psp")
	is.NoErr(os.MkdirAll(pspDir, 0o700))
	caPath, certPath, keyPath, err := pki.WriteFiles(pspDir)
	is.NoErr(err)
	secretPath := filepath.Join(pspDir, "secret")
	is.NoErr(os.WriteFile(secretPath, []byte("psp-secret\n"), 0o600))
	psp := pixtest.New("client-1", "psp-secret", "recebimentos@loja.example")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	pspSrv := &http.Server{Handler: psp, TLSConfig: pixtest.TLSConfig(pki), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = pspSrv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { pspSrv.Close() })
	pspURL := "https://" + ln.Addr().String()

	// A live organization and keys, made with the administration commands.
	getenv := envFrom(nil)
	var org struct{ ID string }
	cliJSON(t, getenv, &org, "org", "create", "--name", "Academia", "--activation-status", "active", "--db", dbPath)
	var live, test struct{ Token string }
	cliJSON(t, getenv, &live, "key", "create", "--org", org.ID, "--env", "live", "--db", dbPath)
	cliJSON(t, getenv, &test, "key", "create", "--org", org.ID, "--env", "test", "--db", dbPath)
	flags := []string{"--allow-time-travel", "--pix-provider", "api-pix", "--pix-base-url", pspURL, "--pix-token-url", pspURL + "/oauth/token",
		"--pix-client-id", "client-1", "--pix-client-secret-file", secretPath, "--pix-cert", certPath, "--pix-key", keyPath,
		"--pix-key-chave", "recebimentos@loja.example", "--pix-ca", caPath, "--pix-webhook-ca", caPath, "--pix-account", "0001/123456/CORRENTE"}
	srv := startChild(t, dir, addr, crashKey(t), flags...)
	trocoCA, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	is.NoErr(err)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(trocoCA)
	psp.WebhookClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pki.PSP}}}}

	lc, tc := crashClient(dir, addr, live.Token), crashClient(dir, addr, test.Token)
	post := func(c *crashAPI, path string, body any) map[string]any {
		t.Helper()
		raw, _ := json.Marshal(body)
		st, m, _ := c.send("POST", path, "", raw)
		if st != 200 {
			t.Fatalf("POST %s: %d %v", path, st, m)
		}
		return m
	}
	get := func(c *crashAPI, path string) map[string]any {
		t.Helper()
		st, m, _ := c.send("GET", path, "", nil)
		if st != 200 {
			t.Fatalf("GET %s: %d %v", path, st, m)
		}
		return m
	}
	eventually := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if ok() {
				return
			}
		}
		t.Fatalf("timed out waiting for %s", what)
	}

	// An approved authorization and a monthly subscription whose first invoice is paid.
	cus := post(lc, "/v1/customers", map[string]any{"email": "ana@example.com", "name": "Ana Souza", "document": "52998224725"})["id"].(string)
	eventually("the webhook registrations", func() bool { return psp.Webhook("/webhookrec") != "" && psp.Webhook("/webhookcobr") != "" })
	pa := post(lc, "/v1/pix-authorizations", map[string]any{"customer": cus, "max_amount": 10000, "interval": "month"})["id"].(string)
	recs := psp.Recs()
	is.Equal(len(recs), 1)
	is.NoErr(psp.AnswerRec(recs[0], "APROVADA"))
	pm, _ := get(lc, "/v1/pix-authorizations/"+pa)["payment_method"].(string)
	is.True(pm != "")
	price := post(lc, "/v1/products", map[string]any{"name": "Plano", "default_price_data": map[string]any{"unit_amount": 4990, "currency": "brl",
		"recurring": map[string]any{"interval": "month"}}})["default_price"].(string)
	sub := post(lc, "/v1/subscriptions", map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pm})
	first := get(lc, "/v1/invoices/"+sub["latest_invoice"].(string))
	ch := get(lc, "/v1/charges/"+first["charge"].(string))
	txid1 := ch["payment_method_details"].(map[string]any)["pix"].(map[string]any)["txid"].(string)
	is.NoErr(psp.SettleCobR(txid1, true, "", ""))
	is.Equal(get(lc, "/v1/invoices/"+first["id"].(string))["status"], "paid")

	// The renewal: the PSP creates the recurring charge and its answer never comes back; troco
	// is killed meanwhile.
	psp.DropNextCobAnswers(1, time.Minute)
	go func() { tc.send("POST", "/v1/test-helpers/advance-clock", "", []byte(`{"seconds":2764800}`)) }()
	eventually("the renewal's recurring charge at the PSP", func() bool { return psp.CobRCount() == 2 })
	time.Sleep(100 * time.Millisecond)
	is.NoErr(srv.cmd.Process.Signal(syscall.SIGKILL))
	<-srv.exited

	startChild(t, dir, addr, crashKey(t), flags...)
	lc, tc = crashClient(dir, addr, live.Token), crashClient(dir, addr, test.Token)
	s := get(lc, "/v1/subscriptions/"+sub["id"].(string))
	renewal := get(lc, "/v1/invoices/"+s["latest_invoice"].(string))
	is.Equal(renewal["billing_reason"], "subscription_cycle")
	is.Equal(renewal["status"], "open")
	// Past the reconciliation delay: the job asks the PSP and finds the charge.
	post(tc, "/v1/test-helpers/advance-clock", map[string]any{"seconds": 180})
	is.Equal(psp.CobRCount(), 2) // no second recurring charge
	renewal = get(lc, "/v1/invoices/"+renewal["id"].(string))
	rch := get(lc, "/v1/charges/"+renewal["charge"].(string))
	txid2 := rch["payment_method_details"].(map[string]any)["pix"].(map[string]any)["txid"].(string)
	is.True(psp.CobR(txid2) != nil) // the charge troco knows is the one the PSP created
	is.NoErr(psp.SettleCobR(txid2, true, "", ""))
	eventually("the renewal paid", func() bool { return get(lc, "/v1/invoices/"+renewal["id"].(string))["status"] == "paid" })
	charges := get(lc, "/v1/charges?limit=10&payment_intent="+renewal["payment_intent"].(string))["data"].([]any)
	is.Equal(len(charges), 1)
	is.Equal(charges[0].(map[string]any)["status"], "succeeded")
	paid := get(lc, "/v1/events?limit=100&type=invoice.paid")["data"].([]any)
	n := 0
	for _, ev := range paid {
		if ev.(map[string]any)["data"].(map[string]any)["object"].(map[string]any)["id"] == renewal["id"] {
			n++
		}
	}
	is.Equal(n, 1) // paid once
	is.Equal(get(lc, "/v1/subscriptions/"+sub["id"].(string))["status"], "active")
}
