package server

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"troco/db"
	"troco/server/billing"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/payments"
)

// The customer-portal path of /api/v1 (/api/v1/customer-portal/…): the customer's own app acts
// with a customer session token (troco_cst_…, from POST /v1/customer-portal-sessions, valid one
// hour) on that one customer's subscriptions, invoices and payment methods, through the same
// billing functions as the hosted portal. Another customer's objects are 404; the token is
// refused on Core paths, and Core credentials are refused here.

const portalPrefix = "/api/v1/customer-portal"

// needCustomer marks the customer-portal operations in the OpenAPI document (a customer session
// token, not a scope).
const needCustomer = "customer"

// customerPortal wraps a customer-portal handler: the customer session token, the per-minute
// limit of the token, the request log of its organization, idempotency (keys per customer).
func (s *Server) customerPortal(h http.Handler) http.Handler {
	withIdem := s.withIdempotency(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info, err := s.authenticateCustomer(r)
		if err != nil {
			s.refused(w, r, info, start, err)
			return
		}
		s.logRequest(w, r, info.Actor.Scope, "", start, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if s.rateLimitedPerMinute(w, r, info.Key) {
				return
			}
			withIdem.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxAuth, info)))
		}))
	})
}

// authenticateCustomer resolves a customer session token to its organization, environment and
// customer. Unknown, expired or a deleted customer's tokens are 401; API keys and access tokens
// are 403 here (they are valid, but for the Core paths).
func (s *Server) authenticateCustomer(r *http.Request) (*authInfo, error) {
	token, err := bearerToken(r)
	if err != nil {
		return nil, domain.Unauthenticated("No customer session token provided. Send the customer_session_token of POST /v1/customer-portal-sessions as Authorization: Bearer <token>.")
	}
	if !strings.HasPrefix(token, domain.CustomerSessionTokenPrefix) {
		if strings.HasPrefix(token, "ch_") || strings.Count(token, ".") == 2 {
			// A Core credential: when it is valid, the refusal is in its organization's log.
			known, _ := s.authenticateCore(r, domain.ScopeRead)
			return known, domain.Forbidden("The customer-portal path takes only customer session tokens (troco_cst_…, from POST /v1/customer-portal-sessions); API keys and access tokens act on the other /api/v1 paths.")
		}
		return nil, domain.Unauthenticated("Invalid customer session token.")
	}
	return s.customerOfToken(r, token)
}

// customerOfToken resolves a customer session token (troco_cst_…).
func (s *Server) customerOfToken(r *http.Request, token string) (*authInfo, error) {
	hash := billing.HashToken(token)
	var scope domain.Scope
	var customer string
	err := s.db.Read(r.Context(), func(tx *db.Tx) error {
		var err error
		if scope, customer, err = tx.FindCustomerSessionToken(hash, s.cfg.Clock.Now().Unix()); err != nil {
			return err
		}
		_, err = core.GetCustomer(tx, scope, customer)
		return err
	})
	if e, ok := domain.AsError(err); errors.Is(err, db.ErrNotFound) || ok && e.Status == http.StatusNotFound {
		return nil, domain.Unauthenticated("Invalid or expired customer session token (it is valid one hour): create a new customer portal session.")
	}
	if err != nil {
		return nil, err
	}
	// The limit is per token: a stand-in key named after the token's hash (never the token).
	key := &domain.APIKey{ID: "cst_" + hash[:24], Organization: scope.OrgID, Livemode: scope.Livemode}
	return &authInfo{Key: key, Customer: customer, Actor: domain.Actor{Scope: scope, RequestID: requestID(r.Context())}}, nil
}

// portalCustomer is the customer of the request's token.
func portalCustomer(r *http.Request) string { return authFrom(r.Context()).Customer }

func (s *Server) apiV1PortalRoutes(add func(method, path string, h http.Handler)) {
	// The customer.
	add("GET", portalPrefix+"/customer", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cus := portalCustomer(r)
		s.read(w, r, op(func(tx *db.Tx, a domain.Actor) (*domain.Customer, error) { return core.GetCustomer(tx, a.Scope, cus) }))
	}))

	// Subscriptions: list, get, cancel at period end, keep (undo the cancellation or resume).
	add("GET", portalPrefix+"/subscriptions", s.pageHandler(func(r *http.Request, tx *db.Tx, a domain.Actor, q *listQuery) (any, error) {
		status, err := q.oneOf("status", domain.SubscriptionStatuses...)
		if err != nil {
			return nil, err
		}
		items, _, err := tx.ListSubscriptions(a.Scope, db.SubscriptionFilter{Customer: portalCustomer(r), Status: status}, q.ListParams)
		return items, err
	}, "status"))
	add("GET", portalPrefix+"/subscriptions/:id", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, cus := pathID(r), portalCustomer(r)
		s.read(w, r, op(func(tx *db.Tx, a domain.Actor) (*domain.Subscription, error) {
			return billing.CustomerSubscription(tx, a.Scope, cus, id)
		}))
	}))
	add("POST", portalPrefix+"/subscriptions/:id/cancel", s.portalSubscriptionAction((*billing.Service).CancelForCustomer))
	add("POST", portalPrefix+"/subscriptions/:id/keep", s.portalSubscriptionAction((*billing.Service).KeepForCustomer))

	// Invoices (drafts are not the customer's yet): hosted_invoice_url and invoice_pdf link to
	// the invoice's page and PDF.
	add("GET", portalPrefix+"/invoices", s.pageHandler(func(r *http.Request, tx *db.Tx, a domain.Actor, q *listQuery) (any, error) {
		status, err := q.oneOf("status", domain.InvoiceOpen, domain.InvoicePaid, domain.InvoiceVoid, domain.InvoiceUncollectible)
		if err != nil {
			return nil, err
		}
		items, _, err := tx.ListInvoices(a.Scope, db.InvoiceFilter{Customer: portalCustomer(r), Status: status, Subscription: q.str("subscription"), NotDraft: true}, q.ListParams)
		for _, inv := range items {
			inv.ApplyLateCharges(tx.Now)
		}
		return items, err
	}, "status", "subscription"))
	add("GET", portalPrefix+"/invoices/:id", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, cus := pathID(r), portalCustomer(r)
		s.read(w, r, op(func(tx *db.Tx, a domain.Actor) (*domain.Invoice, error) {
			return billing.CustomerInvoice(tx, a.Scope, cus, id)
		}))
	}))

	// Payment methods: list, get, and a new card (saved through a setup intent, then the default
	// payment method of the customer's running subscriptions).
	add("GET", portalPrefix+"/payment-methods", s.pageHandler(func(r *http.Request, tx *db.Tx, a domain.Actor, q *listQuery) (any, error) {
		items, _, err := tx.ListPaymentMethods(a.Scope, db.PaymentMethodFilter{Customer: portalCustomer(r)}, q.ListParams)
		return items, err
	}))
	add("GET", portalPrefix+"/payment-methods/:id", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, cus := pathID(r), portalCustomer(r)
		svc := s.billingService()
		s.read(w, r, op(func(tx *db.Tx, a domain.Actor) (*domain.PaymentMethod, error) {
			return svc.CustomerPaymentMethod(tx, a.Scope, cus, id)
		}))
	}))
	add("POST", portalPrefix+"/payment-methods", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p struct {
			Card *payments.CardParams `json:"card"`
		}
		if !s.decoded(w, r, &p) {
			return
		}
		if p.Card == nil {
			s.writeError(w, r, domain.Missing("card"))
			return
		}
		cus := portalCustomer(r)
		var setupIntent string // kept between the runs of a live save (reserve, call, apply)
		s.billingMutateAs(w, r, http.StatusCreated, func(svc *billing.Service, tx *db.Tx, a domain.Actor) (any, error) {
			pm, err := svc.ReplaceCard(tx, a, cus, p.Card, &setupIntent)
			if err != nil {
				return nil, err
			}
			return shaped(pm), nil
		})
	}))
}

// portalSubscriptionAction serves an action on one of the customer's subscriptions (no body).
func (s *Server) portalSubscriptionAction(act func(svc *billing.Service, tx *db.Tx, a domain.Actor, customer, id string) (*domain.Subscription, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, cus := pathID(r), portalCustomer(r)
		var body struct{}
		if !s.decoded(w, r, &body) {
			return
		}
		s.billingMutateAs(w, r, http.StatusOK, func(svc *billing.Service, tx *db.Tx, a domain.Actor) (any, error) {
			sub, err := act(svc, tx, a, cus, id)
			if err != nil {
				return nil, err
			}
			return shaped(sub), nil
		})
	})
}
