package processors

import (
	"errors"
	"net"
	"testing"
	"time"

	"troco/server/payments"
)

// After Threshold consecutive failures the breaker refuses calls for Cooldown, then lets calls
// through again; a success resets the count. A refused call counts as not sent.
func TestBreaker(t *testing.T) {
	b := &Breaker{Threshold: 3, Cooldown: time.Minute}
	now := time.Unix(1_000_000, 0)
	for range 2 {
		b.Done(now, true)
	}
	if err := b.Allow(now); err != nil {
		t.Fatalf("open after 2 failures: %v", err)
	}
	b.Done(now, true)
	err := b.Allow(now.Add(time.Second))
	if !errors.Is(err, ErrCircuitOpen) || !NotSent(err) {
		t.Fatalf("want open circuit (not sent), got %v", err)
	}
	if !errors.Is(Classify(err), payments.ErrNotSent) {
		t.Fatal("an open circuit must classify as not sent")
	}
	if err := b.Allow(now.Add(time.Minute + time.Second)); err != nil {
		t.Fatalf("still open after the cooldown: %v", err)
	}
	b.Done(now, false)
	b.Done(now, true)
	if err := b.Allow(now.Add(2 * time.Minute)); err != nil {
		t.Fatalf("a success resets the count: %v", err)
	}
}

func TestNotSentOnlyForDialFailures(t *testing.T) {
	dial := &net.OpError{Op: "dial", Err: errors.New("connection refused")}
	read := &net.OpError{Op: "read", Err: errors.New("connection reset")}
	if !NotSent(dial) || NotSent(read) {
		t.Fatal("a dial failure is not sent; a read failure after sending is unknown")
	}
	if Transient(&StatusError{Status: 400}) || !Transient(&StatusError{Status: 503}) || !Transient(read) {
		t.Fatal("4xx is final; 5xx and network errors are retried")
	}
}
