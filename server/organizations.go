package server

import (
	"net/http"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
)

func (s *Server) handleOrganizationGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.GetOrganization(tx, a, id) })
	})
}
