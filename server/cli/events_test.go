package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/db"
	"troco/server"
	"troco/server/clock"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/secrets"
	"troco/server/webhooks"
)

// syncBuffer is a bytes.Buffer safe for a command writing while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func testCLIEnv(t *testing.T, out io.Writer, args ...string) Env {
	schema, err := os.ReadFile(filepath.Join("..", "..", "schema.sql"))
	if err != nil {
		t.Fatal(err)
	}
	return Env{Args: args, Getenv: func(string) string { return "" }, Stdout: out, Stderr: io.Discard, Schema: string(schema)}
}

// cliDB prepares a database file with one organization, as `troco serve` would leave it.
func cliDB(t *testing.T) (path string, org *domain.Organization) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "troco.db")
	var out bytes.Buffer
	if err := Run(context.Background(), testCLIEnv(t, &out, "org", "create", "--name", "Acme", "--db", path, "--json")); err != nil {
		t.Fatalf("org create: %v", err)
	}
	org = &domain.Organization{}
	if err := json.Unmarshal(out.Bytes(), org); err != nil {
		t.Fatalf("org create output: %v: %s", err, out.String())
	}
	return path, org
}

func TestTriggerDeliversToARunningDispatcher(t *testing.T) {
	is := is.New(t)
	path, org := cliDB(t)
	var hits atomic.Int32
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(204)
	}))
	defer rc.Close()

	// The "server" side: the same file, a keyring, an endpoint and a running dispatcher.
	schema, _ := os.ReadFile(filepath.Join("..", "..", "schema.sql"))
	store, err := db.Open(context.Background(), path, db.Options{Schema: string(schema), Clock: clock.Real{}})
	is.NoErr(err)
	defer store.Close()
	keys := secrets.Random()
	err = store.Write(context.Background(), func(tx *db.Tx) error {
		_, err := core.CreateWebhookEndpoint(tx, domain.Actor{Scope: domain.Scope{OrgID: org.ID}}, core.WebhookEnv{Secrets: keys},
			core.WebhookEndpointParams{URL: text(rc.URL + "/hooks"), EnabledEvents: domain.Opt[[]string]{Set: true, V: []string{"customer.*"}}})
		return err
	})
	is.NoErr(err)
	d := webhooks.New(webhooks.Options{DB: store, Secrets: keys, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), PollInterval: 20 * time.Millisecond})
	d.Start()
	defer d.Stop()

	var out syncBuffer
	err = Run(context.Background(), testCLIEnv(t, &out, "trigger", "customer.updated", "--db", path))
	is.NoErr(err)
	s := out.String()
	is.True(strings.Contains(s, "customer.created"))   // the objects it had to create
	is.True(strings.Contains(s, "customer.updated"))   // the event asked for
	is.True(strings.Contains(s, "succeeded HTTP 204")) // each delivery shown
	is.Equal(strings.Count(s, "→"), 2)
	is.Equal(hits.Load(), int32(2))

	var js bytes.Buffer
	err = Run(context.Background(), testCLIEnv(t, &js, "trigger", "product.created", "--db", path, "--json"))
	is.NoErr(err)
	var res triggerResult
	is.NoErr(json.Unmarshal(js.Bytes(), &res))
	is.Equal(len(res.Events), 1)
	is.Equal(res.Events[0].Type, "product.created")
	is.Equal(res.Events[0].Livemode, false)
	is.Equal(len(res.Deliveries), 0) // the endpoint subscribes to customer.* only
}

func TestTriggerRejectsUnknownAndUnsupportedTypes(t *testing.T) {
	is := is.New(t)
	path, _ := cliDB(t)
	err := Run(context.Background(), testCLIEnv(t, io.Discard, "trigger", "customer.exploded", "--db", path))
	is.True(err != nil && strings.Contains(err.Error(), "unknown event type"))
	err = Run(context.Background(), testCLIEnv(t, io.Discard, "trigger", "webhook_endpoint.disabled", "--db", path))
	is.True(err != nil && strings.Contains(err.Error(), "does not support"))
	is.True(strings.Contains(err.Error(), "customer.created")) // lists what is supported
}

func TestEventsTailFollowsNewEvents(t *testing.T) {
	is := is.New(t)
	path, _ := cliDB(t)
	is.NoErr(Run(context.Background(), testCLIEnv(t, io.Discard, "trigger", "customer.created", "--db", path, "--wait", "0"))) // before the tail: not shown
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, status syncBuffer
	done := make(chan error, 1)
	tailEnv := testCLIEnv(t, &out, "events", "tail", "--db", path, "--env", "test", "--type", "product.*", "--interval", "20ms")
	tailEnv.Stderr = &status
	go func() { done <- Run(ctx, tailEnv) }()
	waitFor(t, func() bool { return strings.Contains(status.String(), "following events") }) // it has its starting position
	is.NoErr(Run(context.Background(), testCLIEnv(t, io.Discard, "trigger", "price.created", "--db", path, "--wait", "0")))
	waitFor(t, func() bool { return strings.Contains(out.String(), "product.created") })
	cancel()
	is.NoErr(<-done) // Ctrl-C ends it cleanly
	s := out.String()
	is.True(strings.Contains(s, "product.created"))
	is.True(!strings.Contains(s, "price.created"))    // --type filters
	is.True(!strings.Contains(s, "customer.created")) // only events after the start
}

// waitFor polls cond; the deadline only guards against a hang.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 500 {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("condition not met within 10 s")
}

// TestTriggerEmitsThePaymentTypes runs every payment, checkout, coupon, invoice and setup
// trigger and checks the type asked for is among the events it wrote (in test mode, for the
// organization).
func TestTriggerEmitsThePaymentTypes(t *testing.T) {
	path, org := cliDB(t)
	all := maps.Clone(paymentTriggers)
	maps.Copy(all, billingTriggers)
	for typ := range all {
		t.Run(typ, func(t *testing.T) {
			is := is.New(t)
			var js bytes.Buffer
			err := Run(context.Background(), testCLIEnv(t, &js, "trigger", typ, "--db", path, "--wait", "0", "--json"))
			is.NoErr(err)
			var res triggerResult
			is.NoErr(json.Unmarshal(js.Bytes(), &res))
			found := false
			for _, e := range res.Events {
				is.Equal(e.Livemode, false)
				is.Equal(e.Organization, org.ID)
				found = found || e.Type == typ
			}
			is.True(found) // the type asked for was emitted
		})
	}
}

// TestTriggerUsesServesClock: after sandbox time travel, triggered objects and their events are
// dated on serve's clock (real time plus the recorded offset), like the API's.
func TestTriggerUsesServesClock(t *testing.T) {
	is := is.New(t)
	path, _ := cliDB(t)
	schema, _ := os.ReadFile(filepath.Join("..", "..", "schema.sql"))
	store, err := db.Open(context.Background(), path, db.Options{Schema: string(schema), Clock: clock.Real{}})
	is.NoErr(err)
	is.NoErr(store.Write(context.Background(), func(tx *db.Tx) error {
		return tx.PutSetting(server.ClockOffsetSetting, strconv.Itoa(3*24*3600))
	}))
	store.Close()

	var js bytes.Buffer
	is.NoErr(Run(context.Background(), testCLIEnv(t, &js, "trigger", "checkout.session.created", "--db", path, "--wait", "0", "--json")))
	var res triggerResult
	is.NoErr(json.Unmarshal(js.Bytes(), &res))
	is.True(len(res.Events) > 0)
	ahead := res.Events[0].CreatedAt.Sub(time.Now())
	is.True(ahead > 71*time.Hour && ahead < 73*time.Hour) // three days ahead, as serve dates it
}

// TestTriggerReportsTheEmailsQueued: a triggered payment queues its customer e-mail for the
// sandbox mailbox, and trigger says so.
func TestTriggerReportsTheEmailsQueued(t *testing.T) {
	is := is.New(t)
	path, _ := cliDB(t)
	var js bytes.Buffer
	is.NoErr(Run(context.Background(), testCLIEnv(t, &js, "trigger", "refund.created", "--db", path, "--wait", "0", "--json")))
	var res triggerResult
	is.NoErr(json.Unmarshal(js.Bytes(), &res))
	kinds := map[string]bool{}
	for _, m := range res.Emails {
		is.True(strings.HasPrefix(m.ID, "em_"))
		kinds[m.Kind] = true
	}
	is.True(kinds["refund"]) // the refund notice
	var out bytes.Buffer
	is.NoErr(Run(context.Background(), testCLIEnv(t, &out, "trigger", "refund.created", "--db", path, "--wait", "0")))
	is.True(strings.Contains(out.String(), "refund queued for the sandbox mailbox"))
}
