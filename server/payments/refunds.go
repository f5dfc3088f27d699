package payments

import (
	"context"
	"net/http"
	"slices"

	"troco/db"
	"troco/server/domain"
)

// RefundReasons are the accepted refund reasons (Stripe's).
var RefundReasons = []string{"duplicate", "fraudulent", "requested_by_customer"}

// RefundParams is the body of POST /v1/refunds.
type RefundParams struct {
	Charge        string                        `json:"charge"`
	PaymentIntent string                        `json:"payment_intent"`
	Amount        *int64                        `json:"amount"`
	Reason        *string                       `json:"reason"`
	Metadata      domain.Opt[map[string]string] `json:"metadata"`
}

// CreateRefund refunds all (default) or part of what remains of a captured charge, named by
// charge or by payment_intent (its latest charge). The refund succeeds at once in the sandbox;
// the charge's amount_refunded grows, refunded turns true when nothing remains, a negative
// ledger entry is written, and refund.created and charge.refunded are emitted.
func (s *Service) CreateRefund(tx *db.Tx, a domain.Actor, p RefundParams) (*domain.Refund, error) {
	if p.Charge == "" && p.PaymentIntent == "" {
		return nil, domain.Missing("charge")
	}
	var ch *domain.Charge
	var err error
	if p.Charge != "" {
		if ch, err = tx.FindChargeByID(a.Scope, p.Charge); err != nil {
			return nil, notFound(err, "charge", "charge", p.Charge)
		}
		if p.PaymentIntent != "" && ch.PaymentIntent != p.PaymentIntent {
			return nil, domain.Invalid("payment_intent", "Charge %s does not belong to payment intent %s.", ch.ID, p.PaymentIntent)
		}
	} else {
		pi, err := tx.FindPaymentIntentByID(a.Scope, p.PaymentIntent)
		if err != nil {
			return nil, notFound(err, "payment_intent", "payment intent", p.PaymentIntent)
		}
		if pi.Status != domain.PIStatusSucceeded || pi.LatestCharge == nil {
			return nil, domain.Invalid("payment_intent", "Payment intent %s has no captured charge to refund (status %s).", pi.ID, pi.Status)
		}
		if ch, err = tx.FindChargeByID(a.Scope, *pi.LatestCharge); err != nil {
			return nil, err
		}
	}
	if ch.Status != domain.ChargeStatusSucceeded || !ch.Captured {
		return nil, domain.Invalid("charge", "Charge %s cannot be refunded: only captured charges can (an uncaptured authorization is released by canceling its payment intent).", ch.ID)
	}
	inquiry, err := s.checkRefundable(tx, a, ch)
	if err != nil {
		return nil, err
	}
	remaining := ch.AmountCaptured - ch.AmountRefunded
	if remaining <= 0 {
		return nil, &domain.Error{Status: http.StatusBadRequest, Type: domain.TypeInvalidRequest, Code: domain.CodeChargeAlreadyRefunded, Param: "charge",
			Message: "Charge " + ch.ID + " has already been refunded."}
	}
	amount := remaining
	if p.Amount != nil {
		if *p.Amount < 1 {
			return nil, domain.Invalid("amount", "amount must be a positive integer in centavos.")
		}
		if *p.Amount > remaining {
			return nil, domain.Invalid("amount", "Refund amount (%d) is greater than what remains to refund on charge %s (%d).", *p.Amount, ch.ID, remaining)
		}
		amount = *p.Amount
	}
	if p.Reason != nil && !slices.Contains(RefundReasons, *p.Reason) {
		return nil, domain.Invalid("reason", "reason must be duplicate, fraudulent or requested_by_customer.")
	}
	r := &domain.Refund{Amount: amount, Charge: ch.ID, Currency: ch.Currency, PaymentIntent: ch.PaymentIntent, Reason: p.Reason, Status: "succeeded", Metadata: domain.Metadata{}}
	if p.Metadata.Set {
		if err := domain.ValidateMetadata(p.Metadata.V); err != nil {
			return nil, err
		}
		r.Metadata = domain.MergeMetadata(nil, p.Metadata.V)
	}
	proc, err := s.processor(a.Livemode, ch.PaymentMethodDetails.Type)
	if err != nil {
		return nil, err
	}
	if call, err := s.afterCall(tx, a, proc, &domain.PaymentIntent{ID: ch.PaymentIntent}, CallRefund, "refund"); err != nil {
		return nil, err
	} else if call != nil {
		// The answered refund, applied now with the amount and id it was made with.
		r.ID, r.Amount = call.Refund, call.Amount
		if out := outcomeOf(call); out.Refund != nil && out.Refund.Status == "failed" {
			e := processorFailed("refund", out.Refund.Message)
			e.KeepChanges = true
			return nil, e
		} else if out.Refund != nil && out.Refund.Status == "pending" {
			r.Status = "pending"
		}
		if call.Amount > remaining {
			return nil, domain.Invalid("amount", "Refund amount (%d) is greater than what remains to refund on charge %s (%d).", call.Amount, ch.ID, remaining)
		}
	} else if !proc.InTransaction() {
		ref, err := chargeRef(tx, a.Scope, ch)
		if err != nil {
			return nil, err
		}
		refundID := domain.NewID(domain.PrefixRefund)
		req := RefundRequest{Charge: ref, Reference: Reference(refundID), Amount: amount, Before: ch.AmountRefunded}
		c, err := s.reserve(tx, a.Scope, CallRefund, ch.PaymentMethodDetails.Type, ch.PaymentIntent, ch.ID, refundID, req.Reference, amount,
			refundParams{Before: ch.AmountRefunded, Reason: p.Reason})
		if err != nil {
			return nil, err
		}
		return nil, pendingError(&Pending{CallID: c.ID, refund: &req})
	} else if _, err := proc.Refund(context.Background(), RefundRequest{Charge: ChargeRef{ChargeID: ch.ID, Method: ch.PaymentMethodDetails.Type}, Amount: amount}); err != nil {
		return nil, err
	}
	if err := tx.CreateRefund(a.Scope, r); err != nil {
		return nil, err
	}
	chBefore := *ch
	ch.AmountRefunded += amount
	ch.Refunded = ch.AmountRefunded == ch.AmountCaptured
	if err := tx.UpdateCharge(a.Scope, ch); err != nil {
		return nil, err
	}
	if ch, err = tx.FindChargeByID(a.Scope, ch.ID); err != nil {
		return nil, err
	}
	if err := recordRefund(tx, a.Scope, ch, r); err != nil {
		return nil, err
	}
	if err := emit(tx, a, "refund.created", r, nil); err != nil {
		return nil, err
	}
	if err := emit(tx, a, "charge.refunded", ch, &chBefore); err != nil {
		return nil, err
	}
	if inquiry != nil && !domain.DisputeClosed(inquiry.Status) {
		// A refunded inquiry has nothing left to dispute (Stripe closes it).
		return r, s.finish(tx, a, inquiry, domain.DisputeWarningClosed)
	}
	return r, nil
}

// GetRefund returns a refund of the scope.
func (s *Service) GetRefund(tx *db.Tx, sc domain.Scope, id string) (*domain.Refund, error) {
	r, err := tx.FindRefundByID(sc, id)
	return r, notFound(err, "id", "refund", id)
}

// GetCharge returns a charge of the scope.
func (s *Service) GetCharge(tx *db.Tx, sc domain.Scope, id string) (*domain.Charge, error) {
	c, err := tx.FindChargeByID(sc, id)
	return c, notFound(err, "id", "charge", id)
}

// GetTransaction returns a ledger entry of the scope.
func (s *Service) GetTransaction(tx *db.Tx, sc domain.Scope, id string) (*domain.Transaction, error) {
	t, err := tx.FindTransactionByID(sc, id)
	return t, notFound(err, "id", "transaction", id)
}
