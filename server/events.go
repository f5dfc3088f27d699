package server

import (
	"errors"
	"net/http"

	"troco/db"
	"troco/server/domain"
)

func (s *Server) handleEventGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			e, err := tx.FindEventByID(a.Scope, id)
			if errors.Is(err, db.ErrNotFound) {
				return nil, domain.NotFound("id", "event", id)
			}
			return e, err
		})
	})
}

func (s *Server) handleEventList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseList(r, "type")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if t := q.str("type"); t != "" && !domain.ValidEventPattern(t) {
			s.writeError(w, r, domain.Invalid("type", "Unknown event type %q: use a type listed in the API reference or a prefix wildcard such as \"customer.*\".", t))
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			items, more, err := tx.ListEvents(a.Scope, db.EventFilter{Type: q.str("type")}, q.ListParams)
			return listOf(r, items, more), err
		})
	})
}
