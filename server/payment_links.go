package server

import (
	"net/http"

	"troco/db"
	"troco/server/checkout"
	"troco/server/domain"
)

func (s *Server) handlePaymentLinkCreate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p checkout.LinkParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		base := s.checkoutBase(r)
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return checkout.CreateLink(tx, a, base, p) })
	})
}

func (s *Server) handlePaymentLinkGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return checkout.GetLink(tx, a.Scope, id) })
	})
}

func (s *Server) handlePaymentLinkUpdate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p checkout.LinkParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return checkout.UpdateLink(tx, a, id, p) })
	})
}

func (s *Server) handlePaymentLinkDelete() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return checkout.DeleteLink(tx, a, id) })
	})
}

func (s *Server) handlePaymentLinkList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseList(r, "active")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		active, err := q.boolean("active")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			items, more, err := tx.ListPaymentLinks(a.Scope, db.PaymentLinkFilter{Active: active}, q.ListParams)
			return listOf(r, items, more), err
		})
	})
}
