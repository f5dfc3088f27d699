package server

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"troco/db"
	"troco/pages"
	"troco/server/calendar"
	"troco/server/domain"
	"troco/server/jobs"
	"troco/server/payments"
)

// Pix Automático authorizations (pixauth_): thin handlers over server/payments/pixauto.go, and
// the hosted authorization page (no key: the url's secret opens it).

var pixAuthStatuses = []string{domain.PixAuthPending, domain.PixAuthApproved, domain.PixAuthRejected, domain.PixAuthCanceled, domain.PixAuthExpired}

func (s *Server) handlePixAuthCreate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p payments.PixAuthParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		p.Origin = s.origin(r)
		// The id is chosen once: a live authorization is created by the run that applies the
		// PSP's answer.
		p.ID = domain.NewID(domain.PrefixPixAuthorization)
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return s.pay.CreatePixAuthorization(tx, a, p) })
	})
}

func (s *Server) handlePixAuthGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return s.pay.GetPixAuthorization(tx, a.Scope, id) })
	})
}

func (s *Server) handlePixAuthList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseList(r, "customer", "status")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		status, err := q.oneOf("status", pixAuthStatuses...)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			items, more, err := tx.ListPixAuthorizations(a.Scope, db.PixAuthorizationFilter{Customer: q.str("customer"), Status: status}, q.ListParams)
			return listOf(r, items, more), err
		})
	})
}

func (s *Server) handlePixAuthCancel() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p struct{}
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return s.pay.CancelPixAuthorization(tx, a, id) })
	})
}

// handlePixAuthTestHelper answers a pending test-mode authorization as the payer would
// (approve or reject), for suites that do not drive the hosted page.
func (s *Server) handlePixAuthTestHelper(approve bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p struct{}
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			if a.Livemode {
				return nil, domain.TestmodeRequired()
			}
			return s.pay.AnswerPixAuthorization(tx, a, id, approve)
		})
	})
}

// pixAuthCSRF binds the page's forms to the authorization and its secret.
func (s *Server) pixAuthCSRF(id, secret string) string {
	m := hmac.New(sha256.New, s.cfg.Secrets.DeriveKey("pix authorization page"))
	m.Write([]byte(id + "." + secret))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// loadPixAuthPage finds the authorization of the page and checks its secret (a wrong secret is
// the same 404 as an unknown id).
func (s *Server) loadPixAuthPage(r *http.Request, secret string) (*domain.PixAuthorization, domain.Scope, *domain.Organization, *domain.Customer, error) {
	var pa *domain.PixAuthorization
	var sc domain.Scope
	var org *domain.Organization
	var cus *domain.Customer
	err := s.db.Read(r.Context(), func(tx *db.Tx) error {
		var want string
		var err error
		if pa, sc, want, _, err = tx.FindPixAuthorizationPage(pathID(r)); err != nil {
			return err
		}
		if !payments.SecretMatches(want, secret) {
			return db.ErrNotFound
		}
		if org, err = tx.FindOrganizationByID(sc.OrgID); err != nil {
			return err
		}
		cus, err = tx.FindCustomerByID(sc, pa.Customer)
		if errors.Is(err, db.ErrNotFound) {
			cus, err = &domain.Customer{ID: pa.Customer}, nil
		}
		return err
	})
	if errors.Is(err, db.ErrNotFound) {
		err = domain.NotFound("id", "pix_authorization", pathID(r))
	}
	return pa, sc, org, cus, err
}

// pageDate writes a YYYY-MM-DD date for a page in lang.
func pageDate(lang pages.Lang, s string) string {
	if d, err := calendar.Parse(s); err == nil {
		return d.Format(pages.PixAuthText(lang, "date_layout"))
	}
	return s
}

// customerPageLang picks a hosted page's language: ?lang= when given, else the customer's first
// supported preferred_locales entry, else the browser's Accept-Language; pt-BR by default.
func customerPageLang(r *http.Request, cus *domain.Customer) pages.Lang {
	lang, explicit := pageLang(r)
	if explicit != "" || cus == nil {
		return lang
	}
	for _, l := range cus.PreferredLocales {
		switch l := strings.ToLower(l); {
		case l == "en" || strings.HasPrefix(l, "en-"):
			return pages.En
		case l == "pt" || strings.HasPrefix(l, "pt-"):
			return pages.PtBR
		}
	}
	return lang
}

// pixAuthPageFailure answers a hosted authorization page that cannot be shown: an unknown id or
// wrong secret is the hosted pages' "not found" page in the visitor's language.
func (s *Server) pixAuthPageFailure(w http.ResponseWriter, r *http.Request, err error) {
	if e, ok := domain.AsError(err); ok && e.Status == http.StatusNotFound {
		s.renderMessage(w, r, http.StatusNotFound, pages.StateNotFound)
		return
	}
	s.hostedFailure(w, r, err)
}

// handlePixAuthPage serves GET /pix-authorizations/:id?s=<secret>.
func (s *Server) handlePixAuthPage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret := r.URL.Query().Get("s")
		pa, _, org, cus, err := s.loadPixAuthPage(r, secret)
		if err != nil {
			s.pixAuthPageFailure(w, r, err)
			return
		}
		if r.URL.Query().Get("qr") == "1" {
			png, err := payments.PixAuthQR(pa, pixQRSize)
			if err != nil {
				s.hostedFailure(w, r, err)
				return
			}
			writePNG(w, png)
			return
		}
		lang := customerPageLang(r, cus)
		other := "en"
		if lang == pages.En {
			other = "pt-br"
		}
		page := pages.PixAuthPage{Lang: lang, LangURL: payments.PixAuthPagePath(pa.ID) + "?s=" + url.QueryEscape(secret) + "&lang=" + other,
			Livemode: pa.Livemode, Payee: org.Name, MaxAmount: lang.Money(pa.MaxAmount), Interval: pages.PixAuthText(lang, pa.Interval),
			StartDate: pageDate(lang, pa.StartDate), EndDate: pages.PixAuthText(lang, "no_end"), Status: pa.Status, StatusText: pages.PixAuthText(lang, pa.Status),
			BRCode: pa.BRCode, QRURL: payments.PixAuthPagePath(pa.ID) + "?qr=1&s=" + url.QueryEscape(secret), ActionURL: payments.PixAuthPagePath(pa.ID),
			Secret: secret, CSRFToken: s.pixAuthCSRF(pa.ID, secret), Customer: pa.Customer}
		if cus.Name != nil {
			page.Customer = *cus.Name
		} else if cus.Email != nil {
			page.Customer = *cus.Email
		}
		if pa.EndDate != nil {
			page.EndDate = pageDate(lang, *pa.EndDate)
		}
		if pa.Description != nil {
			page.Description = *pa.Description
		}
		var buf bytes.Buffer
		if err := pages.PixAuthorization(page).Render(r.Context(), &buf); err != nil {
			s.hostedFailure(w, r, err)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		w.WriteHeader(http.StatusOK)
		w.Write(buf.Bytes())
	})
}

// handlePixAuthPagePost is the sandbox bar's approve and reject (test mode only).
func (s *Server) handlePixAuthPagePost() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
		if err := r.ParseForm(); err != nil {
			s.renderMessage(w, r, http.StatusBadRequest, pages.StateForbidden) // in the page's language
			return
		}
		secret := r.PostForm.Get("s")
		pa, sc, _, _, err := s.loadPixAuthPage(r, secret)
		if err != nil {
			s.pixAuthPageFailure(w, r, err)
			return
		}
		if !hmac.Equal([]byte(r.PostForm.Get("csrf_token")), []byte(s.pixAuthCSRF(pa.ID, secret))) {
			s.renderMessage(w, r, http.StatusForbidden, pages.StateForbidden) // in the page's language
			return
		}
		if pa.Livemode {
			s.pixAuthPageFailure(w, r, domain.NotFound("id", "pix_authorization", pa.ID)) // live payers answer in their bank's app
			return
		}
		action := r.PostForm.Get("action")
		if action != "approve" && action != "reject" {
			s.renderMessage(w, r, http.StatusBadRequest, pages.StateForbidden) // a form the page never sends
			return
		}
		err = s.hostedWrite(r.Context(), func(tx *db.Tx) error {
			_, err := s.pay.AnswerPixAuthorization(tx, domain.Actor{Scope: sc}, pa.ID, action == "approve")
			return err
		})
		if e, ok := domain.AsError(err); err != nil && (!ok || e.Status != http.StatusConflict) {
			s.pixAuthPageFailure(w, r, err)
			return
		}
		back := payments.PixAuthPagePath(pa.ID) + "?s=" + url.QueryEscape(secret)
		if _, explicit := pageLang(r); explicit != "" {
			back += "&lang=" + url.QueryEscape(explicit)
		}
		http.Redirect(w, r, back, http.StatusSeeOther)
	})
}

// pixAuthExpiryJob expires pending authorizations nobody answered.
func (s *Server) pixAuthExpiryJob() jobs.Job {
	return jobs.Job{Name: "pix-authorizations-expiry", Every: time.Minute, Run: func(ctx context.Context, now time.Time) error {
		return s.pay.RunPixAuthorizationExpiry(ctx, s.db, now)
	}}
}
