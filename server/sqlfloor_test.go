package server

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/db"
)

// The SQL floor of a payment (BenchmarkPaymentSQLFloor): every statement the single writer ran
// for N payments made through the real stack is recorded (db.RecordWriterStatements), then
// replayed, alone, on a copy of the database as it was before those payments. What the replay
// costs is the part of the writer's time no Go code in troco can remove: SQLite executing the
// rows and index entries the API stores.

// floorStmt is one recorded statement with its arguments converted to driver values.
type floorStmt struct {
	sql  string
	args []driver.Value
	rows bool
}

// floorOp is one write operation (a Write call): SAVEPOINT w, its statements, RELEASE w.
type floorOp []floorStmt

// floorRecording is what one recorded run produced.
type floorRecording struct {
	payments  int
	ops       []floorOp
	batches   int              // BEGIN … COMMIT batches the writer made while recording
	snapshot  string           // the database file as it was before the payments
	rowsAfter map[string]int64 // rows per table in the real database after them
	writer    db.WriterStats   // the real writer's counters over the recorded payments (recorder's cost included)
	schema    string
}

// recordPayments makes warm payments through e (unrecorded, they also give the B-trees some
// depth), copies the database file, then makes n more from 32 concurrent callers while recording
// every statement of the writer, and waits for their request-log rows.
func recordPayments(tb testing.TB, e *benchEnv, warm, n int, pay func() error) *floorRecording {
	tb.Helper()
	if err := runConcurrently(warm, pay); err != nil {
		tb.Fatal(err)
	}
	e.s.FlushRequestLogs()
	dir := tb.TempDir()
	rec := &floorRecording{payments: n, snapshot: filepath.Join(dir, "before.db")}
	w, _ := e.db.Pools()
	if err := checkpointCopy(w, e.dbPath, rec.snapshot); err != nil {
		tb.Fatal(err)
	}
	var mu sync.Mutex
	var log []floorStmt
	var convErr error
	e.db.RecordWriterStatements(func(s db.WriterStatement) {
		args := make([]driver.Value, len(s.Args))
		var bad error
		for i, a := range s.Args {
			v, err := driver.DefaultParameterConverter.ConvertValue(a)
			if err != nil && bad == nil {
				bad = fmt.Errorf("%s: argument %d (%T): %w", s.SQL, i+1, a, err)
			}
			if b, ok := v.([]byte); ok {
				v = slices.Clone(b) // the caller may reuse its buffer
			}
			args[i] = v
		}
		mu.Lock()
		log = append(log, floorStmt{sql: s.SQL, args: args, rows: s.Rows})
		if convErr == nil {
			convErr = bad
		}
		mu.Unlock()
	})
	before := e.db.WriterStats()
	err := runConcurrently(n, pay)
	e.s.FlushRequestLogs() // their log rows are part of what they cost the writer
	e.db.RecordWriterStatements(nil)
	after := e.db.WriterStats()
	rec.writer = db.WriterStats{Batches: after.Batches - before.Batches, Txs: after.Txs - before.Txs, Statements: after.Statements - before.Statements,
		Busy: after.Busy - before.Busy, Commit: after.Commit - before.Commit, Syncs: after.Syncs - before.Syncs, Sync: after.Sync - before.Sync}
	if err != nil {
		tb.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if convErr != nil {
		tb.Fatal(convErr)
	}
	var op floorOp
	for _, s := range log {
		switch {
		case s.sql == "BEGIN IMMEDIATE":
			rec.batches++
		case s.sql == "COMMIT":
		case s.sql == "SAVEPOINT w":
			if op != nil {
				tb.Fatalf("recorded SAVEPOINT w inside an operation")
			}
			op = floorOp{s}
		case op == nil:
			tb.Fatalf("recorded a statement outside any write operation: %s", s.sql)
		case s.sql == "RELEASE w":
			rec.ops = append(rec.ops, append(op, s))
			op = nil
		default:
			op = append(op, s)
		}
	}
	if op != nil {
		tb.Fatalf("recording ended inside an operation")
	}
	rec.rowsAfter = rowCounts(tb, w)
	schema, err := os.ReadFile(filepath.Join("..", "schema.sql"))
	if err != nil {
		tb.Fatal(err)
	}
	rec.schema = string(schema)
	return rec
}

// runConcurrently runs pay n times from 32 goroutines.
func runConcurrently(n int, pay func() error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				if err := pay(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// checkpointCopy moves the whole WAL into the database file and copies the file: the copy is
// the database as it is (nothing may write meanwhile), page for page, B-tree slack included.
func checkpointCopy(w *sql.DB, from, to string) error {
	var busy, logPages, done int
	if err := w.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logPages, &done); err != nil {
		return err
	}
	if busy != 0 {
		return errors.New("checkpoint: the database is busy")
	}
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// rowCounts returns the rows of every table.
func rowCounts(tb testing.TB, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) map[string]int64 {
	tb.Helper()
	rows, err := q.QueryContext(context.Background(), "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			tb.Fatal(err)
		}
		names = append(names, n)
	}
	rows.Close()
	out := map[string]int64{}
	for _, n := range names {
		var c int64
		if err := q.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM "`+n+`"`).Scan(&c); err != nil {
			tb.Fatal(err)
		}
		out[n] = c
	}
	return out
}

// replayOptions choose how a recording is replayed.
type replayOptions struct {
	batch       int                     // write operations per BEGIN IMMEDIATE … COMMIT
	savepoints  bool                    // keep each operation's SAVEPOINT w / RELEASE w
	databaseSQL bool                    // through database/sql prepared statements (as the writer runs them) instead of the driver's
	profile     map[string]*stmtProfile // when set, time each statement (slower; not for the floor figures)
}

// replayResult is what one replay took.
type replayResult struct {
	total, commit time.Duration // wall time
	totalCPU      time.Duration // CPU time of the replaying thread
	stmts         int
}

// threadCPU is the CPU time (user + system) of the calling OS thread.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(1, &ru) // RUSAGE_THREAD
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type stmtProfile struct {
	n int
	d time.Duration
}

// floorDB is a fresh copy of a recording's snapshot opened with db.Open (troco's schema and
// pragmas) and one connection of its write pool set up as the writer's is.
type floorDB struct {
	d    *db.DB
	conn *sql.Conn
	path string
}

func openFloorDB(rec *floorRecording, dir string) (*floorDB, error) {
	path := filepath.Join(dir, fmt.Sprintf("replay-%d.db", time.Now().UnixNano()))
	src, err := os.ReadFile(rec.snapshot)
	if err != nil {
		return nil, err
	}
	// Written and synced: a copy still dirty in the page cache would make the replay's first
	// checkpoint (which fsyncs the database file) pay for writing all of it.
	out, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	_, err = out.Write(src)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	d, err := db.Open(context.Background(), path, db.Options{Schema: rec.schema, Synchronous: "FULL"})
	if err != nil {
		return nil, err
	}
	w, _ := d.Pools()
	conn, err := w.Conn(context.Background())
	if err != nil {
		d.Close()
		return nil, err
	}
	// As the writer's connection: with FULL on a file the WAL's fsync runs off the writer
	// (db/walsync.go), so the writer commits with NORMAL.
	if _, err := conn.ExecContext(context.Background(), "PRAGMA synchronous=NORMAL"); err != nil {
		conn.Close()
		d.Close()
		return nil, err
	}
	return &floorDB{d: d, conn: conn, path: path}, nil
}

func (f *floorDB) close() {
	f.conn.Close()
	f.d.Close()
	for _, s := range []string{"", "-wal", "-shm"} {
		os.Remove(f.path + s)
	}
}

// replayer runs one statement; prepared once per query text.
type replayer interface {
	run(s floorStmt) error
	close()
}

// driverReplayer runs statements as the driver's own prepared statements: no database/sql.
type driverReplayer struct {
	conn  driver.ConnPrepareContext
	stmts map[string]driver.Stmt
	named []driver.NamedValue
	dest  []driver.Value
}

func (r *driverReplayer) run(s floorStmt) error {
	st := r.stmts[s.sql]
	if st == nil {
		var err error
		if st, err = r.conn.PrepareContext(context.Background(), s.sql); err != nil {
			return fmt.Errorf("prepare %s: %w", s.sql, err)
		}
		r.stmts[s.sql] = st
	}
	r.named = r.named[:0]
	for i, a := range s.args {
		r.named = append(r.named, driver.NamedValue{Ordinal: i + 1, Value: a})
	}
	if !s.rows {
		_, err := st.(driver.StmtExecContext).ExecContext(context.Background(), r.named)
		return err
	}
	rows, err := st.(driver.StmtQueryContext).QueryContext(context.Background(), r.named)
	if err != nil {
		return err
	}
	if n := len(rows.Columns()); cap(r.dest) < n {
		r.dest = make([]driver.Value, n)
	}
	dest := r.dest[:len(rows.Columns())]
	for {
		if err := rows.Next(dest); err != nil {
			rows.Close()
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

func (r *driverReplayer) close() {
	for _, s := range r.stmts {
		s.Close()
	}
}

// sqlReplayer runs statements as database/sql prepared statements on the connection, as the
// writer does.
type sqlReplayer struct {
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
	args  []any
	dest  []any
}

func (r *sqlReplayer) run(s floorStmt) error {
	st := r.stmts[s.sql]
	if st == nil {
		var err error
		if st, err = r.conn.PrepareContext(context.Background(), s.sql); err != nil {
			return fmt.Errorf("prepare %s: %w", s.sql, err)
		}
		r.stmts[s.sql] = st
	}
	r.args = r.args[:0]
	for _, a := range s.args {
		r.args = append(r.args, a)
	}
	if !s.rows {
		_, err := st.Exec(r.args...)
		return err
	}
	rows, err := st.Query(r.args...)
	if err != nil {
		return err
	}
	cols, _ := rows.Columns()
	for len(r.dest) < len(cols) {
		r.dest = append(r.dest, new(sql.RawBytes))
	}
	for rows.Next() {
		if err := rows.Scan(r.dest[:len(cols)]...); err != nil {
			rows.Close()
			return err
		}
	}
	rows.Close()
	return rows.Err()
}

func (r *sqlReplayer) close() {
	for _, s := range r.stmts {
		s.Close()
	}
}

// replay runs rec's operations on f in batches of o.batch operations, each batch one BEGIN
// IMMEDIATE … COMMIT, and times it. Statements are prepared on first use, before the timed pass
// (a warm-up pass prepares them all, inside a transaction that is rolled back).
func replay(f *floorDB, rec *floorRecording, o replayOptions) (res replayResult, err error) {
	body := func(r replayer) error {
		begin := floorStmt{sql: "BEGIN IMMEDIATE"}
		commit := floorStmt{sql: "COMMIT"}
		// Prepare every statement once (prepared statements survive the rollback).
		if err := r.run(begin); err != nil {
			return err
		}
		seen := map[string]bool{}
		for _, op := range rec.ops {
			for _, s := range op {
				if !seen[s.sql] {
					seen[s.sql] = true
					if err := prepareOnly(r, s.sql); err != nil {
						return err
					}
				}
			}
		}
		for _, s := range []string{"COMMIT", "ROLLBACK"} {
			if err := prepareOnly(r, s); err != nil {
				return err
			}
		}
		if err := r.run(floorStmt{sql: "ROLLBACK"}); err != nil {
			return err
		}
		// As on the writer with synchronous FULL (db/walsync.go), another goroutine fsyncs the
		// WAL after each commit while the next batch runs; otherwise the checkpoints (every ~1000
		// WAL pages, in a COMMIT) would have to write out a WAL nobody synced.
		synced := make(chan struct{}, 1)
		syncDone := make(chan struct{})
		go func() {
			defer close(syncDone)
			var wal *os.File
			for range synced {
				if wal == nil {
					wal, _ = os.Open(f.path + "-wal")
				}
				if wal != nil {
					_ = wal.Sync()
				}
			}
			if wal != nil {
				wal.Close()
			}
		}()
		defer func() {
			close(synced)
			<-syncDone
		}()
		runtime.LockOSThread() // so that the thread's CPU time is the replay's
		defer runtime.UnlockOSThread()
		start, cpu0 := time.Now(), threadCPU()
		for i := 0; i < len(rec.ops); i += o.batch {
			if err := r.run(begin); err != nil {
				return err
			}
			res.stmts++
			for _, op := range rec.ops[i:min(i+o.batch, len(rec.ops))] {
				for j, s := range op {
					if !o.savepoints && (j == 0 || j == len(op)-1) {
						continue // SAVEPOINT w, RELEASE w
					}
					var t0 time.Time
					if o.profile != nil {
						t0 = time.Now()
					}
					if err := r.run(s); err != nil {
						return fmt.Errorf("%s: %w", s.sql, err)
					}
					if o.profile != nil {
						p := o.profile[s.sql]
						if p == nil {
							p = &stmtProfile{}
							o.profile[s.sql] = p
						}
						p.n++
						p.d += time.Since(t0)
					}
					res.stmts++
				}
			}
			c0 := time.Now()
			if err := r.run(commit); err != nil {
				return err
			}
			res.commit += time.Since(c0)
			select {
			case synced <- struct{}{}:
			default: // an fsync is under way or asked for: it covers this commit too
			}
			res.stmts++
		}
		res.total, res.totalCPU = time.Since(start), threadCPU()-cpu0
		return nil
	}
	if o.databaseSQL {
		r := &sqlReplayer{conn: f.conn, stmts: map[string]*sql.Stmt{}}
		defer r.close()
		return res, body(r)
	}
	err = f.conn.Raw(func(dc any) error {
		pc, ok := dc.(driver.ConnPrepareContext)
		if !ok {
			return fmt.Errorf("driver connection %T cannot prepare", dc)
		}
		r := &driverReplayer{conn: pc, stmts: map[string]driver.Stmt{}}
		defer r.close()
		return body(r)
	})
	return res, err
}

// prepareOnly prepares query on r, once, without running it.
func prepareOnly(r replayer, query string) error {
	switch r := r.(type) {
	case *driverReplayer:
		if r.stmts[query] == nil {
			st, err := r.conn.PrepareContext(context.Background(), query)
			if err != nil {
				return fmt.Errorf("prepare %s: %w", query, err)
			}
			r.stmts[query] = st
		}
	case *sqlReplayer:
		if r.stmts[query] == nil {
			st, err := r.conn.PrepareContext(context.Background(), query)
			if err != nil {
				return fmt.Errorf("prepare %s: %w", query, err)
			}
			r.stmts[query] = st
		}
	}
	return nil
}

var (
	writeStatement = regexp.MustCompile(`(?is)^(INSERT(?:\s+OR\s+\w+)?\s+INTO|UPDATE|DELETE\s+FROM)\s+(\w+)`)
	setClause      = regexp.MustCompile(`(?is)\bSET\s+(.*?)(\bWHERE\b|$)`)
	setColumn      = regexp.MustCompile(`(\w+)\s*=`)
)

// statementTrees describes the B-trees a statement writes: an INSERT writes its table's row
// and an entry in each of its indexes (a partial index, marked *, only when its WHERE holds); an
// UPDATE rewrites the row and deletes and reinserts the entries of the indexes on the columns it
// sets (or in a partial index's WHERE); a SELECT writes none.
func statementTrees(f *floorDB, query string) string {
	q := strings.TrimSpace(query)
	m := writeStatement.FindStringSubmatch(q)
	if m == nil {
		return ""
	}
	table := m[2]
	type index struct {
		name    string
		cols    []string
		partial string // the WHERE of a partial index
	}
	var indexes []index
	rows, err := f.conn.QueryContext(context.Background(), "SELECT name, coalesce(sql, '') FROM sqlite_master WHERE type = 'index' AND tbl_name = ? ORDER BY name", table)
	if err != nil {
		return "?"
	}
	for rows.Next() {
		var ix index
		var def string
		_ = rows.Scan(&ix.name, &def)
		if i := strings.LastIndex(strings.ToUpper(def), " WHERE "); i >= 0 {
			ix.partial = def[i+7:]
		}
		indexes = append(indexes, ix)
	}
	rows.Close()
	for i := range indexes {
		r, err := f.conn.QueryContext(context.Background(), "SELECT coalesce(name, '(expr)') FROM pragma_index_info(?)", indexes[i].name)
		if err != nil {
			continue
		}
		for r.Next() {
			var c string
			_ = r.Scan(&c)
			indexes[i].cols = append(indexes[i].cols, c)
		}
		r.Close()
	}
	name := func(ix index) string {
		if ix.partial != "" {
			return ix.name + "*"
		}
		return ix.name
	}
	var names []string
	switch {
	case strings.HasPrefix(strings.ToUpper(m[1]), "INSERT"):
		for _, ix := range indexes {
			names = append(names, name(ix))
		}
		return fmt.Sprintf("%s row + %d index entries %v", table, len(names), names)
	case strings.HasPrefix(strings.ToUpper(m[1]), "DELETE"):
		for _, ix := range indexes {
			names = append(names, name(ix))
		}
		return fmt.Sprintf("%s row deleted, with its entries in %v", table, names)
	}
	set := setClause.FindStringSubmatch(q)
	if set != nil {
		cols := map[string]bool{}
		for _, c := range setColumn.FindAllStringSubmatch(set[1], -1) {
			cols[strings.ToLower(c[1])] = true
		}
		for _, ix := range indexes {
			touched := false
			for _, c := range ix.cols {
				touched = touched || cols[strings.ToLower(c)] || c == "(expr)"
			}
			for c := range cols {
				touched = touched || regexp.MustCompile(`(?i)\b`+c+`\b`).MatchString(ix.partial)
			}
			if touched {
				names = append(names, name(ix))
			}
		}
	}
	return fmt.Sprintf("%s row rewritten; entries deleted and reinserted in %v", table, names)
}

// TestPaymentSQLFloorReplay guards the recorder the SQL floor benchmark relies on: a payment's
// recorded statements replayed alone on the database as it was before produce exactly the rows
// the real run stored, table by table, so no statement the writer ran escaped the recording.
func TestPaymentSQLFloorReplay(t *testing.T) {
	for _, tc := range []struct {
		name string
		pay  func(e *benchEnv) func() error
	}{
		{"two requests", twoRequestPayment},
		{"one request", oneRequestPayment},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			e := newBenchEnv(t)
			rec := recordPayments(t, e, 3, 5, tc.pay(e))
			is.True(len(rec.ops) >= 5) // at least one operation per payment
			tables := map[string]bool{}
			for _, op := range rec.ops {
				for _, s := range op {
					if m := writeStatement.FindStringSubmatch(strings.TrimSpace(s.sql)); m != nil && strings.HasPrefix(strings.ToUpper(m[1]), "INSERT") {
						tables[m[2]] = true
					}
				}
			}
			for _, want := range []string{"payment_intents", "charges", "events", "request_logs"} {
				is.True(tables[want]) // the recording inserts into every table a payment writes
			}
			f, err := openFloorDB(rec, t.TempDir())
			is.NoErr(err)
			defer f.close()
			before := rowCounts(t, f.conn)
			is.True(before["payment_intents"] < rec.rowsAfter["payment_intents"]) // the copy is from before the payments
			_, err = replay(f, rec, replayOptions{batch: 17, savepoints: true})
			is.NoErr(err)
			is.Equal(rowCounts(t, f.conn), rec.rowsAfter) // the replay stored what the real run stored
		})
	}
}

// twoRequestPayment is BenchmarkPayment's payment: create, then confirm with a test card.
func twoRequestPayment(e *benchEnv) func() error {
	var n atomic.Int64
	confirm := []byte(`{"payment_method_type":"credit_card","card":{"number":"4242424242424242","exp_month":12,"exp_year":2030,"cvc":"123"}}`)
	return func() error {
		body := fmt.Appendf(nil, `{"amount":%d,"currency":"brl","payment_method_types":["credit_card"]}`, 1000+n.Add(1)%100_000)
		code, out := e.do("POST", "/v1/payment-intents", body)
		if code != 200 {
			return fmt.Errorf("create: %d %s", code, out)
		}
		id := jsonID(out)
		code, out = e.do("POST", "/v1/payment-intents/"+id+"/confirm", confirm)
		if code != 200 {
			return fmt.Errorf("confirm: %d %s", code, out)
		}
		return nil
	}
}

// oneRequestPayment is BenchmarkPaymentOneRequest's: create with confirm: true.
func oneRequestPayment(e *benchEnv) func() error {
	var n atomic.Int64
	return func() error {
		body := fmt.Appendf(nil, `{"amount":%d,"currency":"brl","payment_method_types":["credit_card"],"confirm":true,`+
			`"card":{"number":"4242424242424242","exp_month":12,"exp_year":2030,"cvc":"123"}}`, 1000+n.Add(1)%100_000)
		code, out := e.do("POST", "/v1/payment-intents", body)
		if code != 200 || !strings.Contains(out, `"status":"succeeded"`) {
			return fmt.Errorf("create with confirm: %d %s", code, out)
		}
		return nil
	}
}

// do runs one request through the handler stack and returns its status and body.
func (e *benchEnv) do(method, path string, body []byte) (int, string) {
	w := httptest.NewRecorder()
	e.s.ServeHTTP(w, e.request(method, path, body))
	return w.Code, w.Body.String()
}

// jsonID returns the "id" of a JSON object.
func jsonID(body string) string {
	var v struct{ ID string }
	_ = json.Unmarshal([]byte(body), &v)
	return v.ID
}
