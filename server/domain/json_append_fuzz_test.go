package domain

import (
	"testing"
)

// FuzzAppendJSONMatchesEncodingJSON: for any texts and numbers, a payment intent and a charge
// encoded by hand are what encoding/json writes (go test ./server/domain -fuzz
// FuzzAppendJSONMatchesEncodingJSON -fuzztime 30s; the seeds run with the tests).
func FuzzAppendJSONMatchesEncodingJSON(f *testing.F) {
	for _, s := range jsonTestStrings {
		f.Add(s, "k"+s, int64(-1)<<63, 12, true)
	}
	f.Add("\u2028<>&\x00\xed\xa0\x80\xef\xbf\xbd", "\U0010ffff\xf4\x90\x80\x80", int64(1)<<62, -7, false)
	f.Fuzz(func(t *testing.T, s, k string, n int64, inst int, set bool) {
		sp := &s
		if !set {
			sp = nil
		}
		pi := &PaymentIntent{ID: s, Object: k, Amount: n, AmountCapturable: -n, Description: sp, Customer: sp, Status: s,
			PaymentMethodTypes: []string{s, k}, Metadata: Metadata{k: s, s: k}, Installments: &inst, CreatedAt: Unix(n % 4e11),
			LastPaymentError: &PaymentError{Code: s, Message: k, AdviceCode: sp},
			NextAction:       &PaymentData{Type: s, CreditCard: &CreditCardData{Brand: k, Last4: s, Installments: inst}}}
		ch := &Charge{ID: s, Amount: n, Description: sp, Metadata: Metadata{k: s}, PaymentIntent: k,
			BillingDetails:       BillingDetails{Name: sp, Address: &Address{Line1: s, Number: k, City: s}},
			PaymentMethodDetails: PaymentMethodDetails{Type: k, Card: &CardDetails{Brand: s, Last4: k, ExpYear: inst, AmountAuthorized: &n, AuthorizationCode: sp}}}
		for _, v := range []any{pi, ch, pi.NextAction, pi.LastPaymentError, pi.PaymentMethodTypes, ch.BillingDetails, ch.PaymentMethodDetails,
			&PaymentCard{Brand: s, Fingerprint: k, ExpMonth: inst}} {
			want, werr := marshalJSON(v)
			got, gerr := MarshalJSON(v)
			if (werr == nil) != (gerr == nil) {
				t.Fatalf("%T: errors differ: %v, %v", v, gerr, werr)
			}
			if string(got) != string(want) {
				t.Fatalf("%T:\n got %s\nwant %s", v, got, want)
			}
		}
	})
}
