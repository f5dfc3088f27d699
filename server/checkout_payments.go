package server

import (
	"context"
	"time"

	"troco/db"
	"troco/server/checkout"
	"troco/server/jobs"
)

// checkoutService is the checkout rules bound to this server's payment engine.
func (s *Server) checkoutService() *checkout.Service {
	return &checkout.Service{Payments: s.pay}
}

// checkoutExpiryBatch is how many sessions one job transaction expires.
const checkoutExpiryBatch = 200

// checkoutExpiryJob expires the open sessions whose 24 hours are over (SPEC 3.3), each batch
// claimed inside one write transaction so replicas never expire a session twice.
func (s *Server) checkoutExpiryJob() jobs.Job {
	svc := s.checkoutService()
	return jobs.Job{Name: "expire-checkout-sessions", Every: 30 * time.Second, Run: func(ctx context.Context, now time.Time) error {
		for {
			n := 0
			err := s.db.Write(ctx, func(tx *db.Tx) error {
				var err error
				n, err = svc.ExpireDue(tx, now, checkoutExpiryBatch)
				return err
			})
			if err != nil || n < checkoutExpiryBatch {
				return err
			}
		}
	}}
}
