package db

import (
	"troco/server/domain"
)

const transactionCols = `id, livemode, type, payment_intent_id, charge_id, refund_id, payment_method_type, amount, fee_amount, interest_amount,
net_amount, currency, status, installment, installment_count, settled_at, created_at, updated_at, available_on`

func scanTransaction(s scanner) (*domain.Transaction, error) {
	var t domain.Transaction
	var live int
	var settled *int64
	var created, updated int64
	if err := s.Scan(&t.ID, &live, &t.Type, &t.PaymentIntent, &t.Charge, &t.Refund, &t.PaymentMethodType, &t.Amount, &t.FeeAmount, &t.InterestAmount,
		&t.NetAmount, &t.Currency, &t.Status, &t.Installment, &t.InstallmentCount, &settled, &created, &updated, &t.AvailableOn); err != nil {
		return nil, err
	}
	t.Object = "transaction"
	t.Livemode = live == 1
	t.SettledAt = domain.UnixPtr(settled)
	t.CreatedAt, t.UpdatedAt = domain.Unix(created), domain.Unix(updated)
	return &t, nil
}

// InsertTransaction appends a ledger entry in scope, assigning id and timestamps.
func (tx *Tx) InsertTransaction(s domain.Scope, t *domain.Transaction) error {
	t.ID = domain.NewID(domain.PrefixTransaction)
	t.Object = "transaction"
	t.Livemode = s.Livemode
	t.CreatedAt, t.UpdatedAt = domain.At(tx.Now), domain.At(tx.Now)
	_, err := tx.exec(`INSERT INTO ledger_transactions (id, org_id, livemode, type, payment_intent_id, charge_id, refund_id, payment_method_type,
		amount, fee_amount, interest_amount, net_amount, currency, status, installment, installment_count, settled_at, created_at, updated_at, available_on)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, s.OrgID, boolInt(s.Livemode), t.Type, t.PaymentIntent, t.Charge, t.Refund, t.PaymentMethodType,
		t.Amount, t.FeeAmount, t.InterestAmount, t.NetAmount, t.Currency, t.Status, t.Installment, t.InstallmentCount, timePtr(t.SettledAt), tx.now(), tx.now(), t.AvailableOn)
	return translate(err, "insert transaction")
}

// FindTransactionByID returns a ledger entry in scope.
func (tx *Tx) FindTransactionByID(s domain.Scope, id string) (*domain.Transaction, error) {
	t, err := scanTransaction(tx.queryRow("SELECT "+transactionCols+" FROM ledger_transactions WHERE id = ? AND org_id = ? AND livemode = ?", id, s.OrgID, boolInt(s.Livemode)))
	return t, translate(err, "find transaction")
}

// TransactionFilter narrows ListTransactions.
type TransactionFilter struct {
	PaymentIntent string
	Charge        string
	Type          string
}

// ListTransactions pages the ledger of a scope, newest first.
func (tx *Tx) ListTransactions(s domain.Scope, f TransactionFilter, p ListParams) ([]*domain.Transaction, bool, error) {
	var w filter
	payScope(&w, s)
	if f.PaymentIntent != "" {
		w.add("payment_intent_id = ?", f.PaymentIntent)
	}
	if f.Charge != "" {
		// A charge's entries are found through its payment intent's index (every entry of a
		// charge carries the charge's intent; an intent has a handful of entries): the ledger
		// keeps no index of its own on charge_id.
		if f.PaymentIntent == "" {
			var pi string
			err := tx.queryRow("SELECT payment_intent_id FROM charges WHERE id = ? AND org_id = ? AND livemode = ?", f.Charge, s.OrgID, boolInt(s.Livemode)).Scan(&pi)
			if err != nil && translate(err, "") != ErrNotFound {
				return nil, false, translate(err, "find charge")
			}
			w.add("payment_intent_id = ?", pi) // "" (no entry) for a charge not in scope
		}
		w.add("charge_id = ?", f.Charge)
	}
	if f.Type != "" {
		w.add("type = ?", f.Type)
	}
	return page(tx, "ledger_transactions", transactionCols, w, p, scanTransaction)
}
