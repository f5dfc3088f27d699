package server_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/matryer/is"

	"troco/server/boleto"
	"troco/server/pix"
)

// Browser tests of the hosted checkout: a real headless Chromium pays by card, by PIX with the
// yellow bar's "simulate payment" and by boleto. They skip without a Chromium binary
// ($CHROME_PATH or /usr/bin/chromium); CI installs one. They also take every screen at desktop
// (1280) and phone (390) widths; see screenshotDir for where the PNGs go.

// screenshotDir is where browser tests write their PNGs: docs/screenshots/ when
// TROCO_SCREENSHOTS=1 (run that way to refresh the committed figures, then commit them once),
// "" (take none) when TROCO_SCREENSHOTS=0, and otherwise a temporary directory, so an ordinary
// `go test` exercises every screenshot without rewriting tracked files.
func screenshotDir(t *testing.T) string {
	t.Helper()
	switch os.Getenv("TROCO_SCREENSHOTS") {
	case "0":
		return ""
	case "1":
		dir := filepath.Join("..", "docs", "screenshots")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Logf("screenshots not saved: %v", err)
			return ""
		}
		return dir
	}
	screenshotTmp.Do(func() { screenshotTmp.dir, _ = os.MkdirTemp("", "troco-screenshots-") })
	return screenshotTmp.dir
}

var screenshotTmp struct {
	sync.Once
	dir string
}

// chromePath returns the Chromium binary, or skips the test.
func chromePath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("CHROME_PATH"), "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium binary: set CHROME_PATH or install chromium (apt-get install -y chromium) to run the browser tests")
	return ""
}

// chrome is one headless browser tab for a test.
type chrome struct {
	t   *testing.T
	ctx context.Context
}

func newChrome(t *testing.T) *chrome {
	path := chromePath(t)
	// A fresh profile per test, removed after the browser exits (Chromium's helpers may still
	// be closing files, so this is not t.TempDir, whose cleanup fails on a busy directory).
	profile, err := os.MkdirTemp("", "troco-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.IgnoreCertErrors, chromedp.UserDataDir(profile),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("lang", "pt-BR"), chromedp.Flag("accept-lang", "pt-BR,pt;q=0.9"),
		chromedp.WindowSize(1280, 900),
		// Chromium can take longer than chromedp's 20 s to print its DevTools address on a loaded
		// CI machine (it did once, on the PostgreSQL pass); a start is not what these tests time.
		chromedp.WSURLReadTimeout(90 * time.Second),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
		for range 20 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	if err := chromedp.Run(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return &chrome{t: t, ctx: ctx}
}

// do runs steps with a time limit.
func (c *chrome) do(what string, steps ...chromedp.Action) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, steps...); err != nil {
		var html, loc string
		dctx, dcancel := context.WithTimeout(c.ctx, 5*time.Second)
		defer dcancel()
		_ = chromedp.Run(dctx, chromedp.Location(&loc), chromedp.OuterHTML("html", &html, chromedp.ByQuery))
		if len(html) > 3000 {
			html = html[:3000] + "…"
		}
		c.t.Fatalf("%s: %v (at %s)\n%s", what, err, loc, html)
	}
}

// text returns the visible text of the element with data-testid id.
func (c *chrome) text(id string) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx, 20*time.Second)
	defer cancel()
	var v string
	if err := chromedp.Run(ctx, chromedp.Text(`[data-testid="`+id+`"]`, &v, chromedp.ByQuery)); err != nil {
		c.t.Fatalf("text of %s: %v", id, err)
	}
	return strings.TrimSpace(v)
}

// has reports whether an element with data-testid id exists.
func (c *chrome) has(id string) bool {
	c.t.Helper()
	var v bool
	if err := chromedp.Run(c.ctx, chromedp.Evaluate(`document.querySelector('[data-testid="`+id+`"]') !== null`, &v)); err != nil {
		c.t.Fatalf("query %s: %v", id, err)
	}
	return v
}

// shoot saves the current page at desktop and phone widths into screenshotDir.
func (c *chrome) shoot(name string) {
	c.t.Helper()
	dir := screenshotDir(c.t)
	if dir == "" {
		return
	}
	for _, v := range []struct {
		suffix        string
		width, height int64
		mobile        bool
	}{{"desktop", 1280, 900, false}, {"phone", 390, 844, true}} {
		opts := []chromedp.EmulateViewportOption{}
		if v.mobile {
			opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateScale(2))
		}
		png, err := fullScreenshot(c.ctx, v.width, v.height, opts)
		if err != nil {
			c.t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, "checkout-"+name+"-"+v.suffix+".png"), png, 0o644); err != nil {
			c.t.Logf("screenshot %s not saved: %v", name, err)
		}
	}
	c.do("restore viewport", chromedp.EmulateViewport(1280, 900))
}

// tid selects the element with data-testid id.
func tid(id string) string { return `[data-testid="` + id + `"]` }

// sel is a CSS selector (chromedp.ByQuery).
func sel(s string) string { return s }

func TestBrowserCheckoutCard(t *testing.T) {
	is := is.New(t)
	br := newChrome(t)
	e := newEnv(t)
	s := e.coSimple(e.Test, map[string]any{"customer_email": "ana@example.com"})
	br.do("open checkout", chromedp.Navigate(s.Str("url")), chromedp.WaitVisible(tid("pay-button"), chromedp.ByQuery))
	is.True(br.has("sandbox-banner")) // test mode: the yellow bar
	is.Equal(br.text("pay-button"), "Pagar R$ 100,00")
	br.shoot("card")

	// A declined card: a clear Portuguese message, the session still open.
	br.do("decline",
		chromedp.SendKeys(sel("#name"), "Ana Souza", chromedp.ByQuery),
		chromedp.SendKeys(sel("#card-number"), "4000000000009995", chromedp.ByQuery),
		chromedp.SendKeys(sel("#card-exp"), "1230", chromedp.ByQuery),
		chromedp.SendKeys(sel("#card-cvc"), "123", chromedp.ByQuery),
		chromedp.SendKeys(sel("#card-name"), "ANA SOUZA", chromedp.ByQuery),
		chromedp.Click(tid("pay-button"), chromedp.ByQuery),
		chromedp.WaitVisible(tid("error-message"), chromedp.ByQuery),
	)
	is.True(strings.Contains(br.text("error-message"), "Saldo ou limite insuficiente"))
	br.shoot("declined")

	// Brand detection and formatting as the buyer types, then instalments and payment.
	br.do("type card",
		chromedp.SendKeys(sel("#card-number"), "4242424242424242", chromedp.ByQuery),
		chromedp.SendKeys(sel("#card-exp"), "1230", chromedp.ByQuery),
		chromedp.SendKeys(sel("#card-cvc"), "123", chromedp.ByQuery),
		chromedp.WaitVisible(tid("card-brand"), chromedp.ByQuery),
	)
	is.Equal(strings.ToLower(br.text("card-brand")), "visa")
	var number string
	is.NoErr(chromedp.Run(br.ctx, chromedp.Value("#card-number", &number, chromedp.ByQuery)))
	is.Equal(number, "4242 4242 4242 4242")
	br.do("pay",
		chromedp.SetValue(sel("#installments"), "3", chromedp.ByQuery),
		chromedp.Click(tid("pay-button"), chromedp.ByQuery),
		chromedp.WaitVisible(tid("success"), chromedp.ByQuery),
	)
	br.shoot("success")
	g := e.Do("GET", "/v1/checkout-sessions/"+s.Str("id"), e.Test, nil)
	is.Equal(g.Body["payment_status"], "paid")
	is.Equal(dig(g.Body, "payment_data.credit_card.installments"), float64(3))
}

func TestBrowserCheckoutPixSimulated(t *testing.T) {
	is := is.New(t)
	br := newChrome(t)
	e := newEnv(t)
	s := e.coSimple(e.Test, nil)
	br.do("choose pix",
		chromedp.Navigate(s.Str("url")),
		chromedp.WaitVisible(tid("pay-button"), chromedp.ByQuery),
		chromedp.Click(sel(`label[for="method-pix"]`), chromedp.ByQuery),
		chromedp.SendKeys(sel("#email"), "ana@example.com", chromedp.ByQuery),
		chromedp.SendKeys(sel("#name"), "Ana Souza", chromedp.ByQuery),
		chromedp.Click(tid("pay-button"), chromedp.ByQuery),
		chromedp.WaitVisible(tid("pix-code"), chromedp.ByQuery),
	)
	is.NoErr(pix.Verify(br.text("pix-code"))) // a valid BR Code
	is.True(br.has("simulate-payment"))       // the bar offers the simulations while PIX waits
	is.True(br.has("simulate-expiration"))
	is.True(strings.Contains(br.text("pix-countdown"), ":"))
	br.shoot("pix")
	br.do("simulate payment", chromedp.Click(tid("simulate-payment"), chromedp.ByQuery), chromedp.WaitVisible(tid("success"), chromedp.ByQuery))
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+s.Str("id"), e.Test, nil).Body["payment_status"], "paid")
	is.Equal(len(e.coEvents(e.Test, "checkout.session.async.payment.succeeded", s.Str("id"))), 1)
}

func TestBrowserCheckoutBoleto(t *testing.T) {
	is := is.New(t)
	br := newChrome(t)
	e := newEnv(t)
	s := e.coSimple(e.Test, map[string]any{"cancel_url": "https://loja.example/carrinho"})
	br.do("choose boleto",
		chromedp.Navigate(s.Str("url")),
		chromedp.WaitVisible(tid("pay-button"), chromedp.ByQuery),
		chromedp.Click(sel(`label[for="method-boleto"]`), chromedp.ByQuery),
		chromedp.WaitVisible(sel("#postal-code"), chromedp.ByQuery),
	)
	br.shoot("boleto-form")
	br.do("fill boleto",
		chromedp.SendKeys(sel("#email"), "bia@example.com", chromedp.ByQuery),
		chromedp.SendKeys(sel("#name"), "Bia Lima", chromedp.ByQuery),
		chromedp.SendKeys(sel("#document"), "529.982.247-25", chromedp.ByQuery),
		chromedp.SendKeys(sel("#postal-code"), "01310-100", chromedp.ByQuery),
		chromedp.SendKeys(sel("#state"), "SP", chromedp.ByQuery),
		chromedp.SendKeys(sel("#line1"), "Avenida Paulista", chromedp.ByQuery),
		chromedp.SendKeys(sel("#number"), "1000", chromedp.ByQuery),
		chromedp.SendKeys(sel("#neighborhood"), "Bela Vista", chromedp.ByQuery),
		chromedp.SendKeys(sel("#city"), "São Paulo", chromedp.ByQuery),
		chromedp.Click(tid("pay-button"), chromedp.ByQuery),
		chromedp.WaitVisible(tid("boleto-line"), chromedp.ByQuery),
	)
	line := strings.NewReplacer(".", "", " ", "").Replace(br.text("boleto-line"))
	is.NoErr(boleto.ValidateLine(line)) // a linha digitável with valid check digits
	is.True(br.has("simulate-payment"))
	// At phone width the digitable line wraps only between its groups, as on the printed boleto.
	var groupsWhole bool
	br.do("phone layout", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Sleep(100*time.Millisecond),
		chromedp.Evaluate(`(() => { const el = document.querySelector('[data-testid="boleto-line"]'); const t = el.textContent.trim();
			if (t.split(/\s+/).length !== 5) return false;
			const r = document.createRange(); let tops = [];
			for (const node of [...el.querySelectorAll('*'), el].flatMap(n => [...n.childNodes]).filter(n => n.nodeType === 3)) {
				let i = 0;
				for (const w of node.textContent.split(' ')) {
					if (w) { r.setStart(node, i); r.setEnd(node, i + w.length); const rects = [...r.getClientRects()]; if (new Set(rects.map(x => Math.round(x.top))).size > 1) return false; }
					i += w.length + 1;
				}
			}
			return true; })()`, &groupsWhole),
		chromedp.EmulateViewport(1280, 900))
	is.True(groupsWhole) // no group of the line is split across two lines
	br.shoot("boleto")
	print := "/checkout/" + s.Str("id") + "/boleto?secret=" + s.Str("client_secret")
	br.do("print view", chromedp.Navigate(e.URL()+print), chromedp.WaitVisible(tid("boleto-print-view"), chromedp.ByQuery))
	br.shoot("boleto-print")
	br.do("simulate expiration",
		chromedp.Navigate(s.Str("url")),
		chromedp.WaitVisible(tid("simulate-expiration"), chromedp.ByQuery),
		chromedp.Click(tid("simulate-expiration"), chromedp.ByQuery),
		chromedp.WaitVisible(tid("page-failed"), chromedp.ByQuery),
	)
	br.shoot("failed")
	g := e.Do("GET", "/v1/checkout-sessions/"+s.Str("id"), e.Test, nil)
	is.Equal(g.Body["payment_status"], "unpaid")
	is.Equal(len(e.coEvents(e.Test, "checkout.session.async.payment.failed", s.Str("id"))), 1)
}

func TestBrowserCheckoutLiveAndOtherScreens(t *testing.T) {
	is := is.New(t)
	br := newChrome(t)
	e := newEnv(t)
	e.setActivation("active")
	live := e.coSession(e.Live, map[string]any{"line_items": []any{map[string]any{"price": e.coPrice(e.Live, "Camiseta", 10000, nil)}}})
	br.do("live page", chromedp.Navigate(live.Str("url")), chromedp.WaitVisible(tid("pay-button"), chromedp.ByQuery))
	is.True(!br.has("sandbox-banner")) // live mode: no yellow bar
	br.shoot("live")

	// English, subscription with a trial, the booking template and a seller's colours.
	monthly := e.coPrice(e.Test, "Plano Pro", 4990, map[string]any{"interval": "month", "trial_period_days": 14})
	sub := e.coSession(e.Test, map[string]any{"line_items": []any{map[string]any{"price": monthly}}, "payment_method_collection": "if_required",
		"branding": map[string]any{"display_name": "Estúdio Azul", "primary_color": "#1D4ED8", "border_style": "pill"}})
	br.do("english subscription", chromedp.Navigate(sub.Str("url")+"&lang=en"), chromedp.WaitVisible(tid("pay-button"), chromedp.ByQuery))
	is.Equal(br.text("pay-button"), "Subscribe")
	br.shoot("subscription-en")

	booking := e.coSimple(e.Test, map[string]any{"template": "booking", "submit_type": "book"})
	br.do("booking", chromedp.Navigate(booking.Str("url")), chromedp.WaitVisible(tid("pay-button"), chromedp.ByQuery))
	is.Equal(br.text("pay-button"), "Reservar R$ 100,00")
	br.shoot("booking")

	x := e.coSimple(e.Test, nil)
	e.Do("POST", "/v1/checkout-sessions/"+x.Str("id")+"/expire", e.Test, nil)
	br.do("expired", chromedp.Navigate(x.Str("url")), chromedp.WaitVisible(tid("page-expired"), chromedp.ByQuery))
	br.shoot("expired")

	c := e.coSimple(e.Test, nil)
	br.do("canceled", chromedp.Navigate(e.URL()+"/checkout/"+c.Str("id")+"/canceled?secret="+c.Str("client_secret")), chromedp.WaitVisible(tid("page-canceled"), chromedp.ByQuery))
	br.shoot("canceled")

	l := e.Do("POST", "/v1/payment-links", e.Test, map[string]any{"line_items": []any{map[string]any{"price": e.coPrice(e.Test, "Ingresso", 5000, nil)}}})
	e.Do("POST", "/v1/payment-links/"+l.Str("id"), e.Test, map[string]any{"active": false})
	br.do("unavailable link", chromedp.Navigate(l.Str("url")), chromedp.WaitVisible(tid("page-unavailable"), chromedp.ByQuery))
	br.shoot("link-unavailable")
}

// TestBrowserCheckoutBoletoHibrido: the boleto page also shows the PIX QR and code of the same
// charge; the sandbox bar's "Pagar PIX" settles it, recorded as paid by PIX, and the printed
// boleto carries the QR too.
func TestBrowserCheckoutBoletoHibrido(t *testing.T) {
	is := is.New(t)
	br := newChrome(t)
	e := newEnv(t)
	s := e.coSimple(e.Test, nil)
	br.do("choose and fill boleto",
		chromedp.Navigate(s.Str("url")),
		chromedp.WaitVisible(tid("pay-button"), chromedp.ByQuery),
		chromedp.Click(sel(`label[for="method-boleto"]`), chromedp.ByQuery),
		chromedp.WaitVisible(sel("#postal-code"), chromedp.ByQuery),
		chromedp.SendKeys(sel("#email"), "bia@example.com", chromedp.ByQuery),
		chromedp.SendKeys(sel("#name"), "Bia Lima", chromedp.ByQuery),
		chromedp.SendKeys(sel("#document"), "529.982.247-25", chromedp.ByQuery),
		chromedp.SendKeys(sel("#postal-code"), "01310-100", chromedp.ByQuery),
		chromedp.SendKeys(sel("#state"), "SP", chromedp.ByQuery),
		chromedp.SendKeys(sel("#line1"), "Avenida Paulista", chromedp.ByQuery),
		chromedp.SendKeys(sel("#number"), "1000", chromedp.ByQuery),
		chromedp.SendKeys(sel("#neighborhood"), "Bela Vista", chromedp.ByQuery),
		chromedp.SendKeys(sel("#city"), "São Paulo", chromedp.ByQuery),
		chromedp.Click(tid("pay-button"), chromedp.ByQuery),
		chromedp.WaitVisible(tid("boleto-pix-qr"), chromedp.ByQuery),
	)
	is.NoErr(pix.Verify(br.text("pix-code"))) // the PIX of the same charge, beside the barcode
	is.True(br.has("simulate-payment"))       // "Pagar boleto"
	is.True(br.has("simulate-payment-pix"))   // "Pagar PIX"
	br.shoot("boleto-hibrido")
	print := "/checkout/" + s.Str("id") + "/boleto?secret=" + s.Str("client_secret")
	br.do("print view", chromedp.Navigate(e.URL()+print), chromedp.WaitVisible(tid("boleto-pix-qr"), chromedp.ByQuery))
	br.shoot("boleto-hibrido-print")
	br.do("pay by PIX",
		chromedp.Navigate(s.Str("url")),
		chromedp.WaitVisible(tid("simulate-payment-pix"), chromedp.ByQuery),
		chromedp.Click(tid("simulate-payment-pix"), chromedp.ByQuery),
		chromedp.WaitVisible(tid("success"), chromedp.ByQuery),
	)
	g := e.Do("GET", "/v1/checkout-sessions/"+s.Str("id"), e.Test, nil)
	is.Equal(g.Body["payment_status"], "paid")
	pi := e.Do("GET", "/v1/payment-intents/"+g.Str("payment_intent"), e.Test, nil)
	ch := e.Do("GET", "/v1/charges/"+pi.Str("latest_charge"), e.Test, nil)
	is.Equal(digStr(ch.Body, "payment_method_details.boleto.paid_with"), "pix")
}

// TestBrowserPixAuthorization: the hosted Pix Automático page shows who charges, how much at
// most and how often, the QR, and the sandbox bar's approve button approves it.
func TestBrowserPixAuthorization(t *testing.T) {
	is := is.New(t)
	br := newChrome(t)
	e := newEnv(t)
	cus := e.pixAuthCustomer(t, e.Test, "bia@example.com")
	r := e.Do("POST", "/v1/pix-authorizations", e.Test, map[string]any{"customer": cus, "max_amount": 9990, "interval": "month", "description": "Academia — plano mensal"})
	is.Equal(r.Status, 200)
	br.do("open", chromedp.Navigate(r.Str("url")), chromedp.WaitVisible(tid("pix-qr"), chromedp.ByQuery))
	is.Equal(br.text("pixauth-max-amount"), "R$ 99,90")
	br.shoot("pix-authorization")
	br.do("approve", chromedp.Click(tid("simulate-approve"), chromedp.ByQuery), chromedp.WaitNotPresent(tid("simulate-approve"), chromedp.ByQuery))
	is.True(strings.Contains(br.text("pixauth-status"), "aprovada"))
	is.Equal(e.Do("GET", "/v1/pix-authorizations/"+r.Str("id"), e.Test, nil).Str("status"), "approved")
}

// TestBrowserPixAuthorizationEnglish: for a customer whose preferred_locales start with en the
// authorization page is in English (its sandbox buttons too, and after answering); ?lang=
// switches it back to Portuguese.
func TestBrowserPixAuthorizationEnglish(t *testing.T) {
	is := is.New(t)
	br := newChrome(t)
	e := newEnv(t)
	c := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "joe@example.com", "name": "Joe Smith", "preferred_locales": []string{"en-US", "pt-BR"}})
	is.Equal(c.Status, 200)
	r := e.Do("POST", "/v1/pix-authorizations", e.Test, map[string]any{"customer": c.Str("id"), "max_amount": 9990, "interval": "month",
		"start_date": "2026-12-15", "end_date": "2027-12-15"})
	is.Equal(r.Status, 200)
	br.do("open", chromedp.Navigate(r.Str("url")), chromedp.WaitVisible(tid("pix-qr"), chromedp.ByQuery))
	var lang, body string
	br.do("read", chromedp.AttributeValue("html", "lang", &lang, nil, chromedp.ByQuery), chromedp.Text("body", &body, chromedp.ByQuery))
	is.Equal(lang, "en")
	for _, want := range []string{"Authorize Pix Automático", "Maximum per charge", "monthly", "Dec 15, 2026", "Dec 15, 2027", "Approve authorization", "Waiting for your authorization."} {
		is.True(strings.Contains(body, want)) // English text
	}
	is.True(!strings.Contains(body, "Aprovar"))
	br.shoot("pix-authorization-en")
	br.do("approve", chromedp.Click(tid("simulate-approve"), chromedp.ByQuery), chromedp.WaitNotPresent(tid("simulate-approve"), chromedp.ByQuery))
	is.Equal(br.text("pixauth-status"), "Authorization approved: the charges will be made automatically.")
	// The language switch: Portuguese on request.
	br.do("switch", chromedp.Click(tid("lang-switch"), chromedp.ByQuery), chromedp.WaitVisible(tid("pixauth-status"), chromedp.ByQuery))
	is.True(strings.Contains(br.text("pixauth-status"), "aprovada"))
}

// fullScreenshot takes a full-page screenshot at the given viewport. A page still being laid out
// right after a navigation (a loaded machine) can refuse one ("0 width", "not attached to an
// active page"): it waits for the body and tries up to three times.
func fullScreenshot(parent context.Context, width, height int64, opts []chromedp.EmulateViewportOption) ([]byte, error) {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		ctx, cancel := context.WithTimeout(parent, 20*time.Second)
		var png []byte
		err = chromedp.Run(ctx, chromedp.WaitReady("body"), chromedp.EmulateViewport(width, height, opts...), chromedp.Sleep(150*time.Millisecond), chromedp.FullScreenshot(&png, 100))
		cancel()
		if err == nil {
			return png, nil
		}
		time.Sleep(300 * time.Millisecond)
	}
	return nil, err
}
