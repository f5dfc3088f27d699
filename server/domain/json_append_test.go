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

// TestAppendJSONMatchesEncodingJSON: MarshalJSON of a payment intent (the hand-written encoder)
// is byte for byte what encoding/json writes for it, over intents with every field unset, set
// and set to texts that need escaping, with metadata of zero to many keys, and every kind of
// next_action and last_payment_error.
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
			PaymentData: &PaymentData{Type: "x"}, Buyer: BillingDetails{Name: ptr()}} // json:"-": never encoded
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
		want, err := marshalJSON(pi)
		is.NoErr(err)
		got, err := MarshalJSON(pi)
		is.NoErr(err)
		if string(got) != string(want) {
			t.Fatalf("intent %d:\n got %s\nwant %s", i, got, want)
		}
		checked++
	}
	is.Equal(checked, 3000)

	// Every field of PaymentIntent is either encoded or json:"-": a new field makes the
	// encoders differ on a fully set intent.
	full := &PaymentIntent{}
	b, err := json.Marshal(full)
	is.NoErr(err)
	var fields map[string]any
	is.NoErr(json.Unmarshal(b, &fields))
	got, err := MarshalJSON(full)
	is.NoErr(err)
	var gotFields map[string]any
	is.NoErr(json.Unmarshal(got, &gotFields))
	is.Equal(len(gotFields), len(fields))
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
