package server_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// hostedPath is the path (with query) of an invoice's hosted URL or PDF URL.
func hostedPath(t *testing.T, u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Path == "" {
		t.Fatalf("bad hosted url %q", u)
	}
	return p.RequestURI()
}

// TestHostedInvoicePage: a finalized invoice has a hosted page and a PDF behind a secret; the
// page renders in the customer's zone and language, shows fine and interest after the due
// instant, and is payable by card, PIX (settled with the sandbox bar) and boleto (a new boleto
// for the updated amount once the invoice accrues a fine).
func TestHostedInvoicePage(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "ana@example.com", "name": "Ana Souza", "document": "529.982.247-25",
		"timezone": "America/Manaus", "address": map[string]any{"line1": "Rua das Flores", "number": "100", "neighborhood": "Centro", "city": "São Paulo", "state": "SP", "postal_code": "01001-000"}})
	is.Equal(cus.Status, 200)
	is.Equal(cus.Str("timezone"), "America/Manaus")
	is.Equal(e.Do("POST", "/v1/customers", e.Test, map[string]any{"timezone": "Mars/Olympus"}).ErrParam(), "timezone")

	mk := func() map[string]any {
		r := e.invCreate(map[string]any{"customer": cus.Str("id"), "collection_method": "send_invoice", "days_until_due": 2, "fine_rate": 200, "interest_rate": 100,
			"lines": []any{map[string]any{"amount": 100000, "description": "Consultoria mensal"}}})
		f := e.Do("POST", "/v1/invoices/"+r.Str("id")+"/finalize", e.Test, nil)
		is.Equal(f.Status, 200)
		return f.Body
	}
	inv := mk()
	id := inv["id"].(string)
	hosted, pdf := inv["hosted_invoice_url"].(string), inv["invoice_pdf"].(string)
	is.True(strings.Contains(hosted, "/invoices/"+id+"?s="))
	b := e.newBrowser(t)

	// The wrong secret, another id: 404 and nothing shown.
	bad := b.get("/invoices/" + id + "?s=0000")
	is.Equal(bad.Status, 404)
	is.True(!strings.Contains(bad.Body, "Consultoria"))
	is.Equal(b.get("/invoices/"+id+"/pdf?s=0000").Status, 404)

	pg := b.get(hostedPath(t, hosted))
	is.Equal(pg.Status, 200)
	is.True(pg.testID("sandbox-banner"))
	is.Equal(pg.textOf("invoice-amount-due"), "R$ 1.000,00")
	is.Equal(pg.textOf("invoice-status"), "Em aberto")
	due, _ := time.Parse(time.RFC3339, inv["due_date"].(string))
	manaus, _ := time.LoadLocation("America/Manaus")
	is.Equal(pg.textOf("invoice-due"), due.In(manaus).Format("02/01/2006 15:04")+" (America/Manaus)")
	is.True(strings.Contains(pg.Body, "529.982.247-25"))
	en := b.get(hostedPath(t, hosted) + "&lang=en")
	is.Equal(en.textOf("invoice-amount-due"), "R$1,000.00")

	// The PDF.
	doc := b.get(hostedPath(t, pdf))
	is.Equal(doc.Status, 200)
	is.Equal(doc.Header.Get("Content-Type"), "application/pdf")
	is.True(strings.HasPrefix(doc.Body, "%PDF-"))

	// Pay by card (declined first, then approved).
	form := url.Values{"s": {pg.hidden().Get("s")}, "method": {"credit_card"}, "number": {"4000000000000002"}, "exp_month": {"12"},
		"exp_year": {"2031"}, "cvc": {"123"}, "holder_name": {"Ana Souza"}}
	r := b.post("/invoices/"+id+"/pay", form)
	is.Equal(r.Status, 303)
	is.True(strings.Contains(r.Location, "&e="))
	is.True(b.get(r.Location).testID("invoice-error"))
	is.Equal(e.Do("GET", "/v1/invoices/"+id, e.Test, nil).Str("status"), "open")
	form.Set("number", "4242424242424242")
	r = b.post("/invoices/"+id+"/pay", form)
	is.Equal(r.Status, 303)
	is.True(!strings.Contains(r.Location, "&e="))
	is.Equal(e.Do("GET", "/v1/invoices/"+id, e.Test, nil).Str("status"), "paid")
	is.Equal(b.get(r.Location).textOf("invoice-status"), "Paga")
	is.Equal(len(e.payEvents(e.Test, "invoice.paid", id)), 1)

	// PIX, settled with the sandbox bar.
	inv = mk()
	id = inv["id"].(string)
	s := hostedPath(t, inv["hosted_invoice_url"].(string))
	secret := b.get(s).hidden().Get("s")
	r = b.post("/invoices/"+id+"/pay", url.Values{"s": {secret}, "method": {"pix"}})
	is.Equal(r.Status, 303)
	pg = b.get(r.Location)
	is.True(pg.testID("invoice-pix"))
	is.True(pg.testID("simulate-payment"))
	r = b.post("/invoices/"+id+"/simulate", url.Values{"s": {secret}, "action": {"payment"}})
	is.Equal(r.Status, 303)
	is.Equal(e.Do("GET", "/v1/invoices/"+id, e.Test, nil).Str("status"), "paid")

	// Boleto; after the due instant the fine and interest are due and a new boleto carries them.
	inv = mk()
	id = inv["id"].(string)
	s = hostedPath(t, inv["hosted_invoice_url"].(string))
	secret = b.get(s).hidden().Get("s")
	r = b.post("/invoices/"+id+"/pay", url.Values{"s": {secret}, "method": {"boleto"}})
	is.Equal(r.Status, 303)
	is.True(b.get(r.Location).testID("invoice-boleto"))
	first := e.Do("GET", "/v1/invoices/"+id, e.Test, nil)
	fpi := e.Do("GET", "/v1/payment-intents/"+first.Str("payment_intent"), e.Test, nil)
	is.Equal(fpi.Num("amount"), int64(100000))
	// The boleto falls due on the invoice's due date and carries the late terms.
	is.Equal(digStr(fpi.Body, "next_action.boleto.due_date"), inv["due_date"].(string)[:10])
	bp := b.get(hostedPath(t, digStr(fpi.Body, "next_action.boleto.url")))
	is.Equal(bp.Status, 200)
	is.True(strings.Contains(bp.Body, "multa de 2% e juros de mora de 1% ao mês"))
	due, _ = time.Parse(time.RFC3339, inv["due_date"].(string))
	e.travel(due.Add(3 * 24 * time.Hour))
	pg = b.get(s)
	is.Equal(pg.textOf("invoice-status"), "Vencida")
	is.Equal(pg.textOf("invoice-fine"), "R$ 20,00")
	is.Equal(pg.textOf("invoice-interest"), "R$ 1,00")
	r = b.post("/invoices/"+id+"/pay", url.Values{"s": {secret}, "method": {"boleto"}})
	is.Equal(r.Status, 303)
	again := e.Do("GET", "/v1/invoices/"+id, e.Test, nil)
	is.True(again.Str("payment_intent") != first.Str("payment_intent"))
	is.Equal(e.Do("GET", "/v1/payment-intents/"+again.Str("payment_intent"), e.Test, nil).Num("amount"), int64(102100))
	is.Equal(e.Do("GET", "/v1/payment-intents/"+first.Str("payment_intent"), e.Test, nil).Str("status"), "canceled")
}

// TestHostedInvoiceBoletoAsksForThePayer: a customer without a CPF/CNPJ or address asking for a
// boleto on the hosted invoice page is asked for them on the page (they are used for this
// boleto, not saved on the customer); a missing or invalid one says which, instead of a generic
// error that retrying cannot fix.
func TestHostedInvoiceBoletoAsksForThePayer(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "ana@example.com", "name": "Ana Souza"}).Str("id")
	r := e.invCreate(map[string]any{"customer": cus, "collection_method": "send_invoice", "days_until_due": 5,
		"lines": []any{map[string]any{"amount": 25000, "description": "Consultoria"}}})
	f := e.Do("POST", "/v1/invoices/"+r.Str("id")+"/finalize", e.Test, nil)
	is.Equal(f.Status, 200)
	id := f.Str("id")
	b := e.newBrowser(t)
	pg := b.get(hostedPath(t, f.Str("hosted_invoice_url")))
	is.True(pg.testID("invoice-boleto-payer"))
	secret := pg.hidden().Get("s")

	res := b.post("/invoices/"+id+"/pay", url.Values{"s": {secret}, "method": {"boleto"}})
	is.Equal(res.Status, 303)
	is.Equal(b.get(res.Location).textOf("invoice-error"), "Para gerar o boleto, informe um CPF ou CNPJ válido.")
	res = b.post("/invoices/"+id+"/pay", url.Values{"s": {secret}, "method": {"boleto"}, "document": {"529.982.247-25"}})
	is.Equal(b.get(res.Location).textOf("invoice-error"), "Para gerar o boleto, informe o endereço completo (rua, número, cidade, UF e CEP).")
	res = b.post("/invoices/"+id+"/pay", url.Values{"s": {secret}, "method": {"boleto"}, "document": {"111.111.111-12"}, "line1": {"Rua das Flores"},
		"address_number": {"100"}, "city": {"São Paulo"}, "state": {"SP"}, "postal_code": {"01001-000"}})
	is.Equal(b.get(res.Location).textOf("invoice-error"), "Para gerar o boleto, informe um CPF ou CNPJ válido.")

	res = b.post("/invoices/"+id+"/pay", url.Values{"s": {secret}, "method": {"boleto"}, "document": {"529.982.247-25"}, "line1": {"Rua das Flores"},
		"address_number": {"100"}, "neighborhood": {"Centro"}, "city": {"São Paulo"}, "state": {"SP"}, "postal_code": {"01001-000"}})
	is.Equal(res.Status, 303)
	is.True(!strings.Contains(res.Location, "e="))
	is.True(b.get(res.Location).testID("invoice-boleto"))
	is.Equal(e.Do("GET", "/v1/customers/"+cus, e.Test, nil).Body["document"], nil) // not saved on the customer
}

// TestHostedInvoicePaymentInProgress: while a card payment of an invoice may still succeed (pending
// at the card network, processing, or authorized and awaiting the merchant's capture) the hosted
// page says a payment is being processed and offers no way to pay again; a payment posted anyway
// (a page loaded before) is refused without the generic "something went wrong". Once the payment
// settles the page shows the invoice paid.
func TestHostedInvoicePaymentInProgress(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "ana@example.com", "name": "Ana Souza"}).Str("id")
	b := e.newBrowser(t)
	for _, number := range []string{"4000009000000433", "4000009000000425", "4000000000003220"} {
		inv := e.invCreate(map[string]any{"customer": cus, "collection_method": "send_invoice", "days_until_due": 2,
			"lines": []any{map[string]any{"amount": 5000, "description": "Mensalidade"}}})
		id := inv.Str("id")
		hosted := e.Do("POST", "/v1/invoices/"+id+"/finalize", e.Test, nil).Str("hosted_invoice_url")
		pg := b.get(hostedPath(t, hosted))
		is.True(pg.testID("invoice-card-form"))
		secret := pg.hidden().Get("s")
		r := b.post("/invoices/"+id+"/pay", url.Values{"s": {secret}, "method": {"credit_card"}, "number": {number}, "exp_month": {"12"},
			"exp_year": {"2031"}, "cvc": {"123"}, "holder_name": {"Ana Souza"}})
		is.Equal(r.Status, 303)
		is.True(!strings.Contains(r.Location, "&e="))
		pg = b.get(r.Location)
		is.True(pg.testID("invoice-in-progress")) // the customer is told the payment is under way
		is.True(!pg.testID("invoice-card-form"))  // and not invited to pay again
		is.True(!pg.testID("invoice-pay-pix"))    // nor by PIX
		is.Equal(pg.textOf("invoice-status"), "Em aberto")

		r = b.post("/invoices/"+id+"/pay", url.Values{"s": {secret}, "method": {"pix"}}) // a page loaded before
		is.Equal(r.Status, 303)
		is.True(strings.Contains(r.Location, "e=resource_state_conflict"))
		pg = b.get(r.Location)
		is.True(pg.testID("invoice-in-progress"))
		is.True(!strings.Contains(pg.Body, "Algo deu errado")) // not a generic error
		en := b.get(r.Location + "&lang=en")
		is.True(strings.Contains(en.textOf("invoice-in-progress"), "being processed"))

		pi := e.Do("GET", "/v1/invoices/"+id, e.Test, nil).Str("payment_intent")
		if number == "4000000000003220" {
			is.Equal(e.Do("POST", "/v1/payment-intents/"+pi+"/capture", e.Test, nil).Status, 200)
		} else {
			is.Equal(e.Do("POST", "/v1/test-helpers/payment-intents/"+pi+"/succeed", e.Test, nil).Status, 200)
		}
		pg = b.get(hostedPath(t, hosted))
		is.Equal(pg.textOf("invoice-status"), "Paga")
		is.True(!pg.testID("invoice-in-progress"))
	}
}
