package server

import (
	"net/http"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
)

// needPlatformOrPrefix marks a route need (see platformOr).
const needPlatformOrPrefix = "platform_or:"

// platformOr is the need of an organization endpoint that platforms also call: a platform key
// without the Organization header acts as its platform (and must be an active platform with
// split rules); organization keys need scope and act on their own organization; a platform key
// with the header acts on that connected organization.
func platformOr(scope string) string { return needPlatformOrPrefix + scope }

// needPlatformOwnPrefix marks a route need (see platformOwn).
const needPlatformOwnPrefix = "platform_own:"

// platformOwn is the need of an organization endpoint a platform also calls for its own
// organization (events, webhook endpoints, the sandbox clock): a platform key without the
// Organization header (or naming the platform itself) acts on the platform's organization;
// with another header it is routed as usual.
func platformOwn(scope string) string { return needPlatformOwnPrefix + scope }

// orgCaller says in which capacity the request's key calls the organizations API.
func orgCaller(r *http.Request) core.OrgCaller {
	info := authFrom(r.Context())
	return core.OrgCaller{
		AsPlatform: info.Key.Platform() && info.Platform == nil,
		Admin:      info.Key.Platform() || info.Key.Allows(domain.ScopeAdmin),
	}
}

func (s *Server) handleOrganizationGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		c := orgCaller(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.GetOrganizationAs(tx, a, c, id) })
	})
}

func (s *Server) handleOrganizationCreate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p core.OrganizationParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		c := orgCaller(r)
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.CreateConnectedOrganization(tx, a, c, p) })
	})
}

func (s *Server) handleOrganizationUpdate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p core.OrganizationParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		c := orgCaller(r)
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.UpdateOrganization(tx, a, c, id, p) })
	})
}

func (s *Server) handleOrganizationList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseList(r, "activation_status")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			items, more, err := core.ListConnectedOrganizations(tx, a, db.OrganizationFilter{ActivationStatus: q.str("activation_status")}, q.ListParams)
			if err != nil {
				return nil, err
			}
			return listOf(r, items, more), nil
		})
	})
}
