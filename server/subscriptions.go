package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"troco/db"
	"troco/server/billing"
	"troco/server/domain"
	"troco/server/jobs"
	"troco/server/payments"
)

// billingService is the recurring billing operations over this server's payments engine.
func (s *Server) billingService() *billing.Service {
	return billing.New(s.pay, s.cfg.DunningFinal)
}

// subscriptionBatch is how many subscriptions one job transaction renews.
const subscriptionBatch = 50

// subscriptionJob renews subscriptions at the end instant of their periods, retries declined
// renewals, sends trial and upcoming-invoice notices and expires incomplete subscriptions; each
// batch is claimed inside one write transaction, so replicas never renew one twice.
func (s *Server) subscriptionJob() jobs.Job {
	return jobs.Job{Name: "subscriptions", Every: 30 * time.Second, Run: func(ctx context.Context, now time.Time) error {
		svc := s.billingService() // one per run: it collects the live processor calls reserved
		for {
			n := 0
			err := s.db.Write(ctx, func(tx *db.Tx) error {
				svc.TakePending()
				var err error
				n, err = svc.RunDue(tx, now, subscriptionBatch)
				return err
			})
			if err == nil {
				// Live renewals reserved card charges: make them now that the batch committed.
				err = svc.ExecutePending(ctx, s.db, svc.TakePending())
			} else {
				svc.TakePending()
			}
			if err != nil {
				// The batch rolled back: renew its subscriptions one by one, so the one that fails
				// is postponed (and logged) instead of holding back every renewal behind it.
				var more bool
				if more, err = s.renewOneByOne(ctx, svc, now); err != nil || !more {
					return err
				}
				continue
			}
			if n < subscriptionBatch {
				return nil
			}
		}
	}}
}

// subscriptionRetry is how long the job waits before trying again a subscription it could not
// renew.
const subscriptionRetry = time.Hour

func (s *Server) renewOneByOne(ctx context.Context, svc *billing.Service, now time.Time) (more bool, err error) {
	var due []db.ScopedSubscription
	if err := s.db.Read(ctx, func(tx *db.Tx) error {
		var err error
		due, err = tx.DueSubscriptions(now.Unix(), subscriptionBatch)
		return err
	}); err != nil {
		return false, err
	}
	for _, d := range due {
		id := d.Subscription.ID
		err := s.db.Write(ctx, func(tx *db.Tx) error {
			svc.TakePending()
			return svc.RunOne(tx, d.Scope, id, now)
		})
		if err == nil {
			if err := svc.ExecutePending(ctx, s.db, svc.TakePending()); err != nil {
				return false, err
			}
			continue
		}
		svc.TakePending()
		s.log.Error("subscription renewal failed; retrying later", slog.String("subscription", id), slog.String("error", err.Error()))
		if err := s.db.Write(ctx, func(tx *db.Tx) error { return tx.PostponeSubscription(d.Scope, id, now.Add(subscriptionRetry).Unix()) }); err != nil {
			return false, err
		}
	}
	return len(due) == subscriptionBatch, nil
}

// billingMutate is mutate for billing operations: a live card charge the operation reserved (the
// first invoice of a new subscription, a final invoice) is made once the reservation commits,
// and the answer is applied before the request is answered, so the response (and the response
// stored for an Idempotency-Key) shows the subscription as the charge left it: active, not
// incomplete. More than one reservation (none today) is made after answering instead.
func (s *Server) billingMutate(w http.ResponseWriter, r *http.Request, op func(svc *billing.Service, tx *db.Tx, a domain.Actor) (any, error)) {
	s.billingMutateAs(w, r, http.StatusOK, op)
}

// billingMutateAs is billingMutate answering ok on success (/api/v1: 201 on creation).
func (s *Server) billingMutateAs(w http.ResponseWriter, r *http.Request, ok int, op func(svc *billing.Service, tx *db.Tx, a domain.Actor) (any, error)) {
	svc := s.billingService()
	var reserved *billing.PendingCall
	var first any
	s.mutateAs(w, r, ok, func(tx *db.Tx, a domain.Actor) (any, error) {
		if reserved != nil {
			// The run after the call: apply its answer, answer the object as it is now.
			if err := svc.ApplyCall(tx, *reserved); err != nil {
				return nil, err
			}
			svc.TakePending() // an unknown outcome reserved again: the reconciliation follows it
			sub, err := billing.Get(tx, a.Scope, reserved.Subscription())
			if err != nil {
				return nil, err
			}
			switch first.(type) {
			case *domain.Subscription:
				return sub, nil
			case json.RawMessage: // /api/v1's shape of the subscription
				return shaped(sub), nil
			}
			return first, nil
		}
		svc.TakePending() // a rolled-back earlier run reserved nothing
		res, err := op(svc, tx, a)
		if err != nil {
			return res, err
		}
		if len(svc.Reserved()) == 1 {
			c := svc.TakePending()[0]
			reserved, first = &c, res
			return nil, payments.PendingError(c.Pending())
		}
		return res, nil
	})
	if calls := svc.TakePending(); len(calls) > 0 {
		if err := svc.ExecutePending(context.WithoutCancel(r.Context()), s.db, calls); err != nil {
			s.log.Error("apply a live subscription charge", slog.String("error", err.Error()))
		}
	}
}

func (s *Server) handleSubscriptionCreate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p billing.CreateParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.billingMutate(w, r, func(svc *billing.Service, tx *db.Tx, a domain.Actor) (any, error) { return svc.Create(tx, a, p) })
	})
}

func (s *Server) handleSubscriptionGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return billing.Get(tx, a.Scope, id) })
	})
}

func (s *Server) handleSubscriptionUpdate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p billing.UpdateParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.billingMutate(w, r, func(svc *billing.Service, tx *db.Tx, a domain.Actor) (any, error) { return svc.Update(tx, a, id, p) })
	})
}

func (s *Server) handleSubscriptionCancel() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p billing.CancelParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.billingMutate(w, r, func(svc *billing.Service, tx *db.Tx, a domain.Actor) (any, error) { return svc.Cancel(tx, a, id, p) })
	})
}

func (s *Server) handleSubscriptionResume() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p struct{}
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.billingMutate(w, r, func(svc *billing.Service, tx *db.Tx, a domain.Actor) (any, error) { return svc.Resume(tx, a, id) })
	})
}

func (s *Server) handleSubscriptionList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseList(r, "customer", "status", "price", "collection_method")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		status, err := q.oneOf("status", domain.SubscriptionStatuses...)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		method, err := q.oneOf("collection_method", domain.CollectionMethods...)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			items, more, err := tx.ListSubscriptions(a.Scope, db.SubscriptionFilter{Customer: q.str("customer"), Status: status,
				Price: q.str("price"), CollectionMethod: method}, q.ListParams)
			return listOf(r, items, more), err
		})
	})
}
