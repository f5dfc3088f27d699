package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"troco/db"
	"troco/pages"
	"troco/server/clock"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/jobs"
	"troco/static"
)

// The dashboard's people and sessions: a session cookie (only its hash is stored) bound to one
// user of one organization, 12 hours idle; every form carries a CSRF token that is an HMAC of
// the cookie, so a token stolen from another browser is worthless; the sign-in form is protected
// the same way by a pre-session cookie.
const (
	dashCookie    = "troco_dash"
	dashPreCookie = "troco_dash_pre"
	dashFormLimit = 64 << 10
	// requestLogRetention is how long request logs are kept.
	requestLogRetention = 7 * 24 * time.Hour
)

// dashUser is the signed-in person of a dashboard request.
type dashUser struct {
	User      *domain.User
	Org       *domain.Organization
	TokenHash string
	CSRF      string
}

func (s *Server) dashCSRF(token string) string {
	m := hmac.New(sha256.New, s.cfg.Secrets.DeriveKey("dashboard csrf"))
	m.Write([]byte(token))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkCSRF compares the posted csrf_token with the one derived from the cookie token.
func (s *Server) checkCSRF(r *http.Request, token string) bool {
	got := r.PostFormValue("csrf_token")
	return token != "" && got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.dashCSRF(token))) == 1
}

func setDashCookie(w http.ResponseWriter, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/dashboard", HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode, MaxAge: maxAge})
}

// registerDashboardJobs adds the request log retention and the idle session sweep.
func (s *Server) registerDashboardJobs() {
	if s.cfg.Jobs == nil {
		return
	}
	s.cfg.Jobs.Add(jobs.Job{Name: "request-log-retention", Every: time.Hour, Run: func(ctx context.Context, now time.Time) error {
		// In batches of 2,000 rows per commit until none is left, so a busy day's logs (millions
		// of rows) are removed within the hour without holding the writer.
		if _, err := s.db.DeleteInBatches(ctx, 2000, func(tx *db.Tx, limit int) (int64, error) {
			return tx.DeleteRequestLogsBefore(now.Add(-requestLogRetention).Unix(), limit)
		}); err != nil {
			return err
		}
		return s.db.Write(ctx, func(tx *db.Tx) error {
			_, err := tx.DeleteIdleDashboardSessions(now.Add(-core.SessionIdle).Unix())
			return err
		})
	}})
}

// dashSession returns the signed-in user of r, or nil. pending is true when the session still
// waits for the authenticator code.
func (s *Server) dashSession(r *http.Request) (u *dashUser, pending bool, err error) {
	c, err := r.Cookie(dashCookie)
	if err != nil || c.Value == "" || len(c.Value) > 100 {
		return nil, false, nil
	}
	hash := domain.HashToken(c.Value)
	now := s.cfg.Clock.Now()
	var ds *db.DashboardSession
	err = s.db.Read(r.Context(), func(tx *db.Tx) error {
		var err error
		if ds, err = tx.FindDashboardSession(hash); err != nil {
			return err
		}
		u = &dashUser{TokenHash: hash, CSRF: s.dashCSRF(c.Value)}
		if u.User, err = tx.FindUserByID(ds.UserID); err != nil {
			return err
		}
		u.Org, err = tx.FindOrganizationByID(ds.OrgID)
		return err
	})
	if errors.Is(err, db.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if u.User.Organization != ds.OrgID || now.Unix()-ds.LastSeenAt > int64(core.SessionIdle/time.Second) {
		return nil, false, nil
	}
	if now.Unix()-ds.LastSeenAt >= 60 {
		if err := s.db.Write(r.Context(), func(tx *db.Tx) error { return tx.TouchDashboardSession(hash, false) }); err != nil {
			return nil, false, err
		}
	}
	return u, ds.PendingTOTP, nil
}

// startSession signs user in on this browser (pending the second factor when enabled).
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, tx *db.Tx, user *domain.User) error {
	token := core.NewSessionToken()
	if err := tx.CreateDashboardSession(db.DashboardSession{TokenHash: domain.HashToken(token), UserID: user.ID, OrgID: user.Organization, PendingTOTP: user.TOTPEnabled}); err != nil {
		return err
	}
	setDashCookie(w, dashCookie, token, int(core.SessionIdle/time.Second))
	return nil
}

func (s *Server) renderDash(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	w.WriteHeader(status)
	if err := c.Render(r.Context(), w); err != nil {
		s.log.ErrorContext(r.Context(), "render dashboard", "err", err)
	}
}

func dashLang(r *http.Request) string {
	if strings.HasPrefix(r.Header.Get("Accept-Language"), "en") {
		return "en"
	}
	return "pt-BR"
}

// preToken returns the sign-in form's pre-session token, setting its cookie when absent.
func preToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(dashPreCookie); err == nil && len(c.Value) == 43 {
		return c.Value
	}
	t := core.NewSessionToken()
	setDashCookie(w, dashPreCookie, t, 3600)
	return t
}

func (s *Server) handleDashSigninPage(w http.ResponseWriter, r *http.Request) {
	s.renderDash(w, r, http.StatusOK, pages.DashSignin(&pages.Signin{Lang: dashLang(r), CSRF: s.dashCSRF(preToken(w, r))}))
}

func (s *Server) handleDashSignin(w http.ResponseWriter, r *http.Request) {
	lang := dashLang(r)
	pre := preToken(w, r)
	page := &pages.Signin{Lang: lang, CSRF: s.dashCSRF(pre), Email: r.PostFormValue("email")}
	if !s.checkCSRF(r, pre) {
		page.Error = page.T("The form expired; sign in again.")
		s.renderDash(w, r, http.StatusForbidden, pages.DashSignin(page))
		return
	}
	var users []*domain.User
	var locked bool
	err := s.db.Read(r.Context(), func(tx *db.Tx) error {
		var err error
		users, locked, err = core.SigninCandidates(tx, r.PostFormValue("email"))
		return err
	})
	if err != nil {
		s.dashFail(w, r, err)
		return
	}
	var matched *domain.User
	if !locked {
		matched = core.MatchPassword(users, r.PostFormValue("password")) // outside the writer: argon2id is slow
	}
	var user *domain.User
	var signinErr error
	err = s.db.Write(r.Context(), func(tx *db.Tx) error {
		if locked {
			signinErr = core.ErrLocked
			return nil
		}
		var err error
		user, err = core.RecordSignin(tx, users, matched)
		if err != nil {
			if errors.Is(err, core.ErrSigninFailed) || errors.Is(err, core.ErrLocked) {
				signinErr = err
				return nil // the failure count is committed
			}
			return err
		}
		return s.startSession(w, r, tx, user)
	})
	if err != nil {
		s.dashFail(w, r, err)
		return
	}
	if signinErr != nil {
		page.Error = page.T("The e-mail or password is wrong, or the account is locked for 15 minutes after 10 failed attempts.")
		s.renderDash(w, r, http.StatusUnauthorized, pages.DashSignin(page))
		return
	}
	if user.TOTPEnabled {
		http.Redirect(w, r, "/dashboard/signin/totp", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/dashboard/test", http.StatusSeeOther)
}

// handleDashSigninLink opens a one-time link: it signs the person in and leads to the account
// page, where a password can be set. A used or expired link signs nobody in.
func (s *Server) handleDashSigninLink(w http.ResponseWriter, r *http.Request, token string) {
	var user *domain.User
	err := s.db.Write(r.Context(), func(tx *db.Tx) error {
		var err error
		if user, err = core.ConsumeSigninLink(tx, token); err != nil {
			return err
		}
		return s.startSession(w, r, tx, user)
	})
	if errors.Is(err, core.ErrSigninFailed) {
		page := &pages.Signin{Lang: dashLang(r), CSRF: s.dashCSRF(preToken(w, r))}
		page.Error = page.T("Sign-in link expired or already used.")
		s.renderDash(w, r, http.StatusGone, pages.DashSignin(page))
		return
	}
	if err != nil {
		s.dashFail(w, r, err)
		return
	}
	if user.TOTPEnabled {
		http.Redirect(w, r, "/dashboard/signin/totp", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/dashboard/account", http.StatusSeeOther)
}

func (s *Server) handleDashTOTP(w http.ResponseWriter, r *http.Request) {
	u, pending, err := s.dashSession(r)
	if err != nil {
		s.dashFail(w, r, err)
		return
	}
	if u == nil {
		http.Redirect(w, r, "/dashboard/signin", http.StatusSeeOther)
		return
	}
	if !pending {
		http.Redirect(w, r, "/dashboard/test", http.StatusSeeOther)
		return
	}
	page := &pages.Signin{Lang: u.User.Language, CSRF: u.CSRF, TOTP: true}
	if r.Method == http.MethodGet {
		s.renderDash(w, r, http.StatusOK, pages.DashSignin(page))
		return
	}
	if !s.checkCSRF(r, cookieValue(r)) {
		s.dashForbidden(w, r, u)
		return
	}
	ok := false
	err = s.db.Write(r.Context(), func(tx *db.Tx) error {
		user, err := tx.FindUserByID(u.User.ID)
		if err != nil {
			return err
		}
		if !user.LockedUntil.IsZero() && tx.Now.Before(user.LockedUntil.Time) {
			return nil
		}
		secret, err := s.cfg.Secrets.Open(user.TOTPSecret)
		if err != nil {
			return err
		}
		if ok = s.totpValid(r.PostFormValue("code"), secret); !ok {
			return tx.RecordSigninFailure(user.ID, core.MaxSigninFailures, tx.Now.Add(core.LockoutDuration).Unix())
		}
		if err := tx.ClearSigninFailures(user.ID); err != nil {
			return err
		}
		return tx.TouchDashboardSession(u.TokenHash, true)
	})
	if err != nil {
		s.dashFail(w, r, err)
		return
	}
	if !ok {
		page.Error = page.T("The code is wrong.")
		s.renderDash(w, r, http.StatusUnauthorized, pages.DashSignin(page))
		return
	}
	http.Redirect(w, r, "/dashboard/test", http.StatusSeeOther)
}

func cookieValue(r *http.Request) string {
	c, err := r.Cookie(dashCookie)
	if err != nil {
		return ""
	}
	return c.Value
}

func (s *Server) handleDashSignout(w http.ResponseWriter, r *http.Request) {
	u, _, err := s.dashSession(r)
	if err != nil {
		s.dashFail(w, r, err)
		return
	}
	if u != nil {
		if !s.checkCSRF(r, cookieValue(r)) {
			s.dashForbidden(w, r, u)
			return
		}
		if err := s.db.Write(r.Context(), func(tx *db.Tx) error { return tx.DeleteDashboardSession(u.TokenHash) }); err != nil {
			s.dashFail(w, r, err)
			return
		}
	}
	setDashCookie(w, dashCookie, "", -1)
	http.Redirect(w, r, "/dashboard/signin", http.StatusSeeOther)
}

func (s *Server) dashFail(w http.ResponseWriter, r *http.Request, err error) {
	s.log.ErrorContext(r.Context(), "dashboard", "err", err, "request_id", requestID(r.Context()))
	http.Error(w, "Internal error; request "+requestID(r.Context()), http.StatusInternalServerError)
}

func (s *Server) handleDashAsset(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(static.DashboardCSS)
}

// totpValid checks an authenticator code against the wall clock (the person's phone does not
// follow sandbox time travel), one 30-second step of drift either way.
func (s *Server) totpValid(code, secret string) bool {
	ok, err := totp.ValidateCustom(strings.TrimSpace(code), secret, clock.Wall(s.cfg.Clock),
		totp.ValidateOpts{Period: 30, Skew: 1, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	return err == nil && ok
}
