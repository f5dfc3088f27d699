package db

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"troco/db/dbtest"
	"troco/server/domain"
)

// TestExportImport: a SQLite database exported and imported into a new database (PostgreSQL
// when the tests run on it) has every row, the same cursors, and new rows continue after them;
// a non-empty target is refused unless replace is asked for.
func TestExportImport(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	lite, pg := dbtest.Schemas(t)
	src, err := Open(ctx, filepath.Join(t.TempDir(), "src.db"), Options{Schema: lite})
	is.NoErr(err)
	defer src.Close()
	org := &domain.Organization{Name: "Acme"}
	is.NoErr(src.Write(ctx, func(tx *Tx) error { return tx.CreateOrganization(org, false) }))
	scope := domain.Scope{OrgID: org.ID}
	for i := range 5 {
		is.NoErr(src.Write(ctx, func(tx *Tx) error {
			return tx.InsertEvent(scope, &domain.Event{Type: fmt.Sprintf("t.%d", i), Data: domain.EventData{Object: map[string]any{"id": fmt.Sprint("obj", i)}}})
		}))
	}
	is.NoErr(src.Write(ctx, func(tx *Tx) error { return tx.PutSetting("k", "v") }))
	var dump bytes.Buffer
	st, err := src.Export(ctx, &dump)
	is.NoErr(err)
	is.Equal(st.Rows, 7) // one organization, five events, one setting

	dst := openTest(t, Options{Schema: lite, PostgresSchema: pg})
	got, err := dst.Import(ctx, bytes.NewReader(dump.Bytes()), false)
	is.NoErr(err)
	is.Equal(got.Rows, st.Rows)
	v, ok := setting(t, dst, "k")
	is.True(ok)
	is.Equal(v, "v")
	var events []*domain.Event
	is.NoErr(dst.Read(ctx, func(tx *Tx) error {
		var err error
		events, _, err = tx.ListEvents(scope, EventFilter{}, ListParams{Limit: 10})
		return err
	}))
	is.Equal(len(events), 5)
	is.Equal(events[0].Type, "t.4") // newest first: the seq cursors came along
	// A new row continues after the imported ones.
	is.NoErr(dst.Write(ctx, func(tx *Tx) error {
		return tx.InsertEvent(scope, &domain.Event{Type: "t.new", Data: domain.EventData{Object: map[string]any{}}})
	}))
	is.NoErr(dst.Read(ctx, func(tx *Tx) error {
		var err error
		events, _, err = tx.ListEvents(scope, EventFilter{}, ListParams{Limit: 1})
		return err
	}))
	is.Equal(events[0].Type, "t.new")

	_, err = dst.Import(ctx, bytes.NewReader(dump.Bytes()), false)
	is.True(errors.Is(err, ErrNotEmpty)) // a non-empty target is refused
	got, err = dst.Import(ctx, bytes.NewReader(dump.Bytes()), true)
	is.NoErr(err) // unless replace is asked for
	is.Equal(got.Rows, st.Rows)
}
