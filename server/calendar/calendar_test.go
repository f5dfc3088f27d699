package calendar

import (
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

func d(s string) time.Time {
	t, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestEaster(t *testing.T) {
	is := is.New(t)
	// Published dates of Easter Sunday, including the extremes of the Gregorian range.
	for year, want := range map[int]string{1818: "1818-03-22", 1943: "1943-04-25", 2000: "2000-04-23", 2024: "2024-03-31",
		2025: "2025-04-20", 2026: "2026-04-05", 2027: "2027-03-28", 2038: "2038-04-25", 2285: "2285-03-22"} {
		is.Equal(Easter(year).Format(Layout), want) // Easter of the year
	}
}

func TestNationalHolidaysComputed(t *testing.T) {
	is := is.New(t)
	names := func(year int) map[string]string {
		m := map[string]string{}
		for _, h := range National(year) {
			m[h.Date.Format(Layout)] = h.Name
		}
		return m
	}
	h26 := names(2026)
	is.Equal(h26["2026-02-16"], "Carnaval (segunda-feira)")
	is.Equal(h26["2026-02-17"], "Carnaval (terça-feira)")
	is.Equal(h26["2026-04-03"], "Sexta-feira Santa")
	is.Equal(h26["2026-06-04"], "Corpus Christi")
	is.Equal(h26["2026-11-20"], "Dia Nacional de Zumbi e da Consciência Negra")
	is.Equal(len(h26), 13)
	// A year far from any table: Easter 2100 is 28 March, so Carnaval is 8–9 February.
	h2100 := names(2100)
	is.Equal(h2100["2100-02-08"], "Carnaval (segunda-feira)")
	is.Equal(h2100["2100-03-26"], "Sexta-feira Santa")
	// Consciência Negra is national from 2024 only.
	_, ok := names(2023)["2023-11-20"]
	is.True(!ok)
}

func TestBusinessDaysAroundCarnavalAndChristmas(t *testing.T) {
	is := is.New(t)
	var c *Calendar                                         // nil: national holidays only
	is.True(!c.IsBusinessDay(d("2026-02-16")))              // Carnaval Monday
	is.True(!c.IsBusinessDay(d("2026-02-17")))              // Carnaval Tuesday
	is.True(c.IsBusinessDay(d("2026-02-18")))               // Ash Wednesday: banks open
	is.Equal(c.OnOrAfter(d("2026-02-14")), d("2026-02-18")) // Saturday before Carnaval
	is.Equal(c.Next(d("2026-02-13")), d("2026-02-18"))      // Friday before Carnaval
	is.Equal(c.OnOrAfter(d("2026-12-25")), d("2026-12-28")) // Christmas on a Friday
	is.Equal(c.OnOrAfter(d("2027-12-25")), d("2027-12-27")) // Christmas 2027 is a Saturday
	is.Equal(c.OnOrAfter(d("2027-01-01")), d("2027-01-04")) // New Year 2027 is a Friday
	is.Equal(c.AddBusinessDays(d("2026-12-23"), 2), d("2026-12-28"))
	is.Equal(len(c.Between(d("2026-02-09"), d("2026-02-22"))), 8) // two weeks, minus Carnaval
	is.Equal(c.Between(d("2026-02-14"), d("2026-02-13")), []time.Time(nil))

	// Fines and interest: a boleto due on Carnaval Monday is payable until the end of Wednesday.
	is.Equal(c.ChargesFrom(d("2026-02-16")), time.Date(2026, 2, 19, 3, 0, 0, 0, time.UTC))
	is.Equal(c.ChargesFrom(d("2026-02-18")), time.Date(2026, 2, 19, 3, 0, 0, 0, time.UTC))
	due := time.Date(2026, 12, 25, 15, 0, 0, 0, time.UTC) // an instant on Christmas
	is.Equal(c.ChargesFromInstant(due), time.Date(2026, 12, 29, 3, 0, 0, 0, time.UTC))
	due = time.Date(2026, 12, 24, 15, 0, 0, 0, time.UTC)
	is.Equal(c.ChargesFromInstant(due), due) // a business day: the instant itself
	// The civil date is Brasília's: 02:00 UTC on the 26th is still the 25th there.
	is.Equal(Today(time.Date(2026, 12, 26, 2, 0, 0, 0, time.UTC)), d("2026-12-25"))
}

func TestLocalHolidays(t *testing.T) {
	is := is.New(t)
	local, err := ParseHolidays(strings.NewReader("# São Paulo\n2026-01-25 aniversário de São Paulo\n\n2026-07-09\n"))
	is.NoErr(err)
	c := New(local...)
	is.True(!c.IsBusinessDay(d("2026-07-09")))
	is.Equal(c.HolidayName(d("2026-07-09")), "feriado local")
	is.True(New().IsBusinessDay(d("2026-07-09")))
	for _, bad := range []string{"2026-02-30\n", "09/07/2026\n", "2026-7-9\n"} {
		_, err := ParseHolidays(strings.NewReader("2026-01-25\n" + bad))
		is.True(err != nil)
		is.True(strings.Contains(err.Error(), "line 2")) // names the line
	}
}
