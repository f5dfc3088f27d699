package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"troco/db"
	"troco/pages"
	"troco/server/domain"
	"troco/server/invoices"
	"troco/server/payments"
	"troco/server/secrets"
)

// The hosted invoice page (hosted_invoice_url) and its PDF (invoice_pdf): whoever holds the
// URL's secret can see and pay the invoice; anything else is a 404 that says nothing.

type invoiceView struct {
	inv   *domain.Invoice
	scope domain.Scope
	org   *domain.Organization
	cus   *domain.Customer
	pi    *domain.PaymentIntent
}

func (s *Server) loadInvoiceView(ctx context.Context, id, secret string) (*invoiceView, error) {
	v := &invoiceView{}
	err := s.db.Read(ctx, func(tx *db.Tx) error {
		inv, sc, err := invoices.GetHosted(tx, id, secret)
		if err != nil {
			return err
		}
		v.inv, v.scope = inv, sc
		if v.org, err = tx.FindOrganizationByID(sc.OrgID); err != nil {
			return err
		}
		if v.cus, err = tx.FindCustomerByID(sc, inv.Customer); err != nil {
			return err
		}
		if inv.PaymentIntent != nil {
			if v.pi, err = s.pay.GetIntent(tx, sc, *inv.PaymentIntent); err != nil {
				return err
			}
		}
		return nil
	})
	return v, err
}

func invoicePagePath(id, secret, lang string) string {
	p := "/invoices/" + id + "?s=" + url.QueryEscape(secret)
	if lang != "" {
		p += "&lang=" + url.QueryEscape(lang)
	}
	return p
}

func (s *Server) handleHostedInvoice() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret := r.URL.Query().Get("s")
		v, err := s.loadInvoiceView(r.Context(), pathID(r), secret)
		if err != nil {
			s.invoicePageFailure(w, r, err)
			return
		}
		lang, _ := pageLang(r)
		p := s.invoicePage(r, v, secret, lang)
		code := r.URL.Query().Get("e")
		if code == domain.CodeResourceStateConflict && (p.InProgress || !p.Payable()) {
			code = "" // refused while a payment is under way or once settled: the page says which
		}
		if code != "" {
			p.Message = lang.DeclineText(code, "")
			if m := p.ParamMessage(r.URL.Query().Get("p")); m != "" {
				p.Message = m // the boleto's payer data: say which is missing or invalid
			}
		}
		s.render(w, r, http.StatusOK, pages.InvoiceHosted(p))
	})
}

func (s *Server) invoicePage(r *http.Request, v *invoiceView, secret string, lang pages.Lang) *pages.InvoicePage {
	p := &pages.InvoicePage{Lang: lang, Inv: v.inv, Org: v.org, Customer: v.cus, Zone: domain.CustomerZone(v.cus), Now: s.cfg.Clock.Now(),
		Secret: secret, CSRF: s.invoiceCSRF(v.inv.ID, secret), PageURL: "/invoices/" + v.inv.ID + "?s=" + url.QueryEscape(secret), PDFURL: "/invoices/" + v.inv.ID + "/pdf?s=" + url.QueryEscape(secret),
		ActionURL: "/invoices/" + v.inv.ID + "/pay", SimURL: "/invoices/" + v.inv.ID + "/simulate"}
	if nonce, ok := r.Context().Value(hostedNonceKey{}).(string); ok {
		p.CSPNonce = nonce
	}
	open := v.inv.Status == domain.InvoiceOpen || v.inv.Status == domain.InvoiceUncollectible
	p.InProgress = open && v.pi != nil && invoices.InProgress(v.pi)
	if v.pi != nil && v.pi.Waiting() && v.pi.PaymentData != nil && open {
		p.Pix, p.Boleto = v.pi.PaymentData.Pix, v.pi.PaymentData.Boleto
	}
	return p
}

// InvoicePageCSRF is the csrf_token of the forms of invoice id's hosted page opened with secret:
// an HMAC of both under a key derived from the data directory's master key (stateless, so a page
// loaded earlier or on another replica still posts).
func InvoicePageCSRF(keys *secrets.Keyring, id, secret string) string {
	m := hmac.New(sha256.New, keys.DeriveKey("invoice page"))
	m.Write([]byte(id + "." + secret))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (s *Server) invoiceCSRF(id, secret string) string {
	return InvoicePageCSRF(s.cfg.Secrets, id, secret)
}

// invoiceCSRFFailed answers a form posted without the page's csrf_token (checked in constant
// time): the page again, 403, asking to try again; nothing is done.
func (s *Server) invoiceCSRFFailed(w http.ResponseWriter, r *http.Request, v *invoiceView, secret string) bool {
	if hmac.Equal([]byte(r.PostForm.Get("csrf_token")), []byte(s.invoiceCSRF(v.inv.ID, secret))) {
		return false
	}
	lang, _ := pageLang(r)
	p := s.invoicePage(r, v, secret, lang)
	p.Message = p.IT("form_expired")
	s.render(w, r, http.StatusForbidden, pages.InvoiceHosted(p))
	return true
}

func (s *Server) invoicePageFailure(w http.ResponseWriter, r *http.Request, err error) {
	if e, ok := domain.AsError(err); ok && e.Status == http.StatusNotFound {
		s.renderMessage(w, r, http.StatusNotFound, pages.StateNotFound)
		return
	}
	s.hostedFailure(w, r, err)
}

// handleHostedInvoicePay pays from the page: a card typed by the customer, or a new PIX or
// boleto for the amount due now. It answers with a redirect to the page (a decline carries its
// code, shown as a message).
func (s *Server) handleHostedInvoicePay() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, hostedFormMax)
		if err := r.ParseForm(); err != nil {
			s.renderMessage(w, r, http.StatusBadRequest, pages.StateForbidden) // in the page's language
			return
		}
		secret := r.PostForm.Get("s")
		v, err := s.loadInvoiceView(r.Context(), pathID(r), secret)
		if err != nil {
			s.invoicePageFailure(w, r, err)
			return
		}
		if s.invoiceCSRFFailed(w, r, v, secret) {
			return
		}
		_, langParam := pageLang(r)
		hp := invoices.HostedPayParams{Method: r.PostForm.Get("method"), Origin: "https://" + r.Host}
		if hp.Method == domain.MethodCreditCard {
			month, _ := strconv.Atoi(strings.TrimSpace(r.PostForm.Get("exp_month")))
			year, _ := strconv.Atoi(strings.TrimSpace(r.PostForm.Get("exp_year")))
			if year > 0 && year < 100 {
				year += 2000
			}
			hp.Card = &payments.CardParams{Number: strings.ReplaceAll(r.PostForm.Get("number"), " ", ""), ExpMonth: month, ExpYear: year,
				CVC: r.PostForm.Get("cvc"), HolderName: r.PostForm.Get("holder_name")}
		}
		if hp.Method == domain.MethodBoleto {
			// The payer's CPF/CNPJ and address, asked on the page when the customer has none.
			if d := strings.TrimSpace(r.PostForm.Get("document")); d != "" {
				hp.Document = &d
			}
			if line1 := strings.TrimSpace(r.PostForm.Get("line1")); line1 != "" {
				hp.Address = &domain.Address{Line1: line1, Number: strings.TrimSpace(r.PostForm.Get("address_number")),
					Neighborhood: strings.TrimSpace(r.PostForm.Get("neighborhood")), City: strings.TrimSpace(r.PostForm.Get("city")),
					State: strings.TrimSpace(r.PostForm.Get("state")), PostalCode: strings.TrimSpace(r.PostForm.Get("postal_code")), Country: "BR"}
			}
		}
		svc := s.invoiceService()
		if te := checkFormText(r.PostForm); te != nil { // the API's text rules: nothing is paid or stored
			err = te
		} else {
			err = s.hostedWrite(r.Context(), func(tx *db.Tx) error {
				_, err := svc.PayHosted(tx, s.hostedActor(r, v.scope), v.inv.ID, hp)
				return err
			})
		}
		target := invoicePagePath(v.inv.ID, secret, langParam)
		if err != nil {
			e, ok := domain.AsError(err)
			if !ok {
				s.hostedFailure(w, r, err)
				return
			}
			code := e.Code
			if code == "" {
				code = "processing_error"
			}
			target += "&e=" + url.QueryEscape(code)
			if e.Param != "" {
				target += "&p=" + url.QueryEscape(e.Param)
			}
		}
		http.Redirect(w, r, target, http.StatusSeeOther)
	})
}

// handleHostedInvoiceSimulate settles or expires the waiting PIX or boleto of a test-mode
// invoice (the yellow bar's buttons).
func (s *Server) handleHostedInvoiceSimulate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, hostedFormMax)
		if err := r.ParseForm(); err != nil {
			s.renderMessage(w, r, http.StatusBadRequest, pages.StateForbidden) // in the page's language
			return
		}
		secret := r.PostForm.Get("s")
		v, err := s.loadInvoiceView(r.Context(), pathID(r), secret)
		if err == nil && (v.inv.Livemode || v.pi == nil || !v.pi.Waiting()) {
			err = domain.NotFound("id", "invoice", pathID(r))
		}
		if err != nil {
			s.invoicePageFailure(w, r, err)
			return
		}
		if s.invoiceCSRFFailed(w, r, v, secret) {
			return
		}
		_, langParam := pageLang(r)
		succeed := r.PostForm.Get("action") == "payment"
		err = s.hostedWrite(r.Context(), func(tx *db.Tx) error {
			_, err := s.pay.SimulateSettlement(tx, s.hostedActor(r, v.scope), v.pi.ID, succeed)
			return err
		})
		if _, isDomain := domain.AsError(err); err != nil && !isDomain {
			s.hostedFailure(w, r, err)
			return
		}
		http.Redirect(w, r, invoicePagePath(v.inv.ID, secret, langParam), http.StatusSeeOther)
	})
}

// handleInvoicePDF is invoice_pdf: the invoice as a PDF document.
func (s *Server) handleInvoicePDF() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret := r.URL.Query().Get("s")
		v, err := s.loadInvoiceView(r.Context(), pathID(r), secret)
		if err != nil {
			if errors.Is(err, db.ErrNotFound) {
				http.NotFound(w, r)
				return
			}
			if e, ok := domain.AsError(err); ok && e.Status == http.StatusNotFound {
				http.NotFound(w, r)
				return
			}
			s.hostedFailure(w, r, err)
			return
		}
		lang, _ := pageLang(r)
		body, err := pages.InvoicePDF(s.invoicePage(r, v, secret, lang))
		if err != nil {
			s.hostedFailure(w, r, err)
			return
		}
		name := v.inv.ID
		if v.inv.Number != nil {
			name = *v.inv.Number
		}
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.pdf"`)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	})
}
