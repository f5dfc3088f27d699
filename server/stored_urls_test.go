package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"

	"troco/db"
	"troco/server"
	"troco/server/clock"
	"troco/server/jobs"
)

// restarted is e's database served by a new process (its own db.DB and server) started with
// --base-url base, as serve restarted with another base URL or port.
func (e *testEnv) restarted(base string) *testEnv {
	e.t.Helper()
	clk := clock.NewOffset(clock.Real{}, e.Clock.Offset())
	d, err := db.Open(context.Background(), e.Path, db.Options{Schema: schemaSQL(e.t), PostgresSchema: pgSchemaSQL(e.t), Clock: clk, Synchronous: "NORMAL"})
	if err != nil {
		e.t.Fatalf("open database: %v", err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := e.Config
	cfg.DB, cfg.Clock, cfg.Jobs, cfg.BaseURL = d, clk, jobs.NewRunner(clk, log), base
	srv := httptest.NewTLSServer(server.New(cfg))
	e.t.Cleanup(func() {
		srv.Close()
		d.Close()
	})
	r := *e
	r.srv, r.DB, r.Clock, r.Jobs, r.Client, r.Config = srv, d, clk, cfg.Jobs, srv.Client(), cfg
	return &r
}

// TestStoredURLsFollowTheBaseURL: the links troco stores for its own pages (an invoice's
// hosted_invoice_url and invoice_pdf, a charge's receipt_url, a boleto's url and a PIX QR's
// image_url, a checkout session's and a payment link's url, a Pix Automático authorization's url) answer with the base URL of the server answering, not the one they were made with,
// in the API and in events written after a restart; their paths and secrets are unchanged and
// open on the new server. Events stored before keep what they said.
func TestStoredURLsFollowTheBaseURL(t *testing.T) {
	is := is.New(t)
	const oldBase, newBase = "https://old.example:8443", "https://pagar.example.com"
	e := newEnv(t, func(c *server.Config) { c.BaseURL = oldBase })
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "ana@example.com", "name": "Ana Souza"}).Str("id")
	inv := e.invCreate(map[string]any{"customer": cus, "collection_method": "send_invoice", "days_until_due": 3,
		"lines": []any{map[string]any{"amount": 5000, "description": "Consultoria"}}})
	f := e.Do("POST", "/v1/invoices/"+inv.Str("id")+"/finalize", e.Test, nil)
	is.Equal(f.Status, 200)
	is.True(strings.HasPrefix(f.Str("hosted_invoice_url"), oldBase+"/invoices/"))
	card := e.payIntent(e.Test, 1000, nil)
	paid := e.payConfirm(e.Test, card.Str("id"), map[string]any{"payment_method_type": "credit_card", "card": payCard("4242424242424242")})
	is.Equal(paid.Status, 200)
	ch := e.Do("GET", "/v1/charges/"+paid.Str("latest_charge"), e.Test, nil)
	is.True(strings.HasPrefix(ch.Str("receipt_url"), oldBase+"/receipts/"))
	bol := e.payConfirm(e.Test, e.payIntent(e.Test, 2000, nil).Str("id"), boletoBuyer("ana@example.com"))
	is.Equal(bol.Status, 200)
	is.True(strings.HasPrefix(digStr(bol.Body, "next_action.boleto.url"), oldBase+"/"))
	pix := e.payConfirm(e.Test, e.payIntent(e.Test, 3000, nil).Str("id"), map[string]any{"payment_method_type": "pix"})
	is.Equal(pix.Status, 200)
	is.True(strings.HasPrefix(digStr(pix.Body, "next_action.pix.image_url"), oldBase+"/"))

	price := e.coPrice(e.Test, "Ingresso", 5000, nil)
	cs := e.coSession(e.Test, map[string]any{"line_items": []any{map[string]any{"price": price, "quantity": 1}}, "success_url": "https://loja.example/ok"})
	is.True(strings.HasPrefix(cs.Str("url"), oldBase+"/"))
	link := e.Do("POST", "/v1/payment-links", e.Test, map[string]any{"line_items": []any{map[string]any{"price": price}}})
	is.Equal(link.Status, 200)
	is.True(strings.HasPrefix(link.Str("url"), oldBase+"/"))

	auth := e.Do("POST", "/v1/pix-authorizations", e.Test, map[string]any{"customer": cus, "max_amount": 10000, "interval": "month"})
	is.Equal(auth.Status, 200)
	is.True(strings.HasPrefix(auth.Str("url"), oldBase+"/"))

	n := e.restarted(newBase)
	moved := func(old, now string) {
		t.Helper()
		is.True(strings.HasPrefix(old, oldBase+"/"))
		is.Equal(now, newBase+strings.TrimPrefix(old, oldBase)) // same path and secret, new base
	}
	got := n.Do("GET", "/v1/invoices/"+f.Str("id"), n.Test, nil)
	moved(f.Str("hosted_invoice_url"), got.Str("hosted_invoice_url"))
	moved(f.Str("invoice_pdf"), got.Str("invoice_pdf"))
	moved(ch.Str("receipt_url"), n.Do("GET", "/v1/charges/"+ch.Str("id"), n.Test, nil).Str("receipt_url"))
	moved(digStr(bol.Body, "next_action.boleto.url"), digStr(n.Do("GET", "/v1/payment-intents/"+bol.Str("id"), n.Test, nil).Body, "next_action.boleto.url"))
	moved(digStr(pix.Body, "next_action.pix.image_url"), digStr(n.Do("GET", "/v1/payment-intents/"+pix.Str("id"), n.Test, nil).Body, "next_action.pix.image_url"))
	ncs := n.Do("GET", "/v1/checkout-sessions/"+cs.Str("id"), n.Test, nil)
	moved(cs.Str("url"), ncs.Str("url"))
	is.Equal(ncs.Str("success_url"), "https://loja.example/ok") // the merchant's own URLs are kept
	moved(link.Str("url"), n.Do("GET", "/v1/payment-links/"+link.Str("id"), n.Test, nil).Str("url"))
	moved(auth.Str("url"), n.Do("GET", "/v1/pix-authorizations/"+auth.Str("id"), n.Test, nil).Str("url"))
	// Lists too.
	list := n.Do("GET", "/v1/invoices?customer="+cus, n.Test, nil)
	is.Equal(list.Data()[0]["hosted_invoice_url"], got.Str("hosted_invoice_url"))

	// The links open on the new server.
	b := n.newBrowser(t)
	is.Equal(b.get(hostedPath(t, got.Str("hosted_invoice_url"))).Status, 200)
	status, _, _ := n.openPage(t, n.Do("GET", "/v1/charges/"+ch.Str("id"), n.Test, nil).Str("receipt_url"))
	is.Equal(status, 200)

	// An event written after the restart carries the new base; the one stored before keeps its own.
	is.Equal(n.Do("POST", "/v1/invoices/"+f.Str("id")+"/pay", n.Test, map[string]any{"paid_out_of_band": true}).Status, 200)
	ev := n.payEvents(n.Test, "invoice.paid", f.Str("id"))
	is.Equal(len(ev), 1)
	is.Equal(digStr(ev[0], "data.object.hosted_invoice_url"), got.Str("hosted_invoice_url"))
	fin := n.payEvents(n.Test, "invoice.finalized", f.Str("id"))
	is.Equal(len(fin), 1)
	is.Equal(digStr(fin[0], "data.object.hosted_invoice_url"), f.Str("hosted_invoice_url"))
}
