package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// The command line obeys the API's text rules: a display name with a bidirectional override or a
// NUL is refused naming the field, and the organization keeps its name.
func TestOrgUpdateRefusesControlText(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "troco.db")
	var out bytes.Buffer
	is.NoErr(Run(context.Background(), testCLIEnv(t, &out, "org", "create", "--name", "Loja", "--display-name", "Loja da Ana", "--db", path, "--json")))
	var org struct{ ID string }
	is.NoErr(json.Unmarshal(out.Bytes(), &org))
	for _, name := range []string{"Loja \u202eadtL", "Loja\x00"} {
		err := Run(context.Background(), testCLIEnv(t, &out, "org", "update", org.ID, "--display-name", name, "--db", path))
		is.True(err != nil)
		is.True(strings.Contains(err.Error(), "display_name"))
	}
	err := Run(context.Background(), testCLIEnv(t, &out, "org", "create", "--name", "Ana \u2066Ltda", "--db", path))
	is.True(err != nil)
	out.Reset()
	is.NoErr(Run(context.Background(), testCLIEnv(t, &out, "org", "update", org.ID, "--name", "Loja", "--db", path, "--json")))
	is.True(strings.Contains(out.String(), `"display_name": "Loja da Ana"`)) // unchanged
}
