package jobs

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/server/clock"
)

func TestRunDueRunsEveryJobWithTheClocksNow(t *testing.T) {
	is := is.New(t)
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	r := NewRunner(clock.NewFixed(at), slog.New(slog.NewTextHandler(io.Discard, nil)))
	var order []string
	var seen time.Time
	r.Add(Job{Name: "a", Every: time.Hour, Run: func(ctx context.Context, now time.Time) error {
		order, seen = append(order, "a"), now
		return errors.New("boom")
	}})
	r.Add(Job{Name: "b", Every: time.Hour, Run: func(ctx context.Context, now time.Time) error {
		order = append(order, "b")
		return nil
	}})
	observed := map[string]error{}
	r.Observe = func(name string, d time.Duration, err error) { observed[name] = err }
	err := r.RunDue(context.Background())
	is.True(err != nil)           // the first failure is reported
	is.Equal(len(observed), 2)    // every run is observed (metrics)
	is.True(observed["a"] != nil) // with its error
	is.NoErr(observed["b"])
	is.Equal(order, []string{"a", "b"}) // a failing job does not stop the others
	is.Equal(seen, at)                  // jobs read time from the injected clock
}

func TestStopWaitsForRunningJobs(t *testing.T) {
	is := is.New(t)
	r := NewRunner(clock.Real{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	started, finished := make(chan struct{}), atomic.Bool{}
	var once atomic.Bool
	r.Add(Job{Name: "slow", Every: 10 * time.Millisecond, Run: func(ctx context.Context, now time.Time) error {
		if once.CompareAndSwap(false, true) {
			close(started)
		}
		time.Sleep(50 * time.Millisecond)
		finished.Store(true)
		return nil
	}})
	r.Start()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("job never started")
	}
	r.Stop()
	is.True(finished.Load()) // Stop returns only after the running job finished
}
