package server_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

var (
	htmlLink     = regexp.MustCompile(`(?:href|src)="([^"]*)"`)
	relativeText = regexp.MustCompile(`(?m)(?:^|\s)/(?:receipts|invoices|payment-intents|pix|files|mailbox)\b`)
)

// TestEmailLinksAlwaysAbsolute: on a server started without a base URL, every kind of customer
// e-mail (receipt, refund, pix, boleto, invoice, invoice_upcoming, payment_failed,
// subscription_canceled), including those written by jobs (renewals), links only to absolute
// https URLs on the server's listen address, in both the text and the HTML part.
func TestEmailLinksAlwaysAbsolute(t *testing.T) {
	is := is.New(t)
	e := newEnv(t) // no BaseURL
	base := e.URL()
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "links@example.com", "name": "Ana Souza", "document": "529.982.247-25",
		"address": map[string]any{"line1": "Rua das Flores", "number": "100", "neighborhood": "Centro", "city": "São Paulo", "state": "SP", "postal_code": "01001-000"}}).Str("id")

	// receipt and refund
	pi := e.payIntent(e.Test, 5000, map[string]any{"customer": cus}).Str("id")
	is.Equal(e.payConfirm(e.Test, pi, map[string]any{"payment_method_type": "credit_card", "card": payCard("4242424242424242")}).Status, 200)
	is.Equal(e.Do("POST", "/v1/refunds", e.Test, map[string]any{"payment_intent": pi, "amount": 100}).Status, 200)
	// pix and boleto
	for _, m := range []string{"pix", "boleto"} {
		id := e.payIntent(e.Test, 5000, map[string]any{"customer": cus, "payment_method_types": []string{m}}).Str("id")
		is.Equal(e.payConfirm(e.Test, id, map[string]any{"payment_method_type": m}).Status, 200)
	}
	// invoice
	inv := e.invCreate(map[string]any{"customer": cus, "collection_method": "send_invoice", "days_until_due": 3,
		"lines": []any{map[string]any{"amount": 1000, "description": "Serviço"}}}).Str("id")
	is.Equal(e.Do("POST", "/v1/invoices/"+inv+"/finalize", e.Test, nil).Status, 200)
	// a renewal charged by the job (receipt made outside any request), then a declining card:
	// invoice_upcoming, payment_failed, subscription_canceled
	good := e.subSavedCard(cus, "4242424242424242")
	price := e.coPrice(e.Test, "Plano", 2990, map[string]any{"interval": "month"})
	sub := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": good}).Str("id")
	end := e.sub(sub).Time("current_period_end")
	e.travel(end.Add(time.Hour)) // renewed by the job with the good card
	bad := e.subSavedCard(cus, "4000009000000623")
	is.Equal(e.Do("POST", "/v1/subscriptions/"+sub, e.Test, map[string]any{"default_payment_method": bad}).Status, 200)
	end = e.sub(sub).Time("current_period_end")
	e.travel(end.Add(-7*24*time.Hour + time.Hour)) // the upcoming notice
	e.travel(end.Add(8 * 24 * time.Hour))
	is.Equal(e.sub(sub).Str("status"), "canceled")

	mails := e.mailbox(e.Test, "to=links@example.com&limit=100")
	kinds := map[string]int{}
	for _, m := range mails {
		kind := m["kind"].(string)
		kinds[kind]++
		text, html := m["text"].(string), m["html"].(string)
		is.True(!relativeText.MatchString(text)) // no relative link in the text part
		for _, l := range htmlLink.FindAllStringSubmatch(html, -1) {
			u := l[1]
			if strings.HasPrefix(u, "data:") {
				continue
			}
			if !strings.HasPrefix(u, base+"/") {
				t.Errorf("%s e-mail links to %q, not an absolute URL on %s", kind, u, base)
			}
		}
	}
	for _, k := range []string{"receipt", "refund", "pix", "boleto", "invoice", "invoice_upcoming", "payment_failed", "subscription_canceled"} {
		if kinds[k] == 0 {
			t.Errorf("no %s e-mail was sent (kinds: %v)", k, kinds)
		}
	}
	is.True(kinds["receipt"] >= 2) // the renewal's receipt, made by the job, too
}

// TestJobMadeReceiptURLIsAbsolute: a receipt_url made by a job (a renewal) on a server without a
// base URL is absolute on the listen address, like one made in a request.
func TestJobMadeReceiptURLIsAbsolute(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "job@example.com"}).Str("id")
	good := e.subSavedCard(cus, "4242424242424242")
	price := e.coPrice(e.Test, "Plano", 2990, map[string]any{"interval": "month"})
	sub := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": good}).Str("id")
	e.travel(e.sub(sub).Time("current_period_end").Add(time.Hour))
	inv := e.Do("GET", "/v1/invoices/"+e.sub(sub).Str("latest_invoice"), e.Test, nil)
	is.Equal(inv.Str("status"), "paid")
	ch := e.Do("GET", "/v1/charges/"+inv.Str("charge"), e.Test, nil)
	is.True(strings.HasPrefix(ch.Str("receipt_url"), e.URL()+"/receipts/"))
	is.True(strings.HasPrefix(inv.Str("hosted_invoice_url"), e.URL()+"/invoices/"))
}
