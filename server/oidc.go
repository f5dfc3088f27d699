package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/coreos/go-oidc/v3/oidc"

	"troco/db"
	"troco/server/domain"
)

// oidcIssuer verifies the JWTs of an external OpenID Connect issuer (serve --oidc-issuer): the
// provider is discovered on first use and its JWKS is fetched and cached by go-oidc (refreshed
// when a token names an unknown kid).
type oidcIssuer struct {
	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier
}

// oidcClaims are the claims troco reads from an external token.
type oidcClaims struct {
	Scope    string `json:"scope"`
	Livemode bool   `json:"livemode"`
}

func (s *Server) oidcVerifier(ctx context.Context) (*oidc.IDTokenVerifier, error) {
	s.oidc.mu.Lock()
	defer s.oidc.mu.Unlock()
	if s.oidc.verifier != nil {
		return s.oidc.verifier, nil
	}
	// The provider outlives the request that discovered it (its key set refreshes later).
	ctx = context.WithoutCancel(ctx)
	if s.cfg.OIDCClient != nil {
		ctx = oidc.ClientContext(ctx, s.cfg.OIDCClient)
	}
	p, err := oidc.NewProvider(ctx, s.cfg.OIDCIssuer)
	if err != nil {
		return nil, fmt.Errorf("oidc discovery of %s: %w", s.cfg.OIDCIssuer, err)
	}
	s.oidc.verifier = p.Verifier(&oidc.Config{ClientID: s.cfg.OIDCAudience, SupportedSigningAlgs: []string{"RS256", "ES256", "EdDSA", "PS256"}, Now: s.cfg.Clock.Now})
	return s.oidc.verifier, nil
}

// unverifiedIssuer reads the iss claim of a JWT to choose its verifier; nothing is trusted
// before the chosen verifier checks the signature.
func unverifiedIssuer(raw string) string {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var c struct {
		Iss string `json:"iss"`
	}
	_ = json.Unmarshal(b, &c)
	return c.Iss
}

// authenticateOIDC verifies a token of the configured external issuer: signature against the
// issuer's JWKS, iss, aud (--oidc-audience), exp; the organization from the org claim (or the one
// named by --oidc-org-claim), the scopes from scope (a token claiming platform_admin is refused:
// that scope is never granted by an external issuer), the environment from livemode (test when
// absent).
func (s *Server) authenticateOIDC(ctx context.Context, raw, need, requestID, orgHeader string) (*authInfo, error) {
	v, err := s.oidcVerifier(ctx)
	if err != nil {
		s.log.ErrorContext(ctx, "oidc discovery failed", "error", err.Error())
		return nil, domain.Unauthenticated("The identity provider cannot be reached to verify this token; retry later.")
	}
	if s.cfg.OIDCClient != nil {
		ctx = oidc.ClientContext(ctx, s.cfg.OIDCClient)
	}
	tok, err := v.Verify(ctx, raw)
	if err != nil {
		return nil, domain.Unauthenticated("Invalid token of the identity provider: " + err.Error() + ".")
	}
	var all map[string]any
	var c oidcClaims
	if err := tok.Claims(&all); err != nil {
		return nil, domain.Unauthenticated("Invalid token of the identity provider: unreadable claims.")
	}
	_ = tok.Claims(&c)
	claim := s.cfg.OIDCOrgClaim
	if claim == "" {
		claim = "org"
	}
	org, _ := all[claim].(string)
	if org == "" {
		return nil, domain.Unauthenticated("The token has no " + claim + " claim naming the organization.")
	}
	err = s.db.ReadOne(ctx, func(tx *db.Tx) error {
		_, err := tx.FindOrganizationByID(org)
		return err
	})
	if err != nil {
		return nil, domain.Unauthenticated("The token's organization does not exist.")
	}
	key := &domain.APIKey{ID: "oidc:" + tok.Subject, Organization: org, Livemode: c.Livemode, Scopes: strings.Fields(c.Scope)}
	info := &authInfo{Key: key, Actor: domain.Actor{Scope: domain.Scope{OrgID: org, Livemode: c.Livemode}, KeyID: key.ID, RequestID: requestID}}
	if key.Platform() {
		// A platform acts on its connected organizations only with its platform_admin API key:
		// a scope an outside issuer asserts cannot grant that.
		return info, domain.Forbidden("The " + domain.ScopePlatformAdmin + " scope cannot be granted by an external identity provider; a platform acts with its platform_admin API key, through /v1 with the Organization header.")
	}
	if !key.Allows(need) {
		return info, domain.Forbidden("This token does not have the " + need + " scope required for this request.")
	}
	if h := orgHeader; h != "" && h != org {
		return info, domain.Forbidden("A token acts only on the organization of its " + claim + " claim.")
	}
	return info, nil
}
