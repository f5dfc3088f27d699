package server_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/matryer/is"

	"troco/server"
)

// localIssuer is an OpenID Connect issuer started by the test: discovery document, JWKS, and
// tokens signed with its ES256 key.
type localIssuer struct {
	srv       *httptest.Server
	key       *ecdsa.PrivateKey
	jwksHits  atomic.Int64
	discovery atomic.Int64
}

func newLocalIssuer(t *testing.T) *localIssuer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	li := &localIssuer{key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		li.discovery.Add(1)
		json.NewEncoder(w).Encode(map[string]any{"issuer": li.srv.URL, "jwks_uri": li.srv.URL + "/jwks",
			"authorization_endpoint": li.srv.URL + "/auth", "token_endpoint": li.srv.URL + "/token", "id_token_signing_alg_values_supported": []string{"ES256"}})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		li.jwksHits.Add(1)
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	})
	li.srv = httptest.NewTLSServer(mux)
	t.Cleanup(li.srv.Close)
	return li
}

func (li *localIssuer) token(t *testing.T, key *ecdsa.PrivateKey, iss, aud string, exp time.Time, extra map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	c := jwt.Claims{Issuer: iss, Subject: "svc-backend", Audience: jwt.Audience{aud}, IssuedAt: jwt.NewNumericDate(time.Now()), Expiry: jwt.NewNumericDate(exp)}
	raw, err := jwt.Signed(signer).Claims(c).Claims(extra).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestAPIV1OIDCIssuer(t *testing.T) {
	is := is.New(t)
	li := newLocalIssuer(t)
	e := newEnv(t, func(c *server.Config) {
		c.OIDCIssuer, c.OIDCAudience, c.OIDCClient = li.srv.URL, "troco-api", li.srv.Client()
	})
	hour := time.Now().Add(time.Hour)
	good := li.token(t, li.key, li.srv.URL, "troco-api", hour, map[string]any{"org": e.Org.ID, "scope": "read write"})
	r := e.Do("POST", "/api/v1/products", good, map[string]any{"name": "Via OIDC"})
	is.Equal(r.Status, 201)
	is.Equal(r.Body["livemode"], false)
	// The product is the organization's: /v1 with its API key sees it.
	is.Equal(e.Do("GET", "/v1/products/"+r.Str("id"), e.Test, nil).Status, 200)
	for i := 0; i < 5; i++ {
		is.Equal(e.Do("GET", "/api/v1/products", good, nil).Status, 200)
	}
	is.Equal(li.discovery.Load(), int64(1)) // discovery once
	is.Equal(li.jwksHits.Load(), int64(1))  // the JWKS is cached

	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	readOnly := li.token(t, li.key, li.srv.URL, "troco-api", hour, map[string]any{"org": e.Org.ID, "scope": "read"})
	bad := map[string]string{
		"expired":        li.token(t, li.key, li.srv.URL, "troco-api", time.Now().Add(-time.Minute), map[string]any{"org": e.Org.ID, "scope": "read"}),
		"wrong audience": li.token(t, li.key, li.srv.URL, "someone-else", hour, map[string]any{"org": e.Org.ID, "scope": "read"}),
		"forged":         li.token(t, other, li.srv.URL, "troco-api", hour, map[string]any{"org": e.Org.ID, "scope": "read"}),
		"wrong issuer":   li.token(t, li.key, "https://evil.example", "troco-api", hour, map[string]any{"org": e.Org.ID, "scope": "read"}),
		"no org":         li.token(t, li.key, li.srv.URL, "troco-api", hour, map[string]any{"scope": "read"}),
		"unknown org":    li.token(t, li.key, li.srv.URL, "troco-api", hour, map[string]any{"org": "org_nope", "scope": "read"}),
	}
	for name, tok := range bad {
		r := e.Do("GET", "/api/v1/products", tok, nil)
		if r.Status != 401 || r.ErrCode() != "authentication_failed" {
			t.Errorf("%s: %d %s", name, r.Status, r.Raw)
		}
	}
	w := e.Do("POST", "/api/v1/products", readOnly, map[string]any{"name": "No"})
	is.Equal(w.Status, 403)
	// A token of another organization sees none of these products.
	org2, _ := e.NewOrg("Other", false)
	tok2 := li.token(t, li.key, li.srv.URL, "troco-api", hour, map[string]any{"org": org2.ID, "scope": "read write"})
	is.Equal(e.Do("GET", "/api/v1/products/"+r.Str("id"), tok2, nil).Status, 404)
	is.Equal(e.Do("DELETE", "/api/v1/products/"+r.Str("id"), tok2, nil).Status, 404)
	is.Equal(len(e.Do("GET", "/api/v1/products", tok2, nil).Data()), 0)
	is.Equal(e.Do("GET", "/api/v1/products/"+r.Str("id"), good, nil).Status, 200) // unchanged
	// The Organization header cannot point a token at another organization (as for access tokens).
	h := e.Do("GET", "/api/v1/products", tok2, nil, "Organization", e.Org.ID)
	is.Equal(h.Status, 403)
	is.Equal(h.ErrCode(), "permission_denied")
	is.Equal(e.Do("GET", "/api/v1/products", good, nil, "Organization", e.Org.ID).Status, 200) // its own is fine
	// platform_admin is never granted by an external issuer: refused at the door, saying so.
	for _, scope := range []string{"platform_admin", "read write platform_admin"} {
		tok := li.token(t, li.key, li.srv.URL, "troco-api", hour, map[string]any{"org": e.Org.ID, "scope": scope})
		for _, path := range []string{"/api/v1/products", "/api/v1/customers"} {
			r := e.Do("GET", path, tok, nil)
			is.Equal(r.Status, 403)
			is.Equal(r.ErrCode(), "permission_denied")
			is.True(strings.Contains(r.ErrMessage(), "platform_admin scope cannot be granted by an external identity provider"))
		}
	}
}
