package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/db"
	"troco/server/core"
	"troco/server/document"
	"troco/server/domain"
)

// TestOrganizationsAPI covers SPEC 2.9 and 4.9: a platform creates, reads, lists and updates its
// connected organizations; organization keys read their own.
func TestOrganizationsAPI(t *testing.T) {
	e := newEnv(t)
	p := newActPlatform(e, "Plataforma A")

	t.Run("create a connected organization", func(t *testing.T) {
		is := is.New(t)
		r := e.Do("POST", "/v1/organizations", p.Test, map[string]any{
			"name": "Padaria Pão Quente", "document": "12.ABC.345/01DE-35", "email": "contato@padaria.com.br", "phone": "+55 11 3333-4444",
			"address":            map[string]any{"line1": "Rua Augusta", "number": "100", "neighborhood": "Consolação", "city": "São Paulo", "state": "sp", "postal_code": "01305-000"},
			"dashboard_settings": map[string]any{"timezone": "America/Manaus"},
			"metadata":           map[string]string{"seller_id": "42"},
		})
		is.Equal(r.Status, 200) // created
		is.True(strings.HasPrefix(r.Str("id"), "org_"))
		is.Equal(r.Str("object"), "organization")
		is.Equal(r.Body["livemode"], false)
		is.Equal(r.Str("document"), "12ABC34501DE35") // alphanumeric CNPJ, normalised
		is.Equal(r.Str("document_type"), "cnpj")
		is.Equal(r.Str("phone"), "+551133334444")
		is.Equal(r.Str("connected_platform"), p.ID)
		is.Equal(r.Str("activation_status"), "not_submitted")
		reason, missing := requirementsOf(r)
		is.Equal(reason, nil)     // requirements.disabled_reason
		is.Equal(len(missing), 0) // requirements.missing is an empty list
		is.Equal(r.Body["payout_account"], nil)
		is.Equal(r.Body["dashboard_settings"].(map[string]any)["timezone"], "America/Manaus")
		is.Equal(r.Body["address"].(map[string]any)["state"], "SP")
		is.Equal(r.Body["address"].(map[string]any)["postal_code"], "01305000")
		plan := r.Body["fee_plan"].(map[string]any)
		is.Equal(plan["card_fee_rate"], float64(399)) // the default plan of CONTRACT 5

		live := e.org(p.Live, r.Str("id"))
		is.Equal(live.Body["livemode"], true) // the same organization in live mode
		is.Equal(live.Str("name"), "Padaria Pão Quente")

		list := e.Do("GET", "/v1/organizations", p.Test, nil)
		is.Equal(list.Status, 200)
		is.Equal(list.Str("object"), "list")
		is.Equal(list.Str("url"), "/v1/organizations")
		is.Equal(list.IDs()[0], r.Str("id")) // newest first
		filtered := e.Do("GET", "/v1/organizations?activation_status=active", p.Test, nil)
		is.Equal(len(filtered.Data()), 0)
		is.Equal(e.Do("GET", "/v1/organizations?activation_status=bogus", p.Test, nil).Status, 400)
	})

	t.Run("validation", func(t *testing.T) {
		cases := []struct {
			name      string
			body      map[string]any
			wantCode  string
			wantParam string
		}{
			{"name missing", map[string]any{"document": "52998224725"}, "parameter_missing", "name"},
			{"CPF check digit", map[string]any{"name": "X", "document": "529.982.247-24"}, "invalid_request", "document"},
			{"CNPJ check digit", map[string]any{"name": "X", "document": "11.222.333/0001-82"}, "invalid_request", "document"},
			{"alphanumeric CNPJ check digit", map[string]any{"name": "X", "document": "12ABC34501DE36"}, "invalid_request", "document"},
			{"all equal digits", map[string]any{"name": "X", "document": "111.111.111-11"}, "invalid_request", "document"},
			{"wrong length", map[string]any{"name": "X", "document": "1234567890"}, "invalid_request", "document"},
			{"e-mail", map[string]any{"name": "X", "email": "not-an-email"}, "invalid_request", "email"},
			{"phone", map[string]any{"name": "X", "phone": "123"}, "invalid_request", "phone"},
			{"CEP", map[string]any{"name": "X", "address": map[string]any{"line1": "R", "number": "1", "neighborhood": "B", "city": "C", "state": "SP", "postal_code": "123"}}, "invalid_request", "address[postal_code]"},
			{"UF", map[string]any{"name": "X", "address": map[string]any{"line1": "R", "number": "1", "neighborhood": "B", "city": "C", "state": "XX", "postal_code": "01310100"}}, "invalid_request", "address[state]"},
			{"unknown field", map[string]any{"name": "X", "bogus": 1}, "invalid_request", "bogus"},
			{"timezone empty", map[string]any{"name": "X", "dashboard_settings": map[string]any{"timezone": ""}}, "invalid_request", "dashboard_settings[timezone]"},
			{"timezone Local", map[string]any{"name": "X", "dashboard_settings": map[string]any{"timezone": "Local"}}, "invalid_request", "dashboard_settings[timezone]"},
			{"timezone offset", map[string]any{"name": "X", "dashboard_settings": map[string]any{"timezone": "UTC+3"}}, "invalid_request", "dashboard_settings[timezone]"},
			{"timezone unknown", map[string]any{"name": "X", "dashboard_settings": map[string]any{"timezone": "America/Atlantis"}}, "invalid_request", "dashboard_settings[timezone]"},
			{"timezone path", map[string]any{"name": "X", "dashboard_settings": map[string]any{"timezone": "../etc/passwd"}}, "invalid_request", "dashboard_settings[timezone]"},
			{"max_installments", map[string]any{"name": "X", "max_installments": 13}, "invalid_request", "max_installments"},
			{"metadata", map[string]any{"name": "X", "metadata": map[string]string{"bad key": "v"}}, "invalid_request", "metadata"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				r := e.Do("POST", "/v1/organizations", p.Test, tc.body)
				is.Equal(r.Status, 400)
				is.Equal(r.ErrCode(), tc.wantCode)
				is.Equal(r.ErrParam(), tc.wantParam)
			})
		}
	})

	t.Run("update emits organization.updated", func(t *testing.T) {
		is := is.New(t)
		id := p.connect("Loja Antiga", "52998224725")
		r := e.Do("POST", "/v1/organizations/"+id, p.Test, map[string]any{"name": "Loja Nova", "dashboard_settings": map[string]any{"timezone": "Europe/Lisbon"}})
		is.Equal(r.Status, 200)
		is.Equal(r.Str("name"), "Loja Nova")
		is.Equal(r.Body["dashboard_settings"].(map[string]any)["timezone"], "Europe/Lisbon") // display only
		orgKey := e.NewKey(id, false, domain.ScopeRead)
		evs := e.orgEvents(orgKey, id)
		is.Equal(len(evs), 1) // in the organization's scope
		prev := evs[0]["data"].(map[string]any)["previous_attributes"].(map[string]any)
		is.Equal(prev["name"], "Loja Antiga")
		platRead := e.NewKey(p.Org.ID, false, domain.ScopeRead)
		is.Equal(len(e.orgEvents(platRead, id)), 1) // and a copy in the platform's scope

		same := e.Do("POST", "/v1/organizations/"+id, p.Test, map[string]any{"name": "Loja Nova"})
		is.Equal(same.Status, 200)
		is.Equal(len(e.orgEvents(orgKey, id)), 1) // nothing changed: no event
	})

	t.Run("organization keys read and update their own organization only", func(t *testing.T) {
		is := is.New(t)
		id := p.connect("Loja Própria", "52998224725")
		own := e.NewKey(id, false, domain.ScopeRead, domain.ScopeWrite)
		is.Equal(e.Do("GET", "/v1/organizations/"+id, own, nil).Status, 200)
		is.Equal(e.Do("GET", "/v1/organizations/"+e.Org.ID, own, nil).Status, 404) // another organization
		is.Equal(e.Do("GET", "/v1/organizations/"+p.Org.ID, own, nil).Status, 404) // its platform
		r := e.Do("POST", "/v1/organizations/"+id, own, map[string]any{"email": "novo@loja.com.br"})
		is.Equal(r.Status, 200)
		is.Equal(r.Str("email"), "novo@loja.com.br")
		for _, rt := range [][2]string{{"GET", "/v1/organizations"}, {"POST", "/v1/organizations"}, {"POST", "/v1/activation-sessions"}, {"GET", "/v1/activation-sessions/as_x"}} {
			var body any
			if rt[0] == "POST" {
				body = map[string]any{"name": "X"}
			}
			r := e.Do(rt[0], rt[1], own, body)
			is.Equal(r.Status, 403) // an organization key never satisfies a platform endpoint
			is.Equal(r.ErrCode(), "permission_denied")
		}
		ro := e.NewKey(id, false, domain.ScopeRead)
		is.Equal(e.Do("POST", "/v1/organizations/"+id, ro, map[string]any{"name": "X"}).Status, 403) // read scope
	})

	t.Run("the platform itself and the Organization header", func(t *testing.T) {
		is := is.New(t)
		is.Equal(e.Do("GET", "/v1/organizations/"+p.Org.ID, p.Test, nil).Status, 200) // a platform reads itself
		r := e.Do("POST", "/v1/organizations", p.Test, map[string]any{"name": "X"}, "Organization", p.Org.ID)
		is.Equal(r.Status, 200) // a header naming the platform itself is redundant on a platform endpoint
		conn := r.Str("id")
		r = e.Do("GET", "/v1/organizations", p.Test, nil, "Organization", conn)
		is.Equal(r.Status, 200) // so is one naming a connected organization, active or not
		r = e.Do("GET", "/v1/organizations/"+conn, p.Test, nil, "Organization", conn)
		is.Equal(r.Status, 200) // a not yet active connected organization is read as the platform
		is.Equal(r.Str("activation_status"), "not_submitted")
		r = e.Do("POST", "/v1/organizations/"+conn, p.Test, map[string]any{"email": "loja@example.com"}, "Organization", conn)
		is.Equal(r.Status, 200) // and updated
		r = e.Do("POST", "/v1/activation-sessions", p.Test, map[string]any{"organization": conn, "return_url": "https://x.example"}, "Organization", conn)
		is.Equal(r.ErrCode(), "organization_document_required") // past authentication: the header is accepted

		// Without the header, a platform key manages the webhook endpoints of its own organization,
		// where it learns its connected organizations' activation results.
		r = e.Do("POST", "/v1/webhook-endpoints", p.Test, map[string]any{"url": "https://plataforma.example/webhooks", "enabled_events": []string{"organization.updated"}})
		is.Equal(r.Status, 200)
		l := e.Do("GET", "/v1/webhook-endpoints", p.Test, nil)
		is.Equal(l.Status, 200)
		is.Equal(len(l.Data()), 1)
		is.Equal(e.Do("GET", "/v1/events", p.Test, nil).Status, 200)
		is.Equal(e.Do("GET", "/v1/events", p.Test, nil, "Organization", p.Org.ID).Status, 200) // naming itself
		is.Equal(e.Do("GET", "/v1/events", p.Test, nil, "Organization", conn).Status, 403)     // a connected organization not yet active is not routed
		r = e.Do("GET", "/v1/organizations", p.Test, nil, "Organization", e.Org.ID)
		is.Equal(r.Status, 403) // another organization in the header
		is.Equal(r.ErrCode(), "permission_denied")
	})

	t.Run("document is frozen once in review", func(t *testing.T) {
		is := is.New(t)
		o := p.connectWithStatus("Em Análise", "52998224725", domain.ActivationInReview)
		r := e.Do("POST", "/v1/organizations/"+o.ID, p.Test, map[string]any{"document": "11.222.333/0001-81"})
		is.Equal(r.Status, 409)
		is.Equal(r.ErrCode(), "resource_state_conflict")
		is.Equal(e.Do("POST", "/v1/organizations/"+o.ID, p.Test, map[string]any{"name": "Ainda em análise"}).Status, 200)
	})
}

// TestOrganizationFeePlan covers SPEC 4.9 and 8.6: fee_plan only with a live key (even null or
// "default" is 400 livemode_mismatch with a test key), one plan for both modes.
func TestOrganizationFeePlan(t *testing.T) {
	e := newEnv(t)
	p := newActPlatform(e, "Plataforma")
	id := p.connect("Loja", "52998224725")

	for _, v := range []any{nil, "default", map[string]any{"card_fee_rate": 299}} {
		t.Run(fmt.Sprintf("test key with %v", v), func(t *testing.T) {
			is := is.New(t)
			for _, req := range []struct{ method, path string }{{"POST", "/v1/organizations"}, {"POST", "/v1/organizations/" + id}} {
				r := e.Do(req.method, req.path, p.Test, map[string]any{"name": "Loja", "fee_plan": v})
				is.Equal(r.Status, 400)
				is.Equal(r.ErrCode(), "livemode_mismatch")
				is.Equal(r.ErrParam(), "fee_plan")
			}
		})
	}

	is := is.New(t)
	r := e.Do("POST", "/v1/organizations/"+id, p.Live, map[string]any{"fee_plan": map[string]any{"card_fee_rate": 299, "pix_fee_amount": 50}})
	is.Equal(r.Status, 200) // live platform key
	plan := r.Body["fee_plan"].(map[string]any)
	is.Equal(plan["card_fee_rate"], float64(299))
	is.Equal(plan["pix_fee_amount"], float64(50))
	is.Equal(plan["boleto_fee_amount"], float64(349)) // untouched fields keep the default
	test := e.org(p.Test, id)
	is.Equal(test.Body["fee_plan"].(map[string]any)["card_fee_rate"], float64(299)) // the same plan in test mode

	created := e.Do("POST", "/v1/organizations", p.Live, map[string]any{"name": "Com Plano", "fee_plan": map[string]any{"boleto_fee_amount": 199}})
	is.Equal(created.Status, 200)
	is.Equal(created.Body["fee_plan"].(map[string]any)["boleto_fee_amount"], float64(199))

	bad := e.Do("POST", "/v1/organizations/"+id, p.Live, map[string]any{"fee_plan": map[string]any{"card_fee_rate": -1}})
	is.Equal(bad.Status, 400)
	is.Equal(bad.ErrParam(), "fee_plan[card_fee_rate]")
	bad = e.Do("POST", "/v1/organizations/"+id, p.Live, map[string]any{"fee_plan": map[string]any{"card_fee_rate": 1.5}})
	is.Equal(bad.Status, 400) // integers only
	bad = e.Do("POST", "/v1/organizations/"+id, p.Live, map[string]any{"fee_plan": map[string]any{"surprise": 1}})
	is.Equal(bad.Status, 400)
	bad = e.Do("POST", "/v1/organizations/"+id, p.Live, map[string]any{"fee_plan": "cheap"})
	is.Equal(bad.Status, 400)

	reset := e.Do("POST", "/v1/organizations/"+id, p.Live, map[string]any{"fee_plan": "default"})
	is.Equal(reset.Status, 200)
	is.Equal(reset.Body["fee_plan"].(map[string]any)["card_fee_rate"], float64(399))

	ownLive := e.NewKey(id, true, domain.ScopeRead, domain.ScopeWrite)
	r = e.Do("POST", "/v1/organizations/"+id, ownLive, map[string]any{"fee_plan": map[string]any{"card_fee_rate": 1}})
	is.Equal(r.Status, 403) // an organization does not set its own fees with a write key
	admin := e.NewKey(id, true, domain.ScopeAdmin)
	r = e.Do("POST", "/v1/organizations/"+id, admin, map[string]any{"fee_plan": map[string]any{"card_fee_rate": 250}})
	is.Equal(r.Status, 200) // an admin key may
}

// TestPlatformIsolation: a platform never sees nor acts on another platform's organizations or
// sessions, and each environment sees only its own sessions.
func TestPlatformIsolation(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	a := newActPlatform(e, "Plataforma A")
	b := newActPlatform(e, "Plataforma B")
	orgA := a.connect("Loja de A", "52998224725")
	s := a.session(a.Test, orgA)
	is.Equal(s.Status, 200)

	is.Equal(e.Do("GET", "/v1/organizations/"+orgA, b.Test, nil).Status, 404)
	is.Equal(e.Do("POST", "/v1/organizations/"+orgA, b.Test, map[string]any{"name": "hijack"}).Status, 404)
	is.True(!strings.Contains(string(e.Do("GET", "/v1/organizations?limit=100", b.Test, nil).Raw), orgA))
	r := b.session(b.Test, orgA)
	is.Equal(r.Status, 404)
	is.Equal(r.ErrParam(), "organization")
	r = e.Do("GET", "/v1/activation-sessions/"+s.Str("id"), b.Test, nil)
	is.Equal(r.Status, 404)
	is.Equal(r.ErrParam(), "id")
	is.Equal(e.Do("GET", "/v1/activation-sessions/"+s.Str("id"), a.Live, nil).Status, 404) // test data is not live data
	is.Equal(e.Do("GET", "/v1/organizations?starting_after="+orgA, b.Test, nil).Status, 400)
	is.Equal(e.org(a.Test, orgA).Str("name"), "Loja de A") // unchanged

	// The Organization header routes only to an active organization connected to the platform.
	active := a.connectWithStatus("Ativa de A", "52998224725", domain.ActivationActive)
	is.Equal(e.Do("GET", "/v1/customers", a.Test, nil, "Organization", active.ID).Status, 200)
	is.Equal(e.Do("GET", "/v1/customers", b.Test, nil, "Organization", active.ID).Status, 403)
	is.Equal(e.Do("GET", "/v1/organizations/"+active.ID, b.Test, nil, "Organization", active.ID).Status, 403)
}

// TestActivationSessionCreate covers SPEC 4.1, 3.2 and the limits of SPEC 8.
func TestActivationSessionCreate(t *testing.T) {
	e := newEnv(t)
	p := newActPlatform(e, "Plataforma")
	org := p.connect("Loja", "52998224725")

	t.Run("created", func(t *testing.T) {
		is := is.New(t)
		r := p.session(p.Test, org, "metadata", map[string]string{"pedido": "123"})
		is.Equal(r.Status, 200)
		is.True(strings.HasPrefix(r.Str("id"), "as_"))
		is.Equal(r.Str("object"), "activation_session")
		is.Equal(r.Str("status"), "created")
		is.Equal(r.Str("organization"), org)
		is.Equal(r.Str("platform"), p.ID)
		is.Equal(r.Body["livemode"], false)
		is.Equal(r.Str("return_url"), "https://plataforma.example/retorno")
		is.Equal(r.Body["metadata"].(map[string]any)["pedido"], "123")
		is.Equal(r.Body["opened_at"], nil)
		is.True(strings.HasPrefix(r.Str("url"), e.URL()+"/activation/start?authorization_code="))
		is.True(len(queryOf(r.Str("url")).Get("authorization_code")) >= 43)
		created, _ := time.Parse(time.RFC3339, r.Str("created_at"))
		expires, _ := time.Parse(time.RFC3339, r.Str("expires_at"))
		is.Equal(expires.Sub(created), 60*time.Second) // the code is valid 60 seconds
		is.Equal(r.Str("updated_at"), r.Str("created_at"))
		for _, k := range []string{"id", "object", "created_at", "expires_at", "livemode", "metadata", "opened_at", "organization", "platform", "return_url", "status", "updated_at", "url"} {
			_, ok := r.Body[k]
			is.True(ok) // every field of SPEC 2.2
		}
		is.Equal(len(r.Body), 13) // and nothing else

		g := e.Do("GET", "/v1/activation-sessions/"+r.Str("id"), p.Test, nil)
		is.Equal(g.Status, 200)
		is.Equal(g.Body["url"], nil)        // GET never reissues a url
		is.Equal(g.Body["expires_at"], nil) // nor its expiry
		is.Equal(g.Str("status"), "created")

		unknown := e.Do("GET", "/v1/activation-sessions/as_doesnotexist", p.Test, nil)
		is.Equal(unknown.Status, 404)
		is.Equal(unknown.ErrParam(), "id")
	})

	t.Run("renewal returns the same session with a new url", func(t *testing.T) {
		is := is.New(t)
		first := p.session(p.Test, org)
		e.Clock.Advance(2 * time.Second)
		second := p.session(p.Test, org, "return_url", "https://outra.example/", "metadata", map[string]string{"x": "y"})
		is.Equal(second.Status, 200)
		is.Equal(second.Str("id"), first.Str("id")) // same as_
		is.True(second.Str("url") != first.Str("url"))
		is.True(second.Str("expires_at") != first.Str("expires_at"))
		is.Equal(second.Str("return_url"), first.Str("return_url")) // creation values stay
		is.Equal(second.Str("status"), "created")
		sel := e.newSeller()
		is.Equal(sel.open(first.Str("url")).Status, http.StatusGone) // the previous code no longer works
		is.Equal(sel.open(second.Str("url")).Status, http.StatusSeeOther)
		third := p.session(p.Test, org)
		is.Equal(third.Str("id"), first.Str("id")) // in_progress is renewed too
		is.Equal(third.Str("status"), "in_progress")
		is.True(third.Body["opened_at"] != nil)
	})

	t.Run("bad input", func(t *testing.T) {
		metadata := func(n, keyLen, valLen int) map[string]string {
			m := map[string]string{}
			for i := 0; i < n; i++ {
				k := fmt.Sprintf("k%0*d", keyLen-1, i)
				m[k] = strings.Repeat("v", valLen)
			}
			return m
		}
		long := "https://plataforma.example/" + strings.Repeat("a", 2048-len("https://plataforma.example/"))
		cases := []struct {
			name       string
			body       map[string]any
			wantStatus int
			wantCode   string
			wantParam  string
		}{
			{"organization missing", map[string]any{"return_url": "https://x.example"}, 400, "parameter_missing", "organization"},
			{"return_url missing", map[string]any{"organization": org}, 400, "parameter_missing", "return_url"},
			{"organization not an id", map[string]any{"organization": "loja", "return_url": "https://x.example"}, 400, "invalid_request", "organization"},
			{"organization not a string", map[string]any{"organization": 12, "return_url": "https://x.example"}, 400, "invalid_request", "organization"},
			{"return_url ftp", map[string]any{"organization": org, "return_url": "ftp://x.example/"}, 400, "invalid_request", "return_url"},
			{"return_url relative", map[string]any{"organization": org, "return_url": "/retorno"}, 400, "invalid_request", "return_url"},
			{"return_url javascript", map[string]any{"organization": org, "return_url": "javascript:alert(1)"}, 400, "invalid_request", "return_url"},
			{"return_url 2049 characters", map[string]any{"organization": org, "return_url": long + "b"}, 400, "invalid_request", "return_url"},
			{"return_url 2048 characters", map[string]any{"organization": org, "return_url": long}, 200, "", ""},
			{"return_url http", map[string]any{"organization": org, "return_url": "http://localhost:3000/ok"}, 200, "", ""},
			{"51 metadata keys", map[string]any{"organization": org, "return_url": "https://x.example", "metadata": metadata(51, 3, 1)}, 400, "invalid_request", "metadata"},
			{"50 metadata keys", map[string]any{"organization": org, "return_url": "https://x.example", "metadata": metadata(50, 3, 1)}, 200, "", ""},
			{"metadata key of 41 characters", map[string]any{"organization": org, "return_url": "https://x.example", "metadata": metadata(1, 41, 1)}, 400, "invalid_request", "metadata"},
			{"metadata key of 40 characters", map[string]any{"organization": org, "return_url": "https://x.example", "metadata": metadata(1, 40, 1)}, 200, "", ""},
			{"metadata key with a space", map[string]any{"organization": org, "return_url": "https://x.example", "metadata": map[string]string{"a b": "v"}}, 400, "invalid_request", "metadata"},
			{"metadata key with a slash", map[string]any{"organization": org, "return_url": "https://x.example", "metadata": map[string]string{"a/b": "v"}}, 400, "invalid_request", "metadata"},
			{"metadata empty key", map[string]any{"organization": org, "return_url": "https://x.example", "metadata": map[string]string{"": "v"}}, 400, "invalid_request", "metadata"},
			{"metadata value of 501 characters", map[string]any{"organization": org, "return_url": "https://x.example", "metadata": metadata(1, 3, 501)}, 400, "invalid_request", "metadata[k00]"},
			{"metadata value of 500 characters", map[string]any{"organization": org, "return_url": "https://x.example", "metadata": metadata(1, 3, 500)}, 200, "", ""},
			{"metadata value not a string", map[string]any{"organization": org, "return_url": "https://x.example", "metadata": map[string]any{"n": 1}}, 400, "invalid_request", "metadata[n]"},
			{"unknown organization", map[string]any{"organization": "org_doesnotexist", "return_url": "https://x.example"}, 404, "resource_missing", "organization"},
			{"organization not connected", map[string]any{"organization": e.Org.ID, "return_url": "https://x.example"}, 404, "resource_missing", "organization"},
			{"the platform itself", map[string]any{"organization": p.Org.ID, "return_url": "https://x.example"}, 404, "resource_missing", "organization"},
			{"unknown field", map[string]any{"organization": org, "return_url": "https://x.example", "url": "https://evil.example"}, 400, "invalid_request", "url"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				r := e.Do("POST", "/v1/activation-sessions", p.Test, tc.body)
				is.Equal(r.Status, tc.wantStatus)
				is.Equal(r.ErrCode(), tc.wantCode)
				is.Equal(r.ErrParam(), tc.wantParam)
			})
		}
	})

	t.Run("authentication and platform state", func(t *testing.T) {
		is := is.New(t)
		r := e.Do("POST", "/v1/activation-sessions", "", map[string]any{"organization": org, "return_url": "https://x.example"})
		is.Equal(r.Status, 401)
		is.Equal(r.ErrCode(), "authentication_failed")
		r = p.session(e.Test, org)
		is.Equal(r.Status, 403) // an organization key
		is.Equal(r.ErrCode(), "permission_denied")
		admin := e.NewKey(e.Org.ID, false, domain.ScopeAdmin)
		is.Equal(p.session(admin, org).Status, 403) // even with the admin scope
		r = e.Do("POST", "/v1/activation-sessions", p.Test, map[string]any{"organization": org, "return_url": "https://x.example"}, "Organization", e.Org.ID)
		is.Equal(r.Status, 403) // the Organization header names an organization of another platform
		is.Equal(r.ErrCode(), "permission_denied")

		q := newActPlatform(e, "Plataforma Suspensa")
		qOrg := q.connect("Loja", "52998224725")
		is.NoErr(e.DB.Write(context.Background(), func(tx *db.Tx) error {
			return tx.SetOrganizationActivationStatus(q.Org.ID, domain.ActivationDisabled)
		}))
		r = q.session(q.Test, qOrg)
		is.Equal(r.Status, 409) // platform inactive
		is.Equal(r.ErrCode(), "resource_state_conflict")
		is.Equal(e.Do("GET", "/v1/activation-sessions/as_x", q.Test, nil).ErrCode(), "resource_state_conflict")
	})

	t.Run("document required", func(t *testing.T) {
		is := is.New(t)
		none := p.connect("Sem Documento", "")
		r := p.session(p.Test, none)
		is.Equal(r.Status, 422)
		is.Equal(r.ErrCode(), "organization_document_required")
		r = p.session(p.Live, none)
		is.Equal(r.Status, 422) // in both modes
	})

	t.Run("by organization status (SPEC 3.2)", func(t *testing.T) {
		reason := core.DisabledReasonRejected
		cases := []struct {
			name       string
			st         domain.ActivationState
			wantStatus int
			wantCode   string
		}{
			{"active", domain.ActivationState{Status: "active"}, 409, "organization_already_active"},
			{"in_review", domain.ActivationState{Status: "in_review"}, 409, "organization_activation_in_review"},
			{"not_submitted", domain.ActivationState{Status: "not_submitted"}, 200, ""},
			{"disabled, retryable", domain.ActivationState{Status: "disabled", Missing: []string{"documents.identity"}}, 200, ""},
			{"disabled, two attempts", domain.ActivationState{Status: "disabled", Attempts: 2}, 200, ""},
			{"disabled, attempt limit", domain.ActivationState{Status: "disabled", Attempts: document.MaxActivationAttempts}, 409, "activation_not_retryable"},
			{"disabled with disabled_reason", domain.ActivationState{Status: "disabled", DisabledReason: &reason}, 409, "activation_not_retryable"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				id := p.connect("Loja "+tc.name, "52998224725")
				e.setActivationState(id, false, tc.st)
				r := p.session(p.Test, id)
				is.Equal(r.Status, tc.wantStatus)
				is.Equal(r.ErrCode(), tc.wantCode)
				if tc.wantStatus == 409 {
					evs := e.Do("GET", "/v1/organizations/"+id, p.Test, nil)
					is.Equal(evs.Str("activation_status"), tc.st.Status) // nothing changed
				}
			})
		}
	})

	t.Run("concurrent creation makes one session", func(t *testing.T) {
		is := is.New(t)
		id := p.connect("Concorrida", "52998224725")
		var wg sync.WaitGroup
		ids := make([]string, 8)
		codes := make([]int, 8)
		for i := range ids {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				r, err := e.TryDo("POST", "/v1/activation-sessions", p.Test, map[string]any{"organization": id, "return_url": "https://x.example"})
				if err == nil {
					ids[i], codes[i] = r.Str("id"), r.Status
				}
			}(i)
		}
		wg.Wait()
		for i := range ids {
			is.Equal(codes[i], 200)
			is.Equal(ids[i], ids[0]) // one session, renewed by the others
		}
		var n int
		is.NoErr(e.DB.Read(context.Background(), func(tx *db.Tx) error {
			items, _, err := tx.ListActivationSessions(domain.Scope{OrgID: p.Org.ID}, domain.ObjectActivationSession, db.ListParams{Limit: 100})
			for _, s := range items {
				if s.Organization == id {
					n++
				}
			}
			return err
		}))
		is.Equal(n, 1)
	})

	t.Run("live and test sessions are separate", func(t *testing.T) {
		is := is.New(t)
		id := p.connect("Dois Ambientes", "52998224725")
		test := p.session(p.Test, id)
		live := p.session(p.Live, id)
		is.Equal(test.Status, 200)
		is.Equal(live.Status, 200)
		is.Equal(live.Body["livemode"], true) // created with a production credential
		is.True(live.Str("id") != test.Str("id"))
	})
}

// TestActivationHostedFlow covers SPEC 3.1 and CONTRACT 7 without a browser: opening spends the
// code, a second open or an expired code changes nothing, submission closes the session for good.
func TestActivationHostedFlow(t *testing.T) {
	e := newEnv(t)
	p := newActPlatform(e, "Plataforma")

	t.Run("open, fill, submit", func(t *testing.T) {
		is := is.New(t)
		org := p.connect("Loja Fluxo", "11.222.333/0001-81")
		s := p.session(p.Test, org)
		sel := e.newSeller()
		o := sel.open(s.Str("url"))
		is.Equal(o.Status, http.StatusSeeOther) // the code is spent, the form opens
		is.Equal(o.Location, "/activation/sessions/"+s.Str("id"))

		g := e.Do("GET", "/v1/activation-sessions/"+s.Str("id"), p.Test, nil)
		is.Equal(g.Str("status"), "in_progress")
		is.True(g.Body["opened_at"] != nil)
		openedAt := g.Str("opened_at")

		again := e.newSeller().open(s.Str("url"))
		is.Equal(again.Status, http.StatusGone) // reused link: the expired page
		is.True(strings.Contains(again.Body, "Link expirado ou já utilizado"))
		is.Equal(e.Do("GET", "/v1/activation-sessions/"+s.Str("id"), p.Test, nil).Str("opened_at"), openedAt) // nothing changed

		page := sel.get(o.Location)
		is.Equal(page.Status, 200)
		is.True(strings.Contains(page.Body, `data-testid="activation-form"`))
		is.True(strings.Contains(page.Body, `data-testid="sandbox-banner"`)) // test mode
		is.True(strings.Contains(page.Body, `value="Loja Fluxo"`))           // prefilled from the organization
		is.True(strings.Contains(page.Body, "CNPJ 11.222.333/0001-81"))
		is.True(page.csrf() != "")
		is.Equal(e.newSeller().get(o.Location).Status, http.StatusForbidden) // another browser has no session

		// Step 1 with a bad e-mail: Portuguese messages, the step again.
		bad := sel.post(o.Location, map[string]string{"csrf_token": page.csrf(), "step": "business", "action": "next", "legal_name": "Loja Fluxo", "email": "x@", "phone": "1"}, nil)
		is.Equal(bad.Status, http.StatusUnprocessableEntity)
		is.True(strings.Contains(bad.Body, "Informe um e-mail válido"))
		is.True(strings.Contains(bad.Body, "Informe um telefone válido com DDD"))
		is.True(strings.Contains(bad.Body, `aria-invalid="true"`))

		// A forged post changes nothing.
		forged := sel.post(o.Location, map[string]string{"csrf_token": "forged", "step": "business", "action": "next"}, nil)
		is.Equal(forged.Status, http.StatusForbidden)

		// Steps one by one.
		f := validActivationForm()
		next := sel.post(o.Location, map[string]string{"csrf_token": page.csrf(), "step": "business", "action": "next",
			"legal_name": f["legal_name"], "email": f["email"], "phone": f["phone"]}, nil)
		is.Equal(next.Status, http.StatusSeeOther)
		is.Equal(next.Location, o.Location+"?step=representative")
		rep := sel.post(o.Location, map[string]string{"csrf_token": page.csrf(), "step": "representative", "action": "next",
			"rep_name": "Maria", "rep_document": "529.982.247-24", "rep_birth_date": "2015-01-01"}, nil)
		is.Equal(rep.Status, http.StatusUnprocessableEntity)
		is.True(strings.Contains(rep.Body, "CPF inválido"))
		is.True(strings.Contains(rep.Body, "pelo menos 18 anos"))
		back := sel.post(o.Location, map[string]string{"csrf_token": page.csrf(), "step": "representative", "action": "back"}, nil)
		is.Equal(back.Location, o.Location+"?step=business")
		docs := sel.get(o.Location + "?step=documents")
		is.True(strings.Contains(docs.Body, `data-testid="activation-submit"`))

		// A text file is not an identity document.
		f["csrf_token"], f["step"], f["action"] = page.csrf(), "documents", "submit"
		wrong := sel.post(o.Location, f, []byte("just text, not a document"))
		is.Equal(wrong.Status, http.StatusUnprocessableEntity)
		is.True(strings.Contains(wrong.Body, "Formato não aceito"))
		is.Equal(e.Do("GET", "/v1/activation-sessions/"+s.Str("id"), p.Test, nil).Str("status"), "in_progress")

		done := sel.post(o.Location, f, samplePDF)
		is.Equal(done.Status, http.StatusSeeOther)
		is.Equal(done.Location, "https://plataforma.example/retorno") // return_url exactly as given

		g = e.Do("GET", "/v1/activation-sessions/"+s.Str("id"), p.Test, nil)
		is.Equal(g.Str("status"), "submitted")
		is.Equal(g.Str("opened_at"), openedAt)
		o2 := e.org(p.Test, org)
		is.Equal(o2.Str("activation_status"), "in_review")
		is.Equal(o2.Str("name"), "Loja Teste Ltda") // the form's data is saved on the organization
		is.Equal(o2.Str("email"), "financeiro@loja.com.br")
		is.Equal(o2.Body["address"].(map[string]any)["postal_code"], "01310100")
		is.Equal(e.org(p.Live, org).Str("activation_status"), "not_submitted") // the sandbox never activates live

		evs := e.orgEvents(e.NewKey(org, false, domain.ScopeRead), org)
		is.True(len(evs) >= 1)
		prev := evs[0]["data"].(map[string]any)["previous_attributes"].(map[string]any)
		is.Equal(prev["activation_status"], "not_submitted")
		is.Equal(evs[0]["livemode"], false)

		is.Equal(sel.get(o.Location).Status, http.StatusForbidden) // the submitted session never reopens
		is.Equal(sel.post(o.Location, f, samplePDF).Status, http.StatusForbidden)
		is.Equal(e.newSeller().open(s.Str("url")).Status, http.StatusGone)

		r := p.session(p.Test, org)
		is.Equal(r.Status, 409) // in review
		is.Equal(r.ErrCode(), "organization_activation_in_review")
	})

	t.Run("the code lives 60 seconds", func(t *testing.T) {
		is := is.New(t)
		org := p.connect("Loja Lenta", "52998224725")
		s := p.session(p.Test, org)
		e.Clock.Advance(61 * time.Second)
		r := e.newSeller().open(s.Str("url"))
		is.Equal(r.Status, http.StatusGone)
		g := e.Do("GET", "/v1/activation-sessions/"+s.Str("id"), p.Test, nil)
		is.Equal(g.Str("status"), "created") // nothing changed
		is.Equal(g.Body["opened_at"], nil)
		renewed := p.session(p.Test, org)
		is.Equal(renewed.Str("id"), s.Str("id"))
		is.Equal(e.newSeller().open(renewed.Str("url")).Status, http.StatusSeeOther)
		is.Equal(e.newSeller().open(e.URL()+"/activation/start").Status, http.StatusGone)
		is.Equal(e.newSeller().open(e.URL()+"/activation/start?authorization_code=nope").Status, http.StatusGone)
	})

	t.Run("two concurrent opens: exactly one succeeds", func(t *testing.T) {
		is := is.New(t)
		for round := 0; round < 5; round++ {
			org := p.connect(fmt.Sprintf("Loja Corrida %d", round), "52998224725")
			s := p.session(p.Test, org)
			var wg sync.WaitGroup
			statuses := make([]int, 2)
			for i := range statuses {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					statuses[i] = e.newSeller().open(s.Str("url")).Status
				}(i)
			}
			wg.Wait()
			ok := 0
			for _, st := range statuses {
				if st == http.StatusSeeOther {
					ok++
				} else {
					is.Equal(st, http.StatusGone)
				}
			}
			is.Equal(ok, 1)
		}
	})

	t.Run("a later POST after submission creates a new session", func(t *testing.T) {
		is := is.New(t)
		org := p.connect("Loja Corrige", "00000000353")
		first := p.activate(org)
		e.review()
		second := p.session(p.Test, org)
		is.Equal(second.Status, 200)
		is.True(second.Str("id") != first) // a new as_
		is.Equal(second.Str("organization"), org)
		is.Equal(second.Str("status"), "created")
		is.Equal(e.Do("GET", "/v1/activation-sessions/"+first, p.Test, nil).Str("status"), "submitted")
	})
}

// TestActivationOutcomes covers every row of CONTRACT 6, for CPF and CNPJ: the outcome after
// --sim-delay, through in_review, each change an organization.updated event.
func TestActivationOutcomes(t *testing.T) {
	for _, row := range document.TestDocuments() {
		for _, doc := range []string{row.CPF, row.CNPJ} {
			t.Run(string(row.Outcome)+"/"+doc, func(t *testing.T) {
				is := is.New(t)
				e := newEnv(t)
				p := newActPlatform(e, "Plataforma")
				org := p.connect("Loja "+doc, doc)
				if row.Outcome == document.OutcomeDocumentInUse {
					r := p.session(p.Test, org)
					is.Equal(r.Status, 409)
					is.Equal(r.ErrCode(), "document_already_in_use")
					is.Equal(p.session(p.Live, org).Status, 200) // a sandbox rule: live mode does not use the table
					return
				}
				p.activate(org)
				is.Equal(e.org(p.Test, org).Str("activation_status"), "in_review")
				e.Clock.Advance(2 * time.Minute)
				is.NoErr(e.Jobs.RunDue(context.Background()))
				is.Equal(e.org(p.Test, org).Str("activation_status"), "in_review") // not before --sim-delay
				e.review()
				o := e.org(p.Test, org)
				reason, missing := requirementsOf(o)
				orgKey := e.NewKey(org, false, domain.ScopeRead)
				evs := e.orgEvents(orgKey, org)
				platEvs := e.orgEvents(e.NewKey(p.Org.ID, false, domain.ScopeRead), org)
				is.Equal(len(evs), len(platEvs))                  // the platform learns every change by its own events
				is.Equal(len(e.orgEvents(p.Test, org)), len(evs)) // also read with the platform key, without a header
				switch row.Outcome {
				case document.OutcomeApproved:
					is.Equal(o.Str("activation_status"), "active")
					is.Equal(reason, nil)
					is.Equal(len(missing), 0)
					pa, _ := o.Body["payout_account"].(map[string]any)
					is.True(pa != nil) // payout_account filled
					is.True(strings.HasPrefix(pa["id"].(string), "pa_"))
					is.Equal(pa["bank_code"], "001")
					is.Equal(pa["last4"], "3456")
					is.Equal(pa["holder_document"], doc)
					is.Equal(len(evs), 2) // in_review, then active
					prev := evs[0]["data"].(map[string]any)["previous_attributes"].(map[string]any)
					is.Equal(prev["activation_status"], "in_review")
					is.Equal(prev["payout_account"], nil)
					r := p.session(p.Test, org)
					is.Equal(r.ErrCode(), "organization_already_active")
					is.Equal(e.Do("GET", "/v1/customers", p.Test, nil, "Organization", org).Status, 200) // now reachable through the header
					is.Equal(e.Do("GET", "/v1/customers", p.Live, nil, "Organization", org).Status, 403) // but not in live mode
					is.Equal(e.org(p.Live, org).Str("activation_status"), "not_submitted")
				case document.OutcomeInReview:
					is.Equal(o.Str("activation_status"), "in_review")
					is.Equal(len(evs), 1) // only the submission
					is.Equal(p.session(p.Test, org).ErrCode(), "organization_activation_in_review")
				case document.OutcomeDisabledRetryable:
					is.Equal(o.Str("activation_status"), "disabled")
					is.Equal(reason, nil)
					is.True(len(missing) > 0)
					is.Equal(missing[0], "documents.identity")
					is.Equal(len(evs), 2)
					// disabled is not definitive: three more attempts, then activation_not_retryable.
					for attempt := 1; attempt <= document.MaxActivationAttempts; attempt++ {
						s := p.session(p.Test, org)
						is.Equal(s.Status, 200) // a retry
						sel := e.newSeller()
						o := sel.open(s.Str("url"))
						page := sel.get(o.Location)
						is.True(strings.Contains(page.Body, "Corrija as pendências"))   // the requirement is shown
						is.True(strings.Contains(page.Body, `value="Loja Teste Ltda"`)) // saved data prefills the form
						f := map[string]string{"csrf_token": page.csrf(), "step": "documents", "action": "submit", "accept_terms": "on"}
						done := sel.post(o.Location, f, samplePDF)
						is.Equal(done.Status, http.StatusSeeOther) // the rest came from the saved data
						e.review()
						is.Equal(e.org(p.Test, org).Str("activation_status"), "disabled")
					}
					r := p.session(p.Test, org)
					is.Equal(r.Status, 409)
					is.Equal(r.ErrCode(), "activation_not_retryable")
				case document.OutcomeDisabledFinal:
					is.Equal(o.Str("activation_status"), "disabled")
					is.Equal(reason, "rejected.other")
					is.Equal(len(missing), 0)
					r := p.session(p.Test, org)
					is.Equal(r.Status, 409)
					is.Equal(r.ErrCode(), "activation_not_retryable")
				}
			})
		}
	}
}

// TestActivationLiveReview: in live mode a submission waits in review until an administrator
// decides; approval connects the form's bank account as the payout account.
func TestActivationLiveReview(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	p := newActPlatform(e, "Plataforma")
	org := p.connect("Loja Real", "00000000191")
	s := p.session(p.Live, org)
	is.Equal(s.Status, 200)
	sel := e.newSeller()
	o := sel.open(s.Str("url"))
	page := sel.get(o.Location)
	is.True(!strings.Contains(page.Body, `data-testid="sandbox-banner"`)) // live: no yellow bar
	f := validActivationForm()
	f["csrf_token"], f["step"], f["action"] = page.csrf(), "documents", "submit"
	is.Equal(sel.post(o.Location, f, samplePDF).Status, http.StatusSeeOther)
	is.Equal(e.org(p.Live, org).Str("activation_status"), "in_review")
	e.review()
	is.Equal(e.org(p.Live, org).Str("activation_status"), "in_review") // no simulated outcome in live mode
	is.Equal(e.org(p.Test, org).Str("activation_status"), "not_submitted")

	var view *domain.Organization
	is.NoErr(e.DB.Write(context.Background(), func(tx *db.Tx) error {
		var err error
		view, err = core.DecideActivation(tx, org, true, core.Decision{Status: domain.ActivationActive}, "")
		return err
	}))
	is.Equal(view.ActivationStatus, "active")
	live := e.org(p.Live, org)
	is.Equal(live.Str("activation_status"), "active")
	pa := live.Body["payout_account"].(map[string]any)
	is.Equal(pa["livemode"], true)
	list := e.Do("GET", "/v1/payout-accounts", p.Live, nil, "Organization", org)
	is.Equal(list.Status, 200)
	is.Equal(list.IDs(), []string{pa["id"].(string)}) // the live payout account exists as a pa_
	liveEvs := e.orgEvents(e.NewKey(org, true, domain.ScopeRead), org)
	is.Equal(len(liveEvs), 2)
	is.Equal(liveEvs[0]["livemode"], true)

	// A second live activation of the same document elsewhere is refused.
	other := p.connect("Outra com o mesmo CPF", "00000000191")
	r := p.session(p.Live, other)
	is.Equal(r.Status, 409)
	is.Equal(r.ErrCode(), "document_already_in_use")
}

// TestOnboardingSessions: an organization's own activation through the same hosted flow.
func TestOnboardingSessions(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	r := e.Do("POST", "/v1/onboarding-sessions", e.Test, map[string]any{"return_url": "https://loja.example/ok"})
	is.Equal(r.Status, 422) // no document yet
	is.Equal(r.ErrCode(), "organization_document_required")
	is.Equal(e.Do("POST", "/v1/organizations/"+e.Org.ID, e.Test, map[string]any{"document": "00000000000191"}).Status, 200)
	ro := e.NewKey(e.Org.ID, false, domain.ScopeRead)
	is.Equal(e.Do("POST", "/v1/onboarding-sessions", ro, map[string]any{"return_url": "https://loja.example/ok"}).Status, 403)
	p := newActPlatform(e, "Plataforma")
	is.Equal(e.Do("POST", "/v1/onboarding-sessions", p.Test, map[string]any{"return_url": "https://loja.example/ok"}).Status, 403) // needs the header

	r = e.Do("POST", "/v1/onboarding-sessions", e.Test, map[string]any{"return_url": "https://loja.example/ok", "metadata": map[string]string{"a": "b"}})
	is.Equal(r.Status, 200)
	is.True(strings.HasPrefix(r.Str("id"), "os_"))
	is.Equal(r.Str("object"), "onboarding_session")
	is.Equal(r.Str("organization"), e.Org.ID)
	is.Equal(r.Str("status"), "created")
	_, hasPlatform := r.Body["platform"]
	is.True(!hasPlatform)
	again := e.Do("POST", "/v1/onboarding-sessions", e.Test, map[string]any{"return_url": "https://loja.example/ok"})
	is.Equal(again.Str("id"), r.Str("id")) // renewed
	is.True(again.Str("url") != r.Str("url"))
	bad := e.Do("POST", "/v1/onboarding-sessions", e.Test, map[string]any{"return_url": "ftp://x"})
	is.Equal(bad.Status, 400)
	is.Equal(e.Do("POST", "/v1/onboarding-sessions", e.Test, map[string]any{"return_url": "https://x.example", "organization": "org_x"}).Status, 400)

	g := e.Do("GET", "/v1/onboarding-sessions/"+r.Str("id"), e.Test, nil)
	is.Equal(g.Status, 200)
	is.Equal(g.Body["url"], nil)
	is.Equal(e.Do("GET", "/v1/onboarding-sessions/"+r.Str("id"), e.Live, nil).Status, 404)
	_, otherKey := e.NewOrg("Outra", false)
	is.Equal(e.Do("GET", "/v1/onboarding-sessions/"+r.Str("id"), otherKey, nil).Status, 404)
	is.Equal(e.Do("GET", "/v1/onboarding-sessions", e.Test, nil).IDs(), []string{r.Str("id")})
	is.Equal(len(e.Do("GET", "/v1/onboarding-sessions", otherKey, nil).IDs()), 0)

	done := e.newSeller().complete(again.Str("url"))
	is.Equal(done.Status, http.StatusSeeOther)
	is.Equal(done.Location, "https://loja.example/ok")
	is.Equal(e.Do("GET", "/v1/onboarding-sessions/"+r.Str("id"), e.Test, nil).Str("status"), "submitted")
	e.review()
	is.Equal(e.org(e.Test, e.Org.ID).Str("activation_status"), "active")

	// One open session per organization: a platform's session blocks an onboarding session.
	conn := p.connect("Conectada", "52998224725")
	is.Equal(p.session(p.Test, conn).Status, 200)
	connKey := e.NewKey(conn, false, domain.ScopeRead, domain.ScopeWrite)
	r = e.Do("POST", "/v1/onboarding-sessions", connKey, map[string]any{"return_url": "https://x.example"})
	is.Equal(r.Status, 409)
	is.Equal(r.ErrCode(), "resource_state_conflict")
}

// TestPayoutAccounts covers SPEC 4.9: live only, 409 sandbox_unsupported with a test key.
func TestPayoutAccounts(t *testing.T) {
	e := newEnv(t)
	for _, rt := range [][2]string{{"GET", "/v1/payout-accounts"}, {"POST", "/v1/payout-accounts"}, {"GET", "/v1/payout-accounts/pa_x"}, {"POST", "/v1/payout-accounts/pa_x/disconnect"}} {
		t.Run("test key "+rt[0]+" "+rt[1], func(t *testing.T) {
			is := is.New(t)
			var body any
			if rt[0] == "POST" {
				body = map[string]any{"bank_code": "001", "branch": "0001", "account_number": "12345-6"}
			}
			r := e.Do(rt[0], rt[1], e.Test, body)
			is.Equal(r.Status, 409)
			is.Equal(r.ErrCode(), "sandbox_unsupported")
		})
	}

	is := is.New(t)
	r := e.Do("POST", "/v1/payout-accounts", e.Live, map[string]any{"bank_code": "341", "branch": "1234", "account_number": "98765-4"})
	is.Equal(r.Status, 422) // the organization has no document yet
	is.Equal(e.Do("POST", "/v1/organizations/"+e.Org.ID, e.Live, map[string]any{"document": "52998224725"}).Status, 200)
	for _, tc := range []struct {
		body  map[string]any
		param string
	}{
		{map[string]any{"branch": "1234", "account_number": "98765-4"}, "bank_code"},
		{map[string]any{"bank_code": "34", "branch": "1234", "account_number": "98765-4"}, "bank_code"},
		{map[string]any{"bank_code": "341", "branch": "12a4", "account_number": "98765-4"}, "branch"},
		{map[string]any{"bank_code": "341", "branch": "1234", "account_number": "abc"}, "account_number"},
		{map[string]any{"bank_code": "341", "branch": "1234", "account_number": "98765-4", "account_type": "gold"}, "account_type"},
		{map[string]any{"bank_code": "341", "branch": "1234", "account_number": "98765-4", "holder_document": "11222333000181"}, "holder_document"},
	} {
		r := e.Do("POST", "/v1/payout-accounts", e.Live, tc.body)
		is.Equal(r.Status, 400)
		is.Equal(r.ErrParam(), tc.param)
	}
	a := e.Do("POST", "/v1/payout-accounts", e.Live, map[string]any{"bank_code": "341", "branch": "1234", "account_number": "98765-4", "account_type": "savings"})
	is.Equal(a.Status, 200)
	is.True(strings.HasPrefix(a.Str("id"), "pa_"))
	is.Equal(a.Str("object"), "payout_account")
	is.Equal(a.Str("status"), "connected")
	is.Equal(a.Str("last4"), "7654")
	is.Equal(a.Str("holder_document"), "52998224725")
	_, leaked := a.Body["account_number"]
	is.True(!leaked) // only the last four digits are shown
	is.Equal(e.org(e.Live, e.Org.ID).Body["payout_account"].(map[string]any)["id"], a.Str("id"))
	b := e.Do("POST", "/v1/payout-accounts", e.Live, map[string]any{"bank_code": "001", "branch": "0001-9", "account_number": "11111-1"})
	is.Equal(e.org(e.Live, e.Org.ID).Body["payout_account"].(map[string]any)["id"], b.Str("id")) // the newest receives payouts
	is.Equal(e.Do("GET", "/v1/payout-accounts", e.Live, nil).IDs(), []string{b.Str("id"), a.Str("id")})
	is.Equal(e.Do("GET", "/v1/payout-accounts/"+a.Str("id"), e.Live, nil).Status, 200)

	stray := e.Do("POST", "/v1/payout-accounts/"+b.Str("id")+"/disconnect", e.Live, map[string]any{"reason": "x"})
	is.Equal(stray.Status, 400) // disconnect takes no parameter: an unknown one is refused, not ignored
	is.Equal(stray.ErrParam(), "reason")
	is.Equal(e.Do("GET", "/v1/payout-accounts/"+b.Str("id"), e.Live, nil).Str("status"), "connected") // and nothing changed
	d := e.Do("POST", "/v1/payout-accounts/"+b.Str("id")+"/disconnect", e.Live, nil)
	is.Equal(d.Status, 200)
	is.Equal(d.Str("status"), "disconnected")
	is.True(d.Body["disconnected_at"] != nil)
	is.Equal(e.org(e.Live, e.Org.ID).Body["payout_account"].(map[string]any)["id"], a.Str("id")) // falls back to the other one
	again := e.Do("POST", "/v1/payout-accounts/"+b.Str("id")+"/disconnect", e.Live, nil)
	is.Equal(again.Status, 409)
	is.Equal(again.ErrCode(), "resource_state_conflict")
	is.Equal(e.Do("POST", "/v1/payout-accounts/"+a.Str("id")+"/disconnect", e.Live, nil).Status, 200)
	is.Equal(e.org(e.Live, e.Org.ID).Body["payout_account"], nil)
	is.Equal(e.Do("GET", "/v1/payout-accounts?status=connected", e.Live, nil).IDs(), []string(nil))
	evs := e.orgEvents(e.Live, e.Org.ID)
	is.Equal(len(evs), 5) // the document, then each change of payout_account

	other, _ := e.NewOrg("Vizinha", false)
	otherKey := e.NewKey(other.ID, true, domain.ScopeRead, domain.ScopeWrite)
	is.Equal(e.Do("GET", "/v1/payout-accounts/"+a.Str("id"), otherKey, nil).Status, 404)
	is.Equal(e.Do("POST", "/v1/payout-accounts/"+a.Str("id")+"/disconnect", otherKey, nil).Status, 404)
	is.Equal(len(e.Do("GET", "/v1/payout-accounts", otherKey, nil).IDs()), 0)
}
