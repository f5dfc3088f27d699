package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"troco/server/checkout"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/invoices"
	"troco/server/payments"
)

// FuzzDecodeJSON checks the API's one JSON decoder on arbitrary bodies: it never panics and
// every failure is a *domain.Error a client can act on (a 4xx with type, code and message),
// never a raw decoder error that would become a 500. `go test` runs the seed corpus only; run
// `go test -fuzz=FuzzDecodeJSON ./server/` to explore.
func FuzzDecodeJSON(f *testing.F) {
	seeds := []string{
		``, ` `, "\n\t", `{}`, ` {} `, `[]`, `null`, `true`, `0`, `"x"`, `{`, `}`, `{"`, `{"email"`, `{"email":`,
		`{"email":"a@b.co"}`, `{"email":5}`, `{"email":null}`, `{"email":"a"}{"email":"b"}`, `{} x`, `{},`,
		`{"colour":"blue"}`, `{"EMAIL":"a@b.co"}`, `{"email":"a@b.co","email":1}`,
		`{"metadata":{"a":"b"}}`, `{"metadata":{"a":1}}`, `{"metadata":[]}`, `{"metadata":"x"}`, `{"metadata":{"":""}}`,
		`{"metadata":{"a.b":{"c":1}}}`, `{"address":{"city":1}}`, `{"address":null}`, `{"address":{"zip":"1"}}`,
		`{"product":"prod_1","unit_amount":100}`, `{"unit_amount":"100"}`, `{"unit_amount":1.5}`, `{"unit_amount":1e400}`,
		`{"unit_amount":9223372036854775808}`, `{"unit_amount":-9223372036854775809}`, `{"unit_amount":01}`,
		`{"recurring":{"interval":"month","interval_count":"two"}}`, `{"recurring":[]}`, `{"recurring":{"trial_period_days":null}}`,
		`{"is_active":"true"}`, `{"name":"\ud800"}`, "{\"name\":\"\xff\xfe\"}", "\xef\xbb\xbf{}", `{"a":` + strings.Repeat("[", 20000),
		strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100), `{"name":"` + strings.Repeat("é", 1000) + `"}`,
		`{"line_items":[{"price":"price_x","quantity":"two"}]}`, `{"line_items":[{"price":"p","quantity":1},{"qty":1}]}`,
		`{"line_items":[1,[],{}]}`, `{"line_items":{"0":{"price":"p"}}}`, `{"payment_method_types":["card",1]}`, `{"branding":"x"}`,
		`{"lines":[{"amount":"1"}]}`, `{"metadata":{"a":{"b":[1]}}}`, `{"card":{"exp_month":"ab"}}`, `{"card":{"pin":1}}`,
		`{"payment_method_options":{"credit_card":{"max_installments":"12"}}}`, `{"LINE_ITEMS":[{"Quantity":"1"}]}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, dst := range []any{&core.CustomerParams{}, &core.PriceParams{}, &core.ProductParams{}, &checkout.SessionParams{}, &invoices.UpdateParams{}, &payments.ConfirmParams{}} {
			err := decodeJSON(body, dst)
			if err == nil {
				continue
			}
			// Every wrong type or unknown field the decoder reports, the path walk finds too
			// (else the param would lose its array indices).
			if raw := decodeRaw(body, dst); raw != nil && (errors.As(raw, new(*json.UnmarshalTypeError)) || isUnknownField(raw)) {
				if locateParamError(body, reflect.TypeOf(dst)) == nil {
					t.Fatalf("%T: decodeJSON(%q): the path walk misses the decoder's %v", dst, body, raw)
				}
			}
			de, ok := err.(*domain.Error)
			if !ok {
				t.Fatalf("%T: decodeJSON(%q) returned %T (%v), want *domain.Error", dst, body, err, err)
			}
			switch de.Status {
			case 400, 413, 415:
			default:
				t.Fatalf("%T: decodeJSON(%q): status %d, want 400, 413 or 415", dst, body, de.Status)
			}
			if de.Type != domain.TypeInvalidRequest || de.Code == "" || de.Message == "" {
				t.Fatalf("%T: decodeJSON(%q): incomplete error %+v", dst, body, de)
			}
			if strings.Contains(de.Message, "Go struct") || strings.Contains(de.Message, "core.") {
				t.Fatalf("%T: decodeJSON(%q): message leaks decoder internals: %s", dst, body, de.Message)
			}
			// A wrong type or an unknown field names, in the message, the param it reports.
			if strings.HasPrefix(de.Message, "Invalid type for ") && !strings.HasPrefix(de.Message, "Invalid type for "+orBody(de.Param)+": ") ||
				strings.HasPrefix(de.Message, "Received unknown parameter: ") && de.Message != "Received unknown parameter: "+de.Param+"." {
				t.Fatalf("%T: decodeJSON(%q): param %q does not match message %q", dst, body, de.Param, de.Message)
			}
		}
	})
}

// decodeRaw is encoding/json's own verdict on body, as decodeJSON configures it.
func decodeRaw(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 || bytes.TrimSpace(body)[0] != '{' {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	return dec.Decode(reflect.New(reflect.TypeOf(dst).Elem()).Interface())
}
