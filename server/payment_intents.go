package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"time"

	"troco/db"
	"troco/server/domain"
	"troco/server/jobs"
	"troco/server/payments"
)

// paymentJobs are the background jobs of the payment engine.
func (s *Server) paymentJobs() []jobs.Job {
	return []jobs.Job{{Name: "payments-scheduled-transitions", Every: 5 * time.Second, Run: func(ctx context.Context, now time.Time) error {
		return s.pay.RunDueTransitions(ctx, s.db, now)
	}}, {Name: "payments-reconcile-processors", Every: 15 * time.Second, Run: func(ctx context.Context, now time.Time) error {
		return s.pay.Reconcile(ctx, s.db, now)
	}}, {Name: "disputes", Every: 5 * time.Second, Run: func(ctx context.Context, now time.Time) error {
		return s.pay.RunDueDisputes(ctx, s.db, now)
	}}}
}

// paymentIntentStatuses are the values the status filter of GET /v1/payment-intents accepts;
// pending and requires_action both find the waiting state (SPEC 3.4).
var paymentIntentStatuses = domain.PIStatuses

// origin is the https://host the API's public URLs start with: --base-url, or (without one, as
// in tests) the origin the request reached.
func (s *Server) origin(r *http.Request) string {
	if s.cfg.BaseURL != "" {
		return s.cfg.BaseURL
	}
	return "https://" + r.Host
}

// paymentIntentCreate is the body of POST /v1/payment-intents: the intent's fields and, with
// confirm: true, every parameter of POST /v1/payment-intents/{id}/confirm.
type paymentIntentCreate struct {
	payments.IntentParams
	Confirm *bool `json:"confirm"`
	payments.ConfirmParams
}

// confirmOnlyParams are the body keys of a confirmation (payments.ConfirmParams), which create
// accepts only with confirm: true.
var confirmOnlyParams = func() []string {
	var keys []string
	t := reflect.TypeFor[payments.ConfirmParams]()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	return keys
}()

func (s *Server) handlePaymentIntentCreate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p paymentIntentCreate
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		if p.Confirm == nil || !*p.Confirm {
			// decode left the body readable again; it is a JSON object (decode checked it).
			body, _ := s.readBody(w, r)
			var sent map[string]json.RawMessage
			_ = json.Unmarshal(body, &sent)
			for _, k := range confirmOnlyParams {
				if _, ok := sent[k]; !ok {
					continue
				}
				if k == "client_secret" { // refused with confirm too: no intent has it yet
					s.writeError(w, r, payments.ClientSecretOnCreate())
				} else {
					s.writeError(w, r, domain.Invalid(k, "%s is a confirmation parameter: send it with confirm: true to create and confirm in one request, or to POST /v1/payment-intents/{id}/confirm.", k))
				}
				return
			}
			s.mutateEventObject(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return s.pay.CreateIntent(tx, a, p.IntentParams) })
			return
		}
		cp := p.ConfirmParams
		s.confirmRequest(r, &cp)
		if auth := authFrom(r.Context()); auth != nil {
			s.pay.PrepareCard(auth.Actor.Scope, &cp) // the card's fingerprint, off the writer
		}
		// A live network processor answers between two runs (see mutate): the first creates the
		// intent and reserves the call, the next ones confirm that intent, like a confirm request.
		// With an Idempotency-Key the first run also stores the new intent as the key's answer
		// until the final one replaces it: a retry after a crash between the runs replays that
		// intent (processing; the reconciliation job settles it) instead of charging again.
		st, _ := r.Context().Value(ctxIdem).(*idemState)
		var created string
		s.mutateEventObject(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			if created != "" {
				return s.pay.Confirm(tx, a, created, cp)
			}
			pi, err := s.pay.CreateAndConfirm(tx, a, p.IntentParams, cp)
			if payments.PendingOf(err) == nil || pi == nil {
				return pi, err
			}
			if st != nil {
				body, merr := domain.MarshalJSON(pi)
				if merr != nil {
					return nil, merr
				}
				if serr := storeProvisional(tx, st, body); serr != nil {
					return nil, serr
				}
			}
			created = pi.ID
			return pi, err
		})
	})
}

// confirmRequest sets the fields of a confirmation that come from the request, not its body.
func (s *Server) confirmRequest(r *http.Request, p *payments.ConfirmParams) {
	p.Origin = s.origin(r)
	p.Request = true
}

func (s *Server) handlePaymentIntentGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return s.pay.GetIntent(tx, a.Scope, id) })
	})
}

func (s *Server) handlePaymentIntentUpdate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p payments.IntentParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			return s.pay.UpdateIntent(tx, a, id, p)
		})
	})
}

func (s *Server) handlePaymentIntentList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseList(r, "status", "customer")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if _, err := q.oneOf("status", paymentIntentStatuses...); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			items, more, err := tx.ListPaymentIntents(a.Scope, db.PaymentIntentFilter{Status: q.str("status"), Customer: q.str("customer")}, q.ListParams)
			return listOf(r, items, more), err
		})
	})
}

func (s *Server) handlePaymentIntentConfirm() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p payments.ConfirmParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.confirmRequest(r, &p)
		if auth := authFrom(r.Context()); auth != nil {
			_ = s.db.ReadOne(r.Context(), func(tx *db.Tx) error {
				s.pay.PrepareConfirm(tx, auth.Actor.Scope, id, &p)
				return nil
			})
		}
		s.mutateEventObject(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			return s.pay.Confirm(tx, a, id, p)
		})
	})
}

// apiOrIntentSecret authenticates POST /v1/payment-intents/:id/confirm with an API key or, without
// one, with the intent's client_secret in the body (CONTRACT 4: the client_secret lets a page
// without an API key confirm), the way apiOrClientSecret does for checkout sessions. A wrong or
// missing secret is 401, whether or not the intent exists.
func (s *Server) apiOrIntentSecret(need string, h http.Handler) http.Handler {
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
			s.writeError(w, r, domain.Unauthenticated("No API key provided. Send an API key, or the payment intent's client_secret in the body."))
			return
		}
		var pi *domain.PaymentIntent
		var scope domain.Scope
		err = s.db.Read(r.Context(), func(tx *db.Tx) error {
			var err error
			pi, scope, err = tx.FindPaymentIntentAnyScope(pathID(r))
			return err
		})
		if errors.Is(err, db.ErrNotFound) || (err == nil && !payments.SecretMatches(pi.ClientSecret, probe.ClientSecret)) {
			s.writeError(w, r, domain.Unauthenticated("Invalid client_secret for this payment intent."))
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

func (s *Server) handlePaymentIntentCapture() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p payments.CaptureParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return s.pay.CaptureIntent(tx, a, id, p) })
	})
}

func (s *Server) handlePaymentIntentCancel() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p payments.CancelParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return s.pay.CancelIntent(tx, a, id, p) })
	})
}

func (s *Server) handlePaymentIntentRegenerateBoleto() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p payments.RegenerateParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		p.Origin = s.origin(r)
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return s.pay.RegenerateBoleto(tx, a, id, p) })
	})
}

// handlePaymentIntentTestHelper serves POST /v1/test-helpers/payment-intents/:id/{succeed,expire}.
func (s *Server) handlePaymentIntentTestHelper(succeed bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p struct {
			PaidWith string `json:"paid_with"` // a boleto híbrido paid by boleto (barcode) or pix
		}
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		origin := s.origin(r)
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			return s.pay.SimulateSettlementWith(tx, a, id, payments.SimulateOptions{Succeed: succeed, Origin: origin, PaidWith: p.PaidWith})
		})
	})
}

func (s *Server) handleChargeGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return s.pay.GetCharge(tx, a.Scope, id) })
	})
}

func (s *Server) handleChargeList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseList(r, "payment_intent", "customer")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			items, more, err := tx.ListCharges(a.Scope, db.ChargeFilter{PaymentIntent: q.str("payment_intent"), Customer: q.str("customer")}, q.ListParams)
			return listOf(r, items, more), err
		})
	})
}

func (s *Server) handleRefundCreate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p payments.RefundParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return s.pay.CreateRefund(tx, a, p) })
	})
}

func (s *Server) handleRefundGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return s.pay.GetRefund(tx, a.Scope, id) })
	})
}

func (s *Server) handleRefundList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseList(r, "charge", "payment_intent")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			items, more, err := tx.ListRefunds(a.Scope, db.RefundFilter{Charge: q.str("charge"), PaymentIntent: q.str("payment_intent")}, q.ListParams)
			return listOf(r, items, more), err
		})
	})
}

func (s *Server) handleTransactionGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return s.pay.GetTransaction(tx, a.Scope, id) })
	})
}

func (s *Server) handleTransactionList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseList(r, "payment_intent", "charge", "type")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if _, err := q.oneOf("type", domain.TxnTypeCharge, domain.TxnTypeRefund, domain.TxnTypeDispute, domain.TxnTypeDisputeReversal); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			f := db.TransactionFilter{PaymentIntent: q.str("payment_intent"), Charge: q.str("charge"), Type: q.str("type")}
			items, more, err := tx.ListTransactions(a.Scope, f, q.ListParams)
			return listOf(r, items, more), err
		})
	})
}

// handlePaymentPreview computes instalment options; it writes nothing, so it runs on a read
// transaction (an Idempotency-Key still stores its answer).
func (s *Server) handlePaymentPreview() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p payments.PreviewParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return s.pay.PaymentPreview(tx, a, p) })
	})
}
