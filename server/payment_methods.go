package server

import (
	"net/http"

	"troco/db"
	"troco/server/domain"
	"troco/server/payments"
)

func (s *Server) handlePaymentMethodCreate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p payments.PaymentMethodParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return s.pay.CreatePaymentMethod(tx, a, p) })
	})
}

func (s *Server) handlePaymentMethodGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return s.pay.GetPaymentMethod(tx, a.Scope, id) })
	})
}

// handlePaymentMethodList lists payment methods, usually a customer's (filter customer).
func (s *Server) handlePaymentMethodList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseList(r, "customer", "type")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if _, err := q.oneOf("type", domain.MethodCreditCard, domain.MethodPix, domain.MethodBoleto); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			items, more, err := tx.ListPaymentMethods(a.Scope, db.PaymentMethodFilter{Customer: q.str("customer"), Type: q.str("type")}, q.ListParams)
			return listOf(r, items, more), err
		})
	})
}

func (s *Server) handlePaymentMethodAttach() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p payments.AttachParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return s.pay.AttachPaymentMethod(tx, a, id, p) })
	})
}

func (s *Server) handlePaymentMethodDetach() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p struct{}
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return s.pay.DetachPaymentMethod(tx, a, id) })
	})
}

func (s *Server) handleSetupIntentCreate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p payments.SetupIntentParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return s.pay.CreateSetupIntent(tx, a, p) })
	})
}

func (s *Server) handleSetupIntentGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return s.pay.GetSetupIntent(tx, a.Scope, id) })
	})
}

func (s *Server) handleSetupIntentList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseList(r, "customer")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			items, more, err := tx.ListSetupIntents(a.Scope, db.SetupIntentFilter{Customer: q.str("customer")}, q.ListParams)
			return listOf(r, items, more), err
		})
	})
}

func (s *Server) handleSetupIntentConfirm() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p payments.SetupConfirmParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return s.pay.ConfirmSetupIntent(tx, a, id, p) })
	})
}

func (s *Server) handleSetupIntentCancel() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p payments.SetupCancelParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return s.pay.CancelSetupIntent(tx, a, id, p) })
	})
}
