package db

import "troco/server/domain"

// LedgerSums are the sums of one payment method's ledger entries over a time range.
type LedgerSums struct {
	Method   string
	Gross    int64 // charges
	Fees     int64
	Net      int64 // charges net of fees, minus refunds
	Refunds  int64 // refunded amount (positive)
	Payments int64 // payments charged (distinct payment intents)
}

// SumLedger sums the ledger of a scope for from ≤ created_at < to, per payment method, on the
// (org_id, livemode, created_at) index: no object is loaded.
func (tx *Tx) SumLedger(s domain.Scope, from, to int64) ([]LedgerSums, error) {
	rows, err := tx.query(`SELECT payment_method_type,
		COALESCE(SUM(CASE WHEN type = 'charge' THEN amount ELSE 0 END), 0),
		COALESCE(SUM(fee_amount), 0),
		COALESCE(SUM(net_amount), 0),
		COALESCE(SUM(CASE WHEN type = 'refund' THEN -amount ELSE 0 END), 0),
		COUNT(DISTINCT CASE WHEN type = 'charge' THEN payment_intent_id END)
		FROM ledger_transactions WHERE org_id = ? AND livemode = ? AND created_at >= ? AND created_at < ?
		GROUP BY payment_method_type ORDER BY payment_method_type`, s.OrgID, boolInt(s.Livemode), from, to)
	if err != nil {
		return nil, translate(err, "sum ledger")
	}
	defer rows.Close()
	var out []LedgerSums
	for rows.Next() {
		var l LedgerSums
		if err := rows.Scan(&l.Method, &l.Gross, &l.Fees, &l.Net, &l.Refunds, &l.Payments); err != nil {
			return nil, translate(err, "scan ledger sums")
		}
		out = append(out, l)
	}
	return out, translate(rows.Err(), "sum ledger")
}
