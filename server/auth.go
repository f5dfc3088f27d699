package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"troco/db"
	"troco/server/domain"
)

// authenticate resolves the caller of a /v1 request (SPEC 5): the key from either header, its
// state, its scope for need, and the Organization header for platform keys. A refused request
// whose key was found (revoked, expired, missing scope) returns the key's info with the error.
func (s *Server) authenticate(r *http.Request, need string) (*authInfo, error) {
	token, err := bearerToken(r)
	if err != nil {
		return nil, err
	}
	livemode, err := domain.ParseToken(token)
	if err != nil {
		return nil, domain.Unauthenticated("Invalid API key: " + err.Error() + ".")
	}
	hash := domain.HashToken(token)
	var key *domain.APIKey
	var target, platform *domain.Organization
	orgHeader := r.Header.Get("Organization")
	// The key is one indexed lookup, run without a transaction (it sees the latest commit, so a
	// revocation applies to the next request); a platform key then reads its organizations.
	err = s.db.ReadOne(r.Context(), func(tx *db.Tx) error {
		var err error
		key, err = tx.FindAPIKeyByHash(hash)
		return err
	})
	if err == nil && key.Platform() {
		err = s.db.Read(r.Context(), func(tx *db.Tx) error {
			var err error
			if platform, err = tx.FindOrganizationByID(key.Organization); err != nil {
				return err
			}
			if orgHeader != "" && utf8.ValidString(orgHeader) {
				// Routing needs the target active in the key's environment (activation is per environment).
				// A header that is not UTF-8 names no organization (PostgreSQL refuses such text).
				target, err = tx.FindOrganizationInMode(orgHeader, key.Livemode)
				if errors.Is(err, db.ErrNotFound) {
					target, err = nil, nil
				}
			}
			return err
		})
	}
	if errors.Is(err, db.ErrNotFound) {
		return nil, domain.Unauthenticated("Invalid API key provided.")
	}
	if err != nil {
		return nil, err
	}
	// The index lookup is by hash; compare the full hash in constant time as well.
	if subtle.ConstantTimeCompare([]byte(key.TokenHash), []byte(hash)) != 1 || key.Livemode != livemode {
		return nil, domain.Unauthenticated("Invalid API key provided.")
	}
	now := s.cfg.Clock.Now()
	// A refused known key still names its organization, so the refusal is in its request log.
	known := &authInfo{Key: key, Actor: domain.Actor{Scope: domain.Scope{OrgID: key.Organization, Livemode: key.Livemode}, KeyID: key.ID}}
	switch {
	case !key.RevokedAt.IsZero():
		return known, domain.Unauthenticated("This API key was revoked.")
	case key.Expired(now):
		return known, domain.Unauthenticated("This API key has expired.")
	}
	s.touchKey(key, now.Unix())

	// A platform key whose Organization header names the platform itself or one of its connected
	// organizations (of any status) may call platform endpoints: the header is redundant there.
	ownHeader := key.Platform() && orgHeader != "" && platformOwns(platform, target, orgHeader)
	// Organization endpoints that platforms also call (platformOr): a platform key acts as its
	// platform without the header, or when the header names one of its own organizations that
	// routing cannot reach (the platform itself, a connected organization not yet active); every
	// other key is checked as usual.
	if scope, ok := strings.CutPrefix(need, needPlatformOrPrefix); ok {
		need = scope
		if key.Platform() && (orgHeader == "" || orgHeader == platform.ID || ownHeader && target.ActivationStatus != domain.ActivationActive) {
			need = domain.ScopePlatformAdmin
		}
	} else if scope, ok := strings.CutPrefix(need, needPlatformOwnPrefix); ok {
		need = scope
		if key.Platform() && (orgHeader == "" || orgHeader == platform.ID) {
			need = domain.ScopePlatformAdmin
		}
	}
	info := &authInfo{Key: key, Actor: domain.Actor{Scope: domain.Scope{OrgID: key.Organization, Livemode: key.Livemode}, KeyID: key.ID, RequestID: requestID(r.Context())}}
	switch {
	case need == domain.ScopePlatformAdmin:
		if !key.Platform() {
			return info, domain.Forbidden("This endpoint requires a platform key (scope platform_admin).")
		}
		if !platform.PlatformActive() {
			return info, domain.Conflict(domain.CodeResourceStateConflict, "The platform is not active or its split rules are not configured.")
		}
		if orgHeader != "" && !ownHeader {
			return info, domain.Forbidden("The Organization header must name this platform or one of its connected organizations.")
		}
	case key.Platform():
		if orgHeader == "" {
			return info, domain.Forbidden("A platform key must name the connected organization in the Organization header.")
		}
		if !platform.PlatformActive() {
			return info, domain.Conflict(domain.CodeResourceStateConflict, "The platform is not active or its split rules are not configured.")
		}
		if target == nil || target.ConnectedPlatform == nil || *target.ConnectedPlatform != *platform.Platform || target.ActivationStatus != domain.ActivationActive {
			return info, domain.Forbidden("The Organization header must name an active organization connected to this platform.")
		}
		info.Platform = platform
		info.Actor.OrgID = target.ID
	default:
		if orgHeader != "" && orgHeader != key.Organization {
			return info, domain.Forbidden("An organization key acts only on its own organization.")
		}
		if !key.Allows(need) {
			return info, domain.Forbidden("This API key does not have the " + need + " scope required for this request.")
		}
	}
	return info, nil
}

// bearerToken extracts the token from Authorization: Bearer or X-Service-Api-Key, rejecting
// stray whitespace and conflicting headers.
func bearerToken(r *http.Request) (string, error) {
	authz := r.Header.Values("Authorization")
	alt := r.Header.Values("X-Service-Api-Key")
	if len(authz)+len(alt) == 0 {
		return "", domain.Unauthenticated("No API key provided. Send it as Authorization: Bearer <API_KEY> or X-Service-Api-Key: <API_KEY>.")
	}
	if len(authz) > 1 || len(alt) > 1 {
		return "", domain.Unauthenticated("Send exactly one API key.")
	}
	var token string
	if len(authz) == 1 {
		scheme, rest, ok := strings.Cut(authz[0], " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return "", domain.Unauthenticated("The Authorization header must be 'Bearer <API_KEY>'.")
		}
		token = rest
	}
	if len(alt) == 1 {
		if token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(alt[0])) != 1 {
			return "", domain.Unauthenticated("Authorization and X-Service-Api-Key carry different keys.")
		}
		token = alt[0]
	}
	var a, x string
	if len(authz) == 1 {
		a = authz[0]
	}
	if len(alt) == 1 {
		x = alt[0]
	}
	if token == "" || strings.ContainsAny(token, " \t\r\n") || strayKeyWhitespace(r, a, x) {
		return "", domain.Unauthenticated("Invalid API key: the key contains whitespace or is empty.")
	}
	return token, nil
}

// touchKey records last_used_at without holding up the request: at most one queued write per key
// per second from this process.
func (s *Server) touchKey(k *domain.APIKey, now int64) {
	if !k.LastUsedAt.IsZero() && k.LastUsedAt.Unix() >= now {
		return
	}
	if prev, ok := s.touched.Load(k.ID); ok && prev.(int64) >= now {
		return
	}
	s.touched.Store(k.ID, now)
	go func() {
		_ = s.db.Write(context.Background(), func(tx *db.Tx) error { return tx.TouchAPIKey(k.ID) })
	}()
}

// platformOwns reports whether the Organization header names the platform's own organization or
// an organization connected to it (target is the header's organization, nil when unknown).
func platformOwns(platform, target *domain.Organization, orgHeader string) bool {
	if orgHeader == platform.ID {
		return true
	}
	return target != nil && target.ConnectedPlatform != nil && platform.Platform != nil && *target.ConnectedPlatform == *platform.Platform
}
