package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/matryer/is"
)

// TestBrowserHostedInvoice: the hosted invoice page in Chromium, overdue with fine and interest,
// paid by card; screenshots at desktop and phone widths.
func TestBrowserHostedInvoice(t *testing.T) {
	is := is.New(t)
	br := newChrome(t)
	e := newEnv(t)
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "ana@example.com", "name": "Ana Souza", "document": "529.982.247-25"}).Str("id")
	inv := e.invCreate(map[string]any{"customer": cus, "collection_method": "send_invoice", "days_until_due": 3, "fine_rate": 200, "interest_rate": 100,
		"lines": []any{map[string]any{"amount": 19900, "description": "Plano Pro — novembro"}, map[string]any{"amount": 4990, "description": "Usuário adicional"}}})
	f := e.Do("POST", "/v1/invoices/"+inv.Str("id")+"/finalize", e.Test, nil)
	due := f.Time("due_date")
	e.travel(due.Add(5*24*time.Hour + time.Hour))
	br.do("open invoice", chromedp.Navigate(e.URL()+hostedPath(t, f.Str("hosted_invoice_url"))), chromedp.WaitVisible(tid("invoice-amount-due"), chromedp.ByQuery))
	is.True(br.has("sandbox-banner"))
	is.Equal(br.text("invoice-status"), "Vencida")
	is.Equal(br.text("invoice-fine"), "R$ 4,98")
	br.shootAs("invoice-overdue", false)
	br.do("pay by card",
		chromedp.SendKeys(`input[name="number"]`, "4242424242424242", chromedp.ByQuery),
		chromedp.SendKeys(`input[name="exp_month"]`, "12", chromedp.ByQuery),
		chromedp.SendKeys(`input[name="exp_year"]`, "2031", chromedp.ByQuery),
		chromedp.SendKeys(`input[name="cvc"]`, "123", chromedp.ByQuery),
		chromedp.SendKeys(`input[name="holder_name"]`, "ANA SOUZA", chromedp.ByQuery),
		chromedp.Click(tid("invoice-pay-card"), chromedp.ByQuery),
		chromedp.WaitNotPresent(tid("invoice-pay-card"), chromedp.ByQuery), // the paid page has no form
		chromedp.WaitVisible(tid("invoice-status"), chromedp.ByQuery),
	)
	is.Equal(br.text("invoice-status"), "Paga")
	br.shootAs("invoice-paid", false)
	is.Equal(e.Do("GET", "/v1/invoices/"+inv.Str("id"), e.Test, nil).Str("status"), "paid")
}

// TestBrowserHostedInvoicePaymentInProgress: after a card the network has not answered yet, the
// hosted invoice page says the payment is being processed and has no form; screenshots.
func TestBrowserHostedInvoicePaymentInProgress(t *testing.T) {
	is := is.New(t)
	br := newChrome(t)
	e := newEnv(t)
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "ana@example.com", "name": "Ana Souza"}).Str("id")
	inv := e.invCreate(map[string]any{"customer": cus, "collection_method": "send_invoice", "days_until_due": 3,
		"lines": []any{map[string]any{"amount": 19900, "description": "Plano Pro — novembro"}}})
	f := e.Do("POST", "/v1/invoices/"+inv.Str("id")+"/finalize", e.Test, nil)
	br.do("pay by a card left pending", chromedp.Navigate(e.URL()+hostedPath(t, f.Str("hosted_invoice_url"))),
		chromedp.SendKeys(`input[name="number"]`, "4000009000000433", chromedp.ByQuery),
		chromedp.SendKeys(`input[name="exp_month"]`, "12", chromedp.ByQuery),
		chromedp.SendKeys(`input[name="exp_year"]`, "2031", chromedp.ByQuery),
		chromedp.SendKeys(`input[name="cvc"]`, "123", chromedp.ByQuery),
		chromedp.SendKeys(`input[name="holder_name"]`, "ANA SOUZA", chromedp.ByQuery),
		chromedp.Click(tid("invoice-pay-card"), chromedp.ByQuery),
		chromedp.WaitVisible(tid("invoice-in-progress"), chromedp.ByQuery),
	)
	is.True(!br.has("invoice-card-form"))
	is.Equal(br.text("invoice-status"), "Em aberto")
	br.shootAs("invoice-in-progress", false)
}

// TestBrowserHostedInvoiceBoletoPayer: a customer without a CPF/CNPJ or address types them in
// the boleto form of the hosted invoice page and gets the boleto; screenshots of the form.
func TestBrowserHostedInvoiceBoletoPayer(t *testing.T) {
	is := is.New(t)
	br := newChrome(t)
	e := newEnv(t)
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "ana@example.com", "name": "Ana Souza"}).Str("id")
	inv := e.invCreate(map[string]any{"customer": cus, "collection_method": "send_invoice", "days_until_due": 3,
		"lines": []any{map[string]any{"amount": 19900, "description": "Plano Pro — novembro"}}})
	f := e.Do("POST", "/v1/invoices/"+inv.Str("id")+"/finalize", e.Test, nil)
	br.do("open invoice", chromedp.Navigate(e.URL()+hostedPath(t, f.Str("hosted_invoice_url"))), chromedp.WaitVisible(tid("invoice-boleto-payer"), chromedp.ByQuery))
	br.do("fill the payer",
		chromedp.SendKeys(`input[name="document"]`, "529.982.247-25", chromedp.ByQuery),
		chromedp.SendKeys(`input[name="line1"]`, "Rua das Flores", chromedp.ByQuery),
		chromedp.SendKeys(`input[name="address_number"]`, "100", chromedp.ByQuery),
		chromedp.SendKeys(`input[name="state"]`, "SP", chromedp.ByQuery),
		chromedp.SendKeys(`input[name="postal_code"]`, "01001-000", chromedp.ByQuery),
		chromedp.SendKeys(`input[name="neighborhood"]`, "Centro", chromedp.ByQuery),
		chromedp.SendKeys(`input[name="city"]`, "São Paulo", chromedp.ByQuery),
	)
	br.shootAs("invoice-boleto-payer", false)
	br.do("get the boleto", chromedp.Click(tid("invoice-pay-boleto"), chromedp.ByQuery), chromedp.WaitVisible(tid("invoice-boleto"), chromedp.ByQuery))
	is.True(br.has("invoice-boleto"))
}

// TestBrowserCustomerPortal: the portal in Chromium: open the link, cancel at period end, keep
// the subscription, go back to the merchant; screenshots at desktop and phone widths.
func TestBrowserCustomerPortal(t *testing.T) {
	is := is.New(t)
	br := newChrome(t)
	e := newEnv(t)
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "ana@example.com", "name": "Ana Souza"}).Str("id")
	pm := e.subSavedCard(cus, "4242424242424242")
	price := e.coPrice(e.Test, "Plano Pro", 4990, map[string]any{"interval": "month"})
	sub := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pm}).Str("id")
	e.travel(e.sub(sub).Time("current_period_end"))
	ps := e.Do("POST", "/v1/customer-portal-sessions", e.Test, map[string]any{"customer": cus, "return_url": e.URL() + "/healthz"})
	br.do("open portal", chromedp.Navigate(ps.Str("url")), chromedp.WaitVisible(tid("portal-sub-"+sub), chromedp.ByQuery))
	is.Equal(br.text("portal-sub-status-"+sub), "Ativa")
	is.True(strings.Contains(br.text("portal-card"), "4242"))
	br.shootAs("portal", false)
	br.do("cancel at period end", chromedp.Click(tid("portal-cancel-"+sub), chromedp.ByQuery), chromedp.WaitVisible(tid("portal-resume-"+sub), chromedp.ByQuery))
	is.Equal(e.sub(sub).Body["cancel_at_period_end"], true)
	br.shootAs("portal-canceling", false)
	br.do("keep", chromedp.Click(tid("portal-resume-"+sub), chromedp.ByQuery), chromedp.WaitVisible(tid("portal-cancel-"+sub), chromedp.ByQuery))
	is.Equal(e.sub(sub).Body["cancel_at_period_end"], false)
	var loc string
	br.do("return", chromedp.Click(tid("portal-return"), chromedp.ByQuery), chromedp.Sleep(300*time.Millisecond), chromedp.Location(&loc))
	is.True(strings.HasSuffix(loc, "/healthz"))
}
