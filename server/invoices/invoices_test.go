package invoices

import (
	"testing"

	"github.com/matryer/is"

	"troco/server/domain"
)

func TestPageLines(t *testing.T) {
	is := is.New(t)
	var lines []domain.InvoiceLine
	for _, id := range []string{"li_a", "li_b", "li_c", "li_d", "li_e"} {
		lines = append(lines, domain.InvoiceLine{ID: id})
	}
	ids := func(ls []domain.InvoiceLine) (out []string) {
		for _, l := range ls {
			out = append(out, l.ID)
		}
		return out
	}
	got, more, err := PageLines(lines, 2, "", "")
	is.NoErr(err)
	is.Equal(ids(got), []string{"li_a", "li_b"})
	is.True(more)
	got, more, err = PageLines(lines, 2, "li_d", "")
	is.NoErr(err)
	is.Equal(ids(got), []string{"li_e"})
	is.True(!more)
	got, more, err = PageLines(lines, 2, "", "li_d")
	is.NoErr(err)
	is.Equal(ids(got), []string{"li_b", "li_c"}) // the page just before li_d
	is.True(more)                                // li_a is before it
	got, more, err = PageLines(lines, 10, "", "li_b")
	is.NoErr(err)
	is.Equal(ids(got), []string{"li_a"})
	is.True(!more)
	_, _, err = PageLines(lines, 2, "li_x", "")
	e, ok := domain.AsError(err)
	is.True(ok)
	is.Equal(e.Param, "starting_after")
}
