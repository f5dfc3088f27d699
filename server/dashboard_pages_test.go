package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"html"
	"image/png"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/pquerna/otp/totp"

	"troco/db"
	"troco/server/domain"
	"troco/server/pix"
)

var endpointIDRe = regexp.MustCompile(`/dashboard/test/webhooks/(we_[A-Za-z0-9]+)`)

func TestDashboardWebhooksCreateAndResend(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	rc := newReceiver(t, false)
	d := startWebhooks(e)
	dev := e.signedIn(e.Org.ID, "dev@example.com", domain.RoleDeveloper)

	// Same validation as the API: a bad URL is refused with its message, nothing created.
	st, body, _ := dev.post("/dashboard/test/webhooks", url.Values{"url": {"ftp://example.com"}, "enabled_events": {"*"}})
	is.Equal(st, http.StatusBadRequest) // refused, as the API refuses it
	is.True(strings.Contains(body, `class="error"`))
	is.Equal(len(e.Do("GET", "/v1/webhook-endpoints", e.Test, nil).Data()), 0)

	st, body, _ = dev.post("/dashboard/test/webhooks", url.Values{"url": {rc.URL()}, "enabled_events": {"customer.*"}, "description": {"<b>mine</b>"}})
	is.Equal(st, http.StatusOK)
	is.True(strings.Contains(body, "whsec_")) // the signing secret, shown once
	is.True(strings.Contains(body, "&lt;b&gt;mine&lt;/b&gt;"))
	eps := e.Do("GET", "/v1/webhook-endpoints", e.Test, nil).Data()
	is.Equal(len(eps), 1) // the same endpoint the API lists
	epID := eps[0]["id"].(string)

	e.createCustomer(e.Test)
	e.deliver(d)
	first := await(t, rc, "customer.created")
	_, body, _ = dev.get("/dashboard/test/webhooks/" + epID)
	is.True(strings.Contains(body, `data-testid="deliveries-table"`))
	is.True(strings.Contains(body, "customer.created"))

	// Resend from the dashboard: the same event, same webhook-id, delivered again.
	st, body, _ = dev.post("/dashboard/test/webhooks/"+epID+"/resend", url.Values{"event": {first.ID}})
	is.Equal(st, http.StatusOK)
	is.True(strings.Contains(body, `class="notice"`))
	e.deliver(d)
	again := await(t, rc, "resend")
	is.Equal(again.ID, first.ID)

	// From the event's page: resend to every subscribed endpoint.
	st, body, _ = dev.post("/dashboard/test/events/"+first.ID+"/resend", nil)
	is.Equal(st, http.StatusOK)
	is.True(strings.Contains(body, `class="notice"`))
	e.deliver(d)
	is.Equal(await(t, rc, "resend from the event").ID, first.ID)

	// A viewer reads the page but cannot resend; an unknown event is an error, nothing queued.
	viewer := e.signedIn(e.Org.ID, "viewer@example.com", domain.RoleViewer)
	st, body, _ = viewer.get("/dashboard/test/webhooks/" + epID)
	is.Equal(st, http.StatusOK)
	is.True(!strings.Contains(body, `data-testid="webhook-resend"`))
	st, _, _ = viewer.post("/dashboard/test/webhooks/"+epID+"/resend", url.Values{"event": {first.ID}})
	is.Equal(st, http.StatusForbidden)
	_, body, _ = dev.post("/dashboard/test/webhooks/"+epID+"/resend", url.Values{"event": {"evt_nope"}})
	is.True(strings.Contains(body, `class="error"`))
	st, _, _ = dev.post("/dashboard/live/webhooks/"+epID+"/resend", url.Values{"event": {first.ID}})
	is.Equal(st, http.StatusNotFound) // the test endpoint does not exist in live

	// The owner's audit trail shows who changed webhooks.
	owner := e.signedIn(e.Org.ID, "owner@example.com", domain.RoleOwner)
	_, body, _ = owner.get("/dashboard/test/api-keys")
	is.True(strings.Contains(body, "webhook_endpoint.created"))
	is.True(strings.Contains(body, "webhook_endpoint.resend"))
	is.True(strings.Contains(body, "dev@example.com"))
	// Admins do not see the audit trail; only owners.
	admin := e.signedIn(e.Org.ID, "admin@example.com", domain.RoleAdmin)
	_, body, _ = admin.get("/dashboard/test/api-keys")
	is.True(!strings.Contains(body, `data-testid="audit-table"`))
}

func TestDashboardHomeChartListsAndPaging(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	for i := 0; i < 3; i++ {
		pi := e.Do("POST", "/v1/payment-intents", e.Test, map[string]any{"amount": 10000, "currency": "brl", "payment_method_types": []string{"pix"}})
		is.Equal(pi.Status, 200)
		c := e.Do("POST", "/v1/payment-intents/"+pi.Str("id")+"/confirm", e.Test, map[string]any{"payment_method_type": "pix", "customer_email": "succeed_immediately@example.com"})
		is.Equal(c.Str("status"), "succeeded")
	}
	b := e.signedIn(e.Org.ID, "viewer@example.com", domain.RoleViewer)
	st, body, _ := b.get("/dashboard/test")
	is.Equal(st, http.StatusOK)
	is.True(strings.Contains(body, "<svg"))
	is.True(strings.Contains(body, "R$ 300,00"))          // PIX: three payments of R$ 100,00
	is.True(strings.Contains(body, "Pix: R$ 300,00 (3)")) // the chart's text alternative
	is.True(!strings.Contains(body, "<script"))           // no JavaScript needed

	// 30 customers: the list pages by cursor, 25 then 5.
	for i := 0; i < 30; i++ {
		is.Equal(e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "c@example.com"}).Status, 200)
	}
	_, body, _ = b.get("/dashboard/test/customers")
	is.Equal(strings.Count(body, `href="/dashboard/test/customers/cus_`), 25)
	next := regexp.MustCompile(`href="([^"]+)" rel="next"`).FindStringSubmatch(body)
	is.True(next != nil)
	_, body, _ = b.get(strings.ReplaceAll(next[1], "&amp;", "&"))
	is.Equal(strings.Count(body, `href="/dashboard/test/customers/cus_`), 5)
	is.True(strings.Contains(body, `rel="prev"`))
	st, _, _ = b.get("/dashboard/test/customers?after=cus_unknown")
	is.Equal(st, http.StatusNotFound)

	for _, p := range []string{"/dashboard/test/checkout-sessions", "/dashboard/test/invoices", "/dashboard/test/subscriptions", "/dashboard/test/events",
		"/dashboard/test/webhooks", "/dashboard/test/settings", "/dashboard/live", "/dashboard/test/payments?status=succeeded"} {
		st, _, _ := b.get(p)
		is.Equal(st, http.StatusOK)
	}
	_, body, _ = b.get("/dashboard/test/payments?status=succeeded")
	is.Equal(strings.Count(body, `href="/dashboard/test/payments/pi_`), 3)
	_, body, _ = b.get("/dashboard/test/payments?status=canceled")
	is.Equal(strings.Count(body, `href="/dashboard/test/payments/pi_`), 0)
	st, _, _ = b.get("/dashboard/test/nope")
	is.Equal(st, http.StatusNotFound)
}

func TestDashboardSettingsClockLanguageAndTOTP(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	owner := e.signedIn(e.Org.ID, "owner@example.com", domain.RoleOwner)
	_, body, _ := owner.post("/dashboard/test/settings", url.Values{"timezone": {"Mars/Olympus"}})
	is.True(strings.Contains(body, `class="error"`))
	_, body, _ = owner.post("/dashboard/test/settings", url.Values{"timezone": {"Asia/Tokyo"}, "primary_color": {"blue"}})
	is.True(strings.Contains(body, `class="error"`)) // the API's branding validation
	_, body, _ = owner.post("/dashboard/test/settings", url.Values{"timezone": {"Asia/Tokyo"}, "display_name": {"Loja <Ana>"}, "primary_color": {"#112233"}})
	is.True(strings.Contains(body, `value="Asia/Tokyo"`))
	is.True(strings.Contains(body, `value="Loja &lt;Ana&gt;"`))
	org := e.Do("GET", "/v1/organizations/"+e.Org.ID, e.Test, nil)
	is.Equal(org.Body["dashboard_settings"].(map[string]any)["timezone"], "Asia/Tokyo") // the API sees the same setting
	viewer := e.signedIn(e.Org.ID, "viewer@example.com", domain.RoleViewer)
	st, _, _ := viewer.post("/dashboard/test/settings", url.Values{"timezone": {"UTC"}})
	is.Equal(st, http.StatusForbidden)

	// The sandbox clock (the server allows time travel in tests).
	before := e.Clock.Now()
	_, body, _ = owner.post("/dashboard/test/settings/clock", url.Values{"advance": {"24h"}})
	is.True(strings.Contains(body, `class="notice"`))
	is.True(e.Clock.Now().Sub(before) >= 24*time.Hour)
	_, body, _ = owner.post("/dashboard/live/settings/clock", url.Values{"advance": {"24h"}})
	if !strings.Contains(body, `class="error"`) {
		t.Log(body)
	}
	is.True(strings.Contains(body, `class="error"`)) // never in live

	// English.
	_, body, _ = owner.post("/dashboard/account", url.Values{"action": {"language"}, "language": {"en"}})
	is.True(strings.Contains(body, ">Payments<"))
	_, body, _ = owner.get("/dashboard/test")
	is.True(strings.Contains(body, `lang="en"`))

	// TOTP: set up, enable with a code, then sign-in needs the code.
	_, body, _ = owner.post("/dashboard/account", url.Values{"action": {"password"}, "password": {"a long password"}})
	_, body, _ = owner.post("/dashboard/account", url.Values{"action": {"totp-start"}})
	m := regexp.MustCompile(`<dt>Secret</dt><dd><code>([A-Z2-7]+)</code>`).FindStringSubmatch(body)
	is.True(m != nil)
	secret := m[1]
	// The authenticator app scans a QR of the otpauth URL, made on the server as an inline PNG;
	// the URL stays as text for entering by hand.
	otpURL := html.UnescapeString(regexp.MustCompile(`<code>(otpauth://[^<]+)</code>`).FindStringSubmatch(body)[1])
	is.True(strings.Contains(otpURL, "secret="+secret))
	qm := regexp.MustCompile(`<img class="qr" src="data:image/png;base64,([A-Za-z0-9+/=]+)"`).FindStringSubmatch(body)
	is.True(qm != nil)
	qrPNG, err := base64.StdEncoding.DecodeString(qm[1])
	is.NoErr(err)
	want, err := pix.QRPNG(otpURL, 440) // 440 px, shown at 220 CSS px
	is.NoErr(err)
	is.True(bytes.Equal(qrPNG, want)) // the QR encodes exactly the otpauth URL shown
	qrImg, err := png.Decode(bytes.NewReader(qrPNG))
	is.NoErr(err)
	is.Equal(qrImg.Bounds().Dx(), 440)
	_, body, _ = owner.post("/dashboard/account", url.Values{"action": {"totp-enable"}, "code": {"000000"}})
	is.True(strings.Contains(body, "the code is wrong"))
	code, err := totp.GenerateCode(secret, time.Now())
	is.NoErr(err)
	_, body, _ = owner.post("/dashboard/account", url.Values{"action": {"totp-enable"}, "code": {code}})
	is.True(strings.Contains(body, `class="notice"`))
	var stored string
	_ = e.DB.Read(context.Background(), func(tx *db.Tx) error {
		us, _ := tx.FindUsersByEmail("owner@example.com")
		stored = us[0].TOTPSecret
		return nil
	})
	is.True(!strings.Contains(stored, secret)) // sealed, never in clear

	b := e.dashBrowser()
	b.get("/dashboard/signin")
	st, _, h := b.post("/dashboard/signin", url.Values{"email": {"owner@example.com"}, "password": {"a long password"}})
	is.Equal(st, http.StatusSeeOther)
	is.Equal(h.Get("Location"), "/dashboard/signin/totp")
	st, _, h = b.get("/dashboard/test/payments")
	is.Equal(h.Get("Location"), "/dashboard/signin/totp") // not signed in until the code
	b.get("/dashboard/signin/totp")
	st, _, _ = b.post("/dashboard/signin/totp", url.Values{"code": {"123456"}})
	is.Equal(st, http.StatusUnauthorized)
	// The code that enabled the factor is spent; the authenticator's next one opens the session.
	code, _ = totp.GenerateCode(secret, time.Now().Add(30*time.Second))
	st, _, h = b.post("/dashboard/signin/totp", url.Values{"code": {code}})
	is.Equal(st, http.StatusSeeOther)
	st, _, _ = b.get("/dashboard/test/payments")
	is.Equal(st, http.StatusOK)

	// A code opens one sign-in: the same code typed again in another browser (seen over the
	// shoulder, or phished along with the password) is refused like a wrong one.
	thief := e.dashBrowser()
	thief.get("/dashboard/signin")
	st, _, _ = thief.post("/dashboard/signin", url.Values{"email": {"owner@example.com"}, "password": {"a long password"}})
	is.Equal(st, http.StatusSeeOther)
	thief.get("/dashboard/signin/totp")
	st, _, _ = thief.post("/dashboard/signin/totp", url.Values{"code": {code}})
	is.Equal(st, http.StatusUnauthorized)
	st, _, h = thief.get("/dashboard/test/payments")
	is.Equal(h.Get("Location"), "/dashboard/signin/totp") // still not signed in
}

func TestDashboardOwnerAddsAPerson(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	owner := e.signedIn(e.Org.ID, "owner@example.com", domain.RoleOwner)
	admin := e.signedIn(e.Org.ID, "admin@example.com", domain.RoleAdmin)
	st, _, _ := admin.post("/dashboard/test/settings/people", url.Values{"email": {"x@example.com"}, "role": {"owner"}})
	is.Equal(st, http.StatusForbidden) // only owners add people
	_, body, _ := owner.post("/dashboard/test/settings/people", url.Values{"email": {"nova@example.com"}, "role": {"bogus"}})
	is.True(strings.Contains(body, "O papel deve ser"))
	_, body, _ = owner.post("/dashboard/test/settings/people", url.Values{"email": {"nova@example.com"}, "role": {"developer"}})
	m := regexp.MustCompile(`/dashboard/signin/link/([A-Za-z0-9_-]{43})`).FindStringSubmatch(body)
	is.True(m != nil)
	is.True(strings.Contains(body, "user.created")) // in the audit trail
	b := e.dashBrowser()
	st, _, _ = b.get("/dashboard/signin/link/" + m[1])
	is.Equal(st, http.StatusSeeOther)
	st, body, _ = b.get("/dashboard/test/logs")
	is.Equal(st, http.StatusOK) // a developer reads request logs
	st, _, _ = b.get("/dashboard/test/api-keys")
	is.Equal(st, http.StatusForbidden) // but does not manage keys
	_, body, _ = owner.post("/dashboard/test/settings/people", url.Values{"email": {"nova@example.com"}, "role": {"viewer"}})
	is.True(strings.Contains(body, "já pertence à organização"))
}

func TestDashboardDisputes(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	pi, _, dp := e.disputedPayment(e.Test, cardDisputeFraud, 10000)
	b := e.signedIn(e.Org.ID, "viewer@example.com", domain.RoleViewer)
	st, body, _ := b.get("/dashboard/test/disputes")
	is.Equal(st, http.StatusOK)
	is.True(strings.Contains(body, dp.Str("id")))
	_, body, _ = b.get("/dashboard/test/disputes?status=won")
	is.True(!strings.Contains(body, dp.Str("id")))
	st, body, _ = b.get("/dashboard/test/disputes/" + dp.Str("id"))
	is.Equal(st, http.StatusOK)
	is.True(strings.Contains(body, "/dashboard/test/payments/"+pi))
	is.True(strings.Contains(body, "charge.dispute.created")) // its events
	st, _, _ = b.get("/dashboard/live/disputes/" + dp.Str("id"))
	is.Equal(st, http.StatusNotFound)
}

// A card payment counts in the home chart's card bar: the chart's methods are the API's
// payment_method_type values, so there is no empty "card" bar beside a "credit_card" one.
func TestDashboardHomeChartCountsCardPayments(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	pi := e.Do("POST", "/v1/payment-intents", e.Test, map[string]any{"amount": 10000, "currency": "brl", "payment_method_types": []string{"credit_card"}})
	is.Equal(pi.Status, 200)
	c := e.payConfirm(e.Test, pi.Str("id"), map[string]any{"payment_method_type": "credit_card", "card": payCard("4242424242424242")})
	is.Equal(c.Str("status"), "succeeded")
	b := e.signedIn(e.Org.ID, "viewer@example.com", domain.RoleViewer)
	st, body, _ := b.get("/dashboard/test")
	is.Equal(st, http.StatusOK)
	alt := regexp.MustCompile(`Cartão de crédito: R\$ 100,00 \(1\); Pix: R\$ 0,00 \(0\); Boleto: R\$ 0,00 \(0\)`)
	is.True(alt.MatchString(body))                             // one bar per method, the card payment in it
	is.True(!strings.Contains(body, "; card:"))                // no second, empty card bar
	is.True(!strings.Contains(body, "card: R$ 0,00 (0); pix")) // nor first
}

// TestDashboardListUnknownStatusFilter: a list page's status filter with a value that is not one
// of the list's statuses is refused with a message (400, like the API's list), never answered
// with the unfiltered list; the message names the value and the statuses there are, escaped.
func TestDashboardListUnknownStatusFilter(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "ana@example.com")
	pi := e.payIntent(e.Test, 1000, map[string]any{"customer": cus})
	inv := e.invCreate(map[string]any{"customer": cus, "lines": []any{map[string]any{"amount": 5000, "description": "Consultoria"}}})
	b := e.signedIn(e.Org.ID, "viewer@example.com", domain.RoleViewer)
	for _, c := range []struct{ list, valid, known, row string }{
		{"payments", "requires_payment_method", "succeeded", pi.Str("id")},
		{"checkout-sessions", "open", "expired", ""},
		{"invoices", "draft", "uncollectible", inv.Str("id")},
		{"subscriptions", "active", "past_due", ""},
		{"disputes", "won", "needs_response", ""},
	} {
		st, body, _ := b.get("/dashboard/test/" + c.list + "?status=" + c.valid)
		is.Equal(st, http.StatusOK) // a known status filters
		is.True(!strings.Contains(body, `role="alert"`))
		if c.row != "" {
			is.True(strings.Contains(body, c.row)) // the matching object is listed
		}
		st, body, _ = b.get("/dashboard/test/" + c.list + "?status=bogus")
		is.Equal(st, http.StatusBadRequest)                                                                                                       // refused, like the API
		is.True(strings.Contains(body, `role="alert"`))                                                                                           // an error message
		is.True(strings.Contains(body, "Status desconhecido &#34;bogus&#34;") || strings.Contains(body, "Status desconhecido &quot;bogus&quot;")) // naming the value
		is.True(strings.Contains(body, c.known))                                                                                                  // and the statuses there are
		is.True(strings.Contains(body, `data-testid="status-filter"`) || strings.Contains(body, `data-testid="payments-filter"`))                 // the filter stays
		if c.row != "" {
			is.True(!strings.Contains(body, c.row)) // nothing listed under a filter that does not exist
		}
		st, body, _ = b.get("/dashboard/test/" + c.list + "?status=%3Cscript%3Ex")
		is.Equal(st, http.StatusBadRequest)
		is.True(!strings.Contains(body, "<script>x")) // the value is escaped
	}
}
