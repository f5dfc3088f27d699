package server

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/julienschmidt/httprouter"

	"troco/db"
	"troco/pages"
	"troco/server/boleto"
	"troco/server/checkout"
	"troco/server/domain"
	"troco/server/payments"
	"troco/server/pix"
	"troco/static"
)

// The hosted checkout (SPEC 1, 8.6; CONTRACT 7): server-rendered pages that work without
// JavaScript. The buyer has no API key: the session's client_secret opens it (in the url's query
// on GET, in a hidden field on POST) and is compared in constant time. Every form carries a CSRF
// token bound to the session and to a random SameSite cookie of the browser, and a one-time
// attempt token so a double-clicked "pay" charges once. Amounts always come from the session.

const (
	csrfCookieName = "troco_checkout"
	hostedFormMax  = 64 << 10
	// Defaults of the brand merge (troco's own look).
	defaultBrandColor = "#0A7C55"
	defaultBackground = "#F6F8FA"
)

type hostedNonceKey struct{}

// hosted wraps a hosted page: strict security headers and a CSP nonce for the brand style.
func (s *Server) hosted(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nonce := setHostedHeaders(w)
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), hostedNonceKey{}, nonce)))
	})
}

// setHostedHeaders sets the hosted pages' security headers with a fresh style nonce, which it
// returns.
func setHostedHeaders(w http.ResponseWriter) string {
	nonce := randomToken(16)
	hd := w.Header()
	hd.Set("Content-Security-Policy", "default-src 'none'; img-src 'self' https: data:; style-src 'self' 'nonce-"+nonce+"'; script-src 'self'; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Cache-Control", "no-store")
	return nonce
}

func randomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("server: crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// errHostedNotFound hides whether a session exists when its secret is wrong.
var errHostedNotFound = errors.New("hosted: session not found")

// hostedView is what a hosted page reads about a session, in one read transaction.
type hostedView struct {
	cs          *domain.CheckoutSession
	scope       domain.Scope
	org         *domain.Organization
	brand       domain.Branding
	orgTemplate string
	pi          *domain.PaymentIntent
	preview     *payments.Preview
	// discountLabel names the applied discount (the promotion code, or the coupon's name).
	discountLabel string
}

func (s *Server) loadHosted(ctx context.Context, id, secret string) (*hostedView, error) {
	v := &hostedView{}
	err := s.db.Read(ctx, func(tx *db.Tx) error {
		var err error
		v.cs, v.scope, err = tx.FindCheckoutSessionAnyScope(id)
		if errors.Is(err, db.ErrNotFound) || (err == nil && !checkout.SecretMatches(v.cs, secret)) {
			return errHostedNotFound
		}
		if err != nil {
			return err
		}
		return s.fillHosted(tx, v)
	})
	return v, err
}

func (s *Server) fillHosted(tx *db.Tx, v *hostedView) error {
	var err error
	if v.org, err = tx.FindOrganizationByID(v.scope.OrgID); err != nil {
		return err
	}
	if v.brand, v.orgTemplate, err = tx.OrganizationBranding(v.org.ID); err != nil {
		return err
	}
	if v.cs.PaymentIntent != nil {
		if v.pi, err = s.pay.GetIntent(tx, v.scope, *v.cs.PaymentIntent); err != nil {
			return err
		}
	}
	if v.discountLabel, err = checkout.DiscountLabel(tx, v.scope, v.cs); err != nil {
		return err
	}
	if v.cs.Status == domain.CheckoutOpen && v.cs.TotalAmount > 0 && v.cs.Offers(domain.MethodCreditCard) {
		amount := v.cs.TotalAmount
		payer := ""
		if o := v.cs.PaymentMethodOptions; o != nil && o.CreditCard != nil {
			payer = o.CreditCard.InterestPayer
		}
		v.preview, err = s.pay.PaymentPreview(tx, domain.Actor{Scope: v.scope}, payments.PreviewParams{Amount: &amount, InterestPayer: payer})
		if err != nil {
			return err
		}
	}
	return nil
}

// hostedState is the screen a session shows.
func hostedState(cs *domain.CheckoutSession, pi *domain.PaymentIntent) string {
	switch cs.Status {
	case domain.CheckoutOpen:
		return pages.StateOpen
	case domain.CheckoutExpired:
		return pages.StateExpired
	}
	if cs.PaymentStatus != domain.CheckoutUnpaid {
		return pages.StateSuccess
	}
	if pi == nil {
		return pages.StateProcessing
	}
	switch pi.Status {
	case domain.PIStatusPending, domain.PIStatusRequiresAction:
		if cs.PaymentData != nil {
			switch cs.PaymentData.Type {
			case domain.MethodPix:
				return pages.StateWaitingPix
			case domain.MethodBoleto:
				return pages.StateWaitingBoleto
			}
		}
		return pages.StateProcessing
	case domain.PIStatusProcessing, domain.PIStatusRequiresCapture:
		return pages.StateProcessing
	case domain.PIStatusSucceeded:
		return pages.StateSuccess
	}
	return pages.StateFailed
}

var hexColorRE = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)

// mergeBrand lays the session's override over the organization's defaults over troco's.
func mergeBrand(orgName string, org domain.Branding, override *domain.Branding) pages.Brand {
	b := pages.Brand{Name: orgName, PrimaryColor: defaultBrandColor, BackgroundColor: defaultBackground, BorderStyle: "rounded"}
	apply := func(o *domain.Branding) {
		if o == nil {
			return
		}
		if o.DisplayName != nil && strings.TrimSpace(*o.DisplayName) != "" {
			b.Name = *o.DisplayName
		}
		if o.LogoURL != nil && strings.HasPrefix(*o.LogoURL, "https://") {
			b.LogoURL = *o.LogoURL
		}
		if o.PrimaryColor != nil && hexColorRE.MatchString(*o.PrimaryColor) {
			b.PrimaryColor = *o.PrimaryColor
		}
		if o.BackgroundColor != nil && hexColorRE.MatchString(*o.BackgroundColor) {
			b.BackgroundColor = *o.BackgroundColor
		}
		if o.BorderStyle != nil {
			switch *o.BorderStyle {
			case "rounded", "rectangular", "pill":
				b.BorderStyle = *o.BorderStyle
			}
		}
	}
	apply(&org)
	apply(override)
	return b
}

// hostedPaths are the addresses of a session's hosted pages (relative to the server).
type hostedPaths struct{ id, secret, lang string }

func (p hostedPaths) q() string {
	v := "?secret=" + url.QueryEscape(p.secret)
	if p.lang != "" {
		v += "&lang=" + url.QueryEscape(p.lang)
	}
	return v
}
func (p hostedPaths) page() string     { return checkout.HostedPath(p.id) + p.q() }
func (p hostedPaths) status() string   { return checkout.HostedPath(p.id) + "/status" + p.q() }
func (p hostedPaths) boleto() string   { return checkout.HostedPath(p.id) + "/boleto" + p.q() }
func (p hostedPaths) qr() string       { return checkout.HostedPath(p.id) + "/pix.png" + p.q() }
func (p hostedPaths) canceled() string { return checkout.HostedPath(p.id) + "/canceled" + p.q() }

// successURL is the session's success_url with Stripe's {CHECKOUT_SESSION_ID} placeholder filled.
func successURL(cs *domain.CheckoutSession) string {
	if cs.SuccessURL == nil {
		return ""
	}
	return strings.ReplaceAll(*cs.SuccessURL, "{CHECKOUT_SESSION_ID}", cs.ID)
}

// checkoutView builds the page props of a session.
func (s *Server) checkoutView(r *http.Request, v *hostedView, lang pages.Lang, langParam, csrf string) *pages.Checkout {
	cs := v.cs
	now := s.cfg.Clock.Now()
	paths := hostedPaths{id: cs.ID, secret: cs.ClientSecret, lang: langParam}
	c := &pages.Checkout{
		Lang: lang, State: hostedState(cs, v.pi), Livemode: cs.Livemode, SessionID: cs.ID,
		Brand: mergeBrand(v.org.ShownName(), v.brand, cs.Branding), Template: "minimal",
		Mode: cs.Mode, SubmitType: cs.SubmitType, Subtotal: cs.SubtotalAmount, Discount: cs.DiscountAmount, Tax: cs.TaxAmount, Total: cs.TotalAmount,
		Methods: cs.PaymentMethodTypes, RequireBillingAddress: cs.RequireBillingAddress, RequireDocument: cs.RequireDocument, RequirePhone: cs.RequirePhone,
		PaymentMethodCollection: cs.PaymentMethodCollection, BoletoDays: checkout.DefaultBoletoDays,
		ClientSecret: cs.ClientSecret, CSRFToken: csrf, Attempt: randomToken(18), LangParam: langParam,
		PageURL: paths.page(), ConfirmURL: checkout.HostedPath(cs.ID) + "/confirm", StatusURL: paths.status(), SuccessURL: successURL(cs),
		AssetBase: "/checkout-assets", ExpiresAt: lang.DateTime(cs.ExpiresAt.Time),
	}
	if nonce, ok := r.Context().Value(hostedNonceKey{}).(string); ok {
		c.CSPNonce = nonce
	}
	if !cs.Livemode {
		// The sandbox bar links to the organization's test mailbox (the e-mails this payment sends).
		c.MailboxURL = s.MailboxLink("", v.org.ID)
	}
	c.AllowPromotionCodes, c.DiscountLabel = cs.AllowPromotionCodes, v.discountLabel
	if cs.AllowPromotionCodes {
		c.PromoURL = checkout.HostedPath(cs.ID) + "/promotion-code"
	}
	switch {
	case cs.Template != nil:
		c.Template = *cs.Template
	case v.orgTemplate == "booking":
		c.Template = "booking"
	}
	if !cs.Livemode {
		c.SimulateURL = checkout.HostedPath(cs.ID) + "/simulate"
	}
	if cs.CancelURL != nil { // without one there is no store to go back to: no "back" link
		c.CancelURL = *cs.CancelURL
	}
	if cs.CustomerEmail != nil {
		c.CustomerEmail = *cs.CustomerEmail
		c.Form.Email = *cs.CustomerEmail
	}
	if cs.CustomerName != nil {
		c.Form.Name = *cs.CustomerName
	}
	if cs.CustomerDocument != nil {
		c.Form.Document = *cs.CustomerDocument
	}
	if cs.CustomerPhone != nil {
		c.Form.Phone = *cs.CustomerPhone
	}
	if o := cs.PaymentMethodOptions; o != nil && o.Boleto != nil {
		c.BoletoDays = o.Boleto.ExpiresAfterDays
	}
	for _, li := range cs.LineItems {
		it := pages.Item{Name: li.Product.Name, Quantity: li.Quantity, UnitAmount: li.Price.UnitAmount, Amount: li.SubtotalAmount}
		if li.Price.Name != nil && *li.Price.Name != "" {
			it.Name += " · " + *li.Price.Name
		}
		if li.Product.Description != nil {
			it.Description = *li.Product.Description
		}
		if li.Product.ImageURL != nil && strings.HasPrefix(*li.Product.ImageURL, "https://") {
			it.ImageURL = *li.Product.ImageURL
		}
		if rc := li.Price.Recurring; rc != nil {
			it.Recurring = lang.RecurringText(rc.Interval, rc.IntervalCount)
			it.RecurringAmount = li.Price.UnitAmount * li.Quantity
			if li.SubtotalAmount == 0 && rc.TrialPeriodDays != nil {
				it.TrialDays = *rc.TrialPeriodDays
			}
		}
		c.Items = append(c.Items, it)
	}
	if v.preview != nil {
		maxCount := v.preview.Installments.MaxCount
		if o := cs.PaymentMethodOptions; o != nil && o.CreditCard != nil && o.CreditCard.MaxInstallments < maxCount {
			maxCount = o.CreditCard.MaxInstallments
		}
		for _, o := range v.preview.Installments.Options {
			if o.Count <= maxCount {
				c.Installments = append(c.Installments, pages.InstallmentOption{Count: o.Count, InstallmentAmount: o.InstallmentAmount, TotalAmount: o.TotalAmount, InterestAmount: o.InterestAmount})
			}
		}
	}
	if c.State == pages.StateOpen && v.pi != nil && v.pi.LastPaymentError != nil {
		// The last attempt failed (a decline, an expired code): say so until the next one.
		pe := v.pi.LastPaymentError
		c.Error = &pages.PageError{Title: lang.T("error_title"), Message: lang.DeclineText(pe.Code, pe.Category)}
		if v.pi.PaymentMethodType != nil {
			c.Form.Method = *v.pi.PaymentMethodType
		}
	}
	if d := cs.PaymentData; d != nil {
		switch {
		case d.Pix != nil:
			left := int64(d.Pix.ExpiresAt.Sub(now) / time.Second)
			c.Pix = &pages.Pix{Code: d.Pix.Code, QRURL: paths.qr(), ExpiresAt: d.Pix.ExpiresAt.UTC().Format(time.RFC3339), ExpiresIn: max(left, 0), Expiry: lang.DateTime(d.Pix.ExpiresAt.Time)}
		case d.Boleto != nil:
			line, _ := boleto.FormatLine(d.Boleto.DigitableLine)
			svg, _ := boleto.SVG(d.Boleto.Barcode, boleto.DefaultBarHeight)
			c.Boleto = &pages.Boleto{Line: line, LineDigits: d.Boleto.DigitableLine, Barcode: d.Boleto.Barcode, BarcodeSVG: svg, DueDate: lang.Date(d.Boleto.DueDate), PrintURL: paths.boleto(),
				PixCode: d.Boleto.PixCode}
			if d.Boleto.PixCode != "" {
				c.Boleto.PixQRURL = paths.qr()
			}
		case d.CreditCard != nil:
			c.Card = &pages.CardPaid{Brand: brandName(d.CreditCard.Brand), Last4: d.CreditCard.Last4, Installments: d.CreditCard.Installments}
		}
	}
	if (c.State == pages.StateWaitingPix && c.Pix == nil) || (c.State == pages.StateWaitingBoleto && c.Boleto == nil) {
		c.State = pages.StateProcessing
	}
	if c.State == pages.StateOpen && cs.Livemode && len(c.Methods) == 0 && c.CollectPayment() {
		// A live session of an organization that cannot take payments yet: say so instead of a
		// form whose button cannot work.
		c.State = pages.StateNotActive
	}
	if c.State == pages.StateSuccess && c.Card == nil && v.pi != nil && v.pi.PaymentMethodType != nil {
		c.PaidWith = *v.pi.PaymentMethodType
	}
	return c
}

func brandName(b string) string {
	switch b {
	case "amex":
		return "Amex"
	case "":
		return ""
	}
	return strings.ToUpper(b[:1]) + b[1:]
}

// pageLang picks the language of a hosted request.
func pageLang(r *http.Request) (pages.Lang, string) {
	explicit := r.URL.Query().Get("lang")
	if r.Method == http.MethodPost && r.PostForm != nil {
		if v := r.PostForm.Get("lang"); v != "" {
			explicit = v
		}
	}
	switch strings.ToLower(explicit) {
	case "en", "pt-br":
	default:
		explicit = ""
	}
	return pages.NegotiateLang(explicit, r.Header.Get("Accept-Language")), explicit
}

// render writes a page only once it rendered completely (a failed render never sends half a page).
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	var buf bytes.Buffer
	if err := c.Render(r.Context(), &buf); err != nil {
		s.log.ErrorContext(r.Context(), "render failed", slog.String("request_id", requestID(r.Context())), slog.String("error", err.Error()))
		lang, _ := pageLang(r)
		http.Error(w, lang.T("error_generic"), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// renderMessage renders a page without a session (not found, unavailable link, bad form).
func (s *Server) renderMessage(w http.ResponseWriter, r *http.Request, status int, state string) {
	lang, _ := pageLang(r)
	c := &pages.Checkout{Lang: lang, State: state, Livemode: true, Template: "minimal", AssetBase: "/checkout-assets",
		Brand: pages.Brand{Name: "troco", PrimaryColor: defaultBrandColor, BackgroundColor: defaultBackground, BorderStyle: "rounded"}}
	if nonce, ok := r.Context().Value(hostedNonceKey{}).(string); ok {
		c.CSPNonce = nonce
	} else {
		// A page outside the hosted checkout's routes (receipt, printable boleto, portal, invoice,
		// Pix authorization) answering with this message: the message page brings its own
		// headers, replacing whatever policy that page had set for itself.
		c.CSPNonce = setHostedHeaders(w)
	}
	s.render(w, r, status, pages.CheckoutPage(c))
}

// ensureBrowserCookie returns this browser's CSRF cookie value, setting a new one if needed.
func ensureBrowserCookie(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(csrfCookieName); err == nil && validCookieValue(c.Value) {
		return c.Value
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic("server: crypto/rand failed: " + err.Error())
	}
	v := hex.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{Name: csrfCookieName, Value: v, Path: "/", Secure: true, HttpOnly: true, SameSite: http.SameSiteLaxMode, MaxAge: 2 * 24 * 3600})
	return v
}

func validCookieValue(v string) bool {
	if len(v) != 48 {
		return false
	}
	_, err := hex.DecodeString(v)
	return err == nil
}

// csrfToken binds a form to the session and to the browser's cookie.
func (s *Server) csrfToken(sessionID, cookie string) string {
	mac := hmac.New(sha256.New, s.cfg.Secrets.DeriveKey("checkout csrf"))
	mac.Write([]byte("checkout|" + sessionID + "|" + cookie))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// csrfValid checks a posted form's token in constant time.
func (s *Server) csrfValid(r *http.Request, sessionID string) bool {
	c, err := r.Cookie(csrfCookieName)
	if err != nil || !validCookieValue(c.Value) {
		return false
	}
	want := s.csrfToken(sessionID, c.Value)
	return hmac.Equal([]byte(want), []byte(r.PostForm.Get("csrf_token")))
}

// hostedWrite runs fn in a write transaction; a *domain.Error with KeepChanges (a declined card)
// keeps fn's writes and is still returned, as s.mutate does for the API.
func (s *Server) hostedWrite(ctx context.Context, fn func(tx *db.Tx) error) error {
	return s.hostedWriteRuns(ctx, func(tx *db.Tx, _ int) error { return fn(tx) })
}

// hostedWriteRuns is hostedWrite for an operation that may reserve a live processor call: the
// reservation commits, the call is made, and fn runs again (run 1) to apply its answer.
func (s *Server) hostedWriteRuns(ctx context.Context, fn func(tx *db.Tx, run int) error) error {
	for run := range maxProcessorRuns {
		var opErr error
		err := s.db.Write(context.WithoutCancel(ctx), func(tx *db.Tx) error {
			return tx.Savepoint(func() error {
				opErr = fn(tx, run)
				if e, ok := domain.AsError(opErr); ok && e.KeepChanges {
					return nil
				}
				return opErr
			})
		})
		if p := payments.PendingOf(opErr); p != nil && err == nil {
			s.pay.Execute(context.WithoutCancel(ctx), s.db, p)
			continue
		}
		if opErr != nil {
			return opErr
		}
		return err
	}
	return errors.New("processor call still pending after repeated runs")
}

func (s *Server) hostedActor(r *http.Request, scope domain.Scope) domain.Actor {
	return domain.Actor{Scope: scope, RequestID: requestID(r.Context())}
}

// handleHostedCheckout shows a session: the payment form while open, then the PIX, boleto,
// processing, success, failed or expired screen.
func (s *Server) handleHostedCheckout() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lang, langParam := pageLang(r)
		v, err := s.loadHosted(r.Context(), pathID(r), r.URL.Query().Get("secret"))
		if err != nil {
			s.hostedFailure(w, r, err)
			return
		}
		cookie := ensureBrowserCookie(w, r)
		s.render(w, r, http.StatusOK, pages.CheckoutPage(s.checkoutView(r, v, lang, langParam, s.csrfToken(v.cs.ID, cookie))))
	})
}

func (s *Server) hostedFailure(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, errHostedNotFound) {
		s.renderMessage(w, r, http.StatusNotFound, pages.StateNotFound)
		return
	}
	if db.IsUnavailable(err) {
		// The database restarting: nothing changed; the buyer (or a proxy) may simply retry.
		s.log.WarnContext(r.Context(), "hosted page: database unavailable", slog.String("request_id", requestID(r.Context())), slog.String("error", err.Error()))
		w.Header().Set("Retry-After", "5")
		s.renderMessage(w, r, http.StatusServiceUnavailable, pages.StateTryAgain)
		return
	}
	s.log.ErrorContext(r.Context(), "hosted checkout failed", slog.String("request_id", requestID(r.Context())), slog.String("error", err.Error()))
	s.renderMessage(w, r, http.StatusInternalServerError, pages.StateTryAgain)
}

// parseHostedForm reads a urlencoded form (bounded) and opens its session with the posted
// client_secret, checking the CSRF token. ok is false when an answer was already written.
func (s *Server) parseHostedForm(w http.ResponseWriter, r *http.Request) (*hostedView, bool) {
	r.Body = http.MaxBytesReader(w, r.Body, hostedFormMax)
	if err := r.ParseForm(); err != nil {
		s.renderMessage(w, r, http.StatusBadRequest, pages.StateForbidden)
		return nil, false
	}
	v, err := s.loadHosted(r.Context(), pathID(r), r.PostForm.Get("client_secret"))
	if err != nil {
		s.hostedFailure(w, r, err)
		return nil, false
	}
	if !s.csrfValid(r, v.cs.ID) {
		lang, langParam := pageLang(r)
		cookie := ensureBrowserCookie(w, r)
		c := s.checkoutView(r, v, lang, langParam, s.csrfToken(v.cs.ID, cookie))
		c.State = pages.StateForbidden
		s.render(w, r, http.StatusForbidden, pages.CheckoutPage(c))
		return nil, false
	}
	return v, true
}

// formParams turns the hosted form into confirmation params. Only the buyer's own data is read:
// nothing in the form states an amount.
func formParams(f url.Values, origin string) (checkout.ConfirmParams, *domain.Error) {
	if e := checkFormText(f); e != nil {
		return checkout.ConfirmParams{}, e
	}
	str := func(k string) *string {
		v := strings.TrimSpace(f.Get(k))
		if v == "" {
			return nil
		}
		return &v
	}
	p := checkout.ConfirmParams{PaymentMethodType: f.Get("payment_method_type"), Origin: origin, Hosted: true,
		CustomerEmail: str("customer_email"), CustomerName: str("customer_name"), CustomerDocument: str("customer_document"), CustomerPhone: str("customer_phone")}
	if p.CustomerEmail == nil {
		return p, domain.Missing("customer_email")
	}
	if p.CustomerName == nil {
		return p, domain.Missing("customer_name")
	}
	if p.PaymentMethodType == domain.MethodCreditCard {
		month, year, ok := parseExpiry(f.Get("card_exp"))
		if !ok {
			return p, domain.Invalid("card_exp", "card_exp must be MM/YY.")
		}
		p.Card = &payments.CardParams{Number: f.Get("card_number"), ExpMonth: month, ExpYear: year, CVC: strings.TrimSpace(f.Get("card_cvc")), HolderName: f.Get("card_name")}
		if raw := f.Get("installments"); raw != "" {
			n, err := strconv.Atoi(raw)
			if err != nil {
				return p, domain.Invalid("installments", "installments must be a number.")
			}
			p.Installments = &n
		}
	}
	fields := []string{"line1", "number", "line2", "neighborhood", "city", "state", "postal_code"}
	any := false
	for _, k := range fields {
		if strings.TrimSpace(f.Get(k)) != "" {
			any = true
		}
	}
	if any {
		p.BillingAddress = &domain.Address{Line1: f.Get("line1"), Number: f.Get("number"), Line2: f.Get("line2"), Neighborhood: f.Get("neighborhood"),
			City: f.Get("city"), State: f.Get("state"), PostalCode: f.Get("postal_code"), Country: "BR"}
	}
	return p, nil
}

// parseExpiry reads MM/YY or MM/YYYY.
func parseExpiry(s string) (month, year int, ok bool) {
	s = strings.ReplaceAll(strings.TrimSpace(s), " ", "")
	m, y, found := strings.Cut(s, "/")
	if !found || len(m) < 1 || len(m) > 2 || (len(y) != 2 && len(y) != 4) {
		return 0, 0, false
	}
	month, err1 := strconv.Atoi(m)
	year, err2 := strconv.Atoi(y)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	if len(y) == 2 {
		year += 2000
	}
	return month, year, true
}

// formField maps an API param to the hosted form's field name.
func formField(param string) string {
	switch {
	case param == "card[number]" || param == "card":
		return "card_number"
	case param == "card[exp_month]" || param == "card[exp_year]":
		return "card_exp"
	case param == "card[cvc]":
		return "card_cvc"
	case param == "card[holder_name]":
		return "card_name"
	case strings.HasPrefix(param, "billing_address["):
		return strings.TrimSuffix(strings.TrimPrefix(param, "billing_address["), "]")
	}
	return param
}

// handleHostedConfirm is the pay button.
func (s *Server) handleHostedConfirm() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := s.parseHostedForm(w, r)
		if !ok {
			return
		}
		lang, langParam := pageLang(r)
		paths := hostedPaths{id: v.cs.ID, secret: v.cs.ClientSecret, lang: langParam}
		if v.cs.Status != domain.CheckoutOpen {
			http.Redirect(w, r, paths.page(), http.StatusSeeOther)
			return
		}
		p, perr := formParams(r.PostForm, s.checkoutBase(r))
		var err error = perr
		var cs *domain.CheckoutSession
		if perr == nil {
			svc := s.checkoutService()
			err = s.hostedWriteRuns(r.Context(), func(tx *db.Tx, run int) error {
				var err error
				attempt := r.PostForm.Get("attempt")
				if run > 0 {
					attempt = "" // the same submission, applying the processor's answer
				}
				cs, err = svc.Confirm(tx, s.hostedActor(r, v.scope), v.cs.ID, p, attempt)
				return err
			})
		}
		if err == nil {
			if cs.Status == domain.CheckoutComplete && cs.PaymentStatus != domain.CheckoutUnpaid && cs.SuccessURL != nil {
				http.Redirect(w, r, successURL(cs), http.StatusSeeOther)
				return
			}
			http.Redirect(w, r, paths.page(), http.StatusSeeOther)
			return
		}
		e, isDomain := domain.AsError(err)
		if !isDomain {
			s.hostedFailure(w, r, err)
			return
		}
		if e.Code == domain.CodeResourceStateConflict {
			http.Redirect(w, r, paths.page(), http.StatusSeeOther)
			return
		}
		// Re-render the form with the buyer's entries (never the card number or CVC) and the reason.
		if fresh, err := s.loadHosted(r.Context(), v.cs.ID, v.cs.ClientSecret); err == nil {
			v = fresh
		}
		cookie := ensureBrowserCookie(w, r)
		c := s.checkoutView(r, v, lang, langParam, s.csrfToken(v.cs.ID, cookie))
		if c.State != pages.StateOpen {
			http.Redirect(w, r, paths.page(), http.StatusSeeOther)
			return
		}
		f := r.PostForm
		inst, _ := strconv.Atoi(f.Get("installments"))
		c.Form = pages.FormValues{Method: f.Get("payment_method_type"), Email: f.Get("customer_email"), Name: f.Get("customer_name"), Document: f.Get("customer_document"),
			Phone: f.Get("customer_phone"), Line1: f.Get("line1"), Number: f.Get("number"), Line2: f.Get("line2"), Neighborhood: f.Get("neighborhood"),
			City: f.Get("city"), State: f.Get("state"), PostalCode: f.Get("postal_code"), CardName: f.Get("card_name"), Installments: inst}
		c.Error = hostedError(lang, e)
		s.render(w, r, e.Status, pages.CheckoutPage(c))
	})
}

// hostedError explains an API error to the buyer in the page's language.
func hostedError(lang pages.Lang, e *domain.Error) *pages.PageError {
	pe := &pages.PageError{Title: lang.T("error_title")}
	switch {
	case e.Code == domain.CodeOrgNotActivated:
		pe.Message = lang.T("not_activated")
	case e.Type == domain.TypeCard || e.Status == http.StatusPaymentRequired:
		category := ""
		if pi, ok := e.PaymentIntent.(*domain.PaymentIntent); ok && pi.LastPaymentError != nil {
			category = pi.LastPaymentError.Category
		}
		pe.Field = formField(e.Param)
		pe.Message = lang.DeclineText(e.Code, category)
		if e.Code == domain.CodePaymentAttemptExpired {
			pe.Message = lang.DeclineText("payment_expired", "")
		}
	case e.Status == http.StatusBadRequest:
		pe.Field = formField(e.Param)
		pe.Message = lang.FieldText(pe.Field, e.Message)
	default:
		pe.Message = lang.T("error_generic")
	}
	return pe
}

// handleHostedSimulate is the yellow bar's 'simulate payment' and 'simulate expiration' (test mode).
func (s *Server) handleHostedSimulate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := s.parseHostedForm(w, r)
		if !ok {
			return
		}
		if v.cs.Livemode {
			s.renderMessage(w, r, http.StatusNotFound, pages.StateNotFound)
			return
		}
		_, langParam := pageLang(r)
		succeed := r.PostForm.Get("action") == "payment"
		svc := s.checkoutService()
		err := s.hostedWrite(r.Context(), func(tx *db.Tx) error {
			paidWith := "" // the boleto's barcode
			if succeed && r.PostForm.Get("paid_with") == domain.PaidWithPix {
				paidWith = domain.PaidWithPix // the PIX printed on it
			}
			_, err := svc.SimulateWith(tx, s.hostedActor(r, v.scope), v.cs.ID, succeed, paidWith)
			return err
		})
		if _, isDomain := domain.AsError(err); err != nil && !isDomain {
			s.hostedFailure(w, r, err)
			return
		}
		http.Redirect(w, r, hostedPaths{id: v.cs.ID, secret: v.cs.ClientSecret, lang: langParam}.page(), http.StatusSeeOther)
	})
}

// handleHostedStatus answers the page script's polling while a payment waits.
func (s *Server) handleHostedStatus() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, err := s.loadHosted(r.Context(), pathID(r), r.URL.Query().Get("secret"))
		if err != nil {
			writeJSON(w, http.StatusNotFound, map[string]string{"state": pages.StateNotFound})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"state": hostedState(v.cs, v.pi), "status": v.cs.Status, "payment_status": v.cs.PaymentStatus})
	})
}

// handleHostedBoleto is the printable boleto.
func (s *Server) handleHostedBoleto() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lang, langParam := pageLang(r)
		v, err := s.loadHosted(r.Context(), pathID(r), r.URL.Query().Get("secret"))
		if err != nil {
			s.hostedFailure(w, r, err)
			return
		}
		c := s.checkoutView(r, v, lang, langParam, "")
		if c.Boleto == nil || v.pi == nil || v.pi.PaymentData == nil || v.pi.PaymentData.Boleto == nil {
			s.renderMessage(w, r, http.StatusNotFound, pages.StateNotFound)
			return
		}
		p, err := boletoPage(v.pi, v.org, s.cfg.Calendar)
		if err != nil {
			s.hostedFailure(w, r, err)
			return
		}
		if c.Boleto.PixQRURL != "" { // the session's own QR address (no intent secret on its pages)
			p.PixQRURL = c.Boleto.PixQRURL
		}
		if c.Brand.Name != v.org.ShownName() { // the session's branding names the seller
			p.Payee = c.Brand.Name
		}
		if p.PayerName == "" && v.cs.CustomerName != nil {
			p.PayerName = *v.cs.CustomerName
		}
		p.BackURL, p.BackLabel = c.PageURL, c.Lang.T("print_back")
		s.render(w, r, http.StatusOK, pages.PaymentBoleto(p))
	})
}

// handleHostedPixQR is the PIX QR code image of a waiting session.
func (s *Server) handleHostedPixQR() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, err := s.loadHosted(r.Context(), pathID(r), r.URL.Query().Get("secret"))
		code := ""
		if err == nil && v.cs.PaymentData != nil {
			switch d := v.cs.PaymentData; {
			case d.Pix != nil:
				code = d.Pix.Code
			case d.Boleto != nil:
				code = d.Boleto.PixCode // the PIX printed on the boleto
			}
		}
		if code == "" {
			http.NotFound(w, r)
			return
		}
		png, err := pix.QRPNG(code, 480)
		if err != nil {
			s.hostedFailure(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Content-Length", strconv.Itoa(len(png)))
		_, _ = w.Write(png)
	})
}

// handleHostedCanceled is where the form's "back" link leads when the session has no cancel_url.
func (s *Server) handleHostedCanceled() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lang, langParam := pageLang(r)
		v, err := s.loadHosted(r.Context(), pathID(r), r.URL.Query().Get("secret"))
		if err != nil {
			s.hostedFailure(w, r, err)
			return
		}
		c := s.checkoutView(r, v, lang, langParam, "")
		if c.State != pages.StateOpen {
			http.Redirect(w, r, c.PageURL, http.StatusSeeOther)
			return
		}
		c.State = pages.StateCanceled
		s.render(w, r, http.StatusOK, pages.CheckoutPage(c))
	})
}

// handlePaymentLinkOpen is a buyer opening a payment link: a fresh session, then its page.
func (s *Server) handlePaymentLinkOpen() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var cs *domain.CheckoutSession
		base := s.checkoutBase(r)
		err := s.db.Write(r.Context(), func(tx *db.Tx) error {
			var err error
			cs, err = checkout.OpenLink(tx, pathID(r), requestID(r.Context()), base)
			return err
		})
		switch {
		case errors.Is(err, checkout.ErrLinkUnavailable):
			s.renderMessage(w, r, http.StatusGone, pages.StateUnavailable)
		case err != nil:
			s.hostedFailure(w, r, err)
		default:
			target := cs.URL
			if lang := r.URL.Query().Get("lang"); lang == "en" || strings.EqualFold(lang, "pt-BR") {
				target += "&lang=" + url.QueryEscape(lang)
			}
			http.Redirect(w, r, target, http.StatusSeeOther)
		}
	})
}

// handleCheckoutAsset serves the hosted checkout's CSS and script.
// handleFavicon serves troco's icon to the browsers of hosted pages.
func handleFavicon() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Header().Set("Cache-Control", "public, max-age=86400")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write(static.FaviconSVG)
	})
}

func (s *Server) handleCheckoutAsset() http.Handler {
	type asset struct {
		body []byte
		ct   string
		etag string
	}
	mk := func(b []byte, ct string) asset {
		sum := sha256.Sum256(b)
		return asset{body: b, ct: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	}
	assets := map[string]asset{"checkout.css": mk(static.CheckoutCSS, "text/css; charset=utf-8"), "checkout.js": mk(static.CheckoutJS, "text/javascript; charset=utf-8"),
		"boleto.css": mk(static.BoletoCSS, "text/css; charset=utf-8")}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := assets[httprouter.ParamsFromContext(r.Context()).ByName("file")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("ETag", a.etag)
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if r.Header.Get("If-None-Match") == a.etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", a.ct)
		_, _ = w.Write(a.body)
	})
}
