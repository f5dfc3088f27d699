package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/server/domain"
)

// syncBuffer is an io.Writer safe to read while run writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// envFrom is a getenv over a fixed map, so the tests never read the real environment.
func envFrom(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// freeAddr returns a loopback address with a port that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	return freeAddrs(t, 1)[0]
}

// freeAddrs returns n distinct loopback addresses (all held open together while chosen).
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		out = append(out, ln.Addr().String())
	}
	return out
}

// instance is a `troco serve` running through run() in this process.
type instance struct {
	t      *testing.T
	addr   string
	cancel context.CancelFunc
	done   chan error
	stdout *syncBuffer
	stderr *syncBuffer
	client *http.Client
	once   sync.Once
	err    error
}

var caLine = regexp.MustCompile(`local CA certificate: (\S+)`)

// startServe runs `troco serve args…` and waits until /healthz answers over HTTPS, trusting the
// CA the server generated and printed. addr is where it listens (from the flags or environment).
func startServe(t *testing.T, addr string, getenv func(string) string, args ...string) *instance {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	in := &instance{t: t, addr: addr, cancel: cancel, done: make(chan error, 1), stdout: &syncBuffer{}, stderr: &syncBuffer{}}
	go func() { in.done <- run(ctx, append([]string{"serve"}, args...), getenv, in.stdout, in.stderr) }()
	t.Cleanup(func() { in.stop() })

	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-in.done:
			in.done <- err
			t.Fatalf("serve exited before it was ready: %v\nstdout:\n%s", err, in.stdout.String())
		default:
		}
		if in.client == nil {
			if m := caLine.FindStringSubmatch(in.stdout.String()); m != nil {
				pem, err := os.ReadFile(m[1])
				if err != nil {
					t.Fatalf("read CA: %v", err)
				}
				pool := x509.NewCertPool()
				if !pool.AppendCertsFromPEM(pem) {
					t.Fatal("the printed CA file holds no certificate")
				}
				in.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
			}
		}
		if in.client != nil {
			if res, err := in.client.Get("https://" + addr + "/healthz"); err == nil {
				res.Body.Close()
				// The banner's last line ("live mode: …") is printed just after serving begins.
				if res.StatusCode == 200 && strings.Contains(in.stdout.String(), "live mode: ") {
					return in
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz never answered on %s\nstdout:\n%s", addr, in.stdout.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop cancels run's context and returns what run returned (graceful shutdown: nil).
func (in *instance) stop() error {
	in.once.Do(func() {
		in.cancel()
		select {
		case in.err = <-in.done:
		case <-time.After(40 * time.Second):
			in.err = errors.New("run did not return after cancel")
		}
		if in.client != nil {
			in.client.CloseIdleConnections()
		}
	})
	return in.err
}

type answer struct {
	status int
	header http.Header
	body   map[string]any
	raw    []byte
}

func (a answer) str(k string) string { s, _ := a.body[k].(string); return s }

func (a answer) code() string {
	e, _ := a.body["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func (a answer) ids() []string {
	var out []string
	items, _ := a.body["data"].([]any)
	for _, it := range items {
		out = append(out, it.(map[string]any)["id"].(string))
	}
	return out
}

// do sends an authenticated JSON request; headers are name, value pairs.
func (in *instance) do(method, path, token string, body any, headers ...string) answer {
	in.t.Helper()
	var rdr io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rdr = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "https://"+in.addr+path, rdr)
	if err != nil {
		in.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := in.client.Do(req)
	if err != nil {
		in.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	a := answer{status: res.StatusCode, header: res.Header, raw: raw}
	if err := json.Unmarshal(raw, &a.body); err != nil {
		in.t.Fatalf("%s %s: not JSON: %s", method, path, raw)
	}
	return a
}

// runCLI runs an administration command through run() and returns its stdout.
func runCLI(t *testing.T, getenv func(string) string, args ...string) (string, error) {
	t.Helper()
	var out syncBuffer
	err := run(context.Background(), args, getenv, &out, io.Discard)
	return out.String(), err
}

// cliJSON runs a command that must succeed and decodes its --json output into v.
func cliJSON(t *testing.T, getenv func(string) string, v any, args ...string) {
	t.Helper()
	out, err := runCLI(t, getenv, append(args, "--json")...)
	if err != nil {
		t.Fatalf("troco %s: %v", strings.Join(args, " "), err)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("troco %s: output is not JSON: %v\n%s", strings.Join(args, " "), err, out)
	}
}

var (
	bootKeyLine = regexp.MustCompile(`test API key \(shown once, store it now\): (ch_test_[A-Za-z0-9_-]{43})\b`)
	bootOrgLine = regexp.MustCompile(`bootstrap organization: (org_\w+)`)
)

// TestEndToEnd runs the real program: serve on a temp database, the bootstrap key, idempotent
// writes, pagination, the administration commands against the same file while serve runs, a
// graceful shutdown and a restart.
func TestEndToEnd(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "troco.db")
	getenv := envFrom(nil)
	addr := freeAddr(t)
	srv := startServe(t, addr, getenv, "--addr", addr, "--db", dbPath, "--data-dir", filepath.Join(dir, "data"))

	out := srv.stdout.String()
	m := bootKeyLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no bootstrap key in the banner:\n%s", out)
	}
	key := m[1]
	org := bootOrgLine.FindStringSubmatch(out)
	if org == nil {
		t.Fatalf("no bootstrap organization in the banner:\n%s", out)
	}
	bootOrg := org[1]
	var customers []string

	t.Run("idempotent create", func(t *testing.T) {
		is := is.New(t)
		first := srv.do("POST", "/v1/customers", key, map[string]any{"email": "ana@example.com"}, "Idempotency-Key", "e2e-1")
		is.Equal(first.status, 200)                                        // created with the bootstrap key
		is.Equal(first.body["livemode"], false)                            // a test key
		is.True(strings.HasPrefix(first.header.Get("Request-Id"), "req_")) // Request-Id
		again := srv.do("POST", "/v1/customers", key, map[string]any{"email": "ana@example.com"}, "Idempotency-Key", "e2e-1")
		is.Equal(again.header.Get("Idempotent-Replayed"), "true") // replayed
		is.Equal(again.str("id"), first.str("id"))
		customers = append(customers, first.str("id"))
	})

	t.Run("paginated list", func(t *testing.T) {
		is := is.New(t)
		for i := range 3 {
			r := srv.do("POST", "/v1/customers", key, map[string]any{"email": fmt.Sprintf("c%d@example.com", i)})
			is.Equal(r.status, 200)
			customers = append([]string{r.str("id")}, customers...)
		}
		p1 := srv.do("GET", "/v1/customers?limit=2", key, nil)
		is.Equal(p1.status, 200)
		is.Equal(p1.body["has_more"], true)
		p2 := srv.do("GET", "/v1/customers?limit=2&starting_after="+p1.ids()[1], key, nil)
		is.Equal(p2.body["has_more"], false)
		is.Equal(append(p1.ids(), p2.ids()...), customers) // all four, newest first, once
	})

	t.Run("plain HTTP to the HTTPS port is refused", func(t *testing.T) {
		is := is.New(t)
		res, err := http.Get("http://" + addr + "/v1/customers")
		if err == nil {
			res.Body.Close()
			is.True(res.StatusCode != 200) // never served over plain HTTP
		}
	})

	t.Run("administration while serve runs", func(t *testing.T) {
		is := is.New(t)
		db := []string{"--db", dbPath}

		var plat struct {
			ID       string  `json:"id"`
			Platform *string `json:"platform"`
		}
		cliJSON(t, getenv, &plat, append([]string{"org", "create", "--name", "Plataforma", "--platform", "--activation-status", "active"}, db...)...)
		is.True(strings.HasPrefix(plat.ID, "org_"))                                 // organization id
		is.True(plat.Platform != nil && strings.HasPrefix(*plat.Platform, "plat_")) // and platform id

		_, err := runCLI(t, getenv, append([]string{"key", "create", "--org", plat.ID, "--env", "test", "--scopes", "platform_admin", "--json"}, db...)...)
		is.True(err != nil) // no platform key before split rules
		is.True(strings.Contains(err.Error(), "resource_state_conflict"))

		var conf map[string]any
		cliJSON(t, getenv, &conf, append([]string{"platform", "configure", *plat.Platform, "--split-rules", `{"default":{"rate":150}}`}, db...)...)
		is.Equal(conf["active"], true) // active with split rules

		var conn struct{ ID string }
		cliJSON(t, getenv, &conn, append([]string{"org", "create", "--name", "Loja", "--connected-to", *plat.Platform, "--activation-status", "active"}, db...)...)

		var pk struct {
			ID, Token string
			Scopes    []string
		}
		cliJSON(t, getenv, &pk, append([]string{"key", "create", "--org", plat.ID, "--env", "test", "--scopes", "platform_admin"}, db...)...)
		is.True(strings.HasPrefix(pk.Token, "ch_test_"))
		r := srv.do("POST", "/v1/customers", pk.Token, map[string]any{"email": "plat@example.com"}, "Organization", conn.ID)
		is.Equal(r.status, 200)                                             // a platform key from the CLI works at once
		is.Equal(srv.do("GET", "/v1/customers", pk.Token, nil).status, 403) // and needs the Organization header

		var live struct{ ID, Token, Environment string }
		cliJSON(t, getenv, &live, append([]string{"key", "create", "--org", bootOrg, "--env", "live", "--name", "prod"}, db...)...)
		is.True(strings.HasPrefix(live.Token, "ch_live_")) // live token
		is.Equal(live.Environment, "live")
		r = srv.do("POST", "/v1/customers", live.Token, map[string]any{})
		is.Equal(r.status, 200)            // works immediately
		is.Equal(r.body["livemode"], true) // in live mode

		var ro struct{ ID, Token string }
		cliJSON(t, getenv, &ro, append([]string{"key", "create", "--org", bootOrg, "--env", "test", "--scopes", "read"}, db...)...)
		is.Equal(srv.do("GET", "/v1/customers", ro.Token, nil).status, 200)
		is.Equal(srv.do("POST", "/v1/customers", ro.Token, map[string]any{}).status, 403) // read only

		listOut, err := runCLI(t, getenv, append([]string{"key", "list", "--org", bootOrg, "--json"}, db...)...)
		is.NoErr(err)
		var keys []map[string]any
		is.NoErr(json.Unmarshal([]byte(listOut), &keys))
		is.Equal(len(keys), 3)                              // bootstrap, live and read keys
		is.True(!strings.Contains(listOut, live.Token[8:])) // tokens are shown once, never listed
		is.True(!strings.Contains(listOut, key[8:]))

		var revoked map[string]any
		cliJSON(t, getenv, &revoked, append([]string{"key", "revoke", live.ID, "--reason", "rotated"}, db...)...)
		is.True(revoked["revoked_at"] != nil) // revoked
		is.Equal(revoked["revoke_reason"], "rotated")
		r = srv.do("GET", "/v1/customers", live.Token, nil)
		is.Equal(r.status, 401) // refused at once by the running server
		is.Equal(r.code(), "authentication_failed")
		out, err := runCLI(t, getenv, append([]string{"key", "revoke", live.ID, "--json"}, db...)...)
		is.True(err != nil) // revoking twice is an error
		is.True(strings.Contains(err.Error(), "revoked"))
		var twice struct {
			Error  struct{ Code string } `json:"error"`
			Status int                   `json:"status"`
		}
		is.NoErr(json.Unmarshal([]byte(out), &twice)) // --json prints the error envelope on stdout
		is.Equal(twice.Status, 409)
		is.Equal(twice.Error.Code, "api_key_already_revoked")

		_, err = runCLI(t, getenv, append([]string{"key", "create", "--org", "org_doesnotexist", "--env", "test"}, db...)...)
		is.True(err != nil) // unknown organization
	})

	t.Run("dashboard sign-in links: bootstrap owner and troco user create", func(t *testing.T) {
		is := is.New(t)
		m := regexp.MustCompile(`owner admin@localhost; one-time sign-in link, valid 15 minutes: (https://\S+)\)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no bootstrap sign-in link in the banner:\n%s", out)
		}
		noFollow := &http.Client{Transport: srv.client.Transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		open := func(link string) int {
			u, err := url.Parse(link)
			is.NoErr(err)
			res, err := noFollow.Get("https://" + addr + u.Path) // the banner names localhost
			is.NoErr(err)
			res.Body.Close()
			return res.StatusCode
		}
		is.Equal(open(m[1]), http.StatusSeeOther) // signs the owner in
		is.Equal(open(m[1]), http.StatusGone)     // a second use signs nobody in

		var u struct {
			ID, Object, Email, Role, Organization, SigninURL string
			SigninURLExpiresAt                               string `json:"signin_url_expires_at"`
		}
		cliJSON(t, getenv, &u, "user", "create", "--org", bootOrg, "--email", "dev@example.com", "--role", "developer", "--db", dbPath, "--base-url", "https://localhost:"+strings.Split(addr, ":")[1])
		is.True(strings.HasPrefix(u.ID, "user_"))
		is.Equal(u.Object, "user")
		is.Equal(u.Role, "developer")
		is.Equal(u.Organization, bootOrg)
		var raw map[string]any
		cliJSON(t, getenv, &raw, "user", "signin-link", u.ID, "--db", dbPath)
		link, _ := raw["signin_url"].(string)
		is.True(strings.Contains(link, "/dashboard/signin/link/"))
		is.Equal(open(link), http.StatusSeeOther)
		_, err := runCLI(t, getenv, "user", "create", "--org", bootOrg, "--email", "dev@example.com", "--role", "developer", "--db", dbPath)
		is.True(err != nil) // already a member
		_, err = runCLI(t, getenv, "user", "create", "--org", bootOrg, "--email", "x@example.com", "--role", "superuser", "--db", dbPath)
		is.True(err != nil) // unknown role
	})

	t.Run("graceful shutdown", func(t *testing.T) {
		is := is.New(t)
		is.NoErr(srv.stop()) // run returns nil after cancel
	})

	t.Run("restart keeps data and prints no new key", func(t *testing.T) {
		is := is.New(t)
		addr2 := freeAddr(t)
		again := startServe(t, addr2, getenv, "--addr", addr2, "--db", dbPath, "--data-dir", filepath.Join(dir, "data"))
		out := again.stdout.String()
		is.True(!strings.Contains(out, "ch_test_"))                        // no token printed on an existing database
		is.True(strings.Contains(out, "bootstrap organization: "+bootOrg)) // the same organization
		r := again.do("GET", "/v1/customers?limit=100", key, nil)
		is.Equal(r.status, 200)                // the bootstrap key survives the restart
		is.Equal(len(r.ids()), len(customers)) // and so does the data
		is.NoErr(again.stop())
	})

	t.Run("--sandbox-key on an existing database", func(t *testing.T) {
		is := is.New(t)
		sandbox := domain.NewToken(false)
		addr3 := freeAddr(t)
		again := startServe(t, addr3, getenv, "--addr", addr3, "--db", dbPath, "--data-dir", filepath.Join(dir, "data"), "--sandbox-key", sandbox)
		is.True(strings.Contains(again.stdout.String(), "sandbox key registered")) // added to the bootstrap organization
		r := again.do("GET", "/v1/customers?limit=100", sandbox, nil)
		is.Equal(r.status, 200)                // the exact token works
		is.Equal(len(r.ids()), len(customers)) // on the bootstrap organization's test data
		is.NoErr(again.stop())
	})
}

// TestEndToEndSandboxKeyInMemory covers --sandbox-key and --db :memory: (the CI setup).
func TestEndToEndSandboxKeyInMemory(t *testing.T) {
	is := is.New(t)
	sandbox := domain.NewToken(false)
	addr := freeAddr(t)
	srv := startServe(t, addr, envFrom(nil), "--addr", addr, "--db", ":memory:", "--data-dir", t.TempDir(), "--sandbox-key", sandbox, "--allow-time-travel")
	out := srv.stdout.String()
	is.True(strings.Contains(out, "sandbox key registered")) // says it registered the key
	is.True(!strings.Contains(out, sandbox))                 // without printing it back
	r := srv.do("POST", "/v1/customers", sandbox, map[string]any{"email": "ci@example.com"})
	is.Equal(r.status, 200) // the exact token works
	is.Equal(len(srv.do("GET", "/v1/customers", sandbox, nil).ids()), 1)
	r = srv.do("POST", "/v1/test-helpers/advance-clock", sandbox, map[string]any{"seconds": 60})
	is.Equal(r.status, 200) // --allow-time-travel reaches the server
	is.NoErr(srv.stop())
}

// TestEndToEndStrayWhitespaceInKey: a key header with stray whitespace around the token is 401
// over HTTP/1.1 too (where Go trims header values before a handler sees them), and the same
// server still speaks HTTP/2 and answers plain HTTP on the HTTPS port with 400.
func TestEndToEndStrayWhitespaceInKey(t *testing.T) {
	sandbox := domain.NewToken(false)
	addr := freeAddr(t)
	srv := startServe(t, addr, envFrom(nil), "--addr", addr, "--db", ":memory:", "--data-dir", t.TempDir(), "--sandbox-key", sandbox)
	h1 := srv.client // HTTP/1.1: a custom TLS config without ForceAttemptHTTP2
	h2 := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: h1.Transport.(*http.Transport).TLSClientConfig, ForceAttemptHTTP2: true}}
	// Go's HTTP/1.1 client trims header values, so HTTP/1.1 requests are written by hand on one
	// kept-alive TLS connection.
	conn, err := tls.Dial("tcp", addr, h1.Transport.(*http.Transport).TLSClientConfig.Clone())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	send := func(t *testing.T, c *http.Client, header, value string) (int, string, string) {
		t.Helper()
		var res *http.Response
		if c == h1 {
			fmt.Fprintf(conn, "GET /v1/customers HTTP/1.1\r\nHost: localhost\r\n%s: %s\r\n\r\n", header, value)
			if res, err = http.ReadResponse(br, nil); err != nil {
				t.Fatal(err)
			}
		} else {
			req, _ := http.NewRequest("GET", "https://"+addr+"/v1/customers", nil)
			req.Header[header] = []string{value}
			if res, err = c.Do(req); err != nil {
				t.Fatal(err)
			}
		}
		defer res.Body.Close()
		var body struct{ Error struct{ Code string } }
		raw, _ := io.ReadAll(res.Body)
		_ = json.Unmarshal(raw, &body)
		return res.StatusCode, body.Error.Code, res.Proto
	}
	cases := []struct {
		header, value string
		status        int
	}{
		{"Authorization", "Bearer " + sandbox, 200},
		{"X-Service-Api-Key", sandbox, 200},
		{"Authorization", "Bearer " + sandbox + " ", 401},
		{"Authorization", "Bearer " + sandbox + "\t", 401},
		{"X-Service-Api-Key", sandbox + " ", 401},
		{"X-Service-Api-Key", "  " + sandbox, 401},
		{"X-Service-Api-Key", "\t" + sandbox, 401},
		{"Authorization", "Bearer " + sandbox, 200}, // the same connection, clean again
	}
	for _, proto := range []struct {
		name   string
		client *http.Client
	}{{"HTTP/1.1", h1}, {"HTTP/2.0", h2}} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s %s %q", proto.name, c.header, strings.ReplaceAll(c.value, sandbox, "KEY")), func(t *testing.T) {
				is := is.New(t)
				status, code, got := send(t, proto.client, c.header, c.value)
				is.Equal(got, proto.name) // the protocol under test
				is.Equal(status, c.status)
				if c.status == 401 {
					is.Equal(code, "authentication_failed")
				}
			})
		}
	}
	t.Run("plain HTTP on the HTTPS port", func(t *testing.T) {
		is := is.New(t)
		res, err := http.Get("http://" + addr + "/v1/customers")
		is.NoErr(err)
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		is.Equal(res.StatusCode, 400) // Go's answer to HTTP on a TLS port
		is.True(strings.Contains(string(b), "HTTPS server"))
	})
	is.New(t).NoErr(srv.stop())
}

// TestEndToEndEnvironmentAndPlainHTTP covers TROCO_<FLAG> variables and the --http-addr listener.
func TestEndToEndEnvironmentAndPlainHTTP(t *testing.T) {
	dir := t.TempDir()
	addrs := freeAddrs(t, 2)
	addr, httpAddr := addrs[0], addrs[1]
	getenv := envFrom(map[string]string{
		"TROCO_ADDR":      addr,
		"TROCO_DB":        filepath.Join(dir, "env.db"),
		"TROCO_DATA_DIR":  filepath.Join(dir, "data"),
		"TROCO_HTTP_ADDR": httpAddr,
	})
	srv := startServe(t, addr, getenv) // no flags: everything from the environment
	_, port, _ := net.SplitHostPort(addr)
	if _, err := os.Stat(filepath.Join(dir, "env.db")); err != nil {
		t.Fatalf("TROCO_DB was not used: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "ca.pem")); err != nil {
		t.Fatalf("TROCO_DATA_DIR was not used: %v", err)
	}

	plain := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(t *testing.T, method, path string) *http.Response {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			req, _ := http.NewRequest(method, "http://"+httpAddr+path, nil)
			res, err := plain.Do(req)
			if err == nil {
				return res
			}
			if time.Now().After(deadline) {
				t.Fatalf("plain HTTP listener: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for _, path := range []string{"/v1/customers", "/api/v1/checkouts/x"} {
		t.Run("API over HTTP "+path, func(t *testing.T) {
			is := is.New(t)
			res := get(t, "GET", path)
			defer res.Body.Close()
			is.Equal(res.StatusCode, 403) // refused
			var body struct {
				Error struct{ Code, Type, Message string }
			}
			is.NoErr(json.NewDecoder(res.Body).Decode(&body)) // JSON error envelope
			is.Equal(body.Error.Code, "https_required")
			is.Equal(body.Error.Type, "invalid_request_error")
			is.True(strings.HasPrefix(res.Header.Get("Request-Id"), "req_")) // every response carries a Request-Id
		})
	}
	t.Run("pages redirect to HTTPS", func(t *testing.T) {
		is := is.New(t)
		res := get(t, "GET", "/checkout/cs_123?x=1")
		res.Body.Close()
		is.True(res.StatusCode == 301 || res.StatusCode == 308)                                // permanent redirect
		is.Equal(res.Header.Get("Location"), "https://localhost:"+port+"/checkout/cs_123?x=1") // same path on HTTPS
		res = get(t, "GET", "/")
		res.Body.Close()
		is.Equal(res.Header.Get("Location"), "https://localhost:"+port+"/")
		res = get(t, "POST", "/checkout/cs_123/confirm")
		res.Body.Close()
		is.Equal(res.StatusCode, 308) // a form POST is redirected as a POST
	})
	t.Run("shutdown", func(t *testing.T) {
		is := is.New(t)
		is.NoErr(srv.stop())
	})
}

// TestServeRejectsBadConfiguration: invalid flags or variables stop serve before it listens.
func TestServeRejectsBadConfiguration(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"live sandbox key", nil, []string{"--sandbox-key", domain.NewToken(true)}},
		{"malformed sandbox key", nil, []string{"--sandbox-key", "ch_test_short"}},
		{"bad rate limit from the environment", map[string]string{"TROCO_RATE_LIMIT": "sometimes"}, nil},
		{"bad log format", nil, []string{"--log-format", "xml"}},
		{"bad boolean from the environment", map[string]string{"TROCO_ALLOW_TIME_TRAVEL": "maybe"}, nil},
		{"bad duration from the environment", map[string]string{"TROCO_SIM_DELAY": "soon"}, nil},
		{"tls cert without key", nil, []string{"--tls-cert", "x.pem"}},
		{"positional argument", nil, []string{"now"}},
		{"smtp url without a sender", nil, []string{"--smtp-url", "smtp://user@127.0.0.1:587"}},
		{"smtp sender without a url", nil, []string{"--smtp-from", "recibos@loja.com.br"}},
		{"smtp url with a bad scheme", nil, []string{"--smtp-url", "imap://127.0.0.1", "--smtp-from", "recibos@loja.com.br"}},
		{"smtp password file missing", nil, []string{"--smtp-url", "smtp://user@127.0.0.1:587", "--smtp-from", "recibos@loja.com.br", "--smtp-password-file", filepath.Join(dir, "absent")}},
		{"dkim without a key", nil, []string{"--smtp-url", "smtp://user@127.0.0.1:587", "--smtp-from", "recibos@loja.com.br", "--smtp-dkim-domain", "loja.com.br"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "bad.db"), "--data-dir", dir}, tc.args...)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			err := run(ctx, args, envFrom(tc.env), io.Discard, io.Discard)
			is.True(err != nil)       // refused
			is.True(ctx.Err() == nil) // at once, not by the timeout
		})
	}
	t.Run("busy --http-addr", func(t *testing.T) {
		is := is.New(t)
		busy, err := net.Listen("tcp", "127.0.0.1:0")
		is.NoErr(err)
		defer busy.Close()
		addr := freeAddr(t)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		err = run(ctx, []string{"serve", "--addr", addr, "--http-addr", busy.Addr().String(), "--db", ":memory:", "--data-dir", dir}, envFrom(nil), io.Discard, io.Discard)
		is.True(err != nil)       // the listener that cannot bind is an error
		is.True(ctx.Err() == nil) // reported at once
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
		}
		is.True(err != nil) // and run left no HTTPS server behind
	})
	t.Run("unknown command", func(t *testing.T) {
		is := is.New(t)
		_, err := runCLI(t, envFrom(nil), "frobnicate")
		is.True(err != nil)
	})
}

// TestServeRefusesAnotherMasterKey: serving an existing database with a data dir whose master.key
// is not the one that sealed its webhook secrets is refused at start, instead of silently making
// every stored secret unreadable.
func TestServeRefusesAnotherMasterKey(t *testing.T) {
	is := is.New(t)
	dbPath := filepath.Join(t.TempDir(), "troco.db")
	first := t.TempDir()
	addr := freeAddr(t)
	srv := startServe(t, addr, envFrom(nil), "--addr", addr, "--db", dbPath, "--data-dir", first)
	is.NoErr(srv.stop())

	other := t.TempDir() // empty: serve would create a new master.key there
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	err := run(ctx, []string{"serve", "--addr", freeAddr(t), "--db", dbPath, "--data-dir", other}, envFrom(nil), io.Discard, &stderr)
	is.True(err != nil) // refused
	is.True(strings.Contains(err.Error(), "master.key"))
	is.True(ctx.Err() == nil) // at once

	addr = freeAddr(t)
	srv = startServe(t, addr, envFrom(nil), "--addr", addr, "--db", dbPath, "--data-dir", first)
	is.NoErr(srv.stop()) // the right data dir still serves
}

// TestServePrintsThePlainHTTPAddress: with --http-addr on port 0 (a CI's throwaway instance) the
// banner names the address the plain-HTTP listener took, and that address answers
// https_required, as the metrics listener's address is printed.
func TestServePrintsThePlainHTTPAddress(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	srv := startServe(t, addr, envFrom(nil), "--addr", addr, "--db", ":memory:", "--data-dir", dir, "--metrics-addr", "off", "--http-addr", "127.0.0.1:0")
	m := regexp.MustCompile(`plain HTTP on http://(127\.0\.0\.1:\d+)`).FindStringSubmatch(srv.stdout.String())
	is.True(m != nil) // the listener's real address is printed
	is.True(!strings.HasSuffix(m[1], ":0"))
	res, err := http.Get("http://" + m[1] + "/v1/customers")
	is.NoErr(err)
	defer res.Body.Close()
	is.Equal(res.StatusCode, 403) // the printed address is the plain listener
	is.NoErr(srv.stop())
}

// TestKeyListShowsExpiredKeys: `troco key list` names an expired key expired, not active (the
// server already refuses it with 401), beside active and revoked ones.
func TestKeyListShowsExpiredKeys(t *testing.T) {
	is := is.New(t)
	dbPath := filepath.Join(t.TempDir(), "keys.db")
	getenv := envFrom(nil)
	var org struct{ ID string }
	cliJSON(t, getenv, &org, "org", "create", "--name", "Chaves", "--db", dbPath)
	var soon, revoked, active struct{ ID string }
	// Seconds ahead (RFC 3339 here has whole seconds), so that a slow machine still creates it
	// before it passes.
	expiry := time.Now().UTC().Add(5 * time.Second).Truncate(time.Second)
	cliJSON(t, getenv, &soon, "key", "create", "--org", org.ID, "--env", "test", "--expires-at", expiry.Format(time.RFC3339), "--db", dbPath)
	cliJSON(t, getenv, &revoked, "key", "create", "--org", org.ID, "--env", "test", "--db", dbPath)
	cliJSON(t, getenv, &active, "key", "create", "--org", org.ID, "--env", "test", "--expires-at", time.Now().UTC().Add(time.Hour).Format(time.RFC3339), "--db", dbPath)
	_, err := runCLI(t, getenv, "key", "revoke", revoked.ID, "--db", dbPath)
	is.NoErr(err)
	time.Sleep(time.Until(expiry) + 500*time.Millisecond) // the first key's expiry passes

	out, err := runCLI(t, getenv, "key", "list", "--org", org.ID, "--db", dbPath)
	is.NoErr(err)
	state := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "\t")
		state[f[0]] = f[3]
	}
	is.Equal(state[soon.ID], "expired")
	is.Equal(state[revoked.ID], "revoked")
	is.Equal(state[active.ID], "active") // an expiry still ahead is active
}

// TestServeWithBaseURLPrintsTheListenAddress: with --base-url (the public name behind a proxy)
// the banner still says where troco listens, so --addr 127.0.0.1:0 stays usable; the base URL
// is printed beside it.
func TestServeWithBaseURLPrintsTheListenAddress(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	srv := startServe(t, addr, envFrom(nil), "--addr", addr, "--db", ":memory:", "--data-dir", dir, "--metrics-addr", "off", "--base-url", "https://pay.example.com")
	first := strings.SplitN(srv.stdout.String(), "\n", 2)[0]
	is.True(strings.Contains(first, "listening on https://"+addr)) // the real address
	is.True(strings.Contains(first, "https://pay.example.com"))    // and the base URL
	is.NoErr(srv.stop())
}
