// Package db is troco's storage: SQLite through modernc.org/sqlite, one writer connection and a
// pool of readers. All SQL lives here. Writes go through DB.Write, which batches the transactions
// of concurrent requests into one commit (group commit) while keeping each request's writes
// atomic through a savepoint of its own.
package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"troco/server/clock"
	"troco/server/domain"
)

// ErrNotFound is returned by finders when no row matches in the caller's scope.
var ErrNotFound = errors.New("db: not found")

// ErrConflict is returned when a write violates a uniqueness constraint.
var ErrConflict = errors.New("db: conflict")

// ErrClosed is returned by Write after Close.
var ErrClosed = errors.New("db: closed")

// maxBatch bounds how many queued transactions share one commit.
const maxBatch = 256

// DB is an open troco database.
type DB struct {
	path  string
	pg    bool // PostgreSQL (postgres.go) rather than SQLite
	write *sql.DB
	read  *sql.DB
	// wconn is the single writer's own connection of the write pool (SQLite), held from Open to
	// Close: its transactions are plain BEGIN IMMEDIATE … COMMIT on it and its statements are
	// prepared on it, so no statement of a write runs through a database/sql Tx (which starts
	// a goroutine to watch the transaction's context for every query it runs, and binds each
	// pool statement to the transaction anew for every batch). The pool's other connection
	// serves what runs outside the writer (import into an idle database, tests, the checkpoint
	// at Close).
	wconn  *sql.Conn
	clock  clock.Clock
	queue  chan *writeReq
	done   chan struct{}
	closed atomic.Bool
	mu     sync.Mutex // guards closing of queue
	// wstmts and rstmts are the prepared statements of the writer and of the readers.
	wstmts, rstmts *stmtCache
	onEvent        func(*domain.Event)
	onWriteWait    func(time.Duration)
	// stats are the writer's counters (WriterStats).
	stats struct{ batches, txs, stmts, busyNs, commitNs, syncs, syncNs atomic.Int64 }
	// syncer fsyncs the WAL off the writer (SQLite file, synchronous FULL; walsync.go).
	syncer *walSyncer
	// record, when set (RecordWriterStatements), sees every statement the writer runs (SQLite).
	record atomic.Pointer[func(WriterStatement)]
	// base is the public base URL this process serves (SetPublicBase).
	base atomic.Pointer[string]
}

// WriterStatement is one statement the single writer ran on SQLite, as RecordWriterStatements
// reports it: BEGIN IMMEDIATE and COMMIT of each batch, SAVEPOINT w and RELEASE w (or ROLLBACK TO
// w) around each write operation, and every statement of the operations between them.
type WriterStatement struct {
	SQL  string
	Args []any // as bound; valid only during the call (copy what is kept)
	Rows bool  // run as a query (its rows read), not as an exec
}

// RecordWriterStatements makes the writer call fn with every statement it runs on SQLite, in
// order, from the writer's goroutine, before running it; nil stops. It is for benchmarks that
// replay the writer's exact SQL (server/payments_bench_test.go): fn runs inside the serial
// section, so it must be quick. Unset, it costs the writer one atomic load per batch and per
// write operation.
func (d *DB) RecordWriterStatements(fn func(WriterStatement)) {
	if fn == nil {
		d.record.Store(nil)
		return
	}
	d.record.Store(&fn)
}

// recorder returns the statement recorder, or nil.
func (d *DB) recorder() func(WriterStatement) {
	if p := d.record.Load(); p != nil {
		return *p
	}
	return nil
}

// WriterStats are cumulative counters of the single writer, for benchmarks and the load tool:
// what a write costs the serial section, independently of the machine's load.
type WriterStats struct {
	Batches    int64         // commits
	Txs        int64         // write transactions (Write calls) run
	Statements int64         // statements run on the writer's connection, SAVEPOINT/RELEASE included
	Busy       time.Duration // time the writer spent in BEGIN, the transactions and COMMIT
	Commit     time.Duration // of which in COMMIT (WAL writes, checkpoints; the fsync too unless synced off the writer)
	Syncs      int64         // fsyncs of the WAL made off the writer (each covers every commit before it)
	Sync       time.Duration // time those fsyncs took (not the writer's)
}

// WriterStats returns the writer's counters since Open.
func (d *DB) WriterStats() WriterStats {
	return WriterStats{Batches: d.stats.batches.Load(), Txs: d.stats.txs.Load(), Statements: d.stats.stmts.Load(),
		Busy: time.Duration(d.stats.busyNs.Load()), Commit: time.Duration(d.stats.commitNs.Load()),
		Syncs: d.stats.syncs.Load(), Sync: time.Duration(d.stats.syncNs.Load())}
}

type writeReq struct {
	ctx    context.Context
	fn     func(*Tx) error
	err    chan error
	queued time.Time
}

// Options configure Open.
type Options struct {
	// Schema is the contents of schema.sql.
	Schema string
	// PostgresSchema is the contents of schema_postgres.sql (used when the path is a
	// postgres:// URL).
	PostgresSchema string
	// Clock stamps every transaction; defaults to the real clock.
	Clock clock.Clock
	// Readers is the size of the read pool; defaults to 2×GOMAXPROCS.
	Readers int
	// Synchronous is the SQLite synchronous level in WAL mode: FULL (default, durable against
	// power loss) or NORMAL (durable against a process crash only).
	Synchronous string
	// OnEvent, when set, sees every event once the transaction that inserted it has committed
	// (an event undone by a rolled-back savepoint is never seen). It runs on the writer: be quick.
	OnEvent func(*domain.Event)
	// OnWriteWait, when set, receives how long each write transaction waited for the writer.
	OnWriteWait func(time.Duration)
}

// Open opens (creating if needed) the database at path, or an in-memory one for ":memory:",
// and applies pending migrations.
func Open(ctx context.Context, path string, opts Options) (*DB, error) {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Readers <= 0 {
		opts.Readers = 2 * runtime.GOMAXPROCS(0)
	}
	if opts.Synchronous == "" {
		opts.Synchronous = "FULL"
	}
	if IsPostgres(path) {
		return openPostgres(ctx, path, opts)
	}
	writeDSN, readDSN, err := dsns(path, opts.Synchronous)
	if err != nil {
		return nil, err
	}
	w, err := sql.Open("sqlite", writeDSN)
	if err != nil {
		return nil, fmt.Errorf("db: open writer: %w", err)
	}
	w.SetMaxOpenConns(2) // the writer's own (wconn) and one for the rest
	w.SetMaxIdleConns(2)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("db: open %s: %w", path, err)
	}
	if err := migrate(ctx, w, opts.Schema); err != nil {
		w.Close()
		return nil, err
	}
	r, err := sql.Open("sqlite", readDSN)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("db: open readers: %w", err)
	}
	r.SetMaxOpenConns(opts.Readers)
	r.SetMaxIdleConns(opts.Readers)
	r.SetConnMaxIdleTime(0)
	r.SetConnMaxLifetime(0)
	wconn, err := w.Conn(ctx)
	if err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("db: open %s: %w", path, err)
	}
	d := &DB{path: path, write: w, read: r, wconn: wconn, clock: opts.Clock, queue: make(chan *writeReq, 4096), done: make(chan struct{}),
		wstmts: newConnStmtCache(wconn), rstmts: newStmtCache(r), onEvent: opts.OnEvent, onWriteWait: opts.OnWriteWait}
	if path != ":memory:" && strings.EqualFold(opts.Synchronous, "FULL") {
		// The writer's commits stop waiting for the disk; the syncer waits instead (walsync.go).
		// The writer's connection is held until Close, so the setting lasts.
		if _, err := wconn.ExecContext(ctx, "PRAGMA synchronous=NORMAL"); err != nil {
			wconn.Close()
			w.Close()
			r.Close()
			return nil, fmt.Errorf("db: open %s: %w", path, err)
		}
		d.syncer = newWALSyncer(path)
		go d.syncer.run(d)
	}
	go d.writer()
	return d, nil
}

func dsns(path, synchronous string) (write, read string, err error) {
	common := []string{"_pragma=busy_timeout(10000)", "_pragma=foreign_keys(1)", "_pragma=temp_store(memory)", "_time_format=sqlite"}
	if path == ":memory:" {
		// A named memdb database is shared by every connection of this process.
		name := fmt.Sprintf("/troco-mem-%d-%d", os.Getpid(), memSeq.Add(1))
		base := "file:" + name + "?vfs=memdb&" + strings.Join(common, "&")
		return base + "&_txlock=immediate", base + "&_pragma=query_only(1)", nil
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", "", fmt.Errorf("db: create directory: %w", err)
		}
	}
	// SQLite creates the -wal and -shm files with the database file's mode: make it 0600 so
	// none of them is readable by other users (an existing file keeps no wider mode either).
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return "", "", fmt.Errorf("db: open %s: %w", path, err)
	}
	f.Close()
	if err := os.Chmod(path, 0o600); err != nil {
		return "", "", fmt.Errorf("db: chmod %s: %w", path, err)
	}
	switch strings.ToUpper(synchronous) {
	case "FULL", "NORMAL":
	default:
		return "", "", fmt.Errorf("db: synchronous must be FULL or NORMAL")
	}
	p := append(common, "_pragma=journal_mode(WAL)", "_pragma=synchronous("+strings.ToUpper(synchronous)+")")
	base := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + strings.Join(p, "&")
	return base + "&_txlock=immediate", base + "&_pragma=query_only(1)", nil
}

var memSeq atomic.Int64

// Close stops the writer after the queued writes and closes both pools.
func (d *DB) Close() error {
	d.mu.Lock()
	if d.closed.Swap(true) {
		d.mu.Unlock()
		return nil
	}
	close(d.queue)
	d.mu.Unlock()
	<-d.done
	d.rstmts.close()
	d.wstmts.close()
	if d.wconn != nil {
		d.wconn.Close() // back to the pool, closed with it below
	}
	errR := d.read.Close()
	if d.pg {
		return errors.Join(errR, d.write.Close())
	}
	if _, err := d.write.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil && d.path != ":memory:" {
		_ = err // best effort; the WAL is replayed on next open anyway
	}
	errW := d.write.Close()
	return errors.Join(errR, errW)
}

// Pools returns the writer's and the readers' connection pools (for their statistics).
func (d *DB) Pools() (writer, readers *sql.DB) { return d.write, d.read }

// Clock returns the clock that stamps transactions.
func (d *DB) Clock() clock.Clock { return d.clock }

// Write runs fn in a write transaction. Concurrent calls are batched into one commit; each fn
// runs inside its own savepoint, so an error from fn undoes only fn's writes. Write returns after
// the commit that made fn's writes durable, or with fn's error.
// fn must not block on anything but the database: it runs on the single writer.
func (d *DB) Write(ctx context.Context, fn func(*Tx) error) error {
	req := &writeReq{ctx: ctx, fn: fn, err: make(chan error, 1)}
	if d.onWriteWait != nil {
		req.queued = time.Now()
	}
	d.mu.Lock()
	if d.closed.Load() {
		d.mu.Unlock()
		return ErrClosed
	}
	d.queue <- req
	d.mu.Unlock()
	return <-req.err
}

func (d *DB) writer() {
	defer close(d.done)
	if d.syncer != nil {
		d.pipelinedWriter()
		return
	}
	batch := make([]*writeReq, 0, maxBatch)
	for first := range d.queue {
		batch = append(batch[:0], first)
	drain:
		for len(batch) < maxBatch {
			select {
			case r, ok := <-d.queue:
				if !ok {
					break drain
				}
				batch = append(batch, r)
			default:
				break drain
			}
		}
		d.commitBatch(batch)
	}
}

// pipelinedWriter is the writer when the syncer makes commits durable (walsync.go). It keeps
// one transaction open and runs each queued write in it as it arrives; it commits when the
// syncer is free (no fsync under way) or the batch is full, so the writes that arrive during
// one fsync share the next commit, and running them overlaps the disk's work.
func (d *DB) pipelinedWriter() {
	defer func() {
		close(d.syncer.in)
		<-d.syncer.done
	}()
	queue := d.queue
	var b *openBatch
	inFlight := false // a commit handed to the syncer is not answered yet
	add := func(r *writeReq) {
		if b == nil {
			var err error
			if b, err = d.beginBatch(); err != nil {
				r.err <- err
				return
			}
		}
		d.runInBatch(b, r)
	}
	for {
		if b == nil {
			if queue == nil {
				return
			}
			select {
			case r, ok := <-queue:
				if !ok {
					queue = nil
					continue
				}
				add(r)
			case <-d.syncer.idle:
				inFlight = false
			}
			continue
		}
	drain:
		for queue != nil && len(b.reqs) < maxBatch {
			select {
			case r, ok := <-queue:
				if !ok {
					queue = nil
					break drain
				}
				add(r)
			default:
				break drain
			}
		}
		if inFlight && len(b.reqs) < maxBatch && queue != nil {
			// The disk is busy with the previous commit: run what arrives meanwhile.
			select {
			case r, ok := <-queue:
				if !ok {
					queue = nil
					continue
				}
				add(r)
				continue
			case <-d.syncer.idle:
				inFlight = false
			}
		}
		inFlight = d.commitOpen(b)
		b = nil
	}
}

// openBatch is a write transaction of the writer with the writes run in it so far.
type openBatch struct {
	sqlTx   *sql.Tx   // PostgreSQL
	conn    *sql.Conn // SQLite: the writer's connection, in BEGIN IMMEDIATE
	st      *txStmts
	reqs    []*writeReq
	results []error
	events  []*domain.Event
	busy    time.Duration // time spent beginning it and running its writes
	// broken, when set, is why no transaction is open any more (reopenIfLost): the batch fails.
	broken error
}

func (d *DB) beginBatch() (*openBatch, error) {
	start := time.Now()
	if !d.pg {
		if rec := d.recorder(); rec != nil {
			rec(WriterStatement{SQL: "BEGIN IMMEDIATE"})
		}
		if _, err := d.wconn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
			return nil, fmt.Errorf("db: begin: %w", err)
		}
		b := &openBatch{conn: d.wconn, st: &txStmts{cache: d.wstmts}}
		b.busy = time.Since(start)
		return b, nil
	}
	sqlTx, err := d.write.BeginTx(context.Background(), nil)
	if err == nil && d.pg {
		// Serialize the writers of every replica (see postgres.go).
		if _, err = sqlTx.Exec("SELECT pg_advisory_xact_lock(7463100001)"); err != nil {
			sqlTx.Rollback()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("db: begin: %w", err)
	}
	b := &openBatch{sqlTx: sqlTx}
	if !d.pg {
		b.st = &txStmts{cache: d.wstmts}
	}
	b.busy = time.Since(start)
	return b, nil
}

// runInBatch runs r's function in its own savepoint of b.
func (d *DB) runInBatch(b *openBatch, r *writeReq) {
	start := time.Now()
	if d.onWriteWait != nil {
		d.onWriteWait(start.Sub(r.queued))
	}
	var err error
	if b.broken != nil {
		err = b.broken
	} else if err = r.ctx.Err(); err == nil {
		var q querier = b.sqlTx
		if b.conn != nil {
			q = connQuerier{b.conn}
		}
		tx := &Tx{db: d, q: q, st: b.st, pg: d.pg, Now: d.clock.Now().UTC().Truncate(time.Second), writable: true, conn: b.conn}
		if b.conn != nil {
			tx.record = d.recorder()
		}
		if err = runSavepoint(tx, r.fn); err == nil {
			b.events = append(b.events, tx.events...)
		}
		if b.conn != nil && (tx.mayBeLost || tx.lost) {
			if lost := d.reopenIfLost(b, tx); lost != nil {
				err = errors.Join(err, lost)
			}
		}
	}
	b.reqs = append(b.reqs, r)
	b.results = append(b.results, err)
	b.busy += time.Since(start)
}

// errTxLost is the error of the writes of a batch whose transaction SQLite rolled back on its
// own (a full disk, an I/O error, out of memory: see mayRollBack).
var errTxLost = errors.New("db: the batch's transaction was rolled back by SQLite")

// reopenIfLost is called on the writer's connection after a write whose statement failed with
// an error that may have rolled back the whole batch transaction, or whose savepoint could not
// be rolled back or released. It finds out whether the transaction is still open (a BEGIN fails
// inside one) and, if SQLite ended it, fails every write of the batch so far (their writes are
// gone: none may be answered as committed), forgets their events, undoes whatever the failing
// write ran after the loss, and begins a new transaction for the rest of the batch, so that no
// later write runs in autocommit and is committed while reported failed.
func (d *DB) reopenIfLost(b *openBatch, tx *Tx) error {
	if !tx.lost {
		_, err := b.conn.ExecContext(context.Background(), "BEGIN IMMEDIATE")
		if err != nil && strings.Contains(err.Error(), "within a transaction") {
			return nil // still inside the batch's transaction
		}
		if err != nil {
			// The transaction is gone and no new one can be begun: fail this batch from here.
			b.broken = fmt.Errorf("%w: begin: %v", errTxLost, err)
		}
		// Otherwise the BEGIN succeeded: the batch's transaction was gone, and this one is empty.
	} else {
		// The write went on in the transaction its statement's check began: undo it.
		_, _ = b.conn.ExecContext(context.Background(), "ROLLBACK")
		if _, err := b.conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
			// No transaction can be begun: fail this batch from here; the next one begins anew.
			b.broken = fmt.Errorf("%w: begin: %v", errTxLost, err)
		}
	}
	lost := fmt.Errorf("%w: %v", errTxLost, tx.lostCause)
	for i := range b.results {
		if b.results[i] == nil {
			b.results[i] = lost
		}
	}
	b.events = nil
	b.st.forgetEndpoints()
	return lost
}

// mayRollBack reports whether err is one of the SQLite errors after which SQLite may have rolled
// back the whole transaction, not only the statement (https://sqlite.org/lang_transaction.html:
// SQLITE_FULL, SQLITE_IOERR, SQLITE_BUSY, SQLITE_NOMEM; and an interrupted write).
func mayRollBack(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_BUSY, sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_INTERRUPT, sqlite3.SQLITE_CORRUPT:
		return true
	}
	return false
}

// checkLost is called by the writer's statements on an error: when it may have rolled back the
// batch's transaction, it finds out at once (a BEGIN succeeds only outside a transaction) so
// that the rest of the write runs in that new transaction, to be undone, rather than in
// autocommit, committed piece by piece.
func (tx *Tx) checkLost(err error) {
	if tx.conn == nil || tx.lost || err == nil || !mayRollBack(err) {
		return
	}
	tx.mayBeLost = true
	if tx.lostCause == nil {
		tx.lostCause = err
	}
	if _, berr := tx.conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); berr == nil {
		tx.lost = true
		tx.lostCause = err
	}
}

// commitOpen commits b and answers its writes: at once, or through the syncer once the WAL is
// on disk. It reports whether it handed them to the syncer.
func (d *DB) commitOpen(b *openBatch) (synced bool) {
	commitStart := time.Now()
	var commitErr error
	if b.broken != nil {
		commitErr = b.broken
	} else if b.conn != nil {
		if rec := d.recorder(); rec != nil {
			rec(WriterStatement{SQL: "COMMIT"})
		}
		if _, commitErr = b.conn.ExecContext(context.Background(), "COMMIT"); commitErr != nil {
			// A failed COMMIT may leave the transaction open: end it, so the next batch begins.
			_, _ = b.conn.ExecContext(context.Background(), "ROLLBACK")
		}
	} else {
		commitErr = b.sqlTx.Commit()
	}
	if commitErr != nil {
		err := fmt.Errorf("db: commit: %w", commitErr)
		for i := range b.results {
			b.results[i] = err
		}
		b.events = nil
	}
	commit := time.Since(commitStart)
	d.stats.batches.Add(1)
	d.stats.txs.Add(int64(len(b.reqs)))
	if b.st != nil { // PostgreSQL keeps no statement cache (pgx has its own)
		d.stats.stmts.Add(int64(b.st.n) + 2) // + BEGIN and COMMIT
	}
	d.stats.busyNs.Add(int64(b.busy + commit))
	d.stats.commitNs.Add(int64(commit))
	if d.syncer != nil && commitErr == nil {
		d.syncer.in <- syncItem{reqs: b.reqs, results: b.results, events: b.events}
		synced = true
	} else {
		if d.onEvent != nil {
			for _, e := range b.events {
				d.onEvent(e)
			}
		}
		for i, r := range b.reqs {
			r.err <- b.results[i]
		}
	}
	// The writer's only connection is free again: prepare what this batch ran unprepared.
	if b.st != nil {
		d.wstmts.prepare(b.st.missed)
	}
	return synced
}

// commitBatch runs batch in one transaction and commits it.
func (d *DB) commitBatch(batch []*writeReq) {
	b, err := d.beginBatch()
	if err != nil {
		for _, r := range batch {
			r.err <- err
		}
		return
	}
	b.reqs = make([]*writeReq, 0, len(batch))
	for _, r := range batch {
		d.runInBatch(b, r)
	}
	d.commitOpen(b)
}

func runSavepoint(tx *Tx, fn func(*Tx) error) (err error) {
	if _, err := tx.exec("SAVEPOINT w"); err != nil {
		return fmt.Errorf("db: savepoint: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("db: panic in transaction: %v", p)
		}
		if tx.lost {
			// SQLite rolled the batch's transaction back: savepoint w is gone (reopenIfLost).
			err = errors.Join(err, fmt.Errorf("%w: %v", errTxLost, tx.lostCause))
			tx.events = nil
			return
		}
		if err != nil {
			if _, rbErr := tx.exec("ROLLBACK TO w"); rbErr != nil {
				err = errors.Join(err, rbErr)
				tx.markLost(rbErr)
			}
			tx.st.forgetEndpoints()
			tx.events = nil
		}
		if _, relErr := tx.exec("RELEASE w"); relErr != nil && err == nil {
			err = fmt.Errorf("db: release savepoint: %w", relErr)
			tx.markLost(relErr)
		}
	}()
	return fn(tx)
}

// Read runs fn in a read-only transaction on a consistent snapshot.
func (d *DB) Read(ctx context.Context, fn func(*Tx) error) error {
	if d.pg {
		sqlTx, err := d.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead})
		if err != nil {
			return fmt.Errorf("db: begin read: %w", err)
		}
		defer sqlTx.Rollback()
		return fn(&Tx{db: d, q: sqlTx, pg: true, Now: d.clock.Now().UTC().Truncate(time.Second)})
	}
	sqlTx, err := d.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("db: begin read: %w", err)
	}
	st := &txStmts{cache: d.rstmts}
	defer func() {
		sqlTx.Rollback()
		d.rstmts.prepare(st.missed) // outside the transaction: the pool may need this connection
	}()
	return fn(&Tx{db: d, q: sqlTx, st: st, Now: d.clock.Now().UTC().Truncate(time.Second)})
}

// ReadOne runs fn on the reader pool outside an explicit transaction, so each statement sees
// the latest commit on its own. For a single-statement lookup it is Read without the BEGIN and
// ROLLBACK round trips (the API key lookup of every request); fn must not need a snapshot
// shared by several statements.
func (d *DB) ReadOne(ctx context.Context, fn func(*Tx) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("db: begin read: %w", err)
	}
	if d.pg {
		return fn(&Tx{db: d, q: d.read, pg: true, Now: d.clock.Now().UTC().Truncate(time.Second)})
	}
	st := &txStmts{cache: d.rstmts}
	defer func() { d.rstmts.prepare(st.missed) }()
	return fn(&Tx{db: d, q: d.read, st: st, Now: d.clock.Now().UTC().Truncate(time.Second)})
}

// querier is what a Tx runs statements on.
type querier interface {
	Exec(query string, args ...any) (sql.Result, error)
	QueryRow(query string, args ...any) *sql.Row
	Query(query string, args ...any) (*sql.Rows, error)
}

// connQuerier runs statements on the writer's connection (its open BEGIN IMMEDIATE).
type connQuerier struct{ c *sql.Conn }

func (q connQuerier) Exec(query string, args ...any) (sql.Result, error) {
	return q.c.ExecContext(context.Background(), query, args...)
}

func (q connQuerier) QueryRow(query string, args ...any) *sql.Row {
	return q.c.QueryRowContext(context.Background(), query, args...)
}

func (q connQuerier) Query(query string, args ...any) (*sql.Rows, error) {
	return q.c.QueryContext(context.Background(), query, args...)
}

// Tx is one transaction. Now is the clock reading captured when it began; every timestamp the
// transaction writes uses it.
type Tx struct {
	db       *DB
	q        querier // *sql.Tx, or the reader pool for ReadOne
	st       *txStmts
	Now      time.Time
	writable bool
	pg       bool
	sp       int
	// events are the events this transaction inserted (for DB.onEvent after the commit).
	events []*domain.Event
	// eventData is the encoded data of each event this transaction inserted, by id (an entry
	// whose event is no longer in events was rolled back): a stored idempotent response that is
	// exactly an event's object points at it instead of holding a copy.
	eventData map[string]eventBytes
	// emails are the messages each event of this transaction queued, by event id (an entry whose
	// event was rolled back is never asked for: event ids are not reused).
	emails map[string][]QueuedEmail
	// conn is the writer's connection (SQLite writer only). mayBeLost is set when a statement
	// failed with an error that may have rolled back the batch's transaction; lost when it did
	// (the rest of the write runs in a new transaction that is then undone); lostCause is that
	// error.
	conn      *sql.Conn
	mayBeLost bool
	lost      bool
	lostCause error
	// record is the writer's statement recorder (RecordWriterStatements), nil when off.
	record func(WriterStatement)
	// base is the public base URL read from the settings when the process has none (publicBase).
	base     string
	baseRead bool
}

// eventBytes are an event's encoded data and the length of its object's JSON, which the data
// holds right after eventObjectPrefix.
type eventBytes struct {
	data []byte
	n    int
}

// Savepoint runs fn in a nested savepoint: an error from fn undoes only fn's writes.
func (tx *Tx) Savepoint(fn func() error) (err error) {
	if _, ok := tx.q.(*sql.Tx); !ok && !tx.writable {
		return errors.New("db: savepoint outside a transaction (ReadOne)")
	}
	tx.sp++
	name := "n" + strconv.Itoa(tx.sp)
	nEvents := len(tx.events)
	if _, err := tx.exec("SAVEPOINT " + name); err != nil {
		return fmt.Errorf("db: savepoint: %w", err)
	}
	defer func() {
		if err != nil {
			_, _ = tx.exec("ROLLBACK TO " + name)
			tx.st.forgetEndpoints()
			tx.events = tx.events[:nEvents]
		}
		_, _ = tx.exec("RELEASE " + name)
	}()
	return fn()
}

func (tx *Tx) now() int64 { return tx.Now.Unix() }

// markLost notes that the write's savepoint could not be rolled back or released: the batch's
// transaction may be gone (the writer checks, reopenIfLost).
func (tx *Tx) markLost(err error) {
	if tx.conn != nil {
		tx.mayBeLost = true
		if tx.lostCause == nil {
			tx.lostCause = err
		}
	}
}

func (tx *Tx) exec(query string, args ...any) (sql.Result, error) {
	if tx.st != nil && tx.st.endpoints != nil && strings.Contains(query, "webhook_endpoints") {
		tx.st.forgetEndpoints() // a write to the endpoints (every exec on them is one)
	}
	if tx.pg {
		return tx.pgExec(query, args)
	}
	if tx.record != nil {
		tx.record(WriterStatement{SQL: query, Args: args})
	}
	var res sql.Result
	var err error
	if s := tx.prepared(query); s != nil {
		res, err = s.Exec(args...)
	} else {
		res, err = tx.q.Exec(query, args...)
	}
	if err != nil {
		tx.checkLost(err)
	}
	return res, err
}

func (tx *Tx) queryRow(query string, args ...any) *sql.Row {
	if tx.pg {
		return tx.q.QueryRow(rebind(query), pgArgs(args)...)
	}
	if tx.record != nil {
		tx.record(WriterStatement{SQL: query, Args: args, Rows: true})
	}
	var row *sql.Row
	if s := tx.prepared(query); s != nil {
		row = s.QueryRow(args...)
	} else {
		row = tx.q.QueryRow(query, args...)
	}
	if tx.conn != nil {
		// An error of running the statement (not one met while stepping, which Scan reports and
		// the write's savepoint then finds, runSavepoint).
		tx.checkLost(row.Err())
	}
	return row
}

func (tx *Tx) query(query string, args ...any) (*sql.Rows, error) {
	if tx.pg {
		return tx.q.Query(rebind(query), pgArgs(args)...)
	}
	if tx.record != nil {
		tx.record(WriterStatement{SQL: query, Args: args, Rows: true})
	}
	var rows *sql.Rows
	var err error
	if s := tx.prepared(query); s != nil {
		rows, err = s.Query(args...)
	} else {
		rows, err = tx.q.Query(query, args...)
	}
	if err != nil {
		tx.checkLost(err)
	}
	return rows, err
}

// prepared returns query as a statement of this transaction when the pool has it prepared, and
// otherwise notes it so that it is prepared after the transaction.
func (tx *Tx) prepared(query string) *sql.Stmt {
	st := tx.st
	if st == nil {
		return nil
	}
	st.n++
	for _, b := range st.bound {
		if b.query == query {
			return b.stmt
		}
	}
	s := st.cache.get(query)
	if s == nil && st.cache.conn != nil {
		// The writer's own connection: prepare it now, even inside the open transaction, and use
		// it as it is (it belongs to this connection; nothing to bind).
		return st.cache.prepareOn(query)
	}
	if s == nil {
		st.missed = append(st.missed, query)
		return nil
	}
	if st.cache.conn != nil {
		return s
	}
	if sqlTx, ok := tx.q.(*sql.Tx); ok {
		s = sqlTx.Stmt(s)
	}
	st.bound = append(st.bound, boundStmt{query, s})
	return s
}

// maxCachedStmts bounds the statements kept prepared per pool (each is prepared once on every
// connection of the pool that runs it). Queries beyond it run unprepared.
const maxCachedStmts = 256

// stmtCache holds the prepared statements of one pool by query text, so that a hot query is
// parsed and planned once per connection rather than on every execution. Statements are
// prepared outside transactions (the writer pool's only connection is held by the open
// transaction): a transaction runs an unknown query unprepared and lists it in txStmts.missed,
// and its owner prepares the list once the transaction is over.
type stmtCache struct {
	pool *sql.DB
	conn *sql.Conn // instead of pool: the writer's connection, whose statements are prepared at first use
	mu   sync.RWMutex
	m    map[string]*sql.Stmt
}

func newStmtCache(pool *sql.DB) *stmtCache {
	return &stmtCache{pool: pool, m: map[string]*sql.Stmt{}}
}

func newConnStmtCache(conn *sql.Conn) *stmtCache {
	return &stmtCache{conn: conn, m: map[string]*sql.Stmt{}}
}

// prepareOn prepares query on the cache's connection and keeps it while there is room; nil
// (run it unprepared) when the cache is full or the query cannot be prepared. Only the writer
// calls it, on its own connection.
func (c *stmtCache) prepareOn(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.m[query]; ok {
		return s
	}
	if len(c.m) >= maxCachedStmts {
		return nil
	}
	s, err := c.conn.PrepareContext(context.Background(), query)
	if err != nil {
		return nil
	}
	c.m[query] = s
	return s
}

func (c *stmtCache) get(query string) *sql.Stmt {
	if c == nil {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[query]
}

// prepare adds queries to the cache while there is room; a query that fails to prepare (a
// multi-statement script, say) simply stays unprepared.
func (c *stmtCache) prepare(queries []string) {
	for _, q := range queries {
		c.mu.RLock()
		_, have := c.m[q]
		full := len(c.m) >= maxCachedStmts
		c.mu.RUnlock()
		if have || full {
			continue
		}
		s, err := c.pool.Prepare(q)
		if err != nil {
			continue
		}
		c.mu.Lock()
		if _, have := c.m[q]; have || len(c.m) >= maxCachedStmts {
			c.mu.Unlock()
			s.Close()
			continue
		}
		c.m[q] = s
		c.mu.Unlock()
	}
}

func (c *stmtCache) close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, s := range c.m {
		s.Close()
		delete(c.m, q)
	}
}

// txStmts is what one transaction (or one writer batch) uses of a stmtCache: the statements
// already bound to it and the queries it ran unprepared.
type txStmts struct {
	cache  *stmtCache
	bound  []boundStmt
	missed []string
	n      int // statements run
	// endpoints caches webhookSubscribers per scope for the writer's batch.
	endpoints map[domain.Scope][]webhookSub
}

// forgetEndpoints drops the batch's cached webhook endpoints.
func (st *txStmts) forgetEndpoints() {
	if st != nil {
		st.endpoints = nil
	}
}

type boundStmt struct {
	query string
	stmt  *sql.Stmt
}

// translate maps driver errors to the package's typed errors by SQLite result code.
func translate(err error, what string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if pgConflict(err) {
		return fmt.Errorf("db: %s: %w", what, ErrConflict)
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("db: %s: %w", what, ErrConflict)
		}
	}
	return fmt.Errorf("db: %s: %w", what, err)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TableSizes returns the bytes of database pages each table and index uses (SQLite's dbstat),
// by name: what the benchmarks report as storage per object.
func (tx *Tx) TableSizes() (map[string]int64, error) {
	rows, err := tx.q.Query("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name")
	if err != nil {
		return nil, translate(err, "table sizes")
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			return nil, translate(err, "table sizes")
		}
		out[name] = n
	}
	return out, translate(rows.Err(), "table sizes")
}

// DeleteInBatches runs del (a DELETE of at most limit rows) in successive write transactions
// until one removes fewer than batch rows or ctx ends, and returns the total removed. Each
// batch is its own commit, so a large backlog of expired rows never holds the writer for long
// and requests interleave with the batches; several replicas running it at once only share
// the work (a row is deleted once).
func (d *DB) DeleteInBatches(ctx context.Context, batch int, del func(tx *Tx, limit int) (int64, error)) (int64, error) {
	var total int64
	for {
		var n int64
		err := d.Write(ctx, func(tx *Tx) error {
			var err error
			n, err = del(tx, batch)
			return err
		})
		total += n
		if err != nil || n < int64(batch) {
			return total, err
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}
