package server_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/matryer/is"

	"troco/server/pix"
)

// Checkout sessions accept an inline price_data (Stripe's shape): the price and product are
// created archived with the session; bad combinations name the parameter.
func TestCheckoutSessionInlinePriceData(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	r := e.coSession(e.Test, map[string]any{"line_items": []any{map[string]any{"quantity": 2,
		"price_data": map[string]any{"currency": "brl", "unit_amount": 4990, "product_data": map[string]any{"name": "Camiseta <azul>", "description": "Algodão"}}}}})
	is.Equal(r.Body["total_amount"], float64(9980))
	items := r.Body["line_items"].([]any)
	price := items[0].(map[string]any)["price"].(map[string]any)
	is.Equal(price["is_active"], false) // archived: belongs to the session
	is.Equal(price["unit_amount"], float64(4990))
	prodID := price["product"].(string)
	p := e.Do("GET", "/v1/products/"+prodID, e.Test, nil)
	is.Equal(p.Status, 200)
	is.Equal(p.Body["name"], "Camiseta <azul>")
	is.True(bytes.Contains(p.Raw, []byte(`"Camiseta <azul>"`))) // JSON is not HTML-escaped
	is.Equal(p.Body["is_active"], false)
	// Not offered elsewhere: an archived price cannot be named in another session.
	bad := e.Do("POST", "/v1/checkout-sessions", e.Test, map[string]any{"line_items": []any{map[string]any{"price": price["id"]}}})
	is.Equal(bad.Status, 400)

	// For an existing product, and recurring.
	prod := e.Do("POST", "/v1/products", e.Test, map[string]any{"name": "Plano"})
	r = e.coSession(e.Test, map[string]any{"line_items": []any{map[string]any{
		"price_data": map[string]any{"currency": "brl", "unit_amount": 1990, "product": prod.Str("id"), "recurring": map[string]any{"interval": "month"}}}}})
	is.Equal(r.Body["mode"], "subscription")

	for _, c := range []struct {
		item  map[string]any
		param string
	}{
		{map[string]any{"price": price["id"], "price_data": map[string]any{"currency": "brl", "unit_amount": 1, "product": prod.Str("id")}}, "line_items[0][price_data]"},
		{map[string]any{"price_data": map[string]any{"currency": "brl", "unit_amount": 1}}, "line_items[0][price_data][product]"},
		{map[string]any{"price_data": map[string]any{"currency": "brl", "product": prod.Str("id")}}, "line_items[0][price_data][unit_amount]"},
		{map[string]any{"price_data": map[string]any{"currency": "brl", "unit_amount": 1, "product_data": map[string]any{"name": " "}}}, "line_items[0][price_data][product_data][name]"},
		{map[string]any{"price_data": map[string]any{"currency": "brl", "unit_amount": 1, "product": "prod_nope"}}, "line_items[0][price_data][product]"},
		{map[string]any{"price_data": map[string]any{"currency": "brl", "unit_amount": 1, "product": prod.Str("id"), "colour": "red"}}, "line_items[0][price_data][colour]"},
	} {
		r := e.Do("POST", "/v1/checkout-sessions", e.Test, map[string]any{"line_items": []any{c.item}})
		if r.Status < 400 || r.ErrParam() != c.param {
			t.Errorf("%v: %d %s, want param %s", c.item, r.Status, r.Raw, c.param)
		}
	}
	// Payment links name prices only.
	l := e.Do("POST", "/v1/payment-links", e.Test, map[string]any{"line_items": []any{map[string]any{"price_data": map[string]any{"currency": "brl", "unit_amount": 1, "product": prod.Str("id")}}}})
	is.Equal(l.Status, 400)
	is.Equal(l.ErrParam(), "line_items[0][price_data]")
}

// Error messages read as written: no \u003c for <.
func TestJSONIsNotHTMLEscaped(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	r := e.Do("GET", "/v1/customers", "", nil)
	is.Equal(r.Status, 401)
	is.True(!bytes.Contains(r.Raw, []byte(`\u003c`)))
	is.True(!bytes.Contains(r.Raw, []byte(`\u0026`)))
	c := e.Do("POST", "/v1/customers", e.Test, map[string]any{"name": "Ana & <Bia>"})
	is.True(bytes.Contains(c.Raw, []byte(`"Ana & <Bia>"`)))
}

// The display name is what buyers see: the checkout page, the PIX code's merchant name and the
// boleto; an update with "" clears it (the name is shown again).
func TestOrganizationDisplayName(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	u := e.Do("POST", "/v1/organizations/"+e.Org.ID, e.Test, map[string]any{"display_name": "Loja da Ana"})
	is.Equal(u.Status, 200)
	is.Equal(u.Str("display_name"), "Loja da Ana")
	is.Equal(u.Str("name"), "Acme Ltda")
	long := e.Do("POST", "/v1/organizations/"+e.Org.ID, e.Test, map[string]any{"display_name": strings.Repeat("a", 101)})
	is.Equal(long.Status, 400)
	is.Equal(long.ErrParam(), "display_name")

	cs := e.coSimple(e.Test, nil)
	b := e.newBrowser(t)
	pg := b.get(sessionPath(t, cs.Str("url")))
	is.True(strings.Contains(pg.Body, "Loja da Ana"))
	is.True(!strings.Contains(pg.Body, "Acme Ltda"))

	pi := e.Do("POST", "/v1/payment-intents", e.Test, map[string]any{"amount": 1000, "currency": "brl"})
	conf := e.Do("POST", "/v1/payment-intents/"+pi.Str("id")+"/confirm", e.Test, map[string]any{"payment_method_type": "pix", "customer_email": "ana@example.com"})
	is.Equal(conf.Status, 200)
	code, _ := dig(conf.Body, "next_action.pix.code").(string)
	if code == "" {
		t.Fatalf("no PIX code: %s", conf.Raw)
	}
	parsed, err := pix.Parse(code)
	is.NoErr(err)
	is.Equal(parsed.MerchantName, "Loja da Ana")

	u = e.Do("POST", "/v1/organizations/"+e.Org.ID, e.Test, map[string]any{"display_name": ""})
	is.Equal(u.Body["display_name"], nil)
}

// A live session of an organization that cannot take payments yet shows a page saying so (with
// the store's link when there is one), never a form whose button cannot work.
func TestHostedCheckoutNotYetActive(t *testing.T) {
	is := is.New(t)
	e := newEnv(t) // the organization is not_submitted in live mode
	price := e.coPrice(e.Live, "Camiseta", 10000, nil)
	s := e.coSession(e.Live, map[string]any{"line_items": []any{map[string]any{"price": price}}, "cancel_url": "https://loja.example/carrinho"})
	b := e.newBrowser(t)
	p := b.get(s.Str("url"))
	is.Equal(p.Status, 200)
	is.True(p.testID("page-not-active"))
	is.True(!p.testID("pay-button"))
	is.True(strings.Contains(p.Body, "Acme Ltda ainda está concluindo o cadastro"))
	is.True(strings.Contains(p.Body, `href="https://loja.example/carrinho"`))

	// Once active, a new session shows the form (a session keeps the methods it was created with).
	e.setActivation("active")
	s = e.coSession(e.Live, map[string]any{"line_items": []any{map[string]any{"price": price}}})
	p = b.get(s.Str("url"))
	is.True(p.testID("pay-button"))
	is.True(!p.testID("page-not-active"))
}

// Without cancel_url there is no "Voltar à loja" (it led nowhere); a PIX success says how it was
// paid, as a card success does.
func TestHostedCheckoutNoDeadEndAndPaidWith(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	s := e.coSimple(e.Test, nil)
	b := e.newBrowser(t)
	p := b.get(s.Str("url"))
	is.True(p.testID("pay-button"))
	is.True(!p.testID("cancel-link"))
	is.True(!strings.Contains(p.Body, "Voltar à loja"))

	f := p.hidden()
	f.Set("customer_email", "succeed_immediately@example.com")
	f.Set("customer_name", "Ana Souza")
	f.Set("payment_method_type", "pix")
	r := b.post("/checkout/"+s.Str("id")+"/confirm", f)
	is.Equal(r.Status, 303)
	done := b.get(r.Location)
	is.True(done.testID("success"))
	is.Equal(done.textOf("paid-with"), "Pago com PIX.")

	fav := b.get("/favicon.ico")
	is.Equal(fav.Status, 200)
	is.Equal(fav.Header.Get("Content-Type"), "image/svg+xml")
	is.True(strings.Contains(p.Body, `rel="icon"`))
}

// Submitting the activation form records the legal name but never changes what buyers see: an
// organization's display name stays; without one, the trade name becomes it.
func TestActivationKeepsTheDisplayName(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	p := newActPlatform(e, "Plataforma")
	withName := p.connect("Loja da Ana", "11.222.333/0001-81")
	u := e.Do("POST", "/v1/organizations/"+withName, p.Test, map[string]any{"display_name": "Ana Modas"}, "Organization", withName)
	is.Equal(u.Status, 200)
	p.activate(withName)
	o := e.org(p.Test, withName)
	is.Equal(o.Str("name"), "Loja Teste Ltda")   // the legal name of the form
	is.Equal(o.Str("display_name"), "Ana Modas") // unchanged

	without := p.connect("Bazar", "111.444.777-35")
	p.activate(without)
	o = e.org(p.Test, without)
	is.Equal(o.Str("name"), "Loja Teste Ltda")
	is.Equal(o.Str("display_name"), "Loja Teste") // the form's nome fantasia
}

// The activation form's birth date is a DD/MM/AAAA text field whatever the browser's locale, and
// the bank is chosen from the COMPE list; what was saved is shown that way again.
func TestActivationFormDateAndBankList(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	p := newActPlatform(e, "Plataforma")
	org := p.connect("Loja", "11.444.777/0001-61")
	r := p.session(p.Test, org)
	is.Equal(r.Status, 200)
	s := e.newSeller()
	o := s.open(r.Str("url"))
	is.Equal(o.Status, 303)
	rep := s.get(o.Location + "?step=representative")
	is.True(strings.Contains(rep.Body, `id="f-rep_birth_date"`))
	is.True(strings.Contains(rep.Body, `placeholder="DD/MM/AAAA"`))
	is.True(!strings.Contains(rep.Body, `type="date"`))
	f := map[string]string{"rep_name": "Maria da Silva", "rep_document": "529.982.247-25", "rep_birth_date": "12/04/1985",
		"csrf_token": rep.csrf(), "step": "representative", "action": "next"}
	next := s.post(o.Location, f, nil)
	is.Equal(next.Status, 303)
	back := s.get(o.Location + "?step=representative")
	is.True(strings.Contains(back.Body, `value="12/04/1985"`)) // shown as typed, Brazilian order

	bank := s.get(o.Location + "?step=bank")
	is.True(strings.Contains(bank.Body, `list="f-bank_code-list"`))
	is.True(strings.Contains(bank.Body, `<option value="341 · Itaú Unibanco">`))
	f = map[string]string{"bank_code": "999", "branch": "0001", "account_number": "12345-6", "account_type": "checking",
		"csrf_token": bank.csrf(), "step": "bank", "action": "next"}
	bad := s.post(o.Location, f, nil)
	is.Equal(bad.Status, 422)
	is.True(strings.Contains(bad.Body, "Escolha o banco na lista"))
	f["bank_code"], f["csrf_token"] = "341 · Itaú Unibanco", bad.csrf()
	ok := s.post(o.Location, f, nil)
	is.Equal(ok.Status, 303)
	again := s.get(o.Location + "?step=bank")
	is.True(strings.Contains(again.Body, `value="341 · Itaú Unibanco"`))
}
