package server_test

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/server/boleto"
	"troco/server/domain"
)

// Sandbox e-mails join the isolation suite of isolation_test.go.
func init() {
	isolationResources = append(isolationResources, isoResource{
		name: "emails",
		create: func(t *testing.T, e *testEnv, a isoActor) string {
			cus := mustCreate(t, e, a, "/v1/customers", map[string]any{"email": "iso-mail@example.com"})
			pi := mustCreate(t, e, a, "/v1/payment-intents", map[string]any{"amount": 1000, "customer": cus})
			if r := a.do(e, "POST", "/v1/payment-intents/"+pi+"/confirm", map[string]any{"payment_method_type": "credit_card", "card": payCard("4242424242424242")}); r.Status != 200 {
				t.Fatalf("confirm: %d %s", r.Status, r.Raw)
			}
			r := a.do(e, "GET", "/v1/test-helpers/emails?limit=1", nil)
			if r.Status != 200 || len(r.IDs()) == 0 {
				t.Fatalf("mailbox: %d %s", r.Status, r.Raw)
			}
			return r.IDs()[0]
		},
		get:    "/v1/test-helpers/emails/:id",
		routes: []isoRoute{{"GET", "/v1/test-helpers/emails/:id", nil}},
	})
}

// mailbox lists the sandbox mailbox with query (e.g. "to=a@b.com&kind=receipt").
func (e *testEnv) mailbox(token, query string) []map[string]any {
	e.t.Helper()
	r := e.Do("GET", "/v1/test-helpers/emails?"+query, token, nil)
	if r.Status != 200 {
		e.t.Fatalf("list emails: %d %s", r.Status, r.Raw)
	}
	return r.Data()
}

// openPage fetches a hosted page by absolute URL (or path) without an API key.
func (e *testEnv) openPage(t *testing.T, u string) (int, string, http.Header) {
	t.Helper()
	if strings.HasPrefix(u, "https://") {
		p, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		u = p.RequestURI()
	}
	res, err := e.Client.Get(e.URL() + u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), res.Header
}

func TestEmailReceiptCardInCustomersLanguageAndZone(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "ana@example.com", "name": "Ana Souza",
		"preferred_locales": []string{"en-US", "pt-BR"}, "timezone": "America/New_York"})
	is.Equal(cus.Status, 200)                                        // customer created
	is.Equal(cus.Body["timezone"], "America/New_York")               // timezone shown
	is.Equal(cus.Body["preferred_locales"], []any{"en-US", "pt-BR"}) // preferred_locales shown
	pi := e.payIntent(e.Test, 12345, map[string]any{"customer": cus.Str("id"), "description": "Plano anual"})
	r := e.payConfirm(e.Test, pi.Str("id"), map[string]any{"payment_method_type": "credit_card", "card": payCard("4242424242424242")})
	is.Equal(r.Status, 200) // paid
	ch := e.Do("GET", "/v1/charges/"+digStr(r.Body, "latest_charge"), e.Test, nil)
	receiptURL := ch.Str("receipt_url")
	is.True(strings.Contains(receiptURL, "/receipts/"+ch.Str("id")+"?s=")) // receipt_url is set

	got := e.mailbox(e.Test, "to=ana@example.com&kind=receipt")
	is.Equal(len(got), 1) // one receipt
	m := got[0]
	is.Equal(m["object"], "email")
	is.Equal(m["locale"], "en")                         // preferred_locales picks English
	is.Equal(m["related_object"], ch.Str("id"))         // about the charge
	is.Equal(m["to"], "ana@example.com")                // the customer's address
	is.True(strings.HasPrefix(m["id"].(string), "em_")) // id prefix
	is.True(strings.Contains(m["subject"].(string), "R$123.45"))
	text, html := m["text"].(string), m["html"].(string)
	is.True(strings.Contains(text, "Visa card ending in 4242"))               // method
	is.True(strings.Contains(text, receiptURL))                               // receipt link in the text part
	is.True(strings.Contains(html, "Plano anual"))                            // description
	is.True(strings.Contains(text, " EST") || strings.Contains(text, " EDT")) // New York time

	// The hosted receipt page opens with the signature, and only with it.
	status, page, hdr := e.openPage(t, receiptURL)
	is.Equal(status, 200)
	is.True(strings.Contains(page, "R$123.45"))
	is.True(strings.Contains(page, `data-testid="sandbox-banner"`)) // test mode is marked
	is.True(strings.Contains(hdr.Get("Content-Security-Policy"), "default-src 'none'"))
	status, _, _ = e.openPage(t, "/receipts/"+ch.Str("id")+"?s=forged")
	is.Equal(status, 404) // altered signature
	status, _, _ = e.openPage(t, "/receipts/"+ch.Str("id"))
	is.Equal(status, 404) // no signature

	// One e-mail per event, however often the mailbox is read.
	is.Equal(len(e.mailbox(e.Test, "to=ana@example.com")), 1)

	// A refund sends its own message.
	rf := e.Do("POST", "/v1/refunds", e.Test, map[string]any{"payment_intent": pi.Str("id"), "amount": 2345})
	is.Equal(rf.Status, 200)
	refunds := e.mailbox(e.Test, "kind=refund")
	is.Equal(len(refunds), 1)
	is.Equal(refunds[0]["to"], "ana@example.com")
	is.True(strings.Contains(refunds[0]["text"].(string), "R$23.45"))
	one := e.Do("GET", "/v1/test-helpers/emails/"+refunds[0]["id"].(string), e.Test, nil)
	is.Equal(one.Status, 200)
	is.Equal(one.Str("kind"), "refund")
}

func TestEmailBoletoAndPixDefaultPortuguese(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	pi := e.payIntent(e.Test, 25000, map[string]any{"payment_method_types": []string{"boleto", "pix"}})
	r := e.payConfirm(e.Test, pi.Str("id"), boletoBuyer("joao.boleto@example.com"))
	is.Equal(r.Status, 200)
	line := digStr(r.Body, "next_action.boleto.digitable_line")
	is.True(line != "")
	got := e.mailbox(e.Test, "to=joao.boleto@example.com")
	is.Equal(len(got), 1)
	m := got[0]
	is.Equal(m["kind"], "boleto")
	is.Equal(m["locale"], "pt-BR") // no customer preference: Portuguese
	is.True(strings.Contains(m["subject"].(string), "R$ 250,00"))
	formatted, err := boleto.FormatLine(line)
	is.NoErr(err)
	is.True(strings.Contains(m["text"].(string), formatted))                                // the digitable line, grouped as printed
	is.True(strings.Contains(m["text"].(string), digStr(r.Body, "next_action.boleto.url"))) // the print link
	is.True(strings.Contains(m["html"].(string), `data-testid="email-code"`))               // the line to copy

	pix := e.payIntent(e.Test, 9990, map[string]any{"payment_method_types": []string{"pix"}})
	r = e.payConfirm(e.Test, pix.Str("id"), map[string]any{"payment_method_type": "pix", "customer_email": "maria.pix@example.com"})
	is.Equal(r.Status, 200)
	code := digStr(r.Body, "next_action.pix.code")
	got = e.mailbox(e.Test, "to=maria.pix@example.com&kind=pix")
	is.Equal(len(got), 1)
	is.True(strings.Contains(got[0]["text"].(string), code)) // the copia e cola
	// The filter on kind is exact and validated.
	is.Equal(len(e.mailbox(e.Test, "to=maria.pix@example.com&kind=receipt")), 0)
	bad := e.Do("GET", "/v1/test-helpers/emails?kind=postcard", e.Test, nil)
	is.Equal(bad.Status, 400)
	is.Equal(bad.ErrParam(), "kind")

	// Settling the PIX sends the receipt.
	ok := e.Do("POST", "/v1/test-helpers/payment-intents/"+pix.Str("id")+"/succeed", e.Test, nil)
	is.Equal(ok.Status, 200)
	rec := e.mailbox(e.Test, "to=maria.pix@example.com&kind=receipt")
	is.Equal(len(rec), 1)
	is.True(strings.Contains(rec[0]["text"].(string), "PIX"))
}

func TestEmailInvoiceSentAndPaymentFailed(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.invCustomer("financeiro@cliente.com.br")
	inv := e.invCreate(map[string]any{"customer": cus, "collection_method": "send_invoice", "days_until_due": 10,
		"lines": []any{map[string]any{"amount": 50000, "description": "Consultoria"}}})
	f := e.Do("POST", "/v1/invoices/"+inv.Str("id")+"/finalize", e.Test, nil)
	is.Equal(f.Status, 200)
	got := e.mailbox(e.Test, "to=financeiro@cliente.com.br&kind=invoice")
	is.Equal(len(got), 1)
	is.True(strings.Contains(got[0]["text"].(string), f.Str("number"))) // the invoice number
	is.True(strings.Contains(got[0]["subject"].(string), "R$ 500,00"))
	is.Equal(got[0]["related_object"], inv.Str("id"))

	// A declined payment of an automatically charged invoice tells the customer.
	pm := e.invSavedCard(cus, "4000009000000623") // declines when reused
	inv2 := e.invCreate(map[string]any{"customer": cus, "collection_method": "charge_automatically",
		"lines": []any{map[string]any{"amount": 7000, "description": "Mensalidade"}}})
	is.Equal(e.Do("POST", "/v1/invoices/"+inv2.Str("id")+"/finalize", e.Test, nil).Status, 200)
	p := e.Do("POST", "/v1/invoices/"+inv2.Str("id")+"/pay", e.Test, map[string]any{"payment_method": pm})
	is.Equal(p.Status, 402) // declined
	failed := e.mailbox(e.Test, "kind=payment_failed")
	is.Equal(len(failed), 1)
	is.True(strings.Contains(failed[0]["text"].(string), "R$ 70,00"))
	// charge_automatically invoices send no "invoice" message.
	is.Equal(len(e.mailbox(e.Test, "kind=invoice")), 1)
}

func TestEmailSkippedAndSettings(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	// A customer without an address: the payment succeeds, the message is recorded as skipped.
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"name": "Sem E-mail"})
	pi := e.payIntent(e.Test, 1000, map[string]any{"customer": cus.Str("id")})
	r := e.payConfirm(e.Test, pi.Str("id"), map[string]any{"payment_method_type": "credit_card", "card": payCard("4242424242424242")})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "succeeded")  // payment unaffected
	is.Equal(len(e.mailbox(e.Test, "")), 0) // nothing sent
	skipped := e.mailbox(e.Test, "status=skipped")
	is.Equal(len(skipped), 1)
	is.Equal(skipped[0]["skip_reason"], "no_email_address")

	// An address troco will not send to (a quoted local part): skipped, recorded, payment unaffected.
	odd := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": `ana"x@example.com`})
	is.Equal(odd.Status, 200)
	pi = e.payIntent(e.Test, 1000, map[string]any{"customer": odd.Str("id")})
	r = e.payConfirm(e.Test, pi.Str("id"), map[string]any{"payment_method_type": "credit_card", "card": payCard("4242424242424242")})
	is.Equal(r.Str("status"), "succeeded")
	skipped = e.mailbox(e.Test, "status=skipped")
	is.Equal(len(skipped), 2)
	is.Equal(skipped[0]["skip_reason"], "invalid_email_address")
	is.Equal(skipped[0]["to"], `ana"x@example.com`)

	// The organization turns receipts off; other kinds stay on.
	bad := e.Do("POST", "/v1/organizations/"+e.Org.ID, e.Test, map[string]any{"email_settings": map[string]any{"postcard": true}})
	is.Equal(bad.Status, 400)
	is.Equal(bad.ErrParam(), "email_settings[postcard]")
	up := e.Do("POST", "/v1/organizations/"+e.Org.ID, e.Test, map[string]any{"email_settings": map[string]any{"receipt": false}})
	is.Equal(up.Status, 200)
	is.Equal(dig(up.Body, "email_settings.receipt"), false)
	is.Equal(dig(up.Body, "email_settings.refund"), true)
	c2 := e.payCustomer(e.Test, "quiet@example.com")
	pi = e.payIntent(e.Test, 1000, map[string]any{"customer": c2})
	is.Equal(e.payConfirm(e.Test, pi.Str("id"), map[string]any{"payment_method_type": "credit_card", "card": payCard("4242424242424242")}).Status, 200)
	is.Equal(len(e.mailbox(e.Test, "to=quiet@example.com")), 0)
	off := e.mailbox(e.Test, "status=skipped&kind=receipt")
	is.Equal(len(off), 3)
	is.Equal(off[0]["skip_reason"], "kind_disabled")
	is.Equal(e.Do("POST", "/v1/refunds", e.Test, map[string]any{"payment_intent": pi.Str("id")}).Status, 200)
	is.Equal(len(e.mailbox(e.Test, "to=quiet@example.com&kind=refund")), 1) // still on
}

func TestEmailMailboxIsolation(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	other, otherKey := e.NewOrg("Outra Loja", false)
	cus := e.payCustomer(e.Test, "private@example.com")
	pi := e.payIntent(e.Test, 1000, map[string]any{"customer": cus})
	is.Equal(e.payConfirm(e.Test, pi.Str("id"), map[string]any{"payment_method_type": "credit_card", "card": payCard("4242424242424242")}).Status, 200)
	mine := e.mailbox(e.Test, "to=private@example.com")
	is.Equal(len(mine), 1)
	id := mine[0]["id"].(string)

	is.Equal(len(e.mailbox(otherKey, "to=private@example.com")), 0) // another organization sees nothing
	is.Equal(e.Do("GET", "/v1/test-helpers/emails/"+id, otherKey, nil).Status, 404)
	live := e.Do("GET", "/v1/test-helpers/emails", e.Live, nil)
	is.Equal(live.Status, 403) // test keys only
	is.Equal(live.ErrCode(), "testmode_required")

	// The hosted mailbox: a signed link per organization.
	link := e.Do("GET", "/v1/test-helpers/mailbox", e.Test, nil)
	is.Equal(link.Status, 200)
	u := link.Str("url")
	status, page, _ := e.openPage(t, u)
	is.Equal(status, 200)
	is.True(strings.Contains(page, `data-testid="sandbox-banner"`))
	is.True(strings.Contains(page, "private@example.com"))
	// The other organization's link does not open this mailbox, nor an altered one.
	otherURL := e.Do("GET", "/v1/test-helpers/mailbox", otherKey, nil).Str("url")
	status, page, _ = e.openPage(t, otherURL)
	is.Equal(status, 200)
	is.True(!strings.Contains(page, "private@example.com"))
	swapped := strings.Replace(otherURL, other.ID, e.Org.ID, 1)
	status, _, _ = e.openPage(t, swapped)
	is.Equal(status, 403) // a signature is for one organization
	status, _, _ = e.openPage(t, u[:len(u)-3]+"AAA")
	is.Equal(status, 403) // altered
	// The message's HTML part is served for the frame, within the same signed link.
	status, html, hdr := e.openPage(t, u+"&email="+id+"&part=html")
	is.Equal(status, 200)
	is.True(strings.Contains(html, "<table"))
	is.True(strings.Contains(hdr.Get("Content-Security-Policy"), "default-src 'none'")) // no scripts
	// A day later the link has expired.
	is.Equal(e.Do("POST", "/v1/test-helpers/advance-clock", e.Test, map[string]any{"seconds": 25 * 3600}).Status, 200)
	status, _, _ = e.openPage(t, u)
	is.Equal(status, 403)
}

func TestCustomerEmailPreferencesValidation(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		name  string
		body  map[string]any
		param string
	}{
		{"unknown zone", map[string]any{"timezone": "Mars/Olympus"}, "timezone"},
		{"bad locale", map[string]any{"preferred_locales": []any{"pt BR"}}, "preferred_locales[0]"},
		{"locales not a list", map[string]any{"preferred_locales": "en"}, "preferred_locales"},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			r := e.Do("POST", "/v1/customers", e.Test, c.body)
			is.Equal(r.Status, 400)
			is.Equal(r.ErrParam(), c.param)
		})
	}
}

// The hosted checkout's sandbox bar links to the organization's test mailbox, where the buyer's
// receipt is once the payment succeeds.
func TestHostedCheckoutLinksTheSandboxMailbox(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	s := e.coSimple(e.Test, nil)
	b := e.newBrowser(t)
	p := b.get(s.Str("url"))
	is.True(p.testID("sandbox-mailbox"))
	m := regexp.MustCompile(`href="([^"]+)"[^>]*data-testid="sandbox-mailbox"`).FindStringSubmatch(p.Body)
	is.True(m != nil)
	link := html.UnescapeString(m[1])
	is.True(strings.HasPrefix(link, "/mailbox/"+e.Org.ID+"?"))
	paid := b.post("/checkout/"+s.Str("id")+"/confirm", cardForm(p, "4242424242424242"))
	is.True(paid.Status < 400)
	status, box, _ := e.openPage(t, link)
	is.Equal(status, 200)
	is.True(strings.Contains(box, "ana@example.com")) // the receipt of the checkout's buyer
	is.True(strings.Contains(box, `data-testid="mailbox-message"`))

	// A live checkout has no sandbox bar and no mailbox link.
	e.activate(t)
	live := e.coSimple(e.Live, nil)
	lp := b.get(live.Str("url"))
	is.True(!lp.testID("sandbox-mailbox"))
}

// A regenerated boleto (new line and due date) is e-mailed again; the old message stays as sent.
func TestEmailRegeneratedBoletoIsSentAgain(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.payIntent(e.Test, 5000, nil).Str("id")
	r := e.payConfirm(e.Test, id, boletoBuyer("pending@example.com"))
	is.Equal(r.Status, 200)
	due := time.Now().UTC().AddDate(0, 0, 20).Format("2006-01-02")
	r2 := e.Do("POST", "/v1/payment-intents/"+id+"/regenerate-boleto", e.Test, map[string]any{"boleto_due_date": due})
	is.Equal(r2.Status, 200)
	got := e.mailbox(e.Test, "to=pending@example.com&kind=boleto")
	is.Equal(len(got), 2) // the first boleto and the new one
	newLine, err := boleto.FormatLine(digStr(r2.Body, "next_action.boleto.digitable_line"))
	is.NoErr(err)
	is.True(strings.Contains(got[0]["text"].(string), newLine)) // newest first: the new line
	// Updating an intent's metadata sends nothing.
	is.Equal(e.Do("POST", "/v1/payment-intents/"+id, e.Test, map[string]any{"metadata": map[string]string{"a": "b"}}).Status, 200)
	is.Equal(len(e.mailbox(e.Test, "to=pending@example.com")), 2)
}

// Names and metadata come from organizations and customers: a line break in them never reaches a
// header, and markup in them is shown as text.
func TestEmailHeaderInjectionThroughNames(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	is.Equal(e.Do("POST", "/v1/organizations/"+e.Org.ID, e.Test, map[string]any{"name": "Loja\r\nBcc: evil@attacker.example"}).Status, 200)
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "ana@example.com", "name": "<b>Ana</b>\r\nX-Evil: 1",
		"metadata": map[string]string{"note": "\r\nBcc: evil@attacker.example"}})
	is.Equal(cus.Status, 200)
	pi := e.payIntent(e.Test, 1000, map[string]any{"customer": cus.Str("id"), "description": "<script>alert(1)</script>"})
	is.Equal(e.payConfirm(e.Test, pi.Str("id"), map[string]any{"payment_method_type": "credit_card", "card": payCard("4242424242424242")}).Status, 200)
	got := e.mailbox(e.Test, "to=ana@example.com")
	is.Equal(len(got), 1)
	subject := got[0]["subject"].(string)
	is.True(!strings.ContainsAny(subject, "\r\n"))       // one header line
	is.True(strings.Contains(subject, "Loja Bcc: evil")) // the name, flattened
	html := got[0]["html"].(string)
	is.True(!strings.Contains(html, "<script>alert(1)</script>")) // escaped
	is.True(strings.Contains(html, "&lt;script&gt;"))
	is.True(!strings.Contains(html, "<b>Ana</b>"))
}

// The receipt page tells the charge's state: a declined card or a boleto still to be paid is not
// shown as received.
func TestReceiptPageShowsTheChargesState(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	pi := e.payIntent(e.Test, 1000, nil)
	r := e.payConfirm(e.Test, pi.Str("id"), map[string]any{"payment_method_type": "credit_card", "card": payCard("4000000000000002")})
	is.Equal(r.Status, 402) // declined
	chs := e.Do("GET", "/v1/charges?payment_intent="+pi.Str("id"), e.Test, nil).Data()
	is.Equal(len(chs), 1)
	status, page, _ := e.openPage(t, chs[0]["receipt_url"].(string))
	is.Equal(status, 200)
	is.True(strings.Contains(page, "Pagamento não aprovado"))
	is.True(!strings.Contains(page, "Pagamento confirmado"))

	bol := e.payIntent(e.Test, 5000, nil)
	r = e.payConfirm(e.Test, bol.Str("id"), boletoBuyer("pending@example.com"))
	ch := e.Do("GET", "/v1/charges/"+r.Str("latest_charge"), e.Test, nil)
	status, page, _ = e.openPage(t, ch.Str("receipt_url"))
	is.Equal(status, 200)
	is.True(strings.Contains(page, "Pagamento aguardando confirmação"))
	is.Equal(len(e.mailbox(e.Test, "kind=receipt")), 0) // no receipt e-mail before the money arrives
}

// Concurrent mailbox reads right after the payments all see every message, whichever of them (or
// the scheduled job) renders it.
func TestEmailConcurrentMailboxReadsSeeEveryMessage(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "busy@example.com")
	for range 5 {
		pi := e.payIntent(e.Test, 1000, map[string]any{"customer": cus})
		is.Equal(e.payConfirm(e.Test, pi.Str("id"), map[string]any{"payment_method_type": "credit_card", "card": payCard("4242424242424242")}).Status, 200)
	}
	var wg sync.WaitGroup
	counts := make([]int, 8)
	for i := range counts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := e.TryDo("GET", "/v1/test-helpers/emails?to=busy@example.com", e.Test, nil)
			if err == nil && r.Status == 200 {
				counts[i] = len(r.Data())
			}
		}()
	}
	wg.Add(1)
	go func() { // the scheduled job, at the same time
		defer wg.Done()
		_ = e.Jobs.RunDue(context.Background())
	}()
	wg.Wait()
	for _, n := range counts {
		is.Equal(n, 5) // every read saw the five receipts
	}
}

// The dashboard's sandbox bar links to the organization's test mailbox; the live dashboard does not.
func TestDashboardLinksTheSandboxMailbox(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	dev := e.signedIn(e.Org.ID, "dev@example.com", domain.RoleDeveloper)
	_, body, _ := dev.get("/dashboard/test")
	m := regexp.MustCompile(`href="([^"]+)" data-testid="sandbox-mailbox"`).FindStringSubmatch(body)
	is.True(m != nil)
	status, _, _ := e.openPage(t, html.UnescapeString(m[1]))
	is.Equal(status, 200)
	_, live, _ := dev.get("/dashboard/live")
	is.True(!strings.Contains(live, `data-testid="sandbox-mailbox"`))
}

// TestEmailBoletoCarriesItsPixCode: every boleto is also payable by PIX (boleto híbrido), so the
// boleto e-mail gives the buyer the boleto's PIX copy-and-paste code beside the digitable line.
func TestEmailBoletoCarriesItsPixCode(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	pi := e.payIntent(e.Test, 25000, map[string]any{"payment_method_types": []string{"boleto"}})
	r := e.payConfirm(e.Test, pi.Str("id"), boletoBuyer("joao.hibrido@example.com"))
	is.Equal(r.Status, 200)
	code := digStr(r.Body, "next_action.boleto.pix_code")
	is.True(code != "") // the boleto carries a PIX code
	got := e.mailbox(e.Test, "to=joao.hibrido@example.com&kind=boleto")
	is.Equal(len(got), 1)
	is.True(strings.Contains(got[0]["text"].(string), code))                    // in the text part
	is.True(strings.Contains(got[0]["html"].(string), html.EscapeString(code))) // and the HTML part
	is.True(strings.Contains(got[0]["text"].(string), "Ou pague este boleto por PIX"))
}

// TestEmailNoInvoiceMessageForNothingToPay: a send_invoice invoice of zero (a trial's first
// invoice) is paid when finalized, so the customer is not sent a "new invoice, R$ 0,00, pay it"
// message: it is recorded as skipped (not_applicable).
func TestEmailNoInvoiceMessageForNothingToPay(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "trial@example.com")
	price := e.coPrice(e.Test, "Plano", 4990, map[string]any{"interval": "month"})
	sub := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}},
		"collection_method": "send_invoice", "days_until_due": 5, "trial_period_days": 14})
	is.Equal(sub.Str("status"), "trialing")
	first := e.Do("GET", "/v1/invoices/"+sub.Str("latest_invoice"), e.Test, nil)
	is.Equal(first.Str("status"), "paid")
	is.Equal(first.Body["amount_due"], float64(0))
	is.Equal(len(e.mailbox(e.Test, "to=trial@example.com&kind=invoice")), 0) // nothing to pay, nothing sent
	skipped := e.mailbox(e.Test, "to=trial@example.com&kind=invoice&status=skipped")
	is.Equal(len(skipped), 1)
	is.Equal(skipped[0]["skip_reason"], "not_applicable")

	// The first paid period's invoice is sent.
	e.travel(e.sub(sub.Str("id")).Time("current_period_end"))
	got := e.mailbox(e.Test, "to=trial@example.com&kind=invoice")
	is.Equal(len(got), 1)
	is.True(strings.Contains(got[0]["subject"].(string), "R$ 49,90"))
}
