package server_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/matryer/is"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
)

// axeSource returns axe-core's axe.min.js from $TROCO_AXE_JS, or skips. CI installs it with npm
// (see .ci/run); locally: npm install axe-core && TROCO_AXE_JS=$PWD/node_modules/axe-core/axe.min.js.
func axeSource(t *testing.T) string {
	t.Helper()
	path := os.Getenv("TROCO_AXE_JS")
	if path == "" {
		t.Skip("TROCO_AXE_JS is not set: the accessibility check needs axe-core (npm install axe-core, then TROCO_AXE_JS=…/node_modules/axe-core/axe.min.js)")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("TROCO_AXE_JS: %v", err)
	}
	return string(b)
}

type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []any `json:"target"`
	} `json:"nodes"`
}

// axeCheck runs axe-core on the current page and fails on any serious or critical violation.
func (c *chrome) axeCheck(src, page string) {
	c.t.Helper()
	var res []byte
	c.do("axe on "+page, chromedp.Evaluate(src, nil), chromedp.Evaluate(`axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations))`, &res,
		func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	var s string
	if err := json.Unmarshal(res, &s); err != nil {
		c.t.Fatalf("axe result: %v", err)
	}
	var vs []axeViolation
	if err := json.Unmarshal([]byte(s), &vs); err != nil {
		c.t.Fatalf("axe result: %v", err)
	}
	for _, v := range vs {
		if v.Impact == "serious" || v.Impact == "critical" {
			c.t.Errorf("%s: %s violation %s (%s) on %d element(s), first %v", page, v.Impact, v.ID, v.Help, len(v.Nodes), v.Nodes[0].Target)
		} else {
			c.t.Logf("%s: %s %s (%s)", page, v.Impact, v.ID, v.Help)
		}
	}
}

// Every dashboard page passes axe-core with no serious or critical violation, at desktop width.
func TestAccessibilityDashboard(t *testing.T) {
	src := axeSource(t)
	is := is.New(t)
	e := newEnv(t)
	c := newChrome(t)
	cust := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "ana@example.com", "name": "Ana"})
	pi := e.Do("POST", "/v1/payment-intents", e.Test, map[string]any{"amount": 5000, "currency": "brl", "payment_method_types": []string{"pix"}, "customer": cust.Str("id")})
	epID, _ := e.createEndpoint(e.Test, "https://example.com/hooks", "*")
	u, _ := e.newUser(e.Org.ID, "owner@example.com", domain.RoleOwner)
	is.NoErr(e.DB.Write(context.Background(), func(tx *db.Tx) error { return core.SetPassword(tx, u.ID, "a long password") }))
	// The header's organization switcher and the settings page's remove buttons are checked too.
	orgB, _ := e.NewOrg("Filial", false)
	e.withPassword(orgB.ID, "owner@example.com", domain.RoleViewer, "a long password")
	e.newUser(e.Org.ID, "dev@example.com", domain.RoleDeveloper)

	c.do("sign-in page", chromedp.Navigate(e.URL()+"/dashboard/signin"), chromedp.WaitVisible(tid("signin-form"), chromedp.ByQuery))
	c.axeCheck(src, "signin")
	c.do("sign in", chromedp.SendKeys("#email", "owner@example.com", chromedp.ByQuery), chromedp.SendKeys("#password", "a long password", chromedp.ByQuery),
		chromedp.Click(tid("signin-submit"), chromedp.ByQuery), chromedp.WaitVisible(tid("sandbox-banner"), chromedp.ByQuery))
	var logID string
	for range 100 {
		_ = e.DB.Read(context.Background(), func(tx *db.Tx) error {
			ls, _, err := tx.ListRequestLogs(domain.Scope{OrgID: e.Org.ID}, db.RequestLogFilter{}, db.ListParams{Limit: 1})
			if len(ls) > 0 {
				logID = ls[0].ID
			}
			return err
		})
		if logID != "" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	var keyID string
	is.NoErr(e.DB.Read(context.Background(), func(tx *db.Tx) error {
		k, err := tx.FindAPIKeyByHash(domain.HashToken(e.Test))
		if err == nil {
			keyID = k.ID
		}
		return err
	}))
	for _, p := range []string{"", "/api-keys/" + keyID, "/payments", "/payments/" + pi.Str("id"), "/customers", "/customers/" + cust.Str("id"), "/checkout-sessions", "/invoices",
		"/subscriptions", "/disputes", "/events", "/webhooks", "/webhooks/" + epID, "/api-keys", "/logs", "/logs/" + logID, "/settings"} {
		c.do("open "+p, chromedp.Navigate(e.URL()+"/dashboard/test"+p), chromedp.WaitVisible("main h1", chromedp.ByQuery))
		c.axeCheck(src, "/dashboard/test"+p)
	}
	c.do("account", chromedp.Navigate(e.URL()+"/dashboard/account"), chromedp.WaitVisible("main h1", chromedp.ByQuery))
	c.axeCheck(src, "account")
	c.do("live", chromedp.Navigate(e.URL()+"/dashboard/live"), chromedp.WaitVisible("main h1", chromedp.ByQuery))
	c.axeCheck(src, "live home")
}

// The hosted checkout page passes axe-core too (no serious or critical violation).
func TestAccessibilityHostedCheckout(t *testing.T) {
	src := axeSource(t)
	e := newEnv(t)
	c := newChrome(t)
	s := e.coSimple(e.Test, nil)
	c.do("open checkout", chromedp.Navigate(s.Str("url")), chromedp.WaitVisible(tid("pay-button"), chromedp.ByQuery))
	c.axeCheck(src, "hosted checkout")
}
