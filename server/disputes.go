package server

import (
	"net/http"

	"troco/db"
	"troco/server/domain"
	"troco/server/payments"
)

func (s *Server) handleDisputeList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseList(r, "charge", "payment_intent", "status")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		status, err := q.oneOf("status", domain.DisputeStatuses...)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			f := db.DisputeFilter{Charge: q.str("charge"), PaymentIntent: q.str("payment_intent"), Status: status}
			items, more, err := s.pay.ListDisputes(tx, a.Scope, f, q.ListParams)
			return listOf(r, items, more), err
		})
	})
}

func (s *Server) handleDisputeGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return s.pay.GetDispute(tx, a.Scope, id) })
	})
}

func (s *Server) handleDisputeUpdate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p payments.DisputeParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return s.pay.UpdateDispute(tx, a, id, p) })
	})
}

func (s *Server) handleDisputeClose() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return s.pay.CloseDispute(tx, a, id) })
	})
}
