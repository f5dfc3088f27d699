package payments

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/db"
	"troco/server/calendar"
	"troco/server/core"
	"troco/server/domain"
)

// approvedAuth creates a customer with email and an authorization of max 9990 a month.
func approvedAuth(t *testing.T, store *db.DB, svc *Service, a domain.Actor, email string) *domain.PixAuthorization {
	t.Helper()
	var pa *domain.PixAuthorization
	err := store.Write(context.Background(), func(tx *db.Tx) error {
		cus, err := core.CreateCustomer(tx, a, core.CustomerParams{Email: domain.Opt[string]{Set: true, V: email}})
		if err != nil {
			return err
		}
		max := int64(9990)
		pa, err = svc.CreatePixAuthorization(tx, a, PixAuthParams{Customer: cus.ID, MaxAmount: &max, Interval: "month", Origin: "https://troco.example"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return pa
}

// TestChargePixAutomatico: a charge under an approved authorization succeeds once per reference;
// above max_amount, after cancellation or with a non-pix_automatico method it is refused before
// anything is written; pixauto_insufficient fails with insufficient_funds; retries fall on the
// next business days.
func TestChargePixAutomatico(t *testing.T) {
	is := is.New(t)
	store, _, svc, a := openEngine(t)
	ctx := context.Background()
	pa := approvedAuth(t, store, svc, a, "pixauto_approve@example.com")
	is.Equal(pa.Status, domain.PixAuthApproved)

	charge := func(p PixAutoChargeParams) (*domain.PaymentIntent, error) {
		var pi *domain.PaymentIntent
		err := store.Write(ctx, func(tx *db.Tx) error {
			var err error
			pi, err = svc.ChargePixAutomatico(tx, a, p)
			return err
		})
		return pi, err
	}
	count := func() int {
		n := 0
		is.NoErr(store.Read(ctx, func(tx *db.Tx) error {
			items, _, err := tx.ListCharges(a.Scope, db.ChargeFilter{Customer: pa.Customer}, db.ListParams{Limit: 100})
			n = len(items)
			return err
		}))
		return n
	}

	pi, err := charge(PixAutoChargeParams{PaymentMethod: *pa.PaymentMethod, Amount: 9990, Reference: "inv_1"})
	is.NoErr(err)
	is.Equal(pi.Status, domain.PIStatusSucceeded)
	again, err := charge(PixAutoChargeParams{PaymentMethod: *pa.PaymentMethod, Amount: 9990, Reference: "inv_1"})
	is.NoErr(err)
	is.Equal(again.ID, pi.ID) // the same reference is never charged twice
	is.Equal(count(), 1)

	for _, tc := range []struct {
		p     PixAutoChargeParams
		param string
	}{
		{PixAutoChargeParams{PaymentMethod: *pa.PaymentMethod, Amount: 9991, Reference: "inv_2"}, "amount"}, // above max_amount
		{PixAutoChargeParams{PaymentMethod: "pm_unknown", Amount: 100, Reference: "inv_2"}, "payment_method"},
		{PixAutoChargeParams{PaymentMethod: *pa.PaymentMethod, Amount: 100}, "reference"},
	} {
		_, err := charge(tc.p)
		e, ok := domain.AsError(err)
		is.True(ok)
		is.Equal(e.Param, tc.param)
	}
	is.Equal(count(), 1) // nothing charged

	// After cancellation: refused, nothing charged.
	is.NoErr(store.Write(ctx, func(tx *db.Tx) error {
		_, err := svc.CancelPixAuthorization(tx, a, pa.ID)
		return err
	}))
	_, err = charge(PixAutoChargeParams{PaymentMethod: *pa.PaymentMethod, Amount: 100, Reference: "inv_3"})
	e, ok := domain.AsError(err)
	is.True(ok)
	is.Equal(e.Status, 409)
	is.Equal(count(), 1)

	// Insufficient funds: the attempt fails and is recorded; the reference stays unpaid.
	poor := approvedAuth(t, store, svc, a, "pixauto_insufficient@example.com")
	is.Equal(poor.Status, domain.PixAuthApproved)
	failed, err := charge(PixAutoChargeParams{PaymentMethod: *poor.PaymentMethod, Amount: 5000, Reference: "inv_9"})
	is.NoErr(err)
	is.Equal(failed.Status, domain.PIStatusRequiresPaymentMethod)
	is.Equal(failed.LastPaymentError.Code, "insufficient_funds")
	retry, err := charge(PixAutoChargeParams{PaymentMethod: *poor.PaymentMethod, Amount: 5000, Reference: "inv_9"})
	is.NoErr(err)
	is.True(retry.ID != failed.ID) // a retry is a new attempt

	// Retries on the next three business days: after Friday 13 Feb 2026 come Carnaval and the
	// weekend.
	days := svc.PixAutoRetryDates(time.Date(2026, 2, 13, 15, 0, 0, 0, time.UTC))
	is.Equal(len(days), 3)
	is.Equal(days[0].Format(calendar.Layout), "2026-02-18")
	is.Equal(days[1].Format(calendar.Layout), "2026-02-19")
	is.Equal(days[2].Format(calendar.Layout), "2026-02-20")
}
