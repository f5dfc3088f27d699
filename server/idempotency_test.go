package server_test

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
)

// countCustomers returns how many customers of the token's scope have email.
func countCustomers(t *testing.T, e *testEnv, token, email string) int {
	t.Helper()
	r := e.Do("GET", "/v1/customers?limit=100&email="+url.QueryEscape(email), token, nil)
	if r.Status != 200 {
		t.Fatalf("list customers: %d %s", r.Status, r.Raw)
	}
	return len(r.Data())
}

// TestIdempotency covers SPEC 8 rule 1 and 4.11.
func TestIdempotency(t *testing.T) {
	e := newEnv(t)

	t.Run("same key and body replays the stored response", func(t *testing.T) {
		is := is.New(t)
		body := map[string]any{"email": "replay@example.com", "metadata": map[string]string{"order": "1"}}
		first := e.Do("POST", "/v1/customers", e.Test, body, "Idempotency-Key", "replay-1")
		is.Equal(first.Status, 200)                           // created
		is.Equal(first.Header.Get("Idempotent-Replayed"), "") // a first answer is not a replay
		second := e.Do("POST", "/v1/customers", e.Test, body, "Idempotency-Key", "replay-1")
		is.Equal(second.Status, 200)                                    // same status
		is.Equal(second.Header.Get("Idempotent-Replayed"), "true")      // marked as replay
		is.Equal(string(second.Raw), string(first.Raw))                 // byte-identical body
		is.Equal(countCustomers(t, e, e.Test, "replay@example.com"), 1) // only one object created
	})

	t.Run("same key with another body is refused", func(t *testing.T) {
		is := is.New(t)
		r := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "reuse-a@example.com"}, "Idempotency-Key", "reuse-1")
		is.Equal(r.Status, 200)
		r = e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "reuse-b@example.com"}, "Idempotency-Key", "reuse-1")
		is.Equal(r.Status, 400)                                          // different body
		is.Equal(r.ErrCode(), "idempotency_key_reused")                  // code
		is.Equal(countCustomers(t, e, e.Test, "reuse-b@example.com"), 0) // the second body did not run
	})

	t.Run("same key on another endpoint is refused", func(t *testing.T) {
		is := is.New(t)
		r := e.Do("POST", "/v1/customers", e.Test, map[string]any{}, "Idempotency-Key", "endpoint-1")
		is.Equal(r.Status, 200)
		r = e.Do("POST", "/v1/products", e.Test, map[string]any{}, "Idempotency-Key", "endpoint-1")
		is.Equal(r.Status, 400)                         // same (empty) body, other endpoint
		is.Equal(r.ErrCode(), "idempotency_key_reused") // code
		r = e.Do("DELETE", "/v1/customers/cus_nope", e.Test, nil, "Idempotency-Key", "endpoint-1")
		is.Equal(r.Status, 400)                         // other method
		is.Equal(r.ErrCode(), "idempotency_key_reused") // code
	})

	t.Run("key length", func(t *testing.T) {
		is := is.New(t)
		r := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "long@example.com"}, "Idempotency-Key", strings.Repeat("k", 256))
		is.Equal(r.Status, 400)                                       // 256 characters
		is.Equal(r.ErrCode(), "idempotency_key_invalid")              // code
		is.Equal(countCustomers(t, e, e.Test, "long@example.com"), 0) // nothing ran
		r = e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "long@example.com"}, "Idempotency-Key", strings.Repeat("k", 255))
		is.Equal(r.Status, 200) // 255 characters is the maximum
		r = e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "long@example.com"}, "Idempotency-Key", strings.Repeat("k", 255))
		is.Equal(r.Header.Get("Idempotent-Replayed"), "true") // and it works as a key
		is.Equal(countCustomers(t, e, e.Test, "long@example.com"), 1)
	})

	t.Run("key length counts characters, not bytes", func(t *testing.T) {
		is := is.New(t)
		key := strings.Repeat("é", 255) // 255 characters, 510 bytes of UTF-8
		r := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "accents@example.com"}, "Idempotency-Key", key)
		is.Equal(r.Status, 200) // 255 characters is the maximum, whatever their bytes
		r = e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "accents@example.com"}, "Idempotency-Key", key)
		is.Equal(r.Header.Get("Idempotent-Replayed"), "true")
		r = e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "accents@example.com"}, "Idempotency-Key", key+"é")
		is.Equal(r.Status, 400) // 256 characters
		is.Equal(r.ErrCode(), "idempotency_key_invalid")
		r = e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "accents@example.com"}, "Idempotency-Key", "k\xffk")
		is.Equal(r.Status, 400) // not text: a key must be UTF-8 to be stored and compared
		is.Equal(r.ErrCode(), "idempotency_key_invalid")
		is.Equal(r.ErrParam(), "Idempotency-Key")
		is.Equal(countCustomers(t, e, e.Test, "accents@example.com"), 1)
	})

	t.Run("keys are per organization and per environment", func(t *testing.T) {
		is := is.New(t)
		_, otherOrg := e.NewOrg("Outra Ltda", false)
		body := map[string]any{"email": "scoped@example.com"}
		test := e.Do("POST", "/v1/customers", e.Test, body, "Idempotency-Key", "scoped-1")
		live := e.Do("POST", "/v1/customers", e.Live, body, "Idempotency-Key", "scoped-1")
		other := e.Do("POST", "/v1/customers", otherOrg, body, "Idempotency-Key", "scoped-1")
		for _, r := range []resp{test, live, other} {
			is.Equal(r.Status, 200)                           // each ran
			is.Equal(r.Header.Get("Idempotent-Replayed"), "") // none is a replay
		}
		is.True(test.Str("id") != live.Str("id"))  // test and live are distinct
		is.True(test.Str("id") != other.Str("id")) // organizations are distinct
		is.Equal(live.Body["livemode"], true)      // the live one is live
		is.Equal(countCustomers(t, e, e.Test, "scoped@example.com"), 1)
		is.Equal(countCustomers(t, e, e.Live, "scoped@example.com"), 1)
		is.Equal(countCustomers(t, e, otherOrg, "scoped@example.com"), 1)
	})

	t.Run("validation errors are stored and replayed", func(t *testing.T) {
		is := is.New(t)
		bad := map[string]any{"email": "not-an-email"}
		first := e.Do("POST", "/v1/customers", e.Test, bad, "Idempotency-Key", "invalid-1")
		is.Equal(first.Status, 400)
		second := e.Do("POST", "/v1/customers", e.Test, bad, "Idempotency-Key", "invalid-1")
		is.Equal(second.Status, 400)                               // same status
		is.Equal(second.Header.Get("Idempotent-Replayed"), "true") // replayed
		is.Equal(string(second.Raw), string(first.Raw))            // same body

		malformed := `{"email":`
		first = e.Do("POST", "/v1/customers", e.Test, malformed, "Idempotency-Key", "invalid-2")
		is.Equal(first.Status, 400)
		second = e.Do("POST", "/v1/customers", e.Test, malformed, "Idempotency-Key", "invalid-2")
		is.Equal(second.Header.Get("Idempotent-Replayed"), "true") // decode errors are stored too
	})

	t.Run("404 is stored", func(t *testing.T) {
		is := is.New(t)
		first := e.Do("DELETE", "/v1/customers/cus_doesnotexist", e.Test, nil, "Idempotency-Key", "missing-1")
		is.Equal(first.Status, 404)
		second := e.Do("DELETE", "/v1/customers/cus_doesnotexist", e.Test, nil, "Idempotency-Key", "missing-1")
		is.Equal(second.Status, 404)                               // same status
		is.Equal(second.Header.Get("Idempotent-Replayed"), "true") // replayed
		is.Equal(string(second.Raw), string(first.Raw))            // same body
	})

	t.Run("409 is not stored", func(t *testing.T) {
		is := is.New(t)
		prod := e.Do("POST", "/v1/products", e.Test, map[string]any{"name": "Caneca", "default_price_data": map[string]any{"unit_amount": 1990}})
		is.Equal(prod.Status, 200)
		pid, price := prod.Str("id"), prod.Str("default_price")
		first := e.Do("DELETE", "/v1/products/"+pid, e.Test, nil, "Idempotency-Key", "conflict-1")
		is.Equal(first.Status, 409)                          // product has prices
		is.Equal(first.ErrCode(), "resource_state_conflict") // code
		again := e.Do("DELETE", "/v1/products/"+pid, e.Test, nil, "Idempotency-Key", "conflict-1")
		is.Equal(again.Status, 409)                           // still conflicting
		is.Equal(again.Header.Get("Idempotent-Replayed"), "") // but ran again, not replayed
		is.Equal(e.Do("DELETE", "/v1/prices/"+price, e.Test, nil).Status, 200)
		final := e.Do("DELETE", "/v1/products/"+pid, e.Test, nil, "Idempotency-Key", "conflict-1")
		is.Equal(final.Status, 200)           // the retry runs and succeeds
		is.Equal(final.Body["deleted"], true) // deleted
		is.Equal(final.Header.Get("Idempotent-Replayed"), "")
		replay := e.Do("DELETE", "/v1/products/"+pid, e.Test, nil, "Idempotency-Key", "conflict-1")
		is.Equal(replay.Status, 200)                               // the success is now stored
		is.Equal(replay.Header.Get("Idempotent-Replayed"), "true") // and replayed
	})

	t.Run("concurrent duplicates create one object", func(t *testing.T) {
		is := is.New(t)
		const n = 8
		body := map[string]any{"email": "race@example.com"}
		var wg sync.WaitGroup
		results := make([]resp, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i], errs[i] = e.TryDo("POST", "/v1/customers", e.Test, body, "Idempotency-Key", "race-1")
			}()
		}
		wg.Wait()
		created := ""
		for i, r := range results {
			is.NoErr(errs[i]) // request
			switch {
			case r.Status == 200:
				if created == "" {
					created = r.Str("id")
				}
				is.Equal(r.Str("id"), created) // every success names the same object
			case r.Status == 409:
				is.Equal(r.ErrCode(), "idempotency_key_in_progress") // or is told to retry
			default:
				t.Fatalf("unexpected answer %d %s", r.Status, r.Raw)
			}
		}
		is.True(created != "")                                        // one request succeeded
		is.Equal(countCustomers(t, e, e.Test, "race@example.com"), 1) // exactly one object
		r := e.Do("POST", "/v1/customers", e.Test, body, "Idempotency-Key", "race-1")
		is.Equal(r.Header.Get("Idempotent-Replayed"), "true") // later retries replay it
		is.Equal(r.Str("id"), created)
	})

	t.Run("GET ignores the header", func(t *testing.T) {
		is := is.New(t)
		c := e.Do("POST", "/v1/customers", e.Test, map[string]any{"name": "Antes"})
		id := c.Str("id")
		first := e.Do("GET", "/v1/customers/"+id, e.Test, nil, "Idempotency-Key", "get-1")
		is.Equal(first.Status, 200)
		is.Equal(e.Do("POST", "/v1/customers/"+id, e.Test, map[string]any{"name": "Depois"}).Status, 200)
		second := e.Do("GET", "/v1/customers/"+id, e.Test, nil, "Idempotency-Key", "get-1")
		is.Equal(second.Header.Get("Idempotent-Replayed"), "") // not a replay
		is.Equal(second.Str("name"), "Depois")                 // fresh data
		long := e.Do("GET", "/v1/customers/"+id, e.Test, nil, "Idempotency-Key", strings.Repeat("k", 300))
		is.Equal(long.Status, 200) // not even validated on GET
		// The key used by the GETs is still free for a POST.
		r := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "after-get@example.com"}, "Idempotency-Key", "get-1")
		is.Equal(r.Status, 200)
		is.Equal(r.Header.Get("Idempotent-Replayed"), "")
	})

	t.Run("updates are idempotent too", func(t *testing.T) {
		is := is.New(t)
		c := e.Do("POST", "/v1/customers", e.Test, map[string]any{"name": "V1"})
		id := c.Str("id")
		first := e.Do("POST", "/v1/customers/"+id, e.Test, map[string]any{"name": "V2"}, "Idempotency-Key", "update-1")
		is.Equal(first.Status, 200)
		is.Equal(e.Do("POST", "/v1/customers/"+id, e.Test, map[string]any{"name": "V3"}).Status, 200)
		replay := e.Do("POST", "/v1/customers/"+id, e.Test, map[string]any{"name": "V2"}, "Idempotency-Key", "update-1")
		is.Equal(replay.Header.Get("Idempotent-Replayed"), "true")                // replayed
		is.Equal(replay.Str("name"), "V2")                                        // the stored answer
		is.Equal(e.Do("GET", "/v1/customers/"+id, e.Test, nil).Str("name"), "V3") // and the update did not run again
		ev := e.Do("GET", "/v1/events?type=customer.updated&limit=100", e.Test, nil)
		n := 0
		for _, d := range ev.Data() {
			if d["data"].(map[string]any)["object"].(map[string]any)["id"] == id {
				n++
			}
		}
		is.Equal(n, 2) // two updates ran, the replay emitted no event
	})
}

// TestIdempotencyRetention covers "after 24 hours the key may be reused".
func TestIdempotencyRetention(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	body := map[string]any{"email": "ttl@example.com"}
	first := e.Do("POST", "/v1/customers", e.Test, body, "Idempotency-Key", "ttl-1")
	is.Equal(first.Status, 200)

	e.Clock.Advance(23 * time.Hour)
	r := e.Do("POST", "/v1/customers", e.Test, body, "Idempotency-Key", "ttl-1")
	is.Equal(r.Header.Get("Idempotent-Replayed"), "true") // still retained after 23 h
	is.Equal(r.Str("id"), first.Str("id"))

	e.Clock.Advance(time.Hour + time.Second)
	again := e.Do("POST", "/v1/customers", e.Test, body, "Idempotency-Key", "ttl-1")
	is.Equal(again.Status, 200)                           // runs again
	is.Equal(again.Header.Get("Idempotent-Replayed"), "") // not a replay
	is.True(again.Str("id") != first.Str("id"))           // a new object
	is.Equal(countCustomers(t, e, e.Test, "ttl@example.com"), 2)

	replay := e.Do("POST", "/v1/customers", e.Test, body, "Idempotency-Key", "ttl-1")
	is.Equal(replay.Str("id"), again.Str("id")) // the new run is what is retained now

	e.Clock.Advance(24*time.Hour + time.Second)
	other := e.Do("POST", "/v1/products", e.Test, map[string]any{"name": fmt.Sprint("ttl")}, "Idempotency-Key", "ttl-1")
	is.Equal(other.Status, 200) // an expired key may be reused for anything
}

// TestIdempotencyEveryRoute sends every POST and DELETE route of routes.go twice with one
// Idempotency-Key (an id that does not exist, or an incomplete create: a stored 4xx), so that a
// new route cannot skip the mechanism: the second answer is the first, marked as replayed; another
// body with the key is 400 idempotency_key_reused; the same key in another organization, or in
// the other environment, runs afresh.
func TestIdempotencyEveryRoute(t *testing.T) {
	e := newEnv(t)
	var routes []v1Route
	for _, rt := range v1Routes(t) {
		if rt.method != "GET" {
			rt.need, _, _ = strings.Cut(rt.need, "(") // platform, platformOr, platformOwn, read, write
			routes = append(routes, rt)
		}
	}
	other, _ := e.NewOrg("Outra", false)
	otherKey := e.NewKey(other.ID, false, "read", "write")
	_, platformKey := e.NewPlatform("Plataforma idempotente")

	for i, rt := range routes {
		path := strings.ReplaceAll(rt.path, ":id", "x_doesnotexist")
		key, sameOrg := e.Test, e.Live // the other environment of the same organization
		if rt.need == "platform" {
			key, sameOrg = platformKey, ""
		}
		if strings.HasPrefix(rt.path, "/v1/payout-accounts") {
			key, sameOrg = e.Live, e.Test // test keys get 409 sandbox_unsupported, never stored
		}
		var body, changed any
		if rt.method == "POST" {
			body, changed = map[string]any{}, map[string]any{"metadata": map[string]any{"k": "v"}}
		}
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			is := is.New(t)
			k := fmt.Sprintf("every-route-%d", i)
			first := e.Do(rt.method, path, key, body, "Idempotency-Key", k)
			is.True(first.Status < 500 && first.Status != 409) // an answer that is stored
			second := e.Do(rt.method, path, key, body, "Idempotency-Key", k)
			is.Equal(second.Status, first.Status)                      // same status
			is.Equal(string(second.Raw), string(first.Raw))            // same body
			is.Equal(second.Header.Get("Idempotent-Replayed"), "true") // marked as replay
			var third resp
			if rt.method == "POST" {
				third = e.Do(rt.method, path, key, changed, "Idempotency-Key", k)
			} else {
				third = e.Do(rt.method, path+"x", key, nil, "Idempotency-Key", k)
			}
			is.Equal(third.Status, 400)                         // another request with the key
			is.Equal(third.ErrCode(), "idempotency_key_reused") // code
			for _, tok := range []string{otherKey, sameOrg} {
				if tok == "" || rt.need == "platform" {
					continue
				}
				r := e.Do(rt.method, path, tok, body, "Idempotency-Key", k)
				is.Equal(r.Header.Get("Idempotent-Replayed"), "") // keys are per organization and environment
			}
		})
	}
}
