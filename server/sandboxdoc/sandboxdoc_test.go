package sandboxdoc

import (
	"os"
	"strings"
	"testing"

	"troco/server/card"
	"troco/server/document"
	"troco/server/simulation"
)

// The committed guide is exactly what the tables render: changing a test card, an e-mail rule or
// a test document without `go generate ./server/sandboxdoc` fails here.
func TestTestingMDMatchesTheTables(t *testing.T) {
	got, err := os.ReadFile("../../docs/TESTING.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != Render() {
		t.Fatal("docs/TESTING.md differs from the sandbox tables: run `go generate ./server/sandboxdoc` and commit the result")
	}
}

// Every row of every table appears in the guide, with its outcome.
func TestEveryRowIsDocumented(t *testing.T) {
	doc := Render()
	for _, c := range card.TestCards() {
		if !strings.Contains(doc, "`"+groupNumber(c.Number)+"`") {
			t.Errorf("card %s missing", c.Number)
		}
		if c.Code != "" && (!strings.Contains(doc, "`"+c.Code+"`") || !strings.Contains(doc, c.Message)) {
			t.Errorf("decline %s missing", c.Code)
		}
	}
	for _, c := range card.DisputeCards() {
		if !strings.Contains(doc, "`"+groupNumber(c.Number)+"`") {
			t.Errorf("dispute card %s missing", c.Number)
		}
	}
	for _, r := range simulation.Rules() {
		if !strings.Contains(doc, "`"+r.LocalPart+"@example.com`") {
			t.Errorf("rule %s missing", r.LocalPart)
		}
	}
	for _, d := range document.TestDocuments() {
		if !strings.Contains(doc, "| `"+d.CPF+"` | `"+d.CNPJ+"` | "+docOutcomeText[d.Outcome]) {
			t.Errorf("document %s missing", d.CPF)
		}
	}
	for _, word := range []string{"SPEC", "CONTRACT"} {
		if strings.Contains(doc, word) {
			t.Errorf("the guide cites %s", word)
		}
	}
}
