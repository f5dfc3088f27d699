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
	"troco/server/payments"
)

// Live Pix Automático end to end: troco's API Pix connector against the PSP double's /locrec,
// /rec, /cobr and their webhooks, over mutual TLS.

const liveCPF = "52998224725"

// liveRecCustomer creates a live customer with the name and CPF a recurrence needs.
func (e *liveEnv) liveRecCustomer(t *testing.T) string {
	t.Helper()
	r := e.Do("POST", "/v1/customers", e.Live, map[string]any{"email": "ana@example.com", "name": "Ana Souza", "document": liveCPF})
	if r.Status != 200 {
		t.Fatalf("create customer: %d %s", r.Status, r.Raw)
	}
	return r.Str("id")
}

// liveAuthorization creates a live authorization, checks the PSP has its recurrence, and returns
// the authorization and the recurrence's idRec.
func (e *liveEnv) liveAuthorization(t *testing.T, cus string, maxAmount int64) (resp, string) {
	t.Helper()
	before := len(e.PSP.Recs())
	r := e.Do("POST", "/v1/pix-authorizations", e.Live, map[string]any{"customer": cus, "max_amount": maxAmount, "interval": "month", "description": "Academia"})
	if r.Status != 200 || r.Str("status") != "pending" {
		t.Fatalf("create live authorization: %d %s", r.Status, r.Raw)
	}
	recs := e.PSP.Recs()
	if len(recs) != before+1 {
		t.Fatalf("the PSP has %d recurrences, want %d", len(recs), before+1)
	}
	var idRec string
	for _, id := range recs {
		var found bool
		_ = e.DB.Read(context.Background(), func(tx *db.Tx) error {
			c, err := tx.FindProcessorCallByProcessorID(payments.CallRec, id)
			found = err == nil && c.PaymentIntent == r.Str("id")
			return nil
		})
		if found {
			idRec = id
		}
	}
	if idRec == "" {
		t.Fatalf("no recurrence of the PSP belongs to %s", r.Str("id"))
	}
	return r, idRec
}

// TestLivePixAutomaticoAuthorizationApprovedByThePSP: a live authorization is a recurrence at
// the PSP (its QR is the PSP's); the payer approving it in their bank reaches troco by the PSP's
// /rec webhook (read back from the PSP), creating the pix_automatico payment method; a payer who
// rejects is rejected; a customer without a document is refused before the PSP is called.
func TestLivePixAutomaticoAuthorizationApprovedByThePSP(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	cus := e.liveRecCustomer(t)
	pa, idRec := e.liveAuthorization(t, cus, 5000)
	is.True(strings.HasPrefix(pa.Str("brcode"), "000201"))
	is.True(strings.Contains(pa.Str("brcode"), "pix.example.com/qr/v2/rec/")) // the PSP's location
	is.Equal(pa.Body["livemode"], true)
	is.Equal(len(idRec), 29)
	is.Equal(e.PSP.RecStatus(idRec), "CRIADA")
	is.Equal(len(e.payEvents(e.Live, "pix_authorization.created", pa.Str("id"))), 1)

	is.NoErr(e.PSP.AnswerRec(idRec, "APROVADA"))
	got := e.Do("GET", "/v1/pix-authorizations/"+pa.Str("id"), e.Live, nil)
	is.Equal(got.Str("status"), "approved")
	is.True(got.Str("payment_method") != "")
	is.Equal(len(e.payEvents(e.Live, "pix_authorization.approved", pa.Str("id"))), 1)
	// A replayed notification changes nothing.
	is.NoErr(e.PSP.AnswerRec(idRec, "APROVADA"))
	is.Equal(len(e.payEvents(e.Live, "pix_authorization.approved", pa.Str("id"))), 1)

	// The PSP decides when a live one expires: not troco's 24 hours.
	pc, idRecC := e.liveAuthorization(t, cus, 5000)
	is.Equal(pc.Body["expires_at"], nil)
	e.reconcile(25 * time.Hour)
	is.Equal(e.Do("GET", "/v1/pix-authorizations/"+pc.Str("id"), e.Live, nil).Str("status"), "pending")
	is.NoErr(e.PSP.AnswerRec(idRecC, "EXPIRADA"))
	is.Equal(e.Do("GET", "/v1/pix-authorizations/"+pc.Str("id"), e.Live, nil).Str("status"), "expired")

	// Rejected by the payer.
	pb, idRecB := e.liveAuthorization(t, cus, 5000)
	is.NoErr(e.PSP.AnswerRec(idRecB, "REJEITADA"))
	is.Equal(e.Do("GET", "/v1/pix-authorizations/"+pb.Str("id"), e.Live, nil).Str("status"), "rejected")

	// No document: refused, nothing at the PSP.
	n := len(e.PSP.Recs())
	bare := e.Do("POST", "/v1/customers", e.Live, map[string]any{"email": "bia@example.com", "name": "Bia"}).Str("id")
	r := e.Do("POST", "/v1/pix-authorizations", e.Live, map[string]any{"customer": bare, "max_amount": 5000, "interval": "month"})
	is.Equal(r.Status, 400)
	is.Equal(digStr(r.Body, "error.param"), "customer")
	is.Equal(len(e.PSP.Recs()), n)

	// Canceled through troco: the recurrence is canceled at the PSP first.
	c := e.Do("POST", "/v1/pix-authorizations/"+pa.Str("id")+"/cancel", e.Live, nil)
	is.Equal(c.Status, 200)
	is.Equal(c.Str("status"), "canceled")
	is.Equal(e.PSP.RecStatus(idRec), "CANCELADA")
	e.noSecretsInLogs(t, "")
}

// TestLivePixAutomaticoApprovalFoundByReconciliation: without the webhook, the reconciliation
// job polls the recurrence and applies the payer's answer.
func TestLivePixAutomaticoApprovalFoundByReconciliation(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	cus := e.liveRecCustomer(t)
	pa, idRec := e.liveAuthorization(t, cus, 5000)
	hook := e.PSP.WebhookClient
	e.PSP.WebhookClient = nil // the notification is lost (posted without the PSP's certificate)
	_ = e.PSP.AnswerRec(idRec, "APROVADA")
	e.PSP.WebhookClient = hook
	is.Equal(e.Do("GET", "/v1/pix-authorizations/"+pa.Str("id"), e.Live, nil).Str("status"), "pending")
	e.reconcile(payments.PixPollEvery + time.Second)
	is.Equal(e.Do("GET", "/v1/pix-authorizations/"+pa.Str("id"), e.Live, nil).Str("status"), "approved")

	// The payer cancels it in their bank: the PSP's webhook cancels it in troco.
	is.NoErr(e.PSP.AnswerRec(idRec, "CANCELADA"))
	got := e.Do("GET", "/v1/pix-authorizations/"+pa.Str("id"), e.Live, nil)
	is.Equal(got.Str("status"), "canceled")
	is.Equal(len(e.payEvents(e.Live, "pix_authorization.canceled", pa.Str("id"))), 1)
}

// TestLivePixAutomaticoPSPDown: a PSP that is down creates nothing (503, no authorization) and
// a recurring charge it cannot take is a failed attempt with processing_error, retried later.
func TestLivePixAutomaticoPSPDown(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	cus := e.liveRecCustomer(t)
	e.PSP.SetDown(true)
	r := e.Do("POST", "/v1/pix-authorizations", e.Live, map[string]any{"customer": cus, "max_amount": 5000, "interval": "month"})
	is.Equal(r.Status, 503)
	is.Equal(digStr(r.Body, "error.code"), "processing_error")
	list := e.Do("GET", "/v1/pix-authorizations", e.Live, nil)
	is.Equal(len(list.Body["data"].([]any)), 0)
	e.PSP.SetDown(false)
	is.Equal(len(e.PSP.Recs()), 0)
}

// liveSubscription creates an approved authorization and a monthly subscription paid by it,
// and returns the subscription id and the first invoice.
func (e *liveEnv) livePixAutoSubscription(t *testing.T, amount int64) (string, string, resp) {
	t.Helper()
	cus := e.liveRecCustomer(t)
	pa, idRec := e.liveAuthorization(t, cus, 10000)
	if err := e.PSP.AnswerRec(idRec, "APROVADA"); err != nil {
		t.Fatal(err)
	}
	pm := e.Do("GET", "/v1/pix-authorizations/"+pa.Str("id"), e.Live, nil).Str("payment_method")
	price := e.coPrice(e.Live, "Academia", amount, map[string]any{"interval": "month"})
	s := e.Do("POST", "/v1/subscriptions", e.Live, map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pm})
	if s.Status != 200 {
		t.Fatalf("create subscription: %d %s", s.Status, s.Raw)
	}
	inv := e.Do("GET", "/v1/invoices/"+s.Str("latest_invoice"), e.Live, nil)
	return s.Str("id"), pa.Str("id"), inv
}

// cobrTxID is the txid of the recurring charge of an invoice (its charge's PIX txid).
func (e *liveEnv) cobrTxID(t *testing.T, inv resp) string {
	t.Helper()
	ch := e.Do("GET", "/v1/charges/"+inv.Str("charge"), e.Live, nil)
	txid := digStr(ch.Body, "payment_method_details.pix.txid")
	if e.PSP.CobR(txid) == nil {
		t.Fatalf("the PSP has no recurring charge %q for invoice %s (%s)", txid, inv.Str("id"), inv.Raw)
	}
	return txid
}

// TestLivePixAutomaticoRenewalCharged: each invoice of a subscription paid by a live
// authorization is a recurring charge at the PSP (PUT /cobr, due that day, the receiving
// account); it stays open while the PSP schedules it and is paid when the PSP settles it (its
// /cobr webhook, read back from the PSP), once.
func TestLivePixAutomaticoRenewalCharged(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	id, _, inv := e.livePixAutoSubscription(t, 4990)
	is.Equal(inv.Str("status"), "open")
	txid := e.cobrTxID(t, inv)
	cob := e.PSP.CobR(txid)
	is.Equal(cob["status"], "ATIVA")
	is.Equal(cob["valor"].(map[string]any)["original"], "49.90")
	is.Equal(cob["recebedor"].(map[string]any)["conta"], "123456")

	is.NoErr(e.PSP.SettleCobR(txid, true, "", ""))
	inv = e.Do("GET", "/v1/invoices/"+inv.Str("id"), e.Live, nil)
	is.Equal(inv.Str("status"), "paid")
	is.Equal(inv.Num("amount_paid"), int64(4990))
	is.Equal(e.Do("GET", "/v1/subscriptions/"+id, e.Live, nil).Str("status"), "active")
	pi := e.Do("GET", "/v1/payment-intents/"+inv.Str("payment_intent"), e.Live, nil)
	is.Equal(pi.Str("status"), "succeeded")
	// A replayed notification and a reconciliation pass change nothing.
	is.NoErr(e.PSP.NotifyCobR(txid))
	e.reconcile(payments.ReconcileAfter + time.Second)
	is.Equal(len(e.payEvents(e.Live, "invoice.paid", inv.Str("id"))), 1)

	// The renewal: a new recurring charge due on the renewal day, paid.
	end := e.Do("GET", "/v1/subscriptions/"+id, e.Live, nil).Time("current_period_end")
	e.Clock.Advance(end.Sub(e.Clock.Now()) + time.Second)
	is.NoErr(e.Jobs.RunDue(context.Background()))
	s := e.Do("GET", "/v1/subscriptions/"+id, e.Live, nil)
	renewal := e.Do("GET", "/v1/invoices/"+s.Str("latest_invoice"), e.Live, nil)
	is.Equal(renewal.Str("billing_reason"), "subscription_cycle")
	is.Equal(renewal.Str("status"), "open")
	txid2 := e.cobrTxID(t, renewal)
	is.True(txid2 != txid)
	is.Equal(e.PSP.CobR(txid2)["calendario"].(map[string]any)["dataDeVencimento"], end.In(time.FixedZone("BRT", -3*3600)).Format("2006-01-02"))
	// While the PSP holds the charge, the hosted invoice page does not take another payment.
	page := renewal.Str("hosted_invoice_url")
	u, err := url.Parse(page)
	is.NoErr(err)
	for _, form := range []url.Values{{"method": {"pix"}}, {"method": {"credit_card"}, "number": {liveApprove}, "exp_month": {"12"}, "exp_year": {"2035"},
		"cvc": {"123"}, "holder_name": {"Ana Souza"}}} {
		form.Set("s", u.Query().Get("s"))
		// A page loaded before the PSP took the charge posts its form (the page shows none now).
		form.Set("csrf_token", server.InvoicePageCSRF(e.Config.Secrets, renewal.Str("id"), u.Query().Get("s")))
		res, err := noRedirect(e.Client).PostForm(e.URL()+u.Path+"/pay", form)
		is.NoErr(err)
		res.Body.Close()
		is.Equal(res.StatusCode, http.StatusSeeOther)
		is.True(strings.Contains(res.Header.Get("Location"), "e=resource_state_conflict"))
	}
	is.Equal(e.Do("GET", "/v1/invoices/"+renewal.Str("id"), e.Live, nil).Str("payment_intent"), renewal.Str("payment_intent"))

	// The webhook is lost: reconciliation finds the payment.
	hook := e.PSP.WebhookClient
	e.PSP.WebhookClient = nil
	_ = e.PSP.SettleCobR(txid2, true, "", "")
	e.PSP.WebhookClient = hook
	e.reconcile(payments.PixPollEvery + time.Second)
	is.Equal(e.Do("GET", "/v1/invoices/"+renewal.Str("id"), e.Live, nil).Str("status"), "paid")
	is.Equal(e.PSP.CobRCount(), 2)
	e.noSecretsInLogs(t, "")
}

// TestLivePixAutomaticoRefusedChargeRetried: an attempt the payer's bank refuses fails the
// invoice's attempt with the PSP's rejection (invoice.payment_failed, past_due, a retry on the
// next business day); the retry is a retentativa of the same recurring charge, and it pays.
func TestLivePixAutomaticoRefusedChargeRetried(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	id, _, inv := e.livePixAutoSubscription(t, 4990)
	txid := e.cobrTxID(t, inv)
	is.NoErr(e.PSP.SettleCobR(txid, true, "", ""))

	end := e.Do("GET", "/v1/subscriptions/"+id, e.Live, nil).Time("current_period_end")
	e.Clock.Advance(end.Sub(e.Clock.Now()) + time.Second)
	is.NoErr(e.Jobs.RunDue(context.Background()))
	s := e.Do("GET", "/v1/subscriptions/"+id, e.Live, nil)
	invID := s.Str("latest_invoice")
	renewal := e.Do("GET", "/v1/invoices/"+invID, e.Live, nil)
	txid2 := e.cobrTxID(t, renewal)

	is.NoErr(e.PSP.SettleCobR(txid2, false, "AM02", "Saldo insuficiente"))
	renewal = e.Do("GET", "/v1/invoices/"+invID, e.Live, nil)
	is.Equal(renewal.Str("status"), "open")
	is.Equal(renewal.Num("attempt_count"), int64(1))
	is.Equal(e.Do("GET", "/v1/subscriptions/"+id, e.Live, nil).Str("status"), "past_due")
	failed := e.payEvents(e.Live, "invoice.payment_failed", invID)
	is.Equal(len(failed), 1)
	// The refusal is on the invoice and in its invoice.payment_failed event.
	is.Equal(digStr(renewal.Body, "last_payment_error.network_decline_code"), "AM02")
	is.Equal(digStr(renewal.Body, "last_payment_error.code"), "pix_automatico_refused")
	is.True(strings.Contains(digStr(renewal.Body, "last_payment_error.message"), "Saldo insuficiente"))
	is.Equal(digStr(failed[0], "data.object.last_payment_error.network_decline_code"), "AM02")
	pi := e.Do("GET", "/v1/payment-intents/"+renewal.Str("payment_intent"), e.Live, nil)
	is.Equal(pi.Str("status"), "requires_payment_method")
	is.Equal(digStr(pi.Body, "last_payment_error.network_decline_code"), "AM02")
	is.True(strings.Contains(digStr(pi.Body, "last_payment_error.message"), "Saldo insuficiente"))
	retryAt := renewal.Time("next_payment_attempt")
	is.True(retryAt.After(end))

	// The retry: a retentativa of the same charge, on the retry's day.
	e.Clock.Advance(retryAt.Sub(e.Clock.Now()) + time.Second)
	is.NoErr(e.Jobs.RunDue(context.Background()))
	cob := e.PSP.CobR(txid2)
	tent := cob["tentativas"].([]any)
	is.Equal(len(tent), 2)
	is.Equal(tent[1].(map[string]any)["tipo"], "RIFL")
	is.Equal(e.PSP.CobRCount(), 2) // no new recurring charge
	is.NoErr(e.PSP.SettleCobR(txid2, true, "", ""))
	renewal = e.Do("GET", "/v1/invoices/"+invID, e.Live, nil)
	is.Equal(renewal.Str("status"), "paid")
	is.Equal(renewal.Num("attempt_count"), int64(2))
	is.Equal(renewal.Body["last_payment_error"], nil) // paid: no error left
	is.Equal(e.Do("GET", "/v1/subscriptions/"+id, e.Live, nil).Str("status"), "active")
}

// TestLivePixAutomaticoChargeWithPSPDown: a renewal whose recurring charge meets a PSP answering
// 503 stays open (the outcome is unknown, nothing is charged again); once the PSP is back and
// has no such charge, reconciliation fails the attempt (processing_error, past_due) and the retry
// creates the charge, which pays the invoice.
func TestLivePixAutomaticoChargeWithPSPDown(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	id, _, inv := e.livePixAutoSubscription(t, 4990)
	is.NoErr(e.PSP.SettleCobR(e.cobrTxID(t, inv), true, "", ""))
	end := e.Do("GET", "/v1/subscriptions/"+id, e.Live, nil).Time("current_period_end")
	e.PSP.SetDown(true)
	e.Clock.Advance(end.Sub(e.Clock.Now()) + time.Second)
	is.NoErr(e.Jobs.RunDue(context.Background()))
	e.PSP.SetDown(false)
	s := e.Do("GET", "/v1/subscriptions/"+id, e.Live, nil)
	renewal := e.Do("GET", "/v1/invoices/"+s.Str("latest_invoice"), e.Live, nil)
	is.Equal(renewal.Str("status"), "open")
	is.Equal(e.Do("GET", "/v1/payment-intents/"+renewal.Str("payment_intent"), e.Live, nil).Str("status"), "processing")
	is.Equal(e.PSP.CobRCount(), 1)

	e.reconcile(payments.ReconcileAfter + time.Second) // the PSP has no such charge: maybe still in flight
	is.Equal(e.Do("GET", "/v1/invoices/"+renewal.Str("id"), e.Live, nil).Num("attempt_count"), int64(0))
	e.reconcile(payments.UnknownAfter)
	s = e.Do("GET", "/v1/subscriptions/"+id, e.Live, nil)
	is.Equal(s.Str("status"), "past_due")
	renewal = e.Do("GET", "/v1/invoices/"+renewal.Str("id"), e.Live, nil)
	is.Equal(renewal.Num("attempt_count"), int64(1))
	is.Equal(len(e.payEvents(e.Live, "invoice.payment_failed", renewal.Str("id"))), 1)
	pi := e.Do("GET", "/v1/payment-intents/"+renewal.Str("payment_intent"), e.Live, nil)
	is.Equal(digStr(pi.Body, "last_payment_error.code"), "processing_error")

	e.Clock.Advance(renewal.Time("next_payment_attempt").Sub(e.Clock.Now()) + time.Second)
	is.NoErr(e.Jobs.RunDue(context.Background()))
	is.Equal(e.PSP.CobRCount(), 2) // created by the retry
	renewal = e.Do("GET", "/v1/invoices/"+renewal.Str("id"), e.Live, nil)
	is.NoErr(e.PSP.SettleCobR(e.cobrTxID(t, renewal), true, "", ""))
	is.Equal(e.Do("GET", "/v1/invoices/"+renewal.Str("id"), e.Live, nil).Str("status"), "paid")
	is.Equal(e.Do("GET", "/v1/subscriptions/"+id, e.Live, nil).Str("status"), "active")
}

// TestLivePixAutomaticoAnswersLost: a recurrence the PSP created but whose answer was lost is
// 409 processor_call_in_progress, then found by reconciliation (by its contract) and created in
// troco once; a recurring charge whose answer was lost is read back (same txid), never created
// twice.
func TestLivePixAutomaticoAnswersLost(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, time.Second)
	cus := e.liveRecCustomer(t)
	e.PSP.DropNextRecAnswers(1, 2*time.Second)
	r := e.Do("POST", "/v1/pix-authorizations", e.Live, map[string]any{"customer": cus, "max_amount": 5000, "interval": "month"})
	is.Equal(r.Status, 409)
	is.Equal(digStr(r.Body, "error.code"), "processor_call_in_progress")
	is.Equal(len(e.PSP.Recs()), 1) // the PSP created it
	is.Equal(len(e.Do("GET", "/v1/pix-authorizations", e.Live, nil).Data()), 0)
	e.reconcile(payments.ReconcileAfter + time.Second)
	list := e.Do("GET", "/v1/pix-authorizations", e.Live, nil).Data()
	is.Equal(len(list), 1)
	pa := list[0]
	is.Equal(pa["status"], "pending")
	is.True(strings.HasPrefix(pa["brcode"].(string), "000201"))
	is.Equal(len(e.payEvents(e.Live, "pix_authorization.created", pa["id"].(string))), 1)
	is.Equal(len(e.PSP.Recs()), 1) // not created twice
	is.NoErr(e.PSP.AnswerRec(e.PSP.Recs()[0], "APROVADA"))
	pm := e.Do("GET", "/v1/pix-authorizations/"+pa["id"].(string), e.Live, nil).Str("payment_method")
	is.True(pm != "")

	// The first invoice's recurring charge: created, its answer lost, read back by the retry.
	e.PSP.DropNextCobAnswers(1, 2*time.Second)
	price := e.coPrice(e.Live, "Academia", 4990, map[string]any{"interval": "month"})
	s := e.Do("POST", "/v1/subscriptions", e.Live, map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pm})
	is.Equal(s.Status, 200)
	inv := e.Do("GET", "/v1/invoices/"+s.Str("latest_invoice"), e.Live, nil)
	is.Equal(inv.Str("status"), "open")
	is.Equal(e.PSP.CobRCount(), 1)
	txid := e.cobrTxID(t, inv)
	e.reconcile(payments.ReconcileAfter + time.Second)
	is.NoErr(e.PSP.SettleCobR(txid, true, "", ""))
	is.Equal(e.Do("GET", "/v1/invoices/"+inv.Str("id"), e.Live, nil).Str("status"), "paid")
	is.Equal(e.PSP.CobRCount(), 1)
}

// TestLivePixAutomaticoRetriesExhausted: the first attempt and its three retries (retentativas
// of the one recurring charge) all refused: four invoice.payment_failed, then the final action
// (canceled) and the PSP's charge ends REJEITADA.
func TestLivePixAutomaticoRetriesExhausted(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	id, _, inv := e.livePixAutoSubscription(t, 4990)
	is.NoErr(e.PSP.SettleCobR(e.cobrTxID(t, inv), true, "", ""))
	end := e.Do("GET", "/v1/subscriptions/"+id, e.Live, nil).Time("current_period_end")
	e.Clock.Advance(end.Sub(e.Clock.Now()) + time.Second)
	is.NoErr(e.Jobs.RunDue(context.Background()))
	invID := e.Do("GET", "/v1/subscriptions/"+id, e.Live, nil).Str("latest_invoice")
	txid := e.cobrTxID(t, e.Do("GET", "/v1/invoices/"+invID, e.Live, nil))
	for attempt := 1; attempt <= 4; attempt++ {
		is.NoErr(e.PSP.SettleCobR(txid, false, "AM02", "Saldo insuficiente"))
		renewal := e.Do("GET", "/v1/invoices/"+invID, e.Live, nil)
		is.Equal(renewal.Num("attempt_count"), int64(attempt))
		is.Equal(len(e.payEvents(e.Live, "invoice.payment_failed", invID)), attempt)
		if attempt == 4 {
			is.Equal(renewal.Body["next_payment_attempt"], nil)
			break
		}
		e.Clock.Advance(renewal.Time("next_payment_attempt").Sub(e.Clock.Now()) + time.Second)
		is.NoErr(e.Jobs.RunDue(context.Background()))
		is.Equal(len(e.PSP.CobR(txid)["tentativas"].([]any)), attempt+1) // a retentativa of the same charge
	}
	is.Equal(e.PSP.CobR(txid)["status"], "REJEITADA")
	is.Equal(e.Do("GET", "/v1/subscriptions/"+id, e.Live, nil).Str("status"), "canceled")
	is.Equal(e.PSP.CobRCount(), 2)
}

// noRedirect is c without following redirects (a hosted form's answer is its redirect).
func noRedirect(c *http.Client) *http.Client {
	cp := *c
	cp.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &cp
}
