package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"troco/db"
	"troco/server/checkout"
	"troco/server/domain"
)

// checkoutBase is the base URL hosted-page and link URLs start with: --base-url, or (when the
// server runs without one, as in tests) the HTTPS origin the request reached.
func (s *Server) checkoutBase(r *http.Request) string {
	if s.cfg.BaseURL != "" {
		return s.cfg.BaseURL
	}
	return "https://" + r.Host
}

func (s *Server) handleCheckoutSessionCreate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p checkout.SessionParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		base := s.checkoutBase(r)
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			p.Offer = s.pay.DefaultMethods(a.Livemode)
			return checkout.CreateSession(tx, a, base, p)
		})
	})
}

func (s *Server) handleCheckoutSessionGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return checkout.GetSession(tx, a.Scope, id) })
	})
}

var checkoutStatuses = []string{domain.CheckoutOpen, domain.CheckoutComplete, domain.CheckoutExpired}
var checkoutPaymentStatuses = []string{domain.CheckoutUnpaid, domain.CheckoutPaid, domain.CheckoutNoPaymentRequired}

func (s *Server) handleCheckoutSessionList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseList(r, "status", "payment_status", "customer", "payment_intent", "payment_link")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		f := db.CheckoutSessionFilter{Status: q.str("status"), PaymentStatus: q.str("payment_status"), Customer: q.str("customer"),
			PaymentIntent: q.str("payment_intent"), PaymentLink: q.str("payment_link")}
		if _, err := q.oneOf("status", checkoutStatuses...); err != nil {
			s.writeError(w, r, err)
			return
		}
		if _, err := q.oneOf("payment_status", checkoutPaymentStatuses...); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			items, more, err := tx.ListCheckoutSessions(a.Scope, f, q.ListParams)
			return listOf(r, items, more), err
		})
	})
}

func (s *Server) handleCheckoutSessionExpire() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var body struct{}
		if err := s.decode(w, r, &body); err != nil {
			s.writeError(w, r, err)
			return
		}
		svc := s.checkoutService()
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return svc.ExpireSession(tx, a, id) })
	})
}

func (s *Server) handleCheckoutSessionConfirm() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p checkout.ConfirmParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		p.Origin = s.checkoutBase(r)
		svc := s.checkoutService()
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return svc.Confirm(tx, a, id, p, "") })
	})
}

func (s *Server) handleCheckoutSessionTestHelper(action string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var body struct{}
		if err := s.decode(w, r, &body); err != nil {
			s.writeError(w, r, err)
			return
		}
		svc := s.checkoutService()
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return svc.TestHelper(tx, a, id, action) })
	})
}

// apiOrClientSecret authenticates a session confirmation by API key, or, without one, by the
// session's client_secret in the body (CONTRACT 4: the hosted page confirms without a key). The
// secret is compared in constant time and a wrong one is a 401 that changes nothing.
func (s *Server) apiOrClientSecret(need string, h http.Handler) http.Handler {
	withKey := s.api(need, h)
	withIdem := s.withIdempotency(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.Header.Values("Authorization"))+len(r.Header.Values("X-Service-Api-Key")) > 0 {
			withKey.ServeHTTP(w, r)
			return
		}
		body, err := s.readBody(w, r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		var probe struct {
			ClientSecret string `json:"client_secret"`
		}
		_ = json.Unmarshal(body, &probe)
		if probe.ClientSecret == "" {
			s.writeError(w, r, domain.Unauthenticated("No API key provided. Send an API key, or the checkout session's client_secret in the body."))
			return
		}
		var cs *domain.CheckoutSession
		var scope domain.Scope
		err = s.db.Read(r.Context(), func(tx *db.Tx) error {
			var err error
			cs, scope, err = tx.FindCheckoutSessionAnyScope(pathID(r))
			return err
		})
		if errors.Is(err, db.ErrNotFound) || (err == nil && !checkout.SecretMatches(cs, probe.ClientSecret)) {
			s.writeError(w, r, domain.Unauthenticated("Invalid client_secret for this checkout session."))
			return
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		info := &authInfo{Key: &domain.APIKey{Organization: scope.OrgID, Livemode: scope.Livemode}, Actor: domain.Actor{Scope: scope, RequestID: requestID(r.Context())}}
		withIdem.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxAuth, info)))
	})
}
