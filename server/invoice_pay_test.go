package server_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/db"
	"troco/server"
	"troco/server/domain"
)

// TestInvoicePayByPixAndBoletoThroughAPI: POST /v1/invoices/{id}/pay with payment_method_type pix
// finalizes a draft, leaves the invoice open with a payment intent whose next_action is the PIX
// BR Code, and the invoice is paid when the PIX is paid (sandbox simulate); boleto likewise with
// its digitable line; bad combinations are 400 naming the parameter.
func TestInvoicePayByPixAndBoletoThroughAPI(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "ana@example.com", "name": "Ana Souza", "document": "529.982.247-25",
		"address": map[string]any{"line1": "Rua das Flores", "number": "100", "neighborhood": "Centro", "city": "São Paulo", "state": "SP", "postal_code": "01001-000"}}).Str("id")
	draft := func() string {
		return e.invCreate(map[string]any{"customer": cus, "collection_method": "send_invoice", "days_until_due": 5,
			"lines": []any{map[string]any{"amount": 25000, "description": "Mensalidade"}}}).Str("id")
	}

	id := draft()
	for _, tc := range []struct {
		body  map[string]any
		param string
	}{
		{map[string]any{"payment_method_type": "cash"}, "payment_method_type"},
		{map[string]any{"payment_method_type": "pix", "paid_out_of_band": true}, "paid_out_of_band"},
		{map[string]any{"payment_method_type": "pix", "payment_method": "pm_x"}, "payment_method"},
	} {
		r := e.Do("POST", "/v1/invoices/"+id+"/pay", e.Test, tc.body)
		is.Equal(r.Status, 400)
		is.Equal(r.ErrParam(), tc.param)
	}
	is.Equal(e.Do("GET", "/v1/invoices/"+id, e.Test, nil).Str("status"), "draft") // nothing changed

	r := e.Do("POST", "/v1/invoices/"+id+"/pay", e.Test, map[string]any{"payment_method_type": "pix"})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "open") // finalized, waiting for the PIX
	piID := r.Str("payment_intent")
	is.True(strings.HasPrefix(piID, "pi_"))
	pi := e.Do("GET", "/v1/payment-intents/"+piID, e.Test, nil)
	is.Equal(pi.Str("status"), "pending")
	is.Equal(pi.Num("amount"), int64(25000))
	is.Equal(digStr(pi.Body, "next_action.type"), "pix")
	code := digStr(pi.Body, "next_action.pix.code")
	is.True(strings.HasPrefix(code, "000201")) // an EMV BR Code
	is.True(strings.HasPrefix(digStr(pi.Body, "next_action.pix.image_url"), "https://"))
	again := e.Do("POST", "/v1/invoices/"+id+"/pay", e.Test, map[string]any{"payment_method_type": "pix"})
	is.Equal(again.Status, 200)
	is.Equal(again.Str("payment_intent"), piID) // the PIX already issued is still good
	card := e.Do("POST", "/v1/invoices/"+id+"/pay", e.Test, map[string]any{})
	is.Equal(card.Status, 409) // a payment is in progress

	paid := e.Do("POST", "/v1/test-helpers/payment-intents/"+piID+"/succeed", e.Test, nil)
	is.Equal(paid.Str("status"), "succeeded")
	inv := e.Do("GET", "/v1/invoices/"+id, e.Test, nil)
	is.Equal(inv.Str("status"), "paid")
	is.Equal(inv.Num("amount_paid"), int64(25000))
	is.Equal(inv.Str("charge"), paid.Str("latest_charge"))
	is.Equal(len(e.payEvents(e.Test, "invoice.paid", id)), 1)
	is.Equal(e.Do("POST", "/v1/invoices/"+id+"/pay", e.Test, map[string]any{"payment_method_type": "pix"}).Status, 409) // paid already

	// Boleto.
	id = draft()
	r = e.Do("POST", "/v1/invoices/"+id+"/pay", e.Test, map[string]any{"payment_method_type": "boleto"})
	is.Equal(r.Status, 200)
	pi = e.Do("GET", "/v1/payment-intents/"+r.Str("payment_intent"), e.Test, nil)
	is.Equal(digStr(pi.Body, "next_action.type"), "boleto")
	is.Equal(len(digStr(pi.Body, "next_action.boleto.digitable_line")), 47)
	is.Equal(digStr(pi.Body, "next_action.boleto.due_date"), r.Str("due_date")[:10]) // due with the invoice
	e.Do("POST", "/v1/test-helpers/payment-intents/"+pi.Str("id")+"/succeed", e.Test, nil)
	is.Equal(e.Do("GET", "/v1/invoices/"+id, e.Test, nil).Str("status"), "paid")

	// A customer without a document cannot get a boleto: the confirmation says what is missing.
	bare := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "bia@example.com"}).Str("id")
	nb := e.invCreate(map[string]any{"customer": bare, "collection_method": "send_invoice", "days_until_due": 5,
		"lines": []any{map[string]any{"amount": 25000, "description": "Mensalidade"}}}).Str("id")
	bad := e.Do("POST", "/v1/invoices/"+nb+"/pay", e.Test, map[string]any{"payment_method_type": "boleto"})
	is.Equal(bad.Status, 400)
	is.True(bad.ErrParam() != "")
	is.Equal(e.Do("GET", "/v1/invoices/"+nb, e.Test, nil).Str("status"), "draft") // nothing kept
}

// TestLiveInvoicePayByPixThroughAPI: in live mode the same call reaches the PSP (a cobv for an
// invoice not yet due), answers with the PSP's BR Code on the intent, and the PSP's webhook pays
// the invoice.
func TestLiveInvoicePayByPixThroughAPI(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	id, _, _ := e.lateInvoice(e.Live)
	r := e.Do("POST", "/v1/invoices/"+id+"/pay", e.Live, map[string]any{"payment_method_type": "pix"})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "open")
	pi := e.Do("GET", "/v1/payment-intents/"+r.Str("payment_intent"), e.Live, nil)
	is.Equal(pi.Str("status"), "pending")
	is.True(strings.Contains(digStr(pi.Body, "next_action.pix.code"), "pix.example.com/qr/v2/")) // the PSP's BR Code
	ch := e.Do("GET", "/v1/charges/"+pi.Str("latest_charge"), e.Live, nil)
	txid := digStr(ch.Body, "payment_method_details.pix.txid")
	kind, _ := e.PSP.Charge(txid)
	is.Equal(kind, "cobv")
	is.NoErr(e.PSP.Pay(txid, -1, true))
	is.Equal(e.Do("GET", "/v1/invoices/"+id, e.Live, nil).Str("status"), "paid")
}

// TestLiveHostedInvoiceNoSecondPaymentWhileACardIsPending: a live card payment of an invoice that
// Cielo leaves Pending may still be approved, so the hosted page refuses another payment (card or
// PIX) until the acquirer decides; once it approves, the invoice is paid by that one charge.
func TestLiveHostedInvoiceNoSecondPaymentWhileACardIsPending(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	id, hosted, _ := e.lateInvoice(e.Live)
	u, err := url.Parse(hosted)
	is.NoErr(err)
	pay := func(form url.Values) *http.Response {
		form.Set("s", u.Query().Get("s"))
		form.Set("csrf_token", server.InvoicePageCSRF(e.Config.Secrets, id, u.Query().Get("s")))
		res, err := noRedirect(e.Client).PostForm(e.URL()+u.Path+"/pay", form)
		is.NoErr(err)
		res.Body.Close()
		return res
	}
	card := url.Values{"method": {"credit_card"}, "number": {liveApprove}, "exp_month": {"12"}, "exp_year": {"2035"}, "cvc": {"123"}, "holder_name": {"Ana Souza"}}
	e.Cielo.PendNextSales(1)
	res := pay(card)
	is.Equal(res.StatusCode, http.StatusSeeOther)
	inv := e.Do("GET", "/v1/invoices/"+id, e.Live, nil)
	first := inv.Str("payment_intent")
	is.Equal(e.Do("GET", "/v1/payment-intents/"+first, e.Live, nil).Str("status"), "pending") // Cielo has not decided
	charges := e.Cielo.ChargeCount()

	for _, form := range []url.Values{card, {"method": {"pix"}}} {
		res := pay(form)
		is.Equal(res.StatusCode, http.StatusSeeOther)
		is.True(strings.Contains(res.Header.Get("Location"), "e=resource_state_conflict")) // refused on the page
	}
	is.Equal(e.Cielo.ChargeCount(), charges)                                            // no second sale
	is.Equal(e.Do("GET", "/v1/invoices/"+id, e.Live, nil).Str("payment_intent"), first) // the same attempt

	var ref string
	is.NoErr(e.DB.Read(context.Background(), func(tx *db.Tx) error {
		c, err := tx.FindChargeCall(domain.Scope{OrgID: e.Org.ID, Livemode: true}, e.Do("GET", "/v1/payment-intents/"+first, e.Live, nil).Str("latest_charge"), "authorize")
		if err == nil {
			ref = c.Reference
		}
		return err
	}))
	is.True(e.Cielo.Decide(ref, true))
	e.reconcile(3 * time.Minute)
	inv = e.Do("GET", "/v1/invoices/"+id, e.Live, nil)
	is.Equal(inv.Str("status"), "paid")
	is.Equal(inv.Str("payment_intent"), first)
}

// TestLiveInvoiceNoSecondPaymentWhileACardAnswerIsLost: the one rule for starting another payment
// of an invoice holds on both interfaces. A live card paid on the hosted page whose answer is lost
// (the sale may have been made) leaves the intent processing; neither the page (card or PIX) nor
// POST /v1/invoices/{id}/pay (PIX, or paid_out_of_band, which would pay the invoice twice) starts
// another payment; the reconciliation then pays the invoice with that one charge.
func TestLiveInvoiceNoSecondPaymentWhileACardAnswerIsLost(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 300*time.Millisecond)
	e.Cielo.HangFor = time.Second
	e.Cielo.DropNextAnswers(1)
	go func() {
		for e.Cielo.ChargeCount() == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		e.Cielo.SetUnavailable(true)
	}()
	id, hosted, _ := e.lateInvoice(e.Live)
	u, err := url.Parse(hosted)
	is.NoErr(err)
	pay := func(form url.Values) *http.Response {
		form.Set("s", u.Query().Get("s"))
		form.Set("csrf_token", server.InvoicePageCSRF(e.Config.Secrets, id, u.Query().Get("s")))
		res, err := noRedirect(e.Client).PostForm(e.URL()+u.Path+"/pay", form)
		is.NoErr(err)
		res.Body.Close()
		return res
	}
	card := url.Values{"method": {"credit_card"}, "number": {liveApprove}, "exp_month": {"12"}, "exp_year": {"2035"}, "cvc": {"123"}, "holder_name": {"Ana Souza"}}
	is.Equal(pay(card).StatusCode, http.StatusSeeOther)
	first := e.Do("GET", "/v1/invoices/"+id, e.Live, nil).Str("payment_intent")
	is.Equal(e.Do("GET", "/v1/payment-intents/"+first, e.Live, nil).Str("status"), "processing") // the outcome is unknown
	is.Equal(e.Cielo.ChargeCount(), 1)

	for _, form := range []url.Values{card, {"method": {"pix"}}} {
		is.Equal(pay(form).StatusCode, http.StatusSeeOther)
	}
	oob := e.Do("POST", "/v1/invoices/"+id+"/pay", e.Live, map[string]any{"paid_out_of_band": true})
	is.Equal(oob.Status, 409) // the card may have paid it
	is.Equal(oob.ErrCode(), "resource_state_conflict")
	pix := e.Do("POST", "/v1/invoices/"+id+"/pay", e.Live, map[string]any{"payment_method_type": "pix"})
	is.Equal(pix.Status, 409) // no PIX started beside the card, and not a 200 with the card's intent
	is.Equal(pix.ErrCode(), "resource_state_conflict")
	inv := e.Do("GET", "/v1/invoices/"+id, e.Live, nil)
	is.Equal(inv.Str("status"), "open")
	is.Equal(inv.Str("payment_intent"), first)
	is.Equal(e.Cielo.ChargeCount(), 1) // no second sale
	is.Equal(e.PSP.CobCount(), 0)      // no PIX at the PSP

	e.Cielo.SetUnavailable(false)
	e.reconcile(3 * time.Minute)
	inv = e.Do("GET", "/v1/invoices/"+id, e.Live, nil)
	is.Equal(inv.Str("status"), "paid")
	is.Equal(inv.Str("payment_intent"), first)
	is.Equal(inv.Body["paid_out_of_band"], false)
	is.Equal(e.Cielo.ChargeCount(), 1)
}

// TestInvoicePayRefusalsSayWhatToDo: while a PIX or boleto waits for the payer, or a card is
// authorized awaiting capture, the merchant's saved-card pay and paid_out_of_band are 409s that
// say what unblocks them (cancel the intent, or capture it); after a cancel the invoice is
// recorded as paid out of band.
func TestInvoicePayRefusalsSayWhatToDo(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "ana@example.com", "name": "Ana Souza", "document": "529.982.247-25",
		"address": map[string]any{"line1": "Rua das Flores", "number": "100", "neighborhood": "Centro", "city": "São Paulo", "state": "SP", "postal_code": "01001-000"}}).Str("id")
	open := func() string {
		id := e.invCreate(map[string]any{"customer": cus, "collection_method": "send_invoice", "days_until_due": 5,
			"lines": []any{map[string]any{"amount": 25000, "description": "Mensalidade"}}}).Str("id")
		is.Equal(e.Do("POST", "/v1/invoices/"+id+"/finalize", e.Test, nil).Status, 200)
		return id
	}
	for _, method := range []string{"boleto", "pix"} {
		id := open()
		pi := e.Do("POST", "/v1/invoices/"+id+"/pay", e.Test, map[string]any{"payment_method_type": method}).Str("payment_intent")
		r := e.Do("POST", "/v1/invoices/"+id+"/pay", e.Test, map[string]any{"paid_out_of_band": true})
		is.Equal(r.Status, 409)
		is.Equal(r.ErrCode(), "resource_state_conflict")
		is.True(strings.Contains(r.ErrMessage(), "waiting for the payer"))
		is.True(strings.Contains(r.ErrMessage(), "/v1/payment-intents/"+pi+"/cancel"))
		is.Equal(e.Do("POST", "/v1/payment-intents/"+pi+"/cancel", e.Test, nil).Status, 200)
		r = e.Do("POST", "/v1/invoices/"+id+"/pay", e.Test, map[string]any{"paid_out_of_band": true})
		is.Equal(r.Str("status"), "paid")
		is.Equal(r.Body["paid_out_of_band"], true)
	}

	id := open()
	hosted := e.Do("GET", "/v1/invoices/"+id, e.Test, nil).Str("hosted_invoice_url")
	b := e.newBrowser(t)
	secret := b.get(hostedPath(t, hosted)).hidden().Get("s")
	res := b.postInvoice(id, "pay", url.Values{"s": {secret}, "method": {"credit_card"}, "number": {"4000000000003220"}, "exp_month": {"12"},
		"exp_year": {"2031"}, "cvc": {"123"}, "holder_name": {"Ana Souza"}})
	is.Equal(res.Status, 303)
	pi := e.Do("GET", "/v1/invoices/"+id, e.Test, nil).Str("payment_intent")
	is.Equal(e.Do("GET", "/v1/payment-intents/"+pi, e.Test, nil).Str("status"), "requires_capture")
	r := e.Do("POST", "/v1/invoices/"+id+"/pay", e.Test, map[string]any{"paid_out_of_band": true})
	is.Equal(r.Status, 409)
	is.True(strings.Contains(r.ErrMessage(), "awaiting capture"))
	is.True(strings.Contains(r.ErrMessage(), "/v1/payment-intents/"+pi+"/cancel"))
}

// TestInvoicePayBoletoNamesTheCustomersMissingData: paying an invoice by boleto through the API
// takes the payer's data from the invoice's customer, so a refusal for missing or invalid data
// names customer and says which of the customer's fields to update (a request to this endpoint has
// no billing_address or customer_document of its own), and changes nothing.
func TestInvoicePayBoletoNamesTheCustomersMissingData(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	for _, c := range []struct {
		customer map[string]any
		field    string
	}{
		{map[string]any{"email": "ana@example.com", "name": "Ana", "document": "529.982.247-25",
			"address": map[string]any{"line1": "Rua A", "number": "1", "city": "São Paulo", "state": "SP", "postal_code": "01001-000"}}, "address[neighborhood]"},
		{map[string]any{"email": "bia@example.com", "name": "Bia",
			"address": map[string]any{"line1": "Rua A", "number": "1", "neighborhood": "Centro", "city": "São Paulo", "state": "SP", "postal_code": "01001-000"}}, "document"},
	} {
		cus := e.Do("POST", "/v1/customers", e.Test, c.customer).Str("id")
		id := e.invCreate(map[string]any{"customer": cus, "collection_method": "send_invoice", "days_until_due": 5,
			"lines": []any{map[string]any{"amount": 25000, "description": "Mensalidade"}}}).Str("id")
		bad := e.Do("POST", "/v1/invoices/"+id+"/pay", e.Test, map[string]any{"payment_method_type": "boleto"})
		is.Equal(bad.Status, 400)
		is.Equal(bad.ErrParam(), "customer")
		msg := digStr(bad.Body, "error.message")
		is.True(strings.Contains(msg, cus))     // which customer
		is.True(strings.Contains(msg, c.field)) // which of its fields
		inv := e.Do("GET", "/v1/invoices/"+id, e.Test, nil)
		is.Equal(inv.Str("status"), "draft") // nothing kept
		is.Equal(inv.Body["payment_intent"], nil)
	}
}

// TestInvoiceBoletoWithLateTermsIsPayableAfterItsDueDate: a boleto that pays an invoice with a
// fine and interest tells the bank to charge them after the due date, so it does not also say
// "Não receber após o vencimento" (do not accept it after the due date), which would contradict
// the terms; a boleto without late terms still says it.
func TestInvoiceBoletoWithLateTermsIsPayableAfterItsDueDate(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "ana@example.com", "name": "Ana Souza", "document": "529.982.247-25",
		"address": map[string]any{"line1": "Rua das Flores", "number": "100", "neighborhood": "Centro", "city": "São Paulo", "state": "SP", "postal_code": "01001-000"}}).Str("id")
	printed := func(terms bool) string {
		body := map[string]any{"customer": cus, "collection_method": "send_invoice", "days_until_due": 10,
			"lines": []any{map[string]any{"amount": 30000, "description": "Aluguel"}}}
		if terms {
			body["fine_rate"], body["interest_rate"] = 200, 100
		}
		id := e.invCreate(body).Str("id")
		r := e.Do("POST", "/v1/invoices/"+id+"/pay", e.Test, map[string]any{"payment_method_type": "boleto"})
		is.Equal(r.Status, 200)
		pi := e.Do("GET", "/v1/payment-intents/"+r.Str("payment_intent"), e.Test, nil)
		status, page, _ := e.openPage(t, digStr(pi.Body, "next_action.boleto.url"))
		is.Equal(status, 200)
		return page
	}
	late := printed(true)
	is.True(strings.Contains(late, "cobrar multa de 2% e juros de mora de 1% ao mês")) // the late terms
	is.True(!strings.Contains(late, "Não receber após o vencimento"))                  // not refused after the due date
	is.True(strings.Contains(printed(false), "Não receber após o vencimento"))         // without terms it is
}
