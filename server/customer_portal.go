package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"troco/db"
	"troco/pages"
	"troco/server/billing"
	"troco/server/domain"
	"troco/server/payments"
)

// The customer portal: POST /v1/customer-portal-sessions returns a single-use url; opening it
// (within five minutes) binds a one-hour cookie session to the browser, in which the customer
// sees their subscriptions and invoices, cancels at period end or keeps a subscription, and
// replaces the saved card through a setup intent. Every action goes through the same billing and
// payments functions as the API, scoped to that one customer.

const portalCookie = "troco_portal"

func (s *Server) handlePortalSessionCreate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p billing.PortalParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		origin := s.cfg.BaseURL
		if origin == "" {
			origin = "https://" + r.Host
		}
		// The url and customer_session_token are bearer secrets: mutate commits, and stores for
		// Idempotency-Key replays, the session without them; they are added to this answer only
		// (a replay answers without them: create a new session).
		var link, token string
		cw := &captureWriter{header: w.Header()}
		s.mutate(cw, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			ps, err := billing.CreatePortalSession(tx, a, origin, p)
			if err != nil {
				return nil, err
			}
			shown := *ps
			link, token = ps.URL, *ps.CustomerSessionToken
			shown.URL, shown.CustomerSessionToken = "", nil
			return &shown, nil
		})
		body := bytes.TrimSuffix(cw.body.Bytes(), []byte("\n"))
		if cw.status == http.StatusOK && token != "" {
			var m map[string]any
			if json.Unmarshal(body, &m) == nil {
				m["url"], m["customer_session_token"] = link, token
				body, _ = json.Marshal(m)
			}
		}
		writeRaw(w, cw.status, body)
	})
}

func portalLang(r *http.Request, locale string) pages.Lang {
	explicit := r.URL.Query().Get("lang")
	if explicit == "" && locale != "auto" {
		explicit = locale
	}
	return pages.NegotiateLang(explicit, r.Header.Get("Accept-Language"))
}

// handlePortalOpen opens a portal url once and starts the browser's session.
func (s *Server) handlePortalOpen() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := pathID(r)
		cookie := billing.RandomToken(32)
		csrf := billing.RandomToken(24)
		now := s.cfg.Clock.Now()
		var pb *db.PortalBrowser
		err := s.db.Write(r.Context(), func(tx *db.Tx) error {
			var err error
			pb, err = tx.OpenPortalSession(billing.HashToken(token), now.Unix(), billing.HashToken(cookie), csrf, now.Add(billing.PortalSessionLifetime).Unix())
			return err
		})
		if errors.Is(err, db.ErrNotFound) {
			p := &pages.Portal{Lang: portalLang(r, "auto")}
			s.render(w, r, http.StatusNotFound, pages.PortalExpired(p))
			return
		}
		if err != nil {
			s.hostedFailure(w, r, err)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: portalCookie, Value: cookie, Path: "/portal", MaxAge: int(billing.PortalSessionLifetime / time.Second),
			HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
		target := "/portal"
		if pb.Session.Locale != "auto" {
			target += "?lang=" + url.QueryEscape(pb.Session.Locale)
		}
		http.Redirect(w, r, target, http.StatusSeeOther)
	})
}

// portalSession returns the browser's open portal session, or writes the expired page.
func (s *Server) portalSession(w http.ResponseWriter, r *http.Request) (*db.PortalBrowser, bool) {
	c, err := r.Cookie(portalCookie)
	var pb *db.PortalBrowser
	if err == nil && c.Value != "" {
		err = s.db.Read(r.Context(), func(tx *db.Tx) error {
			var err error
			pb, err = tx.FindPortalByCookie(billing.HashToken(c.Value), s.cfg.Clock.Now().Unix())
			return err
		})
	}
	if err != nil || pb == nil {
		if err != nil && !errors.Is(err, db.ErrNotFound) && !errors.Is(err, http.ErrNoCookie) {
			s.hostedFailure(w, r, err)
			return nil, false
		}
		s.render(w, r, http.StatusUnauthorized, pages.PortalExpired(&pages.Portal{Lang: portalLang(r, "auto")}))
		return nil, false
	}
	return pb, true
}

func (s *Server) handlePortalHome() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pb, ok := s.portalSession(w, r)
		if !ok {
			return
		}
		p := &pages.Portal{Lang: portalLang(r, pb.Session.Locale), ReturnURL: pb.Session.ReturnURL, CSRF: pb.CSRF, Livemode: pb.Scope.Livemode}
		if nonce, ok := r.Context().Value(hostedNonceKey{}).(string); ok {
			p.CSPNonce = nonce
		}
		err := s.db.Read(r.Context(), func(tx *db.Tx) error {
			var err error
			if p.Org, err = tx.FindOrganizationByID(pb.Scope.OrgID); err != nil {
				return err
			}
			if p.Customer, err = tx.FindCustomerByID(pb.Scope, pb.Session.Customer); err != nil {
				return err
			}
			p.Zone, p.Now = domain.CustomerZone(p.Customer), tx.Now
			if p.Subscriptions, _, err = tx.ListSubscriptions(pb.Scope, db.SubscriptionFilter{Customer: p.Customer.ID}, db.ListParams{Limit: 50}); err != nil {
				return err
			}
			p.Products = map[string]string{}
			for _, sub := range p.Subscriptions {
				for _, it := range sub.Items {
					if _, ok := p.Products[it.Price.Product]; !ok {
						if prod, err := tx.FindProductByID(pb.Scope, it.Price.Product); err == nil {
							p.Products[prod.ID] = prod.Name
						}
					}
				}
			}
			invs, _, err := tx.ListInvoices(pb.Scope, db.InvoiceFilter{Customer: p.Customer.ID}, db.ListParams{Limit: 50})
			if err != nil {
				return err
			}
			for _, inv := range invs {
				if inv.Status == domain.InvoiceDraft {
					continue
				}
				inv.ApplyLateCharges(tx.Now)
				p.Invoices = append(p.Invoices, inv)
			}
			var pmID *string
			for _, sub := range p.Subscriptions {
				if sub.DefaultPaymentMethod != nil && !domain.SubscriptionFinal(sub.Status) {
					pmID = sub.DefaultPaymentMethod
					break
				}
			}
			if pmID != nil {
				if pm, err := tx.FindPaymentMethodByID(pb.Scope, *pmID); err == nil {
					p.Card = pm
				}
			} else if pms, _, err := tx.ListPaymentMethods(pb.Scope, db.PaymentMethodFilter{Customer: p.Customer.ID, Type: domain.MethodCreditCard}, db.ListParams{Limit: 1}); err == nil && len(pms) > 0 {
				p.Card = pms[0]
			}
			return nil
		})
		if err != nil {
			s.hostedFailure(w, r, err)
			return
		}
		if m := r.URL.Query().Get("m"); pages.HasPT(m) { // only the portal's own texts, never the URL's
			p.Message = p.PT(m)
		}
		if code := r.URL.Query().Get("e"); code != "" {
			p.Message, p.Error = p.Lang.DeclineText(code, ""), true
		}
		s.render(w, r, http.StatusOK, pages.PortalPage(p))
	})
}

// portalForm reads a portal POST: the session and its CSRF token (constant-time compare).
func (s *Server) portalForm(w http.ResponseWriter, r *http.Request) (*db.PortalBrowser, bool) {
	r.Body = http.MaxBytesReader(w, r.Body, hostedFormMax)
	if err := r.ParseForm(); err != nil {
		p := &pages.Portal{Lang: portalLang(r, "auto")}
		p.Message = p.PT("bad_form")
		s.render(w, r, http.StatusBadRequest, pages.PortalNotice(p))
		return nil, false
	}
	pb, ok := s.portalSession(w, r)
	if !ok {
		return nil, false
	}
	if !payments.SecretMatches(pb.CSRF, r.PostForm.Get("csrf")) {
		p := &pages.Portal{Lang: portalLang(r, pb.Session.Locale)}
		p.Message = p.PT("form_expired")
		s.render(w, r, http.StatusForbidden, pages.PortalNotice(p))
		return nil, false
	}
	if e := checkFormText(r.PostForm); e != nil { // the API's text rules: nothing is saved
		s.portalDone(w, r, e, "")
		return nil, false
	}
	return pb, true
}

func (s *Server) portalDone(w http.ResponseWriter, r *http.Request, err error, ok string) {
	target := "/portal"
	if err != nil {
		e, isDomain := domain.AsError(err)
		if !isDomain {
			s.hostedFailure(w, r, err)
			return
		}
		code := e.Code
		if code == "" {
			code = "processing_error"
		}
		target += "?e=" + url.QueryEscape(code)
	} else {
		target += "?m=" + ok
	}
	if l := r.URL.Query().Get("lang"); l != "" {
		target += "&lang=" + url.QueryEscape(l)
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

func (s *Server) handlePortalCancel() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pb, ok := s.portalForm(w, r)
		if !ok {
			return
		}
		err := s.hostedWrite(r.Context(), func(tx *db.Tx) error {
			_, err := s.billingService().CancelForCustomer(tx, s.hostedActor(r, pb.Scope), pb.Session.Customer, pathID(r))
			return err
		})
		s.portalDone(w, r, err, "canceled_ok")
	})
}

func (s *Server) handlePortalResume() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pb, ok := s.portalForm(w, r)
		if !ok {
			return
		}
		err := s.hostedWrite(r.Context(), func(tx *db.Tx) error {
			_, err := s.billingService().KeepForCustomer(tx, s.hostedActor(r, pb.Scope), pb.Session.Customer, pathID(r))
			return err
		})
		s.portalDone(w, r, err, "resumed_ok")
	})
}

// handlePortalCard saves a new card through a setup intent and makes it the default payment
// method of the customer's subscriptions that are still running.
func (s *Server) handlePortalCard() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pb, ok := s.portalForm(w, r)
		if !ok {
			return
		}
		month, _ := strconv.Atoi(strings.TrimSpace(r.PostForm.Get("exp_month")))
		year, _ := strconv.Atoi(strings.TrimSpace(r.PostForm.Get("exp_year")))
		if year > 0 && year < 100 {
			year += 2000
		}
		card := &payments.CardParams{Number: strings.ReplaceAll(r.PostForm.Get("number"), " ", ""), ExpMonth: month, ExpYear: year,
			CVC: r.PostForm.Get("cvc"), HolderName: r.PostForm.Get("holder_name")}
		var setupIntent string // kept between the runs of a live save (reserve, call, apply)
		err := s.hostedWrite(r.Context(), func(tx *db.Tx) error {
			_, err := s.billingService().ReplaceCard(tx, s.hostedActor(r, pb.Scope), pb.Session.Customer, card, &setupIntent)
			return err
		})
		s.portalDone(w, r, err, "card_saved")
	})
}
