package server

import (
	"context"
	"net/http"
	"slices"
	"time"

	"troco/db"
	"troco/server/domain"
	"troco/server/invoices"
	"troco/server/jobs"
)

// invoiceService is the invoice operations over this server's payments engine.
func (s *Server) invoiceService() *invoices.Service {
	return &invoices.Service{Payments: s.pay}
}

// invoiceOverdueBatch is how many invoices one job transaction handles.
const invoiceOverdueBatch = 200

// invoiceOverdueJob handles the send_invoice invoices that reached their due instant unpaid
// (invoice.overdue, subscription past_due; SPEC 3.6, 9.2), each batch claimed inside one write
// transaction so replicas never handle an invoice twice.
func (s *Server) invoiceOverdueJob() jobs.Job {
	return jobs.Job{Name: "invoices-overdue", Every: 30 * time.Second, Run: func(ctx context.Context, now time.Time) error {
		for {
			n := 0
			err := s.db.Write(ctx, func(tx *db.Tx) error {
				var err error
				n, err = invoices.RunOverdue(tx, now, invoiceOverdueBatch)
				return err
			})
			if err != nil || n < invoiceOverdueBatch {
				return err
			}
		}
	}}
}

func (s *Server) handleInvoiceCreate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p invoices.CreateParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return invoices.Create(tx, a, p) })
	})
}

func (s *Server) handleInvoiceGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return invoices.Get(tx, a.Scope, id) })
	})
}

func (s *Server) handleInvoiceUpdate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p invoices.UpdateParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return invoices.Update(tx, a, id, p) })
	})
}

func (s *Server) handleInvoiceList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseList(r, "customer", "status", "collection_method", "subscription", "payment_intent", "checkout_session")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		f := db.InvoiceFilter{Customer: q.str("customer"), Status: q.str("status"), CollectionMethod: q.str("collection_method"),
			Subscription: q.str("subscription"), PaymentIntent: q.str("payment_intent"), CheckoutSession: q.str("checkout_session")}
		if f.Status != "" && !slices.Contains(domain.InvoiceStatuses, f.Status) {
			s.writeError(w, r, domain.Invalid("status", "status must be draft, open, paid, void or uncollectible."))
			return
		}
		if f.CollectionMethod != "" && !slices.Contains(domain.CollectionMethods, f.CollectionMethod) {
			s.writeError(w, r, domain.Invalid("collection_method", "collection_method must be charge_automatically or send_invoice."))
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			items, more, err := tx.ListInvoices(a.Scope, f, q.ListParams)
			for _, inv := range items {
				inv.ApplyLateCharges(tx.Now)
			}
			return listOf(r, items, more), err
		})
	})
}

// handleInvoiceLines pages an invoice's lines in the invoice's order (the lines envelope's url).
func (s *Server) handleInvoiceLines() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		q, err := parseList(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if q.Created != (db.Range{}) {
			s.writeError(w, r, domain.Invalid("created_at", "Invoice lines have no created_at filter."))
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			inv, err := invoices.Get(tx, a.Scope, id)
			if err != nil {
				return nil, err
			}
			items, more, err := invoices.PageLines(inv.Lines.Data, q.Limit, q.StartingAfter, q.EndingBefore)
			return listOf(r, items, more), err
		})
	})
}

// handleInvoiceAction serves the body-less actions finalize, void and mark_uncollectible.
func (s *Server) handleInvoiceAction(op func(tx *db.Tx, a domain.Actor, id string) (*domain.Invoice, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var body struct{}
		if err := s.decode(w, r, &body); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return op(tx, a, id) })
	})
}

func (s *Server) handleInvoicePay() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p invoices.PayParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		p.Origin = s.origin(r)
		svc := s.invoiceService()
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return svc.Pay(tx, a, id, p) })
	})
}
