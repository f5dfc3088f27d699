package server_test

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
)

// dashClient is a cookie-keeping HTTP client of the dashboard that does not follow redirects.
type dashClient struct {
	t    *testing.T
	e    *testEnv
	c    *http.Client
	csrf string
}

func (e *testEnv) dashBrowser() *dashClient {
	jar, _ := cookiejar.New(nil)
	return &dashClient{t: e.t, e: e, c: &http.Client{Transport: e.Client.Transport, Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

var dashCSRFRe = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// get fetches path and remembers the page's CSRF token.
func (b *dashClient) get(path string) (int, string, http.Header) {
	b.t.Helper()
	res, err := b.c.Get(b.e.URL() + path)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if m := dashCSRFRe.FindSubmatch(body); m != nil {
		b.csrf = html.UnescapeString(string(m[1]))
	}
	return res.StatusCode, string(body), res.Header
}

// post sends a form with the remembered CSRF token (unless form sets csrf_token itself).
func (b *dashClient) post(path string, form url.Values) (int, string, http.Header) {
	b.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["csrf_token"]; !ok {
		form.Set("csrf_token", b.csrf)
	}
	res, err := b.c.PostForm(b.e.URL()+path, form)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if m := dashCSRFRe.FindSubmatch(body); m != nil {
		b.csrf = html.UnescapeString(string(m[1]))
	}
	return res.StatusCode, string(body), res.Header
}

// newUser adds a person to org and returns the path of a fresh one-time sign-in link.
func (e *testEnv) newUser(orgID, email, role string) (*domain.User, string) {
	e.t.Helper()
	var u *domain.User
	var link *core.SigninLink
	err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
		var err error
		if u, err = core.CreateUser(tx, core.UserInput{OrgID: orgID, Email: email, Role: role}); err != nil {
			return err
		}
		link, err = core.IssueSigninLink(tx, u.ID)
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return u, strings.TrimPrefix(core.SigninURL("", link.Token), "")
}

// signedIn returns a dashClient signed in as a new user with role in org.
func (e *testEnv) signedIn(orgID, email, role string) *dashClient {
	e.t.Helper()
	_, link := e.newUser(orgID, email, role)
	b := e.dashBrowser()
	if st, _, h := b.get(link); st != http.StatusSeeOther || h.Get("Location") != "/dashboard/account" {
		e.t.Fatalf("sign-in link: %d %s", st, h.Get("Location"))
	}
	b.get("/dashboard/test")
	return b
}

func TestDashboardSigninLinkPasswordSignout(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, link := e.newUser(e.Org.ID, "Ana@Example.com", domain.RoleOwner)
	b := e.dashBrowser()
	st, _, h := b.get(link)
	is.Equal(st, http.StatusSeeOther)
	is.Equal(h.Get("Location"), "/dashboard/account")
	cookie := h.Get("Set-Cookie")
	is.True(strings.Contains(cookie, "HttpOnly") && strings.Contains(cookie, "Secure") && strings.Contains(cookie, "SameSite=Lax"))
	// The 303 that carries the session cookie is never cached and carries the security headers.
	is.Equal(h.Get("Cache-Control"), "no-store")
	is.Equal(h.Get("X-Frame-Options"), "DENY")
	is.Equal(h.Get("Referrer-Policy"), "no-referrer") // the link's token never leaks on
	is.True(strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'"))

	// A second use of the link signs nobody in.
	other := e.dashBrowser()
	st, body, h := other.get(link)
	is.Equal(st, http.StatusGone)
	is.True(h.Get("Set-Cookie") == "" || !strings.Contains(h.Get("Set-Cookie"), "troco_dash="))
	is.True(strings.Contains(body, "expirado"))
	st, _, h = other.get("/dashboard/test")
	is.Equal(st, http.StatusSeeOther)
	is.Equal(h.Get("Location"), "/dashboard/signin")

	// The first dashClient sets a password (too short is refused), signs out, signs in again.
	st, body, _ = b.get("/dashboard/account")
	is.Equal(st, http.StatusOK)
	is.True(strings.Contains(body, "ana@example.com"))
	_, body, _ = b.post("/dashboard/account", url.Values{"action": {"password"}, "password": {"short"}})
	is.True(strings.Contains(body, "ao menos 10"))
	_, body, _ = b.post("/dashboard/account", url.Values{"action": {"password"}, "password": {"correct horse battery"}})
	is.True(strings.Contains(body, `class="notice"`))
	var stored string
	_ = e.DB.Read(context.Background(), func(tx *db.Tx) error {
		us, _ := tx.FindUsersByEmail("ana@example.com")
		stored = us[0].PasswordHash
		return nil
	})
	is.True(strings.HasPrefix(stored, "$argon2id$")) // never the password in clear
	is.True(!strings.Contains(stored, "correct horse"))

	st, _, h = b.post("/dashboard/signout", nil)
	is.Equal(st, http.StatusSeeOther)
	st, _, _ = b.get("/dashboard/test")
	is.Equal(st, http.StatusSeeOther) // signed out

	b.get("/dashboard/signin")
	st, body, _ = b.post("/dashboard/signin", url.Values{"email": {"ana@example.com"}, "password": {"wrong password!"}})
	is.Equal(st, http.StatusUnauthorized)
	is.True(strings.Contains(body, `data-testid="signin-form"`))
	st, _, h = b.post("/dashboard/signin", url.Values{"email": {"ANA@example.com "}, "password": {"correct horse battery"}})
	is.Equal(st, http.StatusSeeOther)
	is.Equal(h.Get("Location"), "/dashboard/test")
	st, body, _ = b.get("/dashboard/test")
	is.Equal(st, http.StatusOK)
	is.True(strings.Contains(body, `data-testid="sandbox-banner"`))
	is.True(strings.Contains(body, `data-testid="env-switch"`))
	st, body, _ = b.get("/dashboard/live")
	is.Equal(st, http.StatusOK)
	is.True(!strings.Contains(body, `data-testid="sandbox-banner"`)) // no yellow bar in live

	// 12 hours idle end the session.
	e.Clock.Advance(12*time.Hour + time.Minute)
	st, _, _ = b.get("/dashboard/test")
	is.Equal(st, http.StatusSeeOther)
}

func TestDashboardSigninWithoutCSRFRefused(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	u, _ := e.newUser(e.Org.ID, "bob@example.com", domain.RoleOwner)
	_ = e.DB.Write(context.Background(), func(tx *db.Tx) error { return core.SetPassword(tx, u.ID, "a long password") })
	b := e.dashBrowser()
	st, _, _ := b.post("/dashboard/signin", url.Values{"email": {"bob@example.com"}, "password": {"a long password"}})
	is.Equal(st, http.StatusForbidden) // no form token: a cross-site sign-in is refused
}

func TestDashboardLockout(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	u, _ := e.newUser(e.Org.ID, "carla@example.com", domain.RoleAdmin)
	is.NoErr(e.DB.Write(context.Background(), func(tx *db.Tx) error { return core.SetPassword(tx, u.ID, "the right password") }))
	b := e.dashBrowser()
	b.get("/dashboard/signin")
	for i := 0; i < core.MaxSigninFailures; i++ {
		st, _, _ := b.post("/dashboard/signin", url.Values{"email": {"carla@example.com"}, "password": {"guess number " + string(rune('a'+i))}})
		is.Equal(st, http.StatusUnauthorized)
	}
	// Locked: even the right password is refused for 15 minutes.
	st, _, _ := b.post("/dashboard/signin", url.Values{"email": {"carla@example.com"}, "password": {"the right password"}})
	is.Equal(st, http.StatusUnauthorized)
	e.Clock.Advance(14 * time.Minute)
	st, _, _ = b.post("/dashboard/signin", url.Values{"email": {"carla@example.com"}, "password": {"the right password"}})
	is.Equal(st, http.StatusUnauthorized)
	e.Clock.Advance(2 * time.Minute)
	st, _, _ = b.post("/dashboard/signin", url.Values{"email": {"carla@example.com"}, "password": {"the right password"}})
	is.Equal(st, http.StatusSeeOther)
}

func keyCount(t *testing.T, e *testEnv, orgID string) int {
	var n int
	_ = e.DB.Read(context.Background(), func(tx *db.Tx) error {
		ks, err := tx.ListAPIKeys(orgID)
		n = len(ks)
		return err
	})
	return n
}

var tokenRe = regexp.MustCompile(`data-testid="key-token" readonly value="([^"]+)"`)

func TestDashboardAPIKeys(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	b := e.signedIn(e.Org.ID, "owner@example.com", domain.RoleOwner)
	st, body, _ := b.get("/dashboard/test/api-keys")
	is.Equal(st, http.StatusOK)
	is.True(strings.Contains(body, `data-testid="key-create-form"`))
	is.True(!strings.Contains(body, `value="admin"`)) // admin is not offered
	before := keyCount(t, e, e.Org.ID)

	// Default scopes read+write, test environment; the token is shown once and works.
	st, body, _ = b.post("/dashboard/test/api-keys", url.Values{"name": {"CI <b>key</b>"}, "scope_read": {"read"}, "scope_write": {"write"}, "environment": {"test"}})
	is.Equal(st, http.StatusOK)
	m := tokenRe.FindStringSubmatch(body)
	is.True(m != nil)
	token := m[1]
	is.True(strings.HasPrefix(token, "ch_test_"))
	is.True(strings.Contains(body, "CI &lt;b&gt;key&lt;/b&gt;")) // escaped
	is.Equal(keyCount(t, e, e.Org.ID), before+1)
	is.Equal(e.Do("GET", "/v1/customers", token, nil).Status, 200)
	_, body, _ = b.get("/dashboard/test/api-keys")
	is.True(!strings.Contains(body, token)) // never shown again

	// An expiry in the past, an admin scope and no scope at all are refused; nothing is created.
	_, body, _ = b.post("/dashboard/test/api-keys", url.Values{"name": {"x"}, "environment": {"test"}})
	is.True(strings.Contains(body, "Escolha ao menos um escopo"))
	_, body, _ = b.post("/dashboard/test/api-keys", url.Values{"name": {"x"}, "scope_read": {"read"}, "environment": {"test"}, "expires_at": {"2001-01-01T00:00"}})
	is.True(strings.Contains(body, "A data de expiração deve estar no futuro"))
	_, body, _ = b.post("/dashboard/test/api-keys", url.Values{"name": {"x"}, "scope_admin": {"admin"}, "environment": {"live"}})
	is.True(strings.Contains(body, "não são oferecidas"))
	is.Equal(keyCount(t, e, e.Org.ID), before+1)

	// Revoke with a reason: the next request is 401, the key is listed as revoked; twice is refused.
	var id string
	_ = e.DB.Read(context.Background(), func(tx *db.Tx) error {
		k, err := tx.FindAPIKeyByHash(domain.HashToken(token))
		id = k.ID
		return err
	})
	st, body, _ = b.post("/dashboard/test/api-keys/"+id+"/revoke", url.Values{"reason": {"leaked in a log"}})
	is.Equal(st, http.StatusOK)
	is.Equal(e.Do("GET", "/v1/customers", token, nil).Status, 401)
	is.True(strings.Contains(body, "leaked in a log"))
	is.True(strings.Contains(body, `data-testid="revoked-keys-table"`))
	_, body, _ = b.post("/dashboard/test/api-keys/"+id+"/revoke", url.Values{"reason": {"again"}})
	is.True(strings.Contains(body, "já foi revogada"))
	// The owner's audit trail records both actions.
	is.True(strings.Contains(body, "api_key.created"))
	is.True(strings.Contains(body, "api_key.revoked"))
}

func TestDashboardRolesCSRFAndOrganizations(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	viewer := e.signedIn(e.Org.ID, "viewer@example.com", domain.RoleViewer)
	dev := e.signedIn(e.Org.ID, "dev@example.com", domain.RoleDeveloper)
	owner := e.signedIn(e.Org.ID, "owner@example.com", domain.RoleOwner)
	before := keyCount(t, e, e.Org.ID)
	form := url.Values{"name": {"x"}, "scope_read": {"read"}, "environment": {"live"}}

	// A viewer and a developer posting the owner's form: refused, nothing changed.
	st, _, _ := viewer.post("/dashboard/test/api-keys", form)
	is.Equal(st, http.StatusForbidden)
	st, _, _ = dev.post("/dashboard/test/api-keys", form)
	is.Equal(st, http.StatusForbidden)
	st, _, _ = viewer.get("/dashboard/test/api-keys")
	is.Equal(st, http.StatusForbidden)
	st, _, _ = viewer.post("/dashboard/test/webhooks", url.Values{"url": {"https://example.com/hook"}, "enabled_events": {"*"}})
	is.Equal(st, http.StatusForbidden)
	st, _, _ = viewer.get("/dashboard/test/logs")
	is.Equal(st, http.StatusForbidden)

	// The owner's form without a token, with the token of another session: refused.
	f := url.Values{"name": {"x"}, "scope_read": {"read"}, "environment": {"live"}, "csrf_token": {""}}
	st, _, _ = owner.post("/dashboard/test/api-keys", f)
	is.Equal(st, http.StatusForbidden)
	f.Set("csrf_token", dev.csrf) // stolen from another dashClient
	st, _, _ = owner.post("/dashboard/test/api-keys", f)
	is.Equal(st, http.StatusForbidden)
	is.Equal(keyCount(t, e, e.Org.ID), before)

	// A person of another organization sees nothing of this one.
	pi := e.Do("POST", "/v1/payment-intents", e.Test, map[string]any{"amount": 1000, "currency": "brl", "payment_method_types": []string{"pix"}})
	is.Equal(pi.Status, 200)
	otherOrg, _ := e.NewOrg("Other Ltda", false)
	stranger := e.signedIn(otherOrg.ID, "owner@other.example", domain.RoleOwner)
	st, _, _ = stranger.get("/dashboard/test/payments/" + pi.Str("id"))
	is.Equal(st, http.StatusNotFound)
	_, body, _ := stranger.get("/dashboard/test/payments")
	is.True(!strings.Contains(body, pi.Str("id")))
	st, body, _ = owner.get("/dashboard/test/payments/" + pi.Str("id"))
	is.Equal(st, http.StatusOK)
	is.True(strings.Contains(body, pi.Str("id")))
	// Their owner cannot revoke this organization's key either.
	var keyID string
	_ = e.DB.Read(context.Background(), func(tx *db.Tx) error {
		k, err := tx.FindAPIKeyByHash(domain.HashToken(e.Test))
		keyID = k.ID
		return err
	})
	st, _, _ = stranger.post("/dashboard/test/api-keys/"+keyID+"/revoke", url.Values{"reason": {"x"}})
	is.Equal(st, http.StatusNotFound)
	is.Equal(e.Do("GET", "/v1/customers", e.Test, nil).Status, 200)
}

func TestDashboardEscapesCallerText(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	evil := `<script>alert("x")</script><img src=x onerror=alert(1)>`
	c := e.Do("POST", "/v1/customers", e.Test, map[string]any{"name": evil, "email": "x@example.com", "description": evil, "metadata": map[string]string{"k": evil}})
	is.Equal(c.Status, 200)
	pi := e.Do("POST", "/v1/payment-intents", e.Test, map[string]any{"amount": 1000, "currency": "brl", "payment_method_types": []string{"pix"}, "description": evil, "customer": c.Str("id")})
	is.Equal(pi.Status, 200)
	b := e.signedIn(e.Org.ID, "owner@example.com", domain.RoleOwner)
	for _, path := range []string{"/dashboard/test/customers", "/dashboard/test/customers/" + c.Str("id"), "/dashboard/test/payments", "/dashboard/test/payments/" + pi.Str("id"), "/dashboard/test", "/dashboard/test/events"} {
		st, body, _ := b.get(path)
		is.Equal(st, http.StatusOK)
		is.True(!strings.Contains(body, "<script>alert"))
		is.True(!strings.Contains(body, "<img src=x"))
	}
	_, body, _ := b.get("/dashboard/test/customers/" + c.Str("id"))
	is.True(strings.Contains(body, "&lt;script&gt;"))
}

// The navigation offers each person only the pages their role opens: a viewer sees neither API
// keys nor request logs (both answer 403 to them), a developer sees the request logs but not the
// keys, an admin sees both.
func TestDashboardNavigationFollowsRole(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	for _, c := range []struct {
		role       string
		keys, logs bool
	}{{domain.RoleViewer, false, false}, {domain.RoleDeveloper, false, true}, {domain.RoleAdmin, true, true}, {domain.RoleOwner, true, true}} {
		b := e.signedIn(e.Org.ID, c.role+"@example.com", c.role)
		st, body, _ := b.get("/dashboard/test/payments")
		is.Equal(st, http.StatusOK)
		is.Equal(strings.Contains(body, `href="/dashboard/test/api-keys"`), c.keys)
		is.Equal(strings.Contains(body, `href="/dashboard/test/logs"`), c.logs)
		st, _, _ = b.get("/dashboard/test/api-keys")
		is.Equal(st == http.StatusOK, c.keys)
		st, _, _ = b.get("/dashboard/test/logs")
		is.Equal(st == http.StatusOK, c.logs)
	}
}

// A webhook endpoint changed through the API (created, updated, its secret rotated, deleted) is
// in the owners' audit trail with the key that changed it, as the dashboard's own changes are
// with the person.
func TestDashboardAuditTrailRecordsAPIWebhookChanges(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	ep := e.Do("POST", "/v1/webhook-endpoints", e.Test, map[string]any{"url": "https://example.com/hooks", "enabled_events": []string{"*"}})
	is.Equal(ep.Status, 200)
	id := ep.Str("id")
	is.Equal(e.Do("POST", "/v1/webhook-endpoints/"+id, e.Test, map[string]any{"url": "https://example.com/other"}).Status, 200)
	is.Equal(e.Do("POST", "/v1/webhook-endpoints/"+id+"/rotate-secret", e.Test, map[string]any{}).Status, 200)
	is.Equal(e.Do("DELETE", "/v1/webhook-endpoints/"+id, e.Test, nil).Status, 200)

	var keyID string
	is.NoErr(e.DB.Read(context.Background(), func(tx *db.Tx) error {
		keys, err := tx.ListAPIKeys(e.Org.ID)
		for _, k := range keys {
			if !k.Livemode {
				keyID = k.ID
			}
		}
		return err
	}))
	is.True(keyID != "")
	owner := e.signedIn(e.Org.ID, "owner@example.com", domain.RoleOwner)
	_, body, _ := owner.get("/dashboard/test/settings")
	for _, action := range []string{"webhook_endpoint.created", "webhook_endpoint.updated", "webhook_endpoint.rotate-secret", "webhook_endpoint.deleted"} {
		is.True(strings.Contains(body, action))
	}
	is.True(strings.Contains(body, "api:"+keyID))
	is.True(strings.Contains(body, "https://example.com/other"))
}

// The test/live switch leads to the same page in the other environment, the home page included
// (whose URL has no page name).
func TestDashboardEnvSwitchFromHome(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	b := e.signedIn(e.Org.ID, "owner@example.com", domain.RoleOwner)
	for _, c := range []struct{ from, to string }{
		{"/dashboard/test", "/dashboard/live"}, {"/dashboard/live", "/dashboard/test"}, {"/dashboard/test/payments", "/dashboard/live/payments"},
	} {
		_, body, _ := b.get(c.from)
		m := regexp.MustCompile(`data-testid="env-switch" href="([^"]+)"`).FindStringSubmatch(body)
		is.True(m != nil)
		is.Equal(m[1], c.to)
		st, _, _ := b.get(m[1])
		is.Equal(st, http.StatusOK)
	}
}

// The JSON an object page and a request-log page show reads as the API sent it: "<b>" and "&",
// not encoding/json's HTML escapes "\u003cb\u003e" and "\u0026" (the page itself escapes them).
func TestDashboardJSONShowsTextAsSent(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	text := `<b>Ana</b> & "Co" \u003c`
	c := e.Do("POST", "/v1/customers", e.Test, map[string]any{"name": text, "email": "ana@example.com", "metadata": map[string]string{"k": text}})
	is.Equal(c.Status, 200)
	b := e.signedIn(e.Org.ID, "owner@example.com", domain.RoleOwner)
	st, body, _ := b.get("/dashboard/test/customers/" + c.Str("id"))
	is.Equal(st, http.StatusOK)
	is.True(!strings.Contains(body, `\u003cb`))                                    // the object's JSON shows "<b>"
	is.True(!strings.Contains(body, `\u0026`))                                     // and "&"
	is.True(strings.Contains(body, `\\u003c`))                                     // a backslash the caller sent stays escaped
	is.True(strings.Contains(body, `&lt;b&gt;Ana&lt;/b&gt; &amp; \&#34;Co\&#34;`)) // escaped for HTML once
	var m [][]string
	for range 1000 { // the request log is written behind the responses (up to 20 s on a busy machine)
		st, body, _ = b.get("/dashboard/test/logs")
		is.Equal(st, http.StatusOK)
		if m = regexp.MustCompile(`href="(/dashboard/test/logs/req_[^"]+)"`).FindAllStringSubmatch(body, -1); len(m) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	is.True(len(m) > 0)
	for _, l := range m {
		_, body, _ = b.get(l[1])
		is.True(!strings.Contains(body, `\u003cb`)) // request and response bodies too
	}
}

// Dashboard forms obey the API's text rules: a bidirectional override, a NUL or broken UTF-8 in
// any field is refused and nothing is stored.
func TestDashboardRefusesControlText(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	b := e.signedIn(e.Org.ID, "owner@example.com", domain.RoleOwner)
	for _, tc := range []struct {
		path string
		form url.Values
	}{
		{"/dashboard/test/settings", url.Values{"timezone": {"America/Sao_Paulo"}, "display_name": {"Loja \u202eadtL"}}},
		{"/dashboard/test/settings", url.Values{"timezone": {"America/Sao_Paulo"}, "display_name": {"Loja\x00"}}},
		{"/dashboard/test/webhooks", url.Values{"url": {"https://example.com/h"}, "enabled_events": {"*"}, "description": {"meu \u2066endpoint"}}},
		{"/dashboard/test/settings/people", url.Values{"email": {"ana\xff@example.com"}, "role": {"admin"}}},
	} {
		b.get(tc.path)
		st, body, _ := b.post(tc.path, tc.form)
		is.Equal(st, http.StatusBadRequest)
		is.True(strings.Contains(body, "caracteres de controle")) // in the person's language (pt-BR by default)
	}
	org := e.Do("GET", "/v1/organizations/"+e.Org.ID, e.Test, nil)
	is.Equal(digStr(org.Body, "checkout_settings.branding.display_name"), "") // nothing stored
	is.Equal(len(e.Do("GET", "/v1/webhook-endpoints", e.Test, nil).Body["data"].([]any)), 0)
	is.Equal(len(e.usersOf(e.Org.ID)), 1)
}
