// Package invoices holds the rules of invoices (SPEC 2.9, 3.6, 4.6, 9.2): creation with the
// collection method and due-date rules, the draft → open → paid | void | uncollectible state
// machine, payment through the payments engine with a saved card, the canonical invoice of a
// paid checkout session, and the overdue job that puts a subscription in past_due at the due
// instant. Like package core, every operation is a function on a write transaction that writes
// the change and its events together; there is no net/http here.
//
// Where the rules live:
//   - invoices.go: create, update, get, the due-date rules and the lines.
//   - actions.go: finalize, pay, void, mark_uncollectible; settlement of a waiting payment.
//   - checkout.go: the invoice of a checkout session (SPEC 2.4 invoice_creation, subscriptions).
//   - overdue.go: the due-instant job (invoice.overdue, subscription past_due).
package invoices

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/payments"
)

// Limits of an invoice body (troco's choices; the checkout figures).
const (
	MaxLines       = 100
	MaxQuantity    = 10000
	maxDescription = 1000
	maxLineText    = 500
	maxTotal       = 99_999_999_99
)

// Event types of invoices.
const (
	EventCreated             = "invoice.created"
	EventFinalized           = "invoice.finalized"
	EventPaid                = "invoice.paid"
	EventPaymentFailed       = "invoice.payment_failed"
	EventVoided              = "invoice.voided"
	EventMarkedUncollectible = "invoice.marked_uncollectible"
	EventOverdue             = "invoice.overdue"
	EventUpdated             = "invoice.updated"
)

// Service holds what paying an invoice needs besides a transaction: the payments engine that
// charges the customer's saved card.
type Service struct {
	Payments *payments.Service
}

// LineParams is one entry of lines: a price and quantity, or an amount with a description.
type LineParams struct {
	Price       *string `json:"price"`
	Quantity    *int64  `json:"quantity"`
	Amount      *int64  `json:"amount"`
	Description *string `json:"description"`
}

// CreateParams is the body of POST /v1/invoices.
type CreateParams struct {
	Customer         *string           `json:"customer"`
	CollectionMethod *string           `json:"collection_method"`
	DueDate          *string           `json:"due_date"`
	DaysUntilDue     *int              `json:"days_until_due"`
	Currency         *string           `json:"currency"`
	Description      *string           `json:"description"`
	Subscription     *string           `json:"subscription"`
	Lines            []LineParams      `json:"lines"`
	Metadata         map[string]string `json:"metadata"`
	FineRate         *int64            `json:"fine_rate"`
	InterestRate     *int64            `json:"interest_rate"`
}

// UpdateParams is the body of POST /v1/invoices/{id}: description and metadata at any time;
// collection method, due date and lines while the invoice is a draft.
type UpdateParams struct {
	CollectionMethod *string                       `json:"collection_method"`
	DueDate          domain.Opt[string]            `json:"due_date"`
	DaysUntilDue     domain.Opt[int]               `json:"days_until_due"`
	Description      domain.Opt[string]            `json:"description"`
	Lines            []LineParams                  `json:"lines"`
	Metadata         domain.Opt[map[string]string] `json:"metadata"`
}

// Get returns an invoice of the scope.
func Get(tx *db.Tx, s domain.Scope, id string) (*domain.Invoice, error) {
	inv, err := tx.FindInvoiceByID(s, id)
	if errors.Is(err, db.ErrNotFound) {
		return nil, domain.NotFound("id", "invoice", id)
	}
	if err != nil {
		return nil, err
	}
	inv.ApplyLateCharges(tx.Now)
	return inv, nil
}

// LateRates checks fine_rate and interest_rate (basis points): only for send_invoice (an invoice
// with a due instant), each between zero and its legal ceiling.
func LateRates(method string, fine, interest *int64) (int64, int64, error) {
	var f, i int64
	if fine != nil {
		if method != domain.CollectionSendInvoice {
			return 0, 0, domain.Invalid("fine_rate", "fine_rate applies only to send_invoice (an invoice with a due date).")
		}
		if *fine < 0 || *fine > domain.MaxFineRate {
			return 0, 0, domain.Invalid("fine_rate", "fine_rate is in basis points, 0 to %d (2%%); got %d.", domain.MaxFineRate, *fine)
		}
		f = *fine
	}
	if interest != nil {
		if method != domain.CollectionSendInvoice {
			return 0, 0, domain.Invalid("interest_rate", "interest_rate applies only to send_invoice (an invoice with a due date).")
		}
		if *interest < 0 || *interest > domain.MaxInterestRate {
			return 0, 0, domain.Invalid("interest_rate", "interest_rate is in basis points per 30 days, 0 to %d (1%%); got %d.", domain.MaxInterestRate, *interest)
		}
		i = *interest
	}
	return f, i, nil
}

// Insert stores a new draft invoice built by another package (a subscription's) and emits
// invoice.created.
func Insert(tx *db.Tx, a domain.Actor, inv *domain.Invoice) error {
	if err := tx.CreateInvoice(a.Scope, inv); err != nil {
		return err
	}
	return core.Emit(tx, a, EventCreated, inv, nil)
}

// FinalizeDraft finalizes a draft held by the caller (see Finalize).
func FinalizeDraft(tx *db.Tx, a domain.Actor, inv *domain.Invoice) error {
	return finalize(tx, a, inv)
}

// Create creates a draft invoice and emits invoice.created. SPEC 4.6: customer is required;
// collection_method defaults to charge_automatically (or to the subscription's); due_date and
// days_until_due are mutually exclusive, apply only to send_invoice, and one is required there.
func Create(tx *db.Tx, a domain.Actor, p CreateParams) (*domain.Invoice, error) {
	if p.Customer == nil || *p.Customer == "" {
		return nil, domain.Missing("customer")
	}
	cus, err := tx.FindCustomerByID(a.Scope, *p.Customer)
	if errors.Is(err, db.ErrNotFound) {
		return nil, domain.NotFound("customer", "customer", *p.Customer)
	}
	if err != nil {
		return nil, err
	}
	method := domain.CollectionChargeAutomatically
	var sub *domain.Subscription
	if p.Subscription != nil {
		sub, err = tx.FindSubscriptionByID(a.Scope, *p.Subscription)
		if errors.Is(err, db.ErrNotFound) {
			return nil, domain.NotFound("subscription", "subscription", *p.Subscription)
		}
		if err != nil {
			return nil, err
		}
		if sub.Customer != cus.ID {
			return nil, domain.Invalid("subscription", "Subscription %s belongs to another customer than %s.", sub.ID, cus.ID)
		}
		if sub.CollectionMethod != "" {
			method = sub.CollectionMethod
		}
	}
	if p.CollectionMethod != nil {
		if !slices.Contains(domain.CollectionMethods, *p.CollectionMethod) {
			return nil, domain.Invalid("collection_method", "collection_method must be charge_automatically or send_invoice; got %q.", *p.CollectionMethod)
		}
		method = *p.CollectionMethod
	}
	due, days, err := resolveDue(tx.Now, method, p.DueDate, p.DaysUntilDue)
	if err != nil {
		return nil, err
	}
	fineRate, interestRate, err := LateRates(method, p.FineRate, p.InterestRate)
	if err != nil {
		return nil, err
	}
	if p.Currency != nil {
		if _, err := domain.ValidateCurrency("currency", *p.Currency); err != nil || *p.Currency == "" {
			return nil, domain.Invalid("currency", "currency must be brl (lowercase ISO 4217).")
		}
	}
	lines, err := resolveLines(tx, a.Scope, p.Lines)
	if err != nil {
		return nil, err
	}
	if err := domain.ValidateMetadata(p.Metadata); err != nil {
		return nil, err
	}
	now := domain.At(tx.Now)
	inv := &domain.Invoice{
		ID: domain.NewID(domain.PrefixInvoice), Object: "invoice", Status: domain.InvoiceDraft, Currency: "brl",
		Customer: cus.ID, CollectionMethod: method, DueDate: due, DaysUntilDue: days, Livemode: a.Livemode,
		Metadata: domain.MergeMetadata(nil, p.Metadata), CreatedAt: now, UpdatedAt: now,
		FineRate: fineRate, InterestRate: interestRate, BillingReason: domain.BillingManual,
	}
	if sub != nil {
		inv.Subscription = &sub.ID
	}
	if p.Description != nil && strings.TrimSpace(*p.Description) != "" {
		if err := domain.ValidateText("description", *p.Description, maxDescription); err != nil {
			return nil, err
		}
		d := *p.Description
		inv.Description = &d
	}
	inv.Lines = domain.NewList(domain.InvoiceLinesURL(inv.ID), lines, false)
	inv.SetTotals()
	if err := tx.CreateInvoice(a.Scope, inv); err != nil {
		return nil, err
	}
	return inv, core.Emit(tx, a, EventCreated, inv, nil)
}

// Update changes an invoice and emits invoice.updated. Description and metadata change in any
// status; collection_method, due_date, days_until_due and lines only in a draft (409 otherwise).
// The resulting invoice follows the same due-date rules as a new one; switching to
// charge_automatically clears the due date.
func Update(tx *db.Tx, a domain.Actor, id string, p UpdateParams) (*domain.Invoice, error) {
	inv, err := Get(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	before := *inv
	draftOnly := p.CollectionMethod != nil || p.DueDate.Set || p.DaysUntilDue.Set || p.Lines != nil
	if draftOnly && inv.Status != domain.InvoiceDraft {
		return nil, domain.Conflict(domain.CodeResourceStateConflict, "This invoice is %s: only a draft's collection_method, due_date, days_until_due and lines can change; description and metadata can always change.", inv.Status)
	}
	if draftOnly {
		method := inv.CollectionMethod
		if p.CollectionMethod != nil {
			if !slices.Contains(domain.CollectionMethods, *p.CollectionMethod) {
				return nil, domain.Invalid("collection_method", "collection_method must be charge_automatically or send_invoice; got %q.", *p.CollectionMethod)
			}
			method = *p.CollectionMethod
		}
		dueDate, days := p.DueDate.Ptr(), p.DaysUntilDue.Ptr()
		switch {
		case dueDate != nil || days != nil:
			due, d, err := resolveDue(tx.Now, method, dueDate, days)
			if err != nil {
				return nil, err
			}
			inv.DueDate, inv.DaysUntilDue = due, d
		case method == domain.CollectionChargeAutomatically:
			inv.DueDate, inv.DaysUntilDue = domain.Time{}, nil
		case inv.DueDate.IsZero():
			return nil, missingDue()
		}
		inv.CollectionMethod = method
		if p.Lines != nil {
			lines, err := resolveLines(tx, a.Scope, p.Lines)
			if err != nil {
				return nil, err
			}
			inv.Lines = domain.NewList(domain.InvoiceLinesURL(inv.ID), lines, false)
			inv.SetTotals()
		}
	}
	if p.Description.Set {
		if v, ok := p.Description.Value(); ok && strings.TrimSpace(v) != "" {
			if err := domain.ValidateText("description", v, maxDescription); err != nil {
				return nil, err
			}
			inv.Description = &v
		} else {
			inv.Description = nil
		}
	}
	if inv.Metadata, err = domain.ApplyMetadata(inv.Metadata, p.Metadata); err != nil {
		return nil, err
	}
	if err := tx.UpdateInvoice(a.Scope, inv); err != nil {
		return nil, err
	}
	return inv, core.Emit(tx, a, EventUpdated, inv, &before)
}

// missingDue is the parameter_missing of a send_invoice invoice without a due date (SPEC 4.6.1).
func missingDue() *domain.Error {
	e := domain.Missing("due_date")
	e.Message = "collection_method send_invoice needs a due date: send due_date (an RFC 3339 timestamp) or days_until_due (whole days from today)."
	return e
}

// resolveDue applies SPEC 4.6 rules 1–5 and 9.2 to a collection method and the due fields
// sent: with charge_automatically both are rejected and there is no due date; with send_invoice
// exactly one is required; days_until_due is anchored at 12:00:00Z of today (the UTC civil date
// of now) plus that many days; due_date is kept as the instant sent, in UTC.
func resolveDue(now time.Time, method string, dueDate *string, days *int) (domain.Time, *int, error) {
	if method == domain.CollectionChargeAutomatically {
		if dueDate != nil {
			return domain.Time{}, nil, domain.Invalid("due_date", "due_date applies only when collection_method is send_invoice; a charge_automatically invoice has no due date.")
		}
		if days != nil {
			return domain.Time{}, nil, domain.Invalid("days_until_due", "days_until_due applies only when collection_method is send_invoice; a charge_automatically invoice has no due date.")
		}
		return domain.Time{}, nil, nil
	}
	switch {
	case dueDate != nil && days != nil:
		return domain.Time{}, nil, domain.Invalid("due_date", "due_date and days_until_due are mutually exclusive: send one of them.")
	case dueDate == nil && days == nil:
		return domain.Time{}, nil, missingDue()
	case days != nil:
		if *days < 0 || *days > domain.MaxDaysUntilDue {
			return domain.Time{}, nil, domain.Invalid("days_until_due", "days_until_due must be a whole number of days from 0 (today) to %d.", domain.MaxDaysUntilDue)
		}
		d := *days
		return domain.At(domain.ResolveDaysUntilDue(now, d)), &d, nil
	}
	t, err := domain.ParseDueDate("due_date", *dueDate)
	if err != nil {
		return domain.Time{}, nil, err
	}
	return domain.Time{Time: t}, nil, nil
}

// resolveLines validates lines and freezes their prices as they are now. The total must be zero
// (a draft without lines) or at least payments.MinAmount, so every finalized invoice can be paid.
func resolveLines(tx *db.Tx, s domain.Scope, params []LineParams) ([]domain.InvoiceLine, error) {
	if len(params) > MaxLines {
		return nil, domain.Invalid("lines", "lines can have at most %d entries; got %d.", MaxLines, len(params))
	}
	out := make([]domain.InvoiceLine, 0, len(params))
	var total int64
	products := map[string]*domain.Product{}
	for i, lp := range params {
		param := fmt.Sprintf("lines[%d]", i)
		qty := int64(1)
		if lp.Quantity != nil {
			qty = *lp.Quantity
		}
		if qty < 1 || qty > MaxQuantity {
			return nil, domain.Invalid(param+"[quantity]", "quantity must be between 1 and %d.", MaxQuantity)
		}
		var desc *string
		if lp.Description != nil && strings.TrimSpace(*lp.Description) != "" {
			if err := domain.ValidateText(param+"[description]", *lp.Description, maxLineText); err != nil {
				return nil, err
			}
			d := strings.TrimSpace(*lp.Description)
			desc = &d
		}
		line := domain.InvoiceLine{ID: domain.NewID(domain.PrefixLineItem), Object: "line_item", Quantity: qty, Description: desc}
		switch {
		case lp.Price != nil && lp.Amount != nil:
			return nil, domain.Invalid(param+"[amount]", "A line has either a price or an amount, not both.")
		case lp.Price != nil:
			price, err := tx.FindPriceByID(s, *lp.Price)
			if errors.Is(err, db.ErrNotFound) {
				return nil, domain.NotFound(param+"[price]", "price", *lp.Price)
			}
			if err != nil {
				return nil, err
			}
			if !price.IsActive {
				return nil, domain.Invalid(param+"[price]", "Price %s is not active; activate it or use another price.", price.ID)
			}
			if price.Currency != "brl" {
				return nil, domain.Invalid(param+"[price]", "Price %s is in %s; invoices are in brl.", price.ID, price.Currency)
			}
			prod, ok := products[price.Product]
			if !ok {
				if prod, err = tx.FindProductByID(s, price.Product); err != nil {
					return nil, err
				}
				products[price.Product] = prod
			}
			if desc == nil {
				d := prod.Name
				if price.Name != nil && *price.Name != "" {
					d += " (" + *price.Name + ")"
				}
				line.Description = &d
			}
			line.Price, line.Product, line.UnitAmount = price, &prod.ID, price.UnitAmount
		case lp.Amount != nil:
			if err := domain.ValidateAmount(param+"[amount]", *lp.Amount, 1); err != nil {
				return nil, err
			}
			if desc == nil {
				return nil, domain.Missing(param + "[description]")
			}
			line.UnitAmount = *lp.Amount
		default:
			return nil, domain.Missing(param + "[price]")
		}
		line.SubtotalAmount = line.UnitAmount * qty
		line.TotalAmount = line.SubtotalAmount
		total += line.SubtotalAmount
		if line.SubtotalAmount > maxTotal || total > maxTotal {
			return nil, domain.Invalid("lines", "The invoice total exceeds the maximum of %d centavos.", int64(maxTotal))
		}
		out = append(out, line)
	}
	if total > 0 && total < payments.MinAmount {
		return nil, domain.Invalid("lines", "An invoice that charges must total at least %d centavos (R$ 0,50); these lines total %d.", payments.MinAmount, total)
	}
	return out, nil
}

// PageLines returns the page of an invoice's lines after (or before) the line named by a cursor,
// in the invoice's order; an unknown cursor is a 400 naming its parameter.
func PageLines(lines []domain.InvoiceLine, limit int, startingAfter, endingBefore string) ([]domain.InvoiceLine, bool, error) {
	find := func(param, id string) (int, error) {
		for i, l := range lines {
			if l.ID == id {
				return i, nil
			}
		}
		return 0, domain.Invalid(param, "No line %s on this invoice.", id)
	}
	from, to := 0, len(lines)
	if startingAfter != "" {
		i, err := find("starting_after", startingAfter)
		if err != nil {
			return nil, false, err
		}
		from = i + 1
	}
	if endingBefore != "" {
		i, err := find("ending_before", endingBefore)
		if err != nil {
			return nil, false, err
		}
		to = i
		from = max(0, to-limit)
		return slices.Clone(lines[from:to]), from > 0, nil
	}
	end := min(to, from+limit)
	return slices.Clone(lines[from:end]), end < to, nil
}

// numberPrefix is the organization's invoice number prefix: 8 hexadecimal characters derived
// from its id, so numbers read "1A2B3C4D-0001".
func numberPrefix(orgID string) string {
	sum := sha256.Sum256([]byte(orgID))
	return strings.ToUpper(hex.EncodeToString(sum[:4]))
}

// stateConflict is the 409 of an action the invoice's status does not allow.
func stateConflict(inv *domain.Invoice, action string) *domain.Error {
	return &domain.Error{Status: http.StatusConflict, Type: domain.TypeInvalidRequest, Code: domain.CodeResourceStateConflict,
		Message: fmt.Sprintf("This invoice is %s and cannot be %s.", inv.Status, action)}
}
