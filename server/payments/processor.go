package payments

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"troco/server/card"
	"troco/server/domain"
	"troco/server/simulation"
)

// Processor is the network side of a payment: it authorizes, captures and refunds cards and
// opens PIX and boleto charges. The sandbox Simulator implements it for test mode; a connector to
// an acquirer or PSP implements it for live mode.
//
// Transactions. The Simulator is pure and fast, so a whole confirmation (validate, call the
// processor, write intent, charge, ledger and events) runs inside one write transaction: the
// single writer serializes confirmations of one intent, so concurrent confirms see each other's
// state and exactly one attempt is made. A processor that performs network I/O must never run
// inside the writer; its InTransaction returns false and the flow becomes two-phase:
//
//  1. a write transaction validates the request, reserves the charge id and moves the intent to
//     processing (a concurrent confirm now fails its state check);
//  2. the processor is called outside any transaction, with the charge id as its idempotency key;
//  3. a second write transaction records the result exactly as the one-phase path does.
//
// A crash between 2 and 3 leaves the intent processing with a reserved charge, which a
// reconciliation job resolves by asking the processor about that charge id. Only the
// in-transaction Simulator ships today: the Service answers processor_unavailable for a live
// mode without a processor (and for a processor that is not InTransaction), writing nothing.
type Processor interface {
	// InTransaction reports whether calls are pure and fast enough to run in the write transaction.
	InTransaction() bool
	// AuthorizeCard authorizes (and, with Capture, captures) a card charge; Amount 0 verifies a
	// card for a setup intent.
	AuthorizeCard(ctx context.Context, req CardRequest) (CardResult, error)
	// StartAsync opens a PIX or boleto charge and says in which state it starts.
	StartAsync(ctx context.Context, req AsyncRequest) (AsyncResult, error)
	// Capture captures amount of an authorized charge.
	Capture(ctx context.Context, chargeID string, amount int64) error
	// Refund returns amount of a captured charge to the buyer.
	Refund(ctx context.Context, chargeID string, amount int64) error
}

// CardRequest is one card authorization. Card carries the typed card only in memory (it
// redacts itself when printed); a saved card is charged through its stored behaviour instead.
type CardRequest struct {
	ChargeID     string
	Amount       int64
	Currency     string
	Installments int
	Capture      bool
	// Card is a card typed in this request; nil when a saved payment method is charged.
	Card *card.Input
	// SavedBehavior is, in test mode, the stored SPEC 7.1 behaviour of a saved card.
	SavedBehavior string
	// Reuse marks a saved card charged again outside the hosted checkout (SPEC 7.1).
	Reuse bool
}

// CardResult is the processor's answer: the outcome, and the decline when it is one.
type CardResult struct {
	Outcome           card.Outcome
	Decline           *domain.PaymentError
	AuthorizationCode string
	// SettlesLater, on a processing or pending outcome, asks the Service to settle the charge
	// after its SimDelay: the sandbox's "wait for the webhook" of SPEC 7.1. A network processor
	// leaves it false and reports the outcome itself.
	SettlesLater bool
	// Dispute, in the sandbox, is the dispute a dispute test card opens a minute after its
	// charge is captured (CONTRACT 17). A network processor reports disputes by itself.
	Dispute *card.Dispute
}

// AsyncRequest opens a PIX or boleto charge; Email is the buyer's (it picks the SPEC 8.5 rule in
// test mode).
type AsyncRequest struct {
	Method   string
	ChargeID string
	Amount   int64
	Email    string
}

// AsyncResult is the state a PIX or boleto charge starts in and, when delayed, where it goes.
type AsyncResult struct {
	Initial simulation.State
	After   simulation.State
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

// StartAsync applies the SPEC 8.5 rule of the buyer's e-mail.
func (Simulator) StartAsync(_ context.Context, req AsyncRequest) (AsyncResult, error) {
	rule, _ := simulation.RuleForEmail(req.Email)
	return AsyncResult{Initial: rule.Initial, After: rule.After}, nil
}

// Capture always succeeds in the sandbox.
func (Simulator) Capture(context.Context, string, int64) error { return nil }

// Refund always succeeds in the sandbox.
func (Simulator) Refund(context.Context, string, int64) error { return nil }

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
