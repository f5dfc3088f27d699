package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/pquerna/otp/totp"

	"troco/db"
	"troco/server"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/jobs"
)

// withPassword adds a person with a password set and returns their user.
func (e *testEnv) withPassword(orgID, email, role, password string) *domain.User {
	e.t.Helper()
	u, _ := e.newUser(orgID, email, role)
	if err := e.DB.Write(context.Background(), func(tx *db.Tx) error { return core.SetPassword(tx, u.ID, password) }); err != nil {
		e.t.Fatal(err)
	}
	return u
}

// signinWithPassword signs b in through the sign-in form and returns the status and Location.
func (b *dashClient) signinWithPassword(email, password string) (int, string) {
	b.t.Helper()
	b.get("/dashboard/signin")
	st, _, h := b.post("/dashboard/signin", url.Values{"email": {email}, "password": {password}})
	return st, h.Get("Location")
}

func TestDashboardRemovePerson(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	owner := e.signedIn(e.Org.ID, "dona@example.com", domain.RoleOwner)
	admin := e.signedIn(e.Org.ID, "admin@example.com", domain.RoleAdmin)
	dev := e.signedIn(e.Org.ID, "dev@example.com", domain.RoleDeveloper)
	viewer := e.signedIn(e.Org.ID, "viewer@example.com", domain.RoleViewer)
	_, devLink := e.newUser(e.Org.ID, "dev2@example.com", domain.RoleDeveloper) // a link not used yet
	ids := e.usersOf(e.Org.ID)

	// Developers and viewers cannot remove anybody; nothing changes.
	st, _, _ := viewer.post("/dashboard/test/settings/people/"+ids["dev@example.com"]+"/remove", nil)
	is.Equal(st, http.StatusForbidden)
	st, _, _ = dev.post("/dashboard/test/settings/people/"+ids["viewer@example.com"]+"/remove", nil)
	is.Equal(st, http.StatusForbidden)
	// A stolen or missing CSRF token is refused.
	st, _, _ = admin.post("/dashboard/test/settings/people/"+ids["dev@example.com"]+"/remove", url.Values{"csrf_token": {"forged"}})
	is.Equal(st, http.StatusForbidden)
	// An admin cannot remove an owner (and is not offered the button).
	_, body, _ := admin.get("/dashboard/test/settings")
	is.True(strings.Contains(body, `data-testid="person-remove-`+ids["dev@example.com"]+`"`))
	is.True(!strings.Contains(body, `data-testid="person-remove-`+ids["dona@example.com"]+`"`))
	st, body, _ = admin.post("/dashboard/test/settings/people/"+ids["dona@example.com"]+"/remove", nil)
	is.Equal(st, http.StatusConflict)
	is.True(strings.Contains(dashError(body), "Só um proprietário pode remover um proprietário"))
	is.Equal(len(e.usersOf(e.Org.ID)), 5)

	// The admin removes the developer: their open session ends at once.
	st, _, _ = dev.get("/dashboard/test/webhooks")
	is.Equal(st, http.StatusOK)
	st, body, _ = admin.post("/dashboard/test/settings/people/"+ids["dev@example.com"]+"/remove", nil)
	is.Equal(st, http.StatusOK)
	is.True(strings.Contains(body, `class="notice"`))
	st, _, h := dev.get("/dashboard/test/webhooks")
	is.Equal(st, http.StatusSeeOther)
	is.Equal(h.Get("Location"), "/dashboard/signin")
	_, ok := e.usersOf(e.Org.ID)["dev@example.com"]
	is.True(!ok)
	// A removed person's unused sign-in link signs nobody in.
	st, _, _ = admin.post("/dashboard/test/settings/people/"+ids["dev2@example.com"]+"/remove", nil)
	is.Equal(st, http.StatusOK)
	st, _, _ = e.dashBrowser().get(devLink)
	is.Equal(st, http.StatusGone)
	// Removing twice, or a person of another organization: not found, nothing changed.
	st, _, _ = admin.post("/dashboard/test/settings/people/"+ids["dev@example.com"]+"/remove", nil)
	is.Equal(st, http.StatusNotFound)
	other, _ := e.NewOrg("Outra Ltda", false)
	stranger, _ := e.newUser(other.ID, "x@outra.example", domain.RoleViewer)
	st, _, _ = owner.post("/dashboard/test/settings/people/"+stranger.ID+"/remove", nil)
	is.Equal(st, http.StatusNotFound)
	_, ok = e.usersOf(other.ID)["x@outra.example"]
	is.True(ok)

	// The removals are in the owners' audit trail, with who did them.
	_, body, _ = owner.get("/dashboard/test/settings")
	is.True(strings.Contains(body, "user.removed"))
	is.True(strings.Contains(body, "dev@example.com (developer)"))

	// The last owner stays; with a second owner, an owner can leave (and is signed out).
	_, body, _ = owner.get("/dashboard/test/settings")
	is.True(!strings.Contains(body, `data-testid="person-remove-`+ids["dona@example.com"]+`"`))
	st, _, _ = owner.post("/dashboard/test/settings/people/"+ids["dona@example.com"]+"/remove", nil)
	is.Equal(st, http.StatusConflict)
	owner2 := e.signedIn(e.Org.ID, "dono2@example.com", domain.RoleOwner)
	st, _, h = owner.post("/dashboard/test/settings/people/"+ids["dona@example.com"]+"/remove", nil)
	is.Equal(st, http.StatusSeeOther)
	is.Equal(h.Get("Location"), "/dashboard/signin")
	st, _, _ = owner.get("/dashboard/test")
	is.Equal(st, http.StatusSeeOther)
	st, _, _ = owner2.get("/dashboard/test/settings")
	is.Equal(st, http.StatusOK)
}

func TestDashboardOrganizationSwitcher(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	orgB, _ := e.NewOrg("Filial Recife", false)
	orgC, _ := e.NewOrg("Terceira", false)
	e.withPassword(e.Org.ID, "ana@example.com", domain.RoleOwner, "one good password")
	inB := e.withPassword(orgB.ID, "ana@example.com", domain.RoleViewer, "one good password")
	inC := e.withPassword(orgC.ID, "ana@example.com", domain.RoleOwner, "another password!") // a different password

	b := e.dashBrowser()
	st, loc := b.signinWithPassword("ana@example.com", "one good password")
	is.Equal(st, http.StatusSeeOther)
	is.Equal(loc, "/dashboard/test")
	_, body, _ := b.get("/dashboard/test")
	is.True(strings.Contains(body, `data-testid="org-switch"`))
	is.True(strings.Contains(body, "Filial Recife"))
	is.True(!strings.Contains(body, "Terceira")) // its password differs: not opened by this sign-in

	// Switch to the other organization: its data, its role.
	st, _, h := b.post("/dashboard/switch-org", url.Values{"user": {inB.ID}})
	is.Equal(st, http.StatusSeeOther)
	is.Equal(h.Get("Location"), "/dashboard/test")
	_, body, _ = b.get("/dashboard/test/settings")
	is.True(strings.Contains(body, `<option value="`+inB.ID+`" selected>Filial Recife`))
	st, _, _ = b.get("/dashboard/test/api-keys")
	is.Equal(st, http.StatusForbidden) // a viewer there
	// And back.
	ids := e.usersOf(e.Org.ID)
	st, _, _ = b.post("/dashboard/switch-org", url.Values{"user": {ids["ana@example.com"]}})
	is.Equal(st, http.StatusSeeOther)
	st, body, _ = b.get("/dashboard/test/api-keys")
	is.Equal(st, http.StatusOK)
	is.True(strings.Contains(body, "Acme Ltda"))

	// An account this sign-in did not open is refused, and nothing changes.
	st, body, _ = b.post("/dashboard/switch-org", url.Values{"user": {inC.ID}})
	is.Equal(st, http.StatusBadRequest)
	is.True(strings.Contains(dashError(body), "Este acesso não abre essa organização"))
	_, body, _ = b.get("/dashboard/test")
	is.True(strings.Contains(body, "Acme Ltda"))
	// Without the form token: refused.
	st, _, _ = b.post("/dashboard/switch-org", url.Values{"user": {inB.ID}, "csrf_token": {"x"}})
	is.Equal(st, http.StatusForbidden)

	// A sign-in link opens one account only: no switcher.
	_, link := e.newUser(orgB.ID, "bruno@example.com", domain.RoleOwner)
	lb := e.dashBrowser()
	lb.get(link)
	_, body, _ = lb.get("/dashboard/test")
	is.True(!strings.Contains(body, `data-testid="org-switch"`))

	// Removed from the other organization: it is no longer offered, and switching fails.
	owner := e.signedIn(orgB.ID, "chefe@example.com", domain.RoleOwner)
	st, _, _ = owner.post("/dashboard/test/settings/people/"+inB.ID+"/remove", nil)
	is.Equal(st, http.StatusOK)
	_, body, _ = b.get("/dashboard/test")
	is.True(!strings.Contains(body, `data-testid="org-switch"`))
	st, _, _ = b.post("/dashboard/switch-org", url.Values{"user": {inB.ID}})
	is.Equal(st, http.StatusBadRequest)
}

// TestDashboardSigninLimitedPerAddress: failed sign-ins are counted per client address as well as
// per account, in the database, so two servers over the same database (replicas) share the count.
func TestDashboardSigninLimitedPerAddress(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	e.withPassword(e.Org.ID, "real@example.com", domain.RoleOwner, "the real password")

	// A second server over the same database file: another replica.
	d2, err := db.Open(context.Background(), e.Path, db.Options{Schema: schemaSQL(t), PostgresSchema: pgSchemaSQL(t), Clock: e.Clock, Synchronous: "NORMAL"})
	is.NoErr(err)
	cfg2 := e.Config
	cfg2.DB = d2
	cfg2.Jobs = jobs.NewRunner(e.Clock, slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv2 := httptest.NewTLSServer(server.New(cfg2))
	t.Cleanup(func() { srv2.Close(); d2.Close() })
	e2 := *e
	e2.srv = srv2

	a, b := e.dashBrowser(), e2.dashBrowser()
	a.get("/dashboard/signin")
	b.get("/dashboard/signin")
	// Earlier guesses from this address (recorded as the sign-in form does; each costs a password
	// hash, so the test starts close to the limit), then guesses across several accounts (none
	// reaches its own limit of 10), alternating between the replicas.
	is.NoErr(e.DB.Write(context.Background(), func(tx *db.Tx) error {
		for i := 0; i < core.MaxSigninFailuresPerIP-6; i++ {
			if _, err := core.RecordSigninAddressFailure(tx, "127.0.0.1"); err != nil {
				return err
			}
		}
		return nil
	}))
	for i := core.MaxSigninFailuresPerIP - 6; i < core.MaxSigninFailuresPerIP-1; i++ {
		c := a
		if i%2 == 1 {
			c = b
		}
		st, _, _ := c.post("/dashboard/signin", url.Values{"email": {fmt.Sprintf("guess%d@example.com", i%5)}, "password": {"guess " + fmt.Sprint(i)}})
		is.Equal(st, http.StatusUnauthorized)
	}
	// The last failure allowed blocks the address, on both replicas, for every account.
	st, body, h := a.post("/dashboard/signin", url.Values{"email": {"guess9@example.com"}, "password": {"x"}})
	is.Equal(st, http.StatusTooManyRequests)
	is.True(strings.Contains(dashErrorSignin(body), "Muitas tentativas de acesso sem sucesso a partir do seu endereço de rede. Tente de novo em 15 minutos."))
	is.Equal(h.Get("Retry-After"), "900")
	st, _, _ = b.post("/dashboard/signin", url.Values{"email": {"real@example.com"}, "password": {"the real password"}})
	is.Equal(st, http.StatusTooManyRequests) // even the right password, from this address
	// The accounts themselves are not locked (another address could still sign in).
	var locked bool
	_ = e.DB.Read(context.Background(), func(tx *db.Tx) error {
		us, _ := tx.FindUsersByEmail("real@example.com")
		locked = !us[0].LockedUntil.IsZero()
		return nil
	})
	is.True(!locked)

	// 15 minutes later the address may try again.
	e.Clock.Advance(14 * time.Minute)
	st, _, _ = a.post("/dashboard/signin", url.Values{"email": {"real@example.com"}, "password": {"the real password"}})
	is.Equal(st, http.StatusTooManyRequests)
	e.Clock.Advance(2 * time.Minute)
	st, _, h = a.post("/dashboard/signin", url.Values{"email": {"real@example.com"}, "password": {"the real password"}})
	is.Equal(st, http.StatusSeeOther)
	is.Equal(h.Get("Location"), "/dashboard/test")

	// The retention job forgets old counts.
	is.NoErr(e.Jobs.RunDue(context.Background()))
}

// dashErrorSignin returns the error message of the sign-in page.
func dashErrorSignin(body string) string { return dashError(body) }

func TestSigninAddress(t *testing.T) {
	is := is.New(t)
	is.Equal(core.SigninAddress("203.0.113.7:51234"), "203.0.113.7")
	is.Equal(core.SigninAddress("[::ffff:203.0.113.7]:443"), "203.0.113.7")
	is.Equal(core.SigninAddress("[2001:db8:1:2:aaaa::1]:443"), "2001:db8:1:2::/64")
	is.Equal(core.SigninAddress("[2001:db8:1:2:bbbb::9]:443"), "2001:db8:1:2::/64") // one /64, one count
}

// Wrong authenticator codes count for the address too: once it is blocked, the second step is
// refused even with the right code.
func TestDashboardTOTPLimitedPerAddress(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	u := e.withPassword(e.Org.ID, "tina@example.com", domain.RoleOwner, "the real password")
	key, err := totp.Generate(totp.GenerateOpts{Issuer: "troco", AccountName: u.Email})
	is.NoErr(err)
	is.NoErr(e.DB.Write(context.Background(), func(tx *db.Tx) error { return tx.SetUserTOTP(u.ID, e.Config.Secrets.Seal(key.Secret()), true) }))
	b := e.dashBrowser()
	st, loc := b.signinWithPassword("tina@example.com", "the real password")
	is.Equal(st, http.StatusSeeOther)
	is.Equal(loc, "/dashboard/signin/totp")
	// Earlier failures from this address, one short of the limit.
	is.NoErr(e.DB.Write(context.Background(), func(tx *db.Tx) error {
		for i := 0; i < core.MaxSigninFailuresPerIP-1; i++ {
			if _, err := core.RecordSigninAddressFailure(tx, "127.0.0.1"); err != nil {
				return err
			}
		}
		return nil
	}))
	b.get("/dashboard/signin/totp")
	st, body, _ := b.post("/dashboard/signin/totp", url.Values{"code": {"000000"}})
	is.Equal(st, http.StatusTooManyRequests)
	is.True(strings.Contains(dashError(body), "Tente de novo em 15 minutos"))
	code, _ := totp.GenerateCode(key.Secret(), time.Now())
	st, _, _ = b.post("/dashboard/signin/totp", url.Values{"code": {code}})
	is.Equal(st, http.StatusTooManyRequests)
	st, _, _ = b.get("/dashboard/test")
	is.Equal(st, http.StatusSeeOther) // still not signed in
}

// An API key's page shows it and the requests made with it (only with it), to admins of its
// organization.
func TestDashboardAPIKeyPageListsItsRequests(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	admin := e.signedIn(e.Org.ID, "admin@example.com", domain.RoleAdmin)
	_, body, _ := admin.post("/dashboard/test/api-keys", url.Values{"name": {"Loja <virtual>"}, "scope_read": {"read"}, "scope_write": {"write"}, "environment": {"live"}})
	token := regexp.MustCompile(`ch_live_[A-Za-z0-9_-]{43}`).FindString(body) // shown once
	is.True(strings.HasPrefix(token, "ch_live_"))
	keyID := regexp.MustCompile(`/dashboard/test/api-keys/(key_[A-Za-z0-9]+)"`).FindStringSubmatch(body)[1]
	e.Do("POST", "/v1/customers", token, map[string]any{"email": "ana@example.com"})
	e.Do("GET", "/v1/customers", token, nil)
	e.Do("GET", "/v1/customers", e.Live, nil) // another key: not listed
	logs := waitLogs(t, e, domain.Scope{OrgID: e.Org.ID, Livemode: true}, db.RequestLogFilter{KeyID: keyID}, 2)
	is.Equal(len(logs), 2)

	st, body, _ := admin.get("/dashboard/test/api-keys/" + keyID)
	is.Equal(st, http.StatusOK)
	is.True(strings.Contains(body, "Loja &lt;virtual&gt;"))
	is.True(strings.Contains(body, `data-testid="request-log-table"`))
	is.Equal(strings.Count(body, `href="/dashboard/live/logs/`), 2) // its two requests, linked in their environment
	for _, l := range logs {
		is.True(strings.Contains(body, l.ID))
	}

	// Other people and organizations: refused or not found.
	viewer := e.signedIn(e.Org.ID, "viewer@example.com", domain.RoleViewer)
	st, _, _ = viewer.get("/dashboard/test/api-keys/" + keyID)
	is.Equal(st, http.StatusForbidden)
	other, _ := e.NewOrg("Outra", false)
	stranger := e.signedIn(other.ID, "admin@outra.example", domain.RoleAdmin)
	st, _, _ = stranger.get("/dashboard/test/api-keys/" + keyID)
	is.Equal(st, http.StatusNotFound)
}
