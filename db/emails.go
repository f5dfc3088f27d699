package db

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"troco/server/domain"
)

// enqueueEmail writes the e-mail an event causes (domain.EmailForEvent) to the outbox. It runs
// inside InsertEvent, so the message exists exactly when the event does; whether it is sent (the
// organization's settings, the customer's address) is decided by the mailer, which records why
// when it is not.
func (tx *Tx) enqueueEmail(s domain.Scope, e *domain.Event) error {
	t, ok := domain.EmailForEvent(e.Type, e.Data.Object, e.Data.PreviousAttributes)
	if !ok {
		return nil
	}
	id := domain.NewID(domain.PrefixEmail)
	_, err := tx.exec(`INSERT INTO email_outbox (id, org_id, livemode, kind, event_id, related_object, next_attempt_at, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, s.OrgID, boolInt(s.Livemode), t.Kind, e.ID, t.RelatedObject, tx.now(), tx.now(), tx.now())
	if err != nil {
		return translate(err, "enqueue email")
	}
	if tx.emails == nil {
		tx.emails = map[string][]QueuedEmail{}
	}
	tx.emails[e.ID] = append(tx.emails[e.ID], QueuedEmail{ID: id, Kind: t.Kind})
	return nil
}

// EmailClaim is an outbox message leased to one delivery attempt.
type EmailClaim struct {
	Seq   int64
	Lease int64
	Email domain.Email
	Scope domain.Scope
	// Rendered reports that subject, text and html were fixed by an earlier attempt.
	Rendered bool
	// Attempt is the number of this try (1 for the first).
	Attempt int
}

const emailCols = "seq, lease, id, org_id, livemode, kind, event_id, related_object, status, skip_reason, to_addr, subject, locale, text_body, html_body, attempts, created_at"

func scanEmailRow(s scanner) (*EmailClaim, error) {
	var c EmailClaim
	var live int
	var subject, locale, text, html *string
	var created int64
	err := s.Scan(&c.Seq, &c.Lease, &c.Email.ID, &c.Scope.OrgID, &live, &c.Email.Kind, &c.Email.Event, &c.Email.RelatedObject, &c.Email.Status,
		&c.Email.SkipReason, &c.Email.To, &subject, &locale, &text, &html, &c.Attempt, &created)
	if err != nil {
		return nil, err
	}
	c.Scope.Livemode = live == 1
	c.Email.Object = "email"
	c.Email.Livemode = c.Scope.Livemode
	c.Email.CreatedAt = domain.Unix(created)
	c.Rendered = subject != nil
	for _, f := range []struct {
		dst *string
		v   *string
	}{{&c.Email.Subject, subject}, {&c.Email.Locale, locale}, {&c.Email.Text, text}, {&c.Email.HTML, html}} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	return &c, nil
}

func scanEmail(s scanner) (*domain.Email, error) {
	c, err := scanEmailRow(s)
	if err != nil {
		return nil, err
	}
	return &c.Email, nil
}

// DueEmails returns up to limit pending, unleased messages due at now, oldest first: the
// candidates that LeaseEmails then tries to lease. scope, when non-nil, restricts them to one
// organization's environment (the sandbox mailbox delivers its own before listing).
func (tx *Tx) DueEmails(now time.Time, scope *domain.Scope, limit int) ([]EmailClaim, error) {
	q := "SELECT " + emailCols + " FROM email_outbox WHERE status = 'pending' AND next_attempt_at <= ? AND locked_until <= ?"
	args := []any{now.Unix(), now.Unix()}
	if scope != nil {
		q += " AND org_id = ? AND livemode = ?"
		args = append(args, scope.OrgID, boolInt(scope.Livemode))
	}
	q += " ORDER BY next_attempt_at, seq LIMIT ?" + tx.claimLock()
	rows, err := tx.query(q, append(args, limit)...)
	if err != nil {
		return nil, translate(err, "due emails")
	}
	defer rows.Close()
	var out []EmailClaim
	for rows.Next() {
		c, err := scanEmailRow(rows)
		if err != nil {
			return nil, translate(err, "scan due email")
		}
		out = append(out, *c)
	}
	return out, translate(rows.Err(), "due emails")
}

// LeaseEmails leases the candidates that are still as DueEmails read them until leaseUntil and
// returns those it got, each with its attempt number. Another worker or replica that leased a
// row first simply wins it; a worker that dies leaves its rows to be leased again after
// leaseUntil.
func (tx *Tx) LeaseEmails(cands []EmailClaim, now, leaseUntil time.Time) ([]EmailClaim, error) {
	var out []EmailClaim
	for _, c := range cands {
		res, err := tx.exec(`UPDATE email_outbox SET locked_until = ?, lease = lease + 1, attempts = attempts + 1, updated_at = ?
			WHERE seq = ? AND lease = ? AND status = 'pending' AND locked_until <= ?`, leaseUntil.Unix(), tx.now(), c.Seq, c.Lease, now.Unix())
		if err != nil {
			return nil, translate(err, "lease email")
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, translate(err, "lease email")
		} else if n == 1 {
			c.Lease++
			c.Attempt++
			out = append(out, c)
		}
	}
	return out, nil
}

// SaveRenderedEmail fixes a leased message's recipient and content, so every retry sends the
// same bytes. It reports false when the lease was lost.
func (tx *Tx) SaveRenderedEmail(c EmailClaim) (bool, error) {
	res, err := tx.exec(`UPDATE email_outbox SET to_addr = ?, subject = ?, locale = ?, text_body = ?, html_body = ?, updated_at = ? WHERE seq = ? AND lease = ?`,
		c.Email.To, c.Email.Subject, c.Email.Locale, c.Email.Text, c.Email.HTML, tx.now(), c.Seq, c.Lease)
	if err != nil {
		return false, translate(err, "save email")
	}
	n, err := res.RowsAffected()
	return n == 1, translate(err, "save email")
}

// SettleEmail records the outcome of a claim: pending again at next (with the error), or final
// (sent, skipped with a reason, failed). It reports false, changing nothing, when the lease was
// superseded meanwhile.
func (tx *Tx) SettleEmail(c EmailClaim, status, reason, lastErr string, next time.Time) (bool, error) {
	if !slices.Contains(emailStatuses, status) {
		return false, fmt.Errorf("db: e-mail status %q is not one of the stored statuses", status)
	}
	var sentAt *int64
	if status == domain.EmailStatusSent {
		v := tx.now()
		sentAt = &v
	}
	res, err := tx.exec(`UPDATE email_outbox SET status = ?, skip_reason = ?, last_error = ?, next_attempt_at = ?, locked_until = 0, sent_at = ?,
		to_addr = COALESCE(?, to_addr), updated_at = ? WHERE seq = ? AND lease = ?`,
		status, nullIfEmpty(reason), nullIfEmpty(lastErr), next.Unix(), sentAt, c.Email.To, tx.now(), c.Seq, c.Lease)
	if err != nil {
		return false, translate(err, "settle email")
	}
	n, err := res.RowsAffected()
	return n == 1, translate(err, "settle email")
}

func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// emailStatuses are the statuses an outbox message is stored with (pending when queued, the
// others set by SettleEmail, which refuses any other): an unfiltered list reads the scope's
// status index once per status.
var emailStatuses = []string{domain.EmailStatusPending, domain.EmailStatusSent, domain.EmailStatusSkipped, domain.EmailStatusFailed}

// EmailFilter narrows ListEmails.
type EmailFilter struct {
	To     string
	Kind   string
	Status string
}

// ListEmails pages the messages of a scope, newest first.
func (tx *Tx) ListEmails(s domain.Scope, f EmailFilter, p ListParams) ([]*domain.Email, bool, error) {
	var w filter
	w.add("org_id = ?", s.OrgID)
	w.add("livemode = ?", boolInt(s.Livemode))
	if f.Status != "" {
		w.add("status = ?", f.Status)
	}
	if f.To != "" {
		w.add("LOWER(to_addr) = LOWER(?)", f.To)
	}
	if f.Kind != "" {
		w.add("kind = ?", f.Kind)
	}
	if f.Status == "" {
		// The scope's index is (org_id, livemode, status, seq): one range per status, merged
		// by seq, rather than every message of the scope sorted.
		w.union = eq("status", emailStatuses)
	}
	return page(tx, "email_outbox", emailCols, w, p, scanEmail)
}

// FindEmailByID returns a message of the scope.
func (tx *Tx) FindEmailByID(s domain.Scope, id string) (*domain.Email, error) {
	e, err := scanEmail(tx.queryRow("SELECT "+emailCols+" FROM email_outbox WHERE id = ? AND org_id = ? AND livemode = ?", id, s.OrgID, boolInt(s.Livemode)))
	return e, translate(err, "find email")
}

// EmailSettings returns an organization's e-mail settings (every kind on when never set).
func (tx *Tx) EmailSettings(orgID string) (domain.EmailSettings, error) {
	var data string
	err := tx.queryRow("SELECT data FROM organization_email_settings WHERE org_id = ?", orgID).Scan(&data)
	if err != nil {
		if translate(err, "") == ErrNotFound {
			return domain.EmailSettings{}.Complete(), nil
		}
		return nil, translate(err, "find email settings")
	}
	s := domain.EmailSettings{}
	_ = json.Unmarshal([]byte(data), &s)
	return s.Complete(), nil
}

// SetEmailSettings stores an organization's e-mail settings.
func (tx *Tx) SetEmailSettings(orgID string, s domain.EmailSettings) error {
	data, err := json.Marshal(s.Complete())
	if err != nil {
		return err
	}
	_, err = tx.exec(`INSERT INTO organization_email_settings (org_id, data) VALUES (?, ?)
		ON CONFLICT (org_id) DO UPDATE SET data = excluded.data`, orgID, string(data))
	return translate(err, "set email settings")
}

// ChargeScope returns the scope of a charge by id alone, for its public receipt page (which
// authenticates with the receipt URL's signature instead of an API key).
func (tx *Tx) ChargeScope(id string) (domain.Scope, error) {
	var s domain.Scope
	var live int
	err := tx.queryRow("SELECT org_id, livemode FROM charges WHERE id = ?", id).Scan(&s.OrgID, &live)
	s.Livemode = live == 1
	return s, translate(err, "find charge")
}

// QueuedEmail is a message an event queued: its id and kind.
type QueuedEmail struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
}

// EmailsForEvent returns the messages an event inserted by this transaction queued (troco
// trigger prints them). An event queues its messages in the transaction that inserts it
// (enqueueEmail), so they are known here without an index on the outbox's event_id.
func (tx *Tx) EmailsForEvent(eventID string) []QueuedEmail {
	return tx.emails[eventID]
}

// RenewEmailLease extends a claim's lease until leaseUntil just before a slow step (an SMTP
// send), so a message that waited its turn in a large batch is not sent by this worker after
// another replica took it over. It reports false, changing nothing, when the lease was lost.
func (tx *Tx) RenewEmailLease(c *EmailClaim, leaseUntil time.Time) (bool, error) {
	res, err := tx.exec("UPDATE email_outbox SET locked_until = ?, lease = lease + 1, updated_at = ? WHERE seq = ? AND lease = ? AND status = 'pending'",
		leaseUntil.Unix(), tx.now(), c.Seq, c.Lease)
	if err != nil {
		return false, translate(err, "renew email lease")
	}
	n, err := res.RowsAffected()
	if n == 1 {
		c.Lease++
	}
	return n == 1, translate(err, "renew email lease")
}

// PendingEmailsDue counts a scope's pending messages due at now, leased or not: the sandbox
// mailbox waits for those another worker is rendering.
func (tx *Tx) PendingEmailsDue(s domain.Scope, now time.Time) (int, error) {
	var n int
	err := tx.queryRow("SELECT COUNT(*) FROM email_outbox WHERE org_id = ? AND livemode = ? AND status = 'pending' AND next_attempt_at <= ?",
		s.OrgID, boolInt(s.Livemode), now.Unix()).Scan(&n)
	return n, translate(err, "count pending emails")
}
