package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/pquerna/otp/totp"

	"troco/db"
	"troco/pages"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/pix"
)

// totpQRSize is the side in pixels of the two-factor set-up QR image (shown at 220 CSS pixels,
// sharp on a 2x screen).
const totpQRSize = 440

// ---- webhooks (same operations as /v1/webhook-endpoints and /v1/events/{id}/redeliver) ----

func (s *Server) dashWebhooks(q *dashReq, formErr error) (*pages.Page, error) {
	var list []*domain.WebhookEndpoint
	err := s.db.Read(q.r.Context(), func(tx *db.Tx) error {
		var err error
		list, _, err = tx.ListWebhookEndpoints(q.scope, db.ListParams{Limit: core.MaxWebhookEndpoints * 4})
		return err
	})
	if err != nil {
		return nil, err
	}
	p := &pages.Page{Title: q.T("Webhooks")}
	if msg, ok := q.errText(formErr); ok {
		p.Error = msg
		q.kept = "webhook-create-form"
	} else if formErr != nil {
		return nil, formErr
	}
	t := &pages.Table{TestID: "webhooks-table", Headers: []string{"ID", "URL", q.T("Status"), q.T("Events"), q.T("Description")}}
	for _, ep := range list {
		t.Rows = append(t.Rows, []pages.Cell{{Text: ep.ID, Href: q.link("webhooks", ep.ID), Code: true}, {Text: ep.URL}, {Text: q.V("webhook", ep.Status)},
			{Text: strings.Join(ep.EnabledEvents, ", ")}, {Text: deref(ep.Description)}})
	}
	p.Sections = append(p.Sections, pages.Section{Table: t})
	if q.can(domain.RoleDeveloper) {
		p.Sections = append(p.Sections, pages.Section{Title: q.T("Add endpoint"), Form: &pages.Form{Action: q.d.Base() + "/webhooks", TestID: "webhook-create-form", Submit: q.T("Add endpoint"), SubmitTestID: "webhook-create-submit",
			Inputs: []pages.Input{{Name: "url", Label: q.T("Endpoint URL"), Kind: "url", Required: true, Value: q.val("webhook-create-form", "url", "")},
				{Name: "enabled_events", Label: q.T("Events to send (comma separated, * for all)"), Kind: "text", Value: q.val("webhook-create-form", "enabled_events", "*")},
				{Name: "description", Label: q.T("Description"), Kind: "text", Value: q.val("webhook-create-form", "description", "")}}}})
	}
	return p, nil
}

func (s *Server) dashWebhookCreate(q *dashReq) (*pages.Page, error) {
	var events []string
	for _, e := range strings.Split(q.r.PostFormValue("enabled_events"), ",") {
		if e = strings.TrimSpace(e); e != "" {
			events = append(events, e)
		}
	}
	params := core.WebhookEndpointParams{URL: domain.Opt[string]{Set: true, V: strings.TrimSpace(q.r.PostFormValue("url"))},
		EnabledEvents: domain.Opt[[]string]{Set: true, V: events}}
	if d := strings.TrimSpace(q.r.PostFormValue("description")); d != "" {
		params.Description = domain.Opt[string]{Set: true, V: d}
	}
	var ep *domain.WebhookEndpoint
	err := s.db.Write(q.r.Context(), func(tx *db.Tx) error {
		var err error
		if ep, err = core.CreateWebhookEndpoint(tx, q.actor(), s.webhookEnv(), params); err != nil {
			return err
		}
		return core.Audit(tx, q.u.User, "webhook_endpoint.created", ep.ID, ep.URL)
	})
	if err != nil {
		return s.dashWebhooks(q, err)
	}
	return s.dashWebhook(q, ep.ID, &pages.Page{Notice: q.T("Done."), Token: ep.Secret})
}

func (s *Server) dashWebhook(q *dashReq, id string, base *pages.Page) (*pages.Page, error) {
	p := base
	if p == nil {
		p = &pages.Page{}
	}
	q.d.Active = "webhooks"
	err := s.db.Read(q.r.Context(), func(tx *db.Tx) error {
		ep, err := tx.FindWebhookEndpointByID(q.scope, id)
		if err != nil {
			return err
		}
		p.Title = ep.URL
		p.Sections = append(p.Sections, pages.Section{Fields: []pages.Field{{Label: "ID", Value: ep.ID, Code: true}, {Label: q.T("Status"), Value: q.V("webhook", ep.Status)},
			{Label: q.T("Events"), Value: strings.Join(ep.EnabledEvents, ", ")}, {Label: q.T("Description"), Value: deref(ep.Description)}, {Label: q.T("Created"), Value: q.when(ep.CreatedAt)}}})
		if q.can(domain.RoleDeveloper) {
			toggle := "disable"
			label := q.T("Disable")
			if ep.Status != domain.WebhookEndpointEnabled {
				toggle, label = "enable", q.T("Enable")
			}
			p.Sections = append(p.Sections,
				pages.Section{Title: q.T("Secret rotation"), Form: &pages.Form{Action: q.link("webhooks", ep.ID) + "/rotate-secret", TestID: "webhook-rotate", Submit: q.T("Rotate secret"), Inline: true}},
				pages.Section{Form: &pages.Form{Action: q.link("webhooks", ep.ID) + "/" + toggle, TestID: "webhook-toggle", Submit: label, Inline: true, Danger: toggle == "disable"}})
		}
		dl, more, err := tx.ListWebhookDeliveries(q.scope, ep.ID, db.WebhookDeliveryFilter{}, q.listParams())
		if err != nil {
			return listErr(err)
		}
		t := &pages.Table{TestID: "deliveries-table", Headers: []string{q.T("Created"), q.T("Type"), q.T("Status"), "HTTP", q.T("Attempts"), q.T("Duration"), ""}}
		ids := make([]string, len(dl))
		for i, d := range dl {
			ids[i] = d.ID
			httpStatus := "—"
			if d.HTTPStatus != nil {
				httpStatus = fmt.Sprint(*d.HTTPStatus)
			}
			resend := pages.Cell{}
			if q.can(domain.RoleDeveloper) {
				resend.Form = &pages.Form{Action: q.link("webhooks", ep.ID) + "/resend", TestID: "webhook-resend", Submit: q.T("Resend"), Inline: true,
					Inputs: []pages.Input{{Name: "event", Kind: "hidden", Value: d.Event}}}
			}
			errText := ""
			if d.Error != nil {
				errText = " · " + *d.Error
			}
			t.Rows = append(t.Rows, []pages.Cell{{Text: q.when(d.CreatedAt)}, {Text: d.EventType + " (" + d.Event + ")", Href: q.link("events", d.Event)}, {Text: q.V("delivery", d.Status) + errText},
				{Text: httpStatus}, {Text: fmt.Sprint(d.Attempt)}, {Text: fmt.Sprintf("%d ms", d.DurationMS)}, resend})
		}
		p.Sections = append(p.Sections, pages.Section{Title: q.T("Deliveries"), Table: t, Pager: q.pager(ids, more)})
		return nil
	})
	return p, err
}

func (s *Server) dashWebhookAction(q *dashReq, id, action string) (*pages.Page, error) {
	var secret string
	err := s.db.Write(q.r.Context(), func(tx *db.Tx) error {
		if _, err := tx.FindWebhookEndpointByID(q.scope, id); err != nil {
			return &dashNotFoundError{}
		}
		var err error
		detail := ""
		switch action {
		case "resend":
			ev := q.r.PostFormValue("event")
			detail = ev
			_, err = core.RedeliverEvent(tx, q.actor(), ev, core.RedeliverParams{WebhookEndpoint: &id})
		case "rotate-secret":
			var ep *domain.WebhookEndpoint
			if ep, err = core.RotateWebhookSecret(tx, q.actor(), s.webhookEnv(), id, core.RotateSecretParams{}); err == nil {
				secret = ep.Secret
			}
		case "disable", "enable":
			_, err = core.UpdateWebhookEndpoint(tx, q.actor(), s.webhookEnv(), id, core.WebhookEndpointParams{Disabled: domain.Opt[bool]{Set: true, V: action == "disable"}})
		}
		if err != nil {
			return err
		}
		return core.Audit(tx, q.u.User, "webhook_endpoint."+action, id, detail)
	})
	p := &pages.Page{Notice: q.T("Done.")}
	if err != nil {
		msg, ok := q.errText(err)
		if !ok {
			return nil, err
		}
		p = &pages.Page{Error: msg}
	}
	p.Token = secret
	return s.dashWebhook(q, id, p)
}

// ---- API keys (the same core.CreateAPIKey / core.RevokeAPIKey as `troco key`) ----

func (s *Server) dashKeys(q *dashReq, p *pages.Page) (*pages.Page, error) {
	if p == nil {
		p = &pages.Page{}
	}
	p.Title = q.T("API keys")
	q.d.Active = "api-keys"
	var keys []*domain.APIKey
	err := s.db.Read(q.r.Context(), func(tx *db.Tx) error {
		var err error
		keys, err = tx.ListAPIKeys(q.u.Org.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	now := s.cfg.Clock.Now()
	active := &pages.Table{TestID: "keys-table", Headers: []string{q.T("Name"), q.T("Key"), q.T("Scopes"), q.T("Environment"), q.T("Created"), q.T("Last used"), q.T("Expires"), q.T("Revoke")}}
	revoked := &pages.Table{TestID: "revoked-keys-table", Headers: []string{q.T("Name"), q.T("Key"), q.T("Environment"), q.T("Last used"), q.T("Revoked by"), q.T("Revoked at"), q.T("Reason")}}
	for _, k := range keys {
		if !k.RevokedAt.IsZero() {
			revoked.Rows = append(revoked.Rows, []pages.Cell{{Text: k.Name, Href: q.link("api-keys", k.ID)}, {Text: k.TokenHint, Code: true}, {Text: k.Environment}, {Text: q.when(k.LastUsedAt)},
				{Text: deref(k.RevokedBy)}, {Text: q.when(k.RevokedAt)}, {Text: deref(k.RevokeReason)}})
			continue
		}
		exp := q.when(k.ExpiresAt)
		if k.Expired(now) {
			exp += " (" + q.T("expired") + ")"
		}
		active.Rows = append(active.Rows, []pages.Cell{{Text: k.Name, Href: q.link("api-keys", k.ID)}, {Text: k.TokenHint, Code: true}, {Text: strings.Join(k.Scopes, ", ")}, {Text: k.Environment},
			{Text: q.when(k.CreatedAt)}, {Text: q.when(k.LastUsedAt)}, {Text: exp},
			{Form: &pages.Form{Action: q.d.Base() + "/api-keys/" + k.ID + "/revoke", TestID: "key-revoke-" + k.ID, Submit: q.T("Revoke"), SubmitTestID: "key-revoke", Danger: true, Inline: true,
				Inputs: []pages.Input{{Name: "reason", Label: q.T("Reason"), Kind: "text", Value: q.val("key-revoke-"+k.ID, "reason", "")}}}}})
	}
	const kf = "key-create-form"
	env := q.val(kf, "environment", q.d.Env)
	envOpts := []pages.Option{option("test", "test", env), option("live", "live", env)}
	form := &pages.Form{Action: q.d.Base() + "/api-keys", TestID: kf, Submit: q.T("Create key"), SubmitTestID: "key-create-submit", Inputs: []pages.Input{
		{Name: "name", Label: q.T("Name"), Kind: "text", Required: true, Value: q.val(kf, "name", "")},
		{Name: "scope_read", Label: "read", Kind: "checkbox", Value: "read", Checked: q.checked(kf, "scope_read", true)},
		{Name: "scope_write", Label: "write", Kind: "checkbox", Value: "write", Checked: q.checked(kf, "scope_write", true)},
		{Name: "environment", Label: q.T("Environment"), Kind: "select", Options: envOpts},
		{Name: "expires_at", Label: q.T("Expires at (optional, UTC)"), Kind: "datetime-local", Value: q.val(kf, "expires_at", "")},
	}}
	if q.u.Org.Platform != nil && q.u.Org.PlatformActive() {
		form.Inputs = append(form.Inputs, pages.Input{Name: "scope_platform_admin", Label: "platform_admin", Kind: "checkbox", Value: "platform_admin", Checked: q.checked(kf, "scope_platform_admin", false)})
	}
	p.Sections = append(p.Sections, pages.Section{Title: q.T("Active keys"), Table: active}, pages.Section{Title: q.T("Create a key"), Form: form},
		pages.Section{Title: q.T("Revoked keys"), Table: revoked})
	if q.can(domain.RoleOwner) {
		var audit []*domain.AuditEntry
		err := s.db.Read(q.r.Context(), func(tx *db.Tx) error {
			var err error
			audit, _, err = tx.ListAudit(q.u.Org.ID, db.ListParams{Limit: 50})
			return err
		})
		if err != nil {
			return nil, err
		}
		p.Sections = append(p.Sections, pages.Section{Title: q.T("Audit trail"), Table: q.auditTable(audit)})
	}
	return p, nil
}

// dashKey shows one API key of the organization and the requests made with it in the page's
// environment (newest first, the request log's 7 days).
func (s *Server) dashKey(q *dashReq, id string) (*pages.Page, error) {
	q.d.Active = "api-keys"
	p := &pages.Page{}
	err := s.db.Read(q.r.Context(), func(tx *db.Tx) error {
		k, err := tx.FindAPIKeyByID(id)
		if err != nil || k.Organization != q.u.Org.ID {
			return &dashNotFoundError{}
		}
		p.Title = k.Name
		exp := q.when(k.ExpiresAt)
		if k.Expired(s.cfg.Clock.Now()) {
			exp += " (" + q.T("expired") + ")"
		}
		fields := []pages.Field{{Label: "ID", Value: k.ID, Code: true}, {Label: q.T("Key"), Value: k.TokenHint, Code: true}, {Label: q.T("Scopes"), Value: strings.Join(k.Scopes, ", ")},
			{Label: q.T("Environment"), Value: k.Environment}, {Label: q.T("Created"), Value: q.when(k.CreatedAt)}, {Label: q.T("Last used"), Value: q.when(k.LastUsedAt)},
			{Label: q.T("Expires"), Value: exp}}
		if !k.RevokedAt.IsZero() {
			fields = append(fields, pages.Field{Label: q.T("Revoked by"), Value: deref(k.RevokedBy)}, pages.Field{Label: q.T("Revoked at"), Value: q.when(k.RevokedAt)},
				pages.Field{Label: q.T("Reason"), Value: deref(k.RevokeReason)})
		}
		p.Sections = append(p.Sections, pages.Section{Fields: fields})
		// The key's requests live in its own environment.
		scope := domain.Scope{OrgID: q.u.Org.ID, Livemode: k.Livemode}
		logs, more, err := tx.ListRequestLogs(scope, db.RequestLogFilter{KeyID: k.ID}, q.listParams())
		if err != nil {
			return listErr(err)
		}
		ids := make([]string, len(logs))
		for i, l := range logs {
			ids[i] = l.ID
		}
		t := q.logsTable(logs)
		if k.Livemode != q.scope.Livemode { // the log pages are per environment
			for _, row := range t.Rows {
				row[5].Href = "/dashboard/" + k.Environment + "/logs/" + row[5].Text
			}
		}
		p.Sections = append(p.Sections, pages.Section{Title: q.T("Requests made with this key"), Table: t, Pager: q.pager(ids, more)})
		return nil
	})
	return p, err
}

func (q *dashReq) auditTable(list []*domain.AuditEntry) *pages.Table {
	t := &pages.Table{TestID: "audit-table", Headers: []string{q.T("Created"), q.T("Who"), q.T("Action"), q.T("Object"), q.T("Detail")}}
	for _, e := range list {
		t.Rows = append(t.Rows, []pages.Cell{{Text: q.when(e.CreatedAt)}, {Text: e.UserEmail}, {Text: e.Action}, {Text: e.ObjectID, Code: true}, {Text: e.Detail}})
	}
	return t
}

func (s *Server) dashKeyCreate(q *dashReq) (*pages.Page, error) {
	q.kept = "key-create-form" // cleared after a success: the form is then empty again
	f := q.r.PostForm
	var scopes []string
	for _, sc := range []string{"read", "write", "platform_admin"} {
		if f.Get("scope_"+sc) == sc {
			scopes = append(scopes, sc)
		}
	}
	if f.Get("scope_admin") != "" || f.Get("scopes") != "" {
		return s.dashKeys(q, &pages.Page{Error: q.invalid("", "admin keys are not offered in the dashboard.")})
	}
	if len(scopes) == 0 { // the API would default to read+write: the person unchecked them all
		return s.dashKeys(q, &pages.Page{Error: q.invalid("", "choose at least one scope (read, write or platform_admin).")})
	}
	env := f.Get("environment")
	in := core.APIKeyInput{OrgID: q.u.Org.ID, Livemode: env == "live", Scopes: scopes, Name: f.Get("name")}
	if env != "live" && env != "test" {
		return s.dashKeys(q, &pages.Page{Error: q.invalid("", "environment must be test or live.")})
	}
	if v := strings.TrimSpace(f.Get("expires_at")); v != "" {
		t, err := time.ParseInLocation("2006-01-02T15:04", v, time.UTC)
		if err != nil {
			return s.dashKeys(q, &pages.Page{Error: q.invalid("", "expires_at must be a date and time such as 2030-01-31T12:00.")})
		}
		in.ExpiresAt = t
	}
	var k *domain.APIKey
	err := s.db.Write(q.r.Context(), func(tx *db.Tx) error {
		var err error
		if k, err = core.CreateAPIKey(tx, in); err != nil {
			return err
		}
		return core.Audit(tx, q.u.User, "api_key.created", k.ID, k.Name+" ("+k.Environment+", "+strings.Join(k.Scopes, ",")+")")
	})
	if err != nil {
		if msg, ok := q.errText(err); ok {
			return s.dashKeys(q, &pages.Page{Error: msg})
		}
		return nil, err
	}
	q.kept = ""
	return s.dashKeys(q, &pages.Page{Notice: q.T("Done."), Token: k.Token})
}

func (s *Server) dashKeyRevoke(q *dashReq, id string) (*pages.Page, error) {
	q.kept = "key-revoke-" + id
	reason := strings.TrimSpace(q.r.PostFormValue("reason"))
	if len(reason) > 500 {
		return s.dashKeys(q, &pages.Page{Error: q.invalid("reason", "reason must have at most %d characters.", 500)})
	}
	err := s.db.Write(q.r.Context(), func(tx *db.Tx) error {
		k, err := tx.FindAPIKeyByID(id)
		if err != nil || k.Organization != q.u.Org.ID {
			return &dashNotFoundError{}
		}
		if _, err := core.RevokeAPIKey(tx, id, q.u.User.Email, reason); err != nil {
			return err
		}
		return core.Audit(tx, q.u.User, "api_key.revoked", id, reason)
	})
	if err == nil {
		q.kept = ""
	}
	if err != nil {
		var nf *dashNotFoundError
		if errors.As(err, &nf) {
			return nil, err
		}
		if msg, ok := q.errText(err); ok {
			return s.dashKeys(q, &pages.Page{Error: msg})
		}
		return nil, err
	}
	return s.dashKeys(q, &pages.Page{Notice: q.T("Done.")})
}

// ---- request logs ----

func (q *dashReq) logsTable(list []*domain.RequestLog) *pages.Table {
	t := &pages.Table{TestID: "request-log-table", Headers: []string{q.T("Created"), q.T("Method"), q.T("Path"), q.T("Status"), q.T("Key"), q.T("Request id"), q.T("Duration")}}
	for _, l := range list {
		t.Rows = append(t.Rows, []pages.Cell{{Text: q.when(l.CreatedAt)}, {Text: l.Method}, {Text: l.Path, Code: true}, {Text: fmt.Sprint(l.Status)}, {Text: l.KeyID, Code: true},
			{Text: l.ID, Href: q.link("logs", l.ID), Code: true}, {Text: fmt.Sprintf("%.1f ms", float64(l.DurationUS)/1000)}})
	}
	return t
}

func (s *Server) dashLogs(q *dashReq) (*pages.Page, error) {
	obj := strings.TrimSpace(q.r.URL.Query().Get("object"))
	f := &pages.Form{Method: "get", Action: q.r.URL.Path, TestID: "logs-filter", Submit: q.T("Filter"),
		Inputs: []pages.Input{{Name: "object", Label: q.T("Object") + " (pi_…, cus_…)", Kind: "text", Value: obj}}}
	var list []*domain.RequestLog
	var more bool
	err := s.db.Read(q.r.Context(), func(tx *db.Tx) error {
		var err error
		list, more, err = tx.ListRequestLogs(q.scope, db.RequestLogFilter{ObjectID: obj}, q.listParams())
		return err
	})
	if err != nil {
		return nil, listErr(err)
	}
	ids := make([]string, len(list))
	for i, l := range list {
		ids[i] = l.ID
	}
	return &pages.Page{Title: q.T("Request logs"), Sections: []pages.Section{{Form: f}, {Table: q.logsTable(list), Pager: q.pager(ids, more)}}}, nil
}

func (s *Server) dashLog(q *dashReq, id string) (*pages.Page, error) {
	var l *domain.RequestLog
	err := s.db.Read(q.r.Context(), func(tx *db.Tx) error {
		var err error
		l, err = tx.FindRequestLog(q.scope, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	fields := []pages.Field{{Label: q.T("Request id"), Value: l.ID, Code: true}, {Label: q.T("Method"), Value: l.Method}, {Label: q.T("Path"), Value: l.Path, Code: true},
		{Label: q.T("Status"), Value: fmt.Sprint(l.Status)}, {Label: q.T("Key"), Value: l.KeyID, Code: true}, {Label: q.T("Duration"), Value: fmt.Sprintf("%.1f ms", float64(l.DurationUS)/1000)},
		{Label: q.T("Created"), Value: q.when(l.CreatedAt)}}
	if l.ObjectID != "" {
		fields = append(fields, pages.Field{Label: q.T("Object"), Value: l.ObjectID, Href: q.objectLink(l.ObjectID)})
	}
	return &pages.Page{Title: l.Method + " " + l.Path, Sections: []pages.Section{{Fields: fields},
		{Title: q.T("Request body"), Pre: orDash(l.RequestBody)}, {Title: q.T("Response body"), Pre: orDash(l.ResponseBody)}}}, nil
}

// orDash indents a stored (compact) JSON body for reading; "—" when there was none.
func orDash(s string) string {
	if s == "" {
		return "—"
	}
	var b bytes.Buffer
	if json.Indent(&b, []byte(s), "", "  ") != nil {
		return s
	}
	return readableJSON(b.Bytes())
}

// objectLink is the dashboard page of an object id, by its prefix ("" when there is none).
func (q *dashReq) objectLink(id string) string {
	for prefix, kind := range map[string]string{"pi_": "payments", "cus_": "customers", "cs_": "checkout-sessions", "inv_": "invoices", "sub_": "subscriptions", "dp_": "disputes", "evt_": "events", "we_": "webhooks"} {
		if strings.HasPrefix(id, prefix) {
			return q.link(kind, id)
		}
	}
	return ""
}

// ---- settings and the sandbox clock ----

func (s *Server) dashSettings(q *dashReq, notice, errMsg string) (*pages.Page, error) {
	p := &pages.Page{Title: q.T("Settings"), Notice: notice, Error: errMsg}
	if q.can(domain.RoleAdmin) {
		p.Sections = append(p.Sections, pages.Section{Form: &pages.Form{Action: q.d.Base() + "/settings", TestID: "settings-form", Submit: q.T("Save"),
			Inputs: []pages.Input{{Name: "timezone", Label: q.T("Time zone (display only)"), Kind: "text", Value: q.val("settings-form", "timezone", q.u.Org.DashboardSettings.Timezone), Required: true},
				{Name: "display_name", Label: q.T("Checkout display name"), Kind: "text", Value: q.val("settings-form", "display_name", deref(q.u.Org.CheckoutSettings.Branding.DisplayName))},
				{Name: "primary_color", Label: q.T("Checkout primary color (#RRGGBB)"), Kind: "text", Value: q.val("settings-form", "primary_color", deref(q.u.Org.CheckoutSettings.Branding.PrimaryColor))},
				{Name: "logo_url", Label: q.T("Checkout logo URL (https)"), Kind: "url", Value: q.val("settings-form", "logo_url", deref(q.u.Org.CheckoutSettings.Branding.LogoURL))}}}})
	} else {
		p.Sections = append(p.Sections, pages.Section{Fields: []pages.Field{{Label: q.T("Time zone (display only)"), Value: q.u.Org.DashboardSettings.Timezone}}})
	}
	if q.d.Env == "test" && s.cfg.AllowTimeTravel {
		sec := pages.Section{Title: q.T("Sandbox clock"), Fields: []pages.Field{{Label: q.T("Now"), Value: q.when(domain.At(s.cfg.Clock.Now()))}}}
		if q.can(domain.RoleDeveloper) {
			sec.Form = &pages.Form{Action: q.d.Base() + "/settings/clock", TestID: "clock-form", Submit: q.T("Advance"),
				Inputs: []pages.Input{{Name: "advance", Label: q.T("Advance by (e.g. 24h, 30m)"), Kind: "text", Required: true, Value: q.val("clock-form", "advance", "")}}}
		}
		p.Sections = append(p.Sections, sec)
	}
	var users []*domain.User
	if err := s.db.Read(q.r.Context(), func(tx *db.Tx) error {
		var err error
		users, err = tx.ListUsers(q.u.Org.ID)
		return err
	}); err != nil {
		return nil, err
	}
	headers := []string{q.T("E-mail"), q.T("Role"), q.T("Created")}
	if q.can(domain.RoleAdmin) {
		headers = append(headers, q.T("Remove"))
	}
	t := &pages.Table{TestID: "people-table", Headers: headers}
	owners := 0
	for _, u := range users {
		if u.Role == domain.RoleOwner {
			owners++
		}
	}
	for _, u := range users {
		row := []pages.Cell{{Text: u.Email}, {Text: q.V("role", u.Role)}, {Text: q.when(u.CreatedAt)}}
		if q.can(domain.RoleAdmin) {
			// The button is offered where the operation allows it (core.RemoveUser decides).
			cell := pages.Cell{}
			if u.Role != domain.RoleOwner || (q.can(domain.RoleOwner) && owners > 1) {
				cell.Form = &pages.Form{Action: q.d.Base() + "/settings/people/" + u.ID + "/remove", TestID: "person-remove-" + u.ID, SubmitTestID: "person-remove",
					Submit: q.T("Remove"), Danger: true, Inline: true}
			}
			row = append(row, cell)
		}
		t.Rows = append(t.Rows, row)
	}
	p.Sections = append(p.Sections, pages.Section{Title: q.T("People"), Table: t})
	if q.can(domain.RoleOwner) {
		role := q.val("person-create-form", "role", "")
		roles := []pages.Option{option(domain.RoleViewer, q.V("role", "viewer"), role), option(domain.RoleDeveloper, q.V("role", "developer"), role), option(domain.RoleAdmin, q.V("role", "admin"), role), option(domain.RoleOwner, q.V("role", "owner"), role)}
		p.Sections = append(p.Sections, pages.Section{Title: q.T("Add a person"), Form: &pages.Form{Action: q.d.Base() + "/settings/people", TestID: "person-create-form", Submit: q.T("Add a person"),
			Inputs: []pages.Input{{Name: "email", Label: q.T("E-mail"), Kind: "email", Required: true, Value: q.val("person-create-form", "email", "")}, {Name: "role", Label: q.T("Role"), Kind: "select", Options: roles}}}})
		var audit []*domain.AuditEntry
		if err := s.db.Read(q.r.Context(), func(tx *db.Tx) error {
			var err error
			audit, _, err = tx.ListAudit(q.u.Org.ID, db.ListParams{Limit: 50})
			return err
		}); err != nil {
			return nil, err
		}
		p.Sections = append(p.Sections, pages.Section{Title: q.T("Audit trail"), Table: q.auditTable(audit)})
	}
	return p, nil
}

// dashPersonRemove takes a person out of the organization (owners and admins; core.RemoveUser
// keeps the last owner and lets only owners remove owners). Their sessions end at once; a
// person who removes themselves is signed out.
func (s *Server) dashPersonRemove(q *dashReq, id string) (*pages.Page, error) {
	q.d.Active = "settings"
	var gone *domain.User
	err := s.db.Write(q.r.Context(), func(tx *db.Tx) error {
		var err error
		gone, err = core.RemoveUser(tx, q.u.User, id)
		return err
	})
	if e, ok := domain.AsError(err); ok && e.Code == domain.CodeResourceMissing {
		return nil, &dashNotFoundError{}
	}
	if err != nil {
		if msg, ok := q.errText(err); ok {
			q.status = http.StatusConflict
			return s.dashSettings(q, "", msg)
		}
		return nil, err
	}
	if gone.ID == q.u.User.ID {
		setDashCookie(q.w, dashCookie, "", -1)
		http.Redirect(q.w, q.r, "/dashboard/signin", http.StatusSeeOther)
		return nil, nil
	}
	return s.dashSettings(q, q.T("Done.")+" "+gone.Email, "")
}

// dashPersonCreate adds a person (owners only): the same operation as `troco user create`, and
// shows the one-time sign-in link to hand over.
func (s *Server) dashPersonCreate(q *dashReq) (*pages.Page, error) {
	q.d.Active = "settings"
	var u *domain.User
	var link *core.SigninLink
	err := s.db.Write(q.r.Context(), func(tx *db.Tx) error {
		var err error
		if u, err = core.CreateUser(tx, core.UserInput{OrgID: q.u.Org.ID, Email: q.r.PostFormValue("email"), Role: q.r.PostFormValue("role")}); err != nil {
			return err
		}
		if link, err = core.IssueSigninLink(tx, u.ID); err != nil {
			return err
		}
		return core.Audit(tx, q.u.User, "user.created", u.ID, u.Email+" ("+u.Role+")")
	})
	if err != nil {
		if msg, ok := q.errText(err); ok {
			q.kept = "person-create-form"
			return s.dashSettings(q, "", msg)
		}
		return nil, err
	}
	p, err := s.dashSettings(q, q.T("Done."), "")
	if err != nil {
		return nil, err
	}
	p.Sections = append([]pages.Section{{Fields: []pages.Field{{Label: q.T("One-time sign-in link for") + " " + u.Email + " (15 min)", Value: core.SigninURL(s.cfg.BaseURL, link.Token), Code: true}}}}, p.Sections...)
	return p, nil
}

func (s *Server) dashSettingsSave(q *dashReq) (*pages.Page, error) {
	tz := strings.TrimSpace(q.r.PostFormValue("timezone"))
	// An empty branding field clears it (the hosted checkout then uses troco's look).
	opt := func(name string) domain.Opt[string] {
		v := strings.TrimSpace(q.r.PostFormValue(name))
		return domain.Opt[string]{Set: true, Null: v == "", V: v}
	}
	params := core.OrganizationParams{DashboardSettings: &core.DashboardSettingsParams{Timezone: &tz},
		CheckoutSettings: &core.CheckoutSettingsParams{Branding: &core.BrandingParams{DisplayName: opt("display_name"), PrimaryColor: opt("primary_color"), LogoURL: opt("logo_url")}}}
	q.labels = map[string]string{"dashboard_settings[timezone]": q.T("Time zone (display only)"),
		"checkout_settings[branding][display_name]": q.T("Checkout display name"), "checkout_settings[branding][primary_color]": q.T("Checkout primary color (#RRGGBB)"),
		"checkout_settings[branding][logo_url]": q.T("Checkout logo URL (https)")}
	var org *domain.Organization
	err := s.db.Write(q.r.Context(), func(tx *db.Tx) error {
		var err error
		org, err = core.UpdateOrganization(tx, q.actor(), core.OrgCaller{}, q.u.Org.ID, params)
		if err != nil {
			return err
		}
		return core.Audit(tx, q.u.User, "settings.updated", q.u.Org.ID, "timezone="+tz)
	})
	if err != nil {
		if msg, ok := q.errText(err); ok {
			q.kept = "settings-form"
			return s.dashSettings(q, "", msg)
		}
		return nil, err
	}
	q.u.Org.DashboardSettings, q.u.Org.CheckoutSettings = org.DashboardSettings, org.CheckoutSettings
	return s.dashSettings(q, q.T("Done."), "")
}

func (s *Server) dashClockAdvance(q *dashReq) (*pages.Page, error) {
	q.d.Active = "settings"
	if q.d.Env != "test" || !s.cfg.AllowTimeTravel {
		return s.dashSettings(q, "", q.invalid("", "Time travel is disabled; start the server with --allow-time-travel (test mode only)."))
	}
	d, err := time.ParseDuration(strings.TrimSpace(q.r.PostFormValue("advance")))
	if err != nil || d < time.Second || d > maxAdvance*time.Second {
		q.kept = "clock-form"
		return s.dashSettings(q, "", q.invalid("advance", "advance must be a duration between 1s and the maximum, such as 24h or 30m."))
	}
	// Sessions count idle time on the same clock: keep the person who moves it signed in (stamped
	// at the new time before the jobs that come due sweep idle sessions).
	if err := s.db.Write(q.r.Context(), func(tx *db.Tx) error { return tx.TouchDashboardSessionAt(q.u.TokenHash, tx.Now.Add(d).Unix()) }); err != nil {
		return nil, err
	}
	if _, err := s.advanceClock(q.r.Context(), d); err != nil {
		return nil, err
	}
	return s.dashSettings(q, q.T("Done."), "")
}

// ---- account: password, second factor, language ----

func (s *Server) dashAccount(q *dashReq) {
	q.d.Active = "settings"
	p := &pages.Page{Title: q.T("Account")}
	if q.r.Method == http.MethodPost {
		var err error
		switch q.r.PostFormValue("action") {
		case "password":
			var hash string
			if hash, err = core.NewPasswordHash(q.r.PostFormValue("password")); err == nil {
				err = s.db.Write(q.r.Context(), func(tx *db.Tx) error { return core.SetPasswordHash(tx, q.u.User.ID, hash) })
			}
		case "language":
			lang := q.r.PostFormValue("language")
			if lang != "en" && lang != "pt-BR" {
				err = domain.Invalid("language", "language must be pt-BR or en.")
				break
			}
			if err = s.db.Write(q.r.Context(), func(tx *db.Tx) error { return tx.SetUserLanguage(q.u.User.ID, lang) }); err == nil {
				q.d.Lang, q.u.User.Language = lang, lang
				p.Title = q.T("Account")
			}
		case "totp-start":
			key, kerr := totp.Generate(totp.GenerateOpts{Issuer: "troco", AccountName: q.u.User.Email})
			if kerr != nil {
				err = kerr
				break
			}
			err = s.db.Write(q.r.Context(), func(tx *db.Tx) error { return tx.SetUserTOTP(q.u.User.ID, s.cfg.Secrets.Seal(key.Secret()), false) })
			q.u.User.TOTPSecret = "pending"
			// The authenticator app scans the QR of the otpauth URL; the secret and the URL stay
			// as text for entering by hand.
			qr, qerr := pix.QRPNG(key.URL(), totpQRSize)
			if qerr != nil {
				err = qerr
				break
			}
			p.Sections = append(p.Sections, pages.Section{Title: q.T("Two-factor authentication"), Fields: []pages.Field{
				{Label: q.T("Secret"), Value: key.Secret(), Code: true},
				{Label: "otpauth", Value: key.URL(), Code: true, Image: "data:image/png;base64," + base64.StdEncoding.EncodeToString(qr)}}})
		case "totp-enable":
			err = s.db.Write(q.r.Context(), func(tx *db.Tx) error {
				u, err := tx.FindUserByID(q.u.User.ID)
				if err != nil || u.TOTPSecret == "" {
					return domain.Invalid("code", "start the set-up first.")
				}
				secret, err := s.cfg.Secrets.Open(u.TOTPSecret)
				if err != nil {
					return err
				}
				step := s.totpStep(q.r.PostFormValue("code"), secret)
				if step == 0 {
					return domain.Invalid("code", "the code is wrong.")
				}
				if _, err := tx.UseTOTPStep(u.ID, step); err != nil {
					return err
				}
				q.u.User.TOTPEnabled = true
				return tx.SetUserTOTP(u.ID, u.TOTPSecret, true)
			})
		case "totp-disable":
			// The password is checked against the session's copy of the user, outside the writer.
			if q.u.User.PasswordHash == "" || !core.CheckPassword(q.u.User.PasswordHash, q.r.PostFormValue("password")) {
				err = domain.Invalid("password", "the password is wrong.")
				break
			}
			err = s.db.Write(q.r.Context(), func(tx *db.Tx) error {
				q.u.User.TOTPEnabled = false
				return tx.SetUserTOTP(q.u.User.ID, "", false)
			})
		default:
			err = domain.Invalid("action", "unknown action.")
		}
		if msg, ok := q.errText(err); ok {
			p.Error = msg
		} else if err != nil {
			s.dashFail(q.w, q.r, err)
			return
		} else {
			p.Notice = q.T("Done.")
		}
	}
	p.Sections = append(p.Sections, pages.Section{Fields: []pages.Field{{Label: q.T("E-mail"), Value: q.u.User.Email}, {Label: q.T("Role"), Value: q.V("role", q.u.User.Role)}, {Label: q.T("Organization"), Value: q.u.Org.ID, Code: true}}},
		pages.Section{Title: q.T("Set a password"), Form: &pages.Form{Action: "/dashboard/account", TestID: "password-form", Submit: q.T("Save"), SubmitTestID: "password-submit",
			Inputs: []pages.Input{{Name: "action", Kind: "hidden", Value: "password"}, {Name: "password", Label: q.T("New password (at least 10 characters)"), Kind: "password", Required: true}}}},
		pages.Section{Title: q.T("Language"), Form: &pages.Form{Action: "/dashboard/account", TestID: "language-form", Submit: q.T("Save"),
			Inputs: []pages.Input{{Name: "action", Kind: "hidden", Value: "language"}, {Name: "language", Label: q.T("Language"), Kind: "select",
				Options: []pages.Option{option("pt-BR", "Português (Brasil)", q.d.Lang), option("en", "English", q.d.Lang)}}}}})
	tf := pages.Section{Title: q.T("Two-factor authentication")}
	switch {
	case q.u.User.TOTPEnabled:
		tf.Form = &pages.Form{Action: "/dashboard/account", TestID: "totp-disable-form", Submit: q.T("Disable"), Danger: true,
			Inputs: []pages.Input{{Name: "action", Kind: "hidden", Value: "totp-disable"}, {Name: "password", Label: q.T("Password"), Kind: "password", Required: true}}}
	case q.u.User.TOTPSecret != "":
		tf.Form = &pages.Form{Action: "/dashboard/account", TestID: "totp-enable-form", Submit: q.T("Enable"),
			Inputs: []pages.Input{{Name: "action", Kind: "hidden", Value: "totp-enable"}, {Name: "code", Label: q.T("Authenticator code"), Kind: "text", Required: true}}}
	default:
		tf.Form = &pages.Form{Action: "/dashboard/account", TestID: "totp-start-form", Submit: q.T("Enable"), Inputs: []pages.Input{{Name: "action", Kind: "hidden", Value: "totp-start"}}}
	}
	p.Sections = append(p.Sections, tf)
	status := http.StatusOK
	if q.status != 0 {
		status = q.status // a refused form (errText)
	}
	s.renderDash(q.w, q.r, status, pages.DashPage(q.d, p))
}
