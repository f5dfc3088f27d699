package payments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"troco/db"
	"troco/server/calendar"
	"troco/server/domain"
)

// Live Pix Automático: an authorization is a recurrence at the PSP (API Pix /locrec + /rec),
// each charge under it one attempt of a recurring charge (/cobr, its retries
// /cobr/{txid}/retentativa/{data}). Every call follows the two-phase path of live.go: reserved
// in a processor_calls row inside the operation's transaction, made outside it (Execute), its
// answer recorded and then applied by the same operation run again; the reconciliation job asks
// the PSP what became of a call whose answer was lost and follows recurrences and charges until
// they end (the PSP's /rec and /cobr webhooks say it sooner).

// PixAutoProcessor is the live side of Pix Automático, implemented by the API Pix connector.
type PixAutoProcessor interface {
	// CreateRecurrence creates a recurrence the payer authorizes by scanning its QR.
	CreateRecurrence(ctx context.Context, req RecRequest) (RecResult, error)
	// LookupRecurrence reads a recurrence by idRec or, without one, finds it by its contract.
	LookupRecurrence(ctx context.Context, idRec, contract string) (RecResult, error)
	// CancelRecurrence cancels a recurrence (no charge follows).
	CancelRecurrence(ctx context.Context, idRec string) error
	// ChargeRecurrence makes attempt req.Attempt of a recurring charge (0 creates it, later
	// ones are retries on req.RetryDate).
	ChargeRecurrence(ctx context.Context, req RecChargeRequest) (RecChargeResult, error)
	// LookupRecurringCharge says what became of attempt n of the recurring charge txid.
	LookupRecurringCharge(ctx context.Context, txid string, attempt int) (RecChargeResult, error)
}

// Call kinds of Pix Automático.
const (
	CallRec       = "rec"
	CallRecCancel = "rec_cancel"
	CallCobR      = "cobr"
)

// RecRequest creates a recurrence. Contract (vinculo.contrato) is troco's idempotent reference.
type RecRequest struct {
	Contract, Object           string
	DebtorName, DebtorDocument string
	Interval                   string
	StartDate, EndDate         string
}

// RecResult is what the PSP says of a recurrence: its idRec, troco's status for it (pending,
// approved, rejected, canceled, expired), its QR and why it ended.
type RecResult struct {
	Found      bool   `json:"found"`
	IDRec      string `json:"id_rec,omitempty"`
	Status     string `json:"status,omitempty"`
	Code       string `json:"code,omitempty"`
	ReasonCode string `json:"reason_code,omitempty"`
	Reason     string `json:"reason,omitempty"`
}

// RecChargeRequest is one attempt of a recurring charge.
type RecChargeRequest struct {
	TxID, IDRec string
	Amount      int64
	DueDate     string
	Description string
	// Attempt is the PSP's attempt (tentativa) index: 0 creates the charge.
	Attempt   int
	RetryDate string
}

// Outcomes of a recurring charge's attempt.
const (
	RecChargeWaiting = "waiting"
	RecChargePaid    = "paid"
	RecChargeFailed  = "failed"
)

// RecChargeResult is what became of an attempt: waiting, paid (with its PIX) or failed (with
// the PSP's rejection code and text); Final says no retry can follow.
type RecChargeResult struct {
	Found          bool   `json:"found"`
	Status         string `json:"status,omitempty"`
	PaidAmount     int64  `json:"paid_amount,omitempty"`
	EndToEndID     string `json:"end_to_end_id,omitempty"`
	FailureCode    string `json:"failure_code,omitempty"`
	FailureMessage string `json:"failure_message,omitempty"`
	Final          bool   `json:"final,omitempty"`
}

// pixAuto returns the live Pix Automático connector, or nil.
func (s *Service) pixAuto() PixAutoProcessor {
	if s.Live == nil {
		return nil
	}
	p, _ := s.Live.(PixAutoProcessor)
	if p == nil || s.Live.Available(domain.MethodPix) != nil {
		return nil
	}
	return p
}

func errPixAutoNotConfigured() *domain.Error {
	return &domain.Error{Status: http.StatusServiceUnavailable, Type: domain.TypeAPI, Code: domain.CodeProcessorUnavailable,
		Message: "No live PIX processor is configured, so Pix Automático cannot be used in live mode; nothing was created or charged. The server operator configures one with --pix-provider api-pix (and --pix-account for the recurring charges; see the Going live guide). Use a test key (ch_test_...) to simulate Pix Automático."}
}

// recParams is what a reserved recurrence keeps to create the authorization once the PSP
// answers.
type recParams struct {
	Customer    string            `json:"customer"`
	MaxAmount   int64             `json:"max_amount"`
	Interval    string            `json:"interval"`
	StartDate   string            `json:"start_date"`
	EndDate     *string           `json:"end_date,omitempty"`
	Description *string           `json:"description,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	Origin      string            `json:"origin"`
}

// createPixAuthLive is CreatePixAuthorization in live mode. The first run reserves the
// recurrence (nothing is created yet); once the PSP answered, the run again creates the
// pending authorization with the PSP's QR; a PSP that created nothing is 503 and nothing exists.
func (s *Service) createPixAuthLive(tx *db.Tx, a domain.Actor, p PixAuthParams, cus *domain.Customer, start string, end *string) (*domain.PixAuthorization, error) {
	pp := s.pixAuto()
	if pp == nil {
		return nil, errPixAutoNotConfigured()
	}
	if p.ID == "" {
		return nil, errors.New("payments: a live authorization needs its id before the first run")
	}
	call, err := tx.FindChargeCall(a.Scope, p.ID, CallRec)
	switch {
	case errors.Is(err, db.ErrNotFound):
	case err != nil:
		return nil, err
	case call.State == db.CallReserved:
		return nil, callInProgress("creation of this Pix Automático authorization")
	case call.State == db.CallDone:
		return s.applyRecCreated(tx, a, call)
	default:
		return s.GetPixAuthorization(tx, a.Scope, p.ID)
	}
	if cus.Name == nil || strings.TrimSpace(*cus.Name) == "" || cus.Document == nil || (len(*cus.Document) != 11 && len(*cus.Document) != 14) {
		return nil, domain.Invalid("customer", "A live Pix Automático authorization names its payer to the bank: customer %s needs a name and a document (CPF or CNPJ).", cus.ID)
	}
	md := p.Metadata
	rp := recParams{Customer: cus.ID, MaxAmount: *p.MaxAmount, Interval: p.Interval, StartDate: start, EndDate: end, Description: p.Description, Metadata: md, Origin: s.origin(p.Origin)}
	req := RecRequest{Contract: Reference(p.ID), Object: "", DebtorName: *cus.Name, DebtorDocument: *cus.Document, Interval: p.Interval, StartDate: start}
	if p.Description != nil {
		req.Object = *p.Description
	}
	if end != nil {
		req.EndDate = *end
	}
	c, err := s.reserve(tx, a.Scope, CallRec, domain.MethodPixAutomatico, p.ID, p.ID, "", req.Contract, *p.MaxAmount, rp)
	if err != nil {
		return nil, err
	}
	return nil, pendingError(&Pending{CallID: c.ID, rec: &req})
}

// applyRecCreated applies the PSP's answer to a recurrence's creation: the pending
// authorization with the PSP's QR (the call then follows its status), or nothing and 503.
func (s *Service) applyRecCreated(tx *db.Tx, a domain.Actor, call *db.ProcessorCall) (*domain.PixAuthorization, error) {
	out := outcomeOf(call)
	if out.NotSent || out.Rec == nil || !out.Rec.Found || out.Rec.Code == "" {
		call.State = db.CallApplied
		if err := tx.UpdateProcessorCall(call); err != nil {
			return nil, err
		}
		msg := out.Message
		if msg == "" {
			msg = "the PSP gave no QR for the recurrence"
		}
		return nil, &domain.Error{KeepChanges: true, Status: http.StatusServiceUnavailable, Type: domain.TypeAPI, Code: "processing_error",
			Message: "The PSP could not create the Pix Automático recurrence (" + msg + "); nothing was created. Try again."}
	}
	var rp recParams
	if err := json.Unmarshal([]byte(call.Params), &rp); err != nil {
		return nil, err
	}
	id := call.PaymentIntent
	secret := domain.NewSecret("pas_")
	now := domain.At(tx.Now)
	md := domain.Metadata{}
	for k, v := range rp.Metadata {
		md[k] = v
	}
	pa := &domain.PixAuthorization{ID: id, Object: "pix_authorization", Status: domain.PixAuthPending, BRCode: out.Rec.Code,
		URL: strings.TrimRight(rp.Origin, "/") + PixAuthPagePath(id) + "?s=" + url.QueryEscape(secret), Customer: rp.Customer, MaxAmount: rp.MaxAmount,
		Currency: "brl", Interval: rp.Interval, StartDate: rp.StartDate, EndDate: rp.EndDate, Description: rp.Description, Metadata: md,
		Livemode: a.Livemode, CreatedAt: now, UpdatedAt: now} // expires_at null: the PSP says when it expires (EXPIRADA)
	if err := tx.CreatePixAuthorization(a.Scope, pa, secret, ""); err != nil {
		return nil, err
	}
	call.State, call.ProcessorID = db.CallWaiting, out.Rec.IDRec
	call.NextCheckAt = tx.Now.Add(PixPollEvery).Unix()
	if err := tx.UpdateProcessorCall(call); err != nil {
		return nil, err
	}
	s.logger().Info("pix automatico: recurrence created at the PSP", "pix_authorization", pa.ID, "id_rec", out.Rec.IDRec)
	if err := emit(tx, a, "pix_authorization.created", pa, nil); err != nil {
		return nil, err
	}
	if out.Rec.Status != "" && out.Rec.Status != domain.PixAuthPending {
		return s.applyRecStatus(tx, a, call, *out.Rec)
	}
	return pa, nil
}

// applyRecStatus applies what the PSP says of a recurrence to its authorization: approved,
// rejected, canceled (by the payer in their bank) or expired; pending keeps following it. The
// call is applied once the recurrence ended.
func (s *Service) applyRecStatus(tx *db.Tx, a domain.Actor, call *db.ProcessorCall, r RecResult) (*domain.PixAuthorization, error) {
	pa, err := s.GetPixAuthorization(tx, a.Scope, call.PaymentIntent)
	if err != nil {
		return nil, err
	}
	next := func(final bool) error {
		if final {
			call.State = db.CallApplied
		} else {
			call.Attempts++
			call.NextCheckAt = tx.Now.Add(pollInterval(call.Attempts)).Unix()
		}
		return tx.UpdateProcessorCall(call)
	}
	switch {
	case !r.Found:
		return pa, next(false)
	case pa.Status == domain.PixAuthPending && r.Status == domain.PixAuthApproved:
		if pa, err = s.AnswerPixAuthorization(tx, a, pa.ID, true); err != nil {
			return nil, err
		}
		return pa, next(false) // followed on: the payer may cancel it in their bank
	case pa.Status == domain.PixAuthPending && r.Status == domain.PixAuthRejected:
		if pa, err = s.AnswerPixAuthorization(tx, a, pa.ID, false); err != nil {
			return nil, err
		}
		return pa, next(true)
	case (pa.Status == domain.PixAuthPending || pa.Status == domain.PixAuthApproved) && r.Status == domain.PixAuthCanceled:
		if pa, err = s.cancelLocal(tx, a, pa); err != nil {
			return nil, err
		}
		return pa, next(true)
	case pa.Status == domain.PixAuthPending && r.Status == domain.PixAuthExpired:
		if pa, err = s.ExpirePixAuthorization(tx, a, pa.ID); err != nil {
			return nil, err
		}
		return pa, next(true)
	case pa.Status != domain.PixAuthPending && pa.Status != domain.PixAuthApproved:
		return pa, next(true) // ended here (canceled through troco, expired): nothing to follow
	}
	return pa, next(false)
}

// cancelPixAuthLive is CancelPixAuthorization in live mode: the recurrence is canceled at the
// PSP (reserved, made, applied) before the authorization is; a PSP that refuses or cannot be
// reached leaves it as it was (503).
func (s *Service) cancelPixAuthLive(tx *db.Tx, a domain.Actor, pa *domain.PixAuthorization) (*domain.PixAuthorization, error) {
	rec, err := tx.FindChargeCall(a.Scope, pa.ID, CallRec)
	if err != nil && !errors.Is(err, db.ErrNotFound) {
		return nil, err
	}
	if rec == nil || rec.ProcessorID == "" {
		return s.cancelLocal(tx, a, pa) // the PSP has no recurrence for it
	}
	pp := s.pixAuto()
	if pp == nil {
		return nil, errPixAutoNotConfigured()
	}
	call, err := tx.FindChargeCall(a.Scope, pa.ID, CallRecCancel)
	if err != nil && !errors.Is(err, db.ErrNotFound) {
		return nil, err
	}
	if call != nil {
		switch call.State {
		case db.CallReserved:
			return nil, callInProgress("cancellation of this Pix Automático authorization")
		case db.CallDone:
			call.State = db.CallApplied
			if err := tx.UpdateProcessorCall(call); err != nil {
				return nil, err
			}
			if out := outcomeOf(call); out.NotSent {
				return nil, &domain.Error{KeepChanges: true, Status: http.StatusServiceUnavailable, Type: domain.TypeAPI, Code: "processing_error",
					Message: processorFailed("cancel the Pix Automático recurrence", out.Message).Message}
			}
			return s.cancelLocal(tx, a, pa)
		}
	}
	c := &db.ProcessorCall{ID: domain.NewID("pcall_")}
	c, err = s.reserve(tx, a.Scope, CallRecCancel, domain.MethodPixAutomatico, pa.ID, pa.ID, "", Reference(c.ID), 0, struct{}{})
	if err != nil {
		return nil, err
	}
	return nil, pendingError(&Pending{CallID: c.ID, idRec: rec.ProcessorID})
}

// cobrParams is what a reserved attempt of a recurring charge keeps.
type cobrParams struct {
	TxID          string `json:"txid"`
	IDRec         string `json:"id_rec"`
	Attempt       int    `json:"attempt"`
	DueDate       string `json:"due_date"`
	RetryDate     string `json:"retry_date,omitempty"`
	Authorization string `json:"pix_authorization"`
	Reference     string `json:"reference"`
}

// CobRTxID is the txid of the recurring charge that pays reference under an authorization: the
// same for every attempt, so retries are retries of one charge.
func CobRTxID(authorizationID, reference string) string {
	return Reference("cobr:" + authorizationID + ":" + reference)
}

// chargePixAutoLive is one live attempt: the payment intent (processing) and its pending charge
// are written with the reserved call and returned with the Pending error; ApplyPixAutoCharge
// applies the PSP's answer. Attempt 0 creates the recurring charge due today; a later attempt
// asks the PSP for a retry today.
func (s *Service) chargePixAutoLive(tx *db.Tx, a domain.Actor, p PixAutoChargeParams, pm *domain.PaymentMethod, pa *domain.PixAuthorization) (*domain.PaymentIntent, error) {
	if s.pixAuto() == nil {
		return nil, errPixAutoNotConfigured()
	}
	rec, err := tx.FindChargeCall(a.Scope, pa.ID, CallRec)
	if err != nil || rec.ProcessorID == "" {
		return nil, domain.Conflict(domain.CodeResourceStateConflict, "The Pix Automático authorization %s has no recurrence at the PSP.", pa.ID)
	}
	txid := CobRTxID(pa.ID, p.Reference)
	// Attempts made before, by their rows txid.0, txid.1, …: the PSP's attempt index is the
	// number of those the PSP received (one it never got is made again as a creation).
	n, sent, due := 0, 0, ""
	for ; ; n++ {
		c, err := tx.FindProcessorCallByReference(fmt.Sprintf("%s.%d", txid, n))
		if errors.Is(err, db.ErrNotFound) {
			break
		}
		if err != nil {
			return nil, err
		}
		if c.State == db.CallReserved || c.State == db.CallDone {
			return nil, callInProgress("Pix Automático charge")
		}
		var cp cobrParams
		_ = json.Unmarshal([]byte(c.Params), &cp)
		if !outcomeOf(c).NotSent {
			sent++
			if due == "" {
				due = cp.DueDate
			}
		}
	}
	today := calendar.Today(tx.Now).Format(calendar.Layout)
	if due == "" {
		due = today
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
	chargeID := domain.NewID(domain.PrefixCharge)
	ch := &domain.Charge{ID: chargeID, PaymentIntent: pi.ID, Customer: pi.Customer, Amount: pi.Amount, Currency: pi.Currency, Description: pi.Description,
		PaymentMethod: &pm.ID, BillingDetails: pm.BillingDetails, Metadata: copyMetadata(pi.Metadata), Status: domain.ChargeStatusPending,
		PaymentMethodDetails: domain.PaymentMethodDetails{Type: domain.MethodPix, Pix: &domain.PixDetails{TxID: txid}}}
	method := domain.MethodPix
	pi.PaymentMethodType, pi.PaymentMethod, pi.LatestCharge = &method, &pm.ID, &ch.ID
	pi.Status = domain.PIStatusProcessing
	if err := tx.CreateCharge(a.Scope, ch); err != nil {
		return nil, err
	}
	if err := tx.UpdatePaymentIntent(a.Scope, pi); err != nil {
		return nil, err
	}
	cp := cobrParams{TxID: txid, IDRec: rec.ProcessorID, Attempt: sent, DueDate: due, Authorization: pa.ID, Reference: p.Reference}
	req := RecChargeRequest{TxID: txid, IDRec: rec.ProcessorID, Amount: amount, DueDate: due, Attempt: sent}
	if p.Description != nil {
		req.Description = *p.Description
	}
	if sent > 0 {
		cp.RetryDate, req.RetryDate = today, today
	}
	call, err := s.reserve(tx, a.Scope, CallCobR, domain.MethodPixAutomatico, pi.ID, ch.ID, "", fmt.Sprintf("%s.%d", txid, n), amount, cp)
	if err != nil {
		return nil, err
	}
	return pi, pendingError(&Pending{CallID: call.ID, recCharge: &req})
}

// PixAutoCallOpen reports whether a live Pix Automático charge of an intent was reserved or
// answered and not applied yet.
func (s *Service) PixAutoCallOpen(tx *db.Tx, sc domain.Scope, piID string) (bool, error) {
	c, err := openCall(tx, sc, piID, CallCobR)
	return c != nil, err
}

// ApplyPixAutoCharge applies the PSP's answer to the live Pix Automático attempt of an intent:
// a charge the PSP did not take fails the attempt (processing_error), a scheduled one waits
// (processing) for its settlement, which the reconciliation job or the PSP's webhook applies.
// An attempt still in flight is returned as it is.
func (s *Service) ApplyPixAutoCharge(tx *db.Tx, a domain.Actor, piID string) (*domain.PaymentIntent, error) {
	call, err := openCall(tx, a.Scope, piID, CallCobR)
	if err != nil {
		return nil, err
	}
	if call == nil || call.State != db.CallDone {
		return s.GetIntent(tx, a.Scope, piID)
	}
	out := outcomeOf(call)
	switch {
	case out.NotSent || out.RecCharge == nil:
		pe := processingError()
		if out.Message != "" {
			pe.Message = "The PSP did not take the Pix Automático charge (" + out.Message + "); nothing was charged."
		}
		return s.finishPixAuto(tx, a, call, RecChargeResult{Status: RecChargeFailed}, pe)
	case out.RecCharge.Status == RecChargeWaiting:
		call.State, call.NextCheckAt = db.CallWaiting, tx.Now.Add(PixPollEvery).Unix()
		if err := tx.UpdateProcessorCall(call); err != nil {
			return nil, err
		}
		return s.GetIntent(tx, a.Scope, piID)
	}
	return s.finishPixAuto(tx, a, call, *out.RecCharge, nil)
}

// PixAutoFailure is the payment_error of a Pix Automático attempt the payer's bank refused:
// the rejection code of the Banco Central's message catalogue in network_decline_code, its text
// in the message.
func PixAutoFailure(code, text string) *domain.PaymentError {
	msg := "The payer's bank refused the Pix Automático charge"
	if text != "" {
		msg += ": " + text
	}
	if code != "" {
		msg += " (" + code + ")"
	}
	pe := &domain.PaymentError{Category: "issuer_declined", Code: "pix_automatico_refused", Message: msg + ".",
		AdviceCode: strPtr("try_again_later")}
	if code != "" {
		pe.NetworkDeclineCode = strPtr(code)
	}
	return pe
}

// finishPixAuto applies a decided attempt: paid settles the intent (ledger, and the reference is
// recorded as paid so it is never charged again), failed fails it with pe (or the PSP's
// rejection). The call is applied and the PixAutoSettled hook tells the invoice.
func (s *Service) finishPixAuto(tx *db.Tx, a domain.Actor, call *db.ProcessorCall, r RecChargeResult, pe *domain.PaymentError) (*domain.PaymentIntent, error) {
	call.State = db.CallApplied
	if r.EndToEndID != "" {
		call.ProcessorID = r.EndToEndID
	}
	if err := tx.UpdateProcessorCall(call); err != nil {
		return nil, err
	}
	pi, err := tx.FindPaymentIntentByID(a.Scope, call.PaymentIntent)
	if err != nil {
		return nil, err
	}
	ch, err := tx.FindChargeByID(a.Scope, call.Charge)
	if err != nil {
		return nil, err
	}
	if pi.Status != domain.PIStatusProcessing || pi.LatestCharge == nil || *pi.LatestCharge != ch.ID {
		return pi, nil // already applied
	}
	before, chBefore := *pi, *ch
	var cp cobrParams
	_ = json.Unmarshal([]byte(call.Params), &cp)
	if r.Status == RecChargePaid && r.PaidAmount != 0 && r.PaidAmount != ch.Amount {
		s.logger().Error("pix automatico: paid amount differs from the charge; not settled, check with the PSP", "txid", cp.TxID, "expected", ch.Amount, "paid", r.PaidAmount)
		call.State = db.CallWaiting
		call.NextCheckAt = tx.Now.Add(pollInterval(call.Attempts + 1)).Unix()
		return pi, tx.UpdateProcessorCall(call)
	}
	if r.Status == RecChargePaid {
		settle(pi, ch)
	} else {
		if pe == nil {
			pe = PixAutoFailure(r.FailureCode, r.FailureMessage)
		}
		ch.Status, ch.PaymentError = domain.ChargeStatusFailed, pe
		pi.Status, pi.LastPaymentError = domain.PIStatusRequiresPaymentMethod, pe
	}
	if err := tx.UpdateCharge(a.Scope, ch); err != nil {
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
		if err := tx.RecordPixAutoCharge(a.Scope, cp.Authorization, cp.Reference, pi.ID); err != nil {
			return nil, err
		}
	}
	chargeEvent, piEvent := transitionEvents(pi.Status)
	if err := emit(tx, a, chargeEvent, ch, &chBefore); err != nil {
		return nil, err
	}
	if err := emit(tx, a, piEvent, pi, &before); err != nil {
		return nil, err
	}
	return pi, nil
}

// reconcilePixAuto follows a Pix Automático call: a reserved one whose answer was lost is looked
// up (a recurrence by its contract, a charge attempt by its txid; one the PSP never received
// after UnknownAfter was not made), an answered one nobody applied is applied, a waiting one is
// polled (recurrence status; charge settlement).
func (s *Service) reconcilePixAuto(ctx context.Context, store *db.DB, c *db.ProcessorCall, now time.Time) error {
	pp := s.pixAuto()
	if pp == nil {
		return nil
	}
	var cp cobrParams
	_ = json.Unmarshal([]byte(c.Params), &cp)
	switch c.State {
	case db.CallReserved:
		var out callOutcome
		switch c.Kind {
		case CallRec:
			r, err := pp.LookupRecurrence(ctx, "", c.Reference)
			if err != nil {
				return err
			}
			if !r.Found && now.Sub(time.Unix(c.CreatedAt, 0)) < UnknownAfter {
				return nil
			}
			out.Rec = &r
			if !r.Found {
				out = callOutcome{NotSent: true, Message: "the PSP has no record of the recurrence"}
			}
		case CallCobR:
			r, err := pp.LookupRecurringCharge(ctx, cp.TxID, cp.Attempt)
			if err != nil {
				return err
			}
			if !r.Found && now.Sub(time.Unix(c.CreatedAt, 0)) < UnknownAfter {
				return nil
			}
			out.RecCharge = &r
			if !r.Found {
				out = callOutcome{NotSent: true, Message: "the PSP has no record of the charge"}
			}
		case CallRecCancel:
			pending, err := s.recCancelPending(ctx, store, c)
			if err != nil {
				return err
			}
			s.Execute(ctx, store, pending)
			return s.applyPixAutoInJob(ctx, store, c.ID)
		}
		if err := s.record(ctx, store, c.ID, out); err != nil {
			return err
		}
		return s.applyPixAutoInJob(ctx, store, c.ID)
	case db.CallDone:
		return s.applyPixAutoInJob(ctx, store, c.ID)
	case db.CallWaiting:
		if c.Kind == CallRec {
			r, err := pp.LookupRecurrence(ctx, c.ProcessorID, "")
			if err != nil {
				return err
			}
			return s.RecStatus(ctx, store, c.ProcessorID, r)
		}
		r, err := pp.LookupRecurringCharge(ctx, cp.TxID, cp.Attempt)
		if err != nil {
			return err
		}
		return s.recChargeResult(ctx, store, c.ID, r)
	}
	return nil
}

func (s *Service) recCancelPending(ctx context.Context, store *db.DB, c *db.ProcessorCall) (*Pending, error) {
	p := &Pending{CallID: c.ID}
	err := store.Read(ctx, func(tx *db.Tx) error {
		rec, err := tx.FindChargeCall(c.Scope, c.PaymentIntent, CallRec)
		if err != nil {
			return err
		}
		p.idRec = rec.ProcessorID
		return nil
	})
	return p, err
}

// applyPixAutoInJob applies an answered Pix Automático call outside any request.
func (s *Service) applyPixAutoInJob(ctx context.Context, store *db.DB, callID string) error {
	return store.Write(ctx, func(tx *db.Tx) error {
		c, err := tx.FindProcessorCall(callID)
		if err != nil || c.State != db.CallDone {
			return err
		}
		a := domain.Actor{Scope: c.Scope}
		var opErr error
		switch c.Kind {
		case CallRec:
			_, opErr = s.applyRecCreated(tx, a, c)
		case CallRecCancel:
			var pa *domain.PixAuthorization
			if pa, opErr = s.GetPixAuthorization(tx, a.Scope, c.PaymentIntent); opErr == nil {
				_, opErr = s.cancelPixAuthLive(tx, a, pa)
			}
		case CallCobR:
			var pi *domain.PaymentIntent
			if pi, opErr = s.ApplyPixAutoCharge(tx, a, c.PaymentIntent); opErr == nil {
				opErr = s.pixAutoSettled(tx, a, pi)
			}
		}
		if e, ok := domain.AsError(opErr); ok && e.KeepChanges {
			return nil
		}
		return opErr
	})
}

// pixAutoSettled runs the PixAutoSettled hook on an intent that left processing.
func (s *Service) pixAutoSettled(tx *db.Tx, a domain.Actor, pi *domain.PaymentIntent) error {
	if pi.Status == domain.PIStatusProcessing || s.PixAutoSettled == nil {
		return nil
	}
	return s.PixAutoSettled(tx, a, pi)
}

// recChargeResult applies what the PSP says of a waiting attempt: paid or failed finishes it
// (and tells the invoice); waiting polls again later.
func (s *Service) recChargeResult(ctx context.Context, store *db.DB, callID string, r RecChargeResult) error {
	return store.Write(ctx, func(tx *db.Tx) error {
		c, err := tx.FindProcessorCall(callID)
		if err != nil || c.State != db.CallWaiting {
			return err
		}
		if !r.Found || r.Status == RecChargeWaiting {
			c.Attempts++
			c.NextCheckAt = tx.Now.Add(pollInterval(c.Attempts)).Unix()
			return tx.UpdateProcessorCall(c)
		}
		a := domain.Actor{Scope: c.Scope}
		pi, err := s.finishPixAuto(tx, a, c, r, nil)
		if err != nil {
			return err
		}
		return s.pixAutoSettled(tx, a, pi)
	})
}

// RecStatus applies what the PSP says of the recurrence idRec (its webhook, reconciliation).
func (s *Service) RecStatus(ctx context.Context, store *db.DB, idRec string, r RecResult) error {
	return store.Write(ctx, func(tx *db.Tx) error {
		c, err := tx.FindProcessorCallByProcessorID(CallRec, idRec)
		if errors.Is(err, db.ErrNotFound) {
			s.logger().Warn("pix automatico: notification for an unknown recurrence ignored", "id_rec", idRec)
			return nil
		}
		if err != nil || c.State != db.CallWaiting {
			return err
		}
		_, err = s.applyRecStatus(tx, domain.Actor{Scope: c.Scope}, c, r)
		return err
	})
}

// RecNotified handles the PSP's recurrence webhook: the recurrence is read from the PSP before
// anything changes, so a forged notification cannot approve or cancel one.
func (s *Service) RecNotified(ctx context.Context, store *db.DB, idRec string) error {
	pp := s.pixAuto()
	if pp == nil {
		return errPixAutoNotConfigured()
	}
	r, err := pp.LookupRecurrence(ctx, idRec, "")
	if err != nil {
		return err
	}
	return s.RecStatus(ctx, store, idRec, r)
}

// CobRNotified handles the PSP's recurring-charge webhook: every waiting attempt of the charge
// txid is read from the PSP before it settles anything.
func (s *Service) CobRNotified(ctx context.Context, store *db.DB, txid string) error {
	pp := s.pixAuto()
	if pp == nil {
		return errPixAutoNotConfigured()
	}
	var waiting []*db.ProcessorCall
	err := store.Read(ctx, func(tx *db.Tx) error {
		for n := 0; ; n++ {
			c, err := tx.FindProcessorCallByReference(fmt.Sprintf("%s.%d", txid, n))
			if errors.Is(err, db.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			if c.Kind == CallCobR && c.State == db.CallWaiting {
				waiting = append(waiting, c)
			}
		}
	})
	if err != nil {
		return err
	}
	if len(waiting) == 0 {
		s.logger().Info("pix automatico: notification for a charge not waiting ignored", "txid", txid)
	}
	for _, c := range waiting {
		var cp cobrParams
		_ = json.Unmarshal([]byte(c.Params), &cp)
		r, err := pp.LookupRecurringCharge(ctx, cp.TxID, cp.Attempt)
		if err != nil {
			return err
		}
		if err := s.recChargeResult(ctx, store, c.ID, r); err != nil {
			return err
		}
	}
	return nil
}

// PixAutoInFlight reports whether the latest attempt of an intent is a live Pix Automático
// charge the PSP holds (reserved, answered or waiting for its settlement): paying the same
// invoice another way meanwhile could pay it twice.
func (s *Service) PixAutoInFlight(tx *db.Tx, sc domain.Scope, pi *domain.PaymentIntent) (bool, error) {
	if pi.LatestCharge == nil || pi.Status != domain.PIStatusProcessing {
		return false, nil
	}
	c, err := tx.FindChargeCall(sc, *pi.LatestCharge, CallCobR)
	if errors.Is(err, db.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return c.State == db.CallReserved || c.State == db.CallDone || c.State == db.CallWaiting, nil
}
