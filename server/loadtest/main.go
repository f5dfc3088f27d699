// Command loadtest is troco's load generator: HTTPS keep-alive clients with exactly -c
// connections run a scenario against a server and report throughput and latency percentiles.
// With -spawn it builds and starts the server itself (fresh data directory per run, rate limit
// off), and also reports the server's CPU time and peak RSS; -scenario startup measures cold
// start and idle memory. See docs/PERFORMANCE.md.
//
//	go run ./server/loadtest -spawn -scenario create -runs 3
//	go run ./server/loadtest -spawn -scenario sidebyside -runs 3   # troco and stripe-mock side by side
//	go run ./server/loadtest -scenario floor -d 3s -runs 3          # the HTTPS floor: a trivial Go HTTPS server, no troco
//	go run ./server/loadtest -url https://127.0.0.1:8443 -cacert troco-data/ca.pem -token ch_test_… -scenario retrieve
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type config struct {
	metricsURL         string // the spawned server's /metrics, for the writer's counters (set per run)
	url, cacert, token string
	insecure, h2       bool
	scenario           string
	conns              int
	duration, warmup   time.Duration
	iterations         int64
	runs               int
	seedN              int
	idem               bool
	pid                int

	spawn      bool
	bin        string
	dbSync     string
	dir        string
	keep       bool
	serveExtra string
	pg         string // admin URL of a PostgreSQL server: each run gets a fresh database there
	replicas   int    // with pg: servers started on that one database, the connections spread over them
	starts     int
	idleWait   time.Duration

	// stripe: the server is stripe-mock (form bodies, its paths); stripeMock is its binary or
	// version for -scenario sidebyside.
	stripe     bool
	stripeMock string
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) > 0 && args[0] == "-floor-server" { // the child of -scenario floor (floor.go); not in -h
		return floorServerMain(args[1:])
	}
	var cfg config
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.StringVar(&cfg.url, "url", "", "server base URL, e.g. https://127.0.0.1:8443 (not with -spawn)")
	fs.StringVar(&cfg.cacert, "cacert", "", "PEM CA certificate that signed the server certificate")
	fs.BoolVar(&cfg.insecure, "insecure", false, "skip certificate verification")
	fs.StringVar(&cfg.token, "token", "", "ch_test_… API key with read and write scopes")
	fs.StringVar(&cfg.scenario, "scenario", "create", "create | retrieve | mixed (10% create, 80% retrieve, 10% list) | payments (create + confirm a card payment intent) | payments-1 (a confirmed card payment in one request: create with confirm: true) | pi-create | pi-retrieve | startup (needs -spawn) | sidebyside (needs -spawn: troco and stripe-mock, see docs/PERFORMANCE.md) | floor (the HTTPS floor: this tool starts a trivial Go HTTPS server with troco's kind of certificate and TLS settings that reads a ~150-byte JSON POST and answers a fixed ~1.2 KB JSON, and reports what one request costs the server and this client; no troco involved)")
	fs.IntVar(&cfg.conns, "c", 32, "concurrent connections (one worker each)")
	fs.DurationVar(&cfg.duration, "d", 10*time.Second, "measured duration (after warm-up)")
	fs.Int64Var(&cfg.iterations, "n", 0, "measure this many scenario iterations instead of -d")
	fs.DurationVar(&cfg.warmup, "warmup", 2*time.Second, "unmeasured warm-up (opens the connections)")
	fs.IntVar(&cfg.runs, "runs", 1, "repeat the measurement and report the median of each figure")
	fs.IntVar(&cfg.seedN, "seed", 1000, "customers created before retrieve/mixed/startup runs")
	fs.BoolVar(&cfg.idem, "idem", false, "send a unique Idempotency-Key with every POST")
	fs.BoolVar(&cfg.h2, "h2", false, "use HTTP/2: c concurrent streams on one connection, instead of HTTP/1.1 with c connections")
	fs.IntVar(&cfg.pid, "pid", 0, "server process id, to report its CPU time and RSS (automatic with -spawn)")
	fs.BoolVar(&cfg.spawn, "spawn", false, "build and start `troco serve` on 127.0.0.1 with a fresh temp data dir for each run")
	fs.StringVar(&cfg.bin, "bin", "", "troco binary for -spawn (default: go build the repository)")
	fs.StringVar(&cfg.dbSync, "db-sync", "FULL", "--db-sync of the spawned server: FULL or NORMAL")
	fs.StringVar(&cfg.dir, "dir", "", "parent of the spawned servers' temp dirs (default os.TempDir(); put it on the disk you want to measure)")
	fs.BoolVar(&cfg.keep, "keep", false, "keep the spawned servers' data dirs and logs")
	fs.StringVar(&cfg.serveExtra, "serve-args", "", "extra space-separated flags for the spawned troco serve")
	fs.StringVar(&cfg.pg, "pg", "", "with -spawn: a postgres:// URL (of a user who may create databases); each run serves a fresh database created there and dropped after")
	fs.IntVar(&cfg.replicas, "replicas", 1, "with -pg: start this many servers on the run's database (same master key and CA) and spread the connections over them")
	fs.IntVar(&cfg.starts, "starts", 10, "startup scenario: number of cold starts")
	fs.DurationVar(&cfg.idleWait, "idle", 2*time.Second, "startup scenario: idle time before reading the RSS")
	fs.StringVar(&cfg.stripeMock, "stripe-mock", "v0.203.0", "sidebyside: a stripe-mock binary, or the version to go install into a temp GOBIN")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if cfg.conns < 1 || cfg.runs < 1 {
		return errors.New("-c and -runs must be at least 1")
	}
	switch cfg.scenario {
	case "create", "retrieve", "mixed", "payments", "payments-1", "pi-create", "pi-retrieve", "floor":
	case "startup", "sidebyside":
		if !cfg.spawn {
			return fmt.Errorf("-scenario %s needs -spawn", cfg.scenario)
		}
	default:
		return fmt.Errorf("unknown -scenario %q", cfg.scenario)
	}
	cfg.dbSync = strings.ToUpper(cfg.dbSync)
	fmt.Printf("loadtest: scenario=%s c=%d proto=%s warmup=%s %s runs=%d idem=%v | GOMAXPROCS=%d NumCPU=%d loadavg(1/5/15)=%s | %s\n",
		cfg.scenario, cfg.conns, proto(cfg.h2), cfg.warmup, measureDesc(cfg), cfg.runs, cfg.idem, runtime.GOMAXPROCS(0), runtime.NumCPU(), loadAvg(), time.Now().Format(time.RFC3339))
	if cfg.scenario == "floor" {
		return runFloor(cfg)
	}
	if cfg.spawn {
		return runSpawned(cfg)
	}
	if cfg.url == "" || cfg.token == "" {
		return errors.New("-url and -token are required (or use -spawn)")
	}
	var results []runResult
	for i := range cfg.runs {
		res, err := runLoad(cfg, cfg.url, cfg.cacert, cfg.token, cfg.pid)
		if err != nil {
			return err
		}
		if res.skipped {
			return nil
		}
		fmt.Printf("run %d/%d:\n", i+1, cfg.runs)
		res.print()
		results = append(results, res)
	}
	printMedians(results)
	return nil
}

func proto(h2 bool) string {
	if h2 {
		return "h2"
	}
	return "http/1.1"
}

func measureDesc(cfg config) string {
	if cfg.iterations > 0 {
		return "n=" + strconv.FormatInt(cfg.iterations, 10)
	}
	return "d=" + cfg.duration.String()
}

// runSpawned builds the server once, then for each run starts it on a fresh data dir, loads it
// and stops it.
func runSpawned(cfg config) error {
	parent, err := os.MkdirTemp(cfg.dir, "troco-loadtest-")
	if err != nil {
		return err
	}
	if !cfg.keep {
		defer os.RemoveAll(parent)
	} else {
		fmt.Println("keeping", parent)
	}
	bin := cfg.bin
	if bin == "" {
		t0 := time.Now()
		if bin, err = buildServer(parent); err != nil {
			return err
		}
		fmt.Printf("built %s in %s\n", bin, time.Since(t0).Round(time.Millisecond))
	}
	extra := strings.Fields(cfg.serveExtra)
	if cfg.scenario == "startup" {
		return runStartup(cfg, bin, parent, extra)
	}
	if cfg.scenario == "sidebyside" {
		return runSideBySide(cfg, bin, parent, extra)
	}
	var results []runResult
	for i := range cfg.runs {
		dir := fmt.Sprintf("%s/run%d", parent, i+1)
		logPath := dir + ".log"
		dbArg, dropDB, err := runDatabase(cfg, dir, i)
		if err != nil {
			return err
		}
		token := newSandboxToken()
		srv, err := startServer(bin, dir, dbArg, token, cfg.dbSync, extra, logPath)
		if err != nil {
			dropDB()
			return err
		}
		servers := []*spawned{srv}
		urls := []string{srv.url}
		for r := 2; r <= cfg.replicas && cfg.pg != ""; r++ {
			rdir := fmt.Sprintf("%s-replica%d", dir, r)
			if err := copyDataDir(dir, rdir); err != nil {
				return err
			}
			rs, err := startServer(bin, rdir, dbArg, token, cfg.dbSync, extra, rdir+".log")
			if err != nil {
				return err
			}
			servers = append(servers, rs)
			urls = append(urls, rs.url)
		}
		pid := srv.cmd.Process.Pid
		rssStart := procStatus(pid, "VmRSS")
		if len(servers) == 1 {
			cfg.metricsURL = srv.metrics
		}
		res, err := runLoad(cfg, strings.Join(urls, ","), srv.cacert, srv.token, pid)
		res.peakRSS = procStatus(pid, "VmHWM")
		res.startRSS = rssStart
		res.ready = srv.ready
		for _, s := range servers {
			if stopErr := s.stop(); stopErr != nil && err == nil {
				fmt.Fprintf(os.Stderr, "server stop: %v (log %s)\n", stopErr, logPath)
			}
		}
		dropDB()
		if err != nil {
			return fmt.Errorf("%w (server log %s)", err, logPath)
		}
		if res.skipped {
			return nil
		}
		if cfg.pg != "" {
			fmt.Printf("run %d/%d: %d× troco serve on PostgreSQL (fresh database; CPU and RSS of the first) %s\n", i+1, cfg.runs, len(servers), cfg.serveExtra)
		} else {
			fmt.Printf("run %d/%d: troco serve --db-sync %s %s (fresh data dir %s)\n", i+1, cfg.runs, cfg.dbSync, cfg.serveExtra, dir)
		}
		res.print()
		results = append(results, res)
	}
	printMedians(results)
	return nil
}

// runStartup measures exec → first 200 on /healthz against an existing database and data dir,
// and the RSS after the server has been idle for -idle.
func runStartup(cfg config, bin, parent string, extra []string) error {
	dir := parent + "/startup"
	logPath := dir + ".log"
	token := newSandboxToken()
	srv, err := startServer(bin, dir, "", token, cfg.dbSync, extra, logPath)
	if err != nil {
		return err
	}
	if cfg.seedN > 0 {
		clients, _, err := newClients(cfg, srv.url, srv.cacert, srv.token, nil)
		if err == nil {
			err = seed(clients, cfg.seedN, &ids{})
		}
		if err != nil {
			srv.stop()
			return err
		}
	}
	if err := srv.stop(); err != nil {
		return fmt.Errorf("first server stop: %w", err)
	}
	fmt.Printf("existing data dir %s: first start created the CA, certificate, keyring and database, then %d customers\n", dir, cfg.seedN)
	var readies []time.Duration
	var idles, hwms []float64
	for i := range cfg.starts {
		srv, err := startServer(bin, dir, "", token, cfg.dbSync, extra, logPath)
		if err != nil {
			return err
		}
		time.Sleep(cfg.idleWait)
		pid := srv.cmd.Process.Pid
		rss, hwm := procStatus(pid, "VmRSS"), procStatus(pid, "VmHWM")
		if err := srv.stop(); err != nil {
			return err
		}
		fmt.Printf("start %2d: exec → first 200 on /healthz %6.1f ms; RSS after %s idle %s (peak %s)\n", i+1, float64(srv.ready.Microseconds())/1000, cfg.idleWait, mib(rss), mib(hwm))
		readies = append(readies, srv.ready)
		idles = append(idles, float64(rss))
		hwms = append(hwms, float64(hwm))
	}
	slices.Sort(readies)
	fmt.Printf("median of %d starts: cold start %.1f ms (min %.1f, max %.1f); idle RSS %s; peak RSS %s\n", cfg.starts,
		float64(medianD(readies).Microseconds())/1000, float64(readies[0].Microseconds())/1000, float64(readies[len(readies)-1].Microseconds())/1000,
		mib(int64(medianF(idles))), mib(int64(medianF(hwms))))
	return nil
}

// runResult is the outcome of one measured run.
type runResult struct {
	sums              []summary
	total             summary
	measured          time.Duration
	dials             int64
	serverCPU, client time.Duration
	pid               int
	writer            writerCounters // the writer's counters over the measured window (SQLite spawn runs)
	peakRSS, startRSS int64
	ready             time.Duration
	skipped           bool
}

func (r runResult) print() {
	fmt.Printf("  measured %.2fs, connections opened %d\n", r.measured.Seconds(), r.dials)
	printSummaries(os.Stdout, append(r.sums, r.total))
	if r.pid != 0 {
		reqs := max(1, r.total.Requests)
		if w := r.writer; w.ok && w.batches > 0 {
			// Until the workers stopped, a little longer than the measured window.
			fmt.Printf("  single writer: busy %.0f%% of the time (in COMMIT %.0f%%), %.1f operations per commit, %.0f µs per operation\n",
				100*w.busy/r.measured.Seconds(), 100*w.commit/r.measured.Seconds(), w.ops/w.batches, 1e6*w.busy/max(1, w.ops))
			if w.syncs > 0 {
				fmt.Printf("  WAL fsync off the writer: %.0f/s, %.2f ms each, %.1f operations made durable by each\n",
					w.syncs/r.measured.Seconds(), 1e3*w.sync/w.syncs, w.ops/w.syncs)
			}
		}
		fmt.Printf("  server: CPU %.2f cores (%d µs CPU/request)", r.serverCPU.Seconds()/r.measured.Seconds(), r.serverCPU.Microseconds()/int64(reqs))
		if r.peakRSS > 0 {
			fmt.Printf(", RSS after start %s, peak RSS (VmHWM) %s, ready in %.1f ms", mib(r.startRSS), mib(r.peakRSS), float64(r.ready.Microseconds())/1000)
		}
		fmt.Println()
	}
	fmt.Printf("  loadtest client: CPU %.2f cores\n", r.client.Seconds()/r.measured.Seconds())
}

func printMedians(results []runResult) {
	if len(results) < 2 {
		return
	}
	fmt.Printf("median of %d runs (each figure separately):\n", len(results))
	ops := []string{}
	for _, s := range results[0].sums {
		ops = append(ops, s.Op)
	}
	ops = append(ops, "total")
	var meds []summary
	for _, op := range ops {
		var rate []float64
		var p50, p90, p99, mx, mean []time.Duration
		errs := map[int]int{}
		reqs := 0
		for _, r := range results {
			for _, s := range append(slices.Clone(r.sums), r.total) {
				if s.Op != op {
					continue
				}
				rate = append(rate, s.PerSec)
				p50, p90, p99, mx, mean = append(p50, s.P50), append(p90, s.P90), append(p99, s.P99), append(mx, s.Max), append(mean, s.Mean)
				reqs += s.Requests
				for k, v := range s.Errors {
					errs[k] += v
				}
			}
		}
		meds = append(meds, summary{Op: op, Requests: reqs, PerSec: medianF(rate), P50: medianD(p50), P90: medianD(p90), P99: medianD(p99), Max: medianD(mx), Mean: medianD(mean), Errors: errs})
	}
	printSummaries(os.Stdout, meds)
	fmt.Println("  (requests and non-2xx are totals over all runs)")
	if results[0].pid != 0 {
		var cpu, peak []float64
		for _, r := range results {
			cpu = append(cpu, r.serverCPU.Seconds()/r.measured.Seconds())
			peak = append(peak, float64(r.peakRSS))
		}
		fmt.Printf("  server CPU %.2f cores", medianF(cpu))
		if results[0].peakRSS > 0 {
			fmt.Printf(", peak RSS %s", mib(int64(medianF(peak))))
		}
		fmt.Println()
	}
}

// newClients returns c API clients sharing one transport with at most c connections.
func newClients(cfg config, base, cacert, token string, dials *atomic.Int64) ([]*client, *http.Transport, error) {
	tc := &tls.Config{InsecureSkipVerify: cfg.insecure}
	if cacert != "" {
		pem, err := os.ReadFile(cacert)
		if err != nil {
			return nil, nil, err
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, nil, fmt.Errorf("%s: no PEM certificate", cacert)
		}
	}
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		TLSClientConfig:     tc,
		MaxConnsPerHost:     cfg.conns,
		MaxIdleConnsPerHost: cfg.conns,
		MaxIdleConns:        cfg.conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if dials != nil {
				dials.Add(1)
			}
			return d.DialContext(ctx, network, addr)
		},
	}
	if cfg.h2 {
		tr.ForceAttemptHTTP2 = true
		tr.MaxConnsPerHost = 1 // c concurrent streams multiplexed on one connection
	} else {
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{} // HTTP/1.1 only
	}
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var seq atomic.Int64
	runID := strconv.FormatInt(time.Now().UnixNano(), 36)
	out := make([]*client, cfg.conns)
	bases := strings.Split(base, ",") // several replicas: the connections take turns
	for i := range out {
		out[i] = &client{hc: hc, base: strings.TrimRight(bases[i%len(bases)], "/"), token: token, idem: cfg.idem, idemSeq: &seq, runID: runID, form: cfg.stripe}
	}
	return out, tr, nil
}

// runLoad seeds if needed, warms up and measures one run of the scenario.
func runLoad(cfg config, base, cacert, token string, pid int) (runResult, error) {
	var dials atomic.Int64
	clients, tr, err := newClients(cfg, base, cacert, token, &dials)
	if err != nil {
		return runResult{}, err
	}
	defer tr.CloseIdleConnections()
	pool := &ids{}
	var st step
	switch cfg.scenario {
	case "create":
		st = createStep(pool)
	case "retrieve", "mixed":
		if err := seed(clients, cfg.seedN, pool); err != nil {
			return runResult{}, err
		}
		st = retrieveStep(pool)
		if cfg.scenario == "mixed" {
			st = mixedStep(pool)
		}
	case "payments":
		ok, why, err := probePayments(clients[0])
		if err != nil {
			return runResult{}, err
		}
		if !ok {
			fmt.Printf("payments scenario skipped: the server has no payment intents yet (%s)\n", why)
			return runResult{skipped: true}, nil
		}
		st = paymentsStep()
	case "payments-1":
		ok, why, err := probeOneRequestPayments(clients[0])
		if err != nil {
			return runResult{}, err
		}
		if !ok {
			fmt.Printf("payments-1 scenario skipped: the server does not create and confirm in one request (%s)\n", why)
			return runResult{skipped: true}, nil
		}
		st = payments1Step()
	case "floor":
		st = floorStep()
	case "pi-create":
		st = piCreateStep(cfg.stripe, pool)
	case "pi-retrieve":
		if err := seedIntents(clients, cfg.stripe, cfg.seedN, pool); err != nil {
			return runResult{}, err
		}
		st = piRetrieveStep(cfg.stripe, pool)
	}

	recs := make([]*recorder, cfg.conns)
	var claimed atomic.Int64
	var lastDone atomic.Int64
	var aborted atomic.Bool
	start := time.Now()
	mStart := start.Add(cfg.warmup)
	mEnd := mStart.Add(cfg.duration)
	var cpu0, client0 time.Duration
	var writer0 writerCounters
	var cpuOnce sync.Once
	sampleStart := func() {
		cpuOnce.Do(func() {
			if pid != 0 {
				cpu0 = procCPU(pid)
			}
			client0 = selfCPU()
			writer0 = scrapeWriter(cfg.metricsURL)
		})
	}
	timer := time.AfterFunc(time.Until(mStart), sampleStart)
	defer timer.Stop()

	var wg sync.WaitGroup
	for i, c := range clients {
		recs[i] = &recorder{ops: map[string]*opStats{}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(i)))
			rec := recs[i]
			consecutiveFail := 0
			for !aborted.Load() {
				now := time.Now()
				if cfg.iterations == 0 && !now.Before(mEnd) {
					return
				}
				measuring := !now.Before(mStart)
				if cfg.iterations > 0 && measuring && claimed.Add(1) > cfg.iterations {
					return
				}
				failed := false
				err := st(c, r, func(op string, status int, d time.Duration) {
					if status == 0 {
						failed = true
					}
					if !measuring {
						return
					}
					done := time.Now()
					if cfg.iterations == 0 && done.After(mEnd) {
						return
					}
					rec.record(op, status, d)
					lastDone.Store(done.UnixNano())
				})
				if failed || err != nil {
					consecutiveFail++
					if consecutiveFail >= 100 {
						fmt.Fprintf(os.Stderr, "loadtest: worker %d: 100 consecutive failures, last: %v\n", i, err)
						aborted.Store(true)
						return
					}
					time.Sleep(10 * time.Millisecond)
				} else {
					consecutiveFail = 0
				}
			}
		}()
	}
	wg.Wait()
	if aborted.Load() {
		return runResult{}, errors.New("aborted after repeated transport errors")
	}
	sampleStart() // no-op unless the run ended before the warm-up did
	end := time.Now()
	res := runResult{dials: dials.Load(), pid: pid}
	res.measured = cfg.duration
	if cfg.iterations > 0 {
		res.measured = time.Unix(0, lastDone.Load()).Sub(mStart)
	}
	if pid != 0 {
		res.serverCPU = procCPU(pid) - cpu0
	}
	if w := scrapeWriter(cfg.metricsURL); w.ok && writer0.ok {
		res.writer = writerCounters{busy: w.busy - writer0.busy, commit: w.commit - writer0.commit,
			batches: w.batches - writer0.batches, ops: w.ops - writer0.ops, syncs: w.syncs - writer0.syncs, sync: w.sync - writer0.sync, ok: true}
	}
	res.client = selfCPU() - client0
	// CPU was sampled until the workers stopped; scale to the measured window.
	if w := end.Sub(mStart); w > res.measured && w > 0 {
		f := res.measured.Seconds() / w.Seconds()
		res.serverCPU = time.Duration(float64(res.serverCPU) * f)
		res.client = time.Duration(float64(res.client) * f)
	}

	merged := map[string]*opStats{}
	all := newOpStats()
	for _, r := range recs {
		for op, s := range r.ops {
			if merged[op] == nil {
				merged[op] = newOpStats()
			}
			merged[op].merge(s)
			all.merge(s)
		}
	}
	ops := make([]string, 0, len(merged))
	for op := range merged {
		ops = append(ops, op)
	}
	slices.SortFunc(ops, func(a, b string) int { return order(a) - order(b) })
	for _, op := range ops {
		res.sums = append(res.sums, summarize(op, merged[op], res.measured))
	}
	res.total = summarize("total", all, res.measured)
	return res, nil
}

func order(op string) int {
	return slices.Index([]string{"create", "retrieve", "list", "pi_create", "pi_confirm", "pi_create_confirm", "pi_retrieve", "floor"}, op)
}
