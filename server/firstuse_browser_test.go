package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/matryer/is"

	"troco/server/boleto"
)

// shootAs saves the current page as <name>-desktop.png, <name>-phone.png and, with print, as
// <name>-print.png (A4 width, print media) into screenshotDir.
func (c *chrome) shootAs(name string, print bool) {
	c.t.Helper()
	dir := screenshotDir(c.t)
	if dir == "" {
		return
	}
	type view struct {
		suffix        string
		width, height int64
		mobile, print bool
	}
	views := []view{{"desktop", 1280, 900, false, false}, {"phone", 390, 844, true, false}}
	if print {
		views = append(views, view{"print", 794, 1123, false, true})
	}
	for _, v := range views {
		opts := []chromedp.EmulateViewportOption{}
		if v.mobile {
			opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateScale(2))
		}
		media := ""
		if v.print {
			media = "print"
		}
		ctx, cancel := context.WithTimeout(c.ctx, 20*time.Second)
		var png []byte
		err := chromedp.Run(ctx, emulation.SetEmulatedMedia().WithMedia(media), chromedp.EmulateViewport(v.width, v.height, opts...),
			chromedp.Sleep(150*time.Millisecond), chromedp.FullScreenshot(&png, 100))
		cancel()
		if err != nil {
			c.t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+"-"+v.suffix+".png"), png, 0o644); err != nil {
			c.t.Logf("screenshot %s not saved: %v", name, err)
		}
	}
	c.do("restore viewport", emulation.SetEmulatedMedia().WithMedia(""), chromedp.EmulateViewport(1280, 900))
}

// The printable boleto reads like a bank's: header with bank code-DV and the digitable line,
// beneficiary with CNPJ, payer with formatted CPF and address, nosso número, document number,
// instructions, both parts; at phone width the digitable line wraps only between its groups and
// nothing overflows.
func TestBrowserBoletoDocument(t *testing.T) {
	is := is.New(t)
	br := newChrome(t)
	e := newEnv(t)
	u := e.Do("POST", "/v1/organizations/"+e.Org.ID, e.Test, map[string]any{"display_name": "Loja da Ana", "document": "11.222.333/0001-81",
		"address": map[string]any{"line1": "Rua Augusta", "number": "500", "neighborhood": "Consolação", "city": "São Paulo", "state": "SP", "postal_code": "01304-000", "country": "BR"}})
	is.Equal(u.Status, 200)
	pi := e.Do("POST", "/v1/payment-intents", e.Test, map[string]any{"amount": 15990, "currency": "brl", "description": "Pedido 1042: 2 camisetas"})
	c := e.Do("POST", "/v1/payment-intents/"+pi.Str("id")+"/confirm", e.Test, coBoleto("bia@example.com"))
	is.Equal(c.Status, 200)
	url := digStr(c.Body, "next_action.boleto.url")
	barcode := digStr(c.Body, "next_action.boleto.barcode")

	br.do("open boleto", chromedp.Navigate(url), chromedp.WaitVisible(tid("boleto-slip"), chromedp.ByQuery))
	is.True(br.has("boleto-receipt")) // Recibo do Pagador
	is.Equal(br.text("boleto-bank-code"), "999-7")
	is.Equal(br.text("boleto-payee"), "Loja da Ana (Acme Ltda)")
	is.Equal(br.text("boleto-payee-document"), "11.222.333/0001-81")
	is.Equal(br.text("boleto-payer"), "Ana Souza")
	is.Equal(br.text("boleto-document"), "529.982.247-25")
	is.True(strings.Contains(br.text("boleto-payer-address"), "CEP 01310-100"))
	is.Equal(br.text("boleto-nosso-numero"), boleto.NossoNumero(barcode))
	is.True(br.text("boleto-document-number") != "")
	is.Equal(br.text("boleto-amount"), "R$ 159,90")
	is.True(strings.Contains(br.text("boleto-instructions"), "Pedido 1042"))
	line := strings.NewReplacer(".", "", " ", "").Replace(br.text("boleto-line"))
	is.NoErr(boleto.ValidateLine(line))
	br.shootAs("boleto", true)

	// Phone width: each group of the line on one line, no horizontal scrolling.
	var groupsWhole, fits bool
	br.do("phone layout", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Sleep(100*time.Millisecond),
		chromedp.Evaluate(`[...document.querySelectorAll('[data-testid="boleto-line"] .grp')].every(g => g.getClientRects().length === 1)`, &groupsWhole),
		chromedp.Evaluate(`document.documentElement.scrollWidth <= window.innerWidth`, &fits))
	is.True(groupsWhole) // the digitable line breaks only between groups
	is.True(fits)        // nothing wider than the phone

	// The checkout's print view is the same document, styled under the checkout's CSP too.
	cs := e.coSimple(e.Test, nil)
	b := e.newBrowser(t)
	form := b.get(sessionPath(t, cs.Str("url"))).hidden()
	for k, v := range coBoleto("bia@example.com") {
		if s, ok := v.(string); ok {
			form.Set(k, s)
		}
	}
	for k, v := range coBoleto("")["billing_address"].(map[string]any) {
		form.Set(k, v.(string))
	}
	is.Equal(b.post("/checkout/"+cs.Str("id")+"/confirm", form).Status, 303)
	var styled, printable bool
	br.do("checkout print view", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(e.URL()+"/checkout/"+cs.Str("id")+"/boleto?secret="+cs.Str("client_secret")),
		chromedp.WaitVisible(tid("boleto-slip"), chromedp.ByQuery),
		chromedp.Evaluate(`getComputedStyle(document.querySelector('.grid')).display === 'grid'`, &styled),
		chromedp.Evaluate(`!document.querySelector('[data-testid="print-button"]').hidden`, &printable))
	is.True(styled)    // the stylesheet loads (no inline style for the CSP to block)
	is.True(printable) // the print button works with the page's script
	is.True(br.has("boleto-back"))
}

// The page a buyer sees on a live session of an organization that cannot take payments yet.
func TestBrowserCheckoutNotYetActive(t *testing.T) {
	is := is.New(t)
	br := newChrome(t)
	e := newEnv(t)
	e.Do("POST", "/v1/organizations/"+e.Org.ID, e.Test, map[string]any{"display_name": "Loja da Ana"})
	price := e.coPrice(e.Live, "Camiseta", 10000, nil)
	s := e.coSession(e.Live, map[string]any{"line_items": []any{map[string]any{"price": price, "quantity": 2}}, "cancel_url": "https://loja.example/carrinho"})
	br.do("open", chromedp.Navigate(s.Str("url")), chromedp.WaitVisible(tid("page-not-active"), chromedp.ByQuery))
	is.True(!br.has("pay-button"))
	is.True(!br.has("sandbox-banner"))
	is.True(strings.Contains(br.text("page-not-active"), "Loja da Ana ainda está concluindo o cadastro"))
	br.shootAs("checkout-not-active", false)
}
