package core

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"troco/db"
	"troco/server/activation"
	"troco/server/document"
	"troco/server/domain"
)

// ActivationBrowserTTL is how long the hosted form stays usable in the browser that opened it.
const ActivationBrowserTTL = 24 * time.Hour

// MissingRetryable is requirements.missing of a sandbox rejection that may be corrected
// (CONTRACT 6, disabled with disabled_reason null).
var MissingRetryable = []string{"documents.identity"}

// DisabledReasonRejected is requirements.disabled_reason of a final rejection (CONTRACT 6).
const DisabledReasonRejected = "rejected.other"

// Hosted-flow errors: the page says so and changes nothing.
var (
	// ErrActivationLinkExpired: the authorization code is unknown, used or older than 60 s.
	ErrActivationLinkExpired = errors.New("activation: link expired or already used")
	// ErrActivationSessionInvalid: no in-progress session is bound to this browser.
	ErrActivationSessionInvalid = errors.New("activation: no session for this browser")
)

// ActivationNotAllowedError stops a submission whose organization may no longer be activated.
type ActivationNotAllowedError struct{ Err *domain.Error }

func (e *ActivationNotAllowedError) Error() string { return e.Err.Error() }

// ActivationSessionParams is the body of POST /v1/activation-sessions (SPEC 4.1).
type ActivationSessionParams struct {
	Organization *string           `json:"organization"`
	ReturnURL    *string           `json:"return_url"`
	Metadata     map[string]string `json:"metadata"`
}

// OnboardingSessionParams is the body of POST /v1/onboarding-sessions: the organization is the key's.
type OnboardingSessionParams struct {
	ReturnURL *string           `json:"return_url"`
	Metadata  map[string]string `json:"metadata"`
}

// sessionInput holds the validated common fields of both session kinds.
type sessionInput struct {
	returnURL string
	metadata  domain.Metadata
}

// validateSessionInput applies the limits of SPEC 4.1 and 8; every failure is 400 invalid_request
// (parameter_missing when return_url is absent).
func validateSessionInput(returnURL *string, md map[string]string) (*sessionInput, error) {
	if returnURL == nil {
		return nil, domain.Missing("return_url")
	}
	if err := domain.ValidateURL("return_url", *returnURL, 2048); err != nil {
		return nil, err
	}
	in := &sessionInput{returnURL: *returnURL, metadata: domain.Metadata{}}
	if err := domain.ValidateMetadata(md); err != nil {
		return nil, err
	}
	for k, val := range md {
		in.metadata[k] = val
	}
	return in, nil
}

// CreateActivationSession creates or renews the hosted activation session of a connected
// organization of the calling platform (SPEC 4.1, 3.1, 3.2). baseURL prefixes the hosted url.
func CreateActivationSession(tx *db.Tx, a domain.Actor, p ActivationSessionParams, baseURL string) (*domain.ActivationSession, error) {
	if p.Organization == nil {
		return nil, domain.Missing("organization")
	}
	in, err := validateSessionInput(p.ReturnURL, p.Metadata)
	if err != nil {
		return nil, err
	}
	id := *p.Organization
	if !domain.HasPrefix(id, domain.PrefixOrganization) {
		return nil, domain.Invalid("organization", "organization must be the id of a connected organization (org_…).")
	}
	plat, err := callerPlatform(tx, a)
	if err != nil {
		return nil, err
	}
	org, err := tx.FindOrganizationInMode(id, a.Livemode)
	if errors.Is(err, db.ErrNotFound) || err == nil && (org.ConnectedPlatform == nil || *org.ConnectedPlatform != plat) {
		return nil, domain.NotFound("organization", "organization", id)
	}
	if err != nil {
		return nil, err
	}
	return openOrRenewSession(tx, a, domain.ObjectActivationSession, org, &plat, in, baseURL)
}

// CreateOnboardingSession creates or renews the hosted activation session of the key's own
// organization: the same flow and rules as an activation session.
func CreateOnboardingSession(tx *db.Tx, a domain.Actor, p OnboardingSessionParams, baseURL string) (*domain.ActivationSession, error) {
	in, err := validateSessionInput(p.ReturnURL, p.Metadata)
	if err != nil {
		return nil, err
	}
	org, err := tx.FindOrganizationInMode(a.OrgID, a.Livemode)
	if err != nil {
		return nil, err
	}
	return openOrRenewSession(tx, a, domain.ObjectOnboardingSession, org, nil, in, baseURL)
}

// checkActivationAllowed applies SPEC 3.2 and CONTRACT 6 to an organization (in the session's
// environment): a valid document, a status that allows a session, the attempt limit, and a
// document not in use.
func checkActivationAllowed(tx *db.Tx, org *domain.Organization) error {
	if org.Document == nil {
		return documentRequired()
	}
	doc, err := document.Parse(*org.Document)
	if err != nil {
		return documentRequired()
	}
	switch org.ActivationStatus {
	case domain.ActivationActive:
		return domain.Conflict(domain.CodeOrgAlreadyActive, "Organization %s is already active.", org.ID)
	case domain.ActivationInReview:
		return domain.Conflict(domain.CodeOrgActivationInReview, "Organization %s is in review; wait for the next organization.updated event.", org.ID)
	case domain.ActivationDisabled:
		if org.Requirements.DisabledReason != nil {
			return domain.Conflict(domain.CodeActivationNotRetryable, "Organization %s was rejected (%s) and cannot be resubmitted.", org.ID, *org.Requirements.DisabledReason)
		}
		if org.ActivationAttempts >= document.MaxActivationAttempts {
			return domain.Conflict(domain.CodeActivationNotRetryable, "Organization %s reached the limit of %d activation attempts.", org.ID, document.MaxActivationAttempts)
		}
	}
	if !org.Livemode {
		if document.ActivationOutcome(doc) == document.OutcomeDocumentInUse {
			return documentInUse()
		}
		return nil
	}
	inUse, err := tx.DocumentActivatedElsewhere(doc.Number, org.ID)
	if err != nil {
		return err
	}
	if inUse {
		return documentInUse()
	}
	return nil
}

func documentRequired() *domain.Error {
	return &domain.Error{Status: http.StatusUnprocessableEntity, Type: domain.TypeInvalidRequest, Code: domain.CodeOrgDocumentRequired, Param: "organization",
		Message: "The organization has no valid fiscal document (CPF or CNPJ); set document on the organization first."}
}

func documentInUse() *domain.Error {
	return domain.Conflict(domain.CodeDocumentAlreadyInUse, "The organization's document cannot be used for this activation: it is already in use.")
}

// openOrRenewSession returns the organization's open session of this kind with a freshly
// issued url (the previous code stops working), or creates one. A session of the other kind
// that is still open is a conflict: one open session per organization and environment.
func openOrRenewSession(tx *db.Tx, a domain.Actor, kind string, org *domain.Organization, plat *string, in *sessionInput, baseURL string) (*domain.ActivationSession, error) {
	if err := checkActivationAllowed(tx, org); err != nil {
		return nil, err
	}
	code := newActivationSecret()
	expires := domain.At(tx.Now.Add(domain.ActivationCodeTTL * time.Second))
	open, err := tx.FindOpenActivationSession(org.ID, a.Livemode)
	switch {
	case err == nil:
		if open.Object != kind || open.OwnerOrgID != a.OrgID {
			return nil, domain.Conflict(domain.CodeResourceStateConflict, "Organization %s already has an open %s (%s); only one activation session may be open at a time.", org.ID, open.Object, open.ID)
		}
		if err := tx.RenewActivationCode(open.ID, domain.HashToken(code), expires.Unix()); err != nil {
			return nil, err
		}
		open.ExpiresAt, open.UpdatedAt = expires, domain.At(tx.Now)
		open.URL = strPtr(activationURL(baseURL, code))
		return open, nil
	case !errors.Is(err, db.ErrNotFound):
		return nil, err
	}
	prefix := domain.PrefixActivationSession
	if kind == domain.ObjectOnboardingSession {
		prefix = domain.PrefixOnboardingSession
	}
	s := &domain.ActivationSession{ID: domain.NewID(prefix), Object: kind, ExpiresAt: expires, Livemode: a.Livemode, Metadata: in.metadata,
		Organization: org.ID, Platform: plat, ReturnURL: in.returnURL, Status: domain.SessionCreated, OwnerOrgID: a.OrgID}
	if err := tx.CreateActivationSession(s, domain.HashToken(code)); err != nil {
		if errors.Is(err, db.ErrConflict) {
			return nil, domain.Conflict(domain.CodeResourceStateConflict, "Organization %s already has an open activation session.", org.ID)
		}
		return nil, err
	}
	s.URL = strPtr(activationURL(baseURL, code))
	return s, nil
}

// activationURL is the hosted address that carries a single-use authorization code.
func activationURL(baseURL, code string) string {
	return baseURL + "/activation/start?authorization_code=" + code
}

// newActivationSecret is 32 random bytes, base64url: authorization codes and browser tokens.
func newActivationSecret() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("core: crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// GetActivationSession returns an activation session of the calling platform. It never reissues
// a url: url and expires_at are null (SPEC 4.2).
func GetActivationSession(tx *db.Tx, a domain.Actor, id string) (*domain.ActivationSession, error) {
	s, err := tx.FindActivationSession(a.Scope, domain.ObjectActivationSession, id)
	if err != nil {
		return nil, notFound(err, "id", "activation session", id)
	}
	return withoutURL(s), nil
}

// GetOnboardingSession returns an onboarding session of the key's organization, without url.
func GetOnboardingSession(tx *db.Tx, a domain.Actor, id string) (*domain.ActivationSession, error) {
	s, err := tx.FindActivationSession(a.Scope, domain.ObjectOnboardingSession, id)
	if err != nil {
		return nil, notFound(err, "id", "onboarding session", id)
	}
	return withoutURL(s), nil
}

// ListOnboardingSessions pages the onboarding sessions of the key's organization.
func ListOnboardingSessions(tx *db.Tx, a domain.Actor, p db.ListParams) ([]*domain.ActivationSession, bool, error) {
	items, more, err := tx.ListActivationSessions(a.Scope, domain.ObjectOnboardingSession, p)
	for _, s := range items {
		withoutURL(s)
	}
	return items, more, err
}

func withoutURL(s *domain.ActivationSession) *domain.ActivationSession {
	s.URL, s.ExpiresAt = nil, domain.Time{}
	return s
}

// OpenActivationSession spends a hosted url's authorization code and binds the session to a new
// browser token (returned in clear once; stored hashed). Of two concurrent opens exactly one
// succeeds; the other, and any later, get ErrActivationLinkExpired.
func OpenActivationSession(tx *db.Tx, code string) (sessionID, browserToken string, err error) {
	if code == "" || len(code) > 200 {
		return "", "", ErrActivationLinkExpired
	}
	token := newActivationSecret()
	id, err := tx.ConsumeActivationCode(domain.HashToken(code), domain.HashToken(token), tx.Now.Add(ActivationBrowserTTL).Unix())
	if errors.Is(err, db.ErrNotFound) {
		return "", "", ErrActivationLinkExpired
	}
	return id, token, err
}

// ActivationForm is an in-progress session as the hosted form sees it.
type ActivationForm struct {
	Session  *domain.ActivationSession
	Org      *domain.Organization // in the session's environment
	Platform *domain.Organization // nil for onboarding sessions
	// Values are the saved organization data with the seller's draft over them.
	Values map[string]string
}

// LoadActivationForm returns the in-progress session id bound to browserToken, or
// ErrActivationSessionInvalid.
func LoadActivationForm(tx *db.Tx, id, browserToken string) (*ActivationForm, error) {
	if browserToken == "" {
		return nil, ErrActivationSessionInvalid
	}
	s, err := tx.FindActivationSessionByBrowser(id, domain.HashToken(browserToken))
	if errors.Is(err, db.ErrNotFound) {
		return nil, ErrActivationSessionInvalid
	}
	if err != nil {
		return nil, err
	}
	org, err := tx.FindOrganizationInMode(s.Organization, s.Livemode)
	if err != nil {
		return nil, err
	}
	f := &ActivationForm{Session: s, Org: org}
	if s.Platform != nil {
		if f.Platform, err = tx.FindOrganizationByPlatformID(*s.Platform); err != nil {
			return nil, err
		}
	}
	profile, err := tx.FindActivationProfile(org.ID)
	if err != nil {
		return nil, err
	}
	f.Values = activation.Prefill(org, profile)
	for k, v := range s.Draft {
		f.Values[k] = v
	}
	return f, nil
}

// SaveActivationDraft stores the seller's values (the form's Values) on the session.
func SaveActivationDraft(tx *db.Tx, f *ActivationForm) error {
	return tx.SaveActivationDraft(f.Session.ID, f.Values)
}

// ActivationUpload is a validated identity document from the hosted form whose bytes the adapter
// already committed to the files directory under FileID.
type ActivationUpload struct {
	FileID   string
	Filename string
	MIMEType string
	Size     int64
	SHA256   string
}

// StoreActivationUpload records an uploaded identity document as an identity_document file of
// the organization (in the session's environment, linked to the session) and names it in the
// form's values.
func StoreActivationUpload(tx *db.Tx, f *ActivationForm, u ActivationUpload) error {
	file := &domain.File{ID: u.FileID, Purpose: domain.PurposeIdentityDocument, Filename: u.Filename, MimeType: u.MIMEType, Size: u.Size,
		SHA256: u.SHA256, Metadata: domain.Metadata{}, ActivationSession: f.Session.ID}
	if err := tx.CreateFile(domain.Scope{OrgID: f.Org.ID, Livemode: f.Session.Livemode}, file); err != nil {
		return err
	}
	f.Values[activation.DraftDocumentFile] = file.ID
	f.Values[activation.DraftDocumentFileName] = u.Filename
	return nil
}

// SubmitActivation closes the session (submitted) and puts the organization in review in the
// session's environment, saving the form's data on the organization and emitting
// organization.updated. A disabled organization spends one of its attempts. In test mode the
// outcome of CONTRACT 6 is scheduled simDelay later; in live mode an administrator decides
// (DecideActivation). The session's url can never reopen it.
func SubmitActivation(tx *db.Tx, f *ActivationForm, r *activation.Result, requestID string, simDelay time.Duration) error {
	org := f.Org
	if err := checkActivationAllowed(tx, org); err != nil {
		if e, ok := domain.AsError(err); ok {
			return &ActivationNotAllowedError{Err: e}
		}
		return err
	}
	if doc, err := tx.FindFileAnyScope(r.Profile.DocumentFile); err != nil || doc.ActivationSession != f.Session.ID || doc.Purpose != domain.PurposeIdentityDocument {
		return &ActivationNotAllowedError{Err: domain.Invalid(activation.DraftDocumentFile, "The identity document was not uploaded in this session.")}
	}
	before := organizationView(org)
	// The legal name replaces name, never what buyers see: without a display name of its own the
	// organization keeps showing its trade name (nome fantasia) or, without one, its old name.
	if org.DisplayName == nil || strings.TrimSpace(*org.DisplayName) == "" {
		shown := strings.TrimSpace(r.Profile.TradeName)
		if shown == "" && org.Name != r.LegalName {
			shown = org.Name
		}
		if len([]rune(shown)) > 100 {
			shown = string([]rune(shown)[:100])
		}
		if shown != "" {
			org.DisplayName = strPtr(shown)
		}
	}
	org.Name = r.LegalName
	org.Email, org.Phone = strPtr(r.Email), strPtr(r.Phone)
	addr := r.Address
	org.Address = &addr
	if err := tx.UpdateOrganization(org); err != nil {
		return err
	}
	if err := tx.SaveActivationProfile(org.ID, r.Profile); err != nil {
		return err
	}
	st := activationStateOf(org)
	if org.ActivationStatus == domain.ActivationDisabled {
		st.Attempts++
	}
	st.Status, st.DisabledReason, st.Missing = domain.ActivationInReview, nil, []string{}
	if err := tx.SetActivationState(org.ID, org.Livemode, st); err != nil {
		return err
	}
	if err := tx.SubmitActivationSession(f.Session.ID); err != nil {
		return err
	}
	if !org.Livemode {
		due := tx.Now.Add(simDelay).Unix()
		if err := tx.ScheduleActivationReview(db.ActivationReview{SessionID: f.Session.ID, OrgID: org.ID, Livemode: false, DueAt: due}); err != nil {
			return err
		}
	}
	after, err := tx.FindOrganizationInMode(org.ID, org.Livemode)
	if err != nil {
		return err
	}
	return emitOrganizationUpdated(tx, requestID, before, organizationView(after))
}

func activationStateOf(o *domain.Organization) domain.ActivationState {
	st := domain.ActivationState{Status: o.ActivationStatus, DisabledReason: o.Requirements.DisabledReason, Missing: o.Requirements.Missing,
		Attempts: o.ActivationAttempts}
	if raw, ok := o.PayoutAccount.(json.RawMessage); ok && len(raw) > 0 && string(raw) != "null" {
		st.PayoutAccount = raw
	}
	return st
}

// ApplyDueActivationReviews decides the sandbox reviews due at now by the organization's
// document (CONTRACT 6): approved → active with a payout account; in review → unchanged;
// retryable rejection → disabled with missing requirements; final rejection → disabled with
// disabled_reason rejected.other. Each change emits organization.updated. It returns how many
// reviews it claimed.
func ApplyDueActivationReviews(tx *db.Tx, now time.Time) (int, error) {
	reviews, err := tx.ClaimDueActivationReviews(now.Unix(), 100)
	if err != nil {
		return 0, err
	}
	for _, r := range reviews {
		org, err := tx.FindOrganizationInMode(r.OrgID, r.Livemode)
		if errors.Is(err, db.ErrNotFound) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if org.ActivationStatus != domain.ActivationInReview || org.Document == nil {
			continue // decided meanwhile by an administrator
		}
		doc, err := document.Parse(*org.Document)
		if err != nil {
			continue
		}
		var d Decision
		switch document.ActivationOutcome(doc) {
		case document.OutcomeApproved:
			d = Decision{Status: domain.ActivationActive}
		case document.OutcomeDisabledRetryable:
			d = Decision{Status: domain.ActivationDisabled, Missing: MissingRetryable}
		case document.OutcomeDisabledFinal:
			d = Decision{Status: domain.ActivationDisabled, DisabledReason: DisabledReasonRejected}
		default: // stays in review
			continue
		}
		if _, err := DecideActivation(tx, org.ID, r.Livemode, d, ""); err != nil {
			return 0, err
		}
	}
	return len(reviews), nil
}

// Decision is the result of an organization's review in one environment.
type Decision struct {
	Status         string
	DisabledReason string   // disabled only; empty means null (the organization may retry)
	Missing        []string // disabled only: requirements to correct
}

// DecideActivation records the review of an organization in one environment (the sandbox job,
// or an administrator in live mode) and emits organization.updated when it changes anything.
// An approval fills payout_account from the bank account given in the hosted form.
func DecideActivation(tx *db.Tx, orgID string, livemode bool, d Decision, requestID string) (*domain.Organization, error) {
	org, err := tx.FindOrganizationInMode(orgID, livemode)
	if err != nil {
		return nil, notFound(err, "organization", "organization", orgID)
	}
	before := organizationView(org)
	st := activationStateOf(org)
	st.Status, st.DisabledReason, st.Missing = d.Status, nil, []string{}
	switch d.Status {
	case domain.ActivationActive:
		if st.PayoutAccount == nil {
			pa, err := payoutAccountFromProfile(tx, org)
			if err != nil {
				return nil, err
			}
			if pa != nil {
				st.PayoutAccount = pa
			}
		}
	case domain.ActivationDisabled:
		if d.DisabledReason != "" {
			st.DisabledReason = strPtr(d.DisabledReason)
		}
		if d.Missing != nil {
			st.Missing = d.Missing
		}
	case domain.ActivationInReview, domain.ActivationNotSubmitted:
	default:
		return nil, domain.Invalid("status", "status must be not_submitted, in_review, active or disabled.")
	}
	if err := tx.SetActivationState(org.ID, livemode, st); err != nil {
		return nil, err
	}
	after, err := tx.FindOrganizationInMode(org.ID, livemode)
	if err != nil {
		return nil, err
	}
	view := organizationView(after)
	return view, emitOrganizationUpdated(tx, requestID, before, view)
}

// payoutAccountFromProfile connects the bank account of the organization's hosted form as its
// payout account in the environment (nil when the form was never filled).
func payoutAccountFromProfile(tx *db.Tx, org *domain.Organization) (*domain.PayoutAccount, error) {
	profile, err := tx.FindActivationProfile(org.ID)
	if err != nil {
		return nil, err
	}
	b := profile.BankAccount
	if b.BankCode == "" || b.AccountNumber == "" || org.Document == nil {
		return nil, nil
	}
	pa := &domain.PayoutAccount{BankCode: b.BankCode, Branch: b.Branch, AccountNumber: b.AccountNumber, AccountType: b.AccountType,
		HolderName: org.Name, HolderDocument: *org.Document}
	if pa.AccountType == "" {
		pa.AccountType = "checking"
	}
	if err := tx.CreatePayoutAccount(domain.Scope{OrgID: org.ID, Livemode: org.Livemode}, pa); err != nil {
		return nil, err
	}
	return pa, nil
}
