package db

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"troco/server/domain"
)

// payJSON encodes a sub-object for a JSON column; nil pointers and nil slices become NULL.
func payJSON(v any) (*string, error) {
	b, err := domain.MarshalJSON(v)
	if err != nil {
		return nil, fmt.Errorf("db: encode: %w", err)
	}
	if string(b) == "null" {
		return nil, nil
	}
	s := string(b)
	return &s, nil
}

// payParse decodes a JSON column into dst; NULL leaves dst untouched.
func payParse(s *string, dst any) error {
	if s == nil || *s == "" {
		return nil
	}
	doc, err := unpackText(*s) // packed on SQLite (tx.doc), plain on PostgreSQL and in older rows
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(doc), dst); err != nil {
		return fmt.Errorf("db: decode: %w", err)
	}
	return nil
}

// doc is the stored form of a JSON column written by payJSON: packed (packSmall) on SQLite,
// plain on PostgreSQL; NULL stays NULL. payParse reads both.
func (tx *Tx) doc(s *string) any {
	if s == nil {
		return nil
	}
	if tx.pg {
		return *s
	}
	return packSmall([]byte(*s))
}

func payScope(w *filter, s domain.Scope) {
	w.add("org_id = ?", s.OrgID)
	w.add("livemode = ?", boolInt(s.Livemode))
}

// ---- payment intents ----

const paymentIntentCols = `id, org_id, livemode, status, amount, currency, customer_id, description, capture_method, interest_payer,
payment_method_types, payment_method_id, payment_method_type, installments, client_secret, last_payment_error, payment_data,
buyer, latest_charge_id, amount_capturable, amount_received, canceled_at, cancellation_reason, statement_descriptor, metadata,
created_at, updated_at`

func (tx *Tx) scanPaymentIntent(s scanner, extra ...any) (*domain.PaymentIntent, string, error) {
	var pi domain.PaymentIntent
	var orgID, types, metadata string
	var live int
	var installments *int
	var lastErr, data, buyer *string
	var canceled *int64
	var created, updated int64
	err := s.Scan(append([]any{&pi.ID, &orgID, &live, &pi.Status, &pi.Amount, &pi.Currency, &pi.Customer, &pi.Description, &pi.CaptureMethod, &pi.InterestPayer,
		&types, &pi.PaymentMethod, &pi.PaymentMethodType, &installments, &pi.ClientSecret, &lastErr, &data,
		&buyer, &pi.LatestCharge, &pi.AmountCapturable, &pi.AmountReceived, &canceled, &pi.CancellationReason, &pi.StatementDescriptor, &metadata,
		&created, &updated}, extra...)...)
	if err != nil {
		return nil, "", err
	}
	pi.ClientSecret = unelide(pi.ClientSecret, pi.ID)
	pi.Object = "payment_intent"
	pi.Livemode = live == 1
	pi.Installments = installments
	pi.PaymentMethodTypes = []string{}
	if err := payParse(&types, &pi.PaymentMethodTypes); err != nil {
		return nil, "", err
	}
	if lastErr != nil {
		pi.LastPaymentError = &domain.PaymentError{}
		if err := payParse(lastErr, pi.LastPaymentError); err != nil {
			return nil, "", err
		}
	}
	if data != nil {
		pi.PaymentData = &domain.PaymentData{}
		if err := payParse(data, pi.PaymentData); err != nil {
			return nil, "", err
		}
	}
	tx.rebasePaymentData(pi.PaymentData)
	if err := payParse(buyer, &pi.Buyer); err != nil {
		return nil, "", err
	}
	pi.CanceledAt = domain.UnixPtr(canceled)
	pi.Metadata = parseMetadata(metadata)
	pi.CreatedAt, pi.UpdatedAt = domain.Unix(created), domain.Unix(updated)
	pi.RefreshNextAction()
	return &pi, orgID, nil
}

// CreatePaymentIntent inserts pi in scope, assigning its id, client secret and timestamps.
func (tx *Tx) CreatePaymentIntent(s domain.Scope, pi *domain.PaymentIntent) error {
	if err := tx.NewPaymentIntent(s, pi); err != nil {
		return err
	}
	types, err := payJSON(pi.PaymentMethodTypes)
	if err != nil {
		return err
	}
	_, err = tx.exec(`INSERT INTO payment_intents (id, org_id, livemode, status, amount, currency, customer_id, description, capture_method,
		interest_payer, payment_method_types, client_secret, statement_descriptor, metadata, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		pi.ID, s.OrgID, boolInt(s.Livemode), pi.Status, pi.Amount, pi.Currency, pi.Customer, pi.Description, pi.CaptureMethod,
		pi.InterestPayer, types, elide(pi.ClientSecret, pi.ID), pi.StatementDescriptor, metadataJSON(pi.Metadata), tx.now(), tx.now())
	return translate(err, "create payment intent")
}

// NewPaymentIntent is CreatePaymentIntent without the INSERT: it assigns pi's id, client secret
// and timestamps as CreatePaymentIntent does, so that an operation that changes the new intent
// again in the same transaction (a create with confirm) writes it once, with InsertPaymentIntent.
func (tx *Tx) NewPaymentIntent(s domain.Scope, pi *domain.PaymentIntent) error {
	pi.ID = domain.NewID(domain.PrefixPaymentIntent)
	pi.ClientSecret = pi.ID + "_secret_" + domain.NewSecret("")
	pi.Object = "payment_intent"
	pi.Livemode = s.Livemode
	pi.CreatedAt, pi.UpdatedAt = domain.At(tx.Now), domain.At(tx.Now)
	if pi.Metadata == nil {
		pi.Metadata = domain.Metadata{}
	}
	return checkPIStatus(pi.Status)
}

// InsertPaymentIntent inserts pi, prepared by NewPaymentIntent in this transaction, with every
// field as it is now: the row CreatePaymentIntent followed by UpdatePaymentIntent writes, in one
// statement (updated_at bumped and next_action refreshed as UpdatePaymentIntent does).
func (tx *Tx) InsertPaymentIntent(s domain.Scope, pi *domain.PaymentIntent) error {
	c, err := tx.piWritten(pi)
	if err != nil {
		return err
	}
	_, err = tx.exec(`INSERT INTO payment_intents (id, org_id, livemode, status, amount, currency, customer_id, description, capture_method,
		interest_payer, payment_method_types, payment_method_id, payment_method_type, installments, client_secret, last_payment_error,
		payment_data, buyer, latest_charge_id, amount_capturable, amount_received, canceled_at, cancellation_reason,
		statement_descriptor, metadata, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		pi.ID, s.OrgID, boolInt(s.Livemode), pi.Status, pi.Amount, pi.Currency, pi.Customer, pi.Description, pi.CaptureMethod,
		pi.InterestPayer, c.types, pi.PaymentMethod, pi.PaymentMethodType, pi.Installments, elide(pi.ClientSecret, pi.ID), c.lastErr,
		c.data, c.buyer, pi.LatestCharge, pi.AmountCapturable, pi.AmountReceived, timePtr(pi.CanceledAt), pi.CancellationReason,
		pi.StatementDescriptor, metadataJSON(pi.Metadata), tx.now(), tx.now())
	return translate(err, "create payment intent")
}

// FindPaymentIntentByID returns a payment intent in scope.
func (tx *Tx) FindPaymentIntentByID(s domain.Scope, id string) (*domain.PaymentIntent, error) {
	pi, _, err := tx.scanPaymentIntent(tx.queryRow("SELECT "+paymentIntentCols+" FROM payment_intents WHERE id = ? AND org_id = ? AND livemode = ?", id, s.OrgID, boolInt(s.Livemode)))
	return pi, translate(err, "find payment intent")
}

// paymentIntentColsP is paymentIntentCols qualified by the table alias p.
var paymentIntentColsP = func() string {
	cols := strings.Split(paymentIntentCols, ",")
	for i, c := range cols {
		cols[i] = "p." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}()

// FindPaymentIntentWithTerms is FindPaymentIntentByID that also returns, in the same statement,
// the organization's payment terms: an Organization with only ID, ActivationStatus,
// MaxInstallments and FeePlan set, what confirming a card needs of it (nil when the
// organization's row is missing). It spares a card confirmation, inside the single writer, a
// second statement and the decoding of the organization's whole row.
func (tx *Tx) FindPaymentIntentWithTerms(s domain.Scope, id string) (*domain.PaymentIntent, *domain.Organization, error) {
	var orgID, status *string
	var maxInstallments *int
	var feePlan *string
	pi, _, err := tx.scanPaymentIntent(tx.queryRow("SELECT "+paymentIntentColsP+", o.id, o.activation_status, o.max_installments, o.fee_plan FROM payment_intents p LEFT JOIN organizations o ON o.id = p.org_id WHERE p.id = ? AND p.org_id = ? AND p.livemode = ?",
		id, s.OrgID, boolInt(s.Livemode)), &orgID, &status, &maxInstallments, &feePlan)
	if err != nil {
		return nil, nil, translate(err, "find payment intent")
	}
	if orgID == nil || status == nil || maxInstallments == nil {
		return pi, nil, nil
	}
	return pi, orgTerms(*orgID, *status, *maxInstallments, feePlan), nil
}

// FindOrganizationTerms returns the payment terms of organization id: an Organization with only
// ID, ActivationStatus, MaxInstallments and FeePlan set (see FindPaymentIntentWithTerms).
func (tx *Tx) FindOrganizationTerms(id string) (*domain.Organization, error) {
	var orgID, status string
	var maxInstallments int
	var feePlan *string
	err := tx.queryRow("SELECT id, activation_status, max_installments, fee_plan FROM organizations WHERE id = ?", id).Scan(&orgID, &status, &maxInstallments, &feePlan)
	if err != nil {
		return nil, translate(err, "find organization")
	}
	return orgTerms(orgID, status, maxInstallments, feePlan), nil
}

func orgTerms(id, status string, maxInstallments int, feePlan *string) *domain.Organization {
	org := &domain.Organization{ID: id, Object: "organization", ActivationStatus: status, MaxInstallments: maxInstallments}
	if feePlan != nil {
		org.FeePlan = json.RawMessage(*feePlan)
	}
	return org
}

// FindPaymentIntentAnyScope returns a payment intent and its scope by id alone, for the public
// pages that authenticate with the intent's client secret instead of an API key.
func (tx *Tx) FindPaymentIntentAnyScope(id string) (*domain.PaymentIntent, domain.Scope, error) {
	pi, orgID, err := tx.scanPaymentIntent(tx.queryRow("SELECT "+paymentIntentCols+" FROM payment_intents WHERE id = ?", id))
	if err != nil {
		return nil, domain.Scope{}, translate(err, "find payment intent")
	}
	return pi, domain.Scope{OrgID: orgID, Livemode: pi.Livemode}, nil
}

// piColumns are the encoded JSON columns of a payment intent that UpdatePaymentIntent and
// InsertPaymentIntent write.
type piColumns struct {
	types                *string
	lastErr, data, buyer any
}

// piWritten prepares pi for a write of every mutable field: updated_at bumped, next_action
// refreshed, the status checked, the JSON columns encoded.
func (tx *Tx) piWritten(pi *domain.PaymentIntent) (c piColumns, err error) {
	pi.UpdatedAt = domain.At(tx.Now)
	pi.RefreshNextAction()
	if err := checkPIStatus(pi.Status); err != nil {
		return c, err
	}
	if c.types, err = payJSON(pi.PaymentMethodTypes); err != nil {
		return c, err
	}
	lastErr, err := payJSON(pi.LastPaymentError)
	if err != nil {
		return c, err
	}
	data, err := payJSON(pi.PaymentData)
	if err != nil {
		return c, err
	}
	buyer, err := payJSON(pi.Buyer)
	if err != nil {
		return c, err
	}
	c.lastErr, c.data, c.buyer = tx.doc(lastErr), tx.doc(data), tx.doc(buyer)
	return c, nil
}

// UpdatePaymentIntent writes every mutable field of pi and bumps updated_at.
func (tx *Tx) UpdatePaymentIntent(s domain.Scope, pi *domain.PaymentIntent) error {
	c, err := tx.piWritten(pi)
	if err != nil {
		return err
	}
	res, err := tx.exec(`UPDATE payment_intents SET status = ?, amount = ?, currency = ?, customer_id = ?, description = ?, capture_method = ?,
		interest_payer = ?, payment_method_types = ?, payment_method_id = ?, payment_method_type = ?, installments = ?, last_payment_error = ?,
		payment_data = ?, buyer = ?, latest_charge_id = ?, amount_capturable = ?, amount_received = ?, canceled_at = ?, cancellation_reason = ?,
		statement_descriptor = ?, metadata = ?, updated_at = ?
		WHERE id = ? AND org_id = ? AND livemode = ?`,
		pi.Status, pi.Amount, pi.Currency, pi.Customer, pi.Description, pi.CaptureMethod,
		pi.InterestPayer, c.types, pi.PaymentMethod, pi.PaymentMethodType, pi.Installments, c.lastErr,
		c.data, c.buyer, pi.LatestCharge, pi.AmountCapturable, pi.AmountReceived, timePtr(pi.CanceledAt), pi.CancellationReason,
		pi.StatementDescriptor, metadataJSON(pi.Metadata), tx.now(), pi.ID, s.OrgID, boolInt(s.Livemode))
	return affectedOne(res, err, "update payment intent")
}

// piStatuses are the statuses a payment intent is stored with (checkPIStatus): an unfiltered
// list reads the payment_intents_status index once per status.
var piStatuses = domain.PIStatuses

// checkPIStatus refuses to store a status an unfiltered list would not read.
func checkPIStatus(status string) error {
	if !slices.Contains(piStatuses, status) {
		return fmt.Errorf("db: payment intent status %q is not one of the stored statuses", status)
	}
	return nil
}

// PaymentIntentFilter narrows ListPaymentIntents.
type PaymentIntentFilter struct {
	Status   string
	Customer string
}

// ListPaymentIntents pages the payment intents of a scope, newest first.
func (tx *Tx) ListPaymentIntents(s domain.Scope, f PaymentIntentFilter, p ListParams) ([]*domain.PaymentIntent, bool, error) {
	var w filter
	payScope(&w, s)
	switch f.Status {
	case "":
	case domain.PIStatusPending, domain.PIStatusRequiresAction:
		// SPEC 3.4: both names denote the waiting state; either filter finds it.
		w.add("status IN (?, ?)", domain.PIStatusPending, domain.PIStatusRequiresAction)
	default:
		w.add("status = ?", f.Status)
	}
	if f.Customer != "" {
		w.add("customer_id = ?", f.Customer)
	}
	if f.Status == "" && f.Customer == "" {
		// No (org_id, livemode, seq) index: the status index, one range per status.
		w.union = eq("status", piStatuses)
	}
	return page(tx, "payment_intents", paymentIntentCols, w, p, func(s scanner) (*domain.PaymentIntent, error) {
		pi, _, err := tx.scanPaymentIntent(s)
		return pi, err
	})
}

// ---- charges ----

const chargeCols = `id, livemode, payment_intent_id, customer_id, status, amount, amount_captured, amount_refunded, captured, paid, refunded,
currency, description, invoice_id, payment_method_id, billing_details, payment_method_details, payment_error, metadata, created_at, updated_at, disputed, receipt_url`

func (tx *Tx) scanCharge(s scanner) (*domain.Charge, error) {
	var c domain.Charge
	var live, captured, paid, refunded, disputed int
	var billing, details string
	var payErr *string
	var metadata string
	var created, updated int64
	err := s.Scan(&c.ID, &live, &c.PaymentIntent, &c.Customer, &c.Status, &c.Amount, &c.AmountCaptured, &c.AmountRefunded, &captured, &paid, &refunded,
		&c.Currency, &c.Description, &c.Invoice, &c.PaymentMethod, &billing, &details, &payErr, &metadata, &created, &updated, &disputed, &c.ReceiptURL)
	if err != nil {
		return nil, err
	}
	if c.ReceiptURL != nil {
		u := rebase(unelide(*c.ReceiptURL, c.ID), tx.publicBase())
		c.ReceiptURL = &u
	}
	c.Object = "charge"
	c.Disputed = disputed == 1
	c.Livemode = live == 1
	c.Captured, c.Paid, c.Refunded = captured == 1, paid == 1, refunded == 1
	if err := payParse(&billing, &c.BillingDetails); err != nil {
		return nil, err
	}
	if err := payParse(&details, &c.PaymentMethodDetails); err != nil {
		return nil, err
	}
	if payErr != nil {
		c.PaymentError = &domain.PaymentError{}
		if err := payParse(payErr, c.PaymentError); err != nil {
			return nil, err
		}
	}
	c.Metadata = parseMetadata(metadata)
	c.CreatedAt, c.UpdatedAt = domain.Unix(created), domain.Unix(updated)
	c.Refunds = domain.NewList[*domain.Refund](RefundsURL(c.ID), nil, false)
	return &c, nil
}

// RefundsURL is the url of a charge's refunds list envelope (SPEC 2.3).
func RefundsURL(chargeID string) string { return "/v1/refunds?charge=" + chargeID }

// chargeRefundsShown is how many refunds a charge embeds; has_more tells when there are more.
const chargeRefundsShown = 10

func (tx *Tx) embedRefunds(s domain.Scope, c *domain.Charge) error {
	if c.AmountRefunded == 0 {
		return nil
	}
	var w filter
	payScope(&w, s)
	w.add("charge_id = ?", c.ID)
	items, more, err := page(tx, "refunds", refundCols, w, ListParams{Limit: chargeRefundsShown}, scanRefund)
	if err != nil {
		return err
	}
	c.Refunds = domain.NewList(RefundsURL(c.ID), items, more)
	return nil
}

// CreateCharge inserts c in scope; c.ID may be reserved by the caller (NewID(ch_)), otherwise
// it is assigned.
func (tx *Tx) CreateCharge(s domain.Scope, c *domain.Charge) error {
	if c.ID == "" {
		c.ID = domain.NewID(domain.PrefixCharge)
	}
	c.Object = "charge"
	c.Livemode = s.Livemode
	c.CreatedAt, c.UpdatedAt = domain.At(tx.Now), domain.At(tx.Now)
	if c.Metadata == nil {
		c.Metadata = domain.Metadata{}
	}
	c.Refunds = domain.NewList[*domain.Refund](RefundsURL(c.ID), nil, false)
	billing, details, payErr, err := chargeDocs(c)
	if err != nil {
		return err
	}
	var receiptURL *string
	if c.ReceiptURL != nil {
		u := elide(*c.ReceiptURL, c.ID)
		receiptURL = &u
	}
	_, err = tx.exec(`INSERT INTO charges (id, org_id, livemode, payment_intent_id, customer_id, status, amount, amount_captured, amount_refunded,
		captured, paid, refunded, currency, description, invoice_id, payment_method_id, billing_details, payment_method_details, payment_error,
		metadata, created_at, updated_at, receipt_url) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, s.OrgID, boolInt(s.Livemode), c.PaymentIntent, c.Customer, c.Status, c.Amount, c.AmountCaptured, c.AmountRefunded,
		boolInt(c.Captured), boolInt(c.Paid), boolInt(c.Refunded), c.Currency, c.Description, c.Invoice, c.PaymentMethod, tx.doc(billing), tx.doc(details), tx.doc(payErr),
		metadataJSON(c.Metadata), tx.now(), tx.now(), receiptURL)
	return translate(err, "create charge")
}

func chargeDocs(c *domain.Charge) (billing, details, payErr *string, err error) {
	if billing, err = payJSON(c.BillingDetails); err != nil {
		return
	}
	if details, err = payJSON(c.PaymentMethodDetails); err != nil {
		return
	}
	payErr, err = payJSON(c.PaymentError)
	return
}

// FindChargeByID returns a charge in scope with its refunds.
func (tx *Tx) FindChargeByID(s domain.Scope, id string) (*domain.Charge, error) {
	c, err := tx.scanCharge(tx.queryRow("SELECT "+chargeCols+" FROM charges WHERE id = ? AND org_id = ? AND livemode = ?", id, s.OrgID, boolInt(s.Livemode)))
	if err != nil {
		return nil, translate(err, "find charge")
	}
	return c, tx.embedRefunds(s, c)
}

// UpdateCharge writes every mutable field of c and bumps updated_at.
func (tx *Tx) UpdateCharge(s domain.Scope, c *domain.Charge) error {
	c.UpdatedAt = domain.At(tx.Now)
	billing, details, payErr, err := chargeDocs(c)
	if err != nil {
		return err
	}
	res, err := tx.exec(`UPDATE charges SET status = ?, amount = ?, amount_captured = ?, amount_refunded = ?, captured = ?, paid = ?, refunded = ?,
		description = ?, payment_method_id = ?, billing_details = ?, payment_method_details = ?, payment_error = ?, metadata = ?, updated_at = ?, disputed = ?
		WHERE id = ? AND org_id = ? AND livemode = ?`,
		c.Status, c.Amount, c.AmountCaptured, c.AmountRefunded, boolInt(c.Captured), boolInt(c.Paid), boolInt(c.Refunded),
		c.Description, c.PaymentMethod, tx.doc(billing), tx.doc(details), tx.doc(payErr), metadataJSON(c.Metadata), tx.now(), boolInt(c.Disputed), c.ID, s.OrgID, boolInt(s.Livemode))
	return affectedOne(res, err, "update charge")
}

// ChargeFilter narrows ListCharges.
type ChargeFilter struct {
	PaymentIntent string
	Customer      string
}

// ListCharges pages the charges of a scope, newest first, each with its refunds.
func (tx *Tx) ListCharges(s domain.Scope, f ChargeFilter, p ListParams) ([]*domain.Charge, bool, error) {
	var w filter
	payScope(&w, s)
	if f.PaymentIntent != "" {
		w.add("payment_intent_id = ?", f.PaymentIntent)
	}
	if f.Customer != "" {
		w.add("customer_id = ?", f.Customer)
	}
	items, more, err := page(tx, "charges", chargeCols, w, p, tx.scanCharge)
	if err != nil {
		return nil, false, err
	}
	for _, c := range items {
		if err := tx.embedRefunds(s, c); err != nil {
			return nil, false, err
		}
	}
	return items, more, nil
}

// ---- refunds ----

const refundCols = "id, livemode, charge_id, payment_intent_id, amount, currency, reason, status, metadata, created_at, updated_at"

func scanRefund(s scanner) (*domain.Refund, error) {
	var r domain.Refund
	var live int
	var metadata string
	var created, updated int64
	if err := s.Scan(&r.ID, &live, &r.Charge, &r.PaymentIntent, &r.Amount, &r.Currency, &r.Reason, &r.Status, &metadata, &created, &updated); err != nil {
		return nil, err
	}
	r.Object = "refund"
	r.Livemode = live == 1
	r.Metadata = parseMetadata(metadata)
	r.CreatedAt, r.UpdatedAt = domain.Unix(created), domain.Unix(updated)
	return &r, nil
}

// CreateRefund inserts r in scope, assigning id and timestamps.
func (tx *Tx) CreateRefund(s domain.Scope, r *domain.Refund) error {
	if r.ID == "" {
		r.ID = domain.NewID(domain.PrefixRefund)
	}
	r.Object = "refund"
	r.Livemode = s.Livemode
	r.CreatedAt, r.UpdatedAt = domain.At(tx.Now), domain.At(tx.Now)
	if r.Metadata == nil {
		r.Metadata = domain.Metadata{}
	}
	_, err := tx.exec(`INSERT INTO refunds (id, org_id, livemode, charge_id, payment_intent_id, amount, currency, reason, status, metadata, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, s.OrgID, boolInt(s.Livemode), r.Charge, r.PaymentIntent, r.Amount, r.Currency, r.Reason, r.Status, metadataJSON(r.Metadata), tx.now(), tx.now())
	return translate(err, "create refund")
}

// FindRefundByID returns a refund in scope.
func (tx *Tx) FindRefundByID(s domain.Scope, id string) (*domain.Refund, error) {
	r, err := scanRefund(tx.queryRow("SELECT "+refundCols+" FROM refunds WHERE id = ? AND org_id = ? AND livemode = ?", id, s.OrgID, boolInt(s.Livemode)))
	return r, translate(err, "find refund")
}

// RefundFilter narrows ListRefunds.
type RefundFilter struct {
	Charge        string
	PaymentIntent string
}

// ListRefunds pages the refunds of a scope, newest first.
func (tx *Tx) ListRefunds(s domain.Scope, f RefundFilter, p ListParams) ([]*domain.Refund, bool, error) {
	var w filter
	payScope(&w, s)
	if f.Charge != "" {
		w.add("charge_id = ?", f.Charge)
	}
	if f.PaymentIntent != "" {
		w.add("payment_intent_id = ?", f.PaymentIntent)
	}
	return page(tx, "refunds", refundCols, w, p, scanRefund)
}

// ---- payment methods ----

const paymentMethodCols = "id, livemode, type, customer_id, card, billing_details, sim_behavior, metadata, created_at, updated_at"

func scanPaymentMethod(s scanner) (*domain.PaymentMethod, error) {
	var pm domain.PaymentMethod
	var live int
	var cardDoc, sim *string
	var billing, metadata string
	var created, updated int64
	if err := s.Scan(&pm.ID, &live, &pm.Type, &pm.Customer, &cardDoc, &billing, &sim, &metadata, &created, &updated); err != nil {
		return nil, err
	}
	pm.Object = "payment_method"
	pm.Livemode = live == 1
	if cardDoc != nil {
		pm.Card = &domain.PaymentCard{}
		if err := payParse(cardDoc, pm.Card); err != nil {
			return nil, err
		}
	}
	if err := payParse(&billing, &pm.BillingDetails); err != nil {
		return nil, err
	}
	if sim != nil {
		pm.SimBehavior = *sim
	}
	pm.Metadata = parseMetadata(metadata)
	pm.CreatedAt, pm.UpdatedAt = domain.Unix(created), domain.Unix(updated)
	return &pm, nil
}

// CreatePaymentMethod inserts pm in scope, assigning id and timestamps. Only what
// domain.PaymentMethod holds is stored: never a card number or CVC.
func (tx *Tx) CreatePaymentMethod(s domain.Scope, pm *domain.PaymentMethod) error {
	pm.ID = domain.NewID(domain.PrefixPaymentMethod)
	pm.Object = "payment_method"
	pm.Livemode = s.Livemode
	pm.CreatedAt, pm.UpdatedAt = domain.At(tx.Now), domain.At(tx.Now)
	if pm.Metadata == nil {
		pm.Metadata = domain.Metadata{}
	}
	cardDoc, err := payJSON(pm.Card)
	if err != nil {
		return err
	}
	billing, err := payJSON(pm.BillingDetails)
	if err != nil {
		return err
	}
	var sim *string
	if pm.SimBehavior != "" && !s.Livemode {
		sim = &pm.SimBehavior
	}
	_, err = tx.exec(`INSERT INTO payment_methods (id, org_id, livemode, type, customer_id, card, billing_details, sim_behavior, metadata, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		pm.ID, s.OrgID, boolInt(s.Livemode), pm.Type, pm.Customer, tx.doc(cardDoc), tx.doc(billing), sim, metadataJSON(pm.Metadata), tx.now(), tx.now())
	return translate(err, "create payment method")
}

// FindPaymentMethodByID returns a payment method in scope.
func (tx *Tx) FindPaymentMethodByID(s domain.Scope, id string) (*domain.PaymentMethod, error) {
	pm, err := scanPaymentMethod(tx.queryRow("SELECT "+paymentMethodCols+" FROM payment_methods WHERE id = ? AND org_id = ? AND livemode = ?", id, s.OrgID, boolInt(s.Livemode)))
	return pm, translate(err, "find payment method")
}

// UpdatePaymentMethod writes the customer, billing details and metadata of pm.
func (tx *Tx) UpdatePaymentMethod(s domain.Scope, pm *domain.PaymentMethod) error {
	pm.UpdatedAt = domain.At(tx.Now)
	billing, err := payJSON(pm.BillingDetails)
	if err != nil {
		return err
	}
	res, err := tx.exec(`UPDATE payment_methods SET customer_id = ?, billing_details = ?, metadata = ?, updated_at = ? WHERE id = ? AND org_id = ? AND livemode = ?`,
		pm.Customer, tx.doc(billing), metadataJSON(pm.Metadata), tx.now(), pm.ID, s.OrgID, boolInt(s.Livemode))
	return affectedOne(res, err, "update payment method")
}

// PaymentMethodFilter narrows ListPaymentMethods.
type PaymentMethodFilter struct {
	Customer string
	Type     string
}

// ListPaymentMethods pages the payment methods of a scope, newest first.
func (tx *Tx) ListPaymentMethods(s domain.Scope, f PaymentMethodFilter, p ListParams) ([]*domain.PaymentMethod, bool, error) {
	var w filter
	payScope(&w, s)
	if f.Customer != "" {
		w.add("customer_id = ?", f.Customer)
	}
	if f.Type != "" {
		w.add("type = ?", f.Type)
	}
	return page(tx, "payment_methods", paymentMethodCols, w, p, scanPaymentMethod)
}

// ---- setup intents ----

const setupIntentCols = `id, livemode, status, customer_id, payment_method_id, payment_method_types, usage, client_secret, description,
last_setup_error, cancellation_reason, metadata, created_at, updated_at`

func scanSetupIntent(s scanner) (*domain.SetupIntent, error) {
	var si domain.SetupIntent
	var live int
	var types, metadata string
	var lastErr *string
	var created, updated int64
	if err := s.Scan(&si.ID, &live, &si.Status, &si.Customer, &si.PaymentMethod, &types, &si.Usage, &si.ClientSecret, &si.Description,
		&lastErr, &si.CancellationReason, &metadata, &created, &updated); err != nil {
		return nil, err
	}
	si.Object = "setup_intent"
	si.Livemode = live == 1
	si.PaymentMethodTypes = []string{}
	if err := payParse(&types, &si.PaymentMethodTypes); err != nil {
		return nil, err
	}
	if lastErr != nil {
		si.LastSetupError = &domain.PaymentError{}
		if err := payParse(lastErr, si.LastSetupError); err != nil {
			return nil, err
		}
	}
	si.Metadata = parseMetadata(metadata)
	si.CreatedAt, si.UpdatedAt = domain.Unix(created), domain.Unix(updated)
	return &si, nil
}

// CreateSetupIntent inserts si in scope, assigning id, client secret and timestamps.
func (tx *Tx) CreateSetupIntent(s domain.Scope, si *domain.SetupIntent) error {
	si.ID = domain.NewID(domain.PrefixSetupIntent)
	si.ClientSecret = si.ID + "_secret_" + domain.NewSecret("")
	si.Object = "setup_intent"
	si.Livemode = s.Livemode
	si.CreatedAt, si.UpdatedAt = domain.At(tx.Now), domain.At(tx.Now)
	if si.Metadata == nil {
		si.Metadata = domain.Metadata{}
	}
	types, err := payJSON(si.PaymentMethodTypes)
	if err != nil {
		return err
	}
	_, err = tx.exec(`INSERT INTO setup_intents (id, org_id, livemode, status, customer_id, payment_method_types, usage, client_secret, description,
		metadata, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		si.ID, s.OrgID, boolInt(s.Livemode), si.Status, si.Customer, types, si.Usage, si.ClientSecret, si.Description,
		metadataJSON(si.Metadata), tx.now(), tx.now())
	return translate(err, "create setup intent")
}

// FindSetupIntentByID returns a setup intent in scope.
func (tx *Tx) FindSetupIntentByID(s domain.Scope, id string) (*domain.SetupIntent, error) {
	si, err := scanSetupIntent(tx.queryRow("SELECT "+setupIntentCols+" FROM setup_intents WHERE id = ? AND org_id = ? AND livemode = ?", id, s.OrgID, boolInt(s.Livemode)))
	return si, translate(err, "find setup intent")
}

// LinkSetupIntentToCheckout records that a setup intent saves the card of a checkout session.
func (tx *Tx) LinkSetupIntentToCheckout(s domain.Scope, setupIntent, checkoutSession string) error {
	_, err := tx.exec("UPDATE setup_intents SET checkout_session_id = ? WHERE id = ? AND org_id = ? AND livemode = ?",
		checkoutSession, setupIntent, s.OrgID, boolInt(s.Livemode))
	return translate(err, "link setup intent")
}

// FindCheckoutSetupIntent returns the newest setup intent saving a checkout session's card that
// is not canceled, or ErrNotFound.
func (tx *Tx) FindCheckoutSetupIntent(s domain.Scope, checkoutSession string) (*domain.SetupIntent, error) {
	si, err := scanSetupIntent(tx.queryRow("SELECT "+setupIntentCols+` FROM setup_intents
		WHERE org_id = ? AND livemode = ? AND checkout_session_id = ? AND status <> ? ORDER BY seq DESC LIMIT 1`,
		s.OrgID, boolInt(s.Livemode), checkoutSession, domain.SetupStatusCanceled))
	return si, translate(err, "find checkout setup intent")
}

// UpdateSetupIntent writes every mutable field of si and bumps updated_at.
func (tx *Tx) UpdateSetupIntent(s domain.Scope, si *domain.SetupIntent) error {
	si.UpdatedAt = domain.At(tx.Now)
	lastErr, err := payJSON(si.LastSetupError)
	if err != nil {
		return err
	}
	res, err := tx.exec(`UPDATE setup_intents SET status = ?, customer_id = ?, payment_method_id = ?, description = ?, last_setup_error = ?,
		cancellation_reason = ?, metadata = ?, updated_at = ? WHERE id = ? AND org_id = ? AND livemode = ?`,
		si.Status, si.Customer, si.PaymentMethod, si.Description, lastErr, si.CancellationReason, metadataJSON(si.Metadata), tx.now(),
		si.ID, s.OrgID, boolInt(s.Livemode))
	return affectedOne(res, err, "update setup intent")
}

// SetupIntentFilter narrows ListSetupIntents.
type SetupIntentFilter struct {
	Customer string
}

// ListSetupIntents pages the setup intents of a scope, newest first.
func (tx *Tx) ListSetupIntents(s domain.Scope, f SetupIntentFilter, p ListParams) ([]*domain.SetupIntent, bool, error) {
	var w filter
	payScope(&w, s)
	if f.Customer != "" {
		w.add("customer_id = ?", f.Customer)
	}
	return page(tx, "setup_intents", setupIntentCols, w, p, scanSetupIntent)
}

// ---- scheduled transitions ----

// ScheduledTransition is a delayed change of a simulated payment, due at DueAt.
type ScheduledTransition struct {
	Scope         domain.Scope
	PaymentIntent string
	Charge        string
	Action        string
	DueAt         int64
}

// ScheduleTransition records a transition to apply at dueAt (Unix seconds).
func (tx *Tx) ScheduleTransition(t ScheduledTransition) error {
	_, err := tx.exec(`INSERT INTO scheduled_transitions (org_id, livemode, payment_intent_id, charge_id, action, due_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		t.Scope.OrgID, boolInt(t.Scope.Livemode), t.PaymentIntent, t.Charge, t.Action, t.DueAt, tx.now())
	return translate(err, "schedule transition")
}

// ClaimDueTransitions removes and returns up to limit transitions due at or before now, oldest
// first. The caller applies them in the same transaction, so they are applied exactly once.
func (tx *Tx) ClaimDueTransitions(now int64, limit int) ([]ScheduledTransition, error) {
	rows, err := tx.query(`SELECT seq, org_id, livemode, payment_intent_id, charge_id, action, due_at FROM scheduled_transitions
		WHERE due_at <= ? ORDER BY due_at, seq LIMIT ?`+tx.claimLock(), now, limit)
	if err != nil {
		return nil, translate(err, "claim transitions")
	}
	var out []ScheduledTransition
	var seqs []any
	for rows.Next() {
		var t ScheduledTransition
		var seq int64
		var live int
		if err := rows.Scan(&seq, &t.Scope.OrgID, &live, &t.PaymentIntent, &t.Charge, &t.Action, &t.DueAt); err != nil {
			rows.Close()
			return nil, translate(err, "claim transitions")
		}
		t.Scope.Livemode = live == 1
		out = append(out, t)
		seqs = append(seqs, seq)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, translate(err, "claim transitions")
	}
	for _, seq := range seqs {
		if _, err := tx.exec("DELETE FROM scheduled_transitions WHERE seq = ?", seq); err != nil {
			return nil, translate(err, "claim transitions")
		}
	}
	return out, nil
}

// DeleteTransitions drops the pending transitions of a payment intent (it was canceled).
func (tx *Tx) DeleteTransitions(s domain.Scope, paymentIntentID string) error {
	_, err := tx.exec("DELETE FROM scheduled_transitions WHERE payment_intent_id = ? AND org_id = ? AND livemode = ?", paymentIntentID, s.OrgID, boolInt(s.Livemode))
	return translate(err, "delete transitions")
}

// ListTransitions returns the pending transitions of a payment intent (tests and diagnostics).
func (tx *Tx) ListTransitions(s domain.Scope, paymentIntentID string) ([]ScheduledTransition, error) {
	rows, err := tx.query(`SELECT payment_intent_id, charge_id, action, due_at FROM scheduled_transitions
		WHERE payment_intent_id = ? AND org_id = ? AND livemode = ? ORDER BY seq`, paymentIntentID, s.OrgID, boolInt(s.Livemode))
	if err != nil {
		return nil, translate(err, "list transitions")
	}
	defer rows.Close()
	var out []ScheduledTransition
	for rows.Next() {
		t := ScheduledTransition{Scope: s}
		if err := rows.Scan(&t.PaymentIntent, &t.Charge, &t.Action, &t.DueAt); err != nil {
			return nil, translate(err, "list transitions")
		}
		out = append(out, t)
	}
	return out, translate(rows.Err(), "list transitions")
}
