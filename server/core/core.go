// Package core holds troco's operations: each one is a function on a database transaction that
// validates its input, applies the domain rules, writes the change and its event. The /v1 API,
// the /api/v1 API and the hosted pages all call these functions, each inside a transaction it opens.
package core

import (
	"errors"
	"strings"

	"troco/db"
	"troco/server/domain"
)

// emit writes an event for obj in the actor's scope within tx. prev, when non-nil, is the object
// before the change; the changed top-level fields' old values become previous_attributes. A
// `*.updated` event whose object did not change is not written.
func emit(tx *db.Tx, a domain.Actor, typ string, obj, prev any) error {
	e := &domain.Event{Type: typ, Data: domain.EventData{Object: obj}}
	if a.RequestID != "" {
		id := a.RequestID
		e.Request.ID = &id
	}
	if prev != nil {
		e.Data.PreviousAttributes = diff(prev, obj)
		if len(e.Data.PreviousAttributes) == 0 && strings.HasSuffix(typ, ".updated") {
			return nil // an update that changed nothing: no "updated" event for nothing
		}
	}
	return tx.InsertEvent(a.Scope, e)
}

// Emit writes an event; exported for the packages that own other resources.
func Emit(tx *db.Tx, a domain.Actor, typ string, obj, prev any) error {
	return emit(tx, a, typ, obj, prev)
}

// notFound converts db.ErrNotFound to a 404 for kind/id named by param.
func notFound(err error, param, kind, id string) error {
	if errors.Is(err, db.ErrNotFound) {
		return domain.NotFound(param, kind, id)
	}
	return err
}

func strPtr(s string) *string { return &s }

// applyText sets *dst from an optional text field (null clears it), validating its length.
func applyText(dst **string, o domain.Opt[string], param string, maxLen int) error {
	if !o.Set {
		return nil
	}
	if o.Null || o.V == "" {
		*dst = nil
		return nil
	}
	if err := domain.ValidateText(param, o.V, maxLen); err != nil {
		return err
	}
	*dst = strPtr(o.V)
	return nil
}
