package db

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The export format (troco export / troco import): JSON Lines. The first line is the header
// {"format":"troco-export/1","engine":…,"schema_version":N}; then, for each table in creation
// order, a line {"table":name,"columns":[…]} followed by one {"row":[…]} line per row. Values
// are JSON strings, integers and nulls; bytes are {"b64":"…"}. It moves a database between
// engines (a SQLite sandbox to PostgreSQL) with every table, every row and every seq cursor.

const exportFormat = "troco-export/1"

type exportHeader struct {
	Format        string `json:"format"`
	Engine        string `json:"engine"`
	SchemaVersion int    `json:"schema_version"`
}

type exportTable struct {
	Table   string   `json:"table"`
	Columns []string `json:"columns"`
}

type exportRow struct {
	Row []any `json:"row"`
}

type b64 struct {
	B64 string `json:"b64"`
}

// ExportStats counts what an export or import moved.
type ExportStats struct {
	Tables, Rows int
}

// tables lists the application's tables in creation order (parents before the tables whose
// foreign keys name them).
func (d *DB) tables(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) ([]string, error) {
	query := "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
	if d.pg {
		query = `SELECT c.relname FROM pg_class c WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace
			AND c.relname <> 'schema_migrations' ORDER BY c.oid`
	}
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("db: list tables: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// Export writes every table of d to w (a consistent snapshot).
func (d *DB) Export(ctx context.Context, w io.Writer) (ExportStats, error) {
	var st ExportStats
	version, err := d.SchemaVersion(ctx)
	if err != nil {
		return st, err
	}
	opts := &sql.TxOptions{ReadOnly: true}
	if d.pg {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := d.read.BeginTx(ctx, opts)
	if err != nil {
		return st, fmt.Errorf("db: export: %w", err)
	}
	defer tx.Rollback()
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	if err := enc.Encode(exportHeader{Format: exportFormat, Engine: d.Engine(), SchemaVersion: version}); err != nil {
		return st, err
	}
	tables, err := d.tables(ctx, tx)
	if err != nil {
		return st, err
	}
	for _, t := range tables {
		rows, err := tx.QueryContext(ctx, "SELECT * FROM "+t)
		if err != nil {
			return st, fmt.Errorf("db: export %s: %w", t, err)
		}
		cols, err := rows.Columns()
		if err != nil {
			rows.Close()
			return st, err
		}
		if err := enc.Encode(exportTable{Table: t, Columns: cols}); err != nil {
			rows.Close()
			return st, err
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return st, fmt.Errorf("db: export %s: %w", t, err)
			}
			out := make([]any, len(vals))
			for i, v := range vals {
				switch v := v.(type) {
				case []byte:
					out[i] = b64{B64: base64.StdEncoding.EncodeToString(v)}
				default:
					out[i] = v
				}
			}
			if err := enc.Encode(exportRow{Row: out}); err != nil {
				rows.Close()
				return st, err
			}
			st.Rows++
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return st, fmt.Errorf("db: export %s: %w", t, err)
		}
		st.Tables++
	}
	return st, bw.Flush()
}

// ErrNotEmpty is returned by Import when the target database already holds data.
var ErrNotEmpty = errors.New("db: the target database is not empty")

// Import loads an export into d, in one transaction: every row keeps its values (ids and seq
// cursors included) and PostgreSQL's identity sequences continue after the highest seq. The
// target must have the export's schema version and be empty, unless replace is set, in which case
// its rows are deleted first.
func (d *DB) Import(ctx context.Context, r io.Reader, replace bool) (ExportStats, error) {
	var st ExportStats
	dec := json.NewDecoder(bufio.NewReaderSize(r, 1<<16))
	dec.UseNumber()
	var h exportHeader
	if err := dec.Decode(&h); err != nil || h.Format != exportFormat {
		return st, fmt.Errorf("db: import: not a troco export (header %q)", h.Format)
	}
	version, err := d.SchemaVersion(ctx)
	if err != nil {
		return st, err
	}
	if h.SchemaVersion != version {
		return st, fmt.Errorf("db: import: the export has schema version %d, this database %d; export and import with the same troco version", h.SchemaVersion, version)
	}
	// Straight on the writer pool: the group-commit writer is idle (no server runs yet).
	tx, err := d.write.BeginTx(ctx, nil)
	if err != nil {
		return st, fmt.Errorf("db: import: %w", err)
	}
	defer tx.Rollback()
	if d.pg {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", int64(writeLockKey)); err != nil {
			return st, err
		}
	}
	tables, err := d.tables(ctx, tx)
	if err != nil {
		return st, err
	}
	known := map[string]bool{}
	for _, t := range tables {
		known[t] = true
		var n int64
		if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+t).Scan(&n); err != nil {
			return st, fmt.Errorf("db: import: count %s: %w", t, err)
		}
		if n > 0 && !replace {
			return st, fmt.Errorf("%w (table %s has %d rows); import into a new database, or pass --replace to delete its rows first", ErrNotEmpty, t, n)
		}
	}
	if replace {
		if d.pg {
			if _, err := tx.ExecContext(ctx, "TRUNCATE "+strings.Join(tables, ", ")+" RESTART IDENTITY CASCADE"); err != nil {
				return st, fmt.Errorf("db: import: empty the tables: %w", err)
			}
		} else {
			if _, err := tx.ExecContext(ctx, "PRAGMA defer_foreign_keys = ON"); err != nil {
				return st, err
			}
			for i := len(tables) - 1; i >= 0; i-- {
				if _, err := tx.ExecContext(ctx, "DELETE FROM "+tables[i]); err != nil {
					return st, fmt.Errorf("db: import: empty %s: %w", tables[i], err)
				}
			}
		}
	}
	// SQLite stores some JSON packed in text columns (db/pack.go); PostgreSQL's text columns hold
	// plain JSON, so packed values going into one are unpacked (its bytea columns keep them).
	var bytea map[string]bool
	if d.pg {
		if bytea, err = byteaColumns(ctx, tx); err != nil {
			return st, err
		}
	}
	var cur *exportTable
	var batch [][]any
	flush := func() error {
		if cur == nil || len(batch) == 0 {
			return nil
		}
		var b strings.Builder
		b.WriteString("INSERT INTO " + cur.Table + " (" + strings.Join(cur.Columns, ", ") + ") VALUES ")
		args := make([]any, 0, len(batch)*len(cur.Columns))
		n := 0
		for i, row := range batch {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('(')
			for j, v := range row {
				if j > 0 {
					b.WriteString(", ")
				}
				n++
				if d.pg {
					fmt.Fprintf(&b, "$%d", n)
				} else {
					b.WriteByte('?')
				}
				args = append(args, v)
			}
			b.WriteByte(')')
		}
		if _, err := tx.ExecContext(ctx, b.String(), args...); err != nil {
			return fmt.Errorf("db: import %s: %w", cur.Table, err)
		}
		st.Rows += len(batch)
		batch = batch[:0]
		return nil
	}
	for {
		var line struct {
			Table   string            `json:"table"`
			Columns []string          `json:"columns"`
			Row     []json.RawMessage `json:"row"`
		}
		if err := dec.Decode(&line); err == io.EOF {
			break
		} else if err != nil {
			return st, fmt.Errorf("db: import: %w", err)
		}
		if line.Table != "" {
			if err := flush(); err != nil {
				return st, err
			}
			if !known[line.Table] {
				return st, fmt.Errorf("db: import: table %s does not exist in this database", line.Table)
			}
			cur = &exportTable{Table: line.Table, Columns: line.Columns}
			st.Tables++
			continue
		}
		if cur == nil || len(line.Row) != len(cur.Columns) {
			return st, errors.New("db: import: a row outside a table or with the wrong number of values")
		}
		row := make([]any, len(line.Row))
		for i, raw := range line.Row {
			v, err := importValue(raw)
			if err != nil {
				return st, fmt.Errorf("db: import %s: %w", cur.Table, err)
			}
			if b, ok := v.([]byte); ok && d.pg && !bytea[cur.Table+"."+cur.Columns[i]] {
				if v, err = plainText(cur.Table+"."+cur.Columns[i], b); err != nil {
					return st, fmt.Errorf("db: import %s.%s: %w", cur.Table, cur.Columns[i], err)
				}
			}
			row[i] = v
		}
		if d.pg && cur.Table == "events" {
			restoreEventRow(cur.Columns, row)
		}
		batch = append(batch, row)
		if len(batch)*len(cur.Columns) >= 5000 {
			if err := flush(); err != nil {
				return st, err
			}
		}
	}
	if err := flush(); err != nil {
		return st, err
	}
	if d.pg {
		// Identity columns continue after the highest seq imported.
		rows, err := tx.QueryContext(ctx, `SELECT table_name, column_name FROM information_schema.columns
			WHERE table_schema = current_schema() AND is_identity = 'YES'`)
		if err != nil {
			return st, err
		}
		type ident struct{ table, col string }
		var ids []ident
		for rows.Next() {
			var i ident
			if err := rows.Scan(&i.table, &i.col); err != nil {
				rows.Close()
				return st, err
			}
			ids = append(ids, i)
		}
		rows.Close()
		for _, i := range ids {
			q := fmt.Sprintf("SELECT setval(pg_get_serial_sequence('%s', '%s'), COALESCE((SELECT MAX(%s) FROM %s), 0) + 1, false)", i.table, i.col, i.col, i.table)
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return st, fmt.Errorf("db: import: reset the sequence of %s: %w", i.table, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return st, fmt.Errorf("db: import: commit: %w", err)
	}
	// The writer's connection commits without an fsync when the syncer makes them (walsync.go).
	if err := d.WaitDurable(ctx); err != nil {
		return st, fmt.Errorf("db: import: %w", err)
	}
	return st, nil
}

// byteaColumns lists the bytea columns of the current schema as "table.column".
func byteaColumns(ctx context.Context, tx *sql.Tx) (map[string]bool, error) {
	rows, err := tx.QueryContext(ctx, `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND data_type = 'bytea'`)
	if err != nil {
		return nil, fmt.Errorf("db: import: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var t, c string
		if err := rows.Scan(&t, &c); err != nil {
			return nil, err
		}
		out[t+"."+c] = true
	}
	return out, rows.Err()
}

// plainText is the text a SQLite value of column ("table.column") holds, for a PostgreSQL text
// column: a packed document unpacked, a binary idempotency fingerprint in hex, anything else as
// it is.
func plainText(column string, b []byte) (string, error) {
	if column == "idempotency_keys.fingerprint" {
		return readFingerprint(b), nil
	}
	if len(b) > 0 && (b[0] == packV1 || b[0] == packKnown) {
		var err error
		if b, err = unpackJSON(b); err != nil {
			return "", err
		}
	}
	// A text column cannot hold bytes that are not UTF-8 (a request log body written before
	// they were replaced when logged): U+FFFD, as a JSON decoder reads them.
	return strings.ToValidUTF8(string(b), "\uFFFD"), nil
}

// restoreEventRow puts an event's object id back into its data (elideObjectID) and its type's
// name in place of its code when a SQLite dump is imported into PostgreSQL, where event data is
// plain JSON text and types are names.
func restoreEventRow(columns []string, row []any) {
	data, oid := -1, -1
	for i, c := range columns {
		switch c {
		case "data":
			data = i
		case "object_id":
			oid = i
		case "type":
			if t, ok := row[i].(string); ok {
				row[i] = eventTypeName(t)
			}
		}
	}
	if data < 0 || oid < 0 {
		return
	}
	if text, ok := row[data].(string); ok {
		if id, ok := row[oid].(string); ok {
			row[data] = string(restoreObjectID([]byte(text), id))
		}
	}
}

func importValue(raw json.RawMessage) (any, error) {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "null":
		return nil, nil
	case strings.HasPrefix(s, `"`):
		var v string
		err := json.Unmarshal(raw, &v)
		return v, err
	case strings.HasPrefix(s, "{"):
		var v b64
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, err
		}
		return base64.StdEncoding.DecodeString(v.B64)
	case s == "true" || s == "false":
		return int64(boolInt(s == "true")), nil
	default:
		var n json.Number
		if err := json.Unmarshal(raw, &n); err != nil {
			return nil, err
		}
		if i, err := n.Int64(); err == nil {
			return i, nil
		}
		return n.Float64()
	}
}
