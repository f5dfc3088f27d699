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
