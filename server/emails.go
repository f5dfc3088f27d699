package server

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"troco/db"
	"troco/pages"
	"troco/server/domain"
	"troco/server/email"
)

// The sandbox mailbox: in test mode every customer e-mail lands here instead of leaving troco.
// GET /v1/test-helpers/emails lists it (test keys only), GET /v1/test-helpers/mailbox returns a
// signed 24-hour link to the hosted mailbox page, which the hosted checkout's sandbox bar also
// links to. The hosted receipt page (a charge's receipt_url) is here too.

// mailboxLinkLifetime is how long a signed mailbox link opens the page.
const mailboxLinkLifetime = 24 * time.Hour

// deliverSandbox stores the scope's pending test-mode messages before a mailbox read, so a
// message is there as soon as the event that caused it.
func (s *Server) deliverSandbox(r *http.Request, sc domain.Scope) error {
	if sc.Livemode {
		return nil
	}
	return s.mailer.DeliverScope(r.Context(), sc)
}

func (s *Server) handleEmailList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := authFrom(r.Context()).Actor
		if a.Livemode {
			s.writeError(w, r, domain.TestmodeRequired())
			return
		}
		q, err := parseList(r, "to", "kind", "status")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		kind, err := q.oneOf("kind", domain.EmailKinds...)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		status, err := q.oneOf("status", domain.EmailStatusSent, domain.EmailStatusSkipped, domain.EmailStatusPending, domain.EmailStatusFailed)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if status == "" {
			status = domain.EmailStatusSent
		}
		to := strings.TrimSpace(q.str("to"))
		if len(to) > 254 {
			s.writeError(w, r, domain.Invalid("to", "to must be an e-mail address."))
			return
		}
		if err := s.deliverSandbox(r, a.Scope); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			items, more, err := tx.ListEmails(a.Scope, db.EmailFilter{To: to, Kind: kind, Status: status}, q.ListParams)
			return listOf(r, items, more), err
		})
	})
}

func (s *Server) handleEmailGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := authFrom(r.Context()).Actor
		if a.Livemode {
			s.writeError(w, r, domain.TestmodeRequired())
			return
		}
		if err := s.deliverSandbox(r, a.Scope); err != nil {
			s.writeError(w, r, err)
			return
		}
		id := pathID(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			e, err := tx.FindEmailByID(a.Scope, id)
			if errors.Is(err, db.ErrNotFound) {
				return nil, domain.NotFound("id", "email", id)
			}
			return e, err
		})
	})
}

// handleMailboxLink serves GET /v1/test-helpers/mailbox: a signed link to the hosted mailbox.
func (s *Server) handleMailboxLink() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := authFrom(r.Context()).Actor
		if a.Livemode {
			s.writeError(w, r, domain.TestmodeRequired())
			return
		}
		expires := s.cfg.Clock.Now().Add(mailboxLinkLifetime)
		writeJSON(w, http.StatusOK, map[string]any{
			"object":     "mailbox_link",
			"livemode":   false,
			"url":        s.mailboxURL(s.publicBase(r), a.Scope.OrgID, expires),
			"expires_at": domain.At(expires),
		})
	})
}

// publicBase is the prefix of links troco hands out: --base-url, or this request's host.
func (s *Server) publicBase(r *http.Request) string {
	if s.cfg.BaseURL != "" {
		return strings.TrimRight(s.cfg.BaseURL, "/")
	}
	return "https://" + r.Host
}

func (s *Server) mailboxSignature(orgID string, expires int64) string {
	m := hmac.New(sha256.New, s.cfg.Secrets.DeriveKey("mailbox link"))
	m.Write([]byte(orgID + "|" + strconv.FormatInt(expires, 10)))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// mailboxURL is a link to an organization's sandbox mailbox valid until expires.
func (s *Server) mailboxURL(base, orgID string, expires time.Time) string {
	e := expires.Unix()
	return base + "/mailbox/" + orgID + "?expires=" + strconv.FormatInt(e, 10) + "&signature=" + s.mailboxSignature(orgID, e)
}

// MailboxLink returns a 24-hour link to an organization's test mailbox (for the hosted checkout's
// sandbox bar and the dashboard).
func (s *Server) MailboxLink(base, orgID string) string {
	return s.mailboxURL(base, orgID, s.cfg.Clock.Now().Add(mailboxLinkLifetime))
}

// mailboxScope checks a mailbox link; a wrong, altered or expired one is 403 and says nothing
// about the organization.
func (s *Server) mailboxScope(r *http.Request) (domain.Scope, error) {
	orgID := pathID(r)
	q := r.URL.Query()
	exp, err := strconv.ParseInt(q.Get("expires"), 10, 64)
	forbidden := &domain.Error{Status: http.StatusForbidden, Type: domain.TypeInvalidRequest, Code: domain.CodeMailboxLinkInvalid,
		Message: "This mailbox link is invalid or expired; get a new one from GET /v1/test-helpers/mailbox."}
	if err != nil || !hmac.Equal([]byte(s.mailboxSignature(orgID, exp)), []byte(q.Get("signature"))) || s.cfg.Clock.Now().Unix() > exp {
		return domain.Scope{}, forbidden
	}
	return domain.Scope{OrgID: orgID, Livemode: false}, nil
}

// mailboxHeaders are the hosted headers, with inline styles allowed (mail HTML is styled inline)
// and frames of this origin (the message's HTML part); scripts never run.
func mailboxHeaders(w http.ResponseWriter, frameSelf bool) {
	h := w.Header()
	ancestors := "'none'"
	if frameSelf {
		ancestors = "'self'"
	}
	h.Set("Content-Security-Policy", "default-src 'none'; img-src 'self' https: data:; style-src 'unsafe-inline'; frame-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors "+ancestors)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	if !frameSelf {
		h.Set("X-Frame-Options", "DENY")
	}
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "text/html; charset=utf-8")
}

// handleMailboxPage serves GET /mailbox/:id?expires=&signature=[&email=em_…][&starting_after=].
func (s *Server) handleMailboxPage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sc, err := s.mailboxScope(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if err := s.deliverSandbox(r, sc); err != nil {
			s.writeError(w, r, err)
			return
		}
		q := r.URL.Query()
		selectedID := q.Get("email")
		link := func(extra url.Values) string {
			v := url.Values{"expires": {q.Get("expires")}, "signature": {q.Get("signature")}}
			for k, vs := range extra {
				v[k] = vs
			}
			return "/mailbox/" + sc.OrgID + "?" + v.Encode()
		}
		var items []*domain.Email
		var more bool
		var sel *domain.Email
		var org *domain.Organization
		err = s.db.Read(r.Context(), func(tx *db.Tx) error {
			var err error
			if org, err = tx.FindOrganizationByID(sc.OrgID); err != nil {
				return err
			}
			p := db.ListParams{Limit: 50, StartingAfter: q.Get("starting_after")}
			if items, more, err = tx.ListEmails(sc, db.EmailFilter{}, p); err != nil {
				return err
			}
			if selectedID != "" {
				if sel, err = tx.FindEmailByID(sc, selectedID); errors.Is(err, db.ErrNotFound) {
					sel, err = nil, nil
				}
			} else if len(items) > 0 && items[0].Status == domain.EmailStatusSent {
				sel = items[0]
			}
			return err
		})
		if err != nil {
			var ce *db.CursorError
			if errors.As(err, &ce) || errors.Is(err, db.ErrNotFound) {
				err = domain.NotFound("id", "mailbox", sc.OrgID)
			}
			s.writeError(w, r, err)
			return
		}
		if q.Get("part") == "html" {
			if sel == nil || sel.HTML == "" {
				s.writeError(w, r, domain.NotFound("email", "email", selectedID))
				return
			}
			mailboxHeaders(w, true)
			w.WriteHeader(http.StatusOK)
			w.Write([]byte(sel.HTML))
			return
		}
		page := pages.MailboxPage{OrgName: org.Name}
		loc := email.Zone("")
		for _, e := range items {
			it := pages.MailboxItem{ID: e.ID, To: deref(e.To), Subject: e.Subject, Kind: e.Kind, Status: e.Status, SkipReason: deref(e.SkipReason),
				Created: e.CreatedAt.In(loc).Format("02/01/2006 15:04"), URL: link(url.Values{"email": {e.ID}}), Selected: sel != nil && sel.ID == e.ID}
			if it.Subject == "" {
				it.Subject = "(" + e.Status + ")"
			}
			page.Items = append(page.Items, it)
		}
		if more && len(items) > 0 {
			page.MoreURL = link(url.Values{"starting_after": {items[len(items)-1].ID}})
		}
		if sel != nil {
			page.Selected = &pages.MailboxItem{ID: sel.ID, To: deref(sel.To), Subject: sel.Subject, Kind: sel.Kind, Created: sel.CreatedAt.In(loc).Format("02/01/2006 15:04")}
			page.Text, page.Locale = sel.Text, sel.Locale
			if sel.HTML != "" {
				page.HTMLURL = link(url.Values{"email": {sel.ID}, "part": {"html"}})
			}
		}
		var buf bytes.Buffer
		if err := pages.Mailbox(page).Render(r.Context(), &buf); err != nil {
			s.writeError(w, r, err)
			return
		}
		mailboxHeaders(w, false)
		w.WriteHeader(http.StatusOK)
		w.Write(buf.Bytes())
	})
}

// handleReceiptPage serves a charge's receipt_url: GET /receipts/:id?s=<signature>. A wrong or
// missing signature is a 404 like an unknown charge, so receipts cannot be probed.
func (s *Server) handleReceiptPage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		if !s.pay.ReceiptValid(id, r.URL.Query().Get("s")) {
			s.renderMessage(w, r, http.StatusNotFound, pages.StateNotFound) // the hosted pages' "not found", in the visitor's language
			return
		}
		var html string
		err := s.db.Read(r.Context(), func(tx *db.Tx) error {
			sc, err := tx.ChargeScope(id)
			if err != nil {
				return err
			}
			in, err := email.ReceiptInput(tx, sc, id)
			if err != nil {
				return err
			}
			html, err = email.ReceiptPage(in)
			return err
		})
		if errors.Is(err, db.ErrNotFound) {
			err = errHostedNotFound
		}
		if err != nil {
			s.hostedFailure(w, r, err)
			return
		}
		mailboxHeaders(w, false)
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(html))
	})
}
