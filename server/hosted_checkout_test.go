package server_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/server/boleto"
	"troco/server/pix"
)

// cardForm fills the hosted form's fields for a card payment on top of a page's hidden fields.
func cardForm(p page, number string) url.Values {
	f := p.hidden()
	f.Set("customer_email", "ana@example.com")
	f.Set("customer_name", "Ana Souza")
	f.Set("payment_method_type", "credit_card")
	f.Set("card_number", number)
	f.Set("card_exp", "12/"+time.Now().AddDate(3, 0, 0).Format("06"))
	f.Set("card_cvc", "123")
	f.Set("card_name", "ANA SOUZA")
	f.Set("installments", "1")
	return f
}

func TestHostedCheckoutPage(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	s := e.coSimple(e.Test, map[string]any{"submit_type": "book", "template": "booking", "branding": map[string]any{"display_name": "Pousada Sol", "primary_color": "#FFD000"}})
	b := e.newBrowser(t)
	p := b.get(s.Str("url"))
	is.Equal(p.Status, 200)
	is.True(strings.HasPrefix(p.Header.Get("Content-Type"), "text/html"))
	is.True(strings.Contains(p.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'"))
	is.Equal(p.Header.Get("Referrer-Policy"), "no-referrer")
	is.True(strings.Contains(p.Header.Get("Set-Cookie"), "SameSite=Lax"))
	is.True(strings.Contains(p.Header.Get("Set-Cookie"), "HttpOnly"))
	is.True(strings.Contains(p.Body, `<html lang="pt-BR">`))                // Portuguese by default
	is.True(strings.Contains(p.Body, "Sua reserva"))                        // booking template
	is.True(strings.Contains(p.Body, "Pousada Sol"))                        // branding override over the organization's name
	is.True(strings.Contains(p.Body, "--brand:#FFD000;--on-brand:#111111")) // readable text on a light brand colour
	is.True(p.testID("sandbox-banner"))                                     // test mode: the yellow bar
	is.True(!p.testID("simulate-payment"))                                  // nothing waits yet
	is.True(p.testID("pay-button"))
	is.Equal(p.textOf("pay-button"), "Reservar R$ 100,00") // submit_type book
	is.Equal(p.textOf("total-amount"), "R$ 100,00")
	is.True(strings.Contains(p.Body, "10x de R$ 10,00 sem juros (total R$ 100,00)")) // instalments with amount and total
	is.True(strings.Contains(p.Body, "12x de R$ 8,34"))                              // up to the ceiling of CONTRACT 5
	is.True(!strings.Contains(p.Body, "13x"))
	h := p.hidden()
	is.Equal(h.Get("client_secret"), s.Str("client_secret"))
	is.True(h.Get("csrf_token") != "")
	is.True(h.Get("attempt") != "")
	for _, label := range []string{`for="email"`, `for="name"`, `for="document"`, `for="card-number"`, `for="card-exp"`, `for="card-cvc"`, `for="installments"`} {
		is.True(strings.Contains(p.Body, label)) // every input has a label
	}
	is.True(!strings.Contains(p.Body, `name="amount"`)) // the page never carries an amount

	// English by Accept-Language, and an explicit switch.
	b.lang = "en-US,en;q=0.9,pt;q=0.5"
	en := b.get(s.Str("url"))
	is.True(strings.Contains(en.Body, `<html lang="en">`))
	is.True(strings.Contains(en.Body, "Your booking"))
	is.Equal(en.textOf("pay-button"), "Book R$100.00")
	is.True(strings.Contains(en.Body, `placeholder="MM/YY"`)) // the expiry's placeholder is English too
	is.True(strings.Contains(p.Body, `placeholder="MM/AA"`))
	b.lang = "pt-BR,pt;q=0.9,en;q=0.8"
	is.True(strings.Contains(b.get(s.Str("url")).Body, `<html lang="pt-BR">`))
	is.True(strings.Contains(b.get(s.Str("url")+"&lang=en").Body, `<html lang="en">`))

	// Without the secret, or with a wrong one, the session does not exist.
	is.Equal(b.get("/checkout/"+s.Str("id")).Status, 404)
	is.Equal(b.get("/checkout/"+s.Str("id")+"?secret="+strings.Repeat("a", 64)).Status, 404)
	is.Equal(b.get("/checkout/cs_nope?secret=x").Status, 404)

	// Assets.
	css := b.get("/checkout-assets/checkout.css")
	is.Equal(css.Status, 200)
	is.True(strings.HasPrefix(css.Header.Get("Content-Type"), "text/css"))
	is.Equal(b.get("/checkout-assets/nope.js").Status, 404)

	// Live mode (active organization): no yellow bar.
	e.setActivation("active")
	live := e.coSession(e.Live, map[string]any{"line_items": []any{map[string]any{"price": e.coPrice(e.Live, "P", 10000, nil)}}})
	lp := b.get(live.Str("url"))
	is.Equal(lp.Status, 200)
	is.True(!lp.testID("sandbox-banner"))
	is.True(lp.testID("pay-button"))
}

func TestHostedCheckoutPayByCard(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	s := e.coSimple(e.Test, map[string]any{"success_url": "https://loja.example/ok?cs={CHECKOUT_SESSION_ID}"})
	b := e.newBrowser(t)
	p := b.get(s.Str("url"))

	// A decline: 402, a Portuguese message, the session still open, the e-mail kept.
	d := b.post("/checkout/"+s.Str("id")+"/confirm", cardForm(p, "4000000000009995"))
	is.Equal(d.Status, 402)
	is.True(d.testID("error-message"))
	is.True(strings.Contains(d.Body, "Saldo ou limite insuficiente"))
	is.True(strings.Contains(d.Body, `value="ana@example.com"`))
	is.True(!strings.Contains(d.Body, "4000000000009995")) // the card number is never echoed
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+s.Str("id"), e.Test, nil).Body["status"], "open")
	// Reloading the page still explains the last decline.
	is.True(strings.Contains(b.get(s.Str("url")).Body, "Saldo ou limite insuficiente"))

	// Tampered fields: an amount in the form is ignored; instalments beyond the ceiling are refused.
	f := cardForm(d, "4242 4242 4242 4242")
	f.Set("installments", "13")
	bad := b.post("/checkout/"+s.Str("id")+"/confirm", f)
	is.Equal(bad.Status, 400)
	is.True(strings.Contains(bad.Body, "parcelas"))
	f = cardForm(bad, "4242 4242 4242 4242")
	f.Set("amount", "1")
	f.Set("total_amount", "1")
	f.Set("installments", "2")
	ok := b.post("/checkout/"+s.Str("id")+"/confirm", f)
	is.Equal(ok.Status, 303)
	is.Equal(ok.Location, "https://loja.example/ok?cs="+s.Str("id")) // success_url with the session id
	g := e.Do("GET", "/v1/checkout-sessions/"+s.Str("id"), e.Test, nil)
	is.Equal(g.Body["payment_status"], "paid")
	pi := e.Do("GET", "/v1/payment-intents/"+g.Str("payment_intent"), e.Test, nil)
	is.Equal(pi.Body["amount"], float64(10000)) // the amount comes from the server
	is.Equal(dig(g.Body, "payment_data.credit_card.installments"), float64(2))

	// Double-click: the same form again charges nothing more.
	again := b.post("/checkout/"+s.Str("id")+"/confirm", f)
	is.Equal(again.Status, 303)
	is.Equal(e.payCount(e.Test, "/v1/charges?payment_intent="+g.Str("payment_intent")), 2) // the decline and one success
	// The page now shows the success screen.
	done := b.get(s.Str("url"))
	is.True(done.testID("success"))
	is.True(done.testID("continue"))
	is.True(!done.testID("pay-button"))
}

func TestHostedCheckoutDoubleSubmitWhileOpen(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	s := e.coSimple(e.Test, nil)
	b := e.newBrowser(t)
	p := b.get(s.Str("url"))
	f := cardForm(p, "4000000000000002")
	first := b.post("/checkout/"+s.Str("id")+"/confirm", f)
	is.Equal(first.Status, 402)
	second := b.post("/checkout/"+s.Str("id")+"/confirm", f) // the same form (same attempt token)
	is.Equal(second.Status, 303)
	pi := e.Do("GET", "/v1/checkout-sessions/"+s.Str("id"), e.Test, nil).Str("payment_intent")
	is.Equal(e.payCount(e.Test, "/v1/charges?payment_intent="+pi), 1) // one attempt, one charge
}

func TestHostedCheckoutCSRF(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	s := e.coSimple(e.Test, nil)
	b := e.newBrowser(t)
	p := b.get(s.Str("url"))
	f := cardForm(p, "4242424242424242")

	stranger := e.newBrowser(t) // no cookie of this page
	r := stranger.post("/checkout/"+s.Str("id")+"/confirm", f)
	is.Equal(r.Status, 403)
	forged := cardForm(p, "4242424242424242")
	forged.Set("csrf_token", "forged")
	is.Equal(b.post("/checkout/"+s.Str("id")+"/confirm", forged).Status, 403)
	wrongSecret := cardForm(p, "4242424242424242")
	wrongSecret.Set("client_secret", strings.Repeat("b", 64))
	is.Equal(b.post("/checkout/"+s.Str("id")+"/confirm", wrongSecret).Status, 404)
	// A token of another session does not open this one.
	other := e.coSimple(e.Test, nil)
	op := b.get(other.Str("url"))
	cross := cardForm(p, "4242424242424242")
	cross.Set("csrf_token", op.hidden().Get("csrf_token"))
	is.Equal(b.post("/checkout/"+s.Str("id")+"/confirm", cross).Status, 403)
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+s.Str("id"), e.Test, nil).Body["payment_intent"], nil) // nothing changed
}

func TestHostedCheckoutPixAndBoleto(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	s := e.coSimple(e.Test, nil)
	b := e.newBrowser(t)
	p := b.get(s.Str("url"))
	f := p.hidden()
	f.Set("customer_email", "ana@example.com")
	f.Set("customer_name", "Ana Souza")
	f.Set("payment_method_type", "pix")
	r := b.post("/checkout/"+s.Str("id")+"/confirm", f)
	is.Equal(r.Status, 303)
	w := b.get(r.Location)
	is.True(w.testID("pix-code"))
	is.NoErr(pix.Verify(w.textOf("pix-code")))
	is.True(w.testID("pix-qr"))
	is.True(w.testID("sandbox-banner"))
	is.True(w.testID("simulate-payment")) // the bar offers the simulations once PIX waits
	is.True(w.testID("simulate-expiration"))
	qr := b.get("/checkout/" + s.Str("id") + "/pix.png?secret=" + s.Str("client_secret"))
	is.Equal(qr.Status, 200)
	is.Equal(qr.Header.Get("Content-Type"), "image/png")
	st := e.Do("GET", "/checkout/"+s.Str("id")+"/status?secret="+s.Str("client_secret"), "", nil)
	is.Equal(st.Body["state"], "waiting_pix")

	sim := w.hidden()
	sim.Set("action", "payment")
	sr := b.post("/checkout/"+s.Str("id")+"/simulate", sim)
	is.Equal(sr.Status, 303)
	done := b.get(sr.Location)
	is.True(done.testID("success"))
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+s.Str("id"), e.Test, nil).Body["payment_status"], "paid")
	is.Equal(len(e.coEvents(e.Test, "checkout.session.async.payment.succeeded", s.Str("id"))), 1)

	// Boleto: line, barcode, print view; then simulate expiration.
	s2 := e.coSimple(e.Test, nil)
	p2 := b.get(s2.Str("url"))
	f2 := p2.hidden()
	for k, v := range map[string]string{"customer_email": "bia@example.com", "customer_name": "Bia Lima", "customer_document": "529.982.247-25",
		"payment_method_type": "boleto", "postal_code": "01310-100", "state": "SP", "line1": "Avenida Paulista", "number": "1000", "neighborhood": "Bela Vista", "city": "São Paulo"} {
		f2.Set(k, v)
	}
	r2 := b.post("/checkout/"+s2.Str("id")+"/confirm", f2)
	is.Equal(r2.Status, 303)
	w2 := b.get(r2.Location)
	line := strings.NewReplacer(".", "", " ", "").Replace(w2.textOf("boleto-line"))
	is.NoErr(boleto.ValidateLine(line))
	is.True(strings.Contains(w2.Body, "<svg"))
	is.True(w2.testID("simulate-payment"))
	pr := b.get("/checkout/" + s2.Str("id") + "/boleto?secret=" + s2.Str("client_secret"))
	is.Equal(pr.Status, 200)
	is.True(pr.testID("boleto-print-view"))
	is.True(strings.Contains(pr.Body, "Bia Lima"))
	sim2 := w2.hidden()
	sim2.Set("action", "expiration")
	sr2 := b.post("/checkout/"+s2.Str("id")+"/simulate", sim2)
	is.Equal(sr2.Status, 303)
	failed := b.get(sr2.Location)
	is.True(failed.testID("page-failed"))
	is.Equal(len(e.coEvents(e.Test, "checkout.session.async.payment.failed", s2.Str("id"))), 1)
	// SPEC 3.4: the intent is back to requires_payment_method and the session stays unpaid,
	// with the buyer data typed in the form; the same events as an expiry by the e-mail rules.
	g2 := e.Do("GET", "/v1/checkout-sessions/"+s2.Str("id"), e.Test, nil)
	is.Equal(g2.Body["payment_status"], "unpaid")
	is.Equal(g2.Body["customer_email"], "bia@example.com")
	is.Equal(g2.Body["customer_name"], "Bia Lima")
	pi2 := e.Do("GET", "/v1/payment-intents/"+g2.Str("payment_intent"), e.Test, nil)
	is.Equal(pi2.Body["status"], "requires_payment_method")
	is.Equal(digStr(pi2.Body, "last_payment_error.code"), "payment_intent_payment_attempt_expired")
	is.Equal(len(e.coEvents(e.Test, "payment_intent.payment_failed", pi2.Str("id"))), 1)
	is.Equal(len(e.coEvents(e.Test, "charge.failed", pi2.Str("latest_charge"))), 1)

	// The boleto form without a document is refused with a clear message.
	s3 := e.coSimple(e.Test, nil)
	p3 := b.get(s3.Str("url"))
	f3 := p3.hidden()
	f3.Set("customer_email", "c@example.com")
	f3.Set("customer_name", "C")
	f3.Set("payment_method_type", "boleto")
	r3 := b.post("/checkout/"+s3.Str("id")+"/confirm", f3)
	is.Equal(r3.Status, 400)
	is.True(strings.Contains(r3.Body, "CPF ou CNPJ"))
}

func TestHostedCheckoutStatesAndLinks(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	b := e.newBrowser(t)
	s := e.coSimple(e.Test, map[string]any{"cancel_url": "https://loja.example/carrinho"})
	p := b.get(s.Str("url"))
	is.True(strings.Contains(p.Body, `href="https://loja.example/carrinho"`)) // cancel_url
	e.Do("POST", "/v1/checkout-sessions/"+s.Str("id")+"/expire", e.Test, nil)
	x := b.get(s.Str("url"))
	is.True(x.testID("page-expired"))
	is.True(!x.testID("pay-button"))
	// A late form on the expired session changes nothing.
	late := b.post("/checkout/"+s.Str("id")+"/confirm", cardForm(p, "4242424242424242"))
	is.Equal(late.Status, 303)
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+s.Str("id"), e.Test, nil).Body["payment_intent"], nil)

	// Without cancel_url, "back" leads to the canceled page, which offers to return.
	s2 := e.coSimple(e.Test, nil)
	c := b.get("/checkout/" + s2.Str("id") + "/canceled?secret=" + s2.Str("client_secret"))
	is.True(c.testID("page-canceled"))

	// Payment links: each visit creates a fresh session and redirects to it.
	price := e.coPrice(e.Test, "Ingresso", 5000, nil)
	l := e.Do("POST", "/v1/payment-links", e.Test, map[string]any{"line_items": []any{map[string]any{"price": price, "quantity": 2}}, "submit_type": "book", "metadata": map[string]string{"campaign": "natal"}})
	is.Equal(l.Status, 200)
	is.Equal(l.Body["object"], "payment_link")
	is.True(strings.HasPrefix(l.Str("id"), "plink_"))
	is.Equal(l.Str("url"), e.URL()+"/l/"+l.Str("id"))
	is.Equal(l.Body["active"], true)
	first := b.get(l.Str("url"))
	is.Equal(first.Status, 303)
	second := b.get(l.Str("url"))
	is.True(first.Location != second.Location) // a fresh session each time
	sessions := e.Do("GET", "/v1/checkout-sessions?payment_link="+l.Str("id"), e.Test, nil)
	is.Equal(len(sessions.IDs()), 2)
	cs := sessions.Data()[0]
	is.Equal(cs["payment_link"], l.Str("id"))
	is.Equal(cs["total_amount"], float64(10000))
	is.Equal(cs["submit_type"], "book")
	is.Equal(len(e.coEvents(e.Test, "checkout.session.created", cs["id"].(string))), 1)
	lp := b.get(first.Location)
	is.Equal(lp.Status, 200)
	is.Equal(lp.textOf("pay-button"), "Reservar R$ 100,00")

	// Retrieve, list, update (deactivate), delete.
	is.Equal(e.Do("GET", "/v1/payment-links/"+l.Str("id"), e.Test, nil).Body["metadata"], map[string]any{"campaign": "natal"})
	is.Equal(e.Do("GET", "/v1/payment-links", e.Test, nil).IDs(), []string{l.Str("id")})
	u := e.Do("POST", "/v1/payment-links/"+l.Str("id"), e.Test, map[string]any{"active": false})
	is.Equal(u.Status, 200)
	is.Equal(u.Body["active"], false)
	is.Equal(len(e.Do("GET", "/v1/payment-links?active=true", e.Test, nil).IDs()), 0)
	off := b.get(l.Str("url"))
	is.Equal(off.Status, 410)
	is.True(off.testID("page-unavailable"))
	is.Equal(len(e.Do("GET", "/v1/checkout-sessions?payment_link="+l.Str("id"), e.Test, nil).IDs()), 2) // no new session
	is.Equal(e.Do("POST", "/v1/payment-links/"+l.Str("id"), e.Test, map[string]any{"active": true}).Body["active"], true)
	is.Equal(b.get(l.Str("url")).Status, 303)
	del := e.Do("DELETE", "/v1/payment-links/"+l.Str("id"), e.Test, nil)
	is.Equal(del.Body["deleted"], true)
	is.Equal(b.get(l.Str("url")).Status, 410)
	is.Equal(e.Do("GET", "/v1/payment-links/"+l.Str("id"), e.Test, nil).Status, 404)
	is.Equal(b.get("/l/plink_nope").Status, 410)

	// Link validation.
	is.Equal(e.Do("POST", "/v1/payment-links", e.Test, map[string]any{}).ErrParam(), "line_items")
	is.Equal(e.Do("POST", "/v1/payment-links", e.Test, map[string]any{"line_items": []any{map[string]any{"price": "price_nope"}}}).Status, 404)
	is.Equal(e.Do("POST", "/v1/payment-links", e.Test, map[string]any{"line_items": []any{map[string]any{"price": price}}, "success_url": "ftp://x"}).ErrParam(), "success_url")
}

// The organization's checkout_settings are the hosted page's defaults; a session's branding
// override is merged over them field by field, and a null session template means the
// organization's.
func TestHostedCheckoutOrganizationBranding(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	u := e.Do("POST", "/v1/organizations/"+e.Org.ID, e.Test, map[string]any{"checkout_settings": map[string]any{
		"branding": map[string]any{"display_name": "Loja Acme", "primary_color": "#123456", "logo_url": "https://cdn.example/acme.png"},
		"template": "booking",
	}})
	is.Equal(u.Status, 200)
	is.Equal(digStr(u.Body, "checkout_settings.branding.display_name"), "Loja Acme")
	is.Equal(digStr(u.Body, "checkout_settings.template"), "booking")
	is.Equal(dig(u.Body, "checkout_settings.branding.background_color"), nil) // absent fields stay null
	ev := e.Do("GET", "/v1/events?type=organization.updated", e.Test, nil).Data()
	is.True(len(ev) > 0)
	is.True(dig(ev[0], "data.previous_attributes.checkout_settings") != nil) // organization.updated says what changed

	b := e.newBrowser(t)
	plain := b.get(e.coSimple(e.Test, nil).Str("url"))
	is.True(strings.Contains(plain.Body, "Loja Acme"))                          // the organization's display name
	is.True(strings.Contains(plain.Body, "--brand:#123456"))                    // and colour
	is.True(strings.Contains(plain.Body, `src="https://cdn.example/acme.png"`)) // and logo
	is.True(strings.Contains(plain.Body, "Sua reserva"))                        // and template

	over := b.get(e.coSimple(e.Test, map[string]any{"template": "minimal", "branding": map[string]any{"primary_color": "#FFD000"}}).Str("url"))
	is.True(strings.Contains(over.Body, "--brand:#FFD000")) // the session's colour wins
	is.True(strings.Contains(over.Body, "Loja Acme"))       // its null display name inherits
	is.True(!strings.Contains(over.Body, "Sua reserva"))    // its template wins

	// Updates merge field by field; null clears one field; bad values name the param.
	u = e.Do("POST", "/v1/organizations/"+e.Org.ID, e.Test, map[string]any{"checkout_settings": map[string]any{"branding": map[string]any{"logo_url": nil}}})
	is.Equal(u.Status, 200)
	is.Equal(dig(u.Body, "checkout_settings.branding.logo_url"), nil)
	is.Equal(digStr(u.Body, "checkout_settings.branding.display_name"), "Loja Acme")
	is.Equal(digStr(e.Do("GET", "/v1/organizations/"+e.Org.ID, e.Test, nil).Body, "checkout_settings.branding.primary_color"), "#123456")
	bad := e.Do("POST", "/v1/organizations/"+e.Org.ID, e.Test, map[string]any{"checkout_settings": map[string]any{"branding": map[string]any{"primary_color": "blue"}}})
	is.Equal(bad.Status, 400)
	is.Equal(bad.ErrParam(), "checkout_settings[branding][primary_color]")
	bad = e.Do("POST", "/v1/organizations/"+e.Org.ID, e.Test, map[string]any{"checkout_settings": map[string]any{"template": "fancy"}})
	is.Equal(bad.ErrParam(), "checkout_settings[template]")
	bad = e.Do("POST", "/v1/organizations/"+e.Org.ID, e.Test, map[string]any{"checkout_settings": map[string]any{"colour": "x"}})
	is.Equal(bad.Status, 400)
}

// The hosted form obeys the text rules of the JSON API: a bidirectional override, a NUL or text
// that is not UTF-8 in any field is refused naming the field, and nothing is confirmed or stored.
func TestHostedCheckoutRefusesControlText(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	for _, tc := range []struct{ field, value string }{
		{"customer_name", "Ana \u202eevil"},
		{"customer_email", "ana\x00@example.com"},
		{"line1", "Rua \u2066A"},
		{"customer_name", "Ana \xff"},
	} {
		s := e.coSimple(e.Test, nil)
		b := e.newBrowser(t)
		f := b.get(s.Str("url")).hidden()
		for k, v := range map[string]string{"customer_email": "ana@example.com", "customer_name": "Ana Souza", "payment_method_type": "boleto",
			"customer_document": "529.982.247-25", "postal_code": "01310-100", "state": "SP", "line1": "Avenida Paulista", "number": "1000",
			"neighborhood": "Bela Vista", "city": "São Paulo"} {
			f.Set(k, v)
		}
		f.Set(tc.field, tc.value)
		r := b.post("/checkout/"+s.Str("id")+"/confirm", f)
		is.Equal(r.Status, 400) // the form again, with the reason
		is.True(strings.Contains(r.Body, `class="field has-error"`))
		g := e.Do("GET", "/v1/checkout-sessions/"+s.Str("id"), e.Test, nil)
		is.Equal(g.Body["status"], "open")
		is.Equal(g.Body["payment_intent"], nil) // nothing confirmed
		is.Equal(g.Body["customer_name"], nil)  // nothing stored
	}
}

// A rejected field is marked aria-invalid="true" for screen readers (a bare aria-invalid is an
// empty value, which ARIA reads as false).
func TestHostedCheckoutMarksRejectedFieldInvalid(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	for field, value := range map[string]string{"customer_email": "not-an-email", "card_exp": "13/99"} {
		s := e.coSimple(e.Test, nil)
		b := e.newBrowser(t)
		f := b.get(s.Str("url")).hidden()
		for k, v := range map[string]string{"customer_email": "ana@example.com", "customer_name": "Ana Souza", "payment_method_type": "credit_card",
			"card_number": "4242424242424242", "card_exp": "12/40", "card_cvc": "123", "card_name": "ANA SOUZA"} {
			f.Set(k, v)
		}
		f.Set(field, value)
		r := b.post("/checkout/"+s.Str("id")+"/confirm", f)
		is.True(r.Status == 400 || r.Status == 402) // the form again, with the reason
		input := regexp.MustCompile(`<input[^>]*name="` + field + `"[^>]*>`).FindString(r.Body)
		is.True(strings.Contains(input, `aria-invalid="true"`))   // the rejected field, announced as invalid
		is.Equal(strings.Count(r.Body, `aria-invalid="true"`), 1) // and no other
	}
}
