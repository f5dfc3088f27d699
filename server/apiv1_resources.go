package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"

	"troco/db"
	"troco/server/billing"
	"troco/server/checkout"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/payments"
)

// The Core resources of /api/v1. Each handler calls the operation its /v1 twin calls.

// checkoutV2 is a checkout session in the /api/v1 shape (the field list of the interface's
// checkout get).
type checkoutV2 struct {
	ID             string          `json:"id"`
	Object         string          `json:"object"`
	Status         string          `json:"status"`
	ClientSecret   string          `json:"client_secret"`
	ProductPriceID *string         `json:"product_price_id"`
	Amount         int64           `json:"amount"`
	Currency       string          `json:"currency"`
	CustomerEmail  *string         `json:"customer_email"`
	CustomerID     *string         `json:"customer_id"`
	PaymentMethod  *string         `json:"payment_method"`
	SuccessURL     *string         `json:"success_url"`
	Metadata       domain.Metadata `json:"metadata"`
	URL            string          `json:"url"`
	Livemode       bool            `json:"livemode"`
	CreatedAt      domain.Time     `json:"created_at"`
	UpdatedAt      domain.Time     `json:"updated_at"`
	ExpiresAt      domain.Time     `json:"expires_at"`
}

// checkoutStatusV2 maps a session to the /api/v1 status: open; confirmed (complete, unpaid,
// its PIX or boleto still waiting); succeeded (paid or no payment required); expired; failed
// (complete and unpaid with its PIX or boleto failed or expired).
func checkoutStatusV2(tx *db.Tx, scope domain.Scope, cs *domain.CheckoutSession) (string, error) {
	switch {
	case cs.Status == domain.CheckoutOpen:
		return "open", nil
	case cs.Status == domain.CheckoutExpired:
		return "expired", nil
	case cs.PaymentStatus == domain.CheckoutPaid, cs.PaymentStatus == domain.CheckoutNoPaymentRequired:
		return "succeeded", nil
	}
	if cs.PaymentIntent == nil {
		return "confirmed", nil
	}
	pi, err := tx.FindPaymentIntentByID(scope, *cs.PaymentIntent)
	if errors.Is(err, db.ErrNotFound) {
		return "confirmed", nil
	}
	if err != nil {
		return "", err
	}
	switch pi.Status {
	case domain.PIStatusRequiresPaymentMethod, domain.PIStatusCanceled:
		return "failed", nil
	}
	return "confirmed", nil
}

func toCheckoutV2(tx *db.Tx, scope domain.Scope, cs *domain.CheckoutSession) (*checkoutV2, error) {
	st, err := checkoutStatusV2(tx, scope, cs)
	if err != nil {
		return nil, err
	}
	out := &checkoutV2{ID: cs.ID, Object: "checkout", Status: st, ClientSecret: cs.ClientSecret, Amount: cs.TotalAmount,
		Currency: strings.ToUpper(cs.Currency), CustomerEmail: cs.CustomerEmail, CustomerID: cs.Customer, SuccessURL: cs.SuccessURL,
		Metadata: cs.Metadata, URL: cs.URL, Livemode: cs.Livemode, CreatedAt: cs.CreatedAt, UpdatedAt: cs.UpdatedAt, ExpiresAt: cs.ExpiresAt}
	if len(cs.LineItems) > 0 {
		id := cs.LineItems[0].Price.ID
		out.ProductPriceID = &id
	}
	if cs.PaymentData != nil {
		t := cs.PaymentData.Type
		out.PaymentMethod = &t
	}
	return out, nil
}

func (s *Server) apiV1Routes(add func(method, path, need string, h http.Handler)) {
	read, write := domain.ScopeRead, domain.ScopeWrite

	// Checkouts (checkout sessions).
	add("GET", "/api/v1/checkouts", read, listHandler{filters: []string{"customer"}, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, total, err := pageQuery(r, "customer")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			items, _, err := tx.ListCheckoutSessions(a.Scope, db.CheckoutSessionFilter{Customer: q.str("customer")}, q.ListParams)
			if err != nil {
				return nil, err
			}
			out := make([]*checkoutV2, 0, len(items))
			for _, cs := range items {
				c, err := toCheckoutV2(tx, a.Scope, cs)
				if err != nil {
					return nil, err
				}
				out = append(out, c)
			}
			return pageOf(q, total, out, func(c *checkoutV2) *checkoutV2 { return c }), nil
		})
	})})
	add("POST", "/api/v1/checkouts", write, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p checkout.SessionParams
		if !s.decoded(w, r, &p) {
			return
		}
		base := s.checkoutBase(r)
		s.mutateAs(w, r, http.StatusCreated, func(tx *db.Tx, a domain.Actor) (any, error) {
			p.Offer = s.pay.DefaultMethods(a.Livemode)
			cs, err := checkout.CreateSession(tx, a, base, p)
			if err != nil {
				return nil, err
			}
			return toCheckoutV2(tx, a.Scope, cs)
		})
	}))
	add("GET", "/api/v1/checkouts/:id", read, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			cs, err := checkout.GetSession(tx, a.Scope, id)
			if err != nil {
				return nil, err
			}
			return toCheckoutV2(tx, a.Scope, cs)
		})
	}))
	add("POST", "/api/v1/checkouts/:id/expire", write, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var body struct{}
		if !s.decoded(w, r, &body) {
			return
		}
		svc := s.checkoutService()
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			cs, err := svc.ExpireSession(tx, a, id)
			if err != nil {
				return nil, err
			}
			return toCheckoutV2(tx, a.Scope, cs)
		})
	}))

	// Checkout links (payment links).
	add("GET", "/api/v1/checkout-links", read, s.pageHandler(func(r *http.Request, tx *db.Tx, a domain.Actor, q *listQuery) (any, error) {
		items, _, err := tx.ListPaymentLinks(a.Scope, db.PaymentLinkFilter{}, q.ListParams)
		return items, err
	}))
	add("POST", "/api/v1/checkout-links", write, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p checkout.LinkParams
		if !s.decoded(w, r, &p) {
			return
		}
		base := s.checkoutBase(r)
		s.mutateAs(w, r, http.StatusCreated, op(func(tx *db.Tx, a domain.Actor) (*domain.PaymentLink, error) {
			return checkout.CreateLink(tx, a, base, p)
		}))
	}))
	add("GET", "/api/v1/checkout-links/:id", read, s.getHandler(func(tx *db.Tx, a domain.Actor, id string) (any, error) { return checkout.GetLink(tx, a.Scope, id) }))
	add("POST", "/api/v1/checkout-links/:id", write, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p checkout.LinkParams
		if !s.decoded(w, r, &p) {
			return
		}
		s.mutate(w, r, op(func(tx *db.Tx, a domain.Actor) (*domain.PaymentLink, error) { return checkout.UpdateLink(tx, a, id, p) }))
	}))
	add("DELETE", "/api/v1/checkout-links/:id", write, s.deleteHandler(func(tx *db.Tx, a domain.Actor, id string) (any, error) { return checkout.DeleteLink(tx, a, id) }))

	// Products.
	add("GET", "/api/v1/products", read, s.pageHandler(func(r *http.Request, tx *db.Tx, a domain.Actor, q *listQuery) (any, error) {
		items, _, err := tx.ListProducts(a.Scope, db.ProductFilter{}, q.ListParams)
		return items, err
	}))
	add("POST", "/api/v1/products", write, createHandler(s, func(tx *db.Tx, a domain.Actor, p core.ProductParams) (*domain.Product, error) {
		return core.CreateProduct(tx, a, p)
	}))
	add("GET", "/api/v1/products/:id", read, s.getHandler(func(tx *db.Tx, a domain.Actor, id string) (any, error) { return core.GetProduct(tx, a.Scope, id) }))
	add("POST", "/api/v1/products/:id", write, updateHandler(s, func(tx *db.Tx, a domain.Actor, id string, p core.ProductParams) (*domain.Product, error) {
		return core.UpdateProduct(tx, a, id, p)
	}))
	add("DELETE", "/api/v1/products/:id", write, s.deleteHandler(func(tx *db.Tx, a domain.Actor, id string) (any, error) { return core.DeleteProduct(tx, a, id) }))

	// Customers.
	add("GET", "/api/v1/customers", read, s.pageHandler(func(r *http.Request, tx *db.Tx, a domain.Actor, q *listQuery) (any, error) {
		items, _, err := tx.ListCustomers(a.Scope, db.CustomerFilter{Email: q.str("email")}, q.ListParams)
		return items, err
	}, "email"))
	add("POST", "/api/v1/customers", write, createHandler(s, func(tx *db.Tx, a domain.Actor, p core.CustomerParams) (*domain.Customer, error) {
		return core.CreateCustomer(tx, a, p)
	}))
	add("GET", "/api/v1/customers/:id", read, s.getHandler(func(tx *db.Tx, a domain.Actor, id string) (any, error) { return core.GetCustomer(tx, a.Scope, id) }))
	add("POST", "/api/v1/customers/:id", write, updateHandler(s, func(tx *db.Tx, a domain.Actor, id string, p core.CustomerParams) (*domain.Customer, error) {
		return core.UpdateCustomer(tx, a, id, p)
	}))
	add("DELETE", "/api/v1/customers/:id", write, s.deleteHandler(func(tx *db.Tx, a domain.Actor, id string) (any, error) { return core.DeleteCustomer(tx, a, id) }))

	// Discounts (coupons).
	add("GET", "/api/v1/discounts", read, s.pageHandler(func(r *http.Request, tx *db.Tx, a domain.Actor, q *listQuery) (any, error) {
		items, _, err := tx.ListCoupons(a.Scope, q.ListParams)
		return items, err
	}))
	add("POST", "/api/v1/discounts", write, createHandler(s, func(tx *db.Tx, a domain.Actor, p core.CouponParams) (*domain.Coupon, error) {
		return core.CreateCoupon(tx, a, p)
	}))
	add("GET", "/api/v1/discounts/:id", read, s.getHandler(func(tx *db.Tx, a domain.Actor, id string) (any, error) { return core.GetCoupon(tx, a.Scope, id) }))
	add("POST", "/api/v1/discounts/:id", write, updateHandler(s, func(tx *db.Tx, a domain.Actor, id string, p core.CouponUpdateParams) (*domain.Coupon, error) {
		return core.UpdateCoupon(tx, a, id, p)
	}))
	add("DELETE", "/api/v1/discounts/:id", write, s.deleteHandler(func(tx *db.Tx, a domain.Actor, id string) (any, error) { return core.DeleteCoupon(tx, a, id) }))

	// Sales: succeeded payments (payment intents), read-only, with refunds.
	add("GET", "/api/v1/sales", read, s.pageHandler(func(r *http.Request, tx *db.Tx, a domain.Actor, q *listQuery) (any, error) {
		items, _, err := tx.ListPaymentIntents(a.Scope, db.PaymentIntentFilter{Status: domain.PIStatusSucceeded, Customer: q.str("customer")}, q.ListParams)
		return items, err
	}, "customer"))
	add("GET", "/api/v1/sales/:id", read, s.getHandler(func(tx *db.Tx, a domain.Actor, id string) (any, error) { return s.sale(tx, a.Scope, id) }))
	add("POST", "/api/v1/sales/:id/refund", write, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p struct {
			Amount   *int64                        `json:"amount"`
			Reason   *string                       `json:"reason"`
			Metadata domain.Opt[map[string]string] `json:"metadata"`
		}
		if !s.decoded(w, r, &p) {
			return
		}
		s.mutateAs(w, r, http.StatusCreated, op(func(tx *db.Tx, a domain.Actor) (*domain.Refund, error) {
			if _, err := s.sale(tx, a.Scope, id); err != nil {
				return nil, err
			}
			return s.pay.CreateRefund(tx, a, payments.RefundParams{PaymentIntent: id, Amount: p.Amount, Reason: p.Reason, Metadata: p.Metadata})
		}))
	}))
	// A refund of the sale (the Location of its creation).
	add("GET", "/api/v1/sales/:id/refunds/:refund", read, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, refund := pathID(r), httprouter.ParamsFromContext(r.Context()).ByName("refund")
		s.read(w, r, op(func(tx *db.Tx, a domain.Actor) (*domain.Refund, error) {
			rf, err := s.pay.GetRefund(tx, a.Scope, refund)
			if e, ok := domain.AsError(err); err == nil && rf.PaymentIntent != id || ok && e.Status == http.StatusNotFound {
				return nil, domain.NotFound("refund", "refund", refund) // unknown, or another sale's
			}
			return rf, err
		}))
	}))

	// Files: the upload is multipart/form-data (file, purpose, metadata[key]) as on /v1, through
	// the same spooling, type sniffing and size bound (10 MiB, 413 beyond).
	add("POST", "/api/v1/files", write, s.handleFileCreateAs(http.StatusCreated))
	add("GET", "/api/v1/files", read, s.pageHandler(func(r *http.Request, tx *db.Tx, a domain.Actor, q *listQuery) (any, error) {
		items, _, err := tx.ListFiles(a.Scope, db.FileFilter{Purpose: q.str("purpose")}, q.ListParams)
		for i, f := range items {
			items[i] = s.fileURL(r, f)
		}
		return items, err
	}, "purpose"))
	add("GET", "/api/v1/files/:id", read, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, op(func(tx *db.Tx, a domain.Actor) (*domain.File, error) {
			f, err := core.GetFile(tx, a.Scope, id)
			if err != nil {
				return nil, err
			}
			return s.fileURL(r, f), nil
		}))
	}))
	add("DELETE", "/api/v1/files/:id", write, s.deleteHandler(func(tx *db.Tx, a domain.Actor, id string) (any, error) { return core.DeleteFile(tx, a, id) }))

	// Webhooks (endpoints). The signing secret is shown once, in the create answer.
	add("GET", "/api/v1/webhooks", read, s.pageHandler(func(r *http.Request, tx *db.Tx, a domain.Actor, q *listQuery) (any, error) {
		items, _, err := tx.ListWebhookEndpoints(a.Scope, q.ListParams)
		return items, err
	}))
	add("POST", "/api/v1/webhooks", write, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p core.WebhookEndpointParams
		if !s.decoded(w, r, &p) {
			return
		}
		if err := s.checkWebhookURL(r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutateShowingSecretAs(w, r, http.StatusCreated, func(tx *db.Tx, a domain.Actor) (*domain.WebhookEndpoint, error) {
			return core.CreateWebhookEndpoint(tx, a, s.webhookEnv(), p)
		})
	}))
	add("GET", "/api/v1/webhooks/:id", read, s.getHandler(func(tx *db.Tx, a domain.Actor, id string) (any, error) {
		return core.GetWebhookEndpoint(tx, a.Scope, id)
	}))
	add("POST", "/api/v1/webhooks/:id", write, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p core.WebhookEndpointParams
		if !s.decoded(w, r, &p) {
			return
		}
		if err := s.checkWebhookURL(r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, op(func(tx *db.Tx, a domain.Actor) (*domain.WebhookEndpoint, error) {
			return core.UpdateWebhookEndpoint(tx, a, s.webhookEnv(), id, p)
		}))
	}))
	add("DELETE", "/api/v1/webhooks/:id", write, s.deleteHandler(func(tx *db.Tx, a domain.Actor, id string) (any, error) {
		return core.DeleteWebhookEndpoint(tx, a, id)
	}))
	add("POST", "/api/v1/webhooks/:id/rotate-secret", write, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p core.RotateSecretParams
		if !s.decoded(w, r, &p) {
			return
		}
		s.mutateShowingSecret(w, r, func(tx *db.Tx, a domain.Actor) (*domain.WebhookEndpoint, error) {
			return core.RotateWebhookSecret(tx, a, s.webhookEnv(), id, p)
		})
	}))
	add("GET", "/api/v1/webhooks/:id/deliveries", read, s.pageHandler(func(r *http.Request, tx *db.Tx, a domain.Actor, q *listQuery) (any, error) {
		id := pathID(r)
		f := db.WebhookDeliveryFilter{Event: q.str("event"), Status: q.str("status")}
		if f.Status != "" && f.Status != domain.DeliverySucceeded && f.Status != domain.DeliveryFailed {
			return nil, domain.Invalid("status", "status must be succeeded or failed.")
		}
		if _, err := core.GetWebhookEndpoint(tx, a.Scope, id); err != nil {
			return nil, err
		}
		items, _, err := tx.ListWebhookDeliveries(a.Scope, id, f, q.ListParams)
		return items, err
	}, "event", "status"))

	// Events.
	add("GET", "/api/v1/events", read, s.pageHandler(func(r *http.Request, tx *db.Tx, a domain.Actor, q *listQuery) (any, error) {
		if t := q.str("type"); t != "" && !domain.ValidEventPattern(t) {
			return nil, domain.Invalid("type", "Unknown event type %q.", t)
		}
		items, _, err := tx.ListEvents(a.Scope, db.EventFilter{Type: q.str("type")}, q.ListParams)
		return items, err
	}, "type"))
	add("GET", "/api/v1/events/:id", read, s.getHandler(func(tx *db.Tx, a domain.Actor, id string) (any, error) {
		e, err := tx.FindEventByID(a.Scope, id)
		if errors.Is(err, db.ErrNotFound) {
			return nil, domain.NotFound("id", "event", id)
		}
		return e, err
	}))
	add("POST", "/api/v1/events/:id/redeliver", write, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p core.RedeliverParams
		if !s.decoded(w, r, &p) {
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.RedeliverEvent(tx, a, id, p) })
	}))

	// Subscriptions: the billing operations of /v1 (also started by subscription-mode checkouts).
	add("GET", "/api/v1/subscriptions", read, s.pageHandler(func(r *http.Request, tx *db.Tx, a domain.Actor, q *listQuery) (any, error) {
		status, err := q.oneOf("status", domain.SubscriptionStatuses...)
		if err != nil {
			return nil, err
		}
		method, err := q.oneOf("collection_method", domain.CollectionMethods...)
		if err != nil {
			return nil, err
		}
		items, _, err := tx.ListSubscriptions(a.Scope, db.SubscriptionFilter{Customer: q.str("customer"), Status: status, Price: q.str("price"), CollectionMethod: method}, q.ListParams)
		return items, err
	}, "customer", "status", "price", "collection_method"))
	add("POST", "/api/v1/subscriptions", write, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p billing.CreateParams
		if !s.decoded(w, r, &p) {
			return
		}
		s.billingMutateAs(w, r, http.StatusCreated, billingOp(func(svc *billing.Service, tx *db.Tx, a domain.Actor) (*domain.Subscription, error) {
			return svc.Create(tx, a, p)
		}))
	}))
	add("GET", "/api/v1/subscriptions/:id", read, s.getHandler(func(tx *db.Tx, a domain.Actor, id string) (any, error) { return billing.Get(tx, a.Scope, id) }))
	add("POST", "/api/v1/subscriptions/:id", write, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p billing.UpdateParams
		if !s.decoded(w, r, &p) {
			return
		}
		s.billingMutate(w, r, billingOp(func(svc *billing.Service, tx *db.Tx, a domain.Actor) (*domain.Subscription, error) {
			return svc.Update(tx, a, id, p)
		}))
	}))
	add("POST", "/api/v1/subscriptions/:id/cancel", write, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p billing.CancelParams
		if !s.decoded(w, r, &p) {
			return
		}
		s.billingMutate(w, r, billingOp(func(svc *billing.Service, tx *db.Tx, a domain.Actor) (*domain.Subscription, error) {
			return svc.Cancel(tx, a, id, p)
		}))
	}))
	// Pause: the pause_collection of the /v1 update, as its own action.
	add("POST", "/api/v1/subscriptions/:id/pause", write, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p billing.PauseParams
		if !s.decoded(w, r, &p) {
			return
		}
		s.billingMutate(w, r, billingOp(func(svc *billing.Service, tx *db.Tx, a domain.Actor) (*domain.Subscription, error) {
			return svc.Update(tx, a, id, billing.UpdateParams{PauseCollection: domain.Opt[billing.PauseParams]{Set: true, V: p}})
		}))
	}))
	add("POST", "/api/v1/subscriptions/:id/resume", write, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p struct{}
		if !s.decoded(w, r, &p) {
			return
		}
		s.billingMutate(w, r, billingOp(func(svc *billing.Service, tx *db.Tx, a domain.Actor) (*domain.Subscription, error) {
			return svc.Resume(tx, a, id)
		}))
	}))

	add("GET", "/api/v1/metrics", read, s.handleMetrics())

	// Organizations: the caller's own.
	add("GET", "/api/v1/organizations/:id", read, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		c := orgCaller(r)
		s.read(w, r, op(func(tx *db.Tx, a domain.Actor) (*domain.Organization, error) {
			return core.GetOrganizationAs(tx, a, c, id)
		}))
	}))
	add("POST", "/api/v1/organizations/:id", write, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p core.OrganizationParams
		if !s.decoded(w, r, &p) {
			return
		}
		c := orgCaller(r)
		s.mutate(w, r, op(func(tx *db.Tx, a domain.Actor) (*domain.Organization, error) {
			return core.UpdateOrganization(tx, a, c, id, p)
		}))
	}))
}

// sale is a succeeded payment intent of the scope; any other id is "No such sale".
func (s *Server) sale(tx *db.Tx, sc domain.Scope, id string) (*domain.PaymentIntent, error) {
	pi, err := s.pay.GetIntent(tx, sc, id)
	if e, ok := domain.AsError(err); err == nil && pi.Status != domain.PIStatusSucceeded || ok && e.Status == http.StatusNotFound {
		return nil, domain.NotFound("id", "sale", id)
	}
	return pi, err
}

// billingOp is op for billing operations: the result reshaped for /api/v1.
func billingOp[T any](f func(svc *billing.Service, tx *db.Tx, a domain.Actor) (T, error)) func(svc *billing.Service, tx *db.Tx, a domain.Actor) (any, error) {
	return func(svc *billing.Service, tx *db.Tx, a domain.Actor) (any, error) {
		v, err := f(svc, tx, a)
		if err != nil {
			return nil, err
		}
		return shaped(v), nil
	}
}

// listHandler is a page-numbered list with the filters it accepts (the OpenAPI document lists
// them as query parameters).
type listHandler struct {
	http.Handler
	filters []string
}

// pageHandler serves a page-numbered list; list returns a slice of objects.
func (s *Server) pageHandler(list func(r *http.Request, tx *db.Tx, a domain.Actor, q *listQuery) (any, error), filters ...string) http.Handler {
	return listHandler{filters: filters, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, total, err := pageQuery(r, filters...)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			items, err := list(r, tx, a, q)
			if err != nil {
				return nil, err
			}
			var data []json.RawMessage
			b, err := json.Marshal(items)
			if err != nil {
				return nil, err
			}
			if err := json.Unmarshal(shaped(json.RawMessage(b)), &data); err != nil {
				return nil, err
			}
			return pageOf(q, total, data, func(m json.RawMessage) json.RawMessage { return m }), nil
		})
	})}
}

func (s *Server) getHandler(get func(tx *db.Tx, a domain.Actor, id string) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, op(func(tx *db.Tx, a domain.Actor) (any, error) { return get(tx, a, id) }))
	})
}

func (s *Server) deleteHandler(del func(tx *db.Tx, a domain.Actor, id string) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.mutateAs(w, r, http.StatusNoContent, func(tx *db.Tx, a domain.Actor) (any, error) { return del(tx, a, id) })
	})
}

func createHandler[P any, T any](s *Server, create func(tx *db.Tx, a domain.Actor, p P) (T, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p P
		if !s.decoded(w, r, &p) {
			return
		}
		s.mutateAs(w, r, http.StatusCreated, op(func(tx *db.Tx, a domain.Actor) (T, error) { return create(tx, a, p) }))
	})
}

func updateHandler[P any, T any](s *Server, update func(tx *db.Tx, a domain.Actor, id string, p P) (T, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p P
		if !s.decoded(w, r, &p) {
			return
		}
		s.mutate(w, r, op(func(tx *db.Tx, a domain.Actor) (T, error) { return update(tx, a, id, p) }))
	})
}
