package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
)

// TestAuthHeaders covers SPEC 5.1, 5.2 and 5.11: how the key is sent and what a well-formed
// token looks like. Every failure is a 401 authentication_failed of type authentication_error.
func TestAuthHeaders(t *testing.T) {
	e := newEnv(t)
	tok := e.Test
	body := strings.TrimPrefix(tok, domain.TokenPrefixTest)
	other := e.NewKey(e.Org.ID, false, domain.ScopeRead, domain.ScopeWrite)

	cases := []struct {
		name       string
		headers    []string // name, value pairs
		method     string
		path       string
		wantStatus int
		wantCode   string
	}{
		{"missing key", nil, "GET", "/v1/customers", 401, "authentication_failed"},
		{"missing key on a write", nil, "POST", "/v1/customers", 401, "authentication_failed"},
		{"Authorization Bearer", []string{"Authorization", "Bearer " + tok}, "GET", "/v1/customers", 200, ""},
		{"X-Service-Api-Key", []string{"X-Service-Api-Key", tok}, "GET", "/v1/customers", 200, ""},
		{"X-Service-Api-Key on a write", []string{"X-Service-Api-Key", tok}, "POST", "/v1/customers", 200, ""},
		{"both headers with the same key", []string{"Authorization", "Bearer " + tok, "X-Service-Api-Key", tok}, "GET", "/v1/customers", 200, ""},
		{"both headers with different keys", []string{"Authorization", "Bearer " + tok, "X-Service-Api-Key", other}, "GET", "/v1/customers", 401, "authentication_failed"},
		{"scheme is case-insensitive", []string{"Authorization", "bearer " + tok}, "GET", "/v1/customers", 200, ""},
		{"no scheme", []string{"Authorization", tok}, "GET", "/v1/customers", 401, "authentication_failed"},
		{"Basic scheme", []string{"Authorization", "Basic " + tok}, "GET", "/v1/customers", 401, "authentication_failed"},
		{"empty bearer", []string{"Authorization", "Bearer "}, "GET", "/v1/customers", 401, "authentication_failed"},
		{"wrong prefix ch_prod_", []string{"Authorization", "Bearer ch_prod_" + body}, "GET", "/v1/customers", 401, "authentication_failed"},
		{"wrong prefix sk_test_", []string{"Authorization", "Bearer sk_test_" + body}, "GET", "/v1/customers", 401, "authentication_failed"},
		{"prefix without body", []string{"Authorization", "Bearer ch_test_"}, "GET", "/v1/customers", 401, "authentication_failed"},
		{"test body under live prefix", []string{"Authorization", "Bearer ch_live_" + body}, "GET", "/v1/customers", 401, "authentication_failed"},
		{"body one character short", []string{"Authorization", "Bearer " + tok[:len(tok)-1]}, "GET", "/v1/customers", 401, "authentication_failed"},
		{"body one character long", []string{"Authorization", "Bearer " + tok + "A"}, "GET", "/v1/customers", 401, "authentication_failed"},
		{"body with padding", []string{"Authorization", "Bearer " + tok + "="}, "GET", "/v1/customers", 401, "authentication_failed"},
		{"non-base64url character +", []string{"Authorization", "Bearer " + tok[:len(tok)-1] + "+"}, "GET", "/v1/customers", 401, "authentication_failed"},
		{"non-base64url character /", []string{"Authorization", "Bearer " + tok[:len(tok)-1] + "/"}, "GET", "/v1/customers", 401, "authentication_failed"},
		{"non-base64url character .", []string{"Authorization", "Bearer " + tok[:len(tok)-1] + "."}, "GET", "/v1/customers", 401, "authentication_failed"},
		{"double space after Bearer", []string{"Authorization", "Bearer  " + tok}, "GET", "/v1/customers", 401, "authentication_failed"},
		{"tab after Bearer", []string{"Authorization", "Bearer\t" + tok}, "GET", "/v1/customers", 401, "authentication_failed"},
		{"space inside the token", []string{"Authorization", "Bearer " + tok[:12] + " " + tok[12:]}, "GET", "/v1/customers", 401, "authentication_failed"},
		{"tab inside X-Service-Api-Key", []string{"X-Service-Api-Key", tok[:12] + "\t" + tok[12:]}, "GET", "/v1/customers", 401, "authentication_failed"},
		{"Bearer inside X-Service-Api-Key", []string{"X-Service-Api-Key", "Bearer " + tok}, "GET", "/v1/customers", 401, "authentication_failed"},
		{"unknown well-formed test token", []string{"Authorization", "Bearer " + domain.NewToken(false)}, "GET", "/v1/customers", 401, "authentication_failed"},
		{"unknown well-formed live token", []string{"Authorization", "Bearer " + domain.NewToken(true)}, "GET", "/v1/customers", 401, "authentication_failed"},
		{"unknown token on an id route", []string{"Authorization", "Bearer " + domain.NewToken(false)}, "DELETE", "/v1/customers/cus_x", 401, "authentication_failed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			req := e.NewRequest(tc.method, tc.path, nil)
			for i := 0; i+1 < len(tc.headers); i += 2 {
				req.Header.Set(tc.headers[i], tc.headers[i+1])
			}
			r, err := e.Send(req)
			is.NoErr(err)                             // request
			is.Equal(r.Status, tc.wantStatus)         // status
			is.Equal(r.ErrCode(), tc.wantCode)        // error code
			is.True(r.Header.Get("Request-Id") != "") // every answer carries a Request-Id
			if tc.wantStatus == 401 {
				is.Equal(r.ErrType(), domain.TypeAuthentication) // 401s are authentication_error
				is.True(!strings.Contains(string(r.Raw), body))  // the token never echoes back
			}
		})
	}

	t.Run("repeated Authorization header", func(t *testing.T) {
		is := is.New(t)
		req := e.NewRequest("GET", "/v1/customers", nil)
		req.Header.Add("Authorization", "Bearer "+tok)
		req.Header.Add("Authorization", "Bearer "+other)
		r, err := e.Send(req)
		is.NoErr(err)
		is.Equal(r.Status, 401) // two keys in one request are refused
	})
}

// TestAuthKeyLifecycle covers SPEC 5.9 and 5.10: revocation, expiry and last_used_at.
func TestAuthKeyLifecycle(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()

	t.Run("revoked key is refused and revoking twice conflicts", func(t *testing.T) {
		is := is.New(t)
		k, err := e.CreateKey(core.APIKeyInput{OrgID: e.Org.ID, Name: "to revoke"})
		is.NoErr(err)                                                    // create key
		is.Equal(e.Do("GET", "/v1/customers", k.Token, nil).Status, 200) // works before revocation

		var revoked *domain.APIKey
		err = e.DB.Write(ctx, func(tx *db.Tx) error {
			var err error
			revoked, err = core.RevokeAPIKey(tx, k.ID, "ana@acme.test", "leaked in a log")
			return err
		})
		is.NoErr(err)                                 // revoke
		is.True(!revoked.RevokedAt.IsZero())          // revoked_at recorded
		is.Equal(*revoked.RevokedBy, "ana@acme.test") // who revoked
		is.Equal(*revoked.RevokeReason, "leaked in a log")
		is.Equal(revoked.Name, "to revoke") // revoked keys keep their name

		r := e.Do("GET", "/v1/customers", k.Token, nil)
		is.Equal(r.Status, 401)                        // next request fails
		is.Equal(r.ErrCode(), "authentication_failed") // code

		err = e.DB.Write(ctx, func(tx *db.Tx) error {
			_, err := core.RevokeAPIKey(tx, k.ID, "ana@acme.test", "again")
			return err
		})
		de, ok := domain.AsError(err)
		is.True(ok)              // a domain error
		is.Equal(de.Status, 409) // revoking a revoked key is a conflict
		var again *domain.APIKey
		is.NoErr(e.DB.Read(ctx, func(tx *db.Tx) error { again, err = tx.FindAPIKeyByID(k.ID); return err }))
		is.Equal(*again.RevokeReason, "leaked in a log") // the second revoke changed nothing

		err = e.DB.Write(ctx, func(tx *db.Tx) error {
			_, err := core.RevokeAPIKey(tx, "key_doesnotexist", "x", "")
			return err
		})
		de, ok = domain.AsError(err)
		is.True(ok)              // a domain error
		is.Equal(de.Status, 404) // unknown key
	})

	t.Run("last_used_at follows use", func(t *testing.T) {
		is := is.New(t)
		k, err := e.CreateKey(core.APIKeyInput{OrgID: e.Org.ID})
		is.NoErr(err)                  // create key
		is.True(k.LastUsedAt.IsZero()) // never used yet
		before := e.Clock.Now().Truncate(time.Second)
		is.Equal(e.Do("GET", "/v1/customers", k.Token, nil).Status, 200)
		used := waitLastUsed(t, e, k.ID, before)
		is.True(!used.Before(before)) // recorded at the request's time

		e.Clock.Advance(time.Hour)
		later := e.Clock.Now().Truncate(time.Second)
		is.Equal(e.Do("GET", "/v1/customers", k.Token, nil).Status, 200)
		used = waitLastUsed(t, e, k.ID, later)
		is.True(!used.Before(later)) // moves with each use
	})

	t.Run("expired key is refused", func(t *testing.T) {
		is := is.New(t)
		k, err := e.CreateKey(core.APIKeyInput{OrgID: e.Org.ID, ExpiresAt: e.Clock.Now().Add(time.Hour)})
		is.NoErr(err)                                                    // create key with expiry
		is.Equal(e.Do("GET", "/v1/customers", k.Token, nil).Status, 200) // valid before expiry
		e.Clock.Advance(time.Hour + time.Second)
		r := e.Do("GET", "/v1/customers", k.Token, nil)
		is.Equal(r.Status, 401)                                                                    // expired
		is.Equal(r.ErrCode(), "authentication_failed")                                             // code
		is.True(strings.Contains(r.Body["error"].(map[string]any)["message"].(string), "expired")) // says why
	})

	t.Run("expiry must be in the future", func(t *testing.T) {
		is := is.New(t)
		_, err := e.CreateKey(core.APIKeyInput{OrgID: e.Org.ID, ExpiresAt: e.Clock.Now().Add(-time.Minute)})
		de, ok := domain.AsError(err)
		is.True(ok)              // a domain error
		is.Equal(de.Status, 400) // past expiry refused
	})

	t.Run("only the hash is stored", func(t *testing.T) {
		is := is.New(t)
		k, err := e.CreateKey(core.APIKeyInput{OrgID: e.Org.ID})
		is.NoErr(err)
		var found *domain.APIKey
		is.NoErr(e.DB.Read(ctx, func(tx *db.Tx) error { found, err = tx.FindAPIKeyByID(k.ID); return err }))
		is.Equal(found.Token, "")                                              // the clear token is not readable back
		is.Equal(found.TokenHash, domain.HashToken(k.Token))                   // SHA-256 of the token
		is.True(!strings.Contains(found.TokenHint, k.Token[8:len(k.Token)-4])) // the hint hides the body
	})
}

// waitLastUsed polls the asynchronous last_used_at write until it reaches at least min.
func waitLastUsed(t *testing.T, e *testEnv, id string, min time.Time) time.Time {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var k *domain.APIKey
		err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
			var err error
			k, err = tx.FindAPIKeyByID(id)
			return err
		})
		if err != nil {
			t.Fatalf("find key: %v", err)
		}
		if !k.LastUsedAt.IsZero() && !k.LastUsedAt.Before(min) {
			return k.LastUsedAt.Time
		}
		if time.Now().After(deadline) {
			t.Fatalf("last_used_at of %s is %v, want at least %v", id, k.LastUsedAt, min)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAuthScopes covers SPEC 5.4 and 5.5: read < write < admin; platform_admin is exclusive.
func TestAuthScopes(t *testing.T) {
	e := newEnv(t)
	read := e.NewKey(e.Org.ID, false, domain.ScopeRead)
	write := e.NewKey(e.Org.ID, false, domain.ScopeWrite)
	admin := e.NewKey(e.Org.ID, false, domain.ScopeAdmin)
	_, platformKey := e.NewPlatform("Plataforma")

	cust := e.Do("POST", "/v1/customers", e.Test, map[string]any{"name": "Ana"})
	id := cust.Str("id")

	cases := []struct {
		name       string
		token      string
		method     string
		path       string
		wantStatus int
		wantCode   string
	}{
		{"read can list", read, "GET", "/v1/customers", 200, ""},
		{"read can get", read, "GET", "/v1/customers/" + id, 200, ""},
		{"read can list events", read, "GET", "/v1/events", 200, ""},
		{"read cannot create", read, "POST", "/v1/customers", 403, "permission_denied"},
		{"read cannot update", read, "POST", "/v1/customers/" + id, 403, "permission_denied"},
		{"read cannot delete", read, "DELETE", "/v1/customers/" + id, 403, "permission_denied"},
		{"read cannot use a test helper", read, "POST", "/v1/test-helpers/advance-clock", 403, "permission_denied"},
		{"write can list", write, "GET", "/v1/customers", 200, ""},
		{"write can get", write, "GET", "/v1/customers/" + id, 200, ""},
		{"write can create", write, "POST", "/v1/customers", 200, ""},
		{"write can update", write, "POST", "/v1/customers/" + id, 200, ""},
		{"write reaches delete", write, "DELETE", "/v1/customers/cus_doesnotexist", 404, "resource_missing"},
		{"admin can list", admin, "GET", "/v1/customers", 200, ""},
		{"admin can create", admin, "POST", "/v1/customers", 200, ""},
		{"admin reaches delete", admin, "DELETE", "/v1/customers/cus_doesnotexist", 404, "resource_missing"},
		{"platform key without Organization cannot read", platformKey, "GET", "/v1/customers", 403, "permission_denied"},
		{"platform key without Organization cannot write", platformKey, "POST", "/v1/customers", 403, "permission_denied"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			var body any
			if tc.method == "POST" {
				body = map[string]any{}
			}
			r := e.Do(tc.method, tc.path, tc.token, body)
			is.Equal(r.Status, tc.wantStatus)  // status
			is.Equal(r.ErrCode(), tc.wantCode) // code
		})
	}
	t.Run("a denied write changes nothing", func(t *testing.T) {
		is := is.New(t)
		r := e.Do("GET", "/v1/customers/"+id, e.Test, nil)
		is.Equal(r.Status, 200) // read/delete denials left the customer in place
	})
}

// TestAuthPlatform covers SPEC 5.6 and 5.7: platform keys act on active connected organizations
// named by the Organization header; organization keys act only on their own organization.
func TestAuthPlatform(t *testing.T) {
	e := newEnv(t)
	plat, platKey := e.NewPlatform("Plataforma")
	connected := e.CreateOrg(core.OrganizationInput{Name: "Loja Conectada", ConnectedTo: *plat.Platform, ActivationStatus: domain.ActivationActive})
	connectedKey := e.NewKey(connected.ID, false, domain.ScopeRead, domain.ScopeWrite)
	inactive := e.CreateOrg(core.OrganizationInput{Name: "Loja Pendente", ConnectedTo: *plat.Platform})
	other, _ := e.NewPlatform("Outra Plataforma")
	foreign := e.CreateOrg(core.OrganizationInput{Name: "Loja de Outra", ConnectedTo: *other.Platform, ActivationStatus: domain.ActivationActive})

	cases := []struct {
		name       string
		token      string
		orgHeader  string
		method     string
		path       string
		wantStatus int
		wantCode   string
	}{
		{"platform key without header", platKey, "", "GET", "/v1/customers", 403, "permission_denied"},
		{"platform key on active connected org", platKey, connected.ID, "GET", "/v1/customers", 200, ""},
		{"platform key reads the connected org", platKey, connected.ID, "GET", "/v1/organizations/" + connected.ID, 200, ""},
		{"platform key on a not-connected org", platKey, e.Org.ID, "GET", "/v1/customers", 403, "permission_denied"},
		{"platform key on an inactive connected org", platKey, inactive.ID, "GET", "/v1/customers", 403, "permission_denied"},
		{"platform key on another platform's org", platKey, foreign.ID, "GET", "/v1/customers", 403, "permission_denied"},
		{"platform key on an unknown org", platKey, "org_doesnotexist", "GET", "/v1/customers", 403, "permission_denied"},
		{"platform key on a header that is not UTF-8", platKey, "org_\xff\xfe", "GET", "/v1/customers", 403, "permission_denied"}, // never looked up (PostgreSQL answered 500)
		{"platform key on itself", platKey, plat.ID, "GET", "/v1/customers", 403, "permission_denied"},
		{"org key naming another org", e.Test, connected.ID, "GET", "/v1/customers", 403, "permission_denied"},
		{"org key naming another org on a write", e.Test, connected.ID, "POST", "/v1/customers", 403, "permission_denied"},
		{"org key naming its own org", e.Test, e.Org.ID, "GET", "/v1/customers", 200, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			var body any
			if tc.method == "POST" {
				body = map[string]any{}
			}
			var h []string
			if tc.orgHeader != "" {
				h = []string{"Organization", tc.orgHeader}
			}
			r := e.Do(tc.method, tc.path, tc.token, body, h...)
			is.Equal(r.Status, tc.wantStatus)  // status
			is.Equal(r.ErrCode(), tc.wantCode) // code
		})
	}

	t.Run("objects land in the connected organization", func(t *testing.T) {
		is := is.New(t)
		r := e.Do("POST", "/v1/customers", platKey, map[string]any{"email": "via-platform@example.com"}, "Organization", connected.ID)
		is.Equal(r.Status, 200)             // created through the platform
		is.Equal(r.Body["livemode"], false) // the platform key is a test key
		id := r.Str("id")
		is.Equal(e.Do("GET", "/v1/customers/"+id, connectedKey, nil).Status, 200) // the connected org owns it
		is.Equal(e.Do("GET", "/v1/customers/"+id, e.Test, nil).Status, 404)       // nobody else sees it

		ev := e.Do("GET", "/v1/events?type=customer.created", connectedKey, nil)
		is.Equal(ev.Status, 200)
		is.True(len(ev.Data()) == 1)                         // the event is the connected org's
		is.Equal(ev.Data()[0]["organization"], connected.ID) // and names it
	})

	t.Run("an inactive connected org becomes unreachable", func(t *testing.T) {
		is := is.New(t)
		is.NoErr(e.DB.Write(context.Background(), func(tx *db.Tx) error {
			return tx.SetOrganizationActivationStatus(connected.ID, domain.ActivationDisabled)
		}))
		r := e.Do("GET", "/v1/customers", platKey, nil, "Organization", connected.ID)
		is.Equal(r.Status, 403) // no longer active
		is.NoErr(e.DB.Write(context.Background(), func(tx *db.Tx) error {
			return tx.SetOrganizationActivationStatus(connected.ID, domain.ActivationActive)
		}))
	})

	t.Run("platform key creation needs an active platform with split rules", func(t *testing.T) {
		is := is.New(t)
		pending := e.CreateOrg(core.OrganizationInput{Name: "Plataforma Pendente", Platform: true})
		_, err := e.CreateKey(core.APIKeyInput{OrgID: pending.ID, Scopes: []string{domain.ScopePlatformAdmin}})
		de, ok := domain.AsError(err)
		is.True(ok)                                         // a domain error
		is.Equal(de.Status, 409)                            // inactive platform
		is.Equal(de.Code, domain.CodeResourceStateConflict) // code

		noRules := e.CreateOrg(core.OrganizationInput{Name: "Plataforma Sem Regras", Platform: true, ActivationStatus: domain.ActivationActive})
		_, err = e.CreateKey(core.APIKeyInput{OrgID: noRules.ID, Scopes: []string{domain.ScopePlatformAdmin}})
		de, ok = domain.AsError(err)
		is.True(ok)                                         // a domain error
		is.Equal(de.Status, 409)                            // split rules missing
		is.Equal(de.Code, domain.CodeResourceStateConflict) // code

		_, err = e.CreateKey(core.APIKeyInput{OrgID: e.Org.ID, Scopes: []string{domain.ScopePlatformAdmin}})
		de, ok = domain.AsError(err)
		is.True(ok)              // a domain error
		is.Equal(de.Status, 400) // an ordinary organization has no platform keys

		_, err = e.CreateKey(core.APIKeyInput{OrgID: plat.ID, Scopes: []string{domain.ScopePlatformAdmin, domain.ScopeRead}})
		is.True(err != nil) // platform_admin stands alone

		k, err := e.CreateKey(core.APIKeyInput{OrgID: plat.ID, Scopes: []string{domain.ScopePlatformAdmin}})
		is.NoErr(err)                                           // active platform with split rules
		is.Equal(k.Scopes, []string{domain.ScopePlatformAdmin}) // always platform_admin
	})
}

// TestAuthEnvironment covers SPEC 5.3: the key's environment decides livemode, and each
// environment sees only its own data.
func TestAuthEnvironment(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	test := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "t@example.com"})
	live := e.Do("POST", "/v1/customers", e.Live, map[string]any{"email": "l@example.com"})
	is.Equal(test.Status, 200)
	is.Equal(live.Status, 200)
	is.Equal(test.Body["livemode"], false) // ch_test_ → test data
	is.Equal(live.Body["livemode"], true)  // ch_live_ → live data

	lt := e.Do("GET", "/v1/customers", e.Test, nil)
	ll := e.Do("GET", "/v1/customers", e.Live, nil)
	is.Equal(lt.IDs(), []string{test.Str("id")}) // test list holds only test data
	is.Equal(ll.IDs(), []string{live.Str("id")}) // live list holds only live data

	// The environment comes from the stored key, the prefix only has to agree with it.
	k, err := e.CreateKey(core.APIKeyInput{OrgID: e.Org.ID, Livemode: true})
	is.NoErr(err)
	is.True(strings.HasPrefix(k.Token, domain.TokenPrefixLive)) // live keys are ch_live_
	is.Equal(k.Environment, "live")
	req := e.NewRequest("GET", "/v1/customers", nil)
	req.Header.Set("Authorization", "Bearer "+k.Token)
	r, err := e.Send(req)
	is.NoErr(err)
	is.Equal(r.Status, http.StatusOK)
	is.Equal(r.IDs(), []string{live.Str("id")}) // a second live key sees the same live data
}

// TestAuthEveryRoute walks every /v1 route of routes.go (those registered through v1() and the
// confirms registered directly) so that a new route cannot skip the mechanism: a revoked or an
// expired key is 401 authentication_failed everywhere; a read key is 403 permission_denied on
// every POST and DELETE and on platform endpoints, and passes authentication on every other GET;
// a platform key without the Organization header is 403 except on the endpoints that serve it
// (platform, platformOr, platformOwn).
func TestAuthEveryRoute(t *testing.T) {
	e := newEnv(t)
	routes := v1Routes(t)

	revoked, err := e.CreateKey(core.APIKeyInput{OrgID: e.Org.ID, Scopes: []string{domain.ScopeRead, domain.ScopeWrite}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
		_, err := core.RevokeAPIKey(tx, revoked.ID, "sweep", "")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	expiring, err := e.CreateKey(core.APIKeyInput{OrgID: e.Org.ID, Scopes: []string{domain.ScopeRead, domain.ScopeWrite}, ExpiresAt: e.Clock.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour + time.Second)
	read := e.NewKey(e.Org.ID, false, domain.ScopeRead)
	_, platformKey := e.NewPlatform("Plataforma das rotas")

	for _, rt := range routes {
		path := strings.ReplaceAll(rt.path, ":id", "x_doesnotexist")
		var body any
		if rt.method != "GET" {
			body = map[string]any{}
		}
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			is := is.New(t)
			for _, tok := range []string{revoked.Token, expiring.Token} {
				r := e.Do(rt.method, path, tok, body)
				is.Equal(r.Status, 401)                        // revoked or expired
				is.Equal(r.ErrCode(), "authentication_failed") // code
			}
			r := e.Do(rt.method, path, read, body)
			if rt.method != "GET" || rt.need == "platform" {
				is.Equal(r.Status, 403)                    // a read key cannot write, nor call a platform endpoint
				is.Equal(r.ErrCode(), "permission_denied") // code
			} else {
				is.True(r.Status != 401 && r.Status != 403) // a read key reads
			}
			r = e.Do(rt.method, path, platformKey, body)
			if strings.HasPrefix(rt.need, "platform") {
				is.True(r.Status != 401 && r.Status != 403) // endpoints that serve a platform key without the header
			} else {
				is.Equal(r.Status, 403)                    // an organization endpoint needs the Organization header
				is.Equal(r.ErrCode(), "permission_denied") // code
			}
		})
	}
}
