package db

import (
	"database/sql"
	"encoding/json"
	"errors"
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
	coupon, err := tx.redeemedCoupon(sub)
	if err != nil {
		return err
	}
	_, err = tx.exec(`INSERT INTO subscriptions (id, org_id, livemode, customer_id, status, current_period_start, current_period_end, data, created_at, updated_at, mrr, coupon_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		sub.ID, s.OrgID, boolInt(s.Livemode), sub.Customer, sub.Status, sub.CurrentPeriodStart.Unix(), sub.CurrentPeriodEnd.Unix(), data, sub.CreatedAt.Unix(), sub.UpdatedAt.Unix(),
		sub.MonthlyAmount(), coupon)
	return translate(err, "create subscription")
}

// redeemedCoupon is the coupon_id column of sub: the coupon it redeemed itself, counted in the
// coupon's times_redeemed; nil without a coupon, or when the coupon is the discount of the
// checkout session that started it (that session's redemption, counted from checkout_discounts).
func (tx *Tx) redeemedCoupon(sub *domain.Subscription) (*string, error) {
	if sub.Coupon == nil || *sub.Coupon == "" {
		return nil, nil
	}
	if sub.CheckoutSession != nil {
		var c string
		err := tx.queryRow("SELECT coupon_id FROM checkout_discounts WHERE session_id = ?", *sub.CheckoutSession).Scan(&c)
		if err == nil && c == *sub.Coupon {
			return nil, nil
		}
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, translate(err, "find checkout discount")
		}
	}
	return sub.Coupon, nil
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
	coupon, err := tx.redeemedCoupon(sub)
	if err != nil {
		return err
	}
	res, err := tx.exec("UPDATE subscriptions SET status = ?, current_period_start = ?, current_period_end = ?, data = ?, updated_at = ?, mrr = ?, coupon_id = ? WHERE id = ? AND org_id = ? AND livemode = ?",
		sub.Status, sub.CurrentPeriodStart.Unix(), sub.CurrentPeriodEnd.Unix(), data, tx.now(), sub.MonthlyAmount(), coupon, sub.ID, s.OrgID, boolInt(s.Livemode))
	return affectedOne(res, err, "update subscription")
}

// SubscriptionFilter narrows ListSubscriptions.
type SubscriptionFilter struct {
	Customer         string
	Status           string
	Price            string
	CollectionMethod string
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
	switch {
	case f.Price != "" && tx.pg:
		w.add("data::jsonb @> jsonb_build_object('items', jsonb_build_array(jsonb_build_object('price', jsonb_build_object('id', ?::text))))", f.Price)
	case f.Price != "":
		w.add("EXISTS (SELECT 1 FROM json_each(data, '$.items') WHERE json_extract(json_each.value, '$.price.id') = ?)", f.Price)
	}
	switch {
	case f.CollectionMethod != "" && tx.pg:
		w.add("(data::jsonb ->> 'collection_method') = ?", f.CollectionMethod)
	case f.CollectionMethod != "":
		w.add("json_extract(data, '$.collection_method') = ?", f.CollectionMethod)
	}
	return page(tx, "subscriptions", "data", w, p, scanSubscription)
}

// SetSubscriptionSchedule records the next instant the billing job has work for a subscription
// (nil: none) and its non-public billing state (a JSON document).
func (tx *Tx) SetSubscriptionSchedule(s domain.Scope, id string, nextAt *int64, billing string) error {
	res, err := tx.exec("UPDATE subscriptions SET next_at = ?, billing = ? WHERE id = ? AND org_id = ? AND livemode = ?",
		nextAt, billing, id, s.OrgID, boolInt(s.Livemode))
	return affectedOne(res, err, "schedule subscription")
}

// SubscriptionBilling returns a subscription's non-public billing state (a JSON document).
func (tx *Tx) SubscriptionBilling(s domain.Scope, id string) (string, error) {
	var b string
	err := tx.queryRow("SELECT billing FROM subscriptions WHERE id = ? AND org_id = ? AND livemode = ?", id, s.OrgID, boolInt(s.Livemode)).Scan(&b)
	return b, translate(err, "subscription billing")
}

// ScopedSubscription is a subscription with its scope, for jobs that cross scopes.
type ScopedSubscription struct {
	Scope        domain.Scope
	Subscription *domain.Subscription
}

// ClaimDueSubscriptions returns up to limit subscriptions whose next_at is at or before now (Unix
// seconds), earliest first, and clears their next_at: the caller acts on them and schedules them
// again in the same write transaction, so two replicas never act on one twice.
func (tx *Tx) ClaimDueSubscriptions(now int64, limit int) ([]ScopedSubscription, error) {
	rows, err := tx.query("SELECT seq, org_id, livemode, data FROM subscriptions WHERE next_at <= ? ORDER BY next_at, seq LIMIT ?"+tx.claimLock(), now, limit)
	if err != nil {
		return nil, translate(err, "due subscriptions")
	}
	var out []ScopedSubscription
	var seqs []int64
	for rows.Next() {
		var seq int64
		var sc domain.Scope
		var live int
		var data string
		if err := rows.Scan(&seq, &sc.OrgID, &live, &data); err != nil {
			rows.Close()
			return nil, translate(err, "scan subscription")
		}
		sc.Livemode = live == 1
		sub, err := scanSubscription(stringScanner(data))
		if err != nil {
			rows.Close()
			return nil, err
		}
		seqs = append(seqs, seq)
		out = append(out, ScopedSubscription{Scope: sc, Subscription: sub})
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return nil, translate(err, "due subscriptions")
	}
	rows.Close()
	for _, seq := range seqs {
		if _, err := tx.exec("UPDATE subscriptions SET next_at = NULL WHERE seq = ?", seq); err != nil {
			return nil, translate(err, "claim subscription")
		}
	}
	return out, nil
}

type stringScanner string

func (s stringScanner) Scan(dest ...any) error {
	*(dest[0].(*string)) = string(s)
	return nil
}

// RecordSubscriptionNotice records that a notice of kind (trial_will_end, invoice.upcoming) was
// sent for the instant at; it returns false when it already was (nothing is recorded twice).
func (tx *Tx) RecordSubscriptionNotice(subscriptionID, kind string, at int64) (bool, error) {
	res, err := tx.exec("INSERT INTO subscription_notices (subscription_id, kind, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", subscriptionID, kind, at)
	if err != nil {
		return false, translate(err, "record notice")
	}
	n, err := res.RowsAffected()
	return n == 1, translate(err, "record notice")
}

// FindSubscriptionPeriodInvoice returns the invoice of a subscription for the period that starts
// at periodStart (Unix seconds), in scope.
func (tx *Tx) FindSubscriptionPeriodInvoice(s domain.Scope, subscriptionID string, periodStart int64) (*domain.Invoice, error) {
	inv, _, err := tx.scanInvoice(tx.queryRow("SELECT "+invoiceCols+" FROM invoices WHERE subscription_id = ? AND billing_period = ? AND org_id = ? AND livemode = ?",
		subscriptionID, periodStart, s.OrgID, boolInt(s.Livemode)))
	return inv, translate(err, "find period invoice")
}

// CountPaidPeriodInvoices counts the paid invoices of subscription periods that start at or after
// since (Unix seconds), in scope: renewals done (the renewal benchmark, reports).
func (tx *Tx) CountPaidPeriodInvoices(s domain.Scope, since int64) (int, error) {
	var n int
	err := tx.queryRow("SELECT COUNT(*) FROM invoices WHERE org_id = ? AND livemode = ? AND billing_period >= ? AND status = ?",
		s.OrgID, boolInt(s.Livemode), since, domain.InvoicePaid).Scan(&n)
	return n, translate(err, "count period invoices")
}

// DueSubscriptions lists (without claiming) up to limit subscriptions whose next_at is at or
// before now, earliest first: the renewal job's one-by-one fallback after a failed batch.
func (tx *Tx) DueSubscriptions(now int64, limit int) ([]ScopedSubscription, error) {
	rows, err := tx.query("SELECT org_id, livemode, data FROM subscriptions WHERE next_at <= ? ORDER BY next_at, seq LIMIT ?", now, limit)
	if err != nil {
		return nil, translate(err, "due subscriptions")
	}
	defer rows.Close()
	var out []ScopedSubscription
	for rows.Next() {
		var sc domain.Scope
		var live int
		var data string
		if err := rows.Scan(&sc.OrgID, &live, &data); err != nil {
			return nil, translate(err, "scan subscription")
		}
		sc.Livemode = live == 1
		sub, err := scanSubscription(stringScanner(data))
		if err != nil {
			return nil, err
		}
		out = append(out, ScopedSubscription{Scope: sc, Subscription: sub})
	}
	return out, translate(rows.Err(), "due subscriptions")
}

// ClaimSubscription claims one subscription whose next_at is at or before now (clearing it); it
// returns false when it is not due (another replica took it).
func (tx *Tx) ClaimSubscription(s domain.Scope, id string, now int64) (bool, error) {
	res, err := tx.exec("UPDATE subscriptions SET next_at = NULL WHERE id = ? AND org_id = ? AND livemode = ? AND next_at <= ?", id, s.OrgID, boolInt(s.Livemode), now)
	if err != nil {
		return false, translate(err, "claim subscription")
	}
	n, err := res.RowsAffected()
	return n == 1, translate(err, "claim subscription")
}

// PostponeSubscription moves a subscription's next_at to at (Unix seconds): the job could not
// renew it and tries again then.
func (tx *Tx) PostponeSubscription(s domain.Scope, id string, at int64) error {
	_, err := tx.exec("UPDATE subscriptions SET next_at = ? WHERE id = ? AND org_id = ? AND livemode = ?", at, id, s.OrgID, boolInt(s.Livemode))
	return translate(err, "postpone subscription")
}

// MRR is the monthly recurring revenue of a scope: the sum of the monthly amounts of its
// subscriptions in domain.MRRStatuses, and how many there are (one index-only aggregate).
func (tx *Tx) MRR(s domain.Scope) (amount, count int64, err error) {
	err = tx.queryRow("SELECT COALESCE(SUM(mrr), 0), COUNT(*) FROM subscriptions WHERE org_id = ? AND livemode = ? AND status IN (?, ?)",
		s.OrgID, boolInt(s.Livemode), domain.MRRStatuses[0], domain.MRRStatuses[1]).Scan(&amount, &count)
	return amount, count, translate(err, "mrr")
}
