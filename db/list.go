package db

import (
	"fmt"
	"strings"
)

// ListParams is a cursor page request shared by every list endpoint (SPEC 4.10).
type ListParams struct {
	Limit         int
	StartingAfter string
	EndingBefore  string
	Created       Range
	// Page, when > 0, asks for page-numbered results (the /api/v1 lists): Limit rows after
	// (Page-1)*Limit, newest first, and Total receives the count of matching rows.
	Page  int
	Total *int64
}

// Range is a set of bounds on an integer column (Unix seconds for created_at); nil means unbounded.
type Range struct {
	Gte, Gt, Lte, Lt *int64
}

// filter accumulates WHERE clauses and their arguments.
type filter struct {
	where []string
	args  []any
	// union, when set, lists alternatives (one of them holds for every matching row), each
	// served by its own range of an index ending in seq: a page is read as the union of one
	// short seq-ordered range per alternative (unionOf), not as the sort of every matching row.
	union []alt
}

// alt is one alternative of a filter.union: a WHERE clause and its arguments.
type alt struct {
	where string
	args  []any
}

// eq is the alternatives col = v for each v of values.
func eq(col string, values []string) []alt {
	out := make([]alt, len(values))
	for i, v := range values {
		out[i] = alt{col + " = ?", []any{v}}
	}
	return out
}

// anyOf is the clause that one of alts holds, with its arguments.
func anyOf(alts []alt) (string, []any) {
	parts := make([]string, len(alts))
	var args []any
	for i, a := range alts {
		parts[i] = "(" + a.where + ")"
		args = append(args, a.args...)
	}
	return "(" + strings.Join(parts, " OR ") + ")", args
}

// unionOf is the query of the seqs of the first n rows matching where and one of alts, in
// order (ASC or DESC): one range per alternative, each at most n entries long, merged by seq.
// args are the arguments of where; the returned ones are those of the whole query.
func unionOf(table, where string, args []any, alts []alt, order string, n int64) (string, []any) {
	parts := make([]string, len(alts))
	all := make([]any, 0, len(alts)*(len(args)+1))
	for i, a := range alts {
		parts[i] = fmt.Sprintf("SELECT seq FROM (SELECT seq FROM %s WHERE %s AND %s ORDER BY seq %s LIMIT %d) AS u%d", table, where, a.where, order, n, i)
		all = append(append(all, args...), a.args...)
	}
	return strings.Join(parts, " UNION ALL "), all
}

func (f *filter) add(clause string, args ...any) {
	f.where = append(f.where, clause)
	f.args = append(f.args, args...)
}

func (f *filter) rangeOn(col string, r Range) {
	if r.Gte != nil {
		f.add(col+" >= ?", *r.Gte)
	}
	if r.Gt != nil {
		f.add(col+" > ?", *r.Gt)
	}
	if r.Lte != nil {
		f.add(col+" <= ?", *r.Lte)
	}
	if r.Lt != nil {
		f.add(col+" < ?", *r.Lt)
	}
}

// page runs a newest-first cursor query over table. cols is the select list; scan reads one row.
// The cursor object must belong to the same scope (the caller's filter includes it), otherwise
// ErrCursorNotFound is returned. Pages are served by the (scope…, seq) indexes, never OFFSET
// (page-numbered lists of /api/v1 excepted: numberedPage).
func page[T any](tx *Tx, table, cols string, f filter, p ListParams, scan func(scanner) (T, error)) ([]T, bool, error) {
	cursor := p.StartingAfter
	if cursor == "" {
		cursor = p.EndingBefore
	}
	if cursor != "" {
		var seq int64
		q := fmt.Sprintf("SELECT seq FROM %s WHERE id = ? AND %s", table, strings.Join(f.where, " AND "))
		args := append([]any{cursor}, f.args...)
		if f.union != nil {
			clause, more := anyOf(f.union)
			q += " AND " + clause
			args = append(args, more...)
		}
		if err := tx.queryRow(q, args...).Scan(&seq); err != nil {
			if err2 := translate(err, "find cursor"); err2 == ErrNotFound {
				param := "starting_after"
				if p.StartingAfter == "" {
					param = "ending_before"
				}
				return nil, false, &CursorError{Param: param}
			}
			return nil, false, translate(err, "find cursor")
		}
		if p.StartingAfter != "" {
			f.add("seq < ?", seq)
		} else {
			f.add("seq > ?", seq)
		}
	}
	f.rangeOn("created_at", p.Created)
	if p.Page > 0 {
		return numberedPage(tx, table, cols, f, p, scan)
	}
	order := "DESC"
	if p.EndingBefore != "" {
		order = "ASC"
	}
	q := fmt.Sprintf("SELECT %s FROM %s WHERE %s ORDER BY seq %s LIMIT %d", cols, table, strings.Join(f.where, " AND "), order, p.Limit+1)
	args := f.args
	if f.union != nil {
		var seqs string
		seqs, args = unionOf(table, strings.Join(f.where, " AND "), f.args, f.union, order, int64(p.Limit+1))
		q = fmt.Sprintf("SELECT %s FROM %s WHERE seq IN (%s) ORDER BY seq %s LIMIT %d", cols, table, seqs, order, p.Limit+1)
	}
	out, err := scanRows(tx, table, q, args, scan)
	if err != nil {
		return nil, false, err
	}
	more := len(out) > p.Limit
	if more {
		out = out[:p.Limit]
	}
	if p.EndingBefore != "" {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out, more, nil
}

// numberedPage serves page p.Page of p.Limit rows: the count and the rows both run on the
// (scope…, seq) indexes; the offset is bounded by the page range the caller allows.
func numberedPage[T any](tx *Tx, table, cols string, f filter, p ListParams, scan func(scanner) (T, error)) ([]T, bool, error) {
	where := strings.Join(f.where, " AND ")
	var total int64
	countWhere, countArgs := where, f.args
	if f.union != nil {
		clause, more := anyOf(f.union)
		countWhere += " AND " + clause
		countArgs = append(append([]any{}, f.args...), more...)
	}
	if err := tx.queryRow(fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE %s", table, countWhere), countArgs...).Scan(&total); err != nil {
		return nil, false, translate(err, "count "+table)
	}
	if p.Total != nil {
		*p.Total = total
	}
	offset := int64(p.Page-1) * int64(p.Limit)
	if offset >= total {
		return nil, false, nil
	}
	q := fmt.Sprintf("SELECT %s FROM %s WHERE %s ORDER BY seq DESC LIMIT %d OFFSET %d", cols, table, where, p.Limit, offset)
	args := f.args
	if f.union != nil {
		var seqs string
		seqs, args = unionOf(table, where, f.args, f.union, "DESC", offset+int64(p.Limit))
		q = fmt.Sprintf("SELECT %s FROM %s WHERE seq IN (%s) ORDER BY seq DESC LIMIT %d OFFSET %d", cols, table, seqs, p.Limit, offset)
	}
	out, err := scanRows(tx, table, q, args, scan)
	if err != nil {
		return nil, false, err
	}
	return out, offset+int64(len(out)) < total, nil
}

// scanRows runs the list query q on table and scans every row (the one loop of both kinds of
// page).
func scanRows[T any](tx *Tx, table, q string, args []any, scan func(scanner) (T, error)) ([]T, error) {
	rows, err := tx.query(q, args...)
	if err != nil {
		return nil, translate(err, "list "+table)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, translate(err, "scan "+table)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, translate(err, "list "+table)
	}
	return out, nil
}

// ErrCursorNotFound is returned when starting_after or ending_before names no object in scope.
var ErrCursorNotFound = fmt.Errorf("db: cursor object not found")

// CursorError names the cursor parameter whose object was not found; it matches ErrCursorNotFound.
type CursorError struct{ Param string }

func (e *CursorError) Error() string { return "db: cursor object not found (" + e.Param + ")" }

// Is makes errors.Is(err, ErrCursorNotFound) true.
func (e *CursorError) Is(target error) bool { return target == ErrCursorNotFound }

// scanner is the common interface of *sql.Row and *sql.Rows.
type scanner interface {
	Scan(dest ...any) error
}
