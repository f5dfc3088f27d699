package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestLiveSubscriptionRenewsThroughCielo: in live mode a subscription's first invoice and its
// renewal charge the saved card through the card processor (the Cielo double), on the two-phase
// path (reserve in the transaction, call after commit, apply); a processor that is down at the
// next renewal is a failed attempt: past_due, retried on day 3.
func TestLiveSubscriptionRenewsThroughCielo(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	cus := e.payCustomer(e.Live, "ana@example.com")
	pi := e.payIntent(e.Live, 1000, map[string]any{"customer": cus})
	r := e.payConfirm(e.Live, pi.Str("id"), map[string]any{"card": payCard(liveApprove), "save_payment_method": true})
	is.Equal(r.Status, 200)
	pm := r.Str("payment_method")
	price := e.coPrice(e.Live, "Plano", 4990, map[string]any{"interval": "month"})
	s := e.Do("POST", "/v1/subscriptions", e.Live, map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pm})
	is.Equal(s.Status, 200)
	id := s.Str("id")
	got := e.Do("GET", "/v1/subscriptions/"+id, e.Live, nil)
	is.Equal(got.Str("status"), "active")
	is.Equal(e.Do("GET", "/v1/invoices/"+got.Str("latest_invoice"), e.Live, nil).Str("status"), "paid")
	is.Equal(e.Cielo.ChargeCount(), 2)

	// The renewal: reserved in the job's transaction, made after it commits, applied.
	end := got.Time("current_period_end")
	e.Clock.Advance(end.Sub(e.Clock.Now()) + time.Second)
	is.NoErr(e.Jobs.RunDue(context.Background()))
	got = e.Do("GET", "/v1/subscriptions/"+id, e.Live, nil)
	is.Equal(got.Str("status"), "active")
	inv := e.Do("GET", "/v1/invoices/"+got.Str("latest_invoice"), e.Live, nil)
	is.Equal(inv.Str("status"), "paid")
	is.Equal(inv.Str("billing_reason"), "subscription_cycle")
	is.Equal(e.Cielo.ChargeCount(), 3)

	e.CieloSrv.Close()
	end = got.Time("current_period_end")
	e.Clock.Advance(end.Sub(e.Clock.Now()) + time.Second)
	is.NoErr(e.Jobs.RunDue(context.Background()))
	got = e.Do("GET", "/v1/subscriptions/"+id, e.Live, nil)
	is.Equal(got.Str("status"), "past_due")
	inv = e.Do("GET", "/v1/invoices/"+got.Str("latest_invoice"), e.Live, nil)
	is.Equal(inv.Str("status"), "open")
	is.Equal(inv.Time("next_payment_attempt"), end.Add(3*24*time.Hour))
}
