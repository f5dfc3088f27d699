package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/matryer/is"
)

// shootEmail saves the current page at desktop and phone widths as email-<name>-<width>.png
// (see screenshotDir).
func (c *chrome) shootEmail(name string) {
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
		if err := os.WriteFile(filepath.Join(dir, "email-"+name+"-"+v.suffix+".png"), png, 0o644); err != nil {
			c.t.Logf("screenshot %s not saved: %v", name, err)
		}
	}
	c.do("restore viewport", chromedp.EmulateViewport(1280, 900))
}

// TestBrowserEmails opens the messages a customer receives, as a mail client shows their HTML
// part, and the sandbox mailbox page, in a real Chromium.
func TestBrowserEmails(t *testing.T) {
	is := is.New(t)
	br := newChrome(t)
	e := newEnv(t)
	is.Equal(e.Do("POST", "/v1/organizations/"+e.Org.ID, e.Test, map[string]any{"name": "Padaria Pão Quente",
		"checkout_settings": map[string]any{"branding": map[string]any{"primary_color": "#B45309"}}}).Status, 200)

	// A receipt in English, for a customer in New York.
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "ana@example.com", "name": "Ana Souza",
		"preferred_locales": []string{"en"}, "timezone": "America/New_York"})
	pi := e.payIntent(e.Test, 4590, map[string]any{"customer": cus.Str("id"), "description": "Breakfast basket"})
	is.Equal(e.payConfirm(e.Test, pi.Str("id"), map[string]any{"payment_method_type": "credit_card", "card": payCard("4242424242424242"), "installments": 3}).Status, 200)
	// A boleto in Portuguese (no preference: the default).
	bol := e.payIntent(e.Test, 25000, map[string]any{"payment_method_types": []string{"boleto"}, "description": "Encomenda de bolos"})
	is.Equal(e.payConfirm(e.Test, bol.Str("id"), boletoBuyer("joao@example.com")).Status, 200)

	receipt := e.mailbox(e.Test, "kind=receipt")[0]["id"].(string)
	boletoMail := e.mailbox(e.Test, "kind=boleto")[0]["id"].(string)
	link := e.Do("GET", "/v1/test-helpers/mailbox", e.Test, nil).Str("url")

	br.do("open the receipt", chromedp.Navigate(link+"&email="+receipt+"&part=html"), chromedp.WaitVisible(tid("email-heading"), chromedp.ByQuery))
	is.Equal(br.text("email-heading"), "Payment received")
	is.Equal(br.text("email-org"), "Padaria Pão Quente")
	is.True(br.has("sandbox-banner"))
	br.shootEmail("receipt-en")

	br.do("open the boleto", chromedp.Navigate(link+"&email="+boletoMail+"&part=html"), chromedp.WaitVisible(tid("email-heading"), chromedp.ByQuery))
	is.Equal(br.text("email-heading"), "Seu boleto está pronto")
	is.True(len(strings.ReplaceAll(br.text("email-code"), " ", "")) >= 47) // the digitable line
	br.shootEmail("boleto-pt-br")

	br.do("open the mailbox", chromedp.Navigate(link+"&email="+boletoMail), chromedp.WaitVisible(tid("mailbox-list"), chromedp.ByQuery))
	is.True(br.has("sandbox-banner"))
	is.True(br.has("mailbox-html"))
	is.True(strings.Contains(br.text("mailbox-list"), "joao@example.com"))
	br.shootEmail("mailbox")
}
