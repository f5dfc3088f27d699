package webhooks

import "time"

// Retry schedule of a delivery: exponential from FirstRetry, doubling to MaxRetryDelay, for as
// long as the next try falls within RetryWindow of the first; then the delivery is failed and the
// endpoint marked failing. An endpoint whose deliveries have all failed for DisableAfter is
// disabled (with a webhook_endpoint.disabled event).
const (
	FirstRetry    = 30 * time.Second
	MaxRetryDelay = time.Hour
	RetryWindow   = 72 * time.Hour
	DisableAfter  = 5 * 24 * time.Hour
)

// RetryDelay is the wait after failed attempt n (from 1): FirstRetry·2^(n−1) capped at
// MaxRetryDelay, plus up to 25% of jitter from j in [0, 1) so that retries of many deliveries
// failed together spread out. The delay is never shorter than the nominal schedule.
func RetryDelay(attempt int, j float64) time.Duration {
	d := FirstRetry
	for i := 1; i < attempt && d < MaxRetryDelay; i++ {
		d *= 2
	}
	d = min(d, MaxRetryDelay)
	if j < 0 || j >= 1 {
		j = 0
	}
	return d + time.Duration(j*float64(d)/4).Truncate(time.Second)
}
