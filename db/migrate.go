package db

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
)

const migrateMarker = "-- migrate: "

// migration is one numbered step of schema.sql.
type migration struct {
	version int
	sql     string
}

func parseMigrations(schema string) ([]migration, error) {
	var out []migration
	var cur *migration
	for _, line := range strings.SplitAfter(schema, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), strings.TrimSpace(migrateMarker)); ok {
			v, err := strconv.Atoi(strings.TrimSpace(rest))
			if err != nil {
				return nil, fmt.Errorf("db: schema: bad migration marker %q", strings.TrimSpace(line))
			}
			if len(out) > 0 && v <= out[len(out)-1].version || v < 1 {
				return nil, fmt.Errorf("db: schema: migration numbers must be positive and increasing; got %d", v)
			}
			out = append(out, migration{version: v})
			cur = &out[len(out)-1]
			continue
		}
		if cur != nil {
			cur.sql += line
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("db: schema has no migrations")
	}
	return out, nil
}

// migrate applies every migration newer than PRAGMA user_version, each in its own transaction.
func migrate(ctx context.Context, w *sql.DB, schema string) error {
	migrations, err := parseMigrations(schema)
	if err != nil {
		return err
	}
	var current int
	if err := w.QueryRowContext(ctx, "PRAGMA user_version").Scan(&current); err != nil {
		return fmt.Errorf("db: read schema version: %w", err)
	}
	if current > migrations[len(migrations)-1].version {
		return fmt.Errorf("db: database schema version %d is newer than this binary's %d", current, migrations[len(migrations)-1].version)
	}
	for _, m := range migrations {
		if m.version <= current {
			continue
		}
		tx, err := w.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("db: migrate %d: %w", m.version, err)
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			tx.Rollback()
			return fmt.Errorf("db: migrate %d: %w", m.version, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.version)); err != nil {
			tx.Rollback()
			return fmt.Errorf("db: migrate %d: %w", m.version, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("db: migrate %d: %w", m.version, err)
		}
	}
	return nil
}
