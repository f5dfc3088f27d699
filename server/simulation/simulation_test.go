package simulation

import (
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestRulesTable pins the table to SPEC 8.5 row by row.
func TestRulesTable(t *testing.T) {
	is := is.New(t)
	is.Equal(Rules(), []Rule{
		{LocalPart: "succeed_immediately", Initial: "succeeded", After: ""},
		{LocalPart: "succeed_delayed", Initial: "pending", After: "succeeded"},
		{LocalPart: "expire_immediately", Initial: "requires_payment_method", After: ""},
		{LocalPart: "expire_delayed", Initial: "pending", After: "requires_payment_method"},
		{LocalPart: "pending", Initial: "pending", After: ""},
	})
	r := Rules()
	r[0].Initial = StatePending
	is.Equal(Rules()[0].Initial, StateSucceeded) // callers get a copy
}

// TestRuleForEmailEveryRow selects every table row by e-mail at a few domains.
func TestRuleForEmailEveryRow(t *testing.T) {
	for _, want := range rules {
		for _, domain := range []string{"example.com", "troco.com.br", "sub.Example-1.org"} {
			email := want.LocalPart + "@" + domain
			t.Run(email, func(t *testing.T) {
				is := is.New(t)
				got, ok := RuleForEmail(email)
				is.True(ok) // table row matched
				is.Equal(got, want)
			})
		}
	}
}

func TestRuleForEmailDefault(t *testing.T) {
	for _, email := range []string{
		"",
		"buyer@example.com",               // ordinary address
		"Succeed_Immediately@example.com", // case-sensitive
		"SUCCEED_IMMEDIATELY@example.com",
		"succeed_immediately",                   // no domain
		"succeed_immediately@",                  // empty domain
		"succeed_immediately@localhost",         // domain without a dot
		"succeed_immediately@example.",          // empty label
		"succeed_immediately@.com",              // empty label
		"succeed_immediately@-bad.com",          // label starts with a hyphen
		"succeed_immediately@[127.0.0.1]",       // IP literal
		"succeed_immediately+x@example.com",     // local part must match exactly
		"xsucceed_immediately@example.com",      // prefix
		" succeed_immediately@example.com",      // surrounding space
		"succeed_immediately@example.com ",      // surrounding space
		"Ana <succeed_immediately@example.com>", // display name
		"<succeed_immediately@example.com>",     // angle brackets
		`"succeed_immediately"@example.com`,     // quoted local part
		"succeed_immediately@exa mple.com",      // invalid syntax
		"succeed_immediately@@example.com",      // invalid syntax
		"pending@example.com@example.com",       // two @
	} {
		t.Run(email, func(t *testing.T) {
			is := is.New(t)
			got, ok := RuleForEmail(email)
			is.True(!ok) // no table row
			is.Equal(got, DefaultRule)
		})
	}
}

func TestDefaultRule(t *testing.T) {
	is := is.New(t)
	is.Equal(DefaultRule.Initial, StatePending) // waits for simulate buttons or test helpers
	is.Equal(DefaultRule.After, State(""))      // no automatic transition
	is.Equal(DefaultRule.LocalPart, "")
}

func TestStates(t *testing.T) {
	is := is.New(t)
	is.Equal(string(StateSucceeded), "succeeded")
	is.Equal(string(StatePending), "pending")
	is.Equal(string(StateRequiresPaymentMethod), "requires_payment_method")
	is.Equal(DefaultDelay, 3*time.Minute)
}

func TestTransitionAt(t *testing.T) {
	is := is.New(t)
	confirmed := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

	r, _ := RuleForEmail("succeed_delayed@example.com")
	is.True(r.Delayed())
	at, ok := r.TransitionAt(confirmed, DefaultDelay)
	is.True(ok)
	is.Equal(at, confirmed.Add(3*time.Minute))

	r, _ = RuleForEmail("expire_delayed@example.com")
	at, ok = r.TransitionAt(confirmed, 10*time.Second) // --sim-delay overrides the default
	is.True(ok)
	is.Equal(at, confirmed.Add(10*time.Second))

	for _, email := range []string{"succeed_immediately@example.com", "expire_immediately@example.com", "pending@example.com", "someone@example.com"} {
		r, _ = RuleForEmail(email)
		is.True(!r.Delayed())
		_, ok = r.TransitionAt(confirmed, DefaultDelay)
		is.True(!ok) // no automatic transition
	}
}
