package server

import (
	"net/http"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
)

// payoutLiveOnly answers 409 sandbox_unsupported to a test key before anything else (SPEC 4.9).
func (s *Server) payoutLiveOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !authFrom(r.Context()).Actor.Livemode {
			s.writeError(w, r, core.SandboxUnsupported())
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (s *Server) handlePayoutAccountCreate() http.Handler {
	return s.payoutLiveOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p core.PayoutAccountParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.CreatePayoutAccount(tx, a, p) })
	}))
}

func (s *Server) handlePayoutAccountGet() http.Handler {
	return s.payoutLiveOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.GetPayoutAccount(tx, a, id) })
	}))
}

func (s *Server) handlePayoutAccountList() http.Handler {
	return s.payoutLiveOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseList(r, "status")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			items, more, err := core.ListPayoutAccounts(tx, a, db.PayoutAccountFilter{Status: q.str("status")}, q.ListParams)
			if err != nil {
				return nil, err
			}
			return listOf(r, items, more), nil
		})
	}))
}

func (s *Server) handlePayoutAccountDisconnect() http.Handler {
	return s.payoutLiveOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var none struct{}
		if err := s.decode(w, r, &none); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.DisconnectPayoutAccount(tx, a, id) })
	}))
}
