package domain

import (
	"strings"
	"time"
	_ "time/tzdata" // IANA zones in the binary: customers' zones work on any host
)

// DefaultCustomerZone is the zone of a customer without one.
const DefaultCustomerZone = "America/Sao_Paulo"

// LoadZone loads an IANA zone; "Local" and the empty name are refused (a zone must name a place).
func LoadZone(name string) (*time.Location, error) {
	if name == "" || strings.EqualFold(name, "local") {
		return nil, &time.ParseError{Value: name, Message: "not an IANA zone"}
	}
	return time.LoadLocation(name)
}

// CustomerZone is where a customer's hosted invoice pages and e-mails render times.
func CustomerZone(c *Customer) *time.Location {
	name := DefaultCustomerZone
	if c != nil && c.Timezone != nil {
		name = *c.Timezone
	}
	loc, err := LoadZone(name)
	if err != nil {
		loc, _ = time.LoadLocation(DefaultCustomerZone)
	}
	return loc
}
