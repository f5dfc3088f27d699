package webhooks

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"troco/db"
	"troco/server/clock"
	"troco/server/domain"
	"troco/server/jobs"
	"troco/server/secrets"
)

// UserAgent identifies troco's deliveries to receivers.
const UserAgent = "troco-webhooks/1"

// refillDelay coalesces the wake-ups of finishing attempts into fewer claims.
const refillDelay = time.Millisecond

// maxResponseRead bounds how much of a receiver's answer is read (and discarded).
const maxResponseRead = 64 << 10

// Options configure a Dispatcher; zero values take the defaults noted.
type Options struct {
	DB      *db.DB
	Clock   clock.Clock
	Secrets *secrets.Keyring
	Logger  *slog.Logger
	// OnAttempt, when set, receives every recorded delivery attempt's success and duration (metrics).
	OnAttempt func(ok bool, d time.Duration)
	// AllowPrivate lets live endpoints reach loopback and private addresses (serve --allow-private-webhooks).
	AllowPrivate bool
	// Workers bounds the deliveries in flight (default 64).
	Workers int
	// PerEndpoint bounds the deliveries in flight to one endpoint (default 4; 1 while it is failing),
	// so slow endpoints cannot take the slots of the others.
	PerEndpoint int
	// Timeout bounds one request, connection included (default 10 s, CONTRACT 8).
	Timeout time.Duration
	// Lease is how long a claimed row stays reserved for its attempt (default 30 s, at least
	// twice Timeout); after a crash the row is claimed again once it expires.
	Lease time.Duration
	// StopGrace is how long Stop lets the attempts in flight finish (default 2 s). Longer ones are
	// cut off unrecorded and their rows made due again, so that a slow receiver cannot hold up a
	// graceful shutdown for the whole Timeout; the next start sends them again.
	StopGrace time.Duration
	// PollInterval is how often the background loop looks for due rows (default 250 ms).
	PollInterval time.Duration
	// Jitter returns numbers in [0, 1) that spread retries (default math/rand/v2); tests inject a constant.
	Jitter func() float64
	// TLSConfig is the client TLS configuration (default: system roots, TLS 1.2+).
	TLSConfig *tls.Config
}

// Dispatcher delivers the webhook outbox. Start runs it in the background; Run (its job) claims
// and delivers every due row synchronously, for time travel and tests.
type Dispatcher struct {
	opts       Options
	db         *db.DB
	clock      clock.Clock
	keys       *secrets.Keyring
	log        *slog.Logger
	test, live *http.Client

	claimMu  sync.Mutex     // serializes claims so the per-endpoint bound holds in this process
	mu       sync.Mutex     // guards inflight and busy
	inflight map[string]int // endpoint id → attempts in flight
	busy     int            // attempts started by the background loop and not finished
	wg       sync.WaitGroup // attempts started by the background loop
	turn     atomic.Uint64  // rotates the endpoint that claims first
	wake     chan struct{}
	stop     chan struct{}
	done     chan struct{}
	// sends is the context of every request; Stop cancels it once StopGrace has passed.
	sends    context.Context
	cutSends context.CancelFunc
}

// New returns a dispatcher; call Start to run it in the background.
func New(o Options) *Dispatcher {
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Workers <= 0 {
		o.Workers = 64
	}
	if o.PerEndpoint <= 0 {
		o.PerEndpoint = 4
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Lease <= 0 {
		o.Lease = 30 * time.Second
	}
	o.Lease = max(o.Lease, 2*o.Timeout)
	if o.PollInterval <= 0 {
		o.PollInterval = 250 * time.Millisecond
	}
	if o.StopGrace <= 0 {
		o.StopGrace = 2 * time.Second
	}
	if o.Jitter == nil {
		o.Jitter = rand.Float64
	}
	if o.Secrets == nil {
		o.Secrets = secrets.Random()
	}
	d := &Dispatcher{opts: o, db: o.DB, clock: o.Clock, keys: o.Secrets, log: o.Logger, inflight: map[string]int{}, wake: make(chan struct{}, 1)}
	d.sends, d.cutSends = context.WithCancel(context.Background())
	d.test = d.newClient(false)
	d.live = d.newClient(!o.AllowPrivate)
	return d
}

// newClient builds the HTTP client of one environment. guarded clients check every dialled
// address (guardControl); proxies are never used (a proxy would dial for us, unchecked) and
// redirects are never followed (a 3xx is a failed attempt).
func (d *Dispatcher) newClient(guarded bool) *http.Client {
	dialer := &net.Dialer{Timeout: d.opts.Timeout, KeepAlive: 30 * time.Second}
	if guarded {
		dialer.Control = guardControl
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if d.opts.TLSConfig != nil {
		tc = d.opts.TLSConfig.Clone()
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		TLSClientConfig:       tc,
		TLSHandshakeTimeout:   d.opts.Timeout,
		ResponseHeaderTimeout: d.opts.Timeout,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   d.opts.PerEndpoint,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// Job is the dispatcher as a background job: cron runs it as a safety net, and time travel
// (POST /v1/test-helpers/advance-clock) runs it to deliver the retries that became due.
func (d *Dispatcher) Job() jobs.Job {
	return jobs.Job{Name: "deliver-webhooks", Every: time.Minute, Run: d.Run}
}

// Run claims the rows due at now and delivers them, Workers at a time, until none is left;
// it returns when every attempt it started is recorded.
func (d *Dispatcher) Run(ctx context.Context, now time.Time) error {
	for range 1000 {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch, err := d.claim(ctx, now, d.opts.Workers)
		if err != nil {
			return err
		}
		if len(batch) == 0 {
			return nil
		}
		var wg sync.WaitGroup
		for _, dl := range batch {
			wg.Go(func() { d.deliver(dl) })
		}
		wg.Wait()
	}
	return nil
}

// Start runs the background loop: every PollInterval (and whenever an attempt finishes) it fills
// the free worker slots with due rows. Stop ends it.
func (d *Dispatcher) Start() {
	d.stop, d.done = make(chan struct{}), make(chan struct{})
	go d.loop()
}

// Stop ends the background loop and waits for the attempts in flight to be recorded, at most
// StopGrace: attempts still waiting for their receiver then are cut off, left unrecorded (their
// outcome is unknown) and made due again, as after a crash but without waiting for the lease.
// Rows it never claimed stay in the outbox for the next start. The dispatcher sends nothing
// after Stop.
func (d *Dispatcher) Stop() {
	if d.stop == nil {
		d.cutSends()
		return
	}
	close(d.stop)
	<-d.done
	finished := make(chan struct{})
	go func() {
		d.wg.Wait()
		close(finished)
	}()
	select {
	case <-finished:
	case <-time.After(d.opts.StopGrace):
		d.cutSends()
		<-finished
	}
	d.cutSends()
}

// Notify wakes the background loop (after a commit that queued deliveries).
func (d *Dispatcher) Notify() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *Dispatcher) loop() {
	defer close(d.done)
	t := time.NewTicker(d.opts.PollInterval)
	defer t.Stop()
	for {
		d.fill()
		select {
		case <-d.stop:
			return
		case <-t.C:
		case <-d.wake:
			// Let a few more attempts finish so one claim refills several slots.
			time.Sleep(refillDelay)
		}
	}
}

// fill claims as many due rows as there are free slots and starts their attempts.
func (d *Dispatcher) fill() {
	ctx := context.Background()
	d.mu.Lock()
	free := d.opts.Workers - d.busy
	d.mu.Unlock()
	if free <= 0 {
		return
	}
	batch, err := d.claim(ctx, d.clock.Now(), free)
	if err != nil {
		if !errors.Is(err, db.ErrClosed) {
			d.log.Error("webhooks: claim deliveries", slog.String("error", err.Error()))
		}
		return
	}
	d.mu.Lock()
	d.busy += len(batch)
	d.mu.Unlock()
	for _, dl := range batch {
		d.wg.Go(func() {
			d.deliver(dl)
			d.mu.Lock()
			d.busy--
			d.mu.Unlock()
			d.Notify()
		})
	}
}

// delivery is a leased outbox row with what its attempt needs; ep or ev is nil when it no longer
// exists.
type delivery struct {
	c  db.WebhookClaim
	ep *domain.WebhookEndpoint
	ev *domain.Event
}

// claim leases up to limit due rows and loads their endpoints and events. Candidates are read on
// a reader, endpoint by endpoint within each one's free capacity (PerEndpoint, 1 while failing,
// minus what is in flight here), starting from a rotating endpoint so none is starved; the writer
// then only runs the conditional updates that lease them.
func (d *Dispatcher) claim(ctx context.Context, now time.Time, limit int) ([]delivery, error) {
	d.claimMu.Lock()
	defer d.claimMu.Unlock()
	d.mu.Lock()
	inflight := maps.Clone(d.inflight)
	d.mu.Unlock()
	var cands []db.WebhookClaim
	err := d.db.Read(ctx, func(tx *db.Tx) error {
		eps, err := tx.DueWebhookEndpoints(now)
		if err != nil || len(eps) == 0 {
			return err
		}
		first := int(d.turn.Add(1) % uint64(len(eps)))
		for i := range eps {
			ep := eps[(first+i)%len(eps)]
			n := d.opts.PerEndpoint
			if ep.Failing || ep.Chaos {
				n = 1
			}
			n = min(n-inflight[ep.ID], limit-len(cands))
			if n <= 0 {
				continue
			}
			rows, err := tx.DueWebhooks(ep.ID, now, n)
			if err != nil {
				return err
			}
			cands = append(cands, rows...)
		}
		return nil
	})
	if err != nil || len(cands) == 0 {
		return nil, err
	}
	var claims []db.WebhookClaim
	err = d.db.Write(ctx, func(tx *db.Tx) error {
		var err error
		claims, err = tx.LeaseWebhooks(cands, now, now.Add(d.opts.Lease))
		return err
	})
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	for _, c := range claims {
		d.inflight[c.EndpointID]++
	}
	d.mu.Unlock()
	batch, err := d.load(ctx, claims)
	if err != nil {
		// Nothing was sent: the leases expire and the rows are claimed again.
		for _, c := range claims {
			d.release(c)
		}
		return nil, err
	}
	return batch, nil
}

// load reads the endpoints and events of a batch of claims in one read transaction.
func (d *Dispatcher) load(ctx context.Context, claims []db.WebhookClaim) ([]delivery, error) {
	out := make([]delivery, len(claims))
	err := d.db.Read(ctx, func(tx *db.Tx) error {
		eps := map[string]*domain.WebhookEndpoint{}
		ids := make([]string, 0, len(claims))
		for _, c := range claims {
			ids = append(ids, c.EventID)
			if _, ok := eps[c.EndpointID]; ok {
				continue
			}
			ep, err := tx.FindWebhookEndpointByID(c.Scope, c.EndpointID)
			if err != nil && !errors.Is(err, db.ErrNotFound) {
				return err
			}
			eps[c.EndpointID] = ep
		}
		evs, err := tx.FindEventsByIDs(ids)
		if err != nil {
			return err
		}
		for i, c := range claims {
			out[i] = delivery{c: c, ep: eps[c.EndpointID]}
			if ev := evs[c.EventID]; ev != nil && ev.Organization == c.Scope.OrgID && ev.Livemode == c.Scope.Livemode {
				out[i].ev = ev
			}
		}
		return nil
	})
	return out, err
}

// release forgets a claim's slot in the per-endpoint count.
func (d *Dispatcher) release(c db.WebhookClaim) {
	d.mu.Lock()
	if d.inflight[c.EndpointID]--; d.inflight[c.EndpointID] <= 0 {
		delete(d.inflight, c.EndpointID)
	}
	d.mu.Unlock()
}

// attempt is the outcome of one request.
type attempt struct {
	status   int // HTTP status, 0 when none was received
	err      string
	duration time.Duration
}

func (a attempt) ok() bool { return a.err == "" && a.status >= 200 && a.status < 300 }

// deliver makes one attempt for a claim and records it. It never uses the caller's context for
// the request or the record: shutdown lets attempts finish for StopGrace, and an attempt it cuts
// off after that is not recorded but made due again.
func (d *Dispatcher) deliver(dl delivery) {
	defer d.release(dl.c)
	ctx := context.Background()
	if dl.ep == nil || dl.ev == nil || dl.ep.Status != domain.WebhookEndpointEnabled {
		d.settleOnly(ctx, dl.c, db.OutboxCanceled) // endpoint deleted or paused meanwhile
		return
	}
	if d.sends.Err() != nil {
		d.settleOnly(ctx, dl.c, db.OutboxPending) // stopped before sending: due again at once
		return
	}
	var chaos *domain.DeliveryChaos
	if dl.ep.Chaos != nil && !dl.ep.Livemode {
		held, ok := d.chaosNumber(ctx, &dl)
		if held || !ok {
			return // held back (due again later) or the lease was lost
		}
		c := ChaosAttempt(dl.ep.Chaos, dl.c.ChaosSequence, dl.c.Attempt)
		chaos = &c
	}
	start := d.clock.Now()
	var res attempt
	switch {
	case chaos != nil && chaos.ForcedFailure:
		res = attempt{err: "chaos: failed on purpose (fail_first_attempts), not sent"}
	case chaos != nil && chaos.Dropped:
		res = attempt{err: "chaos: dropped (drop_rate), not sent"}
	default:
		signedAt := d.signingTime(dl.c.Attempt)
		res = d.post(d.sends, dl.ep, dl.ev, start, signedAt)
		if chaos != nil && chaos.Duplicated && d.sends.Err() == nil {
			// The same request again: same webhook-id, timestamp and signature.
			if dup := d.post(d.sends, dl.ep, dl.ev, start, signedAt); !dup.ok() && res.ok() {
				res = dup
			}
		}
	}
	if d.sends.Err() != nil {
		// Cut off by Stop: the receiver may or may not have processed it. Due again at once, so
		// the next start sends it again (receivers dedupe on webhook-id).
		d.settleOnly(ctx, dl.c, db.OutboxPending)
		return
	}
	if d.opts.OnAttempt != nil {
		d.opts.OnAttempt(res.ok(), d.clock.Now().Sub(start))
	}
	d.record(ctx, dl.c, dl.ep, res, start, chaos)
}

// chaosNumber gives an event its sequence number at a chaos endpoint on its first claim there
// and, when chaos holds that first attempt back, returns the claim unsent (held) with the row
// due again after the hold. ok is false when the lease was superseded meanwhile.
func (d *Dispatcher) chaosNumber(ctx context.Context, dl *delivery) (held, ok bool) {
	if dl.c.ChaosSequence != 0 {
		return false, true
	}
	err := d.db.Write(ctx, func(tx *db.Tx) error {
		n, err := tx.NextChaosSequence(dl.ep.ID)
		if err != nil {
			return err
		}
		secs, _ := ChaosHold(dl.ep.Chaos, n)
		held = secs > 0
		ok, err = tx.SetChaosSequence(dl.c, n, secs, held, d.clock.Now().Add(time.Duration(secs)*time.Second))
		dl.c.ChaosSequence, dl.c.ChaosDelay = n, secs
		return err
	})
	if err != nil {
		d.log.Error("webhooks: chaos", slog.String("endpoint", dl.ep.ID), slog.String("error", err.Error()))
		return false, false
	}
	return held, ok
}

// signingTime is the webhook-timestamp of an attempt: the wall time that receivers check against
// their own clocks (Standard Webhooks libraries allow ±5 minutes), also after sandbox time travel.
// Time travel can run several attempts of one delivery within one wall-clock second; each later
// attempt is then dated one second further so that every attempt still gets a fresh signature.
func (d *Dispatcher) signingTime(attempt int) time.Time {
	wall := clock.Wall(d.clock)
	if d.clock.Now().Sub(wall) < time.Second {
		return wall // no time travel: retries are at least 30 s apart anyway
	}
	return wall.Add(time.Duration(max(attempt-1, 0)) * time.Second)
}

// post sends the event to the endpoint, signed at signedAt; start (the server's clock) picks the
// signing secrets that are valid during a rotation.
func (d *Dispatcher) post(ctx context.Context, ep *domain.WebhookEndpoint, ev *domain.Event, start, signedAt time.Time) attempt {
	body, err := domain.MarshalJSON(ev)
	if err != nil {
		return attempt{err: "could not encode the event"}
	}
	keys, err := d.signingSecrets(ep, start)
	if err != nil {
		d.log.Error("webhooks: open signing secret", slog.String("endpoint", ep.ID), slog.String("error", err.Error()))
		return attempt{err: "the endpoint's signing secret could not be opened"}
	}
	sig, err := SignatureHeader(keys, ev.ID, signedAt, body)
	if err != nil {
		return attempt{err: "could not sign the event"}
	}
	client := d.test
	if ep.Livemode {
		client = d.live
		if !strings.HasPrefix(ep.URL, "https://") {
			return attempt{err: "live endpoints must use https"}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(body))
	if err != nil {
		return attempt{err: "invalid endpoint URL"}
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", UserAgent)
	h.Set(HeaderID, ev.ID)
	h.Set(HeaderTimestamp, strconv.FormatInt(signedAt.Unix(), 10))
	h.Set(HeaderSignature, sig)
	resp, err := client.Do(req)
	if err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseRead))
		resp.Body.Close()
	}
	a := attempt{duration: max(d.clock.Now().Sub(start), 0)}
	if err != nil {
		a.err = describe(err, d.opts.Timeout)
		return a
	}
	a.status = resp.StatusCode
	return a
}

// signingSecrets opens the current secret and, inside a rotation's overlap window, the previous.
func (d *Dispatcher) signingSecrets(ep *domain.WebhookEndpoint, now time.Time) ([]string, error) {
	cur, err := d.keys.Open(ep.SealedSecret)
	if err != nil {
		return nil, err
	}
	out := []string{cur}
	if ep.SealedPreviousSecret != nil && now.Before(ep.PreviousSecretExpiresAt.Time) {
		prev, err := d.keys.Open(*ep.SealedPreviousSecret)
		if err != nil {
			return nil, err
		}
		out = append(out, prev)
	}
	return out, nil
}

// describe turns a transport error into the short text recorded on the attempt.
func describe(err error, timeout time.Duration) string {
	var blocked *BlockedAddressError
	var dnsErr *net.DNSError
	var ue *url.Error
	switch {
	case errors.As(err, &blocked):
		return blocked.Error()
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, syscall.ETIMEDOUT):
		return "timeout: no response within " + timeout.String()
	case errors.As(err, &dnsErr):
		return "dns: could not resolve " + dnsErr.Name
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed by the receiver"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout: no response within " + timeout.String()
	}
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := err.Error()
	if len(msg) > 300 {
		msg = msg[:300]
	}
	return msg
}

// record writes the attempt, settles the outbox row (delivered, retry later, or failed after the
// retry window) and updates the endpoint's health, in one transaction.
func (d *Dispatcher) record(ctx context.Context, c db.WebhookClaim, ep *domain.WebhookEndpoint, res attempt, start time.Time, chaos *domain.DeliveryChaos) {
	end := d.clock.Now()
	att := &domain.WebhookDelivery{WebhookEndpoint: ep.ID, Event: c.EventID, EventType: c.EventType, Attempt: c.Attempt,
		CreatedAt: domain.At(start), DurationMS: res.duration.Milliseconds(), URL: ep.URL, Status: domain.DeliverySucceeded, Chaos: chaos}
	if res.status != 0 {
		s := res.status
		att.HTTPStatus = &s
	}
	if res.err != "" {
		e := res.err
		att.Error = &e
	}
	outcome, next := db.OutboxDelivered, end
	if !res.ok() {
		att.Status = domain.DeliveryFailed
		// Counted from the attempt's start (as recorded, whole seconds); Timeout < FirstRetry, so
		// the retry is always in the future.
		next = att.CreatedAt.Add(RetryDelay(c.Attempt, d.opts.Jitter()))
		if next.After(c.WindowStart.Add(RetryWindow)) {
			outcome = db.OutboxFailed
		} else {
			outcome = db.OutboxPending
		}
	}
	err := d.db.Write(ctx, func(tx *db.Tx) error {
		held, err := tx.SettleWebhook(c, outcome, next)
		if err != nil {
			return err
		}
		if held && outcome == db.OutboxPending {
			att.NextAttemptAt = domain.At(next)
		}
		if err := tx.InsertWebhookDelivery(c.Scope, att); err != nil {
			return err
		}
		if res.ok() && !ep.Failing && ep.FailingSince.IsZero() {
			return nil // healthy and still healthy: nothing to update
		}
		return updateHealth(tx, c.Scope, ep.ID, res.ok(), held && outcome == db.OutboxFailed, domain.At(start).Time)
	})
	if err != nil {
		// Not recorded: the lease expires and the event is delivered again (at-least-once).
		d.log.Error("webhooks: record attempt", slog.String("event", c.EventID), slog.String("endpoint", c.EndpointID), slog.String("error", err.Error()))
	}
}

// settleOnly closes a claim without an attempt (its endpoint was disabled or deleted).
func (d *Dispatcher) settleOnly(ctx context.Context, c db.WebhookClaim, status string) {
	err := d.db.Write(ctx, func(tx *db.Tx) error {
		_, err := tx.SettleWebhook(c, status, d.clock.Now())
		return err
	})
	if err != nil {
		d.log.Error("webhooks: settle delivery", slog.String("error", err.Error()))
	}
}

// updateHealth applies the endpoint rules after an attempt: a success clears the outage; a
// failure starts one (failing_since); a delivery that exhausted its retries marks the endpoint
// failing; an outage of DisableAfter disables the endpoint, cancels its pending deliveries and
// emits webhook_endpoint.disabled to the scope's other endpoints.
func updateHealth(tx *db.Tx, s domain.Scope, endpointID string, ok, gaveUp bool, at time.Time) error {
	ep, err := tx.FindWebhookEndpointByID(s, endpointID)
	if errors.Is(err, db.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if ok {
		if ep.Failing || !ep.FailingSince.IsZero() {
			return tx.SetWebhookEndpointHealth(s, ep.ID, false, domain.Time{})
		}
		return nil
	}
	since := ep.FailingSince
	if since.IsZero() {
		since = domain.At(at)
	}
	failing := ep.Failing || gaveUp
	if ep.Status == domain.WebhookEndpointEnabled && at.Sub(since.Time) >= DisableAfter {
		prevStatus, prevReason := ep.Status, ep.DisabledReason
		reason := domain.WebhookDisabledFailing
		ep.Status, ep.DisabledReason, ep.Failing, ep.FailingSince = domain.WebhookEndpointDisabled, &reason, failing, since
		if err := tx.UpdateWebhookEndpoint(s, ep); err != nil {
			return err
		}
		if err := tx.CancelPendingWebhooks(ep.ID); err != nil {
			return err
		}
		return tx.InsertEvent(s, &domain.Event{Type: "webhook_endpoint.disabled", Data: domain.EventData{Object: ep,
			PreviousAttributes: map[string]any{"status": prevStatus, "disabled_reason": prevReason}}})
	}
	if failing != ep.Failing || since != ep.FailingSince {
		return tx.SetWebhookEndpointHealth(s, ep.ID, failing, since)
	}
	return nil
}
