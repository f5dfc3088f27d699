package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/matryer/is"
)

// TestMigrateJSON: troco migrate, like the other administration commands, answers --json with
// the database (password hidden), its engine and the schema version.
func TestMigrateJSON(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "troco.db")
	var out bytes.Buffer
	is.NoErr(Run(context.Background(), testCLIEnv(t, &out, "migrate", "--db", path, "--json")))
	var got struct {
		Database      string `json:"database"`
		Engine        string `json:"engine"`
		SchemaVersion int    `json:"schema_version"`
	}
	is.NoErr(json.Unmarshal(out.Bytes(), &got))
	is.Equal(got.Database, path)
	is.Equal(got.Engine, "sqlite")
	is.True(got.SchemaVersion > 0)
}
