package server_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/server/core"
	"troco/server/domain"
)

// One organization or environment can never read or change another's objects. Every /v1 route
// of routes.go appears in isolationResources (or isolationExempt, with the reason); the test
// TestIsolationCoversEveryRoute fails for a new route that is in neither.

// isoActor is a caller: a token plus the headers it sends.
type isoActor struct {
	name    string
	token   string
	headers []string
	orgID   string
	live    bool
}

func (a isoActor) do(e *testEnv, method, path string, body any) resp {
	e.t.Helper()
	return e.Do(method, path, a.token, body, a.headers...)
}

// isoRoute is a route of routes.go; ":id" stands for the object under test.
type isoRoute struct {
	method string
	path   string
	body   any // for POST; nil sends {}
}

// isoReference is a request that names the object under test inside another request (a price
// of a foreign product, a filter on a foreign id): it must behave as if the object did not exist.
// In path, ":id" is the object under test, {own-product} a new product of the caller and
// {own-event} the caller's newest event.
type isoReference struct {
	name       string
	method     string
	path       string              // may contain ":id"
	body       func(id string) any // may be nil
	wantStatus int
	wantParam  string
	wantEmpty  bool // a list answer that must be empty
}

// isoResource is one API resource: how an actor creates an object and the routes that take it.
type isoResource struct {
	name string
	// create makes an object in the actor's scope and returns its id.
	create func(t *testing.T, e *testEnv, a isoActor) string
	// get is the path that reads one object (":id" replaced); used to prove nothing changed.
	get    string
	routes []isoRoute
	refs   []isoReference
	// sharedAcrossEnvironments marks objects that exist in both environments (organizations,
	// SPEC 8.6): the other environment of the same organization sees them.
	sharedAcrossEnvironments bool
}

func mustCreate(t *testing.T, e *testEnv, a isoActor, path string, body any) string {
	t.Helper()
	r := a.do(e, "POST", path, body)
	if r.Status != 200 {
		t.Fatalf("%s: POST %s: %d %s", a.name, path, r.Status, r.Raw)
	}
	return r.Str("id")
}

var isolationResources = []isoResource{
	{
		name: "pix authorizations",
		create: func(t *testing.T, e *testEnv, a isoActor) string {
			cus := mustCreate(t, e, a, "/v1/customers", map[string]any{"email": "iso@example.com"})
			body := map[string]any{"customer": cus, "max_amount": 1000, "interval": "month"}
			if a.live { // live authorizations need a PSP connector: refused, nothing created
				if r := a.do(e, "POST", "/v1/pix-authorizations", body); r.Status != 503 {
					t.Fatalf("%s: live pix authorization: %d %s, want 503", a.name, r.Status, r.Raw)
				}
				return "pixauth_notcreated"
			}
			return mustCreate(t, e, a, "/v1/pix-authorizations", body)
		},
		get: "/v1/pix-authorizations/:id",
		routes: []isoRoute{
			{"GET", "/v1/pix-authorizations", nil},
			{"POST", "/v1/pix-authorizations", nil},
			{"GET", "/v1/pix-authorizations/:id", nil},
			{"POST", "/v1/pix-authorizations/:id/cancel", nil},
			{"POST", "/v1/test-helpers/pix-authorizations/:id/approve", nil},
			{"POST", "/v1/test-helpers/pix-authorizations/:id/reject", nil},
		},
	},
	{
		name: "customers",
		create: func(t *testing.T, e *testEnv, a isoActor) string {
			return mustCreate(t, e, a, "/v1/customers", map[string]any{"email": "iso@example.com"})
		},
		get: "/v1/customers/:id",
		routes: []isoRoute{
			{"GET", "/v1/customers", nil},
			{"POST", "/v1/customers", nil},
			{"GET", "/v1/customers/:id", nil},
			{"POST", "/v1/customers/:id", map[string]any{"name": "hijacked", "metadata": map[string]string{"x": "y"}}},
			{"DELETE", "/v1/customers/:id", nil},
		},
		refs: []isoReference{
			{name: "email filter", method: "GET", path: "/v1/customers?email=iso@example.com", wantStatus: 200, wantEmpty: false},
		},
	},
	{
		name: "files",
		create: func(t *testing.T, e *testEnv, a isoActor) string {
			r := e.uploadFile(a.token, "product_image", "iso.png", "image/png", pngBytes, a.headers...)
			if r.Status != 200 {
				t.Fatalf("%s: upload: %d %s", a.name, r.Status, r.Raw)
			}
			return r.Str("id")
		},
		get: "/v1/files/:id",
		routes: []isoRoute{
			{"GET", "/v1/files", nil},
			{"POST", "/v1/files", nil},
			{"GET", "/v1/files/:id", nil},
			{"DELETE", "/v1/files/:id", nil},
		},
		refs: []isoReference{
			{name: "a foreign file as a product image", method: "POST", path: "/v1/products", body: func(id string) any { return map[string]any{"name": "P", "image_url": id} }, wantStatus: 400, wantParam: "image_url"},
			{name: "files filtered by purpose", method: "GET", path: "/v1/files?purpose=product_image", wantStatus: 200, wantEmpty: false},
		},
	},
	{
		name: "disputes",
		create: func(t *testing.T, e *testEnv, a isoActor) string {
			pi := mustCreate(t, e, a, "/v1/payment-intents", map[string]any{"amount": 2000})
			r := a.do(e, "POST", "/v1/payment-intents/"+pi+"/confirm", map[string]any{"payment_method_type": "credit_card", "card": payCard(cardDisputeFraud)})
			if r.Status != 200 {
				t.Fatalf("%s: confirm: %d %s", a.name, r.Status, r.Raw)
			}
			e.advance(61 * time.Second)
			list := a.do(e, "GET", "/v1/disputes?payment_intent="+pi, nil)
			if len(list.IDs()) != 1 {
				t.Fatalf("%s: no dispute: %s", a.name, list.Raw)
			}
			return list.IDs()[0]
		},
		get: "/v1/disputes/:id",
		routes: []isoRoute{
			{"GET", "/v1/disputes", nil},
			{"GET", "/v1/disputes/:id", nil},
			{"POST", "/v1/disputes/:id", map[string]any{"evidence": map[string]any{"uncategorized_text": "hijacked"}, "metadata": map[string]string{"x": "y"}}},
			{"POST", "/v1/disputes/:id/close", nil},
		},
		refs: []isoReference{
			{name: "disputes filtered by status", method: "GET", path: "/v1/disputes?status=needs_response", wantStatus: 200, wantEmpty: false},
		},
	},
	{
		name: "products",
		create: func(t *testing.T, e *testEnv, a isoActor) string {
			return mustCreate(t, e, a, "/v1/products", map[string]any{"name": "Iso"})
		},
		get: "/v1/products/:id",
		routes: []isoRoute{
			{"GET", "/v1/products", nil},
			{"POST", "/v1/products", nil},
			{"GET", "/v1/products/:id", nil},
			{"POST", "/v1/products/:id", map[string]any{"name": "hijacked", "is_active": false}},
			{"DELETE", "/v1/products/:id", nil},
		},
		refs: []isoReference{
			{name: "price of a foreign product", method: "POST", path: "/v1/prices", body: func(id string) any { return map[string]any{"product": id, "unit_amount": 100} }, wantStatus: 404, wantParam: "product"},
			{name: "prices filtered by a foreign product", method: "GET", path: "/v1/prices?product=:id", wantStatus: 200, wantEmpty: true},
		},
	},
	{
		name: "prices",
		create: func(t *testing.T, e *testEnv, a isoActor) string {
			prod := mustCreate(t, e, a, "/v1/products", map[string]any{"name": "Iso"})
			return mustCreate(t, e, a, "/v1/prices", map[string]any{"product": prod, "unit_amount": 990})
		},
		get: "/v1/prices/:id",
		routes: []isoRoute{
			{"GET", "/v1/prices", nil},
			{"POST", "/v1/prices", nil},
			{"GET", "/v1/prices/:id", nil},
			{"POST", "/v1/prices/:id", map[string]any{"is_active": false, "name": "hijacked"}},
			{"DELETE", "/v1/prices/:id", nil},
		},
		refs: []isoReference{
			{name: "foreign price as default_price", method: "POST", path: "/v1/products/{own-product}", body: func(id string) any { return map[string]any{"default_price": id} }, wantStatus: 404, wantParam: "default_price"},
		},
	},
	{
		name:   "organizations",
		create: func(t *testing.T, e *testEnv, a isoActor) string { return a.orgID },
		get:    "/v1/organizations/:id",
		routes: []isoRoute{
			{"GET", "/v1/organizations/:id", nil},
			// An empty update: the other environment of the same organization may update it (one
			// organization in both modes), so only the other organizations' 404 is checked here.
			{"POST", "/v1/organizations/:id", nil},
		},
		sharedAcrossEnvironments: true,
	},
	{
		name: "events",
		create: func(t *testing.T, e *testEnv, a isoActor) string {
			mustCreate(t, e, a, "/v1/customers", map[string]any{"email": "event@example.com"})
			r := a.do(e, "GET", "/v1/events?limit=1", nil)
			if r.Status != 200 || len(r.IDs()) != 1 {
				t.Fatalf("%s: list events: %d %s", a.name, r.Status, r.Raw)
			}
			return r.IDs()[0]
		},
		get: "/v1/events/:id",
		routes: []isoRoute{
			{"GET", "/v1/events", nil},
			{"GET", "/v1/events/:id", nil},
			{"POST", "/v1/events/:id/redeliver", nil},
		},
		refs: []isoReference{
			{name: "events filtered by type", method: "GET", path: "/v1/events?type=customer.created", wantStatus: 200, wantEmpty: false},
		},
	},
	{
		name: "webhook endpoints",
		create: func(t *testing.T, e *testEnv, a isoActor) string {
			// A literal public address: valid in both environments without a DNS lookup.
			return mustCreate(t, e, a, "/v1/webhook-endpoints", map[string]any{"url": "https://93.184.216.34/hooks", "enabled_events": []string{"*"}})
		},
		get: "/v1/webhook-endpoints/:id",
		routes: []isoRoute{
			{"GET", "/v1/webhook-endpoints", nil},
			{"POST", "/v1/webhook-endpoints", nil},
			{"GET", "/v1/webhook-endpoints/:id", nil},
			{"POST", "/v1/webhook-endpoints/:id", map[string]any{"description": "hijacked", "disabled": true}},
			{"DELETE", "/v1/webhook-endpoints/:id", nil},
			{"POST", "/v1/webhook-endpoints/:id/rotate-secret", nil},
			{"GET", "/v1/webhook-endpoints/:id/deliveries", nil},
		},
		refs: []isoReference{
			{name: "redelivery to a foreign endpoint", method: "POST", path: "/v1/events/{own-event}/redeliver",
				body: func(id string) any { return map[string]any{"webhook_endpoint": id} }, wantStatus: 404, wantParam: "webhook_endpoint"},
		},
	},
	{
		name:   "checkout sessions",
		create: func(t *testing.T, e *testEnv, a isoActor) string { return isoCheckoutSession(t, e, a, 1000, nil) },
		get:    "/v1/checkout-sessions/:id",
		routes: []isoRoute{
			{"GET", "/v1/checkout-sessions", nil},
			{"POST", "/v1/checkout-sessions", nil},
			{"GET", "/v1/checkout-sessions/:id", nil},
			{"POST", "/v1/checkout-sessions/:id/confirm", map[string]any{"payment_method_type": "pix", "customer_email": "x@example.com"}},
			{"POST", "/v1/checkout-sessions/:id/expire", nil},
			{"POST", "/v1/test-helpers/checkout-sessions/:id/succeed", nil},
			{"POST", "/v1/test-helpers/checkout-sessions/:id/fail", nil},
			{"POST", "/v1/test-helpers/checkout-sessions/:id/expire", nil},
		},
		refs: []isoReference{
			{name: "sessions filtered by status", method: "GET", path: "/v1/checkout-sessions?status=open", wantStatus: 200, wantEmpty: false},
		},
	},
	{
		name: "payment links",
		create: func(t *testing.T, e *testEnv, a isoActor) string {
			price := isoPrice(t, e, a, 1000, nil)
			return mustCreate(t, e, a, "/v1/payment-links", map[string]any{"line_items": []any{map[string]any{"price": price}}})
		},
		get: "/v1/payment-links/:id",
		routes: []isoRoute{
			{"GET", "/v1/payment-links", nil},
			{"POST", "/v1/payment-links", nil},
			{"GET", "/v1/payment-links/:id", nil},
			{"POST", "/v1/payment-links/:id", map[string]any{"active": false}},
			{"DELETE", "/v1/payment-links/:id", nil},
		},
		refs: []isoReference{
			{name: "sessions filtered by a foreign payment link", method: "GET", path: "/v1/checkout-sessions?payment_link=:id", wantStatus: 200, wantEmpty: true},
		},
	},
	{
		name: "subscriptions",
		create: func(t *testing.T, e *testEnv, a isoActor) string {
			if !a.live {
				cs := isoCheckoutSession(t, e, a, 2990, map[string]any{"interval": "month"})
				r := a.do(e, "POST", "/v1/checkout-sessions/"+cs+"/confirm", coCard("4242424242424242"))
				if r.Status != 200 || r.Str("subscription") == "" {
					t.Fatalf("%s: subscription checkout: %d %s", a.name, r.Status, r.Raw)
				}
				return r.Str("subscription")
			}
			// Live before activation: a send_invoice subscription charges nothing.
			price := isoPrice(t, e, a, 2990, map[string]any{"interval": "month"})
			cus := mustCreate(t, e, a, "/v1/customers", map[string]any{"email": "iso@example.com"})
			return mustCreate(t, e, a, "/v1/subscriptions", map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}},
				"collection_method": "send_invoice", "days_until_due": 3})
		},
		get: "/v1/subscriptions/:id",
		routes: []isoRoute{
			{"GET", "/v1/subscriptions", nil},
			{"POST", "/v1/subscriptions", nil},
			{"GET", "/v1/subscriptions/:id", nil},
			{"POST", "/v1/subscriptions/:id", map[string]any{"metadata": map[string]string{"x": "y"}}},
			{"POST", "/v1/subscriptions/:id/cancel", nil},
			{"POST", "/v1/subscriptions/:id/resume", nil},
		},
	},
}

// isoPrice creates a product with a default price in the actor's scope.
func isoPrice(t *testing.T, e *testEnv, a isoActor, amount int64, recurring map[string]any) string {
	t.Helper()
	pd := map[string]any{"unit_amount": amount}
	if recurring != nil {
		pd["recurring"] = recurring
	}
	r := a.do(e, "POST", "/v1/products", map[string]any{"name": "Iso", "default_price_data": pd})
	if r.Status != 200 {
		t.Fatalf("%s: create product: %d %s", a.name, r.Status, r.Raw)
	}
	return r.Str("default_price")
}

// isoCheckoutSession creates a checkout session for one new price in the actor's scope.
func isoCheckoutSession(t *testing.T, e *testEnv, a isoActor, amount int64, recurring map[string]any) string {
	t.Helper()
	price := isoPrice(t, e, a, amount, recurring)
	return mustCreate(t, e, a, "/v1/checkout-sessions", map[string]any{"line_items": []any{map[string]any{"price": price}}})
}

// isolationExempt lists /v1 routes that touch no object of an organization, with the reason.
var isolationExempt = map[string]string{
	// Platform and live-only resources: organization keys never reach them, so their isolation
	// (platform against platform, environment against environment) is tested in activation_test.go.
	"GET /v1/organizations":                   "platform endpoint (connected organizations); TestPlatformIsolation",
	"POST /v1/organizations":                  "platform endpoint (creates a connected organization); TestPlatformIsolation",
	"POST /v1/activation-sessions":            "platform endpoint; TestPlatformIsolation",
	"GET /v1/activation-sessions/:id":         "platform endpoint; TestPlatformIsolation",
	"GET /v1/onboarding-sessions":             "needs an organization with a document; TestOnboardingSessions",
	"POST /v1/onboarding-sessions":            "needs an organization with a document; TestOnboardingSessions",
	"GET /v1/onboarding-sessions/:id":         "needs an organization with a document; TestOnboardingSessions",
	"GET /v1/payout-accounts":                 "live only (409 sandbox_unsupported to test keys); TestPayoutAccounts",
	"POST /v1/payout-accounts":                "live only; TestPayoutAccounts",
	"GET /v1/payout-accounts/:id":             "live only; TestPayoutAccounts",
	"POST /v1/payout-accounts/:id/disconnect": "live only; TestPayoutAccounts",
	"POST /v1/customer-portal-sessions":       "creates a session that no route reads back; a customer of another organization or environment is 404 (TestCustomerPortal)",
	"GET /v1/pix-payloads/:id":                "answers a JWS, not JSON; another organization's and environment's txid are 404 in TestPixLocationJWS",
	"GET /v1/business-days":                   "the server's calendar: the same for every organization, no objects",
	"POST /v1/test-helpers/advance-clock":     "moves the sandbox server's one clock (CONTRACT 9); it reads or writes no organization's objects",
}

// TestIsolationCoversEveryRoute fails when routes.go has a /v1 route that no isolation case
// covers: add the route to isolationResources (or, if it has no objects, to isolationExempt).
func TestIsolationCoversEveryRoute(t *testing.T) {
	covered := map[string]bool{}
	for _, res := range isolationResources {
		for _, r := range res.routes {
			covered[r.method+" "+r.path] = true
		}
	}
	for _, rt := range v1Routes(t) {
		key := rt.method + " " + rt.path
		if !covered[key] && isolationExempt[key] == "" {
			t.Errorf("route %s has no isolation case: add it to isolationResources in isolation_test.go", key)
		}
	}
}

// TestIsolation: an object created by organization A in test mode is invisible and untouchable
// to every other organization and to A's live environment, on every route.
func TestIsolation(t *testing.T) {
	e := newEnv(t)
	orgB, bTest := e.NewOrg("Outra Ltda", false)
	bLive := e.NewKey(orgB.ID, true, domain.ScopeRead, domain.ScopeWrite)
	plat, platKey := e.NewPlatform("Plataforma")
	conn := e.CreateOrg(core.OrganizationInput{Name: "Conectada", ConnectedTo: *plat.Platform, ActivationStatus: domain.ActivationActive})

	owner := isoActor{name: "A test", token: e.Test, orgID: e.Org.ID}
	outsiders := []isoActor{
		{name: "B test", token: bTest, orgID: orgB.ID},
		{name: "A live", token: e.Live, orgID: e.Org.ID, live: true},
		{name: "B live", token: bLive, orgID: orgB.ID, live: true},
		{name: "platform for a connected org", token: platKey, headers: []string{"Organization", conn.ID}, orgID: conn.ID},
	}

	for _, res := range isolationResources {
		t.Run(res.name, func(t *testing.T) {
			id := res.create(t, e, owner)
			get := strings.ReplaceAll(res.get, ":id", id)
			before := owner.do(e, "GET", get, nil)
			if before.Status != 200 {
				t.Fatalf("owner cannot read its object: %d %s", before.Status, before.Raw)
			}
			for _, o := range outsiders {
				sees := res.sharedAcrossEnvironments && o.orgID == owner.orgID
				t.Run(o.name, func(t *testing.T) {
					for _, rt := range res.routes {
						path := strings.ReplaceAll(rt.path, ":id", id)
						var body any
						if rt.method == "POST" {
							body = rt.body
							if body == nil {
								body = map[string]any{}
							}
						}
						switch {
						case strings.Contains(rt.path, ":id"):
							r := o.do(e, rt.method, path, body)
							if sees {
								if rt.method == "GET" && r.Status != 200 {
									t.Errorf("%s %s: %d, want 200 (shared across environments)", rt.method, path, r.Status)
								}
								if rt.method == "GET" && r.Body["livemode"] != o.live {
									t.Errorf("%s %s: livemode %v, want the caller's %v", rt.method, path, r.Body["livemode"], o.live)
								}
								continue
							}
							if o.live && strings.HasPrefix(rt.path, "/v1/test-helpers/") {
								// SPEC 4.5, 5.12: a live key is refused before any lookup, whatever the id,
								// so the answer says nothing about the object.
								if r.Status != 403 || r.ErrCode() != "testmode_required" {
									t.Errorf("%s %s: %d %s, want 403 testmode_required", rt.method, path, r.Status, r.ErrCode())
								}
							} else if r.Status != 404 || r.ErrCode() != "resource_missing" {
								t.Errorf("%s %s: %d %s, want 404 resource_missing", rt.method, path, r.Status, r.ErrCode())
							}
							if strings.Contains(string(r.Raw), `"object"`) && r.Body["error"] == nil {
								t.Errorf("%s %s leaked an object: %s", rt.method, path, r.Raw)
							}
						case rt.method == "GET":
							r := o.do(e, "GET", path+"?limit=100", nil)
							if r.Status != 200 {
								t.Errorf("GET %s: %d %s", path, r.Status, r.Raw)
							}
							if slices.Contains(r.IDs(), id) && !sees {
								t.Errorf("GET %s lists the other scope's %s", path, id)
							}
							for _, cursor := range []string{"starting_after", "ending_before"} {
								r := o.do(e, "GET", path+"?"+cursor+"="+id, nil)
								if !sees && (r.Status != 400 || r.ErrParam() != cursor || len(r.Data()) != 0) {
									t.Errorf("GET %s?%s=<foreign id>: %d %s, want 400 naming %s", path, cursor, r.Status, r.Raw, cursor)
								}
							}
						case rt.method == "POST":
							// Creating as the outsider puts the object in the outsider's scope only.
							theirs := res.create(t, e, o)
							if r := owner.do(e, "GET", strings.ReplaceAll(res.get, ":id", theirs), nil); r.Status != 404 && !sees {
								t.Errorf("%s created %s, and the owner reads it: %d", o.name, theirs, r.Status)
							}
						}
					}
					for _, ref := range res.refs {
						path := strings.ReplaceAll(ref.path, ":id", id)
						if strings.Contains(path, "{own-product}") {
							path = strings.ReplaceAll(path, "{own-product}", mustCreate(t, e, o, "/v1/products", map[string]any{"name": "own"}))
						}
						if strings.Contains(path, "{own-event}") {
							mustCreate(t, e, o, "/v1/customers", map[string]any{})
							path = strings.ReplaceAll(path, "{own-event}", o.do(e, "GET", "/v1/events?limit=1", nil).IDs()[0])
						}
						var body any
						if ref.body != nil {
							body = ref.body(id)
						}
						r := o.do(e, ref.method, path, body)
						if r.Status != ref.wantStatus || r.ErrParam() != ref.wantParam {
							t.Errorf("%s: %s %s: %d %s, want %d naming %q", ref.name, ref.method, path, r.Status, r.Raw, ref.wantStatus, ref.wantParam)
						}
						if slices.Contains(r.IDs(), id) || (ref.wantEmpty && len(r.Data()) != 0) {
							t.Errorf("%s: %s %s lists the other scope's objects: %s", ref.name, ref.method, path, r.Raw)
						}
					}
				})
			}
			after := owner.do(e, "GET", get, nil)
			is := is.New(t)
			is.Equal(after.Status, 200)                     // the owner still has its object
			is.Equal(string(after.Raw), string(before.Raw)) // unchanged by every outsider's attempt
		})
	}
}
