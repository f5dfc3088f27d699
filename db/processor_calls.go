package db

import (
	"strings"

	"troco/server/domain"
)

// Processor call states (see schema.sql, migration 110).
const (
	CallReserved = "reserved" // reserved before the processor is called; the answer is unknown
	CallDone     = "done"     // the processor answered; the answer is not applied yet
	CallWaiting  = "waiting"  // a PIX charge the PSP opened, waiting to be paid or to expire
	CallApplied  = "applied"  // the answer is applied to the charge; nothing left to do
)

// ProcessorCall is one call to a live processor: the reservation, the answer, what was applied.
type ProcessorCall struct {
	ID            string
	Scope         domain.Scope
	Kind          string // authorize, start, capture, void, refund
	Method        string // credit_card, pix, boleto
	PaymentIntent string
	Charge        string
	Refund        string
	// Reference is the idempotent reference the processor knows the call by (Cielo
	// MerchantOrderId, API Pix txid, devolução id): the same on every retry.
	Reference string
	Amount    int64
	// Params is JSON the applying side needs (instalments, capture, save), never card data.
	Params string
	State  string
	// Result is the processor's answer as JSON (state done and later).
	Result *string
	// ProcessorID is the processor's own id (Cielo PaymentId, the PIX endToEndId when paid).
	ProcessorID string
	Attempts    int
	NextCheckAt int64
	CreatedAt   int64
}

const processorCallCols = `id, org_id, livemode, kind, method, payment_intent_id, charge_id, refund_id, reference, amount, params, state, result,
processor_id, attempts, next_check_at, created_at`

func scanProcessorCall(s scanner) (*ProcessorCall, error) {
	var c ProcessorCall
	var live int
	var refund, pid *string
	err := s.Scan(&c.ID, &c.Scope.OrgID, &live, &c.Kind, &c.Method, &c.PaymentIntent, &c.Charge, &refund, &c.Reference, &c.Amount, &c.Params,
		&c.State, &c.Result, &pid, &c.Attempts, &c.NextCheckAt, &c.CreatedAt)
	if err != nil {
		return nil, err
	}
	c.Scope.Livemode = live == 1
	if refund != nil {
		c.Refund = *refund
	}
	if pid != nil {
		c.ProcessorID = *pid
	}
	return &c, nil
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// InsertProcessorCall reserves a call. A reference already used is ErrConflict.
func (tx *Tx) InsertProcessorCall(c *ProcessorCall) error {
	if c.ID == "" {
		c.ID = domain.NewID("pcall_")
	}
	if c.Params == "" {
		c.Params = "{}"
	}
	c.CreatedAt = tx.now()
	_, err := tx.exec(`INSERT INTO processor_calls (`+processorCallCols+`, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.Scope.OrgID, boolInt(c.Scope.Livemode), c.Kind, c.Method, c.PaymentIntent, c.Charge, nullable(c.Refund), c.Reference, c.Amount, c.Params,
		c.State, c.Result, nullable(c.ProcessorID), c.Attempts, c.NextCheckAt, c.CreatedAt, c.CreatedAt)
	return translate(err, "insert processor call")
}

// UpdateProcessorCall writes the state, result, processor id, attempts and next check of c.
func (tx *Tx) UpdateProcessorCall(c *ProcessorCall) error {
	res, err := tx.exec(`UPDATE processor_calls SET state = ?, result = ?, processor_id = ?, attempts = ?, next_check_at = ?, refund_id = ?, updated_at = ? WHERE id = ?`,
		c.State, c.Result, nullable(c.ProcessorID), c.Attempts, c.NextCheckAt, nullable(c.Refund), tx.now(), c.ID)
	return affectedOne(res, err, "update processor call")
}

// FindProcessorCall returns the call with an id.
func (tx *Tx) FindProcessorCall(id string) (*ProcessorCall, error) {
	c, err := scanProcessorCall(tx.queryRow("SELECT "+processorCallCols+" FROM processor_calls WHERE id = ?", id))
	return c, translate(err, "find processor call")
}

// FindProcessorCallByReference returns the call a processor reference (txid, MerchantOrderId)
// names, in any scope: the processor's notifications carry only the reference.
func (tx *Tx) FindProcessorCallByReference(ref string) (*ProcessorCall, error) {
	c, err := scanProcessorCall(tx.queryRow("SELECT "+processorCallCols+" FROM processor_calls WHERE reference = ?", ref))
	return c, translate(err, "find processor call")
}

// FindOpenProcessorCall returns the newest call of an intent of one of kinds whose answer is
// not applied yet (reserved or done), or ErrNotFound.
func (tx *Tx) FindOpenProcessorCall(s domain.Scope, paymentIntent string, kinds ...string) (*ProcessorCall, error) {
	args := []any{s.OrgID, boolInt(s.Livemode), paymentIntent}
	marks := make([]string, len(kinds))
	for i, k := range kinds {
		marks[i] = "?"
		args = append(args, k)
	}
	c, err := scanProcessorCall(tx.queryRow("SELECT "+processorCallCols+` FROM processor_calls
		WHERE org_id = ? AND livemode = ? AND payment_intent_id = ? AND state IN ('reserved', 'done') AND kind IN (`+strings.Join(marks, ",")+`)
		ORDER BY seq DESC LIMIT 1`, args...))
	return c, translate(err, "find open processor call")
}

// FindChargeCall returns the newest call of kind on a charge (the authorization or the PIX
// charge that holds the processor's ids), or ErrNotFound.
func (tx *Tx) FindChargeCall(s domain.Scope, charge, kind string) (*ProcessorCall, error) {
	c, err := scanProcessorCall(tx.queryRow("SELECT "+processorCallCols+` FROM processor_calls
		WHERE org_id = ? AND livemode = ? AND charge_id = ? AND kind = ? ORDER BY seq DESC LIMIT 1`, s.OrgID, boolInt(s.Livemode), charge, kind))
	return c, translate(err, "find charge call")
}

// ClaimDueProcessorCalls returns up to limit calls in one of states whose next check is due and
// pushes their next check lease seconds ahead, so another replica's job does not take them
// meanwhile.
func (tx *Tx) ClaimDueProcessorCalls(now int64, lease int64, limit int, states ...string) ([]*ProcessorCall, error) {
	args := []any{now}
	marks := make([]string, len(states))
	for i, st := range states {
		marks[i] = "?"
		args = append(args, st)
	}
	args = append(args, limit)
	rows, err := tx.query("SELECT "+processorCallCols+` FROM processor_calls WHERE next_check_at <= ? AND state IN (`+strings.Join(marks, ",")+`)
		ORDER BY next_check_at, seq LIMIT ?`+tx.claimLock(), args...)
	if err != nil {
		return nil, translate(err, "claim processor calls")
	}
	var out []*ProcessorCall
	for rows.Next() {
		c, err := scanProcessorCall(rows)
		if err != nil {
			rows.Close()
			return nil, translate(err, "claim processor calls")
		}
		out = append(out, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, translate(err, "claim processor calls")
	}
	for _, c := range out {
		c.NextCheckAt = now + lease
		if _, err := tx.exec(`UPDATE processor_calls SET next_check_at = ? WHERE id = ?`, c.NextCheckAt, c.ID); err != nil {
			return nil, translate(err, "claim processor calls")
		}
	}
	return out, nil
}

// SaveCardToken stores the sealed processor token of a saved card.
func (tx *Tx) SaveCardToken(s domain.Scope, paymentMethod, sealed string) error {
	_, err := tx.exec(`INSERT INTO processor_card_tokens (payment_method_id, org_id, livemode, sealed_token, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (payment_method_id) DO UPDATE SET sealed_token = excluded.sealed_token`, paymentMethod, s.OrgID, boolInt(s.Livemode), sealed, tx.now())
	return translate(err, "save card token")
}

// FindCardToken returns the sealed processor token of a saved card, or ErrNotFound.
func (tx *Tx) FindCardToken(s domain.Scope, paymentMethod string) (string, error) {
	var sealed string
	err := tx.queryRow(`SELECT sealed_token FROM processor_card_tokens WHERE payment_method_id = ? AND org_id = ? AND livemode = ?`,
		paymentMethod, s.OrgID, boolInt(s.Livemode)).Scan(&sealed)
	return sealed, translate(err, "find card token")
}

// FindProcessorCallByProcessorID returns the latest call of kind the processor knows by id (a
// Pix Automático recurrence by its idRec).
func (tx *Tx) FindProcessorCallByProcessorID(kind, id string) (*ProcessorCall, error) {
	c, err := scanProcessorCall(tx.queryRow("SELECT "+processorCallCols+" FROM processor_calls WHERE processor_id = ? AND kind = ? ORDER BY seq DESC LIMIT 1", id, kind))
	return c, translate(err, "find processor call by processor id")
}
