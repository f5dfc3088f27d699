//go:build unix

package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"troco/db"
	"troco/server"
	"troco/server/clock"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/jobs"
	"troco/server/secrets"
	"troco/server/webhooks"
)

// processCPU is the CPU time (user + system) this process has used. The benchmarks report CPU per
// operation beside the rate: on a shared machine the rate swings with the neighbours' load, the
// CPU cost of an operation much less.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// webhookBench is a database with one organization, its test key and a keyring.
type webhookBench struct {
	db    *db.DB
	clock *clock.Offset
	keys  *secrets.Keyring
	actor domain.Actor
	token string
	log   *slog.Logger
}

func newWebhookBench(b testing.TB) *webhookBench {
	b.Helper()
	clk := clock.NewOffset(clock.Real{}, 0)
	d, err := db.Open(context.Background(), filepath.Join(b.TempDir(), "troco.db"), db.Options{Schema: schemaSQL(b), PostgresSchema: pgSchemaSQL(b), Clock: clk, Synchronous: "NORMAL"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	w := &webhookBench{db: d, clock: clk, keys: secrets.Random(), log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	err = d.Write(context.Background(), func(tx *db.Tx) error {
		org, err := core.CreateOrganization(tx, core.OrganizationInput{Name: "Bench"})
		if err != nil {
			return err
		}
		k, err := core.CreateAPIKey(tx, core.APIKeyInput{OrgID: org.ID, Scopes: []string{domain.ScopeRead, domain.ScopeWrite}})
		w.actor, w.token = domain.Actor{Scope: domain.Scope{OrgID: org.ID}}, k.Token
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return w
}

func (w *webhookBench) endpoint(b testing.TB, url string) {
	b.Helper()
	err := w.db.Write(context.Background(), func(tx *db.Tx) error {
		_, err := core.CreateWebhookEndpoint(tx, w.actor, core.WebhookEnv{Secrets: w.keys},
			core.WebhookEndpointParams{URL: domain.Opt[string]{Set: true, V: url}, EnabledEvents: domain.Opt[[]string]{Set: true, V: []string{"*"}}})
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkWebhookDelivery measures events delivered per second to a local receiver: b.N events
// are queued first, then the background dispatcher (default options) drains the outbox; each
// delivery is signed, posted, and recorded with its outbox update in its own transaction.
func BenchmarkWebhookDelivery(b *testing.B) {
	for _, endpoints := range []int{1, 8} {
		b.Run(fmt.Sprintf("endpoints=%d", endpoints), func(b *testing.B) {
			w := newWebhookBench(b)
			target := int64(b.N * endpoints)
			var hits atomic.Int64
			done := make(chan struct{})
			rc := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				rw.WriteHeader(http.StatusNoContent)
				if hits.Add(1) == target {
					close(done)
				}
			}))
			defer rc.Close()
			for i := range endpoints {
				w.endpoint(b, fmt.Sprintf("%s/hooks/%d", rc.URL, i))
			}
			for i := 0; i < b.N; i += 200 {
				err := w.db.Write(context.Background(), func(tx *db.Tx) error {
					for j := i; j < min(i+200, b.N); j++ {
						if _, err := core.CreateCustomer(tx, w.actor, core.CustomerParams{Email: domain.Opt[string]{Set: true, V: "bench@example.com"}}); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			d := webhooks.New(webhooks.Options{DB: w.db, Clock: w.clock, Secrets: w.keys, Logger: w.log})
			b.ResetTimer()
			cpu := processCPU()
			d.Start()
			<-done
			b.StopTimer()
			cpu = processCPU() - cpu
			d.Stop()
			secs := b.Elapsed().Seconds()
			b.ReportMetric(float64(b.N)/secs, "events/s")
			b.ReportMetric(float64(target)/secs, "deliveries/s")
			b.ReportMetric(float64(cpu.Microseconds())/float64(target), "cpu-µs/delivery")
		})
	}
}

// BenchmarkAPIWithSlowEndpoints measures POST /v1/customers over HTTPS, in parallel, with no
// endpoint; with 10 endpoints attached but no dispatcher running (the cost of writing 10 outbox
// rows per event); with 10 endpoints that take one second to answer each delivery while the
// dispatcher runs; and with 10 fast ones (the dispatcher then does ten deliveries per request on
// the same CPUs). slow=10 must match idle=10: a slow endpoint never holds a transaction, a
// request or the writer.
func BenchmarkAPIWithSlowEndpoints(b *testing.B) {
	for _, tc := range []struct {
		name       string
		endpoints  int
		delay      time.Duration
		dispatcher bool
	}{{"none", 0, 0, true}, {"idle=10", 10, 0, false}, {"slow=10", 10, time.Second, true}, {"fast=10", 10, 0, true}} {
		b.Run(tc.name, func(b *testing.B) {
			w := newWebhookBench(b)
			for range tc.endpoints {
				rc := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
					select {
					case <-time.After(tc.delay):
					case <-r.Context().Done():
					}
				}))
				defer rc.Close()
				w.endpoint(b, rc.URL+"/hooks")
			}
			runner := jobs.NewRunner(w.clock, w.log)
			srv := httptest.NewTLSServer(server.New(server.Config{DB: w.db, Clock: w.clock, Logger: w.log, Jobs: runner, Secrets: w.keys}))
			defer srv.Close()
			client := srv.Client()
			client.Transport.(*http.Transport).MaxIdleConnsPerHost = 256
			if tc.dispatcher {
				d := webhooks.New(webhooks.Options{DB: w.db, Clock: w.clock, Secrets: w.keys, Logger: w.log})
				d.Start()
				defer d.Stop()
			}
			body := []byte(`{"email":"ana@example.com"}`)
			b.ResetTimer()
			cpu := processCPU()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req, _ := http.NewRequest("POST", srv.URL+"/v1/customers", bytes.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+w.token)
					req.Header.Set("Content-Type", "application/json")
					res, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != 200 {
						b.Errorf("status %d", res.StatusCode)
						return
					}
				}
			})
			b.StopTimer()
			cpu = processCPU() - cpu
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/req")
		})
	}
}

// BenchmarkWebhookDeliveryChaos is BenchmarkWebhookDelivery/endpoints=1 with chaos on the
// endpoint: each event numbered at its first claim (one more write transaction), one attempt in
// flight at a time (so the seeded decisions follow the events' order), and duplicate_rate 10 %
// sent twice. Drops, forced failures and holds are left out: they wait for real retry delays.
func BenchmarkWebhookDeliveryChaos(b *testing.B) {
	w := newWebhookBench(b)
	var unique atomic.Int64
	seen := make(map[string]bool)
	var mu sync.Mutex
	done := make(chan struct{})
	rc := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		rw.WriteHeader(http.StatusNoContent)
		mu.Lock()
		first := !seen[r.Header.Get("webhook-id")]
		seen[r.Header.Get("webhook-id")] = true
		mu.Unlock()
		if first && unique.Add(1) == int64(b.N) {
			close(done)
		}
	}))
	defer rc.Close()
	err := w.db.Write(context.Background(), func(tx *db.Tx) error {
		_, err := core.CreateWebhookEndpoint(tx, w.actor, core.WebhookEnv{Secrets: w.keys},
			core.WebhookEndpointParams{URL: domain.Opt[string]{Set: true, V: rc.URL + "/hooks"}, EnabledEvents: domain.Opt[[]string]{Set: true, V: []string{"*"}},
				Chaos: domain.Opt[domain.WebhookChaos]{Set: true, V: domain.WebhookChaos{Seed: 7, DuplicateRate: 1000}}})
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i += 200 {
		err := w.db.Write(context.Background(), func(tx *db.Tx) error {
			for j := i; j < min(i+200, b.N); j++ {
				if _, err := core.CreateCustomer(tx, w.actor, core.CustomerParams{Email: domain.Opt[string]{Set: true, V: "bench@example.com"}}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	d := webhooks.New(webhooks.Options{DB: w.db, Clock: w.clock, Secrets: w.keys, Logger: w.log})
	b.ResetTimer()
	cpu := processCPU()
	d.Start()
	<-done
	b.StopTimer()
	cpu = processCPU() - cpu
	d.Stop()
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)/secs, "events/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/event")
}

// TestWebhookBacklog measures how long a receiver that comes back after an outage takes to
// catch up: N events are created while the endpoint answers 503 (the dispatcher runs and tries
// them, so the endpoint is failing and its rows wait in backoff), then the receiver recovers,
// the clock moves past every scheduled retry (as if the backoff had elapsed), and the time until
// every event has been delivered once is the catch-up. A measurement, skipped unless asked for:
//
//	TROCO_WEBHOOK_BACKLOG=100000 go test ./server -run TestWebhookBacklog -v -timeout 60m
func TestWebhookBacklog(t *testing.T) {
	n := 0
	if _, err := fmt.Sscan(os.Getenv("TROCO_WEBHOOK_BACKLOG"), &n); err != nil || n <= 0 {
		t.Skip("set TROCO_WEBHOOK_BACKLOG=N to measure the catch-up of N events")
	}
	w := newWebhookBench(t)
	var down atomic.Bool
	down.Store(true)
	var failed, delivered atomic.Int64
	seen := sync.Map{}
	done := make(chan struct{})
	rc := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if down.Load() {
			failed.Add(1)
			rw.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		id := r.Header.Get("webhook-id")
		if _, dup := seen.LoadOrStore(id, true); !dup {
			if delivered.Add(1) == int64(n) {
				close(done)
			}
		}
		_ = body
		rw.WriteHeader(http.StatusNoContent)
	}))
	defer rc.Close()
	w.endpoint(t, rc.URL+"/hooks")
	d := webhooks.New(webhooks.Options{DB: w.db, Clock: w.clock, Secrets: w.keys, Logger: w.log})
	d.Start()
	t0 := time.Now()
	for i := 0; i < n; i += 500 {
		err := w.db.Write(context.Background(), func(tx *db.Tx) error {
			for j := i; j < min(i+500, n); j++ {
				if _, err := core.CreateCustomer(tx, w.actor, core.CustomerParams{Email: domain.Opt[string]{Set: true, V: "backlog@example.com"}}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("outage: %d events created in %s while the receiver answered 503 (%d failed attempts so far)", n, time.Since(t0).Round(time.Millisecond), failed.Load())
	time.Sleep(2 * time.Second)
	down.Store(false)
	w.clock.Advance(48 * time.Hour) // past every retry the outage scheduled
	start, cpu := time.Now(), processCPU()
	last := time.Now()
	for {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			if time.Since(last) > 30*time.Second {
				t.Logf("progress: %d/%d delivered after %s", delivered.Load(), n, time.Since(start).Round(time.Second))
				last = time.Now()
			}
			continue
		}
		break
	}
	el := time.Since(start)
	cpu = processCPU() - cpu
	d.Stop()
	t.Logf("catch-up: %d events delivered in %s = %.0f events/s, %.0f µs of CPU per event (receiver and sender); %d failed attempts during the outage",
		n, el.Round(time.Millisecond), float64(n)/el.Seconds(), float64(cpu.Microseconds())/float64(n), failed.Load())
}
