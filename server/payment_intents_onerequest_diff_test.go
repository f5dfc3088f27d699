package server_test

import (
	"fmt"
	"regexp"
	"slices"
	"testing"
	"time"
)

// anyRandom is any long random token (ids inside e-mails, PIX txids, BR Code checksums).
var anyRandom = regexp.MustCompile(`[A-Za-z0-9]{20,}|6304[0-9A-F]{4}|\d{5}\.\d{5} \d{5}\.\d{6} \d{5}\.\d{6} \d \d{14}`)

// norm is normalized with every long random token blanked too.
func norm(t *testing.T, v any) string {
	t.Helper()
	return anyRandom.ReplaceAllString(normalized(t, v), "R")
}

// diffAt shows where two texts first differ.
func diffAt(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-200)
	return fmt.Sprintf("at %d:\n one ...%s\n two ...%s", i, a[lo:min(len(a), i+300)], b[lo:min(len(b), i+300)])
}

// orgEventsNormalized lists every event of token's organization, oldest first, without the
// request that made it (one request against two), ids, times and secrets blanked.
func (e *testEnv) orgEventsNormalized(t *testing.T, token string) []string {
	t.Helper()
	r := e.Do("GET", "/v1/events?limit=100", token, nil)
	if r.Status != 200 {
		t.Fatalf("list events: %d %s", r.Status, r.Raw)
	}
	var out []string
	for _, ev := range r.Data() {
		delete(ev, "request")
		out = append(out, norm(t, ev))
	}
	slices.Reverse(out)
	return out
}

// orgState is everything a payment leaves in token's organization that a user can read:
// intents, charges, payment methods, ledger, e-mails, events.
func (e *testEnv) orgState(t *testing.T, token string) map[string]string {
	t.Helper()
	st := map[string]string{}
	for _, path := range []string{"/v1/payment-intents?limit=100", "/v1/charges?limit=100", "/v1/transactions?limit=100",
		"/v1/test-helpers/emails?limit=100", "/v1/customers?limit=100"} {
		r := e.Do("GET", path, token, nil)
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", path, r.Status, r.Raw)
		}
		st[path] = norm(t, r.Data())
	}
	for _, pi := range e.Do("GET", "/v1/payment-intents?limit=100", token, nil).Data() {
		r := e.Do("GET", "/v1/payment-intents/"+pi["id"].(string), token, nil)
		st["GET "+normalized(t, pi["id"])] = fmt.Sprint(r.Status, norm(t, r.Body))
		if pm, ok := pi["payment_method"].(string); ok {
			r := e.Do("GET", "/v1/payment-methods/"+pm, token, nil)
			st["pm "+normalized(t, pm)] = fmt.Sprint(r.Status, norm(t, r.Body))
		}
	}
	for i, ev := range e.orgEventsNormalized(t, token) {
		st[fmt.Sprintf("event %02d", i)] = ev
	}
	return st
}

// TestCreateWithConfirmEveryOutcomeIsTheTwoCalls: for every sandbox card outcome (success,
// requires_capture, processing, pending, each decline category, a dispute card, CVC and
// expired card declines), manual capture, instalments, save_payment_method with a customer
// (paid and declined), billing details, metadata with characters that need escaping, PIX and
// boleto, and refusals (a bad card number, an unknown customer), one request with confirm: true
// answers and leaves exactly what create then confirm leave: the answer, the intents, charges,
// payment methods, ledger, e-mails and every event with its data and previous_attributes.
func TestCreateWithConfirmEveryOutcomeIsTheTwoCalls(t *testing.T) {
	e := newEnv(t)
	meta := map[string]string{"order": "<42> & \u2028 \"q\" \\ 🎉", "b": "x"}
	cases := []struct {
		name          string
		create, conf  map[string]any
		withCustomer  bool
		afterwardsCap bool
		refused       bool   // the one request keeps nothing, where the two calls keep the created intent
		savedCard     string // pay with the customer's card saved by a setup intent (payment_method)
	}{
		{name: "saved card", create: map[string]any{"amount": 5000, "metadata": meta}, conf: map[string]any{"installments": 2}, withCustomer: true, savedCard: "4242424242424242"},
		{name: "saved card declined on reuse", create: map[string]any{"amount": 5000}, conf: map[string]any{}, withCustomer: true, savedCard: "4000009000000623"},
		{name: "saved card processing on reuse", create: map[string]any{"amount": 5000}, conf: map[string]any{}, withCustomer: true, savedCard: "4000009000000631"},
		{name: "saved card, manual capture", create: map[string]any{"amount": 5000, "capture_method": "manual"}, conf: map[string]any{}, withCustomer: true, savedCard: "4242424242424242", afterwardsCap: true},
		{name: "success", create: map[string]any{"amount": 25000, "description": "Plano <anual> & \u2028", "metadata": meta}, conf: map[string]any{"card": payCard("4242424242424242"), "installments": 3, "customer_email": "ana@example.com"}},
		{name: "requires capture card", create: map[string]any{"amount": 5000}, conf: map[string]any{"card": payCard("4000000000003220")}, afterwardsCap: true},
		{name: "manual capture", create: map[string]any{"amount": 5000, "capture_method": "manual", "metadata": meta}, conf: map[string]any{"card": payCard("4242424242424242"), "installments": 2}, afterwardsCap: true},
		{name: "processing", create: map[string]any{"amount": 5000}, conf: map[string]any{"card": payCard("4000009000000425")}},
		{name: "pending", create: map[string]any{"amount": 5000}, conf: map[string]any{"card": payCard("4000009000000433")}},
		{name: "generic decline", create: map[string]any{"amount": 5000, "metadata": meta}, conf: map[string]any{"card": payCard("4000000000000002"), "customer_email": "ana@example.com"}},
		{name: "insufficient funds", create: map[string]any{"amount": 5000}, conf: map[string]any{"card": payCard("4000000000009995")}},
		{name: "incorrect cvc", create: map[string]any{"amount": 5000}, conf: map[string]any{"card": payCard("4000000000000127")}},
		{name: "expired card decline", create: map[string]any{"amount": 5000}, conf: map[string]any{"card": payCard("4000000000000069")}},
		{name: "blocked", create: map[string]any{"amount": 5000}, conf: map[string]any{"card": payCard("4000009000000284")}},
		{name: "processing error", create: map[string]any{"amount": 5000}, conf: map[string]any{"card": payCard("4000000000000119")}},
		{name: "dispute card", create: map[string]any{"amount": 5000}, conf: map[string]any{"card": payCard("4000000000000259")}},
		{name: "billing address", create: map[string]any{"amount": 5000}, conf: map[string]any{"card": payCard("4242424242424242"), "customer_name": "Zé <b>", "customer_document": "52998224725",
			"billing_address": map[string]any{"line1": "Rua Augusta", "number": "100", "city": "São Paulo", "state": "SP", "postal_code": "01305-000", "country": "BR"}}},
		{name: "save with customer", create: map[string]any{"amount": 5000}, conf: map[string]any{"card": payCard("4242424242424242"), "save_payment_method": true}, withCustomer: true},
		{name: "save with customer declined", create: map[string]any{"amount": 5000}, conf: map[string]any{"card": payCard("4000000000000002"), "save_payment_method": true}, withCustomer: true},
		{name: "save without customer", create: map[string]any{"amount": 5000}, conf: map[string]any{"card": payCard("4242424242424242"), "save_payment_method": true}},
		{name: "customer, manual capture", create: map[string]any{"amount": 5000, "capture_method": "manual"}, conf: map[string]any{"card": payCard("4242424242424242")}, withCustomer: true},
		{name: "bad card number", create: map[string]any{"amount": 5000}, conf: map[string]any{"card": payCard("4242424242424241")}, refused: true},
		{name: "unknown customer", create: map[string]any{"amount": 5000, "customer": "cus_VcGSD7Zj9cguLJ0UwkTzGDwA"}, conf: map[string]any{"card": payCard("4242424242424242")}, refused: true},
		{name: "unknown customer, pix", create: map[string]any{"amount": 5000, "customer": "cus_VcGSD7Zj9cguLJ0UwkTzGDwA"}, conf: map[string]any{"payment_method_type": "pix"}, refused: true},
		{name: "too many installments", create: map[string]any{"amount": 500}, conf: map[string]any{"card": payCard("4242424242424242"), "installments": 12}, refused: true},
		{name: "pix", create: map[string]any{"amount": 5000, "metadata": meta}, conf: map[string]any{"payment_method_type": "pix", "customer_email": "ana@example.com"}},
		{name: "boleto", create: map[string]any{"amount": 5000}, conf: map[string]any{"payment_method_type": "boleto", "customer_email": "ana@example.com", "customer_name": "Ana Souza",
			"customer_document": "52998224725", "billing_address": map[string]any{"line1": "Rua Augusta", "number": "100", "neighborhood": "Consolação", "city": "São Paulo", "state": "SP", "postal_code": "01305-000", "country": "BR"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, one := e.NewOrg("Loja "+c.name, false)
			_, two := e.NewOrg("Loja "+c.name, false)
			conf := map[string]map[string]any{one: {}, two: {}}
			for _, tok := range []string{one, two} {
				for k, v := range c.conf {
					conf[tok][k] = v
				}
			}
			create := func(token string) map[string]any {
				body := map[string]any{}
				for k, v := range c.create {
					body[k] = v
				}
				if c.withCustomer {
					cus := e.Do("POST", "/v1/customers", token, map[string]any{"email": "cli@example.com", "name": "Cliente"})
					if cus.Status != 200 {
						t.Fatalf("customer: %d %s", cus.Status, cus.Raw)
					}
					body["customer"] = cus.Str("id")
					if c.savedCard != "" {
						si := e.Do("POST", "/v1/setup-intents", token, map[string]any{"customer": cus.Str("id")})
						r := e.Do("POST", "/v1/setup-intents/"+si.Str("id")+"/confirm", token, map[string]any{"card": payCard(c.savedCard)})
						if r.Status != 200 || r.Str("payment_method") == "" {
							t.Fatalf("save card: %d %s", r.Status, r.Raw)
						}
						conf[token]["payment_method"] = r.Str("payment_method")
					}
				}
				return body
			}
			// One request.
			body := create(one)
			body["confirm"] = true
			for k, v := range conf[one] {
				body[k] = v
			}
			r1 := e.Do("POST", "/v1/payment-intents", one, body)
			// Two calls.
			pi := e.Do("POST", "/v1/payment-intents", two, create(two))
			if pi.Status != 200 {
				// The create alone is refused: the one request is, with the same error, keeping nothing.
				if r1.Status != pi.Status || norm(t, r1.Body) != norm(t, pi.Body) || e.payCount(one, "/v1/payment-intents") != 0 {
					t.Errorf("create refused: %d %s; one request: %d %s", pi.Status, pi.Raw, r1.Status, r1.Raw)
				}
				return
			}
			r2 := e.payConfirm(two, pi.Str("id"), conf[two])
			if r1.Status != r2.Status {
				t.Fatalf("status: one request %d %s, two calls %d %s", r1.Status, r1.Raw, r2.Status, r2.Raw)
			}
			if r1.Status >= 400 && r1.Status != 402 && !c.refused {
				t.Logf("refused: %s", r1.Raw)
			}
			if c.refused || (r1.Status >= 400 && r1.Status != 402) {
				if r1.Body["error"] == nil || dig(r1.Body, "error.payment_intent") != nil || normalized(t, r1.ErrCode()) != normalized(t, r2.ErrCode()) {
					t.Errorf("refusal: one %s, two %s", r1.Raw, r2.Raw)
				}
				if n := e.payCount(one, "/v1/payment-intents"); n != 0 {
					t.Errorf("a refused one-request payment kept %d intents", n)
				}
				if n := len(e.orgEventTypes(one)); n != 0 {
					t.Errorf("a refused one-request payment emitted %d events", n)
				}
				return
			}
			if r1.Status < 300 || r1.Status == 402 {
				if a, b := norm(t, r1.Body), norm(t, r2.Body); a != b {
					t.Errorf("answer:\n one %s\n two %s", a, b)
				}
			}
			if c.afterwardsCap && r1.Status == 200 {
				c1 := e.Do("POST", "/v1/payment-intents/"+r1.Str("id")+"/capture", one, map[string]any{"amount_to_capture": 3000})
				c2 := e.Do("POST", "/v1/payment-intents/"+r2.Str("id")+"/capture", two, map[string]any{"amount_to_capture": 3000})
				if c1.Status != c2.Status || norm(t, c1.Body) != norm(t, c2.Body) {
					t.Errorf("capture:\n one %d %s\n two %d %s", c1.Status, c1.Raw, c2.Status, c2.Raw)
				}
			}
			// What happens later (a processing card settling, a dispute card's dispute, an
			// uncaptured authorization's expiry) happens to both alike.
			e.advance(8 * 24 * time.Hour)
			s1, s2 := e.orgState(t, one), e.orgState(t, two)
			keys := make([]string, 0, len(s2))
			for k := range s2 {
				keys = append(keys, k)
			}
			for k := range s1 {
				if _, ok := s2[k]; !ok {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				if s1[k] != s2[k] {
					t.Errorf("%s: %s", k, diffAt(s1[k], s2[k]))
				}
			}
		})
	}
}

// TestCreateWithConfirmSameFingerprint: a card paid in one request has the fingerprint the same
// card has when paid with create then confirm, or saved, in the same organization (the
// fingerprint computed before the writer is the one the confirmation would compute), and
// another card's differs.
func TestCreateWithConfirmSameFingerprint(t *testing.T) {
	e := newEnv(t)
	fp := func(r resp) string {
		t.Helper()
		if r.Status != 200 && r.Status != 402 {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
		ch := e.Do("GET", "/v1/charges?payment_intent="+r.Str("id"), e.Test, nil).Data()
		if len(ch) != 1 {
			t.Fatalf("%d charges", len(ch))
		}
		return digStr(ch[0], "payment_method_details.card.fingerprint")
	}
	one := fp(e.Do("POST", "/v1/payment-intents", e.Test, map[string]any{"amount": 5000, "confirm": true, "card": payCard("4242424242424242")}))
	pi := e.payIntent(e.Test, 5000, nil)
	e.payConfirm(e.Test, pi.Str("id"), map[string]any{"card": payCard("4242424242424242")})
	two := fp(pi)
	other := fp(e.Do("POST", "/v1/payment-intents", e.Test, map[string]any{"amount": 5000, "confirm": true, "card": payCard("5555555555554444")}))
	saved := e.Do("GET", "/v1/payment-methods/"+e.subSavedCard(e.payCustomer(e.Test, "ana@example.com"), "4242424242424242"), e.Test, nil)
	if one == "" || one != two || one == other || digStr(saved.Body, "card.fingerprint") != one {
		t.Fatalf("fingerprints: one request %q, two calls %q, saved %q, another card %q", one, two, digStr(saved.Body, "card.fingerprint"), other)
	}
}
