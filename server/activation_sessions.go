package server

import (
	"net/http"
	"strings"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
)

// activationBaseURL is the prefix of hosted activation urls: --base-url, or (when unset, as in
// tests) the https origin the request reached.
func (s *Server) activationBaseURL(r *http.Request) string {
	if s.cfg.BaseURL != "" {
		return strings.TrimRight(s.cfg.BaseURL, "/")
	}
	return "https://" + r.Host
}

func (s *Server) handleActivationSessionCreate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p core.ActivationSessionParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		base := s.activationBaseURL(r)
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.CreateActivationSession(tx, a, p, base) })
	})
}

func (s *Server) handleActivationSessionGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.GetActivationSession(tx, a, id) })
	})
}
