package server_test

import (
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"

	"troco/db/dbtest"
)

// TestHostedPageDuringDatabaseOutage: while PostgreSQL is away, a buyer opening the hosted
// checkout is answered 503 with Retry-After and a page saying to try again, not a 500 that
// says the page does not exist; once the database is back the same link works.
func TestHostedPageDuringDatabaseOutage(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("PostgreSQL only: set " + dbtest.EnvPostgres)
	}
	is := is.New(t)
	u, err := url.Parse(dbtest.Path(t, ""))
	is.NoErr(err)
	proxy := newCutProxy(t, u.Host)
	u.Host = proxy.ln.Addr().String()
	e := newEnvAt(t, u.String(), t.TempDir())

	cs := e.Do("POST", "/v1/checkout-sessions", e.Test, map[string]any{"mode": "payment", "line_items": []any{map[string]any{
		"quantity": 1, "price_data": map[string]any{"currency": "brl", "unit_amount": 4990, "product_data": map[string]any{"name": "Camiseta"}}}}})
	is.Equal(cs.Status, 200)
	page, err := url.Parse(cs.Str("url"))
	is.NoErr(err)
	open := func() (int, string, string) {
		res, err := e.Client.Get(e.URL() + page.RequestURI())
		is.NoErr(err)
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header.Get("Retry-After"), string(b)
	}

	proxy.refuse.Store(true)
	proxy.cut() // the database goes away
	st, retry, body := open()
	is.Equal(st, 503)
	is.True(retry != "")                                      // the browser (or a proxy) may retry
	is.True(!strings.Contains(body, "Página não encontrada")) // the link is not called unknown
	is.True(strings.Contains(body, "Tente novamente"))        // the buyer is told to try again

	proxy.refuse.Store(false) // and comes back
	st, _, _ = open()
	is.Equal(st, 200)
}
