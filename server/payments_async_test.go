package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
	"troco/server/calendar"

	"github.com/matryer/is"

	"troco/db"
	"troco/server/boleto"
	"troco/server/domain"
	"troco/server/pix"
	"troco/server/simulation"
)

// TestAsyncEmailRules runs every SPEC 8.5 rule for PIX and boleto: the initial state and, for
// delayed rules, the transition after --sim-delay driven by the persisted job.
func TestAsyncEmailRules(t *testing.T) {
	env := newEnv(t)
	for _, method := range []string{"pix", "boleto"} {
		for _, rule := range simulation.Rules() {
			t.Run(method+"_"+rule.LocalPart, func(t *testing.T) {
				is := is.New(t)
				e := withT(env, t)
				email := rule.LocalPart + "@example.com"
				pi := e.payIntent(e.Test, 15000, nil)
				id := pi.Str("id")
				body := map[string]any{"payment_method_type": "pix", "customer_email": email}
				if method == "boleto" {
					body = boletoBuyer(email)
				}
				r := e.payConfirm(e.Test, id, body)
				is.Equal(r.Status, 200) // confirm
				is.Equal(r.Str("status"), string(rule.Initial))
				chID := r.Str("latest_charge")
				switch rule.Initial {
				case simulation.StatePending:
					is.Equal(digStr(r.Body, "next_action.type"), method) // waiting: the buyer must pay
					checkArtefacts(t, e, r, method, 15000)
				case simulation.StateSucceeded:
					is.Equal(r.Body["next_action"], nil)
					is.Equal(digNum(r.Body, "amount_received"), int64(15000))
					is.Equal(e.payCount(e.Test, "/v1/transactions?payment_intent="+id), 1) // one ledger entry
				case simulation.StateRequiresPaymentMethod:
					is.Equal(digStr(r.Body, "last_payment_error.code"), "payment_intent_payment_attempt_expired")
					is.Equal(len(e.payEvents(e.Test, "charge.failed", chID)), 1)
				}
				if !rule.Delayed() {
					return
				}
				var pending []db.ScheduledTransition
				is.NoErr(e.DB.Read(context.Background(), func(tx *db.Tx) error {
					var err error
					pending, err = tx.ListTransitions(domain.Scope{OrgID: e.Org.ID}, id)
					return err
				}))
				is.Equal(len(pending), 1) // the delayed transition is a row in the database
				is.NoErr(e.Jobs.RunDue(context.Background()))
				is.Equal(e.Do("GET", "/v1/payment-intents/"+id, e.Test, nil).Str("status"), "pending") // not due yet
				e.Clock.Advance(3 * time.Minute)
				is.NoErr(e.Jobs.RunDue(context.Background()))
				after := e.Do("GET", "/v1/payment-intents/"+id, e.Test, nil)
				is.Equal(after.Str("status"), string(rule.After)) // moved by the job
				is.Equal(after.Body["next_action"], nil)
				ch := e.Do("GET", "/v1/charges/"+chID, e.Test, nil)
				if rule.After == simulation.StateSucceeded {
					is.Equal(ch.Str("status"), "succeeded")
					is.Equal(ch.Body["paid"], true)
					is.Equal(len(e.payEvents(e.Test, "payment_intent.succeeded", id)), 1)
					ev := e.payEvents(e.Test, "charge.succeeded", chID)
					is.Equal(len(ev), 1)
					is.Equal(digStr(ev[0], "data.previous_attributes.status"), "pending") // previous_attributes
				} else {
					is.Equal(ch.Str("status"), "failed")
					is.Equal(len(e.payEvents(e.Test, "payment_intent.payment_failed", id)), 1)
					again := e.payConfirm(e.Test, id, map[string]any{"payment_method_type": "pix", "customer_email": "succeed_immediately@example.com"})
					is.Equal(again.Str("status"), "succeeded") // an expired intent accepts another attempt
				}
			})
		}
	}
}

// checkArtefacts verifies the API's PIX and boleto outputs against the standards.
func checkArtefacts(t *testing.T, e *testEnv, r resp, method string, amount int64) {
	is := is.New(t)
	if method == "pix" {
		code := digStr(r.Body, "next_action.pix.code")
		is.NoErr(pix.Verify(code)) // a valid BR Code, CRC correct
		c, err := pix.Parse(code)
		is.NoErr(err)
		is.Equal(c.Amount, amount)
		is.True(c.SingleUse)
		exp, err := domain.ParseTimestamp(digStr(r.Body, "next_action.pix.expires_at"))
		is.NoErr(err)
		is.True(exp.After(time.Now()))
		img := digStr(r.Body, "next_action.pix.image_url")
		is.True(strings.HasPrefix(img, e.URL()+"/payment-intents/"+r.Str("id")+"/pix.png?client_secret="))
		res, err := e.Client.Get(img) // no API key
		is.NoErr(err)
		png, _ := io.ReadAll(res.Body)
		res.Body.Close()
		is.Equal(res.StatusCode, 200)
		is.Equal(res.Header.Get("Content-Type"), "image/png")
		is.True(strings.HasPrefix(string(png), "\x89PNG"))
		return
	}
	line := digStr(r.Body, "next_action.boleto.digitable_line")
	barcode := digStr(r.Body, "next_action.boleto.barcode")
	due := digStr(r.Body, "next_action.boleto.due_date")
	is.Equal(len(line), 47)
	is.Equal(len(barcode), 44)
	is.NoErr(boleto.ValidateLine(line)) // field and general check digits
	is.NoErr(boleto.ValidateBarcode(barcode))
	fromLine, err := boleto.BarcodeFromLine(line)
	is.NoErr(err)
	is.Equal(fromLine, barcode) // line and barcode agree
	f, err := boleto.ParseBarcode(barcode)
	is.NoErr(err)
	is.Equal(f.Amount, amount) // the value field carries the amount
	d, err := boleto.ParseDate(due)
	is.NoErr(err)
	factor, err := boleto.DueFactor(d)
	is.NoErr(err)
	is.Equal(f.Factor, factor) // the due factor matches due_date
	is.Equal(line[33:37], strconv.Itoa(factor))
	page := digStr(r.Body, "next_action.boleto.url")
	res, err := e.Client.Get(page)
	is.NoErr(err)
	html, _ := io.ReadAll(res.Body)
	res.Body.Close()
	is.Equal(res.StatusCode, 200)
	is.True(strings.HasPrefix(res.Header.Get("Content-Type"), "text/html"))
	formatted, _ := boleto.FormatLine(line)
	money := fmt.Sprintf("R$ %d,%02d", amount/100, amount%100)
	want := append(strings.Fields(formatted), "<svg", "Imprimir", "529.982.247-25", "Ana Souza", money, `data-testid="sandbox-banner"`,
		"Recibo do Pagador", "Ficha de Compensação", "999-7", boleto.NossoNumero(barcode))
	for _, want := range want {
		is.True(strings.Contains(string(html), want)) // printable page content
	}
	res, err = e.Client.Get(strings.Split(page, "?")[0] + "?client_secret=wrong")
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, http.StatusNotFound) // the secret is required
}

// TestDelayedTransitionSurvivesRestart: the scheduled transition lives in the database, so a
// server restarted on the same file applies it when due.
func TestDelayedTransitionSurvivesRestart(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.payIntent(e.Test, 2000, nil).Str("id")
	r := e.payConfirm(e.Test, id, map[string]any{"payment_method_type": "pix", "customer_email": "succeed_delayed@example.com"})
	is.Equal(r.Str("status"), "pending")
	is.NoErr(e.DB.Close()) // the process stops

	e2 := reopen(t, e)
	e2.Clock.Advance(3 * time.Minute)
	is.NoErr(e2.Jobs.RunDue(context.Background()))
	is.Equal(e2.Do("GET", "/v1/payment-intents/"+id, e2.Test, nil).Str("status"), "succeeded")
	is.NoErr(e2.Jobs.RunDue(context.Background()))
	is.Equal(len(e2.payEvents(e2.Test, "payment_intent.succeeded", id)), 1) // applied exactly once
}

// TestWaitingCardsSettleAfterSimDelay: the processing and pending cards of SPEC 7.1 ("wait for
// the webhook") settle after --sim-delay through a persisted transition, with the success
// events; the waiting intent refuses another attempt meanwhile.
func TestWaitingCardsSettleAfterSimDelay(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	for _, number := range []string{"4000009000000425", "4000009000000433"} {
		id := e.payIntent(e.Test, 3000, nil).Str("id")
		r := e.payConfirm(e.Test, id, map[string]any{"card": payCard(number)})
		is.Equal(r.Status, 200)
		waiting := r.Str("status")
		is.True(waiting == "processing" || waiting == "pending")
		is.Equal(e.payConfirm(e.Test, id, map[string]any{"card": payCard("4242424242424242")}).Status, 409) // no other attempt
		e.Clock.Advance(time.Minute)
		is.NoErr(e.Jobs.RunDue(context.Background()))
		is.Equal(e.Do("GET", "/v1/payment-intents/"+id, e.Test, nil).Str("status"), waiting) // not yet
		e.Clock.Advance(2 * time.Minute)
		is.NoErr(e.Jobs.RunDue(context.Background()))
		pi := e.Do("GET", "/v1/payment-intents/"+id, e.Test, nil)
		is.Equal(pi.Str("status"), "succeeded")
		ch := e.Do("GET", "/v1/charges/"+pi.Str("latest_charge"), e.Test, nil)
		is.Equal(ch.Str("status"), "succeeded")
		is.Equal(ch.Body["captured"], true)
		is.True(digStr(ch.Body, "payment_method_details.card.authorization_code") != "")
		is.Equal(len(e.payEvents(e.Test, "payment_intent.succeeded", id)), 1)
		is.Equal(len(e.payEvents(e.Test, "charge.succeeded", pi.Str("latest_charge"))), 1)
		is.Equal(e.payCount(e.Test, "/v1/transactions?payment_intent="+id), 1) // the sale is in the ledger
	}
}

// TestAsyncTestHelpers: succeed/expire resolve waiting payments; live keys are refused.
func TestAsyncTestHelpers(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.payIntent(e.Test, 2000, nil).Str("id")
	r := e.payConfirm(e.Test, id, map[string]any{"payment_method_type": "pix", "customer_email": "ana@example.com"})
	is.Equal(r.Str("status"), "pending") // an ordinary e-mail waits
	req := e.NewRequest("GET", "/v1/payment-intents/"+id+"/pix.png", nil)
	req.Header.Set("Authorization", "Bearer "+e.Test)
	res, err := e.Client.Do(req)
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, 200) // the QR image for API callers
	is.Equal(res.Header.Get("Content-Type"), "image/png")
	r = e.Do("POST", "/v1/test-helpers/payment-intents/"+id+"/succeed", e.Test, nil)
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "succeeded")
	r = e.Do("POST", "/v1/test-helpers/payment-intents/"+id+"/expire", e.Test, nil)
	is.Equal(r.Status, 409) // already final

	id = e.payIntent(e.Test, 2000, nil).Str("id")
	e.payConfirm(e.Test, id, boletoBuyer("expire_delayed@example.com"))
	r = e.Do("POST", "/v1/test-helpers/payment-intents/"+id+"/expire", e.Test, nil)
	is.Equal(r.Str("status"), "requires_payment_method")
	e.Clock.Advance(3 * time.Minute)
	is.NoErr(e.Jobs.RunDue(context.Background()))
	is.Equal(len(e.payEvents(e.Test, "payment_intent.payment_failed", id)), 1) // the helper's transition only

	id = e.payIntent(e.Test, 2000, nil).Str("id")
	r = e.Do("POST", "/v1/test-helpers/payment-intents/"+id+"/succeed", e.Test, nil)
	is.Equal(r.Str("status"), "succeeded") // an unconfirmed intent gets a simulated approved card

	live := e.payIntent(e.Live, 2000, nil).Str("id")
	r = e.Do("POST", "/v1/test-helpers/payment-intents/"+live+"/succeed", e.Live, nil)
	is.Equal(r.Status, 403)
	is.Equal(r.ErrCode(), "testmode_required")
}

// TestBoletoValidation: document, name, address and due date rules, in both modes; a field
// left out is 400 parameter_missing, a bad value 400 invalid_request.
func TestBoletoValidation(t *testing.T) {
	e := newEnv(t)
	today := time.Now().UTC()
	cases := []struct {
		name  string
		edit  func(b map[string]any)
		param string
	}{
		// A required field left out is parameter_missing; one sent with a bad value invalid_request.
		{"no document", func(b map[string]any) { delete(b, "customer_document") }, "customer_document"},
		{"bad CPF check digit", func(b map[string]any) { b["customer_document"] = "529.982.247-26" }, "customer_document"},
		{"bad CNPJ check digit", func(b map[string]any) { b["customer_document"] = "11.222.333/0001-82" }, "customer_document"},
		{"no name", func(b map[string]any) { delete(b, "customer_name") }, "customer_name"},
		{"no address", func(b map[string]any) { delete(b, "billing_address") }, "billing_address"},
		{"bad state", func(b map[string]any) { b["billing_address"].(map[string]any)["state"] = "XX" }, "billing_address[state]"},
		{"bad CEP", func(b map[string]any) { b["billing_address"].(map[string]any)["postal_code"] = "123" }, "billing_address[postal_code]"},
		{"no neighborhood", func(b map[string]any) { delete(b["billing_address"].(map[string]any), "neighborhood") }, "billing_address[neighborhood]"},
		{"empty street", func(b map[string]any) { b["billing_address"].(map[string]any)["line1"] = " " }, "billing_address[line1]"},
		{"no CEP", func(b map[string]any) { delete(b["billing_address"].(map[string]any), "postal_code") }, "billing_address[postal_code]"},
		{"past due date", func(b map[string]any) { b["boleto_due_date"] = today.AddDate(0, 0, -1).Format("2006-01-02") }, "boleto_due_date"},
		{"impossible due date", func(b map[string]any) { b["boleto_due_date"] = "2027-02-30" }, "boleto_due_date"},
		{"timestamp due date", func(b map[string]any) { b["boleto_due_date"] = "2027-02-10T12:00:00Z" }, "boleto_due_date"},
	}
	e.activate(t)
	env := e
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			e := withT(env, t)
			for _, key := range []string{e.Test, e.Live} {
				pi := e.payIntent(key, 5000, nil)
				body := boletoBuyer("pending@example.com")
				c.edit(body)
				r := e.payConfirm(key, pi.Str("id"), body)
				is.Equal(r.Status, 400) // rejected before anything, in both modes
				is.Equal(r.ErrParam(), c.param)
				code := "invalid_request"
				if strings.HasPrefix(c.name, "no ") || strings.HasPrefix(c.name, "empty ") {
					code = "parameter_missing"
				}
				is.Equal(r.ErrCode(), code)
			}
		})
	}
	t.Run("due date default and override", func(t *testing.T) {
		is := is.New(t)
		e := withT(env, t)
		r := e.payConfirm(e.Test, e.payIntent(e.Test, 5000, nil).Str("id"), boletoBuyer("pending@example.com"))
		// 3 days after confirmation, moved to the next business day
		is.Equal(digStr(r.Body, "next_action.boleto.due_date"), (*calendar.Calendar)(nil).OnOrAfter(today.AddDate(0, 0, 3)).Format("2006-01-02"))
		want := today.AddDate(0, 0, 10).Format("2006-01-02")
		body := boletoBuyer("pending@example.com")
		body["boleto_due_date"] = want
		r = e.payConfirm(e.Test, e.payIntent(e.Test, 5000, nil).Str("id"), body)
		is.Equal(digStr(r.Body, "next_action.boleto.due_date"), want)
		checkArtefacts(t, e, r, "boleto", 5000)
	})
	t.Run("customer data", func(t *testing.T) {
		is := is.New(t)
		e := withT(env, t)
		cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "pending@example.com", "name": "Ana Souza", "document": "52998224725",
			"address": map[string]any{"line1": "Rua Augusta", "number": "1500", "neighborhood": "Consolação", "city": "São Paulo", "state": "SP", "postal_code": "01304-001"}})
		r := e.payConfirm(e.Test, e.payIntent(e.Test, 5000, map[string]any{"customer": cus.Str("id")}).Str("id"), map[string]any{"payment_method_type": "boleto"})
		is.Equal(r.Status, 200) // the customer's document and address serve the boleto
		is.Equal(r.Str("status"), "pending")

		// SPEC 8.5: the e-mail of the intent's customer picks the rule when the confirm sends
		// none, also for a customer set by an update; the local part matches exactly.
		for email, want := range map[string]string{"succeed_immediately@example.org": "succeeded",
			"expire_immediately@example.org": "requires_payment_method", "Succeed_Immediately@example.org": "pending"} {
			c := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": email})
			pi := e.payIntent(e.Test, 5000, nil).Str("id")
			is.Equal(e.Do("POST", "/v1/payment-intents/"+pi, e.Test, map[string]any{"customer": c.Str("id")}).Status, 200)
			r := e.payConfirm(e.Test, pi, map[string]any{"payment_method_type": "pix"})
			is.Equal(r.Str("status"), want)
		}
	})
}

// TestRegenerateBoleto: a waiting boleto gets a new line and due date; an expired one a new attempt.
func TestRegenerateBoleto(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.payIntent(e.Test, 5000, nil).Str("id")
	r := e.payConfirm(e.Test, id, boletoBuyer("pending@example.com"))
	line := digStr(r.Body, "next_action.boleto.digitable_line")
	due := time.Now().UTC().AddDate(0, 0, 20).Format("2006-01-02")
	r2 := e.Do("POST", "/v1/payment-intents/"+id+"/regenerate-boleto", e.Test, map[string]any{"boleto_due_date": due})
	is.Equal(r2.Status, 200)
	is.Equal(r2.Str("status"), "pending")
	is.Equal(digStr(r2.Body, "next_action.boleto.due_date"), due)
	is.True(digStr(r2.Body, "next_action.boleto.digitable_line") != line) // a new line
	checkArtefacts(t, e, r2, "boleto", 5000)
	is.Equal(r2.Str("latest_charge"), r.Str("latest_charge"))

	e.Do("POST", "/v1/test-helpers/payment-intents/"+id+"/expire", e.Test, nil)
	r3 := e.Do("POST", "/v1/payment-intents/"+id+"/regenerate-boleto", e.Test, nil)
	is.Equal(r3.Status, 200) // an expired boleto is reissued as a new attempt
	is.Equal(r3.Str("status"), "pending")
	is.True(r3.Str("latest_charge") != r.Str("latest_charge"))

	card := e.payIntent(e.Test, 5000, nil).Str("id")
	e.payConfirm(e.Test, card, map[string]any{"card": payCard("4242424242424242")})
	r4 := e.Do("POST", "/v1/payment-intents/"+card+"/regenerate-boleto", e.Test, nil)
	is.Equal(r4.Status, 409) // not a boleto
}
