package email_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"troco/server/domain"
)

// TestDocumentedEmailEventsExist: every event the customer e-mail table of docs/API.md names as
// sending a message is an event troco emits (no alias that never comes).
func TestDocumentedEmailEventsExist(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "API.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "\n## Customer e-mail")
	if i < 0 {
		t.Fatal("docs/API.md has no Customer e-mail section")
	}
	tick := regexp.MustCompile("`([a-z_.]+)`")
	rows := 0
	for _, line := range strings.Split(doc[i+1:], "\n")[1:] {
		if strings.HasPrefix(line, "## ") {
			break
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		rows++
		for _, m := range tick.FindAllStringSubmatch(cells[2], -1) {
			if strings.Contains(m[1], ".") && !domain.KnownEventType(m[1]) {
				t.Errorf("the e-mail %s names event %s, which troco never emits", strings.TrimSpace(cells[1]), m[1])
			}
		}
	}
	if rows < 8 {
		t.Fatalf("found %d e-mail kinds in the table", rows)
	}
}
