package payments

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"troco/db"
	"troco/server/calendar"
	"troco/server/card"
	"troco/server/core"
	"troco/server/domain"
)

// Disputes (CONTRACT 17). In test mode a dispute test card opens a dispute a minute after its
// charge is captured; the merchant answers with evidence and submits it, and after SimDelay the
// submitted uncategorized_text decides: winning_evidence wins (funds reinstated), losing_evidence
// loses. A chargeback withdraws the disputed amount plus the fee plan's dispute fee when it
// opens; an inquiry (warning_*) withdraws nothing unless it is lost. Unanswered at due_by, a
// dispute with evidence is submitted as it stands, one without is lost, an inquiry is closed.
const (
	DisputeOpenDelay      = time.Minute
	DisputeResponseWindow = 7 * 24 * time.Hour
	maxEvidenceText       = 20000

	stepOpen        = "open"
	stepOpenInquiry = "open_inquiry"
	stepDecide      = "decide"
	stepDue         = "due"
)

// Test-mode evidence texts that decide the outcome (Stripe's).
const (
	WinningEvidence = "winning_evidence"
	LosingEvidence  = "losing_evidence"
)

// scheduleDispute opens the dispute of a dispute test card a minute after its charge is captured:
// a charge not captured yet (capture_method manual) holds the step until CaptureIntent releases it.
func scheduleDispute(tx *db.Tx, s domain.Scope, chargeID string, d card.Dispute, captured bool) error {
	action := stepOpen
	if d.Inquiry {
		action = stepOpenInquiry
	}
	due := tx.Now.Add(DisputeOpenDelay).Unix()
	if !captured {
		due = db.DisputeStepOnHold
	}
	return tx.ScheduleDisputeStep(db.DisputeStep{Scope: s, Action: action, Charge: chargeID, Reason: d.Reason, DueAt: due})
}

// OpenDispute opens a dispute on a captured charge now: charge.dispute.created, the charge's
// disputed, and for a chargeback the withdrawal (ledger entry, charge.dispute.funds_withdrawn).
func (s *Service) OpenDispute(tx *db.Tx, a domain.Actor, chargeID, reason string, inquiry bool) (*domain.Dispute, error) {
	ch, err := tx.FindChargeByID(a.Scope, chargeID)
	if err != nil {
		return nil, notFound(err, "charge", "charge", chargeID)
	}
	if !ch.Captured || ch.Refunded {
		return nil, domain.Invalid("charge", "Charge %s cannot be disputed: it is not captured or was fully refunded.", ch.ID)
	}
	status := domain.DisputeNeedsResponse
	if inquiry {
		status = domain.DisputeWarningNeedsResponse
	}
	d := &domain.Dispute{Amount: ch.AmountCaptured - ch.AmountRefunded, Charge: ch.ID, Currency: ch.Currency, Evidence: domain.EmptyEvidence(),
		EvidenceDetails: domain.EvidenceDetails{DueBy: domain.At(tx.Now.Add(DisputeResponseWindow))}, IsChargeRefundable: inquiry,
		Metadata: domain.Metadata{}, PaymentIntent: ch.PaymentIntent, Reason: reason, Status: status, BalanceTransactions: []string{}}
	if err := tx.CreateDispute(a.Scope, d); err != nil {
		return nil, err
	}
	if !ch.Disputed {
		ch.Disputed = true
		if err := tx.UpdateCharge(a.Scope, ch); err != nil {
			return nil, err
		}
	}
	if err := emit(tx, a, "charge.dispute.created", d, nil); err != nil {
		return nil, err
	}
	if !inquiry {
		if err := s.withdraw(tx, a, d, ch); err != nil {
			return nil, err
		}
	}
	return d, tx.ScheduleDisputeStep(db.DisputeStep{Scope: a.Scope, Action: stepDue, Charge: ch.ID, Dispute: d.ID, DueAt: d.EvidenceDetails.DueBy.Unix()})
}

// withdraw debits the disputed amount and the dispute fee.
func (s *Service) withdraw(tx *db.Tx, a domain.Actor, d *domain.Dispute, ch *domain.Charge) error {
	org, err := tx.FindOrganizationByID(a.OrgID)
	if err != nil {
		return err
	}
	fee := core.OrganizationFeePlan(org).DisputeFeeAmount
	t := &domain.Transaction{Type: domain.TxnTypeDispute, PaymentIntent: ch.PaymentIntent, Charge: ch.ID, PaymentMethodType: ch.PaymentMethodDetails.Type,
		Currency: d.Currency, Amount: -d.Amount, FeeAmount: fee, NetAmount: -(d.Amount + fee), Status: domain.TxnPending,
		AvailableOn: calendar.Today(tx.Now).Format(calendar.Layout)}
	if err := tx.InsertTransaction(a.Scope, t); err != nil {
		return err
	}
	d.FundsWithdrawn = true
	d.BalanceTransactions = append(d.BalanceTransactions, t.ID)
	if err := tx.UpdateDispute(a.Scope, d); err != nil {
		return err
	}
	return emit(tx, a, "charge.dispute.funds_withdrawn", d, nil)
}

// reinstate credits back the disputed amount of a won dispute (the fee is not returned).
func (s *Service) reinstate(tx *db.Tx, a domain.Actor, d *domain.Dispute) error {
	ch, err := tx.FindChargeByID(a.Scope, d.Charge)
	if err != nil {
		return err
	}
	t := &domain.Transaction{Type: domain.TxnTypeDisputeReversal, PaymentIntent: ch.PaymentIntent, Charge: ch.ID, PaymentMethodType: ch.PaymentMethodDetails.Type,
		Currency: d.Currency, Amount: d.Amount, NetAmount: d.Amount, Status: domain.TxnPending,
		AvailableOn: calendar.Today(tx.Now).Format(calendar.Layout)}
	if err := tx.InsertTransaction(a.Scope, t); err != nil {
		return err
	}
	d.FundsWithdrawn = false
	d.BalanceTransactions = append(d.BalanceTransactions, t.ID)
	if err := tx.UpdateDispute(a.Scope, d); err != nil {
		return err
	}
	return emit(tx, a, "charge.dispute.funds_reinstated", d, nil)
}

// DisputeParams is the body of POST /v1/disputes/{id}.
type DisputeParams struct {
	Evidence map[string]*string            `json:"evidence"`
	Submit   *bool                         `json:"submit"`
	Metadata domain.Opt[map[string]string] `json:"metadata"`
}

// GetDispute returns a dispute of the scope.
func (s *Service) GetDispute(tx *db.Tx, sc domain.Scope, id string) (*domain.Dispute, error) {
	d, err := tx.FindDisputeByID(sc, id)
	return d, notFound(err, "id", "dispute", id)
}

func underReview(status string) bool {
	return status == domain.DisputeUnderReview || status == domain.DisputeWarningUnderReview
}

// UpdateDispute records evidence and metadata and, with submit, sends the evidence for review
// (once). Evidence file fields take dispute_evidence files of the same organization and
// environment (400 naming the field). Evidence on a closed, submitted or past-due dispute is 409.
func (s *Service) UpdateDispute(tx *db.Tx, a domain.Actor, id string, p DisputeParams) (*domain.Dispute, error) {
	d, err := s.GetDispute(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	before := *d
	before.Evidence = copyEvidence(d.Evidence)
	submit := p.Submit != nil && *p.Submit
	if len(p.Evidence) > 0 || submit {
		switch {
		case domain.DisputeClosed(d.Status):
			return nil, domain.Conflict(domain.CodeResourceStateConflict, "Dispute %s is closed (%s): its evidence can no longer change.", d.ID, d.Status)
		case underReview(d.Status):
			return nil, domain.Conflict(domain.CodeResourceStateConflict, "The evidence of dispute %s was already submitted and is under review.", d.ID)
		case !tx.Now.Before(d.EvidenceDetails.DueBy.Time):
			return nil, domain.Conflict(domain.CodeResourceStateConflict, "Evidence for dispute %s was due by %s.", d.ID, d.EvidenceDetails.DueBy.Format(time.RFC3339))
		}
	}
	keys := make([]string, 0, len(p.Evidence))
	for k := range p.Evidence {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, param := p.Evidence[k], "evidence["+k+"]"
		isFile := slices.Contains(domain.DisputeFileFields, k)
		if !isFile && !slices.Contains(domain.DisputeTextFields, k) {
			return nil, domain.Invalid(param, "Received unknown parameter: %s.", param)
		}
		if v == nil || *v == "" {
			d.Evidence[k] = nil
			continue
		}
		if isFile {
			if _, err := core.FileOfPurpose(tx, a.Scope, *v, domain.PurposeDisputeEvidence, param); err != nil {
				return nil, err
			}
		} else if utf8.RuneCountInString(*v) > maxEvidenceText {
			return nil, domain.Invalid(param, "%s can be at most %d characters.", param, maxEvidenceText)
		}
		val := *v
		d.Evidence[k] = &val
	}
	d.EvidenceDetails.HasEvidence = slices.ContainsFunc(keysOf(d.Evidence), func(k string) bool { return d.Evidence[k] != nil })
	if p.Metadata.Set {
		md, err := domain.ApplyMetadata(d.Metadata, p.Metadata)
		if err != nil {
			return nil, err
		}
		d.Metadata = md
	}
	if submit {
		if !d.EvidenceDetails.HasEvidence {
			return nil, domain.Invalid("evidence", "Add evidence before submitting dispute %s.", d.ID)
		}
		if err := s.submit(tx, a, d); err != nil {
			return nil, err
		}
	}
	if err := tx.UpdateDispute(a.Scope, d); err != nil {
		return nil, err
	}
	return d, emit(tx, a, "charge.dispute.updated", d, &before)
}

func (s *Service) submit(tx *db.Tx, a domain.Actor, d *domain.Dispute) error {
	d.Status = domain.DisputeUnderReview
	if d.IsChargeRefundable {
		d.Status = domain.DisputeWarningUnderReview
	}
	d.EvidenceDetails.SubmissionCount++
	if err := tx.DeleteDisputeSteps(d.ID, stepDue); err != nil {
		return err
	}
	if a.Livemode {
		return nil // a live processor reports the outcome
	}
	return tx.ScheduleDisputeStep(db.DisputeStep{Scope: a.Scope, Action: stepDecide, Charge: d.Charge, Dispute: d.ID, DueAt: tx.Now.Add(s.SimDelay).Unix()})
}

// CloseDispute accepts a dispute (Stripe's close): a chargeback is lost (its funds stay
// withdrawn), an inquiry is closed with nothing withdrawn. Only a dispute that still needs a
// response can be closed (409 otherwise).
func (s *Service) CloseDispute(tx *db.Tx, a domain.Actor, id string) (*domain.Dispute, error) {
	d, err := s.GetDispute(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if d.Status != domain.DisputeNeedsResponse && d.Status != domain.DisputeWarningNeedsResponse {
		return nil, domain.Conflict(domain.CodeResourceStateConflict, "Dispute %s cannot be closed: its status is %s.", d.ID, d.Status)
	}
	outcome := domain.DisputeLost
	if d.IsChargeRefundable {
		outcome = domain.DisputeWarningClosed
	}
	return d, s.finish(tx, a, d, outcome)
}

// finish closes d with status: steps dropped, charge.dispute.closed.
func (s *Service) finish(tx *db.Tx, a domain.Actor, d *domain.Dispute, status string) error {
	before := *d
	d.Status = status
	d.IsChargeRefundable = false
	if err := tx.DeleteDisputeSteps(d.ID, ""); err != nil {
		return err
	}
	if err := tx.UpdateDispute(a.Scope, d); err != nil {
		return err
	}
	return emit(tx, a, "charge.dispute.closed", d, &before)
}

// ListDisputes pages the disputes of a scope.
func (s *Service) ListDisputes(tx *db.Tx, sc domain.Scope, f db.DisputeFilter, p db.ListParams) ([]*domain.Dispute, bool, error) {
	return tx.ListDisputes(sc, f, p)
}

// checkRefundable decides whether a disputed charge may be refunded (Stripe's rules): while a
// chargeback is open (needs_response, under_review) the money is already withdrawn and a refund
// is refused (charge_disputed); once it is won the funds are reinstated and what remains of the
// charge can be refunded as usual; once it is lost the buyer got the money back through the
// card network, so a refund is refused for good. An open inquiry may be refunded, which closes
// it (the dispute is returned so the caller closes it); a closed inquiry is no obstacle.
func (s *Service) checkRefundable(tx *db.Tx, a domain.Actor, ch *domain.Charge) (*domain.Dispute, error) {
	if !ch.Disputed {
		return nil, nil
	}
	d, err := tx.LatestDisputeOfCharge(a.Scope, ch.ID)
	if errors.Is(err, db.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	refused := func(msg string) error {
		return &domain.Error{Status: http.StatusBadRequest, Type: domain.TypeInvalidRequest, Code: domain.CodeChargeDisputed, Param: "charge", Message: msg}
	}
	switch {
	case d.Status == domain.DisputeWarningClosed || d.Status == domain.DisputeWon:
		return nil, nil
	case d.Status == domain.DisputeLost:
		return nil, refused("Charge " + ch.ID + " cannot be refunded: its dispute " + d.ID + " was lost, so the buyer already got the disputed amount back through the card network.")
	case d.IsChargeRefundable:
		return d, nil
	}
	return nil, refused("Charge " + ch.ID + " has been charged back (dispute " + d.ID + ", " + d.Status + "); it cannot be refunded while the dispute is open. Answer the dispute instead; a won dispute reinstates the funds and the charge can then be refunded.")
}

const disputeBatch = 100

// RunDueDisputes applies every dispute step due at now, each batch claimed and applied in one
// write transaction (exactly once, also across replicas and restarts).
func (s *Service) RunDueDisputes(ctx context.Context, store *db.DB, now time.Time) error {
	for {
		n := 0
		err := store.Write(ctx, func(tx *db.Tx) error {
			due, err := tx.ClaimDueDisputeSteps(now.Unix(), disputeBatch)
			if err != nil {
				return err
			}
			n = len(due)
			for _, st := range due {
				if err := s.applyDisputeStep(tx, st); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil || n < disputeBatch {
			return err
		}
	}
}

func (s *Service) applyDisputeStep(tx *db.Tx, st db.DisputeStep) error {
	a := domain.Actor{Scope: st.Scope}
	if st.Action == stepOpen || st.Action == stepOpenInquiry {
		if ch, err := tx.FindChargeByID(a.Scope, st.Charge); err != nil || ch.Disputed {
			return nil // gone, or already disputed (troco trigger opens its dispute at once)
		}
		_, err := s.OpenDispute(tx, a, st.Charge, st.Reason, st.Action == stepOpenInquiry)
		if _, ok := domain.AsError(err); ok {
			return nil // refunded or gone meanwhile: nothing to dispute
		}
		return err
	}
	d, err := tx.FindDisputeByID(st.Scope, st.Dispute)
	if errors.Is(err, db.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	switch st.Action {
	case stepDecide:
		if !underReview(d.Status) {
			return nil
		}
		text := ""
		if v := d.Evidence["uncategorized_text"]; v != nil {
			text = strings.TrimSpace(*v)
		}
		inquiry := d.Status == domain.DisputeWarningUnderReview
		switch text {
		// The decision first (charge.dispute.closed), then the money it moves, so the
		// funds_* event carries the decided dispute, as Stripe sends it after the close.
		case WinningEvidence:
			status := domain.DisputeWon
			if inquiry {
				status = domain.DisputeWarningClosed
			}
			if err := s.finish(tx, a, d, status); err != nil || !d.FundsWithdrawn {
				return err
			}
			return s.reinstate(tx, a, d)
		case LosingEvidence:
			if err := s.finish(tx, a, d, domain.DisputeLost); err != nil || d.FundsWithdrawn {
				return err
			}
			ch, err := tx.FindChargeByID(a.Scope, d.Charge)
			if err != nil {
				return err
			}
			return s.withdraw(tx, a, d, ch)
		}
		return nil // any other evidence: the review goes on (as a real issuer that has not answered)
	case stepDue:
		if d.Status != domain.DisputeNeedsResponse && d.Status != domain.DisputeWarningNeedsResponse {
			return nil
		}
		before := *d
		d.EvidenceDetails.PastDue = true
		switch {
		case d.IsChargeRefundable:
			return s.finish(tx, a, d, domain.DisputeWarningClosed)
		case !d.EvidenceDetails.HasEvidence:
			return s.finish(tx, a, d, domain.DisputeLost)
		}
		if err := s.submit(tx, a, d); err != nil {
			return err
		}
		if err := tx.UpdateDispute(a.Scope, d); err != nil {
			return err
		}
		return emit(tx, a, "charge.dispute.updated", d, &before)
	}
	return nil
}

func copyEvidence(e domain.DisputeEvidence) domain.DisputeEvidence {
	out := domain.DisputeEvidence{}
	for k, v := range e {
		out[k] = v
	}
	return out
}

func keysOf(e domain.DisputeEvidence) []string {
	out := make([]string, 0, len(e))
	for k := range e {
		out = append(out, k)
	}
	return out
}

// DecideDisputeNow applies, in test mode, the decision a submitted dispute would get after
// SimDelay (troco trigger uses it so charge.dispute.funds_reinstated needs no waiting).
func (s *Service) DecideDisputeNow(tx *db.Tx, a domain.Actor, id string) (*domain.Dispute, error) {
	d, err := s.GetDispute(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if a.Livemode {
		return nil, domain.Conflict(domain.CodeTestmodeRequired, "Disputes are decided by the card network in live mode.")
	}
	if err := tx.DeleteDisputeSteps(d.ID, stepDecide); err != nil {
		return nil, err
	}
	if err := s.applyDisputeStep(tx, db.DisputeStep{Scope: a.Scope, Action: stepDecide, Charge: d.Charge, Dispute: d.ID}); err != nil {
		return nil, err
	}
	return s.GetDispute(tx, a.Scope, id)
}
