package payments

import (
	"context"
	"slices"

	"troco/db"
	"troco/server/domain"
	"troco/server/fees"
)

// The payment intent state machine (SPEC 3.4 plus Stripe's moves where the spec is silent):
//
//	requires_payment_method --confirm--> succeeded | requires_capture | processing | pending
//	                                     | requires_payment_method (declined or expired)
//	requires_capture --capture--> succeeded
//	pending, processing --settle (PIX/boleto payment, delayed rule, test helper)--> succeeded
//	pending, processing --expire--> requires_payment_method
//	requires_payment_method, requires_capture, pending, requires_action --cancel--> canceled
//
// succeeded and canceled are final; processing can only be settled or expired.

// AllMethods are the payment method types an intent can offer (by default in test mode).
var AllMethods = []string{domain.MethodCreditCard, domain.MethodPix, domain.MethodBoleto}

// DefaultMethods are the payment method types a new intent offers when the request names none:
// in test mode all of them; in live mode those a configured processor takes (Stripe's rule: the
// methods the account can use), so an intent never offers a method its confirmation would
// refuse with processor_unavailable. With no live processor at all every method stays offered,
// and a confirmation answers processor_unavailable naming the setting to configure.
func (s *Service) DefaultMethods(livemode bool) []string {
	if !livemode || s.Live == nil {
		return slices.Clone(AllMethods)
	}
	var out []string
	for _, m := range AllMethods {
		if s.Live.Available(m) == nil {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return slices.Clone(AllMethods)
	}
	return out
}

// CancellationReasons are the cancellation_reason values an intent can carry (Stripe's): the
// first four a caller may give (PublicCancellationReasons); troco sets the others itself
// (automatic: an authorization that expired; void_invoice: its invoice was voided; …).
var CancellationReasons = []string{"duplicate", "fraudulent", "requested_by_customer", "abandoned", "automatic", "expired", "failed_invoice", "void_invoice"}

// PublicCancellationReasons are the cancellation_reason values POST /v1/payment-intents/{id}/cancel
// accepts (Stripe's).
var PublicCancellationReasons = CancellationReasons[:4]

func confirmable(status string) bool {
	return status == domain.PIStatusRequiresPaymentMethod || status == domain.PIStatusRequiresConfirmation
}

func cancelable(status string) bool {
	switch status {
	case domain.PIStatusRequiresPaymentMethod, domain.PIStatusRequiresConfirmation, domain.PIStatusRequiresCapture,
		domain.PIStatusRequiresAction, domain.PIStatusPending:
		return true
	}
	return false
}

// IntentParams is the body of payment intent create and update.
type IntentParams struct {
	Amount              *int64                        `json:"amount"`
	Currency            *string                       `json:"currency"`
	Customer            domain.Opt[string]            `json:"customer"`
	Description         domain.Opt[string]            `json:"description"`
	PaymentMethodTypes  []string                      `json:"payment_method_types"`
	CaptureMethod       *string                       `json:"capture_method"`
	InterestPayer       *string                       `json:"interest_payer"`
	StatementDescriptor domain.Opt[string]            `json:"statement_descriptor"`
	Metadata            domain.Opt[map[string]string] `json:"metadata"`

	// customer is the customer apply read for Customer (CreateAndConfirm's confirmation uses it
	// instead of reading it again in the same transaction).
	customer *domain.Customer
}

// moneyFieldsSet reports whether p changes anything but description and metadata.
func (p *IntentParams) moneyFieldsSet() bool {
	return p.Amount != nil || p.Currency != nil || p.Customer.Set || p.PaymentMethodTypes != nil || p.CaptureMethod != nil ||
		p.InterestPayer != nil || p.StatementDescriptor.Set
}

func (p *IntentParams) apply(tx *db.Tx, s domain.Scope, pi *domain.PaymentIntent) error {
	if p.Amount != nil {
		if err := domain.ValidateAmount("amount", *p.Amount, MinAmount); err != nil {
			return err
		}
		pi.Amount = *p.Amount
	}
	if p.Currency != nil {
		if *p.Currency == "" {
			return domain.Invalid("currency", "currency must be brl (lowercase ISO 4217).")
		}
		cur, err := domain.ValidateCurrency("currency", *p.Currency)
		if err != nil {
			return err
		}
		pi.Currency = cur
	}
	if p.Customer.Set {
		if p.Customer.Null || p.Customer.V == "" {
			pi.Customer = nil
		} else {
			c, err := tx.FindCustomerByID(s, p.Customer.V)
			if err != nil {
				return notFound(err, "customer", "customer", p.Customer.V)
			}
			pi.Customer, p.customer = &c.ID, c
		}
	}
	if p.PaymentMethodTypes != nil {
		if len(p.PaymentMethodTypes) == 0 {
			return domain.Invalid("payment_method_types", "payment_method_types must list at least one of credit_card, pix and boleto.")
		}
		types := []string{}
		for _, t := range p.PaymentMethodTypes {
			if !slices.Contains(AllMethods, t) {
				return domain.Invalid("payment_method_types", "payment_method_types accepts credit_card, pix and boleto; got %q.", t)
			}
			if !slices.Contains(types, t) {
				types = append(types, t)
			}
		}
		pi.PaymentMethodTypes = types
	}
	if p.CaptureMethod != nil {
		if *p.CaptureMethod != domain.CaptureAutomatic && *p.CaptureMethod != domain.CaptureManual {
			return domain.Invalid("capture_method", "capture_method must be automatic or manual.")
		}
		pi.CaptureMethod = *p.CaptureMethod
	}
	if p.InterestPayer != nil {
		payer, ok := fees.ParseInterestPayer(*p.InterestPayer)
		if !ok || *p.InterestPayer == "" {
			return domain.Invalid("interest_payer", "interest_payer must be organization or buyer.")
		}
		pi.InterestPayer = string(payer)
	}
	if err := applyText(&pi.Description, p.Description, "description", 1000); err != nil {
		return err
	}
	if err := applyText(&pi.StatementDescriptor, p.StatementDescriptor, "statement_descriptor", 22); err != nil {
		return err
	}
	if p.Metadata.Set {
		if err := domain.ValidateMetadata(p.Metadata.V); err != nil {
			return err
		}
		pi.Metadata = domain.MergeMetadata(pi.Metadata, p.Metadata.V)
		if err := domain.ValidateMetadata(pi.Metadata); err != nil {
			return err
		}
	}
	return nil
}

func applyText(dst **string, o domain.Opt[string], param string, maxLen int) error {
	if !o.Set {
		return nil
	}
	if o.Null || o.V == "" {
		*dst = nil
		return nil
	}
	if err := domain.ValidateText(param, o.V, maxLen); err != nil {
		return err
	}
	*dst = strPtr(o.V)
	return nil
}

// CreateIntent creates a payment intent in requires_payment_method and emits payment_intent.created.
func (s *Service) CreateIntent(tx *db.Tx, a domain.Actor, p IntentParams) (*domain.PaymentIntent, error) {
	pi, _, err := s.createIntent(tx, a, &p, nil)
	return pi, err
}

// createIntent is CreateIntent. When deferRow, called with the valid new intent, reports true,
// the intent gets its id, timestamps and payment_intent.created event but no row yet (deferred
// is true): the caller writes it in this transaction with tx.InsertPaymentIntent, once, in the
// state it leaves it in (CreateAndConfirm), or rolls the transaction back.
func (s *Service) createIntent(tx *db.Tx, a domain.Actor, p *IntentParams, deferRow func(*domain.PaymentIntent) bool) (pi *domain.PaymentIntent, deferred bool, err error) {
	if p.Amount == nil {
		return nil, false, domain.Missing("amount")
	}
	pi = &domain.PaymentIntent{
		Status: domain.PIStatusRequiresPaymentMethod, Currency: "brl", CaptureMethod: domain.CaptureAutomatic,
		InterestPayer: string(fees.InterestPayerOrganization), PaymentMethodTypes: s.DefaultMethods(a.Scope.Livemode), Metadata: domain.Metadata{},
	}
	if err := p.apply(tx, a.Scope, pi); err != nil {
		return nil, false, err
	}
	create := tx.CreatePaymentIntent
	if deferRow != nil && deferRow(pi) {
		create, deferred = tx.NewPaymentIntent, true
	}
	if err := create(a.Scope, pi); err != nil {
		return nil, false, err
	}
	return pi, deferred, emit(tx, a, "payment_intent.created", pi, nil)
}

// GetIntent returns a payment intent of the scope.
func (s *Service) GetIntent(tx *db.Tx, sc domain.Scope, id string) (*domain.PaymentIntent, error) {
	pi, err := tx.FindPaymentIntentByID(sc, id)
	return pi, notFound(err, "id", "payment intent", id)
}

// UpdateIntent changes an intent: description and metadata at any time but after cancellation,
// amounts, customer and options only while it waits for a payment method.
//
// On an intent another domain owns, the fields that owner decides are refused (Owner.DirectUpdate);
// the owner itself updates through UpdateOwned.
func (s *Service) UpdateIntent(tx *db.Tx, a domain.Actor, id string, p IntentParams) (*domain.PaymentIntent, error) {
	if s.Owner.DirectUpdate != nil {
		if err := s.Owner.DirectUpdate(tx, a.Scope, id, p); err != nil {
			return nil, err
		}
	}
	return s.updateIntent(tx, a, id, p)
}

// UpdateOwned is UpdateIntent for the domain that owns the intent.
func (s *Service) UpdateOwned(tx *db.Tx, a domain.Actor, id string, p IntentParams) (*domain.PaymentIntent, error) {
	return s.updateIntent(tx, a, id, p)
}

func (s *Service) updateIntent(tx *db.Tx, a domain.Actor, id string, p IntentParams) (*domain.PaymentIntent, error) {
	pi, err := s.GetIntent(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if pi.Status == domain.PIStatusCanceled || (p.moneyFieldsSet() && !confirmable(pi.Status)) {
		return nil, stateError("payment intent", pi.ID, pi.Status, "update")
	}
	before := *pi
	if err := p.apply(tx, a.Scope, pi); err != nil {
		return nil, err
	}
	if err := tx.UpdatePaymentIntent(a.Scope, pi); err != nil {
		return nil, err
	}
	return pi, emit(tx, a, "payment_intent.updated", pi, &before)
}

// CancelParams is the body of a cancellation.
type CancelParams struct {
	CancellationReason *string `json:"cancellation_reason"`
}

// CancelIntent cancels an intent that has not been paid: from requires_payment_method,
// requires_capture (the authorization is released) or a waiting PIX/boleto (its pending charge
// fails with payment_canceled). Succeeded and processing intents cannot be canceled. The
// AfterSettle hook then runs, so the checkout session of the intent follows.
func (s *Service) CancelIntent(tx *db.Tx, a domain.Actor, id string, p CancelParams) (*domain.PaymentIntent, error) {
	if p.CancellationReason != nil && !slices.Contains(PublicCancellationReasons, *p.CancellationReason) {
		return nil, domain.Invalid("cancellation_reason", "cancellation_reason must be one of duplicate, fraudulent, requested_by_customer or abandoned.")
	}
	pi, err := s.cancel(tx, a, id, p)
	if err != nil {
		return nil, err
	}
	return pi, s.afterSettle(tx, a, pi)
}

// cancel is CancelIntent without the hook.
func (s *Service) cancel(tx *db.Tx, a domain.Actor, id string, p CancelParams) (*domain.PaymentIntent, error) {
	pi, err := s.GetIntent(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if p.CancellationReason != nil && !slices.Contains(CancellationReasons, *p.CancellationReason) {
		return nil, domain.Invalid("cancellation_reason", "cancellation_reason must be one of duplicate, fraudulent, requested_by_customer or abandoned.")
	}
	if !cancelable(pi.Status) {
		return nil, stateError("payment intent", pi.ID, pi.Status, "cancel")
	}
	if pi.Status == domain.PIStatusRequiresCapture && pi.LatestCharge != nil {
		// Release the authorization at the processor (two phases in live mode).
		proc, err := s.processor(a.Livemode, domain.MethodCreditCard)
		if err != nil {
			return nil, err
		}
		if call, err := s.afterCall(tx, a, proc, pi, CallVoid, "cancelation"); err != nil {
			return nil, err
		} else if call == nil && !proc.InTransaction() {
			ch, err := tx.FindChargeByID(a.Scope, *pi.LatestCharge)
			if err != nil {
				return nil, err
			}
			ref, err := chargeRef(tx, a.Scope, ch)
			if err != nil {
				return nil, err
			}
			c, err := s.reserve(tx, a.Scope, CallVoid, domain.MethodCreditCard, pi.ID, ch.ID, "", Reference(ch.ID+"/void"), ch.Amount, p)
			if err != nil {
				return nil, err
			}
			return nil, pendingError(&Pending{CallID: c.ID, ref: ref, amount: ch.Amount})
		} else if call == nil {
			if err := proc.Void(context.Background(), ChargeRef{ChargeID: *pi.LatestCharge, Method: domain.MethodCreditCard}); err != nil {
				return nil, err
			}
		}
	}
	before := *pi
	if pi.Status == domain.PIStatusRequiresCapture && pi.LatestCharge != nil {
		if err := releaseAuthorization(tx, a, *pi.LatestCharge); err != nil {
			return nil, err
		}
	}
	if pi.LatestCharge != nil && (pi.Status == domain.PIStatusPending || pi.Status == domain.PIStatusRequiresAction) {
		ch, err := tx.FindChargeByID(a.Scope, *pi.LatestCharge)
		if err != nil {
			return nil, err
		}
		if ch.Status == domain.ChargeStatusPending {
			chBefore := *ch
			ch.Status = domain.ChargeStatusFailed
			ch.PaymentError = canceledError()
			if err := tx.UpdateCharge(a.Scope, ch); err != nil {
				return nil, err
			}
			if err := emit(tx, a, "charge.failed", ch, &chBefore); err != nil {
				return nil, err
			}
		}
	}
	if err := tx.DeleteTransitions(a.Scope, pi.ID); err != nil {
		return nil, err
	}
	pi.Status = domain.PIStatusCanceled
	pi.CanceledAt = domain.At(tx.Now)
	pi.CancellationReason = p.CancellationReason
	pi.AmountCapturable = 0
	if err := tx.UpdatePaymentIntent(a.Scope, pi); err != nil {
		return nil, err
	}
	return pi, emit(tx, a, "payment_intent.canceled", pi, &before)
}

// releaseAuthorization records the release of an uncaptured card authorization the way Stripe
// shows it: the charge stays succeeded and captured false, and a refund of the whole authorized
// amount (status succeeded, reason null) makes it refunded with amount_refunded = amount
// (refund.created, charge.refunded). No money was taken, so no ledger entry is written and the
// buyer gets no refund e-mail.
func releaseAuthorization(tx *db.Tx, a domain.Actor, chargeID string) error {
	ch, err := tx.FindChargeByID(a.Scope, chargeID)
	if err != nil {
		return err
	}
	if ch.Status != domain.ChargeStatusSucceeded || ch.Captured || ch.Refunded {
		return nil
	}
	amount := ch.Amount - ch.AmountRefunded
	r := &domain.Refund{Amount: amount, Charge: ch.ID, Currency: ch.Currency, PaymentIntent: ch.PaymentIntent, Status: "succeeded",
		Metadata: domain.Metadata{}, Release: true}
	if err := tx.CreateRefund(a.Scope, r); err != nil {
		return err
	}
	chBefore := *ch
	ch.AmountRefunded, ch.Refunded = ch.Amount, true
	if err := tx.UpdateCharge(a.Scope, ch); err != nil {
		return err
	}
	if ch, err = tx.FindChargeByID(a.Scope, ch.ID); err != nil {
		return err
	}
	if err := emit(tx, a, "refund.created", r, nil); err != nil {
		return err
	}
	return emit(tx, a, "charge.refunded", ch, &chBefore)
}

// CancelIfOpen cancels an intent that can still be canceled with reason and leaves any other
// intent as it is. Its callers cancel the intent as part of a change of their own object (an
// invoice voided, a checkout session's discount), so the AfterSettle hook does not run.
func (s *Service) CancelIfOpen(tx *db.Tx, a domain.Actor, id, reason string) (*domain.PaymentIntent, error) {
	pi, err := s.GetIntent(tx, a.Scope, id)
	if err != nil || !cancelable(pi.Status) {
		return pi, err
	}
	return s.cancel(tx, a, id, CancelParams{CancellationReason: &reason})
}

// CaptureParams is the body of a capture.
type CaptureParams struct {
	AmountToCapture *int64 `json:"amount_to_capture"`
}

// CaptureIntent captures an authorized card payment, fully or partially (the remainder is
// released, never charged), records its ledger entries and emits charge.captured and
// payment_intent.succeeded.
func (s *Service) CaptureIntent(tx *db.Tx, a domain.Actor, id string, p CaptureParams) (*domain.PaymentIntent, error) {
	pi, err := s.GetIntent(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if pi.Status != domain.PIStatusRequiresCapture || pi.LatestCharge == nil {
		return nil, stateError("payment intent", pi.ID, pi.Status, "capture")
	}
	ch, err := tx.FindChargeByID(a.Scope, *pi.LatestCharge)
	if err != nil {
		return nil, err
	}
	amount := pi.AmountCapturable
	if p.AmountToCapture != nil {
		if *p.AmountToCapture < 1 || *p.AmountToCapture > pi.AmountCapturable {
			return nil, domain.Invalid("amount_to_capture", "amount_to_capture must be between 1 and the capturable amount (%d).", pi.AmountCapturable)
		}
		amount = *p.AmountToCapture
	}
	proc, err := s.processor(a.Livemode, domain.MethodCreditCard)
	if err != nil {
		return nil, err
	}
	if call, err := s.afterCall(tx, a, proc, pi, CallCapture, "capture"); err != nil {
		return nil, err
	} else if call != nil {
		amount = call.Amount // the answered capture, applied now
	} else if !proc.InTransaction() {
		ref, err := chargeRef(tx, a.Scope, ch)
		if err != nil {
			return nil, err
		}
		c, err := s.reserve(tx, a.Scope, CallCapture, domain.MethodCreditCard, pi.ID, ch.ID, "", Reference(ch.ID+"/capture"), amount, struct{}{})
		if err != nil {
			return nil, err
		}
		return nil, pendingError(&Pending{CallID: c.ID, ref: ref, amount: amount})
	} else if err := proc.Capture(context.Background(), ChargeRef{ChargeID: ch.ID, Method: domain.MethodCreditCard, Amount: ch.Amount}, amount); err != nil {
		return nil, err
	}
	org, err := tx.FindOrganizationByID(a.OrgID)
	if err != nil {
		return nil, err
	}
	if err := tx.DeleteTransitions(a.Scope, pi.ID); err != nil {
		return nil, err // the authorization's automatic expiry
	}
	before, chBefore := *pi, *ch
	ch.Captured, ch.AmountCaptured = true, amount
	if err := tx.UpdateCharge(a.Scope, ch); err != nil {
		return nil, err
	}
	pi.Status, pi.AmountReceived, pi.AmountCapturable = domain.PIStatusSucceeded, amount, 0
	if err := tx.UpdatePaymentIntent(a.Scope, pi); err != nil {
		return nil, err
	}
	if err := s.recordSale(tx, a.Scope, org, pi, ch); err != nil {
		return nil, err
	}
	if err := tx.ReleaseDisputeSteps(a.Scope, ch.ID, tx.Now.Add(DisputeOpenDelay).Unix()); err != nil {
		return nil, err // a dispute test card's dispute opens a minute after the capture
	}
	if err := emit(tx, a, "charge.captured", ch, &chBefore); err != nil {
		return nil, err
	}
	if err := emit(tx, a, "payment_intent.succeeded", pi, &before); err != nil {
		return nil, err
	}
	return pi, s.afterSettle(tx, a, pi)
}

// afterSettle runs the AfterSettle hook, when set, on an intent that reached a final state.
func (s *Service) afterSettle(tx *db.Tx, a domain.Actor, pi *domain.PaymentIntent) error {
	if s.AfterSettle == nil {
		return nil
	}
	return s.AfterSettle(tx, a, pi)
}
