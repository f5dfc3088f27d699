package domain

import (
	"testing"
	"time"

	"github.com/matryer/is"
)

func TestNewIDShapeUniquenessAndOrder(t *testing.T) {
	is := is.New(t)
	seen := map[string]bool{}
	for range 10000 {
		id := NewID(PrefixCustomer)
		is.True(HasPrefix(id, PrefixCustomer))    // prefix + base62
		is.Equal(len(id), len(PrefixCustomer)+24) // 24 characters after the prefix
		is.True(!seen[id])                        // unique
		seen[id] = true
	}
	first := NewID(PrefixCustomer)
	time.Sleep(3 * time.Millisecond)
	later := NewID(PrefixCustomer)
	is.True(later > first) // made later, sorts later: rows written together share index pages

	// Secrets have no time part: a burst made within a millisecond shares no leading characters,
	// where identifiers of the same millisecond share seven.
	s0 := NewSecret("")
	is.Equal(len(s0), 24)
	shared := 0
	for range 50 {
		if NewSecret("")[:idTimeChars] == s0[:idTimeChars] {
			shared++
		}
	}
	is.Equal(shared, 0) // secrets are random from the first character
}
