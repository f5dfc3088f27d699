package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"troco/db"
	"troco/server"
	"troco/server/clock"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/jobs"
)

// BenchmarkDashboardPages renders dashboard pages over HTTPS against an organization with many
// payment intents (TROCO_BENCH_PAYMENTS, default 1,000,000) spread over the last 365 days (see
// docs/PERFORMANCE.md):
//
//	go test ./server -run '^$' -bench BenchmarkDashboardPages -benchtime 200x
//
// The seed goes through the db package's own inserts (no committed database), in batches of
// 10,000 per transaction, on a clock moved back one day at a time.
func BenchmarkDashboardPages(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv("TROCO_BENCH_PAYMENTS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	schema, err := os.ReadFile(filepath.Join("..", "schema.sql"))
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	fixed := clock.NewFixed(now)
	d, err := db.Open(context.Background(), filepath.Join(b.TempDir(), "troco.db"), db.Options{Schema: string(schema), Clock: fixed, Synchronous: "NORMAL"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	var org *domain.Organization
	var customers []string
	var link *core.SigninLink
	err = d.Write(context.Background(), func(tx *db.Tx) error {
		if org, err = core.CreateOrganization(tx, core.OrganizationInput{Name: "Bench Ltda"}); err != nil {
			return err
		}
		for i := range 1000 {
			c := &domain.Customer{Email: str(fmt.Sprintf("c%d@example.com", i)), Name: str("Cliente " + strconv.Itoa(i))}
			if err := tx.CreateCustomer(domain.Scope{OrgID: org.ID}, c); err != nil {
				return err
			}
			customers = append(customers, c.ID)
		}
		u, err := core.CreateUser(tx, core.UserInput{OrgID: org.ID, Email: "owner@example.com", Role: domain.RoleOwner})
		if err != nil {
			return err
		}
		link, err = core.IssueSigninLink(tx, u.ID)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	scope := domain.Scope{OrgID: org.ID}
	seedStart := time.Now()
	const batch = 10_000
	batches := (n + batch - 1) / batch
	methods := []string{"credit_card", "pix", "boleto"}
	statuses := []string{"succeeded", "succeeded", "succeeded", "requires_payment_method", "canceled", "processing"}
	var lastID string
	for bi := range batches {
		// Oldest first: the last batch is today's.
		fixed.Set(now.Add(-time.Duration(batches-1-bi) * 365 * 24 * time.Hour / time.Duration(batches)))
		err := d.Write(context.Background(), func(tx *db.Tx) error {
			for j := 0; j < batch && bi*batch+j < n; j++ {
				k := bi*batch + j
				m := methods[k%3]
				pi := &domain.PaymentIntent{Amount: int64(1000 + k%50000), Currency: "brl", Status: statuses[k%len(statuses)], CaptureMethod: "automatic",
					InterestPayer: "buyer", PaymentMethodTypes: []string{m}, Description: str("Pedido " + strconv.Itoa(k)), Customer: &customers[k%len(customers)]}
				if err := tx.CreatePaymentIntent(scope, pi); err != nil {
					return err
				}
				if pi.Status == "succeeded" {
					pi.PaymentMethodType, pi.AmountReceived = &m, pi.Amount
					if err := tx.UpdatePaymentIntent(scope, pi); err != nil {
						return err
					}
				}
				lastID = pi.ID
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	fixed.Set(now)
	b.Logf("seeded %d payment intents in %s", n, time.Since(seedStart).Round(time.Second))

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	clk := clock.NewOffset(fixed, 0)
	srv := httptest.NewTLSServer(server.New(server.Config{DB: d, Clock: clk, Logger: log, Jobs: jobs.NewRunner(clk, log), SimDelay: time.Minute}))
	b.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Transport: srv.Client().Transport, Jar: jar}
	get := func(path string) string {
		res, err := client.Get(srv.URL + path)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("GET %s: %d", path, res.StatusCode)
		}
		return string(body)
	}
	get(strings.TrimPrefix(core.SigninURL("", link.Token), ""))
	// A cursor deep in the list: the 25th page of succeeded payments.
	deep := ""
	for range 25 {
		body := get("/dashboard/test/payments?status=succeeded" + deep)
		i := strings.LastIndex(body, `/dashboard/test/payments/pi_`)
		id := body[i+len(`/dashboard/test/payments/`):]
		deep = "&after=" + id[:strings.IndexByte(id, '"')]
	}
	for _, p := range []struct{ name, path string }{
		{"home", "/dashboard/test"},
		{"payments", "/dashboard/test/payments"},
		{"payments-succeeded", "/dashboard/test/payments?status=succeeded"},
		{"payments-succeeded-page-26", "/dashboard/test/payments?status=succeeded" + deep},
		{"payments-by-customer", "/dashboard/test/payments?customer=" + customers[7]},
		{"payment", "/dashboard/test/payments/" + lastID},
		{"customers", "/dashboard/test/customers"},
		{"customer", "/dashboard/test/customers/" + customers[7]},
		{"events", "/dashboard/test/events"},
		{"logs", "/dashboard/test/logs"},
	} {
		b.Run(p.name, func(b *testing.B) {
			get(p.path)
			var lat []time.Duration
			for b.Loop() {
				t0 := time.Now()
				get(p.path)
				lat = append(lat, time.Since(t0))
			}
			if len(lat) > 0 {
				slicesSort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			}
		})
	}
}

func str(s string) *string { return &s }

func slicesSort(d []time.Duration) {
	for i := 1; i < len(d); i++ {
		for j := i; j > 0 && d[j] < d[j-1]; j-- {
			d[j], d[j-1] = d[j-1], d[j]
		}
	}
}
