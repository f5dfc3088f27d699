package server_test

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"
)

// TestLiveConfirmLatency measures what the live connectors add to a confirmation: the same card
// confirm through the sandbox simulator (test key) and through the Cielo connector against its
// double on loopback (live key), and a PIX confirm through the API Pix connector (mutual TLS,
// cached OAuth token). It prints p50/p99 and asserts nothing about time (figures belong in
// docs/PERFORMANCE.md):
//
//	TROCO_LIVE_LATENCY=1 go test ./server -run TestLiveConfirmLatency -count=1 -v
func TestLiveConfirmLatency(t *testing.T) {
	if os.Getenv("TROCO_LIVE_LATENCY") == "" {
		t.Skip("set TROCO_LIVE_LATENCY=1 to measure")
	}
	const n = 300
	e := newLiveEnv(t, 5*time.Second)
	measure := func(name, token string, body map[string]any, types []string) {
		var d []time.Duration
		for range n {
			pi := e.payIntent(token, 5000, map[string]any{"payment_method_types": types})
			start := time.Now()
			r := e.payConfirm(token, pi.Str("id"), body)
			d = append(d, time.Since(start))
			if r.Status != 200 {
				t.Fatalf("%s: %d %s", name, r.Status, r.Raw)
			}
		}
		slices.Sort(d)
		fmt.Printf("%-34s n=%d p50=%.2fms p99=%.2fms\n", name, n, ms(d[n/2]), ms(d[n*99/100]))
	}
	card := map[string]any{"card": payCard(liveApprove)}
	measure("card confirm, sandbox simulator", e.Test, card, []string{"credit_card"})
	measure("card confirm, live (Cielo double)", e.Live, card, []string{"credit_card"})
	pixBody := map[string]any{"payment_method_type": "pix", "customer_email": "ana@example.com"}
	measure("pix confirm, sandbox simulator", e.Test, map[string]any{"payment_method_type": "pix", "customer_email": "pending@example.com"}, []string{"pix"})
	measure("pix confirm, live (API Pix double)", e.Live, pixBody, []string{"pix"})
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
