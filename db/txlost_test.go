package db

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
)

// queueInOrder blocks the writer, queues fns one after the other (so that they run in this
// order), then releases it so that they share one batch with the blocker.
func queueInOrder(t *testing.T, d *DB, fns ...func(*Tx) error) (blocker error, errs []error) {
	t.Helper()
	release, started := make(chan struct{}), make(chan struct{})
	blockerDone := make(chan error, 1)
	go func() {
		blockerDone <- d.Write(context.Background(), func(tx *Tx) error {
			close(started)
			<-release
			return tx.PutSetting("blocker", "1")
		})
	}()
	<-started
	errs = make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = d.Write(context.Background(), fn)
		}()
		deadline := time.Now().Add(5 * time.Second)
		for len(d.queue) < i+1 {
			if time.Now().After(deadline) {
				t.Fatalf("write %d not queued", i)
			}
			time.Sleep(time.Millisecond)
		}
	}
	close(release)
	wg.Wait()
	return <-blockerDone, errs
}

// fillDisk makes the writer's connection unable to grow the database file (SQLITE_FULL), for
// the rest of the write, as a full disk would.
func fillDisk(t *testing.T, tx *Tx) {
	t.Helper()
	var pages int
	if err := tx.q.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatalf("page_count: %v", err)
	}
	if _, err := tx.q.Exec("PRAGMA max_page_count = " + strconv.Itoa(pages+1)); err != nil {
		t.Fatalf("max_page_count: %v", err)
	}
}

// When a statement fails with an error after which SQLite rolls back the whole transaction (a
// full disk here), no write of the batch may be answered as committed when it is not, nor as
// failed when it is: the writes before it in the batch are reported failed (they were undone),
// the failing write's later statements are undone too, and the writes after it commit in a new
// transaction instead of running in autocommit.
func TestSQLiteRollsBackTheBatch(t *testing.T) {
	sqliteOnly(t)
	for _, sync := range []string{"NORMAL", "FULL"} {
		t.Run(sync, func(t *testing.T) { testSQLiteRollsBackTheBatch(t, sync) })
	}
}

func testSQLiteRollsBackTheBatch(t *testing.T, sync string) {
	is := is.New(t)
	d := openTest(t, Options{Synchronous: sync})
	blocker, errs := queueInOrder(t, d,
		func(tx *Tx) error { return tx.PutSetting("before", "1") },
		func(tx *Tx) error {
			fillDisk(t, tx)
			defer tx.q.Exec("PRAGMA max_page_count = 1073741823")
			_, err := tx.exec("INSERT INTO settings (name, value) VALUES ('big', ?)", strings.Repeat("x", 1<<20))
			if !mayRollBack(err) {
				t.Fatalf("want SQLITE_FULL, got %v", err)
			}
			tx.q.Exec("PRAGMA max_page_count = 1073741823")
			// A write that goes on after the error must not have its later statements committed.
			return tx.PutSetting("after-full", "1")
		},
		func(tx *Tx) error { return tx.PutSetting("after", "1") },
	)
	if _, present := setting(t, d, "blocker"); (blocker == nil) != present {
		t.Errorf("blocker: reported %v, present %v", blocker, present)
	}
	for i, k := range []string{"before", "after-full", "after"} {
		_, present := setting(t, d, k)
		if k == "after-full" {
			is.True(!present) // the failing write is wholly undone
			is.True(errs[i] != nil)
			is.True(errors.Is(errs[i], errTxLost))
			continue
		}
		// Reported committed exactly when it is there.
		if (errs[i] == nil) != present {
			t.Errorf("%s: reported %v, present %v", k, errs[i], present)
		}
	}
	if sync == "NORMAL" { // one batch of the three (the pipelined writer may commit "before" alone)
		is.True(errors.Is(errs[0], errTxLost)) // the write before it was undone by SQLite, and says so
	}
	is.NoErr(errs[2]) // the write after it commits, in a new transaction
	is.NoErr(d.Write(context.Background(), func(tx *Tx) error { return tx.PutSetting("next", "1") }))
	_, ok := setting(t, d, "next")
	is.True(ok) // the writer goes on
}

// More distinct statements than the writer's statement cache keeps: those beyond it run
// unprepared, every write still commits with its own values, and the cached ones keep working.
func TestWriterStatementCacheFull(t *testing.T) {
	sqliteOnly(t)
	is := is.New(t)
	d := openTest(t, Options{})
	ctx := context.Background()
	const n = maxCachedStmts + 44
	for i := range n {
		q := "INSERT INTO settings (name, value) VALUES ('q" + strconv.Itoa(i) + "', ?)"
		is.NoErr(d.Write(ctx, func(tx *Tx) error { _, err := tx.exec(q, strconv.Itoa(i)); return err }))
	}
	is.True(len(d.wstmts.m) <= maxCachedStmts) // bounded
	for i := range n {
		is.NoErr(d.Write(ctx, func(tx *Tx) error { return tx.PutSetting("again"+strconv.Itoa(i), "x") }))
		v, ok := setting(t, d, "q"+strconv.Itoa(i))
		is.True(ok)
		is.Equal(v, strconv.Itoa(i))
	}
	is.NoErr(d.Close())
}

// Close with writes queued behind a running one: every queued write commits before Close
// returns, on the writer's own connection, and is in the file when it is opened again; the
// checkpoint Close runs on the pool's other connection leaves nothing behind in the WAL.
func TestCloseCommitsQueuedWrites(t *testing.T) {
	sqliteOnly(t)
	for _, sync := range []string{"NORMAL", "FULL"} {
		t.Run(sync, func(t *testing.T) {
			is := is.New(t)
			path := filepath.Join(t.TempDir(), "q.db")
			d, err := Open(context.Background(), path, Options{Schema: realSchema(t), Synchronous: sync})
			is.NoErr(err)
			release, started := make(chan struct{}), make(chan struct{})
			go d.Write(context.Background(), func(tx *Tx) error { close(started); <-release; return tx.PutSetting("first", "1") })
			<-started
			const n = 20
			errs := make(chan error, n)
			for i := range n {
				go func() {
					errs <- d.Write(context.Background(), func(tx *Tx) error { return tx.PutSetting("k"+strconv.Itoa(i), "v") })
				}()
			}
			deadline := time.Now().Add(5 * time.Second)
			for len(d.queue) < n && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			closed := make(chan error, 1)
			go func() { closed <- d.Close() }()
			for !d.closed.Load() {
				time.Sleep(time.Millisecond)
			}
			close(release)
			is.NoErr(<-closed)
			for range n {
				is.NoErr(<-errs) // every queued write answered committed
			}
			if fi, err := os.Stat(path + "-wal"); err == nil {
				is.Equal(fi.Size(), int64(0)) // checkpointed and truncated at Close
			}
			d2, err := Open(context.Background(), path, Options{Schema: realSchema(t), Synchronous: sync})
			is.NoErr(err)
			defer d2.Close()
			for i := range n {
				_, ok := setting(t, d2, "k"+strconv.Itoa(i))
				is.True(ok)
			}
			_, ok := setting(t, d2, "first")
			is.True(ok)
		})
	}
}

// TestFullDiskAnswersTruthfully fills a real small filesystem (TROCO_TEST_SMALL_FS: a directory
// on, say, `mount -t tmpfs -o size=3m tmpfs DIR`) with concurrent writes until statements and
// commits fail with SQLITE_FULL: every write answered committed must be in the database and no
// write answered failed may be. Before the writer noticed a transaction SQLite had rolled back,
// a later write's savepoint began a new transaction whose release failed to commit, the batch's
// COMMIT then committed that one, and the writes before the failure were answered committed
// although SQLite had rolled them back. It needs such a filesystem, so it runs only when given
// one (TestSQLiteRollsBackTheBatch covers the same path everywhere, with max_page_count).
func TestFullDiskAnswersTruthfully(t *testing.T) {
	sqliteOnly(t)
	dir := os.Getenv("TROCO_TEST_SMALL_FS")
	if dir == "" {
		t.Skip("set TROCO_TEST_SMALL_FS to a directory on a small filesystem (a few MB) to run it")
	}
	for _, mode := range []string{"NORMAL", "FULL"} {
		t.Run(mode, func(t *testing.T) {
			path := filepath.Join(dir, "full-"+mode+".db")
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(path + suffix)
			}
			t.Cleanup(func() {
				for _, suffix := range []string{"", "-wal", "-shm"} {
					os.Remove(path + suffix)
				}
			})
			d, err := Open(context.Background(), path, Options{Schema: realSchema(t), Synchronous: mode})
			if err != nil {
				t.Fatalf("open (is the filesystem big enough for the schema?): %v", err)
			}
			defer d.Close()
			var mu sync.Mutex
			res := map[string]error{}
			var wg sync.WaitGroup
			for g := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 10 {
						k := "g" + strconv.Itoa(g) + "-" + strconv.Itoa(i)
						err := d.Write(context.Background(), func(tx *Tx) error { return tx.PutSetting(k, strings.Repeat("x", 300000)) })
						mu.Lock()
						res[k] = err
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			failed := 0
			for k, err := range res {
				if err != nil {
					failed++
				}
				if _, present := setting(t, d, k); (err == nil) != present {
					t.Errorf("%s: answered %v, in the database %v", k, err, present)
				}
			}
			if failed == 0 {
				t.Fatalf("no write failed: the filesystem is too big for this test")
			}
		})
	}
}
