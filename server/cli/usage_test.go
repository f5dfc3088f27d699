package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUsageLinesNameJSON: every command that prints JSON with --json says so on its usage line
// (troco -h and the command's own -h), so nobody has to read the flag list to find it.
func TestUsageLinesNameJSON(t *testing.T) {
	schema, err := os.ReadFile(filepath.Join("..", "..", "schema.sql"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range synopses {
		if s.name == "serve" {
			continue
		}
		var errOut bytes.Buffer
		args := append(strings.Fields(s.name), "-h")
		env := Env{Args: args, Getenv: func(string) string { return "" }, Stdout: &bytes.Buffer{}, Stderr: &errOut, Schema: string(schema)}
		_ = Run(context.Background(), env)
		help := errOut.String()
		if !strings.Contains(help, "Flags of troco "+s.name) {
			t.Errorf("%s -h: no flag list: %q", s.name, help)
			continue
		}
		if strings.Contains(help, "  -json") && !strings.Contains(s.line, "[--json]") {
			t.Errorf("%s accepts --json but its usage line does not say so: %s", s.name, s.line)
		}
	}
}
