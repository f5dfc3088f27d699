// Package calendar is the Brazilian business-day calendar: the national holidays, fixed and
// Easter-based, computed for any year (no table of years), plus the local holidays an operator
// adds. Boleto due dates, the start of fines and interest, receivables (available_on) and retries
// ask it which days banks work.
//
// Dates are civil dates: a time.Time at 00:00 UTC whose year, month and day are the date. The
// civil date of an instant is taken in Brasília time (UTC−3, no daylight saving since 2019),
// the time zone of Brazilian clearing.
package calendar

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
)

// Brasilia is the time zone of the banking day: UTC−3 (Brazil has had no daylight saving since
// 2019), fixed so the calendar does not depend on the host's time zone database.
var Brasilia = time.FixedZone("BRT", -3*60*60)

// Layout is how dates are written: YYYY-MM-DD.
const Layout = time.DateOnly

// ErrInvalidDate is wrapped by Parse's errors.
var ErrInvalidDate = errors.New("calendar: invalid date")

// Date returns the civil date y-m-d (normalised: 2026-02-30 becomes 2026-03-02).
func Date(y int, m time.Month, d int) time.Time {
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Civil returns the civil date of t's own year, month and day (its clock is dropped).
func Civil(t time.Time) time.Time {
	y, m, d := t.Date()
	return Date(y, m, d)
}

// Today returns the civil date of the instant t in Brasília.
func Today(t time.Time) time.Time {
	return Civil(t.In(Brasilia))
}

// StartOf returns the instant a civil date begins in Brasília (03:00 UTC).
func StartOf(d time.Time) time.Time {
	y, m, day := d.Date()
	return time.Date(y, m, day, 0, 0, 0, 0, Brasilia).UTC()
}

// Parse reads a strict YYYY-MM-DD and rejects dates that do not exist (2026-02-30).
func Parse(s string) (time.Time, error) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return time.Time{}, fmt.Errorf("%w: %q is not YYYY-MM-DD", ErrInvalidDate, s)
	}
	t, err := time.Parse(Layout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %q does not exist", ErrInvalidDate, s)
	}
	return t, nil
}

// Easter returns Easter Sunday of year in the Gregorian calendar (the anonymous algorithm of
// Meeus, Jones and Butcher).
func Easter(year int) time.Time {
	a := year % 19
	b, c := year/100, year%100
	d, e := b/4, b%4
	f := (b + 8) / 25
	g := (b - f + 1) / 3
	h := (19*a + b - d - g + 15) % 30
	i, k := c/4, c%4
	l := (32 + 2*e + 2*i - h - k) % 7
	m := (a + 11*h + 22*l) / 451
	month := (h + l - 7*m + 114) / 31
	day := (h+l-7*m+114)%31 + 1
	return Date(year, time.Month(month), day)
}

// Holiday is one named holiday on a date.
type Holiday struct {
	Date time.Time
	Name string
}

// National returns the national bank holidays of year, in date order: the fixed ones of federal
// law (Dia Nacional de Zumbi e da Consciência Negra from 2024) and the Easter-based ones on which
// banks close (Carnaval Monday and Tuesday, Sexta-feira Santa, Corpus Christi).
func National(year int) []Holiday {
	e := Easter(year)
	hs := []Holiday{
		{Date(year, time.January, 1), "Confraternização Universal"},
		{e.AddDate(0, 0, -48), "Carnaval (segunda-feira)"},
		{e.AddDate(0, 0, -47), "Carnaval (terça-feira)"},
		{e.AddDate(0, 0, -2), "Sexta-feira Santa"},
		{Date(year, time.April, 21), "Tiradentes"},
		{Date(year, time.May, 1), "Dia do Trabalho"},
		{e.AddDate(0, 0, 60), "Corpus Christi"},
		{Date(year, time.September, 7), "Independência do Brasil"},
		{Date(year, time.October, 12), "Nossa Senhora Aparecida"},
		{Date(year, time.November, 2), "Finados"},
		{Date(year, time.November, 15), "Proclamação da República"},
		{Date(year, time.December, 25), "Natal"},
	}
	if year >= 2024 {
		hs = append(hs, Holiday{Date(year, time.November, 20), "Dia Nacional de Zumbi e da Consciência Negra"})
	}
	sort.SliceStable(hs, func(i, j int) bool { return hs[i].Date.Before(hs[j].Date) })
	return hs
}

// nationals caches National by year (year → []Holiday, never modified): every card sale asks
// for the business day of each instalment's receivable inside the single writer, and building
// and sorting a year's holidays for every question cost more than the rest of the answer.
var nationals sync.Map

// nationalOf is National(year) from the cache (years 1900–2199; others are computed each time,
// so no input can grow it without bound); the slice is shared, so it is only read.
func nationalOf(year int) []Holiday {
	if year < 1900 || year >= 2200 {
		return National(year)
	}
	if hs, ok := nationals.Load(year); ok {
		return hs.([]Holiday)
	}
	hs, _ := nationals.LoadOrStore(year, National(year))
	return hs.([]Holiday)
}

// Calendar answers which days are business days: Monday to Friday except national holidays and
// the local ones it was given. The zero value and nil know national holidays only.
type Calendar struct {
	local map[time.Time]bool
}

// New returns a calendar with the given local holidays (civil dates) besides the national ones.
func New(local ...time.Time) *Calendar {
	c := &Calendar{local: make(map[time.Time]bool, len(local))}
	for _, d := range local {
		c.local[Civil(d)] = true
	}
	return c
}

// ParseHolidays reads a local-holidays file: one YYYY-MM-DD a line; blank lines and lines
// starting with # are ignored, and anything after the date on a line (a name) is a comment.
func ParseHolidays(r io.Reader) ([]time.Time, error) {
	var out []time.Time
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		field := strings.Fields(line)[0]
		d, err := Parse(field)
		if err != nil {
			return nil, fmt.Errorf("line %d: %q is not a date written YYYY-MM-DD", n, field)
		}
		out = append(out, d)
	}
	return out, sc.Err()
}

// HolidayName returns the name of the holiday on the civil date d ("feriado local" for a local
// one), or "" when d is not a holiday.
func (c *Calendar) HolidayName(d time.Time) string {
	d = Civil(d)
	for _, h := range nationalOf(d.Year()) {
		if h.Date.Equal(d) {
			return h.Name
		}
	}
	if c != nil && c.local[d] {
		return "feriado local"
	}
	return ""
}

// IsBusinessDay reports whether banks work on the civil date d.
func (c *Calendar) IsBusinessDay(d time.Time) bool {
	d = Civil(d)
	if wd := d.Weekday(); wd == time.Saturday || wd == time.Sunday {
		return false
	}
	return c.HolidayName(d) == ""
}

// OnOrAfter returns d when it is a business day, otherwise the next business day.
func (c *Calendar) OnOrAfter(d time.Time) time.Time {
	d = Civil(d)
	for !c.IsBusinessDay(d) {
		d = d.AddDate(0, 0, 1)
	}
	return d
}

// Next returns the first business day after d.
func (c *Calendar) Next(d time.Time) time.Time {
	return c.OnOrAfter(Civil(d).AddDate(0, 0, 1))
}

// AddBusinessDays returns the n-th business day after d (n ≥ 0; 0 is OnOrAfter(d)).
func (c *Calendar) AddBusinessDays(d time.Time, n int) time.Time {
	d = c.OnOrAfter(d)
	for ; n > 0; n-- {
		d = c.Next(d)
	}
	return d
}

// Between returns the business days from from to to, both included, in order.
func (c *Calendar) Between(from, to time.Time) []time.Time {
	var out []time.Time
	for d := Civil(from); !d.After(Civil(to)); d = d.AddDate(0, 0, 1) {
		if c.IsBusinessDay(d) {
			out = append(out, d)
		}
	}
	return out
}

// ChargesFrom returns the instant from which fines and interest count for a payment due on the
// civil date due: the end of due itself when it is a business day, otherwise the end of the
// next business day (a due date on a weekend or holiday is payable without charges until then).
func (c *Calendar) ChargesFrom(due time.Time) time.Time {
	return StartOf(c.OnOrAfter(due).AddDate(0, 0, 1))
}

// ChargesFromInstant is ChargesFrom for a due instant: the instant itself when its Brasília date
// is a business day, otherwise the end of the next business day.
func (c *Calendar) ChargesFromInstant(due time.Time) time.Time {
	d := Today(due)
	if c.IsBusinessDay(d) {
		return due.UTC()
	}
	return c.ChargesFrom(d)
}
