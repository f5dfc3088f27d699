package db

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"troco/server/domain"
)

// With --db-sync FULL on a SQLite file, COMMIT does not wait for the disk on the writer: the
// writer's connection runs with synchronous=NORMAL (a commit writes its WAL frames to the
// operating system, which survives a crash of the process; checkpoints still sync the WAL
// before copying it and the database after), and this syncer fsyncs the WAL file after each
// commit, while the writer already runs the next batch. A Write returns, and OnEvent sees its
// events, only once an fsync that began after its commit has completed: what a caller was told
// is on disk, exactly as when COMMIT itself syncs. One fsync covers every commit before it, so
// the commits that pile up during one fsync share the next.
//
// What changes is visible only to readers: another request may read a commit up to one fsync
// before it is on disk (a power cut in that window undoes it, and its own caller got no answer).
// Nothing leaves the process on such a read alone: webhooks and e-mails are leased by a later
// write, which returns after its own fsync, which covers the earlier commit, and a duplicate of
// a keyed request replays the stored response only after WaitDurable.

// syncItem is one committed batch waiting for the fsync that makes it durable.
type syncItem struct {
	reqs    []*writeReq
	results []error
	events  []*domain.Event
}

// walSyncer fsyncs the WAL file of a SQLite database off the writer.
type walSyncer struct {
	path string // the -wal file
	f    *os.File
	in   chan syncItem
	done chan struct{}
	// idle receives a token each time the syncer has answered all it was given.
	idle chan struct{}
	// hook, in tests, runs before each fsync.
	hook func()
}

func newWALSyncer(dbPath string) *walSyncer {
	return &walSyncer{path: dbPath + "-wal", in: make(chan syncItem, maxBatch), done: make(chan struct{}), idle: make(chan struct{}, 1)}
}

// run answers the batches sent on s.in, in order, each after an fsync that began after it
// arrived, until s.in is closed.
func (s *walSyncer) run(d *DB) {
	defer close(s.done)
	defer func() {
		if s.f != nil {
			s.f.Close()
		}
	}()
	var items []syncItem
	for it := range s.in {
		items = append(items[:0], it)
	drain:
		for {
			select {
			case more, ok := <-s.in:
				if !ok {
					break drain
				}
				items = append(items, more)
			default:
				break drain
			}
		}
		start := time.Now()
		err := s.sync()
		d.stats.syncNs.Add(int64(time.Since(start)))
		d.stats.syncs.Add(1)
		for _, it := range items {
			if err != nil {
				for i := range it.results {
					if it.results[i] == nil {
						it.results[i] = fmt.Errorf("db: sync: %w", err)
					}
				}
			} else if d.onEvent != nil {
				for _, e := range it.events {
					d.onEvent(e)
				}
			}
			for i, r := range it.reqs {
				r.err <- it.results[i]
			}
		}
		select {
		case s.idle <- struct{}{}:
		default:
		}
	}
}

// sync fsyncs the WAL file the database uses now. The file is opened once and reopened if
// SQLite replaced it (a new inode: it deletes the WAL when its last connection closes); when it
// is (re)opened, its directory is synced too, so its name is on disk as well.
func (s *walSyncer) sync() error {
	if s.hook != nil {
		s.hook()
	}
	fi, err := os.Stat(s.path)
	if err != nil {
		return err
	}
	if s.f != nil {
		if cur, err := s.f.Stat(); err != nil || !os.SameFile(cur, fi) {
			s.f.Close()
			s.f = nil
		}
	}
	if s.f == nil {
		f, err := os.Open(s.path)
		if err != nil {
			return err
		}
		if err := syncDir(filepath.Dir(s.path)); err != nil {
			f.Close()
			return err
		}
		s.f = f
	}
	return s.f.Sync()
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

// WaitDurable returns once every commit made before the call is on disk: at once unless the
// WAL is synced off the writer, else after an fsync that began after the call (every commit is
// handed to the syncer as it is made). For a caller about to send out what it read rather than
// wrote (a replay of a stored response whose own request is still waiting for that fsync), and
// for writes made on the writer's pool directly (import).
func (d *DB) WaitDurable(ctx context.Context) error {
	if d.syncer == nil {
		return nil
	}
	r := &writeReq{err: make(chan error, 1)}
	d.mu.Lock()
	if d.closed.Load() {
		d.mu.Unlock()
		return ErrClosed
	}
	// Open while the queue is: the writer closes the syncer's input only after the queue.
	d.syncer.in <- syncItem{reqs: []*writeReq{r}, results: []error{nil}}
	d.mu.Unlock()
	select {
	case err := <-r.err:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SetWALSyncHook sets a function run before each fsync of the WAL made off the writer (tests of
// callers: it can hold an fsync). Set it before any write.
func (d *DB) SetWALSyncHook(f func()) {
	if d.syncer != nil {
		d.syncer.hook = f
	}
}
