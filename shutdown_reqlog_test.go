package main

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"troco/server/domain"
)

// TestShutdownWritesTheLastRequestLogLines: a request answered just before a graceful shutdown
// is in the request log after it (the log is written in batches in the background; the shutdown
// waits for the last batch before it closes the database).
func TestShutdownWritesTheLastRequestLogLines(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "troco.db")
	sandbox := domain.NewToken(false)
	addr := freeAddr(t)
	in := startServe(t, addr, envFrom(nil), "--addr", addr, "--db", dbPath, "--data-dir", filepath.Join(dir, "data"), "--sandbox-key", sandbox)
	for range 3 {
		is.Equal(in.do("POST", "/v1/customers", sandbox, map[string]any{"email": "teste@example.com"}).status, 200)
	}
	is.NoErr(in.stop()) // at once: the last lines are still queued

	conn, err := sql.Open("sqlite", dbPath)
	is.NoErr(err)
	defer conn.Close()
	var n int
	is.NoErr(conn.QueryRow("SELECT COUNT(*) FROM request_logs WHERE method = 'POST' AND status = 200").Scan(&n))
	is.Equal(n, 3) // every answered request is logged
}
