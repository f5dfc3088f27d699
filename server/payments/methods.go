package payments

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"troco/db"
	"troco/server/card"
	"troco/server/core"
	"troco/server/document"
	"troco/server/domain"
)

// Payment methods and setup intents. A card payment method keeps brand, last4, expiry, a keyed
// fingerprint and, in test mode, its SPEC 7.1 behaviour key (BehaviorKey); never the number or
// CVC. Saving a card on a customer (attach, a setup intent, save_payment_method) verifies it
// with the processor, so the SPEC 7.1 decline cards cannot be saved; a saved card charged again
// outside the hosted checkout is a "reuse" (SPEC 7.1).

// BillingDetailsParams is the billing_details object of a request.
type BillingDetailsParams struct {
	Name     *string         `json:"name"`
	Email    *string         `json:"email"`
	Phone    *string         `json:"phone"`
	Document *string         `json:"document"`
	Address  *domain.Address `json:"address"`
}

func (p *BillingDetailsParams) details() (domain.BillingDetails, error) {
	var b domain.BillingDetails
	if p == nil {
		return b, nil
	}
	for _, f := range []struct {
		dst   **string
		v     *string
		param string
		max   int
	}{{&b.Name, p.Name, "billing_details[name]", 256}, {&b.Email, p.Email, "billing_details[email]", 254}, {&b.Phone, p.Phone, "billing_details[phone]", 32}} {
		if f.v == nil || strings.TrimSpace(*f.v) == "" {
			continue
		}
		v := strings.TrimSpace(*f.v)
		if err := domain.ValidateText(f.param, v, f.max); err != nil {
			return b, err
		}
		*f.dst = &v
	}
	if b.Email != nil {
		if err := domain.ValidateEmail("billing_details[email]", *b.Email); err != nil {
			return b, err
		}
	}
	if p.Document != nil && *p.Document != "" {
		doc, err := document.Parse(*p.Document)
		if err != nil {
			return b, domain.Invalid("billing_details[document]", "billing_details[document] must be a valid CPF or CNPJ: %v.", err)
		}
		b.Document, b.DocumentType = strPtr(doc.Number), strPtr(string(doc.Type))
	}
	if p.Address != nil {
		a := *p.Address
		if err := core.ValidateAddress("billing_details[address]", &a); err != nil {
			return b, err
		}
		b.Address = &a
	}
	return b, nil
}

// PaymentMethodParams is the body of POST /v1/payment-methods.
type PaymentMethodParams struct {
	Type           string                        `json:"type"`
	Card           *CardParams                   `json:"card"`
	BillingDetails *BillingDetailsParams         `json:"billing_details"`
	Metadata       domain.Opt[map[string]string] `json:"metadata"`
}

// cardError is a 402 card_error answered before anything is recorded.
func cardError(code, param, message string) *domain.Error {
	return &domain.Error{Status: http.StatusPaymentRequired, Type: domain.TypeCard, Code: code, Param: param, Message: message}
}

// CreatePaymentMethod creates an unattached card payment method (type credit_card). PIX and
// boleto payment methods are created by their confirmations. Nothing is charged or verified
// here: verification happens when the card is saved on a customer (attach, setup intent) or
// charged, which in live mode needs a processor.
func (s *Service) CreatePaymentMethod(tx *db.Tx, a domain.Actor, p PaymentMethodParams) (*domain.PaymentMethod, error) {
	switch p.Type {
	case "":
		return nil, domain.Missing("type")
	case domain.MethodCreditCard:
	default:
		return nil, domain.Invalid("type", "Only credit_card payment methods can be created; PIX and boleto are chosen when confirming a payment intent.")
	}
	if p.Card == nil {
		return nil, domain.Missing("card")
	}
	in := p.Card.input()
	if cerr := in.Validate(tx.Now); cerr != nil {
		return nil, cardError(cerr.Code, cerr.Param, cerr.Message)
	}
	billing, err := p.BillingDetails.details()
	if err != nil {
		return nil, err
	}
	if billing.Name == nil && in.HolderName != "" {
		billing.Name = strPtr(in.HolderName)
	}
	pm := s.newCardMethod(in, billing, a.Scope)
	if p.Metadata.Set {
		if err := domain.ValidateMetadata(p.Metadata.V); err != nil {
			return nil, err
		}
		pm.Metadata = domain.MergeMetadata(nil, p.Metadata.V)
	}
	if err := tx.CreatePaymentMethod(a.Scope, pm); err != nil {
		return nil, err
	}
	return pm, nil
}

// GetPaymentMethod returns a payment method of the scope.
func (s *Service) GetPaymentMethod(tx *db.Tx, sc domain.Scope, id string) (*domain.PaymentMethod, error) {
	pm, err := tx.FindPaymentMethodByID(sc, id)
	return pm, notFound(err, "id", "payment method", id)
}

// AttachParams is the body of attach.
type AttachParams struct {
	Customer string `json:"customer"`
}

// verifyCard asks the sandbox whether a saved test card may be attached (the SPEC 7.1 decline
// cards cannot be saved). A live card is saved with the processor only while its number is
// known (a setup intent or a payment confirmed with save_payment_method): an existing live
// payment method can be attached only when it was saved so before.
func (s *Service) verifyCard(tx *db.Tx, a domain.Actor, pm *domain.PaymentMethod) (*domain.PaymentError, error) {
	proc, err := s.processor(a.Livemode, domain.MethodCreditCard)
	if err != nil {
		return nil, err
	}
	if !proc.InTransaction() {
		if _, err := tx.FindCardToken(a.Scope, pm.ID); errors.Is(err, db.ErrNotFound) {
			return nil, domain.Invalid("id", "Payment method %s was not saved with the live card processor, so it cannot be attached; save the card with a setup intent confirmed with card (or while paying, with save_payment_method).", pm.ID)
		} else if err != nil {
			return nil, err
		}
		return nil, nil
	}
	res, err := proc.SaveCard(context.Background(), SaveCardRequest{SavedBehavior: pm.SimBehavior, Brand: pm.Card.Brand})
	if err != nil {
		return nil, fmt.Errorf("payments: verify card: %w", err)
	}
	return res.Decline, nil
}

// AttachPaymentMethod saves a card on a customer after verifying it; attaching it again to the
// same customer changes nothing, to another customer is a 400.
func (s *Service) AttachPaymentMethod(tx *db.Tx, a domain.Actor, id string, p AttachParams) (*domain.PaymentMethod, error) {
	pm, err := s.GetPaymentMethod(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if p.Customer == "" {
		return nil, domain.Missing("customer")
	}
	cus, err := tx.FindCustomerByID(a.Scope, p.Customer)
	if err != nil {
		return nil, notFound(err, "customer", "customer", p.Customer)
	}
	if pm.Type != domain.MethodCreditCard {
		return nil, domain.Invalid("id", "Only card payment methods can be attached to a customer.")
	}
	if pm.Customer != nil {
		if *pm.Customer == cus.ID {
			return pm, nil
		}
		return nil, domain.Invalid("customer", "Payment method %s is already attached to another customer; detach it first.", pm.ID)
	}
	decline, err := s.verifyCard(tx, a, pm)
	if err != nil {
		return nil, err
	}
	if decline != nil {
		e := declineError(decline, "", nil)
		e.KeepChanges = false
		return nil, e
	}
	before := *pm
	pm.Customer = &cus.ID
	if err := tx.UpdatePaymentMethod(a.Scope, pm); err != nil {
		return nil, err
	}
	return pm, emit(tx, a, "payment_method.attached", pm, &before)
}

// DetachPaymentMethod removes a card from its customer; it can no longer be charged as saved.
func (s *Service) DetachPaymentMethod(tx *db.Tx, a domain.Actor, id string) (*domain.PaymentMethod, error) {
	pm, err := s.GetPaymentMethod(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if pm.Customer == nil {
		return nil, domain.Invalid("id", "Payment method %s is not attached to a customer.", pm.ID)
	}
	before := *pm
	pm.Customer = nil
	if err := tx.UpdatePaymentMethod(a.Scope, pm); err != nil {
		return nil, err
	}
	return pm, emit(tx, a, "payment_method.detached", pm, &before)
}

// SetupIntentParams is the body of POST /v1/setup-intents.
type SetupIntentParams struct {
	Customer           string                        `json:"customer"`
	PaymentMethodTypes []string                      `json:"payment_method_types"`
	Description        *string                       `json:"description"`
	Usage              string                        `json:"usage"`
	Metadata           domain.Opt[map[string]string] `json:"metadata"`
}

// CreateSetupIntent creates a setup intent that will save a card (on its customer, when given).
func (s *Service) CreateSetupIntent(tx *db.Tx, a domain.Actor, p SetupIntentParams) (*domain.SetupIntent, error) {
	si := &domain.SetupIntent{Status: domain.SetupStatusRequiresPaymentMethod, PaymentMethodTypes: []string{domain.MethodCreditCard}, Usage: "off_session", Metadata: domain.Metadata{}}
	if p.Customer != "" {
		cus, err := tx.FindCustomerByID(a.Scope, p.Customer)
		if err != nil {
			return nil, notFound(err, "customer", "customer", p.Customer)
		}
		si.Customer = &cus.ID
	}
	for _, t := range p.PaymentMethodTypes {
		if t != domain.MethodCreditCard {
			return nil, domain.Invalid("payment_method_types", "Setup intents save cards only: payment_method_types must be [\"credit_card\"].")
		}
	}
	switch p.Usage {
	case "":
	case "off_session", "on_session":
		si.Usage = p.Usage
	default:
		return nil, domain.Invalid("usage", "usage must be off_session or on_session.")
	}
	if p.Description != nil && *p.Description != "" {
		if err := domain.ValidateText("description", *p.Description, 1000); err != nil {
			return nil, err
		}
		si.Description = p.Description
	}
	if p.Metadata.Set {
		if err := domain.ValidateMetadata(p.Metadata.V); err != nil {
			return nil, err
		}
		si.Metadata = domain.MergeMetadata(nil, p.Metadata.V)
	}
	if err := tx.CreateSetupIntent(a.Scope, si); err != nil {
		return nil, err
	}
	return si, emit(tx, a, "setup_intent.created", si, nil)
}

// GetSetupIntent returns a setup intent of the scope.
func (s *Service) GetSetupIntent(tx *db.Tx, sc domain.Scope, id string) (*domain.SetupIntent, error) {
	si, err := tx.FindSetupIntentByID(sc, id)
	return si, notFound(err, "id", "setup intent", id)
}

// SetupConfirmParams is the body of a setup intent confirmation.
type SetupConfirmParams struct {
	ClientSecret   *string               `json:"client_secret"`
	Card           *CardParams           `json:"card"`
	PaymentMethod  string                `json:"payment_method"`
	BillingDetails *BillingDetailsParams `json:"billing_details"`
}

// ConfirmSetupIntent verifies a card and saves it: succeeded with payment_method set (attached
// to the customer, when the setup intent has one). A SPEC 7.1 decline card fails the setup:
// requires_payment_method with last_setup_error, setup_intent.setup_failed, and a 402 whose
// recording commits. Live mode needs an active organization and a card processor: the typed
// card is saved with it (Cielo's Cartão Protegido) on the two-phase path, the setup intent
// processing meanwhile, and the processor's token is stored sealed for later charges.
func (s *Service) ConfirmSetupIntent(tx *db.Tx, a domain.Actor, id string, p SetupConfirmParams) (*domain.SetupIntent, error) {
	si, err := s.GetSetupIntent(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if p.ClientSecret != nil && !SecretMatches(si.ClientSecret, *p.ClientSecret) {
		return nil, domain.Invalid("client_secret", "The client_secret does not match this setup intent.")
	}
	if si.Status == domain.SetupStatusProcessing {
		// A live card being saved: apply the processor's answer once it is recorded.
		call, err := openCall(tx, a.Scope, si.ID, CallSaveCard)
		if err != nil {
			return nil, err
		}
		if call != nil && call.State == db.CallReserved {
			return si, nil // the answer is not known yet: the setup intent stays processing
		}
		if call != nil {
			return s.applySaveCall(tx, a, call)
		}
	}
	if si.Status != domain.SetupStatusRequiresPaymentMethod {
		return nil, stateError("setup intent", si.ID, si.Status, "confirm")
	}
	if a.Livemode {
		org, err := tx.FindOrganizationByID(a.OrgID)
		if err != nil {
			return nil, err
		}
		if org.ActivationStatus != domain.ActivationActive {
			return nil, errNotActivated()
		}
	}
	billing, err := p.BillingDetails.details()
	if err != nil {
		return nil, err
	}
	var in *card.Input
	var pm *domain.PaymentMethod
	switch {
	case p.Card != nil && p.PaymentMethod != "":
		return nil, domain.Invalid("payment_method", "Send either card or payment_method, not both.")
	case p.Card != nil:
		v := p.Card.input()
		if cerr := v.Validate(tx.Now); cerr != nil {
			e := cardError(cerr.Code, cerr.Param, cerr.Message)
			e.SetupIntent = si
			return nil, e
		}
		in = &v
		if billing.Name == nil && v.HolderName != "" {
			billing.Name = strPtr(v.HolderName)
		}
	case p.PaymentMethod != "":
		if pm, err = tx.FindPaymentMethodByID(a.Scope, p.PaymentMethod); err != nil {
			return nil, notFound(err, "payment_method", "payment method", p.PaymentMethod)
		}
		if pm.Type != domain.MethodCreditCard {
			return nil, domain.Invalid("payment_method", "Setup intents save cards only.")
		}
		if pm.Customer != nil && (si.Customer == nil || *pm.Customer != *si.Customer) {
			return nil, domain.Invalid("payment_method", "Payment method %s is attached to another customer.", pm.ID)
		}
	default:
		return nil, domain.Missing("card")
	}
	proc, err := s.processor(a.Livemode, domain.MethodCreditCard)
	if err != nil {
		return nil, err
	}
	if pm != nil && !proc.InTransaction() {
		// A live payment method keeps no card number: it can be set up only when the
		// processor already holds its token.
		if _, err := tx.FindCardToken(a.Scope, pm.ID); errors.Is(err, db.ErrNotFound) {
			return nil, domain.Invalid("payment_method", "Payment method %s was not saved with the live card processor; confirm the setup intent with card instead.", pm.ID)
		} else if err != nil {
			return nil, err
		}
		return s.finishSetup(tx, a, si, pm, nil, "")
	}
	if pm == nil {
		pm = s.newCardMethod(*in, billing, a.Scope)
		if err := tx.CreatePaymentMethod(a.Scope, pm); err != nil {
			return nil, err
		}
	}
	req := SaveCardRequest{Reference: Reference(pm.ID), Card: in, Brand: pm.Card.Brand, SavedBehavior: pm.SimBehavior, Customer: setupCustomerName(tx, a.Scope, si, billing)}
	if !proc.InTransaction() {
		return s.reserveSave(tx, a, si, pm, req)
	}
	res, err := proc.SaveCard(context.Background(), req)
	if err != nil {
		return nil, fmt.Errorf("payments: save card: %w", err)
	}
	return s.finishSetup(tx, a, si, pm, res.Decline, res.Token)
}

// setupCustomerName is the name the processor stores a card under: the billing name, else the
// setup intent's customer's.
func setupCustomerName(tx *db.Tx, sc domain.Scope, si *domain.SetupIntent, billing domain.BillingDetails) string {
	if billing.Name != nil {
		return *billing.Name
	}
	if si.Customer != nil {
		if cus, err := tx.FindCustomerByID(sc, *si.Customer); err == nil && cus.Name != nil {
			return *cus.Name
		}
	}
	return ""
}

// reserveSave is phase 1 of a live setup: the payment method exists (no token yet), the setup
// intent is processing and the call is reserved.
func (s *Service) reserveSave(tx *db.Tx, a domain.Actor, si *domain.SetupIntent, pm *domain.PaymentMethod, req SaveCardRequest) (*domain.SetupIntent, error) {
	si.Status = domain.SetupStatusProcessing
	if err := tx.UpdateSetupIntent(a.Scope, si); err != nil {
		return nil, err
	}
	call, err := s.reserve(tx, a.Scope, CallSaveCard, domain.MethodCreditCard, si.ID, pm.ID, "", req.Reference, 0, struct{}{})
	if err != nil {
		return nil, err
	}
	return nil, pendingError(&Pending{CallID: call.ID, save: &req})
}

// applySaveCall applies the recorded answer of a live card save to its setup intent.
func (s *Service) applySaveCall(tx *db.Tx, a domain.Actor, call *db.ProcessorCall) (*domain.SetupIntent, error) {
	call.State = db.CallApplied
	if err := tx.UpdateProcessorCall(call); err != nil {
		return nil, err
	}
	si, err := tx.FindSetupIntentByID(a.Scope, call.PaymentIntent)
	if err != nil {
		return nil, err
	}
	if si.Status != domain.SetupStatusProcessing {
		return si, nil
	}
	pm, err := tx.FindPaymentMethodByID(a.Scope, call.Charge)
	if err != nil {
		return nil, err
	}
	out := outcomeOf(call)
	if out.NotSent || out.Save == nil {
		s.logger().Warn("setup intent: card not saved by the processor", "setup_intent", si.ID, "reason", out.Message)
		return s.finishSetup(tx, a, si, pm, setupProcessingError(), "")
	}
	return s.finishSetup(tx, a, si, pm, out.Save.Decline, out.Save.Token)
}

func setupProcessingError() *domain.PaymentError {
	pe := processingError()
	pe.Message = "The card processor could not save the card; nothing was charged. Try again."
	return pe
}

// finishSetup records the outcome of saving a card: the decline (setup_intent.setup_failed and
// a 402 whose recording commits) or the saved card (its sealed processor token, attached to the
// setup intent's customer, setup_intent.succeeded).
func (s *Service) finishSetup(tx *db.Tx, a domain.Actor, si *domain.SetupIntent, pm *domain.PaymentMethod, decline *domain.PaymentError, token string) (*domain.SetupIntent, error) {
	before := *si
	if decline != nil {
		si.Status, si.LastSetupError = domain.SetupStatusRequiresPaymentMethod, decline
		if err := tx.UpdateSetupIntent(a.Scope, si); err != nil {
			return nil, err
		}
		if err := emit(tx, a, "setup_intent.setup_failed", si, &before); err != nil {
			return nil, err
		}
		e := declineError(decline, "", nil)
		e.SetupIntent = si
		return si, e
	}
	if token != "" {
		if err := s.saveCardToken(tx, a.Scope, pm.ID, token); err != nil {
			return nil, err
		}
	}
	if si.Customer != nil && pm.Customer == nil {
		pmBefore := *pm
		pm.Customer = si.Customer
		if err := tx.UpdatePaymentMethod(a.Scope, pm); err != nil {
			return nil, err
		}
		if err := emit(tx, a, "payment_method.attached", pm, &pmBefore); err != nil {
			return nil, err
		}
	}
	si.Status, si.PaymentMethod, si.LastSetupError = domain.SetupStatusSucceeded, &pm.ID, nil
	if err := tx.UpdateSetupIntent(a.Scope, si); err != nil {
		return nil, err
	}
	return si, emit(tx, a, "setup_intent.succeeded", si, &before)
}

// SetupCancelParams is the body of a setup intent cancellation.
type SetupCancelParams struct {
	CancellationReason *string `json:"cancellation_reason"`
}

// CancelSetupIntent cancels a setup intent that has not succeeded.
func (s *Service) CancelSetupIntent(tx *db.Tx, a domain.Actor, id string, p SetupCancelParams) (*domain.SetupIntent, error) {
	si, err := s.GetSetupIntent(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if p.CancellationReason != nil && !slices.Contains([]string{"abandoned", "requested_by_customer", "duplicate"}, *p.CancellationReason) {
		return nil, domain.Invalid("cancellation_reason", "cancellation_reason must be abandoned, requested_by_customer or duplicate.")
	}
	if si.Status != domain.SetupStatusRequiresPaymentMethod {
		return nil, stateError("setup intent", si.ID, si.Status, "cancel")
	}
	before := *si
	si.Status, si.CancellationReason = domain.SetupStatusCanceled, p.CancellationReason
	if err := tx.UpdateSetupIntent(a.Scope, si); err != nil {
		return nil, err
	}
	return si, emit(tx, a, "setup_intent.canceled", si, &before)
}
