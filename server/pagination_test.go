package server_test

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestPagination covers SPEC 4.10: cursors, limits, created_at ranges, filters and the envelope.
func TestPagination(t *testing.T) {
	e := newEnv(t)
	const total = 25
	// ids and created_at instants in creation order (oldest first); the clock moves at least one
	// second between creations so every created_at is distinct.
	var ids []string
	var created []time.Time
	for i := range total {
		r := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "p" + strconv.Itoa(i) + "@example.com"})
		if r.Status != 200 {
			t.Fatalf("create customer %d: %d %s", i, r.Status, r.Raw)
		}
		ts, err := time.Parse(time.RFC3339, r.Str("created_at"))
		if err != nil {
			t.Fatalf("created_at: %v", err)
		}
		ids = append(ids, r.Str("id"))
		created = append(created, ts)
		e.Clock.Advance(time.Second)
	}
	newestFirst := slices.Clone(ids)
	slices.Reverse(newestFirst)

	t.Run("default page", func(t *testing.T) {
		is := is.New(t)
		r := e.Do("GET", "/v1/customers", e.Test, nil)
		is.Equal(r.Status, 200)
		is.Equal(r.Str("object"), "list")       // envelope
		is.Equal(r.Str("url"), "/v1/customers") // url is the endpoint path
		is.Equal(r.Body["has_more"], true)      // 25 > 10
		is.Equal(r.IDs(), newestFirst[:10])     // default limit 10, newest first
	})

	t.Run("walk forward with starting_after", func(t *testing.T) {
		is := is.New(t)
		var seen []string
		cursor := ""
		for pages := 0; ; pages++ {
			is.True(pages < 10) // terminates
			path := "/v1/customers?limit=7"
			if cursor != "" {
				path += "&starting_after=" + cursor
			}
			r := e.Do("GET", path, e.Test, nil)
			is.Equal(r.Status, 200)
			page := r.IDs()
			seen = append(seen, page...)
			if r.Body["has_more"] != true {
				is.Equal(len(page), total%7) // the last page holds the rest
				break
			}
			is.Equal(len(page), 7) // full pages while has_more
			cursor = page[len(page)-1]
		}
		is.Equal(seen, newestFirst) // no duplicates, no gaps, newest first
	})

	t.Run("walk back with ending_before", func(t *testing.T) {
		is := is.New(t)
		var seen []string
		cursor := ids[0] // the oldest
		for pages := 0; ; pages++ {
			is.True(pages < 10) // terminates
			r := e.Do("GET", "/v1/customers?limit=10&ending_before="+cursor, e.Test, nil)
			is.Equal(r.Status, 200)
			page := r.IDs()
			is.True(slices.IsSortedFunc(page, func(a, b string) int { // each page is newest first
				return slices.Index(ids, b) - slices.Index(ids, a)
			}))
			seen = append(page, seen...)
			if r.Body["has_more"] != true {
				break
			}
			cursor = page[0]
		}
		is.Equal(seen, newestFirst[:total-1]) // everything newer than the oldest, once
	})

	t.Run("limits", func(t *testing.T) {
		is := is.New(t)
		one := e.Do("GET", "/v1/customers?limit=1", e.Test, nil)
		is.Equal(one.IDs(), newestFirst[:1]) // limit 1
		is.Equal(one.Body["has_more"], true)
		all := e.Do("GET", "/v1/customers?limit=100", e.Test, nil)
		is.Equal(all.IDs(), newestFirst)      // limit 100
		is.Equal(all.Body["has_more"], false) // nothing left
		exact := e.Do("GET", "/v1/customers?limit=25", e.Test, nil)
		is.Equal(exact.Body["has_more"], false) // a page that ends exactly at the end
		for _, bad := range []string{"0", "101", "abc", "-1", "1.5", ""} {
			r := e.Do("GET", "/v1/customers?limit="+url.QueryEscape(bad), e.Test, nil)
			is.Equal(r.Status, 400)         // invalid limit
			is.Equal(r.ErrParam(), "limit") // names limit
			is.Equal(r.ErrCode(), "invalid_request")
		}
	})

	t.Run("cursor errors", func(t *testing.T) {
		is := is.New(t)
		r := e.Do("GET", "/v1/customers?starting_after="+ids[3]+"&ending_before="+ids[5], e.Test, nil)
		is.Equal(r.Status, 400) // both cursors
		is.True(r.ErrParam() == "starting_after" || r.ErrParam() == "ending_before")

		_, otherOrg := e.NewOrg("Outra", false)
		foreign := e.Do("POST", "/v1/customers", otherOrg, map[string]any{"email": "secret@example.com"})
		live := e.Do("POST", "/v1/customers", e.Live, map[string]any{"email": "live@example.com"})
		for _, c := range []struct{ name, id string }{{"other organization", foreign.Str("id")}, {"other environment", live.Str("id")}, {"unknown", "cus_doesnotexist"}} {
			for _, param := range []string{"starting_after", "ending_before"} {
				r := e.Do("GET", "/v1/customers?"+param+"="+c.id, e.Test, nil)
				is.Equal(r.Status, 400)       // a cursor outside the scope is refused
				is.Equal(r.ErrParam(), param) // naming the parameter used
				is.Equal(r.Body["data"], nil) // and nothing is listed
			}
		}
		r = e.Do("GET", "/v1/customers?starting_after=", e.Test, nil)
		is.Equal(r.Status, 400) // empty cursor
		r = e.Do("GET", "/v1/products?starting_after="+ids[3], e.Test, nil)
		is.Equal(r.Status, 400) // a customer id is not a product cursor
	})

	t.Run("created_at ranges", func(t *testing.T) {
		is := is.New(t)
		const k = 10 // ids[k] is the pivot
		pivot := created[k]
		forms := map[string]string{
			"rfc3339":        pivot.UTC().Format(time.RFC3339),
			"rfc3339 offset": pivot.In(time.FixedZone("BRT", -3*3600)).Format(time.RFC3339),
			"unix":           strconv.FormatInt(pivot.Unix(), 10),
		}
		for name, v := range forms {
			for _, c := range []struct {
				op   string
				want []string // newest first
			}{
				{"gte", newestFirst[:total-k]},
				{"gt", newestFirst[:total-k-1]},
				{"lte", newestFirst[total-k-1:]},
				{"lt", newestFirst[total-k:]},
			} {
				q := url.Values{"limit": {"100"}, "created_at[" + c.op + "]": {v}}
				r := e.Do("GET", "/v1/customers?"+q.Encode(), e.Test, nil)
				is.Equal(r.Status, 200)
				if !slices.Equal(r.IDs(), c.want) {
					t.Errorf("%s created_at[%s]: got %d items, want %d", name, c.op, len(r.IDs()), len(c.want))
				}
			}
		}
		q := url.Values{"limit": {"100"}, "created_at[gte]": {created[5].Format(time.RFC3339)}, "created_at[lt]": {strconv.FormatInt(created[8].Unix(), 10)}}
		r := e.Do("GET", "/v1/customers?"+q.Encode(), e.Test, nil)
		is.Equal(r.IDs(), []string{ids[7], ids[6], ids[5]}) // ranges combine

		q = url.Values{"limit": {"2"}, "created_at[lte]": {created[10].Format(time.RFC3339)}, "starting_after": {ids[8]}}
		r = e.Do("GET", "/v1/customers?"+q.Encode(), e.Test, nil)
		is.Equal(r.IDs(), []string{ids[7], ids[6]}) // and combine with cursors
		is.Equal(r.Body["has_more"], true)

		for _, bad := range []struct{ param, value string }{
			{"created_at[gte]", "yesterday"},
			{"created_at[gt]", "2026-01-02"},
			{"created_at[lte]", "2026-01-02T10:00:00"},
			{"created_at[lt]", "2026-02-30T10:00:00Z"},
		} {
			r := e.Do("GET", "/v1/customers?"+url.Values{bad.param: {bad.value}}.Encode(), e.Test, nil)
			is.Equal(r.Status, 400)           // bad timestamp
			is.Equal(r.ErrParam(), bad.param) // names the param
		}
		r = e.Do("GET", "/v1/customers?"+url.Values{"created_at[eq]": {"1"}}.Encode(), e.Test, nil)
		is.Equal(r.Status, 400)                  // unknown operator
		is.Equal(r.ErrParam(), "created_at[eq]") // names it
		r = e.Do("GET", "/v1/customers?created_at=1", e.Test, nil)
		is.Equal(r.Status, 400) // bare created_at is not a filter
	})

	t.Run("unknown and repeated parameters", func(t *testing.T) {
		is := is.New(t)
		r := e.Do("GET", "/v1/customers?colour=blue", e.Test, nil)
		is.Equal(r.Status, 400)          // unknown parameter
		is.Equal(r.ErrParam(), "colour") // names it
		r = e.Do("GET", "/v1/customers?status=active", e.Test, nil)
		is.Equal(r.Status, 400)          // a filter of another endpoint
		is.Equal(r.ErrParam(), "status") // names it
		r = e.Do("GET", "/v1/customers?limit=1&limit=2", e.Test, nil)
		is.Equal(r.Status, 400) // repeated
		is.Equal(r.ErrParam(), "limit")
	})

	t.Run("customers email filter", func(t *testing.T) {
		is := is.New(t)
		r := e.Do("GET", "/v1/customers?email=p3@example.com", e.Test, nil)
		is.Equal(r.IDs(), []string{ids[3]}) // exact match
		r = e.Do("GET", "/v1/customers?email=nobody@example.com", e.Test, nil)
		is.Equal(r.Status, 200)
		is.Equal(len(r.Data()), 0)          // no match: empty data, not null
		is.Equal(r.Body["has_more"], false) // and no more
		_, isList := r.Body["data"].([]any)
		is.True(isList) // data is an array
	})
}

// TestListFilters covers the equality filters of products and prices.
func TestListFilters(t *testing.T) {
	e := newEnv(t)
	mk := func(path string, body map[string]any) string {
		t.Helper()
		r := e.Do("POST", path, e.Test, body)
		if r.Status != 200 {
			t.Fatalf("POST %s: %d %s", path, r.Status, r.Raw)
		}
		return r.Str("id")
	}
	active := mk("/v1/products", map[string]any{"name": "Ativo"})
	inactive := mk("/v1/products", map[string]any{"name": "Inativo", "is_active": false})
	once := mk("/v1/prices", map[string]any{"product": active, "unit_amount": 1000})
	monthly := mk("/v1/prices", map[string]any{"product": active, "unit_amount": 2000, "recurring": map[string]any{"interval": "month"}})
	archived := mk("/v1/prices", map[string]any{"product": active, "unit_amount": 3000, "is_active": false})
	otherProduct := mk("/v1/prices", map[string]any{"product": inactive, "unit_amount": 4000})

	cases := []struct {
		name string
		path string
		want []string
	}{
		{"products all", "/v1/products", []string{inactive, active}},
		{"products active", "/v1/products?is_active=true", []string{active}},
		{"products inactive", "/v1/products?is_active=false", []string{inactive}},
		{"prices all", "/v1/prices", []string{otherProduct, archived, monthly, once}},
		{"prices of a product", "/v1/prices?product=" + active, []string{archived, monthly, once}},
		{"prices of the other product", "/v1/prices?product=" + inactive, []string{otherProduct}},
		{"prices recurring", "/v1/prices?type=recurring", []string{monthly}},
		{"prices one_time", "/v1/prices?type=one_time", []string{otherProduct, archived, once}},
		{"prices active", "/v1/prices?is_active=true", []string{otherProduct, monthly, once}},
		{"prices inactive", "/v1/prices?is_active=false", []string{archived}},
		{"prices combined", "/v1/prices?product=" + active + "&type=one_time&is_active=true", []string{once}},
		{"prices of an unknown product", "/v1/prices?product=prod_doesnotexist", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := e.Do("GET", tc.path, e.Test, nil)
			is.Equal(r.Status, 200)    // listed
			is.Equal(r.IDs(), tc.want) // exactly the matching objects, newest first
		})
	}

	bad := []struct{ path, param string }{
		{"/v1/products?is_active=yes", "is_active"},
		{"/v1/products?is_active=1", "is_active"},
		{"/v1/prices?type=weekly", "type"},
		{"/v1/prices?is_active=", "is_active"},
		{"/v1/products?product=" + active, "product"},
	}
	for _, b := range bad {
		t.Run("bad "+b.path, func(t *testing.T) {
			is := is.New(t)
			r := e.Do("GET", b.path, e.Test, nil)
			is.Equal(r.Status, 400)         // invalid filter
			is.Equal(r.ErrParam(), b.param) // names it
		})
	}

	t.Run("list url is the path", func(t *testing.T) {
		is := is.New(t)
		for _, p := range []string{"/v1/customers", "/v1/products", "/v1/prices", "/v1/events"} {
			r := e.Do("GET", p+"?limit=3", e.Test, nil)
			is.Equal(r.Status, 200)
			is.Equal(r.Str("object"), "list") // envelope
			is.Equal(r.Str("url"), p)         // without the query
		}
	})
}

// TestPaginationEveryList sends the malformed list parameters of SPEC 4.10 to every list route
// of routes.go (a GET whose path does not end in an id), so that a new list cannot skip the
// shared parsing: each is 400 invalid_request naming the parameter.
func TestPaginationEveryList(t *testing.T) {
	e := newEnv(t)
	_, platformKey := e.NewPlatform("Plataforma das listas")
	cus := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "l@example.com"}).Str("id")
	inv := e.Do("POST", "/v1/invoices", e.Test, map[string]any{"customer": cus}).Str("id")
	we := e.Do("POST", "/v1/webhook-endpoints", e.Test, map[string]any{"url": "https://example.com/h", "enabled_events": []string{"*"}}).Str("id")
	parent := map[string]string{"/v1/invoices/:id/lines": inv, "/v1/webhook-endpoints/:id/deliveries": we}

	n := 0
	for _, rt := range v1Routes(t) {
		if rt.method != "GET" {
			continue
		}
		route, need := rt.path, rt.need
		last := route[strings.LastIndexByte(route, '/')+1:]
		if strings.HasPrefix(last, ":") || strings.Contains(last, ".") || route == "/v1/test-helpers/mailbox" {
			continue // a retrieve, an image or a link, not a list
		}
		n++
		path := strings.ReplaceAll(route, ":id", parent[route])
		key := e.Test
		switch {
		case need == "platform":
			key = platformKey
		case strings.HasPrefix(route, "/v1/payout-accounts"):
			key = e.Live // live only
		}
		t.Run(route, func(t *testing.T) {
			is := is.New(t)
			ok := e.Do("GET", path, key, nil)
			is.Equal(ok.Status, 200) // the list itself answers
			is.Equal(ok.Str("object"), "list")
			for _, tc := range []struct{ query, param string }{
				{"limit=0", "limit"},
				{"limit=101", "limit"},
				{"limit=abc", "limit"},
				{"limit=1&limit=2", "limit"},
				{"created_at%5Bgte%5D=notatime", "created_at[gte]"},
				{"bogus_filter=1", "bogus_filter"},
				{"starting_after=x_doesnotexist", "starting_after"},
				{"ending_before=x_doesnotexist", "ending_before"},
				{"starting_after=x_a&ending_before=x_b", ""},
			} {
				r := e.Do("GET", path+"?"+tc.query, key, nil)
				is.Equal(r.Status, 400)                  // malformed list parameter
				is.Equal(r.ErrCode(), "invalid_request") // code
				if tc.param != "" {
					is.Equal(r.ErrParam(), tc.param) // names the parameter
				}
			}
		})
	}
	if n < 15 {
		t.Fatalf("found only %d list routes in routes.go; update the pattern of this test", n)
	}
}
