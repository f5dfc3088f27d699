package db

import (
	"encoding/json"
	"fmt"
	"time"

	"troco/server/domain"
)

const pixAuthCols = "org_id, livemode, data"

func (tx *Tx) scanPixAuth(s scanner) (*domain.PixAuthorization, error) {
	var sc domain.Scope
	var live int
	var data string
	if err := s.Scan(&sc.OrgID, &live, &data); err != nil {
		return nil, err
	}
	var p domain.PixAuthorization
	if err := json.Unmarshal([]byte(data), &p); err != nil {
		return nil, fmt.Errorf("db: decode pix authorization: %w", err)
	}
	if p.Metadata == nil {
		p.Metadata = domain.Metadata{}
	}
	tx.rebasePtr(&p.URL)
	return &p, nil
}

// CreatePixAuthorization inserts p (id and timestamps set) in scope with its page secret and,
// in test mode, the sandbox rule its customer's e-mail chose.
func (tx *Tx) CreatePixAuthorization(s domain.Scope, p *domain.PixAuthorization, secret, rule string) error {
	data, err := marshalJSON(p)
	if err != nil {
		return err
	}
	_, err = tx.exec(`INSERT INTO pix_authorizations (id, org_id, livemode, customer_id, status, secret, sandbox_rule, expires_at, data, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, p.ID, s.OrgID, boolInt(s.Livemode), p.Customer, p.Status, secret, rule, p.ExpiresAt.Unix(), data,
		p.CreatedAt.Unix(), p.UpdatedAt.Unix())
	return translate(err, "create pix authorization")
}

// UpdatePixAuthorization writes p's status and object.
func (tx *Tx) UpdatePixAuthorization(s domain.Scope, p *domain.PixAuthorization) error {
	data, err := marshalJSON(p)
	if err != nil {
		return err
	}
	res, err := tx.exec("UPDATE pix_authorizations SET status = ?, data = ?, updated_at = ? WHERE id = ? AND org_id = ? AND livemode = ?",
		p.Status, data, p.UpdatedAt.Unix(), p.ID, s.OrgID, boolInt(s.Livemode))
	return affectedOne(res, err, "update pix authorization")
}

// FindPixAuthorization returns an authorization in scope.
func (tx *Tx) FindPixAuthorization(s domain.Scope, id string) (*domain.PixAuthorization, error) {
	p, err := tx.scanPixAuth(tx.queryRow("SELECT "+pixAuthCols+" FROM pix_authorizations WHERE id = ? AND org_id = ? AND livemode = ?", id, s.OrgID, boolInt(s.Livemode)))
	return p, translate(err, "find pix authorization")
}

// FindPixAuthorizationPage returns an authorization by id in any scope with its page secret and
// sandbox rule (the hosted page, which has no key, checks the secret).
func (tx *Tx) FindPixAuthorizationPage(id string) (*domain.PixAuthorization, domain.Scope, string, string, error) {
	var sc domain.Scope
	var live int
	var data, secret, rule string
	err := tx.queryRow("SELECT org_id, livemode, data, secret, sandbox_rule FROM pix_authorizations WHERE id = ?", id).Scan(&sc.OrgID, &live, &data, &secret, &rule)
	if err != nil {
		return nil, sc, "", "", translate(err, "find pix authorization")
	}
	sc.Livemode = live == 1
	var p domain.PixAuthorization
	if err := json.Unmarshal([]byte(data), &p); err != nil {
		return nil, sc, "", "", fmt.Errorf("db: decode pix authorization: %w", err)
	}
	if p.Metadata == nil {
		p.Metadata = domain.Metadata{}
	}
	tx.rebasePtr(&p.URL)
	return &p, sc, secret, rule, nil
}

// PixAuthorizationFilter narrows ListPixAuthorizations.
type PixAuthorizationFilter struct {
	Customer string
	Status   string
}

// ListPixAuthorizations pages a scope's authorizations, newest first.
func (tx *Tx) ListPixAuthorizations(s domain.Scope, f PixAuthorizationFilter, p ListParams) ([]*domain.PixAuthorization, bool, error) {
	var w filter
	payScope(&w, s)
	if f.Customer != "" {
		w.add("customer_id = ?", f.Customer)
	}
	if f.Status != "" {
		w.add("status = ?", f.Status)
	}
	return page(tx, "pix_authorizations", pixAuthCols, w, p, tx.scanPixAuth)
}

// DuePixAuthorizationExpiries returns up to limit pending test-mode authorizations whose expiry
// is at or before now, with their scopes (a live one expires when the PSP says its recurrence did).
func (tx *Tx) DuePixAuthorizationExpiries(now time.Time, limit int) ([]string, []domain.Scope, error) {
	rows, err := tx.query("SELECT id, org_id, livemode FROM pix_authorizations WHERE status = ? AND expires_at <= ? AND livemode = 0 LIMIT ?", domain.PixAuthPending, now.Unix(), limit)
	if err != nil {
		return nil, nil, translate(err, "due pix authorizations")
	}
	defer rows.Close()
	var ids []string
	var scopes []domain.Scope
	for rows.Next() {
		var id string
		var sc domain.Scope
		var live int
		if err := rows.Scan(&id, &sc.OrgID, &live); err != nil {
			return nil, nil, translate(err, "scan due pix authorization")
		}
		sc.Livemode = live == 1
		ids, scopes = append(ids, id), append(scopes, sc)
	}
	return ids, scopes, translate(rows.Err(), "due pix authorizations")
}

// PixAuthorizationRule returns the sandbox rule an authorization's customer e-mail chose ("" for
// none), in scope.
func (tx *Tx) PixAuthorizationRule(s domain.Scope, id string) (string, error) {
	var rule string
	err := tx.queryRow("SELECT sandbox_rule FROM pix_authorizations WHERE id = ? AND org_id = ? AND livemode = ?", id, s.OrgID, boolInt(s.Livemode)).Scan(&rule)
	return rule, translate(err, "find pix authorization rule")
}

// PaidPixAutoCharge returns the payment intent that already paid reference under an
// authorization, or "" when none did.
func (tx *Tx) PaidPixAutoCharge(s domain.Scope, authorizationID, reference string) (string, error) {
	var pi string
	err := tx.queryRow("SELECT payment_intent_id FROM pix_auto_charges WHERE authorization_id = ? AND reference = ? AND org_id = ? AND livemode = ?",
		authorizationID, reference, s.OrgID, boolInt(s.Livemode)).Scan(&pi)
	if err := translate(err, "find pix automatico charge"); err == ErrNotFound {
		return "", nil
	} else if err != nil {
		return "", err
	}
	return pi, nil
}

// RecordPixAutoCharge records that a payment intent paid reference under an authorization.
func (tx *Tx) RecordPixAutoCharge(s domain.Scope, authorizationID, reference, paymentIntent string) error {
	_, err := tx.exec("INSERT INTO pix_auto_charges (authorization_id, reference, org_id, livemode, payment_intent_id, created_at) VALUES (?, ?, ?, ?, ?, ?)",
		authorizationID, reference, s.OrgID, boolInt(s.Livemode), paymentIntent, tx.now())
	return translate(err, "record pix automatico charge")
}
