package db

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/server/domain"
)

// The pipelined writer under concurrent writes of every kind (succeeding, failing, cancelled,
// with events), a syncer whose fsyncs take random time, and a Close while writes are queued:
// every Write returns; one that returned nil began an fsync after it ran and is on the file
// after a reopen; one that failed left nothing; OnEvent saw exactly the events of the writes
// that returned nil, each only once an fsync had begun after its write.
func TestFullSyncPipelineStress(t *testing.T) {
	sqliteOnly(t)
	is := is.New(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "stress.db")
	var syncsBegun atomic.Int64
	var mu sync.Mutex
	seen := map[string]int64{} // event id → fsyncs begun when OnEvent saw it
	d, err := Open(ctx, path, Options{Schema: realSchema(t), Synchronous: "FULL", OnEvent: func(e *domain.Event) {
		mu.Lock()
		seen[e.ID] = syncsBegun.Load()
		mu.Unlock()
	}})
	is.NoErr(err)
	is.True(d.syncer != nil)
	d.syncer.hook = func() {
		syncsBegun.Add(1)
		if n := rand.IntN(4); n > 0 {
			time.Sleep(time.Duration(n) * time.Millisecond)
		}
	}
	scope := domain.Scope{OrgID: "org_1"}
	type result struct {
		name    string
		err     error
		ranAt   int64 // fsyncs begun while its function ran
		doneAt  int64 // fsyncs begun when Write returned
		eventID string
		kind    int
	}
	const writers, each = 8, 60
	results := make(chan result, writers*each)
	var wg sync.WaitGroup
	closeAt := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if w == 0 && i == each/2 {
					close(closeAt) // half way through one writer, the database closes
				}
				name := fmt.Sprintf("w%d_%d", w, i)
				r := result{name: name, kind: rand.IntN(4)}
				wctx := ctx
				if r.kind == 2 {
					c, cancel := context.WithCancel(ctx)
					cancel()
					wctx = c
				}
				r.err = d.Write(wctx, func(tx *Tx) error {
					r.ranAt = syncsBegun.Load()
					if err := tx.PutSetting(name, "v"); err != nil {
						return err
					}
					e := &domain.Event{Type: "customer.created", Data: domain.EventData{Object: map[string]any{"id": "cus_" + name}}}
					if err := tx.InsertEvent(scope, e); err != nil {
						return err
					}
					r.eventID = e.ID
					if r.kind == 1 {
						return errors.New("refused")
					}
					return nil
				})
				r.doneAt = syncsBegun.Load()
				results <- r
			}
		}()
	}
	<-closeAt
	time.Sleep(time.Duration(rand.IntN(5)) * time.Millisecond)
	is.NoErr(d.Close())
	wg.Wait() // every Write returned
	close(results)

	d, err = Open(ctx, path, Options{Schema: realSchema(t), Synchronous: "FULL"})
	is.NoErr(err)
	defer d.Close()
	ok, failed := 0, 0
	for r := range results {
		_, stored := setting(t, d, r.name)
		mu.Lock()
		at, evSeen := seen[r.eventID]
		mu.Unlock()
		switch {
		case r.err == nil:
			ok++
			is.True(r.kind != 1 && r.kind != 2)
			is.True(stored)             // acknowledged: on the file
			is.True(r.doneAt > r.ranAt) // answered after an fsync begun after it ran
			is.True(evSeen)             // its event handed on
			is.True(at > r.ranAt)       // after such an fsync
		default:
			failed++
			is.True(!stored) // nothing of a failed write
			is.True(!evSeen || r.eventID == "")
		}
	}
	is.True(ok > 0 && failed > 0)
	t.Logf("%d writes acknowledged, %d failed or refused after Close", ok, failed)
}
