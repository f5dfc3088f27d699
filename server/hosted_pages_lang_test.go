package server_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// postRaw posts a body as a urlencoded form as it is (a malformed form included).
func (b *browser) postRaw(path, body string) page {
	b.t.Helper()
	req, _ := http.NewRequest("POST", b.e.URL()+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

// TestHostedPagesErrorsSpeakThePageLanguage: a form the portal, the hosted invoice or the Pix
// Automático authorization page cannot read, or one whose token expired, and an unknown
// authorization or receipt link, are answered with a page in the visitor's language
// (Portuguese by default), never an English line or a JSON error.
func TestHostedPagesErrorsSpeakThePageLanguage(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	english := []string{"bad form", "This form expired", "The form could not be read", "The form expired", "No such"}
	noEnglish := func(p page) {
		t.Helper()
		for _, s := range english {
			if strings.Contains(p.Body, s) {
				t.Fatalf("English text %q on a Portuguese page: %s", s, p.Body)
			}
		}
		is.True(strings.Contains(p.Body, `lang="pt-BR"`))
		// The page's inline style carries a nonce that its own Content-Security-Policy allows
		// (an empty nonce, or no policy, left the page unprotected and its style to chance).
		if _, rest, ok := strings.Cut(p.Body, `<style nonce="`); ok {
			nonce, _, _ := strings.Cut(rest, `"`)
			is.True(nonce != "")
			is.True(strings.Contains(p.Header.Get("Content-Security-Policy"), "'nonce-"+nonce+"'"))
		}
		is.True(p.Header.Get("Content-Security-Policy") != "")
	}

	// Customer portal.
	cus := e.payCustomer(e.Test, "ana@example.com")
	pm := e.subSavedCard(cus, "4242424242424242")
	price := e.coPrice(e.Test, "Plano Pro", 4990, map[string]any{"interval": "month"})
	sub := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pm})
	r := e.Do("POST", "/v1/customer-portal-sessions", e.Test, map[string]any{"customer": cus, "return_url": "https://acme.example/conta"})
	is.Equal(r.Status, 200)
	u, _ := url.Parse(r.Str("url"))
	b := e.newBrowser(t)
	open := b.get(u.RequestURI())
	is.Equal(open.Status, 303)
	is.Equal(b.get(open.Location).Status, 200)
	cancel := "/portal/subscriptions/" + sub.Str("id") + "/cancel"
	p := b.post(cancel, url.Values{"csrf": {"forged"}})
	is.Equal(p.Status, 403)
	noEnglish(p)
	is.Equal(p.textOf("portal-notice"), "Este formulário expirou; recarregue a página.")
	p = b.postRaw(cancel, "csrf=%zz")
	is.Equal(p.Status, 400)
	noEnglish(p)
	is.Equal(p.textOf("portal-notice"), "Não foi possível ler o formulário. Recarregue a página e tente de novo.")
	b.lang = "en"
	p = b.post(cancel+"?lang=en", url.Values{"csrf": {"forged"}})
	is.Equal(p.Status, 403)
	is.Equal(p.textOf("portal-notice"), "This form expired; reload the page.") // an English visitor reads English
	b.lang = ""
	// The portal shows only its own notices, never text taken from the URL.
	home := b.get("/portal?m=Pague+em+outro+site")
	is.Equal(home.Status, 200)
	is.True(!strings.Contains(home.Body, "Pague em outro site"))
	is.Equal(sub.Str("status"), "active")

	// Hosted invoice.
	ic := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "bia@example.com", "name": "Bia Souza"})
	inv := e.invCreate(map[string]any{"customer": ic.Str("id"), "collection_method": "send_invoice", "days_until_due": 2,
		"lines": []any{map[string]any{"amount": 10000, "description": "Consultoria"}}})
	f := e.Do("POST", "/v1/invoices/"+inv.Str("id")+"/finalize", e.Test, nil)
	is.Equal(f.Status, 200)
	for _, action := range []string{"pay", "simulate"} {
		p = b.postRaw("/invoices/"+f.Str("id")+"/"+action, "s=%zz")
		is.Equal(p.Status, 400)
		noEnglish(p)
		is.True(strings.Contains(p.Body, "Não foi possível enviar o formulário"))
	}

	// Pix Automático authorization page.
	pa := e.Do("POST", "/v1/pix-authorizations", e.Test, map[string]any{"customer": e.pixAuthCustomer(t, e.Test, "caio@example.com"), "max_amount": 9990, "interval": "month"})
	is.Equal(pa.Status, 200)
	pu, _ := url.Parse(pa.Str("url"))
	p = b.get(pu.Path + "?s=wrong")
	is.Equal(p.Status, 404) // as unknown, on a page
	noEnglish(p)
	is.True(strings.Contains(p.Body, "Página não encontrada"))
	p = b.post(pu.Path, url.Values{"s": {pu.Query().Get("s")}, "csrf_token": {"forged"}, "action": {"approve"}})
	is.Equal(p.Status, 403)
	noEnglish(p)
	is.True(strings.Contains(p.Body, "Não foi possível enviar o formulário"))
	p = b.postRaw(pu.Path, "s=%zz")
	is.Equal(p.Status, 400)
	noEnglish(p)
	is.Equal(e.Do("GET", "/v1/pix-authorizations/"+pa.Str("id"), e.Test, nil).Str("status"), "pending") // nothing answered

	// A boleto link with a wrong secret.
	bi := e.payIntent(e.Test, 5000, nil)
	p = b.get("/payment-intents/" + bi.Str("id") + "/boleto?client_secret=forged")
	is.Equal(p.Status, 404)
	noEnglish(p)
	is.True(strings.Contains(p.Body, "Página não encontrada"))

	// A receipt link with a wrong signature.
	p = b.get("/receipts/ch_unknown?s=forged")
	is.Equal(p.Status, 404)
	noEnglish(p)
	is.True(strings.Contains(p.Body, "Página não encontrada"))
}
