package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/db"
	"troco/server"
	"troco/server/clock"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/jobs"
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
}

type envOption func(*server.Config)

func schemaSQL(t testing.TB) string {
	b, err := os.ReadFile(filepath.Join("..", "schema.sql"))
	if err != nil {
		t.Fatalf("read schema: %v", err)
	}
	return string(b)
}

// newEnv starts a server with a bootstrap organization holding a test and a live key.
func newEnv(t *testing.T, opts ...envOption) *testEnv {
	t.Helper()
	is := is.New(t)
	clk := clock.NewOffset(clock.Real{}, 0)
	d, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "troco.db"), db.Options{Schema: schemaSQL(t), Clock: clk, Synchronous: "NORMAL"})
	is.NoErr(err) // open database
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	runner := jobs.NewRunner(clk, log)
	cfg := server.Config{DB: d, Clock: clk, Logger: log, Jobs: runner, AllowTimeTravel: true, SimDelay: 3 * time.Minute}
	for _, o := range opts {
		o(&cfg)
	}
	srv := httptest.NewTLSServer(server.New(cfg))
	e := &testEnv{t: t, srv: srv, DB: d, Clock: clk, Jobs: runner, Client: srv.Client()}
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
func (e *testEnv) Do(method, path, token string, body any, headers ...string) resp {
	e.t.Helper()
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
			e.t.Fatalf("encode body: %v", err)
		}
		rdr = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rdr)
	if err != nil {
		e.t.Fatalf("new request: %v", err)
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
	res, err := e.Client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := resp{Status: res.StatusCode, Header: res.Header, Raw: raw}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &out.Body); err != nil {
			e.t.Fatalf("%s %s: response is not JSON: %s", method, path, raw)
		}
	}
	return out
}

// URL is the server's base address.
func (e *testEnv) URL() string { return e.srv.URL }
