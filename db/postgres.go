package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// The PostgreSQL engine. The code of this package writes its SQL once, with `?` placeholders and
// INTEGER 0/1 booleans; on PostgreSQL each query text is rewritten once ($1…$n, cached) and bool
// arguments become integers. Writes keep SQLite's shape: one writer per process batching requests
// into one transaction (a savepoint each), and every write transaction first takes one
// transaction-scoped advisory lock, so the writers of all the replicas on a database run one
// at a time exactly like SQLite's single writer (every read-modify-write stays correct with no
// retries). Reads run on REPEATABLE READ READ ONLY snapshots.

// writeLockKey is the pg_advisory_xact_lock every write transaction takes; migrateLockKey is the
// session lock held while migrating (two replicas starting at once: one migrates, one waits).
const (
	writeLockKey   = 7_463_100_001
	migrateLockKey = 7_463_100_002
)

// IsPostgres reports whether a --db value names a PostgreSQL database (a postgres:// or
// postgresql:// URL); anything else is a SQLite file path or ":memory:".
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Engine names the database engine of d: "sqlite" or "postgres".
func (d *DB) Engine() string {
	if d.pg {
		return "postgres"
	}
	return "sqlite"
}

// Postgres reports whether tx runs on PostgreSQL (for the few queries whose SQL differs).
func (tx *Tx) Postgres() bool { return tx.pg }

func openPostgres(ctx context.Context, dsn string, opts Options) (*DB, error) {
	if opts.PostgresSchema == "" {
		return nil, errors.New("db: no PostgreSQL schema given (schema_postgres.sql)")
	}
	pool, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("db: %s", describePgError(err))
	}
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := pool.PingContext(pctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("db: cannot connect to PostgreSQL at %s: %s", redactDSN(dsn), describePgError(err))
	}
	if err := migratePostgres(ctx, pool, opts.PostgresSchema); err != nil {
		pool.Close()
		return nil, err
	}
	// The writer: one transaction at a time in this process (a second connection lets the
	// advisory lock wait of one batch overlap nothing else; keep it at one like SQLite).
	pool.SetMaxOpenConns(1)
	pool.SetMaxIdleConns(1)
	pool.SetConnMaxIdleTime(5 * time.Minute)
	r, err := sql.Open("pgx", dsn)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("db: %s", describePgError(err))
	}
	r.SetMaxOpenConns(opts.Readers)
	r.SetMaxIdleConns(opts.Readers)
	r.SetConnMaxIdleTime(5 * time.Minute)
	d := &DB{path: dsn, pg: true, write: pool, read: r, clock: opts.Clock, queue: make(chan *writeReq, 4096), done: make(chan struct{}),
		onEvent: opts.OnEvent, onWriteWait: opts.OnWriteWait}
	go d.writer()
	return d, nil
}

// redactDSN drops the password of a connection URL for messages.
func redactDSN(dsn string) string {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return "the given URL"
	}
	return net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))) + "/" + cfg.Database
}

// describePgError turns a connection failure into one line without the URL's password.
func describePgError(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Message + " (SQLSTATE " + pe.Code + ")"
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		// pgx joins the attempts of each address and TLS mode with newlines: the first says it.
		msg, _, _ := strings.Cut(ce.Unwrap().Error(), "\n")
		return msg
	}
	var pce *pgconn.ParseConfigError
	if errors.As(err, &pce) {
		return "invalid PostgreSQL URL"
	}
	return err.Error()
}

// schemaMigrations records the applied migrations on PostgreSQL (SQLite uses PRAGMA user_version).
const schemaMigrations = `CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`

// migratePostgres applies the migrations of schema newer than the recorded version, each in its
// own transaction, under a session advisory lock: a second process starting at the same time
// waits for the first and then finds nothing to do.
func migratePostgres(ctx context.Context, pool *sql.DB, schema string) error {
	migrations, err := parseMigrations(schema)
	if err != nil {
		return err
	}
	conn, err := pool.Conn(ctx)
	if err != nil {
		return fmt.Errorf("db: migrate: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", int64(migrateLockKey)); err != nil {
		return fmt.Errorf("db: migrate: lock: %w", err)
	}
	defer conn.ExecContext(context.Background(), "SELECT pg_advisory_unlock($1)", int64(migrateLockKey))
	if _, err := conn.ExecContext(ctx, schemaMigrations); err != nil {
		return fmt.Errorf("db: migrate: %w", err)
	}
	current, err := pgVersion(ctx, conn)
	if err != nil {
		return err
	}
	if current > migrations[len(migrations)-1].version {
		return fmt.Errorf("db: database schema version %d is newer than this binary's %d", current, migrations[len(migrations)-1].version)
	}
	for _, m := range migrations {
		if m.version <= current {
			continue
		}
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("db: migrate %d: %w", m.version, err)
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			tx.Rollback()
			return fmt.Errorf("db: migrate %d: %w", m.version, err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version) VALUES ($1)", int64(m.version)); err != nil {
			tx.Rollback()
			return fmt.Errorf("db: migrate %d: %w", m.version, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("db: migrate %d: %w", m.version, err)
		}
	}
	return nil
}

type execQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func pgVersion(ctx context.Context, q execQuerier) (int, error) {
	var v sql.NullInt64
	if err := q.QueryRowContext(ctx, "SELECT MAX(version) FROM schema_migrations").Scan(&v); err != nil {
		return 0, fmt.Errorf("db: read schema version: %w", err)
	}
	return int(v.Int64), nil
}

// SchemaVersion returns the last migration applied to the database.
func (d *DB) SchemaVersion(ctx context.Context) (int, error) {
	if d.pg {
		return pgVersion(ctx, d.read)
	}
	var v int
	err := d.read.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, err
}

// rebindCache holds the PostgreSQL form of each query text ($n placeholders).
var rebindCache sync.Map

const maxRebindCached = 8192

var rebindCount struct {
	sync.Mutex
	n int
}

// rebind rewrites the `?` placeholders of q as $1…$n, skipping string literals, quoted
// identifiers and comments.
func rebind(q string) string {
	if v, ok := rebindCache.Load(q); ok {
		return v.(string)
	}
	out := rebindText(q)
	rebindCount.Lock()
	if rebindCount.n < maxRebindCached {
		rebindCount.n++
		rebindCache.Store(q, out)
	}
	rebindCount.Unlock()
	return out
}

func rebindText(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(q) {
				if q[j] == c {
					if j+1 < len(q) && q[j+1] == c { // doubled quote inside the literal
						j += 2
						continue
					}
					break
				}
				j++
			}
			if j >= len(q) {
				j = len(q) - 1
			}
			b.WriteString(q[i : j+1])
			i = j
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				j = len(q) - i - 1
			}
			b.WriteString(q[i : i+j+1])
			i += j
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// pgArgs converts the arguments the code passes for SQLite into what PostgreSQL's columns take:
// booleans are stored as 0/1 integers in both engines.
func pgArgs(args []any) []any {
	var out []any
	for i, a := range args {
		var conv any
		switch v := a.(type) {
		case bool:
			conv = int64(boolInt(v))
		case *bool:
			if v != nil {
				conv = int64(boolInt(*v))
			}
		default:
			continue
		}
		if conv == nil {
			continue
		}
		if out == nil {
			out = append([]any(nil), args...)
		}
		out[i] = conv
	}
	if out == nil {
		return args
	}
	return out
}

// isWriteStatement reports whether q changes rows (and so may fail on a constraint the caller
// handles, which on PostgreSQL must not abort the surrounding transaction).
func isWriteStatement(q string) bool {
	q = strings.TrimLeft(q, " \t\n")
	if len(q) < 6 {
		return false
	}
	switch strings.ToUpper(q[:6]) {
	case "INSERT", "UPDATE", "DELETE":
		return true
	}
	return false
}

// pgConflict reports whether err is PostgreSQL's unique_violation.
func pgConflict(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// IsUnavailable reports whether err means the database could not be reached or the connection
// broke (PostgreSQL restarting, a network failure): the request may be retried.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrClosed) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// 08: connection exception; 57P01-57P03: admin shutdown, crash shutdown, cannot connect now.
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "driver: bad connection") || strings.Contains(msg, "conn closed") ||
		strings.Contains(msg, "unexpected EOF") || strings.Contains(msg, "connection reset")
}

// pgExec runs a statement on PostgreSQL. A write inside a transaction runs in a savepoint of its
// own: PostgreSQL aborts the whole transaction after a failed statement, and the code handles
// some failures (a UNIQUE conflict becomes ErrConflict) and carries on, as it does on SQLite.
func (tx *Tx) pgExec(query string, args []any) (sql.Result, error) {
	q, a := rebind(query), pgArgs(args)
	sqlTx, inTx := tx.q.(*sql.Tx)
	if !inTx || !tx.writable || !isWriteStatement(query) {
		return tx.q.Exec(q, a...)
	}
	if _, err := sqlTx.Exec("SAVEPOINT s"); err != nil {
		return nil, err
	}
	res, err := sqlTx.Exec(q, a...)
	if err != nil {
		if _, rbErr := sqlTx.Exec("ROLLBACK TO SAVEPOINT s"); rbErr != nil {
			return nil, errors.Join(err, rbErr)
		}
	}
	if _, relErr := sqlTx.Exec("RELEASE SAVEPOINT s"); relErr != nil && err == nil {
		return nil, relErr
	}
	return res, err
}

// claimLock is appended to the SELECT of a job's claim: on PostgreSQL, inside a write
// transaction, the rows are locked and rows another transaction holds are skipped
// (FOR UPDATE SKIP LOCKED). The writers' advisory lock already serializes claims; this keeps a
// claim correct on its own. SQLite's single writer needs nothing.
func (tx *Tx) claimLock() string {
	if tx.pg && tx.writable {
		return " FOR UPDATE SKIP LOCKED"
	}
	return ""
}

// Display is how messages name a --db value: a SQLite path as is, a PostgreSQL URL without
// its password (in the user information or a password/sslpassword query parameter).
func Display(path string) string {
	if !IsPostgres(path) {
		return path
	}
	u, err := url.Parse(path)
	if err != nil {
		return "postgres://…"
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	if q := u.Query(); q.Has("password") || q.Has("sslpassword") {
		for _, k := range []string{"password", "sslpassword"} {
			if q.Has(k) {
				q.Set(k, "xxxxx")
			}
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// textDoc is what a TEXT column that holds a JSON document receives: the packed form on SQLite
// (a TEXT column there takes bytes), the plain document on PostgreSQL, whose TEXT holds only
// valid UTF-8 (and whose JSON operators read it).
func (tx *Tx) textDoc(packed any, plain string) any {
	if tx.pg {
		return plain
	}
	return packed
}
