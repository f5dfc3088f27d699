package db

import "fmt"

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
	err := tx.queryRow("SELECT fingerprint, response_status, response_body, created_at FROM idempotency_keys WHERE org_id = ? AND livemode = ? AND idem_key = ? AND created_at >= ?",
		orgID, boolInt(livemode), key, notBefore).Scan(&r.Fingerprint, &r.Status, &r.Body, &r.CreatedAt)
	if err != nil {
		return nil, translate(err, "find idempotency key")
	}
	if r.Body, err = unpackJSON(r.Body); err != nil {
		return nil, err
	}
	return &r, nil
}

// StoreIdempotentResponse records the response for key. An expired row for the same key is
// replaced; a live one makes it fail with ErrConflict (a concurrent request won).
func (tx *Tx) StoreIdempotentResponse(orgID string, livemode bool, key string, notBefore int64, r IdempotentResponse) error {
	// One statement: insert, or replace an expired row; a live row is left alone (no change).
	res, err := tx.exec(`INSERT INTO idempotency_keys (org_id, livemode, idem_key, fingerprint, response_status, response_body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (org_id, livemode, idem_key) DO UPDATE SET fingerprint = excluded.fingerprint, response_status = excluded.response_status,
		response_body = excluded.response_body, created_at = excluded.created_at WHERE idempotency_keys.created_at < ?`,
		orgID, boolInt(livemode), key, r.Fingerprint, r.Status, packJSON(r.Body), tx.now(), notBefore)
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
