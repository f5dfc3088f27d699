package server

import (
	"net/http"
	"time"

	"troco/db"
	"troco/server/domain"
)

// maxMetricBuckets bounds a metrics request (one indexed aggregate per bucket).
const maxMetricBuckets = 400

type metricsBucket struct {
	Start     domain.Time               `json:"start"`
	End       domain.Time               `json:"end"`
	Gross     int64                     `json:"gross"`
	Net       int64                     `json:"net"`
	Fees      int64                     `json:"fees"`
	Refunds   int64                     `json:"refunds"`
	Count     int64                     `json:"count"`
	PerMethod map[string]*metricsMethod `json:"per_method"`
}

type metricsMethod struct {
	Gross   int64 `json:"gross"`
	Net     int64 `json:"net"`
	Fees    int64 `json:"fees"`
	Refunds int64 `json:"refunds"`
	Count   int64 `json:"count"`
}

// handleMetrics serves GET /api/v1/metrics?start=&end=&interval=day|week|month: the ledger's
// gross, net, fees, refunds and payment count per interval (UTC calendar days, ISO weeks from
// start, calendar months), in total and per payment method, and the MRR now.
func (s *Server) handleMetrics() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		for k := range q {
			if k != "start" && k != "end" && k != "interval" {
				s.writeError(w, r, domain.Invalid(k, "Received unknown parameter: %s.", k))
				return
			}
		}
		parse := func(name string) (time.Time, error) {
			v := q.Get(name)
			if v == "" {
				return time.Time{}, domain.Missing(name)
			}
			t, err := domain.ParseTimestamp(v)
			if err != nil {
				return time.Time{}, domain.Invalid(name, "%s must be an RFC 3339 timestamp (e.g. 2026-01-02T00:00:00Z).", name)
			}
			return t.UTC(), nil
		}
		start, err := parse("start")
		if err == nil {
			var end time.Time
			if end, err = parse("end"); err == nil {
				interval := q.Get("interval")
				if interval == "" {
					interval = "day"
				}
				var step func(time.Time) time.Time
				switch interval {
				case "day":
					step = func(t time.Time) time.Time { return t.AddDate(0, 0, 1) }
				case "week":
					step = func(t time.Time) time.Time { return t.AddDate(0, 0, 7) }
				case "month":
					step = func(t time.Time) time.Time { return t.AddDate(0, 1, 0) }
				default:
					err = domain.Invalid("interval", "interval must be day, week or month.")
				}
				if err == nil && !end.After(start) {
					err = domain.Invalid("end", "end must be after start.")
				}
				if err == nil {
					var bounds []time.Time
					for t := start; t.Before(end) && len(bounds) <= maxMetricBuckets; t = step(t) {
						bounds = append(bounds, t)
					}
					if len(bounds) > maxMetricBuckets {
						err = domain.Invalid("interval", "At most %d intervals per request: widen the interval or narrow the range.", maxMetricBuckets)
					} else {
						s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return metricsOf(tx, a.Scope, bounds, end, step) })
						return
					}
				}
			}
		}
		s.writeError(w, r, err)
	})
}

func metricsOf(tx *db.Tx, scope domain.Scope, bounds []time.Time, end time.Time, step func(time.Time) time.Time) (any, error) {
	out := make([]metricsBucket, 0, len(bounds))
	for _, from := range bounds {
		to := step(from)
		if to.After(end) {
			to = end
		}
		sums, err := tx.SumLedger(scope, from.Unix(), to.Unix())
		if err != nil {
			return nil, err
		}
		b := metricsBucket{Start: domain.At(from), End: domain.At(to), PerMethod: map[string]*metricsMethod{}}
		for _, m := range sums {
			b.Gross += m.Gross
			b.Net += m.Net
			b.Fees += m.Fees
			b.Refunds += m.Refunds
			b.Count += m.Payments
			b.PerMethod[m.Method] = &metricsMethod{Gross: m.Gross, Net: m.Net, Fees: m.Fees, Refunds: m.Refunds, Count: m.Payments}
		}
		out = append(out, b)
	}
	amount, count, err := tx.MRR(scope)
	if err != nil {
		return nil, err
	}
	return metricsResult{Object: "metrics", Currency: "BRL", Data: out, MRR: metricsMRR{Amount: amount, Subscriptions: count, AsOf: domain.At(tx.Now)}}, nil
}

// metricsResult is the answer of GET /api/v1/metrics.
type metricsResult struct {
	Object   string          `json:"object"`
	Currency string          `json:"currency"`
	Data     []metricsBucket `json:"data"`
	MRR      metricsMRR      `json:"mrr"`
}

// metricsMRR is the monthly recurring revenue now (domain.Subscription.MonthlyAmount summed over
// the active and past_due subscriptions), whatever the range asked: the past states of
// subscriptions are not kept, so it is not split per interval.
type metricsMRR struct {
	Amount        int64       `json:"amount"`
	Subscriptions int64       `json:"subscriptions"`
	AsOf          domain.Time `json:"as_of"`
}
