package domain

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
)

// API key scopes of SPEC 5.
const (
	ScopeRead          = "read"
	ScopeWrite         = "write"
	ScopeAdmin         = "admin"
	ScopePlatformAdmin = "platform_admin"
)

// Token prefixes of SPEC 5.
const (
	TokenPrefixLive = "ch_live_"
	TokenPrefixTest = "ch_test_"
	tokenBodyLen    = 43
)

// APIKey is an organization's credential. Only the SHA-256 of the token is ever stored.
type APIKey struct {
	ID           string   `json:"id"`
	Object       string   `json:"object"`
	Organization string   `json:"organization"`
	Name         string   `json:"name"`
	Scopes       []string `json:"scopes"`
	Environment  string   `json:"environment"`
	Livemode     bool     `json:"livemode"`
	TokenHint    string   `json:"token_hint"`
	CreatedAt    Time     `json:"created_at"`
	ExpiresAt    Time     `json:"expires_at"`
	LastUsedAt   Time     `json:"last_used_at"`
	RevokedAt    Time     `json:"revoked_at"`
	RevokedBy    *string  `json:"revoked_by"`
	RevokeReason *string  `json:"revoke_reason"`
	// Token is set only in the response that creates the key.
	Token string `json:"token,omitempty"`

	TokenHash string `json:"-"`
}

// Platform reports whether the key is a platform key.
func (k *APIKey) Platform() bool { return slices.Contains(k.Scopes, ScopePlatformAdmin) }

// Allows reports whether the key's scopes include need; read < write < admin are hierarchical and
// platform_admin is exclusive (SPEC 5.5).
func (k *APIKey) Allows(need string) bool {
	if need == ScopePlatformAdmin {
		return k.Platform()
	}
	if k.Platform() {
		return false
	}
	rank := map[string]int{ScopeRead: 1, ScopeWrite: 2, ScopeAdmin: 3}
	have := 0
	for _, s := range k.Scopes {
		have = max(have, rank[s])
	}
	return have >= rank[need]
}

// NormalizeScopes validates a scope list: platform_admin stands alone; organization scopes are
// read, write, admin. The default is read+write.
func NormalizeScopes(scopes []string) ([]string, error) {
	if len(scopes) == 0 {
		return []string{ScopeRead, ScopeWrite}, nil
	}
	out := []string{}
	for _, s := range scopes {
		s = strings.TrimSpace(s)
		switch s {
		case ScopeRead, ScopeWrite, ScopeAdmin, ScopePlatformAdmin:
		default:
			return nil, Invalid("scopes", "unknown scope %q: use read, write, admin or platform_admin.", s)
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if slices.Contains(out, ScopePlatformAdmin) && len(out) > 1 {
		return nil, Invalid("scopes", "platform_admin cannot be combined with other scopes.")
	}
	return out, nil
}

// NewToken makes a token for the environment: ch_live_ or ch_test_ plus 32 random bytes in
// unpadded base64url (43 characters).
func NewToken(livemode bool) string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("domain: crypto/rand failed: " + err.Error())
	}
	prefix := TokenPrefixTest
	if livemode {
		prefix = TokenPrefixLive
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// ParseToken checks the exact token shape and returns its environment. Stray whitespace, a wrong
// prefix or a body of the wrong length or alphabet are all rejected.
func ParseToken(token string) (livemode bool, err error) {
	var body string
	switch {
	case strings.HasPrefix(token, TokenPrefixLive):
		livemode, body = true, token[len(TokenPrefixLive):]
	case strings.HasPrefix(token, TokenPrefixTest):
		body = token[len(TokenPrefixTest):]
	default:
		return false, fmt.Errorf("token must start with %s or %s", TokenPrefixLive, TokenPrefixTest)
	}
	if len(body) != tokenBodyLen {
		return false, fmt.Errorf("token body must be %d characters", tokenBodyLen)
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false, fmt.Errorf("token body must be base64url")
		}
	}
	if _, err := base64.RawURLEncoding.DecodeString(body); err != nil {
		return false, fmt.Errorf("token body must be base64url")
	}
	return livemode, nil
}

// HashToken is the only form in which a token is stored.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// TokenHint is a non-secret reminder of a token for listings: its prefix and last four characters.
func TokenHint(token string) string {
	if len(token) < 12 {
		return "…"
	}
	return token[:8] + "…" + token[len(token)-4:]
}

// Expired reports whether the key has an expiry at or before now.
func (k *APIKey) Expired(now time.Time) bool {
	return !k.ExpiresAt.IsZero() && !now.Before(k.ExpiresAt.Time)
}
