package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"troco/db"
	"troco/server/domain"
)

// Helpers of the payment tests (issue 3).

// withT is a copy of env whose failures belong to t (parallel subtests share one server).
func withT(env *testEnv, t *testing.T) *testEnv {
	e := *env
	e.t = t
	return &e
}

// payCard is a confirm body's card object with a future expiry and a 3-digit CVC.
func payCard(number string) map[string]any {
	return map[string]any{"number": number, "exp_month": 12, "exp_year": time.Now().Year() + 3, "cvc": "123", "holder_name": "Ana Souza"}
}

// dig walks nested JSON objects by dotted path ("error.payment_intent.status").
func dig(m map[string]any, path string) any {
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = obj[k]
	}
	return cur
}

// digStr is dig for a string leaf ("" when absent).
func digStr(m map[string]any, path string) string {
	s, _ := dig(m, path).(string)
	return s
}

// digNum is dig for a number leaf (-1 when absent).
func digNum(m map[string]any, path string) int64 {
	f, ok := dig(m, path).(float64)
	if !ok {
		return -1
	}
	return int64(f)
}

// payIntent creates a payment intent with amount and extra fields, failing the test otherwise.
func (e *testEnv) payIntent(token string, amount int64, extra map[string]any) resp {
	e.t.Helper()
	body := map[string]any{"amount": amount}
	for k, v := range extra {
		body[k] = v
	}
	r := e.Do("POST", "/v1/payment-intents", token, body)
	if r.Status != 200 {
		e.t.Fatalf("create payment intent: %d %s", r.Status, r.Raw)
	}
	return r
}

// payConfirm confirms intent id with body.
func (e *testEnv) payConfirm(token, id string, body map[string]any, headers ...string) resp {
	e.t.Helper()
	return e.Do("POST", "/v1/payment-intents/"+id+"/confirm", token, body, headers...)
}

// payCustomer creates a customer with an e-mail.
func (e *testEnv) payCustomer(token, email string) string {
	e.t.Helper()
	r := e.Do("POST", "/v1/customers", token, map[string]any{"email": email, "name": "Ana Souza"})
	if r.Status != 200 {
		e.t.Fatalf("create customer: %d %s", r.Status, r.Raw)
	}
	return r.Str("id")
}

// payEvents returns the events of a type (newest first) whose data.object.id is objectID.
func (e *testEnv) payEvents(token, typ, objectID string) []map[string]any {
	e.t.Helper()
	r := e.Do("GET", "/v1/events?limit=100&type="+typ, token, nil)
	if r.Status != 200 {
		e.t.Fatalf("list events: %d %s", r.Status, r.Raw)
	}
	var out []map[string]any
	for _, ev := range r.Data() {
		if digStr(ev, "data.object.id") == objectID {
			out = append(out, ev)
		}
	}
	return out
}

// payCount counts the rows of a list endpoint (up to 100).
func (e *testEnv) payCount(token, path string) int {
	e.t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	r := e.Do("GET", path+sep+"limit=100", token, nil)
	if r.Status != 200 {
		e.t.Fatalf("list %s: %d %s", path, r.Status, r.Raw)
	}
	return len(r.Data())
}

// activate moves the test organization to active (live payments allowed).
func (e *testEnv) activate(t *testing.T) {
	t.Helper()
	err := e.DB.Write(context.Background(), func(tx *db.Tx) error { return tx.SetOrganizationActivationStatus(e.Org.ID, domain.ActivationActive) })
	if err != nil {
		t.Fatal(err)
	}
}

// boletoBuyer is valid buyer data for a boleto confirmation.
func boletoBuyer(email string) map[string]any {
	return map[string]any{
		"payment_method_type": "boleto",
		"customer_email":      email,
		"customer_name":       "Ana Souza",
		"customer_document":   "529.982.247-25",
		"billing_address": map[string]any{"line1": "Avenida Paulista", "number": "1000", "neighborhood": "Bela Vista", "city": "São Paulo",
			"state": "SP", "postal_code": "01310-100", "country": "BR"},
	}
}
