package billing

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"time"

	"troco/db"
	"troco/server/domain"
)

// Lifetimes of a customer portal session (CONTRACT 12).
const (
	PortalURLLifetime     = 5 * time.Minute // the url opens once within this time
	PortalSessionLifetime = time.Hour       // then the browser's session lasts this long
	CustomerTokenLifetime = time.Hour       // customer_session_token
)

// PortalParams is the body of POST /v1/customer-portal-sessions.
type PortalParams struct {
	Customer  *string `json:"customer"`
	ReturnURL *string `json:"return_url"`
	Locale    *string `json:"locale"`
}

// RandomToken returns n random bytes, base64url without padding.
func RandomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("billing: crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// HashToken is how portal tokens are stored: SHA-256, hex.
func HashToken(t string) string {
	sum := sha256.Sum256([]byte(t))
	return hex.EncodeToString(sum[:])
}

// CreatePortalSession creates a customer portal session for a customer of the scope: a url
// (origin + /portal/open/<token>) that opens the hosted portal once within five minutes, and a
// customer_session_token valid one hour, returned only now.
func CreatePortalSession(tx *db.Tx, a domain.Actor, origin string, p PortalParams) (*domain.PortalSession, error) {
	if p.Customer == nil || *p.Customer == "" {
		return nil, domain.Missing("customer")
	}
	cus, err := tx.FindCustomerByID(a.Scope, *p.Customer)
	if errors.Is(err, db.ErrNotFound) {
		return nil, domain.NotFound("customer", "customer", *p.Customer)
	}
	if err != nil {
		return nil, err
	}
	if p.ReturnURL == nil || *p.ReturnURL == "" {
		return nil, domain.Missing("return_url")
	}
	if err := domain.ValidateURL("return_url", *p.ReturnURL, 2048); err != nil {
		return nil, err
	}
	locale := "pt-BR"
	if p.Locale != nil {
		switch *p.Locale {
		case "pt-BR", "en":
			locale = *p.Locale
		case "auto":
			locale = "auto"
		default:
			return nil, domain.Invalid("locale", "locale must be pt-BR, en or auto; got %q.", *p.Locale)
		}
	}
	now := tx.Now.UTC().Truncate(time.Second)
	urlToken := RandomToken(32)
	cst := domain.CustomerSessionTokenPrefix + RandomToken(32)
	ps := &domain.PortalSession{ID: domain.NewID("cps_"), Object: "customer_portal_session", CreatedAt: domain.At(now), Customer: cus.ID,
		ExpiresAt: domain.At(now.Add(PortalURLLifetime)), Livemode: a.Livemode, Locale: locale, ReturnURL: *p.ReturnURL,
		URL: origin + "/portal/open/" + urlToken}
	if err := tx.CreatePortalSession(a.Scope, ps, HashToken(urlToken), now.Add(PortalURLLifetime).Unix(), HashToken(cst), now.Add(CustomerTokenLifetime).Unix()); err != nil {
		return nil, err
	}
	ps.CustomerSessionToken = &cst
	return ps, nil
}
