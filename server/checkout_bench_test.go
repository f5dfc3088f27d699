package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"troco/db"
	"troco/pages"
	"troco/server/domain"
)

// Benchmarks of the checkout (docs/PERFORMANCE.md, "Checkout sessions and the hosted page"):
//
//	go test ./server -run '^$' -bench 'Checkout' -benchmem

// benchPrice creates a product with a R$ 100,00 default price.
func (e *benchEnv) benchPrice(b *testing.B) string {
	w := e.serve(b, e.request("POST", "/v1/products", []byte(`{"name":"Camiseta","description":"Algodão orgânico","default_price_data":{"unit_amount":10000}}`)))
	var p struct {
		DefaultPrice string `json:"default_price"`
	}
	_ = json.Unmarshal(w.Body.Bytes(), &p)
	return p.DefaultPrice
}

func (e *benchEnv) benchSession(b *testing.B, price string) *domain.CheckoutSession {
	body := []byte(`{"line_items":[{"price":"` + price + `","quantity":2}],"customer_email":"ana@example.com","metadata":{"order":"A-1"}}`)
	w := e.serve(b, e.request("POST", "/v1/checkout-sessions", body))
	var cs domain.CheckoutSession
	if err := json.Unmarshal(w.Body.Bytes(), &cs); err != nil {
		b.Fatal(err)
	}
	return &cs
}

// BenchmarkCheckoutSessionCreate is POST /v1/checkout-sessions through the whole handler stack
// (auth, decode, price and product lookups, insert, event, commit), from parallel clients: the
// throughput of creating sessions with group commit.
func BenchmarkCheckoutSessionCreate(b *testing.B) {
	e := newBenchEnv(b)
	price := e.benchPrice(b)
	body := []byte(`{"line_items":[{"price":"` + price + `","quantity":2}],"customer_email":"ana@example.com","metadata":{"order":"A-1"}}`)
	b.ReportAllocs()
	b.SetParallelism(16) // many concurrent clients, so group commit shares each fsync
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w := httptest.NewRecorder()
			e.s.ServeHTTP(w, e.request("POST", "/v1/checkout-sessions", body))
			if w.Code != 200 {
				b.Errorf("create: %d %s", w.Code, w.Body)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sessions/s")
}

// BenchmarkHostedCheckoutPage is a buyer opening the hosted page: the read transaction (session,
// organization, branding, instalment preview) and the templ render, from parallel buyers.
func BenchmarkHostedCheckoutPage(b *testing.B) {
	e := newBenchEnv(b)
	cs := e.benchSession(b, e.benchPrice(b))
	path := "/checkout/" + cs.ID + "?secret=" + cs.ClientSecret
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w := httptest.NewRecorder()
			e.s.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
			if w.Code != 200 {
				b.Errorf("page: %d", w.Code)
				return
			}
		}
	})
}

// BenchmarkCheckoutRender is the templ render of the payment form alone, into a buffer.
func BenchmarkCheckoutRender(b *testing.B) {
	e := newBenchEnv(b)
	cs := e.benchSession(b, e.benchPrice(b))
	var v *hostedView
	if err := e.db.Read(context.Background(), func(tx *db.Tx) error {
		var err error
		v = &hostedView{}
		if v.cs, v.scope, err = tx.FindCheckoutSessionAnyScope(cs.ID); err != nil {
			return err
		}
		return e.s.fillHosted(tx, v)
	}); err != nil {
		b.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/checkout/"+cs.ID, nil)
	c := e.s.checkoutView(r, v, pages.PtBR, "", "token")
	var buf bytes.Buffer
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		buf.Reset()
		if err := pages.CheckoutPage(c).Render(context.Background(), &buf); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}
