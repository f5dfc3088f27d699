package server

import (
	"fmt"
	"testing"
	"time"

	"troco/server/clock"
)

// The limiter forgets tokens idle for over two windows: memory stays bounded by the tokens in use,
// and a forgotten token starts with its full budget, as it would have anyway.
func TestRateLimiterEvictsIdleEntries(t *testing.T) {
	c := clock.NewFixed(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	l := newRateLimiter(c)
	for i := range 500 {
		l.window(fmt.Sprintf("api:key_%d", i), 100, time.Minute)
		l.allow(fmt.Sprintf("key_%d", i), 25)
	}
	if n := l.size(); n != 1000 {
		t.Fatalf("size after 500 tokens on each limit = %d, want 1000", n)
	}
	// A token still in use survives; the rest go once idle for over two windows.
	c.Add(90 * time.Second)
	ok, remaining, _, _ := l.window("api:key_0", 100, time.Minute)
	if !ok || remaining != 99 { // its first request left the window after a minute
		t.Fatalf("key_0 after 90s: ok=%v remaining=%d, want true 99", ok, remaining)
	}
	if n := l.size(); n != 1000 {
		t.Fatalf("size after 90s = %d, want 1000 (nothing idle for two windows yet)", n)
	}
	c.Add(61 * time.Second)
	l.window("api:key_0", 100, time.Minute)
	if n := l.size(); n != 1 {
		t.Fatalf("size after 151s = %d, want 1 (only the window of api:key_0, in use)", n)
	}
	l.mu.Lock()
	_, kept := l.windows["api:key_0"]
	_, gone := l.windows["api:key_1"]
	_, bucketGone := l.buckets["key_1"]
	l.mu.Unlock()
	if !kept || gone || bucketGone {
		t.Fatalf("kept api:key_0=%v, api:key_1 present=%v, bucket key_1 present=%v", kept, gone, bucketGone)
	}
	// A forgotten token starts again with its whole budget.
	ok, remaining, _, _ = l.window("api:key_1", 100, time.Minute)
	if !ok || remaining != 99 {
		t.Fatalf("evicted token: ok=%v remaining=%d, want true 99", ok, remaining)
	}
}
