package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
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
	benchPayments(b, e, func() error {
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
	})
}

// BenchmarkPaymentOneRequest is BenchmarkPayment in one request: POST /v1/payment-intents with
// confirm: true and the card, so one op is one confirmed payment in one request and one writer
// transaction.
//
//	go test ./server -run '^$' -bench '^BenchmarkPayment(OneRequest)?$' -benchmem -count 3
func BenchmarkPaymentOneRequest(b *testing.B) {
	e := newBenchEnv(b)
	var n atomic.Int64
	benchPayments(b, e, func() error {
		body := fmt.Appendf(nil, `{"amount":%d,"currency":"brl","payment_method_types":["credit_card"],"confirm":true,`+
			`"card":{"number":"4242424242424242","exp_month":12,"exp_year":2030,"cvc":"123"}}`, 1000+n.Add(1)%100_000)
		w := httptest.NewRecorder()
		e.s.ServeHTTP(w, e.request("POST", "/v1/payment-intents", body))
		if w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte(`"status":"succeeded"`)) {
			return fmt.Errorf("create with confirm: %d %s", w.Code, w.Body)
		}
		return nil
	})
}

// benchPayments runs pay (one confirmed payment) from 32 concurrent callers and reports the
// single writer's cost per payment.
func benchPayments(b *testing.B, e *benchEnv, pay func() error) {
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
//	TROCO_STORAGE_PAYMENTS=2000 go test ./server -run TestPaymentStorage -v -count=1
//
// It prints, per table and index, the figures measured before the storage work of issue 18
// (storageBefore) next to today's.
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
	// payOne is the same payment in one request: create with confirm: true.
	payOne := func(i int, key bool) {
		body := fmt.Appendf(nil, `{"amount":%d,"currency":"brl","payment_method_types":["credit_card"],"description":"Pedido %d","metadata":{"order_id":"%d"},"confirm":true,"payment_method_type":"credit_card","card":{"number":"4242424242424242","exp_month":12,"exp_year":2030,"cvc":"123"}}`, 1000+i, i, i)
		var h []string
		if key {
			h = []string{"Idempotency-Key", fmt.Sprintf("pay-%d", i)}
		}
		w := httptest.NewRecorder()
		e.s.ServeHTTP(w, e.request("POST", "/v1/payment-intents", body, h...))
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"status":"succeeded"`) {
			t.Fatalf("create with confirm: %d %s", w.Code, w.Body)
		}
	}
	for i := range 20 {
		pay(i, true)
	}
	measureWith := func(pay func(int, bool), key bool, from int) map[string]int64 {
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
	measure := func(key bool, from int) map[string]int64 { return measureWith(pay, key, from) }
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
	var tp, tk, bp, bk int64
	t.Logf("%-40s %21s %21s", "", "no key", "Idempotency-Key")
	t.Logf("%-40s %10s %10s %10s %10s", "table or index", "before", "now", "before", "now")
	per := func(v int64) int64 { return (v + int64(n)/2) / int64(n) }
	for _, name := range names {
		tp += plain[name]
		tk += keyed[name]
		b := storageBefore[name]
		bp += b[0]
		bk += b[1]
		t.Logf("%-40s %10d %10d %10d %10d", name, b[0], per(plain[name]), b[1], per(keyed[name]))
	}
	for name, b := range storageBefore { // gone since
		if _, ok := keyed[name]; !ok {
			if _, ok := plain[name]; !ok {
				bp += b[0]
				bk += b[1]
				t.Logf("%-40s %10d %10d %10d %10d", name, b[0], 0, b[1], 0)
			}
		}
	}
	t.Logf("%-40s %10d %10d %10d %10d   bytes per payment (create + confirm, %d payments each)", "total", bp, per(tp), bk, per(tk), n)
	total := func(m map[string]int64) (t int64) {
		for _, v := range m {
			t += v
		}
		return per(t)
	}
	onePlain := total(measureWith(payOne, false, 1000+2*n))
	oneKeyed := total(measureWith(payOne, true, 1000+3*n))
	t.Logf("%-40s %10s %10d %10s %10d   bytes per payment in one request (create with confirm: true)", "total, one request", "", onePlain, "", oneKeyed)
	// TROCO_STORAGE_KEEP=file: how full the pages are (dbstat: bytes in use, unused, payload), and
	// a compacted copy of the database to look at the rows.
	if keep := os.Getenv("TROCO_STORAGE_KEEP"); keep != "" {
		w, _ := e.db.Pools()
		rows, err := w.Query("SELECT name, SUM(pgsize), SUM(unused), SUM(payload) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT 25")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var name string
			var size, unused, payload int64
			if err := rows.Scan(&name, &size, &unused, &payload); err != nil {
				t.Fatal(err)
			}
			t.Logf("%-40s pages %9d unused %9d payload %9d", name, size, unused, payload)
		}
		rows.Close()
		if _, err := w.Exec("VACUUM INTO ?", keep); err != nil {
			t.Fatal(err)
		}
	}
}

// storageBefore is what TestPaymentStorage measured before the storage work of issue 18 part 2
// (bytes per payment, without and with Idempotency-Key; commit 6ca5cfc, this machine), printed
// next to the current figures.
var storageBefore = map[string][2]int64{
	"events": {1120, 1120}, "request_logs": {909, 915}, "charges": {819, 823}, "idempotency_keys": {0, 610},
	"payment_intents": {512, 512}, "payment_methods": {373, 373}, "events_object": {233, 227}, "events_scope_type": {215, 215},
	"ledger_transactions": {199, 195}, "email_outbox": {174, 170}, "request_logs_key": {160, 158}, "request_logs_object": {158, 154},
	"events_scope": {137, 139}, "sqlite_autoindex_events_1": {125, 127}, "sqlite_autoindex_idempotency_keys_1": {0, 113},
	"request_logs_scope": {90, 90}, "sqlite_autoindex_request_logs_1": {82, 82}, "ledger_transactions_intent": {76, 80},
	"charges_intent": {76, 80}, "ledger_transactions_charge": {76, 80}, "payment_intents_created": {76, 78},
	"payment_intents_status": {57, 57}, "email_outbox_scope": {55, 53}, "email_outbox_event_kind": {51, 49},
	"payment_intents_customer": {47, 47}, "payment_methods_customer": {47, 47}, "charges_customer": {47, 47},
	"ledger_transactions_created": {49, 47}, "ledger_transactions_scope": {45, 45}, "payment_intents_scope": {45, 45},
	"payment_methods_scope": {45, 45}, "charges_scope": {45, 45}, "sqlite_autoindex_ledger_transactions_1": {41, 41},
	"sqlite_autoindex_payment_intents_1": {41, 39}, "sqlite_autoindex_email_outbox_1": {41, 39}, "sqlite_autoindex_charges_1": {41, 39},
	"sqlite_autoindex_payment_methods_1": {41, 39}, "idempotency_keys_created": {0, 29}, "request_logs_created": {29, 27},
	"email_outbox_due": {23, 23},
}

// BenchmarkPaymentSQLFloor is the serial floor of a payment: the SQL alone. It makes
// TROCO_FLOOR_PAYMENTS (default 1000) payments through the whole handler stack from 32
// concurrent callers, as BenchmarkPayment and BenchmarkPaymentOneRequest do, recording every
// statement the single writer runs (SQL and bound arguments, request-log rows included), then
// replays exactly those statements, in the same order, on a copy of the database file as it was
// before the payments (opened by db.Open: troco's schema and pragmas, synchronous=NORMAL on the
// connection as on the writer's when the WAL's fsync runs off it), through statements prepared
// once, TROCO_FLOOR_BATCH (default 17) write operations per BEGIN IMMEDIATE … COMMIT. No Go
// domain logic, no JSON, no HTTP: what is left is SQLite executing the rows and index entries.
//
//	go test ./server -run '^$' -bench '^BenchmarkPaymentSQLFloor$' -benchtime 3x -count 3
//
// One op is a replay of all the recorded payments; the figures are per payment:
//   - sql-µs/pay: the replay's wall time (a single goroutine, so its CPU time too);
//   - commit-µs/pay: of which in COMMIT (WAL writes, and a checkpoint every ~1000 WAL pages; as
//     on the writer, another goroutine fsyncs the WAL after each commit);
//   - sql-cpu-µs/pay: the replay's CPU time (of its thread; steadier on a shared machine:
//     waiting for a CPU or the disk is not counted);
//   - stmts/pay: statements run (BEGIN/COMMIT shares included);
//   - ops/pay: write operations (Write calls) per payment;
//   - real-writer-µs/pay, real-ops/commit: what the real writer spent per payment while
//     recording (the recorder's own cost included) and its operations per commit.
//
// Sub-benchmarks: two-requests (create, then confirm) and one-request (create with confirm:
// true); savepoints keeps each operation's SAVEPOINT w … RELEASE w, as the writer runs it,
// no-savepoints drops them; driver runs the driver's statements directly, database-sql through
// database/sql's *sql.Stmt as the writer does (the difference is database/sql's cost).
// TROCO_FLOOR_PROFILE=1 also logs, per statement, its count and time per payment and the
// B-tree entries it writes.
func BenchmarkPaymentSQLFloor(b *testing.B) {
	n := envInt("TROCO_FLOOR_PAYMENTS", 1000)
	batch := envInt("TROCO_FLOOR_BATCH", 17)
	for _, kind := range []struct {
		name string
		pay  func(e *benchEnv) func() error
	}{
		{"two-requests", twoRequestPayment},
		{"one-request", oneRequestPayment},
	} {
		e := newBenchEnv(b)
		rec := recordPayments(b, e, 200, n, kind.pay(e))
		dir := b.TempDir()
		if os.Getenv("TROCO_FLOOR_PROFILE") == "1" {
			logFloorProfile(b, kind.name, rec, dir, batch)
		}
		for _, v := range []struct {
			name string
			o    replayOptions
		}{
			{"savepoints/driver", replayOptions{batch: batch, savepoints: true}},
			{"no-savepoints/driver", replayOptions{batch: batch}},
			{"savepoints/database-sql", replayOptions{batch: batch, savepoints: true, databaseSQL: true}},
			{"no-savepoints/database-sql", replayOptions{batch: batch, databaseSQL: true}},
		} {
			b.Run(kind.name+"/"+v.name, func(b *testing.B) {
				var sum replayResult
				for range b.N {
					b.StopTimer()
					f, err := openFloorDB(rec, dir)
					if err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					res, err := replay(f, rec, v.o)
					b.StopTimer()
					f.close()
					if err != nil {
						b.Fatal(err)
					}
					sum.total += res.total
					sum.commit += res.commit
					sum.totalCPU += res.totalCPU
					sum.stmts += res.stmts
					b.StartTimer()
				}
				pays := float64(b.N * rec.payments)
				b.ReportMetric(float64(sum.total.Nanoseconds())/pays/1e3, "sql-µs/pay")
				b.ReportMetric(float64(sum.commit.Nanoseconds())/pays/1e3, "commit-µs/pay")
				b.ReportMetric(float64(sum.totalCPU.Nanoseconds())/pays/1e3, "sql-cpu-µs/pay")
				b.ReportMetric(float64(sum.stmts)/pays, "stmts/pay")
				b.ReportMetric(float64(len(rec.ops))/float64(rec.payments), "ops/pay")
				b.ReportMetric(float64(rec.writer.Busy.Nanoseconds())/float64(rec.payments)/1e3, "real-writer-µs/pay")
				b.ReportMetric(float64(rec.writer.Txs)/float64(max(1, rec.writer.Batches)), "real-ops/commit")
			})
		}
	}
}

// logFloorProfile replays rec once with each statement timed and logs, per statement text, how
// many run per payment, their time per payment and the B-tree entries each writes.
func logFloorProfile(b *testing.B, name string, rec *floorRecording, dir string, batch int) {
	f, err := openFloorDB(rec, dir)
	if err != nil {
		b.Fatal(err)
	}
	defer f.close()
	prof := map[string]*stmtProfile{}
	res, err := replay(f, rec, replayOptions{batch: batch, savepoints: true, profile: prof})
	if err != nil {
		b.Fatal(err)
	}
	queries := make([]string, 0, len(prof))
	for q := range prof {
		queries = append(queries, q)
	}
	sort.Slice(queries, func(i, j int) bool { return prof[queries[i]].d > prof[queries[j]].d })
	per := float64(rec.payments)
	w := rec.writer
	fmt.Printf("%s: %d payments, %d write operations in %d batches; the real writer: %.1f µs/payment busy, %.1f in COMMIT (recorder included)\n",
		name, rec.payments, len(rec.ops), rec.batches, float64(w.Busy.Nanoseconds())/per/1e3, float64(w.Commit.Nanoseconds())/per/1e3)
	fmt.Printf("replay, batches of %d, each statement timed: %.1f µs/payment, COMMIT %.1f µs\n", batch, float64(res.total.Nanoseconds())/per/1e3, float64(res.commit.Nanoseconds())/per/1e3)
	fmt.Printf("%8s %8s  %-60s %s\n", "n/pay", "µs/pay", "statement", "B-tree entries written")
	for _, q := range queries {
		p := prof[q]
		short := strings.Join(strings.Fields(q), " ")
		if len(short) > 60 {
			short = short[:57] + "..."
		}
		fmt.Printf("%8.2f %8.1f  %-60s %s\n", float64(p.n)/per, float64(p.d.Nanoseconds())/per/1e3, short, statementTrees(f, q))
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
