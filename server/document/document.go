// Package document validates the Brazilian taxpayer documents (CPF for people, CNPJ for
// companies, alphanumeric CNPJ included), the test documents that choose a sandbox activation
// outcome, and the Brazilian addresses a boleto needs.
package document

import (
	"errors"
	"strings"
)

// Type says which kind of document a number is.
type Type string

// The two document types, as the API writes them.
const (
	TypeCPF  Type = "cpf"
	TypeCNPJ Type = "cnpj"
)

// Errors Parse returns, one per reason, so the API can say what is wrong.
var (
	ErrLength     = errors.New("document: must have 11 (CPF) or 14 (CNPJ) characters")
	ErrCharacters = errors.New("document: invalid characters")
	ErrAllEqual   = errors.New("document: all characters are equal")
	ErrCheckDigit = errors.New("document: check digits do not match")
)

// Document is a valid CPF or CNPJ in normalised form (no punctuation, upper case).
type Document struct {
	Type   Type
	Number string
}

// Parse normalises s (removing dots, dashes, slashes and spaces, upper-casing letters) and
// returns the CPF or CNPJ it holds, validating its check digits.
func Parse(s string) (Document, error) {
	n := Normalize(s)
	for i := 0; i < len(n); i++ {
		if !isDigit(n[i]) && !('A' <= n[i] && n[i] <= 'Z') {
			return Document{}, ErrCharacters
		}
	}
	var d Document
	switch len(n) {
	case 11:
		if !allDigits(n) {
			return Document{}, ErrCharacters // CPF is numeric only
		}
		d = Document{Type: TypeCPF, Number: n}
	case 14:
		if !allDigits(n[12:]) {
			return Document{}, ErrCharacters // CNPJ check digits are numeric
		}
		d = Document{Type: TypeCNPJ, Number: n}
	default:
		return Document{}, ErrLength
	}
	if strings.Count(n, n[:1]) == len(n) {
		return Document{}, ErrAllEqual
	}
	if d.checkDigits() != n[len(n)-2:] {
		return Document{}, ErrCheckDigit
	}
	return d, nil
}

// Normalize removes the punctuation people type in documents (. - / and spaces) and
// upper-cases letters, without validating.
func Normalize(s string) string {
	return strings.ToUpper(strings.Map(func(r rune) rune {
		switch r {
		case '.', '-', '/', ' ':
			return -1
		}
		return r
	}, s))
}

// Mask formats the number for display: 000.000.000-00 or XX.XXX.XXX/XXXX-NN.
func (d Document) Mask() string {
	n := d.Number
	switch {
	case d.Type == TypeCPF && len(n) == 11:
		return n[0:3] + "." + n[3:6] + "." + n[6:9] + "-" + n[9:11]
	case d.Type == TypeCNPJ && len(n) == 14:
		return n[0:2] + "." + n[2:5] + "." + n[5:8] + "/" + n[8:12] + "-" + n[12:14]
	}
	return n
}

// checkDigits computes the two check digits of the number's base (9 for CPF, 12 for CNPJ).
func (d Document) checkDigits() string {
	if d.Type == TypeCPF {
		base := d.Number[:9]
		dv1 := mod11(base, []int{10, 9, 8, 7, 6, 5, 4, 3, 2})
		dv2 := mod11(base+string(dv1), []int{11, 10, 9, 8, 7, 6, 5, 4, 3, 2})
		return string([]byte{dv1, dv2})
	}
	base := d.Number[:12]
	dv1 := mod11(base, []int{5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2})
	dv2 := mod11(base+string(dv1), []int{6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2})
	return string([]byte{dv1, dv2})
}

// mod11 is the Receita Federal check digit: each character's value (ASCII − 48, so A = 17)
// times its weight, r = sum mod 11, DV = 0 when r < 2, else 11 − r.
func mod11(s string, weights []int) byte {
	sum := 0
	for i := range weights {
		sum += int(s[i]-'0') * weights[i]
	}
	r := sum % 11
	if r < 2 {
		return '0'
	}
	return byte('0' + 11 - r)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
