package server

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"troco/db"
	"troco/server/domain"
)

// Page size limits of SPEC 4.10 (default 10) and CONTRACT (maximum 100, Stripe's figure).
const (
	defaultLimit = 10
	maxLimit     = 100
)

var rangeOps = []string{"gte", "gt", "lte", "lt"}

// listQuery parses the cursor parameters and the endpoint's filters from the query string.
// filters lists the equality filters the endpoint accepts; any other parameter is a 400.
type listQuery struct {
	db.ListParams
	values url.Values
}

func parseList(r *http.Request, filters ...string) (*listQuery, error) {
	q := r.URL.Query()
	lq := &listQuery{ListParams: db.ListParams{Limit: defaultLimit}, values: q}
	for name, vals := range q {
		if len(vals) > 1 {
			return nil, domain.Invalid(name, "Parameter %s was given more than once.", name)
		}
		base, op, isRange := strings.Cut(name, "[")
		switch {
		case name == "limit":
			n, err := strconv.Atoi(vals[0])
			if err != nil || n < 1 || n > maxLimit {
				return nil, domain.Invalid("limit", "limit must be an integer between 1 and %d.", maxLimit)
			}
			lq.Limit = n
		case name == "starting_after", name == "ending_before":
			if vals[0] == "" {
				return nil, domain.Invalid(name, "%s must be an object id.", name)
			}
			if name == "starting_after" {
				lq.StartingAfter = vals[0]
			} else {
				lq.EndingBefore = vals[0]
			}
		case isRange && base == "created_at" && strings.HasSuffix(op, "]") && slices.Contains(rangeOps, strings.TrimSuffix(op, "]")):
			t, err := parseTimeParam(vals[0])
			if err != nil {
				return nil, domain.Invalid(name, "%s must be an RFC 3339 timestamp (e.g. 2026-01-02T15:04:05Z) or Unix seconds.", name)
			}
			switch strings.TrimSuffix(op, "]") {
			case "gte":
				lq.Created.Gte = &t
			case "gt":
				lq.Created.Gt = &t
			case "lte":
				lq.Created.Lte = &t
			case "lt":
				lq.Created.Lt = &t
			}
		case slices.Contains(filters, name):
		default:
			return nil, domain.Invalid(name, "Received unknown parameter: %s.", name)
		}
	}
	if lq.StartingAfter != "" && lq.EndingBefore != "" {
		return nil, domain.Invalid("ending_before", "starting_after and ending_before cannot be used together.")
	}
	return lq, nil
}

func parseTimeParam(v string) (int64, error) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n, nil
	}
	t, err := domain.ParseTimestamp(v)
	if err != nil {
		return 0, err
	}
	return t.Unix(), nil
}

// str returns an equality filter's value.
func (q *listQuery) str(name string) string { return q.values.Get(name) }

// oneOf returns an equality filter whose value must be one of allowed (or absent): anything
// else is 400 naming the filter.
func (q *listQuery) oneOf(name string, allowed ...string) (string, error) {
	v := q.values.Get(name)
	if v != "" && !slices.Contains(allowed, v) {
		return "", domain.Invalid(name, "%s must be one of %s.", name, strings.Join(allowed, ", "))
	}
	return v, nil
}

// boolean returns an equality filter parsed as true/false.
func (q *listQuery) boolean(name string) (*bool, error) {
	if !q.values.Has(name) {
		return nil, nil
	}
	v := q.values.Get(name)
	b, err := strconv.ParseBool(v)
	if err != nil || (v != "true" && v != "false") {
		return nil, domain.Invalid(name, "%s must be true or false.", name)
	}
	return &b, nil
}

// listOf wraps a page of results in the list envelope.
func listOf[T any](r *http.Request, items []T, more bool) domain.List[T] {
	return domain.NewList(r.URL.Path, items, more)
}
