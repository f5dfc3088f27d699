package cli

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/db"
	"troco/db/dbtest"
	"troco/server/clock"
	"troco/server/jobs"
)

// TestIdempotencyKeysExpireByJob: serve's expire-idempotency-keys job deletes the stored
// responses older than IdempotencyRetention and keeps the younger ones; nothing else deletes
// them (a lookup only ignores an expired key).
func TestIdempotencyKeysExpireByJob(t *testing.T) {
	is := is.New(t)
	clk := clock.NewOffset(clock.Real{}, -IdempotencyRetention-time.Hour)
	schema, pgSchema := dbtest.Schemas(t)
	store, err := db.Open(context.Background(), dbtest.Path(t, filepath.Join(t.TempDir(), "troco.db")), db.Options{Schema: schema, PostgresSchema: pgSchema, Clock: clk})
	is.NoErr(err)
	defer store.Close()
	put := func(key string) {
		err := store.Write(context.Background(), func(tx *db.Tx) error {
			return tx.StoreIdempotentResponse("org_1", false, key, 0, db.IdempotentResponse{Fingerprint: "f", Status: 200, Body: []byte(`{"id":"` + key + `"}`)})
		})
		is.NoErr(err)
	}
	find := func(key string) error {
		return store.Read(context.Background(), func(tx *db.Tx) error {
			_, err := tx.FindIdempotentResponse("org_1", false, key, 0) // 0: expired rows too
			return err
		})
	}
	put("old") // 25 hours ago
	clk.Advance(IdempotencyRetention)
	put("new") // an hour ago
	clk.Advance(time.Hour)

	runner := jobs.NewRunner(clk, slog.New(slog.NewTextHandler(io.Discard, nil)))
	registerJobs(runner, store)
	is.NoErr(find("old")) // still stored before the job runs
	is.NoErr(runner.RunDue(context.Background()))
	is.True(errors.Is(find("old"), db.ErrNotFound)) // deleted by the job
	is.NoErr(find("new"))                           // inside the 24 hours: kept
}
