package db

import (
	"errors"
	"fmt"
	"strings"

	"troco/server/domain"
)

const userCols = "id, org_id, email, role, password_hash, totp_secret, totp_enabled, failed_signins, locked_until, language, created_at"

func scanUser(s scanner) (*domain.User, error) {
	var u domain.User
	var pw, totp *string
	var totpOn int
	var locked *int64
	var created int64
	if err := s.Scan(&u.ID, &u.Organization, &u.Email, &u.Role, &pw, &totp, &totpOn, &u.FailedSignins, &locked, &u.Language, &created); err != nil {
		return nil, err
	}
	u.Object = "user"
	if pw != nil {
		u.PasswordHash = *pw
	}
	if totp != nil {
		u.TOTPSecret = *totp
	}
	u.TOTPEnabled = totpOn == 1
	u.LockedUntil, u.CreatedAt = domain.UnixPtr(locked), domain.Unix(created)
	return &u, nil
}

// CreateUser inserts u; ErrConflict when the organization already has that e-mail.
func (tx *Tx) CreateUser(u *domain.User) error {
	u.ID = domain.NewID("user_")
	u.Object = "user"
	u.CreatedAt = domain.At(tx.Now)
	if u.Language == "" {
		u.Language = "pt-BR"
	}
	_, err := tx.exec("INSERT INTO users (id, org_id, email, role, language, created_at) VALUES (?, ?, ?, ?, ?, ?)",
		u.ID, u.Organization, u.Email, u.Role, u.Language, tx.now())
	return translate(err, "create user")
}

// FindUserByID returns user id.
func (tx *Tx) FindUserByID(id string) (*domain.User, error) {
	u, err := scanUser(tx.queryRow("SELECT "+userCols+" FROM users WHERE id = ?", id))
	return u, translate(err, "find user")
}

// FindUsersByEmail returns the users (one per organization) with e-mail email.
func (tx *Tx) FindUsersByEmail(email string) ([]*domain.User, error) {
	rows, err := tx.query("SELECT "+userCols+" FROM users WHERE email = ? ORDER BY seq", email)
	if err != nil {
		return nil, translate(err, "find users")
	}
	defer rows.Close()
	var out []*domain.User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, translate(err, "scan user")
		}
		out = append(out, u)
	}
	return out, translate(rows.Err(), "find users")
}

// ListUsers returns the people of an organization, oldest first.
func (tx *Tx) ListUsers(orgID string) ([]*domain.User, error) {
	rows, err := tx.query("SELECT "+userCols+" FROM users WHERE org_id = ? ORDER BY seq", orgID)
	if err != nil {
		return nil, translate(err, "list users")
	}
	defer rows.Close()
	var out []*domain.User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, translate(err, "scan user")
		}
		out = append(out, u)
	}
	return out, translate(rows.Err(), "list users")
}

// SetUserPassword stores a password hash (argon2id, encoded).
func (tx *Tx) SetUserPassword(id, hash string) error {
	res, err := tx.exec("UPDATE users SET password_hash = ? WHERE id = ?", hash, id)
	return affectedOne(res, err, "set password")
}

// SetUserTOTP stores a sealed TOTP secret and whether it is enabled ("" clears it).
func (tx *Tx) SetUserTOTP(id, sealed string, enabled bool) error {
	var v any
	if sealed != "" {
		v = sealed
	}
	res, err := tx.exec("UPDATE users SET totp_secret = ?, totp_enabled = ? WHERE id = ?", v, boolInt(enabled), id)
	return affectedOne(res, err, "set totp")
}

// UseTOTPStep records that an authenticator code of time step step was accepted for user id;
// false when a code of that step or a later one was already accepted (the code is spent).
func (tx *Tx) UseTOTPStep(id string, step int64) (bool, error) {
	res, err := tx.exec("UPDATE users SET totp_last_step = ? WHERE id = ? AND totp_last_step < ?", step, id, step)
	if err != nil {
		return false, translate(err, "use totp step")
	}
	n, err := res.RowsAffected()
	return n == 1, translate(err, "use totp step")
}

// SetUserLanguage stores the dashboard language of a user.
func (tx *Tx) SetUserLanguage(id, lang string) error {
	res, err := tx.exec("UPDATE users SET language = ? WHERE id = ?", lang, id)
	return affectedOne(res, err, "set language")
}

// RecordSigninFailure counts a failed sign-in and locks the user until lockUntil when the count
// reaches limit (the count then starts over).
func (tx *Tx) RecordSigninFailure(id string, limit int, lockUntil int64) error {
	_, err := tx.exec(`UPDATE users SET failed_signins = failed_signins + 1 WHERE id = ?`, id)
	if err != nil {
		return translate(err, "record failure")
	}
	_, err = tx.exec(`UPDATE users SET locked_until = ?, failed_signins = 0 WHERE id = ? AND failed_signins >= ?`, lockUntil, id, limit)
	return translate(err, "record failure")
}

// ClearSigninFailures resets the failure count after a successful sign-in.
func (tx *Tx) ClearSigninFailures(id string) error {
	_, err := tx.exec("UPDATE users SET failed_signins = 0, locked_until = NULL WHERE id = ?", id)
	return translate(err, "clear failures")
}

// CreateSigninLink stores the hash of a one-time sign-in token.
func (tx *Tx) CreateSigninLink(tokenHash, userID string, expiresAt int64) error {
	_, err := tx.exec("INSERT INTO signin_links (token_hash, user_id, expires_at) VALUES (?, ?, ?)", tokenHash, userID, expiresAt)
	return translate(err, "create signin link")
}

// UseSigninLink marks the link used and returns its user; ErrNotFound when the token is unknown,
// already used or expired (at the transaction's time).
func (tx *Tx) UseSigninLink(tokenHash string) (string, error) {
	var userID string
	err := tx.queryRow("SELECT user_id FROM signin_links WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?", tokenHash, tx.now()).Scan(&userID)
	if err != nil {
		return "", translate(err, "find signin link")
	}
	res, err := tx.exec("UPDATE signin_links SET used_at = ? WHERE token_hash = ? AND used_at IS NULL", tx.now(), tokenHash)
	if err := affectedOne(res, err, "use signin link"); err != nil {
		return "", err
	}
	return userID, nil
}

// DashboardSession is a signed-in browser.
type DashboardSession struct {
	TokenHash   string
	UserID      string
	OrgID       string
	PendingTOTP bool
	LastSeenAt  int64
	// AlsoUsers are the accounts of the same person in other organizations that the password
	// which started the session also opened (the organization switcher offers them).
	AlsoUsers []string
}

// CreateDashboardSession stores a session by the hash of its cookie token.
func (tx *Tx) CreateDashboardSession(ds DashboardSession) error {
	_, err := tx.exec("INSERT INTO dashboard_sessions (token_hash, user_id, org_id, pending_totp, created_at, last_seen_at, also_users) VALUES (?, ?, ?, ?, ?, ?, ?)",
		ds.TokenHash, ds.UserID, ds.OrgID, boolInt(ds.PendingTOTP), tx.now(), tx.now(), strings.Join(ds.AlsoUsers, " "))
	return translate(err, "create session")
}

// FindDashboardSession returns the session with hash tokenHash.
func (tx *Tx) FindDashboardSession(tokenHash string) (*DashboardSession, error) {
	var ds DashboardSession
	var pending int
	var also string
	err := tx.queryRow("SELECT token_hash, user_id, org_id, pending_totp, last_seen_at, also_users FROM dashboard_sessions WHERE token_hash = ?", tokenHash).
		Scan(&ds.TokenHash, &ds.UserID, &ds.OrgID, &pending, &ds.LastSeenAt, &also)
	ds.PendingTOTP = pending == 1
	ds.AlsoUsers = strings.Fields(also)
	return &ds, translate(err, "find session")
}

// TouchDashboardSession records activity (the idle timeout counts from it) and clears the
// pending second factor when done is true.
func (tx *Tx) TouchDashboardSession(tokenHash string, totpDone bool) error {
	q := "UPDATE dashboard_sessions SET last_seen_at = ? WHERE token_hash = ?"
	if totpDone {
		q = "UPDATE dashboard_sessions SET last_seen_at = ?, pending_totp = 0 WHERE token_hash = ?"
	}
	_, err := tx.exec(q, tx.now(), tokenHash)
	return translate(err, "touch session")
}

// DeleteDashboardSession signs a browser out.
func (tx *Tx) DeleteDashboardSession(tokenHash string) error {
	_, err := tx.exec("DELETE FROM dashboard_sessions WHERE token_hash = ?", tokenHash)
	return translate(err, "delete session")
}

// DeleteIdleDashboardSessions removes sessions idle since before cutoff.
func (tx *Tx) DeleteIdleDashboardSessions(cutoff int64) (int64, error) {
	res, err := tx.exec("DELETE FROM dashboard_sessions WHERE last_seen_at < ?", cutoff)
	if err != nil {
		return 0, translate(err, "delete idle sessions")
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// InsertAudit appends to the audit trail.
func (tx *Tx) InsertAudit(e *domain.AuditEntry) error {
	e.ID = domain.NewID("aud_")
	e.CreatedAt = domain.At(tx.Now)
	_, err := tx.exec("INSERT INTO audit_log (id, org_id, user_id, user_email, action, object_id, detail, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		e.ID, e.OrgID, e.UserID, e.UserEmail, e.Action, e.ObjectID, e.Detail, tx.now())
	return translate(err, "insert audit")
}

// ListAudit pages an organization's audit trail, newest first.
func (tx *Tx) ListAudit(orgID string, p ListParams) ([]*domain.AuditEntry, bool, error) {
	var w filter
	w.add("org_id = ?", orgID)
	return page(tx, "audit_log", "id, org_id, user_id, user_email, action, object_id, detail, created_at", w, p, func(s scanner) (*domain.AuditEntry, error) {
		var e domain.AuditEntry
		var created int64
		if err := s.Scan(&e.ID, &e.OrgID, &e.UserID, &e.UserEmail, &e.Action, &e.ObjectID, &e.Detail, &created); err != nil {
			return nil, err
		}
		e.CreatedAt = domain.Unix(created)
		return &e, nil
	})
}

// InsertRequestLog records one API request in scope.
func (tx *Tx) InsertRequestLog(s domain.Scope, l *domain.RequestLog) error {
	return tx.InsertRequestLogRow(PrepareRequestLog(s, l))
}

// RequestLogRow is a request log entry with its bodies already packed, so that a batch of
// entries is compressed before it reaches the single writer (PrepareRequestLog, then
// InsertRequestLogRow in the write transaction).
type RequestLogRow struct {
	scope     domain.Scope
	entry     *domain.RequestLog
	req, resp any
}

// PrepareRequestLog packs l's bodies for InsertRequestLogRow. A response that is exactly the
// object of an event (l.ResponseEvent, l.ResponseLen) is stored on SQLite as a reference to it,
// and redacted again (RedactLogBody) when read: the redaction of the same bytes.
func PrepareRequestLog(s domain.Scope, l *domain.RequestLog) RequestLogRow {
	r := RequestLogRow{scope: s, entry: l, req: packSmallText(l.RequestBody)}
	if l.ResponseEvent != "" {
		r.resp = eventRef(l.ResponseEvent, l.ResponseLen)
	} else {
		r.resp = packSmallText(l.ResponseBody)
	}
	return r
}

// RedactLogBody redacts a response body read back from its event for the request log (set by
// package server to the redaction the log applies when it records a body).
var RedactLogBody func([]byte) string

// resolveLogBodies replaces the event references among logs' response bodies by the redacted
// objects they point at.
func (tx *Tx) resolveLogBodies(s domain.Scope, logs ...*domain.RequestLog) error {
	for _, l := range logs {
		if l.ResponseBody == "" || l.ResponseBody[0] != bodyRef {
			continue
		}
		obj, err := tx.eventObject(s.OrgID, s.Livemode, []byte(l.ResponseBody))
		if err != nil {
			return err
		}
		if RedactLogBody == nil {
			return fmt.Errorf("db: request log: no redaction for a stored response")
		}
		l.ResponseBody = RedactLogBody(obj)
	}
	return nil
}

// InsertRequestLogRow records one prepared request log entry.
func (tx *Tx) InsertRequestLogRow(r RequestLogRow) error {
	l, s := r.entry, r.scope
	l.CreatedAt = domain.At(tx.Now)
	_, err := tx.exec(`INSERT INTO request_logs (id, org_id, livemode, method, path, status, key_id, duration_us, object_id, request_body, response_body, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		l.ID, s.OrgID, boolInt(s.Livemode), l.Method, elide(l.Path, l.ObjectID), l.Status, l.KeyID, l.DurationUS, l.ObjectID, tx.textDoc(r.req, l.RequestBody), tx.textDoc(r.resp, l.ResponseBody), tx.now())
	return translate(err, "insert request log")
}

const requestLogCols = "id, livemode, method, path, status, key_id, duration_us, object_id, request_body, response_body, created_at"

func scanRequestLog(s scanner) (*domain.RequestLog, error) {
	var l domain.RequestLog
	var live int
	var created int64
	if err := s.Scan(&l.ID, &live, &l.Method, &l.Path, &l.Status, &l.KeyID, &l.DurationUS, &l.ObjectID, &l.RequestBody, &l.ResponseBody, &created); err != nil {
		return nil, err
	}
	l.Path = unelide(l.Path, l.ObjectID)
	var err error
	if l.RequestBody, err = unpackText(l.RequestBody); err != nil {
		return nil, err
	}
	if l.ResponseBody, err = unpackText(l.ResponseBody); err != nil {
		return nil, err
	}
	l.Livemode = live == 1
	l.CreatedAt = domain.Unix(created)
	return &l, nil
}

// RequestLogFilter narrows a request log list.
type RequestLogFilter struct {
	ObjectID string
	// KeyID lists the requests made with one API key.
	KeyID string
}

// ListRequestLogs pages the request log of a scope, newest first.
func (tx *Tx) ListRequestLogs(s domain.Scope, f RequestLogFilter, p ListParams) ([]*domain.RequestLog, bool, error) {
	var w filter
	w.add("org_id = ?", s.OrgID)
	w.add("livemode = ?", boolInt(s.Livemode))
	if f.ObjectID != "" {
		w.add("object_id = ?", f.ObjectID)
	}
	if f.KeyID != "" {
		w.add("key_id = ?", f.KeyID)
	}
	logs, more, err := page(tx, "request_logs", requestLogCols, w, p, scanRequestLog)
	if err != nil {
		return nil, false, err
	}
	return logs, more, tx.resolveLogBodies(s, logs...)
}

// FindRequestLog returns one request log entry in scope.
func (tx *Tx) FindRequestLog(s domain.Scope, id string) (*domain.RequestLog, error) {
	l, err := scanRequestLog(tx.queryRow("SELECT "+requestLogCols+" FROM request_logs WHERE id = ? AND org_id = ? AND livemode = ?", id, s.OrgID, boolInt(s.Livemode)))
	if err != nil {
		return nil, translate(err, "find request log")
	}
	return l, tx.resolveLogBodies(s, l)
}

// DeleteRequestLogsBefore removes at most limit entries older than cutoff (retention), oldest
// first: it reads the log in seq order (the primary key, no other index) and stops at the first
// entry logged at or after cutoff. Entries are logged with the clock of the moment, so seq order
// is time order and every entry before that one is older than cutoff; should the clock ever
// step back, an entry waits until those logged before it have expired too (the log is never
// read past its first entry still inside the period).
func (tx *Tx) DeleteRequestLogsBefore(cutoff int64, limit int) (int64, error) {
	rows, err := tx.query("SELECT seq, created_at FROM request_logs ORDER BY seq LIMIT ?", limit)
	if err != nil {
		return 0, translate(err, "find old request logs")
	}
	var last int64
	n := 0
	for rows.Next() {
		var seq, created int64
		if err := rows.Scan(&seq, &created); err != nil {
			rows.Close()
			return 0, translate(err, "find old request logs")
		}
		if created >= cutoff {
			break
		}
		last = seq
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, translate(err, "find old request logs")
	}
	if n == 0 {
		return 0, nil
	}
	// created_at is checked again: on PostgreSQL a row committed since the read (a replica's
	// insert) cannot be taken with the old ones, whatever its seq.
	res, err := tx.exec("DELETE FROM request_logs WHERE seq <= ? AND created_at < ?", last, cutoff)
	if err != nil {
		return 0, translate(err, "delete request logs")
	}
	return res.RowsAffected()
}

// MethodVolume is the succeeded volume of one payment method.
type MethodVolume struct {
	Method string
	Count  int64
	Amount int64
}

// VolumeByMethod sums the amount received by succeeded payment intents created in [since, until)
// per payment method type (served by the payment_intents_succeeded index alone: it holds only
// succeeded intents, which the literal status = 'succeeded' lets the planner use).
func (tx *Tx) VolumeByMethod(s domain.Scope, since, until int64) ([]MethodVolume, error) {
	rows, err := tx.query(`SELECT COALESCE(payment_method_type, ''), COUNT(*), COALESCE(SUM(amount_received), 0) FROM payment_intents
		WHERE org_id = ? AND livemode = ? AND created_at >= ? AND created_at < ? AND status = 'succeeded' GROUP BY 1 ORDER BY 1`,
		s.OrgID, boolInt(s.Livemode), since, until)
	if err != nil {
		return nil, translate(err, "volume by method")
	}
	defer rows.Close()
	var out []MethodVolume
	for rows.Next() {
		var v MethodVolume
		if err := rows.Scan(&v.Method, &v.Count, &v.Amount); err != nil {
			return nil, translate(err, "scan volume")
		}
		out = append(out, v)
	}
	return out, translate(rows.Err(), "volume by method")
}

// ListEventsForObject returns the newest events whose data.object is objectID, newest first
// (served by the events_object index).
func (tx *Tx) ListEventsForObject(s domain.Scope, objectID string, limit int) ([]*domain.Event, error) {
	rows, err := tx.query("SELECT "+eventCols+" FROM events WHERE org_id = ? AND livemode = ? AND object_id = ? ORDER BY seq DESC LIMIT ?",
		s.OrgID, boolInt(s.Livemode), objectID, limit)
	if err != nil {
		return nil, translate(err, "list object events")
	}
	defer rows.Close()
	var out []*domain.Event
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, translate(err, "scan event")
		}
		out = append(out, e)
	}
	return out, translate(rows.Err(), "list object events")
}

// TouchDashboardSessionAt records activity at the given instant (a sandbox clock jump).
func (tx *Tx) TouchDashboardSessionAt(tokenHash string, at int64) error {
	_, err := tx.exec("UPDATE dashboard_sessions SET last_seen_at = ? WHERE token_hash = ?", at, tokenHash)
	return translate(err, "touch session")
}

// DeleteUser removes a person from their organization: the user row, their sign-in links and
// every session they have (signed out at once). The audit trail keeps their e-mail.
func (tx *Tx) DeleteUser(id string) error {
	if _, err := tx.exec("DELETE FROM dashboard_sessions WHERE user_id = ?", id); err != nil {
		return translate(err, "delete user sessions")
	}
	if _, err := tx.exec("DELETE FROM signin_links WHERE user_id = ?", id); err != nil {
		return translate(err, "delete user links")
	}
	res, err := tx.exec("DELETE FROM users WHERE id = ?", id)
	return affectedOne(res, err, "delete user")
}

// CountOwners counts the owners of an organization.
func (tx *Tx) CountOwners(orgID string) (int, error) {
	var n int
	err := tx.queryRow("SELECT COUNT(*) FROM users WHERE org_id = ? AND role = 'owner'", orgID).Scan(&n)
	return n, translate(err, "count owners")
}

// SigninIPState is the failed sign-in count of one client address.
type SigninIPState struct {
	Failures     int
	WindowStart  int64
	BlockedUntil int64
}

// FindSigninIP returns the failure count of ip (zero when it has none).
func (tx *Tx) FindSigninIP(ip string) (SigninIPState, error) {
	var st SigninIPState
	err := tx.queryRow("SELECT failures, window_start, blocked_until FROM signin_ip_failures WHERE ip = ?", ip).Scan(&st.Failures, &st.WindowStart, &st.BlockedUntil)
	if err = translate(err, "find signin ip"); errors.Is(err, ErrNotFound) {
		return SigninIPState{}, nil
	}
	return st, err
}

// RecordSigninIPFailure counts a failed sign-in from ip: a window older than window seconds starts
// over; reaching limit failures in a window blocks the address until now+block (the count then
// starts over). It returns the state after the failure.
func (tx *Tx) RecordSigninIPFailure(ip string, limit int, window, block int64) (SigninIPState, error) {
	now := tx.now()
	_, err := tx.exec(`INSERT INTO signin_ip_failures (ip, failures, window_start, blocked_until) VALUES (?, 1, ?, 0)
		ON CONFLICT (ip) DO UPDATE SET
			failures = CASE WHEN signin_ip_failures.window_start <= ? THEN 1 ELSE signin_ip_failures.failures + 1 END,
			window_start = CASE WHEN signin_ip_failures.window_start <= ? THEN ? ELSE signin_ip_failures.window_start END`,
		ip, now, now-window, now-window, now)
	if err != nil {
		return SigninIPState{}, translate(err, "record signin ip")
	}
	if _, err := tx.exec("UPDATE signin_ip_failures SET blocked_until = ?, failures = 0, window_start = ? WHERE ip = ? AND failures >= ?", now+block, now, ip, limit); err != nil {
		return SigninIPState{}, translate(err, "block signin ip")
	}
	return tx.FindSigninIP(ip)
}

// DeleteStaleSigninIPs forgets addresses whose window and block ended before cutoff.
func (tx *Tx) DeleteStaleSigninIPs(cutoff int64) error {
	_, err := tx.exec("DELETE FROM signin_ip_failures WHERE window_start < ? AND blocked_until < ?", cutoff, cutoff)
	return translate(err, "delete stale signin ips")
}
