package db

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"troco/server/domain"
)

// TestMRR: migration 310 fills the monthly amount of the subscriptions already stored with the
// formula of domain.Subscription.MonthlyAmount, writes keep it, and MRR is one aggregate on a
// covering index (no subscription is loaded).
func TestMRR(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	full := realSchema(t)
	cut := strings.Index(full, "-- migrate: 310")
	is.True(cut > 0)
	path := filepath.Join(t.TempDir(), "m.db")
	item := func(amount, qty int64, interval string, count int) domain.SubscriptionItem {
		return domain.SubscriptionItem{Price: domain.Price{UnitAmount: amount, Recurring: &domain.Recurring{Interval: interval, IntervalCount: count}}, Quantity: qty}
	}
	sub := &domain.Subscription{ID: "sub_old", Status: domain.SubscriptionActive, Items: []domain.SubscriptionItem{
		item(120000, 1, "year", 1), // 10000 a month
		item(1000, 3, "week", 2),   // 3000 every two weeks: 3000 × 52 / 24 = 6500
		item(100, 1, "day", 1),     // 100 × 365 / 12 = 3041.67 → 3042
		item(4990, 2, "month", 1),  // 9980
	}}
	is.Equal(sub.MonthlyAmount(), int64(10000+6500+3042+9980))

	// A database from before migration 310 with a subscription in it.
	old, err := Open(ctx, path, Options{Schema: full[:cut]})
	is.NoErr(err)
	data, _ := json.Marshal(sub)
	_, err = old.write.Exec(`INSERT INTO subscriptions (id, org_id, livemode, customer_id, status, current_period_start, current_period_end, data, created_at, updated_at)
		VALUES ('sub_old', 'org_a', 0, 'cus_a', 'active', 0, 0, ?, 0, 0)`, string(data))
	is.NoErr(err)
	is.NoErr(old.Close())

	d, err := Open(ctx, path, Options{Schema: full})
	is.NoErr(err)
	t.Cleanup(func() { d.Close() })
	scope := domain.Scope{OrgID: "org_a"}
	mrr := func() (int64, int64) {
		var a, n int64
		is.NoErr(d.Read(ctx, func(tx *Tx) error {
			var err error
			a, n, err = tx.MRR(scope)
			return err
		}))
		return a, n
	}
	a, n := mrr()
	is.Equal(a, sub.MonthlyAmount()) // the migration's SQL computes the same amount
	is.Equal(n, int64(1))

	// Writes keep it: a trial does not count, another environment or organization neither.
	trial := &domain.Subscription{ID: "sub_trial", Customer: "cus_a", Status: domain.SubscriptionTrialing, Items: []domain.SubscriptionItem{item(5000, 1, "month", 1)}}
	pastDue := &domain.Subscription{ID: "sub_pd", Customer: "cus_a", Status: domain.SubscriptionPastDue, Items: []domain.SubscriptionItem{item(5000, 1, "month", 1)}}
	live := &domain.Subscription{ID: "sub_live", Customer: "cus_a", Status: domain.SubscriptionActive, Items: []domain.SubscriptionItem{item(7000, 1, "month", 1)}}
	is.NoErr(d.Write(ctx, func(tx *Tx) error {
		for _, s := range []*domain.Subscription{trial, pastDue} {
			if err := tx.CreateSubscription(scope, s); err != nil {
				return err
			}
		}
		return tx.CreateSubscription(domain.Scope{OrgID: "org_a", Livemode: true}, live)
	}))
	a, n = mrr()
	is.Equal(a, sub.MonthlyAmount()+5000)
	is.Equal(n, int64(2))
	trial.Status = domain.SubscriptionActive
	trial.Items[0].Quantity = 2
	is.NoErr(d.Write(ctx, func(tx *Tx) error { return tx.UpdateSubscription(scope, trial) }))
	a, _ = mrr()
	is.Equal(a, sub.MonthlyAmount()+5000+10000)

	// One index-only aggregate.
	rows, err := d.write.Query("EXPLAIN QUERY PLAN SELECT COALESCE(SUM(mrr), 0), COUNT(*) FROM subscriptions WHERE org_id = ? AND livemode = ? AND status IN (?, ?)", "org_a", 0, "active", "past_due")
	is.NoErr(err)
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		is.NoErr(rows.Scan(&id, &parent, &unused, &detail))
		plan = append(plan, detail)
	}
	rows.Close()
	is.True(strings.Contains(strings.Join(plan, ";"), "USING COVERING INDEX subscriptions_mrr")) // no table rows read
}
