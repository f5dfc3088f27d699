package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"troco/server/domain"
)

// oldEncoding is what the API wrote for v before the hand-written encoders: encoding/json with
// HTML escaping off.
func oldEncoding(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte{'\n'}))
}

// sameAsEncodingJSON checks that raw, an intent or a charge as the API wrote it, is byte for
// byte what encoding/json writes for the object it decodes to.
func sameAsEncodingJSON(t *testing.T, where string, raw []byte, into any) {
	t.Helper()
	v := reflect.New(reflect.TypeOf(into).Elem()).Interface()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v: %s", where, err, raw)
	}
	if want := oldEncoding(t, v); string(raw) != want {
		t.Errorf("%s: %s", where, diffAt(string(raw), want))
	}
}

// rawField returns the raw JSON of a dotted path in an object.
func rawField(t *testing.T, raw []byte, path ...string) []byte {
	t.Helper()
	for _, k := range path {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%v: %s", err, raw)
		}
		raw = m[k]
	}
	return raw
}

// TestPaymentObjectsAreEncodingJSONBytes: the payment intents and charges the API writes with
// the hand-written encoders (a create, a one-request payment, a retrieve, a list, an event, a
// webhook delivery) are byte for byte what encoding/json wrote for them, with texts that need
// escaping (HTML characters, U+2028/U+2029, a U+FFFD sent on purpose, quotes, backslashes,
// control characters, emoji) in every text field a client sets, for paid, declined, manual
// capture, PIX and boleto payments.
func TestPaymentObjectsAreEncodingJSONBytes(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, false)
	d := startWebhooks(e)
	e.createEndpoint(e.Test, rc.URL(), "payment_intent.*", "charge.*")
	nasty := "<b>&amp; \u2028\u2029 \ufffd \"q\" \\ \t\n\x01 🎉 ação"
	meta := map[string]string{"z": nasty, "a": "1", "order_id": "<42>", "M": "\u2028"}
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"name": nasty, "email": "ana@example.com", "phone": "+5511999990000",
		"address": map[string]any{"line1": nasty, "number": "1", "neighborhood": "Centro", "city": "São Paulo", "state": "SP", "postal_code": "01305-000", "country": "BR"}})
	if cus.Status != 200 {
		t.Fatalf("customer: %d %s", cus.Status, cus.Raw)
	}
	bodies := []map[string]any{
		{"amount": 12345, "description": nasty, "metadata": meta, "statement_descriptor": "LOJA 42"},
		{"amount": 12345, "description": nasty, "metadata": meta, "confirm": true, "card": payCard("4242424242424242"), "installments": 4, "customer": cus.Str("id")},
		{"amount": 5000, "metadata": meta, "confirm": true, "card": payCard("4000000000000002"), "customer_name": nasty, "customer_email": "ana@example.com"},
		{"amount": 5000, "capture_method": "manual", "confirm": true, "card": payCard("4000000000000127"), "customer": cus.Str("id")},
		{"amount": 5000, "capture_method": "manual", "confirm": true, "card": payCard("4242424242424242"), "billing_address": map[string]any{"line1": nasty, "line2": nasty, "neighborhood": nasty, "city": "X", "state": "SP", "postal_code": "01305-000", "country": "BR"}},
		{"amount": 5000, "description": nasty, "confirm": true, "payment_method_type": "pix", "customer_email": "ana@example.com"},
		{"amount": 5000, "confirm": true, "payment_method_type": "boleto", "customer": cus.Str("id"), "customer_document": "52998224725"},
		{"amount": 5000, "payment_method_types": []string{"pix"}, "metadata": map[string]string{}},
	}
	for i, b := range bodies {
		r := e.Do("POST", "/v1/payment-intents", e.Test, b)
		if r.Status != 200 && r.Status != 402 {
			t.Fatalf("%d: %d %s", i, r.Status, r.Raw)
		}
		raw := bytes.TrimSuffix(r.Raw, []byte{'\n'})
		if r.Status == 402 {
			raw = rawField(t, raw, "error", "payment_intent")
		}
		sameAsEncodingJSON(t, fmt.Sprint("create ", i), raw, &domain.PaymentIntent{})
	}
	// A refund and a capture change a charge after its payment.
	list := e.Do("GET", "/v1/payment-intents?limit=100", e.Test, nil)
	for _, pi := range list.Data() {
		if pi["status"] == "requires_capture" {
			if r := e.Do("POST", "/v1/payment-intents/"+pi["id"].(string)+"/capture", e.Test, map[string]any{"amount_to_capture": 3000}); r.Status != 200 {
				t.Fatalf("capture: %d %s", r.Status, r.Raw)
			}
		}
		if pi["status"] == "succeeded" {
			if r := e.Do("POST", "/v1/refunds", e.Test, map[string]any{"payment_intent": pi["id"], "amount": 100, "metadata": meta}); r.Status != 200 {
				t.Fatalf("refund: %d %s", r.Status, r.Raw)
			}
		}
	}
	e.deliver(d)

	checkList := func(path string, into any) int {
		r := e.Do("GET", path, e.Test, nil)
		var l struct{ Data []json.RawMessage }
		if err := json.Unmarshal(r.Raw, &l); err != nil {
			t.Fatal(err)
		}
		for _, raw := range l.Data {
			sameAsEncodingJSON(t, "list "+path, raw, into)
			var obj struct{ ID string }
			_ = json.Unmarshal(raw, &obj)
			one := e.Do("GET", path[:bytes.IndexByte([]byte(path), '?')]+"/"+obj.ID, e.Test, nil)
			sameAsEncodingJSON(t, "retrieve "+obj.ID, bytes.TrimSuffix(one.Raw, []byte{'\n'}), into)
		}
		return len(l.Data)
	}
	if n := checkList("/v1/payment-intents?limit=100", &domain.PaymentIntent{}); n != len(bodies) {
		t.Fatalf("%d intents", n)
	}
	if n := checkList("/v1/charges?limit=100", &domain.Charge{}); n < 6 {
		t.Fatalf("%d charges", n)
	}
	// Events and their webhook deliveries.
	evs := e.Do("GET", "/v1/events?limit=100", e.Test, nil)
	var l struct{ Data []json.RawMessage }
	if err := json.Unmarshal(evs.Raw, &l); err != nil {
		t.Fatal(err)
	}
	checked := 0
	check := func(where string, ev []byte) {
		var head struct{ Type string }
		_ = json.Unmarshal(ev, &head)
		obj := rawField(t, ev, "data", "object")
		switch {
		case len(head.Type) > 15 && head.Type[:15] == "payment_intent.":
			sameAsEncodingJSON(t, where+" "+head.Type, obj, &domain.PaymentIntent{})
			checked++
		case len(head.Type) > 7 && head.Type[:7] == "charge.":
			sameAsEncodingJSON(t, where+" "+head.Type, obj, &domain.Charge{})
			checked++
		}
	}
	for _, ev := range l.Data {
		check("event", ev)
	}
	for _, m := range rc.requests() {
		check("webhook", m.Body)
	}
	if checked < 20 {
		t.Fatalf("only %d event objects checked", checked)
	}
}
