package main

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestMain lets the crash tests run the real program in a child process (the test binary
// re-executed with crashChildEnv set), so that it can be killed with SIGKILL.
func TestMain(m *testing.M) {
	if os.Getenv(crashChildEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

const crashChildEnv = "TROCO_TEST_CRASH_CHILD"

// child is `troco serve` running in a child process on a file database.
type child struct {
	cmd    *exec.Cmd
	exited chan error
	out    bytes.Buffer
}

func startChild(t *testing.T, dir, addr, key string, extra ...string) *child {
	t.Helper()
	c := &child{exited: make(chan error, 1)}
	args := append([]string{"serve", "--addr", addr, "--db", filepath.Join(dir, "troco.db"), "--data-dir", dir,
		"--sandbox-key", key, "--rate-limit", "off"}, extra...)
	c.cmd = exec.Command(os.Args[0], args...)
	c.cmd.Env = append(os.Environ(), crashChildEnv+"=1")
	c.cmd.Stdout, c.cmd.Stderr = &c.out, io.Discard
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start child: %v", err)
	}
	go func() { c.exited <- c.cmd.Wait() }()
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
	})
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if cl := crashClient(dir, addr, key); cl != nil {
			if resp, err := cl.hc.Get(cl.base + "/healthz"); err == nil {
				resp.Body.Close()
				return c
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("child did not start:\n%s", c.out.String())
	return nil
}

type crashAPI struct {
	base, key string
	hc        *http.Client
}

func crashClient(dir, addr, key string) *crashAPI {
	ca, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		return nil
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"}, MaxIdleConnsPerHost: 16}
	return &crashAPI{base: "https://" + addr, key: key, hc: &http.Client{Transport: tr, Timeout: 20 * time.Second}}
}

// send sends a keyed write; status 0 means no answer arrived.
func (c *crashAPI) send(method, path, idem string, body []byte) (int, map[string]any, http.Header) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, _ := http.NewRequest(method, c.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, nil
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, nil
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, m, resp.Header
}

// crashOp is one keyed write of the load and what came back.
type crashOp struct {
	path, key string
	body      []byte
	confirm   bool   // a card confirmation of intent pi
	pi        string // the intent confirmed
	status    int    // 0: no answer (in flight at the crash)
	id        string
}

// crashLoad runs keyed customer creates and card payments (create + confirm) on workers
// connections until stop is closed, and returns every write with its outcome. acked counts the
// writes answered 200 so far.
func crashLoad(c *crashAPI, workers int, stop chan struct{}, acked *atomic.Int64) []*crashOp {
	var mu sync.Mutex
	var ops []*crashOp
	run := func(o *crashOp) bool {
		mu.Lock()
		ops = append(ops, o)
		mu.Unlock()
		st, m, _ := c.send("POST", o.path, o.key, o.body)
		o.status = st
		o.id, _ = m["id"].(string)
		if st == 200 {
			acked.Add(1)
		}
		return st == 200
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := fmt.Sprintf("w%d-%d-", w, i)
				if i%3 == 0 {
					if !run(&crashOp{path: "/v1/customers", key: k + "cus", body: fmt.Appendf(nil, `{"email":"%scrash@example.com"}`, k)}) {
						return
					}
					continue
				}
				pi := &crashOp{path: "/v1/payment-intents", key: k + "pi", body: []byte(`{"amount":3000,"currency":"brl","payment_method_types":["credit_card"]}`)}
				if !run(pi) {
					return
				}
				cf := &crashOp{path: "/v1/payment-intents/" + pi.id + "/confirm", key: k + "confirm", confirm: true, pi: pi.id,
					body: []byte(`{"card":{"number":"4242424242424242","exp_month":12,"exp_year":2040,"cvc":"123"},"installments":3}`)}
				if !run(cf) {
					return
				}
			}
		})
	}
	wg.Wait()
	return ops
}

// checkCrashOps checks that every acknowledged write is there after the restart, that every
// write left without an answer gives one answer when retried with its key, and that each
// confirmed intent has exactly one charge, three ledger entries and its events.
func checkCrashOps(t *testing.T, c *crashAPI, ops []*crashOp) (acked, retried int) {
	is := is.New(t)
	confirmed := map[string]bool{}
	for _, o := range ops {
		if o.status == 0 {
			retried++
			st, m, _ := c.send("POST", o.path, o.key, o.body)
			is.Equal(st, 200) // the retry answers: replayed, or run once now
			o.id, _ = m["id"].(string)
		} else {
			acked++
			is.Equal(o.status, 200) // every write of the load succeeds
		}
		if o.confirm {
			confirmed[o.pi] = true
			continue
		}
		kind := "customers"
		if o.path == "/v1/payment-intents" {
			kind = "payment-intents"
		}
		st, m, _ := c.send("GET", "/v1/"+kind+"/"+o.id, "", nil)
		is.Equal(st, 200) // an acknowledged (or retried) create is there
		is.Equal(m["id"], o.id)
	}
	events := map[string]int{}
	for _, typ := range []string{"payment_intent.succeeded", "charge.succeeded"} {
		after := ""
		for {
			path := "/v1/events?limit=100&type=" + typ
			if after != "" {
				path += "&starting_after=" + after
			}
			st, m, _ := c.send("GET", path, "", nil)
			is.Equal(st, 200)
			data, _ := m["data"].([]any)
			for _, d := range data {
				obj := d.(map[string]any)["data"].(map[string]any)["object"].(map[string]any)
				pi, _ := obj["payment_intent"].(string)
				if pi == "" {
					pi, _ = obj["id"].(string)
				}
				events[typ+" "+pi]++
				after = d.(map[string]any)["id"].(string)
			}
			if m["has_more"] != true {
				break
			}
		}
	}
	for pi := range confirmed {
		st, m, _ := c.send("GET", "/v1/payment-intents/"+pi, "", nil)
		is.Equal(st, 200)
		is.Equal(m["status"], "succeeded") // every confirmation committed whole
		_, charges, _ := c.send("GET", "/v1/charges?payment_intent="+pi, "", nil)
		is.Equal(len(charges["data"].([]any)), 1) // exactly one charge, retries included
		_, ledger, _ := c.send("GET", "/v1/transactions?payment_intent="+pi, "", nil)
		is.Equal(len(ledger["data"].([]any)), 3) // one entry per instalment
		is.Equal(events["payment_intent.succeeded "+pi], 1)
		is.Equal(events["charge.succeeded "+pi], 1)
	}
	return acked, retried
}

func crashKey(t *testing.T) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "ch_test_" + base64.RawURLEncoding.EncodeToString(b)
}

// waitForLoad waits at least d and until the load has had some writes acknowledged (at most a
// minute more), so that a kill lands mid-load even on a slow or busy machine (the race detector
// on two loaded cores can take seconds for the first answers).
func waitForLoad(acked *atomic.Int64, d time.Duration) {
	time.Sleep(d)
	for deadline := time.Now().Add(time.Minute); acked.Load() < 20 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCrashLosesNoAcknowledgedWrite kills the server with SIGKILL in the middle of a load of
// keyed writes, twice, and checks after each restart on the same file that every acknowledged
// write is there, consistent, and that the writes left unanswered can be retried with their
// Idempotency-Key without charging twice.
func TestCrashLosesNoAcknowledgedWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns the server")
	}
	dir, addr, key := t.TempDir(), freeAddr(t), crashKey(t)
	srv := startChild(t, dir, addr, key)
	for round, after := range []time.Duration{400 * time.Millisecond, 900 * time.Millisecond} {
		c := crashClient(dir, addr, key)
		stop := make(chan struct{})
		done := make(chan []*crashOp)
		var ackedSoFar atomic.Int64
		go func() { done <- crashLoad(c, 8, stop, &ackedSoFar) }()
		waitForLoad(&ackedSoFar, after)
		is.New(t).NoErr(srv.cmd.Process.Signal(syscall.SIGKILL))
		<-srv.exited
		close(stop)
		ops := <-done
		srv = startChild(t, dir, addr, key)
		acked, retried := checkCrashOps(t, crashClient(dir, addr, key), ops)
		t.Logf("round %d: killed after %v: %d acknowledged writes found, %d unanswered retried", round+1, after, acked, retried)
		if acked == 0 {
			t.Fatalf("round %d: no write was acknowledged before the kill", round+1)
		}
	}
}

// TestGracefulShutdownUnderLoad sends SIGTERM in the middle of a load: the process exits 0 soon,
// the WAL is checkpointed away, every acknowledged write is there after a restart and the
// requests left unanswered (refused once the listener closed) retry cleanly with their key.
func TestGracefulShutdownUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns the server")
	}
	is := is.New(t)
	dir, addr, key := t.TempDir(), freeAddr(t), crashKey(t)
	srv := startChild(t, dir, addr, key)
	c := crashClient(dir, addr, key)
	stop := make(chan struct{})
	done := make(chan []*crashOp)
	var ackedSoFar atomic.Int64
	go func() { done <- crashLoad(c, 8, stop, &ackedSoFar) }()
	waitForLoad(&ackedSoFar, 500*time.Millisecond)
	t0 := time.Now()
	is.NoErr(srv.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-srv.exited:
		is.NoErr(err)                            // exit status 0
		is.True(time.Since(t0) < 10*time.Second) // promptly
	case <-time.After(30 * time.Second):
		t.Fatal("no exit 30 s after SIGTERM")
	}
	close(stop)
	ops := <-done
	wal, err := os.Stat(filepath.Join(dir, "troco.db-wal"))
	is.True(os.IsNotExist(err) || wal.Size() == 0) // checkpointed on close
	srv = startChild(t, dir, addr, key)
	acked, retried := checkCrashOps(t, crashClient(dir, addr, key), ops)
	t.Logf("SIGTERM: %d acknowledged writes found, %d refused at the door and retried", acked, retried)
	is.True(acked > 0)
}

// TestShutdownDoesNotWaitForUnusedConnections: a connection on which no request was ever sent (a
// browser's preconnection, a client pool's spare) does not hold a graceful shutdown for the 5 s
// net/http grants it (it would drop a request arriving there during the shutdown anyway).
func TestShutdownDoesNotWaitForUnusedConnections(t *testing.T) {
	is := is.New(t)
	dir, addr := t.TempDir(), freeAddr(t)
	in := startServe(t, addr, envFrom(nil), "--addr", addr, "--db", filepath.Join(dir, "troco.db"), "--data-dir", dir)
	unused, err := tls.Dial("tcp", addr, in.client.Transport.(*http.Transport).TLSClientConfig) // handshake done, never used
	is.NoErr(err)
	defer unused.Close()
	time.Sleep(100 * time.Millisecond) // accepted
	t0 := time.Now()
	is.NoErr(in.stop())                     // graceful: nil
	is.True(time.Since(t0) < 3*time.Second) // not held 5 s by the unused connection
}
