package payments

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"troco/db"
	"troco/server/card"
	"troco/server/core"
	"troco/server/document"
	"troco/server/domain"
	"troco/server/fees"
)

// CardParams is the card object of a confirm or payment method body. It is converted to a
// card.Input at once and never stored, logged or echoed.
type CardParams struct {
	Number     string `json:"number"`
	ExpMonth   int    `json:"exp_month"`
	ExpYear    int    `json:"exp_year"`
	CVC        string `json:"cvc"`
	HolderName string `json:"holder_name"`
}

func (c CardParams) input() card.Input {
	year := c.ExpYear
	if year >= 0 && year < 100 {
		year += 2000 // a two-digit year, as Stripe accepts
	}
	return card.Input{Number: c.Number, CVC: c.CVC, HolderName: strings.TrimSpace(c.HolderName), ExpMonth: c.ExpMonth, ExpYear: year}
}

// UnmarshalJSON accepts what card forms send: exp_month and exp_year as numbers or strings of
// digits ("12"), and cvc as a string or a number. Unknown fields and other types are the usual
// 400 naming the param (card[exp_month]). A card object without number, exp_month, exp_year or
// cvc (absent or null) is 400 parameter_missing naming it (card[number]): a card never given is
// not a decline; an empty or malformed value is, and Validate answers it with its 402 code.
func (c *CardParams) UnmarshalJSON(b []byte) error {
	var raw struct {
		Number     *string     `json:"number"`
		ExpMonth   *lenientInt `json:"exp_month"`
		ExpYear    *lenientInt `json:"exp_year"`
		CVC        *lenientStr `json:"cvc"`
		HolderName string      `json:"holder_name"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	switch {
	case raw.Number == nil:
		return domain.Missing("card[number]")
	case raw.ExpMonth == nil:
		return domain.Missing("card[exp_month]")
	case raw.ExpYear == nil:
		return domain.Missing("card[exp_year]")
	case raw.CVC == nil:
		return domain.Missing("card[cvc]")
	}
	*c = CardParams{Number: *raw.Number, ExpMonth: int(*raw.ExpMonth), ExpYear: int(*raw.ExpYear), CVC: string(*raw.CVC), HolderName: raw.HolderName}
	return nil
}

// lenientInt is an integer sent as a JSON number or a string of digits.
type lenientInt int

func (n *lenientInt) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		return nil
	}
	if uq, err := strconv.Unquote(s); err == nil {
		s = strings.TrimSpace(uq)
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return &json.UnmarshalTypeError{Value: "value " + strconv.Quote(s), Type: reflect.TypeFor[int]()}
	}
	*n = lenientInt(v)
	return nil
}

// lenientStr is a string sent as a JSON string or a JSON integer (a CVC typed as 123).
type lenientStr string

func (t *lenientStr) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		return nil
	}
	if uq, err := strconv.Unquote(s); err == nil && strings.HasPrefix(s, `"`) {
		*t = lenientStr(uq)
		return nil
	}
	if _, err := strconv.ParseUint(s, 10, 64); err != nil {
		return &json.UnmarshalTypeError{Value: "value", Type: reflect.TypeFor[string]()}
	}
	*t = lenientStr(s)
	return nil
}

// String redacts the card, like card.Input.
func (c CardParams) String() string { return c.input().String() }

// GoString redacts the card for %#v.
func (c CardParams) GoString() string { return c.String() }

// ConfirmParams is the body of POST /v1/payment-intents/{id}/confirm (CONTRACT 4).
type ConfirmParams struct {
	ClientSecret      *string         `json:"client_secret"`
	PaymentMethodType string          `json:"payment_method_type"`
	Card              *CardParams     `json:"card"`
	PaymentMethod     string          `json:"payment_method"`
	Installments      *int            `json:"installments"`
	CustomerEmail     *string         `json:"customer_email"`
	CustomerName      *string         `json:"customer_name"`
	CustomerDocument  *string         `json:"customer_document"`
	CustomerPhone     *string         `json:"customer_phone"`
	BillingAddress    *domain.Address `json:"billing_address"`
	BoletoDueDate     *string         `json:"boleto_due_date"`
	SavePaymentMethod bool            `json:"save_payment_method"`

	// Origin is the https://host public URLs use when the Service has no BaseURL.
	Origin string `json:"-"`
	// Request marks parameters a caller sent in a confirmation request (POST
	// /v1/payment-intents/{id}/confirm, or create with confirm: true): customer_phone must then
	// be a phone number, as on the checkout. Internal paths (checkout, invoices, a new boleto)
	// pass the customer's stored free-text phone and leave it false.
	Request bool `json:"-"`
	// Hosted marks a confirmation made by the buyer on the hosted checkout: a saved card used
	// there is not a SPEC 7.1 "reuse".
	Hosted bool `json:"-"`
	// SimulateWaiting (test mode, the checkout test helpers) starts a PIX or boleto in the
	// waiting state whatever SPEC 8.5 rule the buyer's e-mail picks, so the helper decides
	// the outcome.
	SimulateWaiting bool `json:"-"`

	// ownerChecked is the id of the intent whose owner PrepareConfirm checked.
	ownerChecked string
	// fp is the typed card's fingerprint PrepareConfirm computed off the writer.
	fp preparedFingerprint
	// intentUnstored: the intent was made by CreateAndConfirm in this transaction and has no row
	// yet; finishCard inserts it (a path that does not reach finishCard is a refusal, rolled back).
	intentUnstored bool
	// customer is the intent's customer, when CreateAndConfirm already read it in this
	// transaction (buyer does not read it again).
	customer *domain.Customer
}

// preparedFingerprint is a card fingerprint computed before the writer, with what it was
// computed for: it is used only for the number of that same card object in that same scope
// (the number itself is not kept here, so that printing the params never shows it).
type preparedFingerprint struct {
	scope domain.Scope
	card  *CardParams
	value string
}

// PrepareConfirm runs, on the reader pool before the confirmation enters the single writer, the
// check of Confirm that rests only on a fact fixed when the intent is created: which domain owns
// it (an intent a checkout session made is confirmed through the session; a session only ever
// lets go of its intent, canceling it). When the check passes, Confirm skips that read inside the
// writer for this id; when it fails or cannot be made, Confirm makes it there and answers as
// always (so an idempotent request stores that answer).
//
// It also computes the typed card's keyed fingerprint (two HMACs that need nothing of the
// database), which the confirmation then does not compute inside the writer.
func (s *Service) PrepareConfirm(tx *db.Tx, scope domain.Scope, id string, p *ConfirmParams) {
	s.PrepareCard(scope, p)
	if s.Owner.DirectConfirm != nil && s.Owner.DirectConfirm(tx, scope, id) != nil {
		return
	}
	p.ownerChecked = id
}

// PrepareCard computes, before the single writer, the keyed fingerprint of the card p carries
// (two HMACs that need nothing of the database), for a confirmation in scope: PrepareConfirm's
// part that a create with confirm: true (CreateAndConfirm) also uses.
func (s *Service) PrepareCard(scope domain.Scope, p *ConfirmParams) {
	if p.Card != nil {
		p.fp = preparedFingerprint{scope: scope, card: p.Card, value: card.Fingerprint(s.scopedFingerprintKey(scope), p.Card.Number)}
	}
}

// confirmation carries one confirmation through its steps.
type confirmation struct {
	a      domain.Actor
	org    *domain.Organization
	pi     *domain.PaymentIntent
	before domain.PaymentIntent
	buyer  domain.BillingDetails
	p      ConfirmParams
}

// Confirm confirms a payment intent with a card, a saved card, PIX or boleto. Validation errors
// change nothing; a card with a bad format answers 402 card_error naming its param, the intent
// unchanged. A declined card is recorded (failed charge, last_payment_error, charge.failed and
// payment_intent.payment_failed) and answered 402 with the intent: the returned *domain.Error has
// KeepChanges so the recording commits. In live mode the organization must be active
// (organization_not_activated otherwise) and a processor configured (processor_unavailable).
//
// An intent another domain owns (a checkout session's) is refused here: its owner confirms it
// through ConfirmOwned.
func (s *Service) Confirm(tx *db.Tx, a domain.Actor, id string, p ConfirmParams) (*domain.PaymentIntent, error) {
	if s.Owner.DirectConfirm != nil && p.ownerChecked != id {
		if err := s.Owner.DirectConfirm(tx, a.Scope, id); err != nil {
			return nil, err
		}
	}
	return s.confirm(tx, a, id, p)
}

// ConfirmOwned is Confirm for the domain that owns the intent (checkout sessions, test helpers).
func (s *Service) ConfirmOwned(tx *db.Tx, a domain.Actor, id string, p ConfirmParams) (*domain.PaymentIntent, error) {
	return s.confirm(tx, a, id, p)
}

func (s *Service) confirm(tx *db.Tx, a domain.Actor, id string, p ConfirmParams) (*domain.PaymentIntent, error) {
	pi, terms, err := tx.FindPaymentIntentWithTerms(a.Scope, id)
	if err != nil {
		return nil, notFound(err, "id", "payment intent", id)
	}
	return s.confirmIntent(tx, a, pi, terms, p)
}

// CreateAndConfirm creates a payment intent and confirms it in the same transaction (POST
// /v1/payment-intents with confirm: true): CreateIntent, then the confirmation of Confirm on the
// intent it just made, so every rule of both applies and the events are those of the two calls
// in their order (payment_intent.created, then the confirmation's).
//
// A refusal by either part changes nothing (the caller rolls the transaction back): no intent is
// created. A declined card, like a declined Confirm, keeps the new intent and its failed charge
// and answers 402 with the intent (KeepChanges). A live network processor's reservation
// (Pending) keeps the new intent too, returned with the error: the caller finishes the
// confirmation by calling Confirm on its id, as after any reservation.
func (s *Service) CreateAndConfirm(tx *db.Tx, a domain.Actor, ip IntentParams, p ConfirmParams) (*domain.PaymentIntent, error) {
	if p.ClientSecret != nil {
		return nil, ClientSecretOnCreate()
	}
	// A card confirmed by a processor that answers inside the transaction (the sandbox) either
	// refuses (nothing is kept) or ends in finishCard, which then writes the new intent once, in
	// its final state, instead of an INSERT and an UPDATE of the same row. Every other
	// confirmation (PIX, boleto, a live processor's two phases) finds the intent stored as
	// CreateIntent stores it.
	oneRow := func(pi *domain.PaymentIntent) bool {
		if m, err := (&confirmation{pi: pi, p: p}).method(); err != nil || m != domain.MethodCreditCard {
			return false
		}
		proc, err := s.processor(a.Livemode, domain.MethodCreditCard)
		return err == nil && proc.InTransaction()
	}
	pi, deferred, err := s.createIntent(tx, a, &ip, oneRow)
	if err != nil {
		return nil, err
	}
	p.intentUnstored, p.customer = deferred, ip.customer
	// A new intent has no owner (only its creator's own domain could have made it one), so
	// Confirm's owner check has nothing to find; and the intent is the one just made.
	created := pi
	pi, err = s.confirmIntent(tx, a, pi, nil, p)
	e, ok := domain.AsError(err)
	switch {
	case !ok || (!e.KeepChanges && e.PaymentIntent == nil):
	case e.Pending != nil:
		return created, err
	case !e.KeepChanges:
		// A refusal (a card number of a bad format): nothing is kept, so the error names no intent.
		e2 := *e
		e2.PaymentIntent = nil
		return nil, &e2
	}
	return pi, err
}

// ClientSecretOnCreate is the 400 of a client_secret sent to payment intent create, with or
// without confirm: there is no intent yet whose secret it could be.
func ClientSecretOnCreate() *domain.Error {
	return domain.Invalid("client_secret", "client_secret cannot be sent when creating a payment intent: the new intent's client_secret is in the response.")
}

// confirmIntent is confirm on an intent already read in this transaction; terms, when not nil,
// are the organization's payment terms read with it (FindPaymentIntentWithTerms).
func (s *Service) confirmIntent(tx *db.Tx, a domain.Actor, pi *domain.PaymentIntent, terms *domain.Organization, p ConfirmParams) (*domain.PaymentIntent, error) {
	if p.ClientSecret != nil && !SecretMatches(pi.ClientSecret, *p.ClientSecret) {
		return nil, domain.Invalid("client_secret", "The client_secret does not match this payment intent.")
	}
	if pi.Status == domain.PIStatusProcessing {
		// A live confirmation in two phases: apply the processor's answer once it is recorded.
		if call, err := openCall(tx, a.Scope, pi.ID, CallAuthorize, CallStart); err != nil {
			return nil, err
		} else if call != nil {
			if call.State == db.CallReserved {
				return pi, nil // the answer is not known yet: the intent stays processing
			}
			return s.applyConfirmCall(tx, a, call)
		}
	}
	if !confirmable(pi.Status) {
		return nil, stateError("payment intent", pi.ID, pi.Status, "confirm")
	}
	// A card confirmation needs only the organization's payment terms (read with the intent, or
	// alone); PIX and boleto print its name and city, so they read the whole organization.
	org := terms
	var err error
	switch m, merr := (&confirmation{pi: pi, p: p}).method(); {
	case merr != nil || m != domain.MethodCreditCard:
		org, err = tx.FindOrganizationByID(a.OrgID)
	case org == nil:
		org, err = tx.FindOrganizationTerms(a.OrgID)
	}
	if err != nil {
		return nil, err
	}
	// SPEC 7: too many instalments is a 400 "with the same message in both environments", so the
	// ceiling (which depends only on the amount and the organization) is checked before the
	// live-mode activation.
	if p.Installments != nil {
		if err := CheckInstallments(*p.Installments, pi.Amount, org); err != nil {
			return nil, err
		}
	}
	if a.Livemode && org.ActivationStatus != domain.ActivationActive {
		return nil, errNotActivated()
	}
	c := &confirmation{a: a, org: org, pi: pi, before: *pi, p: p}
	method, err := c.method()
	if err != nil {
		return nil, err
	}
	if c.buyer, err = s.buyer(tx, a.Scope, pi, p, method); err != nil {
		return nil, err
	}
	if method == domain.MethodCreditCard {
		return s.confirmCard(tx, c)
	}
	return s.confirmAsync(tx, c, method)
}

// CheckInstallments checks an instalment count against the ceiling of CONTRACT 5 for any brand
// (the amount's and the organization's): the 400 naming installments, the same in both
// environments, before anything is charged.
func CheckInstallments(count int, amount int64, org *domain.Organization) error {
	return installmentError(fees.CheckInstallments(count, amount, org.MaxInstallments, ""))
}

// installmentError turns a fees.InstallmentError into the public 400 naming its param.
func installmentError(err error) error {
	if ie, ok := err.(*fees.InstallmentError); ok {
		return domain.Invalid(ie.Param, "%s", ie.Message)
	}
	return err
}

// method resolves payment_method_type: explicit, implied by card/payment_method, or the
// intent's only type.
func (c *confirmation) method() (string, error) {
	m := c.p.PaymentMethodType
	if m == "" {
		switch {
		case c.p.Card != nil || c.p.PaymentMethod != "":
			m = domain.MethodCreditCard
		case len(c.pi.PaymentMethodTypes) == 1:
			m = c.pi.PaymentMethodTypes[0]
		default:
			return "", domain.Missing("payment_method_type")
		}
	}
	switch m {
	case domain.MethodCreditCard, domain.MethodPix, domain.MethodBoleto:
	default:
		return "", domain.Invalid("payment_method_type", "payment_method_type must be credit_card, pix or boleto.")
	}
	for _, t := range c.pi.PaymentMethodTypes {
		if t == m {
			return m, nil
		}
	}
	return "", domain.Invalid("payment_method_type", "This payment intent does not accept %s; its payment_method_types are %s.", m, strings.Join(c.pi.PaymentMethodTypes, ", "))
}

// buyer merges the buyer data of the request with the intent's customer, validating what was
// sent. A boleto needs a valid CPF/CNPJ, a name and a Brazilian address, in both modes.
func (s *Service) buyer(tx *db.Tx, sc domain.Scope, pi *domain.PaymentIntent, p ConfirmParams, method string) (domain.BillingDetails, error) {
	b := domain.BillingDetails{}
	if pi.Customer != nil {
		cus, err := p.customer, error(nil)
		if cus == nil || cus.ID != *pi.Customer {
			cus, err = tx.FindCustomerByID(sc, *pi.Customer)
		}
		if err == nil {
			b = domain.BillingDetails{Address: cus.Address, Email: cus.Email, Name: cus.Name, Phone: cus.Phone, Document: cus.Document, DocumentType: cus.DocumentType}
		} else if !errors.Is(err, db.ErrNotFound) {
			return b, err
		}
	}
	text := func(dst **string, v *string, param string, maxLen int) error {
		if v == nil {
			return nil
		}
		t := strings.TrimSpace(*v)
		if t == "" {
			*dst = nil
			return nil
		}
		if err := domain.ValidateText(param, t, maxLen); err != nil {
			return err
		}
		*dst = &t
		return nil
	}
	if p.CustomerEmail != nil && strings.TrimSpace(*p.CustomerEmail) != "" {
		if err := domain.ValidateEmail("customer_email", strings.TrimSpace(*p.CustomerEmail)); err != nil {
			return b, err
		}
	}
	if err := text(&b.Email, p.CustomerEmail, "customer_email", 254); err != nil {
		return b, err
	}
	if err := text(&b.Name, p.CustomerName, "customer_name", 256); err != nil {
		return b, err
	}
	if p.Request && p.CustomerPhone != nil && strings.TrimSpace(*p.CustomerPhone) != "" {
		if err := domain.ValidatePhone("customer_phone", strings.TrimSpace(*p.CustomerPhone)); err != nil {
			return b, err
		}
	}
	if err := text(&b.Phone, p.CustomerPhone, "customer_phone", domain.MaxPhoneLen); err != nil {
		return b, err
	}
	if p.CustomerDocument != nil && strings.TrimSpace(*p.CustomerDocument) != "" {
		doc, err := document.Parse(*p.CustomerDocument)
		if err != nil {
			return b, domain.Invalid("customer_document", "customer_document must be a valid CPF or CNPJ (check digits are verified): %v.", err)
		}
		b.Document, b.DocumentType = strPtr(doc.Number), strPtr(string(doc.Type))
	}
	if p.BillingAddress != nil {
		addr := *p.BillingAddress
		if err := core.ValidateAddress("billing_address", &addr); err != nil {
			return b, err
		}
		b.Address = &addr
	}
	if b.Name == nil && p.Card != nil && strings.TrimSpace(p.Card.HolderName) != "" {
		b.Name = strPtr(strings.TrimSpace(p.Card.HolderName))
	}
	if method != domain.MethodBoleto {
		return b, nil
	}
	if b.Document == nil {
		return b, domain.Missing("customer_document")
	}
	if _, err := document.Parse(*b.Document); err != nil {
		return b, domain.Invalid("customer_document", "customer_document must be a valid CPF or CNPJ (check digits are verified): %v.", err)
	}
	if b.Name == nil {
		return b, domain.Missing("customer_name")
	}
	if b.Address == nil {
		return b, domain.Missing("billing_address")
	}
	ba := document.Address{Line1: b.Address.Line1, Number: b.Address.Number, Line2: b.Address.Line2, Neighborhood: b.Address.Neighborhood,
		City: b.Address.City, State: b.Address.State, PostalCode: b.Address.PostalCode, Country: b.Address.Country}
	if param, err := ba.Validate(); err != nil {
		if errors.Is(err, document.ErrAddressRequired) {
			return b, domain.Missing(param)
		}
		return b, domain.Invalid(param, "%s.", err.Error())
	}
	n := ba.Normalize()
	b.Address = &domain.Address{Line1: n.Line1, Number: n.Number, Line2: n.Line2, Neighborhood: n.Neighborhood, City: n.City, State: n.State, PostalCode: n.PostalCode, Country: n.Country}
	return b, nil
}

// cardFormatError is the 402 of a card rejected before any authorization; nothing is recorded.
func cardFormatError(e *card.Error, pi *domain.PaymentIntent) *domain.Error {
	return &domain.Error{Status: http.StatusPaymentRequired, Type: domain.TypeCard, Code: e.Code, Param: e.Param, Message: e.Message, PaymentIntent: pi}
}

// declineError is the 402 of a declined card: the recording commits (KeepChanges).
func declineError(pe *domain.PaymentError, chargeID string, pi *domain.PaymentIntent) *domain.Error {
	e := &domain.Error{Status: http.StatusPaymentRequired, Type: domain.TypeCard, Code: pe.Code, DeclineCode: pe.Code, Message: pe.Message,
		Charge: chargeID, KeepChanges: true}
	if pi != nil {
		e.PaymentIntent = pi
	}
	if pe.AdviceCode != nil {
		e.AdviceCode = *pe.AdviceCode
	}
	return e
}

// newCardMethod builds the payment method of a typed card: brand, last4, expiry, keyed
// fingerprint and, in test mode, the SPEC 7.1 behaviour key. The number is not kept.
func (s *Service) newCardMethod(in card.Input, billing domain.BillingDetails, scope domain.Scope) *domain.PaymentMethod {
	return s.newCardMethodFP(in, billing, scope, preparedFingerprint{})
}

// newCardMethodFP is newCardMethod with the fingerprint fp when it was prepared for this number
// in this scope.
func (s *Service) newCardMethodFP(in card.Input, billing domain.BillingDetails, scope domain.Scope, fp preparedFingerprint) *domain.PaymentMethod {
	brand, last4 := card.Describe(in.Number)
	fingerprint := fp.value
	if fp.value == "" || fp.scope != scope || fp.card == nil || fp.card.Number != in.Number {
		fingerprint = card.Fingerprint(s.scopedFingerprintKey(scope), in.Number)
	}
	pm := &domain.PaymentMethod{
		Type: domain.MethodCreditCard, BillingDetails: billing, Metadata: domain.Metadata{},
		Card: &domain.PaymentCard{Brand: string(brand), Country: "BR", ExpMonth: in.ExpMonth, ExpYear: in.ExpYear,
			Fingerprint: fingerprint, Funding: card.FundingCredit, Last4: last4, Network: brand.Network()},
	}
	if !scope.Livemode {
		pm.SimBehavior = BehaviorKey(in.Number)
	}
	return pm
}

// scopedFingerprintKey derives the fingerprint key of one organization and environment, so a
// fingerprint matches the same card within a scope but cannot correlate cards across them.
func (s *Service) scopedFingerprintKey(scope domain.Scope) []byte {
	m := hmac.New(sha256.New, s.FingerprintKey)
	m.Write([]byte(scope.OrgID))
	if scope.Livemode {
		m.Write([]byte("|live"))
	} else {
		m.Write([]byte("|test"))
	}
	return m.Sum(nil)
}

// savedCardExpired reports whether a saved card's expiry month is over.
func savedCardExpired(c *domain.PaymentCard, now time.Time) bool {
	firstInvalid := time.Date(c.ExpYear, time.Month(c.ExpMonth)+1, 1, 0, 0, 0, 0, time.UTC)
	return !now.Before(firstInvalid)
}

func (s *Service) confirmCard(tx *db.Tx, c *confirmation) (*domain.PaymentIntent, error) {
	p, pi, a := c.p, c.pi, c.a
	if p.BoletoDueDate != nil {
		return nil, domain.Invalid("boleto_due_date", "boleto_due_date applies to boleto payments only.")
	}
	var in *card.Input
	var pm *domain.PaymentMethod
	reuse := false
	switch {
	case p.Card != nil && p.PaymentMethod != "":
		return nil, domain.Invalid("payment_method", "Send either card or payment_method, not both.")
	case p.Card != nil:
		v := p.Card.input()
		if cerr := v.Validate(tx.Now); cerr != nil {
			return nil, cardFormatError(cerr, pi)
		}
		if len([]rune(v.HolderName)) > 200 {
			return nil, cardFormatError(&card.Error{Code: "invalid_name", Param: "card[holder_name]", Message: "The cardholder name is invalid."}, pi)
		}
		in = &v
	case p.PaymentMethod != "":
		var err error
		if pm, err = tx.FindPaymentMethodByID(a.Scope, p.PaymentMethod); err != nil {
			return nil, notFound(err, "payment_method", "payment method", p.PaymentMethod)
		}
		if pm.Type != domain.MethodCreditCard || pm.Card == nil {
			return nil, domain.Invalid("payment_method", "Payment method %s is not a card; PIX and boleto are confirmed with payment_method_type.", pm.ID)
		}
		if pm.Customer != nil && (pi.Customer == nil || *pi.Customer != *pm.Customer) {
			return nil, domain.Invalid("payment_method", "Payment method %s belongs to another customer than this payment intent's.", pm.ID)
		}
		if savedCardExpired(pm.Card, tx.Now) {
			return nil, cardFormatError(&card.Error{Code: card.CodeExpiredCard, Param: "payment_method", Message: "The card has expired."}, pi)
		}
		reuse = pm.Customer != nil && !p.Hosted
	default:
		return nil, domain.Missing("card")
	}
	brand := ""
	if in != nil {
		brand = string(card.DetectBrand(in.Number))
	} else {
		brand = pm.Card.Brand
	}
	count := 1
	if p.Installments != nil {
		count = *p.Installments
	}
	if err := fees.CheckInstallments(count, pi.Amount, c.org.MaxInstallments, brand); err != nil {
		return nil, installmentError(err)
	}
	if p.SavePaymentMethod && pi.Customer == nil {
		return nil, domain.Invalid("save_payment_method", "save_payment_method needs a customer on the payment intent to save the card on.")
	}
	proc, err := s.processor(a.Livemode, domain.MethodCreditCard)
	if err != nil {
		return nil, err
	}

	// Everything is valid: from here on the attempt is recorded, whatever its outcome.
	_, rate := planFor(c.org)
	option := fees.OptionFor(pi.Amount, fees.InterestPayer(pi.InterestPayer), rate, count)
	total := option.TotalAmount
	chargeID := domain.NewID(domain.PrefixCharge)
	if pm == nil {
		pm = s.newCardMethodFP(*in, c.buyer, a.Scope, p.fp)
		if err := tx.CreatePaymentMethod(a.Scope, pm); err != nil {
			return nil, err
		}
	}
	capture := pi.CaptureMethod != domain.CaptureManual
	details := &domain.CardDetails{Brand: pm.Card.Brand, Checks: domain.CardChecks{AddressLine1Check: "unchecked", AddressPostalCodeCheck: "unchecked", CVCCheck: "unchecked"},
		Country: pm.Card.Country, ExpMonth: pm.Card.ExpMonth, ExpYear: pm.Card.ExpYear,
		Fingerprint: pm.Card.Fingerprint, Funding: pm.Card.Funding, Installments: count, Last4: pm.Card.Last4, Network: pm.Card.Network}
	ch := &domain.Charge{ID: chargeID, PaymentIntent: pi.ID, Customer: pi.Customer, Amount: total, Currency: pi.Currency, Description: pi.Description,
		PaymentMethod: &pm.ID, BillingDetails: c.buyer, Metadata: copyMetadata(pi.Metadata), ReceiptURL: s.receiptURL(p.Origin, chargeID),
		PaymentMethodDetails: domain.PaymentMethodDetails{Type: domain.MethodCreditCard, Card: details}, Status: domain.ChargeStatusPending}
	pi.PaymentMethodType = strPtr(domain.MethodCreditCard)
	pi.Installments = &count
	pi.LatestCharge = &ch.ID
	pi.Buyer = c.buyer
	pi.PaymentData = &domain.PaymentData{Type: domain.MethodCreditCard, CreditCard: &domain.CreditCardData{Brand: pm.Card.Brand, Last4: pm.Card.Last4, Installments: count}}
	pi.PaymentMethod = &pm.ID
	pi.LastPaymentError = nil
	att := cardAttempt{Capture: capture, Save: p.SavePaymentMethod, Typed: in != nil}
	req := CardRequest{ChargeID: chargeID, Amount: total, Currency: pi.Currency, Installments: count, Capture: capture, Card: in, Brand: pm.Card.Brand,
		SavedBehavior: pm.SimBehavior, Reuse: reuse, SaveCard: p.SavePaymentMethod && pm.Customer == nil}
	if c.buyer.Name != nil {
		req.Customer = *c.buyer.Name
	}
	if !proc.InTransaction() {
		return s.reserveCard(tx, c, ch, pm, req, att)
	}
	res, err := proc.AuthorizeCard(context.Background(), req)
	if err != nil {
		return nil, fmt.Errorf("payments: authorize card: %w", err)
	}
	att.New = true // the charge is stored once, with its outcome
	att.NewIntent = p.intentUnstored
	return s.finishCard(tx, a, c.org, pi, &c.before, ch, pm, res, att)
}

// cardAttempt is what applying a card answer needs beyond the charge: kept on the processor
// call between the two phases of a live confirmation.
type cardAttempt struct {
	Capture bool `json:"capture"`
	Save    bool `json:"save"`
	Typed   bool `json:"typed"`
	// New: the charge is not stored yet (the one-phase path), so finishCard inserts it with its
	// outcome rather than updating the pending row.
	New bool `json:"-"`
	// NewIntent: the intent has no row yet (CreateAndConfirm), so finishCard inserts it with its
	// outcome rather than updating it.
	NewIntent bool `json:"-"`
}

// finishCard records a card answer on the charge ch (stored pending, or new when att.New) and its intent:
// status, ledger, the saved card, events; a decline answers 402 with KeepChanges.
func (s *Service) finishCard(tx *db.Tx, a domain.Actor, org *domain.Organization, pi *domain.PaymentIntent, before *domain.PaymentIntent,
	ch *domain.Charge, pm *domain.PaymentMethod, res CardResult, att cardAttempt) (*domain.PaymentIntent, error) {
	if res.Outcome == card.OutcomeDeclined && res.Decline == nil {
		res.Decline = processingError()
	}
	details := ch.PaymentMethodDetails.Card
	total := ch.Amount
	capture := att.Capture
	checks := &details.Checks
	if att.Typed {
		checks.CVCCheck = "pass"
		if res.Decline != nil && res.Decline.Code == "incorrect_cvc" {
			checks.CVCCheck = "fail"
		}
	}
	if addr := ch.BillingDetails.Address; addr != nil {
		if addr.Line1 != "" {
			checks.AddressLine1Check = "pass"
		}
		if addr.PostalCode != "" {
			checks.AddressPostalCodeCheck = "pass"
		}
	}
	pi.LastPaymentError = nil
	chargeEvent, piEvent := "", ""
	switch res.Outcome {
	case card.OutcomeSucceeded, card.OutcomeRequiresCapture:
		ch.Status, ch.Paid = domain.ChargeStatusSucceeded, true
		details.AmountAuthorized = &total
		details.AuthorizationCode = strPtr(res.AuthorizationCode)
		chargeEvent = "charge.succeeded"
		if res.Outcome == card.OutcomeSucceeded && capture {
			ch.Captured, ch.AmountCaptured = true, total
			pi.Status, pi.AmountReceived = domain.PIStatusSucceeded, total
			piEvent = "payment_intent.succeeded"
		} else {
			pi.Status, pi.AmountCapturable = domain.PIStatusRequiresCapture, total
			piEvent = "payment_intent.amount_capturable_updated"
		}
	case card.OutcomeProcessing, card.OutcomePending:
		ch.Status = domain.ChargeStatusPending
		pi.Status = string(res.Outcome)
		chargeEvent, piEvent = "charge.pending", "payment_intent."+string(res.Outcome)
	default:
		ch.Status, ch.PaymentError = domain.ChargeStatusFailed, res.Decline
		pi.Status, pi.LastPaymentError, pi.PaymentMethod = domain.PIStatusRequiresPaymentMethod, res.Decline, nil
		chargeEvent, piEvent = "charge.failed", "payment_intent.payment_failed"
	}
	storeCharge := tx.UpdateCharge
	if att.New {
		storeCharge = tx.CreateCharge
	}
	if err := storeCharge(a.Scope, ch); err != nil {
		return nil, err
	}
	storeIntent := tx.UpdatePaymentIntent
	if att.NewIntent {
		storeIntent = tx.InsertPaymentIntent
	}
	if err := storeIntent(a.Scope, pi); err != nil {
		return nil, err
	}
	if ch.Captured {
		if err := s.recordSale(tx, a.Scope, org, pi, ch); err != nil {
			return nil, err
		}
	}
	if pi.Status == domain.PIStatusRequiresCapture {
		if err := scheduleAuthorizationExpiry(tx, a, pi, ch); err != nil {
			return nil, err
		}
	}
	if res.Dispute != nil && ch.Status == domain.ChargeStatusSucceeded {
		if err := scheduleDispute(tx, a.Scope, ch.ID, *res.Dispute, ch.Captured); err != nil {
			return nil, err
		}
	}
	if ch.Status == domain.ChargeStatusPending && res.SettlesLater {
		if err := tx.ScheduleTransition(db.ScheduledTransition{Scope: a.Scope, PaymentIntent: pi.ID, Charge: ch.ID, Action: ActionSucceed,
			DueAt: tx.Now.Add(s.SimDelay).Unix()}); err != nil {
			return nil, err
		}
	}
	if att.Save && ch.Status != domain.ChargeStatusFailed && pm.Customer == nil {
		pmBefore := *pm
		pm.Customer = pi.Customer
		if res.CardToken != "" {
			if err := s.saveCardToken(tx, a.Scope, pm.ID, res.CardToken); err != nil {
				return nil, err
			}
		}
		if err := tx.UpdatePaymentMethod(a.Scope, pm); err != nil {
			return nil, err
		}
		if err := emit(tx, a, "payment_method.attached", pm, &pmBefore); err != nil {
			return nil, err
		}
	}
	if err := emit(tx, a, chargeEvent, ch, nil); err != nil {
		return nil, err
	}
	if err := emit(tx, a, piEvent, pi, before); err != nil {
		return nil, err
	}
	if ch.Status == domain.ChargeStatusFailed {
		return pi, declineError(res.Decline, ch.ID, pi)
	}
	return pi, nil
}
