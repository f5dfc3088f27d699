package db

import (
	"encoding/json"
	"strconv"

	"troco/server/domain"
)

const activationSessionCols = `id, object, org_id, platform_id, owner_org_id, livemode, status, return_url, metadata,
code_expires_at, draft, opened_at, submitted_at, created_at, updated_at`

func scanActivationSession(s scanner) (*domain.ActivationSession, error) {
	var as domain.ActivationSession
	var live int
	var metadata, draft string
	var codeExpires, opened, submitted *int64
	var created, updated int64
	if err := s.Scan(&as.ID, &as.Object, &as.Organization, &as.Platform, &as.OwnerOrgID, &live, &as.Status, &as.ReturnURL,
		&metadata, &codeExpires, &draft, &opened, &submitted, &created, &updated); err != nil {
		return nil, err
	}
	as.Livemode = live == 1
	as.Metadata = parseMetadata(metadata)
	as.Draft = map[string]string{}
	_ = json.Unmarshal([]byte(draft), &as.Draft)
	as.ExpiresAt = domain.UnixPtr(codeExpires)
	as.OpenedAt, as.SubmittedAt = domain.UnixPtr(opened), domain.UnixPtr(submitted)
	as.CreatedAt, as.UpdatedAt = domain.Unix(created), domain.Unix(updated)
	return &as, nil
}

// openSlot is the value of activation_sessions.open_slot while a session is open: its UNIQUE
// index allows one open session per organization and environment (SPEC 8 rule 2).
func openSlot(orgID string, livemode bool) string {
	return orgID + "|" + strconv.Itoa(boolInt(livemode))
}

// CreateActivationSession inserts an open session whose url carries the code hashed as codeHash,
// valid until as.ExpiresAt. A second open session for the organization and environment is an
// ErrConflict.
func (tx *Tx) CreateActivationSession(as *domain.ActivationSession, codeHash string) error {
	as.CreatedAt, as.UpdatedAt = domain.At(tx.Now), domain.At(tx.Now)
	if as.Metadata == nil {
		as.Metadata = domain.Metadata{}
	}
	_, err := tx.exec(`INSERT INTO activation_sessions (id, object, org_id, platform_id, owner_org_id, livemode, status, open_slot,
		return_url, metadata, code_hash, code_expires_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		as.ID, as.Object, as.Organization, as.Platform, as.OwnerOrgID, boolInt(as.Livemode), as.Status, openSlot(as.Organization, as.Livemode),
		as.ReturnURL, metadataJSON(as.Metadata), codeHash, as.ExpiresAt.Unix(), tx.now(), tx.now())
	return translate(err, "create activation session")
}

// FindOpenActivationSession returns the open (created or in_progress) session of an organization
// in an environment, of either kind.
func (tx *Tx) FindOpenActivationSession(orgID string, livemode bool) (*domain.ActivationSession, error) {
	as, err := scanActivationSession(tx.queryRow("SELECT "+activationSessionCols+" FROM activation_sessions WHERE open_slot = ?", openSlot(orgID, livemode)))
	return as, translate(err, "find open activation session")
}

// FindActivationSession returns a session of kind object that the scope owns.
func (tx *Tx) FindActivationSession(s domain.Scope, object, id string) (*domain.ActivationSession, error) {
	as, err := scanActivationSession(tx.queryRow("SELECT "+activationSessionCols+` FROM activation_sessions
		WHERE id = ? AND object = ? AND owner_org_id = ? AND livemode = ?`, id, object, s.OrgID, boolInt(s.Livemode)))
	return as, translate(err, "find activation session")
}

// ListActivationSessions pages the sessions of kind object that the scope owns, newest first.
func (tx *Tx) ListActivationSessions(s domain.Scope, object string, p ListParams) ([]*domain.ActivationSession, bool, error) {
	var w filter
	w.add("owner_org_id = ?", s.OrgID)
	w.add("livemode = ?", boolInt(s.Livemode))
	w.add("object = ?", object)
	return page(tx, "activation_sessions", activationSessionCols, w, p, scanActivationSession)
}

// FindActivationSessionByID returns a session by id, in any scope (hosted pages, jobs).
func (tx *Tx) FindActivationSessionByID(id string) (*domain.ActivationSession, error) {
	as, err := scanActivationSession(tx.queryRow("SELECT "+activationSessionCols+" FROM activation_sessions WHERE id = ?", id))
	return as, translate(err, "find activation session")
}

// RenewActivationCode replaces an open session's authorization code (the previous one stops
// working) and its expiry.
func (tx *Tx) RenewActivationCode(id, codeHash string, expiresAt int64) error {
	res, err := tx.exec("UPDATE activation_sessions SET code_hash = ?, code_expires_at = ?, updated_at = ? WHERE id = ? AND open_slot IS NOT NULL",
		codeHash, expiresAt, tx.now(), id)
	if err != nil {
		return translate(err, "renew activation code")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// ConsumeActivationCode spends a valid, unexpired authorization code in one statement, so of two
// concurrent opens exactly one wins: the session moves to in_progress (opened_at set on the first
// open) and is bound to the browser whose session token hashes to browserHash until
// browserExpiresAt. It returns the session id, or ErrNotFound when the code is unknown, used or
// expired.
func (tx *Tx) ConsumeActivationCode(codeHash, browserHash string, browserExpiresAt int64) (string, error) {
	var id string
	err := tx.queryRow(`UPDATE activation_sessions SET code_hash = NULL, code_expires_at = NULL, browser_hash = ?, browser_expires_at = ?,
		status = 'in_progress', opened_at = COALESCE(opened_at, ?), updated_at = ?
		WHERE code_hash = ? AND code_expires_at > ? AND open_slot IS NOT NULL RETURNING id`,
		browserHash, browserExpiresAt, tx.now(), tx.now(), codeHash, tx.now()).Scan(&id)
	return id, translate(err, "consume activation code")
}

// FindActivationSessionByBrowser returns the in-progress session id bound to the browser token
// hashed as browserHash and not expired.
func (tx *Tx) FindActivationSessionByBrowser(id, browserHash string) (*domain.ActivationSession, error) {
	as, err := scanActivationSession(tx.queryRow("SELECT "+activationSessionCols+` FROM activation_sessions
		WHERE id = ? AND browser_hash = ? AND browser_expires_at > ? AND status = 'in_progress'`, id, browserHash, tx.now()))
	return as, translate(err, "find activation session")
}

// SaveActivationDraft stores the values a seller typed so far.
func (tx *Tx) SaveActivationDraft(id string, draft map[string]string) error {
	raw, err := marshalJSON(draft)
	if err != nil {
		return err
	}
	_, err = tx.exec("UPDATE activation_sessions SET draft = ?, updated_at = ? WHERE id = ? AND status = 'in_progress'", raw, tx.now(), id)
	return translate(err, "save activation draft")
}

// SubmitActivationSession closes a session for good: submitted, no code, no browser, no draft,
// and its open slot freed for a later session.
func (tx *Tx) SubmitActivationSession(id string) error {
	res, err := tx.exec(`UPDATE activation_sessions SET status = 'submitted', submitted_at = ?, open_slot = NULL, code_hash = NULL,
		code_expires_at = NULL, browser_hash = NULL, browser_expires_at = NULL, draft = '{}', updated_at = ?
		WHERE id = ? AND status = 'in_progress'`, tx.now(), tx.now(), id)
	if err != nil {
		return translate(err, "submit activation session")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// ActivationReview is a scheduled sandbox review of a submitted session.
type ActivationReview struct {
	SessionID string
	OrgID     string
	Livemode  bool
	DueAt     int64
}

// ScheduleActivationReview records that the sandbox decides the organization's activation at dueAt.
func (tx *Tx) ScheduleActivationReview(r ActivationReview) error {
	_, err := tx.exec("INSERT INTO activation_reviews (session_id, org_id, livemode, due_at, created_at) VALUES (?, ?, ?, ?, ?)",
		r.SessionID, r.OrgID, boolInt(r.Livemode), r.DueAt, tx.now())
	return translate(err, "schedule activation review")
}

// ClaimDueActivationReviews deletes and returns up to limit reviews due at or before now, oldest
// first; the caller applies them in the same transaction.
func (tx *Tx) ClaimDueActivationReviews(now int64, limit int) ([]ActivationReview, error) {
	rows, err := tx.query("SELECT session_id, org_id, livemode, due_at FROM activation_reviews WHERE due_at <= ? ORDER BY due_at, seq LIMIT ?"+tx.claimLock(), now, limit)
	if err != nil {
		return nil, translate(err, "claim activation reviews")
	}
	var out []ActivationReview
	for rows.Next() {
		var r ActivationReview
		var live int
		if err := rows.Scan(&r.SessionID, &r.OrgID, &live, &r.DueAt); err != nil {
			rows.Close()
			return nil, translate(err, "scan activation review")
		}
		r.Livemode = live == 1
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, translate(err, "claim activation reviews")
	}
	for _, r := range out {
		if _, err := tx.exec("DELETE FROM activation_reviews WHERE session_id = ?", r.SessionID); err != nil {
			return nil, translate(err, "claim activation review")
		}
	}
	return out, nil
}

// ActivationDocument is an identity document an older troco kept as a blob (activation_documents);
// the start-up migration moves each to the files directory (see LegacyActivationDocuments).
type ActivationDocument struct {
	ID        string
	OrgID     string
	Livemode  bool
	SessionID string
	Filename  string
	MIMEType  string
	Size      int64
	SHA256    string
	Content   []byte
}

const payoutCols = `id, org_id, livemode, status, bank_code, branch, account_number, account_type, holder_name, holder_document,
metadata, disconnected_at, created_at, updated_at`

func scanPayoutAccount(s scanner) (*domain.PayoutAccount, error) {
	var p domain.PayoutAccount
	var live int
	var metadata string
	var disconnected *int64
	var created, updated int64
	if err := s.Scan(&p.ID, &p.Organization, &live, &p.Status, &p.BankCode, &p.Branch, &p.AccountNumber, &p.AccountType,
		&p.HolderName, &p.HolderDocument, &metadata, &disconnected, &created, &updated); err != nil {
		return nil, err
	}
	p.Object = "payout_account"
	p.Livemode = live == 1
	p.Last4 = last4(p.AccountNumber)
	p.Metadata = parseMetadata(metadata)
	p.DisconnectedAt = domain.UnixPtr(disconnected)
	p.CreatedAt, p.UpdatedAt = domain.Unix(created), domain.Unix(updated)
	return &p, nil
}

func last4(account string) string {
	digits := make([]byte, 0, len(account))
	for i := 0; i < len(account); i++ {
		if c := account[i]; c >= '0' && c <= '9' || c == 'X' {
			digits = append(digits, c)
		}
	}
	if len(digits) > 4 {
		digits = digits[len(digits)-4:]
	}
	return string(digits)
}

// CreatePayoutAccount inserts a connected payout account in scope, assigning its id.
func (tx *Tx) CreatePayoutAccount(s domain.Scope, p *domain.PayoutAccount) error {
	p.ID = domain.NewID(domain.PrefixPayoutAccount)
	p.Object = "payout_account"
	p.Organization, p.Livemode = s.OrgID, s.Livemode
	p.Status = domain.PayoutAccountConnected
	p.Last4 = last4(p.AccountNumber)
	if p.Metadata == nil {
		p.Metadata = domain.Metadata{}
	}
	p.CreatedAt, p.UpdatedAt = domain.At(tx.Now), domain.At(tx.Now)
	_, err := tx.exec(`INSERT INTO payout_accounts (id, org_id, livemode, status, bank_code, branch, account_number, account_type,
		holder_name, holder_document, metadata, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ID, s.OrgID, boolInt(s.Livemode), p.Status, p.BankCode, p.Branch, p.AccountNumber, p.AccountType, p.HolderName,
		p.HolderDocument, metadataJSON(p.Metadata), tx.now(), tx.now())
	return translate(err, "create payout account")
}

// FindPayoutAccount returns a payout account in scope.
func (tx *Tx) FindPayoutAccount(s domain.Scope, id string) (*domain.PayoutAccount, error) {
	p, err := scanPayoutAccount(tx.queryRow("SELECT "+payoutCols+" FROM payout_accounts WHERE id = ? AND org_id = ? AND livemode = ?", id, s.OrgID, boolInt(s.Livemode)))
	return p, translate(err, "find payout account")
}

// PayoutAccountFilter narrows ListPayoutAccounts.
type PayoutAccountFilter struct {
	Status string
}

// ListPayoutAccounts pages the payout accounts of a scope, newest first.
func (tx *Tx) ListPayoutAccounts(s domain.Scope, f PayoutAccountFilter, p ListParams) ([]*domain.PayoutAccount, bool, error) {
	var w filter
	w.add("org_id = ?", s.OrgID)
	w.add("livemode = ?", boolInt(s.Livemode))
	if f.Status != "" {
		w.add("status = ?", f.Status)
	}
	return page(tx, "payout_accounts", payoutCols, w, p, scanPayoutAccount)
}

// LatestConnectedPayoutAccount returns the newest connected payout account of a scope.
func (tx *Tx) LatestConnectedPayoutAccount(s domain.Scope) (*domain.PayoutAccount, error) {
	p, err := scanPayoutAccount(tx.queryRow("SELECT "+payoutCols+" FROM payout_accounts WHERE org_id = ? AND livemode = ? AND status = 'connected' ORDER BY seq DESC LIMIT 1",
		s.OrgID, boolInt(s.Livemode)))
	return p, translate(err, "find payout account")
}

// DisconnectPayoutAccount marks a connected payout account disconnected; ErrConflict when it
// already was.
func (tx *Tx) DisconnectPayoutAccount(s domain.Scope, id string) error {
	res, err := tx.exec("UPDATE payout_accounts SET status = 'disconnected', disconnected_at = ?, updated_at = ? WHERE id = ? AND org_id = ? AND livemode = ? AND status = 'connected'",
		tx.now(), tx.now(), id, s.OrgID, boolInt(s.Livemode))
	if err != nil {
		return translate(err, "disconnect payout account")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		if _, err := tx.FindPayoutAccount(s, id); err != nil {
			return err
		}
		return ErrConflict
	}
	return nil
}
