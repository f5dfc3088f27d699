package payments

import (
	"errors"
	"time"

	"troco/db"
	"troco/server/calendar"
	"troco/server/domain"
	"troco/server/pix"
)

// Charging under a Pix Automático authorization: the building block a subscription's renewal
// calls with the invoice as reference (billing's pix_automatico Collector). One call is one
// attempt: it succeeds at once in the sandbox, or fails with insufficient_funds when the
// authorization's customer e-mail was pixauto_insufficient. PixAutoRetryDates gives the business
// days of the retries after a failure.

// PixAutoRetries is how many retries follow a failed Pix Automático charge.
const PixAutoRetries = 3

// PixAutoChargeParams is one charge under an authorization.
type PixAutoChargeParams struct {
	// PaymentMethod is the pm_ of type pix_automatico an approval created.
	PaymentMethod string
	Amount        int64
	Description   *string
	// Reference names what the charge pays (the invoice of a renewal): a reference already paid
	// returns its payment intent and charges nothing again.
	Reference string
	Metadata  map[string]string
}

// PixAutoRetryDates are the business days of the retries after a charge due on due failed: the
// next PixAutoRetries business days.
func (s *Service) PixAutoRetryDates(due time.Time) []time.Time {
	out := make([]time.Time, 0, PixAutoRetries)
	d := calendar.Civil(due)
	for range PixAutoRetries {
		d = s.Calendar.Next(d)
		out = append(out, d)
	}
	return out
}

func errInsufficientFunds() *domain.PaymentError {
	return &domain.PaymentError{Category: "issuer_declined", Code: "insufficient_funds",
		Message:    "The payer's account had insufficient funds for this Pix Automático charge; it can be retried on the next business day.",
		AdviceCode: strPtr("try_again_later")}
}

// ChargePixAutomatico charges amount under the approved authorization of p.PaymentMethod and
// returns the payment intent: succeeded, or requires_payment_method with last_payment_error
// insufficient_funds. Refused before anything is written: a payment method that is not
// pix_automatico (400 payment_method), an authorization that is not approved (canceled, expired:
// 409), an amount above its max_amount (400 amount), a date outside start_date..end_date (409).
func (s *Service) ChargePixAutomatico(tx *db.Tx, a domain.Actor, p PixAutoChargeParams) (*domain.PaymentIntent, error) {
	pm, err := tx.FindPaymentMethodByID(a.Scope, p.PaymentMethod)
	if errors.Is(err, db.ErrNotFound) || (err == nil && pm.Type != domain.MethodPixAutomatico) {
		return nil, domain.Invalid("payment_method", "payment_method must be a pix_automatico payment method of this account (created by an approved Pix Automático authorization).")
	}
	if err != nil {
		return nil, err
	}
	pa, err := s.GetPixAuthorization(tx, a.Scope, pm.Metadata["pix_authorization"])
	if err != nil {
		return nil, err
	}
	today := calendar.Today(tx.Now).Format(calendar.Layout)
	switch {
	case pa.Status != domain.PixAuthApproved:
		return nil, domain.Conflict(domain.CodeResourceStateConflict, "The Pix Automático authorization %s is %s: nothing can be charged under it.", pa.ID, pa.Status)
	case p.Amount < MinAmount:
		return nil, domain.Invalid("amount", "amount must be at least %d centavos.", MinAmount)
	case p.Amount > pa.MaxAmount:
		return nil, domain.Invalid("amount", "amount %d is above the authorization's max_amount %d: the payer authorized at most that per charge.", p.Amount, pa.MaxAmount)
	case today < pa.StartDate || (pa.EndDate != nil && today > *pa.EndDate):
		return nil, domain.Conflict(domain.CodeResourceStateConflict, "Today (%s) is outside the authorization's period.", today)
	case p.Reference == "":
		return nil, domain.Missing("reference")
	}
	if paid, err := tx.PaidPixAutoCharge(a.Scope, pa.ID, p.Reference); err != nil {
		return nil, err
	} else if paid != "" {
		return s.GetIntent(tx, a.Scope, paid) // already paid: never charged twice
	}
	if a.Livemode {
		return s.chargePixAutoLive(tx, a, p, pm, pa)
	}
	rule, err := tx.PixAuthorizationRule(a.Scope, pa.ID)
	if err != nil {
		return nil, err
	}
	md := map[string]string{"pix_authorization": pa.ID, "reference": p.Reference}
	for k, v := range p.Metadata {
		md[k] = v
	}
	amount := p.Amount
	ip := IntentParams{Amount: &amount, Customer: domain.Opt[string]{Set: true, V: pa.Customer}, PaymentMethodTypes: []string{domain.MethodPix},
		Metadata: domain.Opt[map[string]string]{Set: true, V: md}}
	if p.Description != nil {
		ip.Description = domain.Opt[string]{Set: true, V: *p.Description}
	}
	pi, err := s.CreateIntent(tx, a, ip)
	if err != nil {
		return nil, err
	}
	before := *pi
	chargeID := domain.NewID(domain.PrefixCharge)
	ch := &domain.Charge{ID: chargeID, PaymentIntent: pi.ID, Customer: pi.Customer, Amount: pi.Amount, Currency: pi.Currency, Description: pi.Description,
		PaymentMethod: &pm.ID, BillingDetails: pm.BillingDetails, Metadata: copyMetadata(pi.Metadata), Status: domain.ChargeStatusPending,
		PaymentMethodDetails: domain.PaymentMethodDetails{Type: domain.MethodPix, Pix: &domain.PixDetails{TxID: pix.TxID(chargeID)}}}
	method := domain.MethodPix
	pi.PaymentMethodType, pi.PaymentMethod, pi.LatestCharge = &method, &pm.ID, &ch.ID
	if rule == PixAutoInsufficient {
		pe := errInsufficientFunds()
		ch.Status, ch.PaymentError = domain.ChargeStatusFailed, pe
		pi.Status, pi.LastPaymentError = domain.PIStatusRequiresPaymentMethod, pe
	} else {
		settle(pi, ch)
	}
	if err := tx.CreateCharge(a.Scope, ch); err != nil {
		return nil, err
	}
	if err := tx.UpdatePaymentIntent(a.Scope, pi); err != nil {
		return nil, err
	}
	if ch.Captured {
		org, err := tx.FindOrganizationByID(a.OrgID)
		if err != nil {
			return nil, err
		}
		if err := s.recordSale(tx, a.Scope, org, pi, ch); err != nil {
			return nil, err
		}
		if err := tx.RecordPixAutoCharge(a.Scope, pa.ID, p.Reference, pi.ID); err != nil {
			return nil, err
		}
	}
	chargeEvent, piEvent := transitionEvents(pi.Status)
	if err := emit(tx, a, chargeEvent, ch, nil); err != nil {
		return nil, err
	}
	return pi, emit(tx, a, piEvent, pi, &before)
}
