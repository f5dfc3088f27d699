package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// runSideBySide measures troco and stripe-mock on the same machine, one after the other, with
// the same client: cold start, idle and loaded memory, payment-intent creates and retrieves
// (rate and p99) for both, and troco's confirmed card payments; then prints the ratios.
func runSideBySide(cfg config, bin, parent string, extra []string) error {
	mock, err := stripeMockBinary(cfg.stripeMock, parent)
	if err != nil {
		return err
	}
	if out, err := exec.Command("go", "version", "-m", mock).Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) >= 3 && f[0] == "mod" {
				fmt.Printf("stripe-mock: %s %s (%s)\n", f[1], f[2], mock)
			}
		}
	}

	// Cold start and idle memory.
	tDir := filepath.Join(parent, "troco-startup")
	token := newSandboxToken()
	first, err := startServer(bin, tDir, "", token, cfg.dbSync, extra, tDir+".log")
	if err != nil {
		return err
	}
	if err := first.stop(); err != nil {
		return err
	}
	var tReady, mReady []time.Duration
	var tIdle, mIdle []float64
	for range cfg.starts {
		s, err := startServer(bin, tDir, "", token, cfg.dbSync, extra, tDir+".log")
		if err != nil {
			return err
		}
		time.Sleep(cfg.idleWait)
		tIdle = append(tIdle, float64(procStatus(s.cmd.Process.Pid, "VmRSS")))
		tReady = append(tReady, s.ready)
		if err := s.stop(); err != nil {
			return err
		}
		m, err := startStripeMock(mock, filepath.Join(parent, "stripe-mock.log"))
		if err != nil {
			return err
		}
		time.Sleep(cfg.idleWait)
		mIdle = append(mIdle, float64(procStatus(m.cmd.Process.Pid, "VmRSS")))
		mReady = append(mReady, m.ready)
		stopMock(m)
	}
	fmt.Printf("cold start (exec → first 200), median of %d: troco %.1f ms, stripe-mock %.1f ms; idle RSS after %s: troco %s, stripe-mock %s\n",
		cfg.starts, msF(medianD(tReady)), msF(medianD(mReady)), cfg.idleWait, mib(int64(medianF(tIdle))), mib(int64(medianF(mIdle))))

	// Load: each measurement on a fresh server, troco and stripe-mock interleaved.
	type figure struct {
		rate []float64
		p99  []time.Duration
		rss  int64
		errs int
	}
	figs := map[string]*figure{}
	record := func(key, op string, res runResult) {
		f := figs[key]
		if f == nil {
			f = &figure{}
			figs[key] = f
		}
		for _, s := range res.sums {
			if s.Op == op {
				f.rate = append(f.rate, s.PerSec)
				f.p99 = append(f.p99, s.P99)
				for st, n := range s.Errors {
					if st != http.StatusOK {
						f.errs += n
					}
				}
			}
		}
		f.rss = max(f.rss, res.peakRSS)
	}
	for run := range cfg.runs {
		for _, sc := range []string{"pi-create", "pi-retrieve", "payments", "payments-1"} {
			c := cfg
			c.scenario = sc
			dir := filepath.Join(parent, fmt.Sprintf("troco-%s-%d", sc, run))
			s, err := startServer(bin, dir, "", newSandboxToken(), cfg.dbSync, extra, dir+".log")
			if err != nil {
				return err
			}
			rss := procStatus(s.cmd.Process.Pid, "VmRSS")
			res, err := runLoad(c, s.url, s.cacert, s.token, s.cmd.Process.Pid)
			res.peakRSS, res.startRSS, res.ready = procStatus(s.cmd.Process.Pid, "VmHWM"), rss, s.ready
			if stopErr := s.stop(); err == nil {
				err = stopErr
			}
			if err != nil {
				return fmt.Errorf("troco %s: %w (log %s.log)", sc, err, dir)
			}
			if res.skipped {
				continue
			}
			fmt.Printf("run %d, troco %s:\n", run+1, sc)
			res.print()
			switch sc {
			case "pi-create":
				record("troco create", "pi_create", res)
			case "pi-retrieve":
				record("troco retrieve", "pi_retrieve", res)
			case "payments":
				record("troco confirm", "pi_confirm", res)
				continue // stripe-mock keeps no state: a confirm there is not a payment
			default:
				record("troco one request", "pi_create_confirm", res)
				continue
			}
			m, err := startStripeMock(mock, filepath.Join(parent, "stripe-mock.log"))
			if err != nil {
				return err
			}
			c.stripe, c.insecure = true, true
			rss = procStatus(m.cmd.Process.Pid, "VmRSS")
			res, err = runLoad(c, m.url, "", "sk_test_123", m.cmd.Process.Pid)
			res.peakRSS, res.startRSS, res.ready = procStatus(m.cmd.Process.Pid, "VmHWM"), rss, m.ready
			stopMock(m)
			if err != nil {
				return fmt.Errorf("stripe-mock %s: %w", sc, err)
			}
			fmt.Printf("run %d, stripe-mock %s:\n", run+1, sc)
			res.print()
			if sc == "pi-create" {
				record("stripe-mock create", "pi_create", res)
			} else {
				record("stripe-mock retrieve", "pi_retrieve", res)
			}
		}
	}

	get := func(key string) (float64, time.Duration, int64, int) {
		f := figs[key]
		if f == nil || len(f.rate) == 0 {
			return 0, 0, 0, 0
		}
		return medianF(f.rate), medianD(slices.Clone(f.p99)), f.rss, f.errs
	}
	tc, tcp, tcr, tce := get("troco create")
	mc, mcp, mcr, mce := get("stripe-mock create")
	tr, trp, trr, tre := get("troco retrieve")
	mr, mrp, mrr, mre := get("stripe-mock retrieve")
	tp, tpp, tpr, tpe := get("troco confirm")
	t1, t1p, t1r, t1e := get("troco one request")
	ratio := func(a, b float64) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f×", a/b)
	}
	fmt.Printf("\nside by side (median of %d runs, %d connections, %s each, %s; loadavg now %s)\n", cfg.runs, cfg.conns, measureDesc(cfg), proto(cfg.h2), loadAvg())
	fmt.Printf("| figure | troco | stripe-mock | troco ÷ stripe-mock |\n| --- | --- | --- | --- |\n")
	fmt.Printf("| cold start, exec → first 200 | %.1f ms | %.1f ms | %s faster |\n", msF(medianD(tReady)), msF(medianD(mReady)), ratio(msF(medianD(mReady)), msF(medianD(tReady))))
	fmt.Printf("| idle RSS | %s | %s | %s less |\n", mib(int64(medianF(tIdle))), mib(int64(medianF(mIdle))), ratio(medianF(mIdle), medianF(tIdle)))
	fmt.Printf("| peak RSS under load (creates / retrieves) | %s / %s | %s / %s | |\n", mib(tcr), mib(trr), mib(mcr), mib(mrr))
	fmt.Printf("| payment-intent creates/s (p99) | %.0f (%.1f ms) | %.0f (%.1f ms) | %s |\n", tc, msF(tcp), mc, msF(mcp), ratio(tc, mc))
	fmt.Printf("| payment-intent retrieves/s (p99) | %.0f (%.1f ms) | %.0f (%.1f ms) | %s |\n", tr, msF(trp), mr, msF(mrp), ratio(tr, mr))
	fmt.Printf("| confirmed card payments/s, create + confirm, durable (confirm p99) | %.0f (%.1f ms), peak RSS %s | - | |\n", tp, msF(tpp), mib(tpr))
	fmt.Printf("| confirmed card payments/s, one request (create with confirm: true), durable (p99) | %.0f (%.1f ms), peak RSS %s | - | %s of create + confirm |\n", t1, msF(t1p), mib(t1r), ratio(t1, tp))
	if n := tce + mce + tre + mre + tpe + t1e; n > 0 {
		fmt.Printf("non-200 answers: %d (see the runs above)\n", n)
	}
	return nil
}

// stopMock stops stripe-mock, which exits on SIGTERM without a graceful shutdown (so its exit
// status is the signal's, not an error).
func stopMock(m *spawned) { _ = m.stop() }

func msF(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// stripeMockBinary returns v when it is a file, and otherwise go-installs stripe-mock at
// version v (a module version such as v0.203.0, or latest) into a GOBIN under dir.
func stripeMockBinary(v, dir string) (string, error) {
	if st, err := os.Stat(v); err == nil && !st.IsDir() {
		return v, nil
	}
	gobin := filepath.Join(dir, "gobin")
	t0 := time.Now()
	cmd := exec.Command("go", "install", "github.com/stripe/stripe-mock@"+v)
	cmd.Env = append(os.Environ(), "GOBIN="+gobin)
	cmd.Dir = dir // outside the troco module
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go install github.com/stripe/stripe-mock@%s: %w", v, err)
	}
	fmt.Printf("installed stripe-mock@%s in %s\n", v, time.Since(t0).Round(time.Millisecond))
	return filepath.Join(gobin, "stripe-mock"), nil
}

// startStripeMock runs stripe-mock over HTTPS on a free loopback port and waits for its first
// 200 (it has no health endpoint: a payment intent retrieve).
func startStripeMock(bin, logPath string) (*spawned, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-https-addr", "127.0.0.1:"+strconv.Itoa(port))
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	s := &spawned{cmd: cmd, url: fmt.Sprintf("https://127.0.0.1:%d", port), token: "sk_test_123", waited: make(chan error, 1)}
	s.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.waited <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true,
		TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}}}
	for time.Now().Before(deadline) {
		select {
		case err := <-s.waited:
			s.waited <- err
			return nil, fmt.Errorf("stripe-mock exited before it was ready: %v (output in %s)", err, logPath)
		default:
		}
		req, _ := http.NewRequest("GET", s.url+"/v1/payment_intents/pi_123", nil)
		req.Header.Set("Authorization", "Bearer sk_test_123")
		if res, err := hc.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				s.ready = time.Since(s.started)
				return s, nil
			}
		}
		time.Sleep(200 * time.Microsecond)
	}
	s.stop()
	return nil, errors.New("stripe-mock not ready within 30 s")
}
