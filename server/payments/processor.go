package payments

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"troco/server/card"
	"troco/server/domain"
	"troco/server/simulation"
)

// Processor is the network side of a payment: it authorizes, captures, voids and refunds cards
// and opens PIX and boleto charges. The sandbox Simulator implements it for test mode; the live
// connectors (server/processors: Cielo API 3.0 for cards, the Banco Central's API Pix for PIX)
// implement it for live mode. The engine has one code path for both.
//
// Transactions. The Simulator is pure and fast, so a whole confirmation (validate, call the
// processor, write intent, charge, ledger and events) runs inside one write transaction. A
// processor that performs network I/O must never run inside the single writer; its
// InTransaction returns false and each operation becomes two-phase (live.go):
//
//  1. a write transaction validates the request and reserves the call: a processor_calls row
//     with the idempotent reference the processor will know it by (Cielo MerchantOrderId, API
//     Pix txid, devolução id), derived from the charge or refund id and so the same on every
//     retry; the intent moves to processing, the operation answers a *domain.Error whose Pending
//     names the call (and KeepChanges commits the reservation);
//  2. the caller (the HTTP adapter, a job) runs Service.Execute outside any transaction: it calls
//     the processor and records the answer on the row;
//  3. the caller runs the same operation again: it finds the answered call and applies it
//     exactly as the one-phase path does (charge, intent, ledger, events).
//
// A crash or a timeout between 1 and 2 leaves the row reserved; the reconciliation job
// (Service.Reconcile) asks the processor what became of that reference and applies the answer,
// so nothing is charged twice and nothing is lost.
//
// Errors. A connector returns ErrNotSent (wrapped) when the request certainly did not reach
// the processor (connection refused, circuit open): the attempt fails with processing_error
// and nothing was charged. Any other error means "unknown": the call stays reserved until
// reconciliation finds the answer. A refusal by the processor is an outcome, not an error.
type Processor interface {
	// InTransaction reports whether calls are pure and fast enough to run in the write transaction.
	InTransaction() bool
	// Available returns nil when method (credit_card, pix, boleto) can be processed, else the
	// 503 processor_unavailable *domain.Error that names the missing setting.
	Available(method string) error
	// AuthorizeCard authorizes (and, with Capture, captures) a card charge; Amount 0 verifies a
	// card for a setup intent.
	AuthorizeCard(ctx context.Context, req CardRequest) (CardResult, error)
	// StartAsync opens a PIX or boleto charge and says in which state it starts.
	StartAsync(ctx context.Context, req AsyncRequest) (AsyncResult, error)
	// Capture captures amount of an authorized charge.
	Capture(ctx context.Context, ref ChargeRef, amount int64) error
	// Void releases an authorized, uncaptured charge.
	Void(ctx context.Context, ref ChargeRef) error
	// Refund returns amount of a captured charge to the buyer.
	Refund(ctx context.Context, req RefundRequest) (RefundResult, error)
	// Lookup asks the processor what became of a charge (reconciliation): a card authorization
	// whose answer was lost, a PIX charge waiting for its payment.
	Lookup(ctx context.Context, ref ChargeRef) (LookupResult, error)
	// SaveCard stores a card with the processor without charging it (a setup intent, the
	// customer portal's "replace card") and returns the processor's token of it; a refusal is an
	// outcome (Decline), not an error. Saving charges nothing, so a connector may send it again
	// and reports every failure as ErrNotSent: the card is simply not saved.
	SaveCard(ctx context.Context, req SaveCardRequest) (SaveCardResult, error)
}

// SaveCardRequest is a card to save: typed in this request (live mode, and test mode), or, in
// test mode, a payment method known only by its stored behaviour.
type SaveCardRequest struct {
	// Reference names the attempt in logs (derived from the payment method id).
	Reference string
	Card      *card.Input
	Brand     string
	// SavedBehavior is, in test mode, the stored SPEC 7.1 behaviour of an existing card.
	SavedBehavior string
	// Customer is the card holder's or customer's name (Cielo's CustomerName).
	Customer string
}

// SaveCardResult is the processor's answer: its token of the card (sealed before it is stored;
// empty in the sandbox, whose saved cards keep their simulated behaviour), or the refusal.
type SaveCardResult struct {
	Token   string               `json:"token,omitempty"`
	Decline *domain.PaymentError `json:"decline,omitempty"`
}

// ErrNotSent marks a connector error after which the processor certainly did not act.
var ErrNotSent = errors.New("the request did not reach the processor")

// ChargeRef names a charge to its processor.
type ChargeRef struct {
	ChargeID string
	Method   string
	// Reference is troco's idempotent reference (MerchantOrderId, txid).
	Reference string
	// ProcessorID is the processor's id (Cielo PaymentId; for PIX the endToEndId once paid).
	ProcessorID string
	Amount      int64
}

// CardRequest is one card authorization. Card carries the typed card only in memory (it
// redacts itself when printed); a saved card is charged through its stored behaviour (test
// mode) or its processor token (live mode) instead.
type CardRequest struct {
	ChargeID string
	// Reference is the idempotent reference of the attempt (Cielo MerchantOrderId).
	Reference    string
	Amount       int64
	Currency     string
	Installments int
	Capture      bool
	// Card is a card typed in this request; nil when a saved payment method is charged.
	Card *card.Input
	// Brand is the card's brand (visa, mastercard, ...).
	Brand string
	// SavedBehavior is, in test mode, the stored SPEC 7.1 behaviour of a saved card.
	SavedBehavior string
	// CardToken is, in live mode, the processor's token of a saved card.
	CardToken string
	// SaveCard asks the processor for a token of the typed card (live mode).
	SaveCard bool
	// Reuse marks a saved card charged again outside the hosted checkout (SPEC 7.1).
	Reuse bool
	// Customer is the buyer's name, sent to the processor.
	Customer string
}

// CardResult is the processor's answer: the outcome, and the decline when it is one.
type CardResult struct {
	Outcome           card.Outcome         `json:"outcome"`
	Decline           *domain.PaymentError `json:"decline,omitempty"`
	AuthorizationCode string               `json:"authorization_code,omitempty"`
	// ProcessorID is the processor's id of the authorization (Cielo PaymentId).
	ProcessorID string `json:"processor_id,omitempty"`
	// CardToken is the processor's token of a card saved by this authorization (sealed before
	// it is stored).
	CardToken string `json:"card_token,omitempty"`
	// SettlesLater, on a processing or pending outcome, asks the Service to settle the charge
	// after its SimDelay: the sandbox's "wait for the webhook" of SPEC 7.1. A network processor
	// leaves it false and reports the outcome itself.
	SettlesLater bool `json:"-"`
	// Dispute, in the sandbox, is the dispute a dispute test card opens a minute after its
	// charge is captured (CONTRACT 17). A network processor reports disputes by itself.
	Dispute *card.Dispute `json:"-"`
}

// AsyncRequest opens a PIX or boleto charge; Email is the buyer's (it picks the SPEC 8.5 rule in
// test mode).
type AsyncRequest struct {
	Method   string
	ChargeID string
	// Reference is the idempotent reference (API Pix txid).
	Reference string
	Amount    int64
	Email     string
	// Expires is how long a PIX charge stays payable.
	Expires time.Duration
	// Description is shown to the payer (solicitacaoPagador).
	Description string
	// DueDate (YYYY-MM-DD), for a PIX paying an invoice with a due date, asks for a charge with
	// a due date (API Pix cobv) instead of an immediate one, payable DueValidityDays after it;
	// PayerName and PayerDocument (CPF or CNPJ digits) identify the debtor it requires.
	DueDate                  string
	DueValidityDays          int
	PayerName, PayerDocument string
	// FineRate and InterestRate (basis points; the fine once after the due date, interest per
	// 30 days pro rata per day) are the invoice's late fees a charge with a due date carries.
	FineRate, InterestRate int64
}

// AsyncResult is the state a PIX or boleto charge starts in and, when delayed, where it goes. A
// live PSP gives the BR Code of the charge it opened.
type AsyncResult struct {
	Initial simulation.State `json:"initial,omitempty"`
	After   simulation.State `json:"after,omitempty"`
	// Code is the BR Code the PSP issued (pixCopiaECola); empty in the sandbox, which builds its own.
	Code string `json:"code,omitempty"`
	// Location is the PSP's payload location.
	Location string `json:"location,omitempty"`
}

// RefundRequest refunds Amount of a captured charge; Reference identifies this refund to the
// processor (the devolução id) and Before is what the charge had refunded before it, so a
// retried refund is recognised as already made.
type RefundRequest struct {
	Charge    ChargeRef
	Reference string
	Amount    int64
	Before    int64
}

// RefundResult is the processor's answer to a refund.
type RefundResult struct {
	// Status is succeeded, pending or failed.
	Status      string `json:"status"`
	ProcessorID string `json:"processor_id,omitempty"`
	Message     string `json:"message,omitempty"`
}

// LookupResult is what a processor knows of a charge.
type LookupResult struct {
	// Found is false when the processor has no such reference: nothing was charged.
	Found bool `json:"found"`
	// Card is the authorization's outcome (cards).
	Card *CardResult `json:"card,omitempty"`
	// Paid, with PaidAmount and EndToEndID, says a PIX charge was paid.
	Paid       bool   `json:"paid,omitempty"`
	PaidAmount int64  `json:"paid_amount,omitempty"`
	EndToEndID string `json:"end_to_end_id,omitempty"`
	// Expired says a PIX charge can no longer be paid.
	Expired bool `json:"expired,omitempty"`
	// Code and Location are a PIX charge's BR Code and payload location.
	Code     string `json:"code,omitempty"`
	Location string `json:"location,omitempty"`
}

// Simulator is the sandbox processor: the SPEC 7.1 card table and the SPEC 8.5 e-mail rules.
type Simulator struct{}

// InTransaction is true: the simulator does no I/O.
func (Simulator) InTransaction() bool { return true }

// AuthorizeCard simulates a card by its number, or a saved card by its stored behaviour.
func (Simulator) AuthorizeCard(_ context.Context, req CardRequest) (CardResult, error) {
	var r card.Result
	if req.Card != nil {
		r = card.Simulate(req.Card.Number, false)
	} else {
		r = SimulateSaved(req.SavedBehavior, req.Reuse)
	}
	out := CardResult{Outcome: r.Outcome, SettlesLater: r.Outcome == card.OutcomeProcessing || r.Outcome == card.OutcomePending}
	if r.Decline != nil {
		out.Decline = paymentError(r.Decline)
		return out, nil
	}
	out.AuthorizationCode = authorizationCode(req.ChargeID)
	if req.Card != nil {
		if d, ok := card.DisputeFor(req.Card.Number); ok {
			out.Dispute = &d
		}
	}
	return out, nil
}

// SaveCard verifies a card by the SPEC 7.1 table (the decline cards cannot be saved); the
// sandbox keeps no token.
func (Simulator) SaveCard(_ context.Context, req SaveCardRequest) (SaveCardResult, error) {
	var r card.Result
	if req.Card != nil {
		r = card.Simulate(req.Card.Number, false)
	} else {
		r = SimulateSaved(req.SavedBehavior, false)
	}
	if r.Outcome == card.OutcomeDeclined {
		if r.Decline == nil {
			return SaveCardResult{Decline: processingError()}, nil
		}
		return SaveCardResult{Decline: paymentError(r.Decline)}, nil
	}
	return SaveCardResult{}, nil
}

// StartAsync applies the SPEC 8.5 rule of the buyer's e-mail.
func (Simulator) StartAsync(_ context.Context, req AsyncRequest) (AsyncResult, error) {
	rule, _ := simulation.RuleForEmail(req.Email)
	return AsyncResult{Initial: rule.Initial, After: rule.After}, nil
}

// Available: the sandbox processes every method.
func (Simulator) Available(string) error { return nil }

// Capture always succeeds in the sandbox.
func (Simulator) Capture(context.Context, ChargeRef, int64) error { return nil }

// Void always succeeds in the sandbox.
func (Simulator) Void(context.Context, ChargeRef) error { return nil }

// Refund always succeeds in the sandbox.
func (Simulator) Refund(context.Context, RefundRequest) (RefundResult, error) {
	return RefundResult{Status: "succeeded"}, nil
}

// Lookup: the sandbox never loses an answer.
func (Simulator) Lookup(context.Context, ChargeRef) (LookupResult, error) {
	return LookupResult{}, nil
}

// paymentError converts a simulated decline into SPEC 2.7's payment_error (network fields null).
func paymentError(d *card.Decline) *domain.PaymentError {
	pe := &domain.PaymentError{Category: string(d.Category), Code: d.Code, Message: d.Message}
	if d.AdviceCode != "" {
		pe.AdviceCode = strPtr(string(d.AdviceCode))
	}
	return pe
}

// authorizationCode is a six-digit code derived from the charge id (stable for the charge).
func authorizationCode(chargeID string) string {
	sum := sha256.Sum256([]byte(chargeID))
	return fmt.Sprintf("%06d", binary.BigEndian.Uint32(sum[:4])%1_000_000)
}

// BehaviorKey is what a saved test-mode card keeps of SPEC 7.1: its row's outcome, reuse
// outcome and code ("succeeded/declined/single_use_card"), never the number. Numbers outside
// the table (which approve) have no key.
func BehaviorKey(number string) string {
	tc, ok := card.LookupTestCard(number)
	if !ok {
		return ""
	}
	return behaviorKeyOf(tc)
}

func behaviorKeyOf(tc card.TestCard) string {
	return string(tc.Outcome) + "/" + string(tc.ReuseOutcome) + "/" + tc.Code
}

// behaviors indexes the SPEC 7.1 table by behaviour key; the table itself is card.TestCards.
var behaviors = func() map[string]card.TestCard {
	m := map[string]card.TestCard{}
	for _, tc := range card.TestCards() {
		m[behaviorKeyOf(tc)] = tc
	}
	return m
}()

// SimulateSaved is card.Simulate for a saved card known only by its behaviour key.
func SimulateSaved(key string, reuse bool) card.Result {
	tc, ok := behaviors[key]
	if !ok {
		return card.Result{Outcome: card.OutcomeSucceeded}
	}
	outcome := tc.Outcome
	if reuse && tc.ReuseOutcome != "" {
		outcome = tc.ReuseOutcome
	}
	if outcome != card.OutcomeDeclined {
		return card.Result{Outcome: outcome}
	}
	return card.Result{Outcome: outcome, Decline: &card.Decline{Category: tc.Category, Code: tc.Code, Message: tc.Message, AdviceCode: tc.AdviceCode}}
}
