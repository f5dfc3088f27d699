package db

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"troco/db/dbtest"

	"github.com/matryer/is"

	"troco/server/clock"
	"troco/server/domain"
)

// TestDeleteInBatches: a backlog larger than one batch is removed entirely, batch after batch
// (each its own commit), and rows still inside the retention period are kept.
func TestDeleteInBatches(t *testing.T) {
	is := is.New(t)
	clk := clock.NewOffset(clock.Real{}, -48*time.Hour)
	d := openTest(t, Options{Clock: clk})
	store := func(prefix string, n int) {
		err := d.Write(context.Background(), func(tx *Tx) error {
			for i := range n {
				if err := tx.StoreIdempotentResponse("org_1", false, fmt.Sprintf("%s-%d", prefix, i), 0, IdempotentResponse{Fingerprint: "f", Status: 200, Body: []byte("{}")}); err != nil {
					return err
				}
			}
			return nil
		})
		is.NoErr(err)
	}
	store("old", 4500) // two days ago
	clk.Advance(48 * time.Hour)
	store("new", 30) // now
	batches := d.WriterStats().Batches
	cutoff := time.Now().Add(-24 * time.Hour).Unix()
	n, err := d.DeleteInBatches(context.Background(), 2000, func(tx *Tx, limit int) (int64, error) {
		return tx.DeleteExpiredIdempotencyKeys(cutoff, limit)
	})
	is.NoErr(err)
	is.Equal(n, int64(4500))                            // every expired key
	is.Equal(d.WriterStats().Batches-batches, int64(3)) // 2,000 + 2,000 + 500: three commits
	var left int
	err = d.Read(context.Background(), func(tx *Tx) error {
		return tx.q.QueryRow("SELECT COUNT(*) FROM idempotency_keys").Scan(&left)
	})
	is.NoErr(err)
	is.Equal(left, 30) // the keys of the last day stay
	r, err := findKey(d, "new-7")
	is.NoErr(err)
	is.Equal(r.Status, 200)
}

func findKey(d *DB, key string) (*IdempotentResponse, error) {
	var r *IdempotentResponse
	err := d.Read(context.Background(), func(tx *Tx) error {
		var err error
		r, err = tx.FindIdempotentResponse("org_1", false, key, 0)
		return err
	})
	return r, err
}

// TestPackJSON: documents round-trip packed or plain, small ones stay plain, plain rows written
// before packing read as they were, and a text that happens to start with the format byte is
// still read back exactly.
func TestPackJSON(t *testing.T) {
	is := is.New(t)
	doc := []byte(`{"id":"pi_VcE60zMYauCNh2KIKbFunfww","object":"payment_intent","amount":19901,"currency":"brl","status":"succeeded","metadata":{"order_id":"1"},"description":"Pedido 1","livemode":false}`)
	packed := packJSON(doc)
	is.Equal(packed[0], byte(packV1))
	t.Logf("%d bytes packed to %d", len(doc), len(packed))
	is.True(len(packed) < len(doc)*3/4) // the dictionary knows the shape
	got, err := unpackJSON(packed)
	is.NoErr(err)
	is.Equal(string(got), string(doc))
	small := []byte(`{"id":"cus_1"}`)
	is.Equal(string(packJSON(small)), string(small)) // not worth packing
	got, err = unpackJSON(small)
	is.NoErr(err)
	is.Equal(string(got), string(small))
	odd := "\x01not json"
	stored, ok := packText(odd).([]byte)
	is.True(ok) // packed although short
	back, err := unpackText(string(stored))
	is.NoErr(err)
	is.Equal(back, odd)
	_, err = unpackJSON([]byte{packV1, 0xff, 0xff})
	is.True(err != nil) // corrupt data is an error, never garbage
}

// TestStoreIdempotentResponseOneStatement: a new key is stored, a live one is a conflict (the
// first response stays), an expired one is replaced.
func TestStoreIdempotentResponseOneStatement(t *testing.T) {
	is := is.New(t)
	clk := clock.NewOffset(clock.Real{}, 0)
	d := openTest(t, Options{Clock: clk})
	store := func(body string, notBefore int64) error {
		return d.Write(context.Background(), func(tx *Tx) error {
			return tx.StoreIdempotentResponse("org_1", false, "k", notBefore, IdempotentResponse{Fingerprint: body, Status: 200, Body: []byte(body)})
		})
	}
	is.NoErr(store(`{"n":1}`, 0))
	err := store(`{"n":2}`, time.Now().Add(-24*time.Hour).Unix())
	is.True(errors.Is(err, ErrConflict)) // a live key: the concurrent request lost
	r, err := findKey(d, "k")
	is.NoErr(err)
	is.Equal(string(r.Body), `{"n":1}`)
	clk.Advance(25 * time.Hour)
	is.NoErr(store(`{"n":3}`, time.Now().Add(time.Hour).Unix())) // expired: replaced
	r, err = findKey(d, "k")
	is.NoErr(err)
	is.Equal(string(r.Body), `{"n":3}`)
}

// TestEventsPackedAndPlain: events written now are stored packed and found by their object's
// id; an event row written before packing (plain JSON) reads the same way.
func TestEventsPackedAndPlain(t *testing.T) {
	dbtest.SkipOnPostgres(t, "the packed storage of event payloads (PostgreSQL keeps them as plain JSON text)")
	is := is.New(t)
	d := openTest(t, Options{})
	s := domain.Scope{OrgID: "org_1"}
	obj := &domain.Customer{ID: "cus_packed", Object: "customer", Email: strPtrT("ana@example.com"), Metadata: domain.Metadata{"order": "1"},
		Description: strPtrT(strings.Repeat("a long description ", 10))}
	var id string
	err := d.Write(context.Background(), func(tx *Tx) error {
		e := &domain.Event{Type: "customer.created", Data: domain.EventData{Object: obj}}
		if err := tx.InsertEvent(s, e); err != nil {
			return err
		}
		id = e.ID
		_, err := tx.q.Exec(`INSERT INTO events (id, org_id, livemode, type, data, object_id, created_at) VALUES ('evt_old', 'org_1', 0, 'customer.updated', ?, 'cus_packed', 1)`,
			`{"object":{"id":"cus_packed","object":"customer"},"previous_attributes":{"email":null}}`)
		return err
	})
	is.NoErr(err)
	var stored []byte
	err = d.Read(context.Background(), func(tx *Tx) error {
		if err := tx.q.QueryRow("SELECT data FROM events WHERE id = ?", id).Scan(&stored); err != nil {
			return err
		}
		evs, err := tx.ListEventsForObject(s, "cus_packed", 10)
		if err != nil {
			return err
		}
		is.Equal(len(evs), 2)
		is.Equal(evs[0].ID, "evt_old") // plain, as written before packing
		is.Equal(evs[0].Data.PreviousAttributes, map[string]any{"email": nil})
		is.Equal(evs[1].ID, id)
		is.True(strings.Contains(string(evs[1].Data.Object.(json.RawMessage)), `"email":"ana@example.com"`))
		return nil
	})
	is.NoErr(err)
	is.Equal(stored[0], byte(packV1)) // stored packed
}

func strPtrT(s string) *string { return &s }

// TestRequestLogRetentionBySeq: request log retention deletes, oldest first and in batches, every
// entry logged before the cutoff, keeps those inside the period, and finds them through the
// primary key (there is no index on created_at): it stops at the first entry still inside the
// period instead of reading the rest of the log.
func TestRequestLogRetentionBySeq(t *testing.T) {
	is := is.New(t)
	clk := clock.NewOffset(clock.Real{}, -10*24*time.Hour)
	d := openTest(t, Options{Clock: clk})
	s := domain.Scope{OrgID: "org_1"}
	n := 0
	log := func(count int) {
		err := d.Write(context.Background(), func(tx *Tx) error {
			for range count {
				n++
				l := &domain.RequestLog{ID: fmt.Sprintf("req_%d", n), Method: "GET", Path: "/v1/customers", Status: 200, KeyID: "key_1"}
				if err := tx.InsertRequestLogRow(PrepareRequestLog(s, l)); err != nil {
					return err
				}
			}
			return nil
		})
		is.NoErr(err)
	}
	log(4000) // ten days ago
	clk.Advance(2 * 24 * time.Hour)
	log(100) // eight days ago
	clk.Advance(8 * 24 * time.Hour)
	log(10) // now
	clk.Advance(-8 * 24 * time.Hour)
	log(1) // the clock stepped back: logged after the new ones, eight days "ago"
	clk.Advance(8 * 24 * time.Hour)
	batches := d.WriterStats().Batches
	cutoff := time.Now().Add(-7 * 24 * time.Hour).Unix()
	deleted, err := d.DeleteInBatches(context.Background(), 2000, func(tx *Tx, limit int) (int64, error) {
		return tx.DeleteRequestLogsBefore(cutoff, limit)
	})
	is.NoErr(err)
	is.Equal(deleted, int64(4100))                      // every entry older than seven days…
	is.Equal(d.WriterStats().Batches-batches, int64(3)) // …in batches: 2,000 + 2,000 + 100
	err = d.Read(context.Background(), func(tx *Tx) error {
		logs, _, err := tx.ListRequestLogs(s, RequestLogFilter{}, ListParams{Limit: 100})
		if err != nil {
			return err
		}
		is.Equal(len(logs), 11) // the ten of today, and the one logged after them
		is.Equal(logs[0].ID, "req_4111")
		is.Equal(logs[10].ID, "req_4101")
		return nil
	})
	is.NoErr(err)
	again, err := d.DeleteInBatches(context.Background(), 2000, func(tx *Tx, limit int) (int64, error) {
		return tx.DeleteRequestLogsBefore(cutoff, limit)
	})
	is.NoErr(err)
	is.Equal(again, int64(0))
	if !dbtest.Postgres() {
		err = d.Read(context.Background(), func(tx *Tx) error {
			var detail string
			var a, b, c int
			if err := tx.q.QueryRow("EXPLAIN QUERY PLAN SELECT seq, created_at FROM request_logs ORDER BY seq LIMIT 2000").Scan(&a, &b, &c, &detail); err != nil {
				return err
			}
			is.Equal(detail, "SCAN request_logs") // the table in rowid order, no sort, no index
			return nil
		})
		is.NoErr(err)
	}
}
