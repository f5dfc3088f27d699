package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"
)

// The invoices resource joins the isolation suite of isolation_test.go.
func init() {
	isolationResources = append(isolationResources, isoResource{
		name: "invoices",
		create: func(t *testing.T, e *testEnv, a isoActor) string {
			cus := mustCreate(t, e, a, "/v1/customers", map[string]any{"email": "iso-invoice@example.com"})
			return mustCreate(t, e, a, "/v1/invoices", map[string]any{"customer": cus, "collection_method": "send_invoice", "days_until_due": 30,
				"lines": []any{map[string]any{"amount": 5000, "description": "Consultoria"}}})
		},
		get: "/v1/invoices/:id",
		routes: []isoRoute{
			{"GET", "/v1/invoices", nil},
			{"POST", "/v1/invoices", nil},
			{"GET", "/v1/invoices/:id", nil},
			{"POST", "/v1/invoices/:id", map[string]any{"description": "hijacked", "metadata": map[string]string{"x": "y"}}},
			{"GET", "/v1/invoices/:id/lines", nil},
			{"POST", "/v1/invoices/:id/finalize", nil},
			{"POST", "/v1/invoices/:id/pay", map[string]any{"paid_out_of_band": true}},
			{"POST", "/v1/invoices/:id/void", nil},
			{"POST", "/v1/invoices/:id/mark-uncollectible", nil},
			{"POST", "/v1/invoices/:id/mark_uncollectible", nil},
		},
		refs: []isoReference{
			{name: "invoices filtered by status", method: "GET", path: "/v1/invoices?status=draft", wantStatus: 200},
		},
	})
}

// invCustomer creates a customer and returns its id.
func (e *testEnv) invCustomer(email string) string {
	e.t.Helper()
	return e.payCustomer(e.Test, email)
}

// invCreate creates an invoice, failing the test otherwise.
func (e *testEnv) invCreate(body map[string]any) resp {
	e.t.Helper()
	r := e.Do("POST", "/v1/invoices", e.Test, body)
	if r.Status != 200 {
		e.t.Fatalf("create invoice: %d %s", r.Status, r.Raw)
	}
	return r
}

// invSavedCard saves a test card on a customer and returns the payment method id.
func (e *testEnv) invSavedCard(cus, number string) string {
	e.t.Helper()
	pm := e.Do("POST", "/v1/payment-methods", e.Test, map[string]any{"type": "credit_card", "card": payCard(number)})
	if pm.Status != 200 {
		e.t.Fatalf("create payment method: %d %s", pm.Status, pm.Raw)
	}
	r := e.Do("POST", "/v1/payment-methods/"+pm.Str("id")+"/attach", e.Test, map[string]any{"customer": cus})
	if r.Status != 200 {
		e.t.Fatalf("attach payment method: %d %s", r.Status, r.Raw)
	}
	return pm.Str("id")
}

// noonUTC is 12:00:00Z of the UTC civil date of t plus days, as the API writes it.
func noonUTC(t time.Time, days int) string {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d+days, 12, 0, 0, 0, time.UTC).Format("2006-01-02T15:04:05Z")
}

// TestInvoiceDueDateRules: SPEC 4.6 rules 1–5 and 9.2, one scenario each.
func TestInvoiceDueDateRules(t *testing.T) {
	e := newEnv(t)
	cus := e.invCustomer("ana@example.com")
	send := func(extra map[string]any) map[string]any {
		b := map[string]any{"customer": cus, "collection_method": "send_invoice"}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	auto := func(extra map[string]any) map[string]any {
		b := map[string]any{"customer": cus}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	cases := []struct {
		name       string
		body       any
		wantStatus int
		wantCode   string
		wantParam  string
		wantDue    any // string, nil (null), or a func of now giving either accepted value
		wantDays   any
	}{
		{name: "charge_automatically by default, no due date", body: auto(nil), wantStatus: 200, wantDue: nil, wantDays: nil},
		{name: "charge_automatically explicit", body: auto(map[string]any{"collection_method": "charge_automatically"}), wantStatus: 200, wantDue: nil},
		{name: "charge_automatically rejects due_date", body: auto(map[string]any{"due_date": "2026-12-01T12:00:00Z"}), wantStatus: 400, wantCode: "invalid_request", wantParam: "due_date"},
		{name: "charge_automatically rejects days_until_due", body: auto(map[string]any{"days_until_due": 10}), wantStatus: 400, wantCode: "invalid_request", wantParam: "days_until_due"},
		{name: "charge_automatically rejects days_until_due 0", body: auto(map[string]any{"collection_method": "charge_automatically", "days_until_due": 0}), wantStatus: 400, wantCode: "invalid_request", wantParam: "days_until_due"},
		{name: "send_invoice needs one of them", body: send(nil), wantStatus: 400, wantCode: "parameter_missing", wantParam: "due_date"},
		{name: "send_invoice with null due fields needs one of them", body: send(map[string]any{"due_date": nil, "days_until_due": nil}), wantStatus: 400, wantCode: "parameter_missing", wantParam: "due_date"},
		{name: "mutually exclusive", body: send(map[string]any{"due_date": "2026-12-01T12:00:00Z", "days_until_due": 3}), wantStatus: 400, wantCode: "invalid_request", wantParam: "due_date"},
		{name: "days_until_due 0 is today at noon UTC", body: send(map[string]any{"days_until_due": 0}), wantStatus: 200, wantDue: 0, wantDays: float64(0)},
		{name: "days_until_due 30", body: send(map[string]any{"days_until_due": 30}), wantStatus: 200, wantDue: 30, wantDays: float64(30)},
		{name: "days_until_due negative", body: send(map[string]any{"days_until_due": -1}), wantStatus: 400, wantCode: "invalid_request", wantParam: "days_until_due"},
		{name: "days_until_due fractional", body: send(map[string]any{"days_until_due": 1.5}), wantStatus: 400, wantCode: "invalid_request", wantParam: "days_until_due"},
		{name: "days_until_due as a string", body: send(map[string]any{"days_until_due": "3"}), wantStatus: 400, wantCode: "invalid_request", wantParam: "days_until_due"},
		{name: "days_until_due beyond ten years", body: send(map[string]any{"days_until_due": 3651}), wantStatus: 400, wantCode: "invalid_request", wantParam: "days_until_due"},
		{name: "due_date in Z kept", body: send(map[string]any{"due_date": "2026-12-01T12:00:00Z"}), wantStatus: 200, wantDue: "2026-12-01T12:00:00Z", wantDays: nil},
		{name: "due_date with an offset is the same instant in UTC", body: send(map[string]any{"due_date": "2026-12-01T09:00:00-03:00"}), wantStatus: 200, wantDue: "2026-12-01T12:00:00Z"},
		{name: "an offset may move the UTC date", body: send(map[string]any{"due_date": "2026-12-01T23:30:00-03:00"}), wantStatus: 200, wantDue: "2026-12-02T02:30:00Z"},
		{name: "a positive offset", body: send(map[string]any{"due_date": "2026-12-01T08:15:30+05:45"}), wantStatus: 200, wantDue: "2026-12-01T02:30:30Z"},
		{name: "zero milliseconds accepted", body: send(map[string]any{"due_date": "2026-12-01T12:00:00.000Z"}), wantStatus: 200, wantDue: "2026-12-01T12:00:00Z"},
		{name: "a past instant is kept as sent", body: send(map[string]any{"due_date": "2020-01-01T00:00:00Z"}), wantStatus: 200, wantDue: "2020-01-01T00:00:00Z"},
		{name: "a fraction of a second", body: send(map[string]any{"due_date": "2026-12-01T12:00:00.5Z"}), wantStatus: 400, wantCode: "invalid_request", wantParam: "due_date"},
		{name: "date only", body: send(map[string]any{"due_date": "2026-12-01"}), wantStatus: 400, wantCode: "invalid_request", wantParam: "due_date"},
		{name: "timestamp without zone", body: send(map[string]any{"due_date": "2026-12-01T12:00:00"}), wantStatus: 400, wantCode: "invalid_request", wantParam: "due_date"},
		{name: "30 February", body: send(map[string]any{"due_date": "2026-02-30T12:00:00Z"}), wantStatus: 400, wantCode: "invalid_request", wantParam: "due_date"},
		{name: "month 13", body: send(map[string]any{"due_date": "2026-13-01T12:00:00Z"}), wantStatus: 400, wantCode: "invalid_request", wantParam: "due_date"},
		{name: "hour 24", body: send(map[string]any{"due_date": "2026-12-01T24:00:00Z"}), wantStatus: 400, wantCode: "invalid_request", wantParam: "due_date"},
		{name: "space instead of T", body: send(map[string]any{"due_date": "2026-12-01 12:00:00Z"}), wantStatus: 400, wantCode: "invalid_request", wantParam: "due_date"},
		{name: "no seconds", body: send(map[string]any{"due_date": "2026-12-01T12:00Z"}), wantStatus: 400, wantCode: "invalid_request", wantParam: "due_date"},
		{name: "offset without colon", body: send(map[string]any{"due_date": "2026-12-01T12:00:00+0300"}), wantStatus: 400, wantCode: "invalid_request", wantParam: "due_date"},
		{name: "Unix seconds are not a timestamp here", body: send(map[string]any{"due_date": 1796126400}), wantStatus: 400, wantCode: "invalid_request", wantParam: "due_date"},
		{name: "empty due_date", body: send(map[string]any{"due_date": ""}), wantStatus: 400, wantCode: "invalid_request", wantParam: "due_date"},
		{name: "unknown collection method", body: auto(map[string]any{"collection_method": "boleto"}), wantStatus: 400, wantCode: "invalid_request", wantParam: "collection_method"},
		{name: "customer required", body: map[string]any{"collection_method": "send_invoice", "days_until_due": 3}, wantStatus: 400, wantCode: "parameter_missing", wantParam: "customer"},
		{name: "customer must exist", body: map[string]any{"customer": "cus_000000000000000000000000"}, wantStatus: 404, wantCode: "resource_missing", wantParam: "customer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			e := withT(e, t)
			before := e.Clock.Now()
			r := e.Do("POST", "/v1/invoices", e.Test, c.body)
			after := e.Clock.Now()
			is.Equal(r.Status, c.wantStatus) // status
			if c.wantStatus != 200 {
				is.Equal(r.ErrCode(), c.wantCode)   // error code
				is.Equal(r.ErrParam(), c.wantParam) // error param
				return
			}
			switch want := c.wantDue.(type) {
			case nil:
				is.Equal(r.Body["due_date"], nil) // no due date
			case int: // days from today (the UTC civil date), at 12:00:00Z
				got := r.Str("due_date")
				is.True(got == noonUTC(before, want) || got == noonUTC(after, want)) // anchored at noon UTC
			case string:
				is.Equal(r.Str("due_date"), want) // the instant sent, in UTC
			}
			is.Equal(r.Body["days_until_due"], c.wantDays) // days_until_due echoed only when sent
		})
	}
}

// TestInvoiceDaysUntilDueUsesUTCDate: "today" is the UTC civil date of the clock's now, whatever
// the dashboard time zone (SPEC 9.2: display only).
func TestInvoiceDaysUntilDueUsesUTCDate(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.invCustomer("ana@example.com")
	// The dashboard in UTC+14 (already "tomorrow" there late in the UTC day) changes nothing.
	r := e.Do("POST", "/v1/organizations/"+e.Org.ID, e.Test, map[string]any{"dashboard_settings": map[string]any{"timezone": "Pacific/Kiritimati"}})
	is.Equal(r.Status, 200) // set the dashboard time zone

	// 23:30Z: still the same UTC day, though it is the next day in São Paulo's evening +14 zones.
	now := e.Clock.Now()
	y, m, d := now.Date()
	late := time.Date(y, m, d+1, 23, 30, 0, 0, time.UTC)
	e.Clock.Advance(late.Sub(now))
	r = e.invCreate(map[string]any{"customer": cus, "collection_method": "send_invoice", "days_until_due": 0})
	is.Equal(r.Str("due_date"), late.Format("2006-01-02")+"T12:00:00Z") // today at noon UTC (already past)
	r = e.invCreate(map[string]any{"customer": cus, "collection_method": "send_invoice", "days_until_due": 1})
	is.Equal(r.Str("due_date"), late.AddDate(0, 0, 1).Format("2006-01-02")+"T12:00:00Z")

	// 00:30Z the next day: a new UTC day, even though it is still the previous evening in Brazil.
	early := late.Add(time.Hour)
	e.Clock.Advance(time.Hour)
	r = e.invCreate(map[string]any{"customer": cus, "collection_method": "send_invoice", "days_until_due": 0})
	is.Equal(r.Str("due_date"), early.Format("2006-01-02")+"T12:00:00Z")

	// A due_date sent with an offset is the same instant, not re-read in the dashboard's zone.
	r = e.invCreate(map[string]any{"customer": cus, "collection_method": "send_invoice", "due_date": "2027-03-10T21:00:00-03:00"})
	is.Equal(r.Str("due_date"), "2027-03-11T00:00:00Z")
	got := e.Do("GET", "/v1/invoices/"+r.Str("id"), e.Test, nil)
	is.Equal(got.Str("due_date"), "2027-03-11T00:00:00Z") // stored as that instant
}

// TestInvoiceLifecycle: lines and amounts, update, finalize (number), uncollectible, paid out of
// band, void, the 409s of the state machine and the events of each move.
func TestInvoiceLifecycle(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.invCustomer("ana@example.com")
	price := e.coPrice(e.Test, "Mensalidade", 2990, nil)

	r := e.invCreate(map[string]any{"customer": cus, "collection_method": "send_invoice", "days_until_due": 15, "description": "Março",
		"metadata": map[string]string{"order": "42"},
		"lines": []any{
			map[string]any{"price": price, "quantity": 2},
			map[string]any{"amount": 1500, "description": "Taxa de instalação"},
		}})
	id := r.Str("id")
	is.True(len(id) > 4 && id[:4] == "inv_") // inv_ prefix
	is.Equal(r.Str("object"), "invoice")
	is.Equal(r.Str("status"), "draft")
	is.Equal(r.Body["livemode"], false)
	is.Equal(r.Str("currency"), "brl")
	is.Equal(r.Str("customer"), cus)
	is.Equal(r.Body["number"], nil) // numbered at finalization
	is.Equal(digNum(r.Body, "subtotal_amount"), int64(2*2990+1500))
	is.Equal(digNum(r.Body, "total_amount"), int64(7480))
	is.Equal(digNum(r.Body, "amount_due"), int64(7480))
	is.Equal(digNum(r.Body, "amount_paid"), int64(0))
	is.Equal(digNum(r.Body, "amount_remaining"), int64(7480))
	is.Equal(digStr(r.Body, "lines.object"), "list")
	is.Equal(digStr(r.Body, "lines.url"), "/v1/invoices/"+id+"/lines")
	is.Equal(dig(r.Body, "lines.has_more"), false)
	lines, _ := dig(r.Body, "lines.data").([]any)
	is.Equal(len(lines), 2)
	first := lines[0].(map[string]any)
	is.Equal(digStr(first, "price.id"), price)
	is.Equal(digStr(first, "description"), "Mensalidade")
	is.Equal(digNum(first, "total_amount"), int64(5980))
	is.Equal(digStr(lines[1].(map[string]any), "description"), "Taxa de instalação")
	is.Equal(len(e.payEvents(e.Test, "invoice.created", id)), 1)

	// The lines list pages in the invoice's order.
	page := e.Do("GET", "/v1/invoices/"+id+"/lines?limit=1", e.Test, nil)
	is.Equal(page.Status, 200)
	is.Equal(page.IDs(), []string{first["id"].(string)})
	is.Equal(page.Body["has_more"], true)
	page = e.Do("GET", "/v1/invoices/"+id+"/lines?starting_after="+first["id"].(string), e.Test, nil)
	is.Equal(len(page.IDs()), 1)
	is.Equal(page.Body["has_more"], false)
	is.Equal(e.Do("GET", "/v1/invoices/"+id+"/lines?starting_after=li_nope", e.Test, nil).ErrParam(), "starting_after")

	// Lines: validation.
	bad := []struct {
		lines any
		param string
	}{
		{[]any{map[string]any{"quantity": 1}}, "lines[0][price]"},
		{[]any{map[string]any{"amount": 100}}, "lines[0][description]"},
		{[]any{map[string]any{"amount": 100, "price": price, "description": "x"}}, "lines[0][amount]"},
		{[]any{map[string]any{"amount": 0, "description": "x"}}, "lines[0][amount]"},
		{[]any{map[string]any{"price": price, "quantity": 0}}, "lines[0][quantity]"},
		{[]any{map[string]any{"amount": 30, "description": "too little"}}, "lines"},
	}
	for _, b := range bad {
		r := e.Do("POST", "/v1/invoices", e.Test, map[string]any{"customer": cus, "lines": b.lines})
		is.Equal(r.Status, 400)
		is.Equal(r.ErrParam(), b.param)
	}
	r = e.Do("POST", "/v1/invoices", e.Test, map[string]any{"customer": cus, "lines": []any{map[string]any{"price": "price_000000000000000000000000"}}})
	is.Equal(r.Status, 404)
	is.Equal(r.ErrParam(), "lines[0][price]")

	// A draft's due date, collection method and lines change; the rules still hold.
	r = e.Do("POST", "/v1/invoices/"+id, e.Test, map[string]any{"due_date": "2026-12-01T09:00:00-03:00"})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("due_date"), "2026-12-01T12:00:00Z")
	is.Equal(r.Body["days_until_due"], nil)
	upd := e.payEvents(e.Test, "invoice.updated", id)
	is.Equal(len(upd), 1)
	is.Equal(digNum(upd[0], "data.previous_attributes.days_until_due"), int64(15))
	is.Equal(e.Do("POST", "/v1/invoices/"+id, e.Test, map[string]any{"due_date": "2026-12-01"}).ErrParam(), "due_date")
	is.Equal(e.Do("POST", "/v1/invoices/"+id, e.Test, map[string]any{"collection_method": "charge_automatically", "days_until_due": 3}).ErrParam(), "days_until_due")
	r = e.Do("POST", "/v1/invoices/"+id, e.Test, map[string]any{"collection_method": "charge_automatically"})
	is.Equal(r.Status, 200)
	is.Equal(r.Body["due_date"], nil) // charge_automatically has no due date
	r = e.Do("POST", "/v1/invoices/"+id, e.Test, map[string]any{"collection_method": "send_invoice"})
	is.Equal(r.ErrCode(), "parameter_missing") // send_invoice needs a due date again
	is.Equal(r.ErrParam(), "due_date")
	r = e.Do("POST", "/v1/invoices/"+id, e.Test, map[string]any{"collection_method": "send_invoice", "days_until_due": 7,
		"lines": []any{map[string]any{"amount": 10000, "description": "Projeto"}}})
	is.Equal(r.Status, 200)
	is.Equal(digNum(r.Body, "amount_due"), int64(10000))
	is.Equal(digNum(r.Body, "days_until_due"), int64(7))

	// Actions that a draft does not allow.
	is.Equal(e.Do("POST", "/v1/invoices/"+id+"/void", e.Test, nil).Status, 409)
	is.Equal(e.Do("POST", "/v1/invoices/"+id+"/mark-uncollectible", e.Test, nil).Status, 409)

	// finalize: open, numbered.
	r = e.Do("POST", "/v1/invoices/"+id+"/finalize", e.Test, nil)
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "open")
	number := r.Str("number")
	is.True(len(number) == len("1A2B3C4D-0001") && number[8:] == "-0001") // first number of the scope
	is.True(digStr(r.Body, "status_transitions.finalized_at") != "")
	fin := e.payEvents(e.Test, "invoice.finalized", id)
	is.Equal(len(fin), 1)
	is.Equal(digStr(fin[0], "data.previous_attributes.status"), "draft")
	is.Equal(e.Do("POST", "/v1/invoices/"+id+"/finalize", e.Test, nil).ErrCode(), "resource_state_conflict")
	r = e.Do("POST", "/v1/invoices/"+id, e.Test, map[string]any{"days_until_due": 1})
	is.Equal(r.Status, 409) // an open invoice's due date is fixed
	r = e.Do("POST", "/v1/invoices/"+id, e.Test, map[string]any{"metadata": map[string]string{"note": "ok"}, "description": "Abril"})
	is.Equal(r.Status, 200) // description and metadata always change
	is.Equal(digStr(r.Body, "metadata.note"), "ok")
	is.Equal(digStr(r.Body, "metadata.order"), "42")

	// uncollectible, then paid out of band.
	r = e.Do("POST", "/v1/invoices/"+id+"/mark_uncollectible", e.Test, nil)
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "uncollectible")
	is.Equal(len(e.payEvents(e.Test, "invoice.marked_uncollectible", id)), 1)
	r = e.Do("POST", "/v1/invoices/"+id+"/pay", e.Test, map[string]any{"paid_out_of_band": true})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "paid")
	is.Equal(r.Body["paid_out_of_band"], true)
	is.Equal(digNum(r.Body, "amount_paid"), int64(10000))
	is.Equal(digNum(r.Body, "amount_remaining"), int64(0))
	is.Equal(r.Body["payment_intent"], nil)
	is.Equal(len(e.payEvents(e.Test, "invoice.paid", id)), 1)
	is.Equal(e.Do("POST", "/v1/invoices/"+id+"/void", e.Test, nil).Status, 409)
	is.Equal(e.Do("POST", "/v1/invoices/"+id+"/pay", e.Test, nil).Status, 409)

	// Another invoice: finalized then voided; it gets the next number.
	v := e.invCreate(map[string]any{"customer": cus, "lines": []any{map[string]any{"amount": 990, "description": "Extra"}}}).Str("id")
	r = e.Do("POST", "/v1/invoices/"+v+"/finalize", e.Test, nil)
	is.Equal(r.Str("number"), number[:9]+"0002")
	r = e.Do("POST", "/v1/invoices/"+v+"/void", e.Test, nil)
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "void")
	is.True(digStr(r.Body, "status_transitions.voided_at") != "")
	is.Equal(len(e.payEvents(e.Test, "invoice.voided", v)), 1)
	is.Equal(e.Do("POST", "/v1/invoices/"+v+"/pay", e.Test, nil).Status, 409)

	// An invoice of zero is paid when finalized.
	z := e.invCreate(map[string]any{"customer": cus}).Str("id")
	r = e.Do("POST", "/v1/invoices/"+z+"/finalize", e.Test, nil)
	is.Equal(r.Str("status"), "paid")

	// List and filters.
	is.Equal(e.payCount(e.Test, "/v1/invoices?customer="+cus), 3)
	is.Equal(e.Do("GET", "/v1/invoices?status=void", e.Test, nil).IDs(), []string{v})
	is.Equal(e.Do("GET", "/v1/invoices?collection_method=send_invoice", e.Test, nil).IDs(), []string{id})
	is.Equal(e.Do("GET", "/v1/invoices?status=late", e.Test, nil).ErrParam(), "status")
	is.Equal(e.Do("GET", "/v1/invoices?collection_method=x", e.Test, nil).ErrParam(), "collection_method")
	is.Equal(e.Do("GET", "/v1/invoices/inv_000000000000000000000000", e.Test, nil).ErrParam(), "id")
}

// TestInvoicePay: pay charges the customer's saved card through the payments engine (an
// off-session reuse, SPEC 7.1); a decline is a 402 like confirm and the next attempt reuses the
// intent; a processing card pays the invoice when it settles.
func TestInvoicePay(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.invCustomer("ana@example.com")
	line := []any{map[string]any{"amount": 12000, "description": "Plano anual"}}

	// No saved card: nothing to charge.
	noCard := e.invCreate(map[string]any{"customer": cus, "lines": line}).Str("id")
	r := e.Do("POST", "/v1/invoices/"+noCard+"/pay", e.Test, nil)
	is.Equal(r.Status, 400)
	is.Equal(r.ErrCode(), "parameter_missing")
	is.Equal(r.ErrParam(), "payment_method")
	is.Equal(e.Do("GET", "/v1/invoices/"+noCard, e.Test, nil).Str("status"), "draft") // nothing changed

	// A card of another customer is refused.
	other := e.invCustomer("bruno@example.com")
	foreign := e.invSavedCard(other, "4242424242424242")
	r = e.Do("POST", "/v1/invoices/"+noCard+"/pay", e.Test, map[string]any{"payment_method": foreign})
	is.Equal(r.Status, 400)
	is.Equal(r.ErrParam(), "payment_method")
	is.Equal(e.Do("POST", "/v1/invoices/"+noCard+"/pay", e.Test, map[string]any{"payment_method": "pm_000000000000000000000000"}).Status, 404)
	// On an invoice of zero the named card is checked too, though nothing is charged.
	zero := e.invCreate(map[string]any{"customer": cus}).Str("id")
	r = e.Do("POST", "/v1/invoices/"+zero+"/pay", e.Test, map[string]any{"payment_method": "pm_000000000000000000000000"})
	is.Equal(r.Status, 404)
	is.Equal(r.ErrParam(), "payment_method")
	is.Equal(e.Do("GET", "/v1/invoices/"+zero, e.Test, nil).Str("status"), "draft") // nothing changed

	// A single-use card: saved fine, declined when reused (402 like confirm).
	single := e.invSavedCard(cus, "4000009000000623")
	id := e.invCreate(map[string]any{"customer": cus, "lines": line}).Str("id")
	r = e.Do("POST", "/v1/invoices/"+id+"/pay", e.Test, map[string]any{"payment_method": single})
	is.Equal(r.Status, 402)
	is.Equal(r.ErrCode(), "single_use_card")
	is.Equal(r.ErrType(), "card_error")
	piID := digStr(r.Body, "error.payment_intent.id")
	is.True(piID != "")
	is.Equal(digStr(r.Body, "error.payment_intent.status"), "requires_payment_method")
	inv := e.Do("GET", "/v1/invoices/"+id, e.Test, nil)
	is.Equal(inv.Str("status"), "open") // finalized by pay, still owed
	is.Equal(inv.Str("payment_intent"), piID)
	is.Equal(digNum(inv.Body, "attempt_count"), int64(1))
	failed := e.payEvents(e.Test, "invoice.payment_failed", id)
	is.Equal(len(failed), 1)
	declined := e.Do("GET", "/v1/charges/"+inv.Str("charge"), e.Test, nil)
	is.Equal(declined.Str("status"), "failed")
	is.Equal(declined.Str("invoice"), id) // charge.invoice

	// The next attempt, with the customer's newest card by default, reuses the intent.
	good := e.invSavedCard(cus, "4242424242424242")
	r = e.Do("POST", "/v1/invoices/"+id+"/pay", e.Test, nil)
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "paid")
	is.Equal(r.Str("payment_intent"), piID)
	is.Equal(digNum(r.Body, "attempt_count"), int64(2))
	is.Equal(digNum(r.Body, "amount_paid"), int64(12000))
	is.Equal(digNum(r.Body, "amount_remaining"), int64(0))
	is.True(digStr(r.Body, "status_transitions.paid_at") != "")
	pi := e.Do("GET", "/v1/payment-intents/"+piID, e.Test, nil)
	is.Equal(pi.Str("status"), "succeeded")
	is.Equal(pi.Str("payment_method"), good)
	is.Equal(pi.Str("customer"), cus)
	is.Equal(digStr(pi.Body, "metadata.invoice"), id)
	is.Equal(digNum(pi.Body, "amount"), int64(12000))
	ch := e.Do("GET", "/v1/charges/"+r.Str("charge"), e.Test, nil)
	is.Equal(ch.Str("status"), "succeeded")
	is.Equal(ch.Str("invoice"), id)
	is.Equal(len(e.payEvents(e.Test, "invoice.paid", id)), 1)

	// A processing card: the invoice waits, and is paid when the payment settles.
	slow := e.invSavedCard(cus, "4000009000000631")
	w := e.invCreate(map[string]any{"customer": cus, "lines": line}).Str("id")
	r = e.Do("POST", "/v1/invoices/"+w+"/pay", e.Test, map[string]any{"payment_method": slow})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "open")
	wpi := r.Str("payment_intent")
	is.Equal(e.Do("GET", "/v1/payment-intents/"+wpi, e.Test, nil).Str("status"), "processing")
	is.Equal(e.Do("POST", "/v1/invoices/"+w+"/pay", e.Test, nil).Status, 409)  // a payment is in progress
	is.Equal(e.Do("POST", "/v1/invoices/"+w+"/void", e.Test, nil).Status, 409) // and cannot be voided
	is.Equal(e.Do("POST", "/v1/test-helpers/payment-intents/"+wpi+"/succeed", e.Test, nil).Status, 200)
	r = e.Do("GET", "/v1/invoices/"+w, e.Test, nil)
	is.Equal(r.Str("status"), "paid")
	is.Equal(len(e.payEvents(e.Test, "invoice.paid", w)), 1)

	// Voiding an invoice after a declined attempt cancels its intent.
	x := e.invCreate(map[string]any{"customer": cus, "lines": line}).Str("id")
	r = e.Do("POST", "/v1/invoices/"+x+"/pay", e.Test, map[string]any{"payment_method": single})
	is.Equal(r.Status, 402)
	xpi := digStr(r.Body, "error.payment_intent.id")
	is.Equal(e.Do("POST", "/v1/invoices/"+x+"/void", e.Test, nil).Str("status"), "void")
	is.Equal(e.Do("GET", "/v1/payment-intents/"+xpi, e.Test, nil).Str("status"), "canceled")
}

// TestCheckoutInvoiceCreation: SPEC 2.4 invoice_creation in payment mode (card at once, PIX
// after its delayed settlement) and the subscription's first invoice in subscription mode.
func TestCheckoutInvoiceCreation(t *testing.T) {
	e := newEnv(t)

	t.Run("payment mode, card", func(t *testing.T) {
		is := is.New(t)
		e := withT(e, t)
		cs := e.coSimple(e.Test, map[string]any{"invoice_creation": true})
		is.Equal(cs.Body["invoice"], nil) // none before payment
		r := e.Do("POST", "/v1/checkout-sessions/"+cs.Str("id")+"/confirm", e.Test, coCard("4242424242424242"))
		is.Equal(r.Status, 200)
		is.Equal(r.Str("payment_status"), "paid")
		invID := r.Str("invoice")
		is.True(invID != "")
		inv := e.Do("GET", "/v1/invoices/"+invID, e.Test, nil)
		is.Equal(inv.Str("status"), "paid")
		is.Equal(inv.Str("checkout_session"), cs.Str("id"))
		is.Equal(inv.Str("payment_intent"), r.Str("payment_intent"))
		is.Equal(inv.Str("customer"), r.Str("customer"))
		is.Equal(inv.Str("collection_method"), "charge_automatically")
		is.Equal(inv.Body["due_date"], nil)
		is.Equal(inv.Body["subscription"], nil)
		is.Equal(digNum(inv.Body, "amount_paid"), digNum(r.Body, "total_amount"))
		is.Equal(digNum(inv.Body, "amount_remaining"), int64(0))
		is.Equal(digStr(inv.Body, "metadata.order"), "A-1") // the session's metadata
		lines, _ := dig(inv.Body, "lines.data").([]any)
		is.Equal(len(lines), 1)
		is.True(inv.Str("number") != "")
		ch := e.Do("GET", "/v1/charges/"+inv.Str("charge"), e.Test, nil)
		is.Equal(ch.Str("invoice"), invID)
		for _, typ := range []string{"invoice.created", "invoice.finalized", "invoice.paid"} {
			is.Equal(len(e.payEvents(e.Test, typ, invID)), 1) // one event each
		}
		completed := e.coEvents(e.Test, "checkout.session.completed", cs.Str("id"))
		is.Equal(digStr(completed[0], "data.object.invoice"), invID)
		is.Equal(e.Do("GET", "/v1/invoices?checkout_session="+cs.Str("id"), e.Test, nil).IDs(), []string{invID})
	})

	t.Run("payment mode with a coupon", func(t *testing.T) {
		is := is.New(t)
		e := withT(e, t)
		coupon := e.Do("POST", "/v1/coupons", e.Test, map[string]any{"percent_off": 10})
		is.Equal(coupon.Status, 200)
		cs := e.coSimple(e.Test, map[string]any{"invoice_creation": true, "discount": coupon.Str("id")})
		r := e.Do("POST", "/v1/checkout-sessions/"+cs.Str("id")+"/confirm", e.Test, coCard("4242424242424242"))
		is.Equal(r.Status, 200)
		inv := e.Do("GET", "/v1/invoices/"+r.Str("invoice"), e.Test, nil)
		is.Equal(digNum(inv.Body, "subtotal_amount"), digNum(r.Body, "subtotal_amount"))
		is.Equal(digNum(inv.Body, "discount_amount"), digNum(r.Body, "discount_amount"))
		is.True(digNum(inv.Body, "discount_amount") > 0)
		is.Equal(digNum(inv.Body, "amount_paid"), digNum(r.Body, "total_amount")) // what the buyer paid
	})

	t.Run("payment mode without invoice_creation", func(t *testing.T) {
		is := is.New(t)
		e := withT(e, t)
		cs := e.coSimple(e.Test, nil)
		r := e.Do("POST", "/v1/checkout-sessions/"+cs.Str("id")+"/confirm", e.Test, coCard("4242424242424242"))
		is.Equal(r.Status, 200)
		is.Equal(r.Body["invoice"], nil)
		is.Equal(len(e.Do("GET", "/v1/invoices?checkout_session="+cs.Str("id"), e.Test, nil).IDs()), 0)
	})

	t.Run("payment mode, nothing to pay", func(t *testing.T) {
		is := is.New(t)
		e := withT(e, t)
		price := e.coPrice(e.Test, "Brinde", 0, nil)
		cs := e.coSession(e.Test, map[string]any{"line_items": []any{map[string]any{"price": price}}, "invoice_creation": true})
		is.Equal(cs.Str("payment_status"), "no_payment_required")
		r := e.Do("POST", "/v1/checkout-sessions/"+cs.Str("id")+"/confirm", e.Test, map[string]any{"customer_email": "ana@example.com"})
		is.Equal(r.Status, 200)
		inv := e.Do("GET", "/v1/invoices/"+r.Str("invoice"), e.Test, nil)
		is.Equal(inv.Str("status"), "paid")
		is.Equal(digNum(inv.Body, "amount_due"), int64(0))
		is.Equal(inv.Body["payment_intent"], nil)
	})

	t.Run("payment mode, delayed PIX", func(t *testing.T) {
		is := is.New(t)
		e := withT(e, t)
		cs := e.coSimple(e.Test, map[string]any{"invoice_creation": true})
		r := e.Do("POST", "/v1/checkout-sessions/"+cs.Str("id")+"/confirm", e.Test,
			map[string]any{"payment_method_type": "pix", "customer_email": "succeed_delayed@example.com"})
		is.Equal(r.Status, 200)
		is.Equal(r.Str("payment_status"), "unpaid")
		is.Equal(r.Body["invoice"], nil) // no invoice while the PIX waits
		e.Clock.Advance(3 * time.Minute)
		is.NoErr(e.Jobs.RunDue(context.Background()))
		r = e.Do("GET", "/v1/checkout-sessions/"+cs.Str("id"), e.Test, nil)
		is.Equal(r.Str("payment_status"), "paid")
		invID := r.Str("invoice")
		is.True(invID != "")
		inv := e.Do("GET", "/v1/invoices/"+invID, e.Test, nil)
		is.Equal(inv.Str("status"), "paid")
		is.Equal(inv.Str("payment_intent"), r.Str("payment_intent"))
		is.Equal(inv.Str("checkout_session"), cs.Str("id"))
		async := e.coEvents(e.Test, "checkout.session.async.payment.succeeded", cs.Str("id"))
		is.Equal(len(async), 1)
		is.Equal(digStr(async[0], "data.object.invoice"), invID)
		is.Equal(e.Do("GET", "/v1/charges/"+inv.Str("charge"), e.Test, nil).Str("invoice"), invID)
	})

	t.Run("subscription mode", func(t *testing.T) {
		is := is.New(t)
		e := withT(e, t)
		price := e.coPrice(e.Test, "Plano", 2990, map[string]any{"interval": "month"})
		cs := e.coSession(e.Test, map[string]any{"line_items": []any{map[string]any{"price": price}}})
		r := e.Do("POST", "/v1/checkout-sessions/"+cs.Str("id")+"/confirm", e.Test, coCard("4242424242424242"))
		is.Equal(r.Status, 200)
		sub := r.Str("subscription")
		invID := r.Str("invoice")
		is.True(sub != "" && invID != "") // invoice_creation is not needed in subscription mode
		inv := e.Do("GET", "/v1/invoices/"+invID, e.Test, nil)
		is.Equal(inv.Str("status"), "paid")
		is.Equal(inv.Str("subscription"), sub)
		is.Equal(inv.Str("checkout_session"), cs.Str("id"))
		is.Equal(inv.Str("payment_intent"), r.Str("payment_intent"))
		is.Equal(digNum(inv.Body, "amount_paid"), int64(2990))
		s := e.Do("GET", "/v1/subscriptions/"+sub, e.Test, nil)
		is.Equal(s.Str("latest_invoice"), invID)
		is.Equal(s.Str("status"), "active")
		is.Equal(e.Do("GET", "/v1/invoices?subscription="+sub, e.Test, nil).IDs(), []string{invID})
	})

	t.Run("subscription mode with a trial", func(t *testing.T) {
		is := is.New(t)
		e := withT(e, t)
		price := e.coPrice(e.Test, "Plano", 2990, map[string]any{"interval": "month", "trial_period_days": 7})
		cs := e.coSession(e.Test, map[string]any{"line_items": []any{map[string]any{"price": price}}})
		r := e.Do("POST", "/v1/checkout-sessions/"+cs.Str("id")+"/confirm", e.Test, coCard("4242424242424242"))
		is.Equal(r.Status, 200)
		inv := e.Do("GET", "/v1/invoices/"+r.Str("invoice"), e.Test, nil)
		is.Equal(inv.Str("status"), "paid") // nothing due now: an invoice of zero, paid
		is.Equal(digNum(inv.Body, "amount_due"), int64(0))
		is.Equal(inv.Str("subscription"), r.Str("subscription"))
	})

	t.Run("subscription mode, processing card", func(t *testing.T) {
		is := is.New(t)
		e := withT(e, t)
		price := e.coPrice(e.Test, "Plano", 2990, map[string]any{"interval": "month"})
		cs := e.coSession(e.Test, map[string]any{"line_items": []any{map[string]any{"price": price}}})
		r := e.Do("POST", "/v1/checkout-sessions/"+cs.Str("id")+"/confirm", e.Test, coCard("4000009000000425"))
		is.Equal(r.Status, 200)
		is.Equal(r.Str("payment_status"), "unpaid")
		invID := r.Str("invoice")
		inv := e.Do("GET", "/v1/invoices/"+invID, e.Test, nil)
		is.Equal(inv.Str("status"), "open") // the first invoice waits for the first payment
		is.Equal(inv.Str("payment_intent"), r.Str("payment_intent"))
		is.Equal(e.Do("POST", "/v1/test-helpers/checkout-sessions/"+cs.Str("id")+"/succeed", e.Test, nil).Status, 200)
		inv = e.Do("GET", "/v1/invoices/"+invID, e.Test, nil)
		is.Equal(inv.Str("status"), "paid")
		is.Equal(len(e.payEvents(e.Test, "invoice.paid", invID)), 1)
		is.Equal(e.Do("GET", "/v1/subscriptions/"+r.Str("subscription"), e.Test, nil).Str("status"), "active")
	})
}

// TestInvoicePastDue: a send_invoice invoice of a subscription that reaches its due instant
// unpaid puts the subscription in past_due (SPEC 3.6) at that absolute instant, once; paying it
// makes the subscription active again. A charge_automatically invoice is never overdue.
func TestInvoicePastDue(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	ctx := context.Background()
	price := e.coPrice(e.Test, "Plano", 2990, map[string]any{"interval": "month"})
	cs := e.coSession(e.Test, map[string]any{"line_items": []any{map[string]any{"price": price}}})
	r := e.Do("POST", "/v1/checkout-sessions/"+cs.Str("id")+"/confirm", e.Test, coCard("4242424242424242"))
	is.Equal(r.Status, 200)
	sub, cus := r.Str("subscription"), r.Str("customer")

	due := e.Clock.Now().Truncate(time.Second).Add(2 * time.Hour)
	// Sent in São Paulo's offset: the due instant is the same.
	dueSent := due.In(time.FixedZone("BRT", -3*3600)).Format(time.RFC3339)
	r = e.invCreate(map[string]any{"customer": cus, "subscription": sub, "collection_method": "send_invoice", "due_date": dueSent,
		"lines": []any{map[string]any{"amount": 5000, "description": "Serviço adicional"}}})
	id := r.Str("id")
	is.Equal(r.Str("subscription"), sub)
	is.Equal(r.Str("due_date"), due.UTC().Format("2006-01-02T15:04:05Z"))
	is.Equal(e.Do("POST", "/v1/invoices/"+id+"/finalize", e.Test, nil).Status, 200)
	auto := e.invCreate(map[string]any{"customer": cus, "lines": []any{map[string]any{"amount": 5000, "description": "Avulso"}}}).Str("id")
	is.Equal(e.Do("POST", "/v1/invoices/"+auto+"/finalize", e.Test, nil).Status, 200)

	// One second before the due instant: not in arrears.
	e.Clock.Advance(due.Sub(e.Clock.Now()) - time.Second)
	is.NoErr(e.Jobs.RunDue(ctx))
	is.Equal(e.Do("GET", "/v1/subscriptions/"+sub, e.Test, nil).Str("status"), "active")
	is.Equal(len(e.payEvents(e.Test, "invoice.overdue", id)), 0)

	// At the due instant: past_due, invoice.overdue once.
	e.Clock.Advance(time.Second)
	is.NoErr(e.Jobs.RunDue(ctx))
	s := e.Do("GET", "/v1/subscriptions/"+sub, e.Test, nil)
	is.Equal(s.Str("status"), "past_due")
	is.Equal(e.Do("GET", "/v1/invoices/"+id, e.Test, nil).Str("status"), "open") // still owed
	e.Clock.Advance(48 * time.Hour)
	is.NoErr(e.Jobs.RunDue(ctx))
	is.Equal(len(e.payEvents(e.Test, "invoice.overdue", id)), 1)   // handled once
	is.Equal(len(e.payEvents(e.Test, "invoice.overdue", auto)), 0) // charge_automatically has no due date
	var pastDue int
	for _, ev := range e.payEvents(e.Test, "customer.subscription.updated", sub) {
		if digStr(ev, "data.object.status") == "past_due" {
			pastDue++
			is.Equal(digStr(ev, "data.previous_attributes.status"), "active")
		}
	}
	is.Equal(pastDue, 1)

	// Paying it ends the arrears.
	r = e.Do("POST", "/v1/invoices/"+id+"/pay", e.Test, nil) // the subscription's default card
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "paid")
	is.Equal(e.Do("GET", "/v1/subscriptions/"+sub, e.Test, nil).Str("status"), "active")

	// A subscription from another customer cannot be named.
	other := e.invCustomer("bruno@example.com")
	r = e.Do("POST", "/v1/invoices", e.Test, map[string]any{"customer": other, "subscription": sub})
	is.Equal(r.Status, 400)
	is.Equal(r.ErrParam(), "subscription")
	is.Equal(e.Do("POST", "/v1/invoices", e.Test, map[string]any{"customer": other, "subscription": "sub_000000000000000000000000"}).Status, 404)
}
