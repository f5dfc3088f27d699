package domain

import (
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestParseDueDate: SPEC 4.6.4–5 at the unit level (the API tests cover the same table over HTTPS).
func TestParseDueDate(t *testing.T) {
	ok := map[string]string{
		"2026-12-01T12:00:00Z":      "2026-12-01T12:00:00Z",
		"2026-12-01t12:00:00z":      "2026-12-01T12:00:00Z", // RFC 3339 allows lower case t and z
		"2026-12-01T09:00:00-03:00": "2026-12-01T12:00:00Z",
		"2026-12-01T00:00:00+14:00": "2026-11-30T10:00:00Z",
		"2028-02-29T12:00:00Z":      "2028-02-29T12:00:00Z", // a leap day exists in 2028
		"2026-12-01T12:00:00.000Z":  "2026-12-01T12:00:00Z",
	}
	for in, want := range ok {
		got, err := ParseDueDate("due_date", in)
		if err != nil || got.Format(TimeLayout) != want {
			t.Errorf("ParseDueDate(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	bad := []string{"", "2026-12-01", "2026-12-01T12:00:00", "2026-02-30T12:00:00Z", "2027-02-29T12:00:00Z", "2026-12-01T25:00:00Z",
		"2026-12-01T12:60:00Z", "2026-12-01 12:00:00Z", "2026-12-01T12:00Z", "2026-12-01T12:00:00+0300", "2026-12-01T12:00:00.1Z",
		"26-12-01T12:00:00Z", "2026-12-01T12:00:00 Z", "1796126400", "2026-12-01T12:00:00+25:00"}
	for _, in := range bad {
		_, err := ParseDueDate("due_date", in)
		e, isErr := AsError(err)
		if !isErr || e.Param != "due_date" || e.Code != CodeInvalidRequest || e.Status != 400 {
			t.Errorf("ParseDueDate(%q) = %v; want 400 invalid_request naming due_date", in, err)
		}
	}
}

// TestResolveDaysUntilDue: SPEC 9.2, a civil day is anchored at 12:00:00Z of the UTC date.
func TestResolveDaysUntilDue(t *testing.T) {
	is := is.New(t)
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		is.NoErr(err)
		return v
	}
	is.Equal(ResolveDaysUntilDue(at("2026-03-10T00:00:00Z"), 0), at("2026-03-10T12:00:00Z"))
	is.Equal(ResolveDaysUntilDue(at("2026-03-10T23:59:59Z"), 0), at("2026-03-10T12:00:00Z"))      // today, even once noon is past
	is.Equal(ResolveDaysUntilDue(at("2026-03-10T22:00:00-03:00"), 0), at("2026-03-11T12:00:00Z")) // the UTC date, not the caller's
	is.Equal(ResolveDaysUntilDue(at("2026-01-31T10:00:00Z"), 30), at("2026-03-02T12:00:00Z"))
	is.Equal(ResolveDaysUntilDue(at("2028-02-28T10:00:00Z"), 1), at("2028-02-29T12:00:00Z"))
}
