// Package jobs runs troco's background work: expiry, settlement, renewals, retries. A job is an
// ordinary function of (ctx, now) that claims its due work in a transaction, so running it on
// several replicas at once or twice in a row is safe. cron only schedules the jobs; time travel
// (CONTRACT 9) runs them all at once.
package jobs

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"troco/server/clock"
)

// Job is one named unit of background work.
type Job struct {
	Name string
	// Every is how often the scheduler runs it.
	Every time.Duration
	Run   func(ctx context.Context, now time.Time) error
}

// Runner holds the registered jobs and their scheduler.
type Runner struct {
	clock clock.Clock
	log   *slog.Logger
	mu    sync.Mutex // serializes runs in this process
	jobs  []Job
	cron  *cron.Cron
	// Observe, when set before Start, receives every run's job name, duration and error (metrics).
	Observe func(name string, d time.Duration, err error)
}

// NewRunner returns a runner reading time from c.
func NewRunner(c clock.Clock, log *slog.Logger) *Runner {
	return &Runner{clock: c, log: log}
}

// Add registers a job; call before Start.
func (r *Runner) Add(j Job) { r.jobs = append(r.jobs, j) }

// Start schedules every job with cron.
func (r *Runner) Start() {
	r.cron = cron.New(cron.WithChain(cron.Recover(cron.DiscardLogger)))
	for _, j := range r.jobs {
		j := j
		r.cron.Schedule(cron.Every(j.Every), cron.FuncJob(func() { r.run(context.Background(), j) }))
	}
	r.cron.Start()
}

// Stop stops scheduling and waits for running jobs to finish.
func (r *Runner) Stop() {
	if r.cron != nil {
		<-r.cron.Stop().Done()
	}
}

// RunDue runs every job once now, in registration order, and returns the first error.
func (r *Runner) RunDue(ctx context.Context) error {
	var first error
	for _, j := range r.jobs {
		if err := r.run(ctx, j); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (r *Runner) run(ctx context.Context, j Job) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	start := time.Now()
	err := j.Run(ctx, r.clock.Now())
	if r.Observe != nil {
		r.Observe(j.Name, time.Since(start), err)
	}
	if err != nil {
		r.log.Error("job failed", slog.String("job", j.Name), slog.String("error", err.Error()))
	}
	return err
}
