package db

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
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

// TestExportImportPackedValues: what SQLite stores packed or by reference (an event payload,
// a payment method's card and billing details, an idempotent response and a request log
// response pointing at an event, a binary fingerprint) reads back the same after an export and
// an import into a new database, PostgreSQL included (its text columns get plain JSON).
func TestExportImportPackedValues(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	prev := RedactLogBody
	RedactLogBody = func(b []byte) string { return "redacted:" + string(b) }
	defer func() { RedactLogBody = prev }()
	lite, pg := dbtest.Schemas(t)
	src, err := Open(ctx, filepath.Join(t.TempDir(), "src.db"), Options{Schema: lite})
	is.NoErr(err)
	defer src.Close()
	org := &domain.Organization{Name: "Acme"}
	is.NoErr(src.Write(ctx, func(tx *Tx) error { return tx.CreateOrganization(org, false) }))
	s := domain.Scope{OrgID: org.ID}
	obj := &domain.Customer{ID: "cus_exported", Object: "customer", Email: strPtrT("ana@example.com"), Metadata: domain.Metadata{"order": "1"},
		Description: strPtrT(strings.Repeat("a long description ", 8))}
	body, err := domain.MarshalJSON(obj)
	is.NoErr(err)
	fp := "a8d16723930315804e4d95ffcf5e58d04c67dafd690a1cee0dbefa632068acd6"
	pm := &domain.PaymentMethod{Type: "credit_card", Card: &domain.PaymentCard{Brand: "visa", Country: "BR", ExpMonth: 12, ExpYear: 2030,
		Fingerprint: "nEJFsgY92n6DhI5I", Funding: "credit", Last4: "4242", Network: "visa"}}
	var evID string
	is.NoErr(src.Write(ctx, func(tx *Tx) error {
		e := &domain.Event{Type: "customer.created", Data: domain.EventData{Object: obj}}
		if err := tx.InsertEvent(s, e); err != nil {
			return err
		}
		evID = e.ID
		if err := tx.CreatePaymentMethod(s, pm); err != nil {
			return err
		}
		l := &domain.RequestLog{ID: "req_1", Method: "POST", Path: "/v1/customers/cus_exported", Status: 200, KeyID: "key_1", ObjectID: "cus_exported",
			ResponseBody: "unused", ResponseEvent: e.ID, ResponseLen: len(body)}
		if err := tx.InsertRequestLogRow(PrepareRequestLog(s, l)); err != nil {
			return err
		}
		return tx.StoreIdempotentResponse(s.OrgID, false, "k", 0, IdempotentResponse{Fingerprint: fp, Status: 200, Body: body})
	}))
	var dump bytes.Buffer
	_, err = src.Export(ctx, &dump)
	is.NoErr(err)
	dst := openTest(t, Options{Schema: lite, PostgresSchema: pg})
	_, err = dst.Import(ctx, bytes.NewReader(dump.Bytes()), false)
	is.NoErr(err)
	is.NoErr(dst.Read(ctx, func(tx *Tx) error {
		ev, err := tx.FindEventByID(s, evID)
		is.NoErr(err)
		is.Equal(string(ev.Data.Object.(json.RawMessage)), string(body))
		got, err := tx.FindPaymentMethodByID(s, pm.ID)
		is.NoErr(err)
		is.Equal(*got.Card, *pm.Card)
		is.Equal(got.BillingDetails, domain.BillingDetails{})
		r, err := tx.FindIdempotentResponse(s.OrgID, false, "k", 0)
		is.NoErr(err)
		is.Equal(string(r.Body), string(body))
		is.Equal(r.Fingerprint, fp)
		l, err := tx.FindRequestLog(s, "req_1")
		is.NoErr(err)
		is.Equal(l.ResponseBody, "redacted:"+string(body))
		is.Equal(l.Path, "/v1/customers/cus_exported")
		if dst.pg { // event data is whole JSON text again on PostgreSQL (SQLite leaves the object's id out)
			var data string
			is.NoErr(tx.queryRow("SELECT data FROM events WHERE id = ?", evID).Scan(&data))
			is.Equal(data, `{"object":`+string(body)+`}`)
			var typ string
			is.NoErr(tx.queryRow("SELECT type FROM events WHERE id = ?", evID).Scan(&typ))
			is.Equal(typ, "customer.created") // a name, not SQLite's code
		}
		return nil
	}))
}

// A request log written before bodies were made valid UTF-8 may hold a packed body with bytes
// that are not UTF-8 (a request refused for them): PostgreSQL's text column takes it with
// U+FFFD instead of failing the whole import.
func TestImportInvalidUTF8InPackedText(t *testing.T) {
	is := is.New(t)
	got, err := plainText("request_logs.request_body", packSmall([]byte("{\"metadata\":{\"note\":\"\xff\xfe and more text\"}}")))
	is.NoErr(err)
	is.Equal(got, "{\"metadata\":{\"note\":\"\uFFFD and more text\"}}")

	ctx := context.Background()
	lite, pg := dbtest.Schemas(t)
	src, err := Open(ctx, filepath.Join(t.TempDir(), "src.db"), Options{Schema: lite})
	is.NoErr(err)
	defer src.Close()
	org := &domain.Organization{Name: "Acme"}
	is.NoErr(src.Write(ctx, func(tx *Tx) error { return tx.CreateOrganization(org, false) }))
	s := domain.Scope{OrgID: org.ID}
	is.NoErr(src.Write(ctx, func(tx *Tx) error {
		l := &domain.RequestLog{ID: "req_1", Method: "POST", Path: "/v1/customers", Status: 400, KeyID: "key_1",
			RequestBody: "{\"metadata\":{\"note\":\"\xff\xfe and more text\"}}"}
		return tx.InsertRequestLogRow(PrepareRequestLog(s, l))
	}))
	var dump bytes.Buffer
	_, err = src.Export(ctx, &dump)
	is.NoErr(err)
	dst := openTest(t, Options{Schema: lite, PostgresSchema: pg})
	_, err = dst.Import(ctx, bytes.NewReader(dump.Bytes()), false)
	is.NoErr(err) // PostgreSQL included
	is.NoErr(dst.Read(ctx, func(tx *Tx) error {
		l, err := tx.FindRequestLog(s, "req_1")
		is.NoErr(err)
		is.True(strings.Contains(l.RequestBody, " and more text"))
		return nil
	}))
}
