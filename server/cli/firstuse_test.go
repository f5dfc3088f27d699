package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"troco/db"
	"troco/server/clock"
)

// trigger builds its URLs from what the running serve recorded (its base URL, whatever port it
// got); a flag still overrides it.
func TestTriggerUsesServesRecordedSettings(t *testing.T) {
	is := is.New(t)
	path, _ := cliDB(t)
	schema, _ := os.ReadFile(filepath.Join("..", "..", "schema.sql"))
	store, err := db.Open(context.Background(), path, db.Options{Schema: string(schema), Clock: clock.Real{}})
	is.NoErr(err)
	is.NoErr(store.Write(context.Background(), func(tx *db.Tx) error {
		return recordServeSettings(tx, &serveConfig{baseURL: "https://localhost:40123", simDelay: 5e9, dataDir: t.TempDir()})
	}))
	store.Close()

	url := func(args ...string) string {
		var js bytes.Buffer
		is.NoErr(Run(context.Background(), testCLIEnv(t, &js, append([]string{"trigger", "checkout.session.created", "--db", path, "--wait", "0", "--json"}, args...)...)))
		var res triggerResult
		is.NoErr(json.Unmarshal(js.Bytes(), &res))
		is.True(len(res.Events) > 0)
		for _, ev := range res.Events {
			if ev.Type != "checkout.session.created" {
				continue
			}
			var cs struct {
				URL string `json:"url"`
			}
			raw, err := json.Marshal(ev.Data.Object)
			is.NoErr(err)
			is.NoErr(json.Unmarshal(raw, &cs))
			return cs.URL
		}
		t.Fatal("no checkout.session.created event")
		return ""
	}
	is.True(strings.HasPrefix(url(), "https://localhost:40123/checkout/"))                                        // serve's port
	is.True(strings.HasPrefix(url("--base-url", "https://pay.example.com"), "https://pay.example.com/checkout/")) // the flag wins
}

// --split-rules has one documented format; anything else is refused naming what is wrong.
func TestPlatformConfigureSplitRulesFormat(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "troco.db")
	var out bytes.Buffer
	is.NoErr(Run(context.Background(), testCLIEnv(t, &out, "org", "create", "--name", "P", "--platform", "--activation-status", "active", "--db", path, "--json")))
	var org struct{ Platform string }
	is.NoErr(json.Unmarshal(out.Bytes(), &org))
	for bad, why := range map[string]string{
		`{}`:                                  `"default" is required`,
		`{"platform_rate":150}`:               `unknown field "platform_rate"`,
		`{"default":{}}`:                      `"default" needs "rate"`,
		`{"default":{"rate":10001}}`:          `out of range`,
		`{"default":{"rate":1.5}}`:            `rate`,
		`{"default":{"rate":100,"fixed":-1}}`: `negative`,
		`{"default":{"rate":100},"ted":{}}`:   `unknown field "ted"`,
		`{"default":{"rate":100}} {}`:         `after the JSON object`,
	} {
		err := Run(context.Background(), testCLIEnv(t, &out, "platform", "configure", org.Platform, "--split-rules", bad, "--db", path))
		if err == nil || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "basis points") || strings.Contains(err.Error(), "%!") {
			t.Errorf("%s: %v (want %q and the format)", bad, err, why)
		}
	}
	out.Reset()
	is.NoErr(Run(context.Background(), testCLIEnv(t, &out, "platform", "configure", org.Platform, "--split-rules", `{"default":{"rate":150,"fixed":50},"pix":{"rate":100}}`, "--db", path, "--json")))
	var res struct {
		SplitRules map[string]any `json:"split_rules"`
	}
	is.NoErr(json.Unmarshal(out.Bytes(), &res))
	is.Equal(res.SplitRules["pix"], map[string]any{"rate": float64(100)})
}

// user create and user signin-link print a link to the port the running serve recorded, not to
// the default address; --base-url still overrides it.
func TestUserSigninLinkUsesServesRecordedBaseURL(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "troco.db")
	var out bytes.Buffer
	is.NoErr(Run(context.Background(), testCLIEnv(t, &out, "org", "create", "--name", "Loja", "--db", path, "--json")))
	var org struct{ ID string }
	is.NoErr(json.Unmarshal(out.Bytes(), &org))
	schema, _ := os.ReadFile(filepath.Join("..", "..", "schema.sql"))
	store, err := db.Open(context.Background(), path, db.Options{Schema: string(schema), Clock: clock.Real{}})
	is.NoErr(err)
	is.NoErr(store.Write(context.Background(), func(tx *db.Tx) error {
		return recordServeSettings(tx, &serveConfig{baseURL: "https://localhost:40123", simDelay: 5e9, dataDir: t.TempDir()})
	}))
	store.Close()

	var u struct {
		ID        string
		SigninURL string `json:"signin_url"`
	}
	out.Reset()
	is.NoErr(Run(context.Background(), testCLIEnv(t, &out, "user", "create", "--org", org.ID, "--email", "dev@example.com", "--role", "developer", "--db", path, "--json")))
	is.NoErr(json.Unmarshal(out.Bytes(), &u))
	is.True(strings.HasPrefix(u.SigninURL, "https://localhost:40123/dashboard/signin/link/")) // serve's port
	out.Reset()
	is.NoErr(Run(context.Background(), testCLIEnv(t, &out, "user", "signin-link", u.ID, "--db", path, "--json")))
	is.NoErr(json.Unmarshal(out.Bytes(), &u))
	is.True(strings.HasPrefix(u.SigninURL, "https://localhost:40123/dashboard/signin/link/"))
	out.Reset()
	is.NoErr(Run(context.Background(), testCLIEnv(t, &out, "user", "signin-link", u.ID, "--db", path, "--json", "--base-url", "https://pay.example.com")))
	is.NoErr(json.Unmarshal(out.Bytes(), &u))
	is.True(strings.HasPrefix(u.SigninURL, "https://pay.example.com/dashboard/signin/link/")) // the flag wins
}

// Keys created and revoked from the command line appear in the owners' audit trail beside those
// of the dashboard, naming the command line's operator.
func TestKeyCommandsAreAudited(t *testing.T) {
	is := is.New(t)
	path, org := cliDB(t)
	var out bytes.Buffer
	env := testCLIEnv(t, &out, "key", "create", "--org", org.ID, "--env", "test", "--name", "ci", "--db", path, "--json")
	env.Getenv = func(k string) string {
		if k == "USER" {
			return "ana"
		}
		return ""
	}
	is.NoErr(Run(context.Background(), env))
	var k struct{ ID string }
	is.NoErr(json.Unmarshal(out.Bytes(), &k))
	env.Args = []string{"key", "revoke", k.ID, "--reason", "leaked", "--db", path}
	is.NoErr(Run(context.Background(), env))

	schema, _ := os.ReadFile(filepath.Join("..", "..", "schema.sql"))
	store, err := db.Open(context.Background(), path, db.Options{Schema: string(schema), Clock: clock.Real{}})
	is.NoErr(err)
	defer store.Close()
	is.NoErr(store.Read(context.Background(), func(tx *db.Tx) error {
		list, _, err := tx.ListAudit(org.ID, db.ListParams{Limit: 10})
		is.NoErr(err)
		is.Equal(len(list), 2)
		is.Equal(list[0].Action, "api_key.revoked") // newest first
		is.Equal(list[0].ObjectID, k.ID)
		is.Equal(list[0].Detail, "leaked")
		is.Equal(list[0].UserEmail, "cli:ana")
		is.Equal(list[1].Action, "api_key.created")
		is.Equal(list[1].Detail, "ci (test, read,write)")
		return nil
	}))
}

// user remove takes a person out (audited as the operator), keeps the last owner and refuses an
// unknown id.
func TestUserRemoveCommand(t *testing.T) {
	is := is.New(t)
	path, org := cliDB(t)
	var out bytes.Buffer
	env := testCLIEnv(t, &out, "user", "create", "--org", org.ID, "--email", "dona@example.com", "--role", "owner", "--db", path, "--json")
	is.NoErr(Run(context.Background(), env))
	var owner, dev struct{ ID string }
	is.NoErr(json.Unmarshal(out.Bytes(), &owner))
	out.Reset()
	env.Args = []string{"user", "create", "--org", org.ID, "--email", "dev@example.com", "--role", "developer", "--db", path, "--json"}
	is.NoErr(Run(context.Background(), env))
	is.NoErr(json.Unmarshal(out.Bytes(), &dev))

	env.Args = []string{"user", "remove", owner.ID, "--db", path}
	err := Run(context.Background(), env)
	is.True(err != nil && strings.Contains(err.Error(), "at least one owner")) // the last owner stays
	out.Reset()
	env.Args = []string{"user", "remove", dev.ID, "--by", "ops:rita", "--db", path}
	is.NoErr(Run(context.Background(), env))
	is.True(strings.Contains(out.String(), "dev@example.com"))
	env.Args = []string{"user", "remove", dev.ID, "--db", path}
	err = Run(context.Background(), env)
	is.True(err != nil && strings.Contains(err.Error(), "No such user"))

	schema, _ := os.ReadFile(filepath.Join("..", "..", "schema.sql"))
	store, err := db.Open(context.Background(), path, db.Options{Schema: string(schema), Clock: clock.Real{}})
	is.NoErr(err)
	defer store.Close()
	is.NoErr(store.Read(context.Background(), func(tx *db.Tx) error {
		users, err := tx.ListUsers(org.ID)
		is.Equal(len(users), 1)
		list, _, _ := tx.ListAudit(org.ID, db.ListParams{Limit: 10})
		is.Equal(len(list), 3)
		is.Equal(list[0].Action, "user.removed")
		is.Equal(list[0].UserEmail, "ops:rita")
		// user create is audited too, as the command line's operator.
		is.Equal(list[1].Action, "user.created")
		is.Equal(list[1].ObjectID, dev.ID)
		is.Equal(list[1].Detail, "dev@example.com (developer)")
		is.Equal(list[2].Action, "user.created")
		is.Equal(list[2].ObjectID, owner.ID)
		is.True(strings.HasPrefix(list[2].UserEmail, "cli")) // cli:$USER, or cli without $USER
		return err
	}))
}
