package server_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/matryer/is"
)

// lateInvoice creates and finalizes a send_invoice invoice of 1.500,00 due in two days with a 2 %
// fine and 1 % a month interest, for a customer with name and CPF.
func (e *testEnv) lateInvoice(token string) (id, hosted string, due time.Time) {
	e.t.Helper()
	cus := e.Do("POST", "/v1/customers", token, map[string]any{"email": "ana@example.com", "name": "Ana Souza", "document": "529.982.247-25"})
	if cus.Status != 200 {
		e.t.Fatalf("customer: %s", cus.Raw)
	}
	r := e.Do("POST", "/v1/invoices", token, map[string]any{"customer": cus.Str("id"), "collection_method": "send_invoice", "days_until_due": 2,
		"fine_rate": 200, "interest_rate": 100, "lines": []any{map[string]any{"amount": 150000, "description": "Consultoria mensal"}}})
	if r.Status != 200 {
		e.t.Fatalf("invoice: %s", r.Raw)
	}
	f := e.Do("POST", "/v1/invoices/"+r.Str("id")+"/finalize", token, nil)
	if f.Status != 200 {
		e.t.Fatalf("finalize: %s", f.Raw)
	}
	due, _ = time.Parse(time.RFC3339, f.Str("due_date"))
	return f.Str("id"), f.Str("hosted_invoice_url"), due
}

// TestSandboxInvoicePixPaidLateSettlesWithFineAndInterest: the PIX of an invoice issued before
// its due date and paid three days after it settles for the amount with the fine (2 %) and three
// days of interest (1 % a month pro rata): the charge's amount_captured, the intent's
// amount_received, the PIX details, the invoice's fine_amount, interest_amount and amount_paid,
// and the ledger all carry the amount paid.
func TestSandboxInvoicePixPaidLateSettlesWithFineAndInterest(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id, hosted, due := e.lateInvoice(e.Test)
	b := e.newBrowser(t)
	secret := b.get(hostedPath(t, hosted)).hidden().Get("s")
	is.Equal(b.postInvoice(id, "pay", url.Values{"s": {secret}, "method": {"pix"}}).Status, 303)
	piID := e.Do("GET", "/v1/invoices/"+id, e.Test, nil).Str("payment_intent")
	pi := e.Do("GET", "/v1/payment-intents/"+piID, e.Test, nil)
	is.Equal(pi.Str("status"), "pending")
	is.Equal(pi.Num("amount"), int64(150000)) // issued before the due date: the bare total

	e.travel(due.Add(3*24*time.Hour + time.Hour))
	paid := e.Do("POST", "/v1/test-helpers/payment-intents/"+piID+"/succeed", e.Test, nil)
	is.Equal(paid.Status, 200)
	is.Equal(paid.Str("status"), "succeeded")
	const fine, interest = 3000, 150 // 2 % of 1.500,00; 1 % a month for 3 days
	is.Equal(paid.Num("amount"), int64(150000))
	is.Equal(paid.Num("amount_received"), int64(150000+fine+interest))
	ch := e.Do("GET", "/v1/charges/"+paid.Str("latest_charge"), e.Test, nil)
	is.Equal(ch.Str("status"), "succeeded")
	is.Equal(ch.Num("amount_captured"), int64(150000+fine+interest))
	is.Equal(digNum(ch.Body, "payment_method_details.pix.fine_amount"), int64(fine))
	is.Equal(digNum(ch.Body, "payment_method_details.pix.interest_amount"), int64(interest))

	inv := e.Do("GET", "/v1/invoices/"+id, e.Test, nil)
	is.Equal(inv.Str("status"), "paid")
	is.Equal(inv.Num("fine_amount"), int64(fine))
	is.Equal(inv.Num("interest_amount"), int64(interest))
	is.Equal(inv.Num("amount_due"), int64(150000+fine+interest))
	is.Equal(inv.Num("amount_paid"), int64(150000+fine+interest))
	is.Equal(inv.Num("amount_remaining"), int64(0))
	sale := e.ledger(e.Test, ch.Str("id"), "charge")
	is.Equal(len(sale), 1)
	is.Equal(sale[0]["amount"], float64(150000+fine+interest))

	// Everything paid can be refunded, no more.
	over := e.Do("POST", "/v1/refunds", e.Test, map[string]any{"charge": ch.Str("id"), "amount": 150000 + fine + interest + 1})
	is.Equal(over.ErrParam(), "amount")
	all := e.Do("POST", "/v1/refunds", e.Test, map[string]any{"charge": ch.Str("id")})
	is.Equal(all.Num("amount"), int64(150000+fine+interest))
	is.Equal(e.Do("GET", "/v1/charges/"+ch.Str("id"), e.Test, nil).Body["refunded"], true)

	// Paid before the due date: no fine, nothing added.
	id2, hosted2, _ := e.lateInvoice(e.Test)
	secret2 := b.get(hostedPath(t, hosted2)).hidden().Get("s")
	is.Equal(b.postInvoice(id2, "pay", url.Values{"s": {secret2}, "method": {"pix"}}).Status, 303)
	pi2 := e.Do("GET", "/v1/invoices/"+id2, e.Test, nil).Str("payment_intent")
	on := e.Do("POST", "/v1/test-helpers/payment-intents/"+pi2+"/succeed", e.Test, nil)
	is.Equal(on.Num("amount_received"), int64(150000))
	inv2 := e.Do("GET", "/v1/invoices/"+id2, e.Test, nil)
	is.Equal(inv2.Str("status"), "paid")
	is.Equal(inv2.Num("amount_paid"), int64(150000))
	is.Equal(inv2.Num("fine_amount"), int64(0))
}

// TestLiveInvoiceCobVPaidLateSettles: in live mode the PIX of an invoice with a due date is a
// cobv at the PSP; paid after the due date the payer pays the PSP's multa and juros on top, and
// the PSP's webhook settles it with what was paid: charge, intent, invoice and ledger carry it.
// An immediate charge (cob) paid with another amount still settles nothing.
func TestLiveInvoiceCobVPaidLateSettles(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	id, hosted, due := e.lateInvoice(e.Live)
	b := e.newBrowser(t)
	pg := b.get(hostedPath(t, hosted))
	is.Equal(pg.Status, 200)
	is.Equal(b.postInvoice(id, "pay", url.Values{"s": {pg.hidden().Get("s")}, "method": {"pix"}}).Status, 303)
	piID := e.Do("GET", "/v1/invoices/"+id, e.Live, nil).Str("payment_intent")
	pi := e.Do("GET", "/v1/payment-intents/"+piID, e.Live, nil)
	is.Equal(pi.Str("status"), "pending")
	ch := e.Do("GET", "/v1/charges/"+pi.Str("latest_charge"), e.Live, nil)
	txid := digStr(ch.Body, "payment_method_details.pix.txid")
	kind, _ := e.PSP.Charge(txid)
	is.Equal(kind, "cobv")

	e.Clock.Advance(due.Sub(e.Clock.Now()) + 3*24*time.Hour + time.Hour)
	const fine, interest = 3000, 150
	is.NoErr(e.PSP.Pay(txid, 150000+fine+interest, true)) // the PSP collected multa and juros
	got := e.Do("GET", "/v1/payment-intents/"+piID, e.Live, nil)
	is.Equal(got.Str("status"), "succeeded")
	is.Equal(got.Num("amount_received"), int64(150000+fine+interest))
	c := e.Do("GET", "/v1/charges/"+got.Str("latest_charge"), e.Live, nil)
	is.Equal(c.Num("amount_captured"), int64(150000+fine+interest))
	is.Equal(digNum(c.Body, "payment_method_details.pix.fine_amount"), int64(fine))
	is.Equal(digNum(c.Body, "payment_method_details.pix.interest_amount"), int64(interest))
	inv := e.Do("GET", "/v1/invoices/"+id, e.Live, nil)
	is.Equal(inv.Str("status"), "paid")
	is.Equal(inv.Num("amount_paid"), int64(150000+fine+interest))
	is.Equal(inv.Num("fine_amount"), int64(fine))
	is.Equal(inv.Num("interest_amount"), int64(interest))
	sale := e.ledger(e.Live, c.Str("id"), "charge")
	is.Equal(len(sale), 1)
	is.Equal(sale[0]["amount"], float64(150000+fine+interest))
	is.NoErr(e.PSP.Notify(e.PSP.Webhook(liveChave), e.PSP.LastPix(txid))) // a replay changes nothing
	is.Equal(len(e.payEvents(e.Live, "invoice.paid", id)), 1)

	// An immediate charge paid with more than its amount is not settled.
	other, _, otxid := e.livePix(1000)
	is.NoErr(e.PSP.Pay(otxid, 1100, true))
	is.Equal(e.Do("GET", "/v1/payment-intents/"+other, e.Live, nil).Str("status"), "pending")
}
