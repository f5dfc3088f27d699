// Package boleto builds and checks FEBRABAN bank boletos: the 44-digit barcode, the 47-digit
// linha digitável, the due-date factor, and the Interleaved 2 of 5 image a bank scans.
package boleto

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalidDate is wrapped by ParseDate's errors so handlers can answer 400 naming the param.
var ErrInvalidDate = errors.New("boleto: invalid date")

// Date is a civil date (no time, no zone), which is what a boleto due date is (SPEC 4.7).
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// DateOf returns the UTC civil date of the instant t.
func DateOf(t time.Time) Date {
	y, m, d := t.UTC().Date()
	return Date{Year: y, Month: m, Day: d}
}

// ParseDate reads a strict YYYY-MM-DD and rejects dates that do not exist, such as 2026-02-30.
func ParseDate(s string) (Date, error) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' || !isDigits(s[:4]+s[5:7]+s[8:]) {
		return Date{}, fmt.Errorf("%w: %q is not YYYY-MM-DD", ErrInvalidDate, s)
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return Date{}, fmt.Errorf("%w: %q does not exist", ErrInvalidDate, s)
	}
	return DateOf(t), nil
}

// DefaultDueDate is the boleto due date used when the buyer gives none: three days after the
// UTC civil date of the confirmation (SPEC 4.7 and 8).
func DefaultDueDate(confirmedAt time.Time) Date {
	return DateOf(confirmedAt).AddDays(3)
}

// String formats d as YYYY-MM-DD, the API's due_date format.
func (d Date) String() string {
	return fmt.Sprintf("%04d-%02d-%02d", d.Year, d.Month, d.Day)
}

// Time returns the start of d (00:00) in UTC.
func (d Date) Time() time.Time {
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC)
}

// IsZero reports whether d is the zero Date (no date set).
func (d Date) IsZero() bool {
	return d == Date{}
}

// AddDays returns the civil date n days after d (before it when n is negative).
func (d Date) AddDays(n int) Date {
	return DateOf(d.Time().AddDate(0, 0, n))
}

// DaysSince returns the number of days from o to d (negative when d is earlier).
func (d Date) DaysSince(o Date) int {
	return int(d.Time().Sub(o.Time()).Hours() / 24)
}

// Before reports whether d is earlier than o.
func (d Date) Before(o Date) bool {
	return d.Time().Before(o.Time())
}

// After reports whether d is later than o.
func (d Date) After(o Date) bool {
	return d.Time().After(o.Time())
}

// MarshalText writes d as YYYY-MM-DD so Date works in JSON and form values.
func (d Date) MarshalText() ([]byte, error) {
	return []byte(d.String()), nil
}

// UnmarshalText reads YYYY-MM-DD with ParseDate's rules.
func (d *Date) UnmarshalText(b []byte) error {
	v, err := ParseDate(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// isDigits reports whether s is non-empty and only ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
