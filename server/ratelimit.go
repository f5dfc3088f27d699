package server

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"troco/server/clock"
	"troco/server/domain"
)

// Rate limits of CONTRACT 10 for /v1, per key.
const (
	liveRatePerSecond = 100
	testRatePerSecond = 25
)

// rateLimiter is a token bucket per API key. Its state is per process: each replica enforces the
// limit on the requests it serves.
type rateLimiter struct {
	clock   clock.Clock
	mu      sync.Mutex
	buckets map[string]*bucket
	windows map[string][]time.Time // admitted request times of the per-minute limits
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newRateLimiter(c clock.Clock) *rateLimiter {
	return &rateLimiter{clock: c, buckets: map[string]*bucket{}}
}

// allow takes a token for key at rate per second; when none is left it returns the wait.
func (l *rateLimiter) allow(key string, rate float64) (bool, time.Duration) {
	ok, _, wait, _ := l.take(key, rate, rate)
	return ok, wait
}

// take takes a token from key's bucket of capacity burst refilled at rate per second. It returns
// whether a token was taken, the whole tokens left, the wait for the next token when none was,
// and the time until the bucket is full again.
func (l *rateLimiter) take(key string, burst, rate float64) (ok bool, remaining int, wait, full time.Duration) {
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		b = &bucket{tokens: burst, last: now}
		l.buckets[key] = b
	}
	if el := now.Sub(b.last).Seconds(); el > 0 {
		b.tokens = math.Min(burst, b.tokens+el*rate)
	}
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		ok = true
	} else {
		wait = time.Duration((1 - b.tokens) / rate * float64(time.Second))
	}
	full = time.Duration((burst - b.tokens) / rate * float64(time.Second))
	return ok, int(b.tokens), wait, full
}

func (s *Server) rateLimited(w http.ResponseWriter, r *http.Request, k *domain.APIKey) bool {
	if !s.cfg.RateLimit {
		return false
	}
	rate := float64(testRatePerSecond)
	if k.Livemode {
		rate = liveRatePerSecond
	}
	ok, wait := s.limiter.allow(k.ID, rate)
	if ok {
		return false
	}
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(wait.Seconds())))))
	s.writeError(w, r, &domain.Error{Status: http.StatusTooManyRequests, Type: domain.TypeRateLimit, Code: domain.CodeRateLimit,
		Message: "Too many requests with this API key; retry after the Retry-After delay with exponential backoff."})
	return true
}

// window admits at most limit requests for key in any span of per (a sliding log of the admitted
// requests' times): the per-minute limits of /api/v1 are counts per minute, which a token bucket
// (a full burst, then refills) would exceed. It returns whether the request was admitted, the
// requests left now, the wait until one is admitted again (when refused), and the time until the
// whole budget is free again.
func (l *rateLimiter) window(key string, limit int, per time.Duration) (ok bool, remaining int, wait, full time.Duration) {
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.windows[key]
	drop := 0
	for drop < len(w) && !w[drop].After(now.Add(-per)) {
		drop++
	}
	w = w[drop:]
	if len(w) < limit {
		w = append(w, now)
		ok = true
	} else {
		wait = w[0].Add(per).Sub(now)
	}
	if l.windows == nil {
		l.windows = map[string][]time.Time{}
	}
	l.windows[key] = w
	if len(w) > 0 {
		full = w[len(w)-1].Add(per).Sub(now)
	}
	return ok, limit - len(w), wait, full
}
