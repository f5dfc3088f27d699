package server_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/server/calendar"
	"troco/server/pix"
)

func (e *testEnv) pixAuthCustomer(t *testing.T, token, email string) string {
	t.Helper()
	r := e.Do("POST", "/v1/customers", token, map[string]any{"email": email, "name": "Ana Souza"})
	if r.Status != 200 {
		t.Fatalf("create customer: %d %s", r.Status, r.Raw)
	}
	return r.Str("id")
}

// TestPixAuthorizations: the e-mail rules, the hosted page's approve, cancel, expiry, events and
// the bad inputs (another organization's customer, bad amounts, intervals and dates).
func TestPixAuthorizations(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	body := func(cus string) map[string]any {
		return map[string]any{"customer": cus, "max_amount": 9990, "interval": "month", "description": "Academia — plano mensal", "metadata": map[string]string{"plano": "ouro"}}
	}

	// E-mail rules decide at once in test mode.
	for _, tc := range []struct{ email, status string }{
		{"pixauto_approve@example.com", "approved"},
		{"pixauto_insufficient@example.com", "approved"},
		{"pixauto_reject@example.com", "rejected"},
		{"ana@example.com", "pending"},
	} {
		r := e.Do("POST", "/v1/pix-authorizations", e.Test, body(e.pixAuthCustomer(t, e.Test, tc.email)))
		is.Equal(r.Status, 200)
		is.Equal(r.Str("object"), "pix_authorization")
		is.True(strings.HasPrefix(r.Str("id"), "pixauth_"))
		is.Equal(r.Str("status"), tc.status)
		is.Equal(r.Str("start_date"), calendar.Today(time.Now()).Format(calendar.Layout))
		is.Equal(r.Body["end_date"], nil)
		is.NoErr(pix.Verify(r.Str("brcode")))
		if tc.status == "approved" {
			pm := e.Do("GET", "/v1/payment-methods/"+r.Str("payment_method"), e.Test, nil)
			is.Equal(pm.Status, 200)
			is.Equal(pm.Str("type"), "pix_automatico")
			is.Equal(len(e.payEvents(e.Test, "pix_authorization.approved", r.Str("id"))), 1)
		}
		is.Equal(len(e.payEvents(e.Test, "pix_authorization.created", r.Str("id"))), 1)
	}

	// Pending: the hosted page shows the QR and approves from the sandbox bar.
	cus := e.pixAuthCustomer(t, e.Test, "bia@example.com")
	r := e.Do("POST", "/v1/pix-authorizations", e.Test, body(cus))
	id, page := r.Str("id"), r.Str("url")
	html := e.getPage(t, page)
	is.True(strings.Contains(html, `data-testid="sandbox-banner"`))
	is.True(strings.Contains(html, `data-testid="simulate-approve"`))
	is.True(strings.Contains(html, "R$ 99,90"))
	is.True(strings.Contains(html, "mensal"))
	u, _ := url.Parse(page)
	status, h, _ := e.getRaw(t, e.URL()+u.Path+"?qr=1&s="+url.QueryEscape(u.Query().Get("s")))
	is.Equal(status, 200)
	is.Equal(h.Get("Content-Type"), "image/png")
	status, _, _ = e.getRaw(t, e.URL()+u.Path+"?s=wrong")
	is.Equal(status, 404) // wrong secret: as unknown
	// The QR's location answers the recurrence, signed like a charge's.
	qr, err := pix.Parse(r.Str("brcode"))
	is.NoErr(err)
	status, _, jwsBody := e.getRaw(t, "https://"+qr.URL)
	is.Equal(status, 200)
	rec := verifyLocation(t, e, jwsBody)
	is.Equal(rec["status"], "CRIADA")
	is.Equal(dig(rec, "calendario.periodicidade"), "MENSAL")
	is.Equal(dig(rec, "valor.valorMaximo"), "99.90")
	is.Equal(dig(rec, "vinculo.contrato"), id)
	is.Equal(dig(rec, "vinculo.devedor.nome"), "Ana Souza")
	csrf := between(html, `name="csrf_token" value="`, `"`)
	form := url.Values{"s": {u.Query().Get("s")}, "csrf_token": {csrf}, "action": {"approve"}}
	res, err := e.Client.PostForm(e.URL()+u.Path, form)
	is.NoErr(err)
	res.Body.Close()
	is.Equal(e.Do("GET", "/v1/pix-authorizations/"+id, e.Test, nil).Str("status"), "approved")
	_, _, jwsBody = e.getRaw(t, "https://"+qr.URL)
	is.Equal(verifyLocation(t, e, jwsBody)["status"], "APROVADA")
	form.Set("csrf_token", "forged")
	res, err = e.Client.PostForm(e.URL()+u.Path, form)
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, 403) // a forged form

	// Cancel: approved → canceled; a second cancel and an answer after cancellation are 409.
	c := e.Do("POST", "/v1/pix-authorizations/"+id+"/cancel", e.Test, nil)
	is.Equal(c.Status, 200)
	is.Equal(c.Str("status"), "canceled")
	is.True(c.Body["canceled_at"] != nil)
	is.Equal(e.Do("POST", "/v1/pix-authorizations/"+id+"/cancel", e.Test, nil).Status, 409)
	is.Equal(e.Do("POST", "/v1/test-helpers/pix-authorizations/"+id+"/approve", e.Test, nil).Status, 409)
	is.Equal(len(e.payEvents(e.Test, "pix_authorization.canceled", id)), 1)

	// Expiry: a pending authorization nobody answers expires after 24 hours.
	pending := e.Do("POST", "/v1/pix-authorizations", e.Test, body(cus)).Str("id")
	e.advance(25 * time.Hour)
	is.Equal(e.Do("GET", "/v1/pix-authorizations/"+pending, e.Test, nil).Str("status"), "expired")
	is.Equal(len(e.payEvents(e.Test, "pix_authorization.expired", pending)), 1)

	// Lists and filters.
	l := e.Do("GET", "/v1/pix-authorizations?customer="+cus, e.Test, nil)
	is.Equal(len(l.Data()), 2)
	is.Equal(len(e.Do("GET", "/v1/pix-authorizations?customer="+cus+"&status=expired", e.Test, nil).Data()), 1)
	is.Equal(e.Do("GET", "/v1/pix-authorizations?status=bogus", e.Test, nil).ErrParam(), "status")

	// Bad input.
	_, other := e.NewOrg("Outra Ltda", false)
	otherCus := e.pixAuthCustomer(t, other, "pixauto_approve@example.com")
	today := calendar.Today(e.Clock.Now())
	for _, tc := range []struct {
		edit  func(map[string]any)
		param string
	}{
		{func(b map[string]any) { b["customer"] = otherCus }, "customer"}, // another organization's customer
		{func(b map[string]any) { delete(b, "customer") }, "customer"},
		{func(b map[string]any) { delete(b, "max_amount") }, "max_amount"},
		{func(b map[string]any) { b["max_amount"] = 49 }, "max_amount"},
		{func(b map[string]any) { b["interval"] = "day" }, "interval"},
		{func(b map[string]any) { b["start_date"] = today.AddDate(0, 0, -1).Format(calendar.Layout) }, "start_date"},
		{func(b map[string]any) { b["start_date"] = "2026-02-30" }, "start_date"},
		{func(b map[string]any) { b["end_date"] = today.Format(calendar.Layout) }, "end_date"},
		{func(b map[string]any) { b["description"] = strings.Repeat("a", 141) }, "description"},
	} {
		b := body(cus)
		tc.edit(b)
		r := e.Do("POST", "/v1/pix-authorizations", e.Test, b)
		is.True(r.Status == 400 || r.Status == 404) // refused
		is.Equal(r.ErrParam(), tc.param)
	}
	is.Equal(e.Do("GET", "/v1/pix-authorizations/"+id, other, nil).Status, 404) // another organization's authorization
	is.Equal(e.Do("POST", "/v1/test-helpers/pix-authorizations/"+id+"/approve", e.Live, nil).Status, 403)
	liveCus := e.pixAuthCustomer(t, e.Live, "pixauto_approve@example.com")
	lr := e.Do("POST", "/v1/pix-authorizations", e.Live, body(liveCus))
	is.Equal(lr.Status, 503) // live needs a PSP's API Pix
	is.Equal(lr.ErrCode(), "processor_unavailable")
	is.True(strings.Contains(string(lr.Raw), "--pix-provider api-pix"))         // names the flag that turns it on
	is.Equal(len(e.Do("GET", "/v1/pix-authorizations", e.Live, nil).Data()), 0) // nothing created
}

// between returns the text of s between the first start and the following end.
func between(s, start, end string) string {
	i := strings.Index(s, start)
	if i < 0 {
		return ""
	}
	s = s[i+len(start):]
	j := strings.Index(s, end)
	if j < 0 {
		return ""
	}
	return s[:j]
}

// TestPixAuthorizationPageWritesMoneyInItsLanguage: the hosted authorization page writes the
// maximum per charge the way its language writes money, as every other hosted page and e-mail:
// R$ 99,90 in Portuguese, R$99.90 in English.
func TestPixAuthorizationPageWritesMoneyInItsLanguage(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	for locale, want := range map[string]string{"pt-BR": "R$ 99,90", "en-US": "R$99.90"} {
		c := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "joe@example.com", "name": "Joe", "preferred_locales": []string{locale}})
		is.Equal(c.Status, 200)
		r := e.Do("POST", "/v1/pix-authorizations", e.Test, map[string]any{"customer": c.Str("id"), "max_amount": 9990, "interval": "month"})
		is.Equal(r.Status, 200)
		status, page, _ := e.openPage(t, r.Str("url"))
		is.Equal(status, 200)
		is.True(strings.Contains(page, `data-testid="pixauth-max-amount">`+want+`<`)) // the amount in the page's language
	}
}
