package db

import (
	"encoding/json"
	"fmt"

	"troco/server/domain"
)

// Invoices are stored as their public JSON object (lines included) plus the columns that scopes,
// filters, the payment hooks and the overdue job query.

const invoiceCols = "org_id, livemode, data"

func (tx *Tx) scanInvoice(s scanner) (*domain.Invoice, domain.Scope, error) {
	var sc domain.Scope
	var live int
	var data string
	if err := s.Scan(&sc.OrgID, &live, &data); err != nil {
		return nil, sc, err
	}
	sc.Livemode = live == 1
	var inv domain.Invoice
	if err := json.Unmarshal([]byte(data), &inv); err != nil {
		return nil, sc, fmt.Errorf("db: decode invoice: %w", err)
	}
	if inv.Metadata == nil {
		inv.Metadata = domain.Metadata{}
	}
	if inv.Lines.Data == nil {
		inv.Lines = domain.NewList(domain.InvoiceLinesURL(inv.ID), []domain.InvoiceLine{}, false)
	}
	tx.rebasePtr(inv.HostedInvoiceURL)
	tx.rebasePtr(inv.InvoicePDF)
	return &inv, sc, nil
}

func dueAt(inv *domain.Invoice) *int64 {
	if inv.DueDate.IsZero() {
		return nil
	}
	v := inv.DueDate.Unix()
	return &v
}

// CreateInvoice inserts inv (id and timestamps already set) in scope.
func (tx *Tx) CreateInvoice(s domain.Scope, inv *domain.Invoice) error {
	inv.Object = "invoice"
	inv.Livemode = s.Livemode
	data, err := marshalJSON(inv)
	if err != nil {
		return err
	}
	// A subscription's invoice for a period (its first or a renewal) is unique per period.
	var period *int64
	if inv.Subscription != nil && !inv.PeriodStart.IsZero() && (inv.BillingReason == domain.BillingSubscriptionCycle || inv.BillingReason == domain.BillingSubscriptionCreate) {
		v := inv.PeriodStart.Unix()
		period = &v
	}
	_, err = tx.exec(`INSERT INTO invoices (id, org_id, livemode, customer_id, status, collection_method, subscription_id, payment_intent_id,
		checkout_session_id, number, due_at, billing_period, data, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		inv.ID, s.OrgID, boolInt(s.Livemode), inv.Customer, inv.Status, inv.CollectionMethod, inv.Subscription, inv.PaymentIntent,
		inv.CheckoutSession, inv.Number, dueAt(inv), period, data, inv.CreatedAt.Unix(), inv.UpdatedAt.Unix())
	return translate(err, "create invoice")
}

// FindInvoiceByID returns an invoice in scope.
func (tx *Tx) FindInvoiceByID(s domain.Scope, id string) (*domain.Invoice, error) {
	inv, _, err := tx.scanInvoice(tx.queryRow("SELECT "+invoiceCols+" FROM invoices WHERE id = ? AND org_id = ? AND livemode = ?", id, s.OrgID, boolInt(s.Livemode)))
	return inv, translate(err, "find invoice")
}

// FindInvoiceByPaymentIntent returns the invoice a payment intent pays, in scope.
func (tx *Tx) FindInvoiceByPaymentIntent(s domain.Scope, piID string) (*domain.Invoice, error) {
	inv, _, err := tx.scanInvoice(tx.queryRow("SELECT "+invoiceCols+" FROM invoices WHERE payment_intent_id = ? AND org_id = ? AND livemode = ? ORDER BY seq DESC LIMIT 1",
		piID, s.OrgID, boolInt(s.Livemode)))
	return inv, translate(err, "find invoice by payment intent")
}

// UpdateInvoice writes the whole invoice back and bumps updated_at.
func (tx *Tx) UpdateInvoice(s domain.Scope, inv *domain.Invoice) error {
	inv.UpdatedAt = domain.At(tx.Now)
	data, err := marshalJSON(inv)
	if err != nil {
		return err
	}
	res, err := tx.exec(`UPDATE invoices SET status = ?, collection_method = ?, payment_intent_id = ?, number = ?, due_at = ?, data = ?, updated_at = ?
		WHERE id = ? AND org_id = ? AND livemode = ?`,
		inv.Status, inv.CollectionMethod, inv.PaymentIntent, inv.Number, dueAt(inv), data, tx.now(), inv.ID, s.OrgID, boolInt(s.Livemode))
	return affectedOne(res, err, "update invoice")
}

// CountNumberedInvoices returns how many invoices of the scope have a number (were finalized);
// the next number follows it. The single writer makes the count and the insert atomic.
func (tx *Tx) CountNumberedInvoices(s domain.Scope) (int64, error) {
	var n int64
	err := tx.queryRow("SELECT COUNT(*) FROM invoices WHERE org_id = ? AND livemode = ? AND number IS NOT NULL", s.OrgID, boolInt(s.Livemode)).Scan(&n)
	return n, translate(err, "count invoices")
}

// NextInvoiceNumber returns the next invoice number of the scope (1, 2, …) and records it. The
// first call of a scope starts after the invoices already numbered.
func (tx *Tx) NextInvoiceNumber(s domain.Scope) (int64, error) {
	res, err := tx.exec("UPDATE invoice_counters SET n = n + 1 WHERE org_id = ? AND livemode = ?", s.OrgID, boolInt(s.Livemode))
	if err != nil {
		return 0, translate(err, "next invoice number")
	}
	if k, err := res.RowsAffected(); err != nil {
		return 0, translate(err, "next invoice number")
	} else if k == 0 {
		n, err := tx.CountNumberedInvoices(s)
		if err != nil {
			return 0, err
		}
		if _, err := tx.exec("INSERT INTO invoice_counters (org_id, livemode, n) VALUES (?, ?, ?)", s.OrgID, boolInt(s.Livemode), n+1); err != nil {
			return 0, translate(err, "next invoice number")
		}
		return n + 1, nil
	}
	var n int64
	err = tx.queryRow("SELECT n FROM invoice_counters WHERE org_id = ? AND livemode = ?", s.OrgID, boolInt(s.Livemode)).Scan(&n)
	return n, translate(err, "next invoice number")
}

// SetChargesInvoice links every charge of a payment intent to the invoice it paid (SPEC 2.3
// charge.invoice), in scope.
func (tx *Tx) SetChargesInvoice(s domain.Scope, piID, invoiceID string) error {
	_, err := tx.exec("UPDATE charges SET invoice_id = ? WHERE payment_intent_id = ? AND org_id = ? AND livemode = ? AND invoice_id IS NULL",
		invoiceID, piID, s.OrgID, boolInt(s.Livemode))
	return translate(err, "link charges to invoice")
}

// InvoiceFilter narrows ListInvoices.
type InvoiceFilter struct {
	Customer         string
	Status           string
	CollectionMethod string
	Subscription     string
	PaymentIntent    string
	CheckoutSession  string
	// NotDraft leaves out drafts (what a customer sees of their invoices).
	NotDraft bool
}

// ListInvoices pages the invoices of a scope, newest first.
func (tx *Tx) ListInvoices(s domain.Scope, f InvoiceFilter, p ListParams) ([]*domain.Invoice, bool, error) {
	var w filter
	w.add("org_id = ?", s.OrgID)
	w.add("livemode = ?", boolInt(s.Livemode))
	if f.Customer != "" {
		w.add("customer_id = ?", f.Customer)
	}
	if f.Status != "" {
		w.add("status = ?", f.Status)
	}
	if f.CollectionMethod != "" {
		w.add("collection_method = ?", f.CollectionMethod)
	}
	if f.Subscription != "" {
		w.add("subscription_id = ?", f.Subscription)
	}
	if f.PaymentIntent != "" {
		w.add("payment_intent_id = ?", f.PaymentIntent)
	}
	if f.CheckoutSession != "" {
		w.add("checkout_session_id = ?", f.CheckoutSession)
	}
	if f.NotDraft {
		w.add("status <> ?", domain.InvoiceDraft)
	}
	return page(tx, "invoices", invoiceCols, w, p, func(s scanner) (*domain.Invoice, error) {
		inv, _, err := tx.scanInvoice(s)
		return inv, err
	})
}

// ScopedInvoice is an invoice with the scope it belongs to, for jobs that cross scopes.
type ScopedInvoice struct {
	Scope   domain.Scope
	Invoice *domain.Invoice
}

// ClaimOverdueInvoices returns up to limit open send_invoice invoices whose due instant is at or
// before now (Unix seconds) and that the overdue job has not handled yet, oldest due first, and
// marks them handled. Call it inside the write transaction that acts on them, so two job runners
// never handle one invoice twice.
func (tx *Tx) ClaimOverdueInvoices(now int64, limit int) ([]ScopedInvoice, error) {
	rows, err := tx.query("SELECT seq, "+invoiceCols+" FROM invoices WHERE status = ? AND collection_method = ? AND overdue_at IS NULL AND due_at <= ? ORDER BY due_at, seq LIMIT ?"+tx.claimLock(),
		domain.InvoiceOpen, domain.CollectionSendInvoice, now, limit)
	if err != nil {
		return nil, translate(err, "overdue invoices")
	}
	var out []ScopedInvoice
	var seqs []int64
	for rows.Next() {
		var seq int64
		inv, sc, err := tx.scanInvoice(seqScanner{rows, &seq})
		if err != nil {
			rows.Close()
			return nil, translate(err, "scan invoice")
		}
		seqs = append(seqs, seq)
		out = append(out, ScopedInvoice{Scope: sc, Invoice: inv})
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return nil, translate(err, "overdue invoices")
	}
	rows.Close()
	for _, seq := range seqs {
		if _, err := tx.exec("UPDATE invoices SET overdue_at = ? WHERE seq = ?", now, seq); err != nil {
			return nil, translate(err, "claim overdue invoice")
		}
	}
	return out, nil
}

// CountOverdueInvoices counts the invoices of a subscription still owed past their due instant
// (open or uncollectible, handled by the overdue job), in scope.
func (tx *Tx) CountOverdueInvoices(s domain.Scope, subscriptionID string) (int, error) {
	var n int
	err := tx.queryRow("SELECT COUNT(*) FROM invoices WHERE org_id = ? AND livemode = ? AND subscription_id = ? AND status IN (?, ?) AND overdue_at IS NOT NULL",
		s.OrgID, boolInt(s.Livemode), subscriptionID, domain.InvoiceOpen, domain.InvoiceUncollectible).Scan(&n)
	return n, translate(err, "count overdue invoices")
}

// MarkInvoiceInArrears records that an invoice is owed past a failed payment attempt from at
// (Unix seconds): it then counts in CountOverdueInvoices. An invoice already in arrears keeps
// its first instant.
func (tx *Tx) MarkInvoiceInArrears(s domain.Scope, id string, at int64) error {
	_, err := tx.exec("UPDATE invoices SET overdue_at = COALESCE(overdue_at, ?) WHERE id = ? AND org_id = ? AND livemode = ?", at, id, s.OrgID, boolInt(s.Livemode))
	return translate(err, "invoice in arrears")
}

// FindInvoiceAnyScope returns an invoice by id with its scope (the hosted invoice page, which
// checks the URL's secret before showing anything).
func (tx *Tx) FindInvoiceAnyScope(id string) (*domain.Invoice, domain.Scope, error) {
	inv, sc, err := tx.scanInvoice(tx.queryRow("SELECT "+invoiceCols+" FROM invoices WHERE id = ?", id))
	return inv, sc, translate(err, "find invoice")
}
