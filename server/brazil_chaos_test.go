package server_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/matryer/is"
)

var chaosSettings = map[string]any{"seed": 42, "drop_rate": 2500, "duplicate_rate": 3000, "max_delay_seconds": 2, "reorder": true, "fail_first_attempts": 1}

// chaosRun sends n customer.created events to a real receiver through an endpoint with chaos and
// time-travels until every event was received; it returns what chaos did to each attempt (by
// event number and attempt) and the creation indexes of the events in the order they first
// arrived.
func chaosRun(t *testing.T, n int) (decisions []string, firstArrivals []int, duplicates int) {
	is := is.New(t)
	e := newEnv(t)
	d := startWebhooks(e)
	rc := newReceiver(t, false)
	ep, secret := e.createEndpoint(e.Test, rc.URL(), "customer.created")
	r := e.Do("POST", "/v1/webhook-endpoints/"+ep, e.Test, map[string]any{"chaos": chaosSettings})
	is.Equal(r.Status, 200)
	is.Equal(dig(r.Body, "chaos.seed"), float64(42))

	index := map[string]int{} // event id → creation index
	for i := range n {
		cus := e.createCustomer(e.Test).Str("id")
		evs := e.payEvents(e.Test, "customer.created", cus)
		is.Equal(len(evs), 1)
		index[evs[0]["id"].(string)] = i
	}
	e.deliver(d)
	seen := map[string]int{}
	for round := 0; round < 30 && len(seen) < n; round++ {
		e.advance(5 * time.Minute) // runs the delivery job: holds and retries come due
		seen = map[string]int{}
		for _, m := range rc.requests() {
			seen[m.ID]++
		}
	}
	for id := range index {
		is.True(seen[id] >= 1) // every event at least once
	}
	firsts := map[string]bool{}
	for _, m := range rc.requests() {
		is.True(signedBy(t, m, secret)) // duplicates are signed like the original
		var ev map[string]any
		is.NoErr(json.Unmarshal(m.Body, &ev))
		is.Equal(ev["id"], m.ID) // a duplicate carries the same webhook-id and body
		if !firsts[m.ID] {
			firsts[m.ID] = true
			firstArrivals = append(firstArrivals, index[m.ID])
		} else {
			duplicates++
		}
	}
	all := e.deliveries(e.Test, ep, "limit=100")
	for _, a := range all {
		c, ok := a["chaos"].(map[string]any)
		is.True(ok) // every attempt records what chaos did
		seq := int(c["sequence"].(float64))
		is.True(seq >= 1 && seq <= n)
		decisions = append(decisions, fmt.Sprintf("event %d attempt %v: delayed %v reordered %v dropped %v forced %v duplicated %v status %v",
			seq, a["attempt"], c["delayed_seconds"], c["reordered"], c["dropped"], c["forced_failure"], c["duplicated"], a["status"]))
		if c["forced_failure"] == true || c["dropped"] == true {
			is.Equal(a["status"], "failed") // not sent, retried as usual
			is.Equal(a["http_status"], nil)
		}
	}
	slices.Sort(decisions)
	return decisions, firstArrivals, duplicates
}

// TestWebhookChaos: with duplicates, drops, forced failures, delays and reordering, the receiver
// still sees every event at least once; the same seed gives the same chaos on a second run.
func TestWebhookChaos(t *testing.T) {
	is := is.New(t)
	const n = 12
	d1, arrivals, dups := chaosRun(t, n)
	d2, _, dups2 := chaosRun(t, n)
	is.Equal(d1, d2) // deterministic for the seed
	is.Equal(dups, dups2)
	is.True(dups > 0)                   // some events arrived twice
	is.True(!slices.IsSorted(arrivals)) // and out of creation order
	t.Logf("first arrivals (creation order): %v; %d duplicates; %d attempts", arrivals, dups, len(d1))
}

// TestWebhookChaosRefused: a live endpoint refuses chaos; bad settings are 400 naming chaos;
// null turns chaos off.
func TestWebhookChaosRefused(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	r := e.Do("POST", "/v1/webhook-endpoints", e.Live, map[string]any{"url": "https://example.com/hooks", "enabled_events": []string{"*"}, "chaos": chaosSettings})
	is.Equal(r.Status, 400)
	is.Equal(r.ErrParam(), "chaos")
	live := e.Do("POST", "/v1/webhook-endpoints", e.Live, map[string]any{"url": "https://example.com/hooks", "enabled_events": []string{"*"}})
	is.Equal(live.Status, 200)
	r = e.Do("POST", "/v1/webhook-endpoints/"+live.Str("id"), e.Live, map[string]any{"chaos": map[string]any{"seed": 1}})
	is.Equal(r.Status, 400) // chaos on a live endpoint
	is.Equal(r.ErrParam(), "chaos")
	is.Equal(e.Do("GET", "/v1/webhook-endpoints/"+live.Str("id"), e.Live, nil).Body["chaos"], nil)

	ep, _ := e.createEndpoint(e.Test, "http://127.0.0.1:9/hooks")
	for _, bad := range []map[string]any{
		{"seed": 1, "drop_rate": 10001},
		{"seed": 1, "drop_rate": 10000},
		{"seed": 1, "duplicate_rate": -1},
		{"seed": 1, "max_delay_seconds": 3601},
		{"seed": 1, "fail_first_attempts": 11},
	} {
		r := e.Do("POST", "/v1/webhook-endpoints/"+ep, e.Test, map[string]any{"chaos": bad})
		is.Equal(r.Status, 400)
		is.Equal(r.ErrParam(), "chaos")
	}
	r = e.Do("POST", "/v1/webhook-endpoints/"+ep, e.Test, map[string]any{"chaos": map[string]any{"seed": 1, "bogus": true}})
	is.Equal(r.Status, 400) // unknown field inside chaos
	r = e.Do("POST", "/v1/webhook-endpoints/"+ep, e.Test, map[string]any{"chaos": chaosSettings})
	is.Equal(r.Status, 200)
	r = e.Do("POST", "/v1/webhook-endpoints/"+ep, e.Test, map[string]any{"chaos": nil})
	is.Equal(r.Status, 200)
	is.Equal(r.Body["chaos"], nil) // off again
}
