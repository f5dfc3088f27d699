package db

import (
	"encoding/json"
	"fmt"

	"troco/server/domain"
)

// Checkout sessions are stored as their public JSON object (the frozen snapshot of SPEC 2.4)
// plus the columns that scopes, filters and the expiry job query.

const checkoutCols = "org_id, livemode, data"

func (tx *Tx) scanCheckoutSession(s scanner) (*domain.CheckoutSession, domain.Scope, error) {
	var sc domain.Scope
	var live int
	var data string
	if err := s.Scan(&sc.OrgID, &live, &data); err != nil {
		return nil, sc, err
	}
	sc.Livemode = live == 1
	var cs domain.CheckoutSession
	if err := json.Unmarshal([]byte(data), &cs); err != nil {
		return nil, sc, fmt.Errorf("db: decode checkout session: %w", err)
	}
	if cs.Metadata == nil {
		cs.Metadata = domain.Metadata{}
	}
	tx.rebasePtr(&cs.URL)
	tx.rebasePaymentData(cs.PaymentData)
	return &cs, sc, nil
}

// CreateCheckoutSession inserts cs (its id, secret, url and timestamps already set) in scope.
func (tx *Tx) CreateCheckoutSession(s domain.Scope, cs *domain.CheckoutSession) error {
	cs.Object = "checkout.session"
	cs.Livemode = s.Livemode
	data, err := marshalJSON(cs)
	if err != nil {
		return err
	}
	_, err = tx.exec(`INSERT INTO checkout_sessions (id, org_id, livemode, status, payment_status, customer_id, payment_intent_id, payment_link_id, data, expires_at, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		cs.ID, s.OrgID, boolInt(s.Livemode), cs.Status, cs.PaymentStatus, cs.Customer, cs.PaymentIntent, cs.PaymentLink, data,
		cs.ExpiresAt.Unix(), cs.CreatedAt.Unix(), cs.UpdatedAt.Unix())
	return translate(err, "create checkout session")
}

// FindCheckoutSessionByID returns a session in scope.
func (tx *Tx) FindCheckoutSessionByID(s domain.Scope, id string) (*domain.CheckoutSession, error) {
	cs, _, err := tx.scanCheckoutSession(tx.queryRow("SELECT "+checkoutCols+" FROM checkout_sessions WHERE id = ? AND org_id = ? AND livemode = ?", id, s.OrgID, boolInt(s.Livemode)))
	return cs, translate(err, "find checkout session")
}

// FindCheckoutSessionAnyScope returns a session and the scope it belongs to. Only the hosted page
// uses it: the buyer has no API key, and the client_secret check that follows decides access.
func (tx *Tx) FindCheckoutSessionAnyScope(id string) (*domain.CheckoutSession, domain.Scope, error) {
	cs, sc, err := tx.scanCheckoutSession(tx.queryRow("SELECT "+checkoutCols+" FROM checkout_sessions WHERE id = ?", id))
	return cs, sc, translate(err, "find checkout session")
}

// FindCheckoutSessionByPaymentIntent returns the session whose payment intent is piID, in scope.
func (tx *Tx) FindCheckoutSessionByPaymentIntent(s domain.Scope, piID string) (*domain.CheckoutSession, error) {
	cs, _, err := tx.scanCheckoutSession(tx.queryRow("SELECT "+checkoutCols+" FROM checkout_sessions WHERE payment_intent_id = ? AND org_id = ? AND livemode = ?", piID, s.OrgID, boolInt(s.Livemode)))
	return cs, translate(err, "find checkout session by payment intent")
}

// UpdateCheckoutSession writes the whole session back (status, payment data, customer…).
func (tx *Tx) UpdateCheckoutSession(s domain.Scope, cs *domain.CheckoutSession) error {
	cs.UpdatedAt = domain.At(tx.Now)
	data, err := marshalJSON(cs)
	if err != nil {
		return err
	}
	res, err := tx.exec(`UPDATE checkout_sessions SET status = ?, payment_status = ?, customer_id = ?, payment_intent_id = ?, data = ?, updated_at = ?
		WHERE id = ? AND org_id = ? AND livemode = ?`,
		cs.Status, cs.PaymentStatus, cs.Customer, cs.PaymentIntent, data, tx.now(), cs.ID, s.OrgID, boolInt(s.Livemode))
	return affectedOne(res, err, "update checkout session")
}

// SwapCheckoutAttempt records token as the session's latest confirmation attempt and reports
// whether it was already the latest one (a repeated submission of the same hosted form).
func (tx *Tx) SwapCheckoutAttempt(s domain.Scope, id, token string) (repeated bool, err error) {
	var prev *string
	if err := tx.queryRow("SELECT attempt_token FROM checkout_sessions WHERE id = ? AND org_id = ? AND livemode = ?", id, s.OrgID, boolInt(s.Livemode)).Scan(&prev); err != nil {
		return false, translate(err, "read checkout attempt")
	}
	if prev != nil && *prev == token {
		return true, nil
	}
	_, err = tx.exec("UPDATE checkout_sessions SET attempt_token = ? WHERE id = ? AND org_id = ? AND livemode = ?", token, id, s.OrgID, boolInt(s.Livemode))
	return false, translate(err, "write checkout attempt")
}

// CheckoutSessionFilter narrows ListCheckoutSessions.
type CheckoutSessionFilter struct {
	Status        string
	PaymentStatus string
	Customer      string
	PaymentIntent string
	PaymentLink   string
}

// ListCheckoutSessions pages the sessions of a scope, newest first.
func (tx *Tx) ListCheckoutSessions(s domain.Scope, f CheckoutSessionFilter, p ListParams) ([]*domain.CheckoutSession, bool, error) {
	var w filter
	w.add("org_id = ?", s.OrgID)
	w.add("livemode = ?", boolInt(s.Livemode))
	if f.Status != "" {
		w.add("status = ?", f.Status)
	}
	if f.PaymentStatus != "" {
		w.add("payment_status = ?", f.PaymentStatus)
	}
	if f.Customer != "" {
		w.add("customer_id = ?", f.Customer)
	}
	if f.PaymentIntent != "" {
		w.add("payment_intent_id = ?", f.PaymentIntent)
	}
	if f.PaymentLink != "" {
		w.add("payment_link_id = ?", f.PaymentLink)
	}
	return page(tx, "checkout_sessions", checkoutCols, w, p, func(s scanner) (*domain.CheckoutSession, error) {
		cs, _, err := tx.scanCheckoutSession(s)
		return cs, err
	})
}

// ScopedCheckoutSession is a session with the scope it belongs to, for jobs that cross scopes.
type ScopedCheckoutSession struct {
	Scope   domain.Scope
	Session *domain.CheckoutSession
}

// DueCheckoutSessions returns up to limit open sessions whose expires_at is at or before now
// (Unix seconds), oldest first. Call it inside the write transaction that expires them, so two
// job runners never expire the same session twice.
func (tx *Tx) DueCheckoutSessions(now int64, limit int) ([]ScopedCheckoutSession, error) {
	rows, err := tx.query("SELECT "+checkoutCols+" FROM checkout_sessions WHERE status = ? AND expires_at <= ? ORDER BY expires_at, seq LIMIT ?", domain.CheckoutOpen, now, limit)
	if err != nil {
		return nil, translate(err, "due checkout sessions")
	}
	defer rows.Close()
	var out []ScopedCheckoutSession
	for rows.Next() {
		cs, sc, err := tx.scanCheckoutSession(rows)
		if err != nil {
			return nil, translate(err, "scan checkout session")
		}
		out = append(out, ScopedCheckoutSession{Scope: sc, Session: cs})
	}
	return out, translate(rows.Err(), "due checkout sessions")
}

// FindCustomerByDocument returns the newest customer of the scope with this CPF/CNPJ.
func (tx *Tx) FindCustomerByDocument(s domain.Scope, document string) (*domain.Customer, error) {
	c, err := scanCustomer(tx.queryRow("SELECT "+customerCols+" FROM customers WHERE org_id = ? AND livemode = ? AND document = ? AND deleted = 0 ORDER BY seq DESC LIMIT 1", s.OrgID, boolInt(s.Livemode), document))
	return c, translate(err, "find customer by document")
}

// FindCustomerByEmail returns the newest customer of the scope with this e-mail.
func (tx *Tx) FindCustomerByEmail(s domain.Scope, email string) (*domain.Customer, error) {
	c, err := scanCustomer(tx.queryRow("SELECT "+customerCols+" FROM customers WHERE org_id = ? AND livemode = ? AND email = ? AND deleted = 0 ORDER BY seq DESC LIMIT 1", s.OrgID, boolInt(s.Livemode), email))
	return c, translate(err, "find customer by email")
}

// OrganizationBranding returns the organization's hosted-page defaults (a zero Branding and
// an empty template when none were set).
func (tx *Tx) OrganizationBranding(orgID string) (domain.Branding, string, error) {
	var data string
	err := tx.queryRow("SELECT data FROM organization_branding WHERE org_id = ?", orgID).Scan(&data)
	if err != nil {
		if err := translate(err, "find organization branding"); err == ErrNotFound {
			return domain.Branding{}, "", nil
		}
		return domain.Branding{}, "", translate(err, "find organization branding")
	}
	var v struct {
		domain.Branding
		Template string `json:"template"`
	}
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		return domain.Branding{}, "", fmt.Errorf("db: decode organization branding: %w", err)
	}
	return v.Branding, v.Template, nil
}

// SetOrganizationBranding stores the organization's hosted-page defaults.
func (tx *Tx) SetOrganizationBranding(orgID string, b domain.Branding, template string) error {
	data, err := marshalJSON(struct {
		domain.Branding
		Template string `json:"template"`
	}{b, template})
	if err != nil {
		return err
	}
	_, err = tx.exec("INSERT INTO organization_branding (org_id, data, updated_at) VALUES (?, ?, ?) ON CONFLICT (org_id) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at", orgID, data, tx.now())
	return translate(err, "set organization branding")
}
