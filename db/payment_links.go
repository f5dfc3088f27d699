package db

import (
	"encoding/json"
	"fmt"

	"troco/server/domain"
)

func (tx *Tx) scanPaymentLink(s scanner) (*domain.PaymentLink, domain.Scope, error) {
	var sc domain.Scope
	var live int
	var data string
	if err := s.Scan(&sc.OrgID, &live, &data); err != nil {
		return nil, sc, err
	}
	sc.Livemode = live == 1
	var l domain.PaymentLink
	if err := json.Unmarshal([]byte(data), &l); err != nil {
		return nil, sc, fmt.Errorf("db: decode payment link: %w", err)
	}
	if l.Metadata == nil {
		l.Metadata = domain.Metadata{}
	}
	tx.rebasePtr(&l.URL)
	return &l, sc, nil
}

// CreatePaymentLink inserts l (id, url and timestamps already set) in scope.
func (tx *Tx) CreatePaymentLink(s domain.Scope, l *domain.PaymentLink) error {
	l.Object = "payment_link"
	l.Livemode = s.Livemode
	data, err := marshalJSON(l)
	if err != nil {
		return err
	}
	_, err = tx.exec("INSERT INTO payment_links (id, org_id, livemode, active, data, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
		l.ID, s.OrgID, boolInt(s.Livemode), boolInt(l.Active), data, l.CreatedAt.Unix(), l.UpdatedAt.Unix())
	return translate(err, "create payment link")
}

// FindPaymentLinkByID returns an undeleted payment link in scope.
func (tx *Tx) FindPaymentLinkByID(s domain.Scope, id string) (*domain.PaymentLink, error) {
	l, _, err := tx.scanPaymentLink(tx.queryRow("SELECT org_id, livemode, data FROM payment_links WHERE id = ? AND org_id = ? AND livemode = ? AND deleted = 0", id, s.OrgID, boolInt(s.Livemode)))
	return l, translate(err, "find payment link")
}

// FindPaymentLinkAnyScope returns an undeleted payment link and its scope: a buyer opening the
// link's public URL has no API key.
func (tx *Tx) FindPaymentLinkAnyScope(id string) (*domain.PaymentLink, domain.Scope, error) {
	l, sc, err := tx.scanPaymentLink(tx.queryRow("SELECT org_id, livemode, data FROM payment_links WHERE id = ? AND deleted = 0", id))
	return l, sc, translate(err, "find payment link")
}

// UpdatePaymentLink writes the whole link back.
func (tx *Tx) UpdatePaymentLink(s domain.Scope, l *domain.PaymentLink) error {
	l.UpdatedAt = domain.At(tx.Now)
	data, err := marshalJSON(l)
	if err != nil {
		return err
	}
	res, err := tx.exec("UPDATE payment_links SET active = ?, data = ?, updated_at = ? WHERE id = ? AND org_id = ? AND livemode = ? AND deleted = 0",
		boolInt(l.Active), data, tx.now(), l.ID, s.OrgID, boolInt(s.Livemode))
	return affectedOne(res, err, "update payment link")
}

// DeletePaymentLink marks a link deleted; its URL stops creating sessions.
func (tx *Tx) DeletePaymentLink(s domain.Scope, id string) error {
	res, err := tx.exec("UPDATE payment_links SET deleted = 1, active = 0, updated_at = ? WHERE id = ? AND org_id = ? AND livemode = ? AND deleted = 0", tx.now(), id, s.OrgID, boolInt(s.Livemode))
	return affectedOne(res, err, "delete payment link")
}

// PaymentLinkFilter narrows ListPaymentLinks.
type PaymentLinkFilter struct {
	Active *bool
}

// ListPaymentLinks pages the links of a scope, newest first.
func (tx *Tx) ListPaymentLinks(s domain.Scope, f PaymentLinkFilter, p ListParams) ([]*domain.PaymentLink, bool, error) {
	var w filter
	w.add("org_id = ?", s.OrgID)
	w.add("livemode = ?", boolInt(s.Livemode))
	w.add("deleted = 0")
	if f.Active != nil {
		w.add("active = ?", boolInt(*f.Active))
	}
	return page(tx, "payment_links", "org_id, livemode, data", w, p, func(s scanner) (*domain.PaymentLink, error) {
		l, _, err := tx.scanPaymentLink(s)
		return l, err
	})
}
