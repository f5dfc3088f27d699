package server_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"troco/db/dbtest"

	"github.com/matryer/is"

	"troco/db"
	"troco/server"
	"troco/server/domain"
	"troco/server/jobs"
	"troco/server/webhooks"
)

// received is one request a receiver got.
type received struct {
	ID, Timestamp, Signature string
	Header                   http.Header
	Body                     []byte
}

// receiver is a real webhook endpoint. It records every request and answers with status (200 by
// default); while hold is set it keeps requests open until released or the client gives up.
type receiver struct {
	srv     *httptest.Server
	status  atomic.Int32
	mu      sync.Mutex
	got     []received
	hold    chan struct{} // nil: answer at once
	arrived chan received
}

func newReceiver(t *testing.T, useTLS bool) *receiver {
	rc := &receiver{arrived: make(chan received, 1024)}
	rc.status.Store(200)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m := received{ID: r.Header.Get("webhook-id"), Timestamp: r.Header.Get("webhook-timestamp"), Signature: r.Header.Get("webhook-signature"), Header: r.Header.Clone(), Body: body}
		rc.mu.Lock()
		rc.got = append(rc.got, m)
		hold := rc.hold
		rc.mu.Unlock()
		rc.arrived <- m
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		w.WriteHeader(int(rc.status.Load()))
	})
	if useTLS {
		rc.srv = httptest.NewTLSServer(h)
	} else {
		rc.srv = httptest.NewServer(h)
	}
	t.Cleanup(func() {
		rc.release()
		rc.srv.Close()
	})
	return rc
}

// holdRequests makes the receiver keep the next requests open until release.
func (rc *receiver) holdRequests() {
	rc.mu.Lock()
	rc.hold = make(chan struct{})
	rc.mu.Unlock()
}

func (rc *receiver) release() {
	rc.mu.Lock()
	if rc.hold != nil {
		close(rc.hold)
		rc.hold = nil
	}
	rc.mu.Unlock()
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

func (rc *receiver) URL() string { return rc.srv.URL + "/hooks" }

// expectedSignature computes a Standard Webhooks v1 signature from the specification alone:
// HMAC-SHA256 keyed with the base64-decoded part of the secret after "whsec_", over
// "<webhook-id>.<webhook-timestamp>.<body>", base64-encoded, prefixed "v1,".
func expectedSignature(t *testing.T, secret, id, ts string, body []byte) string {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatalf("secret %q is not whsec_<base64>: %v", secret, err)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "."))
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// signedBy reports whether the request carries a valid signature for secret.
func signedBy(t *testing.T, m received, secret string) bool {
	return slices.Contains(strings.Fields(m.Signature), expectedSignature(t, secret, m.ID, m.Timestamp, m.Body))
}

// startWebhooks gives the env a dispatcher with deterministic jitter that trusts the local test
// certificates, registered as a job so advance-clock delivers retries.
func startWebhooks(e *testEnv, tweak ...func(*webhooks.Options)) *webhooks.Dispatcher {
	pool := x509.NewCertPool()
	pool.AddCert(e.srv.Certificate()) // every httptest TLS server shares this certificate
	o := webhooks.Options{DB: e.DB, Clock: e.Clock, Secrets: e.Config.Secrets, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		AllowPrivate: e.Config.AllowPrivateWebhooks, Timeout: 10 * time.Second, // generous: a loaded -race run must not turn a success into a timeout
		Jitter: func() float64 { return 0 }, TLSConfig: &tls.Config{RootCAs: pool}}
	for _, f := range tweak {
		f(&o)
	}
	d := webhooks.New(o)
	e.Jobs.Add(d.Job())
	return d
}

func (e *testEnv) deliver(d *webhooks.Dispatcher) {
	e.t.Helper()
	if err := d.Run(context.Background(), e.Clock.Now()); err != nil {
		e.t.Fatalf("deliver: %v", err)
	}
}

// advance moves the sandbox clock through the API, which runs every due job (CONTRACT 9).
func (e *testEnv) advance(d time.Duration) {
	e.t.Helper()
	r := e.Do("POST", "/v1/test-helpers/advance-clock", e.Test, map[string]any{"seconds": int64(d / time.Second)})
	if r.Status != 200 {
		e.t.Fatalf("advance clock: %d %s", r.Status, r.Raw)
	}
}

func (e *testEnv) createEndpoint(token, url string, events ...string) (id, secret string) {
	e.t.Helper()
	if len(events) == 0 {
		events = []string{"*"}
	}
	r := e.Do("POST", "/v1/webhook-endpoints", token, map[string]any{"url": url, "enabled_events": events})
	if r.Status != 200 {
		e.t.Fatalf("create endpoint %s: %d %s", url, r.Status, r.Raw)
	}
	return r.Str("id"), r.Str("secret")
}

func (e *testEnv) createCustomer(token string) resp {
	e.t.Helper()
	r := e.Do("POST", "/v1/customers", token, map[string]any{"email": "ana@example.com"})
	if r.Status != 200 {
		e.t.Fatalf("create customer: %d %s", r.Status, r.Raw)
	}
	return r
}

func (e *testEnv) deliveries(token, endpointID string, query ...string) []map[string]any {
	e.t.Helper()
	path := "/v1/webhook-endpoints/" + endpointID + "/deliveries"
	if len(query) > 0 {
		path += "?" + strings.Join(query, "&")
	}
	r := e.Do("GET", path, token, nil)
	if r.Status != 200 {
		e.t.Fatalf("list deliveries: %d %s", r.Status, r.Raw)
	}
	return r.Data()
}

// await waits for a receiver's next request; the deadline only guards against a hang.
func await(t *testing.T, rc *receiver, what string) received {
	t.Helper()
	select {
	case m := <-rc.arrived:
		return m
	case <-time.After(10 * time.Second):
		t.Fatalf("no request for %s", what)
		return received{}
	}
}

func TestWebhookEndpointLifecycle(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	r := e.Do("POST", "/v1/webhook-endpoints", e.Test, map[string]any{"url": "http://localhost:4242/hooks", "enabled_events": []string{"customer.created", "product.*"},
		"description": "local handler", "metadata": map[string]string{"team": "billing"}})
	is.Equal(r.Status, 200) // create
	id, secret := r.Str("id"), r.Str("secret")
	is.True(strings.HasPrefix(id, "we_"))
	is.True(strings.HasPrefix(secret, "whsec_")) // secret shown at creation
	is.Equal(r.Str("object"), "webhook_endpoint")
	is.Equal(r.Str("status"), "enabled")
	is.Equal(r.Body["livemode"], false)

	g := e.Do("GET", "/v1/webhook-endpoints/"+id, e.Test, nil)
	is.Equal(g.Status, 200)
	_, has := g.Body["secret"]
	is.True(!has) // never shown again
	is.True(!strings.Contains(string(g.Raw), secret))
	l := e.Do("GET", "/v1/webhook-endpoints", e.Test, nil)
	is.Equal(l.IDs(), []string{id})
	is.True(!strings.Contains(string(l.Raw), "whsec_"))

	u := e.Do("POST", "/v1/webhook-endpoints/"+id, e.Test, map[string]any{"url": "http://127.0.0.1:4243/other", "enabled_events": []string{"*"}, "description": nil, "metadata": map[string]string{"v": "2"}})
	is.Equal(u.Status, 200) // update
	is.Equal(u.Str("url"), "http://127.0.0.1:4243/other")
	is.Equal(u.Body["enabled_events"], []any{"*"})
	is.Equal(u.Body["description"], nil)
	is.Equal(u.Body["metadata"], map[string]any{"team": "billing", "v": "2"})
	_, has = u.Body["secret"]
	is.True(!has)

	p := e.Do("POST", "/v1/webhook-endpoints/"+id, e.Test, map[string]any{"disabled": true})
	is.Equal(p.Str("status"), "disabled")
	is.Equal(p.Str("disabled_reason"), "requested")
	p = e.Do("POST", "/v1/webhook-endpoints/"+id, e.Test, map[string]any{"disabled": false})
	is.Equal(p.Str("status"), "enabled")
	is.Equal(p.Body["disabled_reason"], nil)

	is.Equal(e.Do("GET", "/v1/webhook-endpoints/"+id, e.Live, nil).Status, 404) // per environment
	other, otherKey := e.NewOrg("Other", false)
	_ = other
	is.Equal(e.Do("GET", "/v1/webhook-endpoints/"+id, otherKey, nil).Status, 404) // per organization

	d := e.Do("DELETE", "/v1/webhook-endpoints/"+id, e.Test, nil)
	is.Equal(d.Status, 200)
	is.Equal(d.Body["deleted"], true)
	is.Equal(e.Do("GET", "/v1/webhook-endpoints/"+id, e.Test, nil).Status, 404)
}

func TestWebhookEndpointValidation(t *testing.T) {
	e := newEnv(t)
	ok := []string{"*"}
	for _, tc := range []struct {
		name      string
		live      bool
		body      map[string]any
		wantCode  string
		wantParam string
	}{
		{"no url", false, map[string]any{"enabled_events": ok}, "parameter_missing", "url"},
		{"no events", false, map[string]any{"url": "http://localhost/h"}, "parameter_missing", "enabled_events"},
		{"empty events", false, map[string]any{"url": "http://localhost/h", "enabled_events": []string{}}, "invalid_request", "enabled_events"},
		{"unknown event", false, map[string]any{"url": "http://localhost/h", "enabled_events": []string{"customer.exploded"}}, "invalid_request", "enabled_events"},
		{"unknown wildcard", false, map[string]any{"url": "http://localhost/h", "enabled_events": []string{"nothing.*"}}, "invalid_request", "enabled_events"},
		{"star mixed", false, map[string]any{"url": "http://localhost/h", "enabled_events": []string{"*", "customer.created"}}, "invalid_request", "enabled_events"},
		{"not a url", false, map[string]any{"url": "localhost/h", "enabled_events": ok}, "invalid_request", "url"},
		{"ftp", false, map[string]any{"url": "ftp://example.com/h", "enabled_events": ok}, "invalid_request", "url"},
		{"credentials", false, map[string]any{"url": "https://u:p@example.com/h", "enabled_events": ok}, "invalid_request", "url"},
		{"too long", false, map[string]any{"url": "https://example.com/" + strings.Repeat("a", 2048), "enabled_events": ok}, "invalid_request", "url"},
		{"description too long", false, map[string]any{"url": "http://localhost/h", "enabled_events": ok, "description": strings.Repeat("d", 5001)}, "invalid_request", "description"},
		{"bad metadata", false, map[string]any{"url": "http://localhost/h", "enabled_events": ok, "metadata": map[string]string{"bad key!": "v"}}, "invalid_request", "metadata"},
		{"unknown field", false, map[string]any{"url": "http://localhost/h", "enabled_events": ok, "secret": "whsec_x"}, "invalid_request", "secret"},
		{"events wrong type", false, map[string]any{"url": "http://localhost/h", "enabled_events": "*"}, "invalid_request", "enabled_events"},
		{"live http", true, map[string]any{"url": "http://example.com/h", "enabled_events": ok}, "invalid_request", "url"},
		{"live loopback", true, map[string]any{"url": "https://127.0.0.1/h", "enabled_events": ok}, "invalid_request", "url"},
		{"live private", true, map[string]any{"url": "https://10.0.0.8/h", "enabled_events": ok}, "invalid_request", "url"},
		{"live metadata service", true, map[string]any{"url": "https://169.254.169.254/latest/meta-data/", "enabled_events": ok}, "invalid_request", "url"},
		{"live ipv6 loopback", true, map[string]any{"url": "https://[::1]:8443/h", "enabled_events": ok}, "invalid_request", "url"},
		{"live localhost", true, map[string]any{"url": "https://localhost/h", "enabled_events": ok}, "invalid_request", "url"},
		// Numeric spellings of 127.0.0.1 that resolvers accept (inet_aton forms).
		{"live loopback as one number", true, map[string]any{"url": "https://2130706433/h", "enabled_events": ok}, "invalid_request", "url"},
		{"live loopback in hex", true, map[string]any{"url": "https://0x7f000001/h", "enabled_events": ok}, "invalid_request", "url"},
		{"live loopback short", true, map[string]any{"url": "https://127.1/h", "enabled_events": ok}, "invalid_request", "url"},
		{"live loopback in octal", true, map[string]any{"url": "https://017700000001/h", "enabled_events": ok}, "invalid_request", "url"},
		{"live loopback octal parts", true, map[string]any{"url": "https://0177.0.0.01/h", "enabled_events": ok}, "invalid_request", "url"},
		{"live private as one number", true, map[string]any{"url": "https://167772161/h", "enabled_events": ok}, "invalid_request", "url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			key := e.Test
			if tc.live {
				key = e.Live
			}
			r := e.Do("POST", "/v1/webhook-endpoints", key, tc.body)
			is.Equal(r.Status, 400)
			is.Equal(r.ErrCode(), tc.wantCode)
			is.Equal(r.ErrParam(), tc.wantParam)
		})
	}
	t.Run("rotation window", func(t *testing.T) {
		is := is.New(t)
		id, _ := e.createEndpoint(e.Test, "http://localhost/h")
		r := e.Do("POST", "/v1/webhook-endpoints/"+id+"/rotate-secret", e.Test, map[string]any{"expire_current_secret_in_seconds": 8 * 24 * 3600})
		is.Equal(r.Status, 400)
		is.Equal(r.ErrParam(), "expire_current_secret_in_seconds")
	})
	t.Run("update checks the url too", func(t *testing.T) {
		is := is.New(t)
		id, _ := e.createEndpoint(e.Test, "http://localhost/h")
		u := e.Do("POST", "/v1/webhook-endpoints/"+id, e.Test, map[string]any{"url": "gopher://localhost/h"})
		is.Equal(u.Status, 400)
		is.Equal(u.ErrParam(), "url")
		u = e.Do("POST", "/v1/webhook-endpoints/"+id, e.Test, map[string]any{"enabled_events": []string{"charge.teleported"}})
		is.Equal(u.Status, 400)
		is.Equal(u.ErrParam(), "enabled_events")
	})
	t.Run("live https on a name that does not resolve", func(t *testing.T) {
		// Accepted (no DNS, or not published yet); every delivery's connection is checked.
		is := is.New(t)
		r := e.Do("POST", "/v1/webhook-endpoints", e.Live, map[string]any{"url": "https://hooks.troco-unresolved.invalid/h", "enabled_events": ok})
		is.Equal(r.Status, 200)
		is.Equal(r.Body["livemode"], true)
	})
	t.Run("events filter", func(t *testing.T) {
		is := is.New(t)
		r := e.Do("GET", "/v1/events?type=customer.exploded", e.Test, nil)
		is.Equal(r.Status, 400)
		is.Equal(r.ErrParam(), "type")
	})
}

func TestWebhookDeliveryIsSignedAndCarriesTheEvent(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	rc := newReceiver(t, false)
	d := startWebhooks(e)
	epID, secret := e.createEndpoint(e.Test, rc.URL(), "customer.*")
	c := e.createCustomer(e.Test)
	e.deliver(d)

	got := rc.requests()
	is.Equal(len(got), 1) // one delivery
	m := got[0]
	is.True(strings.HasPrefix(m.ID, "evt_"))
	is.True(signedBy(t, m, secret)) // Standard Webhooks signature verifies
	is.Equal(len(strings.Fields(m.Signature)), 1)
	is.Equal(m.Header.Get("Content-Type"), "application/json")
	is.Equal(m.Header.Get("User-Agent"), "troco-webhooks/1")
	ts, err := strconv.ParseInt(m.Timestamp, 10, 64)
	is.NoErr(err)
	is.True(time.Unix(ts, 0).Sub(e.Clock.Now()).Abs() < time.Minute) // Unix seconds, now

	var ev map[string]any
	is.NoErr(json.Unmarshal(m.Body, &ev))
	is.Equal(ev["id"], m.ID) // webhook-id is the event id
	is.Equal(ev["object"], "event")
	is.Equal(ev["type"], "customer.created")
	is.Equal(ev["livemode"], false)
	is.Equal(ev["organization"], e.Org.ID)
	is.Equal(ev["request"], map[string]any{"id": c.Header.Get("Request-Id")}) // the request that caused it
	obj := ev["data"].(map[string]any)["object"].(map[string]any)
	is.Equal(obj["id"], c.Str("id"))
	api := e.Do("GET", "/v1/events/"+m.ID, e.Test, nil)
	var apiEv map[string]any
	is.NoErr(json.Unmarshal(api.Raw, &apiEv))
	is.Equal(apiEv, ev) // the body is the event of GET /v1/events/{id}

	ds := e.deliveries(e.Test, epID)
	is.Equal(len(ds), 1)
	is.True(strings.HasPrefix(ds[0]["id"].(string), "whd_"))
	is.Equal(ds[0]["object"], "webhook_delivery")
	is.Equal(ds[0]["event"], m.ID)
	is.Equal(ds[0]["event_type"], "customer.created")
	is.Equal(ds[0]["attempt"], 1.0)
	is.Equal(ds[0]["status"], "succeeded")
	is.Equal(ds[0]["http_status"], 200.0)
	is.Equal(ds[0]["error"], nil)
	is.Equal(ds[0]["next_attempt_at"], nil)

	e.deliver(d)
	is.Equal(len(rc.requests()), 1) // delivered once; nothing left
	u := e.Do("POST", "/v1/customers/"+c.Str("id"), e.Test, map[string]any{"name": "Ana"})
	is.Equal(u.Status, 200)
	e.deliver(d)
	got = rc.requests()
	is.Equal(len(got), 2)
	var upd map[string]any
	is.NoErr(json.Unmarshal(got[1].Body, &upd))
	is.Equal(upd["type"], "customer.updated")
	is.Equal(upd["data"].(map[string]any)["previous_attributes"], map[string]any{"name": nil}) // change carries previous values
}

func TestWebhookRetriesWithBackoffUntilSuccess(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	rc := newReceiver(t, false)
	rc.status.Store(500)
	d := startWebhooks(e)
	epID, secret := e.createEndpoint(e.Test, rc.URL())
	e.createCustomer(e.Test)
	e.deliver(d)

	ds := e.deliveries(e.Test, epID)
	is.Equal(len(ds), 1)
	is.Equal(ds[0]["status"], "failed")
	is.Equal(ds[0]["http_status"], 500.0)
	first, _ := domain.ParseTimestamp(ds[0]["created_at"].(string))
	next, _ := domain.ParseTimestamp(ds[0]["next_attempt_at"].(string))
	is.Equal(next.Sub(first), 30*time.Second) // first retry after 30 s

	e.advance(10 * time.Second) // not due yet
	is.Equal(len(rc.requests()), 1)
	e.advance(25 * time.Second) // due: advance-clock runs the delivery job
	got := rc.requests()
	is.Equal(len(got), 2)
	is.Equal(got[1].ID, got[0].ID)                // same webhook-id on a retry
	is.True(got[1].Timestamp != got[0].Timestamp) // fresh timestamp…
	is.True(got[1].Signature != got[0].Signature) // …and signature
	is.True(signedBy(t, got[1], secret))
	// The sandbox clock is now 35 s ahead, but webhook-timestamp stays on the wall clock that the
	// receiver's Standard Webhooks library compares it with (±5 minutes).
	for _, m := range got {
		ts, err := strconv.ParseInt(m.Timestamp, 10, 64)
		is.NoErr(err)
		is.True(time.Since(time.Unix(ts, 0)).Abs() < time.Minute) // webhook-timestamp is wall time
	}
	ds = e.deliveries(e.Test, epID)
	is.Equal(ds[0]["attempt"], 2.0)
	second, _ := domain.ParseTimestamp(ds[0]["created_at"].(string))
	next, _ = domain.ParseTimestamp(ds[0]["next_attempt_at"].(string))
	is.Equal(next.Sub(second), time.Minute) // then 1 min

	is.Equal(outboxRows(t, e), int64(1)) // the failed delivery waits in the outbox
	rc.status.Store(204)
	e.advance(61 * time.Second)
	got = rc.requests()
	is.Equal(len(got), 3)
	is.Equal(got[2].ID, got[0].ID)
	is.Equal(outboxRows(t, e), int64(0)) // delivered: the row left the outbox (the attempts stay in the deliveries)
	ds = e.deliveries(e.Test, epID)
	is.Equal(ds[0]["status"], "succeeded")
	is.Equal(ds[0]["attempt"], 3.0)
	is.Equal(len(e.deliveries(e.Test, epID, "status=failed")), 2)
	e.advance(time.Hour)
	is.Equal(len(rc.requests()), 3) // done

	ep := e.Do("GET", "/v1/webhook-endpoints/"+epID, e.Test, nil)
	is.Equal(ep.Body["failing"], false)
	is.Equal(ep.Body["failing_since"], nil) // the success ended the outage
}

func TestWebhookGivesUpAfterThreeDaysAndDisablesAfterALongOutage(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	dead := newReceiver(t, false)
	dead.status.Store(503)
	watcher := newReceiver(t, false)
	d := startWebhooks(e)
	epID, _ := e.createEndpoint(e.Test, dead.URL())
	e.createEndpoint(e.Test, watcher.URL(), "webhook_endpoint.disabled")
	e.createCustomer(e.Test)
	e.deliver(d)
	start := e.Clock.Now()
	for i := 0; i < 200 && e.Clock.Now().Sub(start) < 80*time.Hour; i++ {
		e.Clock.Advance(time.Hour)
		e.deliver(d)
	}
	got := dead.requests()
	is.True(len(got) > 10 && len(got) < 90) // exponential, then hourly, for three days
	ds := e.deliveries(e.Test, epID, "limit=1")
	is.Equal(ds[0]["status"], "failed")
	is.Equal(ds[0]["next_attempt_at"], nil) // the last try schedules nothing
	last, _ := domain.ParseTimestamp(ds[0]["created_at"].(string))
	is.True(last.Sub(start) <= 72*time.Hour)
	ep := e.Do("GET", "/v1/webhook-endpoints/"+epID, e.Test, nil)
	is.Equal(ep.Body["failing"], true) // marked failing
	is.Equal(ep.Str("status"), "enabled")
	is.True(ep.Body["failing_since"] != nil)

	// Keep failing: a new event's attempts after five days of outage disable the endpoint.
	e.Clock.Advance(3 * 24 * time.Hour)
	e.createCustomer(e.Test)
	e.deliver(d)
	ep = e.Do("GET", "/v1/webhook-endpoints/"+epID, e.Test, nil)
	is.Equal(ep.Str("status"), "disabled")
	is.Equal(ep.Str("disabled_reason"), "failing")
	evs := e.Do("GET", "/v1/events?type=webhook_endpoint.disabled", e.Test, nil)
	is.Equal(len(evs.Data()), 1) // with an event…
	is.Equal(evs.Data()[0]["data"].(map[string]any)["object"].(map[string]any)["id"], epID)
	e.deliver(d)
	w := watcher.requests()
	is.Equal(len(w), 1) // …delivered to the other endpoint
	is.True(strings.Contains(string(w[0].Body), epID))
	is.True(!strings.Contains(string(w[0].Body), "whsec_"))
	n := len(dead.requests())
	e.createCustomer(e.Test)
	e.Clock.Advance(time.Hour)
	e.deliver(d)
	is.Equal(len(dead.requests()), n) // disabled endpoints get nothing
}

func TestWebhookTimeoutIsAFailedAttempt(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	rc := newReceiver(t, false)
	rc.holdRequests()
	d := startWebhooks(e, func(o *webhooks.Options) { o.Timeout = 200 * time.Millisecond })
	epID, _ := e.createEndpoint(e.Test, rc.URL())
	e.createCustomer(e.Test)
	e.deliver(d)
	ds := e.deliveries(e.Test, epID)
	is.Equal(len(ds), 1)
	is.Equal(ds[0]["status"], "failed")
	is.Equal(ds[0]["http_status"], nil)
	is.True(strings.Contains(ds[0]["error"].(string), "timeout"))
	is.True(ds[0]["next_attempt_at"] != nil) // retried later
}

func TestWebhookDeliverySurvivesACrashMidRequest(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	rc := newReceiver(t, false)
	rc.holdRequests()
	d := startWebhooks(e)
	epID, secret := e.createEndpoint(e.Test, rc.URL())
	e.createCustomer(e.Test)

	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = d.Run(context.Background(), e.Clock.Now())
	}()
	first := await(t, rc, "the first attempt")
	// Crash: the database goes away while the request is in flight, so its result is never recorded.
	e.srv.Close()
	is.NoErr(e.DB.Close())
	rc.release()
	<-done

	// Restart on the same file with the same master key.
	e2 := reopen(t, e)
	d2 := startWebhooks(e2)
	e2.deliver(d2)
	is.Equal(len(rc.requests()), 1) // still leased to the dead worker
	e2.Clock.Advance(31 * time.Second)
	e2.deliver(d2)
	got := rc.requests()
	is.Equal(len(got), 2)         // delivered again after the lease expired
	is.Equal(got[1].ID, first.ID) // same webhook-id: the receiver can dedupe
	is.True(signedBy(t, got[1], secret))
	ds := e2.deliveries(e2.Test, epID)
	is.Equal(len(ds), 1) // the lost attempt left no record
	is.Equal(ds[0]["status"], "succeeded")
	is.Equal(ds[0]["attempt"], 2.0)
}

// TestWebhookStopCutsSlowAttemptsAndRequeuesThem: a graceful shutdown waits for a slow receiver
// only StopGrace, not the whole Timeout; the cut attempt is not recorded and is sent again at the
// next start without waiting for its lease.
func TestWebhookStopCutsSlowAttemptsAndRequeuesThem(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	rc := newReceiver(t, false)
	rc.holdRequests()
	defer rc.release()
	d := startWebhooks(e, func(o *webhooks.Options) { o.StopGrace = 200 * time.Millisecond })
	epID, _ := e.createEndpoint(e.Test, rc.URL())
	e.createCustomer(e.Test)
	d.Start()
	first := await(t, rc, "the first attempt")
	t0 := time.Now()
	d.Stop()
	is.True(time.Since(t0) < 5*time.Second) // not the 10 s Timeout
	rc.release()
	is.Equal(len(e.deliveries(e.Test, epID)), 0) // the cut attempt left no record

	d2 := startWebhooks(e)
	e.deliver(d2) // same clock: due again at once
	got := rc.requests()
	is.Equal(len(got), 2)
	is.Equal(got[1].ID, first.ID) // same webhook-id
	ds := e.deliveries(e.Test, epID)
	is.Equal(len(ds), 1)
	is.Equal(ds[0]["status"], "succeeded")
}

// reopen starts a new server and database on e's file, keeping its clock, keys and master key.
func reopen(t *testing.T, e *testEnv) *testEnv {
	t.Helper()
	d, err := db.Open(context.Background(), e.Path, db.Options{Schema: schemaSQL(t), PostgresSchema: pgSchemaSQL(t), Clock: e.Clock, Synchronous: "NORMAL"})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	cfg := e.Config
	cfg.DB = d
	cfg.Jobs = jobs.NewRunner(e.Clock, slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv := httptest.NewTLSServer(server.New(cfg))
	t.Cleanup(func() {
		srv.Close()
		d.Close()
	})
	return &testEnv{t: t, srv: srv, DB: d, Clock: e.Clock, Jobs: cfg.Jobs, Org: e.Org, Test: e.Test, Live: e.Live, Client: srv.Client(), Path: e.Path, Dir: e.Dir, Config: cfg}
}

func TestWebhookEnvironmentsAndOrganizationsAreIsolated(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, func(c *server.Config) { c.AllowPrivateWebhooks = true })
	testRc, liveRc, otherRc := newReceiver(t, false), newReceiver(t, true), newReceiver(t, false)
	d := startWebhooks(e)
	e.createEndpoint(e.Test, testRc.URL())
	e.createEndpoint(e.Live, liveRc.URL()) // https on loopback, allowed by --allow-private-webhooks
	_, otherKey := e.NewOrg("Other Ltda", false)
	e.createEndpoint(otherKey, otherRc.URL())

	tc := e.createCustomer(e.Test)
	lc := e.createCustomer(e.Live)
	oc := e.createCustomer(otherKey)
	e.deliver(d)
	body := func(rc *receiver) string {
		var sb strings.Builder
		for _, m := range rc.requests() {
			sb.Write(m.Body)
		}
		return sb.String()
	}
	is.Equal(len(testRc.requests()), 1)
	is.Equal(len(liveRc.requests()), 1)
	is.Equal(len(otherRc.requests()), 1)
	is.True(strings.Contains(body(testRc), tc.Str("id"))) // test event → test endpoint
	is.True(strings.Contains(body(testRc), `"livemode":false`))
	is.True(strings.Contains(body(liveRc), lc.Str("id"))) // live event → live endpoint
	is.True(strings.Contains(body(liveRc), `"livemode":true`))
	is.True(strings.Contains(body(otherRc), oc.Str("id")))              // other organization → its own
	is.True(!strings.Contains(body(testRc)+body(liveRc), oc.Str("id"))) // never another's
}

func TestWebhookDeliveryRefusesPrivateAddressesAtDialTime(t *testing.T) {
	is := is.New(t)
	// The server accepted the endpoint (as if DNS had answered a public address at creation);
	// the dispatcher runs without --allow-private-webhooks and dials "localhost" → 127.0.0.1.
	e := newEnv(t, func(c *server.Config) { c.AllowPrivateWebhooks = true })
	rc := newReceiver(t, true)
	d := startWebhooks(e, func(o *webhooks.Options) { o.AllowPrivate = false })
	url := strings.Replace(rc.URL(), "127.0.0.1", "localhost", 1)
	epID, _ := e.createEndpoint(e.Live, url)
	e.createCustomer(e.Live)
	e.deliver(d)
	is.Equal(len(rc.requests()), 0) // nothing reached the private address
	ds := e.deliveries(e.Live, epID)
	is.Equal(len(ds), 1)
	is.Equal(ds[0]["status"], "failed")
	is.True(strings.Contains(ds[0]["error"].(string), "127.0.0.1"))
	is.True(strings.Contains(ds[0]["error"].(string), "private"))
}

func TestWebhookSecretRotationOverlap(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	rc := newReceiver(t, false)
	d := startWebhooks(e)
	epID, oldSecret := e.createEndpoint(e.Test, rc.URL())
	r := e.Do("POST", "/v1/webhook-endpoints/"+epID+"/rotate-secret", e.Test, map[string]any{"expire_current_secret_in_seconds": 3600})
	is.Equal(r.Status, 200)
	newSecret := r.Str("secret")
	is.True(strings.HasPrefix(newSecret, "whsec_")) // shown once, at rotation
	is.True(newSecret != oldSecret)
	is.True(r.Body["previous_secret_expires_at"] != nil)
	g := e.Do("GET", "/v1/webhook-endpoints/"+epID, e.Test, nil)
	is.True(!strings.Contains(string(g.Raw), newSecret))

	e.createCustomer(e.Test)
	e.deliver(d)
	m := rc.requests()[0]
	is.Equal(len(strings.Fields(m.Signature)), 2) // both secrets sign during the overlap
	is.True(signedBy(t, m, newSecret))
	is.True(signedBy(t, m, oldSecret))

	e.Clock.Advance(3601 * time.Second)
	e.createCustomer(e.Test)
	e.deliver(d)
	m = rc.requests()[1]
	is.Equal(len(strings.Fields(m.Signature)), 1) // only the new one after the window
	is.True(signedBy(t, m, newSecret))
	is.True(!signedBy(t, m, oldSecret))

	r = e.Do("POST", "/v1/webhook-endpoints/"+epID+"/rotate-secret", e.Test, map[string]any{"expire_current_secret_in_seconds": 0})
	is.Equal(r.Status, 200)
	is.Equal(r.Body["previous_secret_expires_at"], nil) // immediate rotation: no overlap
	e.createCustomer(e.Test)
	e.deliver(d)
	m = rc.requests()[2]
	is.Equal(len(strings.Fields(m.Signature)), 1)
	is.True(signedBy(t, m, r.Str("secret")))
}

func TestWebhookManualRedelivery(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	rc := newReceiver(t, false)
	d := startWebhooks(e)
	epID, _ := e.createEndpoint(e.Test, rc.URL(), "customer.created")
	e.createCustomer(e.Test)
	e.deliver(d)
	evID := rc.requests()[0].ID

	r := e.Do("POST", "/v1/events/"+evID+"/redeliver", e.Test, map[string]any{"webhook_endpoint": epID})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("object"), "event_redelivery")
	is.Equal(r.Body["webhook_endpoints"], []any{epID})
	e.deliver(d)
	got := rc.requests()
	is.Equal(len(got), 2)
	is.Equal(got[1].ID, evID) // the same event, the same webhook-id
	ds := e.deliveries(e.Test, epID, "event="+evID)
	is.Equal(len(ds), 2)
	is.Equal(ds[0]["attempt"], 2.0)

	is.Equal(e.Do("POST", "/v1/events/"+evID+"/redeliver", e.Test, nil).Status, 200) // every subscribed endpoint
	e.deliver(d)
	is.Equal(len(rc.requests()), 3)

	is.Equal(e.Do("POST", "/v1/events/evt_nope/redeliver", e.Test, nil).Status, 404)
	is.Equal(e.Do("POST", "/v1/events/"+evID+"/redeliver", e.Live, nil).Status, 404) // other environment
	other, _ := e.createEndpoint(e.Test, rc.URL(), "product.created")
	nr := e.Do("POST", "/v1/events/"+evID+"/redeliver", e.Test, map[string]any{"webhook_endpoint": other})
	is.Equal(nr.Status, 400) // not subscribed
	is.Equal(nr.ErrParam(), "webhook_endpoint")
	e.Do("POST", "/v1/webhook-endpoints/"+epID, e.Test, map[string]any{"disabled": true})
	is.Equal(e.Do("POST", "/v1/events/"+evID+"/redeliver", e.Test, map[string]any{"webhook_endpoint": epID}).Status, 409) // disabled
}

func TestWebhookSubscriptionsAndPausedEndpoints(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	products, all := newReceiver(t, false), newReceiver(t, false)
	d := startWebhooks(e)
	e.createEndpoint(e.Test, products.URL(), "product.*")
	allID, _ := e.createEndpoint(e.Test, all.URL())
	e.Do("POST", "/v1/webhook-endpoints/"+allID, e.Test, map[string]any{"disabled": true})
	e.createCustomer(e.Test)
	p := e.Do("POST", "/v1/products", e.Test, map[string]any{"name": "Café"})
	is.Equal(p.Status, 200)
	e.deliver(d)
	is.Equal(len(products.requests()), 1) // only product.* events
	is.True(strings.Contains(string(products.requests()[0].Body), `"type":"product.created"`))
	is.Equal(len(all.requests()), 0) // paused: nothing, not even later
	e.Do("POST", "/v1/webhook-endpoints/"+allID, e.Test, map[string]any{"disabled": false})
	e.deliver(d)
	is.Equal(len(all.requests()), 0)
	e.createCustomer(e.Test)
	e.deliver(d)
	is.Equal(len(all.requests()), 1) // resumed: new events only
}

func TestSlowEndpointDelaysNeitherOthersNorTheAPI(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	slow, fast := newReceiver(t, false), newReceiver(t, false)
	slow.holdRequests()
	d := startWebhooks(e, func(o *webhooks.Options) { o.Timeout = 30 * time.Second })
	e.createEndpoint(e.Test, slow.URL())
	e.createEndpoint(e.Test, fast.URL())
	d.Start()
	defer d.Stop()
	defer slow.release()
	e.createCustomer(e.Test)
	await(t, slow, "the slow endpoint")
	await(t, fast, "the fast endpoint") // delivered while the slow one still holds its request
	c := e.createCustomer(e.Test)       // the API answers meanwhile
	m := await(t, fast, "the second event")
	is.True(strings.Contains(string(m.Body), c.Str("id")))
	slow.release()
	await(t, slow, "the slow endpoint's second event")
}

func TestEventsList(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	c := e.createCustomer(e.Test)
	e.Do("POST", "/v1/customers/"+c.Str("id"), e.Test, map[string]any{"name": "Ana"})
	e.Do("POST", "/v1/products", e.Test, map[string]any{"name": "Café", "default_price_data": map[string]any{"unit_amount": 500}})
	all := e.Do("GET", "/v1/events", e.Test, nil)
	is.Equal(all.Status, 200)
	types := func(r resp) []string {
		var out []string
		for _, m := range r.Data() {
			out = append(out, m["type"].(string))
		}
		return out
	}
	is.Equal(types(all), []string{"price.created", "product.created", "customer.updated", "customer.created"}) // newest first
	is.Equal(types(e.Do("GET", "/v1/events?type=customer.*", e.Test, nil)), []string{"customer.updated", "customer.created"})
	is.Equal(types(e.Do("GET", "/v1/events?type=price.created", e.Test, nil)), []string{"price.created"})
	p1 := e.Do("GET", "/v1/events?limit=2", e.Test, nil)
	is.Equal(p1.Body["has_more"], true)
	p2 := e.Do("GET", "/v1/events?limit=2&starting_after="+p1.IDs()[1], e.Test, nil)
	is.Equal(types(p2), []string{"customer.updated", "customer.created"})
	future := e.Clock.Now().Add(time.Hour).Unix()
	is.Equal(len(e.Do("GET", fmt.Sprintf("/v1/events?created_at[gte]=%d", future), e.Test, nil).Data()), 0)
	is.Equal(len(e.Do("GET", "/v1/events", e.Live, nil).Data()), 0) // per environment
	upd := e.Do("GET", "/v1/events?type=customer.updated", e.Test, nil).Data()[0]
	is.Equal(upd["data"].(map[string]any)["previous_attributes"], map[string]any{"name": nil})
}

func TestWebhookSecretIsNeverStoredInClear(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	body := map[string]any{"url": "http://localhost:4242/hooks", "enabled_events": []string{"*"}}
	r := e.Do("POST", "/v1/webhook-endpoints", e.Test, body, "Idempotency-Key", "create-1")
	is.Equal(r.Status, 200)
	secret := r.Str("secret")
	is.True(strings.HasPrefix(secret, "whsec_"))
	replay := e.Do("POST", "/v1/webhook-endpoints", e.Test, body, "Idempotency-Key", "create-1")
	is.Equal(replay.Header.Get("Idempotent-Replayed"), "true")
	is.Equal(replay.Str("id"), r.Str("id")) // the same endpoint…
	_, has := replay.Body["secret"]
	is.True(!has) // …without the secret, which was never stored
	rot := e.Do("POST", "/v1/webhook-endpoints/"+r.Str("id")+"/rotate-secret", e.Test, nil, "Idempotency-Key", "rotate-1")
	is.Equal(rot.Status, 200)
	rotated := rot.Str("secret")
	is.True(strings.HasPrefix(rotated, "whsec_"))

	if dbtest.Postgres() {
		return // the files below are SQLite's
	}
	files, err := filepath.Glob(e.Path + "*") // the database and its WAL
	is.NoErr(err)
	is.True(len(files) > 0)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		is.NoErr(err)
		is.True(!bytes.Contains(raw, []byte(strings.TrimPrefix(secret, "whsec_"))))  // not in clear anywhere
		is.True(!bytes.Contains(raw, []byte(strings.TrimPrefix(rotated, "whsec_")))) // nor the rotated one
	}
}

// TestTimeTravelDeliversTheEventsJobsEmit: advance-clock runs the jobs that emit events (here the
// 24 h checkout expiry) before the delivery job, so their webhooks arrive within the same call.
func TestTimeTravelDeliversTheEventsJobsEmit(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	rc := newReceiver(t, false)
	startWebhooks(e)
	e.createEndpoint(e.Test, rc.URL(), "checkout.session.*")
	p := e.Do("POST", "/v1/products", e.Test, map[string]any{"name": "Café", "default_price_data": map[string]any{"unit_amount": 1500}})
	is.Equal(p.Status, 200)
	cs := e.Do("POST", "/v1/checkout-sessions", e.Test, map[string]any{"line_items": []any{map[string]any{"price": p.Str("default_price"), "quantity": 1}}})
	is.Equal(cs.Status, 200)
	e.advance(25 * time.Hour)
	var types []string
	for _, m := range rc.requests() {
		var ev map[string]any
		is.NoErr(json.Unmarshal(m.Body, &ev))
		types = append(types, ev["type"].(string))
	}
	is.True(slices.Contains(types, "checkout.session.created"))
	is.True(slices.Contains(types, "checkout.session.expired")) // emitted and delivered by the same advance
}

// outboxRows counts the webhook deliveries still to be made.
func outboxRows(t *testing.T, e *testEnv) int64 {
	t.Helper()
	var n int64
	err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		var err error
		n, _, err = tx.WebhookBacklog()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
