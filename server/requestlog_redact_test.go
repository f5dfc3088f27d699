package server

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/matryer/is"
)

// redactReference is the definition redactJSON must keep: decode, replace, encode.
func redactReference(body []byte) (any, bool) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimSpace(body)))
	dec.UseNumber()
	if dec.Decode(&v) != nil || dec.More() {
		return nil, false
	}
	var walk func(key string, v any) any
	walk = func(key string, v any) any {
		switch t := v.(type) {
		case map[string]any:
			for k, x := range t {
				t[k] = walk(k, x)
			}
		case []any:
			for i, x := range t {
				t[i] = walk(key, x)
			}
		case string:
			if sensitiveKeys[strings.ToLower(key)] || looksSecret(t) {
				return "[redacted]"
			}
		case json.Number:
			if sensitiveKeys[strings.ToLower(key)] || looksLikeCard(string(t)) {
				return "[redacted]"
			}
		}
		return v
	}
	return walk("", v), true
}

func TestRedactJSONMatchesDefinition(t *testing.T) {
	is := is.New(t)
	docs := []string{
		`{"id":"pi_1","object":"payment_intent","client_secret":"pi_1_secret_x","amount":1000,"metadata":{"Password":"x","note":"4242 4242 4242 4242"}}`,
		` { "card" : { "number" : 4242424242424242 , "cvc":"123", "exp_month": 12, "last4":"4242" }, "tags": ["a", "4000-0000-0000-0002", 5], "nested":[{"token":["t1", {"x": "y"}]}], "ok": true, "none": null, "neg": -1.5e3 } `,
		`{"obj\u0065ct":"list","id":"x","data":[{"id":"pi_2","object":"payment_intent"}],"k\"ey":"v\\\"","SECRET":"s","Secr\u0065t":"s2","whsec":"whsec_abc","key":"ch_test_123"}`,
		`["ch_live_1", 4111111111111111, 4111111111111112, "4111 1111 1111 1111", "12345678901234567890"]`,
		`"just a string"`, `42`, `true`, `{}`, `[]`, `{"a":[[],{},[{}]]}`, `{"secret":{"a":"b"},"number":[1,"2",{"c":"d"}]}`,
	}
	for _, d := range docs {
		got, _, _ := redactJSON([]byte(d))
		want, ok := redactReference([]byte(d))
		is.True(ok)
		var gotV any
		dec := json.NewDecoder(strings.NewReader(got))
		dec.UseNumber()
		is.NoErr(dec.Decode(&gotV)) // redactJSON's output is JSON
		gb, _ := json.Marshal(gotV)
		wb, _ := json.Marshal(want)
		is.Equal(string(gb), string(wb)) // same document as the decode-replace-encode definition
	}
	_, id, object := redactJSON([]byte(`{"data":[{"id":"inner","object":"charge"}],"object":"payment_intent","id":"pi_top"}`))
	is.Equal(id, "pi_top")
	is.Equal(object, "payment_intent")
	for _, bad := range []string{`{"a":`, `{"a":1} {"b":2}`, `not json`, `{"a":1,}`} {
		out, _, _ := redactJSON([]byte(bad))
		is.True(strings.HasPrefix(out, "[")) // only the size of what is not one JSON value
		is.True(strings.Contains(out, "bytes, not JSON"))
	}
	out, _, _ := redactJSON([]byte("  "))
	is.Equal(out, "")
}

func BenchmarkRedactJSON(b *testing.B) {
	body := []byte(`{"id":"pi_3QxYzAbCdEfGhIjK","object":"payment_intent","amount":4990,"amount_capturable":0,"amount_received":4990,"capture_method":"automatic","client_secret":"pi_3QxYzAbCdEfGhIjK_secret_abcdefghijklmnopqrstuvwx","confirmation_method":"automatic","created":1795000000,"currency":"brl","customer":null,"description":"Pedido 1234","latest_charge":"ch_3QxYzAbCdEfGhIjK","livemode":false,"metadata":{"order_id":"1234"},"payment_method":"pm_3QxYzAbCdEfGhIjK","payment_method_types":["card"],"status":"succeeded"}`)
	b.ReportAllocs()
	for b.Loop() {
		redactJSON(body)
	}
}

// Bytes that are not UTF-8 in a logged body (a request refused for them is still logged) come
// out as U+FFFD, as the decode-replace-encode redaction made them: the log is text that the
// dashboard shows and PostgreSQL's text columns accept.
func TestRedactJSONInvalidUTF8(t *testing.T) {
	is := is.New(t)
	out, _, _ := redactJSON([]byte("{\"email\":\"a@b.c\",\"metadata\":{\"x\":\"\xff\xfe ok\",\"card\":{\"number\":\"\xff4242\"}}}"))
	is.True(utf8.ValidString(out))
	is.Equal(out, `{"email":"a@b.c","metadata":{"x":"`+"\uFFFD"+` ok","card":{"number":"[redacted]"}}}`)
}
