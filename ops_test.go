package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// payConcurrently creates and confirms card payments on workers goroutines until stop closes,
// and returns the ids of the intents whose confirmation was acknowledged (200, succeeded), each
// with the instant the acknowledgement arrived.
func payConcurrently(in *instance, token string, workers int, stop chan struct{}) func() map[string]time.Time {
	var mu sync.Mutex
	acked := map[string]time.Time{}
	var wg sync.WaitGroup
	post := func(path, idem, body string) (int, map[string]any) {
		req, _ := http.NewRequest("POST", "https://"+in.addr+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", idem)
		res, err := in.client.Do(req)
		if err != nil {
			return 0, nil
		}
		defer res.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(res.Body).Decode(&m)
		return res.StatusCode, m
	}
	for w := range workers {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := fmt.Sprintf("w%d-%d-%d", w, i, time.Now().UnixNano())
				st, m := post("/v1/payment-intents", k+"pi", `{"amount":3000,"currency":"brl","payment_method_types":["credit_card"]}`)
				id, _ := m["id"].(string)
				if st != 200 || id == "" {
					continue
				}
				st, m = post("/v1/payment-intents/"+id+"/confirm", k+"cf", `{"card":{"number":"4242424242424242","exp_month":12,"exp_year":2040,"cvc":"123"}}`)
				if st == 200 && m["status"] == "succeeded" {
					mu.Lock()
					acked[id] = time.Now()
					mu.Unlock()
				}
			}
		})
	}
	return func() map[string]time.Time {
		wg.Wait()
		return acked
	}
}

// TestBackupUnderLoadRestoresEveryPayment: a backup taken by `troco backup` while payments are
// being confirmed restores (into a new data dir) to a database that serve starts on and that holds
// every payment acknowledged before the backup began. A restore onto the running database, from a
// truncated file or with another master key is refused with a clear message.
func TestBackupUnderLoadRestoresEveryPayment(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	addr := freeAddr(t)
	in := startServe(t, addr, envFrom(nil), "--addr", addr, "--data-dir", data, "--metrics-addr", "off")
	m := bootKeyLine.FindStringSubmatch(in.stdout.String())
	is.True(m != nil)
	key := m[1]

	// An uploaded file: its bytes live beside the database and must come back with it.
	fileID := uploadFile(t, in, key, []byte("%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"))

	stop := make(chan struct{})
	wait := payConcurrently(in, key, 4, stop)
	time.Sleep(1500 * time.Millisecond) // some payments before the backup
	backupStart := time.Now()
	file := filepath.Join(dir, "troco.backup")
	out, err := runCLI(t, envFrom(nil), "backup", "--to", file, "--data-dir", data)
	is.NoErr(err)
	is.True(strings.Contains(out, "backup written to"))
	time.Sleep(300 * time.Millisecond) // and some after it
	close(stop)
	acked := wait()
	var before []string
	for id, at := range acked {
		if at.Before(backupStart) {
			before = append(before, id)
		}
	}
	t.Logf("%d payments acknowledged, %d before the backup began", len(acked), len(before))
	is.True(len(before) > 0)
	st, err := os.Stat(file)
	is.NoErr(err)
	is.Equal(st.Mode().Perm(), os.FileMode(0o600)) // the backup holds the master key

	// The running database is not overwritten.
	_, err = runCLI(t, envFrom(nil), "restore", "--from", file, "--data-dir", data, "--force")
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "in use by a running troco serve"))

	// A truncated copy is refused, and leaves the target empty.
	raw, err := os.ReadFile(file)
	is.NoErr(err)
	short := filepath.Join(dir, "short.backup")
	is.NoErr(os.WriteFile(short, raw[:len(raw)/2], 0o600))
	_, err = runCLI(t, envFrom(nil), "restore", "--from", short, "--data-dir", filepath.Join(dir, "t1"))
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "truncated"))
	_, statErr := os.Stat(filepath.Join(dir, "t1", "troco.db"))
	is.True(os.IsNotExist(statErr))

	// A backup whose master key is not its database's is refused.
	wrong := filepath.Join(dir, "wrong.backup")
	is.NoErr(os.WriteFile(wrong, swapMasterKey(t, raw), 0o600))
	_, err = runCLI(t, envFrom(nil), "restore", "--from", wrong, "--data-dir", filepath.Join(dir, "t2"))
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "master key does not match"))

	// Restore into a new data dir, then serve it.
	restored := filepath.Join(dir, "restored")
	out, err = runCLI(t, envFrom(nil), "restore", "--from", file, "--data-dir", restored)
	is.NoErr(err)
	is.True(strings.Contains(out, "integrity check ok"))
	// Restoring again over it needs --force, and keeps the old files aside.
	_, err = runCLI(t, envFrom(nil), "restore", "--from", file, "--data-dir", restored)
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "--force"))
	out, err = runCLI(t, envFrom(nil), "restore", "--from", file, "--data-dir", restored, "--force")
	is.NoErr(err)
	is.True(strings.Contains(out, "kept aside"))

	is.NoErr(in.stop())
	addr2 := freeAddr(t)
	in2 := startServe(t, addr2, envFrom(nil), "--addr", addr2, "--data-dir", restored, "--metrics-addr", "off", "--rate-limit", "off") // the check reads every payment at once
	is.Equal(in2.do("GET", "/v1/files/"+fileID, key, nil).status, 200)                                                                 // its bytes were restored too
	for _, id := range before {
		a := in2.do("GET", "/v1/payment-intents/"+id, key, nil)
		if a.status != 200 || a.str("status") != "succeeded" {
			t.Fatalf("payment %s acknowledged before the backup: after the restore %d %s", id, a.status, a.raw)
		}
	}
}

// swapMasterKey returns the backup archive raw with its master.key replaced by another key.
func swapMasterKey(t *testing.T, raw []byte) []byte {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(raw))
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		if h.Name == "master.key" {
			body = []byte(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)) + "\n")
			h.Size = int64(len(body))
		}
		_ = tw.WriteHeader(h)
		_, _ = tw.Write(body)
	}
	_ = tw.Close()
	return buf.Bytes()
}

// TestDataDirIsPrivate: the data dir is 0700 and every file serve keeps in it (database, WAL,
// shared memory, lock, master key, certificates) is 0600, also one an older version left 0644.
func TestDataDirIsPrivate(t *testing.T) {
	is := is.New(t)
	data := filepath.Join(t.TempDir(), "data")
	is.NoErr(os.MkdirAll(data, 0o755))
	is.NoErr(os.WriteFile(filepath.Join(data, "old.pem"), []byte("x"), 0o644))
	is.NoErr(os.MkdirAll(filepath.Join(data, "autocert"), 0o755))
	addr := freeAddr(t)
	in := startServe(t, addr, envFrom(nil), "--addr", addr, "--data-dir", data, "--metrics-addr", "off")
	in.do("GET", "/healthz", "", nil)
	st, err := os.Stat(data)
	is.NoErr(err)
	is.Equal(st.Mode().Perm(), os.FileMode(0o700))
	entries, err := os.ReadDir(data)
	is.NoErr(err)
	names := map[string]bool{}
	for _, e := range entries {
		info, err := e.Info()
		is.NoErr(err)
		names[e.Name()] = true
		want := os.FileMode(0o600)
		if info.IsDir() {
			want = 0o700 // files/: the uploaded files
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s is %v, want %v", e.Name(), info.Mode().Perm(), want)
		}
	}
	for _, want := range []string{"troco.db", "troco.db-wal", "troco.db-shm", "troco.db.lock", "master.key", "ca.pem", "ca-key.pem", "localhost.pem", "localhost-key.pem"} {
		if !names[want] {
			t.Errorf("%s not in the data dir (have %v)", want, names)
		}
	}
}

// TestScheduledBackupsAndReadiness: serve --backup-dir writes backups on schedule and keeps the
// newest --backup-keep; /readyz answers 200 once serving and the metrics listener serves it too.
func TestScheduledBackupsAndReadiness(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	backups := filepath.Join(dir, "backups")
	addrs := freeAddrs(t, 2)
	in := startServe(t, addrs[0], envFrom(nil), "--addr", addrs[0], "--data-dir", filepath.Join(dir, "data"),
		"--metrics-addr", addrs[1], "--backup-dir", backups, "--backup-every", "1s", "--backup-keep", "2")
	is.Equal(in.do("GET", "/readyz", "", nil).status, 200)
	res, err := http.Get("http://" + addrs[1] + "/readyz")
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, 200)

	deadline := time.Now().Add(20 * time.Second)
	var files []string
	for time.Now().Before(deadline) {
		files, _ = filepath.Glob(filepath.Join(backups, "troco-*.backup"))
		if len(files) >= 2 {
			time.Sleep(2200 * time.Millisecond) // two more rounds: pruning must keep two
			files, _ = filepath.Glob(filepath.Join(backups, "troco-*.backup"))
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	is.Equal(len(files), 2)
	out, err := runCLI(t, envFrom(nil), "restore", "--from", files[len(files)-1], "--data-dir", filepath.Join(dir, "restored"))
	is.NoErr(err)
	is.True(strings.Contains(out, "integrity check ok"))

	// A second serve on the same database is refused at once (the first holds its lock).
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = run(ctx, []string{"serve", "--addr", freeAddr(t), "--data-dir", filepath.Join(dir, "data"), "--metrics-addr", "off"}, envFrom(nil), io.Discard, io.Discard)
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "in use by another troco serve"))
	is.NoErr(in.stop())
}

// scrape reads /metrics with the Prometheus text parser.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("/metrics: %d", res.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

// sample returns the value of the series of family name whose labels include want (counter,
// gauge, or a histogram's count); 0 when there is none.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return 0
	}
	total := 0.0
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			if labels[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			total += m.Counter.GetValue()
		case m.Gauge != nil:
			total += m.Gauge.GetValue()
		case m.Histogram != nil:
			total += float64(m.Histogram.GetSampleCount())
		}
	}
	return total
}

// TestMetricsMoveWithPaymentsAndDeliveries scrapes the metrics listener before and after card
// payments, a refund and webhook deliveries to a local receiver, and checks that the series
// move, that routes are patterns and that no id, token or card number is ever a label.
func TestMetricsMoveWithPaymentsAndDeliveries(t *testing.T) {
	is := is.New(t)
	var mu sync.Mutex
	delivered := 0
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		delivered++
		mu.Unlock()
	}))
	defer receiver.Close()

	addrs := freeAddrs(t, 2)
	in := startServe(t, addrs[0], envFrom(nil), "--addr", addrs[0], "--db", ":memory:", "--data-dir", t.TempDir(), "--metrics-addr", addrs[1])
	key := bootKeyLine.FindStringSubmatch(in.stdout.String())[1]
	before := scrape(t, addrs[1])
	is.True(sample(before, "troco_build_info", nil) == 1)
	is.True(before["troco_webhook_backlog"] != nil)
	is.True(before["troco_webhook_oldest_undelivered_age_seconds"] != nil)
	is.True(before["go_goroutines"] != nil)
	// The write pool: the single writer's own connection, and one for what runs outside it
	// (import into an idle database, the checkpoint at shutdown).
	is.True(sample(before, "go_sql_max_open_connections", map[string]string{"db_name": "writer"}) == 2)

	ep := in.do("POST", "/v1/webhook-endpoints", key, map[string]any{"url": receiver.URL + "/hook", "enabled_events": []string{"payment_intent.succeeded"}})
	is.Equal(ep.status, 200)
	var ids []string
	for range 3 {
		pi := in.do("POST", "/v1/payment-intents", key, map[string]any{"amount": 3000, "currency": "brl", "payment_method_types": []string{"credit_card"}})
		is.Equal(pi.status, 200)
		cf := in.do("POST", "/v1/payment-intents/"+pi.str("id")+"/confirm", key, map[string]any{"card": map[string]any{"number": "4242424242424242", "exp_month": 12, "exp_year": 2040, "cvc": "123"}})
		is.Equal(cf.str("status"), "succeeded")
		ids = append(ids, pi.str("id"))
	}
	declined := in.do("POST", "/v1/payment-intents", key, map[string]any{"amount": 3000, "currency": "brl", "payment_method_types": []string{"credit_card"}})
	in.do("POST", "/v1/payment-intents/"+declined.str("id")+"/confirm", key, map[string]any{"card": map[string]any{"number": "4000000000000002", "exp_month": 12, "exp_year": 2040, "cvc": "123"}})
	rf := in.do("POST", "/v1/refunds", key, map[string]any{"payment_intent": ids[0], "amount": 1000})
	is.Equal(rf.status, 200)
	in.do("GET", "/v1/payment-intents/"+ids[1], key, nil)

	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := delivered
		mu.Unlock()
		if n >= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	after := scrape(t, addrs[1])
	grew := func(name string, labels map[string]string, by float64) {
		t.Helper()
		if d := sample(after, name, labels) - sample(before, name, labels); d < by {
			t.Errorf("%s%v grew by %v, want at least %v", name, labels, d, by)
		}
	}
	grew("troco_http_requests_total", map[string]string{"route": "/v1/payment-intents/:id/confirm", "method": "POST", "code": "200"}, 3)
	grew("troco_http_requests_total", map[string]string{"route": "/v1/payment-intents/:id", "method": "GET", "code": "200"}, 1)
	grew("troco_http_request_duration_seconds", map[string]string{"route": "/v1/payment-intents", "method": "POST"}, 4)
	grew("troco_payments_total", map[string]string{"method": "credit_card", "outcome": "succeeded", "mode": "test"}, 3)
	grew("troco_payments_total", map[string]string{"method": "credit_card", "outcome": "failed", "mode": "test"}, 1)
	grew("troco_refunds_total", map[string]string{"mode": "test"}, 1)
	grew("troco_webhook_delivery_attempts_total", map[string]string{"result": "success"}, 3)
	grew("troco_webhook_delivery_duration_seconds", nil, 3)
	grew("troco_db_write_queue_wait_seconds", nil, 8)
	grew("troco_db_writer_operations_total", nil, 8)
	grew("troco_db_writer_batches_total", nil, 1)
	grew("troco_db_writer_busy_seconds_total", nil, 1e-6)
	grew("troco_db_writer_commit_seconds_total", nil, 1e-6)
	is.True(after["troco_db_wal_syncs_total"] != nil) // 0 here: an in-memory database has no WAL to sync

	// Labels are bounded: no id, token, card number or e-mail in any label value.
	for name, f := range after {
		for _, m := range f.Metric {
			for _, l := range m.Label {
				v := l.GetValue()
				for _, bad := range append([]string{key, "4242", "ch_test_", "@", declined.str("id")}, ids...) {
					if strings.Contains(v, bad) {
						t.Errorf("%s has label %s=%q", name, l.GetName(), v)
					}
				}
			}
		}
	}
}

// rawTLS opens a TLS connection to a serve instance, trusting its CA.
func rawTLS(t *testing.T, in *instance) *tls.Conn {
	t.Helper()
	cfg := in.client.Transport.(*http.Transport).TLSClientConfig.Clone()
	cfg.ServerName = "localhost"
	cfg.NextProtos = []string{"http/1.1"}
	c, err := tls.Dial("tcp", in.addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	return c
}

// TestTooLargeBodySentWholeGets413: a client that writes a 20 MB body completely before reading
// gets a complete 413 JSON answer, not a reset connection.
func TestTooLargeBodySentWholeGets413(t *testing.T) {
	is := is.New(t)
	addr := freeAddr(t)
	in := startServe(t, addr, envFrom(nil), "--addr", addr, "--db", ":memory:", "--data-dir", t.TempDir(), "--metrics-addr", "off")
	key := bootKeyLine.FindStringSubmatch(in.stdout.String())[1]
	for _, size := range []int{20 << 20, 2 << 20} {
		c := rawTLS(t, in)
		body := bytes.Repeat([]byte("a"), size)
		head := fmt.Sprintf("POST /v1/customers HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", addr, key, size)
		_, err := c.Write(append([]byte(head), body...)) // all of it before reading anything
		is.NoErr(err)
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		is.NoErr(err) // a status line, not an EOF
		raw, err := io.ReadAll(res.Body)
		is.NoErr(err) // the whole answer
		res.Body.Close()
		is.Equal(res.StatusCode, 413)
		var env struct {
			Error struct{ Code, Type string }
		}
		is.NoErr(json.Unmarshal(raw, &env))
		is.Equal(env.Error.Code, "request_too_large")
	}
}

// TestEarlyErrorsAnswerJSONAndAreLogged: requests net/http refuses before any handler runs (a
// control byte in a header, a 100 KB header, a bad request line) get the JSON error envelope
// with the right status, and each is logged.
func TestEarlyErrorsAnswerJSONAndAreLogged(t *testing.T) {
	addrs := freeAddrs(t, 2)
	addr := addrs[0]
	in := startServe(t, addr, envFrom(nil), "--addr", addr, "--db", ":memory:", "--data-dir", t.TempDir(), "--metrics-addr", "off", "--log-format", "json",
		"--http-addr", addrs[1])
	for _, tc := range []struct {
		name, request string
		status        int
		code          string
	}{
		{"control byte in a header", "GET /v1/customers HTTP/1.1\r\nHost: x\r\nX-Note: a\x01b\r\n\r\n", 400, "invalid_request"},
		{"100 KB header", "GET /v1/customers HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 100<<10) + "\r\n\r\n", 431, "request_too_large"},
		{"bad request line", "GARBAGE-WITHOUT-A-PATH-OR-VERSION\r\nHost: x\r\n\r\n", 400, "invalid_request"},
		{"no host", "GET /v1/customers HTTP/1.1\r\n\r\n", 400, "invalid_request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			c := rawTLS(t, in)
			_, err := io.WriteString(c, tc.request)
			is.NoErr(err)
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			is.NoErr(err)
			raw, err := io.ReadAll(res.Body)
			is.NoErr(err)
			is.Equal(res.StatusCode, tc.status)
			is.True(strings.HasPrefix(res.Header.Get("Content-Type"), "application/json"))
			is.True(strings.HasPrefix(res.Header.Get("Request-Id"), "req_"))
			var env struct {
				Error struct{ Type, Code, Message string }
			}
			is.NoErr(json.Unmarshal(raw, &env))
			is.Equal(env.Error.Type, "invalid_request_error")
			is.Equal(env.Error.Code, tc.code)
			is.True(strings.Contains(in.stderr.String(), `"status":`+fmt.Sprint(tc.status)))
		})
	}
	// The plain-HTTP listener answers the same way.
	is := is.New(t)
	c, err := net.Dial("tcp", addrs[1])
	is.NoErr(err)
	defer c.Close()
	_, err = io.WriteString(c, "GET /v1/customers HTTP/1.1\r\nHost: x\r\nX-Note: a\x01b\r\n\r\n")
	is.NoErr(err)
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	is.NoErr(err)
	is.Equal(res.StatusCode, 400)
	is.True(strings.HasPrefix(res.Header.Get("Content-Type"), "application/json"))
	res.Body.Close()
	is.Equal(strings.Count(in.stderr.String(), "request refused before routing"), 5)
	is.True(!strings.Contains(in.stderr.String(), "aaaaaaaa")) // the header itself is never logged
}

// TestBannerComesAfterReadiness: the moment the start banner (with the bootstrap key) is
// printed, the server already answers /readyz with 200, so a script that waits for the key can
// use it at once.
func TestBannerComesAfterReadiness(t *testing.T) {
	is := is.New(t)
	addr := freeAddr(t)
	data := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", addr, "--db", ":memory:", "--data-dir", data, "--metrics-addr", "off"}, envFrom(nil), stdout, io.Discard)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !bootKeyLine.MatchString(stdout.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("no banner: %s", stdout.String())
		}
		time.Sleep(time.Millisecond)
	}
	pem, err := os.ReadFile(filepath.Join(data, "ca.pem"))
	is.NoErr(err)
	pool := x509.NewCertPool()
	is.True(pool.AppendCertsFromPEM(pem))
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer client.CloseIdleConnections()
	res, err := client.Get("https://" + addr + "/readyz")
	is.NoErr(err) // already listening
	res.Body.Close()
	is.Equal(res.StatusCode, 200) // and ready
	cancel()
	is.NoErr(<-done)
}

// uploadFile uploads content as dispute evidence and returns the file's id.
func uploadFile(t *testing.T, in *instance, key string, content []byte) string {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	_ = w.WriteField("purpose", "dispute_evidence")
	part, _ := w.CreateFormFile("file", "evidence.pdf")
	_, _ = part.Write(content)
	_ = w.Close()
	req, _ := http.NewRequest("POST", "https://"+in.addr+"/v1/files", &body)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", w.FormDataContentType())
	res, err := in.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(res.Body).Decode(&m)
	id, _ := m["id"].(string)
	if res.StatusCode != 200 || id == "" {
		t.Fatalf("upload: %d %v", res.StatusCode, m)
	}
	return id
}
