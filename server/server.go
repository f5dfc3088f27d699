// Package server is troco's HTTP interface: the /v1 API, the test helpers and (in later parts)
// the /api/v1 interface and the hosted pages. Handlers are thin: they decode, authenticate and
// call the operations of package core inside a transaction.
package server

import (
	"context"
	"crypto"
	"crypto/x509"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"troco/db"
	"troco/server/calendar"
	"troco/server/checkout"
	"troco/server/clock"
	"troco/server/domain"
	"troco/server/email"
	"troco/server/files"
	"troco/server/invoices"
	"troco/server/jobs"
	"troco/server/metrics"
	"troco/server/payments"
	"troco/server/pix"
	"troco/server/secrets"
	"troco/server/tlsutil"
	"troco/server/tokens"
)

// Config holds the dependencies of the HTTP server.
type Config struct {
	DB     *db.DB
	Clock  *clock.Offset
	Logger *slog.Logger
	Jobs   *jobs.Runner
	// Secrets seals stored secrets and keys fingerprints; defaults to a random keyring.
	Secrets *secrets.Keyring
	// BaseURL prefixes every URL the API returns (hosted pages, files).
	BaseURL string
	// AllowTimeTravel enables POST /v1/test-helpers/advance-clock.
	AllowTimeTravel bool
	// AllowPrivateWebhooks lets live webhook endpoints use loopback and private addresses
	// (serve --allow-private-webhooks); the dispatcher takes the same setting.
	AllowPrivateWebhooks bool
	// OIDCIssuer, when set, is an external OpenID Connect issuer whose JWTs authenticate /api/v1
	// Core requests (audience OIDCAudience; organization from the OIDCOrgClaim claim, default
	// "org"). OIDCClient, when set, is the HTTP client for discovery and JWKS (tests).
	OIDCIssuer, OIDCAudience, OIDCOrgClaim string
	OIDCClient                             *http.Client
	// RateLimit enables the /v1 per-key rate limits of CONTRACT 10.
	RateLimit bool
	// SimDelay is the delay of simulated delayed settlements.
	SimDelay time.Duration
	// DunningFinal is what happens to a subscription when the last retry of a declined renewal
	// fails: canceled (the default) or unpaid (serve --dunning-final).
	DunningFinal domain.DunningFinal
	// Calendar is the business-day calendar (national holidays plus serve --holidays); nil
	// knows the national holidays only.
	Calendar *calendar.Calendar
	// MaxBodyBytes bounds JSON request bodies; defaults to 1 MiB.
	MaxBodyBytes int64
	// SMTP sends live-mode customer e-mail; nil means none is sent (each message is recorded as
	// skipped). Test mode never uses it: its messages go to the sandbox mailbox.
	SMTP email.Sender
	// Metrics records request counts and latencies; nil records nothing.
	Metrics *metrics.Metrics
	// Live is the live-mode processor (server/processors.Router over Cielo and API Pix); nil
	// answers every live payment 503 processor_unavailable.
	Live payments.Processor
	// PixWebhookCA holds the CA of the PSP's client certificate: the PIX webhook accepts only
	// requests whose TLS client certificate chains to it (serve --pix-webhook-ca).
	PixWebhookCA *x509.CertPool
	// PixSigningChain, when set, is called once with the PIX location signing key's public key
	// and returns the certificate chain published as its x5c (serve: a certificate issued by the
	// local CA); nil, or an error, publishes a certificate the key issues itself.
	PixSigningChain func(pub crypto.PublicKey) ([]*x509.Certificate, error)
	// FilesDir holds the bytes of uploaded files (serve: <data-dir>/files, or a private
	// temporary directory for --db :memory:). When empty, New creates a temporary directory.
	FilesDir string
}

// Server serves troco over HTTP; wrap it in TLS (see package tlsutil).
type Server struct {
	cfg      Config
	db       *db.DB
	log      *slog.Logger
	limiter  *rateLimiter
	idem     inflight
	touched  sync.Map // key id → unix second of the last last_used_at write this process queued
	handler  http.Handler
	reqlog   requestLogQueue
	pay      *payments.Service // the payment engine (intents, charges, refunds, ledger)
	mailer   *email.Mailer     // customer e-mail: the sandbox mailbox and SMTP delivery
	ready    atomic.Bool       // SetReady; /readyz
	pixKey   *pix.SigningKey   // signs the payloads of dynamic PIX locations
	files    *files.Store      // the bytes of uploaded files
	tokens   *tokens.Issuer    // /api/v1 access tokens
	oidc     oidcIssuer        // the external issuer of --oidc-issuer
	apiV1Ops []apiV1Op         // the /api/v1 routes, for its OpenAPI document
	openapi  openAPIDocs
	// origin is the public base URL learned from the listen address of the first request when
	// Config.BaseURL is empty (links made outside a request, such as e-mails, need one).
	learned atomic.Pointer[string]
}

// New builds the server and its routes.
func New(cfg Config) *Server {
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Secrets == nil {
		cfg.Secrets = secrets.Random()
	}
	s := &Server{cfg: cfg, db: cfg.DB, log: cfg.Logger, limiter: newRateLimiter(cfg.Clock), idem: inflight{m: map[string]struct{}{}}}
	s.pay = payments.New(cfg.BaseURL, cfg.SimDelay, cfg.Secrets.DeriveKey("card fingerprint"))
	s.pay.ReceiptKey = cfg.Secrets.DeriveKey("receipt url")
	s.mailer = email.New(email.Options{DB: cfg.DB, Clock: cfg.Clock, Logger: cfg.Logger, Live: cfg.SMTP, BaseURL: s.outsideBase})
	s.pay.Live, s.pay.Secrets, s.pay.Log = cfg.Live, cfg.Secrets, cfg.Logger
	s.pay.Calendar = cfg.Calendar
	s.pay.FallbackBase = s.outsideBase
	key, err := pix.DeriveSigningKey(cfg.Secrets.DeriveKey("pix location signing"))
	if err != nil {
		panic(err) // DeriveKey returns 32 bytes: unreachable
	}
	s.pixKey = key
	s.pixKey.Chain = s.pixChain(key)
	s.files = s.openFiles()
	iss := strings.TrimRight(cfg.BaseURL, "/")
	if iss == "" {
		iss = "troco"
	}
	s.tokens = tokens.New(iss, cfg.Secrets)
	if cfg.Jobs != nil {
		// The payment jobs share this server's engine, so serve and the tests get them here.
		for _, j := range s.paymentJobs() {
			cfg.Jobs.Add(j)
		}
		cfg.Jobs.Add(s.checkoutExpiryJob())
		cfg.Jobs.Add(s.invoiceOverdueJob())
		cfg.Jobs.Add(s.subscriptionJob())
		cfg.Jobs.Add(s.pixAuthExpiryJob())
		s.registerActivationJobs()
		cfg.Jobs.Add(s.mailer.Job())
		s.registerDashboardJobs()
	}
	// A settled or expired PIX/boleto moves its checkout session's payment_status (SPEC 3.3),
	// then the invoice that payment pays (a processing card of POST /v1/invoices/{id}/pay).
	checkoutSettled := s.checkoutService().IntentSettled
	s.pay.AfterSettle = func(tx *db.Tx, a domain.Actor, pi *domain.PaymentIntent) error {
		if err := checkoutSettled(tx, a, pi); err != nil {
			return err
		}
		return invoices.IntentSettled(tx, a, pi)
	}
	// A live Pix Automático attempt decided later (reconciliation, the PSP's webhook) reaches
	// the invoice it pays, and the subscription's retries.
	s.pay.PixAutoSettled = func(tx *db.Tx, a domain.Actor, pi *domain.PaymentIntent) error {
		return s.billingService().PixAutoSettled(tx, a, pi)
	}
	// A checkout session's intent is paid through its session: its rules hold on every interface.
	s.pay.Owner = checkout.OwnerRules()
	if cfg.BaseURL != "" && cfg.DB != nil {
		// Stored links to troco's own pages (hosted invoices, receipts, boletos) are read back on
		// this base URL, whatever base they were made with.
		cfg.DB.SetPublicBase(cfg.BaseURL)
		// The hosted invoice URLs are built inside transactions (finalization, renewals): they
		// read the public base URL from the database, so every replica and job agrees.
		err := cfg.DB.Write(context.Background(), func(tx *db.Tx) error { return tx.PutSetting(invoices.PublicBaseSetting, cfg.BaseURL) })
		if err != nil {
			cfg.Logger.Error("store the public base URL", slog.String("error", err.Error()))
		}
	}
	s.handler = s.routes()
	if s.sharedClock() {
		routes := s.handler
		s.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_ = s.syncClock(r.Context()) // a failure shows in the request's own database access
			routes.ServeHTTP(w, r)
		})
		if cfg.Jobs != nil {
			cfg.Jobs.Add(jobs.Job{Name: "sandbox-clock-sync", Every: time.Second, Run: func(ctx context.Context, _ time.Time) error { return s.syncClock(ctx) }})
		}
	}
	return s
}

// SetReady marks the server ready for traffic (serve, once listening) or not (shutdown).
func (s *Server) SetReady(ready bool) { s.ready.Store(ready) }

// Ready reports why the server cannot take traffic now, or nil: it must be marked ready and
// its database must answer a query within two seconds.
func (s *Server) Ready(ctx context.Context) error {
	if !s.ready.Load() {
		return errors.New("starting or shutting down")
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := s.db.Ping(ctx); err != nil {
		return errors.New("the database does not answer")
	}
	return nil
}

// ServeHTTP dispatches to the routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.cfg.BaseURL == "" && s.learned.Load() == nil {
		s.learnOrigin(r)
	}
	if fix := validURLText(r); fix != nil {
		r = r.WithContext(context.WithValue(r.Context(), ctxURLRepaired, fix))
	}
	s.handler.ServeHTTP(w, r)
}

// urlRepair records what validURLText replaced: the path, and the first query parameter whose
// name (nameBad) or value was not UTF-8.
type urlRepair struct {
	path    bool
	query   bool
	key     string // the parameter's name, repaired
	nameBad bool
	nul     bool // what was repaired was a NUL character (valid UTF-8, refused as text)
}

// badText reports whether s cannot be stored as text: bytes that are not UTF-8, or a NUL
// (PostgreSQL refuses both), and whether the reason is a NUL.
func badText(s string) (bad, nul bool) {
	nul = strings.IndexByte(s, 0) >= 0
	return nul || !utf8.ValidString(s), nul
}

// repairText is s made storable text: U+FFFD for bytes that are not UTF-8 and for NUL.
func repairText(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// validURLText replaces, in a request's path and query values, bytes that are not UTF-8 (sent
// percent-encoded: /v1/customers/cus_%ff) with U+FFFD, so that no handler, query or log line
// sees them (PostgreSQL refuses such text, and the request log stores the path). The request is
// then refused, as a JSON body with such text is: a 400 naming the parameter (checkQuery's caller
// for the query, checkPathText for an id), never a lookup of a value the client did not send.
func validURLText(r *http.Request) *urlRepair {
	var fix *urlRepair
	if bad, nul := badText(r.URL.Path); bad {
		r.URL.Path = repairText(r.URL.Path)
		r.URL.RawPath = ""
		fix = &urlRepair{path: true, nul: nul}
	}
	raw := r.URL.RawQuery
	if strings.IndexByte(raw, '%') < 0 && utf8.ValidString(raw) {
		return fix
	}
	if u, err := url.QueryUnescape(raw); err != nil {
		return fix // malformed escapes checkQuery refuses
	} else if bad, _ := badText(u); !bad {
		return fix
	}
	if fix == nil {
		fix = &urlRepair{}
	} else {
		fix.nul = false // the query's reason is the one reported
	}
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		k, v, hasV := strings.Cut(p, "=")
		key, keyBad, keyNUL := validQueryPart(k)
		parts[i] = key
		if hasV {
			val, valBad, valNUL := validQueryPart(v)
			parts[i] += "=" + val
			if valBad && !fix.query {
				fix.query, fix.key, fix.nul = true, unescaped(key), valNUL
			}
		}
		if keyBad && !fix.query {
			fix.query, fix.nameBad, fix.nul = true, true, keyNUL
		}
	}
	r.URL.RawQuery = strings.Join(parts, "&")
	return fix
}

// validQueryPart is raw with its %-decoded text made storable text (valid UTF-8, no NUL), whether
// it had to be, and whether for a NUL.
func validQueryPart(raw string) (string, bool, bool) {
	u, err := url.QueryUnescape(raw)
	if err != nil {
		return raw, false, false
	}
	bad, nul := badText(u)
	if !bad {
		return raw, false, false
	}
	return url.QueryEscape(repairText(u)), true, nul
}

func unescaped(raw string) string {
	u, _ := url.QueryUnescape(raw)
	return u
}

// outsideBase is the public base URL links made outside a request use: --base-url, else the
// listen address learned from the first request, else "" (the stored setting then).
func (s *Server) outsideBase() string {
	if s.cfg.BaseURL != "" {
		return s.cfg.BaseURL
	}
	if o := s.learned.Load(); o != nil {
		return *o
	}
	return ""
}

// learnOrigin records, for a server started without a base URL, https:// and the local address
// the first request arrived on (the listen address, never the client's Host header), and stores
// it as the public base URL so hosted invoice links and e-mails made later by jobs are absolute.
func (s *Server) learnOrigin(r *http.Request) {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || la == nil {
		return
	}
	o := "https://" + la.String()
	if !s.learned.CompareAndSwap(nil, &o) || s.db == nil {
		return
	}
	s.db.SetPublicBase(o)
	if err := s.db.Write(r.Context(), func(tx *db.Tx) error { return tx.PutSetting(db.SettingPublicBaseURL, o) }); err != nil {
		s.log.Error("store the public base URL", slog.String("error", err.Error()))
	}
}

// pixChain is the certificate chain of the PIX location signing key: the configured one, or a
// certificate the key issues itself for the public host.
func (s *Server) pixChain(key *pix.SigningKey) []*x509.Certificate {
	if s.cfg.PixSigningChain != nil {
		chain, err := s.cfg.PixSigningChain(&key.Key.PublicKey)
		if err == nil && len(chain) > 0 {
			return chain
		}
		if err != nil {
			s.log.Warn("pix: no certificate from the local CA for the location signing key; publishing a self-issued one", "err", err)
		}
	}
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	if u, err := url.Parse(s.cfg.BaseURL); err == nil && u.Hostname() != "" {
		hosts = []string{u.Hostname()}
	}
	now := time.Now() // no clock: certificate validity is wall time
	if s.cfg.Clock != nil {
		now = s.cfg.Clock.Now()
	}
	chain, err := tlsutil.SelfIssuedSigningCert(key.Key, hosts, now)
	if err != nil {
		s.log.Error("pix: self-issued certificate of the location signing key", "err", err)
		return nil
	}
	return chain
}
