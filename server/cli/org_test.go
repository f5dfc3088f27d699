package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/db"
	"troco/server"
	"troco/server/domain"
)

func TestOrgSetStatus(t *testing.T) {
	is := is.New(t)
	path, org := cliDB(t)
	var out bytes.Buffer
	err := Run(context.Background(), testCLIEnv(t, &out, "org", "set-status", org.ID, "--status", "disabled", "--missing", "documents.identity,bank_account", "--db", path, "--json"))
	is.NoErr(err) // live by default
	var got domain.Organization
	is.NoErr(json.Unmarshal(out.Bytes(), &got))
	is.Equal(got.ActivationStatus, "disabled")
	is.Equal(got.Livemode, true)
	is.Equal(got.Requirements.Missing, []string{"documents.identity", "bank_account"})

	out.Reset()
	is.NoErr(Run(context.Background(), testCLIEnv(t, &out, "org", "set-status", org.ID, "--status", "active", "--env", "both", "--db", path)))
	is.Equal(out.String(), "organization "+org.ID+" (live): active\norganization "+org.ID+" (test): active\n")

	d, err := openAdmin(context.Background(), testCLIEnv(t, &out), path)
	is.NoErr(err)
	defer d.Close()
	is.NoErr(d.Read(context.Background(), func(tx *db.Tx) error {
		evs, _, err := tx.ListEvents(domain.Scope{OrgID: org.ID, Livemode: true}, db.EventFilter{Type: "organization.updated"}, db.ListParams{Limit: 10})
		is.Equal(len(evs), 2) // each change is an organization.updated event
		return err
	}))

	is.True(Run(context.Background(), testCLIEnv(t, &out, "org", "set-status", org.ID, "--status", "bogus", "--db", path)) != nil)
	is.True(Run(context.Background(), testCLIEnv(t, &out, "org", "set-status", org.ID, "--status", "active", "--missing", "x", "--db", path)) != nil)
	is.True(Run(context.Background(), testCLIEnv(t, &out, "org", "set-status", "org_nope", "--status", "active", "--db", path)) != nil)
}

// Admin commands date their writes on serve's clock: with time travel recorded, a review made
// from the command line is stamped at the sandbox's now, like everything serve writes.
func TestAdminCommandsUseTheSandboxClock(t *testing.T) {
	is := is.New(t)
	path, org := cliDB(t)
	var out bytes.Buffer
	d, err := openAdmin(context.Background(), testCLIEnv(t, &out), path)
	is.NoErr(err)
	is.NoErr(d.Write(context.Background(), func(tx *db.Tx) error {
		return tx.PutSetting(server.ClockOffsetSetting, strconv.Itoa(30*24*3600)) // advance-clock by 30 days
	}))
	d.Close()

	is.NoErr(Run(context.Background(), testCLIEnv(t, &out, "org", "set-status", org.ID, "--status", "active", "--env", "test", "--db", path, "--json")))
	var got domain.Organization
	is.NoErr(json.Unmarshal(out.Bytes(), &got))
	is.True(got.UpdatedAt.Sub(time.Now()) > 29*24*time.Hour) // the sandbox's now, not the wall clock's

	future := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339) // the wall clock's future, the sandbox's past
	err = Run(context.Background(), testCLIEnv(t, &out, "key", "create", "--org", org.ID, "--env", "test", "--expires-at", future, "--db", path))
	is.True(err != nil) // already expired for serve: refused
}

// org create --json prints the organization as the API shows it: the default fee plan, not null.
func TestOrgCreateShowsTheFeePlan(t *testing.T) {
	is := is.New(t)
	_, org := cliDB(t)
	is.True(org.FeePlan != nil) // the default plan
}
