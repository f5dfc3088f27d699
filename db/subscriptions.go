package db

import (
	"encoding/json"
	"fmt"

	"troco/server/domain"
)

func scanSubscription(s scanner) (*domain.Subscription, error) {
	var data string
	if err := s.Scan(&data); err != nil {
		return nil, err
	}
	var sub domain.Subscription
	if err := json.Unmarshal([]byte(data), &sub); err != nil {
		return nil, fmt.Errorf("db: decode subscription: %w", err)
	}
	if sub.Metadata == nil {
		sub.Metadata = domain.Metadata{}
	}
	return &sub, nil
}

// CreateSubscription inserts sub (id, periods and timestamps already set) in scope.
func (tx *Tx) CreateSubscription(s domain.Scope, sub *domain.Subscription) error {
	sub.Object = "subscription"
	sub.Livemode = s.Livemode
	data, err := marshalJSON(sub)
	if err != nil {
		return err
	}
	_, err = tx.exec(`INSERT INTO subscriptions (id, org_id, livemode, customer_id, status, current_period_start, current_period_end, data, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		sub.ID, s.OrgID, boolInt(s.Livemode), sub.Customer, sub.Status, sub.CurrentPeriodStart.Unix(), sub.CurrentPeriodEnd.Unix(), data, sub.CreatedAt.Unix(), sub.UpdatedAt.Unix())
	return translate(err, "create subscription")
}

// FindSubscriptionByID returns a subscription in scope.
func (tx *Tx) FindSubscriptionByID(s domain.Scope, id string) (*domain.Subscription, error) {
	sub, err := scanSubscription(tx.queryRow("SELECT data FROM subscriptions WHERE id = ? AND org_id = ? AND livemode = ?", id, s.OrgID, boolInt(s.Livemode)))
	return sub, translate(err, "find subscription")
}

// UpdateSubscription writes the whole subscription back.
func (tx *Tx) UpdateSubscription(s domain.Scope, sub *domain.Subscription) error {
	sub.UpdatedAt = domain.At(tx.Now)
	data, err := marshalJSON(sub)
	if err != nil {
		return err
	}
	res, err := tx.exec("UPDATE subscriptions SET status = ?, current_period_start = ?, current_period_end = ?, data = ?, updated_at = ? WHERE id = ? AND org_id = ? AND livemode = ?",
		sub.Status, sub.CurrentPeriodStart.Unix(), sub.CurrentPeriodEnd.Unix(), data, tx.now(), sub.ID, s.OrgID, boolInt(s.Livemode))
	return affectedOne(res, err, "update subscription")
}

// SubscriptionFilter narrows ListSubscriptions.
type SubscriptionFilter struct {
	Customer string
	Status   string
}

// ListSubscriptions pages the subscriptions of a scope, newest first.
func (tx *Tx) ListSubscriptions(s domain.Scope, f SubscriptionFilter, p ListParams) ([]*domain.Subscription, bool, error) {
	var w filter
	w.add("org_id = ?", s.OrgID)
	w.add("livemode = ?", boolInt(s.Livemode))
	if f.Customer != "" {
		w.add("customer_id = ?", f.Customer)
	}
	if f.Status != "" {
		w.add("status = ?", f.Status)
	}
	return page(tx, "subscriptions", "data", w, p, scanSubscription)
}
