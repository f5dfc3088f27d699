package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/matryer/is"
)

// newChromium starts a headless Chromium with a fresh profile; it trusts the test servers'
// self-signed certificates.
func newChromium(t *testing.T) context.Context {
	t.Helper()
	c := newChrome(t) // shared launcher: skips without Chromium, cleans its profile after exit
	ctx, cancel := context.WithTimeout(c.ctx, 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// activationShot saves a full-page PNG of the hosted activation flow into screenshotDir.
func activationShot(t *testing.T, name string) chromedp.Action {
	dir := screenshotDir(t)
	return chromedp.ActionFunc(func(ctx context.Context) error {
		if dir == "" {
			return nil
		}
		var png []byte
		if err := chromedp.FullScreenshot(&png, 100).Do(ctx); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
	})
}

// TestActivationBrowser drives the whole hosted activation flow in headless Chromium: open the
// url, fill the five steps (with a validation error on the way), upload the document, submit,
// land on return_url; then reuse the link and see the expired page.
func TestActivationBrowser(t *testing.T) {
	ctx := newChromium(t)
	is := is.New(t)
	e := newEnv(t)
	p := newActPlatform(e, "Marketplace Exemplo")

	var mu sync.Mutex
	var returned []string
	ret := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/favicon.ico" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		returned = append(returned, r.URL.String())
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!DOCTYPE html><html lang="pt-BR"><title>Plataforma</title><h1 id="returned">De volta à plataforma</h1></html>`))
	}))
	defer ret.Close()

	r := e.Do("POST", "/v1/organizations", p.Test, map[string]any{
		"name": "Café do Largo Ltda", "document": "00.000.000/0001-91", "email": "financeiro@cafedolargo.com.br",
		"address": map[string]any{"line1": "Largo do Arouche", "number": "300", "neighborhood": "República", "city": "São Paulo", "state": "SP", "postal_code": "01219-010"},
	})
	is.Equal(r.Status, 200)
	org := r.Str("id")
	s := p.session(p.Test, org, "return_url", ret.URL+"/sellers/cafe?onboarding=done")
	is.Equal(s.Status, 200)
	url := s.Str("url")

	doc := filepath.Join(t.TempDir(), "contrato-social.pdf")
	is.NoErr(os.WriteFile(doc, samplePDF, 0o600))

	step := func(what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	q := chromedp.ByQuery
	var banner, legend, errSummary, expired, location string
	step("open the url", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(url), chromedp.WaitVisible(`[data-testid="activation-form"]`, q),
		chromedp.Text(`[data-testid="sandbox-banner"]`, &banner, q), chromedp.Text(`legend`, &legend, q), activationShot(t, "activation-business-desktop"))
	is.True(strings.Contains(banner, "MODO DE TESTE"))
	is.True(strings.Contains(legend, "Etapa 1 de 5"))

	// Step 1, with an invalid phone first: the server answers in Portuguese.
	step("invalid phone", chromedp.SetValue(`#f-phone`, "123", q), chromedp.Click(`[data-testid="activation-next"]`, q),
		chromedp.WaitVisible(`.error-summary`, q), chromedp.Text(`.error-summary`, &errSummary, q), activationShot(t, "activation-errors-desktop"))
	is.True(strings.Contains(errSummary, "Informe um telefone válido com DDD"))
	step("business",
		chromedp.SetValue(`#f-phone`, "(11) 3222-1010", q),
		chromedp.SetValue(`#f-trade_name`, "Café do Largo", q),
		chromedp.Click(`[data-testid="activation-next"]`, q),
		chromedp.WaitVisible(`#f-rep_name`, q),
	)
	step("representative",
		chromedp.SetValue(`#f-rep_name`, "Ana Paula Ferreira", q),
		chromedp.SetValue(`#f-rep_document`, "529.982.247-25", q),
		chromedp.SendKeys(`#f-rep_birth_date`, "09/07/1984", q),
		chromedp.Click(`[data-testid="activation-next"]`, q),
		chromedp.WaitVisible(`#f-postal_code`, q),
		activationShot(t, "activation-address-desktop"), // prefilled from the organization
	)
	step("address", chromedp.Click(`[data-testid="activation-next"]`, q), chromedp.WaitVisible(`#f-bank_code`, q))
	step("bank account",
		chromedp.SendKeys(`#f-bank_code`, "341 · Itaú Unibanco", q), // one of the list's options
		chromedp.SetValue(`#f-branch`, "0912", q),
		chromedp.SetValue(`#f-account_number`, "45678-9", q),
		chromedp.SetValue(`#f-account_type`, "checking", q),
		activationShot(t, "activation-bank-desktop"),
		chromedp.Click(`[data-testid="activation-next"]`, q),
		chromedp.WaitVisible(`#f-document_file`, q),
	)
	step("document and submit",
		chromedp.SetUploadFiles(`#f-document_file`, []string{doc}, q),
		chromedp.Click(`#f-accept_terms`, q),
		activationShot(t, "activation-documents-desktop"),
		chromedp.Click(`[data-testid="activation-submit"]`, q),
		chromedp.WaitVisible(`#returned`, q),
		chromedp.Location(&location),
	)
	is.Equal(location, ret.URL+"/sellers/cafe?onboarding=done") // return_url exactly as given
	mu.Lock()
	is.Equal(returned, []string{"/sellers/cafe?onboarding=done"})
	mu.Unlock()

	// The link again: the expired page, nothing changes.
	step("reuse the link", chromedp.Navigate(url), chromedp.WaitVisible(`[data-testid="activation-expired"]`, q),
		chromedp.Text(`h1`, &expired, q), activationShot(t, "activation-expired-desktop"))
	is.True(strings.Contains(expired, "Link expirado"))

	g := e.Do("GET", "/v1/activation-sessions/"+s.Str("id"), p.Test, nil)
	is.Equal(g.Str("status"), "submitted")
	o := e.org(p.Test, org)
	is.Equal(o.Str("activation_status"), "in_review")
	is.Equal(o.Str("phone"), "+551132221010")
	e.review()
	is.Equal(e.org(p.Test, org).Str("activation_status"), "active")

	// A phone-sized screen: the same form, one column, no horizontal scrolling.
	other := p.connect("Quitanda da Vila", "52998224725")
	s2 := p.session(p.Test, other)
	var width int
	step("phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile),
		chromedp.Navigate(s2.Str("url")), chromedp.WaitVisible(`[data-testid="activation-form"]`, q),
		chromedp.Evaluate(`document.documentElement.scrollWidth`, &width), activationShot(t, "activation-business-phone"),
		chromedp.Navigate(e.URL()+"/activation/sessions/"+s2.Str("id")+"?step=documents"), chromedp.WaitVisible(`[data-testid="activation-submit"]`, q),
		activationShot(t, "activation-documents-phone"),
		chromedp.Navigate(s2.Str("url")), chromedp.WaitVisible(`[data-testid="activation-expired"]`, q),
		activationShot(t, "activation-expired-phone"),
	)
	is.True(width <= 390)
}
