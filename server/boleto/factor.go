package boleto

import (
	"errors"
	"fmt"
)

// The due-date factor counts days from a base date in four digits, 1000 to 9999; when it
// reached 9999 on 2025-02-21 FEBRABAN restarted it at 1000 on 2025-02-22.
const (
	MinFactor = 1000
	MaxFactor = 9999
)

// Errors of the factor conversions.
var (
	ErrDueDate = errors.New("boleto: due date outside the factor range")
	ErrFactor  = errors.New("boleto: factor outside 1000..9999")
)

// Bases and bounds of the two factor cycles.
var (
	factorBase1  = Date{1997, 10, 7}              // cycle 1: 1000 = 2000-07-03, 9999 = 2025-02-21
	factorBase2  = Date{2022, 5, 29}              // cycle 2: 1000 = 2025-02-22, 9999 = 2049-10-13
	firstDueDate = factorBase1.AddDays(MinFactor) // 2000-07-03
	rolloverDate = factorBase2.AddDays(MinFactor) // 2025-02-22
	lastDueDate  = factorBase2.AddDays(MaxFactor) // 2049-10-13
)

// DueFactor returns the four-digit due-date factor of a civil due date, across the 2025
// rollover; dates before 2000-07-03 or after 2049-10-13 have none.
func DueFactor(due Date) (int, error) {
	switch {
	case due.Before(firstDueDate) || due.After(lastDueDate):
		return 0, fmt.Errorf("%w: %s is not between %s and %s", ErrDueDate, due, firstDueDate, lastDueDate)
	case due.Before(rolloverDate):
		return due.DaysSince(factorBase1), nil
	default:
		return due.DaysSince(factorBase2), nil
	}
}

// DueDateFromFactor inverts DueFactor: a factor names one date in each cycle, and the one
// nearer to near (typically today or the issue date) is returned.
func DueDateFromFactor(factor int, near Date) (Date, error) {
	if factor < MinFactor || factor > MaxFactor {
		return Date{}, fmt.Errorf("%w: %d", ErrFactor, factor)
	}
	d1, d2 := factorBase1.AddDays(factor), factorBase2.AddDays(factor)
	if abs(near.DaysSince(d1)) <= abs(near.DaysSince(d2)) {
		return d1, nil
	}
	return d2, nil
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
