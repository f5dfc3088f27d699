package billing

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"time"

	"troco/db"
	"troco/server/domain"
	"troco/server/invoices"
	"troco/server/payments"
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

// CustomerSubscription returns a subscription of the scope that belongs to customer; any other
// (another customer's, another scope's) is not found. The customer portal and the customer
// session token act through it, so a customer never reaches another's subscriptions.
func CustomerSubscription(tx *db.Tx, s domain.Scope, customer, id string) (*domain.Subscription, error) {
	sub, err := Get(tx, s, id)
	if err != nil {
		return nil, err
	}
	if sub.Customer != customer {
		return nil, domain.NotFound("id", "subscription", id)
	}
	return sub, nil
}

// CancelForCustomer sets cancel_at_period_end on a subscription of the customer.
func (svc *Service) CancelForCustomer(tx *db.Tx, a domain.Actor, customer, id string) (*domain.Subscription, error) {
	if _, err := CustomerSubscription(tx, a.Scope, customer, id); err != nil {
		return nil, err
	}
	yes := true
	return svc.Update(tx, a, id, UpdateParams{CancelAtPeriodEnd: &yes})
}

// KeepForCustomer undoes a cancellation at period end, or resumes a paused subscription, of the
// customer.
func (svc *Service) KeepForCustomer(tx *db.Tx, a domain.Actor, customer, id string) (*domain.Subscription, error) {
	sub, err := CustomerSubscription(tx, a.Scope, customer, id)
	if err != nil {
		return nil, err
	}
	if sub.Status == domain.SubscriptionPaused {
		return svc.Resume(tx, a, id)
	}
	no := false
	return svc.Update(tx, a, id, UpdateParams{CancelAtPeriodEnd: &no})
}

// ReplaceCard saves a card for the customer through a setup intent (the card's verification
// outcomes apply; in live mode the card processor saves it on the two-phase path) and makes it
// the default payment method of every running subscription of the customer. setupIntent
// carries the setup intent between the runs of a live save: empty on the first run, which
// creates it; the run that follows the processor's answer confirms the same one again.
func (svc *Service) ReplaceCard(tx *db.Tx, a domain.Actor, customer string, card *payments.CardParams, setupIntent *string) (*domain.PaymentMethod, error) {
	if *setupIntent == "" {
		si, err := svc.Payments.CreateSetupIntent(tx, a, payments.SetupIntentParams{Customer: customer})
		if err != nil {
			return nil, err
		}
		*setupIntent = si.ID
	}
	si, err := svc.Payments.ConfirmSetupIntent(tx, a, *setupIntent, payments.SetupConfirmParams{Card: card})
	if err != nil {
		return nil, err
	}
	if si.Status == domain.SetupStatusProcessing {
		return nil, domain.Conflict("processor_call_in_progress", "The card is still being saved with the card processor. Reload this page in a minute to see it.")
	}
	if si.PaymentMethod == nil || si.Status != domain.SetupStatusSucceeded {
		return nil, &domain.Error{Status: http.StatusPaymentRequired, Type: domain.TypeCard, Code: "card_declined", Message: "The card could not be saved."}
	}
	subs, _, err := tx.ListSubscriptions(a.Scope, db.SubscriptionFilter{Customer: customer}, db.ListParams{Limit: 100})
	if err != nil {
		return nil, err
	}
	for _, sub := range subs {
		if domain.SubscriptionFinal(sub.Status) {
			continue
		}
		if _, err := svc.Update(tx, a, sub.ID, UpdateParams{DefaultPaymentMethod: si.PaymentMethod}); err != nil {
			return nil, err
		}
	}
	return svc.Payments.GetPaymentMethod(tx, a.Scope, *si.PaymentMethod)
}

// CustomerInvoice returns an invoice of the scope that belongs to customer and is not a draft
// (drafts are the organization's work in progress); any other is not found.
func CustomerInvoice(tx *db.Tx, s domain.Scope, customer, id string) (*domain.Invoice, error) {
	inv, err := invoices.Get(tx, s, id)
	if err != nil {
		return nil, err
	}
	if inv.Customer != customer || inv.Status == domain.InvoiceDraft {
		return nil, domain.NotFound("id", "invoice", id)
	}
	return inv, nil
}

// CustomerPaymentMethod returns a payment method of the scope attached to customer; any other is
// not found.
func (svc *Service) CustomerPaymentMethod(tx *db.Tx, s domain.Scope, customer, id string) (*domain.PaymentMethod, error) {
	pm, err := svc.Payments.GetPaymentMethod(tx, s, id)
	if err != nil {
		return nil, err
	}
	if pm.Customer == nil || *pm.Customer != customer {
		return nil, domain.NotFound("id", "payment method", id)
	}
	return pm, nil
}
