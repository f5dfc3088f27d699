package db

import (
	"time"

	"troco/server/domain"
)

// PixLocation is where a dynamic PIX code's location (…/pix/v2/{txid}) points: the charge it
// pays, whether it is a plain charge (cob) or the PIX of a boleto (cobv), how often it was
// revised (a regenerated boleto) and until when it answers.
type PixLocation struct {
	TxID          string
	Scope         domain.Scope
	PaymentIntent string
	Charge        string
	Kind          string
	Revision      int
	CreatedAt     time.Time
	UpdatedAt     time.Time
	ExpiresAt     time.Time
}

// UpsertPixLocation records the location of txid; a location issued again (a regenerated boleto
// keeps its charge and txid) gets the new expiry and its revision counts up.
func (tx *Tx) UpsertPixLocation(l *PixLocation) error {
	_, err := tx.exec(`INSERT INTO pix_locations (txid, org_id, livemode, payment_intent_id, charge_id, kind, revision, created_at, updated_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?)
		ON CONFLICT (txid) DO UPDATE SET kind = excluded.kind, revision = pix_locations.revision + 1, updated_at = excluded.updated_at,
		expires_at = excluded.expires_at
		WHERE pix_locations.org_id = excluded.org_id AND pix_locations.livemode = excluded.livemode AND pix_locations.charge_id = excluded.charge_id`,
		l.TxID, l.Scope.OrgID, boolInt(l.Scope.Livemode), l.PaymentIntent, l.Charge, l.Kind, tx.now(), tx.now(), l.ExpiresAt.Unix())
	return translate(err, "upsert pix location")
}

// FindPixLocation returns the location of txid in any organization: the public location URL is
// fetched by the payer's bank, without a key. Callers holding a key compare the scope.
func (tx *Tx) FindPixLocation(txid string) (*PixLocation, error) {
	var l PixLocation
	var live int
	var created, updated, expires int64
	err := tx.queryRow(`SELECT txid, org_id, livemode, payment_intent_id, charge_id, kind, revision, created_at, updated_at, expires_at
		FROM pix_locations WHERE txid = ?`, txid).Scan(&l.TxID, &l.Scope.OrgID, &live, &l.PaymentIntent, &l.Charge, &l.Kind, &l.Revision,
		&created, &updated, &expires)
	if err != nil {
		return nil, translate(err, "find pix location")
	}
	l.Scope.Livemode = live == 1
	l.CreatedAt, l.UpdatedAt, l.ExpiresAt = time.Unix(created, 0).UTC(), time.Unix(updated, 0).UTC(), time.Unix(expires, 0).UTC()
	return &l, nil
}
