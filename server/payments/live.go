package payments

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"troco/db"
	"troco/server/card"
	"troco/server/domain"
	"troco/server/simulation"
)

// The two-phase path of a processor that does network I/O (see Processor). Phase 1 reserves the
// call and answers a *domain.Error with Pending; Execute makes the call outside any transaction;
// the operation then runs again and applies the recorded answer. Reconcile resolves what a crash
// or a timeout left reserved, and follows PIX charges until they are paid or expire.

// Processor call kinds.
const (
	CallAuthorize = "authorize"
	CallStart     = "start"
	CallCapture   = "capture"
	CallVoid      = "void"
	CallRefund    = "refund"
	// CallSaveCard saves a card with the processor for a setup intent: its payment_intent_id
	// column holds the setup intent's id and charge_id the payment method's.
	CallSaveCard = "save_card"
)

// Reconciliation timing: a reserved call is looked up once its answer is overdue (longer than a
// request can spend on the call with its retries, so the job never races the request that made
// it); a call the processor has never heard of after UnknownAfter was never made; a waiting PIX
// charge is polled from PixPollEvery on (its webhook normally arrives first).
const (
	ReconcileAfter = 2 * time.Minute
	UnknownAfter   = 5 * time.Minute
	PixPollEvery   = 2 * time.Minute
)

// Pending is what a reservation hands to Execute: the call and the request, which holds the
// typed card in memory only (never stored).
type Pending struct {
	CallID string
	card   *CardRequest
	async  *AsyncRequest
	ref    ChargeRef
	amount int64
	refund *RefundRequest
	// Pix Automático: a recurrence to create, the idRec of one to cancel, a charge attempt.
	rec       *RecRequest
	idRec     string
	recCharge *RecChargeRequest
	save      *SaveCardRequest
}

// callOutcome is the recorded answer of a call.
type callOutcome struct {
	// NotSent: the processor certainly did not act (connection refused, circuit open).
	NotSent bool            `json:"not_sent,omitempty"`
	Message string          `json:"message,omitempty"`
	Card    *CardResult     `json:"card,omitempty"`
	Async   *AsyncResult    `json:"async,omitempty"`
	Refund  *RefundResult   `json:"refund,omitempty"`
	Save    *SaveCardResult `json:"save,omitempty"`
	// Rec and RecCharge are the PSP's answers of Pix Automático calls.
	Rec       *RecResult       `json:"rec,omitempty"`
	RecCharge *RecChargeResult `json:"rec_charge,omitempty"`
}

// Reference derives the idempotent reference a processor knows an object by from its id: 32
// letters and digits (API Pix txid: 26 to 35; Cielo MerchantOrderId: up to 50), the same on
// every retry.
func Reference(id string) string {
	sum := sha256.Sum256([]byte(id))
	return "tr" + hex.EncodeToString(sum[:])[:30]
}

func pendingError(p *Pending) *domain.Error {
	return &domain.Error{Status: http.StatusAccepted, Type: domain.TypeAPI, Code: "processor_call_pending",
		Message: "The processor is being called; run the operation again.", KeepChanges: true, Pending: p}
}

// PendingError is the phase-1 answer naming p, for an operation that reserved a call through
// another domain (a subscription's invoice) and hands it to its adapter's loop.
func PendingError(p *Pending) error { return pendingError(p) }

// PendingOf returns the Pending of an error from phase 1, or nil.
func PendingOf(err error) *Pending {
	if e, ok := domain.AsError(err); ok && e.Pending != nil {
		p, _ := e.Pending.(*Pending)
		return p
	}
	return nil
}

func processingError() *domain.PaymentError {
	return &domain.PaymentError{Category: string(card.CategoryProcessingError), Code: "processing_error",
		Message: "An error occurred while processing the payment. Try again.", AdviceCode: strPtr(string(card.AdviceTryAgainLater))}
}

// processorFailed is the answer of a capture, void or refund the processor did not make.
func processorFailed(what, msg string) *domain.Error {
	m := "The processor could not " + what + "; nothing was changed. Try again."
	if msg != "" {
		m = "The processor could not " + what + " (" + msg + "); nothing was changed. Try again."
	}
	return &domain.Error{Status: http.StatusServiceUnavailable, Type: domain.TypeAPI, Code: "processing_error", Message: m}
}

func callInProgress(what string) *domain.Error {
	return domain.Conflict("processor_call_in_progress", "A %s of this payment is in progress with the processor; its outcome is confirmed in the background (watch the webhook events). Retry later.", what)
}

func (s *Service) reserve(tx *db.Tx, sc domain.Scope, kind, method, piID, chargeID, refundID, ref string, amount int64, params any) (*db.ProcessorCall, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	c := &db.ProcessorCall{Scope: sc, Kind: kind, Method: method, PaymentIntent: piID, Charge: chargeID, Refund: refundID, Reference: ref,
		Amount: amount, Params: string(raw), State: db.CallReserved, NextCheckAt: tx.Now.Add(ReconcileAfter).Unix()}
	return c, tx.InsertProcessorCall(c)
}

// reserveCard is phase 1 of a live card confirmation: the pending charge and the processing
// intent are stored (no events yet) with the reserved call.
func (s *Service) reserveCard(tx *db.Tx, c *confirmation, ch *domain.Charge, pm *domain.PaymentMethod, req CardRequest, att cardAttempt) (*domain.PaymentIntent, error) {
	if req.Card == nil {
		sealed, err := tx.FindCardToken(c.a.Scope, pm.ID)
		if errors.Is(err, db.ErrNotFound) {
			return nil, domain.Invalid("payment_method", "Payment method %s was not saved with the live card processor, so it cannot be charged again; ask the buyer for the card.", pm.ID)
		}
		if err != nil {
			return nil, err
		}
		if s.Secrets == nil {
			return nil, errors.New("payments: no keyring to open card tokens")
		}
		if req.CardToken, err = s.Secrets.Open(sealed); err != nil {
			return nil, err
		}
	}
	req.Reference = Reference(ch.ID)
	if err := tx.CreateCharge(c.a.Scope, ch); err != nil {
		return nil, err
	}
	c.pi.Status = domain.PIStatusProcessing
	if err := tx.UpdatePaymentIntent(c.a.Scope, c.pi); err != nil {
		return nil, err
	}
	call, err := s.reserve(tx, c.a.Scope, CallAuthorize, domain.MethodCreditCard, c.pi.ID, ch.ID, "", req.Reference, ch.Amount, att)
	if err != nil {
		return nil, err
	}
	return nil, pendingError(&Pending{CallID: call.ID, card: &req})
}

func (s *Service) saveCardToken(tx *db.Tx, sc domain.Scope, pmID, token string) error {
	if s.Secrets == nil {
		return errors.New("payments: no keyring to seal card tokens")
	}
	return tx.SaveCardToken(sc, pmID, s.Secrets.Seal(token))
}

// Run runs op in write transactions until no processor call is pending: for jobs and commands
// that call the engine (a renewal charging a saved card). The HTTP adapters do the same in
// their own loop (server/mutate.go).
func (s *Service) Run(ctx context.Context, store *db.DB, op func(tx *db.Tx) error) error {
	for range 3 {
		var pending *Pending
		err := store.Write(ctx, func(tx *db.Tx) error {
			err := op(tx)
			if p := PendingOf(err); p != nil {
				pending = p
				return nil
			}
			return err
		})
		if pending == nil || err != nil {
			return err
		}
		s.Execute(ctx, store, pending)
	}
	return errors.New("payments: processor call still pending after three runs")
}

// Execute makes the reserved call outside any transaction and records the answer. An unknown
// outcome (timeout, 5xx) leaves the call reserved for Reconcile; Execute never fails the
// caller: running the operation again tells it what happened.
func (s *Service) Execute(ctx context.Context, store *db.DB, p *Pending) {
	var call *db.ProcessorCall
	if err := store.Read(ctx, func(tx *db.Tx) error {
		var err error
		call, err = tx.FindProcessorCall(p.CallID)
		return err
	}); err != nil {
		s.logger().Error("processor call: load", "call", p.CallID, "err", err)
		return
	}
	proc := s.Sandbox
	if call.Scope.Livemode {
		proc = s.Live
	}
	var out callOutcome
	var err error
	start := time.Now()
	switch call.Kind {
	case CallAuthorize:
		var r CardResult
		r, err = proc.AuthorizeCard(ctx, *p.card)
		out.Card = &r
	case CallStart:
		var r AsyncResult
		r, err = proc.StartAsync(ctx, *p.async)
		out.Async = &r
	case CallCapture:
		err = proc.Capture(ctx, p.ref, p.amount)
	case CallVoid:
		err = proc.Void(ctx, p.ref)
	case CallRefund:
		var r RefundResult
		r, err = proc.Refund(ctx, *p.refund)
		out.Refund = &r
	case CallRec, CallRecCancel, CallCobR:
		pp, _ := proc.(PixAutoProcessor)
		switch {
		case pp == nil:
			err = fmt.Errorf("%w: no Pix Automático processor", ErrNotSent)
		case call.Kind == CallRec:
			var r RecResult
			r, err = pp.CreateRecurrence(ctx, *p.rec)
			out.Rec = &r
		case call.Kind == CallRecCancel:
			err = pp.CancelRecurrence(ctx, p.idRec)
		default:
			var r RecChargeResult
			r, err = pp.ChargeRecurrence(ctx, *p.recCharge)
			out.RecCharge = &r
		}
	case CallSaveCard:
		var r SaveCardResult
		r, err = proc.SaveCard(ctx, *p.save)
		out.Save = &r
	}
	log := s.logger().With("call", call.ID, "kind", call.Kind, "method", call.Method, "reference", call.Reference, "charge", call.Charge,
		"duration_ms", time.Since(start).Milliseconds())
	switch {
	case err != nil && !errors.Is(err, ErrNotSent):
		log.Warn("processor call: outcome unknown, reconciliation will ask the processor", "err", err)
		return
	case err != nil:
		log.Warn("processor call: not made", "err", err)
		out = callOutcome{NotSent: true, Message: err.Error()}
	default:
		log.Info("processor call: answered")
	}
	if err := s.record(ctx, store, call.ID, out); err != nil {
		log.Error("processor call: record answer", "err", err)
	}
}

// record stores the answer of a reserved call (state done).
func (s *Service) record(ctx context.Context, store *db.DB, callID string, out callOutcome) error {
	raw, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return store.Write(ctx, func(tx *db.Tx) error {
		c, err := tx.FindProcessorCall(callID)
		if err != nil || c.State != db.CallReserved {
			return err // already recorded (a retry, the reconciliation)
		}
		res := string(raw)
		c.State, c.Result = db.CallDone, &res
		if out.Card != nil {
			c.ProcessorID = out.Card.ProcessorID
		}
		if out.Refund != nil && out.Refund.ProcessorID != "" {
			c.ProcessorID = out.Refund.ProcessorID
		}
		if out.Rec != nil && out.Rec.IDRec != "" {
			c.ProcessorID = out.Rec.IDRec
		}
		return tx.UpdateProcessorCall(c)
	})
}

func (s *Service) logger() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

func outcomeOf(c *db.ProcessorCall) callOutcome {
	var out callOutcome
	if c.Result != nil {
		_ = json.Unmarshal([]byte(*c.Result), &out)
	}
	return out
}

// HasOpenCall reports whether a live processor call of an intent's confirmation is reserved or
// answered but not applied yet (confirming the intent again applies it).
func (s *Service) HasOpenCall(tx *db.Tx, sc domain.Scope, piID string) (bool, error) {
	c, err := openCall(tx, sc, piID, CallAuthorize, CallStart)
	return c != nil, err
}

// openCall returns the open (reserved or done) call of kinds on an intent, or nil.
func openCall(tx *db.Tx, sc domain.Scope, piID string, kinds ...string) (*db.ProcessorCall, error) {
	c, err := tx.FindOpenProcessorCall(sc, piID, kinds...)
	if errors.Is(err, db.ErrNotFound) {
		return nil, nil
	}
	return c, err
}

// applyConfirmCall applies the answer of an authorization or a PIX start to its intent.
func (s *Service) applyConfirmCall(tx *db.Tx, a domain.Actor, call *db.ProcessorCall) (*domain.PaymentIntent, error) {
	pi, err := tx.FindPaymentIntentByID(a.Scope, call.PaymentIntent)
	if err != nil {
		return nil, err
	}
	ch, err := tx.FindChargeByID(a.Scope, call.Charge)
	if err != nil {
		return nil, err
	}
	org, err := tx.FindOrganizationByID(a.OrgID)
	if err != nil {
		return nil, err
	}
	out := outcomeOf(call)
	before := *pi
	if call.Kind == CallStart {
		return s.applyStart(tx, a, call, pi, ch, out)
	}
	var att cardAttempt
	_ = json.Unmarshal([]byte(call.Params), &att)
	res := CardResult{Outcome: card.OutcomeDeclined, Decline: processingError()}
	if !out.NotSent && out.Card != nil {
		res = *out.Card
	}
	call.State = db.CallApplied
	if res.Outcome == card.OutcomePending || res.Outcome == card.OutcomeProcessing {
		// The acquirer has not decided yet: the reconciliation follows the sale.
		call.State, call.NextCheckAt = db.CallWaiting, tx.Now.Add(PixPollEvery).Unix()
	}
	if err := tx.UpdateProcessorCall(call); err != nil {
		return nil, err
	}
	pm, err := tx.FindPaymentMethodByID(a.Scope, *ch.PaymentMethod)
	if err != nil {
		return nil, err
	}
	// As on the one-phase path, the caller (a checkout session, an invoice) follows the outcome
	// itself; a job applying the answer runs the AfterSettle hook instead (applyInJob).
	return s.finishCard(tx, a, org, pi, &before, ch, pm, res, att)
}

// applyStart records the PSP's BR Code on the pending PIX charge (the call then waits for the
// payment), or fails the attempt when the PSP did not open it.
func (s *Service) applyStart(tx *db.Tx, a domain.Actor, call *db.ProcessorCall, pi *domain.PaymentIntent, ch *domain.Charge, out callOutcome) (*domain.PaymentIntent, error) {
	before := *pi
	if out.NotSent || out.Async == nil || out.Async.Code == "" {
		call.State = db.CallApplied
		if err := tx.UpdateProcessorCall(call); err != nil {
			return nil, err
		}
		pe := processingError()
		ch.Status, ch.PaymentError = domain.ChargeStatusFailed, pe
		pi.Status, pi.LastPaymentError, pi.PaymentMethod = domain.PIStatusRequiresPaymentMethod, pe, nil
	} else {
		call.State = db.CallWaiting
		call.NextCheckAt = tx.Now.Add(PixPollEvery).Unix()
		if err := tx.UpdateProcessorCall(call); err != nil {
			return nil, err
		}
		expires := domain.At(time.Unix(call.CreatedAt, 0).Add(PixLifetime))
		var sp startParams
		_ = json.Unmarshal([]byte(call.Params), &sp)
		if due, err := time.ParseInLocation("2006-01-02", sp.DueDate, brasilia); err == nil {
			// Payable until the end of the last day after the due date (ValidityAfterDue).
			expires = domain.At(due.AddDate(0, 0, pixValidityAfterDue+1).UTC())
		}
		ch.PaymentMethodDetails.Pix = &domain.PixDetails{Code: out.Async.Code, TxID: call.Reference, ExpiresAt: expires}
		pi.PaymentData = &domain.PaymentData{Type: domain.MethodPix, Pix: &domain.PixData{Code: out.Async.Code,
			ImageURL: publicURL(s.origin(""), PixImagePath(pi.ID), pi.ClientSecret), ExpiresAt: expires}}
		pi.Status = domain.PIStatusPending
	}
	if err := tx.UpdateCharge(a.Scope, ch); err != nil {
		return nil, err
	}
	if err := tx.UpdatePaymentIntent(a.Scope, pi); err != nil {
		return nil, err
	}
	chargeEvent, piEvent := transitionEvents(pi.Status)
	if err := emit(tx, a, chargeEvent, ch, nil); err != nil {
		return nil, err
	}
	if err := emit(tx, a, piEvent, pi, &before); err != nil {
		return nil, err
	}
	if pi.Status == domain.PIStatusRequiresPaymentMethod {
		return pi, declineError(pi.LastPaymentError, ch.ID, pi)
	}
	return pi, nil
}

// brasilia is the civil time of due dates (Brazil keeps UTC-3 all year).
var brasilia = time.FixedZone("BRT", -3*60*60)

// invoiceDueDate asks for a PIX charge with a due date (API Pix cobv) when the intent pays an
// invoice with a due date still ahead and the buyer has a name and a CPF/CNPJ (the debtor a
// charge with a due date requires); otherwise the PIX is an immediate charge.
func invoiceDueDate(tx *db.Tx, c *confirmation, req *AsyncRequest) error {
	inv, err := tx.FindInvoiceByPaymentIntent(c.a.Scope, c.pi.ID)
	if errors.Is(err, db.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if inv.DueDate.IsZero() || c.buyer.Name == nil || c.buyer.Document == nil {
		return nil
	}
	due := inv.DueDate.In(brasilia).Format("2006-01-02")
	if due < tx.Now.In(brasilia).Format("2006-01-02") {
		return nil
	}
	req.DueDate, req.DueValidityDays = due, pixValidityAfterDue
	req.PayerName, req.PayerDocument = *c.buyer.Name, *c.buyer.Document
	req.FineRate, req.InterestRate = inv.FineRate, inv.InterestRate
	return nil
}

// reserveStart is phase 1 of a live PIX confirmation.
func (s *Service) reserveStart(tx *db.Tx, c *confirmation, ch *domain.Charge, req AsyncRequest) (*domain.PaymentIntent, error) {
	req.Reference = Reference(ch.ID)
	req.Expires = PixLifetime
	ch.PaymentMethodDetails = domain.PaymentMethodDetails{Type: domain.MethodPix, Pix: &domain.PixDetails{TxID: req.Reference}}
	if err := tx.CreateCharge(c.a.Scope, ch); err != nil {
		return nil, err
	}
	c.pi.Status = domain.PIStatusProcessing
	if err := tx.UpdatePaymentIntent(c.a.Scope, c.pi); err != nil {
		return nil, err
	}
	call, err := s.reserve(tx, c.a.Scope, CallStart, req.Method, c.pi.ID, ch.ID, "", req.Reference, ch.Amount, startParams{DueDate: req.DueDate})
	if err != nil {
		return nil, err
	}
	return nil, pendingError(&Pending{CallID: call.ID, async: &req})
}

// chargeRef returns how the processor knows a charge: the reference and processor id of the
// call that opened it.
func chargeRef(tx *db.Tx, sc domain.Scope, ch *domain.Charge) (ChargeRef, error) {
	ref := ChargeRef{ChargeID: ch.ID, Method: ch.PaymentMethodDetails.Type, Amount: ch.Amount}
	kind := CallAuthorize
	if ref.Method != domain.MethodCreditCard {
		kind = CallStart
	}
	c, err := tx.FindChargeCall(sc, ch.ID, kind)
	if err != nil {
		return ref, fmt.Errorf("payments: no processor call for charge %s: %w", ch.ID, err)
	}
	ref.Reference, ref.ProcessorID = c.Reference, c.ProcessorID
	return ref, nil
}

// afterCall handles a capture, void or refund against a network processor: it applies an
// answered call (apply), refuses while one is in flight, or reserves a new one. It returns
// done=false when the caller goes on with the in-transaction path.
func (s *Service) afterCall(tx *db.Tx, a domain.Actor, proc Processor, pi *domain.PaymentIntent, kind, what string) (*db.ProcessorCall, error) {
	if proc.InTransaction() {
		return nil, nil
	}
	call, err := openCall(tx, a.Scope, pi.ID, kind)
	if err != nil || call == nil {
		return nil, err
	}
	if call.State == db.CallReserved {
		return nil, callInProgress(what)
	}
	call.State = db.CallApplied
	if err := tx.UpdateProcessorCall(call); err != nil {
		return nil, err
	}
	if out := outcomeOf(call); out.NotSent {
		return nil, &domain.Error{KeepChanges: true, Status: http.StatusServiceUnavailable, Type: domain.TypeAPI, Code: "processing_error",
			Message: processorFailed(what, out.Message).Message}
	}
	return call, nil
}

// ---- reconciliation ----

// Reconcile is the job that resolves live processor calls: reserved calls whose answer was lost
// (asked with Lookup, or sent again when the call is idempotent), answered calls nobody applied,
// and PIX charges waiting for their payment (polled in case the PSP's webhook was lost).
func (s *Service) Reconcile(ctx context.Context, store *db.DB, now time.Time) error {
	var due []*db.ProcessorCall
	err := store.Write(ctx, func(tx *db.Tx) error {
		var err error
		due, err = tx.ClaimDueProcessorCalls(now.Unix(), int64(ReconcileAfter/time.Second), 50, db.CallReserved, db.CallDone, db.CallWaiting)
		return err
	})
	if err != nil {
		return err
	}
	for _, c := range due {
		if err := s.reconcileOne(ctx, store, c, now); err != nil {
			s.logger().Error("reconcile processor call", "call", c.ID, "kind", c.Kind, "reference", c.Reference, "err", err)
		}
	}
	return nil
}

func (s *Service) reconcileOne(ctx context.Context, store *db.DB, c *db.ProcessorCall, now time.Time) error {
	proc := s.Sandbox
	if c.Scope.Livemode {
		proc = s.Live
	}
	if proc == nil {
		return nil
	}
	a := domain.Actor{Scope: c.Scope}
	if c.Kind == CallRec || c.Kind == CallRecCancel || c.Kind == CallCobR {
		return s.reconcilePixAuto(ctx, store, c, now)
	}
	switch c.State {
	case db.CallDone:
		return s.applyInJob(ctx, store, a, c.ID)
	case db.CallWaiting:
		r, err := proc.Lookup(ctx, ChargeRef{ChargeID: c.Charge, Method: c.Method, Reference: c.Reference, ProcessorID: cardID(c), Amount: c.Amount})
		if err != nil {
			return err
		}
		if c.Kind == CallAuthorize {
			return s.cardDecided(ctx, store, c.ID, r)
		}
		return s.PixResult(ctx, store, c.Reference, r)
	}
	// Reserved: what became of it?
	var out callOutcome
	switch c.Kind {
	case CallAuthorize, CallStart:
		r, err := proc.Lookup(ctx, ChargeRef{ChargeID: c.Charge, Method: c.Method, Reference: c.Reference, Amount: c.Amount})
		if err != nil {
			return err
		}
		switch {
		case !r.Found && now.Sub(time.Unix(c.CreatedAt, 0)) < UnknownAfter:
			return nil // maybe still in flight: look again later
		case !r.Found:
			out = callOutcome{NotSent: true, Message: "the processor has no record of the request"}
		case c.Kind == CallAuthorize:
			out.Card = r.Card
		default:
			out.Async = &AsyncResult{Code: r.Code, Location: r.Location}
		}
	case CallSaveCard:
		// The card is known only to the request that typed it: a save whose answer was lost (a
		// crash between the reservation and the call) is not made again; the setup fails with
		// processing_error and the customer types the card again. Nothing was charged.
		if now.Sub(time.Unix(c.CreatedAt, 0)) < UnknownAfter {
			return nil
		}
		out = callOutcome{NotSent: true, Message: "the card processor's answer was lost; the card was not saved"}
	default:
		// Capture, void and refund are sent again with the same reference: the connectors
		// recognise one already made (Cielo's sale status, the devolução id).
		pending, err := s.resend(ctx, store, c)
		if err != nil {
			return err
		}
		s.Execute(ctx, store, pending)
		return s.applyInJob(ctx, store, a, c.ID)
	}
	if err := s.record(ctx, store, c.ID, out); err != nil {
		return err
	}
	return s.applyInJob(ctx, store, a, c.ID)
}

// resend rebuilds the request of a reserved capture, void or refund from its row.
func (s *Service) resend(ctx context.Context, store *db.DB, c *db.ProcessorCall) (*Pending, error) {
	p := &Pending{CallID: c.ID, amount: c.Amount}
	err := store.Read(ctx, func(tx *db.Tx) error {
		ch, err := tx.FindChargeByID(c.Scope, c.Charge)
		if err != nil {
			return err
		}
		if p.ref, err = chargeRef(tx, c.Scope, ch); err != nil {
			return err
		}
		if c.Kind == CallRefund {
			var rp refundParams
			_ = json.Unmarshal([]byte(c.Params), &rp)
			p.refund = &RefundRequest{Charge: p.ref, Reference: c.Reference, Amount: c.Amount, Before: rp.Before}
		}
		return nil
	})
	return p, err
}

// applyInJob applies an answered call outside any request: the confirmation, capture, void or
// refund is recorded with its events, as the request would have.
func (s *Service) applyInJob(ctx context.Context, store *db.DB, a domain.Actor, callID string) error {
	return store.Write(ctx, func(tx *db.Tx) error {
		c, err := tx.FindProcessorCall(callID)
		if err != nil || c.State != db.CallDone {
			return err
		}
		var opErr error
		switch c.Kind {
		case CallAuthorize, CallStart:
			// No request is waiting for this answer: the objects that follow the intent (its
			// checkout session, its invoice) learn the outcome through the AfterSettle hook.
			var pi *domain.PaymentIntent
			if pi, opErr = s.applyConfirmCall(tx, a, c); opErr == nil && pi.Status != domain.PIStatusProcessing {
				opErr = s.afterSettle(tx, a, pi)
			}
		case CallCapture:
			_, opErr = s.CaptureIntent(tx, a, c.PaymentIntent, CaptureParams{AmountToCapture: &c.Amount})
		case CallVoid:
			_, opErr = s.CancelIntent(tx, a, c.PaymentIntent, CancelParams{})
		case CallRefund:
			_, opErr = s.CreateRefund(tx, a, RefundParams{Charge: c.Charge, Amount: &c.Amount})
		case CallSaveCard:
			_, opErr = s.applySaveCall(tx, a, c)
		}
		if e, ok := domain.AsError(opErr); ok && (e.KeepChanges || e.Pending == nil) {
			if !e.KeepChanges {
				s.logger().Warn("reconcile: call applied with an error", "call", c.ID, "err", e)
				c.State = db.CallApplied
				return tx.UpdateProcessorCall(c)
			}
			return nil
		}
		return opErr
	})
}

// cardID is the processor's id of a card authorization (a PIX call's is its endToEndId, known
// only once paid, and not used to look the charge up).
func cardID(c *db.ProcessorCall) string {
	if c.Kind == CallAuthorize {
		return c.ProcessorID
	}
	return ""
}

// cardDecided applies the acquirer's late decision on a card payment left pending: approved
// settles it, refused fails the attempt, anything else keeps waiting.
func (s *Service) cardDecided(ctx context.Context, store *db.DB, callID string, r LookupResult) error {
	return store.Write(ctx, func(tx *db.Tx) error {
		c, err := tx.FindProcessorCall(callID)
		if err != nil || c.State != db.CallWaiting {
			return err
		}
		if r.Card == nil || (r.Card.Outcome != card.OutcomeSucceeded && r.Card.Outcome != card.OutcomeRequiresCapture && r.Card.Outcome != card.OutcomeDeclined) {
			c.Attempts++
			c.NextCheckAt = tx.Now.Add(pollInterval(c.Attempts)).Unix()
			return tx.UpdateProcessorCall(c)
		}
		c.State = db.CallApplied
		if err := tx.UpdateProcessorCall(c); err != nil {
			return err
		}
		pi, err := tx.FindPaymentIntentByID(c.Scope, c.PaymentIntent)
		if err != nil {
			return err
		}
		if !pi.Waiting() || pi.LatestCharge == nil || *pi.LatestCharge != c.Charge {
			return nil
		}
		if r.Card.AuthorizationCode != "" {
			ch, err := tx.FindChargeByID(c.Scope, c.Charge)
			if err != nil {
				return err
			}
			if ch.PaymentMethodDetails.Card != nil {
				ch.PaymentMethodDetails.Card.AuthorizationCode = strPtr(r.Card.AuthorizationCode)
				if err := tx.UpdateCharge(c.Scope, ch); err != nil {
					return err
				}
			}
		}
		return s.resolve(tx, domain.Actor{Scope: c.Scope}, pi, c.Charge, r.Card.Outcome != card.OutcomeDeclined, "")
	})
}

// pollInterval is the wait before the n-th poll of a waiting charge: PixPollEvery doubling up to
// 32 minutes, so a charge nobody pays costs a few dozen queries a day, not hundreds.
func pollInterval(n int) time.Duration {
	return PixPollEvery << min(max(n-1, 0), 4)
}

// PixNotification is one payment of the PSP's webhook.
type PixNotification struct {
	TxID       string
	EndToEndID string
	Amount     int64
}

// PixResult applies what the PSP says of the PIX charge with txid: paid with the charge's
// amount settles it; expired fails the attempt; anything else changes nothing. A notification
// for an unknown txid, an amount that is not the charge's, or a charge already settled (a
// replay) changes nothing and is logged.
func (s *Service) PixResult(ctx context.Context, store *db.DB, txid string, r LookupResult) error {
	return store.Write(ctx, func(tx *db.Tx) error {
		c, err := tx.FindProcessorCallByReference(txid)
		if errors.Is(err, db.ErrNotFound) {
			s.logger().Warn("pix: notification for an unknown txid ignored", "txid", txid)
			return nil
		}
		if err != nil {
			return err
		}
		if c.State != db.CallWaiting {
			s.logger().Info("pix: notification for a charge no longer waiting ignored (replay)", "txid", txid, "state", c.State)
			return nil
		}
		a := domain.Actor{Scope: c.Scope}
		var sp startParams
		if c.Params != "" {
			_ = json.Unmarshal([]byte(c.Params), &sp)
		}
		switch {
		case r.Paid && r.PaidAmount > c.Amount && sp.DueDate != "":
			// A charge with a due date (cobv) paid late: the PSP collected its multa and juros
			// on top of the original amount; what was paid is settled and recorded.
			s.logger().Info("pix: charge with a due date paid with late fees", "txid", txid, "charge", c.Charge,
				"original", c.Amount, "paid", r.PaidAmount)
		case r.Paid && r.PaidAmount != c.Amount:
			s.logger().Error("pix: paid amount differs from the charge; not settled, check with the PSP", "txid", txid, "charge", c.Charge,
				"expected", c.Amount, "paid", r.PaidAmount, "end_to_end_id", r.EndToEndID)
			c.Attempts++
			c.NextCheckAt = tx.Now.Add(pollInterval(c.Attempts)).Unix()
			return tx.UpdateProcessorCall(c)
		case r.Paid, r.Expired:
		default:
			c.Attempts++
			c.NextCheckAt = tx.Now.Add(pollInterval(c.Attempts)).Unix()
			return tx.UpdateProcessorCall(c)
		}
		c.State = db.CallApplied
		if r.Paid {
			c.ProcessorID = r.EndToEndID
		}
		if err := tx.UpdateProcessorCall(c); err != nil {
			return err
		}
		pi, err := tx.FindPaymentIntentByID(c.Scope, c.PaymentIntent)
		if err != nil {
			return err
		}
		if !pi.Waiting() || pi.LatestCharge == nil || *pi.LatestCharge != c.Charge {
			s.logger().Warn("pix: payment for an attempt that is no longer the intent's; refund it from the PSP", "txid", txid, "intent", pi.ID)
			return nil
		}
		s.logger().Info("pix: charge settled", "txid", txid, "charge", c.Charge, "paid", r.Paid)
		if r.Paid {
			return s.resolvePaid(tx, a, pi, c.Charge, true, "", r.PaidAmount)
		}
		return s.resolve(tx, a, pi, c.Charge, false, "")
	})
}

// PixNotified handles the PSP's webhook: each payment is confirmed with the PSP (Lookup with
// its endToEndId) before it settles anything, so a forged or altered notification cannot.
func (s *Service) PixNotified(ctx context.Context, store *db.DB, n PixNotification) error {
	if s.Live == nil {
		return errProcessorUnavailable(domain.MethodPix)
	}
	r, err := s.Live.Lookup(ctx, ChargeRef{Method: domain.MethodPix, Reference: n.TxID, ProcessorID: n.EndToEndID})
	if err != nil {
		return err
	}
	if !r.Found {
		s.logger().Warn("pix: notified payment unknown to the PSP ignored", "txid", n.TxID, "end_to_end_id", n.EndToEndID)
		return nil
	}
	return s.PixResult(ctx, store, n.TxID, r)
}

// pixValidityAfterDue is how many days after its due date a PIX charge with a due date stays
// payable (the connector's validadeAposVencimento).
const pixValidityAfterDue = 30

// startParams is kept on a PIX start call.
type startParams struct {
	DueDate string `json:"due_date,omitempty"`
}

// refundParams is kept on a refund call.
type refundParams struct {
	Before int64   `json:"before"`
	Reason *string `json:"reason,omitempty"`
}

var _ = simulation.StateSucceeded
