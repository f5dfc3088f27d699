package payments

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"

	"troco/db"
	"troco/server/calendar"
	"troco/server/domain"
	"troco/server/pix"
)

// Pix Automático (the Banco Central's recurring PIX): a payer authorizes an organization to
// charge up to max_amount every interval. The payer approves on the hosted page (the QR a banking
// app scans; in test mode the sandbox bar's approve and reject buttons) or, in test mode, the
// customer's e-mail decides at once:
//
//	pixauto_approve@…       approved
//	pixauto_reject@…        rejected
//	pixauto_insufficient@…  approved; every recurring charge will fail for lack of funds
//
// Approval creates a payment method of type pix_automatico for the customer. A pending
// authorization nobody answers expires after PixAuthLifetime.

// PixAuthLifetime is how long a pending authorization waits for the payer.
const PixAuthLifetime = 24 * time.Hour

// Pix Automático bounds.
const (
	MaxPixAuthAmount      = 10_000_000_00 // R$ 10 milhões per charge
	MaxPixAuthDescription = 140
	MaxPixAuthStartDays   = 365
)

// Sandbox rules of Pix Automático, by the customer e-mail's local part.
const (
	PixAutoApprove      = "pixauto_approve"
	PixAutoReject       = "pixauto_reject"
	PixAutoInsufficient = "pixauto_insufficient"
)

// PixAuthParams is the body of POST /v1/pix-authorizations.
type PixAuthParams struct {
	Customer    string            `json:"customer"`
	MaxAmount   *int64            `json:"max_amount"`
	Interval    string            `json:"interval"`
	StartDate   *string           `json:"start_date"`
	EndDate     *string           `json:"end_date"`
	Description *string           `json:"description"`
	Metadata    map[string]string `json:"metadata"`
	// Origin is the https://host public URLs use when the Service has no BaseURL.
	Origin string `json:"-"`
	// ID is the id the authorization gets, chosen by the caller before the first run: a live
	// authorization is created by the run that applies the PSP's answer.
	ID string `json:"-"`
}

// PixAuthPagePath is the hosted authorization page of id (with ?s=<secret>).
func PixAuthPagePath(id string) string { return "/pix-authorizations/" + id }

// CreatePixAuthorization validates p, creates a pending authorization for a customer of the
// caller's scope and, in test mode, applies the customer e-mail's rule.
func (s *Service) CreatePixAuthorization(tx *db.Tx, a domain.Actor, p PixAuthParams) (*domain.PixAuthorization, error) {
	if p.Customer == "" {
		return nil, domain.Missing("customer")
	}
	cus, err := tx.FindCustomerByID(a.Scope, p.Customer)
	if errors.Is(err, db.ErrNotFound) {
		return nil, domain.NotFound("customer", "customer", p.Customer)
	}
	if err != nil {
		return nil, err
	}
	switch {
	case p.MaxAmount == nil:
		return nil, domain.Missing("max_amount")
	case *p.MaxAmount < MinAmount || *p.MaxAmount > MaxPixAuthAmount:
		return nil, domain.Invalid("max_amount", "max_amount must be between %d and %d centavos (the most one recurring charge may take).", MinAmount, MaxPixAuthAmount)
	case p.Interval == "":
		return nil, domain.Missing("interval")
	case !slices.Contains(domain.PixAuthIntervals, p.Interval):
		return nil, domain.Invalid("interval", "interval must be one of %s.", strings.Join(domain.PixAuthIntervals, ", "))
	case p.Description != nil && len([]rune(*p.Description)) > MaxPixAuthDescription:
		return nil, domain.Invalid("description", "description can be at most %d characters (what the payer's bank shows).", MaxPixAuthDescription)
	}
	if err := domain.ValidateMetadata(p.Metadata); err != nil {
		return nil, err
	}
	today := calendar.Today(tx.Now)
	start := today
	if p.StartDate != nil {
		if start, err = calendar.Parse(*p.StartDate); err != nil {
			return nil, domain.Invalid("start_date", "start_date must be an existing date written YYYY-MM-DD.")
		}
		if start.Before(today) || start.After(today.AddDate(0, 0, MaxPixAuthStartDays)) {
			return nil, domain.Invalid("start_date", "start_date must be between today (%s) and %d days ahead.", today.Format(calendar.Layout), MaxPixAuthStartDays)
		}
	}
	var end *string
	if p.EndDate != nil {
		e, err := calendar.Parse(*p.EndDate)
		if err != nil {
			return nil, domain.Invalid("end_date", "end_date must be an existing date written YYYY-MM-DD.")
		}
		if !e.After(start) {
			return nil, domain.Invalid("end_date", "end_date must be after start_date (%s).", start.Format(calendar.Layout))
		}
		v := e.Format(calendar.Layout)
		end = &v
	}
	if a.Livemode {
		return s.createPixAuthLive(tx, a, p, cus, start.Format(calendar.Layout), end)
	}
	org, err := tx.FindOrganizationByID(a.OrgID)
	if err != nil {
		return nil, err
	}
	id := p.ID
	if id == "" {
		id = domain.NewID(domain.PrefixPixAuthorization)
	}
	secret := domain.NewSecret("pas_")
	origin := s.origin(p.Origin)
	code, txid, err := pixCode(org, origin, id, 0)
	if err != nil {
		return nil, err
	}
	md := domain.Metadata{}
	for k, v := range p.Metadata {
		md[k] = v
	}
	now := domain.At(tx.Now)
	pa := &domain.PixAuthorization{ID: id, Object: "pix_authorization", Status: domain.PixAuthPending, BRCode: code,
		URL: strings.TrimRight(origin, "/") + PixAuthPagePath(id) + "?s=" + url.QueryEscape(secret), Customer: cus.ID, MaxAmount: *p.MaxAmount,
		Currency: "brl", Interval: p.Interval, StartDate: start.Format(calendar.Layout), EndDate: end, Description: p.Description, Metadata: md,
		ExpiresAt: domain.At(tx.Now.Add(PixAuthLifetime)), Livemode: a.Livemode, CreatedAt: now, UpdatedAt: now}
	rule := ""
	if !a.Livemode && cus.Email != nil {
		local, _, _ := strings.Cut(strings.ToLower(*cus.Email), "@")
		if local == PixAutoApprove || local == PixAutoReject || local == PixAutoInsufficient {
			rule = local
		}
	}
	if err := tx.CreatePixAuthorization(a.Scope, pa, secret, rule); err != nil {
		return nil, err
	}
	// The QR's location answers the recurrence while the payer may still scan it.
	if err := tx.UpsertPixLocation(&db.PixLocation{TxID: txid, Scope: a.Scope, Charge: id, Kind: LocationRec, ExpiresAt: pa.ExpiresAt.Time}); err != nil {
		return nil, err
	}
	if err := emit(tx, a, "pix_authorization.created", pa, nil); err != nil {
		return nil, err
	}
	switch rule {
	case PixAutoApprove, PixAutoInsufficient:
		return s.AnswerPixAuthorization(tx, a, id, true)
	case PixAutoReject:
		return s.AnswerPixAuthorization(tx, a, id, false)
	}
	return pa, nil
}

// GetPixAuthorization returns an authorization of the scope.
func (s *Service) GetPixAuthorization(tx *db.Tx, sc domain.Scope, id string) (*domain.PixAuthorization, error) {
	pa, err := tx.FindPixAuthorization(sc, id)
	return pa, notFound(err, "id", "pix_authorization", id)
}

// AnswerPixAuthorization is the payer approving (a pix_automatico payment method is created for
// the customer) or rejecting a pending authorization; any other status is 409.
func (s *Service) AnswerPixAuthorization(tx *db.Tx, a domain.Actor, id string, approve bool) (*domain.PixAuthorization, error) {
	pa, err := s.GetPixAuthorization(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	action := "reject"
	if approve {
		action = "approve"
	}
	if pa.Status != domain.PixAuthPending {
		return nil, domain.Conflict(domain.CodeResourceStateConflict, "You cannot %s this authorization because it is %s; only a pending one can be answered.", action, pa.Status)
	}
	before := *pa
	pa.Status, pa.UpdatedAt = domain.PixAuthRejected, domain.At(tx.Now)
	typ := "pix_authorization.rejected"
	if approve {
		cus := pa.Customer
		pm := &domain.PaymentMethod{Type: domain.MethodPixAutomatico, Customer: &cus, Metadata: domain.Metadata{"pix_authorization": pa.ID}}
		if err := tx.CreatePaymentMethod(a.Scope, pm); err != nil {
			return nil, err
		}
		pa.Status, pa.PaymentMethod, typ = domain.PixAuthApproved, &pm.ID, "pix_authorization.approved"
	}
	if err := tx.UpdatePixAuthorization(a.Scope, pa); err != nil {
		return nil, err
	}
	return pa, emit(tx, a, typ, pa, &before)
}

// CancelPixAuthorization ends a pending or approved authorization: no charge is made under it
// afterwards. Rejected, expired or already canceled ones are 409.
func (s *Service) CancelPixAuthorization(tx *db.Tx, a domain.Actor, id string) (*domain.PixAuthorization, error) {
	pa, err := s.GetPixAuthorization(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if pa.Status != domain.PixAuthPending && pa.Status != domain.PixAuthApproved {
		return nil, domain.Conflict(domain.CodeResourceStateConflict, "You cannot cancel this authorization because it is %s.", pa.Status)
	}
	if a.Livemode {
		return s.cancelPixAuthLive(tx, a, pa)
	}
	return s.cancelLocal(tx, a, pa)
}

// cancelLocal cancels an authorization in troco (the PSP's recurrence, in live mode, already
// is).
func (s *Service) cancelLocal(tx *db.Tx, a domain.Actor, pa *domain.PixAuthorization) (*domain.PixAuthorization, error) {
	if pa.Status != domain.PixAuthPending && pa.Status != domain.PixAuthApproved {
		return pa, nil
	}
	before := *pa
	pa.Status, pa.CanceledAt, pa.UpdatedAt = domain.PixAuthCanceled, domain.At(tx.Now), domain.At(tx.Now)
	if err := tx.UpdatePixAuthorization(a.Scope, pa); err != nil {
		return nil, err
	}
	return pa, emit(tx, a, "pix_authorization.canceled", pa, &before)
}

// RunPixAuthorizationExpiry expires the pending authorizations whose expires_at passed, in
// batches claimed inside a write transaction (safe on several replicas).
func (s *Service) RunPixAuthorizationExpiry(ctx context.Context, store *db.DB, now time.Time) error {
	for {
		n := 0
		err := store.Write(ctx, func(tx *db.Tx) error {
			ids, scopes, err := tx.DuePixAuthorizationExpiries(now, transitionBatch)
			if err != nil {
				return err
			}
			n = len(ids)
			for i, id := range ids {
				if _, err := s.ExpirePixAuthorization(tx, domain.Actor{Scope: scopes[i]}, id); err != nil {
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

// PixAuthQR is the PNG of an authorization's BR Code.
func PixAuthQR(pa *domain.PixAuthorization, size int) ([]byte, error) {
	return pix.QRPNG(pa.BRCode, size)
}

// ExpirePixAuthorization expires a pending authorization (the expiry job, and troco trigger);
// any other status is 409.
func (s *Service) ExpirePixAuthorization(tx *db.Tx, a domain.Actor, id string) (*domain.PixAuthorization, error) {
	pa, err := s.GetPixAuthorization(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if pa.Status != domain.PixAuthPending {
		return nil, domain.Conflict(domain.CodeResourceStateConflict, "Only a pending authorization can expire; this one is %s.", pa.Status)
	}
	before := *pa
	pa.Status, pa.UpdatedAt = domain.PixAuthExpired, domain.At(tx.Now)
	if err := tx.UpdatePixAuthorization(a.Scope, pa); err != nil {
		return nil, err
	}
	return pa, emit(tx, a, "pix_authorization.expired", pa, &before)
}
