package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"troco/db"
	"troco/server"
	"troco/server/clock"
	"troco/server/domain"
)

// TestBodyTextIsRefusedNotRepaired: duplicate keys, NUL and bidirectional controls, and invalid
// UTF-8 are 400s naming the field, never silently accepted (last key wins) or repaired (U+FFFD).
func TestBodyTextIsRefusedNotRepaired(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name, path, body, param string
	}{
		{"duplicate amount", "/v1/payment-intents", `{"amount":1000,"currency":"brl","amount":5}`, "amount"},
		{"duplicate with other spacing", "/v1/customers", `{"email":"a@b.co", "email" : "c@d.co"}`, "email"},
		{"duplicate metadata key", "/v1/customers", `{"metadata":{"k":"a","k":"b"}}`, "metadata[k]"},
		{"duplicate nested in array", "/v1/checkout-sessions", `{"line_items":[{"price":"p","quantity":1},{"price":"p","quantity":1,"quantity":2}]}`, "line_items[1][quantity]"},
		{"NUL escaped", "/v1/customers", `{"name":"Ana\u0000Silva"}`, "name"},
		{"NUL in a metadata value", "/v1/customers", `{"metadata":{"note":"a\u0000"}}`, "metadata[note]"},
		{"right-to-left override escaped", "/v1/customers", `{"name":"Ana\u202eavliS"}`, "name"},
		{"right-to-left override raw", "/v1/customers", "{\"description\":\"x\u202ey\"}", "description"},
		{"isolate raw", "/v1/customers", "{\"name\":\"x\u2066y\"}", "name"},
		{"invalid UTF-8", "/v1/customers", "{\"name\":\"Jo\xe3o\"}", "name"},
		{"invalid UTF-8 in a key", "/v1/customers", "{\"metadata\":{\"k\xff\":\"v\"}}", "metadata[k\ufffd]"},
		{"lone surrogate", "/v1/customers", `{"name":"\ud800"}`, "name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := e.Do("POST", tc.path, e.Test, tc.body, "Content-Type", "application/json")
			is.Equal(r.Status, 400)
			is.Equal(r.ErrCode(), "invalid_request")
			if tc.name != "invalid UTF-8 in a key" {
				is.Equal(r.ErrParam(), tc.param)
			}
		})
	}
	// What is allowed stays allowed: accents, emoji, U+FFFD written on purpose, the same key in
	// different objects.
	is := is.New(t)
	r := e.Do("POST", "/v1/customers", e.Test, `{"name":"João Ação 🎉 \ufffd","metadata":{"name":"x"}}`, "Content-Type", "application/json")
	is.Equal(r.Status, 200)
	is.True(strings.Contains(r.Str("name"), "João"))
}

// TestMalformedQueryIs400: a query string that does not decode is refused naming the parameter,
// never answered as if the parameter were absent.
func TestMalformedQueryIs400(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct{ query, param string }{
		{"limit=%zz", "limit"},
		{"limit=3&starting_after=%", "starting_after"},
		{"li%zzmit=3", ""},
		{"limit=3;email=a", ""},
	} {
		is := is.New(t)
		r := e.Do("GET", "/v1/customers?"+tc.query, e.Test, nil)
		is.Equal(r.Status, 400)
		is.Equal(r.ErrCode(), "invalid_request")
		is.Equal(r.ErrParam(), tc.param)
	}
	is := is.New(t)
	is.Equal(e.Do("GET", "/v1/customers?limit=3&email=a%40b.co", e.Test, nil).Status, 200)
}

// TestReadiness: /readyz is 503 until serve marks the server ready, 200 while the database
// answers, 503 again once a shutdown begins or the database is gone; /healthz stays 200.
func TestReadiness(t *testing.T) {
	is := is.New(t)
	d, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "troco.db"), db.Options{Schema: schemaSQL(t), PostgresSchema: pgSchemaSQL(t)})
	is.NoErr(err)
	srv := server.New(server.Config{DB: d, Clock: clock.NewOffset(clock.Real{}, 0), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ts := httptest.NewTLSServer(srv)
	defer ts.Close()
	get := func(path string) int {
		res, err := ts.Client().Get(ts.URL + path)
		is.NoErr(err)
		res.Body.Close()
		return res.StatusCode
	}
	is.Equal(get("/readyz"), 503) // starting
	is.Equal(get("/healthz"), 200)
	srv.SetReady(true)
	is.Equal(get("/readyz"), 200)
	srv.SetReady(false) // shutting down
	is.Equal(get("/readyz"), 503)
	is.Equal(get("/healthz"), 200)
	srv.SetReady(true)
	is.NoErr(d.Close()) // the database is gone
	is.Equal(get("/readyz"), 503)
}

// TestQueryParameterWhereNoneIsTaken: a parameter in the query string of a request that takes
// none is refused naming it, and the message says where a POST's parameters go.
func TestQueryParameterWhereNoneIsTaken(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	r := e.Do("POST", "/v1/payment-intents?confirm=true", e.Test, map[string]any{"amount": 1000})
	is.Equal(r.Status, 400)
	is.Equal(r.ErrParam(), "confirm")
	is.Equal(r.ErrMessage(), "Received unknown parameter: confirm. This request takes its parameters in the JSON body, not in the query string.")
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "a@example.com"})
	r = e.Do("GET", "/v1/customers/"+cus.Str("id")+"?expand=x", e.Test, nil)
	is.Equal(r.Status, 400)
	is.Equal(r.ErrParam(), "expand")
	is.Equal(r.ErrMessage(), "Received unknown parameter: expand. This request takes no query parameters.")
}

// TestURLTextIsValidUTF8: an id or a query value that is not valid UTF-8 once %-decoded is a 400
// naming it, as in a JSON body, not a 404 or an empty list for a value repaired with U+FFFD.
func TestURLTextIsValidUTF8(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	for _, tc := range []struct{ path, param, msg string }{
		{"/v1/customers/cus_%FF", "id", "The id in the URL is not valid UTF-8."},
		{"/v1/customers?email=a%FF@example.com", "email", "The query parameter email is not valid UTF-8."},
		{"/v1/events?type=%C3%28", "type", "The query parameter type is not valid UTF-8."},
		{"/v1/customers?%FF=1", "", "The query string has a parameter name that is not valid UTF-8."},
		{"/api/v1/customers/cus_%C3", "id", "The id in the URL is not valid UTF-8."},
	} {
		t.Run(tc.path, func(t *testing.T) {
			is := is.New(t)
			r := e.Do("GET", tc.path, e.Test, nil)
			is.Equal(r.Status, 400)          // refused, not looked up
			is.Equal(r.ErrParam(), tc.param) // naming what was not UTF-8
			is.Equal(r.ErrMessage(), tc.msg) // and saying so
		})
	}
	r := e.Do("GET", "/v1/customers?email=jos%C3%A9@example.com", e.Test, nil)
	is.Equal(r.Status, 200) // valid UTF-8 (é) passes
}

// TestPagesOpenWithQueryTextNotUTF8: a hosted page or the dashboard opened from a link whose
// query has text that is not UTF-8 (a Latin-1 e-mail campaign: ?utm_campaign=promo%E7%E3o) opens
// as without it, as before: only the API refuses such a query (TestURLTextIsValidUTF8); a buyer
// is never shown a JSON error for a tracking parameter the page does not read.
func TestPagesOpenWithQueryTextNotUTF8(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	l := e.Do("POST", "/v1/payment-links", e.Test, map[string]any{"line_items": []any{map[string]any{"price": e.coPrice(e.Test, "Ingresso", 5000, nil)}}})
	is.Equal(l.Status, 200)
	s := e.coSession(e.Test, map[string]any{"mode": "payment", "success_url": "https://a.example/ok", "line_items": []any{map[string]any{"price": e.coPrice(e.Test, "X", 5000, nil), "quantity": 1}}})
	for _, u := range []string{l.Str("url") + "?utm_campaign=promo%E7%E3o", s.Str("url") + "&utm_source=news%E7", "/dashboard/signin?utm_source=%E7",
		l.Str("url") + "?utm_campaign=50%off", s.Str("url") + "&utm_source=a%zz", "/dashboard/signin?x=%"} { // malformed escapes too
		status, body, h := e.openPage(t, u)
		is.Equal(status, 200) // the page, as without the parameter
		is.True(strings.HasPrefix(h.Get("Content-Type"), "text/html"))
		is.True(!strings.Contains(body, "not valid UTF-8"))
	}
	r := e.Do("GET", "/v1/customers?utm_source=%E7", e.Test, nil)
	is.Equal(r.Status, 400) // the API still refuses it
	is.Equal(r.ErrParam(), "utm_source")
	r = e.Do("GET", "/v1/customers?limit=%zz", e.Test, nil)
	is.Equal(r.Status, 400) // and a malformed escape
	is.Equal(r.ErrParam(), "limit")
}

// TestNULInURLIsRefused: a NUL character in a URL (sent as %00) is a 400 naming the parameter,
// as in a JSON body, never looked up: PostgreSQL refuses text with NUL, so the lookup was a 500
// there, and the request-log line with that path was refused with every line of its batch. On
// both confirm routes (which take a client_secret instead of a key) too.
func TestNULInURLIsRefused(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	for _, tc := range []struct{ method, path, param, msg string }{
		{"GET", "/v1/customers/cus_%00", "id", "The id in the URL must not contain the NUL character."},
		{"GET", "/v1/events/evt_a%00b", "id", "The id in the URL must not contain the NUL character."},
		{"POST", "/v1/payment-intents/pi_%00/confirm", "id", "The id in the URL must not contain the NUL character."},
		{"POST", "/v1/checkout-sessions/cs_%00/confirm", "id", "The id in the URL must not contain the NUL character."},
		{"GET", "/v1/customers?email=a%00b", "email", "The query parameter email must not contain the NUL character."},
		{"GET", "/v1/charges?limit=2&customer=cus_%00", "customer", "The query parameter customer must not contain the NUL character."},
		{"GET", "/v1/customers?a%00=1", "", "The query string has a parameter name with the NUL character."},
		{"GET", "/api/v1/customers/cus_%00", "id", "The id in the URL must not contain the NUL character."},
	} {
		t.Run(tc.path, func(t *testing.T) {
			is := is.New(t)
			var body any
			if tc.method == "POST" {
				body = map[string]any{}
			}
			r := e.Do(tc.method, tc.path, e.Test, body)
			is.Equal(r.Status, 400)          // refused, not looked up
			is.Equal(r.ErrParam(), tc.param) // naming the parameter
			is.Equal(r.ErrMessage(), tc.msg) // and saying why
		})
	}
	logs := waitLogs(t, e, domain.Scope{OrgID: e.Org.ID}, db.RequestLogFilter{}, 2)
	for _, l := range logs {
		is.True(!strings.ContainsRune(l.Path, 0)) // the log keeps the request, as text
	}
	r := e.Do("GET", "/v1/customers?email=jos%C3%A9@example.com", e.Test, nil)
	is.Equal(r.Status, 200) // other text passes
}
