package invoices

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/payments"
)

// The invoice state machine (SPEC 3.6 leaves it open; Stripe's):
//
//	draft --finalize--> open (number assigned; an invoice of zero is paid at once)
//	draft --pay--> (finalize, then as open)
//	open, uncollectible --pay--> paid (card approved or paid_out_of_band)
//	                        --> open with a waiting payment (a processing card; settles later)
//	open, uncollectible --void--> void
//	open --mark_uncollectible--> uncollectible
//
// paid and void are final. A declined card leaves the invoice open (attempt_count grows,
// invoice.payment_failed) and the same payment intent accepts the next attempt.

// Finalize moves a draft to open: it gets its number and finalized_at, and emits
// invoice.finalized. An invoice that totals zero is paid at once (invoice.paid).
func Finalize(tx *db.Tx, a domain.Actor, id string) (*domain.Invoice, error) {
	inv, err := Get(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if inv.Status != domain.InvoiceDraft {
		return nil, stateConflict(inv, "finalized (only a draft can be)")
	}
	return inv, finalize(tx, a, inv)
}

func finalize(tx *db.Tx, a domain.Actor, inv *domain.Invoice) error {
	before := *inv
	n, err := tx.NextInvoiceNumber(a.Scope)
	if err != nil {
		return err
	}
	number := fmt.Sprintf("%s-%04d", numberPrefix(a.OrgID), n)
	inv.Number = &number
	if err := setHostedURLs(tx, inv); err != nil {
		return err
	}
	inv.Status = domain.InvoiceOpen
	inv.StatusTransitions.FinalizedAt = domain.At(tx.Now)
	if err := tx.UpdateInvoice(a.Scope, inv); err != nil {
		return err
	}
	if err := core.Emit(tx, a, EventFinalized, inv, &before); err != nil {
		return err
	}
	if inv.AmountDue == 0 {
		return markPaid(tx, a, inv, nil)
	}
	return nil
}

// PayParams is the body of POST /v1/invoices/{id}/pay.
type PayParams struct {
	// PaymentMethod is a saved card (pm_…) of the invoice's customer; without it the
	// subscription's default card, else the customer's newest saved card is charged.
	PaymentMethod *string `json:"payment_method"`
	// PaidOutOfBand records a payment made outside troco (a bank transfer): no charge.
	PaidOutOfBand *bool `json:"paid_out_of_band"`
	// PaymentMethodType chooses how the customer pays: credit_card (the default: a saved card)
	// or pix / boleto, which issue a BR Code or a boleto for the amount due now (the payment
	// intent's next_action) and pay the invoice when the payer pays it.
	PaymentMethodType *string `json:"payment_method_type"`
	// Origin is the https://host public URLs use when the server has no base URL.
	Origin string `json:"-"`
	// OnDecline, when set, is called with the invoice of a declined attempt (attempt_count
	// already counts it) before invoice.payment_failed is emitted: recurring billing sets the
	// next retry there, so the event (and the customer's e-mail) shows next_payment_attempt.
	OnDecline func(inv *domain.Invoice) `json:"-"`
}

// Pay collects an invoice: a draft is finalized first; an open or uncollectible invoice is
// charged on a saved card of its customer through the payments engine (an off-session reuse of
// the card, SPEC 7.1) or recorded as paid out of band. An approved card pays it (invoice.paid);
// a declined card is recorded, emits invoice.payment_failed, leaves the invoice open and is
// answered 402 like a declined confirm (the intent in error.payment_intent); a processing card
// leaves it open until the payment settles.
func (svc *Service) Pay(tx *db.Tx, a domain.Actor, id string, p PayParams) (*domain.Invoice, error) {
	inv, err := Get(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	outOfBand := p.PaidOutOfBand != nil && *p.PaidOutOfBand
	if outOfBand && p.PaymentMethod != nil {
		return nil, domain.Invalid("paid_out_of_band", "paid_out_of_band records a payment made outside troco; it cannot be combined with payment_method.")
	}
	switch inv.Status {
	case domain.InvoiceDraft:
	case domain.InvoiceOpen, domain.InvoiceUncollectible:
	default:
		return nil, stateConflict(inv, "paid")
	}
	if p.PaymentMethodType != nil && *p.PaymentMethodType != domain.MethodCreditCard {
		return svc.payAsync(tx, a, inv, p, outOfBand)
	}
	// Everything that can be refused is checked before a draft is finalized.
	var pm *domain.PaymentMethod
	var pi *domain.PaymentIntent
	if inv.AmountDue > 0 {
		method := domain.MethodCreditCard
		if outOfBand {
			method = ""
		}
		next, err := svc.nextAttempt(tx, a, inv, method, false)
		if err != nil {
			return nil, err
		}
		if pi = next.Reapply; pi == nil {
			pi = next.Reuse
		}
		if !outOfBand {
			if pm, err = paymentMethodFor(tx, a.Scope, inv, p.PaymentMethod); err != nil {
				return nil, err
			}
		}
	} else if p.PaymentMethod != nil {
		// Nothing to charge, but a named card is still checked, never silently ignored (one of
		// another organization or environment is 404 like everywhere else).
		if _, err = paymentMethodFor(tx, a.Scope, inv, p.PaymentMethod); err != nil {
			return nil, err
		}
	}
	if inv.Status == domain.InvoiceDraft {
		if err := finalize(tx, a, inv); err != nil {
			return nil, err
		}
		if inv.Status == domain.InvoicePaid {
			return inv, nil
		}
	}
	if outOfBand {
		if inv.PaymentIntent != nil { // one nextAttempt let through: declined, or waiting for nobody
			if _, err := svc.Payments.CancelIfOpen(tx, a, *inv.PaymentIntent, "automatic"); err != nil {
				return nil, err
			}
		}
		inv.PaidOutOfBand = true
		return inv, markPaid(tx, a, inv, nil)
	}
	before := *inv
	if pi == nil {
		amount, currency := inv.AmountRemaining, inv.Currency
		desc := domain.InvoicePaymentText(*inv.Number)
		if inv.Description != nil {
			desc = *inv.Description
		}
		pi, err = svc.Payments.CreateIntent(tx, a, payments.IntentParams{
			Amount: &amount, Currency: &currency, Customer: domain.Opt[string]{Set: true, V: inv.Customer},
			Description: domain.Opt[string]{Set: true, V: desc}, PaymentMethodTypes: []string{domain.MethodCreditCard},
			Metadata: domain.Opt[map[string]string]{Set: true, V: map[string]string{"invoice": inv.ID}},
		})
		if err != nil {
			return nil, err
		}
	}
	inv.PaymentIntent = &pi.ID
	if pi.Status != domain.PIStatusProcessing { // not the same attempt run again to apply a live answer
		inv.AttemptCount++
	}
	confirmed, cerr := svc.Payments.Confirm(tx, a, pi.ID, payments.ConfirmParams{PaymentMethodType: domain.MethodCreditCard, PaymentMethod: pm.ID})
	if payments.PendingOf(cerr) != nil {
		// A live processor is being called: keep the link to the intent for the run that applies
		// its answer.
		if err := tx.UpdateInvoice(a.Scope, inv); err != nil {
			return nil, err
		}
		return nil, cerr
	}
	if e, ok := domain.AsError(cerr); ok && e.KeepChanges {
		// Declined: record the attempt on the invoice, then answer the decline (402).
		if e.Charge != "" {
			inv.Charge = &e.Charge
		}
		inv.LastPaymentError = FailureOf(nil, e)
		if err := tx.SetChargesInvoice(a.Scope, pi.ID, inv.ID); err != nil {
			return nil, err
		}
		if p.OnDecline != nil {
			p.OnDecline(inv)
		}
		if err := tx.UpdateInvoice(a.Scope, inv); err != nil {
			return nil, err
		}
		if err := core.Emit(tx, a, EventPaymentFailed, inv, &before); err != nil {
			return nil, err
		}
		return nil, e
	}
	if cerr != nil {
		return nil, cerr
	}
	if confirmed.Status == domain.PIStatusSucceeded {
		return inv, markPaid(tx, a, inv, confirmed)
	}
	// The payment waits (a processing card): the invoice stays open and is paid when the
	// intent settles (IntentSettled).
	inv.Charge = confirmed.LatestCharge
	if err := tx.SetChargesInvoice(a.Scope, pi.ID, inv.ID); err != nil {
		return nil, err
	}
	if err := tx.UpdateInvoice(a.Scope, inv); err != nil {
		return nil, err
	}
	return inv, core.Emit(tx, a, EventUpdated, inv, &before)
}

// payAsync pays an invoice by PIX or boleto (payment_method_type): a draft is finalized, then a
// payment intent for the amount due now is confirmed with the customer's data, exactly as the
// hosted invoice page does; the invoice stays open (invoice.updated) with the intent, whose
// next_action carries the BR Code or the boleto, until the payer pays (invoice.paid). A PIX or
// boleto already waiting for the same amount is returned as it is.
func (svc *Service) payAsync(tx *db.Tx, a domain.Actor, inv *domain.Invoice, p PayParams, outOfBand bool) (*domain.Invoice, error) {
	method := *p.PaymentMethodType
	switch {
	case method != domain.MethodPix && method != domain.MethodBoleto:
		return nil, domain.Invalid("payment_method_type", "payment_method_type must be credit_card, pix or boleto.")
	case outOfBand:
		return nil, domain.Invalid("paid_out_of_band", "paid_out_of_band records a payment made outside troco; it cannot be combined with payment_method_type %s.", method)
	case p.PaymentMethod != nil:
		return nil, domain.Invalid("payment_method", "payment_method is a saved card; it cannot be combined with payment_method_type %s.", method)
	}
	if inv.Status == domain.InvoiceDraft {
		if err := finalize(tx, a, inv); err != nil {
			return nil, err
		}
		if inv.Status == domain.InvoicePaid {
			return inv, nil // nothing to pay
		}
	}
	if inv.AmountRemaining <= 0 {
		return inv, markPaid(tx, a, inv, nil)
	}
	paid, err := svc.PayHosted(tx, a, inv.ID, HostedPayParams{Method: method, Origin: p.Origin})
	return paid, customerDataError(err, inv.Customer, method)
}

// customerDataError restates a refusal of the payer's data as what it is through the API: the
// PIX or boleto takes the name, document and address of the invoice's customer (this request
// has no billing_address or customer_document of its own), so the error names customer and the
// customer's field to update.
func customerDataError(err error, customer, method string) error {
	e, ok := domain.AsError(err)
	if !ok || e.Status != http.StatusBadRequest || e.KeepChanges {
		return err
	}
	var field string
	switch {
	case strings.HasPrefix(e.Param, "billing_address"):
		field = "address" + strings.TrimPrefix(e.Param, "billing_address")
	case e.Param == "customer_document", e.Param == "customer_name", e.Param == "customer_email", e.Param == "customer_phone":
		field = strings.TrimPrefix(e.Param, "customer_")
	default:
		return err
	}
	out := *e
	out.Param = "customer"
	out.Format, out.Args = "", nil
	out.Message = fmt.Sprintf("A %s for this invoice takes the payer's data from customer %s: %s Update the customer's %s (POST /v1/customers/%s) and pay again.",
		method, customer, strings.ReplaceAll(strings.TrimSpace(e.Message), e.Param, field), field, customer)
	return &out
}

// paymentMethodFor resolves the card to charge: the one named (a saved card of the invoice's
// customer), else the subscription's default card, else the customer's newest saved card.
func paymentMethodFor(tx *db.Tx, s domain.Scope, inv *domain.Invoice, id *string) (*domain.PaymentMethod, error) {
	param := "payment_method"
	if id == nil && inv.Subscription != nil {
		sub, err := tx.FindSubscriptionByID(s, *inv.Subscription)
		if err != nil && !errors.Is(err, db.ErrNotFound) {
			return nil, err
		}
		if err == nil && sub.DefaultPaymentMethod != nil {
			id = sub.DefaultPaymentMethod
			// A Pix Automático default is charged by the renewal under its authorization, not
			// here: paying the invoice then uses the customer's newest saved card.
			if pm, err := tx.FindPaymentMethodByID(s, *id); err == nil && pm.Type == domain.MethodPixAutomatico {
				id = nil
			}
		}
	}
	if id == nil {
		pms, _, err := tx.ListPaymentMethods(s, db.PaymentMethodFilter{Customer: inv.Customer, Type: domain.MethodCreditCard}, db.ListParams{Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(pms) == 0 {
			e := domain.Missing(param)
			e.Message = fmt.Sprintf("Customer %s has no saved card to charge: send payment_method, attach a card to the customer, or pay with paid_out_of_band.", inv.Customer)
			return nil, e
		}
		return pms[0], nil
	}
	pm, err := tx.FindPaymentMethodByID(s, *id)
	if errors.Is(err, db.ErrNotFound) {
		return nil, domain.NotFound(param, "payment method", *id)
	}
	if err != nil {
		return nil, err
	}
	if pm.Type != domain.MethodCreditCard || pm.Card == nil {
		return nil, domain.Invalid(param, "Payment method %s is not a card; invoices are charged on a saved card.", pm.ID)
	}
	if pm.Customer == nil || *pm.Customer != inv.Customer {
		return nil, domain.Invalid(param, "Payment method %s is not attached to customer %s; attach it first.", pm.ID, inv.Customer)
	}
	return pm, nil
}

// markPaid records the payment of an invoice (by pi when it was charged through troco) and emits
// invoice.paid; a past_due subscription without other arrears becomes active again.
func markPaid(tx *db.Tx, a domain.Actor, inv *domain.Invoice, pi *domain.PaymentIntent) error {
	before := *inv
	if pi != nil && pi.AmountReceived > pi.Amount && pi.LatestCharge != nil {
		// A PIX or boleto paid after the due date with its fine and interest: the invoice
		// records what was paid on top of the amount the payment asked for.
		ch, err := tx.FindChargeByID(a.Scope, *pi.LatestCharge)
		if err != nil {
			return err
		}
		// Only a payment issued before the due date carries them (it asked for the bare total),
		// so they are the invoice's whole fine and interest.
		fine, interest := lateFeesPaid(ch)
		if fine+interest == pi.AmountReceived-pi.Amount {
			inv.FineAmount, inv.InterestAmount = fine, interest
			inv.SetTotals()
		}
	}
	inv.Status = domain.InvoicePaid
	inv.AmountPaid = inv.AmountDue
	inv.AmountRemaining = 0
	inv.StatusTransitions.PaidAt = domain.At(tx.Now)
	inv.LastPaymentError = nil
	if pi != nil {
		inv.PaymentIntent = &pi.ID
		inv.Charge = pi.LatestCharge
		if err := tx.SetChargesInvoice(a.Scope, pi.ID, inv.ID); err != nil {
			return err
		}
	}
	if err := tx.UpdateInvoice(a.Scope, inv); err != nil {
		return err
	}
	if err := core.Emit(tx, a, EventPaid, inv, &before); err != nil {
		return err
	}
	return leaveArrears(tx, a, inv)
}

// lateFeesPaid returns the fine and interest a settled PIX or boleto charge collected on top of
// its amount.
func lateFeesPaid(ch *domain.Charge) (fine, interest int64) {
	switch d := ch.PaymentMethodDetails; {
	case d.Pix != nil:
		return d.Pix.FineAmount, d.Pix.InterestAmount
	case d.Boleto != nil:
		return d.Boleto.FineAmount, d.Boleto.InterestAmount
	}
	return 0, 0
}

// Void voids an open or uncollectible invoice (nothing more is owed): a payment intent that can
// still be canceled is canceled; a payment in progress is a 409.
func (svc *Service) Void(tx *db.Tx, a domain.Actor, id string) (*domain.Invoice, error) {
	inv, err := Get(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if inv.Status != domain.InvoiceOpen && inv.Status != domain.InvoiceUncollectible {
		return nil, stateConflict(inv, "voided (only an open or uncollectible invoice can be)")
	}
	if inv.PaymentIntent != nil {
		pi, err := svc.Payments.GetIntent(tx, a.Scope, *inv.PaymentIntent)
		if err != nil {
			return nil, err
		}
		if pi.Waiting() || pi.Status == domain.PIStatusRequiresCapture {
			return nil, domain.Conflict(domain.CodeResourceStateConflict, "A payment of this invoice is in progress (payment intent %s is %s); it cannot be voided until it settles.", pi.ID, pi.Status)
		}
		if _, err := svc.Payments.CancelIfOpen(tx, a, pi.ID, "void_invoice"); err != nil {
			return nil, err
		}
	}
	before := *inv
	inv.Status = domain.InvoiceVoid
	inv.StatusTransitions.VoidedAt = domain.At(tx.Now)
	if err := tx.UpdateInvoice(a.Scope, inv); err != nil {
		return nil, err
	}
	if err := core.Emit(tx, a, EventVoided, inv, &before); err != nil {
		return nil, err
	}
	return inv, leaveArrears(tx, a, inv)
}

// MarkUncollectible marks an open invoice uncollectible: it is still owed (it can be paid or
// voided later) but no longer expected.
func MarkUncollectible(tx *db.Tx, a domain.Actor, id string) (*domain.Invoice, error) {
	inv, err := Get(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if inv.Status != domain.InvoiceOpen {
		return nil, stateConflict(inv, "marked uncollectible (only an open invoice can be)")
	}
	before := *inv
	inv.Status = domain.InvoiceUncollectible
	inv.StatusTransitions.MarkedUncollectibleAt = domain.At(tx.Now)
	if err := tx.UpdateInvoice(a.Scope, inv); err != nil {
		return nil, err
	}
	return inv, core.Emit(tx, a, EventMarkedUncollectible, inv, &before)
}

// IntentSettled is called by the payments engine after a waiting payment resolves: the open
// (or uncollectible) invoice that payment intent pays becomes paid, or records the failure
// (invoice.payment_failed) and stays open for another attempt.
func IntentSettled(tx *db.Tx, a domain.Actor, pi *domain.PaymentIntent) error {
	inv, err := tx.FindInvoiceByPaymentIntent(a.Scope, pi.ID)
	if errors.Is(err, db.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if inv.Status != domain.InvoiceOpen && inv.Status != domain.InvoiceUncollectible {
		return nil
	}
	switch pi.Status {
	case domain.PIStatusSucceeded:
		return markPaid(tx, a, inv, pi)
	case domain.PIStatusRequiresPaymentMethod, domain.PIStatusCanceled:
		before := *inv
		inv.Charge = pi.LatestCharge
		inv.LastPaymentError = FailureOf(pi, nil)
		if err := tx.UpdateInvoice(a.Scope, inv); err != nil {
			return err
		}
		return core.Emit(tx, a, EventPaymentFailed, inv, &before)
	}
	return nil
}

// VoidIfOpen voids an invoice that is still open or uncollectible and leaves any other as it is
// (a subscription that expires or pauses with behavior void).
func (svc *Service) VoidIfOpen(tx *db.Tx, a domain.Actor, id string) (*domain.Invoice, error) {
	inv, err := Get(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if inv.Status != domain.InvoiceOpen && inv.Status != domain.InvoiceUncollectible {
		return inv, nil
	}
	return svc.Void(tx, a, id)
}

// MarkUncollectibleIfOpen marks an open invoice uncollectible and leaves any other as it is.
func (svc *Service) MarkUncollectibleIfOpen(tx *db.Tx, a domain.Actor, id string) (*domain.Invoice, error) {
	inv, err := Get(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if inv.Status != domain.InvoiceOpen {
		return inv, nil
	}
	return MarkUncollectible(tx, a, id)
}

// RecordCharge records on an open invoice a charge made outside Pay by another way of paying (a
// Pix Automático charge of a renewal): err nil and pi succeeded pays the invoice (invoice.paid);
// otherwise the attempt is counted and invoice.payment_failed emitted, linked to pi when one
// was created (a charge refused before anything was charged has none).
func (svc *Service) RecordCharge(tx *db.Tx, a domain.Actor, id string, pi *domain.PaymentIntent, refusal ...error) (*domain.Invoice, error) {
	inv, err := tx.FindInvoiceByID(a.Scope, id)
	if err != nil {
		return nil, err
	}
	if inv.Status != domain.InvoiceOpen {
		return inv, nil
	}
	if pi != nil && pi.Status == domain.PIStatusSucceeded {
		inv.AttemptCount++
		return inv, markPaid(tx, a, inv, pi)
	}
	before := *inv
	inv.AttemptCount++
	var cause error
	if len(refusal) > 0 {
		cause = refusal[0]
	}
	inv.LastPaymentError = FailureOf(pi, cause)
	if pi != nil {
		inv.PaymentIntent, inv.Charge = &pi.ID, pi.LatestCharge
		if err := tx.SetChargesInvoice(a.Scope, pi.ID, inv.ID); err != nil {
			return nil, err
		}
	}
	if err := tx.UpdateInvoice(a.Scope, inv); err != nil {
		return nil, err
	}
	return inv, core.Emit(tx, a, EventPaymentFailed, inv, &before)
}

// FailureOf is the payment_error a failed attempt leaves on its invoice (last_payment_error):
// the failed intent's, or, for an attempt refused before anything was charged, the refusal
// (category invalid, its code and message).
func FailureOf(pi *domain.PaymentIntent, err error) *domain.PaymentError {
	if pi != nil && pi.LastPaymentError != nil {
		return pi.LastPaymentError
	}
	e, ok := domain.AsError(err)
	if !ok {
		return nil
	}
	if p, ok := e.PaymentIntent.(*domain.PaymentIntent); ok && p != nil && p.LastPaymentError != nil {
		return p.LastPaymentError
	}
	pe := &domain.PaymentError{Category: "invalid", Code: e.Code, Message: e.Message}
	if e.DeclineCode != "" {
		pe.Category, pe.Code = "issuer_declined", e.DeclineCode
	}
	return pe
}
