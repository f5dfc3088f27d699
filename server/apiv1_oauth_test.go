package server_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"

	"troco/db"
	"troco/server/domain"
)

// TestOAuthTokenErrors: POST /api/v1/oauth/token answers the errors of RFC 6749 5.2: a missing
// or repeated parameter and two ways of sending the credentials are invalid_request, another
// grant is unsupported_grant_type, bad credentials invalid_client (401), a platform key (a real
// client that may not use this grant) unauthorized_client, a scope beyond the key's invalid_scope.
func TestOAuthTokenErrors(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	key := e.newKeyFull(e.Org.ID, domain.ScopeRead, domain.ScopeWrite)
	_, platToken := e.NewPlatform("Plataforma Ltda")
	var plat *domain.APIKey
	is.NoErr(e.DB.Read(context.Background(), func(tx *db.Tx) error {
		var err error
		plat, err = tx.FindAPIKeyByHash(domain.HashToken(platToken))
		return err
	}))
	plat.Token = platToken
	post := func(body string, basic ...string) resp {
		t.Helper()
		req := e.NewRequest("POST", "/api/v1/oauth/token", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if len(basic) == 2 {
			req.SetBasicAuth(basic[0], basic[1])
		}
		r, err := e.Send(req)
		is.NoErr(err)
		return r
	}
	creds := url.Values{"client_id": {key.ID}, "client_secret": {key.Token}}
	with := func(extra url.Values) string {
		v := url.Values{}
		for k, vs := range creds {
			v[k] = vs
		}
		for k, vs := range extra {
			v[k] = append(v[k], vs...)
		}
		return v.Encode()
	}
	for _, tc := range []struct {
		name, body string
		basic      []string
		status     int
		code       string
	}{
		{"no grant_type", with(nil), nil, 400, "invalid_request"},
		{"empty grant_type", with(url.Values{"grant_type": {""}}), nil, 400, "invalid_request"},
		{"other grant", with(url.Values{"grant_type": {"password"}}), nil, 400, "unsupported_grant_type"},
		{"grant_type twice", with(url.Values{"grant_type": {"client_credentials", "client_credentials"}}), nil, 400, "invalid_request"},
		{"scope twice", with(url.Values{"grant_type": {"client_credentials"}, "scope": {"read", "write"}}), nil, 400, "invalid_request"},
		{"basic and body secret", with(url.Values{"grant_type": {"client_credentials"}}), []string{key.ID, key.Token}, 400, "invalid_request"},
		{"no credentials", "grant_type=client_credentials", nil, 401, "invalid_client"},
		{"wrong secret", "grant_type=client_credentials&client_id=" + key.ID + "&client_secret=" + url.QueryEscape(key.Token+"x"), nil, 401, "invalid_client"},
		{"platform key", "grant_type=client_credentials&client_id=" + plat.ID + "&client_secret=" + url.QueryEscape(plat.Token), nil, 400, "unauthorized_client"},
		{"wider scope", with(url.Values{"grant_type": {"client_credentials"}, "scope": {"platform_admin"}}), nil, 400, "invalid_scope"},
	} {
		r := post(tc.body, tc.basic...)
		if r.Status != tc.status || r.Str("error") != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, r.Status, r.Raw, tc.status, tc.code)
		}
		is.True(r.Str("error_description") != "")
		is.Equal(r.Header.Get("Cache-Control"), "no-store")
	}
	// Basic alone, and the body alone, still get a token.
	is.Equal(post("grant_type=client_credentials", key.ID, key.Token).Status, 200)
	is.Equal(post(with(url.Values{"grant_type": {"client_credentials"}})).Status, 200)
}
