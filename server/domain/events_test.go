package domain

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// emitted finds event types written as literals by the emitters: emit(tx, a, "type", …),
// core.Emit(tx, a, "type", …) and domain.Event{Type: "type"}.
var emitted = regexp.MustCompile(`(?:\b[eE]mit\([^,()]+,\s*[^,()]+,\s*|Event\{Type:\s*)"([a-z_.]+)"`)

// TestEveryEmittedTypeIsListed keeps EventTypes the one table: a type emitted anywhere under
// server/ must be listed (so endpoints can subscribe to it and the docs name it).
func TestEveryEmittedTypeIsListed(t *testing.T) {
	found := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range emitted.FindAllStringSubmatch(string(src), -1) {
			found++
			if !KnownEventType(m[1]) {
				t.Errorf("%s emits %q, which is not in domain.EventTypes (server/domain/events.go)", path, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 9 {
		t.Fatalf("found only %d emitted types; is the pattern still right?", found)
	}
}

// TestEveryListedTypeIsEmitted is the other direction: every type in EventTypes is written as a
// literal by some non-test file besides events.go, so the documented list holds only types troco
// actually emits (payment_intent.pending and .processing are literals in the async rules).
func TestEveryListedTypeIsEmitted(t *testing.T) {
	var src strings.Builder
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || filepath.Base(path) == "events.go" {
			return err
		}
		b, err := os.ReadFile(path)
		src.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range EventTypes {
		if !strings.Contains(src.String(), `"`+e.Type+`"`) {
			t.Errorf("%s is listed in domain.EventTypes but nothing emits it", e.Type)
		}
	}
}

func TestEventPatterns(t *testing.T) {
	is := is.New(t)
	is.True(ValidEventPattern("*"))
	is.True(ValidEventPattern("customer.created"))
	is.True(ValidEventPattern("customer.*"))
	is.True(ValidEventPattern("checkout.session.*"))
	is.True(ValidEventPattern("checkout.*"))
	is.True(!ValidEventPattern("customer.exploded"))
	is.True(!ValidEventPattern("custom.*")) // a prefix must end at a dot
	is.True(!ValidEventPattern("*.created"))
	is.True(!ValidEventPattern(".*"))
	is.True(!ValidEventPattern(""))
	is.True(EventPatternMatches("checkout.*", "checkout.session.async.payment.failed"))
	is.True(!EventPatternMatches("charge.*", "checkout.session.created"))
	is.True(!EventPatternMatches("customer.created", "customer.updated"))
	seen := map[string]bool{}
	for _, e := range EventTypes {
		is.True(!seen[e.Type]) // listed once
		seen[e.Type] = true
		is.True(e.Description != "")
	}
}

// TestEventTypesAreDocumented keeps the API reference's table in step with EventTypes.
func TestEventTypesAreDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "API.md"))
	if err != nil {
		t.Skipf("no API reference: %v", err)
	}
	for _, e := range EventTypes {
		if !strings.Contains(string(doc), "| `"+e.Type+"` |") {
			t.Errorf("docs/API.md does not list %s in the Event types table", e.Type)
		}
	}
}
