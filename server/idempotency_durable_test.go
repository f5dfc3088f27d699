package server_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/db"
	"troco/db/dbtest"
	"troco/server"
	"troco/server/domain"
)

// With --db-sync FULL the WAL is synced beside the writer, so a write's commit is visible to
// readers an fsync before it is on disk and before its request is answered. A duplicate of a
// keyed request arriving in that window finds the stored response: it is replayed only once
// that response is on disk, never ahead of the request that wrote it.
func TestIdempotentReplayWaitsForTheDisk(t *testing.T) {
	if os.Getenv(dbtest.EnvPostgres) != "" {
		t.Skip("SQLite's WAL syncer")
	}
	is := is.New(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "troco.db")
	full, err := db.Open(context.Background(), path, db.Options{Schema: schemaSQL(t), Synchronous: "FULL"})
	is.NoErr(err)
	t.Cleanup(func() { full.Close() })
	var hold atomic.Bool
	var scope atomic.Pointer[domain.Scope]
	// Hold the first fsync after the first request's commit is visible (other writes, such as
	// request log lines, are synced as usual before it).
	committed := func() bool {
		s := scope.Load()
		if s == nil {
			return false
		}
		found := false
		_ = full.Read(context.Background(), func(tx *db.Tx) error {
			_, err := tx.FindCustomerByEmail(*s, "durable@example.com")
			found = err == nil
			return nil
		})
		return found
	}
	entered, release := make(chan struct{}, 64), make(chan struct{})
	full.SetWALSyncHook(func() {
		if hold.Load() && committed() {
			entered <- struct{}{}
			<-release
		}
	})
	e := newEnvAt(t, path, dir, func(c *server.Config) { c.DB = full })
	scope.Store(&domain.Scope{OrgID: e.Org.ID, Livemode: false})
	var once sync.Once
	unhold := func() { hold.Store(false); once.Do(func() { close(release) }) }
	t.Cleanup(unhold)                                               // before the server closes, even when the test fails
	is.Equal(e.Do("GET", "/v1/customers", e.Test, nil).Status, 200) // the first request's own writes
	time.Sleep(100 * time.Millisecond)                              // and its request log line

	body := map[string]any{"email": "durable@example.com"}
	hold.Store(true)
	first := make(chan resp, 1)
	go func() {
		r, _ := e.TryDo("POST", "/v1/customers", e.Test, body, "Idempotency-Key", "durable-1")
		first <- r
	}()
	<-entered // committed, its fsync held
	second := make(chan resp, 1)
	go func() {
		r, _ := e.TryDo("POST", "/v1/customers", e.Test, body, "Idempotency-Key", "durable-1")
		second <- r
	}()
	select {
	case r := <-second:
		t.Fatalf("the duplicate was answered (%d) before the first write was on disk", r.Status)
	case <-time.After(300 * time.Millisecond):
	}
	unhold()
	a, b := <-first, <-second
	is.Equal(a.Status, 200)
	is.Equal(b.Status, 200)
	is.Equal(b.Header.Get("Idempotent-Replayed"), "true")
	is.Equal(string(a.Raw), string(b.Raw))
}
