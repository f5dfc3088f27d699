package server

import (
	"net/http"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
)

func (s *Server) handleCustomerCreate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p core.CustomerParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.CreateCustomer(tx, a, p) })
	})
}

func (s *Server) handleCustomerGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.GetCustomer(tx, a.Scope, id) })
	})
}

func (s *Server) handleCustomerUpdate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p core.CustomerParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.UpdateCustomer(tx, a, id, p) })
	})
}

func (s *Server) handleCustomerDelete() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.DeleteCustomer(tx, a, id) })
	})
}

func (s *Server) handleCustomerList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseList(r, "email")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			items, more, err := tx.ListCustomers(a.Scope, db.CustomerFilter{Email: q.str("email")}, q.ListParams)
			return listOf(r, items, more), err
		})
	})
}
