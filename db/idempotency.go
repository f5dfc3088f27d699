package db

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strconv"
)

// IdempotentResponse is a stored answer to a request that carried an Idempotency-Key.
type IdempotentResponse struct {
	Fingerprint string
	Status      int
	Body        []byte
	CreatedAt   int64
}

// FindIdempotentResponse returns the stored response for key in scope, if any and not older than
// notBefore (Unix seconds).
func (tx *Tx) FindIdempotentResponse(orgID string, livemode bool, key string, notBefore int64) (*IdempotentResponse, error) {
	var r IdempotentResponse
	var fingerprint []byte
	err := tx.queryRow("SELECT fingerprint, response_status, response_body, created_at FROM idempotency_keys WHERE org_id = ? AND livemode = ? AND idem_key = ? AND created_at >= ?",
		orgID, boolInt(livemode), key, notBefore).Scan(&fingerprint, &r.Status, &r.Body, &r.CreatedAt)
	if err != nil {
		return nil, translate(err, "find idempotency key")
	}
	r.Fingerprint = readFingerprint(fingerprint)
	if r.Body, err = tx.idempotentBody(orgID, livemode, r.Body); err != nil {
		return nil, err
	}
	return &r, nil
}

// A request's fingerprint is a hex SHA-256 (64 characters); SQLite stores it as its 32 bytes
// behind a 0x01 byte (no text fingerprint starts with one). PostgreSQL's column is text.
func (tx *Tx) storedFingerprint(f string) any {
	if tx.pg || len(f) != 64 {
		return f
	}
	b, err := hex.DecodeString(f)
	if err != nil || hex.EncodeToString(b) != f { // not lower-case hex: keep it as it is
		return f
	}
	return append([]byte{0x01}, b...)
}

func readFingerprint(stored []byte) string {
	if len(stored) == 33 && stored[0] == 0x01 {
		return hex.EncodeToString(stored[1:])
	}
	return string(stored)
}

// A stored idempotent response is usually the object of the last event its request emitted (a
// created or confirmed payment intent is the object of payment_intent.created or …succeeded).
// It is then stored as a reference to that event (eventRef) and read back as those bytes of the event's data: exactly what was
// answered, since the reference is only written when the bytes are identical. Anything else is
// stored packed (packJSON).
const bodyRef = 0x02

// eventObjectPrefix is how an event's encoded data starts (domain.EventData).
var eventObjectPrefix = []byte(`{"object":`)

// storedBody is the response_body of r: a reference to an event of this transaction whose
// object is exactly body, or body packed.
func (tx *Tx) storedBody(body []byte) []byte {
	for i := len(tx.events) - 1; i >= 0 && i >= len(tx.events)-4; i-- {
		if id := tx.events[i].ID; IsEventObject(tx.eventData[id].data, body) {
			return eventRef(id, len(body))
		}
	}
	return packJSON(body)
}

// idempotentBody is the response a stored response_body holds: resolved from its event,
// unpacked, or as it is.
func (tx *Tx) idempotentBody(orgID string, livemode bool, stored []byte) ([]byte, error) {
	if len(stored) == 0 || stored[0] != bodyRef {
		return unpackJSON(stored)
	}
	return tx.eventObject(orgID, livemode, stored)
}

// eventRef is the stored reference to the first n bytes of an event's object: bodyRef, n in
// decimal, ':', the event id (text, so that it is valid in a text column of any engine).
func eventRef(id string, n int) []byte {
	ref := append(make([]byte, 0, 24+len(id)), bodyRef)
	ref = strconv.AppendInt(ref, int64(n), 10)
	ref = append(ref, ':')
	return append(ref, id...)
}

// eventObject reads what an eventRef points at.
func (tx *Tx) eventObject(orgID string, livemode bool, ref []byte) ([]byte, error) {
	num, id, ok := bytes.Cut(ref[1:], []byte(":"))
	n, err := strconv.ParseUint(string(num), 10, 32)
	if !ok || err != nil {
		return nil, fmt.Errorf("db: stored response: bad event reference")
	}
	var data []byte
	var oid string
	err = tx.queryRow("SELECT data, object_id FROM events WHERE id = ? AND org_id = ? AND livemode = ?", string(id), orgID, boolInt(livemode)).Scan(&data, &oid)
	if err != nil {
		return nil, translate(err, "stored response's event")
	}
	if data, err = unpackJSON(data); err != nil {
		return nil, err
	}
	data = restoreObjectID(data, oid)
	end := uint64(len(eventObjectPrefix)) + n
	if !bytes.HasPrefix(data, eventObjectPrefix) || end > uint64(len(data)) {
		return nil, fmt.Errorf("db: stored response: event %s does not hold it", string(id))
	}
	return data[len(eventObjectPrefix):end], nil
}

// IsEventObject reports whether body is exactly the object of an event whose encoded data is
// data (LastEvent).
func IsEventObject(data, body []byte) bool {
	return len(body) > 64 && len(data) > len(eventObjectPrefix)+len(body) && bytes.HasPrefix(data, eventObjectPrefix) &&
		bytes.Equal(data[len(eventObjectPrefix):len(eventObjectPrefix)+len(body)], body)
}

// LastEvent returns the id and encoded data of the last event this transaction inserted and
// still holds (none: ""), for a caller that answers with its object after the commit.
func (tx *Tx) LastEvent() (id string, data []byte) {
	if len(tx.events) == 0 {
		return "", nil
	}
	id = tx.events[len(tx.events)-1].ID
	return id, tx.eventData[id].data
}

// LastEventObject returns the object of the last event this transaction inserted and still
// holds, and that object's JSON as the event's data holds it (no event: nil, nil). An operation
// whose answer is that object, unchanged since it was emitted, can answer with these bytes
// instead of encoding it again.
func (tx *Tx) LastEventObject() (obj any, body []byte) {
	if len(tx.events) == 0 {
		return nil, nil
	}
	e := tx.events[len(tx.events)-1]
	b := tx.eventData[e.ID]
	return e.Data.Object, b.data[len(eventObjectPrefix) : len(eventObjectPrefix)+b.n]
}

// StoreIdempotentResponse records the response for key. An expired row for the same key is
// replaced; a live one makes it fail with ErrConflict (a concurrent request won).
func (tx *Tx) StoreIdempotentResponse(orgID string, livemode bool, key string, notBefore int64, r IdempotentResponse) error {
	// One statement: insert, or replace an expired row; a live row is left alone (no change).
	res, err := tx.exec(`INSERT INTO idempotency_keys (org_id, livemode, idem_key, fingerprint, response_status, response_body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (org_id, livemode, idem_key) DO UPDATE SET fingerprint = excluded.fingerprint, response_status = excluded.response_status,
		response_body = excluded.response_body, created_at = excluded.created_at WHERE idempotency_keys.created_at < ?`,
		orgID, boolInt(livemode), key, tx.storedFingerprint(r.Fingerprint), r.Status, tx.storedBody(r.Body), tx.now(), notBefore)
	if err != nil {
		return translate(err, "store idempotency key")
	}
	if n, err := res.RowsAffected(); err != nil {
		return translate(err, "store idempotency key")
	} else if n == 0 {
		return fmt.Errorf("db: store idempotency key: %w", ErrConflict)
	}
	return nil
}

// DeleteExpiredIdempotencyKeys removes stored responses created before notBefore, at most limit
// rows per call, and returns how many it removed.
func (tx *Tx) DeleteExpiredIdempotencyKeys(notBefore int64, limit int) (int64, error) {
	q := `DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys WHERE created_at < ? LIMIT ?)`
	if tx.pg {
		q = `DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE created_at < ? LIMIT ?)`
	}
	res, err := tx.exec(q, notBefore, limit)
	if err != nil {
		return 0, translate(err, "delete expired idempotency keys")
	}
	return res.RowsAffected()
}

// AcquireIdempotencySlot takes the in-flight slot of key in scope for owner until expiresAt
// (Unix seconds), unless another owner holds an unexpired one; it reports whether it got it.
func (tx *Tx) AcquireIdempotencySlot(orgID string, livemode bool, key, owner string, expiresAt int64) (bool, error) {
	res, err := tx.exec(`INSERT INTO idempotency_inflight (org_id, livemode, idem_key, owner, expires_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (org_id, livemode, idem_key) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
		WHERE idempotency_inflight.expires_at <= ?`, orgID, boolInt(livemode), key, owner, expiresAt, tx.now())
	if err != nil {
		return false, translate(err, "acquire idempotency slot")
	}
	n, err := res.RowsAffected()
	return n == 1, translate(err, "acquire idempotency slot")
}

// ReleaseIdempotencySlot frees the slot owner holds.
func (tx *Tx) ReleaseIdempotencySlot(orgID string, livemode bool, key, owner string) error {
	_, err := tx.exec("DELETE FROM idempotency_inflight WHERE org_id = ? AND livemode = ? AND idem_key = ? AND owner = ?", orgID, boolInt(livemode), key, owner)
	return translate(err, "release idempotency slot")
}

// DeleteExpiredIdempotencySlots removes the slots of requests that never released them (a
// replica that died mid-request).
func (tx *Tx) DeleteExpiredIdempotencySlots() error {
	_, err := tx.exec("DELETE FROM idempotency_inflight WHERE expires_at < ?", tx.now())
	return translate(err, "delete expired idempotency slots")
}
