// Package checkout holds the rules of checkout sessions, payment links and the subscriptions a
// subscription-mode session starts: creation from prices (the frozen snapshot of SPEC 2.4),
// confirmation through the payments engine, expiry, and the asynchronous settlement that moves
// payment_status. The /v1 handlers and the hosted checkout page call the same functions.
package checkout

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/payments"
)

// Lifetime is how long a session stays open (SPEC 8).
const Lifetime = domain.CheckoutSessionLifetimeHours * time.Hour

// Event types of SPEC 6.2.
const (
	EventCreated             = "checkout.session.created"
	EventCompleted           = "checkout.session.completed"
	EventExpired             = "checkout.session.expired"
	EventAsyncPaymentSuccess = "checkout.session.async.payment.succeeded"
	EventAsyncPaymentFailed  = "checkout.session.async.payment.failed"
)

// HostedPath is the path of the hosted checkout page of a session.
func HostedPath(id string) string { return "/checkout/" + id }

// SessionURL is the address the integrator redirects the buyer to: the hosted page with the
// client_secret, so the buyer's browser opens the session without an API key.
func SessionURL(base, id, secret string) string {
	return strings.TrimRight(base, "/") + HostedPath(id) + "?secret=" + url.QueryEscape(secret)
}

// newClientSecret returns 32 random bytes as 64 hex characters (SPEC 2.4: no prefix).
func newClientSecret() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("checkout: crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// SecretMatches compares a presented client_secret with the session's in constant time.
func SecretMatches(cs *domain.CheckoutSession, presented string) bool {
	return len(presented) == len(cs.ClientSecret) && subtle.ConstantTimeCompare([]byte(presented), []byte(cs.ClientSecret)) == 1
}

// CreateSession creates an open session from p and emits checkout.session.created. base is the
// base URL the session's url starts with.
func CreateSession(tx *db.Tx, a domain.Actor, base string, p SessionParams) (*domain.CheckoutSession, error) {
	return createSession(tx, a, base, p, nil)
}

func createSession(tx *db.Tx, a domain.Actor, base string, p SessionParams, link *string) (*domain.CheckoutSession, error) {
	disc, err := sessionDiscount(tx, a.Scope, p)
	if err != nil {
		return nil, err
	}
	c, err := resolveCart(tx, a, p.LineItems)
	if err != nil {
		return nil, err
	}
	if p.Mode != nil && *p.Mode != c.Mode {
		return nil, domain.Invalid("mode", "mode is derived from line_items: these items make a %s session (a recurring price means subscription).", c.Mode)
	}
	if p.Currency != nil && *p.Currency != c.Currency {
		return nil, domain.Invalid("currency", "currency is that of the prices (%s).", c.Currency)
	}
	now := tx.Now
	cs := &domain.CheckoutSession{
		ID: domain.NewID(domain.PrefixCheckoutSession), Object: "checkout.session", ClientSecret: newClientSecret(),
		Status: domain.CheckoutOpen, PaymentStatus: domain.CheckoutUnpaid, Mode: c.Mode, Currency: c.Currency,
		LineItems: c.Items, SubtotalAmount: c.Subtotal, Livemode: a.Livemode, PaymentLink: link,
		CreatedAt: domain.At(now), UpdatedAt: domain.At(now), ExpiresAt: domain.At(now.Add(Lifetime)),
	}
	if err := applyDiscount(cs, disc, "discount"); err != nil {
		return nil, err
	}
	cs.TotalAmount = cs.SubtotalAmount - cs.DiscountAmount + cs.TaxAmount
	if cs.TotalAmount == 0 {
		cs.PaymentStatus = domain.CheckoutNoPaymentRequired
	} else if cs.TotalAmount < payments.MinAmount {
		return nil, domain.Invalid("line_items", "A session that charges must total at least %d centavos (R$ 0,50); this one totals %d.", payments.MinAmount, cs.TotalAmount)
	}
	cs.URL = SessionURL(base, cs.ID, cs.ClientSecret)
	if err := p.Config.apply(cs, c.Mode); err != nil {
		return nil, err
	}
	org, err := tx.FindOrganizationByID(a.OrgID)
	if err != nil {
		return nil, err
	}
	types, err := methodTypes(p.PaymentMethodTypes, c.Mode)
	if err != nil {
		return nil, err
	}
	if p.PaymentMethodTypes == nil && c.Mode == domain.CheckoutModePayment && p.Offer != nil {
		// Never offer by default a method the environment cannot take (live, no processor).
		types = slices.DeleteFunc(types, func(m string) bool { return !slices.Contains(p.Offer, m) })
	}
	if !CanAcceptPayments(org, a.Livemode) {
		// SPEC 2.4: empty until the organization finishes its financial registration (live only;
		// the sandbox works before activation, SPEC 8.6).
		types = []string{}
	}
	cs.PaymentMethodTypes = types
	if cs.PaymentMethodOptions, err = methodOptions(p.PaymentMethodOptions, types, org.MaxInstallments); err != nil {
		return nil, err
	}
	if p.Customer != nil {
		cus, err := tx.FindCustomerByID(a.Scope, *p.Customer)
		if errors.Is(err, db.ErrNotFound) {
			return nil, domain.NotFound("customer", "customer", *p.Customer)
		}
		if err != nil {
			return nil, err
		}
		cs.Customer = &cus.ID
		// Prefill from the customer; explicit fields below win.
		cs.CustomerEmail, cs.CustomerName, cs.CustomerPhone = cus.Email, cus.Name, cus.Phone
		cs.CustomerDocument, cs.CustomerDocumentType = cus.Document, cus.DocumentType
	}
	if err := applyBuyer(cs, Buyer{Email: p.CustomerEmail, Name: p.CustomerName, Document: p.CustomerDocument, Phone: p.CustomerPhone}); err != nil {
		return nil, err
	}
	if err := domain.ValidateMetadata(p.Metadata); err != nil {
		return nil, err
	}
	cs.Metadata = domain.MergeMetadata(nil, p.Metadata)
	if err := tx.CreateCheckoutSession(a.Scope, cs); err != nil {
		return nil, err
	}
	if disc != nil {
		if err := recordDiscount(tx, a.Scope, cs.ID, disc); err != nil {
			return nil, err
		}
	}
	return cs, core.Emit(tx, a, EventCreated, cs, nil)
}

// CanAcceptPayments reports whether the organization may take payments in the environment:
// always in the sandbox, and in live mode once its activation is complete (SPEC 8.6).
func CanAcceptPayments(org *domain.Organization, livemode bool) bool {
	return !livemode || org.ActivationStatus == domain.ActivationActive
}

// GetSession returns a session of the scope.
func GetSession(tx *db.Tx, s domain.Scope, id string) (*domain.CheckoutSession, error) {
	cs, err := tx.FindCheckoutSessionByID(s, id)
	if errors.Is(err, db.ErrNotFound) {
		return nil, domain.NotFound("id", "checkout session", id)
	}
	return cs, err
}

// ExpireSession expires an open session now (POST …/expire, the expire test helper, the 24 h
// job): the session becomes expired, its payment intent (if any) is canceled, and
// checkout.session.expired is emitted. An already expired or complete session is a 409.
func (svc *Service) ExpireSession(tx *db.Tx, a domain.Actor, id string) (*domain.CheckoutSession, error) {
	cs, err := GetSession(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if cs.Status != domain.CheckoutOpen {
		return nil, stateConflict(cs, "expired")
	}
	return cs, svc.expire(tx, a, cs)
}

func (svc *Service) expire(tx *db.Tx, a domain.Actor, cs *domain.CheckoutSession) error {
	before := *cs
	return svc.expireFrom(tx, a, cs, &before)
}

// expireFrom is expire with the session as it was before the caller's own unannounced changes,
// for previous_attributes.
func (svc *Service) expireFrom(tx *db.Tx, a domain.Actor, cs *domain.CheckoutSession, before *domain.CheckoutSession) error {
	// The session is written expired before its intent is canceled, so the payments engine's
	// AfterSettle hook (IntentSettled) sees an expired session and leaves it alone.
	cs.Status = domain.CheckoutExpired
	if err := tx.UpdateCheckoutSession(a.Scope, cs); err != nil {
		return err
	}
	if cs.PaymentIntent != nil {
		if err := svc.cancelIntent(tx, a, *cs.PaymentIntent); err != nil {
			return err
		}
	}
	return core.Emit(tx, a, EventExpired, cs, before)
}

// ExpireDue expires up to limit open sessions whose 24 hours are over, each in the scope it
// belongs to, and returns how many it expired. Run it inside a write transaction (the job does),
// so replicas never expire one session twice.
func (svc *Service) ExpireDue(tx *db.Tx, now time.Time, limit int) (int, error) {
	due, err := tx.DueCheckoutSessions(now.Unix(), limit)
	if err != nil {
		return 0, err
	}
	for _, d := range due {
		if err := svc.expire(tx, domain.Actor{Scope: d.Scope}, d.Session); err != nil {
			return 0, err
		}
	}
	return len(due), nil
}

// stateConflict is the 409 of an action a session's status no longer allows.
func stateConflict(cs *domain.CheckoutSession, action string) error {
	msg := "This checkout session is " + cs.Status + " and cannot be " + action + "."
	switch cs.Status {
	case domain.CheckoutComplete:
		msg = "This checkout session is already complete; it cannot be " + action + "."
		if action == "confirmed" {
			msg = "This checkout session is already complete; it cannot be confirmed again."
		}
	case domain.CheckoutExpired:
		// Not expires_at: a session expired early (…/expire, the test helper, a canceled intent)
		// keeps its original expires_at, which is then in the future.
		msg = "This checkout session has expired; create a new session."
	}
	e := domain.Conflict(domain.CodeResourceStateConflict, "%s", msg)
	return e
}
