package server

import (
	"context"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"troco/db"
	"troco/server/billing"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/payments"
)

// TestRenewalLoad is the renewal benchmark of docs/PERFORMANCE.md, skipped unless asked for:
//
//	TROCO_RENEWAL_LOAD=100000 go test ./server -run TestRenewalLoad -v -timeout 60m
//
// N monthly card subscriptions are created (each charging its first period on a saved card),
// the clock moves past their common period end, and the renewal job renews them all while one
// client reads a subscription in a loop; it reports the time to renew and the read latency
// meanwhile.
func TestRenewalLoad(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("TROCO_RENEWAL_LOAD"))
	if n <= 0 {
		t.Skip("set TROCO_RENEWAL_LOAD=N to run the renewal benchmark")
	}
	e := newBenchEnv(&testing.B{})
	ctx := context.Background()
	svc := e.s.billingService()
	a := domain.Actor{Scope: e.scope}
	var cus, pm, price string
	err := e.db.Write(ctx, func(tx *db.Tx) error {
		c, err := core.CreateCustomer(tx, a, core.CustomerParams{Email: domain.Opt[string]{Set: true, V: "ana@example.com"}})
		if err != nil {
			return err
		}
		cus = c.ID
		si, err := e.s.pay.CreateSetupIntent(tx, a, payments.SetupIntentParams{Customer: cus})
		if err != nil {
			return err
		}
		si, err = e.s.pay.ConfirmSetupIntent(tx, a, si.ID, payments.SetupConfirmParams{Card: &payments.CardParams{Number: "4242424242424242", ExpMonth: 12, ExpYear: 2035, CVC: "123", HolderName: "Ana"}})
		if err != nil {
			return err
		}
		pm = *si.PaymentMethod
		prod, err := core.CreateProduct(tx, a, core.ProductParams{Name: domain.Opt[string]{Set: true, V: "Plano"}})
		if err != nil {
			return err
		}
		amount := int64(2990)
		pr, err := core.CreatePrice(tx, a, core.PriceParams{Product: prod.ID, UnitAmount: &amount, Recurring: &core.RecurringParams{Interval: "month"}})
		price = pr.ID
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// All subscriptions start in the same second, so they renew at the same instant.
	clk := e.s.cfg.Clock
	start := time.Now()
	var first string
	for done := 0; done < n; {
		batch := min(500, n-done)
		err := e.db.Write(ctx, func(tx *db.Tx) error {
			for range batch {
				sub, err := svc.Create(tx, a, billing.CreateParams{Customer: &cus, DefaultPaymentMethod: &pm, Items: []billing.ItemParams{{Price: &price}}})
				if err != nil {
					return err
				}
				if first == "" {
					first = sub.ID
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		done += batch
	}
	t.Logf("created %d subscriptions (first invoice charged) in %s", n, time.Since(start).Round(time.Millisecond))

	clk.Advance(32 * 24 * time.Hour)
	var stop atomic.Bool
	latencies := make(chan []time.Duration, 1)
	go func() {
		var ls []time.Duration
		for !stop.Load() {
			t0 := time.Now()
			w := httptest.NewRecorder()
			e.s.ServeHTTP(w, e.request("GET", "/v1/subscriptions/"+first, nil))
			ls = append(ls, time.Since(t0))
			time.Sleep(10 * time.Millisecond)
		}
		latencies <- ls
	}()
	t0 := time.Now()
	if err := e.s.subscriptionJob().Run(ctx, clk.Now()); err != nil {
		t.Fatal(err)
	}
	took := time.Since(t0)
	stop.Store(true)
	ls := <-latencies
	var renewed int
	err = e.db.Read(ctx, func(tx *db.Tx) error {
		var err error
		renewed, err = tx.CountPaidPeriodInvoices(e.scope, start.Add(24*time.Hour).Unix())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(ls, func(i, j int) bool { return ls[i] < ls[j] })
	pct := func(p float64) time.Duration {
		return ls[min(len(ls)-1, int(p*float64(len(ls))))].Round(10 * time.Microsecond)
	}
	t.Logf("renewed %d of %d in %s (%.0f renewals/s); GET /v1/subscriptions/{id} meanwhile: %d requests, p50 %s, p99 %s, max %s",
		renewed, n, took.Round(time.Millisecond), float64(renewed)/took.Seconds(), len(ls), pct(0.5), pct(0.99), ls[len(ls)-1].Round(10*time.Microsecond))
	if renewed != n {
		t.Fatalf("renewed %d, want %d", renewed, n)
	}
}
