package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/matryer/is"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
)

// shootDashboard saves the current page at desktop and phone widths as dashboard-<name>-*.png.
func (c *chrome) shootDashboard(name string) {
	c.t.Helper()
	dir := screenshotDir(c.t)
	if dir == "" {
		return
	}
	for _, v := range []struct {
		suffix        string
		width, height int64
		mobile        bool
	}{{"desktop", 1280, 800, false}, {"phone", 390, 844, true}} {
		var opts []chromedp.EmulateViewportOption
		if v.mobile {
			opts = append(opts, chromedp.EmulateMobile)
		}
		png, err := fullScreenshot(c.ctx, v.width, v.height, opts)
		if err != nil {
			c.t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, "dashboard-"+name+"-"+v.suffix+".png"), png, 0o644); err != nil {
			c.t.Logf("screenshot %s not saved: %v", name, err)
		}
	}
	c.do("restore viewport", chromedp.EmulateViewport(1280, 900))
}

// A person signs in with a password, creates an API key (shown once) and revokes it, resends a
// webhook delivery and reads the request log, in a real Chromium without JavaScript-dependent flows.
func TestBrowserDashboard(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	c := newChrome(t)
	rc := newReceiver(t, false)
	d := startWebhooks(e)
	epID, _ := e.createEndpoint(e.Test, rc.URL(), "customer.*")
	cust := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "ana@example.com", "name": "Ana <Souza>"})
	for _, amount := range []int{12990, 4500, 250000} {
		pi := e.Do("POST", "/v1/payment-intents", e.Test, map[string]any{"amount": amount, "currency": "brl", "payment_method_types": []string{"pix"}, "customer": cust.Str("id"), "description": "Pedido #" + time.Now().Format("150405")})
		e.Do("POST", "/v1/payment-intents/"+pi.Str("id")+"/confirm", e.Test, map[string]any{"payment_method_type": "pix", "customer_email": "succeed_immediately@example.com"})
	}
	e.deliver(d)
	first := await(t, rc, "customer.created")
	u, _ := e.newUser(e.Org.ID, "owner@example.com", domain.RoleOwner)
	is.NoErr(e.DB.Write(context.Background(), func(tx *db.Tx) error { return core.SetPassword(tx, u.ID, "a long password") }))
	dev, _ := e.newUser(e.Org.ID, "dev@example.com", domain.RoleDeveloper)

	// Sign in.
	c.do("open sign-in", chromedp.Navigate(e.URL()+"/dashboard/signin"), chromedp.WaitVisible(tid("signin-form"), chromedp.ByQuery))
	c.shootDashboard("signin")
	c.do("sign in", chromedp.SendKeys("#email", "owner@example.com", chromedp.ByQuery), chromedp.SendKeys("#password", "a long password", chromedp.ByQuery),
		chromedp.Click(tid("signin-submit"), chromedp.ByQuery), chromedp.WaitVisible(tid("sandbox-banner"), chromedp.ByQuery))
	is.True(c.has("payments-table"))
	c.shootDashboard("home")
	c.do("payments", chromedp.Navigate(e.URL()+"/dashboard/test/payments"), chromedp.WaitVisible(tid("payments-table"), chromedp.ByQuery))
	c.shootDashboard("payments")

	// Create a key: the token is shown once and works.
	c.do("open keys", chromedp.Navigate(e.URL()+"/dashboard/test/api-keys"), chromedp.WaitVisible(tid("key-create-form"), chromedp.ByQuery),
		chromedp.SendKeys("#in-key-create-form-name", "Servidor de produção", chromedp.ByQuery),
		chromedp.Click(tid("key-create-submit"), chromedp.ByQuery), chromedp.WaitVisible(tid("key-token"), chromedp.ByQuery))
	var token string
	c.do("read token", chromedp.Value(tid("key-token"), &token, chromedp.ByQuery))
	is.True(strings.HasPrefix(token, "ch_test_"))
	is.Equal(e.Do("GET", "/v1/customers", token, nil).Status, 200)
	c.shootDashboard("api-key-created")
	var keyID string
	is.NoErr(e.DB.Read(context.Background(), func(tx *db.Tx) error {
		k, err := tx.FindAPIKeyByHash(domain.HashToken(token))
		if err == nil {
			keyID = k.ID
		}
		return err
	}))

	// Revoke it with a reason.
	form := tid("key-revoke-" + keyID)
	c.do("revoke", chromedp.SendKeys(form+` input[name="reason"]`, "trocada", chromedp.ByQuery), chromedp.Click(form+` button`, chromedp.ByQuery))
	// The old page already has an (empty) revoked list: wait for the reason to appear.
	c.waitTrue("revoked key listed", `(document.querySelector('[data-testid="revoked-keys-table"]')?.innerText || "").includes("trocada")`)
	is.True(strings.Contains(c.text("revoked-keys-table"), "trocada"))
	is.Equal(e.Do("GET", "/v1/customers", token, nil).Status, 401)
	c.shootDashboard("api-keys")

	// Resend a webhook delivery.
	c.do("open webhook", chromedp.Navigate(e.URL()+"/dashboard/test/webhooks/"+epID), chromedp.WaitVisible(tid("deliveries-table"), chromedp.ByQuery),
		chromedp.Click(tid("webhook-resend")+" button", chromedp.ByQuery), chromedp.WaitVisible(".notice", chromedp.ByQuery))
	e.deliver(d)
	again := await(t, rc, "resent delivery")
	is.Equal(again.ID, first.ID)
	c.do("reload webhook", chromedp.Navigate(e.URL()+"/dashboard/test/webhooks/"+epID), chromedp.WaitVisible(tid("deliveries-table"), chromedp.ByQuery))
	c.shootDashboard("webhook")
	// Phone width: every destination of the navigation is on screen (it wraps, it never scrolls
	// sideways), nor does any page (a long title such as a webhook's URL wraps). Measured against
	// the screen: a mobile layout viewport grows to fit content that overflows.
	c.do("phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	for _, path := range []string{"", "/payments", "/settings", "/webhooks/" + epID, "/logs", "/api-keys"} {
		var off []string
		c.do("phone nav "+path, chromedp.Navigate(e.URL()+"/dashboard/test"+path), chromedp.WaitVisible("main", chromedp.ByQuery),
			chromedp.Evaluate(`(() => { const w = screen.width, ul = document.querySelector("nav ul"), out = [];
					if (document.documentElement.scrollWidth > w + 1) out.push("page " + document.documentElement.scrollWidth);
					if (ul.scrollWidth > ul.clientWidth + 1) out.push("nav scrolls " + ul.scrollWidth);
					for (const a of document.querySelectorAll("nav a")) { const r = a.getBoundingClientRect(); if (r.left < 0 || r.right > w + 1) out.push(a.textContent); }
					if (/não encontrada/.test(document.querySelector("h1").textContent)) out.push("not found"); return out; })()`, &off))
		if len(off) > 0 {
			t.Errorf("%s at 390 px: off screen: %v", path, off)
		}
	}
	c.do("restore viewport", chromedp.EmulateViewport(1280, 900))

	// The request log lists the API calls; one entry shows its redacted bodies.
	c.do("logs", chromedp.Navigate(e.URL()+"/dashboard/test/logs"), chromedp.WaitVisible(tid("request-log-table"), chromedp.ByQuery))
	is.True(strings.Contains(c.text("request-log-table"), "/v1/payment-intents"))
	c.shootDashboard("request-logs")
	c.do("one log", chromedp.Click(tid("request-log-table")+" tbody tr:last-child a", chromedp.ByQuery), chromedp.WaitVisible("pre", chromedp.ByQuery))
	c.shootDashboard("request-log")

	// Settings: a time zone that does not exist is refused in Portuguese and what was typed stays.
	c.do("settings", chromedp.Navigate(e.URL()+"/dashboard/test/settings"), chromedp.WaitVisible(tid("settings-form"), chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("#in-settings-form-timezone").value = ""; document.querySelector("#in-settings-form-display_name").value = ""; true`, nil),
		chromedp.SendKeys("#in-settings-form-timezone", "America/Recife_Nova", chromedp.ByQuery),
		chromedp.SendKeys("#in-settings-form-display_name", "Loja da Ana", chromedp.ByQuery),
		chromedp.Click(tid("settings-form")+" button", chromedp.ByQuery), chromedp.WaitVisible(".error", chromedp.ByQuery))
	var tz, shown string
	c.do("read kept", chromedp.Value("#in-settings-form-timezone", &tz, chromedp.ByQuery), chromedp.Value("#in-settings-form-display_name", &shown, chromedp.ByQuery))
	is.Equal(tz, "America/Recife_Nova")
	is.Equal(shown, "Loja da Ana")
	var errText string
	c.do("error text", chromedp.Text(".error", &errText, chromedp.ByQuery))
	is.True(strings.Contains(errText, "não existe"))
	c.shootDashboard("settings-error")

	// Remove a person: gone from the list, in the audit trail.
	c.do("remove person", chromedp.Navigate(e.URL()+"/dashboard/test/settings"), chromedp.WaitVisible(tid("people-table"), chromedp.ByQuery),
		chromedp.Click(tid("person-remove-"+dev.ID)+" button", chromedp.ByQuery), chromedp.WaitVisible(".notice", chromedp.ByQuery))
	is.True(!strings.Contains(c.text("people-table"), "dev@example.com"))
	is.True(strings.Contains(c.text("audit-table"), "user.removed"))
	c.shootDashboard("settings")

	// The same person in a second organization (same password): signed in again, the header
	// offers a switcher; switch to the other organization from it.
	orgB, _ := e.NewOrg("Filial Recife", false)
	e.withPassword(orgB.ID, "owner@example.com", domain.RoleAdmin, "a long password")
	c.do("sign out", chromedp.Click(".signout button", chromedp.ByQuery), chromedp.WaitVisible(tid("signin-form"), chromedp.ByQuery))
	c.do("sign in again", chromedp.SendKeys("#email", "owner@example.com", chromedp.ByQuery), chromedp.SendKeys("#password", "a long password", chromedp.ByQuery),
		chromedp.Click(tid("signin-submit"), chromedp.ByQuery), chromedp.WaitVisible(tid("org-switch"), chromedp.ByQuery))
	c.do("switch org", chromedp.Evaluate(`document.querySelector("#org-switch").value = "`+e.usersOf(orgB.ID)["owner@example.com"]+`"; true`, nil),
		chromedp.Click(tid("org-switch")+" button", chromedp.ByQuery))
	c.waitTrue("switched", `(document.querySelector('#org-switch option:checked')?.textContent || "").includes("Filial Recife")`)
	c.shootDashboard("org-switch")

	// Phone width: the navigation and tables stay usable (no horizontal page scroll).
	var overflow bool
	c.do("phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Navigate(e.URL()+"/dashboard/test/payments"), chromedp.WaitVisible(tid("payments-table"), chromedp.ByQuery),
		chromedp.Evaluate(`document.documentElement.scrollWidth > window.innerWidth + 1`, &overflow))
	is.True(!overflow)

}

// waitTrue evaluates js until it is true (through navigations), or fails after 15 s.
func (c *chrome) waitTrue(what, js string) {
	c.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		var ok bool
		ctx, cancel := context.WithTimeout(c.ctx, 2*time.Second)
		err := chromedp.Run(ctx, chromedp.Evaluate(js, &ok))
		cancel()
		if err == nil && ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.t.Fatalf("%s: still false after 15 s: %s", what, js)
}
