package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"troco/server/domain"
)

// Regression (QA, issue 6): --split-rules null is not a JSON object and must not mark a
// platform's split rules configured (which would let platform keys be created).
func TestPlatformConfigureRejectsNullSplitRules(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "troco.db")
	var out bytes.Buffer
	is.NoErr(Run(context.Background(), testCLIEnv(t, &out, "org", "create", "--name", "P", "--platform", "--activation-status", "active", "--db", path, "--json")))
	var org domain.Organization
	is.NoErr(json.Unmarshal(out.Bytes(), &org))
	is.True(org.Platform != nil)

	for _, bad := range []string{"null", "[]", "1", ""} {
		out.Reset()
		is.True(Run(context.Background(), testCLIEnv(t, &out, "platform", "configure", *org.Platform, "--split-rules", bad, "--db", path)) != nil) // not an object
	}
	out.Reset()
	err := Run(context.Background(), testCLIEnv(t, &out, "key", "create", "--org", org.ID, "--env", "test", "--scopes", "platform_admin", "--db", path, "--json"))
	is.True(err != nil) // split rules still missing: no platform key

	out.Reset()
	is.NoErr(Run(context.Background(), testCLIEnv(t, &out, "platform", "configure", *org.Platform, "--split-rules", `{"default":{"rate":1000}}`, "--db", path, "--json")))
	out.Reset()
	is.NoErr(Run(context.Background(), testCLIEnv(t, &out, "key", "create", "--org", org.ID, "--env", "test", "--scopes", "platform_admin", "--db", path, "--json")))
}
