package server

import (
	"net/http"
	"time"

	"troco/server/calendar"
	"troco/server/domain"
)

// maxBusinessDaySpan bounds GET /v1/business-days: from and to at most 366 days apart, inclusive.
const maxBusinessDaySpan = 366

// defaultBusinessDaySpan is how far to reaches when only from (or nothing) is given.
const defaultBusinessDaySpan = 30

// BusinessDay is one object of GET /v1/business-days.
type BusinessDay struct {
	Object string `json:"object"`
	Date   string `json:"date"`
}

// handleBusinessDays answers GET /v1/business-days?from=YYYY-MM-DD&to=YYYY-MM-DD: the business
// days of the calendar (national holidays, Easter-based ones, the server's local holidays) in
// the range, both ends included, in order. from defaults to today in Brasília, to to 30 days
// after from. The answer is the whole range (no cursor): ranges are bounded to 366 days.
func (s *Server) handleBusinessDays() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		for name, vals := range q {
			switch {
			case name != "from" && name != "to":
				s.writeError(w, r, domain.Invalid(name, "Received unknown parameter: %s. Business days take from and to (YYYY-MM-DD) and are not paginated.", name))
				return
			case len(vals) > 1:
				s.writeError(w, r, domain.Invalid(name, "Parameter %s was given more than once.", name))
				return
			}
		}
		from := calendar.Today(s.cfg.Clock.Now())
		parse := func(name string, def time.Time) (time.Time, bool) {
			if !q.Has(name) {
				return def, true
			}
			d, err := calendar.Parse(q.Get(name))
			if err != nil {
				s.writeError(w, r, domain.Invalid(name, "%s must be an existing date written YYYY-MM-DD, such as %s.", name, from.Format(calendar.Layout)))
				return time.Time{}, false
			}
			return d, true
		}
		from, ok := parse("from", from)
		if !ok {
			return
		}
		to, ok := parse("to", from.AddDate(0, 0, defaultBusinessDaySpan))
		if !ok {
			return
		}
		switch {
		case to.Before(from):
			s.writeError(w, r, domain.Invalid("to", "to (%s) is before from (%s).", to.Format(calendar.Layout), from.Format(calendar.Layout)))
			return
		case int(to.Sub(from).Hours()/24)+1 > maxBusinessDaySpan:
			s.writeError(w, r, domain.Invalid("to", "from and to may span at most %d days; ask for longer periods in several requests.", maxBusinessDaySpan))
			return
		}
		days := s.cfg.Calendar.Between(from, to)
		items := make([]BusinessDay, len(days))
		for i, d := range days {
			items[i] = BusinessDay{Object: "business_day", Date: d.Format(calendar.Layout)}
		}
		writeJSON(w, http.StatusOK, listOf(r, items, false))
	})
}
