package db

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/db/dbtest"
	"troco/server/domain"
)

// With synchronous FULL, a Write returns, and OnEvent sees its events, only after an fsync of
// the WAL that began after its commit; the writer meanwhile goes on with the next batch.
func TestFullSyncAnswersAfterTheWALIsSynced(t *testing.T) {
	sqliteOnly(t)
	is := is.New(t)
	var seen atomic.Int64
	d := openTest(t, Options{Synchronous: "FULL", OnEvent: func(*domain.Event) { seen.Add(1) }})
	is.True(d.syncer != nil) // a file with FULL syncs off the writer
	entered, release := make(chan struct{}, 8), make(chan struct{})
	var hold atomic.Bool
	hold.Store(true)
	d.syncer.hook = func() {
		if hold.Load() {
			entered <- struct{}{}
			<-release
		}
	}
	scope := domain.Scope{OrgID: "org_1"}
	first := make(chan error, 1)
	go func() {
		first <- d.Write(context.Background(), func(tx *Tx) error {
			if err := tx.PutSetting("a", "1"); err != nil {
				return err
			}
			return tx.InsertEvent(scope, &domain.Event{Type: "customer.created", Data: domain.EventData{Object: map[string]any{"id": "cus_1"}}})
		})
	}()
	<-entered // committed; its fsync has begun and is held
	select {
	case err := <-first:
		t.Fatalf("Write returned (%v) before the WAL was synced", err)
	default:
	}
	is.Equal(seen.Load(), int64(0)) // no event handed on before it is on disk
	// The writer is free: another write runs while the first one's fsync is held, and commits
	// once the disk is free, so it returns only after an fsync of its own.
	second := make(chan error, 1)
	go func() {
		second <- d.Write(context.Background(), func(tx *Tx) error { return tx.PutSetting("b", "2") })
	}()
	// A reader already sees the first commit (the documented window before it is on disk).
	v, ok := setting(t, d, "a")
	is.True(ok)
	is.Equal(v, "1")
	select {
	case err := <-second:
		t.Fatalf("the second Write returned (%v) before any fsync after its commit", err)
	default:
	}
	hold.Store(false)
	close(release)
	is.NoErr(<-first)
	is.NoErr(<-second)
	is.Equal(seen.Load(), int64(1))
	v, ok = setting(t, d, "b")
	is.True(ok)
	is.Equal(v, "2")
	st := d.WriterStats()
	is.True(st.Syncs >= 2) // the second commit waited for an fsync that began after it
}

// An fsync that fails fails the writes it was to make durable.
func TestFullSyncFailureFailsTheWrite(t *testing.T) {
	sqliteOnly(t)
	is := is.New(t)
	d := openTest(t, Options{Synchronous: "FULL"})
	d.syncer.hook = func() { d.syncer.path = filepath.Join(t.TempDir(), "missing-wal") }
	err := d.Write(context.Background(), func(tx *Tx) error { return tx.PutSetting("a", "1") })
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "db: sync"))
}

// NORMAL and in-memory databases keep syncing (or not) in COMMIT, with no syncer.
func TestNoSyncerWithoutFullSyncOnAFile(t *testing.T) {
	is := is.New(t)
	is.True(openTest(t, Options{Synchronous: "NORMAL"}).syncer == nil)
	d, err := Open(context.Background(), ":memory:", Options{Schema: realSchema(t), Synchronous: "FULL"})
	is.NoErr(err)
	defer d.Close()
	is.True(d.syncer == nil)
}

// A commit that fails is answered at once, and the writer does not then wait for the syncer to
// finish a commit it never got (a lone client's next write would hang).
func TestFullSyncFailedCommitThenNextWrite(t *testing.T) {
	sqliteOnly(t)
	is := is.New(t)
	d := openTest(t, Options{Synchronous: "FULL"})
	ctx := context.Background()
	is.NoErr(d.Write(ctx, func(tx *Tx) error {
		if _, err := tx.exec("CREATE TABLE t_parent (id INTEGER PRIMARY KEY)"); err != nil {
			return err
		}
		_, err := tx.exec("CREATE TABLE t_child (p INTEGER REFERENCES t_parent (id) DEFERRABLE INITIALLY DEFERRED)")
		return err
	}))
	// The orphan row passes its statement and fails the deferred check at COMMIT.
	err := d.Write(ctx, func(tx *Tx) error {
		_, err := tx.exec("INSERT INTO t_child (p) VALUES (42)")
		return err
	})
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "db: commit"))
	for i := range 3 {
		done := make(chan error, 1)
		go func() { done <- d.Write(ctx, func(tx *Tx) error { return tx.PutSetting("after", "x") }) }()
		select {
		case err := <-done:
			is.NoErr(err)
		case <-time.After(30 * time.Second):
			t.Fatalf("write %d after a failed commit never returned", i+1)
		}
	}
}

// sqliteOnly skips a test of the SQLite WAL syncer when the tests run on PostgreSQL.
func sqliteOnly(t *testing.T) {
	t.Helper()
	if dbtest.Postgres() {
		t.Skip("the WAL syncer is SQLite's")
	}
}
