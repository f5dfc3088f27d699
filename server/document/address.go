package document

import (
	"errors"
	"slices"
	"strings"
)

// Address errors; Validate's error wraps one of them while its message names the field.
var (
	ErrAddressRequired = errors.New("document: address field required")
	ErrAddressInvalid  = errors.New("document: address field invalid")
)

// addressError reads "billing_address[state] must be …" and unwraps to its sentinel.
type addressError struct {
	msg    string
	reason error
}

func (e *addressError) Error() string { return e.msg }
func (e *addressError) Unwrap() error { return e.reason }

// addressFail returns the param and error Validate reports for one field.
func addressFail(field string, reason error, problem string) (string, error) {
	p := "billing_address[" + field + "]"
	return p, &addressError{msg: p + " " + problem, reason: reason}
}

// states are the 27 federative units (26 states and the Distrito Federal).
var states = [...]string{
	"AC", "AL", "AM", "AP", "BA", "CE", "DF", "ES", "GO", "MA", "MG", "MS", "MT", "PA",
	"PB", "PE", "PI", "PR", "RJ", "RN", "RO", "RR", "RS", "SC", "SE", "SP", "TO",
}

// Address is a Brazilian billing address, the shape of the confirm body's billing_address.
type Address struct {
	Line1        string // street (logradouro)
	Number       string // building number, "S/N" when there is none
	Line2        string // complement, optional
	Neighborhood string // bairro
	City         string
	State        string // UF, two letters
	PostalCode   string // CEP, 8 digits
	Country      string // BR; empty means BR
}

// Normalize trims every field, reduces the CEP to its digits (01310-100 → 01310100),
// upper-cases state and country, and defaults the country to BR; store what it returns.
func (a Address) Normalize() Address {
	a.Line1 = strings.TrimSpace(a.Line1)
	a.Number = strings.TrimSpace(a.Number)
	a.Line2 = strings.TrimSpace(a.Line2)
	a.Neighborhood = strings.TrimSpace(a.Neighborhood)
	a.City = strings.TrimSpace(a.City)
	a.State = strings.ToUpper(strings.TrimSpace(a.State))
	a.PostalCode = strings.Map(func(r rune) rune {
		if r == '-' || r == '.' || r == ' ' {
			return -1
		}
		return r
	}, a.PostalCode)
	a.Country = strings.ToUpper(strings.TrimSpace(a.Country))
	if a.Country == "" {
		a.Country = "BR"
	}
	return a
}

// Validate checks the normalised address for a boleto and, on failure, returns the API param
// of the first bad field (billing_address[postal_code]) with an error a client may see.
func (a Address) Validate() (param string, err error) {
	a = a.Normalize()
	required := []struct {
		field, value string
	}{
		{"line1", a.Line1},
		{"number", a.Number},
		{"neighborhood", a.Neighborhood},
		{"city", a.City},
		{"state", a.State},
		{"postal_code", a.PostalCode},
	}
	for _, f := range required {
		if f.value == "" {
			return addressFail(f.field, ErrAddressRequired, "is required")
		}
	}
	if !slices.Contains(states[:], a.State) {
		return addressFail("state", ErrAddressInvalid, "must be a two-letter UF code such as SP")
	}
	if len(a.PostalCode) != 8 || !allDigits(a.PostalCode) {
		return addressFail("postal_code", ErrAddressInvalid, "must be a CEP of 8 digits, such as 01310-100")
	}
	if a.Country != "BR" {
		return addressFail("country", ErrAddressInvalid, "must be BR")
	}
	return "", nil
}
