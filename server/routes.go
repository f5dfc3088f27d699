package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"troco/server/checkout"
	"troco/server/domain"
	"troco/server/invoices"
)

// routes registers every route of troco in one place.
func (s *Server) routes() http.Handler {
	r := routeRecorder{httprouter.New()}
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	r.NotFound = s.handleNotFound()
	r.MethodNotAllowed = s.handleMethodNotAllowed()

	read, write := domain.ScopeRead, domain.ScopeWrite
	v1 := func(method, path, need string, h http.Handler) {
		if takesNoQuery(method, path) {
			h = s.rejectQuery(h)
		}
		if method == http.MethodDelete {
			h = s.rejectBody(h)
		}
		h = s.checkPathText(h)
		r.Handler(method, path, s.api(need, h))
	}

	r.Handler(http.MethodGet, "/healthz", s.handleHealthz())
	r.Handler(http.MethodGet, "/readyz", s.handleReadyz())
	r.Handler(http.MethodGet, "/favicon.svg", handleFavicon())
	r.Handler(http.MethodGet, "/favicon.ico", handleFavicon())

	v1("GET", "/v1/customers", read, s.handleCustomerList())
	v1("POST", "/v1/customers", write, s.handleCustomerCreate())
	v1("GET", "/v1/customers/:id", read, s.handleCustomerGet())
	v1("POST", "/v1/customers/:id", write, s.handleCustomerUpdate())
	v1("DELETE", "/v1/customers/:id", write, s.handleCustomerDelete())

	v1("GET", "/v1/products", read, s.handleProductList())
	v1("POST", "/v1/products", write, s.handleProductCreate())
	v1("GET", "/v1/products/:id", read, s.handleProductGet())
	v1("POST", "/v1/products/:id", write, s.handleProductUpdate())
	v1("DELETE", "/v1/products/:id", write, s.handleProductDelete())

	v1("GET", "/v1/files", read, s.handleFileList())
	v1("POST", "/v1/files", write, s.handleFileCreate())
	v1("GET", "/v1/files/:id", read, s.handleFileGet())
	v1("DELETE", "/v1/files/:id", write, s.handleFileDelete())
	// The bytes: public purposes by URL, private ones by a signed URL (no API key).
	r.Handler(http.MethodGet, "/files/:id/contents", s.handleFileContents())

	v1("GET", "/v1/prices", read, s.handlePriceList())
	v1("POST", "/v1/prices", write, s.handlePriceCreate())
	v1("GET", "/v1/prices/:id", read, s.handlePriceGet())
	v1("POST", "/v1/prices/:id", write, s.handlePriceUpdate())
	v1("DELETE", "/v1/prices/:id", write, s.handlePriceDelete())

	// Organizations, platforms and activation (SPEC 4.1, 4.2, 4.9, 5): platform endpoints take a
	// platform key without the Organization header; platformOr endpoints also serve organization keys.
	platform := domain.ScopePlatformAdmin
	v1("GET", "/v1/organizations", platform, s.handleOrganizationList())
	v1("POST", "/v1/organizations", platform, s.handleOrganizationCreate())
	v1("GET", "/v1/organizations/:id", platformOr(read), s.handleOrganizationGet())
	v1("POST", "/v1/organizations/:id", platformOr(write), s.handleOrganizationUpdate())
	v1("POST", "/v1/activation-sessions", platform, s.handleActivationSessionCreate())
	v1("GET", "/v1/activation-sessions/:id", platform, s.handleActivationSessionGet())
	v1("GET", "/v1/onboarding-sessions", read, s.handleOnboardingSessionList())
	v1("POST", "/v1/onboarding-sessions", write, s.handleOnboardingSessionCreate())
	v1("GET", "/v1/onboarding-sessions/:id", read, s.handleOnboardingSessionGet())
	v1("GET", "/v1/payout-accounts", read, s.handlePayoutAccountList())
	v1("POST", "/v1/payout-accounts", write, s.handlePayoutAccountCreate())
	v1("GET", "/v1/payout-accounts/:id", read, s.handlePayoutAccountGet())
	v1("POST", "/v1/payout-accounts/:id/disconnect", write, s.handlePayoutAccountDisconnect())

	// Hosted activation (no API key: the url's single-use code opens a cookie session).
	r.Handler(http.MethodGet, "/activation/start", s.handleActivationStart())
	r.Handler(http.MethodGet, "/activation/sessions/:id", s.handleActivationPage())
	r.Handler(http.MethodPost, "/activation/sessions/:id", s.handleActivationPost())
	r.Handler(http.MethodGet, "/activation/assets/:file", s.handleActivationAsset())

	// A platform key without the Organization header reads the events of its own organization
	// (where the organization.updated copies of its connected organizations land) and manages its
	// webhook endpoints.
	v1("GET", "/v1/events", platformOwn(read), s.handleEventList())
	v1("GET", "/v1/events/:id", platformOwn(read), s.handleEventGet())
	v1("POST", "/v1/events/:id/redeliver", platformOwn(write), s.handleEventRedeliver())

	v1("GET", "/v1/webhook-endpoints", platformOwn(read), s.handleWebhookEndpointList())
	v1("POST", "/v1/webhook-endpoints", platformOwn(write), s.handleWebhookEndpointCreate())
	v1("GET", "/v1/webhook-endpoints/:id", platformOwn(read), s.handleWebhookEndpointGet())
	v1("POST", "/v1/webhook-endpoints/:id", platformOwn(write), s.handleWebhookEndpointUpdate())
	v1("DELETE", "/v1/webhook-endpoints/:id", platformOwn(write), s.handleWebhookEndpointDelete())
	v1("POST", "/v1/webhook-endpoints/:id/rotate-secret", platformOwn(write), s.handleWebhookEndpointRotateSecret())
	v1("GET", "/v1/webhook-endpoints/:id/deliveries", platformOwn(read), s.handleWebhookDeliveryList())

	v1("GET", "/v1/checkout-sessions", read, s.handleCheckoutSessionList())
	v1("POST", "/v1/checkout-sessions", write, s.handleCheckoutSessionCreate())
	v1("GET", "/v1/checkout-sessions/:id", read, s.handleCheckoutSessionGet())
	r.Handler(http.MethodPost, "/v1/checkout-sessions/:id/confirm", s.apiOrClientSecret(write, s.checkPathText(s.rejectQuery(s.handleCheckoutSessionConfirm()))))
	v1("POST", "/v1/checkout-sessions/:id/expire", write, s.handleCheckoutSessionExpire())
	v1("POST", "/v1/test-helpers/checkout-sessions/:id/succeed", write, s.handleCheckoutSessionTestHelper(checkout.HelperSucceed))
	v1("POST", "/v1/test-helpers/checkout-sessions/:id/fail", write, s.handleCheckoutSessionTestHelper(checkout.HelperFail))
	v1("POST", "/v1/test-helpers/checkout-sessions/:id/expire", write, s.handleCheckoutSessionTestHelper(checkout.HelperExpire))

	v1("GET", "/v1/coupons", read, s.handleCouponList())
	v1("POST", "/v1/coupons", write, s.handleCouponCreate())
	v1("GET", "/v1/coupons/:id", read, s.handleCouponGet())
	v1("POST", "/v1/coupons/:id", write, s.handleCouponUpdate())
	v1("DELETE", "/v1/coupons/:id", write, s.handleCouponDelete())
	v1("GET", "/v1/promotion-codes", read, s.handlePromotionCodeList())
	v1("POST", "/v1/promotion-codes", write, s.handlePromotionCodeCreate())
	v1("GET", "/v1/promotion-codes/:id", read, s.handlePromotionCodeGet())
	v1("POST", "/v1/promotion-codes/:id", write, s.handlePromotionCodeUpdate())

	v1("GET", "/v1/payment-links", read, s.handlePaymentLinkList())
	v1("POST", "/v1/payment-links", write, s.handlePaymentLinkCreate())
	v1("GET", "/v1/payment-links/:id", read, s.handlePaymentLinkGet())
	v1("POST", "/v1/payment-links/:id", write, s.handlePaymentLinkUpdate())
	v1("DELETE", "/v1/payment-links/:id", write, s.handlePaymentLinkDelete())

	v1("GET", "/v1/subscriptions", read, s.handleSubscriptionList())
	v1("POST", "/v1/customer-portal-sessions", write, s.handlePortalSessionCreate())
	v1("POST", "/v1/subscriptions", write, s.handleSubscriptionCreate())
	v1("GET", "/v1/subscriptions/:id", read, s.handleSubscriptionGet())
	v1("POST", "/v1/subscriptions/:id", write, s.handleSubscriptionUpdate())
	v1("POST", "/v1/subscriptions/:id/cancel", write, s.handleSubscriptionCancel())
	v1("POST", "/v1/subscriptions/:id/resume", write, s.handleSubscriptionResume())

	// Invoices (SPEC 2.9, 4.6); mark_uncollectible is Stripe's spelling of mark-uncollectible.
	v1("GET", "/v1/invoices", read, s.handleInvoiceList())
	v1("POST", "/v1/invoices", write, s.handleInvoiceCreate())
	v1("GET", "/v1/invoices/:id", read, s.handleInvoiceGet())
	v1("POST", "/v1/invoices/:id", write, s.handleInvoiceUpdate())
	v1("GET", "/v1/invoices/:id/lines", read, s.handleInvoiceLines())
	v1("POST", "/v1/invoices/:id/finalize", write, s.handleInvoiceAction(invoices.Finalize))
	v1("POST", "/v1/invoices/:id/pay", write, s.handleInvoicePay())
	v1("POST", "/v1/invoices/:id/void", write, s.handleInvoiceAction(s.invoiceService().Void))
	v1("POST", "/v1/invoices/:id/mark-uncollectible", write, s.handleInvoiceAction(invoices.MarkUncollectible))
	v1("POST", "/v1/invoices/:id/mark_uncollectible", write, s.handleInvoiceAction(invoices.MarkUncollectible))

	// Payments core (issue 3).
	v1("GET", "/v1/payment-intents", read, s.handlePaymentIntentList())
	v1("POST", "/v1/payment-intents", write, s.handlePaymentIntentCreate())
	v1("GET", "/v1/payment-intents/:id", read, s.handlePaymentIntentGet())
	v1("POST", "/v1/payment-intents/:id", write, s.handlePaymentIntentUpdate())
	r.Handler(http.MethodPost, "/v1/payment-intents/:id/confirm", s.apiOrIntentSecret(write, s.checkPathText(s.rejectQuery(s.handlePaymentIntentConfirm()))))
	v1("POST", "/v1/payment-intents/:id/capture", write, s.handlePaymentIntentCapture())
	v1("POST", "/v1/payment-intents/:id/cancel", write, s.handlePaymentIntentCancel())
	v1("POST", "/v1/payment-intents/:id/regenerate-boleto", write, s.handlePaymentIntentRegenerateBoleto())
	v1("GET", "/v1/payment-intents/:id/pix.png", read, s.handlePixQRAPI())
	v1("POST", "/v1/test-helpers/payment-intents/:id/succeed", write, s.handlePaymentIntentTestHelper(true))
	v1("POST", "/v1/test-helpers/payment-intents/:id/expire", write, s.handlePaymentIntentTestHelper(false))
	v1("GET", "/v1/charges", read, s.handleChargeList())
	v1("GET", "/v1/charges/:id", read, s.handleChargeGet())
	v1("GET", "/v1/disputes", read, s.handleDisputeList())
	v1("GET", "/v1/disputes/:id", read, s.handleDisputeGet())
	v1("POST", "/v1/disputes/:id", write, s.handleDisputeUpdate())
	v1("POST", "/v1/disputes/:id/close", write, s.handleDisputeClose())
	v1("GET", "/v1/refunds", read, s.handleRefundList())
	v1("POST", "/v1/refunds", write, s.handleRefundCreate())
	v1("GET", "/v1/refunds/:id", read, s.handleRefundGet())
	v1("GET", "/v1/payment-methods", read, s.handlePaymentMethodList())
	v1("POST", "/v1/payment-methods", write, s.handlePaymentMethodCreate())
	v1("GET", "/v1/payment-methods/:id", read, s.handlePaymentMethodGet())
	v1("POST", "/v1/payment-methods/:id/attach", write, s.handlePaymentMethodAttach())
	v1("POST", "/v1/payment-methods/:id/detach", write, s.handlePaymentMethodDetach())
	v1("GET", "/v1/setup-intents", read, s.handleSetupIntentList())
	v1("POST", "/v1/setup-intents", write, s.handleSetupIntentCreate())
	v1("GET", "/v1/setup-intents/:id", read, s.handleSetupIntentGet())
	v1("POST", "/v1/setup-intents/:id/confirm", write, s.handleSetupIntentConfirm())
	v1("POST", "/v1/setup-intents/:id/cancel", write, s.handleSetupIntentCancel())
	v1("POST", "/v1/payment-previews", write, s.handlePaymentPreview())
	v1("GET", "/v1/transactions", read, s.handleTransactionList())
	v1("GET", "/v1/transactions/:id", read, s.handleTransactionGet())
	// The buyer's PIX QR image and printable boleto (no API key: the intent's client_secret).
	r.Handler(http.MethodGet, "/payment-intents/:id/pix.png", s.handlePixQRPublic())
	r.Handler(http.MethodGet, "/payment-intents/:id/boleto", s.handleBoletoPage())

	// Hosted checkout (no API key: the session's client_secret opens it) and payment links.
	r.Handler(http.MethodGet, "/checkout/:id", s.hosted(s.handleHostedCheckout()))
	r.Handler(http.MethodPost, "/checkout/:id/confirm", s.hosted(s.handleHostedConfirm()))
	r.Handler(http.MethodPost, "/checkout/:id/simulate", s.hosted(s.handleHostedSimulate()))
	r.Handler(http.MethodPost, "/checkout/:id/promotion-code", s.hosted(s.handleHostedPromotionCode()))
	r.Handler(http.MethodGet, "/checkout/:id/status", s.hosted(s.handleHostedStatus()))
	r.Handler(http.MethodGet, "/checkout/:id/boleto", s.hosted(s.handleHostedBoleto()))
	r.Handler(http.MethodGet, "/checkout/:id/pix.png", s.hosted(s.handleHostedPixQR()))
	r.Handler(http.MethodGet, "/checkout/:id/canceled", s.hosted(s.handleHostedCanceled()))
	r.Handler(http.MethodGet, "/checkout-assets/:file", s.handleCheckoutAsset())
	r.Handler(http.MethodGet, "/portal/open/:id", s.hosted(s.handlePortalOpen()))
	r.Handler(http.MethodGet, "/portal", s.hosted(s.handlePortalHome()))
	r.Handler(http.MethodPost, "/portal/subscriptions/:id/cancel", s.hosted(s.handlePortalCancel()))
	r.Handler(http.MethodPost, "/portal/subscriptions/:id/resume", s.hosted(s.handlePortalResume()))
	r.Handler(http.MethodPost, "/portal/card", s.hosted(s.handlePortalCard()))
	r.Handler(http.MethodGet, "/invoices/:id", s.hosted(s.handleHostedInvoice()))
	r.Handler(http.MethodPost, "/invoices/:id/pay", s.hosted(s.handleHostedInvoicePay()))
	r.Handler(http.MethodPost, "/invoices/:id/simulate", s.hosted(s.handleHostedInvoiceSimulate()))
	r.Handler(http.MethodGet, "/invoices/:id/pdf", s.hosted(s.handleInvoicePDF()))
	r.Handler(http.MethodGet, "/l/:id", s.hosted(s.handlePaymentLinkOpen()))

	// Customer e-mail: the sandbox mailbox (test keys), its hosted page, and the receipt page.
	v1("GET", "/v1/test-helpers/emails", read, s.handleEmailList())
	v1("GET", "/v1/test-helpers/emails/:id", read, s.handleEmailGet())
	v1("GET", "/v1/test-helpers/mailbox", read, s.handleMailboxLink())
	r.Handler(http.MethodGet, "/mailbox/:id", s.handleMailboxPage())
	r.Handler(http.MethodGet, "/receipts/:id", s.handleReceiptPage())

	// The dashboard (people sign in with a session cookie; no API key).
	dash := s.handleDashboard()
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost} {
		r.Handler(m, "/dashboard", dash)
		r.Handler(m, "/dashboard/*rest", dash)
	}

	// The PSP's PIX webhook (live mode): mutual TLS, the PSP's client certificate.
	r.Handler(http.MethodPost, "/processors/pix/webhook/pix", s.handlePixWebhook())
	r.Handler(http.MethodPost, "/processors/pix/webhook/rec", s.handleRecWebhook())
	r.Handler(http.MethodPost, "/processors/pix/webhook/cobr", s.handleCobRWebhook())
	r.Handler(http.MethodPost, "/processors/pix/webhook", s.handlePixWebhook())
	// The dynamic PIX code's location (public: the payer's bank fetches it) and its key set; the
	// same signed payload for the owner's API key.
	r.Handler(http.MethodGet, "/pix/v2/:id", s.handlePixLocation())
	v1("GET", "/v1/pix-payloads/:id", read, s.handlePixPayloadAPI())

	// Pix Automático authorizations and their hosted page (no key: the url's secret opens it).
	v1("GET", "/v1/pix-authorizations", read, s.handlePixAuthList())
	v1("POST", "/v1/pix-authorizations", write, s.handlePixAuthCreate())
	v1("GET", "/v1/pix-authorizations/:id", read, s.handlePixAuthGet())
	v1("POST", "/v1/pix-authorizations/:id/cancel", write, s.handlePixAuthCancel())
	v1("POST", "/v1/test-helpers/pix-authorizations/:id/approve", write, s.handlePixAuthTestHelper(true))
	v1("POST", "/v1/test-helpers/pix-authorizations/:id/reject", write, s.handlePixAuthTestHelper(false))
	r.Handler(http.MethodGet, "/pix-authorizations/:id", s.handlePixAuthPage())
	r.Handler(http.MethodPost, "/pix-authorizations/:id", s.handlePixAuthPagePost())

	// The business-day calendar (national and local holidays).
	v1("GET", "/v1/business-days", read, s.handleBusinessDays())

	// The second interface, /api/v1: the same operations, page-numbered lists, 201/204, access
	// tokens (POST /api/v1/oauth/token, verified with the keys of /.well-known/jwks.json).
	r.Handler(http.MethodPost, "/api/v1/oauth/token", s.rejectQuery(s.handleOAuthToken()))
	r.Handler(http.MethodGet, "/.well-known/jwks.json", s.handleJWKS())
	s.apiV1Routes(func(method, path, need string, h http.Handler) {
		filters := listFilters(h)
		if takesNoQuery(method, path) {
			h = s.rejectQuery(h)
		}
		if method == http.MethodDelete {
			h = s.rejectBody(h)
		}
		h = s.checkPathText(h)
		r.Handler(method, path, s.core(need, h))
		s.apiV1Ops = append(s.apiV1Ops, apiV1Op{method: method, path: path, filters: filters, need: need})
	})
	// The customer-portal path: customer session tokens (troco_cst_…) only.
	s.apiV1PortalRoutes(func(method, path string, h http.Handler) {
		filters := listFilters(h)
		if takesNoQuery(method, path) || path == portalPrefix+"/customer" {
			h = s.rejectQuery(h)
		}
		h = s.checkPathText(h)
		r.Handler(method, path, s.customerPortal(h))
		s.apiV1Ops = append(s.apiV1Ops, apiV1Op{method: method, path: path, filters: filters, need: needCustomer})
	})
	r.Handler(http.MethodGet, "/v1/openapi.json", s.rejectQuery(s.handleOpenAPI(true)))
	r.Handler(http.MethodGet, "/api/v1/openapi.json", s.rejectQuery(s.handleOpenAPI(false)))

	// The clock is the server's, not an organization's: a platform test key may move it too.
	v1("POST", "/v1/test-helpers/advance-clock", platformOwn(write), s.handleAdvanceClock())

	return s.observe(portalCORS(r))
}

func (s *Server) handleHealthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
}

// routeRecorder registers each handler behind a step that notes its route pattern for the
// request log and the metrics (a pattern such as /v1/customers/:id, never the path with an id).
type routeRecorder struct{ *httprouter.Router }

func (rr routeRecorder) Handler(method, path string, h http.Handler) {
	rr.Router.Handler(method, path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sw, ok := w.(*statusWriter); ok {
			sw.route = path
		}
		h.ServeHTTP(w, r)
	}))
}

// handleReadyz answers 200 once serve is ready (migrations ran, listeners up) and the database
// answers, and 503 before that and from the moment a shutdown begins: a load balancer sends
// traffic only to a ready instance. /healthz stays a plain liveness check.
func (s *Server) handleReadyz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if err := s.Ready(r.Context()); err != nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "reason": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
}

func (s *Server) handleNotFound() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, &domain.Error{Status: http.StatusNotFound, Type: domain.TypeInvalidRequest, Code: domain.CodeResourceMissing,
			Message: "Unrecognized request URL (" + r.Method + " " + r.URL.Path + ")."})
	})
}

func (s *Server) handleMethodNotAllowed() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, &domain.Error{Status: http.StatusMethodNotAllowed, Type: domain.TypeInvalidRequest, Code: domain.CodeMethodNotAllowed,
			Message: "Method " + r.Method + " is not allowed on " + r.URL.Path + "."})
	})
}

// pathID returns the :id path parameter.
func pathID(r *http.Request) string {
	return httprouter.ParamsFromContext(r.Context()).ByName("id")
}
