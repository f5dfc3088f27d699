package server_test

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/server/boleto"
	"troco/server/pix"
)

func TestCheckoutSessionCreateShape(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	shirt := e.coPrice(e.Test, "Camiseta", 4990, nil)
	mug := e.coPrice(e.Test, "Caneca", 2500, nil)
	r := e.coSession(e.Test, map[string]any{
		"line_items":     []any{map[string]any{"price": shirt, "quantity": 2}, map[string]any{"price": mug}},
		"customer_email": "ana@example.com", "customer_document": "529.982.247-25",
		"success_url": "https://loja.example/ok?cs={CHECKOUT_SESSION_ID}", "cancel_url": "https://loja.example/carrinho",
		"submit_type": "pay", "template": "booking", "branding": map[string]any{"primary_color": "#123456"},
		"metadata": map[string]string{"order": "A-1"},
	})
	b := r.Body
	is.Equal(b["object"], "checkout.session")
	is.True(strings.HasPrefix(r.Str("id"), "cs_"))
	secret := r.Str("client_secret")
	_, err := hex.DecodeString(secret)
	is.NoErr(err)             // client_secret is hex
	is.Equal(len(secret), 64) // 64 hex characters, no prefix
	is.True(strings.HasPrefix(r.Str("url"), e.URL()+"/checkout/"+r.Str("id")+"?secret="+secret))
	is.Equal(b["status"], "open")
	is.Equal(b["payment_status"], "unpaid")
	is.Equal(b["mode"], "payment")
	is.Equal(b["currency"], "brl")
	is.Equal(b["livemode"], false)
	is.Equal(b["subtotal_amount"], float64(2*4990+2500))
	is.Equal(b["discount_amount"], float64(0))
	is.Equal(b["tax_amount"], float64(0))
	is.Equal(b["total_amount"], float64(2*4990+2500)) // total = subtotal − discount + tax
	is.Equal(b["payment_method_types"], []any{"credit_card", "pix", "boleto"})
	is.Equal(b["payment_method_collection"], "always")
	is.Equal(b["payment_data"], nil)
	is.Equal(b["payment_intent"], nil)
	is.Equal(b["customer"], nil) // resolved at confirmation
	is.Equal(b["customer_email"], "ana@example.com")
	is.Equal(b["customer_document"], "52998224725") // digits only
	is.Equal(b["customer_document_type"], "cpf")
	is.Equal(b["submit_type"], "pay")
	is.Equal(b["template"], "booking")
	is.Equal(dig(b, "branding.primary_color"), "#123456")
	is.Equal(dig(b, "branding.display_name"), nil) // absent fields are null and inherit
	is.Equal(dig(b, "metadata.order"), "A-1")
	is.Equal(dig(b, "payment_method_options.credit_card.max_installments"), float64(12))
	is.Equal(dig(b, "payment_method_options.boleto.expires_after_days"), float64(3))
	for _, k := range []string{"allow_promotion_codes", "invoice_creation", "require_billing_address", "require_document", "require_phone", "discount", "invoice", "subscription", "cancel_url", "success_url", "customer_name"} {
		_, ok := b[k]
		is.True(ok) // every CONTRACT 3 field is present
	}
	created, _ := time.Parse(time.RFC3339, r.Str("created_at"))
	expires, _ := time.Parse(time.RFC3339, r.Str("expires_at"))
	is.Equal(expires.Sub(created), 24*time.Hour) // SPEC 8: 24 hours

	items := b["line_items"].([]any)
	is.Equal(len(items), 2)
	li := items[0].(map[string]any)
	is.True(strings.HasPrefix(li["id"].(string), "li_"))
	is.Equal(li["object"], "line_item")
	is.Equal(li["quantity"], float64(2))
	is.Equal(dig(li, "price.id"), shirt)
	is.Equal(dig(li, "product.name"), "Camiseta")
	is.Equal(li["subtotal_amount"], float64(9980))
	is.Equal(li["total_amount"], float64(9980))
	is.Equal(dig(li, "price.recurring"), nil)

	// checkout.session.created carries the full session and its metadata.
	evs := e.coEvents(e.Test, "checkout.session.created", r.Str("id"))
	is.Equal(len(evs), 1)
	is.Equal(digStr(evs[0], "data.object.metadata.order"), "A-1")
	is.Equal(digStr(evs[0], "data.object.client_secret"), secret)

	// Retrieval is the same frozen snapshot, even after the price changes.
	is.Equal(e.Do("POST", "/v1/prices/"+shirt, e.Test, map[string]any{"is_active": false}).Status, 200)
	g := e.Do("GET", "/v1/checkout-sessions/"+r.Str("id"), e.Test, nil)
	is.Equal(g.Status, 200)
	is.Equal(dig(g.Body, "line_items"), dig(b, "line_items"))
	is.Equal(g.Body["payment_method_types"], b["payment_method_types"])
}

func TestCheckoutSessionValidation(t *testing.T) {
	e := newEnv(t)
	price := e.coPrice(e.Test, "Camiseta", 10000, nil)
	monthly := e.coPrice(e.Test, "Plano mensal", 2990, map[string]any{"interval": "month"})
	yearly := e.coPrice(e.Test, "Plano anual", 29900, map[string]any{"interval": "year"})
	cheap := e.coPrice(e.Test, "Bala", 30, nil)
	inactive := e.coPrice(e.Test, "Antigo", 1000, nil)
	e.Do("POST", "/v1/prices/"+inactive, e.Test, map[string]any{"is_active": false})
	_, otherKey := e.NewOrg("Outra Ltda", false)
	foreign := e.coPrice(otherKey, "Alheio", 1000, nil)
	li := func(p string, q any) []any { return []any{map[string]any{"price": p, "quantity": q}} }
	many := []any{}
	for range 101 {
		many = append(many, map[string]any{"price": price})
	}
	cases := []struct {
		name   string
		body   map[string]any
		status int
		code   string
		param  string
	}{
		{"no line items", map[string]any{}, 400, "parameter_missing", "line_items"},
		{"empty line items", map[string]any{"line_items": []any{}}, 400, "parameter_missing", "line_items"},
		{"too many items", map[string]any{"line_items": many}, 400, "invalid_request", "line_items"},
		{"missing price", map[string]any{"line_items": []any{map[string]any{"quantity": 1}}}, 400, "parameter_missing", "line_items[0][price]"},
		{"unknown price", map[string]any{"line_items": li("price_nope", 1)}, 404, "resource_missing", "line_items[0][price]"},
		{"price of another organization", map[string]any{"line_items": li(foreign, 1)}, 404, "resource_missing", "line_items[0][price]"},
		{"inactive price", map[string]any{"line_items": li(inactive, 1)}, 400, "invalid_request", "line_items[0][price]"},
		{"quantity zero", map[string]any{"line_items": li(price, 0)}, 400, "invalid_request", "line_items[0][quantity]"},
		{"quantity too large", map[string]any{"line_items": li(price, 10001)}, 400, "invalid_request", "line_items[0][quantity]"},
		{"quantity wrong type", map[string]any{"line_items": li(price, "2")}, 400, "invalid_request", "line_items[0][quantity]"},
		{"unknown field in a line item", map[string]any{"line_items": []any{map[string]any{"price": price, "quantity": 1, "qty": 1}}}, 400, "invalid_request", "line_items[0][qty]"},
		{"mixed intervals", map[string]any{"line_items": []any{map[string]any{"price": monthly}, map[string]any{"price": yearly}}}, 400, "invalid_request", "line_items[1][price]"},
		{"below the minimum charge", map[string]any{"line_items": li(cheap, 1)}, 400, "invalid_request", "line_items"},
		{"mode contradicts items", map[string]any{"line_items": li(price, 1), "mode": "subscription"}, 400, "invalid_request", "mode"},
		{"unknown field", map[string]any{"line_items": li(price, 1), "amount": 1}, 400, "invalid_request", "amount"},
		{"bad success_url", map[string]any{"line_items": li(price, 1), "success_url": "javascript:alert(1)"}, 400, "invalid_request", "success_url"},
		{"long cancel_url", map[string]any{"line_items": li(price, 1), "cancel_url": "https://x.example/" + strings.Repeat("a", 2048)}, 400, "invalid_request", "cancel_url"},
		{"bad metadata", map[string]any{"line_items": li(price, 1), "metadata": map[string]string{"bad key!": "v"}}, 400, "invalid_request", "metadata"},
		{"bad document", map[string]any{"line_items": li(price, 1), "customer_document": "123.456.789-00"}, 400, "invalid_request", "customer_document"},
		{"bad email", map[string]any{"line_items": li(price, 1), "customer_email": "not-an-email"}, 400, "invalid_request", "customer_email"},
		{"bad phone", map[string]any{"line_items": li(price, 1), "customer_phone": "12"}, 400, "invalid_request", "customer_phone"},
		{"unknown customer", map[string]any{"line_items": li(price, 1), "customer": "cus_nope"}, 404, "resource_missing", "customer"},
		{"unknown discount", map[string]any{"line_items": li(price, 1), "discount": "coupon_x"}, 404, "resource_missing", "discount"},
		{"bad method", map[string]any{"line_items": li(price, 1), "payment_method_types": []string{"cash"}}, 400, "invalid_request", "payment_method_types[0]"},
		{"subscription with pix", map[string]any{"line_items": li(monthly, 1), "payment_method_types": []string{"pix"}}, 400, "invalid_request", "payment_method_types[0]"},
		{"bad collection", map[string]any{"line_items": li(price, 1), "payment_method_collection": "never"}, 400, "invalid_request", "payment_method_collection"},
		{"bad submit type", map[string]any{"line_items": li(price, 1), "submit_type": "buy"}, 400, "invalid_request", "submit_type"},
		{"subscribe in payment mode", map[string]any{"line_items": li(price, 1), "submit_type": "subscribe"}, 400, "invalid_request", "submit_type"},
		{"bad template", map[string]any{"line_items": li(price, 1), "template": "fancy"}, 400, "invalid_request", "template"},
		{"bad colour", map[string]any{"line_items": li(price, 1), "branding": map[string]any{"primary_color": "red"}}, 400, "invalid_request", "branding[primary_color]"},
		{"http logo", map[string]any{"line_items": li(price, 1), "branding": map[string]any{"logo_url": "http://x.example/l.png"}}, 400, "invalid_request", "branding[logo_url]"},
		{"too many instalments", map[string]any{"line_items": li(price, 1), "payment_method_options": map[string]any{"credit_card": map[string]any{"max_installments": 13}}}, 400, "invalid_request", "payment_method_options[credit_card][max_installments]"},
		{"options of a method not offered", map[string]any{"line_items": li(price, 1), "payment_method_types": []string{"pix"}, "payment_method_options": map[string]any{"boleto": map[string]any{"expires_after_days": 5}}}, 400, "invalid_request", "payment_method_options"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			r := e.Do("POST", "/v1/checkout-sessions", e.Test, c.body)
			is.Equal(r.Status, c.status)  // status
			is.Equal(r.ErrCode(), c.code) // code
			is.Equal(r.ErrParam(), c.param)
		})
	}
	is := is.New(t)
	is.Equal(e.payCount(e.Test, "/v1/checkout-sessions"), 0) // nothing was created
}

func TestCheckoutSessionModesAndLiveMode(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	monthly := e.coPrice(e.Test, "Plano", 2990, map[string]any{"interval": "month"})
	setup := e.coPrice(e.Test, "Adesão", 5000, nil)
	r := e.coSession(e.Test, map[string]any{"line_items": []any{map[string]any{"price": monthly, "quantity": 2}, map[string]any{"price": setup}}})
	is.Equal(r.Body["mode"], "subscription") // a recurring price makes a subscription
	is.Equal(r.Body["payment_method_types"], []any{"credit_card"})
	is.Equal(r.Body["total_amount"], float64(2*2990+5000)) // the first period and the one-off item are due now
	is.Equal(dig(r.Body, "line_items.0"), nil)             // (dig does not index arrays)
	items := r.Body["line_items"].([]any)
	is.Equal(dig(items[0].(map[string]any), "price.recurring.interval"), "month")

	trial := e.coPrice(e.Test, "Teste grátis", 4990, map[string]any{"interval": "month", "trial_period_days": 14})
	tr := e.coSession(e.Test, map[string]any{"line_items": []any{map[string]any{"price": trial}}, "payment_method_collection": "if_required"})
	is.Equal(tr.Body["total_amount"], float64(0))
	is.Equal(tr.Body["payment_status"], "no_payment_required")

	free := e.coPrice(e.Test, "Brinde", 0, nil)
	fr := e.coSession(e.Test, map[string]any{"line_items": []any{map[string]any{"price": free}}})
	is.Equal(fr.Body["payment_status"], "no_payment_required")
	is.Equal(fr.Body["mode"], "payment")
	// if_required is a subscription-mode setting: refused, naming it, on a payment session.
	bad := e.Do("POST", "/v1/checkout-sessions", e.Test, map[string]any{"line_items": []any{map[string]any{"price": free}}, "payment_method_collection": "if_required"})
	is.Equal(bad.Status, 400)
	is.Equal(bad.ErrParam(), "payment_method_collection")

	// Live mode before activation: nothing is offered, and confirming is refused.
	livePrice := e.coPrice(e.Live, "Produto", 10000, nil)
	lr := e.coSession(e.Live, map[string]any{"line_items": []any{map[string]any{"price": livePrice}}})
	is.Equal(lr.Body["livemode"], true)
	is.Equal(lr.Body["payment_method_types"], []any{})
	c := e.Do("POST", "/v1/checkout-sessions/"+lr.Str("id")+"/confirm", e.Live, coCard("4242424242424242"))
	is.Equal(c.Status, 409)
	is.Equal(c.ErrCode(), "organization_not_activated")
	is.Equal(c.ErrType(), "invalid_request_error")
	is.True(strings.Contains(c.Body["error"].(map[string]any)["message"].(string), "not ready to accept payments"))
	// Too many instalments is the same 400 as in test mode, even before activation (SPEC 7).
	tooMany := coCard("4242424242424242")
	tooMany["installments"] = 13
	c = e.Do("POST", "/v1/checkout-sessions/"+lr.Str("id")+"/confirm", e.Live, tooMany)
	is.Equal(c.Status, 400)
	is.Equal(c.ErrCode(), "invalid_request")
	is.Equal(c.ErrParam(), "installments")
	testSession := e.coSession(e.Test, map[string]any{"line_items": []any{map[string]any{"price": e.coPrice(e.Test, "Produto", 10000, nil)}}})
	tc := e.Do("POST", "/v1/checkout-sessions/"+testSession.Str("id")+"/confirm", e.Test, tooMany)
	is.Equal(tc.Status, 400)
	is.Equal(tc.Body["error"].(map[string]any)["message"], c.Body["error"].(map[string]any)["message"]) // same message in both environments
	g := e.Do("GET", "/v1/checkout-sessions/"+lr.Str("id"), e.Live, nil)
	is.Equal(g.Body["status"], "open") // nothing changed
	is.Equal(g.Body["payment_intent"], nil)

	// Once active, a new live session offers every method; the old one keeps its frozen snapshot.
	e.setActivation("active")
	lr2 := e.coSession(e.Live, map[string]any{"line_items": []any{map[string]any{"price": livePrice}}})
	is.Equal(lr2.Body["payment_method_types"], []any{"credit_card", "pix", "boleto"})
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+lr.Str("id"), e.Live, nil).Body["payment_method_types"], []any{})
}

func TestCheckoutSessionListAndIsolation(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	a := e.coSimple(e.Test, nil)
	b := e.coSimple(e.Test, nil)
	c := e.coSimple(e.Test, nil)
	is.Equal(e.Do("POST", "/v1/checkout-sessions/"+a.Str("id")+"/expire", e.Test, nil).Status, 200)
	pay := e.Do("POST", "/v1/checkout-sessions/"+b.Str("id")+"/confirm", e.Test, coCard("4242424242424242"))
	is.Equal(pay.Status, 200)

	list := e.Do("GET", "/v1/checkout-sessions", e.Test, nil)
	is.Equal(list.Status, 200)
	is.Equal(list.Body["url"], "/v1/checkout-sessions")
	is.Equal(list.IDs(), []string{c.Str("id"), b.Str("id"), a.Str("id")}) // newest first
	is.Equal(e.Do("GET", "/v1/checkout-sessions?status=expired", e.Test, nil).IDs(), []string{a.Str("id")})
	is.Equal(e.Do("GET", "/v1/checkout-sessions?status=complete", e.Test, nil).IDs(), []string{b.Str("id")})
	is.Equal(e.Do("GET", "/v1/checkout-sessions?payment_status=paid", e.Test, nil).IDs(), []string{b.Str("id")})
	is.Equal(e.Do("GET", "/v1/checkout-sessions?payment_status=unpaid", e.Test, nil).IDs(), []string{c.Str("id"), a.Str("id")})
	is.Equal(e.Do("GET", "/v1/checkout-sessions?customer="+pay.Str("customer"), e.Test, nil).IDs(), []string{b.Str("id")})
	is.Equal(e.Do("GET", "/v1/checkout-sessions?limit=1&starting_after="+c.Str("id"), e.Test, nil).IDs(), []string{b.Str("id")})
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	is.Equal(len(e.Do("GET", "/v1/checkout-sessions?created_at[gte]="+future, e.Test, nil).IDs()), 0)
	is.Equal(len(e.Do("GET", "/v1/checkout-sessions?created_at[lte]="+future, e.Test, nil).IDs()), 3)
	is.Equal(e.Do("GET", "/v1/checkout-sessions?status=paid", e.Test, nil).ErrParam(), "status")
	is.Equal(e.Do("GET", "/v1/checkout-sessions?payment_status=x", e.Test, nil).ErrParam(), "payment_status")

	// Another environment or organization sees nothing and changes nothing.
	_, other := e.NewOrg("Outra", false)
	for _, tok := range []string{e.Live, other} {
		is.Equal(e.Do("GET", "/v1/checkout-sessions/"+c.Str("id"), tok, nil).Status, 404)
		is.Equal(e.Do("POST", "/v1/checkout-sessions/"+c.Str("id")+"/expire", tok, nil).Status, 404)
		is.Equal(e.Do("POST", "/v1/checkout-sessions/"+c.Str("id")+"/confirm", tok, coCard("4242424242424242")).Status, 404)
		is.Equal(len(e.Do("GET", "/v1/checkout-sessions", tok, nil).IDs()), 0)
	}
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+c.Str("id"), e.Test, nil).Body["status"], "open")
}

func TestCheckoutSessionExpiry(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	s := e.coSimple(e.Test, nil)
	id := s.Str("id")
	// A declined attempt creates the session's payment intent; expiry cancels it.
	d := e.Do("POST", "/v1/checkout-sessions/"+id+"/confirm", e.Test, coCard("4000000000000002"))
	is.Equal(d.Status, 402)
	pi := digStr(d.Body, "error.payment_intent.id")
	is.True(pi != "")

	e.Clock.Advance(24*time.Hour - time.Minute)
	is.NoErr(e.Jobs.RunDue(t.Context()))
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+id, e.Test, nil).Body["status"], "open") // not yet

	e.Clock.Advance(2 * time.Minute)
	is.NoErr(e.Jobs.RunDue(t.Context()))
	g := e.Do("GET", "/v1/checkout-sessions/"+id, e.Test, nil)
	is.Equal(g.Body["status"], "expired")
	is.Equal(e.Do("GET", "/v1/payment-intents/"+pi, e.Test, nil).Body["status"], "canceled") // the associated intent is canceled
	evs := e.coEvents(e.Test, "checkout.session.expired", id)
	is.Equal(len(evs), 1)
	is.Equal(digStr(evs[0], "data.object.status"), "expired")
	is.Equal(digStr(evs[0], "data.previous_attributes.status"), "open")
	is.Equal(digStr(evs[0], "data.object.metadata.order"), "A-1")
	is.Equal(len(e.coEvents(e.Test, "payment_intent.canceled", pi)), 1)

	// Terminal: the job runs again without a second event; nothing reopens it.
	is.NoErr(e.Jobs.RunDue(t.Context()))
	is.Equal(len(e.coEvents(e.Test, "checkout.session.expired", id)), 1)
	c := e.Do("POST", "/v1/checkout-sessions/"+id+"/confirm", e.Test, coCard("4242424242424242"))
	is.Equal(c.Status, 409)
	is.Equal(c.ErrCode(), "resource_state_conflict")
	is.Equal(e.Do("POST", "/v1/checkout-sessions/"+id+"/expire", e.Test, nil).Status, 409)

	// The expire endpoint on an open session, and a confirmation past 24 h before the job ran.
	s2 := e.coSimple(e.Test, nil)
	x := e.Do("POST", "/v1/checkout-sessions/"+s2.Str("id")+"/expire", e.Test, nil)
	is.Equal(x.Status, 200)
	is.Equal(x.Body["status"], "expired")
	// Expired early, it keeps its original expires_at (still in the future): the 409 does not
	// claim it expired then.
	again := e.Do("POST", "/v1/checkout-sessions/"+s2.Str("id")+"/confirm", e.Test, coCard("4242424242424242"))
	is.Equal(again.Status, 409)
	is.True(!strings.Contains(digStr(again.Body, "error.message"), x.Str("expires_at")))
	s3 := e.coSimple(e.Test, nil)
	e.Clock.Advance(25 * time.Hour)
	late := e.Do("POST", "/v1/checkout-sessions/"+s3.Str("id")+"/confirm", e.Test, coCard("4242424242424242"))
	is.Equal(late.Status, 409)
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+s3.Str("id"), e.Test, nil).Body["status"], "expired")
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+s3.Str("id"), e.Test, nil).Body["payment_intent"], nil) // nothing was charged
}

func TestCheckoutConfirmCard(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	s := e.coSimple(e.Test, map[string]any{"success_url": "https://loja.example/ok"})
	id := s.Str("id")

	// A decline answers 402 with the code and the intent, and leaves the session open.
	d := e.Do("POST", "/v1/checkout-sessions/"+id+"/confirm", e.Test, coCard("4000000000009995"))
	is.Equal(d.Status, 402)
	is.Equal(d.ErrCode(), "insufficient_funds")
	is.Equal(d.ErrType(), "card_error")
	is.Equal(digStr(d.Body, "error.payment_intent.status"), "requires_payment_method")
	is.Equal(digStr(d.Body, "error.payment_intent.last_payment_error.code"), "insufficient_funds")
	is.Equal(digNum(d.Body, "error.payment_intent.amount"), int64(10000)) // the session's total
	g := e.Do("GET", "/v1/checkout-sessions/"+id, e.Test, nil)
	is.Equal(g.Body["status"], "open")
	is.Equal(g.Body["customer_email"], "ana@example.com") // updated as the buyer fills the form
	piID := g.Str("payment_intent")
	is.Equal(piID, digStr(d.Body, "error.payment_intent.id"))

	// Instalments above the session's ceiling are refused before any charge.
	three := coCard("4242424242424242")
	three["installments"] = 13
	is.Equal(e.Do("POST", "/v1/checkout-sessions/"+id+"/confirm", e.Test, three).ErrParam(), "installments")
	// A small sale (R$ 10,00: at most 2) names its own ceiling, whether 3 or 13 are asked for.
	smallPrice := e.coPrice(e.Test, "Chaveiro", 1000, nil)
	small := e.coSession(e.Test, map[string]any{"line_items": []any{map[string]any{"price": smallPrice, "quantity": 1}}})
	for _, n := range []int{3, 13} {
		body := coCard("4242424242424242")
		body["installments"] = n
		r := e.Do("POST", "/v1/checkout-sessions/"+small.Str("id")+"/confirm", e.Test, body)
		is.Equal(r.Status, 400)
		is.Equal(r.ErrParam(), "installments")
		is.True(strings.Contains(digStr(r.Body, "error.message"), "(2)"))
	}

	// An approved card completes the session, paid, with the same intent.
	three["installments"] = 3
	c := e.Do("POST", "/v1/checkout-sessions/"+id+"/confirm", e.Test, three)
	is.Equal(c.Status, 200)
	is.Equal(c.Body["status"], "complete")
	is.Equal(c.Body["payment_status"], "paid")
	is.Equal(c.Str("payment_intent"), piID)
	is.True(strings.HasPrefix(c.Str("customer"), "cus_"))
	is.Equal(dig(c.Body, "payment_data.type"), "credit_card")
	is.Equal(dig(c.Body, "payment_data.credit_card.last4"), "4242")
	is.Equal(dig(c.Body, "payment_data.credit_card.brand"), "visa")
	is.Equal(dig(c.Body, "payment_data.credit_card.installments"), float64(3))
	pi := e.Do("GET", "/v1/payment-intents/"+piID, e.Test, nil)
	is.Equal(pi.Body["status"], "succeeded")
	is.Equal(pi.Body["amount"], float64(10000))
	is.Equal(pi.Body["customer"], c.Body["customer"])
	cus := e.Do("GET", "/v1/customers/"+c.Str("customer"), e.Test, nil)
	is.Equal(cus.Body["email"], "ana@example.com")
	is.Equal(cus.Body["name"], "Ana Souza")

	evs := e.coEvents(e.Test, "checkout.session.completed", id)
	is.Equal(len(evs), 1)
	is.Equal(digStr(evs[0], "data.object.payment_status"), "paid")
	is.Equal(digStr(evs[0], "data.previous_attributes.status"), "open")
	is.Equal(digStr(evs[0], "data.previous_attributes.payment_status"), "unpaid")
	is.Equal(dig(evs[0], "data.previous_attributes.customer"), nil)
	_, hasCustomer := dig(evs[0], "data.previous_attributes").(map[string]any)["customer"]
	is.True(hasCustomer) // customer changed from null
	is.Equal(digStr(evs[0], "data.object.metadata.order"), "A-1")

	// Complete is final: another confirmation is a 409 and charges nothing.
	again := e.Do("POST", "/v1/checkout-sessions/"+id+"/confirm", e.Test, coCard("4242424242424242"))
	is.Equal(again.Status, 409)
	is.Equal(e.payCount(e.Test, "/v1/charges?payment_intent="+piID), 2) // the decline and the success
	is.Equal(e.Do("POST", "/v1/checkout-sessions/"+id+"/expire", e.Test, nil).Status, 409)
}

func TestCheckoutConfirmWithClientSecret(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	s := e.coSimple(e.Test, nil)
	id := s.Str("id")
	body := coCard("4242424242424242")

	body["client_secret"] = strings.Repeat("0", 64)
	bad := e.Do("POST", "/v1/checkout-sessions/"+id+"/confirm", "", body)
	is.Equal(bad.Status, 401) // a wrong client_secret
	is.Equal(bad.ErrCode(), "authentication_failed")
	none := e.Do("POST", "/v1/checkout-sessions/"+id+"/confirm", "", coCard("4242424242424242"))
	is.Equal(none.Status, 401)
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+id, e.Test, nil).Body["payment_intent"], nil) // nothing changed

	// An API key with a mismatching secret is refused too.
	withKey := e.Do("POST", "/v1/checkout-sessions/"+id+"/confirm", e.Test, body)
	is.Equal(withKey.Status, 400)
	is.Equal(withKey.ErrParam(), "client_secret")

	body["client_secret"] = s.Str("client_secret")
	ok := e.Do("POST", "/v1/checkout-sessions/"+id+"/confirm", "", body)
	is.Equal(ok.Status, 200)
	is.Equal(ok.Body["status"], "complete")
	is.Equal(ok.Body["payment_status"], "paid")
}

func TestCheckoutAsyncPix(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	confirm := func(email string) (resp, string) {
		s := e.coSimple(e.Test, nil)
		r := e.Do("POST", "/v1/checkout-sessions/"+s.Str("id")+"/confirm", e.Test, map[string]any{"payment_method_type": "pix", "customer_email": email, "customer_name": "Ana"})
		return r, s.Str("id")
	}

	// Default rule: waits; the session is complete and unpaid with the PIX to pay.
	r, id := confirm("ana@example.com")
	is.Equal(r.Status, 200)
	is.Equal(r.Body["status"], "complete")
	is.Equal(r.Body["payment_status"], "unpaid") // PIX stays unpaid until it settles
	is.Equal(dig(r.Body, "payment_data.type"), "pix")
	code := digStr(r.Body, "payment_data.pix.code")
	is.NoErr(pix.Verify(code)) // a valid BR Code with a correct CRC
	parsed, err := pix.Parse(code)
	is.NoErr(err)
	is.Equal(parsed.Amount, int64(10000))
	is.True(digStr(r.Body, "payment_data.pix.expires_at") != "")
	is.Equal(len(e.coEvents(e.Test, "checkout.session.completed", id)), 1)
	h := e.Do("POST", "/v1/test-helpers/checkout-sessions/"+id+"/succeed", e.Test, nil)
	is.Equal(h.Status, 200)
	is.Equal(h.Body["object"], "payment_intent") // the helper returns the updated intent
	is.Equal(h.Body["status"], "succeeded")
	g := e.Do("GET", "/v1/checkout-sessions/"+id, e.Test, nil)
	is.Equal(g.Body["payment_status"], "paid")
	evs := e.coEvents(e.Test, "checkout.session.async.payment.succeeded", id)
	is.Equal(len(evs), 1)
	is.Equal(digStr(evs[0], "data.previous_attributes.payment_status"), "unpaid")
	is.Equal(digStr(evs[0], "data.object.metadata.order"), "A-1")

	// succeed_delayed: paid after the simulated delay, through the job.
	r, id = confirm("succeed_delayed@example.com")
	is.Equal(r.Body["payment_status"], "unpaid")
	e.Clock.Advance(3*time.Minute + time.Second)
	is.NoErr(e.Jobs.RunDue(t.Context()))
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+id, e.Test, nil).Body["payment_status"], "paid")
	is.Equal(len(e.coEvents(e.Test, "checkout.session.async.payment.succeeded", id)), 1)

	// expire_delayed: fails after the delay; payment_status stays unpaid.
	r, id = confirm("expire_delayed@example.com")
	e.Clock.Advance(3*time.Minute + time.Second)
	is.NoErr(e.Jobs.RunDue(t.Context()))
	g = e.Do("GET", "/v1/checkout-sessions/"+id, e.Test, nil)
	is.Equal(g.Body["status"], "complete")
	is.Equal(g.Body["payment_status"], "unpaid")
	is.Equal(len(e.coEvents(e.Test, "checkout.session.async.payment.failed", id)), 1)

	// succeed_immediately: paid at once.
	r, _ = confirm("succeed_immediately@example.com")
	is.Equal(r.Body["payment_status"], "paid")

	// expire_immediately: the attempt fails at once; the session stays open for another try.
	r, id = confirm("expire_immediately@example.com")
	is.Equal(r.Status, 402)
	is.Equal(r.ErrCode(), "payment_intent_payment_attempt_expired")
	is.Equal(digStr(r.Body, "error.payment_intent.status"), "requires_payment_method")
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+id, e.Test, nil).Body["status"], "open")
	again := e.Do("POST", "/v1/checkout-sessions/"+id+"/confirm", e.Test, map[string]any{"payment_method_type": "pix", "customer_email": "pending@example.com"})
	is.Equal(again.Status, 200)
	is.Equal(again.Body["status"], "complete")

	// The session's intent is paid through its session only: confirming it directly would leave
	// an open session with a paid intent (and no checkout.session.* event).
	r, id = confirm("expire_immediately@example.com")
	piID := digStr(r.Body, "error.payment_intent.id")
	d := e.Do("POST", "/v1/payment-intents/"+piID+"/confirm", e.Test, map[string]any{"payment_method_type": "pix", "customer_email": "succeed_immediately@example.com"})
	is.Equal(d.Status, 409)
	is.Equal(d.ErrCode(), "payment_intent_unexpected_state")
	is.Equal(e.Do("GET", "/v1/payment-intents/"+piID, e.Test, nil).Body["status"], "requires_payment_method")
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+id, e.Test, nil).Body["status"], "open")
	// Nor can what it charges change under the session; description and metadata can.
	u := e.Do("POST", "/v1/payment-intents/"+piID, e.Test, map[string]any{"amount": 100})
	is.Equal(u.Status, 400)
	is.Equal(u.ErrParam(), "amount")
	is.Equal(e.Do("POST", "/v1/payment-intents/"+piID, e.Test, map[string]any{"metadata": map[string]any{"k": "v"}}).Status, 200)
	paid := e.Do("POST", "/v1/checkout-sessions/"+id+"/confirm", e.Test, map[string]any{"payment_method_type": "pix", "customer_email": "succeed_immediately@example.com"})
	is.Equal(paid.Body["payment_status"], "paid")
	is.Equal(e.Do("GET", "/v1/payment-intents/"+piID, e.Test, nil).Body["amount"], float64(10000))
}

func TestCheckoutAsyncBoleto(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	s := e.coSimple(e.Test, map[string]any{"payment_method_options": map[string]any{"boleto": map[string]any{"expires_after_days": 5}}})
	id := s.Str("id")
	// Boleto requires a valid document and address, in test mode too.
	nodoc := coBoleto("ana@example.com")
	delete(nodoc, "customer_document")
	is.Equal(e.Do("POST", "/v1/checkout-sessions/"+id+"/confirm", e.Test, nodoc).ErrParam(), "customer_document")
	baddoc := coBoleto("ana@example.com")
	baddoc["customer_document"] = "111.111.111-11"
	is.Equal(e.Do("POST", "/v1/checkout-sessions/"+id+"/confirm", e.Test, baddoc).ErrParam(), "customer_document")
	badaddr := coBoleto("ana@example.com")
	badaddr["billing_address"].(map[string]any)["state"] = "XX"
	is.Equal(e.Do("POST", "/v1/checkout-sessions/"+id+"/confirm", e.Test, badaddr).ErrParam(), "billing_address[state]")
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+id, e.Test, nil).Body["status"], "open")

	r := e.Do("POST", "/v1/checkout-sessions/"+id+"/confirm", e.Test, coBoleto("ana@example.com"))
	is.Equal(r.Status, 200)
	is.Equal(r.Body["status"], "complete")
	is.Equal(r.Body["payment_status"], "unpaid")
	is.Equal(dig(r.Body, "payment_data.type"), "boleto")
	line := digStr(r.Body, "payment_data.boleto.digitable_line")
	is.NoErr(boleto.ValidateLine(line))
	is.NoErr(boleto.ValidateBarcode(digStr(r.Body, "payment_data.boleto.barcode")))
	is.NoErr(pix.Verify(digStr(r.Body, "payment_data.boleto.pix_code"))) // boleto híbrido: the PIX of the same charge
	due := digStr(r.Body, "payment_data.boleto.due_date")
	is.Equal(due, time.Now().UTC().AddDate(0, 0, 5).Format("2006-01-02")) // expires_after_days
	fields, err := boleto.ParseBarcode(digStr(r.Body, "payment_data.boleto.barcode"))
	is.NoErr(err)
	is.Equal(fields.Amount, int64(10000))
	is.Equal(r.Body["customer_document"], "52998224725")

	h := e.Do("POST", "/v1/test-helpers/checkout-sessions/"+id+"/fail", e.Test, nil)
	is.Equal(h.Status, 200)
	is.Equal(h.Body["status"], "requires_payment_method")
	is.Equal(digStr(h.Body, "last_payment_error.code"), "payment_intent_payment_attempt_expired")
	g := e.Do("GET", "/v1/checkout-sessions/"+id, e.Test, nil)
	is.Equal(g.Body["payment_status"], "unpaid")
	is.Equal(len(e.coEvents(e.Test, "checkout.session.async.payment.failed", id)), 1)
	is.Equal(e.Do("POST", "/v1/test-helpers/checkout-sessions/"+id+"/succeed", e.Test, nil).Status, 409) // nothing waits any more

	// A regenerated boleto is the one the session (and its hosted page) shows and is paid.
	rb := e.Do("POST", "/v1/payment-intents/"+h.Str("id")+"/regenerate-boleto", e.Test, map[string]any{})
	is.Equal(rb.Status, 200)
	is.Equal(rb.Body["status"], "pending")
	newLine := digStr(rb.Body, "next_action.boleto.digitable_line")
	is.True(newLine != line)
	g = e.Do("GET", "/v1/checkout-sessions/"+id, e.Test, nil)
	is.Equal(digStr(g.Body, "payment_data.boleto.digitable_line"), newLine)
	is.Equal(digStr(g.Body, "payment_data.boleto.barcode"), digStr(rb.Body, "next_action.boleto.barcode"))
	is.Equal(e.Do("POST", "/v1/test-helpers/checkout-sessions/"+id+"/succeed", e.Test, nil).Status, 200)
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+id, e.Test, nil).Body["payment_status"], "paid")
	is.Equal(len(e.coEvents(e.Test, "checkout.session.async.payment.succeeded", id)), 1)
}

func TestCheckoutTestHelpers(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	e.setActivation("active")
	live := e.coSession(e.Live, map[string]any{"line_items": []any{map[string]any{"price": e.coPrice(e.Live, "P", 1000, nil)}}})
	for _, action := range []string{"succeed", "fail", "expire"} {
		r := e.Do("POST", "/v1/test-helpers/checkout-sessions/"+live.Str("id")+"/"+action, e.Live, nil)
		is.Equal(r.ErrCode(), "testmode_required") // test keys only
	}
	is.Equal(e.Do("POST", "/v1/test-helpers/checkout-sessions/cs_nope/succeed", e.Test, nil).Status, 404)

	// succeed on an open session: paid, completed, the intent succeeded.
	s := e.coSimple(e.Test, map[string]any{"customer_email": "ana@example.com"})
	r := e.Do("POST", "/v1/test-helpers/checkout-sessions/"+s.Str("id")+"/succeed", e.Test, nil)
	is.Equal(r.Status, 200)
	is.Equal(r.Body["object"], "payment_intent")
	is.Equal(r.Body["status"], "succeeded")
	g := e.Do("GET", "/v1/checkout-sessions/"+s.Str("id"), e.Test, nil)
	is.Equal(g.Body["status"], "complete")
	is.Equal(g.Body["payment_status"], "paid")
	is.Equal(g.Str("payment_intent"), r.Str("id"))
	completed := e.coEvents(e.Test, "checkout.session.completed", s.Str("id"))
	is.Equal(len(completed), 1)
	is.Equal(len(e.coEvents(e.Test, "payment_intent.succeeded", r.Str("id"))), 1)
	// The helper's intent is new to the session: previous_attributes says it was null.
	prev := dig(completed[0], "data.previous_attributes").(map[string]any)
	pv, ok := prev["payment_intent"]
	is.True(ok)
	is.Equal(pv, nil)
	is.Equal(len(e.coEvents(e.Test, "payment_intent.updated", r.Str("id"))), 0) // no customer back-fill on a fresh intent

	// fail on an open session: the failure is recorded on the intent; the session stays open.
	f := e.coSimple(e.Test, nil)
	r = e.Do("POST", "/v1/test-helpers/checkout-sessions/"+f.Str("id")+"/fail", e.Test, nil)
	is.Equal(r.Status, 200)
	is.Equal(r.Body["status"], "requires_payment_method")
	is.Equal(digStr(r.Body, "last_payment_error.code"), "generic_decline")
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+f.Str("id"), e.Test, nil).Body["status"], "open")
	is.Equal(len(e.coEvents(e.Test, "payment_intent.payment_failed", r.Str("id"))), 1)

	// fail with PIX only: an expired attempt, still open.
	p := e.coSimple(e.Test, map[string]any{"payment_method_types": []string{"pix"}})
	r = e.Do("POST", "/v1/test-helpers/checkout-sessions/"+p.Str("id")+"/fail", e.Test, nil)
	is.Equal(r.Status, 200)
	is.Equal(r.Body["status"], "requires_payment_method")
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+p.Str("id"), e.Test, nil).Body["status"], "open")
	// ... also when the buyer's or the customer's e-mail would pay a PIX or boleto at once.
	payer := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "succeed_immediately@example.com"})
	for _, extra := range []map[string]any{
		{"payment_method_types": []string{"pix"}, "customer": payer.Str("id")},
		{"payment_method_types": []string{"boleto"}, "customer_email": "succeed_immediately@example.com"},
	} {
		p := e.coSimple(e.Test, extra)
		r = e.Do("POST", "/v1/test-helpers/checkout-sessions/"+p.Str("id")+"/fail", e.Test, nil)
		is.Equal(r.Status, 200)
		is.Equal(r.Body["status"], "requires_payment_method")
		is.Equal(digStr(r.Body, "last_payment_error.code"), "payment_intent_payment_attempt_expired")
		is.Equal(e.Do("GET", "/v1/checkout-sessions/"+p.Str("id"), e.Test, nil).Body["status"], "open")
	}
	// ... and succeed pays even when the buyer's or the customer's e-mail would expire it at once.
	expirer := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "expire_immediately@example.com"})
	for _, extra := range []map[string]any{
		{"payment_method_types": []string{"pix"}, "customer": expirer.Str("id")},
		{"payment_method_types": []string{"pix"}, "customer_email": "expire_immediately@example.com"},
	} {
		p := e.coSimple(e.Test, extra)
		r = e.Do("POST", "/v1/test-helpers/checkout-sessions/"+p.Str("id")+"/succeed", e.Test, nil)
		is.Equal(r.Status, 200)
		is.Equal(r.Body["status"], "succeeded")
		g := e.Do("GET", "/v1/checkout-sessions/"+p.Str("id"), e.Test, nil)
		is.Equal(g.Body["status"], "complete")
		is.Equal(g.Body["payment_status"], "paid")
	}

	// expire: the session expires and its intent is canceled.
	x := e.coSimple(e.Test, nil)
	r = e.Do("POST", "/v1/test-helpers/checkout-sessions/"+x.Str("id")+"/expire", e.Test, nil)
	is.Equal(r.Status, 200)
	is.Equal(r.Body["object"], "payment_intent")
	is.Equal(r.Body["status"], "canceled")
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+x.Str("id"), e.Test, nil).Body["status"], "expired")
	expired := e.coEvents(e.Test, "checkout.session.expired", x.Str("id"))
	is.Equal(len(expired), 1)
	is.Equal(digStr(expired[0], "data.object.payment_intent"), r.Str("id"))
	prev = dig(expired[0], "data.previous_attributes").(map[string]any)
	pv, ok = prev["payment_intent"]
	is.True(ok) // the intent the helper made and canceled is part of the change
	is.Equal(pv, nil)
	is.Equal(prev["status"], "open")
	is.Equal(e.Do("POST", "/v1/test-helpers/checkout-sessions/"+x.Str("id")+"/succeed", e.Test, nil).Status, 409)

	// A session with nothing to pay has no intent to act on.
	free := e.coSession(e.Test, map[string]any{"line_items": []any{map[string]any{"price": e.coPrice(e.Test, "Brinde", 0, nil)}}})
	is.Equal(e.Do("POST", "/v1/test-helpers/checkout-sessions/"+free.Str("id")+"/succeed", e.Test, nil).Status, 409)
}

func TestCheckoutCustomerResolution(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	existing := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "ana@example.com", "name": "Ana"}).Str("id")
	byDoc := e.Do("POST", "/v1/customers", e.Test, map[string]any{"document": "52998224725", "name": "Bia"}).Str("id")
	pay := func(session map[string]any, confirm map[string]any) resp {
		s := e.coSimple(e.Test, session)
		r := e.Do("POST", "/v1/checkout-sessions/"+s.Str("id")+"/confirm", e.Test, confirm)
		is.Equal(r.Status, 200)
		return r
	}
	is.Equal(pay(nil, coCard("4242424242424242")).Str("customer"), existing) // found by e-mail
	withDoc := coCard("4242424242424242")
	withDoc["customer_email"] = "bia@example.com"
	withDoc["customer_document"] = "529.982.247-25"
	is.Equal(pay(nil, withDoc).Str("customer"), byDoc) // found by document
	fresh := coCard("4242424242424242")
	fresh["customer_email"] = "new@example.com"
	r := pay(nil, fresh)
	is.True(r.Str("customer") != existing && r.Str("customer") != byDoc) // created
	is.Equal(len(e.coEvents(e.Test, "customer.created", r.Str("customer"))), 1)
	given := pay(map[string]any{"customer": byDoc}, coCard("4242424242424242"))
	is.Equal(given.Str("customer"), byDoc) // the customer given at creation wins
	s := e.coSimple(e.Test, map[string]any{"customer": existing})
	is.Equal(s.Body["customer_email"], "ana@example.com") // prefilled from the customer

	// Requirements of the session.
	req := e.coSimple(e.Test, map[string]any{"require_document": true, "require_phone": true, "require_billing_address": true})
	rid := req.Str("id")
	is.Equal(e.Do("POST", "/v1/checkout-sessions/"+rid+"/confirm", e.Test, coCard("4242424242424242")).ErrParam(), "customer_document")
	c := coCard("4242424242424242")
	c["customer_document"] = "52998224725"
	is.Equal(e.Do("POST", "/v1/checkout-sessions/"+rid+"/confirm", e.Test, c).ErrParam(), "customer_phone")
	c["customer_phone"] = "+55 11 91234-5678"
	is.Equal(e.Do("POST", "/v1/checkout-sessions/"+rid+"/confirm", e.Test, c).ErrParam(), "billing_address")
	c["billing_address"] = coBoleto("")["billing_address"]
	is.Equal(e.Do("POST", "/v1/checkout-sessions/"+rid+"/confirm", e.Test, c).Status, 200)
}

func TestCheckoutSubscription(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	monthly := e.coPrice(e.Test, "Plano", 2990, map[string]any{"interval": "month"})
	s := e.coSession(e.Test, map[string]any{"line_items": []any{map[string]any{"price": monthly, "quantity": 2}}, "metadata": map[string]string{"plan": "pro"}})
	r := e.Do("POST", "/v1/checkout-sessions/"+s.Str("id")+"/confirm", e.Test, coCard("4242424242424242"))
	is.Equal(r.Status, 200)
	is.Equal(r.Body["payment_status"], "paid")
	subID := r.Str("subscription")
	is.True(strings.HasPrefix(subID, "sub_"))
	sub := e.Do("GET", "/v1/subscriptions/"+subID, e.Test, nil)
	is.Equal(sub.Status, 200)
	is.Equal(sub.Body["status"], "active")
	is.Equal(sub.Body["customer"], r.Body["customer"])
	is.Equal(sub.Body["checkout_session"], s.Str("id"))
	is.Equal(dig(sub.Body, "metadata.plan"), "pro")
	start, _ := time.Parse(time.RFC3339, sub.Str("current_period_start"))
	end, _ := time.Parse(time.RFC3339, sub.Str("current_period_end"))
	is.Equal(end, start.AddDate(0, 1, 0)) // one month later, as an instant (SPEC 9.2)
	is.True(sub.Body["default_payment_method"] != nil)
	pm := e.Do("GET", "/v1/payment-methods/"+sub.Str("default_payment_method"), e.Test, nil)
	is.Equal(pm.Body["customer"], r.Body["customer"]) // the card is saved for renewals
	is.Equal(len(e.coEvents(e.Test, "customer.subscription.created", subID)), 1)
	is.Equal(e.Do("GET", "/v1/subscriptions?customer="+r.Str("customer"), e.Test, nil).IDs(), []string{subID})

	// A trial with collection if_required completes without a payment method.
	trial := e.coPrice(e.Test, "Teste", 4990, map[string]any{"interval": "month", "trial_period_days": 7})
	ts := e.coSession(e.Test, map[string]any{"line_items": []any{map[string]any{"price": trial}}, "payment_method_collection": "if_required"})
	tr := e.Do("POST", "/v1/checkout-sessions/"+ts.Str("id")+"/confirm", e.Test, map[string]any{"customer_email": "t@example.com"})
	is.Equal(tr.Status, 200)
	is.Equal(tr.Body["payment_status"], "no_payment_required")
	tsub := e.Do("GET", "/v1/subscriptions/"+tr.Str("subscription"), e.Test, nil)
	is.Equal(tsub.Body["status"], "trialing")
	tstart, _ := time.Parse(time.RFC3339, tsub.Str("current_period_start"))
	tend, _ := time.Parse(time.RFC3339, tsub.Str("current_period_end"))
	is.Equal(tend.Sub(tstart), 7*24*time.Hour)
	// With collection always, the card is required and saved.
	ta := e.coSession(e.Test, map[string]any{"line_items": []any{map[string]any{"price": trial}}})
	is.Equal(e.Do("POST", "/v1/checkout-sessions/"+ta.Str("id")+"/confirm", e.Test, map[string]any{"customer_email": "t@example.com"}).ErrParam(), "card")
	tc := e.Do("POST", "/v1/checkout-sessions/"+ta.Str("id")+"/confirm", e.Test, coCard("4242424242424242"))
	is.Equal(tc.Status, 200)
	is.True(e.Do("GET", "/v1/subscriptions/"+tc.Str("subscription"), e.Test, nil).Body["default_payment_method"] != nil)

	// A zero-total payment session completes with no_payment_required.
	free := e.coSession(e.Test, map[string]any{"line_items": []any{map[string]any{"price": e.coPrice(e.Test, "Brinde", 0, nil)}}})
	fr := e.Do("POST", "/v1/checkout-sessions/"+free.Str("id")+"/confirm", e.Test, map[string]any{"customer_email": "f@example.com"})
	is.Equal(fr.Status, 200)
	is.Equal(fr.Body["status"], "complete")
	is.Equal(fr.Body["payment_status"], "no_payment_required")
	is.Equal(fr.Body["payment_intent"], nil)
}

func TestCheckoutEventsCarryMetadata(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	for i, flow := range []string{"card", "pix-ok", "pix-fail", "expire"} {
		s := e.coSimple(e.Test, map[string]any{"metadata": map[string]string{"flow": flow, "i": fmt.Sprint(i)}})
		id := s.Str("id")
		switch flow {
		case "card":
			e.Do("POST", "/v1/checkout-sessions/"+id+"/confirm", e.Test, coCard("4242424242424242"))
		case "pix-ok", "pix-fail":
			e.Do("POST", "/v1/checkout-sessions/"+id+"/confirm", e.Test, map[string]any{"payment_method_type": "pix", "customer_email": "a@example.com"})
			action := "succeed"
			if flow == "pix-fail" {
				action = "fail"
			}
			is.Equal(e.Do("POST", "/v1/test-helpers/checkout-sessions/"+id+"/"+action, e.Test, nil).Status, 200)
		case "expire":
			e.Do("POST", "/v1/checkout-sessions/"+id+"/expire", e.Test, nil)
		}
	}
	seen := map[string]int{}
	r := e.Do("GET", "/v1/events?limit=100", e.Test, nil)
	for _, ev := range r.Data() {
		typ := ev["type"].(string)
		if !strings.HasPrefix(typ, "checkout.session.") {
			continue
		}
		seen[typ]++
		is.Equal(digStr(ev, "data.object.object"), "checkout.session") // the full session
		is.True(digStr(ev, "data.object.metadata.flow") != "")         // its metadata, echoed
		if typ != "checkout.session.created" && typ != "checkout.session.async.payment.failed" {
			is.True(dig(ev, "data.previous_attributes") != nil) // changes carry previous_attributes
		}
	}
	for _, typ := range []string{"checkout.session.created", "checkout.session.completed", "checkout.session.expired", "checkout.session.async.payment.succeeded", "checkout.session.async.payment.failed"} {
		is.True(seen[typ] > 0) // every event of SPEC 6.2
	}
}
