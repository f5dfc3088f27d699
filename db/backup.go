package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"modernc.org/sqlite"
)

// Backup writes a consistent copy of the database to dst (which must not exist) with SQLite's
// online backup API: the copy is the snapshot of one read transaction, so writes go on meanwhile
// and none is half in it. dst is created mode 0600.
func (d *DB) Backup(ctx context.Context, dst string) error {
	if d.path == ":memory:" {
		return errors.New("db: an in-memory database has nothing to back up")
	}
	return BackupFile(ctx, d.path, dst)
}

// BackupFile is Backup for a database file that another process (serve) may have open: it opens
// its own connection and only reads the source, in one transaction; it never migrates it.
func BackupFile(ctx context.Context, src, dst string) error {
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("db: backup: %w", err)
	}
	conn, err := openRaw(src, false)
	if err != nil {
		return err
	}
	defer conn.Close()
	c, err := conn.Conn(ctx)
	if err != nil {
		return fmt.Errorf("db: backup: open %s: %w", src, err)
	}
	defer c.Close()
	return backupAPI(ctx, c, dst)
}

// backupAPI copies the database to dst page by page with SQLite's online backup API, in one
// step: one read transaction, so the copy is a consistent snapshot while writers go on (WAL).
// Cheaper than VACUUM INTO, which rebuilds every table and index.
func backupAPI(ctx context.Context, c *sql.Conn, dst string) error {
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("db: backup: %w", err)
	}
	f.Close()
	err = c.Raw(func(dc any) error {
		b, ok := dc.(interface {
			NewBackup(string) (*sqlite.Backup, error)
		})
		if !ok {
			return errors.New("the driver has no backup API")
		}
		bk, err := b.NewBackup("file:" + (&url.URL{Path: dst}).EscapedPath())
		if err != nil {
			return err
		}
		if _, err := bk.Step(-1); err != nil {
			bk.Finish()
			return err
		}
		return bk.Finish()
	})
	if err != nil {
		os.Remove(dst)
		return fmt.Errorf("db: backup to %s: %w", dst, err)
	}
	return nil
}

// openRaw opens a database file without migrating it (backup sources, restore candidates).
func openRaw(path string, readOnly bool) (*sql.DB, error) {
	p := []string{"_pragma=busy_timeout(10000)", "_time_format=sqlite"}
	if readOnly {
		p = append(p, "_pragma=query_only(1)")
	}
	conn, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+strings.Join(p, "&"))
	if err != nil {
		return nil, fmt.Errorf("db: open %s: %w", path, err)
	}
	conn.SetMaxOpenConns(1)
	return conn, nil
}

// FileInfo is what CheckFile learns about a database file that is not open.
type FileInfo struct {
	// SchemaVersion is the last migration applied (PRAGMA user_version).
	SchemaVersion int
	// Settings holds the named settings asked for (absent ones are missing).
	Settings map[string]string
	// Payments counts the payment intents (a figure to show after a restore).
	Payments int64
}

// CheckFile runs PRAGMA integrity_check on the database file at path and reads a few facts from
// it; an error says why the file is not a sound troco database.
func CheckFile(ctx context.Context, path string, settings ...string) (*FileInfo, error) {
	conn, err := openRaw(path, true)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return nil, fmt.Errorf("not a readable SQLite database: %w", err)
	}
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			rows.Close()
			return nil, fmt.Errorf("integrity check: %w", err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return nil, fmt.Errorf("not a readable SQLite database: %w", err)
	}
	rows.Close()
	if len(problems) > 0 {
		if len(problems) > 5 {
			problems = append(problems[:5], fmt.Sprintf("and %d more", len(problems)-5))
		}
		return nil, fmt.Errorf("integrity check failed: %s", strings.Join(problems, "; "))
	}
	info := &FileInfo{Settings: map[string]string{}}
	if err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&info.SchemaVersion); err != nil {
		return nil, fmt.Errorf("read schema version: %w", err)
	}
	if info.SchemaVersion == 0 {
		return nil, errors.New("not a troco database (no schema)")
	}
	for _, name := range settings {
		var v string
		err := conn.QueryRowContext(ctx, "SELECT value FROM settings WHERE name = ?", name).Scan(&v)
		if err == nil {
			info.Settings[name] = v
		} else if !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("read settings: %w", err)
		}
	}
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM payment_intents").Scan(&info.Payments); err != nil {
		return nil, fmt.Errorf("count payments: %w", err)
	}
	return info, nil
}

// SchemaVersion is the last migration number in schema (what this binary migrates to).
func SchemaVersion(schema string) (int, error) {
	m, err := parseMigrations(schema)
	if err != nil {
		return 0, err
	}
	return m[len(m)-1].version, nil
}

// Ping checks that the database answers a query on a reader connection.
func (d *DB) Ping(ctx context.Context) error {
	var one int
	return d.read.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}
