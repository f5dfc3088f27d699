package card

import (
	"fmt"
	"log/slog"
	"time"
)

// Codes Validate can return; each is also a decline code of SPEC 7.1 and shares its message.
const (
	CodeInvalidNumber      = "invalid_number"
	CodeInvalidExpiryMonth = "invalid_expiry_month"
	CodeInvalidExpiryYear  = "invalid_expiry_year"
	CodeExpiredCard        = "expired_card"
	CodeInvalidCVC         = "invalid_cvc"
)

// Params Validate names, in the bracket form of the confirm body's card object.
const (
	paramNumber   = "card[number]"
	paramExpMonth = "card[exp_month]"
	paramExpYear  = "card[exp_year]"
	paramCVC      = "card[cvc]"
)

// Expiry years accepted by Validate: four digits, from minExpYear up to maxYearsAhead after now.
const (
	minExpYear    = 2000
	maxYearsAhead = 50
)

// Input is the card object of a confirm request; it never leaves the request that carried it.
type Input struct {
	Number     string
	CVC        string
	HolderName string
	ExpMonth   int
	ExpYear    int
}

// Error is a card rejected before any authorization, carrying the API code, param and message.
type Error struct {
	Code    string
	Param   string
	Message string
}

// Error returns the code and the English message.
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// newError builds an Error whose message is the SPEC 7.1 message for code.
func newError(code, param string) *Error {
	return &Error{Code: code, Param: param, Message: messageByCode[code]}
}

// Validate checks the card's format and expiry against now and returns the first problem, or nil.
//
// Order: number (digits, brand length, Luhn), exp_month, exp_year, expiry (a card is valid
// through the last day of its expiry month, UTC), then CVC length for the brand.
//
// Validate is the same in live and test mode: every number of the SPEC 7.1 table passes Luhn
// (a test enforces it), so a test card with a future expiry and a CVC of the right length is
// accepted here and its scripted outcome, expired_card and incorrect_cvc included, comes
// from Simulate, not from Validate.
func (in Input) Validate(now time.Time) *Error {
	number := Normalize(in.Number)
	brand := DetectBrand(number)
	if !isDigits(number) || !brand.ValidLength(len(number)) || !Luhn(number) {
		return newError(CodeInvalidNumber, paramNumber)
	}
	if in.ExpMonth < 1 || in.ExpMonth > 12 {
		return newError(CodeInvalidExpiryMonth, paramExpMonth)
	}
	now = now.UTC()
	if in.ExpYear < minExpYear || in.ExpYear > now.Year()+maxYearsAhead {
		return newError(CodeInvalidExpiryYear, paramExpYear)
	}
	// time.Date normalises month 13 to January of the next year.
	firstInvalid := time.Date(in.ExpYear, time.Month(in.ExpMonth)+1, 1, 0, 0, 0, 0, time.UTC)
	if !now.Before(firstInvalid) {
		return newError(CodeExpiredCard, paramExpMonth)
	}
	if !isDigits(in.CVC) || len(in.CVC) != brand.CVCLength() {
		return newError(CodeInvalidCVC, paramCVC)
	}
	return nil
}

// String redacts the number and CVC so a card printed by mistake leaks only brand and last4.
func (in Input) String() string {
	brand, last4 := Describe(in.Number)
	return fmt.Sprintf("card{%s ****%s %02d/%d}", brand, last4, in.ExpMonth, in.ExpYear)
}

// GoString redacts %#v the same way as String.
func (in Input) GoString() string { return in.String() }

// LogValue redacts the card in structured logs.
func (in Input) LogValue() slog.Value {
	brand, last4 := Describe(in.Number)
	return slog.GroupValue(
		slog.String("brand", string(brand)),
		slog.String("last4", last4),
		slog.Int("exp_month", in.ExpMonth),
		slog.Int("exp_year", in.ExpYear),
	)
}
