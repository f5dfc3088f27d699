package checkout

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"troco/db"
	"troco/server/boleto"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/fees"
	"troco/server/payments"
)

// Confirm is the buyer paying (SPEC 3.3 open → complete), through the API or the hosted page:
//
//   - only an open session within its 24 hours can be confirmed (409 otherwise, nothing changes);
//   - in live mode the organization must be active (organization_not_activated);
//   - the buyer data is validated against the session's requirements, the customer is found
//     (existing, by e-mail, by document) or created;
//   - the session's payment intent (created at the first attempt, for the session's total as
//     computed from its prices) is confirmed by the payments engine with the chosen method;
//   - a declined card is recorded and answered 402 with the session left open; an approved card
//     completes the session as paid; a waiting PIX, boleto or processing card completes it unpaid
//     (SPEC 2.4), and settlement later moves payment_status (IntentSettled).
//
// attempt, when not empty, is the hosted form's one-time token: a repeated submission of the same
// form (a double click) returns the session as it is without a second charge.
func (svc *Service) Confirm(tx *db.Tx, a domain.Actor, id string, p ConfirmParams, attempt string) (*domain.CheckoutSession, error) {
	cs, err := GetSession(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if p.ClientSecret != nil && !SecretMatches(cs, *p.ClientSecret) {
		return nil, domain.Invalid("client_secret", "The client_secret does not match this checkout session.")
	}
	if attempt != "" {
		repeated, err := tx.SwapCheckoutAttempt(a.Scope, cs.ID, attempt)
		if err != nil {
			return nil, err
		}
		if repeated {
			return cs, nil
		}
	}
	if cs.Status == domain.CheckoutOpen && !tx.Now.Before(cs.ExpiresAt.Time) {
		// Past its 24 hours but not yet reached by the expiry job: expire it now.
		if err := svc.expire(tx, a, cs); err != nil {
			return nil, err
		}
		e := stateConflict(cs, "confirmed").(*domain.Error)
		e.KeepChanges = true
		return nil, e
	}
	if cs.Status != domain.CheckoutOpen {
		return nil, stateConflict(cs, "confirmed")
	}
	org, err := tx.FindOrganizationByID(a.OrgID)
	if err != nil {
		return nil, err
	}
	// SPEC 7: too many instalments is a 400 "with the same message in both environments", so the
	// ceiling (the amount's and the organization's) is checked before the live-mode activation.
	if p.Installments != nil && cs.TotalAmount > 0 {
		if err := payments.CheckInstallments(*p.Installments, cs.TotalAmount, org); err != nil {
			return nil, err
		}
	}
	if !CanAcceptPayments(org, a.Livemode) {
		return nil, errNotActivated()
	}
	if err := checkDiscount(tx, a.Scope, cs); err != nil {
		return nil, err
	}
	before := *cs
	if err := applyBuyer(cs, Buyer{Email: p.CustomerEmail, Name: p.CustomerName, Document: p.CustomerDocument, Phone: p.CustomerPhone}); err != nil {
		return nil, err
	}
	if p.BillingAddress != nil {
		addr := *p.BillingAddress
		if err := core.ValidateAddress("billing_address", &addr); err != nil {
			return nil, err
		}
		p.BillingAddress = &addr
	}
	switch {
	case cs.RequireDocument && cs.CustomerDocument == nil:
		return nil, domain.Missing("customer_document")
	case cs.RequirePhone && cs.CustomerPhone == nil:
		return nil, domain.Missing("customer_phone")
	case cs.RequireBillingAddress && p.BillingAddress == nil:
		return nil, domain.Missing("billing_address")
	}

	if cs.TotalAmount == 0 {
		return svc.completeFree(tx, a, cs, &before, p)
	}

	if len(cs.PaymentMethodTypes) == 0 {
		// Frozen empty at creation (live mode before the organization's activation, SPEC 2.4).
		return nil, domain.Invalid("payment_method_type", "This checkout session offers no payment method: it was created before the organization finished its activation. Create a new checkout session.")
	}
	method := p.PaymentMethodType
	if method == "" && (p.Card != nil || p.PaymentMethod != "") {
		method = domain.MethodCreditCard
	}
	if method == "" && len(cs.PaymentMethodTypes) == 1 {
		method = cs.PaymentMethodTypes[0]
	}
	if method == "" {
		return nil, domain.Missing("payment_method_type")
	}
	if !cs.Offers(method) {
		return nil, domain.Invalid("payment_method_type", "This checkout session offers %s; %q is not one of them.", strings.Join(cs.PaymentMethodTypes, ", "), method)
	}
	opts := cs.PaymentMethodOptions
	if method == domain.MethodCreditCard && p.Installments != nil && opts != nil && opts.CreditCard != nil && *p.Installments > opts.CreditCard.MaxInstallments {
		// Above the amount's own ceiling, the payments engine's message (CONTRACT 5: the same in
		// both environments), so a small sale never reads "at most 12"; else the session's option.
		if err := fees.CheckInstallments(*p.Installments, cs.TotalAmount, 0, ""); err != nil {
			return nil, domain.Invalid("installments", "%s", err.Error())
		}
		return nil, domain.Invalid("installments", "This checkout session allows at most %d instalments.", opts.CreditCard.MaxInstallments)
	}
	if method == domain.MethodBoleto && p.BoletoDueDate == nil && opts != nil && opts.Boleto != nil && opts.Boleto.ExpiresAfterDays != DefaultBoletoDays {
		due := boleto.DateOf(tx.Now).AddDays(opts.Boleto.ExpiresAfterDays).String()
		p.BoletoDueDate = &due
	}
	customer, err := svc.resolveCustomer(tx, a, cs, p.BillingAddress)
	if err != nil {
		return nil, err
	}
	pi, err := svc.ensureIntent(tx, a, cs, &customer)
	if err != nil {
		return nil, err
	}
	// The buyer data typed so far and the intent link survive a declined attempt.
	if err := tx.UpdateCheckoutSession(a.Scope, cs); err != nil {
		return nil, err
	}
	cp := p
	cp.ClientSecret = nil
	cp.PaymentMethodType = method
	cp.CustomerEmail, cp.CustomerName, cp.CustomerDocument, cp.CustomerPhone = cs.CustomerEmail, cs.CustomerName, cs.CustomerDocument, cs.CustomerPhone
	if cs.Mode == domain.CheckoutModeSubscription {
		cp.SavePaymentMethod = true // renewals charge the saved card
	}
	pi, err = svc.Payments.ConfirmOwned(tx, a, pi.ID, cp)
	if err != nil {
		return nil, err // a decline keeps its record (KeepChanges) and leaves the session open
	}
	if pi.Status == domain.PIStatusRequiresPaymentMethod {
		// The attempt failed at once (SPEC 8.5 expire_immediately): the session stays open and
		// accepts another attempt.
		msg := "The payment attempt failed; try again."
		code := domain.CodePaymentAttemptExpired
		if pi.LastPaymentError != nil {
			msg, code = pi.LastPaymentError.Message, pi.LastPaymentError.Code
		}
		return nil, &domain.Error{Status: http.StatusPaymentRequired, Type: domain.TypeInvalidRequest, Code: code, Message: msg, PaymentIntent: pi, KeepChanges: true}
	}
	var pm *string
	if cs.Mode == domain.CheckoutModeSubscription {
		pm = pi.PaymentMethod
	}
	return cs, svc.complete(tx, a, cs, &before, customer, pi, pm)
}

// sessionSetupIntent returns the setup intent that saves the card of a free subscription
// session, creating it for customer on the first confirmation (linked to the session, so the
// run that applies a live processor's answer finds it, and its customer, again).
func (svc *Service) sessionSetupIntent(tx *db.Tx, a domain.Actor, cs *domain.CheckoutSession, customer string) (*domain.SetupIntent, error) {
	si, err := tx.FindCheckoutSetupIntent(a.Scope, cs.ID)
	if err == nil && si.Status != domain.SetupStatusSucceeded {
		return si, nil
	}
	if err != nil && !errors.Is(err, db.ErrNotFound) {
		return nil, err
	}
	si, err = svc.Payments.CreateSetupIntent(tx, a, payments.SetupIntentParams{Customer: customer,
		Metadata: domain.Opt[map[string]string]{Set: true, V: map[string]string{"checkout_session": cs.ID}}})
	if err != nil {
		return nil, err
	}
	return si, tx.LinkSetupIntentToCheckout(a.Scope, si.ID, cs.ID)
}

// completeFree completes a session with nothing to charge now: no_payment_required, or a
// subscription whose first charge waits for a trial (the card is saved first when
// payment_method_collection is always).
func (svc *Service) completeFree(tx *db.Tx, a domain.Actor, cs *domain.CheckoutSession, before *domain.CheckoutSession, p ConfirmParams) (*domain.CheckoutSession, error) {
	var customer string
	if si, err := tx.FindCheckoutSetupIntent(a.Scope, cs.ID); err == nil && si.Customer != nil {
		customer = *si.Customer // an earlier run of this confirmation resolved it
	} else if err != nil && !errors.Is(err, db.ErrNotFound) {
		return nil, err
	} else if customer, err = svc.resolveCustomer(tx, a, cs, p.BillingAddress); err != nil {
		return nil, err
	}
	var pmID *string
	if cs.Mode == domain.CheckoutModeSubscription && cs.PaymentMethodCollection == "always" {
		si, err := svc.sessionSetupIntent(tx, a, cs, customer)
		if err != nil {
			return nil, err
		}
		if si.Status == domain.SetupStatusRequiresPaymentMethod && p.Card == nil && p.PaymentMethod == "" {
			return nil, domain.Missing("card")
		}
		// The card is saved through a setup intent: verified in the sandbox, saved with the card
		// processor in live mode (two-phase: this confirmation runs again once the processor
		// answered, and finds the same setup intent).
		si, err = svc.Payments.ConfirmSetupIntent(tx, a, si.ID, payments.SetupConfirmParams{Card: p.Card, PaymentMethod: p.PaymentMethod})
		if err != nil {
			return nil, err // pending (live), or a decline recorded on the setup intent: the session stays open
		}
		if si.Status != domain.SetupStatusSucceeded || si.PaymentMethod == nil {
			return nil, domain.Conflict("processor_call_in_progress", "The card is still being saved with the card processor; confirm this checkout session again in a minute.")
		}
		pmID = si.PaymentMethod
	}
	return cs, svc.complete(tx, a, cs, before, customer, nil, pmID)
}

// complete moves an open session to complete: customer, payment data and status from the
// intent, the subscription of a subscription-mode session, and checkout.session.completed with
// the previous values of what changed.
func (svc *Service) complete(tx *db.Tx, a domain.Actor, cs *domain.CheckoutSession, before *domain.CheckoutSession, customer string, pi *domain.PaymentIntent, pm *string) error {
	cs.Status = domain.CheckoutComplete
	cs.Customer = &customer
	if pi != nil {
		cs.PaymentData = pi.PaymentData
		if pi.Status == domain.PIStatusSucceeded {
			cs.PaymentStatus = domain.CheckoutPaid
		}
	}
	if cs.Mode == domain.CheckoutModeSubscription {
		sub, err := svc.startSubscription(tx, a, cs, customer, pm, cs.PaymentStatus != domain.CheckoutUnpaid)
		if err != nil {
			return err
		}
		cs.Subscription = &sub.ID
	}
	if err := syncInvoice(tx, a, cs, pi); err != nil {
		return err
	}
	if err := tx.UpdateCheckoutSession(a.Scope, cs); err != nil {
		return err
	}
	return core.Emit(tx, a, EventCompleted, cs, before)
}

// resolveCustomer returns the session's customer: the one given at creation, else the newest
// customer with the buyer's e-mail, else with the buyer's document, else a new one (SPEC 2.4).
func (svc *Service) resolveCustomer(tx *db.Tx, a domain.Actor, cs *domain.CheckoutSession, addr *domain.Address) (string, error) {
	if cs.Customer != nil {
		return *cs.Customer, nil
	}
	if cs.CustomerEmail != nil {
		c, err := tx.FindCustomerByEmail(a.Scope, *cs.CustomerEmail)
		if err == nil {
			return c.ID, nil
		}
		if !errors.Is(err, db.ErrNotFound) {
			return "", err
		}
	}
	if cs.CustomerDocument != nil {
		c, err := tx.FindCustomerByDocument(a.Scope, *cs.CustomerDocument)
		if err == nil {
			return c.ID, nil
		}
		if !errors.Is(err, db.ErrNotFound) {
			return "", err
		}
	}
	set := func(p *string) domain.Opt[string] {
		if p == nil {
			return domain.Opt[string]{}
		}
		return domain.Opt[string]{Set: true, V: *p}
	}
	params := core.CustomerParams{Email: set(cs.CustomerEmail), Name: set(cs.CustomerName), Phone: set(cs.CustomerPhone), Document: set(cs.CustomerDocument),
		Metadata: domain.Opt[map[string]string]{Set: true, V: map[string]string{"checkout_session": cs.ID}}}
	if addr != nil {
		params.Address = domain.Opt[domain.Address]{Set: true, V: *addr}
	}
	c, err := core.CreateCustomer(tx, a, params)
	if err != nil {
		return "", err
	}
	return c.ID, nil
}

// ensureIntent returns the session's payment intent, creating it at the first attempt for the
// session's total (never an amount from the request) and keeping its customer current.
func (svc *Service) ensureIntent(tx *db.Tx, a domain.Actor, cs *domain.CheckoutSession, customer *string) (*domain.PaymentIntent, error) {
	if cs.PaymentIntent != nil {
		pi, err := svc.Payments.GetIntent(tx, a.Scope, *cs.PaymentIntent)
		if err != nil {
			return nil, err
		}
		if customer != nil && (pi.Customer == nil || *pi.Customer != *customer) && pi.Status == domain.PIStatusRequiresPaymentMethod {
			return svc.Payments.UpdateOwned(tx, a, pi.ID, payments.IntentParams{Customer: domain.Opt[string]{Set: true, V: *customer}})
		}
		return pi, nil
	}
	amount, currency := cs.TotalAmount, cs.Currency
	desc := sessionDescription(cs)
	params := payments.IntentParams{
		Amount: &amount, Currency: &currency, PaymentMethodTypes: cs.PaymentMethodTypes,
		Description: domain.Opt[string]{Set: true, V: desc},
		Metadata:    domain.Opt[map[string]string]{Set: true, V: intentMetadata(cs)},
	}
	if customer != nil {
		params.Customer = domain.Opt[string]{Set: true, V: *customer}
	}
	if o := cs.PaymentMethodOptions; o != nil && o.CreditCard != nil && o.CreditCard.InterestPayer != "" {
		payer := o.CreditCard.InterestPayer
		params.InterestPayer = &payer
	}
	pi, err := svc.Payments.CreateIntent(tx, a, params)
	if err != nil {
		return nil, err
	}
	cs.PaymentIntent = &pi.ID
	return pi, nil
}

// intentMetadata is the session's metadata plus the session id, within the metadata limits.
func intentMetadata(cs *domain.CheckoutSession) map[string]string {
	m := map[string]string{}
	for k, v := range cs.Metadata {
		m[k] = v
	}
	if len(m) < domain.MaxMetadataKeys {
		m["checkout_session"] = cs.ID
	}
	return m
}

// sessionDescription names what is bought, for the intent and its charges.
func sessionDescription(cs *domain.CheckoutSession) string {
	names := make([]string, 0, len(cs.LineItems))
	for _, li := range cs.LineItems {
		if li.Description != nil {
			names = append(names, *li.Description)
		}
	}
	d := strings.Join(names, ", ")
	if r := []rune(d); len(r) > 1000 {
		d = string(r[:997]) + "..."
	}
	return d
}

// cancelIntent cancels the payment intent of an expiring session; an intent that can no longer
// be canceled (paid, already canceled) is left as it is.
func (svc *Service) cancelIntent(tx *db.Tx, a domain.Actor, id string) error {
	pi, err := svc.Payments.GetIntent(tx, a.Scope, id)
	if err != nil {
		return err
	}
	switch pi.Status {
	case domain.PIStatusSucceeded, domain.PIStatusCanceled, domain.PIStatusProcessing:
		return nil
	}
	reason := "abandoned"
	_, err = svc.Payments.CancelIntent(tx, a, id, payments.CancelParams{CancellationReason: &reason})
	return err
}

// IntentSettled is called by the payments engine after a waiting payment of an intent resolves
// (PIX or boleto paid or expired, a delayed rule, the hosted test bar, a test helper) and after
// an intent is captured or canceled (POST /v1/payment-intents/{id}/capture|cancel). A complete
// session of that intent becomes paid with checkout.session.async.payment.succeeded, or stays
// unpaid with checkout.session.async.payment.failed (SPEC 3.3); an open session whose intent was
// canceled expires.
func (svc *Service) IntentSettled(tx *db.Tx, a domain.Actor, pi *domain.PaymentIntent) error {
	cs, err := tx.FindCheckoutSessionByPaymentIntent(a.Scope, pi.ID)
	if errors.Is(err, db.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if cs.Status == domain.CheckoutOpen && pi.Status == domain.PIStatusCanceled {
		// The open session's intent was canceled through the API: the session cannot take a
		// payment any more (its one intent is final), so it expires (checkout.session.expired).
		return svc.expire(tx, a, cs)
	}
	if cs.Status == domain.CheckoutOpen && cs.PaymentIntent != nil && *cs.PaymentIntent == pi.ID && pi.Customer != nil &&
		(pi.Status == domain.PIStatusSucceeded || pi.Status == domain.PIStatusRequiresCapture || pi.Waiting()) {
		// A live payment whose confirming request died after the processor was called: the
		// reconciliation applied the processor's answer, and the session completes as the
		// request would have.
		before := *cs
		var pm *string
		if cs.Mode == domain.CheckoutModeSubscription {
			pm = pi.PaymentMethod
		}
		return svc.complete(tx, a, cs, &before, *pi.Customer, pi, pm)
	}
	if cs.Status != domain.CheckoutComplete || cs.PaymentStatus != domain.CheckoutUnpaid {
		return nil
	}
	before := *cs
	switch pi.Status {
	case domain.PIStatusSucceeded:
		cs.PaymentStatus = domain.CheckoutPaid
		if err := syncInvoice(tx, a, cs, pi); err != nil {
			return err
		}
		if err := tx.UpdateCheckoutSession(a.Scope, cs); err != nil {
			return err
		}
		if cs.Subscription != nil {
			if err := activateSubscription(tx, a, *cs.Subscription); err != nil {
				return err
			}
		}
		return core.Emit(tx, a, EventAsyncPaymentSuccess, cs, &before)
	case domain.PIStatusRequiresPaymentMethod, domain.PIStatusCanceled:
		if err := tx.UpdateCheckoutSession(a.Scope, cs); err != nil {
			return err
		}
		return core.Emit(tx, a, EventAsyncPaymentFailed, cs, &before)
	}
	return nil
}

// Test helper actions of SPEC 4.5.
const (
	HelperSucceed = "succeed"
	HelperFail    = "fail"
	HelperExpire  = "expire"
)

// TestHelper applies a SPEC 4.5 test helper to a session and returns the updated payment intent
// (test keys only):
//
//   - succeed: an open session is paid as a buyer would pay (an approving test card when cards
//     are offered, else PIX settled at once) and completes; a complete session whose PIX,
//     boleto or card waits is settled (async.payment.succeeded).
//   - fail: an open session records a failed attempt on its intent (a declined test card, or an
//     expired PIX) and stays open; a waiting payment expires (async.payment.failed).
//   - expire: an open session expires and its intent is canceled.
//
// A session without an intent gets one first, so there is always an intent to return.
func (svc *Service) TestHelper(tx *db.Tx, a domain.Actor, id, action string) (*domain.PaymentIntent, error) {
	// SPEC 4.5: a live key is refused as such, whatever the id (before any lookup).
	if a.Livemode {
		return nil, domain.TestmodeRequired()
	}
	cs, err := GetSession(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if cs.TotalAmount == 0 {
		return nil, domain.Conflict(domain.CodeResourceStateConflict, "This checkout session charges nothing (payment_status no_payment_required), so it has no payment intent; confirm or expire it instead.")
	}
	if cs.Status == domain.CheckoutExpired {
		return nil, stateConflict(cs, action+"ed")
	}
	if cs.Status == domain.CheckoutComplete {
		if action == HelperExpire || cs.PaymentIntent == nil {
			return nil, stateConflict(cs, "expired")
		}
		pi, err := svc.Payments.GetIntent(tx, a.Scope, *cs.PaymentIntent)
		if err != nil {
			return nil, err
		}
		if !pi.Waiting() {
			return nil, domain.Conflict(domain.CodeResourceStateConflict, "This checkout session is complete and its payment intent is %s; there is no waiting payment to %s.", pi.Status, action)
		}
		return svc.settle(tx, a, pi.ID, action == HelperSucceed)
	}
	// Open session.
	if action == HelperSucceed {
		// Paid as a buyer would pay: the confirmation creates the intent, so
		// checkout.session.completed lists payment_intent among the previous attributes.
		p := helperParams(cs, true, tx.Now)
		p.SimulateWaiting = true // a PIX or boleto waits whatever the e-mail, then is settled below
		cs, err := svc.Confirm(tx, a, cs.ID, p, "")
		if err != nil {
			return nil, err
		}
		pi, err := svc.Payments.GetIntent(tx, a.Scope, *cs.PaymentIntent)
		if err != nil {
			return nil, err
		}
		if pi.Waiting() {
			return svc.settle(tx, a, pi.ID, true)
		}
		return pi, nil
	}
	before := *cs
	pi, err := svc.ensureIntent(tx, a, cs, cs.Customer)
	if err != nil {
		return nil, err
	}
	if err := tx.UpdateCheckoutSession(a.Scope, cs); err != nil {
		return nil, err
	}
	switch action {
	case HelperExpire:
		// The intent made for the helper is part of what the expiry changed (previous_attributes).
		if err := svc.expireFrom(tx, a, cs, &before); err != nil {
			return nil, err
		}
		return svc.Payments.GetIntent(tx, a.Scope, pi.ID)
	default: // fail
		p := helperParams(cs, false, tx.Now)
		p.SimulateWaiting = true // a PIX or boleto waits whatever the e-mail, then expires below
		if _, err := svc.Payments.ConfirmOwned(tx, a, pi.ID, p); err != nil {
			if e, ok := domain.AsError(err); !ok || !e.KeepChanges {
				return nil, err
			}
		}
		pi, err = svc.Payments.GetIntent(tx, a.Scope, pi.ID)
		if err != nil {
			return nil, err
		}
		if pi.Waiting() {
			// A PIX attempt: let it expire, so the failure is recorded and the session stays open.
			return svc.Payments.SimulateSettlement(tx, a, pi.ID, false)
		}
		return pi, nil
	}
}

// settle resolves a waiting payment in test mode (test helpers, the hosted test bar); the
// payments engine then calls IntentSettled.
func (svc *Service) settle(tx *db.Tx, a domain.Actor, piID string, succeed bool) (*domain.PaymentIntent, error) {
	return svc.Payments.SimulateSettlement(tx, a, piID, succeed)
}

// Simulate is the hosted test bar's 'simulate payment' (succeed) or 'simulate expiration' on a
// complete test-mode session whose PIX or boleto waits.
func (svc *Service) Simulate(tx *db.Tx, a domain.Actor, id string, succeed bool) (*domain.CheckoutSession, error) {
	return svc.SimulateWith(tx, a, id, succeed, "")
}

// SimulateWith is Simulate saying how a boleto híbrido was paid: paidWith boleto (its barcode,
// also "") or pix (the QR printed on it).
func (svc *Service) SimulateWith(tx *db.Tx, a domain.Actor, id string, succeed bool, paidWith string) (*domain.CheckoutSession, error) {
	if a.Livemode {
		return nil, domain.TestmodeRequired()
	}
	cs, err := GetSession(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if cs.Status != domain.CheckoutComplete || cs.PaymentStatus != domain.CheckoutUnpaid || cs.PaymentIntent == nil {
		return nil, domain.Conflict(domain.CodeResourceStateConflict, "This checkout session has no waiting PIX or boleto payment to simulate.")
	}
	if _, err := svc.Payments.SimulateSettlementWith(tx, a, *cs.PaymentIntent, payments.SimulateOptions{Succeed: succeed, PaidWith: paidWith}); err != nil {
		return nil, err
	}
	return GetSession(tx, a.Scope, id)
}

// helperParams is what the succeed and fail helpers pay with: a SPEC 7.1 test card when cards
// are offered (4242… approves, 4000000000000002 declines), else PIX.
func helperParams(cs *domain.CheckoutSession, succeed bool, now time.Time) ConfirmParams {
	p := ConfirmParams{CustomerEmail: cs.CustomerEmail, CustomerName: cs.CustomerName, CustomerDocument: cs.CustomerDocument, CustomerPhone: cs.CustomerPhone}
	if cs.Offers(domain.MethodCreditCard) {
		number := "4242424242424242"
		if !succeed {
			number = "4000000000000002"
		}
		year := now.Year() + 3 // a future expiry is all the simulator needs
		p.PaymentMethodType = domain.MethodCreditCard
		p.Card = &payments.CardParams{Number: number, ExpMonth: 12, ExpYear: year, CVC: "123", HolderName: "Test Helper"}
		return helperBuyer(cs, p)
	}
	p.PaymentMethodType = domain.MethodPix
	if !cs.Offers(domain.MethodPix) && cs.Offers(domain.MethodBoleto) {
		p.PaymentMethodType = domain.MethodBoleto
	}
	return helperBuyer(cs, p)
}

// helperBuyer completes the simulated buyer's data the session (or boleto) requires and the
// session does not have yet, so the helpers succeed on any session: a valid test CPF, a name, a
// phone and a billing address.
func helperBuyer(cs *domain.CheckoutSession, p ConfirmParams) ConfirmParams {
	isBoleto := p.PaymentMethodType == domain.MethodBoleto
	s := func(v string) *string { return &v }
	if p.CustomerDocument == nil && (isBoleto || cs.RequireDocument) {
		p.CustomerDocument = s("52998224725")
	}
	if p.CustomerName == nil && isBoleto {
		p.CustomerName = s("Test Helper")
	}
	if p.CustomerPhone == nil && cs.RequirePhone {
		p.CustomerPhone = s("+55 11 91234-5678")
	}
	if p.BillingAddress == nil && (isBoleto || cs.RequireBillingAddress) {
		p.BillingAddress = &domain.Address{Line1: "Avenida Paulista", Number: "1000", Neighborhood: "Bela Vista", City: "São Paulo",
			State: "SP", PostalCode: "01310100", Country: "BR"}
	}
	return p
}

// CheckDirectConfirm refuses POST /v1/payment-intents/{id}/confirm on an intent a checkout
// session made (as Stripe refuses actions on PaymentIntents created by Checkout): that intent is
// paid through its session (the API confirm, the hosted page or the test helpers), which moves
// the session's status, payment_status and events with it. A direct confirmation would leave an
// open session with a paid intent, later expired by the 24 h job.
func CheckDirectConfirm(tx *db.Tx, scope domain.Scope, piID string) error {
	cs, err := tx.FindCheckoutSessionByPaymentIntent(scope, piID)
	if errors.Is(err, db.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return domain.Conflict(domain.CodePaymentIntentUnexpectedState, "You cannot confirm this payment intent directly: it belongs to checkout session %s. Confirm the checkout session instead (POST /v1/checkout-sessions/%s/confirm or its hosted page).", cs.ID, cs.ID)
}

// IntentReissued keeps a complete, unpaid session's payment_data on the boleto its intent pays
// now, after POST /v1/payment-intents/{id}/regenerate-boleto: the hosted page and the session
// show the new line and barcode, not the replaced ones. A session that is not waiting for its
// payment is left as it is.
func IntentReissued(tx *db.Tx, a domain.Actor, pi *domain.PaymentIntent) error {
	cs, err := tx.FindCheckoutSessionByPaymentIntent(a.Scope, pi.ID)
	if errors.Is(err, db.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if cs.Status != domain.CheckoutComplete || cs.PaymentStatus != domain.CheckoutUnpaid || pi.PaymentData == nil {
		return nil
	}
	cs.PaymentData = pi.PaymentData
	return tx.UpdateCheckoutSession(a.Scope, cs)
}

// CheckDirectUpdate refuses, on an intent a checkout session made, the updates that would make
// it charge something other than the session (amount, currency, methods, capture, interest):
// those come from the session. description and metadata stay editable.
func CheckDirectUpdate(tx *db.Tx, scope domain.Scope, piID string, p payments.IntentParams) error {
	var param string
	switch {
	case p.Amount != nil:
		param = "amount"
	case p.Currency != nil:
		param = "currency"
	case p.PaymentMethodTypes != nil:
		param = "payment_method_types"
	case p.CaptureMethod != nil:
		param = "capture_method"
	case p.InterestPayer != nil:
		param = "interest_payer"
	default:
		return nil
	}
	cs, err := tx.FindCheckoutSessionByPaymentIntent(scope, piID)
	if errors.Is(err, db.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return domain.Invalid(param, "This payment intent belongs to checkout session %s, which decides its %s; it cannot be updated here.", cs.ID, param)
}

// OwnerRules are the checkout session's rules on the intents it makes, for payments.Service.Owner:
// every interface that confirms, updates or reissues a payment intent goes through them.
func OwnerRules() payments.OwnerRules {
	return payments.OwnerRules{DirectConfirm: CheckDirectConfirm, DirectUpdate: CheckDirectUpdate, Reissued: IntentReissued}
}
