package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

// Every successful /api/v1 answer any test receives through testEnv.Send is checked against the
// operation's 200/201 schema in /api/v1/openapi.json: each documented required field present,
// no undocumented field, the documented types. So a field that goes missing from a response, or
// one the document does not list, fails the test that saw it.

var apiV1Doc struct {
	once  sync.Once
	doc   map[string]any
	paths []apiV1PathRe
	err   error
}

type apiV1PathRe struct {
	re   *regexp.Regexp
	item map[string]any
}

// loadAPIV1Doc reads /api/v1/openapi.json once (it is the same for every server).
func (e *testEnv) loadAPIV1Doc() error {
	apiV1Doc.once.Do(func() {
		res, err := e.Client.Get(e.srv.URL + "/api/v1/openapi.json")
		if err != nil {
			apiV1Doc.err = err
			return
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		if err := json.Unmarshal(raw, &apiV1Doc.doc); err != nil {
			apiV1Doc.err = fmt.Errorf("/api/v1/openapi.json: %w: %s", err, raw)
			return
		}
		if _, ok := apiV1Doc.doc["paths"].(map[string]any); !ok {
			apiV1Doc.err = fmt.Errorf("/api/v1/openapi.json has no paths: %.300s", raw)
			return
		}
		params := regexp.MustCompile(`\\\{[a-z_]+\\\}`)
		for p, item := range apiV1Doc.doc["paths"].(map[string]any) {
			re := regexp.MustCompile("^" + params.ReplaceAllString(regexp.QuoteMeta(p), "[^/]+") + "$")
			apiV1Doc.paths = append(apiV1Doc.paths, apiV1PathRe{re: re, item: item.(map[string]any)})
		}
	})
	return apiV1Doc.err
}

// checkAPIV1Answer validates a successful /api/v1 JSON answer against its documented schema.
func (e *testEnv) checkAPIV1Answer(req *http.Request, status int, raw []byte) {
	p := req.URL.Path
	if !strings.HasPrefix(p, "/api/v1/") || p == "/api/v1/openapi.json" || p == "/api/v1/oauth/token" || req.Method == http.MethodOptions || status != 200 && status != 201 {
		return
	}
	if err := e.loadAPIV1Doc(); err != nil {
		e.t.Errorf("openapi: %v", err)
		return
	}
	var op map[string]any
	for _, pr := range apiV1Doc.paths {
		if pr.re.MatchString(p) {
			op, _ = pr.item[strings.ToLower(req.Method)].(map[string]any)
			break
		}
	}
	if op == nil {
		e.t.Errorf("openapi: %s %s answered %d but is not documented", req.Method, p, status)
		return
	}
	answer, _ := op["responses"].(map[string]any)[fmt.Sprint(status)].(map[string]any)
	schema, _ := answer["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
	if schema == nil {
		e.t.Errorf("openapi: %s %s: status %d has no documented JSON schema", req.Method, p, status)
		return
	}
	var body any
	if err := json.Unmarshal(raw, &body); err != nil {
		e.t.Errorf("openapi: %s %s: not JSON: %s", req.Method, p, raw)
		return
	}
	if errs := validateSchema(apiV1Doc.doc, schema, body, "$"); len(errs) > 0 {
		sort.Strings(errs)
		e.t.Errorf("openapi: %s %s (%d) does not match its documented schema:\n  %s", req.Method, p, status, strings.Join(errs, "\n  "))
	}
}

func resolveRef(doc map[string]any, s map[string]any) map[string]any {
	for {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		cur := any(doc)
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			cur = cur.(map[string]any)[part]
		}
		next, _ := cur.(map[string]any)
		if next == nil {
			return map[string]any{}
		}
		s = next
	}
}

// closedProperties collects the properties a schema and its allOf parts document.
func closedProperties(doc, s map[string]any, into map[string]any) {
	s = resolveRef(doc, s)
	if props, ok := s["properties"].(map[string]any); ok {
		for k, v := range props {
			into[k] = v
		}
	}
	for _, part := range asList(s["allOf"]) {
		closedProperties(doc, part.(map[string]any), into)
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// validateSchema is the part of JSON Schema the documents use: $ref, allOf, oneOf, anyOf, not,
// type (one or a list), const, enum, required, properties (closed unless additionalProperties
// says otherwise), additionalProperties, items.
func validateSchema(doc, s map[string]any, v any, at string) []string {
	s = resolveRef(doc, s)
	var errs []string
	for _, part := range asList(s["allOf"]) {
		errs = append(errs, validateSubschema(doc, part.(map[string]any), v, at)...)
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		alts := asList(s[key])
		if len(alts) == 0 {
			continue
		}
		okAny := false
		var first []string
		for _, alt := range alts {
			e := validateSchema(doc, alt.(map[string]any), v, at)
			if len(e) == 0 {
				okAny = true
				break
			}
			if first == nil {
				first = e
			}
		}
		if !okAny {
			errs = append(errs, fmt.Sprintf("%s: matches none of %s (first: %s)", at, key, strings.Join(first, "; ")))
		}
	}
	if not, ok := s["not"].(map[string]any); ok && len(validateSchema(doc, not, v, at)) == 0 {
		errs = append(errs, at+": matches a forbidden schema")
	}
	if t, ok := s["type"]; ok && !typeMatches(t, v) {
		return append(errs, fmt.Sprintf("%s: %v is not of type %v", at, short(v), t))
	}
	if c, ok := s["const"]; ok && fmt.Sprint(c) != fmt.Sprint(v) {
		errs = append(errs, fmt.Sprintf("%s: %v is not %v", at, short(v), c))
	}
	if en := asList(s["enum"]); en != nil {
		found := false
		for _, x := range en {
			if fmt.Sprint(x) == fmt.Sprint(v) && (x == nil) == (v == nil) {
				found = true
			}
		}
		if !found {
			errs = append(errs, fmt.Sprintf("%s: %v is not one of %v", at, short(v), en))
		}
	}
	switch t := v.(type) {
	case map[string]any:
		for _, r := range asList(s["required"]) {
			if _, ok := t[r.(string)]; !ok {
				errs = append(errs, fmt.Sprintf("%s: required field %q missing", at, r))
			}
		}
		props := map[string]any{}
		closedProperties(doc, s, props)
		addl, hasAddl := s["additionalProperties"]
		for k, x := range t {
			if ps, ok := props[k].(map[string]any); ok {
				own, _ := s["properties"].(map[string]any)
				if _, ok := own[k]; ok {
					errs = append(errs, validateSchema(doc, ps, x, at+"."+k)...)
				}
				continue
			}
			switch a := addl.(type) {
			case map[string]any:
				errs = append(errs, validateSchema(doc, a, x, at+"."+k)...)
			case bool:
				if !a {
					errs = append(errs, fmt.Sprintf("%s: undocumented field %q", at, k))
				}
			default:
				if !hasAddl && (len(props) > 0 || len(asList(s["oneOf"])) == 0 && len(asList(s["anyOf"])) == 0) && isObjectSchema(s) {
					errs = append(errs, fmt.Sprintf("%s: undocumented field %q", at, k))
				}
			}
		}
	case []any:
		if items, ok := s["items"].(map[string]any); ok {
			for i, x := range t {
				errs = append(errs, validateSchema(doc, items, x, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	}
	return errs
}

// validateSubschema checks an allOf part without its own closedness (the whole object's
// properties are checked by the enclosing schema).
func validateSubschema(doc, s map[string]any, v any, at string) []string {
	s = resolveRef(doc, s)
	open := map[string]any{}
	for k, x := range s {
		open[k] = x
	}
	if _, ok := open["additionalProperties"]; !ok {
		open["additionalProperties"] = true
	}
	return validateSchema(doc, open, v, at)
}

// isObjectSchema reports whether s describes an object with listed properties (a map without
// properties, such as metadata, stays open).
func isObjectSchema(s map[string]any) bool {
	_, props := s["properties"]
	_, all := s["allOf"]
	return props || all
}

func typeMatches(t any, v any) bool {
	switch tt := t.(type) {
	case string:
		return oneType(tt, v)
	case []any:
		for _, x := range tt {
			if oneType(x.(string), v) {
				return true
			}
		}
	}
	return false
}

func oneType(t string, v any) bool {
	switch t {
	case "null":
		return v == nil
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == float64(int64(f))
	case "number":
		_, ok := v.(float64)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	}
	return false
}

func short(v any) string {
	s := fmt.Sprint(v)
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// TestAPIV1AnswersMatchTheirSchema exercises one object of each /api/v1 resource the quickest
// way (the other /api/v1 tests check theirs as they go) and shows the check catches a field
// missing from, or added to, an answer.
func TestAPIV1AnswersMatchTheirSchema(t *testing.T) {
	e := newEnv(t)
	c := e.Do("POST", "/api/v1/customers", e.Test, map[string]any{"name": "Ana", "email": "ana@example.com"})
	if c.Status != 201 {
		t.Fatalf("create customer: %d %s", c.Status, c.Raw)
	}
	e.Do("GET", "/api/v1/customers", e.Test, nil)
	e.Do("POST", "/api/v1/products", e.Test, map[string]any{"name": "Plano"})
	e.Do("GET", "/api/v1/products", e.Test, nil)
	e.Do("GET", "/api/v1/events", e.Test, nil)

	if err := e.loadAPIV1Doc(); err != nil {
		t.Fatal(err)
	}
	cus := map[string]any{"$ref": "#/components/schemas/Customer"}
	if errs := validateSchema(apiV1Doc.doc, cus, c.Body, "$"); len(errs) != 0 {
		t.Fatalf("a real customer does not validate: %v", errs)
	}
	missing := map[string]any{}
	for k, v := range c.Body {
		if k != "email" {
			missing[k] = v
		}
	}
	if errs := validateSchema(apiV1Doc.doc, cus, missing, "$"); len(errs) == 0 {
		t.Error("a customer without email validated")
	}
	extra := map[string]any{"secret_field": "x"}
	for k, v := range c.Body {
		extra[k] = v
	}
	if errs := validateSchema(apiV1Doc.doc, cus, extra, "$"); len(errs) == 0 {
		t.Error("a customer with an undocumented field validated")
	}
}
