package server_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/db/dbtest"
	"troco/server/domain"
)

// TestTwoReplicas: two servers on one database (PostgreSQL when the tests run on it), each with
// its own clock, job runner and webhook dispatcher, behave as one service: payments made through
// either are seen by both, a duplicate confirm sent to both at once charges once, delayed PIX
// settlements due after a time travel made on one replica settle and show on the other, and
// every event reaches a real receiver at least once even when the replica delivering it dies
// mid-request.
func TestTwoReplicas(t *testing.T) {
	is := is.New(t)
	a := newEnv(t)
	b := a.replica()
	rc := newReceiver(t, false)
	da, db2 := startWebhooks(a), startWebhooks(b)
	_, secret := a.createEndpoint(a.Test, rc.URL(), "payment_intent.succeeded")
	envs := []*testEnv{a, b}

	// Card payments alternately through each replica, each confirm retried on the other with
	// the same Idempotency-Key: the retry replays the answer and charges nothing more.
	var cards []string
	for i := range 6 {
		e, other := envs[i%2], envs[(i+1)%2]
		pi := e.payIntent(e.Test, int64(1000+i), nil).Str("id")
		key := fmt.Sprintf("confirm-%d", i)
		body := map[string]any{"payment_method_type": "credit_card", "card": payCard("4242424242424242")}
		r := e.payConfirm(e.Test, pi, body, "Idempotency-Key", key)
		is.Equal(r.Status, 200)
		is.Equal(r.Str("status"), "succeeded")
		again := other.payConfirm(other.Test, pi, body, "Idempotency-Key", key)
		is.Equal(again.Status, 200)
		is.Equal(again.Header.Get("Idempotent-Replayed"), "true") // replayed by the other replica
		cards = append(cards, pi)
	}

	// The same confirm sent to both replicas at the same instant: one charge.
	pi := a.payIntent(a.Test, 5000, nil).Str("id")
	body := map[string]any{"payment_method_type": "credit_card", "card": payCard("4242424242424242")}
	var wg sync.WaitGroup
	statuses := make([]int, 2)
	for i, e := range envs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = e.payConfirm(e.Test, pi, body, "Idempotency-Key", "race").Status
		}()
	}
	wg.Wait()
	for _, s := range statuses {
		is.True(s == 200 || s == 409) // the loser replays the answer or is told to retry
	}
	cards = append(cards, pi)
	is.Equal(a.payCount(a.Test, "/v1/charges?payment_intent="+pi), 1) // charged once
	is.Equal(b.payCount(b.Test, "/v1/charges"), len(cards))           // both see every charge

	// Delayed PIX settlements: created on b, the clock moved on a, seen settled on b.
	var pixes []string
	for range 3 {
		id := b.payIntent(b.Test, 2500, nil).Str("id")
		r := b.payConfirm(b.Test, id, map[string]any{"payment_method_type": "pix", "customer_email": "succeed_delayed@example.com"})
		is.Equal(r.Status, 200)
		is.Equal(r.Str("status"), "pending")
		pixes = append(pixes, id)
	}
	a.advance(a.Config.SimDelay + time.Minute)
	for _, id := range pixes {
		r := b.Do("GET", "/v1/payment-intents/"+id, b.Test, nil)
		is.Equal(r.Str("status"), "succeeded") // settled exactly once, seen through the other replica
	}
	if dbtest.Postgres() {
		is.True(b.Clock.Now().Sub(a.Clock.Now()) > -5*time.Second) // b's clock caught up with a's time travel
	} else {
		b.Clock.AdvanceTo(a.Clock.Offset()) // SQLite serves one process: its clock is not shared
	}

	// Webhooks: both dispatchers deliver at once; every event reaches the receiver.
	want := len(cards) + len(pixes)
	runBoth := func() {
		var wg sync.WaitGroup
		for i, d := range []interface {
			Run(context.Context, time.Time) error
		}{da, db2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := d.Run(context.Background(), envs[i].Clock.Now()); err != nil {
					t.Errorf("deliver: %v", err)
				}
			}()
		}
		wg.Wait()
	}
	seen := map[string]int{}
	deadline := time.Now().Add(30 * time.Second)
	for len(seen) < want && time.Now().Before(deadline) {
		runBoth()
		seen = map[string]int{}
		for _, m := range rc.requests() {
			is.True(signedBy(t, m, secret))
			seen[m.ID]++
		}
	}
	is.Equal(len(seen), want) // every event delivered, at least once

	// Sessions are rows: a dashboard sign-in made on a works on b, and so does the hosted page of
	// a checkout session created through a.
	dc := a.signedIn(a.Org.ID, "ops@example.com", domain.RoleAdmin)
	dc.e = b
	st, page, _ := dc.get("/dashboard/test")
	is.Equal(st, 200) // signed in on the other replica
	is.True(strings.Contains(page, "ops@example.com"))
	cs := a.coSimple(a.Test, nil)
	st, _, _ = b.openPage(t, cs.Str("url"))
	is.Equal(st, 200)

	// A replica dies mid-delivery: the other delivers the event after the lease expires.
	for len(rc.arrived) > 0 {
		<-rc.arrived // the requests above
	}
	before := len(rc.requests())
	rc.holdRequests()
	pi = b.payIntent(b.Test, 777, nil).Str("id")
	is.Equal(b.payConfirm(b.Test, pi, body).Status, 200)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = da.Run(context.Background(), a.Clock.Now())
	}()
	first := await(t, rc, "the attempt of the replica that dies")
	a.srv.Close()
	is.NoErr(a.DB.Close())
	rc.release()
	<-done
	b.Clock.Advance(31 * time.Second) // past the dead replica's lease
	b.deliver(db2)
	got := rc.requests()
	is.True(len(got) >= before+2)
	is.Equal(got[len(got)-1].ID, first.ID) // the same event again, from the surviving replica
	is.Equal(b.payCount(b.Test, "/v1/charges?payment_intent="+pi), 1)
}
