package cli

import (
	"context"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"troco/db/dbtest"
)

// TestEventsTailHidesThePostgresPassword: `troco events tail --db postgres://…` says which
// database it follows without printing the URL's password (PostgreSQL only).
func TestEventsTailHidesThePostgresPassword(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("needs " + dbtest.EnvPostgres)
	}
	is := is.New(t)
	u, err := url.Parse(dbtest.Path(t, filepath.Join(t.TempDir(), "troco.db")))
	is.NoErr(err)
	u.User = url.UserPassword(u.User.Username(), "hunter2") // the test cluster trusts every password
	dsn := u.String()
	pgSchema, err := os.ReadFile(filepath.Join("..", "..", "schema_postgres.sql"))
	is.NoErr(err)
	pgEnv := func(args ...string) Env {
		env := testCLIEnv(t, io.Discard, args...)
		env.PostgresSchema = string(pgSchema)
		return env
	}
	is.NoErr(Run(context.Background(), pgEnv("org", "create", "--name", "Acme", "--db", dsn)))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var status syncBuffer
	env := pgEnv("events", "tail", "--db", dsn, "--interval", "20ms")
	env.Stderr = &status
	done := make(chan error, 1)
	go func() { done <- Run(ctx, env) }()
	waitFor(t, func() bool { return strings.Contains(status.String(), "following events") })
	cancel()
	is.NoErr(<-done)
	is.True(!strings.Contains(status.String(), "hunter2")) // the password is not printed
	is.True(strings.Contains(status.String(), u.Host))     // where it follows still is
}
