package server

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"sync"

	"sigs.k8s.io/yaml"

	"troco/docs"
)

// apiV1Op is one /api/v1 operation as routes registered it; the /api/v1 OpenAPI document is
// generated from these, so it lists exactly the routes the server answers.
type apiV1Op struct {
	method, path string
	need         string
	filters      []string // a list's filters (query parameters)
}

// listFilters returns the filters of a list handler (none for other handlers).
func listFilters(h http.Handler) []string {
	if l, ok := h.(listHandler); ok {
		return l.filters
	}
	return nil
}

// openAPIDocs are the two documents, built once.
type openAPIDocs struct {
	once     sync.Once
	v1, api  []byte
	buildErr error
}

// v1Twin names the /v1 path whose request body an /api/v1 path takes.
var v1Twin = map[string]string{
	"/api/v1/checkouts": "/v1/checkout-sessions", "/api/v1/checkout-links": "/v1/payment-links", "/api/v1/products": "/v1/products",
	"/api/v1/customers": "/v1/customers", "/api/v1/discounts": "/v1/coupons", "/api/v1/webhooks": "/v1/webhook-endpoints",
	"/api/v1/subscriptions": "/v1/subscriptions", "/api/v1/files": "/v1/files",
	"/api/v1/organizations": "/v1/organizations", "/api/v1/events": "/v1/events",
}

func (s *Server) buildOpenAPI() {
	d := &s.openapi
	d.once.Do(func() {
		js, err := yaml.YAMLToJSON(docs.OpenAPIV1)
		if err != nil {
			d.buildErr = err
			return
		}
		d.v1 = js
		var v1 map[string]any
		if err := json.Unmarshal(js, &v1); err != nil {
			d.buildErr = err
			return
		}
		d.api, d.buildErr = json.Marshal(apiV1Document(v1, s.apiV1Ops))
	})
}

func (s *Server) handleOpenAPI(v1 bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.buildOpenAPI()
		if s.openapi.buildErr != nil {
			s.writeError(w, r, s.openapi.buildErr)
			return
		}
		body := s.openapi.api
		if v1 {
			body = s.openapi.v1
		}
		w.Header().Set("Cache-Control", "public, max-age=300")
		writeRaw(w, http.StatusOK, body)
	})
}

// apiV1Document generates the /api/v1 OpenAPI 3.1 document: a path per registered operation,
// request bodies of the /v1 twin (the same operation), the page-numbered list shape, 201/204,
// the checkout shape from checkoutV2, and the /v1 document's components.
func apiV1Document(v1 map[string]any, ops []apiV1Op) map[string]any {
	v1Paths, _ := v1["paths"].(map[string]any)
	comps, _ := v1["components"].(map[string]any)
	schemas, _ := comps["schemas"].(map[string]any)
	schemas["Checkout"] = schemaOf(reflect.TypeFor[checkoutV2]())
	schemas["Checkout"].(map[string]any)["properties"].(map[string]any)["status"] = map[string]any{"type": "string", "enum": []string{"open", "confirmed", "succeeded", "expired", "failed"}}
	schemas["Pagination"] = schemaOf(reflect.TypeFor[pagination]())
	bucket := schemaOf(reflect.TypeFor[metricsBucket]())
	sums := schemaOf(reflect.TypeFor[metricsMethod]())
	bucket["properties"].(map[string]any)["per_method"] = map[string]any{"type": "object", "additionalProperties": sums,
		"description": "The same sums per payment method (credit_card, pix, boleto)."}
	for _, k := range []string{"start", "end"} {
		bucket["properties"].(map[string]any)[k] = map[string]any{"type": "string", "format": "date-time"}
	}
	mrr := schemaOf(reflect.TypeFor[metricsMRR]())
	mrr["description"] = "Monthly recurring revenue now, in centavos: over the active and past_due subscriptions, each item's unit_amount × quantity ÷ interval_count, per month (× 365/12 a day, × 52/12 a week, ÷ 12 a year), rounded half up per item; list prices, before coupons."
	metrics := schemaOf(reflect.TypeFor[metricsResult]())
	metrics["properties"].(map[string]any)["data"] = map[string]any{"type": "array", "items": bucket}
	metrics["properties"].(map[string]any)["mrr"] = mrr
	schemas["Metrics"] = metrics
	// The answers whose /v1 wording is not this interface's: its limits are per minute, with the
	// RateLimit-* headers, and its credentials are tokens as well as keys; 201 carries Location.
	hdrs, _ := comps["headers"].(map[string]any)
	if hdrs == nil {
		hdrs = map[string]any{}
		comps["headers"] = hdrs
	}
	intHeader := func(desc string) map[string]any {
		return map[string]any{"description": desc, "schema": map[string]any{"type": "integer"}}
	}
	hdrs["RateLimitLimit"] = intHeader("Requests allowed per minute for this token: 100 in test mode, 1,000 in live mode.")
	hdrs["RateLimitRemaining"] = intHeader("Requests left now.")
	hdrs["RateLimitReset"] = intHeader("Seconds until the budget is full again.")
	hdrs["Location"] = map[string]any{"description": "The path of the created object.", "schema": map[string]any{"type": "string"}}
	rateHeaders := func() map[string]any {
		return map[string]any{"Request-Id": map[string]any{"$ref": "#/components/headers/RequestId"},
			"RateLimit-Limit": map[string]any{"$ref": "#/components/headers/RateLimitLimit"}, "RateLimit-Remaining": map[string]any{"$ref": "#/components/headers/RateLimitRemaining"},
			"RateLimit-Reset": map[string]any{"$ref": "#/components/headers/RateLimitReset"}}
	}
	if answers, ok := comps["responses"].(map[string]any); ok {
		limited := rateHeaders()
		limited["Retry-After"] = map[string]any{"$ref": "#/components/headers/RetryAfter"}
		answers["RateLimited"] = map[string]any{"description": "Too many requests with this token (`rate_limit`, type `rate_limit_error`): 100 per minute in test mode, 1,000 in live mode. Retry after `Retry-After` seconds.",
			"headers": limited, "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/ErrorResponse"}}}}
		answers["Unauthorized"] = map[string]any{"description": "`authentication_failed` (type `authentication_error`): no credentials; an unknown, revoked or expired API key; an access token that is forged, expired, of another issuer or audience, or whose key was revoked; on the customer-portal path, an unknown or expired customer session token.",
			"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/ErrorResponse"}}}}
	}
	// Request bodies take the currency as this interface answers it (BRL) or as /v1 does (brl).
	acceptUpperCurrency(schemas)
	if cur, ok := schemas["Currency"].(map[string]any); ok {
		delete(cur, "const")
		cur["enum"], cur["description"] = []string{"brl", "BRL"}, "ISO 4217: `BRL` (as answered) or `brl`."
	}
	errs := map[string]any{}
	for code, name := range map[string]string{"400": "BadRequest", "401": "Unauthorized", "403": "Forbidden", "404": "NotFound", "409": "Conflict", "429": "RateLimited", "500": "ServerError"} {
		errs[code] = map[string]any{"$ref": "#/components/responses/" + name}
	}
	paths := map[string]any{}
	for _, op := range ops {
		p := strings.ReplaceAll(strings.ReplaceAll(op.path, ":id", "{id}"), ":refund", "{refund}")
		item, _ := paths[p].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[p] = item
			var params []any
			for _, name := range []string{"id", "refund"} {
				if strings.Contains(p, "{"+name+"}") {
					params = append(params, map[string]any{"name": name, "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
				}
			}
			if params != nil {
				item["parameters"] = params
			}
		}
		obj := map[string]any{"$ref": "#/components/schemas/" + apiV1Schema(op.method, p)}
		responses := map[string]any{}
		for k, v := range errs {
			responses[k] = v
		}
		o := map[string]any{"operationId": operationID(op), "summary": op.method + " " + p + " (scope " + op.need + ")", "responses": responses}
		// One object: a path ending in its id, or the customer of a customer session token.
		isItem := strings.HasSuffix(p, "}") || p == portalPrefix+"/customer"
		switch {
		case op.method == "GET" && p == "/api/v1/metrics":
			o["parameters"] = []any{
				map[string]any{"name": "start", "in": "query", "required": true, "schema": map[string]any{"type": "string", "format": "date-time"}},
				map[string]any{"name": "end", "in": "query", "required": true, "schema": map[string]any{"type": "string", "format": "date-time"}},
				map[string]any{"name": "interval", "in": "query", "schema": map[string]any{"type": "string", "enum": []string{"day", "week", "month"}}},
			}
			responses["200"] = jsonResponse("Ledger sums per interval, and the monthly recurring revenue now.", map[string]any{"$ref": "#/components/schemas/Metrics"})
		case op.method == "GET" && !isItem:
			params := []any{
				map[string]any{"name": "page", "in": "query", "schema": map[string]any{"type": "integer", "minimum": 1}},
				map[string]any{"name": "limit", "in": "query", "schema": map[string]any{"type": "integer", "minimum": 1, "maximum": 100}},
			}
			for _, f := range op.filters {
				params = append(params, map[string]any{"name": f, "in": "query", "description": "Only the objects whose " + f + " is this value.", "schema": map[string]any{"type": "string"}})
			}
			o["parameters"] = params
			responses["200"] = jsonResponse("A page.", map[string]any{"type": "object", "required": []string{"data", "pagination"}, "properties": map[string]any{
				"data": map[string]any{"type": "array", "items": obj}, "pagination": map[string]any{"$ref": "#/components/schemas/Pagination"}}})
		case op.method == "GET":
			responses["200"] = jsonResponse("The object.", obj)
		case op.method == "DELETE":
			responses["204"] = map[string]any{"description": "Deleted."}
			delete(responses, "409")
		case op.method == "POST":
			o["parameters"] = []any{map[string]any{"name": "Idempotency-Key", "in": "header", "schema": map[string]any{"type": "string", "maxLength": 255}}}
			switch {
			case strings.HasSuffix(p, "/refund"):
				o["requestBody"] = map[string]any{"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object", "additionalProperties": false,
					"properties": map[string]any{"amount": map[string]any{"type": "integer", "minimum": 1}, "reason": map[string]any{"type": "string", "enum": []string{"duplicate", "fraudulent", "requested_by_customer"}},
						"metadata": map[string]any{"$ref": "#/components/schemas/Metadata"}}}}}}
				responses["201"] = jsonResponse("The refund.", obj)
				responses["201"].(map[string]any)["headers"] = map[string]any{"Location": map[string]any{"$ref": "#/components/headers/Location"}}
			case p == portalPrefix+"/payment-methods":
				o["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object",
					"additionalProperties": false, "required": []string{"card"}, "properties": map[string]any{"card": map[string]any{"$ref": "#/components/schemas/CardParams"}}}}}}
				responses["201"] = jsonResponse("The saved card (a setup intent verified it); the default payment method of the customer's running subscriptions from now on.", obj)
				responses["201"].(map[string]any)["headers"] = map[string]any{"Location": map[string]any{"$ref": "#/components/headers/Location"}}
				responses["402"] = map[string]any{"$ref": "#/components/responses/SetupDeclined"}
			case strings.HasSuffix(p, "/pause"):
				o["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": pauseSchema(schemas)}}}
				responses["200"] = jsonResponse("The paused subscription.", obj)
			default:
				if body := twinRequestBody(v1Paths, p); body != nil {
					o["requestBody"] = body
				}
				if isItem || strings.Contains(p, "{id}/") {
					responses["200"] = jsonResponse("The object after the operation.", obj)
				} else {
					responses["201"] = jsonResponse("Created; Location names it.", obj)
					responses["201"].(map[string]any)["headers"] = map[string]any{"Location": map[string]any{"$ref": "#/components/headers/Location"}}
				}
			}
		}
		if op.need == needCustomer {
			o["security"] = []any{map[string]any{"customerToken": []any{}}}
			o["summary"] = op.method + " " + p + " (customer session token)"
			delete(responses, "409")
		}
		// Every answer past authentication carries the rate-limit headers.
		for _, code := range []string{"200", "201", "204"} {
			ok, _ := responses[code].(map[string]any)
			if ok == nil {
				continue
			}
			h := rateHeaders()
			if prev, _ := ok["headers"].(map[string]any); prev != nil {
				for k, v := range prev {
					h[k] = v
				}
			}
			ok["headers"] = h
		}
		item[strings.ToLower(op.method)] = o
	}
	paths["/api/v1/oauth/token"] = map[string]any{"post": map[string]any{"operationId": "oauthToken", "security": []any{},
		"summary": "OAuth 2.0 client credentials: an access token (JWT, one hour) for an API key",
		"requestBody": map[string]any{"required": true, "content": map[string]any{"application/x-www-form-urlencoded": map[string]any{"schema": map[string]any{
			"type": "object", "required": []string{"grant_type", "client_id", "client_secret"}, "properties": map[string]any{
				"grant_type": map[string]any{"const": "client_credentials"}, "client_id": map[string]any{"type": "string"},
				"client_secret": map[string]any{"type": "string"}, "scope": map[string]any{"type": "string"}}}}}},
		"responses": map[string]any{"200": jsonResponse("The token.", map[string]any{"type": "object", "required": []string{"access_token", "token_type", "expires_in", "scope"},
			"properties": map[string]any{"access_token": map[string]any{"type": "string"}, "token_type": map[string]any{"const": "Bearer"},
				"expires_in": map[string]any{"type": "integer"}, "scope": map[string]any{"type": "string"}}}),
			"400": map[string]any{"description": "RFC 6749 error (invalid_request, unsupported_grant_type, unauthorized_client, invalid_scope)."},
			"401": map[string]any{"description": "invalid_client."}}}}
	info := map[string]any{"title": "troco Core API (/api/v1)", "version": "v1",
		"description": "The second interface of troco: the same operations as /v1, page-numbered lists (page, limit 1-100), 201 with Location on creation, 204 on deletion, the /v1 error envelope, Idempotency-Key on every POST. Authenticate with an access token (POST /api/v1/oauth/token), a token of the configured OpenID Connect issuer, or an organization API key. 100 requests per minute per token in test mode, 1,000 in live mode (RateLimit-* headers)."}
	return map[string]any{"openapi": "3.1.0", "info": info, "servers": v1["servers"], "security": []any{map[string]any{"bearerAuth": []any{}}},
		"paths": paths, "components": map[string]any{"schemas": schemas, "responses": comps["responses"], "headers": comps["headers"],
			"securitySchemes": map[string]any{"bearerAuth": map[string]any{"type": "http", "scheme": "bearer", "bearerFormat": "JWT or API key"},
				"customerToken": map[string]any{"type": "http", "scheme": "bearer", "bearerFormat": "troco_cst_ customer session token",
					"description": "The customer_session_token of POST /v1/customer-portal-sessions (valid one hour): only on /api/v1/customer-portal/ paths, for that one customer."}}}}
}

// apiV1Schema names the component schema of the object an /api/v1 operation answers (one object,
// or the items of its page list): the /v1 object of the same JSON, or Checkout.
func apiV1Schema(method, p string) string {
	switch {
	case strings.HasSuffix(p, "/refund") || strings.Contains(p, "/refunds/"):
		return "Refund"
	case strings.HasSuffix(p, "/deliveries"):
		return "WebhookDelivery"
	case strings.HasSuffix(p, "/redeliver"):
		return "EventRedelivery"
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(p, portalPrefix+"/"), "/api/v1/")
	coll, _, _ := strings.Cut(rest, "/")
	if name, ok := apiV1Schemas[coll]; ok {
		return name
	}
	panic("openapi: no response schema for " + method + " " + p)
}

// apiV1Schemas are the objects of the /api/v1 collections (Core and customer-portal paths).
var apiV1Schemas = map[string]string{
	"checkouts": "Checkout", "checkout-links": "PaymentLink", "products": "Product", "customers": "Customer",
	"customer": "Customer", "discounts": "Coupon", "sales": "PaymentIntent", "files": "File",
	"webhooks": "WebhookEndpoint", "events": "Event", "subscriptions": "Subscription",
	"organizations": "Organization", "invoices": "Invoice", "payment-methods": "PaymentMethod", "metrics": "Metrics",
}

// twinRequestBody is the request body of the /v1 operation an /api/v1 POST calls: the path with
// its collection replaced by the /v1 one (/api/v1/subscriptions/{id}/cancel takes the body of
// /v1/subscriptions/{id}/cancel).
func twinRequestBody(v1Paths map[string]any, p string) any {
	rest := strings.TrimPrefix(p, "/api/v1/")
	coll, tail, _ := strings.Cut(rest, "/")
	twin, ok := v1Twin["/api/v1/"+coll]
	if !ok {
		return nil
	}
	if tail != "" {
		twin += "/" + tail
	}
	item, _ := v1Paths[twin].(map[string]any)
	post, _ := item["post"].(map[string]any)
	return post["requestBody"]
}

// pauseSchema is the body of POST /api/v1/subscriptions/{id}/pause: the pause_collection object
// of the /v1 update.
func pauseSchema(schemas map[string]any) any {
	upd, _ := schemas["SubscriptionUpdateParams"].(map[string]any)
	props, _ := upd["properties"].(map[string]any)
	pc, _ := props["pause_collection"].(map[string]any)
	out := map[string]any{}
	for k, v := range pc {
		out[k] = v
	}
	out["type"] = "object" // here the pause itself, never null
	return out
}

// acceptUpperCurrency widens every currency property that takes only brl to brl or BRL.
func acceptUpperCurrency(v any) {
	switch t := v.(type) {
	case map[string]any:
		if props, ok := t["properties"].(map[string]any); ok {
			if cur, ok := props["currency"].(map[string]any); ok {
				if cur["const"] == "brl" {
					delete(cur, "const")
					cur["enum"] = []string{"brl", "BRL"}
				}
				if e, ok := cur["enum"].([]any); ok && len(e) == 1 && e[0] == "brl" {
					cur["enum"] = []string{"brl", "BRL"}
				}
			}
		}
		for _, x := range t {
			acceptUpperCurrency(x)
		}
	case []any:
		for _, x := range t {
			acceptUpperCurrency(x)
		}
	}
}

func jsonResponse(desc string, schema any) map[string]any {
	return map[string]any{"description": desc, "content": map[string]any{"application/json": map[string]any{"schema": schema}}}
}

func operationID(op apiV1Op) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(op.method))
	for _, part := range strings.Split(strings.TrimPrefix(op.path, "/api/v1/"), "/") {
		if strings.HasPrefix(part, ":") {
			part = "By-" + part[1:] // :id → ById, :refund → ByRefund
		}
		for _, w := range strings.Split(part, "-") {
			if w != "" {
				b.WriteString(strings.ToUpper(w[:1]) + w[1:])
			}
		}
	}
	return b.String()
}

// schemaOf describes a response struct from its json tags: every field required (troco always
// sends them; pointers may be null).
func schemaOf(t reflect.Type) map[string]any {
	props := map[string]any{}
	var req []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		req = append(req, name)
		ft := f.Type
		nullable := ft.Kind() == reflect.Pointer
		if nullable {
			ft = ft.Elem()
		}
		var typ string
		switch {
		case ft.Kind() == reflect.Int64 || ft.Kind() == reflect.Int:
			typ = "integer"
		case ft.Kind() == reflect.Bool:
			typ = "boolean"
		case ft.Kind() == reflect.Map:
			typ = "object"
		default:
			typ = "string"
		}
		if strings.HasSuffix(name, "_at") {
			nullable = true // a time is null when unset
		}
		var p map[string]any
		if nullable {
			p = map[string]any{"type": []string{typ, "null"}}
		} else {
			p = map[string]any{"type": typ}
		}
		props[name] = p
	}
	return map[string]any{"type": "object", "required": req, "properties": props}
}
