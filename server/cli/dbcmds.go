package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"troco/db"
	"troco/server/clock"
)

// openPlain opens a database (applying pending migrations) without reading serve's settings.
func openPlain(ctx context.Context, env Env, path string) (*db.DB, error) {
	return db.Open(ctx, path, db.Options{Schema: env.Schema, PostgresSchema: env.PostgresSchema, Clock: clock.Real{}, Readers: 2})
}

// migrateCmd applies pending migrations and prints the schema version: run once before
// starting several replicas of a new version (serve also migrates at start, under a lock).
func migrateCmd(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "migrate")
	dbPath := fs.str("db", defaultDB, "SQLite file or postgres:// URL")
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := fs.parse(args); err != nil {
		return err
	}
	d, err := openPlain(ctx, env, *dbPath)
	if err != nil {
		return err
	}
	defer d.Close()
	v, err := d.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(env.Stdout, map[string]any{"database": db.Display(*dbPath), "engine": d.Engine(), "schema_version": v})
	}
	fmt.Fprintf(env.Stdout, "%s (%s): schema version %d\n", db.Display(*dbPath), d.Engine(), v)
	return nil
}

// exportCmd writes every table of a database to a file (or stdout).
func exportCmd(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "export")
	dbPath := fs.str("db", defaultDB, "SQLite file or postgres:// URL to export")
	to := fs.String("to", "", "file to write (- for standard output)")
	if _, err := fs.parse(args); err != nil {
		return err
	}
	if *to == "" {
		return errors.New("--to is required (a file, or - for standard output)")
	}
	if *dbPath != ":memory:" && !db.IsPostgres(*dbPath) {
		if _, err := os.Stat(*dbPath); err != nil {
			return fmt.Errorf("no database at %s", *dbPath)
		}
	}
	d, err := openPlain(ctx, env, *dbPath)
	if err != nil {
		return err
	}
	defer d.Close()
	var w io.Writer = env.Stdout
	var f *os.File
	if *to != "-" {
		if f, err = os.OpenFile(*to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err != nil {
			return fmt.Errorf("create %s: %w", *to, err)
		}
		defer f.Close()
		w = f
	}
	st, err := d.Export(ctx, w)
	if err != nil {
		return err
	}
	if f != nil {
		if err := f.Sync(); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "exported %d tables, %d rows from %s to %s\n", st.Tables, st.Rows, db.Display(*dbPath), *to)
	}
	return nil
}

// importCmd loads an export into a database (migrated first): every row, ids and cursors kept.
func importCmd(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "import")
	dbPath := fs.str("db", defaultDB, "SQLite file or postgres:// URL to import into")
	from := fs.String("from", "", "file written by troco export (- for standard input)")
	replace := fs.Bool("replace", false, "delete the rows the target already holds first (otherwise a non-empty target is refused)")
	if _, err := fs.parse(args); err != nil {
		return err
	}
	if *from == "" {
		return errors.New("--from is required (a file written by troco export, or - for standard input)")
	}
	var r io.Reader = os.Stdin
	if *from != "-" {
		f, err := os.Open(*from)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	d, err := openPlain(ctx, env, *dbPath)
	if err != nil {
		return err
	}
	defer d.Close()
	st, err := d.Import(ctx, r, *replace)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "imported %d tables, %d rows into %s\n", st.Tables, st.Rows, db.Display(*dbPath))
	return nil
}
