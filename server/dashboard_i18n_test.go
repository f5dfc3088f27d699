package server_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"

	"troco/db"
	"troco/server/domain"
)

var dashErrorRe = regexp.MustCompile(`(?s)<p class="error" role="alert">(.*?)</p>`)

// dashError returns the error message a dashboard page shows ("" when none).
func dashError(body string) string {
	m := dashErrorRe.FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// englishWords are words of the operations' English messages that Portuguese messages never use.
var englishWords = regexp.MustCompile(`\b(must|cannot|already|Missing|No such|Unknown|choose|invalid|should|the|is|are|at least|at most|only)\b`)

// inputValue returns the value attribute of the input named name ("" when absent).
func inputValue(body, name string) string {
	m := regexp.MustCompile(`name="` + regexp.QuoteMeta(name) + `"[^>]*value="([^"]*)"`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// TestDashboardErrorsInPortuguese walks the error paths of every dashboard form as a person whose
// language is pt-BR (the default): each page shows its error in Portuguese (validation errors of
// the operations included, with the values they name) and keeps what was typed.
func TestDashboardErrorsInPortuguese(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	owner := e.signedIn(e.Org.ID, "dona@example.com", domain.RoleOwner)

	check := func(what, path string, form url.Values, wantStatus int, want string) string {
		t.Helper()
		st, body, _ := owner.post(path, form)
		msg := dashError(body)
		if st != wantStatus || !strings.Contains(msg, want) || englishWords.MatchString(msg) {
			t.Fatalf("%s: status %d, error %q; want %d and a Portuguese message containing %q", what, st, msg, wantStatus, want)
		}
		is.True(strings.Contains(body, `lang="pt-BR"`))
		return body
	}

	// Webhook endpoints (the API's validation).
	body := check("bad url", "/dashboard/test/webhooks", url.Values{"url": {"ftp://example.com/x"}, "enabled_events": {"customer.*"}, "description": {"meu endpoint"}},
		http.StatusBadRequest, "A URL deve ser completa")
	is.Equal(inputValue(body, "url"), "ftp://example.com/x") // what was typed stays
	is.Equal(inputValue(body, "enabled_events"), "customer.*")
	is.Equal(inputValue(body, "description"), "meu endpoint")
	check("url with credentials", "/dashboard/test/webhooks", url.Values{"url": {"https://a:b@example.com"}, "enabled_events": {"*"}}, http.StatusBadRequest, "usuário nem senha")
	check("url with fragment", "/dashboard/test/webhooks", url.Values{"url": {"https://example.com/#x"}, "enabled_events": {"*"}}, http.StatusBadRequest, "fragmento")
	check("live http url", "/dashboard/live/webhooks", url.Values{"url": {"http://example.com/h"}, "enabled_events": {"*"}}, http.StatusBadRequest, "devem usar https://")
	check("live loopback url", "/dashboard/live/webhooks", url.Values{"url": {"https://localhost/h"}, "enabled_events": {"*"}}, http.StatusBadRequest, "loopback")
	body = check("unknown event", "/dashboard/test/webhooks", url.Values{"url": {"https://example.com/h"}, "enabled_events": {"pagamento.feito"}}, http.StatusBadRequest, `Tipo de evento desconhecido "pagamento.feito"`)
	is.Equal(inputValue(body, "enabled_events"), "pagamento.feito")
	check("no events", "/dashboard/test/webhooks", url.Values{"url": {"https://example.com/h"}, "enabled_events": {" , "}}, http.StatusBadRequest, "ao menos um tipo de evento")
	check("star and more", "/dashboard/test/webhooks", url.Values{"url": {"https://example.com/h"}, "enabled_events": {"*, customer.created"}}, http.StatusBadRequest, "use * sozinho")
	check("long description", "/dashboard/test/webhooks", url.Values{"url": {"https://example.com/h"}, "enabled_events": {"*"}, "description": {strings.Repeat("d", 5001)}}, http.StatusBadRequest, "no máximo 5000 caracteres")
	check("missing url", "/dashboard/test/webhooks", url.Values{"url": {""}, "enabled_events": {"*"}}, http.StatusBadRequest, "Falta o campo obrigatório url")

	// An event resent when no endpoint subscribes to it.
	e.createCustomer(e.Test)
	var evID string
	for _, ev := range e.Do("GET", "/v1/events", e.Test, nil).Data() {
		evID = ev["id"].(string)
	}
	check("resend without endpoint", "/dashboard/test/events/"+evID+"/resend", nil, http.StatusConflict, "Nenhum endpoint de webhook ativo deste ambiente assina customer.created")
	epID, _ := e.createEndpoint(e.Test, "https://example.com/hooks", "invoice.*")
	check("resend unknown event", "/dashboard/test/webhooks/"+epID+"/resend", url.Values{"event": {"evt_nope"}}, http.StatusNotFound, "Não existe evento com o id 'evt_nope'")
	check("resend unsubscribed", "/dashboard/test/webhooks/"+epID+"/resend", url.Values{"event": {evID}}, http.StatusBadRequest, "não assina customer.created")
	owner.post("/dashboard/test/webhooks/"+epID+"/disable", nil)
	check("resend to disabled", "/dashboard/test/webhooks/"+epID+"/resend", url.Values{"event": {evID}}, http.StatusConflict, "está desativado")

	// API keys: the form's own checks and the operation's.
	body = check("no scope", "/dashboard/test/api-keys", url.Values{"name": {"Loja"}, "environment": {"live"}, "expires_at": {"2031-05-01T10:00"}}, http.StatusBadRequest, "Escolha ao menos um escopo")
	is.Equal(inputValue(body, "name"), "Loja")
	is.Equal(inputValue(body, "expires_at"), "2031-05-01T10:00")
	is.True(regexp.MustCompile(`<option value="live" selected`).MatchString(body))  // the environment chosen stays
	is.True(!regexp.MustCompile(`name="scope_read"[^>]*checked`).MatchString(body)) // and the unchecked scopes stay unchecked
	check("admin scope", "/dashboard/test/api-keys", url.Values{"name": {"x"}, "scope_admin": {"admin"}, "environment": {"test"}}, http.StatusBadRequest, "Chaves admin não são oferecidas")
	check("bad environment", "/dashboard/test/api-keys", url.Values{"name": {"x"}, "scope_read": {"read"}, "environment": {"prod"}}, http.StatusBadRequest, "O ambiente deve ser test ou live")
	check("bad expiry", "/dashboard/test/api-keys", url.Values{"name": {"x"}, "scope_read": {"read"}, "environment": {"test"}, "expires_at": {"amanhã"}}, http.StatusBadRequest, "A expiração deve ser uma data e hora")
	check("past expiry", "/dashboard/test/api-keys", url.Values{"name": {"x"}, "scope_read": {"read"}, "environment": {"test"}, "expires_at": {"2001-01-01T00:00"}}, http.StatusBadRequest, "deve estar no futuro")
	check("platform key", "/dashboard/test/api-keys", url.Values{"name": {"x"}, "scope_platform_admin": {"platform_admin"}, "environment": {"test"}}, http.StatusBadRequest, "não é uma plataforma")
	check("long name", "/dashboard/test/api-keys", url.Values{"name": {strings.Repeat("n", 201)}, "scope_read": {"read"}, "environment": {"test"}}, http.StatusBadRequest, "O nome deve ter no máximo 200 caracteres")
	st, body, _ := owner.post("/dashboard/test/api-keys", url.Values{"name": {"Loja"}, "scope_read": {"read"}, "environment": {"test"}})
	is.Equal(st, http.StatusOK)
	is.Equal(inputValue(body, "name"), "") // after a success the form is empty again
	keyID := regexp.MustCompile(`/api-keys/(key_[A-Za-z0-9]+)/revoke`).FindStringSubmatch(body)[1]
	body = check("long reason", "/dashboard/test/api-keys/"+keyID+"/revoke", url.Values{"reason": {strings.Repeat("r", 501)}}, http.StatusBadRequest, "O motivo deve ter no máximo 500 caracteres")
	is.Equal(inputValue(body, "reason"), strings.Repeat("r", 501))
	owner.post("/dashboard/test/api-keys/"+keyID+"/revoke", url.Values{"reason": {"vazou"}})
	check("revoked twice", "/dashboard/test/api-keys/"+keyID+"/revoke", url.Values{"reason": {"de novo"}}, http.StatusConflict, "já foi revogada")

	// Settings: time zone and branding (the organization's operation).
	body = check("bad time zone", "/dashboard/test/settings", url.Values{"timezone": {"America/Recife_Nova"}, "display_name": {"Loja da Ana"}, "primary_color": {"#0A7C55"}},
		http.StatusBadRequest, `"America/Recife_Nova" não existe`)
	is.True(strings.HasPrefix(dashError(body), "“Fuso horário (apenas exibição)” deve ser")) // named as the form names it
	is.Equal(inputValue(body, "timezone"), "America/Recife_Nova")
	is.Equal(inputValue(body, "display_name"), "Loja da Ana")
	is.Equal(inputValue(body, "primary_color"), "#0A7C55")
	body = check("bad colour", "/dashboard/test/settings", url.Values{"timezone": {"America/Sao_Paulo"}, "primary_color": {"verde"}}, http.StatusBadRequest, "deve ser uma cor hexadecimal")
	is.Equal(inputValue(body, "primary_color"), "verde")
	check("http logo", "/dashboard/test/settings", url.Values{"timezone": {"America/Sao_Paulo"}, "logo_url": {"http://example.com/logo.png"}}, http.StatusBadRequest, "deve ser uma URL https://")
	check("long display name", "/dashboard/test/settings", url.Values{"timezone": {"America/Sao_Paulo"}, "display_name": {strings.Repeat("x", 101)}}, http.StatusBadRequest, "no máximo 100 caracteres")

	// People.
	body = check("bad e-mail", "/dashboard/test/settings/people", url.Values{"email": {"ana arroba example"}, "role": {"admin"}}, http.StatusBadRequest, "O e-mail deve ser um endereço")
	is.Equal(inputValue(body, "email"), "ana arroba example")
	is.True(regexp.MustCompile(`<option value="admin" selected`).MatchString(body))
	check("bad role", "/dashboard/test/settings/people", url.Values{"email": {"ana@example.com"}, "role": {"chefe"}}, http.StatusBadRequest, "O papel deve ser")
	check("no e-mail", "/dashboard/test/settings/people", url.Values{"email": {""}, "role": {"admin"}}, http.StatusBadRequest, "Falta o campo obrigatório email")
	check("twice", "/dashboard/test/settings/people", url.Values{"email": {"dona@example.com"}, "role": {"admin"}}, http.StatusConflict, "já pertence à organização")
	users := e.usersOf(e.Org.ID)
	check("last owner", "/dashboard/test/settings/people/"+users["dona@example.com"]+"/remove", nil, http.StatusConflict, "ao menos um proprietário")

	// The sandbox clock.
	body = check("bad advance", "/dashboard/test/settings/clock", url.Values{"advance": {"amanhã"}}, http.StatusBadRequest, "O avanço deve ser uma duração")
	is.Equal(inputValue(body, "advance"), "amanhã")
	check("clock in live", "/dashboard/live/settings/clock", url.Values{"advance": {"1h"}}, http.StatusBadRequest, "A viagem no tempo está desativada")

	// The account page.
	check("short password", "/dashboard/account", url.Values{"action": {"password"}, "password": {"curta"}}, http.StatusBadRequest, "A senha deve ter ao menos 10 caracteres")
	check("bad language", "/dashboard/account", url.Values{"action": {"language"}, "language": {"fr"}}, http.StatusBadRequest, "O idioma deve ser pt-BR ou en")
	check("code before set-up", "/dashboard/account", url.Values{"action": {"totp-enable"}, "code": {"123456"}}, http.StatusBadRequest, "Comece a configuração antes")
	check("unknown action", "/dashboard/account", url.Values{"action": {"voar"}}, http.StatusBadRequest, "Ação desconhecida")
	owner.post("/dashboard/account", url.Values{"action": {"totp-start"}})
	check("wrong code", "/dashboard/account", url.Values{"action": {"totp-enable"}, "code": {"000000"}}, http.StatusBadRequest, "O código está incorreto")

	// The same failures in English for a person who chose English.
	owner.post("/dashboard/account", url.Values{"action": {"language"}, "language": {"en"}})
	_, body, _ = owner.post("/dashboard/test/settings", url.Values{"timezone": {"Mars/Olympus"}})
	is.True(strings.Contains(dashError(body), "must be an IANA time zone name"))
}

// usersOf maps the e-mails of an organization's people to their ids.
func (e *testEnv) usersOf(orgID string) map[string]string {
	e.t.Helper()
	out := map[string]string{}
	err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		us, err := tx.ListUsers(orgID)
		for _, u := range us {
			out[u.Email] = u.ID
		}
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// apiValues are API values (statuses, roles, payment methods) a Portuguese page names in
// Portuguese; the JSON view (<pre>), the ids (<code>) and the filters' option values stay API values.
var apiValues = regexp.MustCompile(`\b(succeeded|requires_payment_method|requires_capture|canceled|enabled|disabled|owner|admin|developer|viewer|credit_card|pix|boleto|active|trialing|past_due|incomplete|draft|paid|open|void|uncollectible|failed)\b`)

// visibleText drops what a Portuguese page legitimately shows as API text: the JSON view, code,
// attributes (filter values, links) and the error message listing a filter's statuses.
func visibleText(body string) string {
	for _, re := range []*regexp.Regexp{regexp.MustCompile(`(?s)<pre.*?</pre>`), regexp.MustCompile(`(?s)<code.*?</code>`),
		regexp.MustCompile(`(?s)<head.*?</head>`), regexp.MustCompile(`(?s)<[^>]*>`),
		regexp.MustCompile(`[a-z_]+(\.[a-z_]+)+`)} { // event types stay API identifiers
		body = re.ReplaceAllString(body, " ")
	}
	return body
}

// On Portuguese pages statuses, roles and payment methods read in Portuguese in lists, detail
// pages, filters and the chart; English pages keep the API values.
func TestDashboardValuesInPortuguese(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cus := e.payCustomer(e.Test, "ana@example.com")
	card := e.payIntent(e.Test, 10000, map[string]any{"customer": cus, "payment_method_types": []string{"credit_card"}})
	is.Equal(e.payConfirm(e.Test, card.Str("id"), map[string]any{"payment_method_type": "credit_card", "card": payCard("4242424242424242")}).Str("status"), "succeeded")
	waiting := e.payIntent(e.Test, 2000, map[string]any{"customer": cus})
	pm := e.subSavedCard(cus, "4242424242424242")
	price := e.coPrice(e.Test, "Plano Pro", 4990, map[string]any{"interval": "month"})
	sub := e.subCreate(map[string]any{"customer": cus, "items": []any{map[string]any{"price": price}}, "default_payment_method": pm})
	inv := e.invCreate(map[string]any{"customer": cus, "lines": []any{map[string]any{"amount": 5000, "description": "Consultoria"}}})
	epID, _ := e.createEndpoint(e.Test, "https://example.com/hooks", "*")
	b := e.signedIn(e.Org.ID, "dona@example.com", domain.RoleOwner)
	e.newUser(e.Org.ID, "dev@example.com", domain.RoleDeveloper)

	pagesWant := map[string][]string{
		"":                                  {"Cartão de crédito", "Pix", "Boleto"},
		"/payments":                         {"Aprovado", "Aguardando pagamento", "Cartão de crédito"},
		"/payments/" + card.Str("id"):       {"Aprovado", "Cartão de crédito"},
		"/payments/" + waiting.Str("id"):    {"Aguardando pagamento"},
		"/subscriptions":                    {"Ativa"},
		"/subscriptions/" + sub.Str("id"):   {"Ativa"},
		"/invoices":                         {"Rascunho"},
		"/invoices/" + inv.Str("id"):        {"Rascunho"},
		"/customers":                        nil,
		"/customers/" + cus:                 {"Aprovado"},
		"/settings":                         {"Proprietário", "Desenvolvedor"},
		"/webhooks":                         {"Ativo"},
		"/webhooks/" + epID:                 {"Ativo"},
		"/account":                          {"Proprietário"},
		"/checkout-sessions":                {"Aberta"},
		"/payments?status=requires_capture": {"Aguardando captura"},
		"/subscriptions?status=past_due":    {"Em atraso"},
	}
	for p, want := range pagesWant {
		path := "/dashboard/test" + p
		if p == "/account" {
			path = "/dashboard/account"
		}
		st, body, _ := b.get(path)
		is.Equal(st, http.StatusOK)
		text := visibleText(body)
		if m := apiValues.FindString(text); m != "" {
			t.Errorf("%s shows the API value %q on a Portuguese page", p, m)
		}
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s lacks %q", p, w)
			}
		}
	}
	// Filters keep the API value as the value sent.
	_, body, _ := b.get("/dashboard/test/payments")
	is.True(regexp.MustCompile(`<option value="succeeded"[^>]*>Aprovado</option>`).MatchString(body))

	// English pages keep the API values.
	b.post("/dashboard/account", url.Values{"action": {"language"}, "language": {"en"}})
	_, body, _ = b.get("/dashboard/test/payments")
	is.True(strings.Contains(visibleText(body), "succeeded"))
	is.True(strings.Contains(visibleText(body), "credit_card"))
	_, body, _ = b.get("/dashboard/test")
	is.True(strings.Contains(body, "credit_card: R$ "))
}
