package server_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// The hosted invoice's pay form obeys the API's text rules: a holder name or a payer address
// with a bidirectional override or a NUL is refused naming the field, and nothing is paid.
func TestHostedInvoicePayRefusesControlText(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "ana@example.com", "name": "Ana Souza"})
	is.Equal(cus.Status, 200)
	r := e.invCreate(map[string]any{"customer": cus.Str("id"), "collection_method": "send_invoice", "days_until_due": 2,
		"lines": []any{map[string]any{"amount": 10000, "description": "Consultoria"}}})
	f := e.Do("POST", "/v1/invoices/"+r.Str("id")+"/finalize", e.Test, nil)
	is.Equal(f.Status, 200)
	id := f.Str("id")
	b := e.newBrowser(t)
	page := b.get(hostedPath(t, f.Body["hosted_invoice_url"].(string))).hidden()
	secret := page.Get("s")
	for field, form := range map[string]url.Values{
		"holder_name": {"s": {secret}, "method": {"credit_card"}, "number": {"4242424242424242"}, "exp_month": {"12"}, "exp_year": {"2031"}, "cvc": {"123"}, "holder_name": {"Ana \u202eX"}},
		"line1": {"s": {secret}, "method": {"boleto"}, "document": {"529.982.247-25"}, "line1": {"Rua\x00 A"}, "address_number": {"1"}, "neighborhood": {"Centro"},
			"city": {"São Paulo"}, "state": {"SP"}, "postal_code": {"01001-000"}},
	} {
		if tok := page.Get("csrf_token"); tok != "" { // the page's own form token, where it carries one
			form.Set("csrf_token", tok)
		}
		p := b.post("/invoices/"+id+"/pay", form)
		is.Equal(p.Status, 303)
		is.True(strings.Contains(p.Location, "&e=invalid_request&p="+field)) // the page says which field
		inv := e.Do("GET", "/v1/invoices/"+id, e.Test, nil)
		is.Equal(inv.Str("status"), "open")
		is.Equal(inv.Body["payment_intent"], nil) // nothing paid or started
	}
}
