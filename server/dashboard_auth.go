package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
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
	// Also are the person's accounts in other organizations this session may switch to.
	Also []string
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
			if _, err := tx.DeleteIdleDashboardSessions(now.Add(-core.SessionIdle).Unix()); err != nil {
				return err
			}
			return tx.DeleteStaleSigninIPs(now.Add(-core.SigninIPWindow).Unix())
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
		u = &dashUser{TokenHash: hash, CSRF: s.dashCSRF(c.Value), Also: ds.AlsoUsers}
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

// startSession signs user in on this browser (pending the second factor when enabled); also are
// the person's accounts in other organizations the organization switcher offers.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, tx *db.Tx, user *domain.User, also []string) error {
	token := core.NewSessionToken()
	if err := tx.CreateDashboardSession(db.DashboardSession{TokenHash: domain.HashToken(token), UserID: user.ID, OrgID: user.Organization, PendingTOTP: user.TOTPEnabled, AlsoUsers: also}); err != nil {
		return err
	}
	setDashCookie(w, dashCookie, token, int(core.SessionIdle/time.Second))
	return nil
}

// dashHeaders sets the no-store and security headers every dashboard answer carries,
// redirects included.
func dashHeaders(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
}

func (s *Server) renderDash(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	dashHeaders(w)
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
	addr := core.SigninAddress(r.RemoteAddr)
	var users []*domain.User
	var locked, blocked bool
	var blockedUntil time.Time
	err := s.db.Read(r.Context(), func(tx *db.Tx) error {
		var err error
		// An address with too many failures is refused before any password is hashed.
		if blocked, blockedUntil, err = core.SigninAddressBlocked(tx, addr); err != nil || blocked {
			return err
		}
		users, locked, err = core.SigninCandidates(tx, r.PostFormValue("email"))
		return err
	})
	if err != nil {
		s.dashFail(w, r, err)
		return
	}
	if blocked {
		s.signinBlocked(w, r, page, blockedUntil)
		return
	}
	var matched []*domain.User
	if !locked {
		matched = core.MatchPassword(users, r.PostFormValue("password")) // outside the writer: argon2id is slow
	}
	var user *domain.User
	var signinErr error
	err = s.db.Write(r.Context(), func(tx *db.Tx) error {
		var err error
		if locked {
			err = core.ErrLocked
		} else {
			user, err = core.RecordSignin(tx, users, matched)
		}
		if err != nil {
			if errors.Is(err, core.ErrSigninFailed) || errors.Is(err, core.ErrLocked) {
				signinErr = err
				// The failure counts for the address too; both counts are committed.
				blocked, err = core.RecordSigninAddressFailure(tx, addr)
				return err
			}
			return err
		}
		var also []string
		for _, m := range matched[1:] {
			also = append(also, m.ID)
		}
		return s.startSession(w, r, tx, user, also)
	})
	if err != nil {
		s.dashFail(w, r, err)
		return
	}
	if blocked {
		s.signinBlocked(w, r, page, s.cfg.Clock.Now().Add(core.SigninIPBlock))
		return
	}
	if signinErr != nil {
		page.Error = page.T("The e-mail or password is wrong, or the account is locked for 15 minutes after 10 failed attempts.")
		s.renderDash(w, r, http.StatusUnauthorized, pages.DashSignin(page))
		return
	}
	dashHeaders(w)
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
		return s.startSession(w, r, tx, user, nil)
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
	dashHeaders(w)
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
	ok, blocked := false, false
	var blockedUntil time.Time
	addr := core.SigninAddress(r.RemoteAddr)
	err = s.db.Write(r.Context(), func(tx *db.Tx) error {
		var err error
		if blocked, blockedUntil, err = core.SigninAddressBlocked(tx, addr); err != nil || blocked {
			return err
		}
		user, err := tx.FindUserByID(u.User.ID)
		if err != nil {
			return err
		}
		if !user.LockedUntil.IsZero() && tx.Now.Before(user.LockedUntil.Time) {
			_, err = core.RecordSigninAddressFailure(tx, addr)
			return err
		}
		secret, err := s.cfg.Secrets.Open(user.TOTPSecret)
		if err != nil {
			return err
		}
		if step := s.totpStep(r.PostFormValue("code"), secret); step > 0 {
			// A code already used (by this sign-in or another) is refused like a wrong one.
			if ok, err = tx.UseTOTPStep(user.ID, step); err != nil {
				return err
			}
		}
		if !ok {
			if err := tx.RecordSigninFailure(user.ID, core.MaxSigninFailures, tx.Now.Add(core.LockoutDuration).Unix()); err != nil {
				return err
			}
			if blocked, err = core.RecordSigninAddressFailure(tx, addr); blocked {
				blockedUntil = tx.Now.Add(core.SigninIPBlock)
			}
			return err
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
	if blocked {
		s.signinBlocked(w, r, page, blockedUntil)
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
	http.Error(w, pages.T(dashLang(r), "Internal error; request")+" "+requestID(r.Context()), http.StatusInternalServerError)
}

func (s *Server) handleDashAsset(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(static.DashboardCSS)
}

// totpStep checks an authenticator code against the wall clock (the person's phone does not
// follow sandbox time travel), one 30-second step of drift either way: it returns the time step
// of the code (the current one or one either side), or 0 when it is none of them. The caller
// records the step (db UseTOTPStep) so that a code opens one sign-in only.
func (s *Server) totpStep(code, secret string) int64 {
	code = strings.TrimSpace(code)
	now := clock.Wall(s.cfg.Clock)
	for _, d := range []time.Duration{0, -30 * time.Second, 30 * time.Second} {
		at := now.Add(d)
		ok, err := totp.ValidateCustom(code, secret, at,
			totp.ValidateOpts{Period: 30, Skew: 0, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
		if err == nil && ok {
			return at.Unix() / 30
		}
	}
	return 0
}

// signinBlocked answers a sign-in from an address with too many failed sign-ins: 429, the time
// it may try again (in UTC and minutes) and Retry-After. Nothing about any account is said.
func (s *Server) signinBlocked(w http.ResponseWriter, r *http.Request, page *pages.Signin, until time.Time) {
	wait := until.Sub(s.cfg.Clock.Now())
	mins := int((wait + time.Minute - 1) / time.Minute)
	if mins < 1 {
		mins = 1
	}
	page.Error = fmt.Sprintf(page.T("Too many failed sign-ins from your network address. Try again in %d minutes."), mins)
	w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
	s.renderDash(w, r, http.StatusTooManyRequests, pages.DashSignin(page))
}

// switchOrgs lists the organizations the signed-in person can switch to (their own first), for
// the header's switcher; nil when there is only one.
func (s *Server) switchOrgs(r *http.Request, u *dashUser) ([]pages.Option, error) {
	if len(u.Also) == 0 {
		return nil, nil
	}
	opts := []pages.Option{{Value: u.User.ID, Label: u.Org.Name, Selected: true}}
	err := s.db.Read(r.Context(), func(tx *db.Tx) error {
		for _, id := range u.Also {
			other, err := tx.FindUserByID(id)
			if errors.Is(err, db.ErrNotFound) {
				continue // removed from that organization since
			}
			if err != nil {
				return err
			}
			org, err := tx.FindOrganizationByID(other.Organization)
			if err != nil {
				return err
			}
			opts = append(opts, pages.Option{Value: other.ID, Label: org.Name + " (" + org.ID + ")"})
		}
		return nil
	})
	if len(opts) < 2 {
		return nil, err
	}
	return opts, err
}

// handleDashSwitchOrg moves the signed-in person to their account in another organization: the
// session is replaced by one of that account (its second factor asked again when it has one);
// the accounts the password opened stay offered.
func (s *Server) handleDashSwitchOrg(q *dashReq) {
	var target *domain.User
	err := s.db.Write(q.r.Context(), func(tx *db.Tx) error {
		var err error
		if target, err = core.SwitchTarget(tx, q.u.User, q.u.Also, q.r.PostFormValue("user")); err != nil {
			return err
		}
		also := []string{q.u.User.ID}
		for _, id := range q.u.Also {
			if id != target.ID {
				also = append(also, id)
			}
		}
		if err := tx.DeleteDashboardSession(q.u.TokenHash); err != nil {
			return err
		}
		return s.startSession(q.w, q.r, tx, target, also)
	})
	if msg, ok := q.errText(err); ok {
		q.status = http.StatusBadRequest
		s.renderDash(q.w, q.r, http.StatusBadRequest, pages.DashPage(q.d, &pages.Page{Title: q.T("Switch organization"), Error: msg}))
		return
	}
	if err != nil {
		s.dashFail(q.w, q.r, err)
		return
	}
	if target.TOTPEnabled {
		http.Redirect(q.w, q.r, "/dashboard/signin/totp", http.StatusSeeOther)
		return
	}
	http.Redirect(q.w, q.r, "/dashboard/test", http.StatusSeeOther)
}
