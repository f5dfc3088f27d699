package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"troco/db"
)

// BenchmarkPayment is a durable card payment through the whole handler stack (no network):
// POST /v1/payment-intents, then POST …/confirm with a 4242 test card, from 32 concurrent
// callers on a real SQLite file with synchronous=FULL. One op is one confirmed payment (two
// requests). Besides ns/op and allocations it reports what the payment costs the single
// writer, which is what bounds the rate and is far less sensitive to a shared machine's load:
//
//		go test ./server -run '^$' -bench '^BenchmarkPayment$' -benchmem -count 3
//
//	  - writer-µs/op: time the writer spent in BEGIN, the requests' transactions and COMMIT;
//	  - commit-µs/op: of which in COMMIT;
//	  - stmts/op: statements the writer ran (SAVEPOINT/RELEASE, BEGIN/COMMIT shares included);
//	  - cpu-µs/op: the process's CPU time (client and server).
func BenchmarkPayment(b *testing.B) {
	e := newBenchEnv(b)
	confirm := []byte(`{"payment_method_type":"credit_card","card":{"number":"4242424242424242","exp_month":12,"exp_year":2030,"cvc":"123"}}`)
	var n atomic.Int64
	pay := func() error {
		body := fmt.Appendf(nil, `{"amount":%d,"currency":"brl","payment_method_types":["credit_card"]}`, 1000+n.Add(1)%100_000)
		w := httptest.NewRecorder()
		e.s.ServeHTTP(w, e.request("POST", "/v1/payment-intents", body))
		if w.Code != http.StatusOK {
			return fmt.Errorf("create: %d %s", w.Code, w.Body)
		}
		var pi struct{ ID string }
		if err := json.Unmarshal(w.Body.Bytes(), &pi); err != nil {
			return err
		}
		w = httptest.NewRecorder()
		e.s.ServeHTTP(w, e.request("POST", "/v1/payment-intents/"+pi.ID+"/confirm", confirm))
		if w.Code != http.StatusOK {
			return fmt.Errorf("confirm: %d %s", w.Code, w.Body)
		}
		return nil
	}
	for range 50 { // warm the statement caches
		if err := pay(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	before := e.db.WriterStats()
	defer reportCPU(b, cpuTime())
	b.SetParallelism(16) // 32 concurrent callers on 2 CPUs, like the load test
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := pay(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	after := e.db.WriterStats()
	per := func(v int64) float64 { return float64(v) / float64(b.N) }
	b.ReportMetric(per(int64(after.Busy-before.Busy))/1e3, "writer-µs/op")
	b.ReportMetric(per(int64(after.Commit-before.Commit))/1e3, "commit-µs/op")
	b.ReportMetric(per(after.Statements-before.Statements), "stmts/op")
}

// TestPaymentStorage reports the bytes a card payment stores, table by table (SQLite's dbstat:
// pages in use, so B-tree slack included), over N payments made through the handler stack. It is
// a measurement, not an assertion; run it with
//
//	TROCO_STORAGE_PAYMENTS=2000 go test ./server -run TestPaymentStorage -v
func TestPaymentStorage(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("TROCO_STORAGE_PAYMENTS"))
	if n <= 0 {
		t.Skip("set TROCO_STORAGE_PAYMENTS=N to measure the bytes stored per payment")
	}
	e := newBenchEnv(t)
	confirm := []byte(`{"payment_method_type":"credit_card","card":{"number":"4242424242424242","exp_month":12,"exp_year":2030,"cvc":"123"}}`)
	sizes := func() map[string]int64 {
		m := map[string]int64{}
		err := e.db.Read(context.Background(), func(tx *db.Tx) error {
			var err error
			m, err = tx.TableSizes()
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	pay := func(i int, key bool) {
		body := fmt.Appendf(nil, `{"amount":%d,"currency":"brl","payment_method_types":["credit_card"],"description":"Pedido %d","metadata":{"order_id":"%d"}}`, 1000+i, i, i)
		var h []string
		if key {
			h = []string{"Idempotency-Key", fmt.Sprintf("create-%d", i)}
		}
		w := httptest.NewRecorder()
		e.s.ServeHTTP(w, e.request("POST", "/v1/payment-intents", body, h...))
		if w.Code != http.StatusOK {
			t.Fatalf("create: %d %s", w.Code, w.Body)
		}
		var pi struct{ ID string }
		_ = json.Unmarshal(w.Body.Bytes(), &pi)
		if key {
			h = []string{"Idempotency-Key", fmt.Sprintf("confirm-%d", i)}
		}
		w = httptest.NewRecorder()
		e.s.ServeHTTP(w, e.request("POST", "/v1/payment-intents/"+pi.ID+"/confirm", confirm, h...))
		if w.Code != http.StatusOK {
			t.Fatalf("confirm: %d %s", w.Code, w.Body)
		}
	}
	for i := range 20 {
		pay(i, true)
	}
	measure := func(key bool, from int) map[string]int64 {
		time.Sleep(200 * time.Millisecond) // the request log is written in the background
		start := sizes()
		for i := range n {
			pay(from+i, key)
		}
		time.Sleep(200 * time.Millisecond)
		end := sizes()
		growth := map[string]int64{}
		for name, v := range end {
			if d := v - start[name]; d > 0 {
				growth[name] = d
			}
		}
		return growth
	}
	plain := measure(false, 1000)
	keyed := measure(true, 1000+n)
	names := make([]string, 0, len(keyed))
	for name := range keyed {
		names = append(names, name)
	}
	for name := range plain {
		if _, ok := keyed[name]; !ok {
			names = append(names, name)
		}
	}
	sort.Slice(names, func(i, j int) bool { return keyed[names[i]] > keyed[names[j]] })
	var tp, tk int64
	t.Logf("%-40s %14s %14s", "table or index", "no key", "Idempotency-Key")
	for _, name := range names {
		tp += plain[name]
		tk += keyed[name]
		t.Logf("%-40s %14.0f %14.0f", name, float64(plain[name])/float64(n), float64(keyed[name])/float64(n))
	}
	t.Logf("%-40s %14.0f %14.0f   bytes per payment (create + confirm, %d payments each)", "total", float64(tp)/float64(n), float64(tk)/float64(n), n)
	if keep := os.Getenv("TROCO_STORAGE_KEEP"); keep != "" {
		w, _ := e.db.Pools()
		rows, err := w.Query("SELECT name, SUM(pgsize), SUM(unused), SUM(payload), SUM(ncell) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT 25")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var name string
			var a, b, c, d int64
			rows.Scan(&name, &a, &b, &c, &d)
			t.Logf("%-40s size %9d unused %9d payload %9d cells %d", name, a, b, c, d)
		}
		rows.Close()
		if _, err := w.Exec("VACUUM INTO ?", keep); err != nil {
			t.Fatal(err)
		}
	}
}
