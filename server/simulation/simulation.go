// Package simulation holds the sandbox rules that pick the outcome of a
// test-mode PIX or boleto payment from the customer e-mail (SPEC 8.5).
//
// The rules apply in test mode only; in live mode these addresses are
// ordinary e-mails and callers must not consult this package. The package is
// pure: no HTTP, no database, no clock.
package simulation

import (
	"net/mail"
	"strings"
	"time"
)

// State is a payment intent status a simulated PIX or boleto payment reaches.
type State string

const (
	// StateSucceeded is the paid outcome.
	StateSucceeded State = "succeeded"

	// StatePending is the waiting state of an unsettled PIX or boleto (the spec also calls it requires_action).
	StatePending State = "pending"

	// StateRequiresPaymentMethod is the expired outcome: the code is no longer payable and the intent accepts another attempt.
	StateRequiresPaymentMethod State = "requires_payment_method"
)

// DefaultDelay is how long a delayed rule waits before its automatic transition (`--sim-delay`, SPEC 8).
const DefaultDelay = 3 * time.Minute

// Rule is one row of the SPEC 8.5 table: the state a PIX or boleto payment
// takes at confirmation and, for delayed rules, the state it moves to after
// the simulation delay.
type Rule struct {
	// LocalPart is the e-mail local part that selects the rule; empty for DefaultRule.
	LocalPart string

	// Initial is the payment intent status right after confirmation.
	Initial State

	// After is the status reached once the delay elapses, or "" when nothing happens automatically.
	After State
}

// Delayed reports whether the rule moves the payment on its own after the delay.
func (r Rule) Delayed() bool {
	return r.After != ""
}

// TransitionAt returns when a payment confirmed at confirmedAt takes its
// automatic transition with the given delay, and false when the rule has none.
func (r Rule) TransitionAt(confirmedAt time.Time, delay time.Duration) (time.Time, bool) {
	if !r.Delayed() {
		return time.Time{}, false
	}
	return confirmedAt.Add(delay), true
}

// rules is the one table of SPEC 8.5; code and tests both read it.
var rules = []Rule{
	{LocalPart: "succeed_immediately", Initial: StateSucceeded},
	{LocalPart: "succeed_delayed", Initial: StatePending, After: StateSucceeded},
	{LocalPart: "expire_immediately", Initial: StateRequiresPaymentMethod},
	{LocalPart: "expire_delayed", Initial: StatePending, After: StateRequiresPaymentMethod},
	{LocalPart: "pending", Initial: StatePending},
}

// DefaultRule applies to any other e-mail (or none): the payment waits in
// pending until the hosted page's simulate buttons or a test helper resolve
// it, as Stripe's sandbox does for an ordinary address.
var DefaultRule = Rule{Initial: StatePending}

// Rules returns a copy of the SPEC 8.5 table, in spec order, for docs and hosted pages.
func Rules() []Rule {
	return append([]Rule(nil), rules...)
}

// RuleForEmail returns the rule an e-mail selects and true when its local
// part matches a table row exactly (case-sensitive, no trimming or
// normalisation) and the whole string is a bare, syntactically valid address
// whose domain has at least two dot-separated labels; otherwise it returns
// DefaultRule and false.
func RuleForEmail(email string) (Rule, bool) {
	local, ok := splitAddress(email)
	if !ok {
		return DefaultRule, false
	}
	for _, r := range rules {
		if r.LocalPart == local {
			return r, true
		}
	}
	return DefaultRule, false
}

// splitAddress returns the local part of a bare address such as
// "pending@example.com", rejecting display names, angle brackets, quoted
// local parts and domains that are not dotted host names.
func splitAddress(email string) (string, bool) {
	addr, err := mail.ParseAddress(email)
	if err != nil || addr.Name != "" || addr.Address != email {
		return "", false
	}
	at := strings.LastIndexByte(email, '@')
	if at <= 0 {
		return "", false
	}
	if !validDomain(email[at+1:]) {
		return "", false
	}
	return email[:at], true
}

// validDomain reports whether domain is a host name of two or more labels of
// letters, digits and inner hyphens (so IP literals and "localhost" fail).
func validDomain(domain string) bool {
	if len(domain) > 253 {
		return false
	}
	labels := strings.Split(domain, ".")
	if len(labels) < 2 {
		return false
	}
	for _, label := range labels {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			isAlnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
			if !isAlnum && c != '-' {
				return false
			}
		}
	}
	return true
}
