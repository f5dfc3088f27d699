package server_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/pages"
	"troco/server/discounts"
)

// Coupons, promotion codes and their use in checkout sessions.

func init() {
	isolationResources = append(isolationResources, couponIsolationResources...)
}

var couponIsolationResources = []isoResource{
	{
		name: "coupons",
		create: func(t *testing.T, e *testEnv, a isoActor) string {
			return mustCreate(t, e, a, "/v1/coupons", map[string]any{"percent_off": 10, "name": "Iso"})
		},
		get: "/v1/coupons/:id",
		routes: []isoRoute{
			{"GET", "/v1/coupons", nil},
			{"POST", "/v1/coupons", nil},
			{"GET", "/v1/coupons/:id", nil},
			{"POST", "/v1/coupons/:id", map[string]any{"name": "hijacked", "metadata": map[string]string{"x": "y"}}},
			{"DELETE", "/v1/coupons/:id", nil},
		},
		refs: []isoReference{
			{name: "promotion code for a foreign coupon", method: "POST", path: "/v1/promotion-codes",
				body: func(id string) any { return map[string]any{"coupon": id, "code": "ISOFOREIGN"} }, wantStatus: 404, wantParam: "coupon"},
			{name: "checkout session with a foreign coupon", method: "POST", path: "/v1/checkout-sessions",
				body: func(id string) any {
					return map[string]any{"line_items": []any{map[string]any{"price": "price_whatever"}}, "discount": id}
				}, wantStatus: 404, wantParam: "discount"},
			{name: "promotion codes filtered by a foreign coupon", method: "GET", path: "/v1/promotion-codes?coupon=:id", wantStatus: 200, wantEmpty: true},
		},
	},
	{
		name: "promotion codes",
		create: func(t *testing.T, e *testEnv, a isoActor) string {
			coupon := mustCreate(t, e, a, "/v1/coupons", map[string]any{"amount_off": 500})
			return mustCreate(t, e, a, "/v1/promotion-codes", map[string]any{"coupon": coupon, "code": "ISO-" + strings.ToUpper(coupon[len(coupon)-8:])})
		},
		get: "/v1/promotion-codes/:id",
		routes: []isoRoute{
			{"GET", "/v1/promotion-codes", nil},
			{"POST", "/v1/promotion-codes", nil},
			{"GET", "/v1/promotion-codes/:id", nil},
			{"POST", "/v1/promotion-codes/:id", map[string]any{"active": false}},
		},
		refs: []isoReference{
			{name: "checkout session with a foreign promotion code", method: "POST", path: "/v1/checkout-sessions",
				body: func(id string) any {
					return map[string]any{"line_items": []any{map[string]any{"price": "price_whatever"}}, "discount": id}
				}, wantStatus: 404, wantParam: "discount"},
		},
	},
}

// coCoupon creates a coupon, failing the test otherwise.
func (e *testEnv) coCoupon(token string, body map[string]any) resp {
	e.t.Helper()
	r := e.Do("POST", "/v1/coupons", token, body)
	if r.Status != 200 {
		e.t.Fatalf("create coupon: %d %s", r.Status, r.Raw)
	}
	return r
}

// coPromo creates a promotion code, failing the test otherwise.
func (e *testEnv) coPromo(token string, body map[string]any) resp {
	e.t.Helper()
	r := e.Do("POST", "/v1/promotion-codes", token, body)
	if r.Status != 200 {
		e.t.Fatalf("create promotion code: %d %s", r.Status, r.Raw)
	}
	return r
}

// coOne is a session for quantity units of a new price of amount centavos, with extra fields.
func (e *testEnv) coOne(amount, quantity int64, extra map[string]any) map[string]any {
	e.t.Helper()
	body := map[string]any{"line_items": []any{map[string]any{"price": e.coPrice(e.Test, "Item", amount, nil), "quantity": quantity}}}
	for k, v := range extra {
		body[k] = v
	}
	return body
}

func TestCouponsAPI(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	later := time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)

	c := e.coCoupon(e.Test, map[string]any{"percent_off": 15, "name": "Black Friday", "duration": "repeating", "duration_in_months": 3,
		"max_redemptions": 100, "redeem_by": later, "metadata": map[string]string{"campaign": "bf"}})
	is.True(strings.HasPrefix(c.Str("id"), "coupon_"))
	is.Equal(c.Body["object"], "coupon")
	is.Equal(c.Body["percent_off"], float64(15))
	is.Equal(c.Body["amount_off"], nil)
	is.Equal(c.Body["currency"], nil)
	is.Equal(c.Body["duration"], "repeating")
	is.Equal(c.Body["duration_in_months"], float64(3))
	is.Equal(c.Body["max_redemptions"], float64(100))
	is.Equal(c.Str("redeem_by"), later)
	is.Equal(c.Body["times_redeemed"], float64(0))
	is.Equal(c.Body["valid"], true)
	is.Equal(c.Body["livemode"], false)
	is.Equal(len(e.coEvents(e.Test, "coupon.created", c.Str("id"))), 1)

	a := e.coCoupon(e.Test, map[string]any{"amount_off": 2500})
	is.Equal(a.Body["amount_off"], float64(2500))
	is.Equal(a.Body["currency"], "brl") // the default
	is.Equal(a.Body["duration"], "once")
	is.Equal(a.Body["redeem_by"], nil)
	is.Equal(a.Body["name"], nil)

	for _, tc := range []struct {
		name      string
		body      map[string]any
		wantCode  string
		wantParam string
	}{
		{"neither", map[string]any{"name": "x"}, "parameter_missing", "percent_off"},
		{"both", map[string]any{"percent_off": 10, "amount_off": 100}, "invalid_request", "amount_off"},
		{"percent 0", map[string]any{"percent_off": 0}, "invalid_request", "percent_off"},
		{"percent 101", map[string]any{"percent_off": 101}, "invalid_request", "percent_off"},
		{"decimal percent", map[string]any{"percent_off": 12.5}, "invalid_request", "percent_off"},
		{"amount 0", map[string]any{"amount_off": 0}, "invalid_request", "amount_off"},
		{"other currency", map[string]any{"amount_off": 100, "currency": "usd"}, "invalid_request", "currency"},
		{"currency on percent", map[string]any{"percent_off": 10, "currency": "brl"}, "invalid_request", "currency"},
		{"bad duration", map[string]any{"percent_off": 10, "duration": "weekly"}, "invalid_request", "duration"},
		{"repeating without months", map[string]any{"percent_off": 10, "duration": "repeating"}, "parameter_missing", "duration_in_months"},
		{"months without repeating", map[string]any{"percent_off": 10, "duration_in_months": 2}, "invalid_request", "duration_in_months"},
		{"max 0", map[string]any{"percent_off": 10, "max_redemptions": 0}, "invalid_request", "max_redemptions"},
		{"redeem_by past", map[string]any{"percent_off": 10, "redeem_by": "2020-01-01T00:00:00Z"}, "invalid_request", "redeem_by"},
		{"redeem_by date only", map[string]any{"percent_off": 10, "redeem_by": "2030-01-01"}, "invalid_request", "redeem_by"},
		{"long name", map[string]any{"percent_off": 10, "name": strings.Repeat("n", 41)}, "invalid_request", "name"},
	} {
		r := e.Do("POST", "/v1/coupons", e.Test, tc.body)
		if r.Status != 400 || r.ErrCode() != tc.wantCode || r.ErrParam() != tc.wantParam {
			t.Errorf("%s: %d %s %q, want 400 %s %q", tc.name, r.Status, r.ErrCode(), r.ErrParam(), tc.wantCode, tc.wantParam)
		}
	}

	// Retrieve, update (name and metadata only), list, delete.
	is.Equal(e.Do("GET", "/v1/coupons/"+c.Str("id"), e.Test, nil).Str("name"), "Black Friday")
	u := e.Do("POST", "/v1/coupons/"+c.Str("id"), e.Test, map[string]any{"name": "BF", "metadata": map[string]string{"x": "1"}})
	is.Equal(u.Status, 200)
	is.Equal(u.Str("name"), "BF")
	is.Equal(u.Body["metadata"], map[string]any{"campaign": "bf", "x": "1"})
	is.Equal(len(e.coEvents(e.Test, "coupon.updated", c.Str("id"))), 1)
	terms := e.Do("POST", "/v1/coupons/"+c.Str("id"), e.Test, map[string]any{"percent_off": 90})
	is.Equal(terms.Status, 400) // the terms of a coupon never change
	is.Equal(terms.ErrParam(), "percent_off")
	is.Equal(e.Do("GET", "/v1/coupons", e.Test, nil).IDs(), []string{a.Str("id"), c.Str("id")})
	del := e.Do("DELETE", "/v1/coupons/"+a.Str("id"), e.Test, nil)
	is.Equal(del.Body["deleted"], true)
	is.Equal(del.Body["object"], "coupon")
	is.Equal(len(e.coEvents(e.Test, "coupon.deleted", a.Str("id"))), 1)
	is.Equal(e.Do("GET", "/v1/coupons/"+a.Str("id"), e.Test, nil).Status, 404)
	is.Equal(e.Do("DELETE", "/v1/coupons/"+a.Str("id"), e.Test, nil).Status, 404)
	is.Equal(e.Do("GET", "/v1/coupons", e.Test, nil).IDs(), []string{c.Str("id")})
}

func TestPromotionCodesAPI(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	c := e.coCoupon(e.Test, map[string]any{"percent_off": 10})
	p := e.coPromo(e.Test, map[string]any{"coupon": c.Str("id"), "code": "BemVindo10", "max_redemptions": 5, "metadata": map[string]string{"canal": "insta"}})
	is.True(strings.HasPrefix(p.Str("id"), "promo_"))
	is.Equal(p.Body["object"], "promotion_code")
	is.Equal(p.Str("code"), "BemVindo10") // kept as written
	is.Equal(p.Body["active"], true)
	is.Equal(dig(p.Body, "coupon.id"), c.Str("id")) // the coupon is embedded
	is.Equal(dig(p.Body, "coupon.percent_off"), float64(10))
	is.Equal(p.Body["max_redemptions"], float64(5))
	is.Equal(p.Body["expires_at"], nil)
	is.Equal(p.Body["times_redeemed"], float64(0))
	is.Equal(len(e.coEvents(e.Test, "promotion_code.created", p.Str("id"))), 1)

	// Codes are unique among active codes, without case.
	dup := e.Do("POST", "/v1/promotion-codes", e.Test, map[string]any{"coupon": c.Str("id"), "code": "BEMVINDO10"})
	is.Equal(dup.Status, 400)
	is.Equal(dup.ErrParam(), "code")
	off := e.Do("POST", "/v1/promotion-codes/"+p.Str("id"), e.Test, map[string]any{"active": false})
	is.Equal(off.Body["active"], false)
	is.Equal(len(e.coEvents(e.Test, "promotion_code.updated", p.Str("id"))), 1)
	p2 := e.coPromo(e.Test, map[string]any{"coupon": c.Str("id"), "code": "bemvindo10"}) // the old one is inactive
	back := e.Do("POST", "/v1/promotion-codes/"+p.Str("id"), e.Test, map[string]any{"active": true})
	is.Equal(back.Status, 400) // two active codes cannot share the text
	is.Equal(back.ErrParam(), "active")

	// A generated code; validation.
	gen := e.coPromo(e.Test, map[string]any{"coupon": c.Str("id"), "active": false})
	is.Equal(len(gen.Str("code")), 8)
	is.Equal(gen.Body["active"], false)
	for _, tc := range []struct {
		name      string
		body      map[string]any
		status    int
		wantParam string
	}{
		{"no coupon", map[string]any{"code": "ABCDE"}, 400, "coupon"},
		{"unknown coupon", map[string]any{"coupon": "coupon_nope", "code": "ABCDE"}, 404, "coupon"},
		{"bad characters", map[string]any{"coupon": c.Str("id"), "code": "DESCONTO 10%"}, 400, "code"},
		{"too short", map[string]any{"coupon": c.Str("id"), "code": "AB"}, 400, "code"},
		{"expires in the past", map[string]any{"coupon": c.Str("id"), "code": "PAST", "expires_at": "2021-05-01T12:00:00Z"}, 400, "expires_at"},
		{"max 0", map[string]any{"coupon": c.Str("id"), "code": "ZERO", "max_redemptions": 0}, 400, "max_redemptions"},
		{"unknown field", map[string]any{"coupon": c.Str("id"), "code": "FIELD", "percent_off": 5}, 400, "percent_off"},
	} {
		r := e.Do("POST", "/v1/promotion-codes", e.Test, tc.body)
		if r.Status != tc.status || r.ErrParam() != tc.wantParam {
			t.Errorf("%s: %d %q %s, want %d %q", tc.name, r.Status, r.ErrParam(), r.Raw, tc.status, tc.wantParam)
		}
	}

	// Lists and filters.
	is.Equal(e.Do("GET", "/v1/promotion-codes", e.Test, nil).IDs(), []string{gen.Str("id"), p2.Str("id"), p.Str("id")})
	is.Equal(e.Do("GET", "/v1/promotion-codes?code=BEMVINDO10", e.Test, nil).IDs(), []string{p2.Str("id"), p.Str("id")})
	is.Equal(e.Do("GET", "/v1/promotion-codes?code=bemvindo10&active=true", e.Test, nil).IDs(), []string{p2.Str("id")})
	is.Equal(e.Do("GET", "/v1/promotion-codes?active=false", e.Test, nil).IDs(), []string{gen.Str("id"), p.Str("id")})
	other := e.coCoupon(e.Test, map[string]any{"amount_off": 100})
	is.Equal(len(e.Do("GET", "/v1/promotion-codes?coupon="+other.Str("id"), e.Test, nil).IDs()), 0)
	is.Equal(e.Do("GET", "/v1/promotion-codes?active=maybe", e.Test, nil).ErrParam(), "active")

	// A coupon that can no longer be redeemed takes no new code; a deleted one is not found.
	one := e.coCoupon(e.Test, map[string]any{"percent_off": 100, "max_redemptions": 1})
	s := e.coSession(e.Test, e.coOne(1000, 1, map[string]any{"discount": one.Str("id")}))
	is.Equal(e.Do("POST", "/v1/checkout-sessions/"+s.Str("id")+"/confirm", e.Test, map[string]any{"customer_email": "a@example.com"}).Status, 200)
	spent := e.Do("POST", "/v1/promotion-codes", e.Test, map[string]any{"coupon": one.Str("id"), "code": "SPENT"})
	is.Equal(spent.Status, 400)
	is.Equal(spent.ErrParam(), "coupon")
	e.Do("DELETE", "/v1/coupons/"+other.Str("id"), e.Test, nil)
	is.Equal(e.Do("POST", "/v1/promotion-codes", e.Test, map[string]any{"coupon": other.Str("id"), "code": "GONE"}).Status, 404)
}

func TestCheckoutDiscountMath(t *testing.T) {
	e := newEnv(t)
	pct := func(p int) string { return e.coCoupon(e.Test, map[string]any{"percent_off": p}).Str("id") }
	amt := func(a int64) string { return e.coCoupon(e.Test, map[string]any{"amount_off": a}).Str("id") }
	for _, tc := range []struct {
		name          string
		amount, qty   int64
		coupon        string
		wantDiscount  int64
		wantTotal     int64
		wantPayStatus string
	}{
		{"10% of 99,99 rounds 9,999 up", 9999, 1, pct(10), 1000, 8999, "unpaid"},
		{"5% of 49,90 is 2,495: half up", 4990, 1, pct(5), 250, 4740, "unpaid"},
		{"15% of 3,33 is 0,4995: rounds to 0,50", 333, 1, pct(15), 50, 283, "unpaid"},
		{"33% of 3 × 10,00", 1000, 3, pct(33), 990, 2010, "unpaid"},
		{"100% is free", 5000, 2, pct(100), 10000, 0, "no_payment_required"},
		{"amount below the subtotal", 10000, 1, amt(2500), 2500, 7500, "unpaid"},
		{"amount above the subtotal is capped", 10000, 1, amt(15000), 10000, 0, "no_payment_required"},
		{"amount equal to the subtotal", 10000, 1, amt(10000), 10000, 0, "no_payment_required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			s := e.coSession(e.Test, e.coOne(tc.amount, tc.qty, map[string]any{"discount": tc.coupon}))
			is.Equal(s.Str("discount"), tc.coupon)
			is.Equal(s.Body["subtotal_amount"], float64(tc.amount*tc.qty))
			is.Equal(s.Body["discount_amount"], float64(tc.wantDiscount))
			is.Equal(s.Body["tax_amount"], float64(0))
			is.Equal(s.Body["total_amount"], float64(tc.wantTotal)) // subtotal − discount + tax
			is.Equal(s.Str("payment_status"), tc.wantPayStatus)
			is.Equal(dig(s.Body, "line_items"), dig(e.Do("GET", "/v1/checkout-sessions/"+s.Str("id"), e.Test, nil).Body, "line_items")) // the snapshot keeps the amounts
			li := s.Body["line_items"].([]any)[0].(map[string]any)
			is.Equal(li["total_amount"], float64(tc.wantTotal)) // one item carries the whole discount
			body := coCard("4242424242424242")
			if tc.wantTotal == 0 {
				body = map[string]any{"customer_email": "ana@example.com"}
			}
			r := e.Do("POST", "/v1/checkout-sessions/"+s.Str("id")+"/confirm", e.Test, body)
			is.Equal(r.Status, 200)
			is.Equal(r.Str("status"), "complete")
			if tc.wantTotal == 0 {
				is.Equal(r.Str("payment_status"), "no_payment_required")
				is.Equal(r.Body["payment_intent"], nil)
			} else {
				is.Equal(r.Str("payment_status"), "paid")
				pi := e.Do("GET", "/v1/payment-intents/"+r.Str("payment_intent"), e.Test, nil)
				is.Equal(pi.Body["amount"], float64(tc.wantTotal)) // the intent charges the discounted total
			}
		})
	}

	t.Run("the discount spreads over line items", func(t *testing.T) {
		is := is.New(t)
		body := map[string]any{"discount": amt(1000), "line_items": []any{
			map[string]any{"price": e.coPrice(e.Test, "A", 1000, nil)},
			map[string]any{"price": e.coPrice(e.Test, "B", 2000, nil)},
			map[string]any{"price": e.coPrice(e.Test, "C", 3000, nil)},
		}}
		s := e.coSession(e.Test, body)
		var sum int64
		var totals []float64
		for _, it := range s.Body["line_items"].([]any) {
			li := it.(map[string]any)
			totals = append(totals, li["total_amount"].(float64))
			sum += int64(li["total_amount"].(float64))
		}
		is.Equal(totals, []float64{833, 1667, 2500}) // 166,67 / 333,33 / 500 off: the centavo goes to the largest remainder
		is.Equal(sum, int64(5000))
		is.Equal(s.Body["total_amount"], float64(5000))
	})

	t.Run("a total between 1 and 49 centavos is refused", func(t *testing.T) {
		is := is.New(t)
		r := e.Do("POST", "/v1/checkout-sessions", e.Test, e.coOne(10000, 1, map[string]any{"discount": amt(9960)}))
		is.Equal(r.Status, 400)
		is.Equal(r.ErrParam(), "discount")
		r = e.Do("POST", "/v1/checkout-sessions", e.Test, e.coOne(1000, 1, map[string]any{"discount": pct(99)})) // 10 centavos left
		is.Equal(r.ErrParam(), "discount")
	})

	t.Run("subscription: the first payment is discounted", func(t *testing.T) {
		is := is.New(t)
		price := e.coPrice(e.Test, "Plano", 2990, map[string]any{"interval": "month"})
		coupon := e.coCoupon(e.Test, map[string]any{"percent_off": 50, "duration": "forever"}).Str("id")
		s := e.coSession(e.Test, map[string]any{"line_items": []any{map[string]any{"price": price}}, "discount": coupon})
		is.Equal(s.Str("mode"), "subscription")
		is.Equal(s.Body["total_amount"], float64(1495))
		r := e.Do("POST", "/v1/checkout-sessions/"+s.Str("id")+"/confirm", e.Test, coCard("4242424242424242"))
		is.Equal(r.Str("payment_status"), "paid")
		is.Equal(e.Do("GET", "/v1/payment-intents/"+r.Str("payment_intent"), e.Test, nil).Body["amount"], float64(1495))
		is.Equal(e.Do("GET", "/v1/subscriptions/"+r.Str("subscription"), e.Test, nil).Str("status"), "active")
	})
}

func TestCheckoutDiscountValidity(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	create := func(token string, body map[string]any) resp {
		return e.Do("POST", "/v1/checkout-sessions", token, body)
	}

	// Unknown, foreign organization, other environment: the same 404, nothing leaked.
	orgB, bTest := e.NewOrg("Outra Ltda", false)
	_ = orgB
	foreign := e.coCoupon(bTest, map[string]any{"percent_off": 50}).Str("id")
	liveCoupon := e.coCoupon(e.Live, map[string]any{"percent_off": 50}).Str("id")
	missing := create(e.Test, e.coOne(1000, 1, map[string]any{"discount": "coupon_nope"}))
	is.Equal(missing.Status, 404)
	is.Equal(missing.ErrParam(), "discount")
	for _, id := range []string{foreign, liveCoupon} {
		r := create(e.Test, e.coOne(1000, 1, map[string]any{"discount": id}))
		is.Equal(r.Status, 404)
		is.Equal(r.ErrCode(), "resource_missing")
		is.Equal(r.ErrParam(), "discount")
		is.Equal(strings.ReplaceAll(r.Body["error"].(map[string]any)["message"].(string), id, "X"),
			strings.ReplaceAll(missing.Body["error"].(map[string]any)["message"].(string), "coupon_nope", "X"))
	}
	foreignPromo := e.coPromo(bTest, map[string]any{"coupon": foreign, "code": "OUTRA"}).Str("id")
	is.Equal(create(e.Test, e.coOne(1000, 1, map[string]any{"discount": foreignPromo})).Status, 404)

	// discount and allow_promotion_codes exclude each other.
	ok := e.coCoupon(e.Test, map[string]any{"percent_off": 10}).Str("id")
	both := create(e.Test, e.coOne(1000, 1, map[string]any{"discount": ok, "allow_promotion_codes": true}))
	is.Equal(both.Status, 400)
	is.Equal(both.ErrParam(), "discount")

	// Inactive and expiring promotion codes.
	promo := e.coPromo(e.Test, map[string]any{"coupon": ok, "code": "DEZ", "expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	e.Do("POST", "/v1/promotion-codes/"+promo.Str("id"), e.Test, map[string]any{"active": false})
	inactive := create(e.Test, e.coOne(1000, 1, map[string]any{"discount": promo.Str("id")}))
	is.Equal(inactive.Status, 400)
	is.Equal(inactive.ErrParam(), "discount")
	is.True(strings.Contains(string(inactive.Raw), "not active"))
	e.Do("POST", "/v1/promotion-codes/"+promo.Str("id"), e.Test, map[string]any{"active": true})
	withPromo := e.coSession(e.Test, e.coOne(1000, 1, map[string]any{"discount": promo.Str("id")}))
	is.Equal(withPromo.Str("discount"), promo.Str("id"))
	is.Equal(withPromo.Body["total_amount"], float64(900))

	// A coupon that expires: valid now, refused after redeem_by (also at confirmation).
	expiring := e.coCoupon(e.Test, map[string]any{"percent_off": 20, "redeem_by": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}).Str("id")
	early := e.coSession(e.Test, e.coOne(1000, 1, map[string]any{"discount": expiring}))
	is.Equal(e.Do("POST", "/v1/test-helpers/advance-clock", e.Test, map[string]any{"seconds": 2 * 3600}).Status, 200)
	is.Equal(e.Do("GET", "/v1/coupons/"+expiring, e.Test, nil).Body["valid"], false)
	expired := create(e.Test, e.coOne(1000, 1, map[string]any{"discount": expiring}))
	is.Equal(expired.Status, 400)
	is.Equal(expired.ErrParam(), "discount")
	is.True(strings.Contains(string(expired.Raw), "expired"))
	late := e.Do("POST", "/v1/checkout-sessions/"+early.Str("id")+"/confirm", e.Test, coCard("4242424242424242"))
	is.Equal(late.Status, 400) // nothing is charged with a discount that expired meanwhile
	is.Equal(late.ErrParam(), "discount")
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+early.Str("id"), e.Test, nil).Body["payment_intent"], nil)
	lateP := e.Do("POST", "/v1/checkout-sessions/"+withPromo.Str("id")+"/confirm", e.Test, coCard("4242424242424242"))
	is.Equal(lateP.ErrParam(), "discount") // the promotion code expired too

	// Exhausted: max_redemptions counts paid sessions only, and is checked again at confirmation.
	limited := e.coCoupon(e.Test, map[string]any{"amount_off": 500, "max_redemptions": 1}).Str("id")
	first := e.coSession(e.Test, e.coOne(1000, 1, map[string]any{"discount": limited}))
	second := e.coSession(e.Test, e.coOne(1000, 1, map[string]any{"discount": limited}))
	pix := e.Do("POST", "/v1/checkout-sessions/"+first.Str("id")+"/confirm", e.Test, map[string]any{"payment_method_type": "pix", "customer_email": "ana@example.com"})
	is.Equal(pix.Str("payment_status"), "unpaid") // the PIX waits: not redeemed yet
	is.Equal(e.Do("GET", "/v1/coupons/"+limited, e.Test, nil).Body["times_redeemed"], float64(0))
	is.Equal(e.Do("POST", "/v1/test-helpers/checkout-sessions/"+first.Str("id")+"/succeed", e.Test, nil).Status, 200)
	cp := e.Do("GET", "/v1/coupons/"+limited, e.Test, nil)
	is.Equal(cp.Body["times_redeemed"], float64(1)) // paid now
	is.Equal(cp.Body["valid"], false)
	exhausted := e.Do("POST", "/v1/checkout-sessions/"+second.Str("id")+"/confirm", e.Test, coCard("4242424242424242"))
	is.Equal(exhausted.Status, 400)
	is.Equal(exhausted.ErrParam(), "discount")
	is.True(strings.Contains(string(exhausted.Raw), "max_redemptions"))
	third := create(e.Test, e.coOne(1000, 1, map[string]any{"discount": limited}))
	is.Equal(third.Status, 400)
	is.Equal(third.ErrParam(), "discount")

	// A deleted coupon: new sessions cannot find it; an open session that applied it cannot pay with it.
	del := e.coCoupon(e.Test, map[string]any{"percent_off": 5}).Str("id")
	pending := e.coSession(e.Test, e.coOne(1000, 1, map[string]any{"discount": del}))
	e.Do("DELETE", "/v1/coupons/"+del, e.Test, nil)
	is.Equal(create(e.Test, e.coOne(1000, 1, map[string]any{"discount": del})).Status, 404)
	is.Equal(e.Do("POST", "/v1/checkout-sessions/"+pending.Str("id")+"/confirm", e.Test, coCard("4242424242424242")).ErrParam(), "discount")
}

// promoForm is the hosted page's promotion-code form filled with code.
func promoForm(p page, action, code string) url.Values {
	f := p.hidden()
	f.Del("attempt")
	f.Set("action", action)
	f.Set("promotion_code", code)
	return f
}

func TestHostedPromotionCode(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	coupon := e.coCoupon(e.Test, map[string]any{"percent_off": 10, "name": "Boas-vindas"})
	promo := e.coPromo(e.Test, map[string]any{"coupon": coupon.Str("id"), "code": "BEMVINDO10", "max_redemptions": 10})
	expiredCoupon := e.coCoupon(e.Test, map[string]any{"amount_off": 500, "max_redemptions": 1})
	spent := e.coPromo(e.Test, map[string]any{"coupon": expiredCoupon.Str("id"), "code": "ESGOTADO"})
	free := e.coSession(e.Test, e.coOne(1000, 1, map[string]any{"discount": spent.Str("id")}))
	_ = free
	// Spend ESGOTADO's only redemption.
	is.Equal(e.Do("POST", "/v1/test-helpers/checkout-sessions/"+free.Str("id")+"/succeed", e.Test, nil).Status, 200)

	s := e.coSimple(e.Test, map[string]any{"allow_promotion_codes": true, "success_url": "https://loja.example/ok"})
	promoPath := "/checkout/" + s.Str("id") + "/promotion-code"
	b := e.newBrowser(t)
	p := b.get(s.Str("url"))
	is.Equal(p.Status, 200)
	is.True(p.testID("promotion-code"))
	is.True(strings.Contains(p.Body, `<label for="promotion-code">Cupom de desconto</label>`)) // pt-BR label
	is.True(!p.testID("discount-amount"))
	is.True(strings.Contains(b.get(s.Str("url")+"&lang=en").Body, `<label for="promotion-code">Promotion code</label>`))
	// A session without allow_promotion_codes shows no field.
	is.True(!b.get(e.coSimple(e.Test, nil).Str("url")).testID("promotion-code"))

	// Refused codes: re-rendered with a Portuguese reason, nothing changes.
	for code, want := range map[string]string{"NAOEXISTE": "Cupom inválido", "esgotado": "atingiu o limite de usos", "  ": "Digite o código"} {
		r := b.post(promoPath, promoForm(p, "apply", code))
		is.Equal(r.Status, 400)
		is.True(r.testID("promotion-code-error"))
		is.True(strings.Contains(r.Body, want))
	}
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+s.Str("id"), e.Test, nil).Body["discount_amount"], float64(0))

	// CSRF as on the other forms.
	stranger := e.newBrowser(t)
	is.Equal(stranger.post(promoPath, promoForm(p, "apply", "BEMVINDO10")).Status, 403)
	forged := promoForm(p, "apply", "BEMVINDO10")
	forged.Set("csrf_token", "forged")
	is.Equal(b.post(promoPath, forged).Status, 403)

	// A declined card first: the session's intent exists and must follow the discount.
	d := b.post("/checkout/"+s.Str("id")+"/confirm", cardForm(p, "4000000000000002"))
	is.Equal(d.Status, 402)

	// The code, in any case, applies: back to the page with the new total.
	ok := b.post(promoPath, promoForm(d, "apply", "bemvindo10"))
	is.Equal(ok.Status, 303)
	pg := b.get(ok.Location)
	is.Equal(pg.textOf("promotion-code-applied"), "BEMVINDO10")
	is.Equal(pg.textOf("discount-amount"), "−R$ 10,00")
	is.Equal(pg.textOf("total-amount"), "R$ 90,00")
	is.Equal(pg.textOf("pay-button"), "Pagar R$ 90,00")
	is.True(strings.Contains(pg.Body, "(BEMVINDO10)"))
	g := e.Do("GET", "/v1/checkout-sessions/"+s.Str("id"), e.Test, nil)
	is.Equal(g.Str("discount"), promo.Str("id"))
	is.Equal(g.Body["discount_amount"], float64(1000))
	is.Equal(g.Body["total_amount"], float64(9000))
	is.Equal(e.Do("GET", "/v1/payment-intents/"+g.Str("payment_intent"), e.Test, nil).Body["amount"], float64(9000))
	is.Equal(e.Do("GET", "/v1/promotion-codes/"+promo.Str("id"), e.Test, nil).Body["times_redeemed"], float64(0)) // not paid yet

	// Remove, then apply again.
	rm := b.post(promoPath, promoForm(pg, "remove", ""))
	is.Equal(rm.Status, 303)
	again := b.get(rm.Location)
	is.Equal(again.textOf("total-amount"), "R$ 100,00")
	is.Equal(e.Do("GET", "/v1/payment-intents/"+g.Str("payment_intent"), e.Test, nil).Body["amount"], float64(10000))
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+s.Str("id"), e.Test, nil).Body["discount"], nil)
	is.Equal(b.post(promoPath, promoForm(again, "apply", "BemVindo10")).Status, 303)

	// A code deactivated after it was applied cannot be paid with: a clear message, no charge.
	e.Do("POST", "/v1/promotion-codes/"+promo.Str("id"), e.Test, map[string]any{"active": false})
	stale := b.post("/checkout/"+s.Str("id")+"/confirm", cardForm(b.get(s.Str("url")), "4242424242424242"))
	is.Equal(stale.Status, 400)
	is.True(strings.Contains(stale.Body, "não é mais válido"))
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+s.Str("id"), e.Test, nil).Str("status"), "open")
	e.Do("POST", "/v1/promotion-codes/"+promo.Str("id"), e.Test, map[string]any{"active": true})

	// Pay: the card is charged the discounted total and the redemption counts.
	final := b.get(s.Str("url"))
	paid := b.post("/checkout/"+s.Str("id")+"/confirm", cardForm(final, "4242424242424242"))
	is.Equal(paid.Status, 303)
	is.Equal(paid.Location, "https://loja.example/ok")
	done := e.Do("GET", "/v1/checkout-sessions/"+s.Str("id"), e.Test, nil)
	is.Equal(done.Str("payment_status"), "paid")
	is.Equal(done.Body["total_amount"], float64(9000))
	is.Equal(e.Do("GET", "/v1/payment-intents/"+done.Str("payment_intent"), e.Test, nil).Body["amount_received"], float64(9000))
	is.Equal(e.Do("GET", "/v1/promotion-codes/"+promo.Str("id"), e.Test, nil).Body["times_redeemed"], float64(1))
	is.Equal(e.Do("GET", "/v1/coupons/"+coupon.Str("id"), e.Test, nil).Body["times_redeemed"], float64(1))
	completed := e.coEvents(e.Test, "checkout.session.completed", s.Str("id"))
	is.Equal(len(completed), 1)
	is.Equal(dig(completed[0], "data.object.discount_amount"), float64(1000))

	// A complete session takes no more codes.
	is.Equal(b.post(promoPath, promoForm(final, "remove", "")).Status, 303)
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+s.Str("id"), e.Test, nil).Str("discount"), promo.Str("id"))

	// A 100% code makes the order free: the waiting intent is canceled and let go.
	all := e.coCoupon(e.Test, map[string]any{"percent_off": 100})
	e.coPromo(e.Test, map[string]any{"coupon": all.Str("id"), "code": "GRATIS"})
	s2 := e.coSimple(e.Test, map[string]any{"allow_promotion_codes": true})
	p2 := b.get(s2.Str("url"))
	is.Equal(b.post("/checkout/"+s2.Str("id")+"/confirm", cardForm(p2, "4000000000000002")).Status, 402)
	oldPI := e.Do("GET", "/v1/checkout-sessions/"+s2.Str("id"), e.Test, nil).Str("payment_intent")
	is.Equal(b.post("/checkout/"+s2.Str("id")+"/promotion-code", promoForm(p2, "apply", "gratis")).Status, 303)
	g2 := e.Do("GET", "/v1/checkout-sessions/"+s2.Str("id"), e.Test, nil)
	is.Equal(g2.Str("status"), "open")
	is.Equal(g2.Str("payment_status"), "no_payment_required")
	is.Equal(g2.Body["payment_intent"], nil)
	is.Equal(e.Do("GET", "/v1/payment-intents/"+oldPI, e.Test, nil).Str("status"), "canceled")
	fp := b.get(s2.Str("url"))
	is.Equal(fp.textOf("pay-button"), "Confirmar")
	f := fp.hidden()
	f.Set("customer_email", "ana@example.com")
	f.Set("customer_name", "Ana Souza")
	is.Equal(b.post("/checkout/"+s2.Str("id")+"/confirm", f).Status, 303)
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+s2.Str("id"), e.Test, nil).Str("payment_status"), "no_payment_required")
	is.Equal(e.Do("GET", "/v1/coupons/"+all.Str("id"), e.Test, nil).Body["times_redeemed"], float64(1))
}

// TestCheckoutCaptureAndCancel: capturing or canceling a session's intent through
// /v1/payment-intents moves the session through the payments engine's AfterSettle hook.
func TestCheckoutCaptureAndCancel(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)

	// Capture: complete + unpaid → paid, with checkout.session.async.payment.succeeded.
	s := e.coSimple(e.Test, nil)
	r := e.Do("POST", "/v1/checkout-sessions/"+s.Str("id")+"/confirm", e.Test, coCard("4000000000003220"))
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "complete")
	is.Equal(r.Str("payment_status"), "unpaid")
	pi := r.Str("payment_intent")
	is.Equal(e.Do("GET", "/v1/payment-intents/"+pi, e.Test, nil).Str("status"), "requires_capture")
	c := e.Do("POST", "/v1/payment-intents/"+pi+"/capture", e.Test, nil)
	is.Equal(c.Status, 200)
	is.Equal(c.Str("status"), "succeeded")
	g := e.Do("GET", "/v1/checkout-sessions/"+s.Str("id"), e.Test, nil)
	is.Equal(g.Str("payment_status"), "paid")
	ev := e.coEvents(e.Test, "checkout.session.async.payment.succeeded", s.Str("id"))
	is.Equal(len(ev), 1)
	is.Equal(dig(ev[0], "data.previous_attributes.payment_status"), "unpaid")
	is.Equal(len(e.coEvents(e.Test, "checkout.session.completed", s.Str("id"))), 1) // not sent again

	// Cancel the authorization: the session stays unpaid, with checkout.session.async.payment.failed.
	s2 := e.coSimple(e.Test, nil)
	r2 := e.Do("POST", "/v1/checkout-sessions/"+s2.Str("id")+"/confirm", e.Test, coCard("4000000000003220"))
	cn := e.Do("POST", "/v1/payment-intents/"+r2.Str("payment_intent")+"/cancel", e.Test, map[string]any{"cancellation_reason": "requested_by_customer"})
	is.Equal(cn.Str("status"), "canceled")
	g2 := e.Do("GET", "/v1/checkout-sessions/"+s2.Str("id"), e.Test, nil)
	is.Equal(g2.Str("status"), "complete")
	is.Equal(g2.Str("payment_status"), "unpaid")
	is.Equal(len(e.coEvents(e.Test, "checkout.session.async.payment.failed", s2.Str("id"))), 1)
	is.Equal(len(e.coEvents(e.Test, "checkout.session.async.payment.succeeded", s2.Str("id"))), 0)

	// Cancel the intent of an open session (after a decline): the session can take no payment,
	// so it expires, once.
	s3 := e.coSimple(e.Test, nil)
	d := e.Do("POST", "/v1/checkout-sessions/"+s3.Str("id")+"/confirm", e.Test, coCard("4000000000000002"))
	is.Equal(d.Status, 402)
	pi3 := e.Do("GET", "/v1/checkout-sessions/"+s3.Str("id"), e.Test, nil).Str("payment_intent")
	is.Equal(e.Do("POST", "/v1/payment-intents/"+pi3+"/cancel", e.Test, nil).Status, 200)
	g3 := e.Do("GET", "/v1/checkout-sessions/"+s3.Str("id"), e.Test, nil)
	is.Equal(g3.Str("status"), "expired")
	is.Equal(len(e.coEvents(e.Test, "checkout.session.expired", s3.Str("id"))), 1)

	// Expiring a session cancels its intent once and emits one expired event.
	s4 := e.coSimple(e.Test, nil)
	e.Do("POST", "/v1/checkout-sessions/"+s4.Str("id")+"/confirm", e.Test, coCard("4000000000000002"))
	is.Equal(e.Do("POST", "/v1/checkout-sessions/"+s4.Str("id")+"/expire", e.Test, nil).Str("status"), "expired")
	is.Equal(len(e.coEvents(e.Test, "checkout.session.expired", s4.Str("id"))), 1)

	// Subscription: an authorized first payment leaves the subscription incomplete; capture activates it.
	price := e.coPrice(e.Test, "Plano", 2990, map[string]any{"interval": "month"})
	s5 := e.coSession(e.Test, map[string]any{"line_items": []any{map[string]any{"price": price}}})
	r5 := e.Do("POST", "/v1/checkout-sessions/"+s5.Str("id")+"/confirm", e.Test, coCard("4000000000003220"))
	is.Equal(e.Do("GET", "/v1/subscriptions/"+r5.Str("subscription"), e.Test, nil).Str("status"), "incomplete")
	is.Equal(e.Do("POST", "/v1/payment-intents/"+r5.Str("payment_intent")+"/capture", e.Test, nil).Status, 200)
	is.Equal(e.Do("GET", "/v1/subscriptions/"+r5.Str("subscription"), e.Test, nil).Str("status"), "active")
	is.Equal(e.Do("GET", "/v1/checkout-sessions/"+s5.Str("id"), e.Test, nil).Str("payment_status"), "paid")

	// A captured session with a coupon counts the redemption.
	coupon := e.coCoupon(e.Test, map[string]any{"amount_off": 1000})
	s6 := e.coSession(e.Test, e.coOne(5000, 1, map[string]any{"discount": coupon.Str("id")}))
	r6 := e.Do("POST", "/v1/checkout-sessions/"+s6.Str("id")+"/confirm", e.Test, coCard("4000000000003220"))
	is.Equal(e.Do("GET", "/v1/coupons/"+coupon.Str("id"), e.Test, nil).Body["times_redeemed"], float64(0))
	e.Do("POST", "/v1/payment-intents/"+r6.Str("payment_intent")+"/capture", e.Test, nil)
	is.Equal(e.Do("GET", "/v1/coupons/"+coupon.Str("id"), e.Test, nil).Body["times_redeemed"], float64(1))
}

func TestEveryDiscountReasonIsExplained(t *testing.T) {
	for _, r := range discounts.Reasons {
		for _, l := range []pages.Lang{pages.PtBR, pages.En} {
			if l.PromoText(string(r)) == l.T("error_generic") {
				t.Errorf("no %s text for the refused-code reason %q (pages/checkout_promo.go)", l, r)
			}
		}
	}
}
