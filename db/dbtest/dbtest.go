// Package dbtest chooses the database engine of the tests: SQLite in the test's temp dir by
// default, or a fresh PostgreSQL schema of the database named by TROCO_TEST_POSTGRES (a
// postgres:// URL), dropped when the test ends. It is imported by tests only.
package dbtest

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// EnvPostgres names the environment variable holding the PostgreSQL URL tests run on.
const EnvPostgres = "TROCO_TEST_POSTGRES"

// Postgres reports whether the tests run on PostgreSQL.
func Postgres() bool { return os.Getenv(EnvPostgres) != "" }

// SkipOnPostgres skips a test that is about SQLite itself (its file, its backup API).
func SkipOnPostgres(t testing.TB, why string) {
	t.Helper()
	if Postgres() {
		t.Skip("SQLite only: " + why)
	}
}

// Path returns the database a test opens: sqlitePath unchanged on SQLite, or on PostgreSQL the
// URL of a new empty schema (search_path) that is dropped at the end of the test.
func Path(t testing.TB, sqlitePath string) string {
	t.Helper()
	base := os.Getenv(EnvPostgres)
	if base == "" {
		return sqlitePath
	}
	admin := adminPool(t, base)
	var b [6]byte
	rand.Read(b[:])
	name := "t_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec("CREATE SCHEMA " + name); err != nil {
		t.Fatalf("dbtest: create schema: %v", err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec("DROP SCHEMA " + name + " CASCADE"); err != nil {
			t.Logf("dbtest: drop schema %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("dbtest: %s: %v", EnvPostgres, err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

var (
	adminMu sync.Mutex
	admins  = map[string]*sql.DB{}
)

func adminPool(t testing.TB, dsn string) *sql.DB {
	adminMu.Lock()
	defer adminMu.Unlock()
	if p, ok := admins[dsn]; ok {
		return p
	}
	p, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatalf("dbtest: open %s: %v", EnvPostgres, err)
	}
	p.SetMaxOpenConns(2)
	admins[dsn] = p
	return p
}

// Schemas returns schema.sql and schema_postgres.sql of the repository.
func Schemas(t testing.TB) (sqlite, postgres string) {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("dbtest: go.mod not found above the working directory")
		}
		dir = parent
	}
	a, err := os.ReadFile(filepath.Join(dir, "schema.sql"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "schema_postgres.sql"))
	if err != nil {
		t.Fatal(err)
	}
	return string(a), string(b)
}
