package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/server"
	"troco/server/calendar"
)

// TestBusinessDays: the calendar endpoint lists business days in order, skipping weekends,
// Carnaval, Christmas and the server's local holidays, and refuses bad ranges naming the param.
func TestBusinessDays(t *testing.T) {
	is := is.New(t)
	local, _ := calendar.Parse("2026-07-09")
	e := newEnv(t, func(c *server.Config) { c.Calendar = calendar.New(local) })

	r := e.Do("GET", "/v1/business-days?from=2026-02-12&to=2026-02-19", e.Test, nil)
	is.Equal(r.Status, 200)
	is.Equal(r.Str("object"), "list")
	var dates []string
	for _, d := range r.Data() {
		is.Equal(d["object"], "business_day")
		dates = append(dates, d["date"].(string))
	}
	is.Equal(strings.Join(dates, " "), "2026-02-12 2026-02-13 2026-02-18 2026-02-19") // Carnaval and the weekend skipped

	r = e.Do("GET", "/v1/business-days?from=2026-12-24&to=2027-01-04", e.Test, nil)
	dates = nil
	for _, d := range r.Data() {
		dates = append(dates, d["date"].(string))
	}
	is.Equal(strings.Join(dates, " "), "2026-12-24 2026-12-28 2026-12-29 2026-12-30 2026-12-31 2027-01-04")

	r = e.Do("GET", "/v1/business-days?from=2026-07-08&to=2026-07-10", e.Live, nil)
	is.Equal(r.Status, 200)
	is.Equal(len(r.Data()), 2) // the local holiday of --holidays

	r = e.Do("GET", "/v1/business-days?from=2026-01-01&to=2026-12-31", e.Test, nil)
	is.Equal(r.Status, 200)
	is.Equal(len(r.Data()), 365-104-12-1) // 2026: 104 weekend days, 12 national holidays on weekdays (15 Nov is a Sunday), 1 local
	r = e.Do("GET", "/v1/business-days", e.Test, nil)
	is.Equal(r.Status, 200) // default: today and the next 30 days
	is.True(len(r.Data()) >= 15)

	for _, tc := range []struct{ query, param string }{
		{"from=2026-02-30", "from"},
		{"from=12/02/2026", "from"},
		{"from=2026-02-12&to=2026-02-11", "to"},
		{"from=2026-01-01&to=2027-01-02", "to"}, // 367 days
		{"from=2026-01-01&from=2026-01-02", "from"},
		{"limit=10", "limit"},
		{"starting_after=x", "starting_after"},
	} {
		r := e.Do("GET", "/v1/business-days?"+tc.query, e.Test, nil)
		is.Equal(r.Status, 400) // refused
		is.Equal(r.ErrParam(), tc.param)
	}
	is.Equal(e.Do("GET", "/v1/business-days?from=2026-01-01&to=2026-12-31", "", nil).Status, 401)
	is.Equal(e.Do("GET", "/v1/business-days?from=2024-01-01&to=2024-12-31", e.Test, nil).Status, 200) // 366 days: allowed
}

// TestLedgerAvailableOn: each instalment's ledger entry is expected 30·n days after capture,
// moved to the next business day; a PIX the same day; a boleto the next business day.
func TestLedgerAvailableOn(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	var cal *calendar.Calendar
	pi := e.payIntent(e.Test, 30000, nil).Str("id")
	r := e.payConfirm(e.Test, pi, map[string]any{"payment_method_type": "credit_card", "card": payCard("4242424242424242"), "installments": 3})
	is.Equal(r.Status, 200)
	today := calendar.Today(time.Now())
	txs := e.Do("GET", "/v1/transactions?payment_intent="+pi, e.Test, nil).Data()
	is.Equal(len(txs), 3)
	for _, tx := range txs {
		n := int(tx["installment"].(float64))
		want := cal.OnOrAfter(today.AddDate(0, 0, 30*n)).Format(calendar.Layout)
		is.Equal(tx["available_on"], want) // 30·n days, next business day
		is.True(cal.IsBusinessDay(calendar.Civil(mustDate(t, tx["available_on"].(string)))))
		is.Equal(tx["status"], "pending") // test mode never settles
		is.Equal(tx["settled_at"], nil)
	}

	pi = e.payIntent(e.Test, 5000, nil).Str("id")
	r = e.payConfirm(e.Test, pi, map[string]any{"payment_method_type": "pix", "customer_email": "succeed_immediately@example.com"})
	is.Equal(r.Status, 200)
	txs = e.Do("GET", "/v1/transactions?payment_intent="+pi, e.Test, nil).Data()
	is.Equal(len(txs), 1)
	is.Equal(txs[0]["available_on"], today.Format(calendar.Layout)) // PIX: the same day

	pi = e.payIntent(e.Test, 5000, nil).Str("id")
	r = e.payConfirm(e.Test, pi, boletoBuyer("succeed_immediately@example.com"))
	is.Equal(r.Status, 200)
	txs = e.Do("GET", "/v1/transactions?payment_intent="+pi, e.Test, nil).Data()
	is.Equal(len(txs), 1)
	is.Equal(txs[0]["available_on"], cal.Next(today).Format(calendar.Layout)) // boleto: next business day
}

func mustDate(t *testing.T, s string) time.Time {
	t.Helper()
	d, err := calendar.Parse(s)
	if err != nil {
		t.Fatal(fmt.Sprint(err))
	}
	return d
}
