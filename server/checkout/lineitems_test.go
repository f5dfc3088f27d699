package checkout

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/server/domain"
)

func TestPeriodEnd(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := []struct {
		start, interval string
		count           int
		want            string
	}{
		{"2026-01-15T10:30:00Z", "month", 1, "2026-02-15T10:30:00Z"},
		{"2026-01-31T10:30:00Z", "month", 1, "2026-02-28T10:30:00Z"}, // clamped to the month's end
		{"2028-01-31T00:00:00Z", "month", 1, "2028-02-29T00:00:00Z"}, // leap year
		{"2026-03-31T23:59:59Z", "month", 3, "2026-06-30T23:59:59Z"},
		{"2026-11-30T12:00:00Z", "month", 2, "2027-01-30T12:00:00Z"},
		{"2028-02-29T12:00:00Z", "year", 1, "2029-02-28T12:00:00Z"},
		{"2026-01-01T00:00:00Z", "week", 2, "2026-01-15T00:00:00Z"},
		{"2026-12-31T08:00:00Z", "day", 1, "2027-01-01T08:00:00Z"},
	}
	for _, c := range cases {
		is := is.New(t)
		got := periodEnd(at(c.start), domain.Recurring{Interval: c.interval, IntervalCount: c.count})
		is.Equal(got.Format(time.RFC3339), c.want) // an absolute instant one cycle later
	}
}
