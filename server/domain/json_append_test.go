package domain

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// jsonTestStrings are texts that exercise every escaping rule: HTML characters, quotes and
// backslashes, control characters (the short and the \u00XX forms), U+2028/U+2029, multi-byte
// and invalid UTF-8.
var jsonTestStrings = []string{"", "pi_3Nx", "Plano anual", `a"b\c`, "<script>&amp;</script>", "ação café ñ 日本 🎉",
	"line\nbreak\ttab\rret\bback\fform", "\x00\x01\x1f\x7f", "\u2028\u2029", "\xff\xfe", "ok\xc3", "\xe2\x80", "\u00a0", "é\xe2\x80\xa8x",
	strings.Repeat("x", 300), "a\u2028<b>\"\x02\xf0\x9f\x98"}

// TestAppendJSONStringMatchesEncodingJSON: appendJSONString writes what encoding/json writes for
// a string, with and without HTML escaping, for the escaping cases and random bytes.
func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	is := is.New(t)
	r := rand.New(rand.NewPCG(1, 2))
	texts := append([]string{}, jsonTestStrings...)
	for range 5000 {
		b := make([]byte, r.IntN(24))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		texts = append(texts, string(b))
	}
	for _, s := range texts {
		html, err := json.Marshal(s)
		is.NoErr(err)
		is.Equal(string(appendJSONString(nil, s, true)), string(html))
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		is.NoErr(enc.Encode(s))
		is.Equal(string(appendJSONString(nil, s, false)), strings.TrimSuffix(buf.String(), "\n"))
	}
}

// TestAppendJSONMatchesEncodingJSON: MarshalJSON of a payment intent, a charge, billing details
// and payment method details (the hand-written encoders) is byte for byte what encoding/json
// writes for them, over objects with every field unset, set and set to texts that need
// escaping, with metadata of zero to many keys, every kind of next_action, last_payment_error,
// payment method details and refunds list.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	is := is.New(t)
	r := rand.New(rand.NewPCG(3, 4))
	str := func() string {
		if r.IntN(3) == 0 {
			return jsonTestStrings[r.IntN(len(jsonTestStrings))]
		}
		return []string{"pi_1", "succeeded", "brl", "credit_card", "organization", "x"}[r.IntN(6)]
	}
	ptr := func() *string {
		if r.IntN(2) == 0 {
			return nil
		}
		s := str()
		return &s
	}
	tm := func() Time {
		switch r.IntN(3) {
		case 0:
			return Time{}
		case 1:
			return Unix(r.Int64N(4e9) + 1)
		}
		return Time{time.Date(2026, 11, 28, 10, 0, 0, 0, time.FixedZone("BRT", -3*3600))} // not UTC: encoded in UTC
	}
	checked := 0
	for i := range 3000 {
		pi := &PaymentIntent{ID: str(), Object: str(), Amount: r.Int64() - r.Int64(), AmountCapturable: r.Int64N(1e6), AmountReceived: int64(r.IntN(3)),
			CanceledAt: tm(), CancellationReason: ptr(), CaptureMethod: str(), ClientSecret: str(), CreatedAt: tm(), Currency: str(),
			Customer: ptr(), Description: ptr(), InterestPayer: str(), LatestCharge: ptr(), Livemode: r.IntN(2) == 0,
			PaymentMethod: ptr(), PaymentMethodType: ptr(), StatementDescriptor: ptr(), Status: str(), UpdatedAt: tm(),
			PaymentData: &PaymentData{Type: "x"}, Buyer: BillingDetails{Name: ptr(), Email: ptr()}} // json:"-": not in the intent's JSON
		if r.IntN(2) == 0 {
			n := r.IntN(100) - 50
			pi.Installments = &n
		}
		switch r.IntN(4) {
		case 0: // nil metadata: {}
		case 1:
			pi.Metadata = Metadata{}
		default:
			pi.Metadata = Metadata{}
			for range r.IntN(8) + 1 {
				pi.Metadata[str()+str()] = str()
			}
		}
		switch r.IntN(4) {
		case 0:
		case 1:
			pi.PaymentMethodTypes = []string{}
		default:
			for range r.IntN(4) + 1 {
				pi.PaymentMethodTypes = append(pi.PaymentMethodTypes, str())
			}
		}
		if r.IntN(3) == 0 {
			pi.LastPaymentError = &PaymentError{Category: str(), Code: str(), Message: str(), AdviceCode: ptr(), NetworkDeclineCode: ptr(), NetworkAdviceCode: ptr()}
		}
		switch r.IntN(5) {
		case 1:
			pi.NextAction = &PaymentData{Type: "pix", Pix: &PixData{Code: str(), ImageURL: str(), ExpiresAt: tm()}}
		case 2:
			pi.NextAction = &PaymentData{Type: "boleto", Boleto: &BoletoData{DigitableLine: str(), Barcode: str(), DueDate: str(), URL: str(), PixCode: str()}}
		case 3:
			pi.NextAction = &PaymentData{Type: "credit_card", CreditCard: &CreditCardData{Brand: str(), Last4: str(), Installments: r.IntN(12)}}
		}
		var card *PaymentCard
		if r.IntN(2) == 0 {
			card = &PaymentCard{Brand: str(), Country: str(), ExpMonth: r.IntN(13), ExpYear: r.IntN(3000), Fingerprint: str(), Funding: str(), Last4: str(), Network: str()}
		}
		// The intent, and what the db package encodes alone for its columns and a payment
		// method's (typed nil pointers included).
		for _, v := range []any{pi, pi.NextAction, pi.LastPaymentError, pi.PaymentMethodTypes, pi.Buyer, card} {
			want, err := marshalJSON(v)
			is.NoErr(err)
			got, err := MarshalJSON(v)
			is.NoErr(err)
			if string(got) != string(want) {
				t.Fatalf("intent %d, %T:\n got %s\nwant %s", i, v, got, want)
			}
		}
		checked++
	}
	is.Equal(checked, 3000)

	// Charges, with their billing details and payment method details (also encoded alone, as
	// the charge's JSON columns are).
	addr := func() *Address {
		if r.IntN(3) == 0 {
			return nil
		}
		a := &Address{Line1: str(), City: str(), State: str(), PostalCode: str(), Country: str()}
		if r.IntN(2) == 0 {
			a.Number, a.Line2, a.Neighborhood = str(), str(), str()
		}
		if r.IntN(4) == 0 {
			a.Line2 = ""
		}
		return a
	}
	for i := range 3000 {
		ch := &Charge{ID: str(), Object: str(), Amount: r.Int64() - r.Int64(), AmountCaptured: r.Int64N(1e6), AmountRefunded: int64(r.IntN(3)),
			BillingDetails: BillingDetails{Address: addr(), Email: ptr(), Name: ptr(), Phone: ptr(), Document: ptr(), DocumentType: ptr()},
			Captured:       r.IntN(2) == 0, CreatedAt: tm(), Currency: str(), Customer: ptr(), Description: ptr(), Disputed: r.IntN(2) == 0,
			Invoice: ptr(), Livemode: r.IntN(2) == 0, Paid: r.IntN(2) == 0, PaymentIntent: str(), PaymentMethod: ptr(),
			ReceiptURL: ptr(), Refunded: r.IntN(2) == 0, Status: str(), UpdatedAt: tm()}
		if r.IntN(2) == 0 {
			ch.Metadata = Metadata{str(): str(), str() + "2": str()}
		}
		if r.IntN(3) == 0 {
			ch.PaymentError = &PaymentError{Category: str(), Code: str(), Message: str(), AdviceCode: ptr()}
		}
		ch.PaymentMethodDetails.Type = str()
		switch r.IntN(4) {
		case 0:
		case 1:
			ch.PaymentMethodDetails.Pix = &PixDetails{Code: str(), TxID: str(), ExpiresAt: tm(), FineAmount: 1}
		case 2:
			ch.PaymentMethodDetails.Boleto = &BoletoDetails{Barcode: str(), DigitableLine: str(), DueDate: str(), PixCode: str(), PaidWith: ptr()}
		default:
			c := &CardDetails{Brand: str(), Checks: CardChecks{str(), str(), str()}, Country: str(), ExpMonth: r.IntN(13), ExpYear: 2000 + r.IntN(40),
				Fingerprint: str(), Funding: str(), Installments: r.IntN(13), Last4: str(), Network: str()}
			if r.IntN(2) == 0 {
				n := r.Int64N(1e7)
				c.AmountAuthorized, c.AuthorizationCode = &n, ptr()
			}
			ch.PaymentMethodDetails.Card = c
		}
		switch r.IntN(3) {
		case 0: // zero list: a charge not read back
		case 1:
			ch.Refunds = NewList[*Refund]("/v1/refunds?charge="+ch.ID, nil, false)
		default:
			ch.Refunds = NewList("/v1/refunds", []*Refund{{ID: str(), Amount: 5, Metadata: Metadata{"k": str()}}}, r.IntN(2) == 0)
		}
		for _, v := range []any{ch, ch.BillingDetails, ch.PaymentMethodDetails} {
			want, err := marshalJSON(v)
			is.NoErr(err)
			got, err := MarshalJSON(v)
			is.NoErr(err)
			if string(got) != string(want) {
				t.Fatalf("charge %d, %T:\n got %s\nwant %s", i, v, got, want)
			}
		}
	}

	// Every field is either encoded or json:"-": a new field makes the encoders differ.
	for _, v := range []any{&PaymentIntent{}, &Charge{}, BillingDetails{}, PaymentMethodDetails{Card: &CardDetails{}}, &PaymentCard{},
		&PaymentError{}, &PaymentData{CreditCard: &CreditCardData{}}} {
		b, err := json.Marshal(v)
		is.NoErr(err)
		var fields map[string]any
		is.NoErr(json.Unmarshal(b, &fields))
		got, err := MarshalJSON(v)
		is.NoErr(err)
		var gotFields map[string]any
		is.NoErr(json.Unmarshal(got, &gotFields))
		is.Equal(len(gotFields), len(fields))
	}
}

// BenchmarkMarshalPaymentIntent: a confirmed card payment's intent, encoded by encoding/json
// and by the hand-written encoder (go test ./server/domain -run '^$' -bench MarshalPaymentIntent).
func BenchmarkMarshalPaymentIntent(b *testing.B) {
	desc, pm, typ, ch, n := "Pedido 42", "pm_3NxAbCdEfGhIjKlMnOpQrStU", "credit_card", "ch_3NxAbCdEfGhIjKlMnOpQrStU", 1
	pi := &PaymentIntent{ID: "pi_3NxAbCdEfGhIjKlMnOpQrStU", Object: "payment_intent", Amount: 25000, AmountReceived: 25000, CaptureMethod: "automatic",
		ClientSecret: "pi_3NxAbCdEfGhIjKlMnOpQrStU_secret_AbCdEfGhIjKlMnOpQrStUvWx", CreatedAt: Unix(1.8e9), Currency: "brl", Description: &desc,
		Installments: &n, InterestPayer: "organization", LatestCharge: &ch, Metadata: Metadata{"order_id": "42"}, PaymentMethod: &pm,
		PaymentMethodType: &typ, PaymentMethodTypes: []string{"credit_card", "pix", "boleto"}, Status: "succeeded", UpdatedAt: Unix(1.8e9)}
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := marshalJSON(pi); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := MarshalJSON(pi); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkMarshalCharge: a succeeded card charge, encoded by encoding/json and by the
// hand-written encoder.
func BenchmarkMarshalCharge(b *testing.B) {
	name, email, pm, code, url, amount := "Ana Souza", "ana@example.com", "pm_3NxAbCdEfGhIjKlMnOpQrStU", "123456", "https://troco.example/receipts/ch_3NxAbCdEfGhIjKlMnOpQrStU", int64(25000)
	ch := &Charge{ID: "ch_3NxAbCdEfGhIjKlMnOpQrStU", Object: "charge", Amount: 25000, AmountCaptured: 25000, Captured: true, Paid: true,
		BillingDetails: BillingDetails{Name: &name, Email: &email}, CreatedAt: Unix(1.8e9), Currency: "brl", Metadata: Metadata{"order_id": "42"},
		PaymentIntent: "pi_3NxAbCdEfGhIjKlMnOpQrStU", PaymentMethod: &pm, ReceiptURL: &url, Status: "succeeded", UpdatedAt: Unix(1.8e9),
		PaymentMethodDetails: PaymentMethodDetails{Type: "credit_card", Card: &CardDetails{AmountAuthorized: &amount, AuthorizationCode: &code, Brand: "visa",
			Checks: CardChecks{"unchecked", "unchecked", "pass"}, Country: "BR", ExpMonth: 12, ExpYear: 2030, Fingerprint: "AbCdEfGhIjKlMnOp",
			Funding: "credit", Installments: 1, Last4: "4242", Network: "visa"}}}
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := marshalJSON(ch); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := MarshalJSON(ch); err != nil {
				b.Fatal(err)
			}
		}
	})
}
