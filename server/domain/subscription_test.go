package domain

import (
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestAddIntervalAnchorDay: monthly periods keep the anchor's day, clamped in shorter months and
// restored afterwards; the time of day is kept; days and weeks are exact 24-hour multiples.
func TestAddIntervalAnchorDay(t *testing.T) {
	is := is.New(t)
	anchor := time.Date(2027, 1, 31, 14, 30, 0, 0, time.UTC)
	month := Recurring{Interval: "month"}
	want := []string{"2027-02-28T14:30:00Z", "2027-03-31T14:30:00Z", "2027-04-30T14:30:00Z", "2027-05-31T14:30:00Z"}
	for i, w := range want {
		is.Equal(AddInterval(anchor, month, i+1).Format(time.RFC3339), w)
	}
	leap := time.Date(2028, 1, 31, 12, 0, 0, 0, time.UTC)
	is.Equal(AddInterval(leap, month, 1).Format(time.RFC3339), "2028-02-29T12:00:00Z")
	is.Equal(AddInterval(time.Date(2028, 2, 29, 12, 0, 0, 0, time.UTC), Recurring{Interval: "year"}, 1).Format(time.RFC3339), "2029-02-28T12:00:00Z")
	is.Equal(AddInterval(anchor, Recurring{Interval: "month", IntervalCount: 3}, 1).Format(time.RFC3339), "2027-04-30T14:30:00Z")
	is.Equal(AddInterval(anchor, Recurring{Interval: "week"}, 2), anchor.Add(14*24*time.Hour))
	// NextPeriodEnd from any end finds the next boundary of the cycle.
	end := AddInterval(anchor, month, 1) // 28 Feb
	is.Equal(NextPeriodEnd(anchor, month, end).Format(time.RFC3339), "2027-03-31T14:30:00Z")
	is.Equal(NextPeriodEnd(anchor, month, AddInterval(anchor, month, 11)).Format(time.RFC3339), "2028-01-31T14:30:00Z")
}

// TestSubscriptionStateMachine: every status and the transitions CONTRACT 12's statuses allow;
// final statuses accept nothing; the final dunning action is the configured one.
func TestSubscriptionStateMachine(t *testing.T) {
	is := is.New(t)
	for _, st := range SubscriptionStatuses {
		_, ok := subscriptionTransitions[st]
		is.True(ok) // every status is in the table
	}
	cases := []struct {
		from string
		ev   SubscriptionEvent
		to   string
	}{
		{SubscriptionIncomplete, SubFirstPaymentSucceeded, SubscriptionActive},
		{SubscriptionIncomplete, SubFirstPaymentExpired, SubscriptionIncompleteExpired},
		{SubscriptionTrialing, SubTrialEnded, SubscriptionActive},
		{SubscriptionTrialing, SubPaymentFailed, SubscriptionPastDue},
		{SubscriptionActive, SubPaymentFailed, SubscriptionPastDue},
		{SubscriptionActive, SubInvoiceOverdue, SubscriptionPastDue},
		{SubscriptionPastDue, SubArrearsCleared, SubscriptionActive},
		{SubscriptionUnpaid, SubArrearsCleared, SubscriptionActive},
		{SubscriptionActive, SubPaused, SubscriptionPaused},
		{SubscriptionPaused, SubResumed, SubscriptionActive},
		{SubscriptionPastDue, SubCanceled, SubscriptionCanceled},
	}
	for _, c := range cases {
		got, err := NextSubscriptionStatus(c.from, c.ev, DunningCanceled)
		is.NoErr(err)
		is.Equal(got, c.to)
	}
	got, _ := NextSubscriptionStatus(SubscriptionPastDue, SubRetriesExhausted, DunningCanceled)
	is.Equal(got, SubscriptionCanceled)
	got, _ = NextSubscriptionStatus(SubscriptionPastDue, SubRetriesExhausted, DunningUnpaid)
	is.Equal(got, SubscriptionUnpaid)
	for _, final := range []string{SubscriptionCanceled, SubscriptionIncompleteExpired} {
		for _, ev := range []SubscriptionEvent{SubCanceled, SubResumed, SubArrearsCleared, SubPaymentFailed} {
			_, err := NextSubscriptionStatus(final, ev, DunningCanceled)
			is.True(err != nil)
		}
	}
	_, err := NextSubscriptionStatus(SubscriptionActive, SubResumed, DunningCanceled)
	is.True(err != nil) // resuming an active subscription is refused
	_, err = NextSubscriptionStatus(SubscriptionActive, SubRetriesExhausted, DunningCanceled)
	is.True(err != nil)
}

// TestLateCharges: nothing up to the due instant; the fine once after it; interest per whole
// 24-hour period, rounded half up.
func TestLateCharges(t *testing.T) {
	is := is.New(t)
	due := time.Date(2027, 3, 10, 12, 0, 0, 0, time.UTC)
	f, i := LateCharges(100000, 200, 100, due, due)
	is.Equal(f+i, int64(0))
	f, i = LateCharges(100000, 200, 100, due, due.Add(time.Second))
	is.Equal(f, int64(2000))
	is.Equal(i, int64(0))
	f, i = LateCharges(100000, 200, 100, due, due.Add(30*24*time.Hour-time.Second))
	is.Equal(i, int64(967)) // 29 whole days: 1000 × 29/30 = 966.67
	_, i = LateCharges(100000, 200, 100, due, due.Add(30*24*time.Hour))
	is.Equal(i, int64(1000))
	_, i = LateCharges(24890, 200, 100, due, due.Add(5*24*time.Hour+time.Hour))
	is.Equal(i, int64(41)) // 248.90 × 1% × 5/30 = 0.4148
	is.Equal(Prorate(3000, 15*24*time.Hour, 30*24*time.Hour), int64(1500))
	is.Equal(Prorate(-1001, time.Hour, 2*time.Hour), int64(-501))
}

func TestMonthlyItemAmount(t *testing.T) {
	for _, c := range []struct {
		amount   int64
		interval string
		count    int
		want     int64
	}{
		{4990, "month", 1, 4990},
		{9000, "month", 3, 3000},
		{120000, "year", 1, 10000},
		{100, "year", 1, 8},     // 8.33 → 8
		{1000, "week", 1, 4333}, // 4333.33
		{1000, "week", 2, 2167}, // 2166.67
		{100, "day", 1, 3042},   // 3041.67
		{3, "month", 2, 2},      // 1.5 rounds half up
		{4990, "fortnight", 1, 0},
	} {
		if got := MonthlyItemAmount(c.amount, &Recurring{Interval: c.interval, IntervalCount: c.count}); got != c.want {
			t.Errorf("%d every %d %s: %d, want %d", c.amount, c.count, c.interval, got, c.want)
		}
	}
	if MonthlyItemAmount(4990, nil) != 0 {
		t.Error("a one-time price has no monthly amount")
	}
}
