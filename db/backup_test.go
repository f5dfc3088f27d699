package db

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
	"troco/db/dbtest"

	"github.com/matryer/is"

	"troco/server/domain"
)

// TestOnEventSeesCommittedEventsOnly: the metrics hook sees an event once its transaction has
// committed, and never one undone by a failed write or a rolled-back savepoint.
func TestOnEventSeesCommittedEventsOnly(t *testing.T) {
	is := is.New(t)
	var mu sync.Mutex
	var seen []string
	waits := 0
	d := openTest(t, Options{
		OnEvent:     func(e *domain.Event) { mu.Lock(); seen = append(seen, e.Type); mu.Unlock() },
		OnWriteWait: func(time.Duration) { mu.Lock(); waits++; mu.Unlock() },
	})
	scope := domain.Scope{OrgID: "org_x"}
	ev := func(typ string) *domain.Event {
		return &domain.Event{Type: typ, Data: domain.EventData{Object: map[string]any{}}}
	}
	ctx := context.Background()
	is.NoErr(d.Write(ctx, func(tx *Tx) error { return tx.InsertEvent(scope, ev("kept.one")) }))
	err := d.Write(ctx, func(tx *Tx) error {
		if err := tx.InsertEvent(scope, ev("failed.write")); err != nil {
			return err
		}
		return errors.New("boom")
	})
	is.True(err != nil)
	is.NoErr(d.Write(ctx, func(tx *Tx) error {
		_ = tx.Savepoint(func() error {
			if err := tx.InsertEvent(scope, ev("rolled.back")); err != nil {
				return err
			}
			return errors.New("undo")
		})
		return tx.InsertEvent(scope, ev("kept.two"))
	}))
	mu.Lock()
	defer mu.Unlock()
	is.Equal(seen, []string{"kept.one", "kept.two"})
	is.Equal(waits, 3) // every write's queue wait is reported
}

// TestBackupAndCheckFile: a backup of a database with rows is a sound copy that CheckFile
// accepts; a damaged file is refused.
func TestBackupAndCheckFile(t *testing.T) {
	dbtest.SkipOnPostgres(t, "the backup API of SQLite")
	is := is.New(t)
	d := openTest(t, Options{})
	ctx := context.Background()
	is.NoErr(d.Write(ctx, func(tx *Tx) error { return tx.PutSetting("k", "v") }))
	dst := filepath.Join(t.TempDir(), "copy.db")
	is.NoErr(d.Backup(ctx, dst))
	st, err := os.Stat(dst)
	is.NoErr(err)
	is.Equal(st.Mode().Perm(), os.FileMode(0o600))
	info, err := CheckFile(ctx, dst, "k", "absent")
	is.NoErr(err)
	is.Equal(info.Settings["k"], "v")
	_, has := info.Settings["absent"]
	is.True(!has)
	is.True(d.Backup(ctx, dst) != nil) // never overwrites

	raw, err := os.ReadFile(dst)
	is.NoErr(err)
	for i := 4096; i < len(raw); i++ {
		raw[i] ^= 0x5a // damage every page after the first
	}
	bad := filepath.Join(t.TempDir(), "bad.db")
	is.NoErr(os.WriteFile(bad, raw, 0o600))
	_, err = CheckFile(ctx, bad)
	is.True(err != nil)
}
