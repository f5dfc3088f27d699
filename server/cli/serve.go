package cli

import (
	"context"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/acme/autocert"

	"troco/db"
	"troco/server"
	"troco/server/calendar"
	"troco/server/clock"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/email"
	"troco/server/jobs"
	"troco/server/metrics"
	"troco/server/secrets"
	"troco/server/tlsutil"
	"troco/server/webhooks"
)

// serveConfig is the parsed configuration of `troco serve`.
type serveConfig struct {
	addr, dbPath, dataDir, baseURL string
	listenURL                      string // https:// and the address the listener took, when --base-url names another
	tlsCert, tlsKey, autocert      string
	httpAddr, sandboxKey           string
	simDelay                       time.Duration
	allowTimeTravel                bool
	rateLimit                      string
	allowPrivateWebhooks           bool
	dbSync                         string
	logFormat                      string
	// Live customer e-mail (empty smtpURL: none is sent).
	smtpURL, smtpPasswordFile, smtpFrom    string
	dkimDomain, dkimSelector, dkimKeyFile  string
	metricsAddr                            string
	metricsAddrSet                         bool // given explicitly: failing to bind it fails the start
	backup                                 backupSchedule
	live                                   *liveFlags
	holidays                               string
	dunningFinal                           string
	oidcIssuer, oidcAudience, oidcOrgClaim string
}

// defaultMetricsAddr is where /metrics listens unless --metrics-addr says otherwise.
const defaultMetricsAddr = "127.0.0.1:9464"

func parseServe(env Env, args []string) (*serveConfig, error) {
	fs := newFlags(env, "serve")
	c := &serveConfig{}
	addr := fs.str("addr", "127.0.0.1:8443", "HTTPS listen address")
	dbPath := fs.str("db", "", "SQLite file (:memory: for a throwaway instance; default <data-dir>/troco.db), or a postgres:// URL")
	dataDir := fs.str("data-dir", "./troco-data", "certificates and other local state")
	baseURL := fs.str("base-url", "", "prefix of every URL the API returns (default https://localhost:<port>)")
	tlsCert := fs.str("tls-cert", "", "PEM certificate chain")
	tlsKey := fs.str("tls-key", "", "PEM private key")
	auto := fs.str("autocert", "", "comma-separated domain(s) for ACME certificates")
	httpAddr := fs.str("http-addr", "", "optional plain-HTTP listener: API paths answer 403 https_required, pages redirect to HTTPS")
	sandboxKey := fs.str("sandbox-key", "", "register this exact ch_test_… token for the bootstrap organization")
	simDelay := fs.duration("sim-delay", 3*time.Minute, "delay of simulated delayed PIX/boleto settlement and sandbox activation review")
	timeTravel := fs.boolean("allow-time-travel", false, "enable POST /v1/test-helpers/advance-clock")
	rate := fs.str("rate-limit", "on", "on or off: /v1 rate limiting")
	private := fs.boolean("allow-private-webhooks", false, "allow live webhook endpoints on loopback and private ranges")
	sync := fs.str("db-sync", "FULL", "SQLite synchronous level: FULL (durable against power loss) or NORMAL")
	logFormat := fs.str("log-format", "text", "text or json request logs on stderr")
	oidcIssuer := fs.str("oidc-issuer", "", "external OpenID Connect issuer URL whose JWTs authenticate /api/v1 (discovery + JWKS)")
	oidcAudience := fs.str("oidc-audience", "", "audience (aud) the --oidc-issuer tokens must carry")
	oidcOrgClaim := fs.str("oidc-org-claim", "org", "claim of --oidc-issuer tokens that names the organization")
	smtpURL := fs.str("smtp-url", "", "live customer e-mail: smtp://user@host:587 (STARTTLS) or smtps://user@host:465 (implicit TLS); test mode never sends")
	smtpPass := fs.str("smtp-password-file", "", "file holding the SMTP password (preferred to a password in --smtp-url)")
	smtpFrom := fs.str("smtp-from", "", "sender address of customer e-mail, e.g. recibos@loja.com.br")
	dkimDomain := fs.str("smtp-dkim-domain", "", "sign customer e-mail with DKIM for this domain (with --smtp-dkim-selector and --smtp-dkim-key-file)")
	dkimSelector := fs.str("smtp-dkim-selector", "", "DKIM selector")
	dkimKey := fs.str("smtp-dkim-key-file", "", "PEM private key (RSA or Ed25519) for DKIM")
	metricsAddr := fs.str("metrics-addr", defaultMetricsAddr, "plain-HTTP listener for /metrics, /healthz and /readyz (keep it on loopback or a private network); off disables it")
	backupDir := fs.str("backup-dir", "", "write a backup into this directory every --backup-every (off when empty)")
	backupEvery := fs.duration("backup-every", 24*time.Hour, "interval of the scheduled backups")
	backupKeep := fs.integer("backup-keep", 7, "how many scheduled backups to keep (older ones are deleted)")
	dunning := fs.str("dunning-final", "canceled", "canceled or unpaid: what a subscription becomes when the last retry of a declined renewal fails")
	live := addLiveFlags(fs)
	holidays := fs.str("holidays", "", "file of local holidays, one YYYY-MM-DD a line, added to the national business-day calendar")
	pos, err := fs.parse(args)
	if err != nil {
		return nil, err
	}
	c.metricsAddr = *metricsAddr
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "metrics-addr" {
			c.metricsAddrSet = true
		}
	})
	if env.Getenv(envName("metrics-addr")) != "" {
		c.metricsAddrSet = true
	}
	c.backup = backupSchedule{dir: *backupDir, every: *backupEvery, keep: *backupKeep}
	if len(pos) > 0 {
		return nil, fmt.Errorf("serve takes no arguments; got %q", pos)
	}
	if *dbPath == "" {
		*dbPath = filepath.Join(*dataDir, "troco.db")
	}
	*c = serveConfig{metricsAddr: c.metricsAddr, metricsAddrSet: c.metricsAddrSet, backup: c.backup, addr: *addr, dbPath: *dbPath, dataDir: *dataDir, baseURL: strings.TrimRight(*baseURL, "/"), tlsCert: *tlsCert, tlsKey: *tlsKey,
		autocert: *auto, httpAddr: *httpAddr, sandboxKey: *sandboxKey, simDelay: *simDelay, allowTimeTravel: *timeTravel,
		rateLimit: strings.ToLower(*rate), allowPrivateWebhooks: *private, dbSync: strings.ToUpper(*sync), logFormat: *logFormat, live: live, holidays: *holidays,
		oidcIssuer: strings.TrimSpace(*oidcIssuer), oidcAudience: *oidcAudience, oidcOrgClaim: *oidcOrgClaim,
		smtpURL: *smtpURL, smtpPasswordFile: *smtpPass, smtpFrom: *smtpFrom, dkimDomain: *dkimDomain, dkimSelector: *dkimSelector, dkimKeyFile: *dkimKey,
		dunningFinal: strings.ToLower(*dunning)}
	if c.oidcIssuer != "" && (c.oidcAudience == "" || !strings.HasPrefix(c.oidcIssuer, "https://")) {
		return nil, errors.New("--oidc-issuer must be an https:// URL and needs --oidc-audience")
	}
	if c.dunningFinal != "canceled" && c.dunningFinal != "unpaid" {
		return nil, errors.New("--dunning-final must be canceled or unpaid")
	}
	if c.smtpURL == "" && (c.smtpPasswordFile != "" || c.smtpFrom != "" || c.dkimDomain != "" || c.dkimKeyFile != "") {
		return nil, errors.New("--smtp-password-file, --smtp-from and --smtp-dkim-* need --smtp-url")
	}
	if c.smtpURL != "" && c.smtpFrom == "" {
		return nil, errors.New("--smtp-url needs --smtp-from (the sender address of customer e-mail)")
	}
	if c.dbSync != "FULL" && c.dbSync != "NORMAL" {
		return nil, errors.New("--db-sync must be FULL or NORMAL")
	}
	if c.logFormat != "text" && c.logFormat != "json" {
		return nil, errors.New("--log-format must be text or json")
	}
	if c.rateLimit != "on" && c.rateLimit != "off" {
		return nil, errors.New("--rate-limit must be on or off")
	}
	if c.backup.dir != "" {
		if db.IsPostgres(c.dbPath) {
			return nil, errors.New("--backup-dir backs up a SQLite database; on PostgreSQL back up with pg_dump (and keep <data-dir>/master.key and the uploaded files)")
		}
		if c.dbPath == ":memory:" {
			return nil, errors.New("--backup-dir needs a database file, not --db :memory:")
		}
		if c.backup.every < time.Second {
			return nil, errors.New("--backup-every must be at least 1s")
		}
		if c.backup.keep < 1 {
			return nil, errors.New("--backup-keep must be at least 1")
		}
	}
	if c.simDelay <= 0 {
		return nil, errors.New("--sim-delay must be positive")
	}
	if c.sandboxKey != "" {
		if live, err := domain.ParseToken(c.sandboxKey); err != nil || live {
			return nil, errors.New("--sandbox-key must be a ch_test_ token: ch_test_ followed by 43 base64url characters")
		}
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	if c.autocert != "" && c.tlsCert != "" {
		return nil, errors.New("--autocert and --tls-cert are mutually exclusive")
	}
	return c, nil
}

func serve(ctx context.Context, env Env, args []string) error {
	cfg, err := parseServe(env, args)
	if err != nil {
		return err
	}
	var handler slog.Handler = slog.NewTextHandler(env.Stderr, nil)
	if cfg.logFormat == "json" {
		handler = slog.NewJSONHandler(env.Stderr, nil)
	}
	log := slog.New(handler)

	if err := secureDataDir(cfg.dataDir, log); err != nil {
		return err
	}
	if cfg.backup.dir != "" {
		if err := os.MkdirAll(cfg.backup.dir, 0o700); err != nil {
			return fmt.Errorf("--backup-dir: %w", err)
		}
	}
	if cfg.dbPath != ":memory:" && !db.IsPostgres(cfg.dbPath) {
		if err := os.MkdirAll(filepath.Dir(cfg.dbPath), 0o700); err != nil {
			return fmt.Errorf("create the database directory: %w", err)
		}
		release, err := lockDB(cfg.dbPath)
		if errors.Is(err, errLocked) {
			return fmt.Errorf("%s is in use by another troco serve (it holds %s.lock)", cfg.dbPath, cfg.dbPath)
		}
		if err != nil {
			return err
		}
		defer release()
	}

	m := metrics.New()
	liveSetup, err := cfg.live.build(log)
	if err != nil {
		return err
	}

	cal, err := loadCalendar(cfg.holidays)
	if err != nil {
		return err
	}
	// Bind every listener first: a busy port must fail the start before anything is written, so
	// a first start never creates the bootstrap organization and its key without showing them.
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w (is another troco running? choose another --addr)", cfg.addr, err)
	}
	defer ln.Close()
	var plainLn net.Listener
	if cfg.httpAddr != "" {
		if plainLn, err = net.Listen("tcp", cfg.httpAddr); err != nil {
			return fmt.Errorf("listen %s: %w (choose another --http-addr)", cfg.httpAddr, err)
		}
		defer plainLn.Close()
	}
	// The metrics listener: plain HTTP, meant for loopback. The default address is skipped with a
	// warning when busy; an address given explicitly must bind.
	var metricsSrv *http.Server
	var metricsLn net.Listener
	if cfg.metricsAddr != "" && cfg.metricsAddr != "off" {
		metricsLn, err = net.Listen("tcp", cfg.metricsAddr)
		if err != nil && cfg.metricsAddrSet {
			return fmt.Errorf("listen %s: %w (choose another --metrics-addr, or off)", cfg.metricsAddr, err)
		}
		if err != nil {
			metricsLn = nil
			log.Warn("metrics listener not started (set --metrics-addr to another address, or off)", "addr", cfg.metricsAddr, "error", err)
		} else {
			defer metricsLn.Close()
		}
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if cfg.baseURL != "" {
		cfg.listenURL = "https://" + ln.Addr().String()
	}
	if cfg.baseURL == "" {
		host := "localhost"
		if cfg.autocert != "" {
			host = strings.Split(cfg.autocert, ",")[0]
		}
		cfg.baseURL = fmt.Sprintf("https://%s:%d", host, port)
		if cfg.autocert != "" && port == 443 {
			cfg.baseURL = "https://" + host
		}
	}

	clk := clock.NewOffset(clock.Real{}, 0)
	tlsConfig, caPath, acme, err := cfg.tlsConfig(clk.Now())
	if err != nil {
		return err
	}
	if liveSetup.webhookCA != nil {
		server.PixWebhookTLS(tlsConfig, liveSetup.webhookCA)
	}
	// Uploaded files live in <data-dir>/files beside the database (made before the bootstrap,
	// so a start that cannot make it writes nothing). A throwaway :memory: instance keeps them
	// in a private temporary directory removed at exit: sharing <data-dir>/files with a real
	// database would let its start-up sweep delete that database's files.
	filesDir := filepath.Join(cfg.dataDir, "files")
	if cfg.dbPath == ":memory:" {
		if filesDir, err = os.MkdirTemp("", "troco-files-"); err != nil {
			return err
		}
		defer os.RemoveAll(filesDir)
	}
	if err := os.MkdirAll(filesDir, 0o700); err != nil {
		return fmt.Errorf("create the files directory: %w", err)
	}
	smtpSender, err := cfg.smtpSender()
	if err != nil {
		return err
	}
	store, err := db.Open(ctx, cfg.dbPath, db.Options{Schema: env.Schema, PostgresSchema: env.PostgresSchema, Clock: clk, Synchronous: cfg.dbSync, OnEvent: m.Event, OnWriteWait: m.WriteWait})
	if err != nil {
		return err
	}
	defer store.Close()
	m.WatchDB(store, clk)

	keyring, err := secrets.LoadOrCreate(cfg.dataDir)
	if err != nil {
		return err
	}
	var org *domain.Organization
	var bootKey *domain.APIKey
	var bootLink *core.SigninLink
	var owner *domain.User
	var unshown string // a bootstrap key of an earlier start that was never shown
	err = store.Write(ctx, func(tx *db.Tx) error {
		if err := checkMasterKey(tx, keyring, cfg.dataDir); err != nil {
			return err
		}
		if v, ok, err := tx.GetSetting(server.ClockOffsetSetting); err != nil {
			return err
		} else if ok && cfg.allowTimeTravel {
			if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
				clk.Advance(time.Duration(secs) * time.Second)
			}
		}
		if v, ok, err := tx.GetSetting(bootstrapKeyUnshownSetting); err != nil {
			return err
		} else if ok {
			unshown = v
		}
		fresh, err := tx.CountOrganizations()
		if err != nil {
			return err
		}
		org, bootKey, err = core.Bootstrap(tx, cfg.sandboxKey)
		if err != nil {
			return err
		}
		if fresh == 0 {
			if _, bootLink, err = core.BootstrapOwner(tx, org.ID); err != nil {
				return err
			}
		} else if org != nil {
			// A restart prints no link (the first one expires in 15 minutes), so it names the
			// owner whose new link `troco user signin-link` makes.
			users, err := tx.ListUsers(org.ID)
			if err != nil {
				return err
			}
			for _, u := range users {
				if u.Role == domain.RoleOwner && (owner == nil || u.Email == core.BootstrapOwnerEmail) {
					owner = u
				}
			}
		}
		if bootKey != nil && cfg.sandboxKey == "" {
			// Cleared once the banner has printed it; a start that dies in between leaves the
			// mark, and the next start says how to get a key.
			if err := tx.PutSetting(bootstrapKeyUnshownSetting, bootKey.ID); err != nil {
				return err
			}
		}
		return recordServeSettings(tx, cfg)
	})
	if err != nil {
		return fmt.Errorf("bootstrap: %w", explain(err))
	}

	runner := jobs.NewRunner(clk, log)
	runner.Observe = m.JobRun
	registerJobs(runner, store)
	dispatcher := webhooks.New(webhooks.Options{DB: store, Clock: clk, Secrets: keyring, Logger: log, AllowPrivate: cfg.allowPrivateWebhooks, OnAttempt: m.WebhookAttempt})
	srvCfg := server.Config{DB: store, Clock: clk, Logger: log, Jobs: runner, Secrets: keyring, BaseURL: cfg.baseURL,
		AllowTimeTravel: cfg.allowTimeTravel, RateLimit: cfg.rateLimit == "on", SimDelay: cfg.simDelay, AllowPrivateWebhooks: cfg.allowPrivateWebhooks,
		FilesDir: filesDir, PixWebhookCA: liveSetup.webhookCA, Calendar: cal, DunningFinal: domain.DunningFinal(cfg.dunningFinal), SMTP: smtpSender, Metrics: m,
		OIDCIssuer: cfg.oidcIssuer, OIDCAudience: cfg.oidcAudience, OIDCOrgClaim: cfg.oidcOrgClaim}
	if liveSetup.router != nil {
		srvCfg.Live = liveSetup.router
	}
	if caPath != "" {
		// The local CA also certifies the PIX location signing key (the x5c of its JWKS), for
		// the hosts the TLS certificate names.
		host, _, _ := net.SplitHostPort(cfg.addr)
		hosts := []string{"localhost", "127.0.0.1", "::1"}
		if host != "" && !slices.Contains(hosts, host) {
			hosts = append(hosts, host)
		}
		if u, err := url.Parse(cfg.baseURL); err == nil && u.Hostname() != "" && !slices.Contains(hosts, u.Hostname()) {
			hosts = append(hosts, u.Hostname())
		}
		srvCfg.PixSigningChain = func(pub crypto.PublicKey) ([]*x509.Certificate, error) {
			return tlsutil.IssueSigningCert(filepath.Dir(caPath), pub, hosts, clk.Now())
		}
	}
	srv := server.New(srvCfg)
	// Last, so time travel (RunDue) delivers the events that the other jobs just emitted.
	runner.Add(dispatcher.Job())

	httpsServer := &http.Server{
		Handler:           srv,
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(handler, slog.LevelWarn),
	}
	var plain *http.Server
	if cfg.httpAddr != "" {
		var h http.Handler = httpsRequired(cfg.baseURL)
		if acme != nil {
			h = acme.HTTPHandler(h)
		}
		plain = &http.Server{Addr: cfg.httpAddr, Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second, IdleTimeout: 60 * time.Second}
	}

	if metricsLn != nil {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", m.Handler())
		mux.Handle("GET /healthz", srv)
		mux.Handle("GET /readyz", srv)
		metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: 60 * time.Second}
	}

	runner.Start()
	defer runner.Stop()
	dispatcher.Start()
	defer dispatcher.Stop() // waits for the deliveries in flight; runs before the store closes

	errc := make(chan error, 3)
	unused := &unusedConns{m: map[net.Conn]struct{}{}}
	httpsServer.ConnState = unused.track
	httpsServer.RegisterOnShutdown(unused.close) // runs once Shutdown has begun: see unusedConns
	server.PrepareHTTPS(httpsServer)
	go func() { errc <- httpsServer.Serve(server.TLSListener(ln, tlsConfig, log)) }()
	if plain != nil {
		go func() { errc <- plain.Serve(server.PlainListener(plainLn, log)) }()
	}
	if metricsSrv != nil {
		go func() { errc <- metricsSrv.Serve(metricsLn) }()
	}
	if cfg.backup.dir != "" {
		bctx, stopBackups := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			runScheduledBackups(bctx, cfg.backup, store, cfg.dataDir, clock.Real{}.Now, log, func(d time.Duration, err error) { m.Backup(d, clock.Real{}.Now(), err) })
		}()
		defer wg.Wait() // before the store closes (deferred earlier, so it runs later)
		defer stopBackups()
	}
	// Ready only now that every listener serves: the banner (with the bootstrap key) comes last,
	// so whoever reads it can use the server at once.
	srv.SetReady(true)
	if env.Ready != nil {
		env.Ready(ln.Addr().String())
	}
	mailbox := ""
	if org != nil {
		mailbox = srv.MailboxLink(cfg.baseURL, org.ID)
	}
	printBanner(env, cfg, org, bootKey, caPath, unshown, mailbox)
	if plainLn != nil {
		fmt.Fprintf(env.Stdout, "plain HTTP on http://%s (API paths answer 403 https_required; pages redirect to HTTPS)\n", plainLn.Addr())
	}
	if metricsSrv != nil {
		fmt.Fprintf(env.Stdout, "metrics on http://%s/metrics\n", metricsLn.Addr())
	}
	if bootLink != nil {
		fmt.Fprintf(env.Stdout, "dashboard: %s/dashboard (owner %s; one-time sign-in link, valid 15 minutes: %s)\n",
			cfg.baseURL, core.BootstrapOwnerEmail, core.SigninURL(cfg.baseURL, bootLink.Token))
	} else if owner != nil {
		fmt.Fprintf(env.Stdout, "dashboard: %s/dashboard (a new one-time sign-in link for %s: troco user signin-link %s --db %s)\n",
			cfg.baseURL, owner.Email, owner.ID, db.Display(cfg.dbPath))
	}
	if bootKey != nil && cfg.sandboxKey == "" {
		// The banner is out: record that even if a shutdown began meanwhile (not ctx).
		if err := store.Write(context.WithoutCancel(ctx), func(tx *db.Tx) error { return tx.DeleteSetting(bootstrapKeyUnshownSetting) }); err != nil {
			return err
		}
	}
	if liveSetup.pix != nil {
		// The PSP posts each received PIX to this URL + "/pix", with its client certificate.
		// Registered once serving has begun, in case the PSP calls the URL to check it.
		hook := cfg.baseURL + "/processors/pix/webhook"
		go func() {
			regCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			if err := liveSetup.pix.RegisterWebhook(regCtx, hook); err != nil {
				log.Error("pix: webhook registration failed; payments are still found by reconciliation, fix and restart", "webhook", hook, "err", err)
			} else {
				log.Info("pix: webhook registered", "webhook", hook)
			}
			// Pix Automático: the PSP posts recurrences to hook + "/rec", recurring charges to
			// hook + "/cobr". A PSP without Pix Automático refuses; reconciliation still polls.
			if err := liveSetup.pix.RegisterRecWebhooks(regCtx, hook); err != nil {
				log.Warn("pix automatico: webhook registration failed; recurrences and recurring charges are still followed by reconciliation", "webhook", hook, "err", err)
			} else {
				log.Info("pix automatico: webhooks registered", "webhook", hook)
			}
		}()
	}
	if liveSetup.router == nil {
		fmt.Fprintln(env.Stdout, "live mode: no processor configured (live payments answer 503 processor_unavailable; see docs/GOING-LIVE.md)")
	} else {
		fmt.Fprintf(env.Stdout, "live mode: cards %s, pix %s, boleto not supported\n", onOff(liveSetup.cielo != nil, "cielo"), onOff(liveSetup.pix != nil, "api-pix"))
	}
	var serveErr error
	select {
	case err := <-errc:
		// One listener failed: stop the other too before returning, never leave it serving.
		if !errors.Is(err, http.ErrServerClosed) {
			serveErr = err
		}
	case <-ctx.Done():
	}
	srv.SetReady(false) // /readyz answers 503 from now on
	log.Info("shutting down: finishing in-flight requests")
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	err = httpsServer.Shutdown(shutdownCtx)
	if plain != nil {
		err = errors.Join(err, plain.Shutdown(shutdownCtx))
	}
	if metricsSrv != nil {
		err = errors.Join(err, metricsSrv.Shutdown(shutdownCtx))
	}
	// The request log is written in batches in the background: its last lines (the requests
	// Shutdown just let finish) go to the database before it closes.
	srv.FlushRequestLogs()
	return errors.Join(serveErr, err)
}

// unusedConns tracks the HTTPS connections on which no request has started yet. Shutdown waits
// for such a connection until 5 s after it was accepted, although net/http drops any request that
// arrives on it once the shutdown has begun; so a client that opened one and never used it (a
// browser's preconnection, an HTTP client pool's spare dial) would hold the exit for nothing.
// close, run by Shutdown after it began, closes them (and any accepted later). A connection whose
// request header was read before the shutdown began is active, not tracked, and is answered.
type unusedConns struct {
	mu     sync.Mutex
	m      map[net.Conn]struct{}
	closed bool
}

func (u *unusedConns) track(c net.Conn, s http.ConnState) {
	u.mu.Lock()
	defer u.mu.Unlock()
	switch {
	case s != http.StateNew:
		delete(u.m, c)
	case u.closed:
		_ = c.Close()
	default:
		u.m[c] = struct{}{}
	}
}

func (u *unusedConns) close() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.closed = true
	for c := range u.m {
		_ = c.Close()
		delete(u.m, c)
	}
}

// tlsConfig chooses the certificate source: PEM files, ACME, or the generated local CA.
func (c *serveConfig) tlsConfig(now time.Time) (*tls.Config, string, *autocert.Manager, error) {
	switch {
	case c.tlsCert != "":
		cert, err := tlsutil.Load(c.tlsCert, c.tlsKey)
		if err != nil {
			return nil, "", nil, err
		}
		return tlsutil.ServerConfig(cert), "", nil, nil
	case c.autocert != "":
		domains := strings.Split(c.autocert, ",")
		m := &autocert.Manager{Prompt: autocert.AcceptTOS, HostPolicy: autocert.HostWhitelist(domains...), Cache: autocert.DirCache(c.dataDir + "/autocert")}
		tc := m.TLSConfig()
		tc.MinVersion = tls.VersionTLS12
		return tc, "", m, nil
	}
	host, _, _ := net.SplitHostPort(c.addr)
	lc, err := tlsutil.EnsureLocal(c.dataDir, now, host)
	if err != nil {
		return nil, "", nil, err
	}
	cert, err := tlsutil.Load(lc.CertPath, lc.KeyPath)
	if err != nil {
		return nil, "", nil, err
	}
	return tlsutil.ServerConfig(cert), lc.CAPath, nil, nil
}

// httpsRequired answers the optional plain-HTTP listener: API paths get 403 https_required and
// everything else is redirected to HTTPS.
func httpsRequired(baseURL string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Request-Id", domain.NewID(domain.PrefixRequest)) // every response carries one (CONTRACT 2)
		if strings.HasPrefix(r.URL.Path, "/v1") || strings.HasPrefix(r.URL.Path, "/api") {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, `{"error":{"type":"invalid_request_error","code":"%s","message":"All requests must use HTTPS: %s"}}`+"\n", domain.CodeHTTPSRequired, baseURL)
			return
		}
		status := http.StatusMovedPermanently
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			status = http.StatusPermanentRedirect // a form POST stays a POST
		}
		http.Redirect(w, r, baseURL+r.URL.RequestURI(), status)
	})
}

func printBanner(env Env, cfg *serveConfig, org *domain.Organization, key *domain.APIKey, caPath, unshown, mailbox string) {
	w := env.Stdout
	if cfg.listenURL != "" && cfg.listenURL != cfg.baseURL {
		fmt.Fprintf(w, "troco %s listening on %s (base URL %s)\n", Version, cfg.listenURL, cfg.baseURL)
	} else {
		fmt.Fprintf(w, "troco %s listening on %s\n", Version, cfg.baseURL)
	}
	if caPath != "" {
		fmt.Fprintf(w, "local CA certificate: %s (use: curl --cacert %s ...)\n", caPath, caPath)
	}
	if org != nil {
		fmt.Fprintf(w, "bootstrap organization: %s %q (%s)\n", org.ID, org.Name, org.ActivationStatus)
	}
	if unshown != "" && org != nil {
		fmt.Fprintf(w, "the test key created at the first start (%s) was never shown; create one with:\n  troco key create --org %s --env test --db %s\n", unshown, org.ID, db.Display(cfg.dbPath))
	}
	if mailbox != "" {
		fmt.Fprintf(w, "sandbox mailbox (test-mode customer e-mail; link valid 24 h, renew with GET /v1/test-helpers/mailbox): %s\n", mailbox)
	}
	if key == nil {
		return
	}
	if cfg.sandboxKey != "" {
		fmt.Fprintf(w, "sandbox key registered from --sandbox-key: %s\n", key.ID)
		return
	}
	cacert := ""
	if caPath != "" {
		cacert = "--cacert " + caPath + " "
	}
	fmt.Fprintf(w, "test API key (shown once, store it now): %s\n", key.Token)
	fmt.Fprintf(w, "try:\n  curl %s%s/v1/customers -H \"Authorization: Bearer %s\" -H \"Content-Type: application/json\" -d '{\"email\":\"ana@example.com\"}'\n", cacert, cfg.baseURL, key.Token)
}

// secureDataDir creates the data dir mode 0700 and narrows what it holds to its owner: the
// directory and its subdirectories 0700, every file 0600 (database, WAL, keys, certificates;
// older versions created some of them world-readable).
func secureDataDir(dir string, log *slog.Logger) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create the data dir: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || info.Mode().Perm()&0o077 == 0 {
			continue
		}
		mode := os.FileMode(0o600)
		switch {
		case info.IsDir():
			mode = 0o700 // files/, autocert/
		case !info.Mode().IsRegular():
			continue
		}
		if err := os.Chmod(filepath.Join(dir, e.Name()), mode); err != nil {
			log.Warn("could not narrow a data dir entry to its owner", "file", e.Name(), "error", err)
		}
	}
	return nil
}

// registerJobs adds the background jobs of the foundation.
func registerJobs(r *jobs.Runner, store *db.DB) {
	r.Add(jobs.Job{Name: "expire-idempotency-keys", Every: time.Minute, Run: func(ctx context.Context, now time.Time) error {
		_, err := store.DeleteInBatches(ctx, 2000, func(tx *db.Tx, limit int) (int64, error) {
			return tx.DeleteExpiredIdempotencyKeys(now.Add(-IdempotencyRetention).Unix(), limit)
		})
		if err != nil {
			return err
		}
		return store.Write(ctx, func(tx *db.Tx) error { return tx.DeleteExpiredIdempotencySlots() })
	}})
}

// IdempotencyRetention is how long a stored response answers a retry with the same
// Idempotency-Key; the job deletes older ones every minute.
const IdempotencyRetention = 24 * time.Hour

// masterKeyCheckSetting holds a value sealed with the master key the database was first served
// with, so that serve notices a data dir whose master.key is not that one.
const masterKeyCheckSetting = "master_key_check"

// checkMasterKey refuses a master key that cannot open what the database sealed (a new or wrong
// --data-dir next to an existing database would otherwise silently make every stored webhook
// secret unreadable); on a database that has none yet it records the check value.
func checkMasterKey(tx *db.Tx, k *secrets.Keyring, dataDir string) error {
	sealed, ok, err := tx.GetSetting(masterKeyCheckSetting)
	if err != nil {
		return err
	}
	if !ok {
		return tx.PutSetting(masterKeyCheckSetting, k.Seal("troco master key check"))
	}
	if _, err := k.Open(sealed); err != nil {
		return fmt.Errorf("%s in %s is not the master key this database was served with: restore that file (it seals the stored webhook secrets) or point --data-dir at the directory that holds it", secrets.MasterKeyFile, dataDir)
	}
	return nil
}

// smtpSender builds the live e-mail sender from the --smtp-* flags (nil without --smtp-url),
// reading the password and DKIM key files.
func (c *serveConfig) smtpSender() (email.Sender, error) {
	if c.smtpURL == "" {
		return nil, nil
	}
	sc := email.SMTPConfig{URL: c.smtpURL, From: c.smtpFrom, DKIMDomain: c.dkimDomain, DKIMSelector: c.dkimSelector}
	if c.smtpPasswordFile != "" {
		b, err := os.ReadFile(c.smtpPasswordFile)
		if err != nil {
			return nil, fmt.Errorf("--smtp-password-file: %w", err)
		}
		sc.Password = strings.TrimRight(string(b), "\r\n")
	}
	if c.dkimKeyFile != "" {
		b, err := os.ReadFile(c.dkimKeyFile)
		if err != nil {
			return nil, fmt.Errorf("--smtp-dkim-key-file: %w", err)
		}
		sc.DKIMKeyPEM = b
	}
	s, err := email.NewSMTP(sc)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func onOff(on bool, name string) string {
	if on {
		return "via " + name
	}
	return "not configured"
}

// bootstrapKeyUnshownSetting holds the id of the bootstrap test key between the transaction that
// creates it and the banner that shows it.
const bootstrapKeyUnshownSetting = "bootstrap_key_unshown"

// The settings serve records at each start, so that `troco trigger` and the administration
// commands build the same hosted-page URLs and delays as the running server.
const (
	serveBaseURLSetting  = "serve_base_url"
	serveSimDelaySetting = "serve_sim_delay"
	serveDataDirSetting  = "serve_data_dir"
)

func recordServeSettings(tx *db.Tx, cfg *serveConfig) error {
	dir := cfg.dataDir
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	for k, v := range map[string]string{serveBaseURLSetting: cfg.baseURL, serveSimDelaySetting: cfg.simDelay.String(), serveDataDirSetting: dir} {
		if err := tx.PutSetting(k, v); err != nil {
			return err
		}
	}
	return nil
}

// loadCalendar builds the business-day calendar: the national holidays plus, with --holidays, the
// local ones of the file.
func loadCalendar(path string) (*calendar.Calendar, error) {
	if path == "" {
		return calendar.New(), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--holidays: %w", err)
	}
	defer f.Close()
	local, err := calendar.ParseHolidays(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("--holidays %s: %w", path, err)
	}
	return calendar.New(local...), nil
}
