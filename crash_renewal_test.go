package main

import (
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestCrashDuringRenewals kills the server (SIGKILL) while the renewal job is renewing hundreds of
// subscriptions, restarts it and lets the job finish: every subscription has exactly one invoice
// for its new period, paid by exactly one charge; nothing renewed twice, nothing lost.
func TestCrashDuringRenewals(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns the server")
	}
	is := is.New(t)
	dir, addr, key := t.TempDir(), freeAddr(t), crashKey(t)
	srv := startChild(t, dir, addr, key, "--allow-time-travel")
	c := crashClient(dir, addr, key)
	post := func(path string, body any) map[string]any {
		raw, _ := json.Marshal(body)
		st, m, _ := c.send("POST", path, "", raw)
		if st != 200 {
			t.Fatalf("POST %s: %d %v", path, st, m)
		}
		return m
	}
	cus := post("/v1/customers", map[string]any{"email": "ana@example.com"})["id"].(string)
	si := post("/v1/setup-intents", map[string]any{"customer": cus})["id"].(string)
	pm := post("/v1/setup-intents/"+si+"/confirm", map[string]any{"card": map[string]any{"number": "4242424242424242", "exp_month": 12, "exp_year": 2035, "cvc": "123", "holder_name": "Ana"}})["payment_method"].(string)
	price := post("/v1/products", map[string]any{"name": "Plano", "default_price_data": map[string]any{"unit_amount": 2990, "currency": "brl", "recurring": map[string]any{"interval": "month"}}})["default_price"].(string)
	const n = 300
	subs := make([]string, n)
	for i := range subs {
		subs[i] = post("/v1/subscriptions", map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pm})["id"].(string)
	}

	// Time travel past every period end; kill the server while the job renews.
	go func() { c.send("POST", "/v1/test-helpers/advance-clock", "", []byte(`{"seconds":2764800}`)) }()
	time.Sleep(300 * time.Millisecond)
	is.NoErr(srv.cmd.Process.Signal(syscall.SIGKILL))
	<-srv.exited

	startChild(t, dir, addr, key, "--allow-time-travel") // the clock offset is restored
	c = crashClient(dir, addr, key)
	c.hc.Timeout = 5 * time.Minute // the job renews up to 300 subscriptions in this one request (slow under -race)
	renewedBeforeRestart := 0
	for _, id := range subs {
		if _, m, _ := c.send("GET", "/v1/invoices?limit=10&subscription="+id, "", nil); m != nil && len(m["data"].([]any)) == 2 {
			renewedBeforeRestart++
		}
	}
	t.Logf("renewed before the kill: %d of %d", renewedBeforeRestart, n)
	post("/v1/test-helpers/advance-clock", map[string]any{"seconds": 1}) // runs the job again
	for _, id := range subs {
		st, m, _ := c.send("GET", "/v1/invoices?limit=10&subscription="+id, "", nil)
		is.Equal(st, 200)
		invs := m["data"].([]any)
		if len(invs) != 2 {
			t.Fatalf("%s has %d invoices, want 2", id, len(invs))
		}
		for _, inv := range invs {
			m := inv.(map[string]any)
			is.Equal(m["status"], "paid")
			st, ch, _ := c.send("GET", "/v1/charges?limit=10&payment_intent="+m["payment_intent"].(string), "", nil)
			is.Equal(st, 200)
			is.Equal(len(ch["data"].([]any)), 1) // one charge per invoice
		}
	}
	st, m, _ := c.send("GET", fmt.Sprintf("/v1/subscriptions/%s", subs[0]), "", nil)
	is.Equal(st, 200)
	is.Equal(m["status"], "active")
}
