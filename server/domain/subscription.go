package domain

import (
	"fmt"
	"time"
)

// Subscription statuses (Stripe's set).
const (
	SubscriptionIncomplete        = "incomplete"
	SubscriptionIncompleteExpired = "incomplete_expired"
	SubscriptionTrialing          = "trialing"
	SubscriptionActive            = "active"
	SubscriptionPastDue           = "past_due"
	SubscriptionUnpaid            = "unpaid"
	SubscriptionCanceled          = "canceled"
	SubscriptionPaused            = "paused"
)

// SubscriptionStatuses lists every status, for list filters.
var SubscriptionStatuses = []string{SubscriptionIncomplete, SubscriptionIncompleteExpired, SubscriptionTrialing, SubscriptionActive,
	SubscriptionPastDue, SubscriptionUnpaid, SubscriptionCanceled, SubscriptionPaused}

// SubscriptionEvent is something that happens to a subscription and may change its status.
type SubscriptionEvent string

// The events of the subscription state machine.
const (
	// SubFirstPaymentSucceeded: the first invoice of an incomplete subscription was paid.
	SubFirstPaymentSucceeded SubscriptionEvent = "first_payment_succeeded"
	// SubFirstPaymentExpired: the first invoice stayed unpaid for 23 hours.
	SubFirstPaymentExpired SubscriptionEvent = "first_payment_expired"
	// SubTrialEnded: the trial reached its end instant and the first paid period starts.
	SubTrialEnded SubscriptionEvent = "trial_ended"
	// SubPaymentFailed: a renewal invoice could not be charged.
	SubPaymentFailed SubscriptionEvent = "payment_failed"
	// SubInvoiceOverdue: a send_invoice invoice reached its due instant unpaid.
	SubInvoiceOverdue SubscriptionEvent = "invoice_overdue"
	// SubRetriesExhausted: the last dunning retry failed; the final action applies.
	SubRetriesExhausted SubscriptionEvent = "retries_exhausted"
	// SubArrearsCleared: no invoice of the subscription is owed past its due instant any more.
	SubArrearsCleared SubscriptionEvent = "arrears_cleared"
	// SubPaused: collection was paused.
	SubPaused SubscriptionEvent = "paused"
	// SubResumed: collection was resumed.
	SubResumed SubscriptionEvent = "resumed"
	// SubCanceled: canceled now (API, end of period, final dunning action canceled).
	SubCanceled SubscriptionEvent = "canceled"
)

// DunningFinal is what happens when the last dunning retry fails: unpaid or canceled.
type DunningFinal string

// The final dunning actions.
const (
	DunningCanceled DunningFinal = "canceled"
	DunningUnpaid   DunningFinal = "unpaid"
)

// DunningRetryDays are the days after the first failed attempt of a renewal invoice on which its
// payment is retried; when the last retry fails the final action applies.
var DunningRetryDays = []int{3, 5, 7}

// subscriptionTransitions is the whole state machine: from status, on event, to status. A pair
// that is not listed is refused (the event does not apply in that status). The final dunning
// action is filled in by NextSubscriptionStatus.
var subscriptionTransitions = map[string]map[SubscriptionEvent]string{
	SubscriptionIncomplete: {
		SubFirstPaymentSucceeded: SubscriptionActive,
		SubFirstPaymentExpired:   SubscriptionIncompleteExpired,
		SubCanceled:              SubscriptionCanceled,
	},
	SubscriptionTrialing: {
		SubTrialEnded:     SubscriptionActive,
		SubPaymentFailed:  SubscriptionPastDue,
		SubInvoiceOverdue: SubscriptionPastDue,
		SubPaused:         SubscriptionPaused,
		SubCanceled:       SubscriptionCanceled,
		SubArrearsCleared: SubscriptionTrialing,
	},
	SubscriptionActive: {
		SubPaymentFailed:  SubscriptionPastDue,
		SubInvoiceOverdue: SubscriptionPastDue,
		SubPaused:         SubscriptionPaused,
		SubCanceled:       SubscriptionCanceled,
		SubArrearsCleared: SubscriptionActive,
		SubTrialEnded:     SubscriptionActive,
	},
	SubscriptionPastDue: {
		SubPaymentFailed:    SubscriptionPastDue,
		SubInvoiceOverdue:   SubscriptionPastDue,
		SubRetriesExhausted: "", // the final action
		SubArrearsCleared:   SubscriptionActive,
		SubPaused:           SubscriptionPaused,
		SubCanceled:         SubscriptionCanceled,
		SubTrialEnded:       SubscriptionPastDue,
	},
	SubscriptionUnpaid: {
		SubPaymentFailed:  SubscriptionUnpaid,
		SubInvoiceOverdue: SubscriptionUnpaid,
		SubArrearsCleared: SubscriptionActive,
		SubCanceled:       SubscriptionCanceled,
		SubTrialEnded:     SubscriptionUnpaid,
	},
	SubscriptionPaused: {
		SubResumed:        SubscriptionActive,
		SubCanceled:       SubscriptionCanceled,
		SubPaymentFailed:  SubscriptionPaused,
		SubInvoiceOverdue: SubscriptionPaused,
		SubArrearsCleared: SubscriptionPaused,
		SubTrialEnded:     SubscriptionPaused,
	},
	// incomplete_expired and canceled are final.
	SubscriptionIncompleteExpired: {},
	SubscriptionCanceled:          {},
}

// NextSubscriptionStatus returns the status a subscription in status from reaches on ev, or an
// error when ev does not apply in from. final is the action of an exhausted dunning.
func NextSubscriptionStatus(from string, ev SubscriptionEvent, final DunningFinal) (string, error) {
	to, ok := subscriptionTransitions[from][ev]
	if !ok {
		return "", fmt.Errorf("subscription: %s does not apply to a %s subscription", ev, from)
	}
	if ev == SubRetriesExhausted {
		if final == DunningUnpaid {
			return SubscriptionUnpaid, nil
		}
		return SubscriptionCanceled, nil
	}
	return to, nil
}

// SubscriptionFinal reports whether a status is final (nothing more happens).
func SubscriptionFinal(status string) bool {
	return status == SubscriptionCanceled || status == SubscriptionIncompleteExpired
}

// AddInterval returns anchor plus n billing intervals of r as an instant (SPEC 9.2). Months and
// years keep the anchor's day of the month, clamped to the last day of a shorter month and back
// again afterwards (31 January → 28/29 February → 31 March), because each end is computed from
// the anchor, never from the previous end.
func AddInterval(anchor time.Time, r Recurring, n int) time.Time {
	c := max(r.IntervalCount, 1) * n
	switch r.Interval {
	case "day":
		return anchor.UTC().Add(time.Duration(c) * 24 * time.Hour)
	case "week":
		return anchor.UTC().Add(time.Duration(c) * 7 * 24 * time.Hour)
	case "year":
		return addMonths(anchor, 12*c)
	default:
		return addMonths(anchor, c)
	}
}

// NextPeriodEnd returns the first period boundary of the cycle anchored at anchor that is after
// end.
func NextPeriodEnd(anchor time.Time, r Recurring, end time.Time) time.Time {
	if !end.After(anchor) && !end.Equal(anchor) {
		return AddInterval(anchor, r, 1)
	}
	// Estimate the index, then step: at most a few iterations.
	n := 1
	switch r.Interval {
	case "month", "year":
		months := 1
		if r.Interval == "year" {
			months = 12
		}
		months *= max(r.IntervalCount, 1)
		ay, am, _ := anchor.UTC().Date()
		ey, em, _ := end.UTC().Date()
		n = max(1, ((ey-ay)*12+int(em-am))/months-1)
	}
	for !AddInterval(anchor, r, n).After(end) {
		n++
	}
	return AddInterval(anchor, r, n)
}

func addMonths(t time.Time, n int) time.Time {
	t = t.UTC()
	y, m, d := t.Date()
	first := time.Date(y, m+time.Month(n), 1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
	last := first.AddDate(0, 1, -1).Day()
	return first.AddDate(0, 0, min(d, last)-1)
}

// Prorate returns amount × part / whole rounded half away from zero: the share of a period's
// amount for the part of it that remains (seconds).
func Prorate(amount int64, part, whole time.Duration) int64 {
	if whole <= 0 || part <= 0 {
		return 0
	}
	if part >= whole {
		return amount
	}
	p, w := int64(part/time.Second), int64(whole/time.Second)
	if w == 0 {
		return 0
	}
	neg := amount < 0
	if neg {
		amount = -amount
	}
	v := (amount*p + w/2) / w
	if neg {
		return -v
	}
	return v
}

// Late-payment limits: a fine (multa) of at most 2% once and interest (juros de mora) of at most
// 1% per 30 days, the ceilings Brazilian consumer law and bank practice use.
const (
	MaxFineRate     = 200
	MaxInterestRate = 100
)

// LateCharges returns the fine and the interest owed on base centavos paid at now for an invoice
// due at due (SPEC 9.2): nothing up to the due instant; after it the fine once (fineRate basis
// points) and interest of interestRate basis points per 30 days, pro rata per whole 24-hour
// period elapsed since the due instant. Both round half up to the centavo.
func LateCharges(base, fineRate, interestRate int64, due, now time.Time) (fine, interest int64) {
	if due.IsZero() || !now.After(due) || base <= 0 {
		return 0, 0
	}
	fine = (base*fineRate + 5000) / 10000
	days := int64(now.Sub(due) / (24 * time.Hour))
	interest = (base*interestRate*days + 150000) / 300000
	return fine, interest
}

// Event types of subscriptions.
const (
	EventSubscriptionCreated      = "customer.subscription.created"
	EventSubscriptionUpdated      = "customer.subscription.updated"
	EventSubscriptionDeleted      = "customer.subscription.deleted"
	EventSubscriptionTrialWillEnd = "customer.subscription.trial_will_end"
	EventSubscriptionPaused       = "customer.subscription.paused"
	EventSubscriptionResumed      = "customer.subscription.resumed"
	EventInvoiceUpcoming          = "invoice.upcoming"
)

// MRRStatuses are the statuses whose subscriptions count in monthly recurring revenue: the ones
// being billed (past_due still is, until dunning ends it). Trials, paused, unpaid, incomplete and
// ended subscriptions count zero.
var MRRStatuses = []string{SubscriptionActive, SubscriptionPastDue}

// MonthlyAmount is the subscription's recurring amount normalized to one month, in centavos, at
// its items' list prices (before coupons): for each item unit_amount × quantity, divided by
// interval_count and scaled by the months in its interval (month 1, year 12, week 12/52, day
// 12/365, that is × 52/12 and × 365/12 per month), rounded half up to the centavo per item.
func (s *Subscription) MonthlyAmount() int64 {
	var total int64
	for _, it := range s.Items {
		total += MonthlyItemAmount(it.Price.UnitAmount*it.Quantity, it.Price.Recurring)
	}
	return total
}

// MonthlyItemAmount normalizes amount, billed every recurring interval, to one month.
func MonthlyItemAmount(amount int64, r *Recurring) int64 {
	if r == nil {
		return 0
	}
	count := int64(max(r.IntervalCount, 1))
	var num, den int64
	switch r.Interval {
	case "day":
		num, den = 365, 12*count
	case "week":
		num, den = 52, 12*count
	case "month":
		num, den = 1, count
	case "year":
		num, den = 1, 12*count
	default:
		return 0
	}
	return (amount*num*2 + den) / (2 * den)
}
