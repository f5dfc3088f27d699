package payments

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/db"
	"troco/server/clock"
	"troco/server/core"
	"troco/server/domain"
)

// openEngine opens a real database with one organization and returns an actor in test mode.
func openEngine(t *testing.T) (*db.DB, *clock.Offset, *Service, domain.Actor) {
	t.Helper()
	schema, err := os.ReadFile(filepath.Join("..", "..", "schema.sql"))
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewOffset(clock.Real{}, 0)
	store, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "troco.db"), db.Options{Schema: string(schema), Clock: clk, Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	var org *domain.Organization
	if err := store.Write(context.Background(), func(tx *db.Tx) error {
		org, err = core.CreateOrganization(tx, core.OrganizationInput{Name: "Padaria Ltda"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return store, clk, New("https://troco.example", 3*time.Minute, []byte("fingerprint key for tests")), domain.Actor{Scope: domain.Scope{OrgID: org.ID}}
}

// TestRunDueTransitions calls the job directly: a delayed rule settles once, when due.
func TestRunDueTransitions(t *testing.T) {
	is := is.New(t)
	store, clk, svc, a := openEngine(t)
	ctx := context.Background()
	var id string
	is.NoErr(store.Write(ctx, func(tx *db.Tx) error {
		amount := int64(990)
		pi, err := svc.CreateIntent(tx, a, IntentParams{Amount: &amount})
		if err != nil {
			return err
		}
		id = pi.ID
		email := "succeed_delayed@example.com"
		pi, err = svc.Confirm(tx, a, id, ConfirmParams{PaymentMethodType: domain.MethodPix, CustomerEmail: &email})
		if err == nil && pi.Status != domain.PIStatusPending {
			t.Errorf("status %s, want pending", pi.Status)
		}
		return err
	}))
	status := func() string {
		var s string
		is.NoErr(store.Read(ctx, func(tx *db.Tx) error {
			pi, err := svc.GetIntent(tx, a.Scope, id)
			if err == nil {
				s = pi.Status
			}
			return err
		}))
		return s
	}
	is.NoErr(svc.RunDueTransitions(ctx, store, clk.Now().Add(time.Minute)))
	is.Equal(status(), domain.PIStatusPending) // not due yet
	is.NoErr(svc.RunDueTransitions(ctx, store, clk.Now().Add(3*time.Minute)))
	is.Equal(status(), domain.PIStatusSucceeded) // applied when due
	is.NoErr(svc.RunDueTransitions(ctx, store, clk.Now().Add(time.Hour)))
	var n int
	is.NoErr(store.Read(ctx, func(tx *db.Tx) error {
		ts, _, err := tx.ListTransactions(a.Scope, db.TransactionFilter{PaymentIntent: id}, db.ListParams{Limit: 10})
		n = len(ts)
		return err
	}))
	is.Equal(n, 1) // settled once: one ledger entry
}
