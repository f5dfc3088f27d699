package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"troco/db"
	"troco/server/domain"
	"troco/server/tokens"
)

// The /api/v1 interface: the same operations as /v1 (package core, checkout, payments), with
// page-numbered lists, 201 + Location on creation, 204 on deletion, access tokens and per-minute
// rate limits. Handlers here only decode, call the operation /v1 calls, and reshape the answer.

// Per-minute rate limits of /api/v1, per token (the API key behind an access token).
const (
	apiV1LivePerMinute = 1000
	apiV1TestPerMinute = 100
	maxPage            = 1_000_000
)

// core wraps an /api/v1 Core handler: bearer authentication (access token or API key) for need,
// the per-minute rate limit, idempotency.
func (s *Server) core(need string, h http.Handler) http.Handler {
	withIdem := s.withIdempotency(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info, err := s.authenticateCore(r, need)
		if err != nil {
			s.refused(w, r, info, start, err)
			return
		}
		if sw, ok := w.(*statusWriter); ok {
			sw.keyIDValue = info.Key.ID
		}
		// The dashboard's request log, as for /v1.
		s.logRequest(w, r, info.Actor.Scope, info.Key.ID, start, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if s.rateLimitedPerMinute(w, r, info.Key) {
				return
			}
			withIdem.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxAuth, info)))
		}))
	})
}

// refused answers a request refused before its handler. When the caller is known (a key or
// token troco verified, refused for its state or scope), the refusal is recorded in its
// organization's request log, as /v1 does: its developer looks there for why.
func (s *Server) refused(w http.ResponseWriter, r *http.Request, known *authInfo, start time.Time, err error) {
	if known == nil {
		s.writeError(w, r, err)
		return
	}
	keyID := known.Actor.KeyID
	s.logRequest(w, r, known.Actor.Scope, keyID, start, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, err)
	}))
}

// authenticateCore accepts an organization API key (ch_…) or an access token (JWT) of
// POST /api/v1/oauth/token. Customer session tokens belong to the customer-portal path. A
// refused caller troco knows (its key or token verified) is returned with the error.
func (s *Server) authenticateCore(r *http.Request, need string) (*authInfo, error) {
	token, err := bearerToken(r)
	if err != nil {
		return nil, err
	}
	switch {
	case strings.HasPrefix(token, "troco_cst_"):
		known, _ := s.customerOfToken(r, token)
		return known, domain.Forbidden("A customer session token is valid only on the customer-portal path (/api/v1/customer-portal/).")
	case strings.HasPrefix(token, "ch_"):
		info, err := s.authenticate(r, need)
		if err != nil {
			return info, err
		}
		if info.Key.Platform() {
			return info, domain.Forbidden("/api/v1 takes organization keys and access tokens; a platform key acts through /v1 with the Organization header.")
		}
		return info, nil
	case strings.Count(token, ".") == 2:
		if iss := unverifiedIssuer(token); s.cfg.OIDCIssuer != "" && iss == s.cfg.OIDCIssuer {
			return s.authenticateOIDC(r.Context(), token, need, requestID(r.Context()), r.Header.Get("Organization"))
		}
		return s.authenticateJWT(r, token, need)
	}
	return nil, domain.Unauthenticated("Invalid credentials: send an access token from POST /api/v1/oauth/token or an organization API key as Authorization: Bearer.")
}

// authenticateJWT verifies a troco access token and the API key it was issued for, so a revoked
// or expired key stops its tokens at once.
func (s *Server) authenticateJWT(r *http.Request, raw, need string) (*authInfo, error) {
	now := s.cfg.Clock.Now()
	c, err := s.tokens.Verify(r.Context(), s.db, raw, now)
	if errors.Is(err, tokens.ErrInvalid) {
		return nil, domain.Unauthenticated(strings.ToUpper(err.Error()[:1]) + err.Error()[1:] + ".")
	}
	if err != nil {
		return nil, err
	}
	var key *domain.APIKey
	err = s.db.ReadOne(r.Context(), func(tx *db.Tx) error {
		var err error
		key, err = tx.FindAPIKeyByID(c.Subject)
		return err
	})
	if errors.Is(err, db.ErrNotFound) {
		return nil, domain.Unauthenticated("Invalid access token: its API key does not exist.")
	}
	if err != nil {
		return nil, err
	}
	// The token is troco's (its signature verified): a refusal from here on is its key's.
	info := &authInfo{Key: key, Actor: domain.Actor{Scope: domain.Scope{OrgID: key.Organization, Livemode: key.Livemode}, KeyID: key.ID, RequestID: requestID(r.Context())}}
	switch {
	case key.Organization != c.Org || key.Livemode != c.Livemode || key.Platform():
		return info, domain.Unauthenticated("Invalid access token: it does not match its API key.")
	case !key.RevokedAt.IsZero():
		return info, domain.Unauthenticated("Invalid access token: its API key was revoked.")
	case key.Expired(now):
		return info, domain.Unauthenticated("Invalid access token: its API key has expired.")
	}
	scoped := *key
	scoped.Scopes = strings.Fields(c.Scope) // the token's scopes, which may be narrower than its key's
	if !scoped.Allows(need) {
		return info, domain.Forbidden("This access token does not have the " + need + " scope required for this request.")
	}
	info.Key = &scoped
	if org := r.Header.Get("Organization"); org != "" && org != key.Organization {
		return info, domain.Forbidden("An access token acts only on its own organization.")
	}
	s.touchKey(key, now.Unix())
	return info, nil
}

// rateLimitedPerMinute applies the /api/v1 limit (100 per minute in test, 1,000 in live) and
// always answers the RateLimit-* headers.
func (s *Server) rateLimitedPerMinute(w http.ResponseWriter, r *http.Request, k *domain.APIKey) bool {
	if !s.cfg.RateLimit {
		return false
	}
	limit := apiV1TestPerMinute
	if k.Livemode {
		limit = apiV1LivePerMinute
	}
	ok, remaining, wait, full := s.limiter.window("api:"+k.ID, limit, time.Minute)
	h := w.Header()
	h.Set("RateLimit-Limit", strconv.Itoa(limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(ceilSeconds(full)))
	if ok {
		return false
	}
	h.Set("Retry-After", strconv.Itoa(max(1, ceilSeconds(wait))))
	s.writeError(w, r, &domain.Error{Status: http.StatusTooManyRequests, Type: domain.TypeRateLimit, Code: domain.CodeRateLimit,
		Message: "Too many requests with this token: " + strconv.Itoa(limit) + " per minute; retry after the Retry-After delay."})
	return true
}

func ceilSeconds(d time.Duration) int { return int(math.Ceil(d.Seconds())) }

// pageQuery parses page (≥ 1, default 1), limit (1..100, default 10), created_at[…] and the
// endpoint's filters; cursor parameters belong to /v1 and are refused.
func pageQuery(r *http.Request, filters ...string) (*listQuery, *int64, error) {
	q := r.URL.Query()
	page := 1
	if vals, ok := q["page"]; ok {
		n, err := strconv.Atoi(vals[0])
		if len(vals) > 1 || err != nil || n < 1 || n > maxPage {
			return nil, nil, domain.Invalid("page", "page must be an integer from 1 to %d.", maxPage)
		}
		page = n
		q.Del("page")
	}
	for _, c := range []string{"starting_after", "ending_before"} {
		if q.Has(c) {
			return nil, nil, domain.Invalid(c, "Received unknown parameter: %s (this interface pages with page and limit).", c)
		}
	}
	r2 := r.Clone(r.Context())
	r2.URL.RawQuery = q.Encode()
	lq, err := parseList(r2, filters...)
	if err != nil {
		return nil, nil, err
	}
	total := new(int64)
	lq.Page, lq.Total = page, total
	return lq, total, nil
}

// pageList is the list shape of /api/v1.
type pageList[T any] struct {
	Data       []T        `json:"data"`
	Pagination pagination `json:"pagination"`
}

type pagination struct {
	Page       int   `json:"page"`
	Limit      int   `json:"limit"`
	Total      int64 `json:"total"`
	TotalPages int64 `json:"total_pages"`
}

func pageOf[T any, U any](q *listQuery, total *int64, items []T, shape func(T) U) pageList[U] {
	out := make([]U, 0, len(items))
	for _, it := range items {
		out = append(out, shape(it))
	}
	pages := (*total + int64(q.Limit) - 1) / int64(q.Limit)
	return pageList[U]{Data: out, Pagination: pagination{Page: q.Page, Limit: q.Limit, Total: *total, TotalPages: pages}}
}

// shaped encodes v in the /api/v1 shape: the /v1 fields with currency codes upper case.
func shaped[T any](v T) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`null`)
	}
	var tree any
	if err := json.Unmarshal(b, &tree); err != nil {
		return b
	}
	upperCurrency(tree)
	out, err := domain.MarshalJSON(tree) // as /v1: & and < stay themselves in URLs
	if err != nil {
		return b
	}
	return out
}

// lowerCurrency rewrites the currency code BRL of a JSON request body to the brl the domain takes
// (metadata values are the caller's own and stay as sent). A body that is not a valid JSON
// object is returned as is, for the decoder to name what is wrong.
func lowerCurrency(body []byte) []byte {
	if !bytes.Contains(body, []byte(`"currency"`)) {
		return body
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' || checkJSONText(trimmed) != nil {
		return body
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var tree any
	if dec.Decode(&tree) != nil || !lowerCurrencyIn(tree) {
		return body
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if enc.Encode(tree) != nil {
		return body
	}
	return out.Bytes()
}

func lowerCurrencyIn(v any) (changed bool) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if k == "metadata" {
				continue
			}
			if c, ok := x.(string); ok && k == "currency" {
				if c == "BRL" { // the code as answered; other spellings stay, for the domain to refuse
					t[k], changed = "brl", true
				}
				continue
			}
			changed = lowerCurrencyIn(x) || changed
		}
	case []any:
		for _, x := range t {
			changed = lowerCurrencyIn(x) || changed
		}
	}
	return changed
}

// upperCurrency upper-cases the currency codes of an answer; metadata values are the caller's
// own and stay as stored.
func upperCurrency(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if k == "metadata" {
				continue
			}
			if s, ok := x.(string); ok && (k == "currency") {
				t[k] = strings.ToUpper(s)
				continue
			}
			upperCurrency(x)
		}
	case []any:
		for _, x := range t {
			upperCurrency(x)
		}
	}
}

// op wraps an operation so its result is reshaped for /api/v1.
func op[T any](f func(tx *db.Tx, a domain.Actor) (T, error)) func(tx *db.Tx, a domain.Actor) (any, error) {
	return func(tx *db.Tx, a domain.Actor) (any, error) {
		v, err := f(tx, a)
		if err != nil {
			return nil, err
		}
		return shaped(v), nil
	}
}

// opAs is op with a resource-specific shape.
func opAs[T any, U any](f func(tx *db.Tx, a domain.Actor) (T, error), shape func(T) U) func(tx *db.Tx, a domain.Actor) (any, error) {
	return func(tx *db.Tx, a domain.Actor) (any, error) {
		v, err := f(tx, a)
		if err != nil {
			return nil, err
		}
		return shape(v), nil
	}
}

// decoded decodes the body into p, answering the 400 itself; it reports success. Currency codes
// may be sent as this interface answers them (BRL) or as /v1 takes them (brl).
func (s *Server) decoded(w http.ResponseWriter, r *http.Request, p any) bool {
	body, err := s.readBody(w, r)
	if err == nil {
		r.Body = io.NopCloser(bytes.NewReader(lowerCurrency(body)))
		err = s.decode(w, r, p)
	}
	if err != nil {
		s.writeError(w, r, err)
		return false
	}
	return true
}

// handleOAuthToken serves POST /api/v1/oauth/token: OAuth 2.0 client credentials (RFC 6749 4.4),
// client_id the API key's id, client_secret its token; the answer is a troco access token with the
// key's scopes and environment. Errors follow RFC 6749 5.2.
func (s *Server) handleOAuthToken() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		oauthErr := func(status int, code, desc string) {
			if status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Basic realm="troco"`)
			}
			writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
		}
		r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
			oauthErr(http.StatusBadRequest, "invalid_request", "The body must be application/x-www-form-urlencoded.")
			return
		}
		if err := r.ParseForm(); err != nil {
			oauthErr(http.StatusBadRequest, "invalid_request", "The body is not a valid form.")
			return
		}
		for _, name := range []string{"grant_type", "client_id", "client_secret", "scope"} {
			if len(r.PostForm[name]) > 1 { // RFC 6749 3.2: a parameter is sent at most once
				oauthErr(http.StatusBadRequest, "invalid_request", "Send "+name+" once.")
				return
			}
		}
		switch r.PostForm.Get("grant_type") {
		case "client_credentials":
		case "":
			oauthErr(http.StatusBadRequest, "invalid_request", "grant_type is required: send grant_type=client_credentials.")
			return
		default:
			oauthErr(http.StatusBadRequest, "unsupported_grant_type", "grant_type must be client_credentials.")
			return
		}
		id, secret, basic := r.BasicAuth()
		if basic && r.PostForm.Has("client_secret") { // RFC 6749 2.3: one authentication method per request
			oauthErr(http.StatusBadRequest, "invalid_request", "Send the client credentials once: in the Authorization header or as client_id and client_secret in the body, not both.")
			return
		}
		if !basic {
			id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
		if id == "" || secret == "" {
			oauthErr(http.StatusUnauthorized, "invalid_client", "Send client_id (the API key's key_… id) and client_secret (its token).")
			return
		}
		// The secret is checked exactly as an API key is, then it must belong to client_id.
		probe := r.Clone(r.Context())
		probe.Header = http.Header{"Authorization": {"Bearer " + secret}}
		info, err := s.authenticate(probe, domain.ScopeRead)
		if e, _ := domain.AsError(err); info != nil && info.Key.ID == id && info.Key.Platform() && (err == nil || e != nil && e.Status == http.StatusForbidden) {
			// The secret is right (a platform key without an Organization header is refused
			// after it is checked), but this client may not use this grant.
			oauthErr(http.StatusBadRequest, "unauthorized_client", "A platform key cannot get access tokens; use an organization's API key.")
			return
		}
		if err != nil || info.Key.ID != id || info.Key.Platform() {
			oauthErr(http.StatusUnauthorized, "invalid_client", "Unknown client, wrong secret, or a revoked or expired key.")
			return
		}
		// A narrower scope may be asked for; the token never carries more than the key.
		granted := *info.Key
		if sc := r.PostForm.Get("scope"); sc != "" {
			granted.Scopes = strings.Fields(sc)
			for _, want := range granted.Scopes {
				if !info.Key.Allows(want) || want == domain.ScopePlatformAdmin {
					oauthErr(http.StatusBadRequest, "invalid_scope", "The key does not have the scope "+want+".")
					return
				}
			}
		}
		var tok string
		err = s.db.Write(r.Context(), func(tx *db.Tx) error {
			var err error
			tok, err = s.tokens.Issue(tx, &granted)
			return err
		})
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int(tokens.Lifetime.Seconds()),
			"scope": strings.Join(granted.Scopes, " ")})
	})
}

// handleJWKS serves the public keys of the access tokens.
func (s *Server) handleJWKS() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var set any
		err := s.db.Read(r.Context(), func(tx *db.Tx) error {
			var err error
			set, err = tokens.JWKS(tx)
			return err
		})
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=300")
		b, _ := json.Marshal(set)
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	})
}
