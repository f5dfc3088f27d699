package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/db"
	"troco/server"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/tokens"
)

// accessToken asks POST /api/v1/oauth/token for a token of the key (id, secret).
func (e *testEnv) accessToken(keyID, secret, scope string) resp {
	e.t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {keyID}, "client_secret": {secret}}
	if scope != "" {
		form.Set("scope", scope)
	}
	req := e.NewRequest("POST", "/api/v1/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r, err := e.Send(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// newKeyFull creates a test key and returns it with its clear token.
func (e *testEnv) newKeyFull(orgID string, scopes ...string) *domain.APIKey {
	e.t.Helper()
	var k *domain.APIKey
	if err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
		var err error
		k, err = core.CreateAPIKey(tx, core.APIKeyInput{OrgID: orgID, Livemode: false, Scopes: scopes})
		return err
	}); err != nil {
		e.t.Fatal(err)
	}
	return k
}

// strip drops the fields that differ between two creations of the same object.
func strip(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		switch k {
		case "id", "created_at", "updated_at", "created", "url", "default_price":
			continue
		case "currency": // brl on /v1, BRL on /api/v1 by design
			if c, ok := v.(string); ok {
				v = strings.ToUpper(c)
			}
		}
		out[k] = v
	}
	return out
}

// TestAPIV1SameOperations runs the same scenarios through /v1 and /api/v1 and compares the
// objects and the events each produced: one domain, two interfaces.
func TestAPIV1SameOperations(t *testing.T) {
	e := newEnv(t)
	key := e.newKeyFull(e.Org.ID, domain.ScopeRead, domain.ScopeWrite)
	tok := e.accessToken(key.ID, key.Token, "")
	if tok.Status != 200 {
		t.Fatalf("token: %d %s", tok.Status, tok.Raw)
	}
	jwt := tok.Str("access_token")

	price := e.coPrice(e.Test, "Camiseta", 10000, nil)
	link := map[string]any{"line_items": []any{map[string]any{"price": price, "quantity": 1}}, "metadata": map[string]string{"k": "v"}}
	cases := []struct {
		name, v1, v2 string
		create       map[string]any
		update       map[string]any
		event        string
		minEvents    int
	}{
		{"customer", "/v1/customers", "/api/v1/customers", map[string]any{"email": "ana@example.com", "name": "Ana", "metadata": map[string]string{"k": "v"}}, map[string]any{"name": "Ana Maria"}, "customer", 2},
		{"product", "/v1/products", "/api/v1/products", map[string]any{"name": "Camiseta", "description": "Algodão"}, map[string]any{"name": "Camiseta azul"}, "product", 2},
		{"checkout link", "/v1/payment-links", "/api/v1/checkout-links", link, map[string]any{"active": false}, "payment_link", 0},
		{"discount", "/v1/coupons", "/api/v1/discounts", map[string]any{"percent_off": 10, "duration": "once", "name": "DEZ"}, map[string]any{"name": "DEZ OFF"}, "coupon", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			a := e.Do("POST", c.v1, e.Test, c.create)
			is.Equal(a.Status, 200) // /v1 create answers 200
			b := e.Do("POST", c.v2, jwt, c.create)
			is.Equal(b.Status, 201) // /api/v1 create answers 201
			is.Equal(b.Header.Get("Location"), c.v2+"/"+b.Str("id"))
			is.Equal(strip(a.Body), strip(b.Body)) // the same object

			ua := e.Do("POST", c.v1+"/"+a.Str("id"), e.Test, c.update)
			ub := e.Do("POST", c.v2+"/"+b.Str("id"), jwt, c.update)
			is.Equal(ua.Status, 200)
			is.Equal(ub.Status, 200)
			is.Equal(strip(ua.Body), strip(ub.Body))

			g := e.Do("GET", c.v2+"/"+b.Str("id"), key.Token, nil) // an API key works on /api/v1 too
			is.Equal(g.Status, 200)
			is.Equal(strip(g.Body), strip(ub.Body))

			// The same events, in the same order, for both objects.
			types := func(id string) []string {
				r := e.Do("GET", "/v1/events?limit=100&type="+c.event+".*", e.Test, nil)
				var out []string
				for _, ev := range r.Data() {
					obj := ev["data"].(map[string]any)["object"].(map[string]any)
					if obj["id"] == id {
						out = append(out, ev["type"].(string))
					}
				}
				return out
			}
			is.Equal(types(a.Str("id")), types(b.Str("id")))
			is.True(len(types(b.Str("id"))) >= c.minEvents) // created and updated, where the resource has events

			da := e.Do("DELETE", c.v1+"/"+a.Str("id"), e.Test, nil)
			db := e.Do("DELETE", c.v2+"/"+b.Str("id"), jwt, nil)
			is.Equal(da.Status, 200)
			is.Equal(db.Status, 204)
			is.Equal(len(db.Raw), 0)
			is.Equal(types(a.Str("id")), types(b.Str("id")))
			is.Equal(e.Do("GET", c.v2+"/"+b.Str("id"), jwt, nil).Status, 404)
		})
	}
}

func TestAPIV1ListsAndErrors(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	for i := 0; i < 25; i++ {
		is.Equal(e.Do("POST", "/api/v1/customers", e.Test, map[string]any{"name": "C"}).Status, 201)
	}
	r := e.Do("GET", "/api/v1/customers?page=3&limit=10", e.Test, nil)
	is.Equal(r.Status, 200)
	is.Equal(len(r.Data()), 5)
	is.Equal(r.Body["pagination"], map[string]any{"page": 3.0, "limit": 10.0, "total": 25.0, "total_pages": 3.0})
	is.Equal(len(e.Do("GET", "/api/v1/customers", e.Test, nil).Data()), 10) // default limit 10
	is.Equal(len(e.Do("GET", "/api/v1/customers?page=4", e.Test, nil).Data()), 0)

	for _, c := range []struct{ q, param string }{
		{"page=0", "page"}, {"page=x", "page"}, {"limit=0", "limit"}, {"limit=101", "limit"}, {"starting_after=cus_1", "starting_after"}, {"color=red", "color"},
	} {
		r := e.Do("GET", "/api/v1/customers?"+c.q, e.Test, nil)
		is.Equal(r.Status, 400)         // out of range
		is.Equal(r.ErrParam(), c.param) // names the parameter
	}
	// Unknown fields: 400 naming the field, nothing created.
	r = e.Do("POST", "/api/v1/customers", e.Test, map[string]any{"name": "X", "colour": "red"})
	is.Equal(r.Status, 400)
	is.Equal(r.ErrParam(), "colour")
	is.Equal(e.Do("GET", "/api/v1/customers", e.Test, nil).Body["pagination"].(map[string]any)["total"], 25.0)

	// Idempotency-Key: the replay answers the same 201 and Location, nothing created twice.
	a := e.Do("POST", "/api/v1/products", e.Test, map[string]any{"name": "P"}, "Idempotency-Key", "k1")
	b := e.Do("POST", "/api/v1/products", e.Test, map[string]any{"name": "P"}, "Idempotency-Key", "k1")
	is.Equal(a.Status, 201)
	is.Equal(b.Status, 201)
	is.Equal(b.Header.Get("Idempotent-Replayed"), "true")
	is.Equal(a.Header.Get("Location"), b.Header.Get("Location"))
	is.Equal(a.Str("id"), b.Str("id"))

	// Another organization's objects are 404; a customer session token is refused on Core paths.
	otherOrg, other := e.NewOrg("Other", false)
	r = e.Do("GET", "/api/v1/products/"+a.Str("id"), other, nil)
	is.Equal(r.Status, 404)
	ok := e.newKeyFull(otherOrg.ID, domain.ScopeRead, domain.ScopeWrite)
	otherJWT := e.accessToken(ok.ID, ok.Token, "").Str("access_token")
	is.Equal(e.Do("GET", "/api/v1/products/"+a.Str("id"), otherJWT, nil).Status, 404) // an access token too
	is.Equal(e.Do("POST", "/api/v1/products/"+a.Str("id"), otherJWT, map[string]any{"name": "mine"}).Status, 404)
	is.Equal(e.Do("GET", "/api/v1/products/"+a.Str("id"), otherJWT, nil, "Organization", e.Org.ID).Status, 403)
	is.Equal(e.Do("DELETE", "/api/v1/products/"+a.Str("id"), other, nil).Status, 404)
	is.Equal(e.Do("GET", "/api/v1/products/"+a.Str("id"), e.Test, nil).Status, 200) // unchanged
	r = e.Do("GET", "/api/v1/products", "troco_cst_abcdef", nil)
	is.Equal(r.Status, 403)
	is.Equal(r.ErrCode(), "permission_denied")
	is.Equal(e.Do("GET", "/api/v1/products", "", nil).Status, 401)
	is.Equal(e.Do("GET", "/api/v1/nothing-here", e.Test, nil).Status, 404)
	// The error envelope of /v1.
	is.Equal(r.Body["error"].(map[string]any)["type"], "invalid_request_error")
}

func TestAPIV1Checkout(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	price := e.coPrice(e.Test, "Camiseta", 10000, nil)
	r := e.Do("POST", "/api/v1/checkouts", e.Test, map[string]any{"line_items": []any{map[string]any{"price": price, "quantity": 2}},
		"success_url": "https://example.com/ok", "customer_email": "ana@example.com"})
	is.Equal(r.Status, 201)
	id := r.Str("id")
	is.Equal(r.Header.Get("Location"), "/api/v1/checkouts/"+id)
	g := e.Do("GET", "/api/v1/checkouts/"+id, e.Test, nil)
	is.Equal(g.Status, 200)
	for _, f := range []string{"id", "status", "client_secret", "product_price_id", "amount", "currency", "customer_email", "customer_id",
		"payment_method", "success_url", "metadata", "created_at", "updated_at", "expires_at"} {
		_, ok := g.Body[f]
		is.True(ok) // every field of the checkout get
	}
	is.Equal(g.Str("status"), "open")
	is.Equal(g.Str("currency"), "BRL")
	is.Equal(g.Body["amount"], 20000.0)
	is.Equal(g.Str("product_price_id"), price)
	is.True(strings.HasSuffix(g.Str("created_at"), "Z"))

	// Paid through /v1: the same session is succeeded on /api/v1.
	c := e.Do("POST", "/v1/checkout-sessions/"+id+"/confirm", e.Test, coCard("4242424242424242"))
	is.Equal(c.Status, 200)
	g = e.Do("GET", "/api/v1/checkouts/"+id, e.Test, nil)
	is.Equal(g.Str("status"), "succeeded")
	is.Equal(g.Str("payment_method"), "credit_card")

	// A PIX session confirmed and not yet paid is confirmed; its expiry makes it failed.
	p := e.Do("POST", "/api/v1/checkouts", e.Test, map[string]any{"line_items": []any{map[string]any{"price": price, "quantity": 1}}, "payment_method_types": []string{"pix"}})
	is.Equal(p.Status, 201)
	c = e.Do("POST", "/v1/checkout-sessions/"+p.Str("id")+"/confirm", e.Test, map[string]any{"payment_method_type": "pix", "customer_email": "ana@example.com", "customer_name": "Ana", "customer_document": "52998224725"})
	is.Equal(c.Status, 200)
	is.Equal(e.Do("GET", "/api/v1/checkouts/"+p.Str("id"), e.Test, nil).Str("status"), "confirmed")
	pi := c.Str("payment_intent")
	is.Equal(e.Do("POST", "/v1/test-helpers/payment-intents/"+pi+"/expire", e.Test, nil).Status, 200)
	is.Equal(e.Do("GET", "/api/v1/checkouts/"+p.Str("id"), e.Test, nil).Str("status"), "failed")

	// The session's rule on its intent holds whatever the interface: no direct confirmation.
	x := e.Do("POST", "/api/v1/checkouts", e.Test, map[string]any{"line_items": []any{map[string]any{"price": price, "quantity": 1}}})
	v1 := e.Do("GET", "/v1/checkout-sessions/"+x.Str("id"), e.Test, nil)
	if piID := v1.Str("payment_intent"); piID != "" {
		d := e.Do("POST", "/v1/payment-intents/"+piID+"/confirm", e.Test, coCard("4242424242424242"))
		is.Equal(d.Status, 409)
	}
	// Expire: expired.
	ex := e.Do("POST", "/api/v1/checkouts/"+x.Str("id")+"/expire", e.Test, nil)
	is.Equal(ex.Status, 200)
	is.Equal(ex.Str("status"), "expired")

	// Sales: the paid card payment, refunded through /api/v1.
	s := e.Do("GET", "/api/v1/sales", e.Test, nil)
	is.Equal(s.Status, 200)
	is.Equal(len(s.Data()), 1)
	saleID := s.Data()[0]["id"].(string)
	is.Equal(s.Data()[0]["currency"], "BRL")
	rf := e.Do("POST", "/api/v1/sales/"+saleID+"/refund", e.Test, map[string]any{"amount": 5000})
	is.Equal(rf.Status, 201)
	is.Equal(rf.Body["amount"], 5000.0)
	is.Equal(e.Do("GET", "/v1/refunds/"+rf.Str("id"), e.Test, nil).Status, 200) // the same refund on /v1
	loc := rf.Header.Get("Location")
	is.Equal(loc, "/api/v1/sales/"+saleID+"/refunds/"+rf.Str("id"))
	got := e.Do("GET", loc, e.Test, nil) // the Location answers the refund
	is.Equal(got.Status, 200)
	is.Equal(got.Str("id"), rf.Str("id"))
	is.Equal(got.Body["currency"], "BRL")
	for _, path := range []string{"/api/v1/sales/pi_nope", "/api/v1/sales/pi_nope/refund"} {
		method := map[bool]string{true: "POST", false: "GET"}[strings.HasSuffix(path, "/refund")]
		r := e.Do(method, path, e.Test, nil)
		is.Equal(r.Status, 404)
		is.Equal(r.ErrMessage(), "No such sale: 'pi_nope'") // the resource of this interface
	}
	miss := e.Do("GET", "/api/v1/sales/"+saleID+"/refunds/re_nope", e.Test, nil)
	is.Equal(miss.Status, 404)
	is.Equal(miss.ErrParam(), "refund")
	_, stranger := e.NewOrg("Stranger", false)
	is.Equal(e.Do("GET", loc, stranger, nil).Status, 404) // another organization's
	is.Equal(e.Do("POST", "/api/v1/sales/"+saleID+"/refund", e.Test, map[string]any{"amount": 999999}).Status, 400)

	// Metrics: today's card sale and its refund, in total and per method.
	day := e.Clock.Now().Truncate(24 * time.Hour)
	m := e.Do("GET", "/api/v1/metrics?interval=day&start="+day.Format(time.RFC3339)+"&end="+day.AddDate(0, 0, 2).Format(time.RFC3339), e.Test, nil)
	is.Equal(m.Status, 200)
	buckets := m.Body["data"].([]any)
	is.Equal(len(buckets), 2)
	today := buckets[0].(map[string]any)
	is.Equal(today["gross"], 20000.0)
	is.Equal(today["refunds"], 5000.0)
	is.Equal(today["count"], 1.0)
	is.True(today["fees"].(float64) > 0)
	is.Equal(today["net"], 20000.0-today["fees"].(float64)-5000)
	is.Equal(today["per_method"].(map[string]any)["credit_card"].(map[string]any)["gross"], 20000.0)
	is.Equal(buckets[1].(map[string]any)["gross"], 0.0)
	is.Equal(e.Do("GET", "/api/v1/metrics?interval=year&start="+day.Format(time.RFC3339)+"&end="+day.AddDate(0, 0, 2).Format(time.RFC3339), e.Test, nil).ErrParam(), "interval")
	is.Equal(e.Do("GET", "/api/v1/metrics?end="+day.Format(time.RFC3339), e.Test, nil).ErrParam(), "start")
	_, other := e.NewOrg("Other", false)
	o := e.Do("GET", "/api/v1/metrics?interval=day&start="+day.Format(time.RFC3339)+"&end="+day.AddDate(0, 0, 1).Format(time.RFC3339), other, nil)
	is.Equal(o.Body["data"].([]any)[0].(map[string]any)["gross"], 0.0) // another organization sees nothing
}

func TestAPIV1Tokens(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	key := e.newKeyFull(e.Org.ID, domain.ScopeRead, domain.ScopeWrite)

	// Bad clients: RFC 6749 errors, no token.
	is.Equal(e.accessToken(key.ID, key.Token+"x", "").Status, 401)
	is.Equal(e.accessToken("key_other", key.Token, "").Status, 401)
	is.Equal(e.accessToken(key.ID, key.Token, "admin").Status, 400)

	tr := e.accessToken(key.ID, key.Token, "")
	is.Equal(tr.Status, 200)
	is.Equal(tr.Body["token_type"], "Bearer")
	is.Equal(tr.Body["expires_in"], 3600.0)
	is.Equal(tr.Body["scope"], "read write")
	jwt := tr.Str("access_token")
	is.Equal(e.Do("GET", "/api/v1/products", jwt, nil).Status, 200)

	// The JWKS publishes the key that signed it.
	res, err := e.Client.Get(e.URL() + "/.well-known/jwks.json")
	is.NoErr(err)
	var set struct {
		Keys []struct{ Kid, Alg, Kty, Crv string }
	}
	is.NoErr(json.NewDecoder(res.Body).Decode(&set))
	res.Body.Close()
	is.Equal(len(set.Keys), 1)
	is.Equal(set.Keys[0].Alg, "EdDSA")
	hdr, _ := base64.RawURLEncoding.DecodeString(strings.Split(jwt, ".")[0])
	is.True(strings.Contains(string(hdr), set.Keys[0].Kid))

	// A read-only token cannot write.
	ro := e.accessToken(key.ID, key.Token, "read").Str("access_token")
	is.Equal(e.Do("GET", "/api/v1/products", ro, nil).Status, 200)
	w := e.Do("POST", "/api/v1/products", ro, map[string]any{"name": "P"})
	is.Equal(w.Status, 403)
	is.Equal(w.ErrCode(), "permission_denied")

	parts := strings.Split(jwt, ".")
	sig := []byte(parts[2])
	if sig[0] == 'A' {
		sig[0] = 'B'
	} else {
		sig[0] = 'A'
	}
	claims, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var other map[string]any
	is.NoErr(json.Unmarshal(claims, &other))
	other["org"] = "org_someoneelse"
	otherClaims, _ := json.Marshal(other)
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + "."

	// Tokens signed by troco's key for another issuer or audience.
	var wrongIss string
	is.NoErr(e.DB.Write(context.Background(), func(tx *db.Tx) error {
		var err error
		wrongIss, err = tokens.New("https://elsewhere.example", e.Config.Secrets).Issue(tx, key)
		return err
	}))
	// Signed by troco's key, troco's issuer, for another audience.
	var wrongAud string
	is.NoErr(e.DB.Write(context.Background(), func(tx *db.Tx) error {
		iss := tokens.New(other["iss"].(string), e.Config.Secrets)
		iss.Audience = "https://elsewhere.example/api/v1"
		var err error
		wrongAud, err = iss.Issue(tx, key)
		return err
	}))
	bad := map[string]string{
		"wrong audience":   wrongAud,
		"forged signature": parts[0] + "." + parts[1] + "." + string(sig),
		"altered claims":   parts[0] + "." + base64.RawURLEncoding.EncodeToString(otherClaims) + "." + parts[2],
		"alg none":         none,
		"wrong issuer":     wrongIss,
		"garbage":          "a.b.c",
	}
	for name, tok := range bad {
		r := e.Do("GET", "/api/v1/products", tok, nil)
		if r.Status != 401 || r.ErrCode() != "authentication_failed" {
			t.Errorf("%s: %d %s", name, r.Status, r.Raw)
		}
	}
	is.Equal(e.Do("POST", "/api/v1/products", none, map[string]any{"name": "P"}).Status, 401)
	is.True(strings.Contains(e.Do("GET", "/api/v1/products", wrongAud, nil).ErrMessage(), "another audience (aud)")) // refused for its audience
	is.True(strings.Contains(e.Do("GET", "/api/v1/products", wrongIss, nil).ErrMessage(), "another issuer (iss)"))

	// Rotation: a new key signs; tokens of the previous key stay valid until they expire.
	kid, err := tokens.Rotate(context.Background(), e.DB, e.Config.Secrets)
	is.NoErr(err)
	is.Equal(e.Do("GET", "/api/v1/products", jwt, nil).Status, 200)
	fresh := e.accessToken(key.ID, key.Token, "").Str("access_token")
	hdr, _ = base64.RawURLEncoding.DecodeString(strings.Split(fresh, ".")[0])
	is.True(strings.Contains(string(hdr), kid))
	is.Equal(e.Do("GET", "/api/v1/products", fresh, nil).Status, 200)

	// Expired: an hour later the first token is refused.
	e.Clock.Advance(61 * time.Minute)
	r := e.Do("GET", "/api/v1/products", jwt, nil)
	is.Equal(r.Status, 401)
	is.Equal(r.ErrMessage(), "Invalid access token: it has expired (exp); ask POST /api/v1/oauth/token for a new one.") // in the API's words

	// Revoking the key stops its tokens at once.
	fresh = e.accessToken(key.ID, key.Token, "").Str("access_token")
	is.Equal(e.Do("GET", "/api/v1/products", fresh, nil).Status, 200)
	is.NoErr(e.DB.Write(context.Background(), func(tx *db.Tx) error {
		_, err := core.RevokeAPIKey(tx, key.ID, "test", "rotated")
		return err
	}))
	is.Equal(e.Do("GET", "/api/v1/products", fresh, nil).Status, 401)
}

func TestAPIV1RateLimit(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, func(c *server.Config) { c.RateLimit = true })
	var last resp
	for i := 0; i < 100; i++ {
		last = e.Do("GET", "/api/v1/products", e.Test, nil)
		if last.Status != 200 {
			t.Fatalf("request %d: %d", i, last.Status)
		}
	}
	is.Equal(last.Header.Get("RateLimit-Limit"), "100")
	is.Equal(last.Header.Get("RateLimit-Remaining"), "0")
	r := e.Do("GET", "/api/v1/products", e.Test, nil)
	is.Equal(r.Status, http.StatusTooManyRequests)
	is.Equal(r.ErrType(), "rate_limit_error")
	is.True(r.Header.Get("Retry-After") != "")
	is.True(r.Header.Get("RateLimit-Reset") != "")
	// /v1 keeps its own per-second limit.
	is.Equal(e.Do("GET", "/v1/products", e.Test, nil).Status, 200)

	// A count per minute, not a bucket that refills: 60 now and 40 half a minute later use the
	// budget until the first 60 are a minute old.
	e2 := newEnv(t, func(c *server.Config) { c.RateLimit = true })
	for i := 0; i < 60; i++ {
		is.Equal(e2.Do("GET", "/api/v1/products", e2.Test, nil).Status, 200)
	}
	e2.Clock.Advance(30 * time.Second)
	for i := 0; i < 40; i++ {
		is.Equal(e2.Do("GET", "/api/v1/products", e2.Test, nil).Status, 200)
	}
	r = e2.Do("GET", "/api/v1/products", e2.Test, nil)
	is.Equal(r.Status, http.StatusTooManyRequests) // 101 in one minute
	is.Equal(r.Header.Get("Retry-After"), "30")    // when the first 60 are a minute old
	e2.Clock.Advance(30 * time.Second)
	r = e2.Do("GET", "/api/v1/products", e2.Test, nil)
	is.Equal(r.Status, 200)
	is.Equal(r.Header.Get("RateLimit-Remaining"), "59")
}

// normalize drops, at any depth, the fields that differ between two subscriptions made for two
// customers (ids and the objects they name), and upper-cases currency codes.
func normalize(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range t {
			switch k {
			case "id", "customer", "default_payment_method", "latest_invoice", "subscription", "url":
				continue
			case "currency":
				if c, ok := x.(string); ok {
					x = strings.ToUpper(c)
				}
			}
			out[k] = normalize(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = normalize(x)
		}
		return out
	case string:
		// Instants: the two objects are made a moment apart and may fall in different seconds.
		if _, err := time.Parse(time.RFC3339, t); err == nil {
			return "<instant>"
		}
	}
	return v
}

// TestAPIV1SubscriptionsSameOperations runs one subscription's life (create, update, pause,
// resume, cancel) through /v1 and through /api/v1 side by side, and compares the objects and
// the events after each step.
func TestAPIV1SubscriptionsSameOperations(t *testing.T) {
	e := newEnv(t)
	key := e.newKeyFull(e.Org.ID, domain.ScopeRead, domain.ScopeWrite)
	jwt := e.accessToken(key.ID, key.Token, "").Str("access_token")
	price := e.coPrice(e.Test, "Plano Pro", 4990, map[string]any{"interval": "month"})
	var ids [2]string // the subscription made through /v1, through /api/v1
	for i := range ids {
		cus := e.payCustomer(e.Test, "ana@example.com")
		pm := e.subSavedCard(cus, "4242424242424242")
		create := map[string]any{"customer": cus, "items": []any{map[string]any{"price": price, "quantity": 1}}, "default_payment_method": pm, "metadata": map[string]string{"k": "v"}}
		var r resp
		if i == 0 {
			r = e.Do("POST", "/v1/subscriptions", e.Test, create)
			if r.Status != 200 {
				t.Fatalf("/v1 create: %d %s", r.Status, r.Raw)
			}
		} else {
			r = e.Do("POST", "/api/v1/subscriptions", jwt, create, "Idempotency-Key", "sub-create")
			if r.Status != 201 || r.Header.Get("Location") != "/api/v1/subscriptions/"+r.Str("id") {
				t.Fatalf("/api/v1 create: %d %v %s", r.Status, r.Header, r.Raw)
			}
			again := e.Do("POST", "/api/v1/subscriptions", jwt, create, "Idempotency-Key", "sub-create")
			if again.Str("id") != r.Str("id") || again.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("replay: %s", again.Raw)
			}
		}
		ids[i] = r.Str("id")
	}
	events := func(id string) []string {
		r := e.Do("GET", "/v1/events?limit=100&type=customer.subscription.*", e.Test, nil)
		var out []string
		for _, ev := range r.Data() {
			if ev["data"].(map[string]any)["object"].(map[string]any)["id"] == id {
				out = append(out, ev["type"].(string))
			}
		}
		return out
	}
	steps := []struct {
		name         string
		v1, v2       string // paths after the subscription's, e.g. /cancel
		v1Body       map[string]any
		v2Body       map[string]any
		wantStatus   string
		wantV2Status int
	}{
		{"get", "", "", nil, nil, "active", 200},
		{"update quantity", "", "", map[string]any{"quantity": 2, "proration_behavior": "none"}, nil, "active", 200},
		{"pause", "", "/pause", map[string]any{"pause_collection": map[string]any{"behavior": "keep_as_draft"}}, map[string]any{"behavior": "keep_as_draft"}, "paused", 200},
		{"resume", "/resume", "/resume", map[string]any{}, nil, "active", 200},
		{"cancel", "/cancel", "/cancel", map[string]any{"prorate": false}, nil, "canceled", 200},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			is := is.New(t)
			method := "POST"
			if st.name == "get" {
				method = "GET"
			}
			v2Body := st.v2Body
			if v2Body == nil {
				v2Body = st.v1Body
			}
			a := e.Do(method, "/v1/subscriptions/"+ids[0]+st.v1, e.Test, st.v1Body)
			b := e.Do(method, "/api/v1/subscriptions/"+ids[1]+st.v2, jwt, v2Body)
			is.Equal(a.Status, 200)
			is.Equal(b.Status, st.wantV2Status)
			is.Equal(a.Str("status"), st.wantStatus)
			is.Equal(b.Body["currency"], "BRL")
			is.Equal(normalize(a.Body), normalize(b.Body)) // the same object
			is.Equal(events(ids[0]), events(ids[1]))       // the same events
		})
	}
	is := is.New(t)
	is.True(len(events(ids[1])) >= 6) // created, updated…, paused, resumed, deleted
	// The same refusals: canceling twice, pausing without a behavior, unknown fields.
	is.Equal(e.Do("POST", "/api/v1/subscriptions/"+ids[1]+"/cancel", jwt, nil).Status, e.Do("POST", "/v1/subscriptions/"+ids[0]+"/cancel", e.Test, nil).Status)
	pa := e.Do("POST", "/v1/subscriptions/"+ids[0], e.Test, map[string]any{"pause_collection": map[string]any{"behavior": "void"}})
	pb := e.Do("POST", "/api/v1/subscriptions/"+ids[1]+"/pause", jwt, map[string]any{"behavior": "void"})
	is.Equal(pa.Status, 409) // a canceled subscription does not pause
	is.Equal(pb.Status, pa.Status)
	is.Equal(pb.ErrCode(), pa.ErrCode())
	is.Equal(e.Do("POST", "/api/v1/subscriptions", jwt, map[string]any{"customer": "cus_x", "colour": "red"}).ErrParam(), "colour")
	is.Equal(e.Do("GET", "/api/v1/subscriptions?status=nope", jwt, nil).ErrParam(), "status")
	_, other := e.NewOrg("Other", false)
	is.Equal(e.Do("POST", "/api/v1/subscriptions/"+ids[1]+"/resume", other, nil).Status, 404)
	ro := e.accessToken(key.ID, key.Token, "read").Str("access_token")
	is.Equal(e.Do("POST", "/api/v1/subscriptions", ro, map[string]any{}).Status, 403)
}

// TestAPIV1FileUpload: POST /api/v1/files takes the multipart upload of POST /v1/files, through
// the same checks, and answers 201 with Location; the same refusals, nothing stored.
func TestAPIV1FileUpload(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	parts := func(name string, content []byte, purpose string) []uploadPart {
		return []uploadPart{{name: "file", filename: name, content: content}, {name: "purpose", content: []byte(purpose)},
			{name: "metadata[k]", content: []byte("v")}}
	}
	a := e.uploadTo("/v1/files", e.Test, parts("nota.pdf", pdfBytes, "dispute_evidence"))
	b := e.uploadTo("/api/v1/files", e.Test, parts("nota.pdf", pdfBytes, "dispute_evidence"), "Idempotency-Key", "up-1")
	is.Equal(a.Status, 200)
	is.Equal(b.Status, 201)
	is.Equal(b.Header.Get("Location"), "/api/v1/files/"+b.Str("id"))
	is.Equal(strip(a.Body), strip(b.Body)) // the same object
	again := e.uploadTo("/api/v1/files", e.Test, parts("nota.pdf", pdfBytes, "dispute_evidence"), "Idempotency-Key", "up-1")
	is.Equal(again.Status, 201)
	is.Equal(again.Str("id"), b.Str("id"))
	is.Equal(again.Header.Get("Idempotent-Replayed"), "true")
	g := e.Do("GET", "/api/v1/files/"+b.Str("id"), e.Test, nil)
	is.Equal(g.Status, 200)
	res, body := e.fetch(g.Str("url"))
	is.Equal(res.StatusCode, 200)
	is.Equal(body, pdfBytes) // the bytes, by the signed url

	big := make([]byte, 10<<20+1)
	copy(big, pngBytes)
	for _, c := range []struct {
		parts  []uploadPart
		status int
	}{
		{parts("a.png", big, "product_image"), 413},
		{parts("a.gif", gifBytes, "product_image"), 400},
		{parts("../a.png", pngBytes, "product_image"), 400},
	} {
		r := e.uploadTo("/api/v1/files", e.Test, c.parts)
		is.Equal(r.Status, c.status)
		is.Equal(r.ErrParam(), "file")
	}
	is.Equal(e.Do("POST", "/api/v1/files", e.Test, map[string]any{"purpose": "product_image"}).Status, 415)
	key := e.newKeyFull(e.Org.ID, domain.ScopeRead)
	is.Equal(e.uploadTo("/api/v1/files", key.Token, parts("a.png", pngBytes, "product_image")).Status, 403)
	list := e.Do("GET", "/api/v1/files", e.Test, nil)
	is.Equal(list.Body["pagination"].(map[string]any)["total"], 2.0) // nothing else was stored
	is.Equal(e.Do("DELETE", "/api/v1/files/"+b.Str("id"), e.Test, nil).Status, 204)
}

// TestAPIV1MetricsMRR: the metrics carry the monthly recurring revenue of the active (and
// past_due) subscriptions, normalized to a month, for the caller's organization and mode only.
func TestAPIV1MetricsMRR(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	monthly := e.coPrice(e.Test, "Plano Pro", 4990, map[string]any{"interval": "month"})
	yearly := e.coPrice(e.Test, "Plano Anual", 120000, map[string]any{"interval": "year"})
	quarterly := e.coPrice(e.Test, "Plano Trimestral", 9000, map[string]any{"interval": "month", "interval_count": 3})
	cus := e.payCustomer(e.Test, "ana@example.com")
	pm := e.subSavedCard(cus, "4242424242424242")
	mk := func(body map[string]any) string {
		body["customer"], body["default_payment_method"] = cus, pm
		r := e.Do("POST", "/api/v1/subscriptions", e.Test, body)
		is.Equal(r.Status, 201)
		return r.Str("id")
	}
	mk(map[string]any{"items": []any{map[string]any{"price": monthly, "quantity": 2}}})          // 9980
	yr := mk(map[string]any{"items": []any{map[string]any{"price": yearly}}})                    // 10000
	mk(map[string]any{"items": []any{map[string]any{"price": quarterly}}})                       // 3000
	mk(map[string]any{"items": []any{map[string]any{"price": monthly}}, "trial_period_days": 7}) // a trial: 0
	mrr := func(token string) map[string]any {
		day := e.Clock.Now().Truncate(24 * time.Hour)
		m := e.Do("GET", "/api/v1/metrics?start="+day.Format(time.RFC3339)+"&end="+day.AddDate(0, 0, 1).Format(time.RFC3339), token, nil)
		is.Equal(m.Status, 200)
		return m.Body["mrr"].(map[string]any)
	}
	got := mrr(e.Test)
	is.Equal(got["amount"], 9980.0+10000+3000)
	is.Equal(got["subscriptions"], 3.0)
	is.Equal(got["as_of"], e.Clock.Now().UTC().Truncate(time.Second).Format(time.RFC3339))
	// Canceling one takes it out at once; another organization sees none of it.
	is.Equal(e.Do("POST", "/api/v1/subscriptions/"+yr+"/cancel", e.Test, nil).Status, 200)
	is.Equal(mrr(e.Test)["amount"], 9980.0+3000)
	_, other := e.NewOrg("Other", false)
	is.Equal(mrr(other)["amount"], 0.0)
}
