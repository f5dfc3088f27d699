package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"troco/server/tlsutil"
)

// The HTTPS floor (-scenario floor): what one HTTPS request costs on this machine with this
// load generator, against a server that does nothing else. The tool starts itself as a child
// process with the hidden flag -floor-server: a plain Go net/http server on a loopback port, with
// a certificate made as troco's development certificate is (a local ECDSA P-256 CA and a leaf,
// tlsutil.EnsureLocal) and troco's TLS configuration (tlsutil.ServerConfig). Each request is a
// POST of a ~150-byte JSON body, which the server reads and checks is JSON, answered with a fixed
// ~1.2 KB JSON object (the size of a payment intent). The figures printed are the same as for
// the other scenarios: rate, latency percentiles, the server's CPU per request and the client's
// CPU; the difference to troco's is what troco does beyond moving the bytes.

// floorRequest is the body the floor scenario posts (about 150 bytes, like a payment's).
const floorRequest = `{"amount":%d,"currency":"brl","payment_method_types":["credit_card"],"description":"Pedido %06d","metadata":{"order_id":"%06d","channel":"web"}}`

// floorAnswer is the floor server's fixed answer: a payment intent's shape and size.
var floorAnswer = func() []byte {
	pi := map[string]any{
		"id": "pi_3Pq8vX2eZvKYlo2C0x9f7Abc", "object": "payment_intent", "amount": 12345, "amount_capturable": 0,
		"amount_received": 12345, "application_fee_amount": nil, "canceled_at": nil, "cancellation_reason": nil,
		"capture_method": "automatic", "client_secret": "pi_3Pq8vX2eZvKYlo2C0x9f7Abc_secret_4dfK9s8QwErTyUiOpAsDfGhJk",
		"confirmation_method": "automatic", "created": 1764324000, "currency": "brl", "customer": nil,
		"description": "Pedido 000123", "installments": map[string]any{"count": 1, "plan": nil},
		"last_payment_error": nil, "latest_charge": "ch_3Pq8vX2eZvKYlo2C0x9f7Def", "livemode": false,
		"metadata": map[string]string{"order_id": "000123", "channel": "web"}, "next_action": nil,
		"payment_method": "pm_1Pq8vX2eZvKYlo2C0x9f7Ghi", "payment_method_types": []string{"credit_card"},
		"payment_method_options": map[string]any{"credit_card": map[string]any{"installments": nil, "request_three_d_secure": "automatic"}},
		"receipt_email":          nil, "setup_future_usage": nil, "statement_descriptor": "MINHA LOJA", "statement_descriptor_suffix": nil,
		"status": "succeeded", "transfer_data": nil, "transfer_group": nil,
		"charges": map[string]any{"object": "list", "has_more": false, "url": "/v1/charges?payment_intent=pi_3Pq8vX2eZvKYlo2C0x9f7Abc",
			"data": []map[string]any{{"id": "ch_3Pq8vX2eZvKYlo2C0x9f7Def", "object": "charge", "amount": 12345, "paid": true,
				"status": "succeeded", "payment_method_details": map[string]any{"type": "credit_card", "credit_card": map[string]any{"brand": "visa", "last4": "4242"}}}}},
	}
	b, _ := json.Marshal(pi)
	return append(b, '\n')
}()

// floorServerMain is the child process of -scenario floor: it serves the floor on a loopback
// port and prints "floor-server https://127.0.0.1:PORT CA-FILE" once it listens, then serves
// until SIGTERM or SIGINT.
func floorServerMain(args []string) error {
	fs := flag.NewFlagSet("loadtest -floor-server", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory for the generated CA and certificate")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("-floor-server needs -dir")
	}
	lc, err := tlsutil.EnsureLocal(*dir, time.Now())
	if err != nil {
		return err
	}
	cert, err := tlsutil.Load(lc.CertPath, lc.KeyPath)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /floor", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<10))
		if err != nil || !json.Valid(body) {
			http.Error(w, `{"error":{"type":"invalid_request_error"}}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(floorAnswer)
	})
	srv := &http.Server{Handler: mux, TLSConfig: tlsutil.ServerConfig(cert), ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 60 * time.Second, WriteTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Shutdown(context.Background())
	}()
	fmt.Printf("floor-server https://%s %s\n", ln.Addr(), lc.CAPath)
	if err := srv.ServeTLS(ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// startFloorServer starts this executable with -floor-server and waits for its address.
func startFloorServer(dir, logPath string) (*spawned, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-floor-server", "-dir", dir)
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s := &spawned{cmd: cmd, dir: dir, waited: make(chan error, 1), token: "floor"}
	s.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, out)
		s.waited <- cmd.Wait()
	}()
	select {
	case l, ok := <-line:
		f := strings.Fields(l)
		if !ok || len(f) != 3 || f[0] != "floor-server" {
			s.stop()
			return nil, fmt.Errorf("floor server did not start (log %s)", logPath)
		}
		s.url, s.cacert = f[1], f[2]
	case <-time.After(30 * time.Second):
		s.stop()
		return nil, fmt.Errorf("floor server not listening within 30 s (log %s)", logPath)
	}
	s.ready = time.Since(s.started)
	return s, nil
}

// runFloor measures the HTTPS floor: -runs runs, each against a fresh floor server.
func runFloor(cfg config) error {
	parent, err := os.MkdirTemp(cfg.dir, "troco-loadtest-floor-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(parent)
	fmt.Printf("floor server: Go net/http, HTTP/1.1 keep-alive, troco's TLS configuration and kind of certificate; POST of %d bytes answered with %d bytes of JSON\n",
		len(fmt.Sprintf(floorRequest, 12345, 123, 123)), len(floorAnswer))
	var results []runResult
	for i := range cfg.runs {
		dir := filepath.Join(parent, fmt.Sprintf("run%d", i+1))
		srv, err := startFloorServer(dir, dir+".log")
		if err != nil {
			return err
		}
		pid := srv.cmd.Process.Pid
		rssStart := procStatus(pid, "VmRSS")
		res, err := runLoad(cfg, srv.url, srv.cacert, srv.token, pid)
		res.peakRSS = procStatus(pid, "VmHWM")
		res.startRSS = rssStart
		res.ready = srv.ready
		if stopErr := srv.stop(); stopErr != nil && err == nil {
			fmt.Fprintf(os.Stderr, "floor server stop: %v\n", stopErr)
		}
		if err != nil {
			return err
		}
		fmt.Printf("run %d/%d: floor server\n", i+1, cfg.runs)
		res.print()
		reqs := max(1, res.total.Requests)
		fmt.Printf("  per request: server CPU %.0f µs, loadtest client CPU %.0f µs, together %.0f µs\n",
			float64(res.serverCPU.Microseconds())/float64(reqs), float64(res.client.Microseconds())/float64(reqs),
			float64((res.serverCPU+res.client).Microseconds())/float64(reqs))
		results = append(results, res)
	}
	printMedians(results)
	return nil
}

// floorStep is one POST to the floor server.
func floorStep() step {
	return func(c *client, r *rand.Rand, rec func(string, int, time.Duration)) error {
		n := r.IntN(1_000_000)
		_, _, err := timed(c, rec, "floor", "POST", "/floor", fmt.Appendf(nil, floorRequest, 1000+n%100_000, n, n))
		return err
	}
}
