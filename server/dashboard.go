package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"troco/db"
	"troco/pages"
	"troco/server/core"
	"troco/server/domain"
)

// dashReq is one signed-in dashboard request.
type dashReq struct {
	w     http.ResponseWriter
	r     *http.Request
	u     *dashUser
	d     *pages.Dash
	scope domain.Scope
	rest  []string // path segments after /dashboard/{env}
	// status is the HTTP status of the page, when not 200 (400 for a list filter with a value
	// the API would refuse).
	status int
	// kept names the form (its TestID) whose posted values the page shows again after an error.
	kept string
	// labels name, by the API parameter an operation's error names, the form field a person
	// filled in (a message then names the field, not the API's parameter).
	labels map[string]string
}

func (q *dashReq) T(s string) string { return q.d.T(s) }

// V labels the API value v of kind ("payment", "role", "method", …) in the page's language.
func (q *dashReq) V(kind, v string) string { return pages.V(q.d.Lang, kind, v) }

// actor is who performs a dashboard change through the domain functions: the organization and
// environment of the page, no API key, this request's id.
func (q *dashReq) actor() domain.Actor {
	return domain.Actor{Scope: q.scope, RequestID: requestID(q.r.Context())}
}

func (q *dashReq) can(role string) bool {
	return domain.RoleRank(q.u.User.Role) >= domain.RoleRank(role)
}

// handleDashboard serves everything under /dashboard.
func (s *Server) handleDashboard() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := strings.TrimPrefix(r.URL.Path, "/dashboard")
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, dashFormLimit)
			if err := r.ParseForm(); err != nil {
				http.Error(w, pages.T(dashLang(r), "The form could not be read."), http.StatusBadRequest)
				return
			}
			if e := checkFormText(r.PostForm); e != nil { // the API's text rules, for every form
				http.Error(w, fmt.Sprintf(pages.T(dashLang(r), "The field %s holds invisible control characters or text that is not UTF-8; remove them and send the form again."), e.Param), http.StatusBadRequest)
				return
			}
		} else if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, pages.T(dashLang(r), "Method not allowed."), http.StatusMethodNotAllowed)
			return
		}
		post := r.Method == http.MethodPost
		switch {
		case path == "/assets/dashboard.css":
			s.handleDashAsset(w, r)
			return
		case path == "/signin" && post:
			s.handleDashSignin(w, r)
			return
		case path == "/signin":
			s.handleDashSigninPage(w, r)
			return
		case strings.HasPrefix(path, "/signin/link/") && !post:
			s.handleDashSigninLink(w, r, strings.TrimPrefix(path, "/signin/link/"))
			return
		case path == "/signin/totp":
			s.handleDashTOTP(w, r)
			return
		case path == "/signout" && post:
			s.handleDashSignout(w, r)
			return
		}
		u, pending, err := s.dashSession(r)
		if err != nil {
			s.dashFail(w, r, err)
			return
		}
		if u == nil || pending {
			if post {
				http.Error(w, pages.T(dashLang(r), "Sign in first."), http.StatusForbidden)
				return
			}
			to := "/dashboard/signin"
			if pending {
				to = "/dashboard/signin/totp"
			}
			http.Redirect(w, r, to, http.StatusSeeOther)
			return
		}
		segs := strings.Split(strings.Trim(path, "/"), "/")
		env := "test"
		if segs[0] == "test" || segs[0] == "live" {
			env = segs[0]
		}
		q := &dashReq{w: w, r: r, u: u, scope: domain.Scope{OrgID: u.Org.ID, Livemode: env == "live"},
			d: &pages.Dash{Lang: u.User.Language, OrgName: u.Org.Name, Email: u.User.Email, Role: u.User.Role, Env: env, CSRF: u.CSRF, TimeTravel: s.cfg.AllowTimeTravel}}
		if env == "test" {
			q.d.MailboxURL = s.MailboxLink("", u.Org.ID) // the sandbox mailbox, signed for 24 hours
		}
		if post && !s.checkCSRF(r, cookieValue(r)) {
			s.dashForbidden(w, r, u)
			return
		}
		if segs[0] == "" {
			http.Redirect(w, r, "/dashboard/test", http.StatusSeeOther)
			return
		}
		if q.d.Orgs, err = s.switchOrgs(r, u); err != nil {
			s.dashFail(w, r, err)
			return
		}
		if segs[0] == "account" {
			s.dashAccount(q)
			return
		}
		if segs[0] == "switch-org" && post && len(segs) == 1 {
			s.handleDashSwitchOrg(q)
			return
		}
		if segs[0] != "test" && segs[0] != "live" {
			s.dashNotFound(q)
			return
		}
		q.rest = segs[1:]
		s.dashRoute(q, post)
	})
}

func (s *Server) dashForbidden(w http.ResponseWriter, r *http.Request, u *dashUser) {
	lang := "pt-BR"
	if u != nil {
		lang = u.User.Language
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusForbidden)
	fmt.Fprintln(w, pages.T(lang, "Your role does not allow this."))
}

func (s *Server) dashNotFound(q *dashReq) {
	s.renderDash(q.w, q.r, http.StatusNotFound, pages.DashPage(q.d, &pages.Page{Title: q.T("Page not found.")}))
}

func (s *Server) dashRoute(q *dashReq, post bool) {
	kind, id, action := "", "", ""
	if len(q.rest) > 0 {
		kind = q.rest[0]
	}
	if len(q.rest) > 1 {
		id = q.rest[1]
	}
	if len(q.rest) > 2 {
		action = q.rest[2]
	}
	if len(q.rest) > 4 || (len(q.rest) == 4 && (q.rest[0] != "settings" || q.rest[1] != "people")) {
		s.dashNotFound(q)
		return
	}
	q.d.Active = kind
	if kind == "" {
		q.d.Active = "home"
	}
	type route struct {
		need string
		page func(*dashReq) (*pages.Page, error)
	}
	var rt route
	switch {
	case kind == "" && !post:
		rt = route{domain.RoleViewer, s.dashHome}
	case kind == "payments" && id == "" && !post:
		rt = route{domain.RoleViewer, s.dashPayments}
	case kind == "payments" && action == "" && !post:
		rt = route{domain.RoleViewer, func(q *dashReq) (*pages.Page, error) { return s.dashPayment(q, id) }}
	case kind == "customers" && id == "" && !post:
		rt = route{domain.RoleViewer, s.dashCustomers}
	case kind == "customers" && action == "" && !post:
		rt = route{domain.RoleViewer, func(q *dashReq) (*pages.Page, error) { return s.dashCustomer(q, id) }}
	case kind == "checkout-sessions" && id == "" && !post:
		rt = route{domain.RoleViewer, s.dashCheckoutSessions}
	case kind == "checkout-sessions" && action == "" && !post:
		rt = route{domain.RoleViewer, func(q *dashReq) (*pages.Page, error) { return s.dashObject(q, "checkout-sessions", id) }}
	case kind == "invoices" && id == "" && !post:
		rt = route{domain.RoleViewer, s.dashInvoices}
	case kind == "invoices" && action == "" && !post:
		rt = route{domain.RoleViewer, func(q *dashReq) (*pages.Page, error) { return s.dashObject(q, "invoices", id) }}
	case kind == "subscriptions" && id == "" && !post:
		rt = route{domain.RoleViewer, s.dashSubscriptions}
	case kind == "subscriptions" && action == "" && !post:
		rt = route{domain.RoleViewer, func(q *dashReq) (*pages.Page, error) { return s.dashObject(q, "subscriptions", id) }}
	case kind == "disputes" && id == "" && !post:
		rt = route{domain.RoleViewer, s.dashDisputes}
	case kind == "disputes" && action == "" && !post:
		rt = route{domain.RoleViewer, func(q *dashReq) (*pages.Page, error) { return s.dashObject(q, "disputes", id) }}
	case kind == "events" && id == "" && !post:
		rt = route{domain.RoleViewer, s.dashEvents}
	case kind == "events" && action == "" && !post:
		rt = route{domain.RoleViewer, func(q *dashReq) (*pages.Page, error) { return s.dashEvent(q, id) }}
	case kind == "events" && action == "resend" && post:
		rt = route{domain.RoleDeveloper, func(q *dashReq) (*pages.Page, error) { return s.dashEventResend(q, id) }}
	case kind == "webhooks" && id == "" && !post:
		rt = route{domain.RoleViewer, func(q *dashReq) (*pages.Page, error) { return s.dashWebhooks(q, nil) }}
	case kind == "webhooks" && id == "" && post:
		rt = route{domain.RoleDeveloper, s.dashWebhookCreate}
	case kind == "webhooks" && action == "" && !post:
		rt = route{domain.RoleViewer, func(q *dashReq) (*pages.Page, error) { return s.dashWebhook(q, id, nil) }}
	case kind == "webhooks" && post && (action == "resend" || action == "rotate-secret" || action == "disable" || action == "enable"):
		rt = route{domain.RoleDeveloper, func(q *dashReq) (*pages.Page, error) { return s.dashWebhookAction(q, id, action) }}
	case kind == "api-keys" && id == "" && !post:
		rt = route{domain.RoleAdmin, func(q *dashReq) (*pages.Page, error) { return s.dashKeys(q, nil) }}
	case kind == "api-keys" && id != "" && action == "" && !post:
		rt = route{domain.RoleAdmin, func(q *dashReq) (*pages.Page, error) { return s.dashKey(q, id) }}
	case kind == "api-keys" && id == "" && post:
		rt = route{domain.RoleAdmin, s.dashKeyCreate}
	case kind == "api-keys" && action == "revoke" && post:
		rt = route{domain.RoleAdmin, func(q *dashReq) (*pages.Page, error) { return s.dashKeyRevoke(q, id) }}
	case kind == "logs" && id == "" && !post:
		rt = route{domain.RoleDeveloper, s.dashLogs}
	case kind == "logs" && action == "" && !post:
		rt = route{domain.RoleDeveloper, func(q *dashReq) (*pages.Page, error) { return s.dashLog(q, id) }}
	case kind == "settings" && id == "" && !post:
		rt = route{domain.RoleViewer, func(q *dashReq) (*pages.Page, error) { return s.dashSettings(q, "", "") }}
	case kind == "settings" && id == "" && post:
		rt = route{domain.RoleAdmin, s.dashSettingsSave}
	case kind == "settings" && id == "people" && action == "" && post:
		rt = route{domain.RoleOwner, s.dashPersonCreate}
	case kind == "settings" && id == "people" && post && len(q.rest) == 4 && q.rest[3] == "remove":
		rt = route{domain.RoleAdmin, func(q *dashReq) (*pages.Page, error) { return s.dashPersonRemove(q, action) }}
	case kind == "settings" && id == "clock" && post:
		rt = route{domain.RoleDeveloper, s.dashClockAdvance}
	default:
		s.dashNotFound(q)
		return
	}
	if !q.can(rt.need) {
		s.dashForbidden(q.w, q.r, q.u)
		return
	}
	p, err := rt.page(q)
	var nf *dashNotFoundError
	if errors.As(err, &nf) || errors.Is(err, db.ErrNotFound) {
		s.dashNotFound(q)
		return
	}
	if err != nil {
		s.dashFail(q.w, q.r, err)
		return
	}
	if p == nil {
		return // redirected
	}
	status := http.StatusOK
	if q.status != 0 {
		status = q.status
	}
	s.renderDash(q.w, q.r, status, pages.DashPage(q.d, p))
}

type dashNotFoundError struct{}

func (*dashNotFoundError) Error() string { return "not found" }

// errText returns the message of an operation's error in the page's language, or "" with ok
// false for other errors (those are failures of troco, not of the input).
//
// The page that shows the message answers with the error's status (400 for a bad field, 409, 402,
// …), as the API does, not 200: a script or a test driving the dashboard sees the refusal.
func (q *dashReq) errText(err error) (string, bool) {
	if e, ok := domain.AsError(err); ok {
		if q.status == 0 {
			q.status = http.StatusBadRequest
			if e.Status >= 400 && e.Status < 600 {
				q.status = e.Status
			}
		}
		msg := pages.ErrorText(q.d.Lang, e)
		if label, ok := q.labels[e.Param]; ok && e.Param != "" {
			msg = strings.ReplaceAll(msg, e.Param, "“"+label+"”") // the field as the form names it
		}
		return msg, true
	}
	return "", false
}

// invalid is the message of a form's own validation error (a field the operation does not see)
// in the page's language.
func (q *dashReq) invalid(param, format string, args ...any) string {
	if q.status == 0 {
		q.status = http.StatusBadRequest
	}
	return pages.ErrorText(q.d.Lang, domain.Invalid(param, format, args...))
}

// val is the value a form's field shows: what the person typed, when the page answers that
// form's post with an error (so nothing typed is lost), or def.
func (q *dashReq) val(form, name, def string) string {
	if q.kept == form && q.r.Method == http.MethodPost {
		return q.r.PostFormValue(name)
	}
	return def
}

// checked is val for a checkbox.
func (q *dashReq) checked(form, name string, def bool) bool {
	if q.kept == form && q.r.Method == http.MethodPost {
		return q.r.PostFormValue(name) != ""
	}
	return def
}

// ---- formatting ----

func (q *dashReq) loc() *time.Location {
	if l, err := time.LoadLocation(q.u.Org.DashboardSettings.Timezone); err == nil {
		return l
	}
	return time.UTC
}

func (q *dashReq) when(t domain.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.Time.In(q.loc()).Format("2006-01-02 15:04:05 MST")
}

func (q *dashReq) money(amount int64, currency string) string {
	neg := amount < 0
	if neg {
		amount = -amount
	}
	units := strconv.FormatInt(amount/100, 10)
	sep, dec := ".", ","
	if q.d.Lang == "en" {
		sep, dec = ",", "."
	}
	var b strings.Builder
	for i, c := range units {
		if i > 0 && (len(units)-i)%3 == 0 {
			b.WriteString(sep)
		}
		b.WriteRune(c)
	}
	sign := ""
	if neg {
		sign = "-"
	}
	cur := "R$ "
	if currency != "" && !strings.EqualFold(currency, "brl") {
		cur = strings.ToUpper(currency) + " "
	}
	return fmt.Sprintf("%s%s%s%s%02d", sign, cur, b.String(), dec, amount%100)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func pretty(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return ""
	}
	return readableJSON(b)
}

// readableJSON undoes encoding/json's HTML escapes (\u003c, \u003e, \u0026) in JSON shown on a
// page, so a name reads "<b>" as the API sent it; the page escapes the text for HTML itself. An
// escaped backslash (\\) is copied whole, so a caller's own "\u003c" text stays as it was.
func readableJSON(b []byte) string {
	var out strings.Builder
	out.Grow(len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			out.WriteByte(b[i])
			continue
		}
		if b[i+1] == 'u' && i+6 <= len(b) {
			switch string(b[i+2 : i+6]) {
			case "003c":
				out.WriteByte('<')
				i += 5
				continue
			case "003e":
				out.WriteByte('>')
				i += 5
				continue
			case "0026":
				out.WriteByte('&')
				i += 5
				continue
			}
		}
		out.WriteByte(b[i])
		out.WriteByte(b[i+1])
		i++
	}
	return out.String()
}

func (q *dashReq) link(kind, id string) string {
	if id == "" {
		return ""
	}
	return q.d.Base() + "/" + kind + "/" + url.PathEscape(id)
}

// listParams reads the cursor of a dashboard list (?after=, ?before=); 25 per page.
func (q *dashReq) listParams() db.ListParams {
	return db.ListParams{Limit: 25, StartingAfter: q.r.URL.Query().Get("after"), EndingBefore: q.r.URL.Query().Get("before")}
}

// pager builds the previous/next links of a page of ids, keeping the other query parameters.
func (q *dashReq) pager(ids []string, more bool) *pages.Pager {
	if len(ids) == 0 {
		return nil
	}
	p := &pages.Pager{}
	backward := q.r.URL.Query().Get("before") != ""
	link := func(k, v string) string {
		vals := url.Values{}
		for key, vs := range q.r.URL.Query() {
			if key != "after" && key != "before" {
				vals[key] = vs
			}
		}
		vals.Set(k, v)
		return q.r.URL.Path + "?" + vals.Encode()
	}
	if more || backward {
		p.Next = link("after", ids[len(ids)-1])
	}
	if q.r.URL.Query().Get("after") != "" || (backward && more) {
		p.Prev = link("before", ids[0])
	}
	if p.Next == "" && p.Prev == "" {
		return nil
	}
	return p
}

func listErr(err error) error {
	if errors.Is(err, db.ErrCursorNotFound) {
		return &dashNotFoundError{}
	}
	return err
}

func option(v, label, current string) pages.Option {
	return pages.Option{Value: v, Label: label, Selected: v == current}
}

// ---- home ----

func (s *Server) dashHome(q *dashReq) (*pages.Page, error) {
	now := s.cfg.Clock.Now().In(q.loc())
	start := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, q.loc())
	var vols []db.MethodVolume
	var recent []*domain.PaymentIntent
	err := s.db.Read(q.r.Context(), func(tx *db.Tx) error {
		var err error
		if vols, err = tx.VolumeByMethod(q.scope, start.Unix(), start.AddDate(0, 0, 1).Unix()); err != nil {
			return err
		}
		recent, _, err = tx.ListPaymentIntents(q.scope, db.PaymentIntentFilter{}, db.ListParams{Limit: 10})
		return err
	})
	if err != nil {
		return nil, err
	}
	p := &pages.Page{Title: q.T("Home")}
	p.Sections = append(p.Sections, pages.Section{Title: q.T("Today's volume per method"), Chart: q.volumeChart(vols)})
	p.Sections = append(p.Sections, pages.Section{Title: q.T("Recent payments"), Table: q.paymentsTable(recent)})
	return p, nil
}

// volumeChart draws one bar per method (credit_card, pix, boleto, the payment_method_type values
// of the API, always shown) scaled to the largest.
func (q *dashReq) volumeChart(vols []db.MethodVolume) *pages.Chart {
	byMethod := map[string]db.MethodVolume{}
	for _, v := range vols {
		byMethod[v.Method] = v
	}
	methods := []string{"credit_card", "pix", "boleto"}
	for _, v := range vols {
		if v.Method != "credit_card" && v.Method != "pix" && v.Method != "boleto" {
			methods = append(methods, v.Method)
		}
	}
	var max int64 = 1
	for _, v := range vols {
		max = maxInt64(max, v.Amount)
	}
	c := &pages.Chart{Title: q.T("Today's volume per method"), Width: 120*len(methods) + 40, Height: 260}
	var desc []string
	plot := 260 - 40 - 30
	for i, m := range methods {
		v := byMethod[m]
		h := int(v.Amount * int64(plot) / max)
		label := q.V("method", m)
		if label == "" {
			label = "—"
		}
		c.Bars = append(c.Bars, pages.Bar{Label: label, Value: q.money(v.Amount, "brl"), X: 40 + i*120, W: 70, H: h, Y: 260 - 40 - h})
		desc = append(desc, fmt.Sprintf("%s: %s (%d)", label, q.money(v.Amount, "brl"), v.Count))
	}
	c.Desc = strings.Join(desc, "; ")
	return c
}

func maxInt64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// ---- payments ----

func (q *dashReq) paymentsTable(list []*domain.PaymentIntent) *pages.Table {
	t := &pages.Table{TestID: "payments-table", Headers: []string{"ID", q.T("Amount"), q.T("Status"), q.T("Method"), q.T("Description"), q.T("Customer"), q.T("Created")}}
	for _, pi := range list {
		t.Rows = append(t.Rows, []pages.Cell{
			{Text: pi.ID, Href: q.link("payments", pi.ID), Code: true}, {Text: q.money(pi.Amount, pi.Currency)}, {Text: q.V("payment", pi.Status)},
			{Text: q.V("method", deref(pi.PaymentMethodType))}, {Text: deref(pi.Description)}, {Text: deref(pi.Customer), Href: q.link("customers", deref(pi.Customer))},
			{Text: q.when(pi.CreatedAt)},
		})
	}
	return t
}

var paymentStatuses = []string{"requires_payment_method", "requires_confirmation", "requires_action", "processing", "requires_capture", "succeeded", "canceled"}

func (s *Server) dashPayments(q *dashReq) (*pages.Page, error) {
	status, customer := q.r.URL.Query().Get("status"), strings.TrimSpace(q.r.URL.Query().Get("customer"))
	f := &pages.Form{Method: "get", Action: q.r.URL.Path, TestID: "payments-filter", Submit: q.T("Filter")}
	opts := []pages.Option{option("", "—", status)}
	valid := status == ""
	for _, st := range paymentStatuses {
		opts = append(opts, option(st, q.V("payment", st), status))
		valid = valid || st == status
	}
	f.Inputs = []pages.Input{{Name: "status", Label: q.T("Status"), Kind: "select", Options: opts}, {Name: "customer", Label: q.T("Customer") + " (cus_…)", Kind: "text", Value: customer}}
	if !valid {
		return q.badStatus(q.T("Payments"), f, status, paymentStatuses), nil
	}
	var list []*domain.PaymentIntent
	var more bool
	err := s.db.Read(q.r.Context(), func(tx *db.Tx) error {
		var err error
		list, more, err = tx.ListPaymentIntents(q.scope, db.PaymentIntentFilter{Status: status, Customer: customer}, q.listParams())
		return err
	})
	if err != nil {
		return nil, listErr(err)
	}
	ids := make([]string, len(list))
	for i, pi := range list {
		ids[i] = pi.ID
	}
	return &pages.Page{Title: q.T("Payments"), Sections: []pages.Section{{Form: f}, {Table: q.paymentsTable(list), Pager: q.pager(ids, more)}}}, nil
}

// objectTrail adds the object's events and request log to a page.
func (s *Server) objectTrail(q *dashReq, tx *db.Tx, p *pages.Page, id string) error {
	logs, _, err := tx.ListRequestLogs(q.scope, db.RequestLogFilter{ObjectID: id}, db.ListParams{Limit: 20})
	if err != nil {
		return err
	}
	evs, err := tx.ListEventsForObject(q.scope, id, 20)
	if err != nil {
		return err
	}
	p.Sections = append(p.Sections, pages.Section{Title: q.T("Events of this object"), Table: q.eventsTable(evs)})
	if q.can(domain.RoleDeveloper) {
		p.Sections = append(p.Sections, pages.Section{Title: q.T("Requests for this object"), Table: q.logsTable(logs)})
	}
	return nil
}

func (s *Server) dashPayment(q *dashReq, id string) (*pages.Page, error) {
	p := &pages.Page{}
	err := s.db.Read(q.r.Context(), func(tx *db.Tx) error {
		pi, err := tx.FindPaymentIntentByID(q.scope, id)
		if err != nil {
			return err
		}
		p.Title = q.money(pi.Amount, pi.Currency) + " · " + q.V("payment", pi.Status)
		p.Sections = append(p.Sections, pages.Section{Fields: []pages.Field{
			{Label: "ID", Value: pi.ID, Code: true}, {Label: q.T("Status"), Value: q.V("payment", pi.Status)}, {Label: q.T("Amount"), Value: q.money(pi.Amount, pi.Currency)},
			{Label: q.T("Method"), Value: q.V("method", deref(pi.PaymentMethodType))}, {Label: q.T("Description"), Value: deref(pi.Description)},
			{Label: q.T("Customer"), Value: deref(pi.Customer), Href: q.link("customers", deref(pi.Customer))}, {Label: q.T("Created"), Value: q.when(pi.CreatedAt)},
		}})
		view := *pi
		view.ClientSecret = "[redacted]"
		p.Sections = append(p.Sections, pages.Section{Pre: pretty(view)})
		return s.objectTrail(q, tx, p, id)
	})
	return p, err
}

// ---- customers ----

func (s *Server) dashCustomers(q *dashReq) (*pages.Page, error) {
	email := strings.TrimSpace(q.r.URL.Query().Get("email"))
	f := &pages.Form{Method: "get", Action: q.r.URL.Path, TestID: "customers-filter", Submit: q.T("Filter"),
		Inputs: []pages.Input{{Name: "email", Label: q.T("Search by e-mail"), Kind: "email", Value: email}}}
	var list []*domain.Customer
	var more bool
	err := s.db.Read(q.r.Context(), func(tx *db.Tx) error {
		var err error
		list, more, err = tx.ListCustomers(q.scope, db.CustomerFilter{Email: email}, q.listParams())
		return err
	})
	if err != nil {
		return nil, listErr(err)
	}
	t := &pages.Table{TestID: "customers-table", Headers: []string{"ID", q.T("Name"), q.T("E-mail"), q.T("Description"), q.T("Created")}}
	ids := make([]string, len(list))
	for i, c := range list {
		ids[i] = c.ID
		t.Rows = append(t.Rows, []pages.Cell{{Text: c.ID, Href: q.link("customers", c.ID), Code: true}, {Text: deref(c.Name)}, {Text: deref(c.Email)}, {Text: deref(c.Description)}, {Text: q.when(c.CreatedAt)}})
	}
	return &pages.Page{Title: q.T("Customers"), Sections: []pages.Section{{Form: f}, {Table: t, Pager: q.pager(ids, more)}}}, nil
}

func (s *Server) dashCustomer(q *dashReq, id string) (*pages.Page, error) {
	p := &pages.Page{}
	err := s.db.Read(q.r.Context(), func(tx *db.Tx) error {
		c, err := tx.FindCustomerByID(q.scope, id)
		if err != nil {
			return err
		}
		p.Title = c.ID
		if c.Name != nil {
			p.Title = *c.Name
		}
		p.Sections = append(p.Sections, pages.Section{Fields: []pages.Field{{Label: "ID", Value: c.ID, Code: true}, {Label: q.T("E-mail"), Value: deref(c.Email)},
			{Label: q.T("Description"), Value: deref(c.Description)}, {Label: q.T("Created"), Value: q.when(c.CreatedAt)}}}, pages.Section{Pre: pretty(c)})
		pis, _, err := tx.ListPaymentIntents(q.scope, db.PaymentIntentFilter{Customer: c.ID}, db.ListParams{Limit: 10})
		if err != nil {
			return err
		}
		p.Sections = append(p.Sections, pages.Section{Title: q.T("Payments"), Table: q.paymentsTable(pis)})
		return s.objectTrail(q, tx, p, id)
	})
	return p, err
}

// ---- checkout sessions, invoices, subscriptions ----

// statusFilter reads the list's status filter. An unknown status is not ignored (that would
// list everything under a filter the user believes applied): bad is then the page that says so,
// answered 400 like the API's list.
func statusFilter(q *dashReq, title, kind string, statuses []string) (status string, f *pages.Form, bad *pages.Page) {
	status = q.r.URL.Query().Get("status")
	opts := []pages.Option{option("", "—", status)}
	valid := status == ""
	for _, st := range statuses {
		opts = append(opts, option(st, q.V(kind, st), status))
		valid = valid || st == status
	}
	f = &pages.Form{Method: "get", Action: q.r.URL.Path, TestID: "status-filter", Submit: q.T("Filter"), Inputs: []pages.Input{{Name: "status", Label: q.T("Status"), Kind: "select", Options: opts}}}
	if !valid {
		bad = q.badStatus(title, f, status, statuses)
	}
	return status, f, bad
}

// badStatus is a list page refusing an unknown status filter: the message names the value and
// the statuses there are, the filter form stays to choose one, and nothing is listed.
func (q *dashReq) badStatus(title string, f *pages.Form, status string, statuses []string) *pages.Page {
	q.status = http.StatusBadRequest
	return &pages.Page{Title: title, Error: fmt.Sprintf(q.T("Unknown status %q. Choose one of: %s."), status, strings.Join(statuses, ", ")),
		Sections: []pages.Section{{Form: f}}}
}

func (s *Server) dashCheckoutSessions(q *dashReq) (*pages.Page, error) {
	status, f, bad := statusFilter(q, q.T("Checkout sessions"), "checkout", []string{"open", "complete", "expired"})
	if bad != nil {
		return bad, nil
	}
	var list []*domain.CheckoutSession
	var more bool
	err := s.db.Read(q.r.Context(), func(tx *db.Tx) error {
		var err error
		list, more, err = tx.ListCheckoutSessions(q.scope, db.CheckoutSessionFilter{Status: status}, q.listParams())
		return err
	})
	if err != nil {
		return nil, listErr(err)
	}
	t := &pages.Table{TestID: "checkout-sessions-table", Headers: []string{"ID", q.T("Total"), q.T("Status"), "payment_status", q.T("E-mail"), q.T("Created")}}
	ids := make([]string, len(list))
	for i, c := range list {
		ids[i] = c.ID
		t.Rows = append(t.Rows, []pages.Cell{{Text: c.ID, Href: q.link("checkout-sessions", c.ID), Code: true}, {Text: q.money(c.TotalAmount, c.Currency)}, {Text: q.V("checkout", c.Status)},
			{Text: c.PaymentStatus}, {Text: deref(c.CustomerEmail)}, {Text: q.when(c.CreatedAt)}})
	}
	return &pages.Page{Title: q.T("Checkout sessions"), Sections: []pages.Section{{Form: f}, {Table: t, Pager: q.pager(ids, more)}}}, nil
}

func (s *Server) dashInvoices(q *dashReq) (*pages.Page, error) {
	status, f, bad := statusFilter(q, q.T("Invoices"), "invoice", []string{"draft", "open", "paid", "void", "uncollectible"})
	if bad != nil {
		return bad, nil
	}
	var list []*domain.Invoice
	var more bool
	err := s.db.Read(q.r.Context(), func(tx *db.Tx) error {
		var err error
		list, more, err = tx.ListInvoices(q.scope, db.InvoiceFilter{Status: status}, q.listParams())
		return err
	})
	if err != nil {
		return nil, listErr(err)
	}
	t := &pages.Table{TestID: "invoices-table", Headers: []string{"ID", q.T("Number"), q.T("Total"), q.T("Status"), q.T("Customer"), q.T("Due date"), q.T("Created")}}
	ids := make([]string, len(list))
	for i, in := range list {
		ids[i] = in.ID
		t.Rows = append(t.Rows, []pages.Cell{{Text: in.ID, Href: q.link("invoices", in.ID), Code: true}, {Text: deref(in.Number)}, {Text: q.money(in.TotalAmount, in.Currency)},
			{Text: q.V("invoice", in.Status)}, {Text: in.Customer, Href: q.link("customers", in.Customer)}, {Text: q.when(in.DueDate)}, {Text: q.when(in.CreatedAt)}})
	}
	return &pages.Page{Title: q.T("Invoices"), Sections: []pages.Section{{Form: f}, {Table: t, Pager: q.pager(ids, more)}}}, nil
}

func (s *Server) dashSubscriptions(q *dashReq) (*pages.Page, error) {
	status, f, bad := statusFilter(q, q.T("Subscriptions"), "subscription", []string{"incomplete", "incomplete_expired", "trialing", "active", "past_due", "canceled", "unpaid", "paused"})
	if bad != nil {
		return bad, nil
	}
	var list []*domain.Subscription
	var more bool
	err := s.db.Read(q.r.Context(), func(tx *db.Tx) error {
		var err error
		list, more, err = tx.ListSubscriptions(q.scope, db.SubscriptionFilter{Status: status}, q.listParams())
		return err
	})
	if err != nil {
		return nil, listErr(err)
	}
	t := &pages.Table{TestID: "subscriptions-table", Headers: []string{"ID", q.T("Status"), q.T("Customer"), q.T("Current period end"), q.T("Created")}}
	ids := make([]string, len(list))
	for i, sub := range list {
		ids[i] = sub.ID
		t.Rows = append(t.Rows, []pages.Cell{{Text: sub.ID, Href: q.link("subscriptions", sub.ID), Code: true}, {Text: q.V("subscription", sub.Status)},
			{Text: sub.Customer, Href: q.link("customers", sub.Customer)}, {Text: q.when(sub.CurrentPeriodEnd)}, {Text: q.when(sub.CreatedAt)}})
	}
	return &pages.Page{Title: q.T("Subscriptions"), Sections: []pages.Section{{Form: f}, {Table: t, Pager: q.pager(ids, more)}}}, nil
}

func (s *Server) dashDisputes(q *dashReq) (*pages.Page, error) {
	status, f, bad := statusFilter(q, q.T("Disputes"), "dispute", []string{domain.DisputeWarningNeedsResponse, domain.DisputeWarningUnderReview, domain.DisputeWarningClosed,
		domain.DisputeNeedsResponse, domain.DisputeUnderReview, domain.DisputeWon, domain.DisputeLost})
	if bad != nil {
		return bad, nil
	}
	var list []*domain.Dispute
	var more bool
	err := s.db.Read(q.r.Context(), func(tx *db.Tx) error {
		var err error
		list, more, err = tx.ListDisputes(q.scope, db.DisputeFilter{Status: status}, q.listParams())
		return err
	})
	if err != nil {
		return nil, listErr(err)
	}
	t := &pages.Table{TestID: "disputes-table", Headers: []string{"ID", q.T("Amount"), q.T("Status"), q.T("Reason"), "payment_intent", q.T("Created")}}
	ids := make([]string, len(list))
	for i, d := range list {
		ids[i] = d.ID
		t.Rows = append(t.Rows, []pages.Cell{{Text: d.ID, Href: q.link("disputes", d.ID), Code: true}, {Text: q.money(d.Amount, d.Currency)}, {Text: q.V("dispute", d.Status)},
			{Text: d.Reason}, {Text: d.PaymentIntent, Href: q.link("payments", d.PaymentIntent)}, {Text: q.when(d.CreatedAt)}})
	}
	return &pages.Page{Title: q.T("Disputes"), Sections: []pages.Section{{Form: f}, {Table: t, Pager: q.pager(ids, more)}}}, nil
}

// dashObject shows one checkout session, invoice or subscription with its events and requests.
func (s *Server) dashObject(q *dashReq, kind, id string) (*pages.Page, error) {
	p := &pages.Page{Title: id}
	err := s.db.Read(q.r.Context(), func(tx *db.Tx) error {
		var obj any
		var err error
		switch kind {
		case "checkout-sessions":
			var cs *domain.CheckoutSession
			if cs, err = tx.FindCheckoutSessionByID(q.scope, id); err == nil {
				view := *cs
				view.ClientSecret = "[redacted]"
				obj = view
				p.Sections = append(p.Sections, pages.Section{Fields: []pages.Field{{Label: q.T("Status"), Value: q.V("checkout", cs.Status)}, {Label: q.T("Total"), Value: q.money(cs.TotalAmount, cs.Currency)},
					{Label: "payment_intent", Value: deref(cs.PaymentIntent), Href: q.link("payments", deref(cs.PaymentIntent))}}})
			}
		case "invoices":
			var in *domain.Invoice
			if in, err = tx.FindInvoiceByID(q.scope, id); err == nil {
				obj = in
				p.Sections = append(p.Sections, pages.Section{Fields: []pages.Field{{Label: q.T("Status"), Value: q.V("invoice", in.Status)}, {Label: q.T("Total"), Value: q.money(in.TotalAmount, in.Currency)},
					{Label: q.T("Customer"), Value: in.Customer, Href: q.link("customers", in.Customer)}, {Label: q.T("Due date"), Value: q.when(in.DueDate)}}})
			}
		case "disputes":
			var d *domain.Dispute
			if d, err = tx.FindDisputeByID(q.scope, id); err == nil {
				obj = d
				p.Sections = append(p.Sections, pages.Section{Fields: []pages.Field{{Label: q.T("Status"), Value: q.V("dispute", d.Status)}, {Label: q.T("Amount"), Value: q.money(d.Amount, d.Currency)},
					{Label: q.T("Reason"), Value: d.Reason}, {Label: "payment_intent", Value: d.PaymentIntent, Href: q.link("payments", d.PaymentIntent)},
					{Label: "evidence due_by", Value: q.when(d.EvidenceDetails.DueBy)}}})
			}
		case "subscriptions":
			var sub *domain.Subscription
			if sub, err = tx.FindSubscriptionByID(q.scope, id); err == nil {
				obj = sub
				p.Sections = append(p.Sections, pages.Section{Fields: []pages.Field{{Label: q.T("Status"), Value: q.V("subscription", sub.Status)},
					{Label: q.T("Customer"), Value: sub.Customer, Href: q.link("customers", sub.Customer)}, {Label: q.T("Current period end"), Value: q.when(sub.CurrentPeriodEnd)}}})
			}
		}
		if err != nil {
			return err
		}
		p.Sections = append(p.Sections, pages.Section{Pre: pretty(obj)})
		return s.objectTrail(q, tx, p, id)
	})
	return p, err
}

// ---- events ----

func (q *dashReq) eventsTable(list []*domain.Event) *pages.Table {
	t := &pages.Table{TestID: "events-table", Headers: []string{"ID", q.T("Type"), q.T("Object"), q.T("Created")}}
	for _, e := range list {
		t.Rows = append(t.Rows, []pages.Cell{{Text: e.ID, Href: q.link("events", e.ID), Code: true}, {Text: e.Type}, {Text: eventObjectID(e), Code: true}, {Text: q.when(e.CreatedAt)}})
	}
	return t
}

func eventObjectID(e *domain.Event) string {
	var o struct {
		ID string `json:"id"`
	}
	b, _ := json.Marshal(e.Data.Object)
	_ = json.Unmarshal(b, &o)
	return o.ID
}

func (s *Server) dashEvents(q *dashReq) (*pages.Page, error) {
	typ := strings.TrimSpace(q.r.URL.Query().Get("type"))
	f := &pages.Form{Method: "get", Action: q.r.URL.Path, TestID: "events-filter", Submit: q.T("Filter"),
		Inputs: []pages.Input{{Name: "type", Label: q.T("Type") + " (payment_intent.succeeded, payment_intent.*)", Kind: "text", Value: typ}}}
	var list []*domain.Event
	var more bool
	err := s.db.Read(q.r.Context(), func(tx *db.Tx) error {
		var err error
		list, more, err = tx.ListEvents(q.scope, db.EventFilter{Type: typ}, q.listParams())
		return err
	})
	if err != nil {
		return nil, listErr(err)
	}
	ids := make([]string, len(list))
	for i, e := range list {
		ids[i] = e.ID
	}
	return &pages.Page{Title: q.T("Events"), Sections: []pages.Section{{Form: f}, {Table: q.eventsTable(list), Pager: q.pager(ids, more)}}}, nil
}

// dashEventResend queues an event again for every enabled endpoint that subscribes to it: the
// same operation as POST /v1/events/{id}/redeliver.
func (s *Server) dashEventResend(q *dashReq, id string) (*pages.Page, error) {
	q.d.Active = "events"
	p := &pages.Page{Notice: q.T("Done.")}
	err := s.db.Write(q.r.Context(), func(tx *db.Tx) error {
		if _, err := tx.FindEventByID(q.scope, id); err != nil {
			return &dashNotFoundError{}
		}
		r, err := core.RedeliverEvent(tx, q.actor(), id, core.RedeliverParams{})
		if err != nil {
			return err
		}
		return core.Audit(tx, q.u.User, "event.redelivered", id, strings.Join(r.WebhookEndpoints, ", "))
	})
	if msg, ok := q.errText(err); ok {
		p = &pages.Page{Error: msg}
	} else if err != nil {
		return nil, err
	}
	return s.dashEventPage(q, id, p)
}

func (s *Server) dashEvent(q *dashReq, id string) (*pages.Page, error) {
	return s.dashEventPage(q, id, &pages.Page{})
}

func (s *Server) dashEventPage(q *dashReq, id string, p *pages.Page) (*pages.Page, error) {
	p.Title = id
	err := s.db.Read(q.r.Context(), func(tx *db.Tx) error {
		e, err := tx.FindEventByID(q.scope, id)
		if err != nil {
			return err
		}
		p.Title = e.Type
		obj := eventObjectID(e)
		p.Sections = append(p.Sections, pages.Section{Fields: []pages.Field{{Label: "ID", Value: e.ID, Code: true}, {Label: q.T("Type"), Value: e.Type},
			{Label: q.T("Object"), Value: obj, Href: q.objectLink(obj)}, {Label: q.T("Created"), Value: q.when(e.CreatedAt)}}})
		if q.can(domain.RoleDeveloper) {
			p.Sections = append(p.Sections, pages.Section{Form: &pages.Form{Action: q.link("events", e.ID) + "/resend", TestID: "event-resend", Submit: q.T("Resend to every endpoint"), Inline: true}})
		}
		p.Sections = append(p.Sections, pages.Section{Pre: pretty(e)})
		return nil
	})
	return p, err
}
