package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/db/dbtest"
	"troco/server/clock"
	"troco/server/domain"
)

func realSchema(t *testing.T) string {
	t.Helper()
	s, _ := dbtest.Schemas(t)
	return s
}

// openTest opens a database on a file in a temp dir with the real schema.
func openTest(t *testing.T, opts Options) *DB {
	t.Helper()
	if opts.Schema == "" {
		opts.Schema, opts.PostgresSchema = dbtest.Schemas(t)
	}
	if opts.Synchronous == "" {
		opts.Synchronous = "NORMAL"
	}
	d, err := Open(context.Background(), dbtest.Path(t, filepath.Join(t.TempDir(), "troco.db")), opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func setting(t *testing.T, d *DB, name string) (string, bool) {
	t.Helper()
	var v string
	var ok bool
	err := d.Read(context.Background(), func(tx *Tx) error {
		var err error
		v, ok, err = tx.GetSetting(name)
		return err
	})
	if err != nil {
		t.Fatalf("read setting %s: %v", name, err)
	}
	return v, ok
}

func TestGroupCommitConcurrentWrites(t *testing.T) {
	is := is.New(t)
	d := openTest(t, Options{})
	const n = 64
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = d.Write(context.Background(), func(tx *Tx) error { return tx.PutSetting(fmt.Sprintf("k%d", i), fmt.Sprint(i)) })
		}()
	}
	wg.Wait()
	for i, err := range errs {
		is.NoErr(err) // every write committed
		v, ok := setting(t, d, fmt.Sprintf("k%d", i))
		is.True(ok)                // and is visible to readers once Write returned
		is.Equal(v, fmt.Sprint(i)) // with its own value
	}
}

// queueBatch blocks the writer, queues fns, then releases it so that fns share one commit
// (queueInOrder, with a blocker that must succeed).
func queueBatch(t *testing.T, d *DB, fns ...func(*Tx) error) []error {
	t.Helper()
	blocker, errs := queueInOrder(t, d, fns...)
	if blocker != nil {
		t.Fatalf("blocker: %v", blocker)
	}
	return errs
}

func TestGroupCommitIsolatesFailures(t *testing.T) {
	is := is.New(t)
	d := openTest(t, Options{})
	boom := errors.New("boom")
	errs := queueBatch(t, d,
		func(tx *Tx) error { return tx.PutSetting("a", "1") },
		func(tx *Tx) error {
			if err := tx.PutSetting("b", "1"); err != nil {
				return err
			}
			return boom
		},
		func(tx *Tx) error {
			if err := tx.PutSetting("p", "1"); err != nil {
				return err
			}
			panic("bug in a transaction")
		},
		func(tx *Tx) error {
			// A constraint violation inside one fn does not poison the batch.
			if _, err := tx.exec("INSERT INTO settings (name, value) VALUES ('a2', '1')"); err != nil {
				return err
			}
			_, err := tx.exec("INSERT INTO settings (name, value) VALUES ('a2', '2')")
			return translate(err, "insert")
		},
		func(tx *Tx) error { return tx.PutSetting("c", "1") },
	)
	is.NoErr(errs[0])                 // a committed
	is.True(errors.Is(errs[1], boom)) // b's own error comes back
	is.True(errs[2] != nil)           // a panic is an error, not a crash
	is.True(strings.Contains(errs[2].Error(), "panic"))
	is.True(errors.Is(errs[3], ErrConflict)) // a UNIQUE violation is ErrConflict
	is.NoErr(errs[4])                        // c committed
	_, ok := setting(t, d, "a")
	is.True(ok) // a's write is there
	_, ok = setting(t, d, "c")
	is.True(ok) // c's write is there
	_, ok = setting(t, d, "b")
	is.True(!ok) // b's write was rolled back
	_, ok = setting(t, d, "p")
	is.True(!ok) // the panicking fn's write was rolled back
	_, ok = setting(t, d, "a2")
	is.True(!ok) // the failing fn's first insert too
	_, ok = setting(t, d, "blocker")
	is.True(ok)
	is.NoErr(d.Write(context.Background(), func(tx *Tx) error { return tx.PutSetting("after", "1") })) // the writer survived
}

func TestSavepoint(t *testing.T) {
	d := openTest(t, Options{})
	inner := errors.New("inner")
	cases := []struct {
		name    string
		fn      func(tx *Tx) error
		present []string
		absent  []string
	}{
		{
			name: "inner failure undoes only the inner writes",
			fn: func(tx *Tx) error {
				if err := tx.PutSetting("x1", "1"); err != nil {
					return err
				}
				return tx.Savepoint(func() error {
					if err := tx.PutSetting("y1", "1"); err != nil {
						return err
					}
					if err := tx.Savepoint(func() error {
						if err := tx.PutSetting("z1", "1"); err != nil {
							return err
						}
						return inner
					}); !errors.Is(err, inner) {
						return fmt.Errorf("savepoint returned %v", err)
					}
					return nil
				})
			},
			present: []string{"x1", "y1"},
			absent:  []string{"z1"},
		},
		{
			name: "outer failure undoes the committed inner savepoint too",
			fn: func(tx *Tx) error {
				if err := tx.PutSetting("x2", "1"); err != nil {
					return err
				}
				err := tx.Savepoint(func() error {
					if err := tx.PutSetting("y2", "1"); err != nil {
						return err
					}
					if err := tx.Savepoint(func() error { return tx.PutSetting("z2", "1") }); err != nil {
						return err
					}
					return inner
				})
				if !errors.Is(err, inner) {
					return fmt.Errorf("savepoint returned %v", err)
				}
				return nil
			},
			present: []string{"x2"},
			absent:  []string{"y2", "z2"},
		},
		{
			name: "sibling savepoints are independent",
			fn: func(tx *Tx) error {
				_ = tx.Savepoint(func() error { _ = tx.PutSetting("s1", "1"); return inner })
				return tx.Savepoint(func() error { return tx.PutSetting("s2", "1") })
			},
			present: []string{"s2"},
			absent:  []string{"s1"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			is.NoErr(d.Write(context.Background(), tc.fn)) // the transaction commits
			for _, k := range tc.present {
				_, ok := setting(t, d, k)
				is.True(ok) // kept
			}
			for _, k := range tc.absent {
				_, ok := setting(t, d, k)
				is.True(!ok) // rolled back
			}
		})
	}
}

func TestMigrations(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.db")
	v1 := "-- migrate: 1\nCREATE TABLE a (x INTEGER);\n"
	v3 := v1 + "\n-- migrate: 3\nCREATE TABLE b (y INTEGER);\nCREATE INDEX b_y ON b (y);\n"
	ctx := context.Background()
	version := func(t *testing.T, d *DB) int {
		var v int
		if err := d.write.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	tableExists := func(t *testing.T, d *DB, name string) bool {
		var n int
		if err := d.write.QueryRow("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?", name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}

	t.Run("apply once and reopen", func(t *testing.T) {
		is := is.New(t)
		d, err := Open(ctx, path, Options{Schema: v1})
		is.NoErr(err) // first open applies migration 1
		is.Equal(version(t, d), 1)
		is.NoErr(d.Close())
		d, err = Open(ctx, path, Options{Schema: v1})
		is.NoErr(err) // reopening does not run CREATE TABLE again
		is.Equal(version(t, d), 1)
		is.NoErr(d.Close())
		d, err = Open(ctx, path, Options{Schema: v3})
		is.NoErr(err)              // a new migration (gaps allowed) is applied
		is.Equal(version(t, d), 3) // user_version records the last
		is.True(tableExists(t, d, "b"))
		is.NoErr(d.Close())
	})

	t.Run("a failing migration leaves nothing behind", func(t *testing.T) {
		is := is.New(t)
		bad := v3 + "\n-- migrate: 4\nCREATE TABLE c (z INTEGER);\nCREATE TABLE a (x INTEGER);\n"
		_, err := Open(ctx, path, Options{Schema: bad})
		is.True(err != nil) // table a exists already
		d, err := Open(ctx, path, Options{Schema: v3})
		is.NoErr(err)
		is.Equal(version(t, d), 3)       // still 3
		is.True(!tableExists(t, d, "c")) // migration 4 rolled back whole
		is.NoErr(d.Close())
	})

	t.Run("a database newer than the binary is refused", func(t *testing.T) {
		is := is.New(t)
		_, err := Open(ctx, path, Options{Schema: v1})
		is.True(err != nil) // version 3 > 1
		is.True(strings.Contains(err.Error(), "newer"))
	})

	bad := []struct{ name, schema string }{
		{"decreasing", "-- migrate: 2\nCREATE TABLE a (x);\n-- migrate: 1\nCREATE TABLE b (y);\n"},
		{"repeated", "-- migrate: 1\nCREATE TABLE a (x);\n-- migrate: 1\nCREATE TABLE b (y);\n"},
		{"zero", "-- migrate: 0\nCREATE TABLE a (x);\n"},
		{"not a number", "-- migrate: one\nCREATE TABLE a (x);\n"},
		{"no migrations", "CREATE TABLE a (x);\n"},
	}
	for _, tc := range bad {
		t.Run("rejects "+tc.name, func(t *testing.T) {
			is := is.New(t)
			_, err := Open(ctx, filepath.Join(t.TempDir(), "x.db"), Options{Schema: tc.schema})
			is.True(err != nil) // refused before touching the database
		})
	}

	t.Run("the real schema", func(t *testing.T) {
		is := is.New(t)
		ms, err := parseMigrations(realSchema(t))
		is.NoErr(err) // schema.sql parses
		d := openTest(t, Options{})
		v, err := d.SchemaVersion(context.Background())
		is.NoErr(err)
		is.Equal(v, ms[len(ms)-1].version) // every migration applied
	})
}

func TestMemoryDatabase(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	d, err := Open(ctx, ":memory:", Options{Schema: realSchema(t), Readers: 4})
	is.NoErr(err)
	defer d.Close()
	is.NoErr(d.Write(ctx, func(tx *Tx) error { return tx.PutSetting("shared", "yes") }))
	// Hold several reader connections at once so the check reaches more than one of them.
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var v string
			var ok bool
			err := d.Read(ctx, func(tx *Tx) error {
				var err error
				v, ok, err = tx.GetSetting("shared")
				return err
			})
			if err != nil || !ok || v != "yes" {
				t.Errorf("a reader does not see the writer's row: %q %v %v", v, ok, err)
			}
		}()
	}
	wg.Wait()

	other, err := Open(ctx, ":memory:", Options{Schema: realSchema(t)})
	is.NoErr(err)
	defer other.Close()
	_, ok := setting(t, other, "shared")
	is.True(!ok) // two :memory: databases are distinct
}

func TestPragmas(t *testing.T) {
	dbtest.SkipOnPostgres(t, "SQLite pragmas")
	is := is.New(t)
	ctx := context.Background()
	d := openTest(t, Options{Readers: 3})
	// Take every reader connection at once: pragmas must reach each pooled connection.
	var conns []*sql.Conn
	for range 3 {
		conn, err := d.read.Conn(ctx)
		is.NoErr(err)
		conns = append(conns, conn)
		var mode string
		var fk, busy, queryOnly int
		is.NoErr(conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode))
		is.NoErr(conn.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk))
		is.NoErr(conn.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy))
		is.NoErr(conn.QueryRowContext(ctx, "PRAGMA query_only").Scan(&queryOnly))
		is.Equal(mode, "wal")  // WAL mode on a file database
		is.Equal(fk, 1)        // foreign keys enforced
		is.True(busy > 0)      // waits for locks instead of failing
		is.Equal(queryOnly, 1) // readers cannot write
	}
	for _, c := range conns {
		is.NoErr(c.Close())
	}
	var fk int
	is.NoErr(d.write.QueryRow("PRAGMA foreign_keys").Scan(&fk))
	is.Equal(fk, 1) // on the writer too

	err := d.Write(ctx, func(tx *Tx) error {
		_, err := tx.exec("INSERT INTO api_keys (id, org_id, name, scopes, livemode, token_hash, token_hint, created_at) VALUES ('key_x', 'org_missing', 'n', 'read', 0, 'h', 'hint', 1)")
		return err
	})
	is.True(err != nil) // a key of a missing organization violates the foreign key
	is.True(strings.Contains(strings.ToLower(err.Error()), "foreign key"))

	err = d.Read(ctx, func(tx *Tx) error { return tx.PutSetting("nope", "1") })
	is.True(err != nil) // a read transaction cannot write
}

func TestTranslateAndClock(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 12, 0, 0, 500, time.UTC)
	d := openTest(t, Options{Clock: clock.NewFixed(at)})
	var org domain.Organization
	org.Name = "Acme"
	var txNow time.Time
	is.NoErr(d.Write(ctx, func(tx *Tx) error {
		txNow = tx.Now
		return tx.CreateOrganization(&org, false)
	}))
	is.Equal(txNow, at.Truncate(time.Second))              // the transaction's time comes from the injected clock
	is.Equal(org.CreatedAt.Time, at.Truncate(time.Second)) // and stamps what it writes

	err := d.Read(ctx, func(tx *Tx) error { _, err := tx.FindOrganizationByID("org_missing"); return err })
	is.True(errors.Is(err, ErrNotFound)) // no row is ErrNotFound, never (nil, nil)

	k := &domain.APIKey{Organization: org.ID, Scopes: []string{"read"}, Name: "k"}
	tok := domain.NewToken(false)
	is.NoErr(d.Write(ctx, func(tx *Tx) error { return tx.CreateAPIKey(k, tok) }))
	err = d.Write(ctx, func(tx *Tx) error {
		return tx.CreateAPIKey(&domain.APIKey{Organization: org.ID, Scopes: []string{"read"}, Name: "k2"}, tok)
	})
	is.True(errors.Is(err, ErrConflict)) // a duplicate token hash is ErrConflict

	var revoked *domain.APIKey
	is.NoErr(d.Write(ctx, func(tx *Tx) error { var err error; revoked, err = tx.RevokeAPIKey(k.ID, "me", ""); return err }))
	is.True(!revoked.RevokedAt.IsZero())
	err = d.Write(ctx, func(tx *Tx) error { _, err := tx.RevokeAPIKey(k.ID, "me", ""); return err })
	is.True(errors.Is(err, ErrConflict)) // revoking twice is a conflict
}

func TestCloseAndCancel(t *testing.T) {
	is := is.New(t)
	d, err := Open(context.Background(), filepath.Join(t.TempDir(), "c.db"), Options{Schema: realSchema(t)})
	is.NoErr(err)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = d.Write(ctx, func(tx *Tx) error { return tx.PutSetting("canceled", "1") })
	is.True(errors.Is(err, context.Canceled)) // a canceled request does not run
	_, ok := setting(t, d, "canceled")
	is.True(!ok)

	is.NoErr(d.Close())
	is.NoErr(d.Close()) // closing twice is harmless
	err = d.Write(context.Background(), func(tx *Tx) error { return nil })
	is.True(errors.Is(err, ErrClosed)) // writes after Close are refused
}
