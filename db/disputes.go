package db

import (
	"encoding/json"
	"fmt"
	"strings"

	"troco/server/domain"
)

const disputeCols = "id, livemode, doc, created_at, updated_at"

func scanDispute(s scanner) (*domain.Dispute, error) {
	var d domain.Dispute
	var live int
	var doc string
	var created, updated int64
	if err := s.Scan(&d.ID, &live, &doc, &created, &updated); err != nil {
		return nil, err
	}
	var st disputeDoc
	if err := json.Unmarshal([]byte(doc), &st); err != nil {
		return nil, fmt.Errorf("db: decode dispute: %w", err)
	}
	st.Dispute.FundsWithdrawn = st.FundsWithdrawn
	d2 := st.Dispute
	d2.ID, d2.Object, d2.Livemode = d.ID, "dispute", live == 1
	d2.CreatedAt, d2.UpdatedAt = domain.Unix(created), domain.Unix(updated)
	if d2.Metadata == nil {
		d2.Metadata = domain.Metadata{}
	}
	if d2.BalanceTransactions == nil {
		d2.BalanceTransactions = []string{}
	}
	return &d2, nil
}

// disputeDoc is the stored document: the public object plus what the API does not show.
type disputeDoc struct {
	domain.Dispute
	FundsWithdrawn bool `json:"funds_withdrawn"`
}

func disputeJSON(d *domain.Dispute) (string, error) {
	b, err := json.Marshal(disputeDoc{Dispute: *d, FundsWithdrawn: d.FundsWithdrawn})
	if err != nil {
		return "", fmt.Errorf("db: encode dispute: %w", err)
	}
	return string(b), nil
}

// CreateDispute inserts d in scope, assigning id and timestamps.
func (tx *Tx) CreateDispute(s domain.Scope, d *domain.Dispute) error {
	d.ID = domain.NewID(domain.PrefixDispute)
	d.Object = "dispute"
	d.Livemode = s.Livemode
	d.CreatedAt, d.UpdatedAt = domain.At(tx.Now), domain.At(tx.Now)
	doc, err := disputeJSON(d)
	if err != nil {
		return err
	}
	_, err = tx.exec(`INSERT INTO disputes (id, org_id, livemode, charge_id, payment_intent_id, status, doc, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, d.ID, s.OrgID, boolInt(s.Livemode), d.Charge, d.PaymentIntent, d.Status, doc, tx.now(), tx.now())
	return translate(err, "create dispute")
}

// FindDisputeByID returns a dispute in scope.
func (tx *Tx) FindDisputeByID(s domain.Scope, id string) (*domain.Dispute, error) {
	d, err := scanDispute(tx.queryRow("SELECT "+disputeCols+" FROM disputes WHERE id = ? AND org_id = ? AND livemode = ?", id, s.OrgID, boolInt(s.Livemode)))
	return d, translate(err, "find dispute")
}

// LatestDisputeOfCharge returns the newest dispute of a charge (ErrNotFound when none).
func (tx *Tx) LatestDisputeOfCharge(s domain.Scope, chargeID string) (*domain.Dispute, error) {
	d, err := scanDispute(tx.queryRow("SELECT "+disputeCols+" FROM disputes WHERE charge_id = ? AND org_id = ? AND livemode = ? ORDER BY seq DESC LIMIT 1",
		chargeID, s.OrgID, boolInt(s.Livemode)))
	return d, translate(err, "find dispute")
}

// UpdateDispute writes d and bumps updated_at.
func (tx *Tx) UpdateDispute(s domain.Scope, d *domain.Dispute) error {
	d.UpdatedAt = domain.At(tx.Now)
	doc, err := disputeJSON(d)
	if err != nil {
		return err
	}
	res, err := tx.exec("UPDATE disputes SET status = ?, doc = ?, updated_at = ? WHERE id = ? AND org_id = ? AND livemode = ?",
		d.Status, doc, tx.now(), d.ID, s.OrgID, boolInt(s.Livemode))
	return affectedOne(res, err, "update dispute")
}

// DisputeFilter narrows ListDisputes.
type DisputeFilter struct {
	Charge, PaymentIntent, Status string
}

// ListDisputes pages the disputes of a scope, newest first.
func (tx *Tx) ListDisputes(s domain.Scope, f DisputeFilter, p ListParams) ([]*domain.Dispute, bool, error) {
	var w filter
	payScope(&w, s)
	if f.Charge != "" {
		w.add("charge_id = ?", f.Charge)
	}
	if f.PaymentIntent != "" {
		w.add("payment_intent_id = ?", f.PaymentIntent)
	}
	if f.Status != "" {
		w.add("status = ?", f.Status)
	}
	return page(tx, "disputes", disputeCols, w, p, scanDispute)
}

// DisputeStep is a pending step of the sandbox's dispute simulation.
type DisputeStep struct {
	Scope   domain.Scope
	Action  string
	Charge  string
	Dispute string
	Reason  string
	DueAt   int64
}

// ScheduleDisputeStep records a step to run at st.DueAt (Unix seconds).
func (tx *Tx) ScheduleDisputeStep(st DisputeStep) error {
	var dispute, reason *string
	if st.Dispute != "" {
		dispute = &st.Dispute
	}
	if st.Reason != "" {
		reason = &st.Reason
	}
	_, err := tx.exec(`INSERT INTO dispute_schedule (org_id, livemode, action, charge_id, dispute_id, reason, due_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		st.Scope.OrgID, boolInt(st.Scope.Livemode), st.Action, st.Charge, dispute, reason, st.DueAt, tx.now())
	return translate(err, "schedule dispute step")
}

// DisputeStepOnHold is the due_at of a dispute step that waits for an event rather than a time
// (a dispute test card's charge not captured yet): never claimed until ReleaseDisputeSteps.
const DisputeStepOnHold int64 = 1<<62 - 1

// ReleaseDisputeSteps makes the held steps of a charge due at dueAt (Unix seconds).
func (tx *Tx) ReleaseDisputeSteps(s domain.Scope, chargeID string, dueAt int64) error {
	_, err := tx.exec(`UPDATE dispute_schedule SET due_at = ? WHERE org_id = ? AND livemode = ? AND charge_id = ? AND due_at = ?`,
		dueAt, s.OrgID, boolInt(s.Livemode), chargeID, DisputeStepOnHold)
	return translate(err, "release dispute steps")
}

// ClaimDueDisputeSteps removes and returns up to limit steps due at or before now, oldest first;
// the caller applies them in the same transaction (exactly once, also with several replicas).
func (tx *Tx) ClaimDueDisputeSteps(now int64, limit int) ([]DisputeStep, error) {
	rows, err := tx.query(`SELECT seq, org_id, livemode, action, charge_id, COALESCE(dispute_id, ''), COALESCE(reason, ''), due_at FROM dispute_schedule
		WHERE due_at <= ? ORDER BY due_at, seq LIMIT ?`+tx.claimLock(), now, limit)
	if err != nil {
		return nil, translate(err, "claim dispute steps")
	}
	var out []DisputeStep
	var seqs []any
	for rows.Next() {
		var st DisputeStep
		var seq int64
		var live int
		if err := rows.Scan(&seq, &st.Scope.OrgID, &live, &st.Action, &st.Charge, &st.Dispute, &st.Reason, &st.DueAt); err != nil {
			rows.Close()
			return nil, translate(err, "claim dispute steps")
		}
		st.Scope.Livemode = live == 1
		out = append(out, st)
		seqs = append(seqs, seq)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, translate(err, "claim dispute steps")
	}
	if len(seqs) > 0 {
		q := "DELETE FROM dispute_schedule WHERE seq IN (?" + strings.Repeat(", ?", len(seqs)-1) + ")"
		if _, err := tx.exec(q, seqs...); err != nil {
			return nil, translate(err, "claim dispute steps")
		}
	}
	return out, nil
}

// DeleteDisputeSteps removes the pending steps of a dispute with the given action ("" for all).
func (tx *Tx) DeleteDisputeSteps(disputeID, action string) error {
	q, args := "DELETE FROM dispute_schedule WHERE dispute_id = ?", []any{disputeID}
	if action != "" {
		q, args = q+" AND action = ?", append(args, action)
	}
	_, err := tx.exec(q, args...)
	return translate(err, "delete dispute steps")
}

// OpenDisputeUsingFile returns the id of a dispute of the scope, not closed, whose evidence
// names fileID ("" when none).
func (tx *Tx) OpenDisputeUsingFile(s domain.Scope, fileID string) (string, error) {
	var id string
	err := tx.queryRow(`SELECT id FROM disputes WHERE org_id = ? AND livemode = ? AND status NOT IN ('won', 'lost', 'warning_closed')
		AND doc LIKE ? ESCAPE '!' LIMIT 1`, s.OrgID, boolInt(s.Livemode), `%"`+likeEscape(fileID)+`"%`).Scan(&id)
	if err := translate(err, "find dispute using file"); err != nil {
		if err == ErrNotFound {
			return "", nil
		}
		return "", err
	}
	return id, nil
}

// likeEscape escapes the LIKE wildcards of s with '!' (ids contain '_').
func likeEscape(s string) string {
	return strings.NewReplacer("!", "!!", "%", "!%", "_", "!_").Replace(s)
}
