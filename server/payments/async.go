package payments

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"troco/db"
	"troco/server/boleto"
	"troco/server/domain"
	"troco/server/pix"
	"troco/server/simulation"
)

// PIX and boleto (SPEC 3.4, 4.7, 8.5; CONTRACT 4). A confirmation opens a pending charge with a
// BR Code or a boleto; the processor says in which state it starts. In test mode the buyer's
// e-mail picks the outcome (simulation.RuleForEmail): immediate success, immediate expiry, or a
// pending charge that a delayed rule settles or expires after SimDelay through a row of
// scheduled_transitions, applied by the job RunDueTransitions. The hosted test bar and the test
// helpers call SimulateSettlement. Settled payments write their ledger entry; expired ones fail
// their charge with payment_intent_payment_attempt_expired and return the intent to
// requires_payment_method, where it accepts another attempt.

// PixLifetime is how long a BR Code stays payable (expires_at). In test mode only the SPEC 8.5
// rules and the test helpers move a waiting payment.
const PixLifetime = 24 * time.Hour

// MaxBoletoDays bounds how far in the future boleto_due_date may be.
const MaxBoletoDays = 365

// Transition actions stored in scheduled_transitions.
const (
	ActionSucceed = "succeed"
	ActionExpire  = "expire"
	// ActionExpireAuthorization cancels an uncaptured card authorization AuthorizationWindow
	// after it was made (test mode).
	ActionExpireAuthorization = "expire_authorization"
)

// AuthorizationWindow is how long an uncaptured card authorization can be captured (Stripe's
// seven days for online card payments); then the payment intent is canceled automatically.
const AuthorizationWindow = 7 * 24 * time.Hour

// dueDate resolves boleto_due_date: default 3 days after confirmation (SPEC 4.7), moved to the
// next business day when that is a weekend or holiday; otherwise a civil YYYY-MM-DD from today up
// to MaxBoletoDays ahead, kept as given (a due date on a non-business day is payable without
// fine or interest until the end of the next business day: calendar.ChargesFrom).
func (s *Service) dueDate(now time.Time, raw *string) (boleto.Date, error) {
	today := boleto.DateOf(now)
	if raw == nil {
		return boleto.DateOf(s.Calendar.OnOrAfter(boleto.DefaultDueDate(now).Time())), nil
	}
	d, err := boleto.ParseDate(*raw)
	if err != nil {
		return boleto.Date{}, domain.Invalid("boleto_due_date", "boleto_due_date must be an existing civil date written YYYY-MM-DD, such as %s.", today.AddDays(3))
	}
	if d.Before(today) {
		return boleto.Date{}, domain.Invalid("boleto_due_date", "boleto_due_date cannot be in the past (today is %s).", today)
	}
	if d.After(today.AddDays(MaxBoletoDays)) {
		return boleto.Date{}, domain.Invalid("boleto_due_date", "boleto_due_date can be at most %d days ahead.", MaxBoletoDays)
	}
	if _, err := boleto.DueFactor(d); err != nil {
		return boleto.Date{}, domain.Invalid("boleto_due_date", "boleto_due_date is outside the range a boleto can express.")
	}
	return d, nil
}

// PixImagePath and BoletoPagePath are the public (API-key-free) addresses of a payment intent's
// QR image and printable boleto; they require ?client_secret=.
func PixImagePath(piID string) string   { return "/payment-intents/" + piID + "/pix.png" }
func BoletoPagePath(piID string) string { return "/payment-intents/" + piID + "/boleto" }

func publicURL(origin, path, secret string) string {
	return strings.TrimRight(origin, "/") + path + "?client_secret=" + url.QueryEscape(secret)
}

// evpKey derives a random-key (EVP) shaped PIX key, 8-4-4-4-12 hex, from an identifier.
func evpKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])
}

// pixCode builds the dynamic BR Code of a charge: the payload location is this server's host
// (…/pix/v2/<txid>); when the host is too long for the field, a static code with a key derived
// from the charge is used. Either way the code is single use and carries the amount.
func pixCode(org *domain.Organization, origin, chargeID string, amount int64) (code, txid string, err error) {
	txid = pix.TxID(chargeID)
	name := org.ShownName()
	city := "SAO PAULO"
	if org.Address != nil && org.Address.City != "" {
		city = org.Address.City
	}
	p := pix.Payload{MerchantName: name, MerchantCity: city, Amount: amount, SingleUse: true}
	host := "pix.troco.invalid"
	if u, perr := url.Parse(origin); perr == nil && u.Host != "" {
		host = u.Host
	}
	p.URL = host + "/pix/v2/" + txid
	if len(p.URL) > pix.MaxURL {
		p.URL, p.Key, p.TxID = "", evpKey(chargeID), txid
	}
	code, err = p.Encode()
	if err != nil && strings.Contains(err.Error(), "merchant name") {
		p.MerchantName = "TROCO"
		code, err = p.Encode()
	}
	if err != nil && strings.Contains(err.Error(), "merchant city") {
		p.MerchantCity = "SAO PAULO"
		code, err = p.Encode()
	}
	return code, txid, err
}

func (s *Service) confirmAsync(tx *db.Tx, c *confirmation, method string) (*domain.PaymentIntent, error) {
	p, pi, a := c.p, c.pi, c.a
	switch {
	case p.Card != nil:
		return nil, domain.Invalid("card", "card applies to credit_card payments only.")
	case p.PaymentMethod != "":
		return nil, domain.Invalid("payment_method", "payment_method (a saved card) applies to credit_card payments only.")
	case p.Installments != nil && *p.Installments != 1:
		return nil, domain.Invalid("installments", "Instalments apply to credit_card payments only.")
	case p.SavePaymentMethod:
		return nil, domain.Invalid("save_payment_method", "Only cards can be saved.")
	case method == domain.MethodPix && p.BoletoDueDate != nil:
		return nil, domain.Invalid("boleto_due_date", "boleto_due_date applies to boleto payments only.")
	}
	var due boleto.Date
	if method == domain.MethodBoleto {
		var err error
		if due, err = s.dueDate(tx.Now, p.BoletoDueDate); err != nil {
			return nil, err
		}
	}
	proc, err := s.processor(a.Livemode, method)
	if err != nil {
		return nil, err
	}
	chargeID := domain.NewID(domain.PrefixCharge)
	email := ""
	if c.buyer.Email != nil && !(c.p.SimulateWaiting && !a.Livemode) {
		email = *c.buyer.Email // without one, the simulator's default rule: the payment waits
	}
	req := AsyncRequest{Method: method, ChargeID: chargeID, Amount: pi.Amount, Email: email}
	if pi.Description != nil {
		req.Description = *pi.Description
	}
	pm := &domain.PaymentMethod{Type: method, BillingDetails: c.buyer, Metadata: domain.Metadata{}}
	ch := &domain.Charge{ID: chargeID, PaymentIntent: pi.ID, Customer: pi.Customer, Amount: pi.Amount, Currency: pi.Currency, Description: pi.Description,
		PaymentMethod: &pm.ID, BillingDetails: c.buyer, Metadata: copyMetadata(pi.Metadata), Status: domain.ChargeStatusPending,
		ReceiptURL: s.receiptURL(p.Origin, chargeID)}
	pi.PaymentMethodType = &method
	pi.Installments = nil
	pi.LatestCharge = &ch.ID
	pi.Buyer = c.buyer
	pi.LastPaymentError = nil
	if !proc.InTransaction() {
		if err := tx.CreatePaymentMethod(a.Scope, pm); err != nil {
			return nil, err
		}
		pi.PaymentMethod = &pm.ID
		if method == domain.MethodPix {
			if err := invoiceDueDate(tx, c, &req); err != nil {
				return nil, err
			}
		}
		return s.reserveStart(tx, c, ch, req)
	}
	res, err := proc.StartAsync(context.Background(), req)
	if err != nil {
		return nil, fmt.Errorf("payments: start %s: %w", method, err)
	}
	if err := tx.CreatePaymentMethod(a.Scope, pm); err != nil {
		return nil, err
	}
	if err := s.issue(tx, a.Scope, c.org, pi, ch, method, due, p.Origin, tx.Now); err != nil {
		return nil, err
	}
	pi.PaymentMethodType = &method
	pi.PaymentMethod = &pm.ID
	pi.Installments = nil
	pi.LatestCharge = &ch.ID
	pi.Buyer = c.buyer
	pi.LastPaymentError = nil
	pi.Status = domain.PIStatusPending
	switch res.Initial {
	case simulation.StateSucceeded:
		settle(pi, ch)
	case simulation.StateRequiresPaymentMethod:
		expire(pi, ch, method)
	}
	if err := tx.CreateCharge(a.Scope, ch); err != nil {
		return nil, err
	}
	if err := tx.UpdatePaymentIntent(a.Scope, pi); err != nil {
		return nil, err
	}
	if ch.Captured {
		if err := s.recordSale(tx, a.Scope, c.org, pi, ch); err != nil {
			return nil, err
		}
	}
	if pi.Status == domain.PIStatusPending && res.After != "" {
		action := ActionSucceed
		if res.After == simulation.StateRequiresPaymentMethod {
			action = ActionExpire
		}
		if err := tx.ScheduleTransition(db.ScheduledTransition{Scope: a.Scope, PaymentIntent: pi.ID, Charge: ch.ID, Action: action,
			DueAt: tx.Now.Add(s.SimDelay).Unix()}); err != nil {
			return nil, err
		}
	}
	chargeEvent, piEvent := transitionEvents(pi.Status)
	if err := emit(tx, a, chargeEvent, ch, nil); err != nil {
		return nil, err
	}
	return pi, emit(tx, a, piEvent, pi, &c.before)
}

// BoletoPixValidityDays is how many days after its due date the PIX printed on a boleto stays
// payable (the API Pix's validadeAposVencimento default).
const BoletoPixValidityDays = 30

// issue fills the charge's method details and the intent's payment data with a new BR Code or
// boleto for the charge, and records the location of its dynamic PIX code. A boleto also carries
// the PIX code of the same charge (boleto híbrido).
func (s *Service) issue(tx *db.Tx, sc domain.Scope, org *domain.Organization, pi *domain.PaymentIntent, ch *domain.Charge, method string, due boleto.Date, callerOrigin string, now time.Time) error {
	origin := s.origin(callerOrigin)
	code, txid, err := pixCode(org, origin, ch.ID, ch.Amount)
	if err != nil {
		return fmt.Errorf("payments: pix code: %w", err)
	}
	loc := &db.PixLocation{TxID: txid, Scope: sc, PaymentIntent: pi.ID, Charge: ch.ID, Kind: LocationCob}
	switch method {
	case domain.MethodPix:
		expires := domain.At(now.Add(PixLifetime))
		loc.ExpiresAt = expires.Time
		ch.PaymentMethodDetails = domain.PaymentMethodDetails{Type: method, Pix: &domain.PixDetails{Code: code, TxID: txid, ExpiresAt: expires}}
		pi.PaymentData = &domain.PaymentData{Type: method, Pix: &domain.PixData{Code: code, ImageURL: publicURL(origin, PixImagePath(pi.ID), pi.ClientSecret), ExpiresAt: expires}}
	case domain.MethodBoleto:
		b, err := boleto.New(domain.NewID("bol_"), due, ch.Amount)
		if err != nil {
			return domain.Invalid("amount", "This amount cannot be paid by boleto: %v.", err)
		}
		loc.Kind = LocationCobv
		loc.ExpiresAt = s.Calendar.ChargesFrom(due.Time()).AddDate(0, 0, BoletoPixValidityDays)
		ch.PaymentMethodDetails = domain.PaymentMethodDetails{Type: method, Boleto: &domain.BoletoDetails{Barcode: b.Barcode, DigitableLine: b.DigitableLine, DueDate: b.DueDate,
			PixCode: code, PixTxID: txid}}
		pi.PaymentData = &domain.PaymentData{Type: method, Boleto: &domain.BoletoData{DigitableLine: b.DigitableLine, Barcode: b.Barcode, DueDate: b.DueDate,
			URL: publicURL(origin, BoletoPagePath(pi.ID), pi.ClientSecret), PixCode: code}}
	}
	return tx.UpsertPixLocation(loc)
}

// transitionEvents names the events of an intent reaching status after an attempt.
func transitionEvents(status string) (charge, intent string) {
	switch status {
	case domain.PIStatusSucceeded:
		return "charge.succeeded", "payment_intent.succeeded"
	case domain.PIStatusRequiresCapture:
		return "charge.succeeded", "payment_intent.amount_capturable_updated"
	case domain.PIStatusRequiresPaymentMethod:
		return "charge.failed", "payment_intent.payment_failed"
	case domain.PIStatusProcessing:
		return "charge.pending", "payment_intent.processing"
	}
	return "charge.pending", "payment_intent.pending"
}

// settle marks a waiting payment paid (in memory); a boleto records how it was paid (by its
// barcode unless paidWith says pix).
func settle(pi *domain.PaymentIntent, ch *domain.Charge, paidWith ...string) {
	ch.Status, ch.Paid = domain.ChargeStatusSucceeded, true
	if b := ch.PaymentMethodDetails.Boleto; b != nil {
		via := domain.PaidWithBoleto
		if len(paidWith) > 0 && paidWith[0] != "" {
			via = paidWith[0]
		}
		b.PaidWith = &via
	}
	if ch.PaymentMethodDetails.Card != nil {
		amount := ch.Amount
		ch.PaymentMethodDetails.Card.AmountAuthorized = &amount
		if ch.PaymentMethodDetails.Card.AuthorizationCode == nil { // a live acquirer's code is kept
			ch.PaymentMethodDetails.Card.AuthorizationCode = strPtr(authorizationCode(ch.ID))
		}
	}
	if pi.CaptureMethod == domain.CaptureManual && ch.PaymentMethodDetails.Type == domain.MethodCreditCard {
		pi.Status, pi.AmountCapturable = domain.PIStatusRequiresCapture, ch.Amount
		return
	}
	ch.Captured, ch.AmountCaptured = true, ch.Amount
	pi.Status, pi.AmountReceived = domain.PIStatusSucceeded, ch.Amount
}

// expiredError is the payment_error of a PIX code or boleto that expired unpaid.
func expiredError(method string) *domain.PaymentError {
	what := map[string]string{domain.MethodPix: "The PIX code", domain.MethodBoleto: "The boleto"}[method]
	if what == "" {
		what = "The payment attempt"
	}
	return &domain.PaymentError{Category: "processing_error", Code: domain.CodePaymentAttemptExpired,
		Message: what + " expired before it was paid. Confirm the payment intent again for a new attempt.", AdviceCode: strPtr("try_again_later")}
}

// canceledError is the payment_error of a pending charge whose intent was canceled.
func canceledError() *domain.PaymentError {
	return &domain.PaymentError{Category: "processing_error", Code: domain.CodePaymentCanceled,
		Message: "The payment was canceled before it was completed.", AdviceCode: strPtr("do_not_try_again")}
}

// expire marks a waiting payment expired (in memory): the intent accepts another attempt.
func expire(pi *domain.PaymentIntent, ch *domain.Charge, method string) {
	pe := expiredError(method)
	ch.Status, ch.PaymentError = domain.ChargeStatusFailed, pe
	pi.Status, pi.LastPaymentError, pi.PaymentMethod = domain.PIStatusRequiresPaymentMethod, pe, nil
}

// SimulateOptions says how SimulateSettlement resolves a payment.
type SimulateOptions struct {
	// Succeed settles the payment; otherwise it fails (a waiting PIX/boleto expires).
	Succeed bool
	// Origin is the https://host public URLs use when the Service has no BaseURL.
	Origin string
	// PaidWith, for a boleto híbrido, says which way the buyer paid: boleto (the barcode, the
	// default) or pix (the QR printed on it). A PIX payment is always pix.
	PaidWith string
}

// Sandbox cards and buyer used when a test helper resolves an intent nobody confirmed yet.
const (
	sandboxApproveCard = "4242424242424242"
	sandboxDeclineCard = "4000000000000002"
)

// SimulateSettlement resolves a test-mode payment as the hosted page's 'simulate payment' and
// 'simulate expiration' buttons and the test helpers do, with the events of a real payment:
//   - a waiting intent (pending, requires_action, processing) succeeds, or expires back to
//     requires_payment_method;
//   - an intent nobody confirmed yet gets a simulated attempt: the 4242 test card (or, without
//     credit_card, PIX/boleto with the succeed_immediately rule) to succeed; the generic_decline
//     card (or the expire_immediately rule) to fail, recorded on the intent as a real decline.
//
// Live keys get testmode_required whatever the id (SPEC 4.5, 5.12: test helpers accept only test
// keys, so the key is refused before any lookup, as the checkout session helpers do); other
// states are 409.
func (s *Service) SimulateSettlement(tx *db.Tx, a domain.Actor, id string, succeed bool) (*domain.PaymentIntent, error) {
	return s.SimulateSettlementWith(tx, a, id, SimulateOptions{Succeed: succeed})
}

// SimulateSettlementWith is SimulateSettlement with options (the origin of public URLs).
func (s *Service) SimulateSettlementWith(tx *db.Tx, a domain.Actor, id string, o SimulateOptions) (*domain.PaymentIntent, error) {
	if a.Livemode {
		return nil, domain.TestmodeRequired()
	}
	switch {
	case o.PaidWith != "" && o.PaidWith != domain.PaidWithBoleto && o.PaidWith != domain.PaidWithPix:
		return nil, domain.Invalid("paid_with", "paid_with must be boleto (the barcode) or pix (the QR printed on the boleto).")
	case o.PaidWith != "" && !o.Succeed:
		return nil, domain.Invalid("paid_with", "paid_with applies to succeed only: it says how a boleto was paid.")
	}
	pi, err := s.GetIntent(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	switch {
	case pi.Waiting() && pi.LatestCharge != nil:
		method := ""
		if pi.PaymentMethodType != nil {
			method = *pi.PaymentMethodType
		}
		if o.PaidWith != "" && method != domain.MethodBoleto && method != domain.MethodPix {
			return nil, domain.Invalid("paid_with", "paid_with applies to PIX and boleto payments only.")
		}
		if o.PaidWith == domain.PaidWithBoleto && method != domain.MethodBoleto {
			return nil, domain.Invalid("paid_with", "This payment intent waits for a %s payment, not a boleto: paid_with boleto does not apply.", method)
		}
		if err := tx.DeleteTransitions(a.Scope, pi.ID); err != nil {
			return nil, err
		}
		return pi, s.resolve(tx, a, pi, *pi.LatestCharge, o.Succeed, o.PaidWith)
	case confirmable(pi.Status):
		return s.simulateAttempt(tx, a, pi, o)
	}
	action := "fail"
	if o.Succeed {
		action = "succeed"
	}
	return nil, stateError("payment intent", pi.ID, pi.Status, action+" (test helper)")
}

func (s *Service) simulateAttempt(tx *db.Tx, a domain.Actor, pi *domain.PaymentIntent, o SimulateOptions) (*domain.PaymentIntent, error) {
	p := ConfirmParams{Origin: o.Origin, Hosted: true}
	has := func(m string) bool {
		for _, t := range pi.PaymentMethodTypes {
			if t == m {
				return true
			}
		}
		return false
	}
	switch {
	case has(domain.MethodCreditCard):
		number := sandboxDeclineCard
		if o.Succeed {
			number = sandboxApproveCard
		}
		p.PaymentMethodType = domain.MethodCreditCard
		p.Card = &CardParams{Number: number, ExpMonth: 12, ExpYear: tx.Now.Year() + 2, CVC: "123", HolderName: "Sandbox"}
	default:
		p.PaymentMethodType = domain.MethodPix
		if !has(domain.MethodPix) {
			p.PaymentMethodType = domain.MethodBoleto
			b := pi.Buyer
			p.CustomerName, p.CustomerDocument, p.BillingAddress = b.Name, b.Document, b.Address
			if b.Name == nil {
				p.CustomerName = strPtr("Comprador Sandbox")
			}
			if b.Document == nil {
				p.CustomerDocument = strPtr("00000000191")
			}
			if b.Address == nil {
				p.BillingAddress = &domain.Address{Line1: "Avenida Paulista", Number: "1000", Neighborhood: "Bela Vista", City: "São Paulo", State: "SP", PostalCode: "01310100", Country: "BR"}
			}
		}
		email := "expire_immediately@example.com"
		if o.Succeed {
			email = "succeed_immediately@example.com"
		}
		p.CustomerEmail = &email
	}
	out, err := s.confirm(tx, a, pi.ID, p)
	if e, ok := domain.AsError(err); ok && e.KeepChanges {
		return out, nil // the decline is the simulated outcome
	}
	return out, err
}

// resolve applies a settlement or expiry to the waiting intent pi and its charge chargeID;
// paidWith says how a boleto híbrido was paid ("" is its barcode).
func (s *Service) resolve(tx *db.Tx, a domain.Actor, pi *domain.PaymentIntent, chargeID string, succeed bool, paidWith string) error {
	return s.resolvePaid(tx, a, pi, chargeID, succeed, paidWith, -1)
}

// resolvePaid is resolve with the amount the payer paid as the processor reported it (a live
// PIX charge with a due date paid late carries the PSP's multa and juros); paid < 0 means the
// sandbox: the late fees of the charge's invoice are computed for now.
func (s *Service) resolvePaid(tx *db.Tx, a domain.Actor, pi *domain.PaymentIntent, chargeID string, succeed bool, paidWith string, paid int64) error {
	ch, err := tx.FindChargeByID(a.Scope, chargeID)
	if err != nil {
		return err
	}
	before, chBefore := *pi, *ch
	if ch.PaymentMethodDetails.Boleto != nil {
		b := *ch.PaymentMethodDetails.Boleto // chBefore keeps its own copy
		ch.PaymentMethodDetails.Boleto = &b
	}
	if ch.PaymentMethodDetails.Pix != nil {
		p := *ch.PaymentMethodDetails.Pix
		ch.PaymentMethodDetails.Pix = &p
	}
	if succeed {
		settle(pi, ch, paidWith)
		if pi.Status == domain.PIStatusRequiresCapture {
			if err := scheduleAuthorizationExpiry(tx, a, pi, ch); err != nil {
				return err
			}
		}
		if ch.Captured {
			fine, interest, err := s.lateFees(tx, a.Scope, pi, ch)
			if err != nil {
				return err
			}
			if paid >= 0 { // the processor's figure wins; the fine is the part of it the rate gives
				late := max(paid-ch.Amount, 0)
				fine = min(fine, late)
				interest = late - fine
			}
			applyLateFees(pi, ch, fine, interest)
		}
	} else {
		expire(pi, ch, ch.PaymentMethodDetails.Type)
	}
	if err := tx.UpdateCharge(a.Scope, ch); err != nil {
		return err
	}
	if err := tx.UpdatePaymentIntent(a.Scope, pi); err != nil {
		return err
	}
	if ch.Captured {
		org, err := tx.FindOrganizationByID(a.OrgID)
		if err != nil {
			return err
		}
		if err := s.recordSale(tx, a.Scope, org, pi, ch); err != nil {
			return err
		}
	}
	chargeEvent, piEvent := transitionEvents(pi.Status)
	if err := emit(tx, a, chargeEvent, ch, &chBefore); err != nil {
		return err
	}
	if err := emit(tx, a, piEvent, pi, &before); err != nil {
		return err
	}
	if s.AfterSettle != nil {
		return s.AfterSettle(tx, a, pi)
	}
	return nil
}

// transitionBatch is how many due transitions one job transaction applies.
const transitionBatch = 100

// RunDueTransitions applies every scheduled transition due at now: each batch is claimed
// (deleted) and applied in one write transaction, so a transition is applied exactly once even
// with several replicas, and one still due after a restart is applied on the next run. A
// transition whose attempt is no longer the intent's waiting one is dropped.
func (s *Service) RunDueTransitions(ctx context.Context, store *db.DB, now time.Time) error {
	for {
		n := 0
		err := store.Write(ctx, func(tx *db.Tx) error {
			due, err := tx.ClaimDueTransitions(now.Unix(), transitionBatch)
			if err != nil {
				return err
			}
			n = len(due)
			for _, t := range due {
				if err := s.applyTransition(tx, t); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil || n < transitionBatch {
			return err
		}
	}
}

func (s *Service) applyTransition(tx *db.Tx, t db.ScheduledTransition) error {
	pi, err := tx.FindPaymentIntentByID(t.Scope, t.PaymentIntent)
	if errors.Is(err, db.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if t.Action == ActionExpireAuthorization {
		return s.expireAuthorization(tx, domain.Actor{Scope: t.Scope}, pi, t.Charge)
	}
	if !pi.Waiting() || pi.LatestCharge == nil || *pi.LatestCharge != t.Charge {
		return nil
	}
	return s.resolve(tx, domain.Actor{Scope: t.Scope}, pi, t.Charge, t.Action == ActionSucceed, "")
}

// RegenerateParams is the body of regenerate-boleto.
type RegenerateParams struct {
	BoletoDueDate *string `json:"boleto_due_date"`
	// Origin is the https://host public URLs use when the Service has no BaseURL.
	Origin string `json:"-"`
}

// RegenerateBoleto issues a new boleto (new due date, new barcode and line) for a boleto intent
// that still waits (the pending charge keeps its id and gets the new boleto; charge.updated and
// payment_intent.updated) or whose last boleto expired (a new pending attempt, as a confirmation
// with the same buyer data would make). Other states are 409.
// The intent's owner (Owner.Reissued) then follows the new boleto in the same transaction.
func (s *Service) RegenerateBoleto(tx *db.Tx, a domain.Actor, id string, p RegenerateParams) (*domain.PaymentIntent, error) {
	pi, err := s.regenerateBoleto(tx, a, id, p)
	if err != nil || s.Owner.Reissued == nil {
		return pi, err
	}
	return pi, s.Owner.Reissued(tx, a, pi)
}

func (s *Service) regenerateBoleto(tx *db.Tx, a domain.Actor, id string, p RegenerateParams) (*domain.PaymentIntent, error) {
	pi, err := s.GetIntent(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	isBoleto := pi.PaymentMethodType != nil && *pi.PaymentMethodType == domain.MethodBoleto && pi.LatestCharge != nil
	waiting := pi.Status == domain.PIStatusPending || pi.Status == domain.PIStatusRequiresAction
	expired := pi.Status == domain.PIStatusRequiresPaymentMethod && pi.LastPaymentError != nil && pi.LastPaymentError.Code == domain.CodePaymentAttemptExpired
	if !isBoleto || !(waiting || expired) {
		return nil, stateError("payment intent", pi.ID, pi.Status, "regenerate a boleto for")
	}
	due, err := s.dueDate(tx.Now, p.BoletoDueDate)
	if err != nil {
		return nil, err
	}
	if expired {
		return s.confirm(tx, a, id, ConfirmParams{PaymentMethodType: domain.MethodBoleto, BoletoDueDate: strPtr(due.String()), Origin: p.Origin,
			CustomerEmail: pi.Buyer.Email, CustomerName: pi.Buyer.Name, CustomerDocument: pi.Buyer.Document, CustomerPhone: pi.Buyer.Phone, BillingAddress: pi.Buyer.Address})
	}
	org, err := tx.FindOrganizationByID(a.OrgID)
	if err != nil {
		return nil, err
	}
	ch, err := tx.FindChargeByID(a.Scope, *pi.LatestCharge)
	if err != nil {
		return nil, err
	}
	before, chBefore := *pi, *ch
	if err := s.issue(tx, a.Scope, org, pi, ch, domain.MethodBoleto, due, p.Origin, tx.Now); err != nil {
		return nil, err
	}
	if err := tx.UpdateCharge(a.Scope, ch); err != nil {
		return nil, err
	}
	if err := tx.UpdatePaymentIntent(a.Scope, pi); err != nil {
		return nil, err
	}
	if err := emit(tx, a, "charge.updated", ch, &chBefore); err != nil {
		return nil, err
	}
	return pi, emit(tx, a, "payment_intent.updated", pi, &before)
}

// lateFees returns the fine and interest owed, at tx.Now, on top of the waiting PIX or boleto
// charge ch of an invoice with late fees (fine_rate, interest_rate) paid after the invoice's due
// instant: computed on the charge's amount exactly as the invoice's amount_due counts them. A
// charge issued after the due instant already carries what was owed then (nothing more is
// added); a boleto counts from its own due date when that is later (a due date on a weekend or
// holiday is payable without charges until the end of the next business day).
func (s *Service) lateFees(tx *db.Tx, sc domain.Scope, pi *domain.PaymentIntent, ch *domain.Charge) (fine, interest int64, err error) {
	method := ch.PaymentMethodDetails.Type
	if method != domain.MethodPix && method != domain.MethodBoleto {
		return 0, 0, nil
	}
	inv, err := tx.FindInvoiceByPaymentIntent(sc, pi.ID)
	if errors.Is(err, db.ErrNotFound) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	if inv.DueDate.IsZero() || (inv.FineRate == 0 && inv.InterestRate == 0) || !ch.CreatedAt.Before(inv.DueDate.Time) {
		return 0, 0, nil
	}
	due := inv.DueDate.Time
	if b := ch.PaymentMethodDetails.Boleto; b != nil {
		if d, err := boleto.ParseDate(b.DueDate); err == nil {
			if from := s.Calendar.ChargesFrom(d.Time()); from.After(due) {
				due = from
			}
		}
	}
	fine, interest = domain.LateCharges(ch.Amount, inv.FineRate, inv.InterestRate, due, tx.Now)
	return fine, interest, nil
}

// applyLateFees adds the fine and interest paid to a settled charge (in memory): amount_captured
// and the intent's amount_received include them, and the method's details show them.
func applyLateFees(pi *domain.PaymentIntent, ch *domain.Charge, fine, interest int64) {
	if fine+interest <= 0 {
		return
	}
	ch.AmountCaptured = ch.Amount + fine + interest
	pi.AmountReceived = ch.AmountCaptured
	switch d := ch.PaymentMethodDetails; {
	case d.Pix != nil:
		d.Pix.FineAmount, d.Pix.InterestAmount = fine, interest
	case d.Boleto != nil:
		d.Boleto.FineAmount, d.Boleto.InterestAmount = fine, interest
	}
}

// scheduleAuthorizationExpiry schedules the automatic cancellation of an uncaptured card
// authorization (test mode; a live acquirer lets its authorization lapse on its own terms).
func scheduleAuthorizationExpiry(tx *db.Tx, a domain.Actor, pi *domain.PaymentIntent, ch *domain.Charge) error {
	if a.Livemode {
		return nil
	}
	return tx.ScheduleTransition(db.ScheduledTransition{Scope: a.Scope, PaymentIntent: pi.ID, Charge: ch.ID, Action: ActionExpireAuthorization,
		DueAt: tx.Now.Add(AuthorizationWindow).Unix()})
}

// expireAuthorization cancels an intent still waiting for the capture of its authorization
// chargeID, as Stripe does seven days after the authorization: the intent is canceled with
// cancellation_reason automatic, the authorization released (the charge refunded, see
// releaseAuthorization), and charge.expired emitted; the owner's hook runs as on a cancel.
func (s *Service) expireAuthorization(tx *db.Tx, a domain.Actor, pi *domain.PaymentIntent, chargeID string) error {
	if pi.Status != domain.PIStatusRequiresCapture || pi.LatestCharge == nil || *pi.LatestCharge != chargeID {
		return nil
	}
	reason := "automatic"
	canceled, err := s.cancel(tx, a, pi.ID, CancelParams{CancellationReason: &reason})
	if err != nil {
		return err
	}
	ch, err := tx.FindChargeByID(a.Scope, chargeID)
	if err != nil {
		return err
	}
	if err := emit(tx, a, "charge.expired", ch, nil); err != nil {
		return err
	}
	return s.afterSettle(tx, a, canceled)
}

// ExpireAuthorizationNow applies, in test mode, the automatic expiry an uncaptured authorization
// gets after AuthorizationWindow (troco trigger charge.expired uses it so no one waits a week).
func (s *Service) ExpireAuthorizationNow(tx *db.Tx, a domain.Actor, id string) (*domain.PaymentIntent, error) {
	if a.Livemode {
		return nil, domain.TestmodeRequired()
	}
	pi, err := s.GetIntent(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if pi.Status != domain.PIStatusRequiresCapture || pi.LatestCharge == nil {
		return nil, stateError("payment intent", pi.ID, pi.Status, "expire the authorization of")
	}
	if err := s.expireAuthorization(tx, a, pi, *pi.LatestCharge); err != nil {
		return nil, err
	}
	return s.GetIntent(tx, a.Scope, id)
}
