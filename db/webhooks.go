package db

import (
	"database/sql"
	"encoding/json"
	"strings"
	"time"

	"troco/server/domain"
)

// Outcomes of a delivery attempt for its outbox row. A row stays (pending) until a 2xx
// (delivered), until its retry window closes (failed), or until its endpoint is disabled or
// deleted (canceled); then it is deleted: the outbox holds undelivered work only and
// webhook_deliveries keeps the history.
const (
	OutboxPending   = "pending"
	OutboxDelivered = "delivered"
	OutboxFailed    = "failed"
	OutboxCanceled  = "canceled"
)

const webhookEndpointCols = "id, livemode, url, description, enabled_events, metadata, status, disabled_reason, failing, failing_since, secret_sealed, previous_secret_sealed, previous_secret_expires_at, created_at, updated_at, chaos"

func scanWebhookEndpoint(s scanner) (*domain.WebhookEndpoint, error) {
	var ep domain.WebhookEndpoint
	var live, failing int
	var events, metadata string
	var failingSince, prevExpires *int64
	var created, updated int64
	var chaos *string
	if err := s.Scan(&ep.ID, &live, &ep.URL, &ep.Description, &events, &metadata, &ep.Status, &ep.DisabledReason, &failing, &failingSince,
		&ep.SealedSecret, &ep.SealedPreviousSecret, &prevExpires, &created, &updated, &chaos); err != nil {
		return nil, err
	}
	if err := payParse(chaos, &ep.Chaos); err != nil {
		return nil, err
	}
	ep.Object = "webhook_endpoint"
	ep.Livemode = live == 1
	ep.Failing = failing == 1
	ep.FailingSince = domain.UnixPtr(failingSince)
	ep.PreviousSecretExpiresAt = domain.UnixPtr(prevExpires)
	ep.Metadata = parseMetadata(metadata)
	ep.EnabledEvents = []string{}
	_ = json.Unmarshal([]byte(events), &ep.EnabledEvents)
	ep.CreatedAt, ep.UpdatedAt = domain.Unix(created), domain.Unix(updated)
	return &ep, nil
}

func eventsJSON(events []string) string {
	if events == nil {
		events = []string{}
	}
	b, _ := json.Marshal(events)
	return string(b)
}

// CreateWebhookEndpoint inserts ep in scope, assigning id and timestamps. ep.SealedSecret must be set.
func (tx *Tx) CreateWebhookEndpoint(s domain.Scope, ep *domain.WebhookEndpoint) error {
	ep.ID = domain.NewID(domain.PrefixWebhookEndpoint)
	ep.Object = "webhook_endpoint"
	ep.Livemode = s.Livemode
	ep.CreatedAt, ep.UpdatedAt = domain.At(tx.Now), domain.At(tx.Now)
	if ep.Status == "" {
		ep.Status = domain.WebhookEndpointEnabled
	}
	if ep.Metadata == nil {
		ep.Metadata = domain.Metadata{}
	}
	chaos, err := payJSON(ep.Chaos)
	if err != nil {
		return err
	}
	_, err = tx.exec(`INSERT INTO webhook_endpoints (id, org_id, livemode, url, description, enabled_events, metadata, status, disabled_reason, failing, failing_since,
		secret_sealed, previous_secret_sealed, previous_secret_expires_at, created_at, updated_at, chaos) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		ep.ID, s.OrgID, boolInt(s.Livemode), ep.URL, ep.Description, eventsJSON(ep.EnabledEvents), metadataJSON(ep.Metadata), ep.Status, ep.DisabledReason,
		boolInt(ep.Failing), timePtr(ep.FailingSince), ep.SealedSecret, ep.SealedPreviousSecret, timePtr(ep.PreviousSecretExpiresAt), tx.now(), tx.now(), chaos)
	return translate(err, "create webhook endpoint")
}

// FindWebhookEndpointByID returns a (not deleted) webhook endpoint in scope.
func (tx *Tx) FindWebhookEndpointByID(s domain.Scope, id string) (*domain.WebhookEndpoint, error) {
	ep, err := scanWebhookEndpoint(tx.queryRow("SELECT "+webhookEndpointCols+" FROM webhook_endpoints WHERE id = ? AND org_id = ? AND livemode = ? AND deleted = 0",
		id, s.OrgID, boolInt(s.Livemode)))
	return ep, translate(err, "find webhook endpoint")
}

// UpdateWebhookEndpoint writes every mutable field of ep and bumps updated_at.
func (tx *Tx) UpdateWebhookEndpoint(s domain.Scope, ep *domain.WebhookEndpoint) error {
	ep.UpdatedAt = domain.At(tx.Now)
	chaos, err := payJSON(ep.Chaos)
	if err != nil {
		return err
	}
	res, err := tx.exec(`UPDATE webhook_endpoints SET url = ?, description = ?, enabled_events = ?, metadata = ?, status = ?, disabled_reason = ?, failing = ?,
		failing_since = ?, secret_sealed = ?, previous_secret_sealed = ?, previous_secret_expires_at = ?, updated_at = ?, chaos = ?
		WHERE id = ? AND org_id = ? AND livemode = ? AND deleted = 0`,
		ep.URL, ep.Description, eventsJSON(ep.EnabledEvents), metadataJSON(ep.Metadata), ep.Status, ep.DisabledReason, boolInt(ep.Failing),
		timePtr(ep.FailingSince), ep.SealedSecret, ep.SealedPreviousSecret, timePtr(ep.PreviousSecretExpiresAt), tx.now(), chaos, ep.ID, s.OrgID, boolInt(s.Livemode))
	return affectedOne(res, err, "update webhook endpoint")
}

// SetWebhookEndpointHealth records the delivery health of an endpoint without touching
// updated_at (health is troco's observation, not a change by the integrator).
func (tx *Tx) SetWebhookEndpointHealth(s domain.Scope, id string, failing bool, failingSince domain.Time) error {
	_, err := tx.exec("UPDATE webhook_endpoints SET failing = ?, failing_since = ? WHERE id = ? AND org_id = ? AND livemode = ?",
		boolInt(failing), timePtr(failingSince), id, s.OrgID, boolInt(s.Livemode))
	return translate(err, "set webhook endpoint health")
}

// DeleteWebhookEndpoint marks an endpoint deleted and cancels its pending deliveries.
func (tx *Tx) DeleteWebhookEndpoint(s domain.Scope, id string) error {
	res, err := tx.exec("UPDATE webhook_endpoints SET deleted = 1, updated_at = ? WHERE id = ? AND org_id = ? AND livemode = ? AND deleted = 0",
		tx.now(), id, s.OrgID, boolInt(s.Livemode))
	if err := affectedOne(res, err, "delete webhook endpoint"); err != nil {
		return err
	}
	return tx.CancelPendingWebhooks(id)
}

// CancelPendingWebhooks drops the undelivered outbox rows of an endpoint (disabled or deleted);
// an attempt in flight still gets recorded, but settles nothing.
func (tx *Tx) CancelPendingWebhooks(endpointID string) error {
	_, err := tx.exec("DELETE FROM webhook_outbox WHERE endpoint_id = ?", endpointID)
	return translate(err, "cancel webhooks")
}

// CountWebhookEndpoints counts the (not deleted) endpoints of a scope.
func (tx *Tx) CountWebhookEndpoints(s domain.Scope) (int, error) {
	var n int
	err := tx.queryRow("SELECT COUNT(*) FROM webhook_endpoints WHERE org_id = ? AND livemode = ? AND deleted = 0", s.OrgID, boolInt(s.Livemode)).Scan(&n)
	return n, translate(err, "count webhook endpoints")
}

// ListWebhookEndpoints pages the endpoints of a scope, newest first.
func (tx *Tx) ListWebhookEndpoints(s domain.Scope, p ListParams) ([]*domain.WebhookEndpoint, bool, error) {
	var w filter
	w.add("org_id = ?", s.OrgID)
	w.add("livemode = ?", boolInt(s.Livemode))
	w.add("deleted = 0")
	return page(tx, "webhook_endpoints", webhookEndpointCols, w, p, func(s scanner) (*domain.WebhookEndpoint, error) { return scanWebhookEndpoint(s) })
}

// webhookSub is an enabled endpoint and the event types it subscribes to.
type webhookSub struct {
	id       string
	patterns []string
}

// webhookSubscribers returns the enabled endpoints of a scope. The answer is kept for the rest of
// the writer's batch (every event of a batch's requests shares one query); any statement that
// writes webhook_endpoints, and any rollback, drops it (Tx.exec, runSavepoint, Tx.Savepoint).
func (tx *Tx) webhookSubscribers(s domain.Scope) ([]webhookSub, error) {
	if tx.st != nil {
		if subs, ok := tx.st.endpoints[s]; ok {
			return subs, nil
		}
	}
	rows, err := tx.query("SELECT id, enabled_events FROM webhook_endpoints WHERE org_id = ? AND livemode = ? AND status = ? AND deleted = 0",
		s.OrgID, boolInt(s.Livemode), domain.WebhookEndpointEnabled)
	if err != nil {
		return nil, translate(err, "find webhook endpoints")
	}
	subs := []webhookSub{}
	for rows.Next() {
		var sub webhookSub
		var events string
		if err := rows.Scan(&sub.id, &events); err != nil {
			rows.Close()
			return nil, translate(err, "scan webhook endpoints")
		}
		_ = json.Unmarshal([]byte(events), &sub.patterns)
		subs = append(subs, sub)
	}
	if err := rows.Close(); err != nil {
		return nil, translate(err, "find webhook endpoints")
	}
	if err := rows.Err(); err != nil {
		return nil, translate(err, "find webhook endpoints")
	}
	if tx.st != nil && tx.writable {
		if tx.st.endpoints == nil {
			tx.st.endpoints = map[domain.Scope][]webhookSub{}
		}
		tx.st.endpoints[s] = subs
	}
	return subs, nil
}

// enqueueWebhooks writes one outbox row per enabled endpoint of the event's scope that subscribes
// to its type. It runs inside InsertEvent, so the delivery exists exactly when the event does.
// With no endpoints it is one indexed query.
func (tx *Tx) enqueueWebhooks(s domain.Scope, e *domain.Event) error {
	subs, err := tx.webhookSubscribers(s)
	if err != nil {
		return err
	}
	var targets []string
	for _, sub := range subs {
		if domain.AnyEventPatternMatches(sub.patterns, e.Type) {
			targets = append(targets, sub.id)
		}
	}
	if len(targets) == 0 {
		return nil
	}
	// One statement for every endpoint (at most MaxWebhookEndpoints rows).
	values := make([]string, len(targets))
	args := make([]any, 0, 9*len(targets))
	for i, id := range targets {
		values[i] = "(?, ?, ?, ?, ?, ?, ?, ?)"
		args = append(args, e.ID, id, s.OrgID, boolInt(s.Livemode), e.Type, tx.now(), tx.now(), tx.now())
	}
	_, err = tx.exec(`INSERT INTO webhook_outbox (event_id, endpoint_id, org_id, livemode, event_type, next_attempt_at, created_at, updated_at)
		VALUES `+strings.Join(values, ", "), args...)
	return translate(err, "enqueue webhook")
}

// RequeueWebhook schedules event for endpoint now (manual redelivery), with a fresh retry window:
// the pending row if there is one (an attempt in flight keeps running but no longer settles it),
// or a new row whose attempt numbers continue after the recorded ones.
func (tx *Tx) RequeueWebhook(s domain.Scope, eventID, eventType, endpointID string) error {
	res, err := tx.exec(`UPDATE webhook_outbox SET next_attempt_at = ?, locked_until = 0, lease = lease + 1, window_start = NULL, updated_at = ?
		WHERE endpoint_id = ? AND event_id = ?`, tx.now(), tx.now(), endpointID, eventID)
	if err != nil {
		return translate(err, "requeue webhook")
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return translate(err, "requeue webhook")
	}
	_, err = tx.exec(`INSERT INTO webhook_outbox (event_id, endpoint_id, org_id, livemode, event_type, attempts, next_attempt_at, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, (SELECT COALESCE(MAX(attempt), 0) FROM webhook_deliveries WHERE endpoint_id = ? AND event_id = ?), ?, ?, ?)`,
		eventID, endpointID, s.OrgID, boolInt(s.Livemode), eventType, endpointID, eventID, tx.now(), tx.now(), tx.now())
	return translate(err, "requeue webhook")
}

// WebhookClaim is an outbox row leased to one delivery attempt.
type WebhookClaim struct {
	Seq        int64
	Lease      int64
	EventID    string
	EventType  string
	EndpointID string
	Scope      domain.Scope
	// Attempt is the number of this try (1 for the first).
	Attempt int
	// WindowStart is the first try of the current retry window.
	WindowStart time.Time
	// ChaosSequence is the event's number at a chaos endpoint (0 until its first claim there) and
	// ChaosDelay the seconds chaos held its first attempt back.
	ChaosSequence int64
	ChaosDelay    int
}

// DueWebhookEndpoint is an enabled endpoint with deliveries that can be claimed now.
type DueWebhookEndpoint struct {
	ID string
	// Failing reports that its last attempt failed (it gets fewer parallel attempts).
	Failing bool
	// Chaos reports chaos settings: one attempt at a time, so its seeded decisions follow the
	// order of the events.
	Chaos bool
}

// DueWebhookEndpoints returns the enabled endpoints that have due, unleased outbox rows at now.
// It runs on a reader, one index probe per endpoint, so a large backlog costs the writer nothing.
func (tx *Tx) DueWebhookEndpoints(now time.Time) ([]DueWebhookEndpoint, error) {
	rows, err := tx.query(`SELECT e.id, e.failing_since IS NOT NULL, e.chaos IS NOT NULL FROM webhook_endpoints e
		WHERE e.status = ? AND e.deleted = 0 AND EXISTS (SELECT 1 FROM webhook_outbox o
			WHERE o.endpoint_id = e.id AND o.next_attempt_at <= ? AND o.locked_until <= ?)`,
		domain.WebhookEndpointEnabled, now.Unix(), now.Unix())
	if err != nil {
		return nil, translate(err, "due webhook endpoints")
	}
	defer rows.Close()
	var out []DueWebhookEndpoint
	for rows.Next() {
		var d DueWebhookEndpoint
		// SQLite answers the two tests as 0/1, PostgreSQL as booleans: both scan into a bool.
		if err := rows.Scan(&d.ID, &d.Failing, &d.Chaos); err != nil {
			return nil, translate(err, "scan due webhook endpoint")
		}
		out = append(out, d)
	}
	return out, translate(rows.Err(), "due webhook endpoints")
}

// DueWebhooks returns up to limit due, unleased rows of one endpoint, oldest first: the
// candidates that LeaseWebhooks then tries to lease.
func (tx *Tx) DueWebhooks(endpointID string, now time.Time, limit int) ([]WebhookClaim, error) {
	rows, err := tx.query(`SELECT seq, lease, event_id, event_type, endpoint_id, org_id, livemode, attempts, window_start, chaos_sequence, chaos_delay FROM webhook_outbox
		WHERE endpoint_id = ? AND next_attempt_at <= ? AND locked_until <= ? ORDER BY next_attempt_at LIMIT ?`+tx.claimLock(),
		endpointID, now.Unix(), now.Unix(), limit)
	if err != nil {
		return nil, translate(err, "due webhooks")
	}
	defer rows.Close()
	var out []WebhookClaim
	for rows.Next() {
		var c WebhookClaim
		var live int
		var window *int64
		if err := rows.Scan(&c.Seq, &c.Lease, &c.EventID, &c.EventType, &c.EndpointID, &c.Scope.OrgID, &live, &c.Attempt, &window, &c.ChaosSequence, &c.ChaosDelay); err != nil {
			return nil, translate(err, "scan due webhook")
		}
		c.Scope.Livemode = live == 1
		if window != nil {
			c.WindowStart = time.Unix(*window, 0).UTC()
		}
		out = append(out, c)
	}
	return out, translate(rows.Err(), "due webhooks")
}

// LeaseWebhooks leases the candidates that are still as DueWebhooks read them (same lease, still
// there and unleased) until leaseUntil, and returns those it got, each with its attempt number
// and retry window. Another worker or replica that leased a row first simply wins it. A worker
// that dies leaves its rows to be leased again once leaseUntil has passed.
func (tx *Tx) LeaseWebhooks(cands []WebhookClaim, now, leaseUntil time.Time) ([]WebhookClaim, error) {
	var out []WebhookClaim
	for _, c := range cands {
		if c.WindowStart.IsZero() {
			c.WindowStart = now.UTC().Truncate(time.Second)
		}
		res, err := tx.exec(`UPDATE webhook_outbox SET locked_until = ?, lease = lease + 1, attempts = attempts + 1, window_start = ?, updated_at = ?
			WHERE seq = ? AND lease = ? AND locked_until <= ?`,
			leaseUntil.Unix(), c.WindowStart.Unix(), tx.now(), c.Seq, c.Lease, now.Unix())
		if err != nil {
			return nil, translate(err, "lease webhook")
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, translate(err, "lease webhook")
		} else if n == 1 {
			c.Lease++
			c.Attempt++
			out = append(out, c)
		}
	}
	return out, nil
}

// SettleWebhook applies the outcome of a claim: pending again at next, or done (delivered, failed
// or canceled: the row leaves the outbox). It reports false (and changes nothing) when the lease
// was superseded meanwhile by an expiry and a new claim, a manual redelivery or a cancellation.
func (tx *Tx) SettleWebhook(c WebhookClaim, outcome string, next time.Time) (bool, error) {
	var res sql.Result
	var err error
	if outcome == OutboxPending {
		res, err = tx.exec("UPDATE webhook_outbox SET next_attempt_at = ?, locked_until = 0, updated_at = ? WHERE seq = ? AND lease = ?",
			next.Unix(), tx.now(), c.Seq, c.Lease)
	} else {
		res, err = tx.exec("DELETE FROM webhook_outbox WHERE seq = ? AND lease = ?", c.Seq, c.Lease)
	}
	if err != nil {
		return false, translate(err, "settle webhook")
	}
	n, err := res.RowsAffected()
	return n == 1, translate(err, "settle webhook")
}

const webhookDeliveryCols = "id, livemode, endpoint_id, event_id, event_type, attempt, status, http_status, duration_ms, error, next_attempt_at, url, created_at, chaos"

func scanWebhookDelivery(s scanner) (*domain.WebhookDelivery, error) {
	var d domain.WebhookDelivery
	var live int
	var next *int64
	var created int64
	var chaos *string
	if err := s.Scan(&d.ID, &live, &d.WebhookEndpoint, &d.Event, &d.EventType, &d.Attempt, &d.Status, &d.HTTPStatus, &d.DurationMS, &d.Error, &next, &d.URL, &created, &chaos); err != nil {
		return nil, err
	}
	if err := payParse(chaos, &d.Chaos); err != nil {
		return nil, err
	}
	d.Object = "webhook_delivery"
	d.Livemode = live == 1
	d.NextAttemptAt = domain.UnixPtr(next)
	d.CreatedAt = domain.Unix(created)
	return &d, nil
}

// InsertWebhookDelivery records one attempt; d.CreatedAt (when the attempt began) must be set.
func (tx *Tx) InsertWebhookDelivery(s domain.Scope, d *domain.WebhookDelivery) error {
	d.ID = domain.NewID(domain.PrefixWebhookDelivery)
	d.Object = "webhook_delivery"
	d.Livemode = s.Livemode
	chaos, err := payJSON(d.Chaos)
	if err != nil {
		return err
	}
	_, err = tx.exec(`INSERT INTO webhook_deliveries (id, org_id, livemode, endpoint_id, event_id, event_type, attempt, status, http_status, duration_ms, error, next_attempt_at, url, created_at, chaos)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.ID, s.OrgID, boolInt(s.Livemode), d.WebhookEndpoint, d.Event, d.EventType, d.Attempt, d.Status, d.HTTPStatus, d.DurationMS, d.Error,
		timePtr(d.NextAttemptAt), d.URL, d.CreatedAt.Unix(), chaos)
	return translate(err, "insert webhook delivery")
}

// WebhookDeliveryFilter narrows ListWebhookDeliveries.
type WebhookDeliveryFilter struct {
	Event  string
	Status string
}

// ListWebhookDeliveries pages the attempts made to an endpoint of a scope, newest first.
func (tx *Tx) ListWebhookDeliveries(s domain.Scope, endpointID string, f WebhookDeliveryFilter, p ListParams) ([]*domain.WebhookDelivery, bool, error) {
	var w filter
	w.add("endpoint_id = ?", endpointID)
	w.add("org_id = ?", s.OrgID)
	w.add("livemode = ?", boolInt(s.Livemode))
	if f.Event != "" {
		w.add("event_id = ?", f.Event)
	}
	if f.Status != "" {
		w.add("status = ?", f.Status)
	}
	return page(tx, "webhook_deliveries", webhookDeliveryCols, w, p, func(s scanner) (*domain.WebhookDelivery, error) { return scanWebhookDelivery(s) })
}

// WebhookDeliveriesForEvent returns every attempt made for an event, oldest first (CLI).
func (tx *Tx) WebhookDeliveriesForEvent(eventID string) ([]*domain.WebhookDelivery, error) {
	rows, err := tx.query("SELECT "+webhookDeliveryCols+" FROM webhook_deliveries WHERE event_id = ? ORDER BY seq", eventID)
	if err != nil {
		return nil, translate(err, "list webhook deliveries")
	}
	defer rows.Close()
	var out []*domain.WebhookDelivery
	for rows.Next() {
		d, err := scanWebhookDelivery(rows)
		if err != nil {
			return nil, translate(err, "scan webhook delivery")
		}
		out = append(out, d)
	}
	return out, translate(rows.Err(), "list webhook deliveries")
}

// WebhookOutboxFor returns the endpoints an event is still queued for (CLI; a scan of the
// outbox, which holds undelivered work only).
func (tx *Tx) WebhookOutboxFor(eventID string) ([]string, error) {
	rows, err := tx.query("SELECT endpoint_id FROM webhook_outbox WHERE event_id = ?", eventID)
	if err != nil {
		return nil, translate(err, "list webhook outbox")
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, translate(err, "scan webhook outbox")
		}
		out = append(out, id)
	}
	return out, translate(rows.Err(), "list webhook outbox")
}

// FindEventsByIDs returns the events with these ids, by id, whatever their scope: the dispatcher
// loads a claimed batch at once and checks each event's scope against its outbox row.
func (tx *Tx) FindEventsByIDs(ids []string) (map[string]*domain.Event, error) {
	out := make(map[string]*domain.Event, len(ids))
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 500)]
		ids = ids[len(chunk):]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		rows, err := tx.query("SELECT "+eventCols+" FROM events WHERE id IN (?"+strings.Repeat(", ?", len(chunk)-1)+")", args...)
		if err != nil {
			return nil, translate(err, "find events")
		}
		for rows.Next() {
			e, err := scanEvent(rows)
			if err != nil {
				rows.Close()
				return nil, translate(err, "scan event")
			}
			out[e.ID] = e
		}
		if err := rows.Close(); err != nil {
			return nil, translate(err, "find events")
		}
	}
	return out, nil
}

// TailFilter narrows EventsAfter; zero fields match everything.
type TailFilter struct {
	OrgID    string
	Livemode *bool
	// Type is an exact type or a "prefix.*" wildcard.
	Type string
}

// TailedEvent is an event with its position in the log.
type TailedEvent struct {
	Seq   int64
	Event *domain.Event
}

// EventsAfter returns up to limit events with seq > after, oldest first (troco events tail).
func (tx *Tx) EventsAfter(after int64, f TailFilter, limit int) ([]TailedEvent, error) {
	var w filter
	w.add("seq > ?", after)
	if f.OrgID != "" {
		w.add("org_id = ?", f.OrgID)
	}
	if f.Livemode != nil {
		w.add("livemode = ?", boolInt(*f.Livemode))
	}
	if alts := tx.typeFilter(f.Type); alts != nil {
		clause, args := anyOf(alts)
		w.add(clause, args...)
	}
	rows, err := tx.query("SELECT seq, "+eventCols+" FROM events WHERE "+strings.Join(w.where, " AND ")+" ORDER BY seq LIMIT ?", append(w.args, limit)...)
	if err != nil {
		return nil, translate(err, "tail events")
	}
	defer rows.Close()
	var out []TailedEvent
	for rows.Next() {
		var seq int64
		e, err := scanEvent(seqScanner{rows, &seq})
		if err != nil {
			return nil, translate(err, "scan event")
		}
		out = append(out, TailedEvent{Seq: seq, Event: e})
	}
	return out, translate(rows.Err(), "tail events")
}

// LastEventSeq returns the position of the newest event (0 when there is none).
func (tx *Tx) LastEventSeq() (int64, error) {
	var seq int64
	err := tx.queryRow("SELECT COALESCE(MAX(seq), 0) FROM events").Scan(&seq)
	return seq, translate(err, "last event")
}

// seqScanner reads a leading seq column before handing the rest to a row scanner.
type seqScanner struct {
	s   scanner
	seq *int64
}

func (s seqScanner) Scan(dest ...any) error { return s.s.Scan(append([]any{s.seq}, dest...)...) }

// WebhookBacklog counts the deliveries not yet made (the outbox holds undelivered work only) and
// returns the Unix time the oldest was created (0 when there is none).
func (tx *Tx) WebhookBacklog() (n, oldest int64, err error) {
	err = tx.queryRow("SELECT COUNT(*), COALESCE(MIN(created_at), 0) FROM webhook_outbox").Scan(&n, &oldest)
	return n, oldest, translate(err, "webhook backlog")
}

// NextChaosSequence numbers the next event of a chaos endpoint (1, 2, …).
func (tx *Tx) NextChaosSequence(endpointID string) (int64, error) {
	if _, err := tx.exec("UPDATE webhook_endpoints SET chaos_counter = chaos_counter + 1 WHERE id = ?", endpointID); err != nil {
		return 0, translate(err, "number chaos event")
	}
	var n int64
	err := tx.queryRow("SELECT chaos_counter FROM webhook_endpoints WHERE id = ?", endpointID).Scan(&n)
	return n, translate(err, "number chaos event")
}

// SetChaosSequence records a claimed row's chaos number and delay; with hold, the claim is given
// back unsent (its attempt not counted) and the row is due again at next. It reports false when
// the lease was superseded meanwhile.
func (tx *Tx) SetChaosSequence(c WebhookClaim, sequence int64, delay int, hold bool, next time.Time) (bool, error) {
	var res sql.Result
	var err error
	if hold {
		res, err = tx.exec(`UPDATE webhook_outbox SET chaos_sequence = ?, chaos_delay = ?, next_attempt_at = ?, locked_until = 0, attempts = attempts - 1,
			updated_at = ? WHERE seq = ? AND lease = ?`, sequence, delay, next.Unix(), tx.now(), c.Seq, c.Lease)
	} else {
		res, err = tx.exec("UPDATE webhook_outbox SET chaos_sequence = ?, chaos_delay = ?, updated_at = ? WHERE seq = ? AND lease = ?",
			sequence, delay, tx.now(), c.Seq, c.Lease)
	}
	if err != nil {
		return false, translate(err, "set chaos sequence")
	}
	n, err := res.RowsAffected()
	return n == 1, translate(err, "set chaos sequence")
}

// ResetChaosCounter numbers an endpoint's next chaos event 1 again.
func (tx *Tx) ResetChaosCounter(endpointID string) error {
	_, err := tx.exec("UPDATE webhook_endpoints SET chaos_counter = 0 WHERE id = ?", endpointID)
	return translate(err, "reset chaos counter")
}
