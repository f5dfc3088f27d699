package server_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/db"
	"troco/db/dbtest"
	"troco/server"
	"troco/server/clock"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/jobs"
	"troco/server/secrets"
)

// testEnv is a real troco server over HTTPS on a real SQLite file in a temp dir.
type testEnv struct {
	t      *testing.T
	srv    *httptest.Server
	DB     *db.DB
	Clock  *clock.Offset
	Jobs   *jobs.Runner
	Org    *domain.Organization
	Test   string // ch_test_ token (read, write) of Org
	Live   string // ch_live_ token (read, write) of Org
	Client *http.Client
	// Path is the SQLite file (or PostgreSQL URL), Dir the test's data dir and Config the
	// server's configuration (to reopen them: restarts).
	Path   string
	Dir    string
	Config server.Config
}

type envOption func(*server.Config)

func schemaSQL(t testing.TB) string {
	s, _ := dbtest.Schemas(t)
	return s
}

func pgSchemaSQL(t testing.TB) string {
	_, s := dbtest.Schemas(t)
	return s
}

// newEnv starts a server with a bootstrap organization holding a test and a live key.
func newEnv(t *testing.T, opts ...envOption) *testEnv {
	t.Helper()
	dir := t.TempDir()
	return newEnvAt(t, dbtest.Path(t, filepath.Join(dir, "troco.db")), dir, opts...)
}

// newEnvAt is newEnv on the database path (a SQLite file or a PostgreSQL URL) and data dir given.
func newEnvAt(t *testing.T, path, dir string, opts ...envOption) *testEnv {
	t.Helper()
	is := is.New(t)
	clk := clock.NewOffset(clock.Real{}, 0)
	d, err := db.Open(context.Background(), path, db.Options{Schema: schemaSQL(t), PostgresSchema: pgSchemaSQL(t), Clock: clk, Synchronous: "NORMAL"})
	is.NoErr(err) // open database
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	runner := jobs.NewRunner(clk, log)
	cfg := server.Config{DB: d, Clock: clk, Logger: log, Jobs: runner, AllowTimeTravel: true, SimDelay: 3 * time.Minute, FilesDir: filepath.Join(dir, "files")}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.Secrets == nil {
		cfg.Secrets = secrets.Random()
	}
	srv := httptest.NewUnstartedServer(server.New(cfg))
	if cfg.PixWebhookCA != nil {
		// As serve --pix-webhook-ca does: ask for (not require) the PSP's client certificate.
		srv.TLS = &tls.Config{}
		server.PixWebhookTLS(srv.TLS, cfg.PixWebhookCA)
	}
	srv.StartTLS()
	e := &testEnv{t: t, srv: srv, DB: d, Clock: clk, Jobs: runner, Client: srv.Client(), Path: path, Dir: dir, Config: cfg}
	t.Cleanup(func() {
		srv.Close()
		d.Close()
	})
	e.Org, e.Test = e.NewOrg("Acme Ltda", false)
	e.Live = e.NewKey(e.Org.ID, true, domain.ScopeRead, domain.ScopeWrite)
	return e
}

// NewOrg creates an organization with a read/write test key.
func (e *testEnv) NewOrg(name string, platform bool) (*domain.Organization, string) {
	e.t.Helper()
	var org *domain.Organization
	err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
		var err error
		org, err = core.CreateOrganization(tx, core.OrganizationInput{Name: name, Platform: platform})
		return err
	})
	if err != nil {
		e.t.Fatalf("create org: %v", err)
	}
	return org, e.NewKey(org.ID, false, domain.ScopeRead, domain.ScopeWrite)
}

// NewKey creates a key and returns its token.
func (e *testEnv) NewKey(orgID string, live bool, scopes ...string) string {
	e.t.Helper()
	var k *domain.APIKey
	err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
		var err error
		k, err = core.CreateAPIKey(tx, core.APIKeyInput{OrgID: orgID, Livemode: live, Scopes: scopes})
		return err
	})
	if err != nil {
		e.t.Fatalf("create key: %v", err)
	}
	return k.Token
}

// resp is a decoded API answer.
type resp struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

// ErrCode returns error.code of an error answer.
func (r resp) ErrCode() string {
	e, _ := r.Body["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

// ErrParam returns error.param of an error answer.
func (r resp) ErrParam() string {
	e, _ := r.Body["error"].(map[string]any)
	s, _ := e["param"].(string)
	return s
}

// Str returns a top-level string field.
func (r resp) Str(k string) string {
	s, _ := r.Body[k].(string)
	return s
}

// Do sends a request with the token (empty: none) and a JSON body (nil: none; string: raw).
// headers are name, value pairs set after the defaults (so they can override them).
func (e *testEnv) Do(method, path, token string, body any, headers ...string) resp {
	e.t.Helper()
	out, err := e.TryDo(method, path, token, body, headers...)
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// TryDo is Do returning its failure instead of failing the test; it is safe in goroutines.
func (e *testEnv) TryDo(method, path, token string, body any, headers ...string) (resp, error) {
	var rdr io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rdr = bytes.NewBufferString(b)
	case []byte:
		rdr = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return resp{}, fmt.Errorf("encode body: %w", err)
		}
		rdr = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rdr)
	if err != nil {
		return resp{}, fmt.Errorf("new request: %w", err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if rdr != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return e.Send(req)
}

// Send sends a prepared request (for header shapes Do cannot express) and decodes the answer.
func (e *testEnv) Send(req *http.Request) (resp, error) {
	res, err := e.Client.Do(req)
	if err != nil {
		return resp{}, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := resp{Status: res.StatusCode, Header: res.Header, Raw: raw}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &out.Body); err != nil {
			return out, fmt.Errorf("%s %s: response is not JSON: %s", req.Method, req.URL.Path, raw)
		}
	}
	return out, nil
}

// NewRequest builds a request to the server without any default header.
func (e *testEnv) NewRequest(method, path string, body io.Reader) *http.Request {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, body)
	if err != nil {
		e.t.Fatalf("new request: %v", err)
	}
	return req
}

// CreateOrg creates an organization from in (platforms, connected organizations, statuses).
func (e *testEnv) CreateOrg(in core.OrganizationInput) *domain.Organization {
	e.t.Helper()
	var org *domain.Organization
	err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
		var err error
		org, err = core.CreateOrganization(tx, in)
		return err
	})
	if err != nil {
		e.t.Fatalf("create org: %v", err)
	}
	return org
}

// CreateKey creates a key from in and returns it (with its token) or the operation's error.
func (e *testEnv) CreateKey(in core.APIKeyInput) (*domain.APIKey, error) {
	var k *domain.APIKey
	err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
		var err error
		k, err = core.CreateAPIKey(tx, in)
		return err
	})
	return k, err
}

// NewPlatform creates an active platform with split rules configured and returns it with a
// test platform_admin token.
func (e *testEnv) NewPlatform(name string) (*domain.Organization, string) {
	e.t.Helper()
	p := e.CreateOrg(core.OrganizationInput{Name: name, Platform: true, ActivationStatus: domain.ActivationActive})
	err := e.DB.Write(context.Background(), func(tx *db.Tx) error { return tx.ConfigureSplitRules(*p.Platform, `{"platform_rate":100}`) })
	if err != nil {
		e.t.Fatalf("configure split rules: %v", err)
	}
	k, err := e.CreateKey(core.APIKeyInput{OrgID: p.ID, Scopes: []string{domain.ScopePlatformAdmin}})
	if err != nil {
		e.t.Fatalf("create platform key: %v", err)
	}
	return p, k.Token
}

// ErrType returns error.type of an error answer.
func (r resp) ErrType() string {
	e, _ := r.Body["error"].(map[string]any)
	s, _ := e["type"].(string)
	return s
}

// Data returns the data array of a list answer.
func (r resp) Data() []map[string]any {
	items, _ := r.Body["data"].([]any)
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		m, _ := it.(map[string]any)
		out = append(out, m)
	}
	return out
}

// IDs returns the ids in the data array of a list answer, in order.
func (r resp) IDs() []string {
	var ids []string
	for _, m := range r.Data() {
		id, _ := m["id"].(string)
		ids = append(ids, id)
	}
	return ids
}

// URL is the server's base address.
func (e *testEnv) URL() string { return e.srv.URL }

// v1Route is a /v1 route of routes.go: its method, path and the scope expression it needs
// (read, write, platform, platformOr(read), platformOwn(write)…; "write" for the confirms
// registered with r.Handler directly, which also take a client_secret).
type v1Route struct{ method, path, need string }

// v1Routes reads every /v1 route from routes.go, so that the tests walking every route (auth,
// idempotency, pagination, isolation) fail when a new route skips a shared mechanism.
func v1Routes(t *testing.T) []v1Route {
	t.Helper()
	src, err := os.ReadFile("routes.go")
	if err != nil {
		t.Fatal(err)
	}
	viaV1 := regexp.MustCompile(`v1\("(GET|POST|DELETE)",\s*"(/v1/[^"]*)",\s*([a-zA-Z]+(?:\([a-z]+\))?)`)
	direct := regexp.MustCompile(`r\.Handler\(http\.Method(Get|Post|Delete),\s*"(/v1/[^"]*)"`)
	var routes []v1Route
	for _, m := range viaV1.FindAllStringSubmatch(string(src), -1) {
		routes = append(routes, v1Route{m[1], m[2], m[3]})
	}
	for _, m := range direct.FindAllStringSubmatch(string(src), -1) {
		if m[2] == "/v1/openapi.json" {
			continue // public by design: the API's description, no key and no objects
		}
		routes = append(routes, v1Route{strings.ToUpper(m[1]), m[2], "write"})
	}
	if len(routes) < 50 {
		t.Fatalf("found only %d /v1 routes in routes.go; update the patterns of v1Routes", len(routes))
	}
	return routes
}
