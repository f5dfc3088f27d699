package server_test

import (
	"bytes"
	"compress/zlib"
	"io"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// pdfText is the uncompressed content of every stream of a PDF (fpdf deflates page contents).
func pdfText(t *testing.T, doc string) string {
	t.Helper()
	var out strings.Builder
	for _, m := range regexp.MustCompile(`(?s)stream\r?\n(.*?)endstream`).FindAllStringSubmatch(doc, -1) {
		r, err := zlib.NewReader(bytes.NewReader([]byte(m[1])))
		if err != nil {
			out.WriteString(m[1])
			continue
		}
		b, _ := io.ReadAll(r)
		out.Write(b)
	}
	return out.String()
}

// TestGeneratedTextsInPortuguese: what troco writes itself into an invoice (proration lines) and
// into its payment (the "Invoice <number>" description) stays English in the API, as Stripe's,
// and is Portuguese on everything a pt-BR customer reads: the hosted invoice page, its PDF, the
// printable boleto, the receipt and boleto e-mails. The English page keeps the English text.
func TestGeneratedTextsInPortuguese(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "ana@example.com", "name": "Ana Souza", "document": "529.982.247-25",
		"address": map[string]any{"line1": "Rua das Flores", "number": "100", "neighborhood": "Centro", "city": "São Paulo", "state": "SP", "postal_code": "01001-000"}}).Str("id")
	pm := e.subSavedCard(cus, "4242424242424242")
	price := e.coPrice(e.Test, "Plano", 3000, map[string]any{"interval": "day", "interval_count": 30})
	sub := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pm})
	id := sub.Str("id")
	e.Clock.Advance(sub.Time("current_period_start").Add(15 * 24 * time.Hour).Sub(e.Clock.Now()))
	changed := e.Clock.Now().UTC()
	is.Equal(e.Do("POST", "/v1/subscriptions/"+id, e.Test, map[string]any{"quantity": 2}).Status, 200)
	e.travel(e.sub(id).Time("current_period_end"))
	inv := e.Do("GET", "/v1/invoices/"+e.sub(id).Str("latest_invoice"), e.Test, nil)
	is.Equal(inv.Str("status"), "paid")
	var descs []string
	for _, l := range inv.Body["lines"].(map[string]any)["data"].([]any) {
		descs = append(descs, l.(map[string]any)["description"].(string))
	}
	day := changed.Format("2006-01-02")
	is.Equal(descs, []string{"2 × Plano", "Unused time on 1 × Plano (from " + day + ")", "Remaining time on 2 × Plano (from " + day + ")"}) // the API: English

	b := e.newBrowser(t)
	pg := b.get(hostedPath(t, inv.Str("hosted_invoice_url")))
	is.Equal(pg.Status, 200)
	ptDay := changed.Format("02/01/2006")
	is.True(strings.Contains(pg.Body, "Tempo não utilizado de 1 × Plano (a partir de "+ptDay+")"))
	is.True(strings.Contains(pg.Body, "Tempo restante de 2 × Plano (a partir de "+ptDay+")"))
	is.True(!strings.Contains(pg.Body, "Unused time") && !strings.Contains(pg.Body, "Remaining time"))
	en := b.get(hostedPath(t, inv.Str("hosted_invoice_url")) + "&lang=en")
	is.True(strings.Contains(en.Body, "Unused time on 1 × Plano (from "+day+")"))

	doc := b.get(hostedPath(t, inv.Str("invoice_pdf")))
	is.Equal(doc.Status, 200)
	text := pdfText(t, doc.Body)
	is.True(strings.Contains(text, "Tempo n\xe3o utilizado de 1 \xd7 Plano")) // cp1252
	is.True(strings.Contains(text, "Tempo restante de 2 \xd7 Plano"))
	is.True(strings.Contains(text, "TESTE"))
	is.True(!strings.Contains(text, "Unused time") && !strings.Contains(text, "TEST \xb7"))

	// The renewal's receipt e-mail (and the receipt page) name the invoice in Portuguese.
	pi := e.Do("GET", "/v1/payment-intents/"+inv.Str("payment_intent"), e.Test, nil)
	is.Equal(pi.Str("description"), "Invoice "+inv.Str("number"))
	var receipt map[string]any
	for _, m := range e.mailbox(e.Test, "to=ana@example.com&kind=receipt&limit=100") {
		if m["related_object"] == pi.Str("latest_charge") {
			receipt = m
		}
	}
	is.True(receipt != nil)
	is.True(strings.Contains(receipt["text"].(string), "Fatura "+inv.Str("number")))
	is.True(!strings.Contains(receipt["text"].(string), "Invoice "))
	ch := e.Do("GET", "/v1/charges/"+pi.Str("latest_charge"), e.Test, nil)
	status, page, _ := e.openPage(t, ch.Str("receipt_url"))
	is.Equal(status, 200)
	is.True(strings.Contains(page, "Fatura "+inv.Str("number")))

	// A boleto for an invoice: "Referente a: Fatura …" on the boleto and in its e-mail.
	manual := e.invCreate(map[string]any{"customer": cus, "collection_method": "send_invoice", "days_until_due": 5,
		"lines": []any{map[string]any{"amount": 25000, "description": "Consultoria"}}})
	f := e.Do("POST", "/v1/invoices/"+manual.Str("id")+"/finalize", e.Test, nil)
	is.Equal(f.Status, 200)
	ip := b.get(hostedPath(t, f.Str("hosted_invoice_url")))
	r := b.postInvoice(f.Str("id"), "pay", url.Values{"s": {ip.hidden().Get("s")}, "method": {"boleto"}})
	is.Equal(r.Status, 303)
	bpi := e.Do("GET", "/v1/payment-intents/"+e.Do("GET", "/v1/invoices/"+f.Str("id"), e.Test, nil).Str("payment_intent"), e.Test, nil)
	is.Equal(bpi.Str("description"), "Invoice "+f.Str("number"))
	bp := b.get(hostedPath(t, digStr(bpi.Body, "next_action.boleto.url")))
	is.Equal(bp.Status, 200)
	is.True(strings.Contains(bp.Body, "Referente a: Fatura "+f.Str("number")))
	is.True(!strings.Contains(bp.Body, "Invoice "))
	mails := e.mailbox(e.Test, "to=ana@example.com&kind=boleto")
	is.Equal(len(mails), 1)
	is.True(strings.Contains(mails[0]["text"].(string), "Fatura "+f.Str("number")))
	is.True(!strings.Contains(mails[0]["text"].(string), "Invoice "))
}
