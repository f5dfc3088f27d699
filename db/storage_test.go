package db

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/db/dbtest"
	"troco/server/clock"
	"troco/server/domain"
)

// TestPaymentColumnsPacked: a payment method's card and billing details are stored packed on
// SQLite (plain on PostgreSQL) and read back as they were; a row written before packing (plain
// JSON) reads the same.
func TestPaymentColumnsPacked(t *testing.T) {
	is := is.New(t)
	d := openTest(t, Options{})
	s := domain.Scope{OrgID: "org_1"}
	email := "ana@example.com"
	pm := &domain.PaymentMethod{Type: "credit_card", Card: &domain.PaymentCard{Brand: "visa", Country: "BR", ExpMonth: 12, ExpYear: 2030,
		Fingerprint: "nEJFsgY92n6DhI5I", Funding: "credit", Last4: "4242", Network: "visa"}, BillingDetails: domain.BillingDetails{Email: &email}}
	err := d.Write(context.Background(), func(tx *Tx) error {
		if err := tx.CreatePaymentMethod(s, pm); err != nil {
			return err
		}
		_, err := tx.exec(`INSERT INTO payment_methods (id, org_id, livemode, type, card, billing_details, metadata, created_at, updated_at)
			VALUES ('pm_old', 'org_1', 0, 'credit_card', ?, ?, '{}', 1, 1)`,
			`{"brand":"visa","country":"BR","exp_month":12,"exp_year":2030,"fingerprint":"nEJFsgY92n6DhI5I","funding":"credit","last4":"4242","network":"visa"}`,
			`{"address":null,"email":"ana@example.com","name":null,"phone":null,"document":null,"document_type":null}`)
		return err
	})
	is.NoErr(err)
	var stored []byte
	err = d.Read(context.Background(), func(tx *Tx) error {
		got, err := tx.FindPaymentMethodByID(s, pm.ID)
		if err != nil {
			return err
		}
		old, err := tx.FindPaymentMethodByID(s, "pm_old")
		if err != nil {
			return err
		}
		is.Equal(*got.Card, *pm.Card)
		is.Equal(*got.BillingDetails.Email, email)
		is.Equal(*old.Card, *pm.Card) // a plain row reads the same
		is.Equal(*old.BillingDetails.Email, email)
		return tx.queryRow("SELECT card FROM payment_methods WHERE id = ?", pm.ID).Scan(&stored)
	})
	is.NoErr(err)
	if dbtest.Postgres() {
		is.Equal(stored[0], byte('{')) // plain JSON text on PostgreSQL
	} else {
		is.Equal(stored[0], byte(packV1))
		is.True(len(stored) < 60) // 133 bytes of JSON
	}
}

// TestIdempotentResponseReferencesEvent: a stored response that is exactly the object of an
// event of its transaction is stored as a reference to it and read back byte for byte; one that
// differs is stored whole; an event rolled back is never referenced.
func TestIdempotentResponseReferencesEvent(t *testing.T) {
	is := is.New(t)
	d := openTest(t, Options{})
	s := domain.Scope{OrgID: "org_1"}
	obj := &domain.Customer{ID: "cus_ref", Object: "customer", Email: strPtrT("ana@example.com"), Metadata: domain.Metadata{"order": "1"},
		Description: strPtrT(strings.Repeat("a long description ", 5))}
	body, err := domain.MarshalJSON(obj)
	is.NoErr(err)
	other := []byte(strings.Replace(string(body), "ana@", "bia@", 1))
	err = d.Write(context.Background(), func(tx *Tx) error {
		if err := tx.InsertEvent(s, &domain.Event{Type: "customer.created", Data: domain.EventData{Object: obj}}); err != nil {
			return err
		}
		if err := tx.StoreIdempotentResponse(s.OrgID, false, "same", 0, IdempotentResponse{Fingerprint: "f", Status: 200, Body: body}); err != nil {
			return err
		}
		if err := tx.StoreIdempotentResponse(s.OrgID, false, "other", 0, IdempotentResponse{Fingerprint: "f", Status: 200, Body: other}); err != nil {
			return err
		}
		// An event undone by its savepoint: the response cannot point at it.
		undone := &domain.Customer{ID: "cus_undone", Object: "customer", Metadata: domain.Metadata{}, Description: obj.Description}
		undoneBody, _ := domain.MarshalJSON(undone)
		_ = tx.Savepoint(func() error {
			if err := tx.InsertEvent(s, &domain.Event{Type: "customer.created", Data: domain.EventData{Object: undone}}); err != nil {
				return err
			}
			return errors.New("undo")
		})
		return tx.StoreIdempotentResponse(s.OrgID, false, "undone", 0, IdempotentResponse{Fingerprint: "f", Status: 200, Body: undoneBody})
	})
	is.NoErr(err)
	raw := func(key string) []byte {
		var b []byte
		err := d.Read(context.Background(), func(tx *Tx) error {
			return tx.queryRow("SELECT response_body FROM idempotency_keys WHERE idem_key = ?", key).Scan(&b)
		})
		is.NoErr(err)
		return b
	}
	is.Equal(raw("same")[0], byte(bodyRef)) // a reference…
	is.True(len(raw("same")) < 40)          // …of about 30 bytes
	is.True(raw("other")[0] != bodyRef)     // a different body is stored itself
	is.True(raw("undone")[0] != bodyRef)
	for key, want := range map[string][]byte{"same": body, "other": other} {
		r, err := findKey(d, key)
		is.NoErr(err)
		is.Equal(string(r.Body), string(want)) // byte for byte what was answered
	}
	r, err := findKey(d, "undone")
	is.NoErr(err)
	is.True(strings.Contains(string(r.Body), `"cus_undone"`))
}

// TestObjectIndexesChosen: the queries that list one object's rows (its events, its request log,
// a payment's charges and ledger entries, a key's requests) use the indexes that start with the
// object's id, not the organization's whole (org_id, livemode, seq) index; a charge's ledger
// goes through its intent's index, and the partial indexes (succeeded intents, pending e-mail)
// serve the queries they were made for. None of them scans a table.
func TestObjectIndexesChosen(t *testing.T) {
	dbtest.SkipOnPostgres(t, "SQLite's query planner")
	is := is.New(t)
	d := openTest(t, Options{})
	for q, index := range map[string]string{
		"SELECT id FROM events WHERE org_id = ? AND livemode = ? AND object_id = ? ORDER BY seq DESC LIMIT 11":                   "events_object",
		"SELECT id FROM request_logs WHERE org_id = ? AND livemode = ? AND object_id = ? AND seq < ? ORDER BY seq DESC LIMIT 11": "request_logs_object",
		"SELECT id FROM request_logs WHERE org_id = ? AND livemode = ? AND key_id = ? ORDER BY seq DESC LIMIT 11":                "request_logs_key",
		"SELECT id FROM charges WHERE org_id = ? AND livemode = ? AND payment_intent_id = ? ORDER BY seq DESC LIMIT 11":          "charges_intent",
		"SELECT COUNT(*) FROM charges WHERE org_id = ? AND livemode = ? AND payment_intent_id = ?":                               "charges_intent",
		// A charge's ledger entries: through its intent (ListTransactions adds it).
		"SELECT id FROM ledger_transactions WHERE org_id = ? AND livemode = ? AND payment_intent_id = ? AND charge_id = ? ORDER BY seq DESC LIMIT 11": "ledger_transactions_intent",
		// The dashboard's volume per method: only succeeded intents are in the index.
		"SELECT COALESCE(payment_method_type, ''), COUNT(*), COALESCE(SUM(amount_received), 0) FROM payment_intents WHERE org_id = ? AND livemode = ? AND created_at >= ? AND created_at < ? AND status = 'succeeded' GROUP BY 1 ORDER BY 1": "payment_intents_succeeded",
		// The mailer's due messages: only pending ones are in the index.
		"SELECT id FROM email_outbox WHERE status = 'pending' AND next_attempt_at <= ? AND locked_until <= ? ORDER BY next_attempt_at, seq LIMIT 10": "email_outbox_due",
		"SELECT id FROM ledger_transactions WHERE org_id = ? AND livemode = ? AND payment_intent_id = ? AND seq > ? ORDER BY seq LIMIT 11":           "ledger_transactions_intent",
		"SELECT id FROM payment_intents WHERE org_id = ? AND livemode = ? AND customer_id = ? ORDER BY seq DESC LIMIT 11":                            "payment_intents_customer",
		"SELECT id FROM charges WHERE org_id = ? AND livemode = ? AND customer_id = ? ORDER BY seq DESC LIMIT 11":                                    "charges_customer",
		"SELECT id FROM payment_methods WHERE org_id = ? AND livemode = ? AND customer_id = ? ORDER BY seq DESC LIMIT 11":                            "payment_methods_customer",
	} {
		var plan string
		err := d.Read(context.Background(), func(tx *Tx) error {
			var err error
			if plan, err = queryPlan(tx, q, "x", 0, "y", 1); err != nil {
				plan, err = queryPlan(tx, q, "x", 0, "y")
			}
			return err
		})
		is.NoErr(err)
		if !strings.Contains(plan, " INDEX "+index+" ") || strings.Contains(plan, "SCAN ") {
			t.Errorf("%s\nplan: %s want index %s", q, plan, index)
		}
	}
}

// TestElide: a text that holds the row's id is stored without it and read back exactly; texts
// without the id, with a 0x01 byte of their own, or written before (plain) read as they are.
func TestElide(t *testing.T) {
	is := is.New(t)
	id := "pi_VcElZsSkc8MHycabScGC1zkl"
	for _, s := range []string{
		id + "_secret_8oz26GvAj8exITQZVqHSnBjn",
		"/v1/payment-intents/" + id + "/confirm",
		"https://example.com/receipts/" + id + "?s=gb07nraNZVESDHEKCTgrwx98",
		"/v1/payment-intents", "", "odd \x01 path " + id, id,
	} {
		stored := elide(s, id)
		is.Equal(unelide(stored, id), s)
		if strings.Contains(s, id) && !strings.Contains(s, "\x01") {
			is.Equal(len(stored), len(s)-len(id)+2)
		}
	}
	is.Equal(unelide("/v1/customers", id), "/v1/customers") // a row written before
}

// TestFingerprintStoredBinary: a hex fingerprint is kept as its 32 bytes on SQLite and read back
// as the same hex; any other text is stored as it is.
func TestFingerprintStoredBinary(t *testing.T) {
	is := is.New(t)
	d := openTest(t, Options{})
	fp := "a8d16723930315804e4d95ffcf5e58d04c67dafd690a1cee0dbefa632068acd6"
	for key, f := range map[string]string{"hex": fp, "text": "f", "upper": strings.ToUpper(fp)} {
		err := d.Write(context.Background(), func(tx *Tx) error {
			return tx.StoreIdempotentResponse("org_1", false, key, 0, IdempotentResponse{Fingerprint: f, Status: 200, Body: []byte(`{}`)})
		})
		is.NoErr(err)
		r, err := findKey(d, key)
		is.NoErr(err)
		is.Equal(r.Fingerprint, f)
	}
	var n int
	err := d.Read(context.Background(), func(tx *Tx) error {
		return tx.queryRow("SELECT LENGTH(fingerprint) FROM idempotency_keys WHERE idem_key = 'hex'").Scan(&n)
	})
	is.NoErr(err)
	if !dbtest.Postgres() {
		is.Equal(n, 33)
	}
}

// TestPackSmall: the short documents of payments round-trip, the most common one in two bytes,
// and a text that starts with any stored form's first byte still reads back exactly.
func TestPackSmall(t *testing.T) {
	is := is.New(t)
	for _, doc := range []string{
		knownDocs[0],
		`{"type":"credit_card","credit_card":{"brand":"visa","last4":"4242","installments":1}}`,
		`{}`, `["credit_card"]`, "\x01x", "\x02", "\x03\x00", "\x03\x00 and more than twenty-four bytes",
	} {
		stored := packSmall([]byte(doc))
		back, err := unpackJSON(stored)
		is.NoErr(err)
		is.Equal(string(back), doc)
		text, err := unpackText(string(stored))
		is.NoErr(err)
		is.Equal(text, doc)
		st, ok := packSmallText(doc).(string)
		if !ok {
			st = string(packSmallText(doc).([]byte))
		}
		text, err = unpackText(st)
		is.NoErr(err)
		is.Equal(text, doc)
	}
	is.Equal(len(packSmall([]byte(knownDocs[0]))), 2)
}

// BenchmarkPackSmall is the writer's cost of packing the short JSON columns of one card payment
// (the charge's card details and billing details, the payment method's card, the intent's
// payment data): go test ./db -run '^$' -bench PackSmall -benchmem
func BenchmarkPackSmall(b *testing.B) {
	docs := [][]byte{
		[]byte(`{"type":"credit_card","card":{"amount_authorized":1000,"authorization_code":"842809","brand":"visa","checks":{"address_line1_check":"unchecked","address_postal_code_check":"unchecked","cvc_check":"pass"},"country":"BR","exp_month":12,"exp_year":2030,"fingerprint":"nEJFsgY92n6DhI5I","funding":"credit","installments":1,"last4":"4242","network":"visa"}}`),
		[]byte(knownDocs[0]),
		[]byte(`{"brand":"visa","country":"BR","exp_month":12,"exp_year":2030,"fingerprint":"nEJFsgY92n6DhI5I","funding":"credit","last4":"4242","network":"visa"}`),
		[]byte(knownDocs[0]),
		[]byte(`{"type":"credit_card","credit_card":{"brand":"visa","last4":"4242","installments":1}}`),
	}
	b.ReportAllocs()
	for range b.N {
		for _, d := range docs {
			_ = packSmall(d)
		}
	}
}

// TestLedgerByChargeThroughIntent: a charge's ledger entries (found through its payment intent's
// index, the ledger has none on charge_id) are exactly its own, newest first, whichever other
// charges the intent has; a charge of another organization or none at all lists nothing, and a
// cursor that is not one of the charge's entries is refused as before.
func TestLedgerByChargeThroughIntent(t *testing.T) {
	is := is.New(t)
	d := openTest(t, Options{})
	s, other := domain.Scope{OrgID: "org_1"}, domain.Scope{OrgID: "org_2"}
	var ids = map[string][]string{}
	err := d.Write(context.Background(), func(tx *Tx) error {
		for _, c := range []struct {
			s      domain.Scope
			charge string
			pi     string
			n      int
		}{{s, "ch_a", "pi_1", 2}, {s, "ch_b", "pi_1", 3}, {s, "ch_c", "pi_2", 1}, {other, "ch_x", "pi_x", 1}} {
			ch := &domain.Charge{ID: c.charge, PaymentIntent: c.pi, Status: "succeeded", Currency: "brl",
				PaymentMethodDetails: domain.PaymentMethodDetails{Type: "credit_card"}}
			if err := tx.CreateCharge(c.s, ch); err != nil {
				return err
			}
			for range c.n {
				tr := &domain.Transaction{Type: domain.TxnTypeCharge, PaymentIntent: c.pi, Charge: c.charge, PaymentMethodType: "credit_card",
					Currency: "brl", Amount: 100, NetAmount: 100, Status: domain.TxnPending}
				if err := tx.InsertTransaction(c.s, tr); err != nil {
					return err
				}
				ids[c.charge] = append(ids[c.charge], tr.ID)
			}
		}
		return nil
	})
	is.NoErr(err)
	list := func(charge string, p ListParams) ([]string, error) {
		var out []string
		err := d.Read(context.Background(), func(tx *Tx) error {
			ts, _, err := tx.ListTransactions(s, TransactionFilter{Charge: charge}, p)
			for _, t := range ts {
				out = append(out, t.ID)
			}
			return err
		})
		return out, err
	}
	got, err := list("ch_b", ListParams{Limit: 10})
	is.NoErr(err)
	is.Equal(got, []string{ids["ch_b"][2], ids["ch_b"][1], ids["ch_b"][0]})
	got, err = list("ch_b", ListParams{Limit: 10, StartingAfter: ids["ch_b"][2]})
	is.NoErr(err)
	is.Equal(got, []string{ids["ch_b"][1], ids["ch_b"][0]})
	got, err = list("ch_x", ListParams{Limit: 10}) // another organization's charge
	is.NoErr(err)
	is.Equal(len(got), 0)
	got, err = list("ch_none", ListParams{Limit: 10})
	is.NoErr(err)
	is.Equal(len(got), 0)
	_, err = list("ch_b", ListParams{Limit: 10, StartingAfter: ids["ch_a"][0]}) // same intent, other charge
	var ce *CursorError
	is.True(errors.As(err, &ce))
}

// TestEventObjectIDNotStoredTwice: an event's data is stored without its object's id (the row
// holds it in object_id) on SQLite and read back byte for byte, through every reader (the event,
// the object's events, a stored response pointing at it), whatever field holds the id; rows
// written before read as they were.
func TestEventObjectIDNotStoredTwice(t *testing.T) {
	is := is.New(t)
	d := openTest(t, Options{})
	s := domain.Scope{OrgID: "org_1"}
	cus := &domain.Customer{ID: "cus_VcFU44UD7YnpQHgcADKarkno", Object: "customer", Email: strPtrT("ana@example.com"), Metadata: domain.Metadata{},
		Description: strPtrT(strings.Repeat("a long description ", 5))}
	raw := json.RawMessage(`{"object":"thing","id":"thing_1","note":"the id is not first"}`)
	body, err := domain.MarshalJSON(cus)
	is.NoErr(err)
	events := map[string]*domain.Event{}
	err = d.Write(context.Background(), func(tx *Tx) error {
		for _, e := range []*domain.Event{
			{Type: "customer.created", Data: domain.EventData{Object: cus}},
			{Type: "customer.updated", Data: domain.EventData{Object: cus, PreviousAttributes: map[string]any{"id": "cus_other"}}},
			{Type: "thing.created", Data: domain.EventData{Object: raw}},
		} {
			if err := tx.InsertEvent(s, e); err != nil {
				return err
			}
			events[e.Type] = e
		}
		_, err := tx.exec(`INSERT INTO events (id, org_id, livemode, type, data, object_id, created_at) VALUES ('evt_old', 'org_1', 0, 'customer.created', ?, ?, 1)`,
			`{"object":`+string(body)+`}`, cus.ID)
		if err != nil {
			return err
		}
		return tx.StoreIdempotentResponse(s.OrgID, false, "k", 0, IdempotentResponse{Fingerprint: "f", Status: 200, Body: body})
	})
	is.NoErr(err)
	want := func(e *domain.Event) string {
		b, err := domain.MarshalJSON(e.Data)
		is.NoErr(err)
		return string(b)
	}
	err = d.Read(context.Background(), func(tx *Tx) error {
		for _, e := range events {
			got, err := tx.FindEventByID(s, e.ID)
			is.NoErr(err)
			is.Equal(want(got), want(e)) // read back exactly
			var stored []byte
			is.NoErr(tx.queryRow("SELECT data FROM events WHERE id = ?", e.ID).Scan(&stored))
			plain, err := unpackJSON(stored)
			is.NoErr(err)
			_, isCustomer := e.Data.Object.(*domain.Customer)
			oid := cus.ID
			if !isCustomer {
				oid = "thing_1"
			}
			is.Equal(strings.Contains(string(plain), oid), dbtest.Postgres()) // the id left out on SQLite (it is in object_id)
		}
		old, err := tx.FindEventByID(s, "evt_old")
		is.NoErr(err)
		is.Equal(want(old), `{"object":`+string(body)+`}`)
		list, err := tx.ListEventsForObject(s, cus.ID, 10)
		is.NoErr(err)
		is.Equal(len(list), 3)
		is.Equal(want(list[1]), want(events["customer.updated"]))
		return nil
	})
	is.NoErr(err)
	r, err := findKey(d, "k")
	is.NoErr(err)
	is.Equal(string(r.Body), string(body)) // the stored response points at the event: still exact
}

// TestPaymentIntentListWithoutScopeIndex: with no (org_id, livemode, seq) index, an unfiltered
// list of payment intents (one range of the status index per status, merged) pages exactly as
// the newest-first order of every intent of the scope, forwards, backwards, by page number and
// within a created range, and reads no more than a page per status; a status the list would not
// read is refused when stored.
func TestPaymentIntentListWithoutScopeIndex(t *testing.T) {
	is := is.New(t)
	clk := clock.NewOffset(clock.Real{}, -time.Hour)
	d := openTest(t, Options{Clock: clk})
	s := domain.Scope{OrgID: "org_1"}
	var want []string // newest first
	var created []int64
	err := d.Write(context.Background(), func(tx *Tx) error {
		for i := range 57 {
			if i%10 == 0 {
				clk.Advance(time.Minute)
				tx.Now = clk.Now().UTC().Truncate(time.Second)
			}
			pi := &domain.PaymentIntent{Status: domain.PIStatusRequiresPaymentMethod, Amount: int64(100 + i), Currency: "brl",
				CaptureMethod: "automatic", InterestPayer: "organization", PaymentMethodTypes: []string{"credit_card"}}
			if err := tx.CreatePaymentIntent(domain.Scope{OrgID: []string{"org_1", "org_2"}[i%5/4]}, pi); err != nil {
				return err
			}
			if i%5 == 4 {
				continue // another organization's
			}
			pi.Status = piStatuses[(i*3)%len(piStatuses)]
			if err := tx.UpdatePaymentIntent(s, pi); err != nil {
				return err
			}
			want = append([]string{pi.ID}, want...)
			created = append([]int64{tx.Now.Unix()}, created...)
		}
		pi := &domain.PaymentIntent{Status: "lost", Currency: "brl", PaymentMethodTypes: []string{"credit_card"}}
		is.True(tx.CreatePaymentIntent(s, pi) != nil) // not a stored status
		return nil
	})
	is.NoErr(err)
	list := func(p ListParams) ([]string, bool) {
		var ids []string
		var more bool
		err := d.Read(context.Background(), func(tx *Tx) error {
			pis, m, err := tx.ListPaymentIntents(s, PaymentIntentFilter{}, p)
			for _, pi := range pis {
				ids = append(ids, pi.ID)
			}
			more = m
			return err
		})
		is.NoErr(err)
		return ids, more
	}
	for _, limit := range []int{1, 3, 10, 100} {
		var got []string
		p := ListParams{Limit: limit}
		for {
			ids, more := list(p)
			got = append(got, ids...)
			if !more {
				break
			}
			p.StartingAfter = ids[len(ids)-1]
		}
		is.Equal(got, want) // forwards, page after page
		got = nil
		p = ListParams{Limit: limit, EndingBefore: want[len(want)-1]}
		for {
			ids, more := list(p)
			got = append(ids, got...)
			if !more {
				break
			}
			p.EndingBefore = ids[0]
		}
		is.Equal(got, want[:len(want)-1]) // backwards
		var total int64
		got = nil
		for page := 1; ; page++ {
			ids, more := list(ListParams{Limit: limit, Page: page, Total: &total})
			got = append(got, ids...)
			if !more {
				break
			}
		}
		is.Equal(got, want) // by page number
		is.Equal(total, int64(len(want)))
	}
	from := created[20]
	ids, _ := list(ListParams{Limit: 100, Created: Range{Gte: &from}})
	n := 0
	for n < len(created) && created[n] >= from {
		n++
	}
	is.Equal(ids, want[:n]) // a created range
	if !dbtest.Postgres() {
		err = d.Read(context.Background(), func(tx *Tx) error {
			seqs, args := unionOf("payment_intents", "org_id = ? AND livemode = ?", []any{"org_1", 0}, eq("status", piStatuses), "DESC", 11)
			plan, err := queryPlan(tx, "SELECT id FROM payment_intents WHERE seq IN ("+seqs+") ORDER BY seq DESC LIMIT 11", args...)
			if err != nil {
				return err
			}
			is.True(!strings.Contains(plan, "SCAN payment_intents"))        // no walk over the table…
			is.True(!strings.Contains(plan, "TEMP B-TREE"))                 // …nor a sort of it
			is.True(strings.Contains(plan, "INDEX payment_intents_status")) // one range per status
			return nil
		})
		is.NoErr(err)
	}
}

// TestEmailListByStatusRanges: an unfiltered list of the outbox (one range of the scope's
// (org_id, livemode, status, seq) index per status, merged, instead of the scope's every message
// sorted) pages exactly newest first, with the other filters still applied.
func TestEmailListByStatusRanges(t *testing.T) {
	is := is.New(t)
	d := openTest(t, Options{})
	s := domain.Scope{OrgID: "org_1"}
	var want, receipts []string
	err := d.Write(context.Background(), func(tx *Tx) error {
		for i := range 23 {
			id := fmt.Sprintf("em_%02d", i)
			kind := []string{"receipt", "invoice"}[i%2]
			if _, err := tx.exec(`INSERT INTO email_outbox (id, org_id, livemode, kind, event_id, related_object, status, next_attempt_at, created_at, updated_at)
				VALUES (?, 'org_1', 0, ?, 'evt_1', 'ch_1', ?, 0, 1, 1)`, id, kind, emailStatuses[(i*3)%4]); err != nil {
				return err
			}
			want = append([]string{id}, want...)
			if kind == "receipt" {
				receipts = append([]string{id}, receipts...)
			}
		}
		return nil
	})
	is.NoErr(err)
	all := func(f EmailFilter, limit int) []string {
		var got []string
		p := ListParams{Limit: limit}
		for {
			var ids []string
			var more bool
			err := d.Read(context.Background(), func(tx *Tx) error {
				es, m, err := tx.ListEmails(s, f, p)
				for _, e := range es {
					ids = append(ids, e.ID)
				}
				more = m
				return err
			})
			is.NoErr(err)
			got = append(got, ids...)
			if !more {
				return got
			}
			p.StartingAfter = ids[len(ids)-1]
		}
	}
	for _, limit := range []int{1, 4, 100} {
		is.Equal(all(EmailFilter{}, limit), want)
		is.Equal(all(EmailFilter{Kind: "receipt"}, limit), receipts)
	}
	err = d.Write(context.Background(), func(tx *Tx) error {
		_, err := tx.SettleEmail(EmailClaim{Seq: 1}, "lost", "", "", time.Now())
		return err
	})
	is.True(err != nil) // a status the list would not read is refused
}

// TestEventTypeCodes: every event type troco emits has a code; on SQLite an event's type is
// stored as its two-byte code and read back as its name; filters on an exact type or a prefix
// find coded rows and rows that hold the name (written before codes) alike, newest first, page
// after page, on the list and on the tail; the plan of a filtered page reads one range of
// events_scope_type per form and sorts nothing.
func TestEventTypeCodes(t *testing.T) {
	is := is.New(t)
	seen := map[string]bool{}
	for _, name := range eventTypeCodes {
		is.True(!seen[name]) // each type once
		seen[name] = true
	}
	for _, et := range domain.EventTypes {
		if !seen[et.Type] {
			t.Errorf("event type %s has no code: append it to eventTypeCodes", et.Type)
		}
	}
	d := openTest(t, Options{})
	s := domain.Scope{OrgID: "org_1"}
	want := map[string][]string{} // filter → ids, newest first
	add := func(filter, id string) { want[filter] = append([]string{id}, want[filter]...) }
	err := d.Write(context.Background(), func(tx *Tx) error {
		for i := range 30 {
			typ := []string{"customer.created", "customer.updated", "payment_intent.succeeded", "customer.subscription.created", "charge.succeeded"}[i%5]
			var id string
			if i%3 == 0 { // a row written before codes: the name
				id = fmt.Sprintf("evt_old%02d", i)
				if _, err := tx.exec(`INSERT INTO events (id, org_id, livemode, type, data, object_id, created_at) VALUES (?, 'org_1', 0, ?, '{"object":{"id":"cus_1"}}', 'cus_1', 1)`, id, typ); err != nil {
					return err
				}
			} else {
				e := &domain.Event{Type: typ, Data: domain.EventData{Object: json.RawMessage(`{"id":"cus_1"}`)}}
				if err := tx.InsertEvent(s, e); err != nil {
					return err
				}
				id = e.ID
			}
			add("", id)
			add(typ, id)
			if strings.HasPrefix(typ, "customer.") {
				add("customer.*", id)
			}
		}
		return nil
	})
	is.NoErr(err)
	err = d.Read(context.Background(), func(tx *Tx) error {
		var typ string
		is.NoErr(tx.queryRow("SELECT type FROM events WHERE id = ?", want["customer.updated"][0]).Scan(&typ))
		if dbtest.Postgres() {
			is.Equal(typ, "customer.updated")
		} else {
			is.Equal(len(typ), 2) // the code
		}
		for filter, ids := range want {
			for _, limit := range []int{2, 7, 100} {
				var got []string
				p := ListParams{Limit: limit}
				for {
					es, more, err := tx.ListEvents(s, EventFilter{Type: filter}, p)
					if err != nil {
						return err
					}
					for _, e := range es {
						got = append(got, e.ID)
						is.True(filter == "" || e.Type == filter || strings.HasPrefix(e.Type, "customer.")) // the name, read back
					}
					if !more {
						break
					}
					p.StartingAfter = es[len(es)-1].ID
				}
				is.Equal(got, ids)
			}
			var total int64
			es, _, err := tx.ListEvents(s, EventFilter{Type: filter}, ListParams{Limit: 3, Page: 2, Total: &total})
			is.NoErr(err)
			is.Equal(total, int64(len(ids)))
			is.Equal(es[0].ID, ids[3])
			tail, err := tx.EventsAfter(0, TailFilter{OrgID: "org_1", Type: filter}, 100)
			is.NoErr(err)
			is.Equal(len(tail), len(ids))
			is.Equal(tail[0].Event.ID, ids[len(ids)-1]) // oldest first
		}
		_, _, err := tx.ListEvents(s, EventFilter{Type: "customer.updated"}, ListParams{Limit: 3, StartingAfter: want["customer.created"][0]})
		var ce *CursorError
		is.True(errors.As(err, &ce)) // a cursor of another type is refused, as before
		if !dbtest.Postgres() {
			alts := tx.typeFilter("customer.*")
			seqs, args := unionOf("events", "org_id = ? AND livemode = ?", []any{"org_1", 0}, alts, "DESC", 11)
			plan, err := queryPlan(tx, "SELECT id FROM events WHERE seq IN ("+seqs+") ORDER BY seq DESC LIMIT 11", args...)
			if err != nil {
				return err
			}
			is.True(!strings.Contains(plan, "SCAN events"))
			is.True(strings.Contains(plan, "INDEX events_scope_type"))
			t.Logf("%d alternatives for customer.*:\n%s", len(alts), plan)
		}
		return nil
	})
	is.NoErr(err)
}

// queryPlan is SQLite's EXPLAIN QUERY PLAN of q, one detail line per step.
func queryPlan(tx *Tx, q string, args ...any) (string, error) {
	rows, err := tx.q.Query("EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var plan strings.Builder
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			return "", err
		}
		plan.WriteString(detail + "\n")
	}
	return plan.String(), rows.Err()
}
