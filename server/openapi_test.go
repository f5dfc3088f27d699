package server_test

import (
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func openAPIDoc(t *testing.T, e *testEnv, path string) map[string]any {
	t.Helper()
	r := e.Do("GET", path, "", nil) // no authentication
	if r.Status != 200 {
		t.Fatalf("%s: %d %s", path, r.Status, r.Raw)
	}
	if r.Body["openapi"] != "3.1.0" {
		t.Fatalf("%s: openapi %v", path, r.Body["openapi"])
	}
	return r.Body
}

func hasOp(doc map[string]any, method, path string) bool {
	p := regexp.MustCompile(`:([a-z_]+)`).ReplaceAllString(path, "{$1}")
	item, _ := doc["paths"].(map[string]any)[p].(map[string]any)
	_, ok := item[strings.ToLower(method)]
	return ok
}

// TestOpenAPIDocumentsCoverEveryRoute fails when a route of routes.go (or of the /api/v1 table)
// is missing from its served OpenAPI document.
func TestOpenAPIDocumentsCoverEveryRoute(t *testing.T) {
	e := newEnv(t)
	v1 := openAPIDoc(t, e, "/v1/openapi.json")
	for _, rt := range v1Routes(t) {
		if !hasOp(v1, rt.method, rt.path) {
			t.Errorf("/v1 document lacks %s %s", rt.method, rt.path)
			continue
		}
		// Every /v1 operation can answer 400 (a query parameter where none is taken, a list's
		// bad filter, a body's bad field, URL text that is not UTF-8): the document says so.
		p := regexp.MustCompile(`:([a-z_]+)`).ReplaceAllString(rt.path, "{$1}")
		op := v1["paths"].(map[string]any)[p].(map[string]any)[strings.ToLower(rt.method)].(map[string]any)
		if _, ok := op["responses"].(map[string]any)["400"]; !ok {
			t.Errorf("/v1 document: %s %s does not list 400", rt.method, rt.path)
		}
	}
	api := openAPIDoc(t, e, "/api/v1/openapi.json")
	var routes [][]string
	for _, f := range []string{"apiv1_resources.go", "apiv1_portal.go"} {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// Core routes name their path; customer-portal routes are under portalPrefix.
		for _, m := range regexp.MustCompile(`add\("(GET|POST|DELETE)", (portalPrefix\+)?"(/[^"]*)"`).FindAllStringSubmatch(string(src), -1) {
			path := m[3]
			if m[2] != "" {
				path = "/api/v1/customer-portal" + path
			}
			routes = append(routes, []string{m[0], m[1], path})
		}
	}
	if len(routes) < 55 {
		t.Fatalf("found only %d /api/v1 routes", len(routes))
	}
	for _, m := range routes {
		if !hasOp(api, m[1], m[2]) {
			t.Errorf("/api/v1 document lacks %s %s", m[1], m[2])
		}
		// And the server answers it (401 without a token, not 404).
		path := strings.ReplaceAll(m[2], ":id", "x_1")
		if r := e.Do(m[1], path, "", nil); r.Status != 401 {
			t.Errorf("%s %s without a token: %d", m[1], path, r.Status)
		}
	}
	// Every documented list filter is one the server accepts (an unknown one is 400 naming it),
	// and the customer-portal operations name the customer token.
	cst := e.portalToken(e.payCustomer(e.Test, "ana@example.com"))
	for p, item := range api["paths"].(map[string]any) {
		for method, o := range item.(map[string]any) {
			op, ok := o.(map[string]any)
			if !ok {
				continue
			}
			portal := strings.HasPrefix(p, "/api/v1/customer-portal/")
			sec, _ := json.Marshal(op["security"])
			if portal != strings.Contains(string(sec), "customerToken") {
				t.Errorf("%s %s: security %s", method, p, sec)
			}
			if method != "get" || strings.Contains(p, "{") {
				continue
			}
			token := e.Test
			if portal {
				token = cst
			}
			params, _ := op["parameters"].([]any)
			for _, prm := range params {
				name := prm.(map[string]any)["name"].(string)
				if name == "page" || name == "limit" || name == "start" || name == "end" || name == "interval" {
					continue
				}
				if r := e.Do("GET", p+"?"+name+"=x", token, nil); r.Status == 400 && r.ErrParam() == name && strings.Contains(string(r.Raw), "unknown") {
					t.Errorf("GET %s documents %s, the server refuses it: %s", p, name, r.Raw)
				}
			}
		}
	}
	is := is.New(t)
	is.True(hasOp(api, "POST", "/api/v1/oauth/token"))
	is.True(hasOp(v1, "GET", "/v1/openapi.json"))
	// The checkout object: exactly the documented field list (plus object, url, livemode).
	co := api["components"].(map[string]any)["schemas"].(map[string]any)["Checkout"].(map[string]any)
	var fields []string
	for k := range co["properties"].(map[string]any) {
		fields = append(fields, k)
	}
	sort.Strings(fields)
	is.Equal(strings.Join(fields, " "), "amount client_secret created_at currency customer_email customer_id expires_at id livemode metadata object payment_method product_price_id status success_url updated_at url")
}

// TestOpenAPIRequestSchemasMatchTheServer checks the three /v1 request schemas that once
// accepted bodies the server refuses: each refused body is refused by the schema too.
func TestOpenAPIRequestSchemasMatchTheServer(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	v1 := openAPIDoc(t, e, "/v1/openapi.json")
	schemas := v1["components"].(map[string]any)["schemas"].(map[string]any)
	body := func(path string) string {
		op := v1["paths"].(map[string]any)[path].(map[string]any)["post"].(map[string]any)
		s := op["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
		return strings.TrimPrefix(s["$ref"].(string), "#/components/schemas/")
	}
	// Payment intent create requires amount; update does not.
	create := schemas[body("/v1/payment-intents")].(map[string]any)
	raw, _ := json.Marshal(create)
	is.True(strings.Contains(string(raw), `"required":["amount"]`))
	is.True(!strings.Contains(string(raw), `"default"`))
	is.True(body("/v1/payment-intents/{id}") == "PaymentIntentParams")
	is.Equal(e.Do("POST", "/v1/payment-intents", e.Test, map[string]any{}).ErrParam(), "amount")
	// Refunds name a charge or a payment intent.
	raw, _ = json.Marshal(schemas["RefundParams"].(map[string]any)["allOf"].([]any)[1])
	is.Equal(string(raw), `{"anyOf":[{"properties":{"charge":{"type":"string"}},"required":["charge"],"type":"object"},{"properties":{"payment_intent":{"type":"string"}},"required":["payment_intent"],"type":"object"}]}`)
	is.Equal(e.Do("POST", "/v1/refunds", e.Test, map[string]any{}).Status, 400)
	// Webhook endpoint URLs are http(s).
	url := schemas["WebhookEndpointParams"].(map[string]any)["properties"].(map[string]any)["url"].(map[string]any)
	re := regexp.MustCompile(url["pattern"].(string))
	for _, u := range []string{"ftp://example.com/x", "example.com", "https://user@example.com/x", "https://example.com/x#frag"} {
		is.True(!re.MatchString(u)) // the schema refuses it
		r := e.Do("POST", "/v1/webhook-endpoints", e.Test, map[string]any{"url": u, "enabled_events": []string{"*"}})
		is.Equal(r.Status, 400) // and so does the server
	}
	is.True(re.MatchString("https://example.com/hooks?x=1"))
	// No request schema has a default (generated clients would make those fields required).
	raw, _ = json.Marshal(schemas)
	is.True(!strings.Contains(string(raw), `"default":`))
}
