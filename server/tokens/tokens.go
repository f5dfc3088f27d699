// Package tokens issues and verifies the access tokens of /api/v1: JWTs signed by troco with
// EdDSA (Ed25519) through go-jose, a key id (kid) per signing key, the public keys published as a
// JWKS. Signing keys are stored in the database with their private half sealed by the master key
// of the data dir, so every replica signs and verifies with the same keys; rotation keeps the
// previous key published until the tokens it signed have expired.
package tokens

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"troco/db"
	"troco/server/domain"
	"troco/server/secrets"
)

// Lifetime is the validity of an access token (expires_in).
const Lifetime = time.Hour

// Claims are the claims of a troco access token.
type Claims struct {
	jwt.Claims
	Org      string `json:"org"`
	Livemode bool   `json:"livemode"`
	Scope    string `json:"scope"`
}

// Issuer signs and verifies access tokens.
type Issuer struct {
	// Iss is the iss claim (the server's base URL); Audience the aud claim every token carries.
	Iss, Audience string
	Keyring       *secrets.Keyring

	mu     sync.RWMutex
	public map[string]ed25519.PublicKey // kid → key, filled on demand (keys never change)
}

// New returns an Issuer; base is the server's base URL.
func New(base string, k *secrets.Keyring) *Issuer {
	return &Issuer{Iss: base, Audience: base + "/api/v1", Keyring: k, public: map[string]ed25519.PublicKey{}}
}

// NewKey makes a signing key (the current one after tx.RotateSigningKey).
func NewKey(k *secrets.Keyring) (db.SigningKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return db.SigningKey{}, err
	}
	kid := strings.TrimPrefix(domain.NewID("kid_"), "kid_")
	return db.SigningKey{KID: kid, PrivateSealed: k.Seal(base64.RawStdEncoding.EncodeToString(priv.Seed())), PublicKey: pub}, nil
}

// Rotate makes a new current signing key; the previous one stays in the JWKS for Lifetime.
func Rotate(ctx context.Context, d *db.DB, k *secrets.Keyring) (string, error) {
	key, err := NewKey(k)
	if err != nil {
		return "", err
	}
	return key.KID, d.Write(ctx, func(tx *db.Tx) error { return tx.RotateSigningKey(key) })
}

// Issue signs an access token for key, creating the first signing key when there is none.
func (i *Issuer) Issue(tx *db.Tx, key *domain.APIKey) (string, error) {
	keys, err := tx.SigningKeys(tx.Now.Add(-Lifetime).Unix())
	if err != nil {
		return "", err
	}
	var cur *db.SigningKey
	for n := range keys {
		if keys[n].RetiredAt == nil {
			cur = &keys[n]
			break
		}
	}
	if cur == nil {
		k, err := NewKey(i.Keyring)
		if err != nil {
			return "", err
		}
		if err := tx.RotateSigningKey(k); err != nil {
			return "", err
		}
		cur = &k
	}
	seedB64, err := i.Keyring.Open(cur.PrivateSealed)
	if err != nil {
		return "", err
	}
	seed, err := base64.RawStdEncoding.DecodeString(seedB64)
	if err != nil || len(seed) != ed25519.SeedSize {
		return "", errors.New("tokens: corrupt signing key")
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: ed25519.NewKeyFromSeed(seed)},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", cur.KID))
	if err != nil {
		return "", err
	}
	now := tx.Now
	c := Claims{
		Claims: jwt.Claims{Issuer: i.Iss, Subject: key.ID, Audience: jwt.Audience{i.Audience}, ID: domain.NewID("jti_"),
			IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(Lifetime))},
		Org: key.Organization, Livemode: key.Livemode, Scope: strings.Join(key.Scopes, " "),
	}
	return jwt.Signed(signer).Claims(c).Serialize()
}

// ErrInvalid is wrapped by every verification failure; the message says what was wrong.
var ErrInvalid = errors.New("invalid access token")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// Verify checks a troco access token: EdDSA only (alg none and every other algorithm refused),
// a known kid, the signature, iss, aud, nbf and exp at now.
func (i *Issuer) Verify(ctx context.Context, d *db.DB, raw string, now time.Time) (*Claims, error) {
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		return nil, invalid("not a signed EdDSA JWT (%v)", err)
	}
	if len(tok.Headers) != 1 || tok.Headers[0].KeyID == "" {
		return nil, invalid("the token names no signing key (kid)")
	}
	pub, err := i.publicKey(ctx, d, tok.Headers[0].KeyID, now)
	if err != nil {
		return nil, err
	}
	var c Claims
	if err := tok.Claims(pub, &c); err != nil {
		return nil, invalid("bad signature")
	}
	if err := c.ValidateWithLeeway(jwt.Expected{Issuer: i.Iss, AnyAudience: jwt.Audience{i.Audience}, Time: now}, 0); err != nil {
		return nil, invalid("%s", claimProblem(err))
	}
	if c.Subject == "" || c.Org == "" {
		return nil, invalid("the token names no API key or organization")
	}
	return &c, nil
}

func (i *Issuer) publicKey(ctx context.Context, d *db.DB, kid string, now time.Time) (ed25519.PublicKey, error) {
	i.mu.RLock()
	pub, ok := i.public[kid]
	i.mu.RUnlock()
	if ok {
		return pub, nil
	}
	var keys []db.SigningKey
	if err := d.Read(ctx, func(tx *db.Tx) error {
		var err error
		keys, err = tx.SigningKeys(now.Add(-Lifetime).Unix())
		return err
	}); err != nil {
		return nil, err
	}
	for _, k := range keys {
		if k.KID == kid {
			i.mu.Lock()
			i.public[kid] = ed25519.PublicKey(k.PublicKey)
			i.mu.Unlock()
			return k.PublicKey, nil
		}
	}
	return nil, invalid("unknown signing key %q", kid)
}

// JWKS returns the public keys: the current one and those retired less than Lifetime ago.
func JWKS(tx *db.Tx) (jose.JSONWebKeySet, error) {
	keys, err := tx.SigningKeys(tx.Now.Add(-Lifetime).Unix())
	if err != nil {
		return jose.JSONWebKeySet{}, err
	}
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}
	for _, k := range keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: ed25519.PublicKey(k.PublicKey), KeyID: k.KID, Algorithm: string(jose.EdDSA), Use: "sig"})
	}
	return set, nil
}

// claimProblem says in the API's words which claim refused a token (the library's messages name
// the library).
func claimProblem(err error) string {
	switch {
	case errors.Is(err, jwt.ErrExpired):
		return "it has expired (exp); ask POST /api/v1/oauth/token for a new one"
	case errors.Is(err, jwt.ErrNotValidYet), errors.Is(err, jwt.ErrIssuedInTheFuture):
		return "it is not valid yet (nbf, iat)"
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return "it was issued by another issuer (iss)"
	case errors.Is(err, jwt.ErrInvalidAudience):
		return "it is for another audience (aud)"
	}
	return err.Error()
}
