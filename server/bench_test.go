package server

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"troco/db"
	"troco/server/clock"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/jobs"
)

// Benchmarks of the request hot paths (see docs/PERFORMANCE.md):
//
//	go test ./server -run '^$' -bench . -benchmem
//
// They run on a real SQLite file in b.TempDir() with synchronous=FULL (the production default)
// and a text logger writing to io.Discard (formatting cost included, the write(2) not).

type benchEnv struct {
	s     *Server
	db    *db.DB
	org   *domain.Organization
	token string
	scope domain.Scope
	// dbPath is the database file.
	dbPath string
}

func newBenchEnv(b testing.TB) *benchEnv {
	b.Helper()
	if _, ok := b.(*testing.B); ok {
		checkEventAnswers = false // a test's check, not part of what a benchmark measures
	}
	schema, err := os.ReadFile(filepath.Join("..", "schema.sql"))
	if err != nil {
		b.Fatal(err)
	}
	clk := clock.NewOffset(clock.Real{}, 0)
	path := filepath.Join(b.TempDir(), "troco.db")
	d, err := db.Open(context.Background(), path, db.Options{Schema: string(schema), Clock: clk, Synchronous: cmp.Or(os.Getenv("TROCO_BENCH_SYNC"), "FULL")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	e := &benchEnv{db: d, dbPath: path}
	err = d.Write(context.Background(), func(tx *db.Tx) error {
		if e.org, err = core.CreateOrganization(tx, core.OrganizationInput{Name: "Bench Ltda"}); err != nil {
			return err
		}
		k, err := core.CreateAPIKey(tx, core.APIKeyInput{OrgID: e.org.ID, Scopes: []string{domain.ScopeRead, domain.ScopeWrite}})
		if err != nil {
			return err
		}
		e.token = k.Token
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	e.scope = domain.Scope{OrgID: e.org.ID}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e.s = New(Config{DB: d, Clock: clk, Logger: log, Jobs: jobs.NewRunner(clk, log), SimDelay: time.Minute})
	return e
}

func (e *benchEnv) request(method, path string, body []byte, headers ...string) *http.Request {
	var rdr io.Reader
	if body != nil {
		rdr = bytes.NewReader(body)
	}
	r := httptest.NewRequest(method, path, rdr)
	r.Header.Set("Authorization", "Bearer "+e.token)
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	return r
}

// serve runs one request through the whole handler stack (routing, log line, auth, idempotency,
// decode, transaction, encoding) without the network.
func (e *benchEnv) serve(b *testing.B, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	e.s.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		b.Fatalf("%s %s: %d %s", r.Method, r.URL.Path, w.Code, w.Body)
	}
	return w
}

func (e *benchEnv) createCustomer(b *testing.B) string {
	w := e.serve(b, e.request("POST", "/v1/customers", []byte(`{"email":"ana@example.com","name":"Ana"}`)))
	var c struct{ ID string }
	_ = json.Unmarshal(w.Body.Bytes(), &c)
	return c.ID
}

// BenchmarkAuthenticate is the per-request key lookup: parse, SHA-256, indexed read of the key.
func BenchmarkAuthenticate(b *testing.B) {
	e := newBenchEnv(b)
	r := e.request("GET", "/v1/customers", nil)
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := e.s.authenticate(r, domain.ScopeRead); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkIdempotency is the Idempotency-Key path of a retried POST: fingerprint of the body,
// lookup of the stored response and its replay.
func BenchmarkIdempotency(b *testing.B) {
	e := newBenchEnv(b)
	body := []byte(`{"email":"ana@example.com","name":"Ana","metadata":{"order":"1234"}}`)
	e.serve(b, e.request("POST", "/v1/customers", body, "Idempotency-Key", "bench-replay"))
	b.Run("replay", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b, cpuTime())
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				w := e.serve(b, e.request("POST", "/v1/customers", body, "Idempotency-Key", "bench-replay"))
				if w.Header().Get("Idempotent-Replayed") != "true" {
					b.Error("not replayed")
					return
				}
			}
		})
	})
	b.Run("fingerprint", func(b *testing.B) {
		// withIdempotency around a handler that answers nothing: read body, hash, lookup (miss).
		h := e.s.withIdempotency(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		info := &authInfo{Actor: domain.Actor{Scope: e.scope}}
		var n atomic.Int64
		b.ReportAllocs()
		defer reportCPU(b, cpuTime())
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				r := e.request("POST", "/v1/customers", body, "Idempotency-Key", "miss-"+strconv.FormatInt(n.Add(1), 10))
				h.ServeHTTP(httptest.NewRecorder(), r.WithContext(context.WithValue(r.Context(), ctxAuth, info)))
			}
		})
	})
}

// BenchmarkJSON is the encoding of a customer answer and of an error envelope.
func BenchmarkJSON(b *testing.B) {
	s := func(v string) *string { return &v }
	c := &domain.Customer{ID: domain.NewID(domain.PrefixCustomer), Object: "customer", CreatedAt: domain.At(time.Now()), UpdatedAt: domain.At(time.Now()),
		Email: s("ana@example.com"), Name: s("Ana Souza"), Phone: s("+5511999990000"), Document: s("52998224725"), DocumentType: s("cpf"),
		Address:  &domain.Address{Line1: "Rua Augusta", Number: "100", City: "São Paulo", State: "SP", PostalCode: "01304000", Country: "BR"},
		Metadata: domain.Metadata{"order": "1234"}}
	b.Run("customer", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b, cpuTime())
		for b.Loop() {
			if _, err := json.Marshal(c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("error", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b, cpuTime())
		for b.Loop() {
			_ = mustErrorBody(domain.Invalid("email", "email must be a valid address."))
		}
	})
	b.Run("writeRaw", func(b *testing.B) {
		body, _ := json.Marshal(c)
		w := httptest.NewRecorder()
		b.ReportAllocs()
		defer reportCPU(b, cpuTime())
		for b.Loop() {
			w.Body.Reset()
			writeRaw(w, http.StatusOK, body)
		}
	})
}

// BenchmarkHandler runs whole requests through Server.ServeHTTP with 2×GOMAXPROCS callers:
// everything but TLS and the socket.
func BenchmarkHandler(b *testing.B) {
	e := newBenchEnv(b)
	id := e.createCustomer(b)
	for range 200 {
		e.createCustomer(b)
	}
	body := []byte(`{"email":"ana@example.com","name":"Ana","metadata":{"run":"bench"}}`)
	var n atomic.Int64
	for _, tc := range []struct {
		name string
		req  func() *http.Request
	}{
		{"create", func() *http.Request { return e.request("POST", "/v1/customers", body) }},
		{"create_idempotent", func() *http.Request {
			return e.request("POST", "/v1/customers", body, "Idempotency-Key", "k-"+strconv.FormatInt(n.Add(1), 10))
		}},
		{"retrieve", func() *http.Request { return e.request("GET", "/v1/customers/"+id, nil) }},
		{"list", func() *http.Request { return e.request("GET", "/v1/customers?limit=10", nil) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b, cpuTime())
			b.SetParallelism(16) // 32 concurrent requests on 2 CPUs, like the load test
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					w := httptest.NewRecorder()
					e.s.ServeHTTP(w, tc.req())
					if w.Code != http.StatusOK {
						b.Errorf("%d %s", w.Code, w.Body)
						return
					}
				}
			})
		})
	}
}

// BenchmarkHTTPS is the load test in process: 32 keep-alive HTTP/1.1 TLS connections. Client
// and server share the CPUs, as with the real load generator.
func BenchmarkHTTPS(b *testing.B) {
	e := newBenchEnv(b)
	id := e.createCustomer(b)
	srv := httptest.NewUnstartedServer(e.s)
	srv.EnableHTTP2 = false
	srv.StartTLS()
	b.Cleanup(srv.Close)
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.MaxConnsPerHost, tr.MaxIdleConnsPerHost = 32, 32
	tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	client := &http.Client{Transport: tr}
	body := []byte(`{"email":"ana@example.com","name":"Ana","metadata":{"run":"bench"}}`)
	do := func(method, path string, body []byte) error {
		var rdr io.Reader
		if body != nil {
			rdr = bytes.NewReader(body)
		}
		req, _ := http.NewRequest(method, srv.URL+path, rdr)
		req.Header.Set("Authorization", "Bearer "+e.token)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			return &domain.Error{Message: "status " + strconv.Itoa(res.StatusCode)}
		}
		return nil
	}
	for _, tc := range []struct {
		name         string
		method, path string
		body         []byte
	}{{"create", "POST", "/v1/customers", body}, {"retrieve", "GET", "/v1/customers/" + id, nil}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b, cpuTime())
			b.SetParallelism(16)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := do(tc.method, tc.path, tc.body); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// cpuTime is the CPU time (user + system) of the whole process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds a cpu-µs/op metric: the process's CPU time per op since start. On a shared,
// busy machine it is steadier than ns/op, which also counts waiting for a CPU.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e3, "cpu-µs/op")
}
