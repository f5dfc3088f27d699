package server

import (
	"net/http"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
)

func (s *Server) handleOnboardingSessionCreate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p core.OnboardingSessionParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		base := s.activationBaseURL(r)
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.CreateOnboardingSession(tx, a, p, base) })
	})
}

func (s *Server) handleOnboardingSessionGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.GetOnboardingSession(tx, a, id) })
	})
}

func (s *Server) handleOnboardingSessionList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseList(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			items, more, err := core.ListOnboardingSessions(tx, a, q.ListParams)
			if err != nil {
				return nil, err
			}
			return listOf(r, items, more), nil
		})
	})
}
