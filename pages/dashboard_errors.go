package pages

import (
	"fmt"

	"troco/server/domain"
)

// ptBRErrors translates the messages of the operations' errors a dashboard page can show, keyed
// by the English format of the error (domain.Error.Format), so the values the error names (a
// parameter, a number, an id) are kept. The translation takes the same arguments in the same
// order.
var ptBRErrors = map[string]string{
	// Generic shapes.
	"Missing required param: %s.":                                                 "Falta o campo obrigatório %s.",
	"No such %s: '%s'":                                                            "Não existe %s: '%s'.",
	"%s must be at most %d characters.":                                           "%s deve ter no máximo %d caracteres.",
	"%s must be a valid e-mail address.":                                          "%s deve ser um endereço de e-mail válido.",
	"%s must be an absolute URL starting with http:// or https://.":               "%s deve ser um endereço completo começando com http:// ou https://.",
	"%s must be an IANA time zone name such as America/Sao_Paulo.":                "%s deve ser o nome de um fuso horário IANA, como America/Sao_Paulo.",
	"%s must be an IANA time zone name such as America/Sao_Paulo; %q is unknown.": "%s deve ser o nome de um fuso horário IANA, como America/Sao_Paulo; %q não existe.",

	// Webhook endpoints and redelivery.
	"url must be at most %d characters.":                                                     "A URL deve ter no máximo %d caracteres.",
	"url must be an absolute URL starting with http:// or https://.":                         "A URL deve ser completa, começando com http:// ou https://.",
	"url must not contain a user name or password.":                                          "A URL não pode conter usuário nem senha.",
	"url must not contain a fragment (#).":                                                   "A URL não pode conter um fragmento (#).",
	"url has an invalid port.":                                                               "A porta da URL é inválida.",
	"url must name a host.":                                                                  "A URL deve indicar um servidor.",
	"url cannot be null.":                                                                    "A URL não pode ficar vazia.",
	"Live webhook endpoints must use https://.":                                              "Endpoints de webhook de produção devem usar https://.",
	"url must write an IPv4 address as four decimal numbers (%s).":                           "A URL deve escrever um endereço IPv4 como quatro números decimais (%s).",
	"Live webhook endpoints cannot point to loopback, private or link-local addresses (%s).": "Endpoints de webhook de produção não podem apontar para endereços de loopback, privados ou link-local (%s).",
	`enabled_events must list at least one event type, or ["*"] for every type.`:             "Informe ao menos um tipo de evento, ou * para todos.",
	"enabled_events can list at most %d event types.":                                        "Informe no máximo %d tipos de evento.",
	"Unknown event type %q in enabled_events; use \"*\", a type listed in the API reference, or a prefix wildcard such as \"customer.*\".": "Tipo de evento desconhecido %q; use *, um tipo listado na referência da API ou um prefixo com curinga, como customer.*.",
	`"*" already selects every event type; send ["*"] alone.`:                                                                              "* já seleciona todos os tipos de evento; use * sozinho.",
	"An organization can have at most %d webhook endpoints per environment; delete one first.":                                             "Uma organização pode ter no máximo %d endpoints de webhook por ambiente; exclua um antes.",
	"Webhook endpoint %s is disabled; enable it (disabled: false) before redelivering.":                                                    "O endpoint de webhook %s está desativado; ative-o antes de reenviar.",
	"Webhook endpoint %s does not subscribe to %s.":                                                                                        "O endpoint de webhook %s não assina %s.",
	"No enabled webhook endpoint of this environment subscribes to %s.":                                                                    "Nenhum endpoint de webhook ativo deste ambiente assina %s.",
	"expire_current_secret_in_seconds must be between 0 and %d (7 days).":                                                                  "expire_current_secret_in_seconds deve estar entre 0 e %d (7 dias).",
	"disabled must be true or false.":                                                                                                      "disabled deve ser true ou false.",

	// API keys.
	"unknown scope %q: use read, write, admin or platform_admin.":                                        "Escopo desconhecido %q: use read, write, admin ou platform_admin.",
	"platform_admin cannot be combined with other scopes.":                                               "platform_admin não pode ser combinado com outros escopos.",
	"platform_admin keys belong to platforms; %s is not a platform.":                                     "Chaves platform_admin pertencem a plataformas; %s não é uma plataforma.",
	"A platform key can be created only when the platform is active and its split rules are configured.": "Uma chave de plataforma só pode ser criada quando a plataforma está ativa e suas regras de divisão estão configuradas.",
	"expires_at must be in the future.":                                                                  "A data de expiração deve estar no futuro.",
	"API key %s was already revoked.":                                                                    "A chave de API %s já foi revogada.",
	"name must be at most %d characters.":                                                                "O nome deve ter no máximo %d caracteres.",
	"admin keys are not offered in the dashboard.":                                                       "Chaves admin não são oferecidas no painel.",
	"choose at least one scope (read, write or platform_admin).":                                         "Escolha ao menos um escopo (read, write ou platform_admin).",
	"environment must be test or live.":                                                                  "O ambiente deve ser test ou live.",
	"expires_at must be a date and time such as 2030-01-31T12:00.":                                       "A expiração deve ser uma data e hora, como 2030-01-31T12:00.",
	"reason must have at most %d characters.":                                                            "O motivo deve ter no máximo %d caracteres.",

	// People.
	"email must be an e-mail address such as ana@example.com.":                            "O e-mail deve ser um endereço como ana@example.com.",
	"role must be owner, admin, developer or viewer.":                                     "O papel deve ser proprietário (owner), administrador (admin), desenvolvedor (developer) ou leitor (viewer).",
	"%s already belongs to organization %s.":                                              "%s já pertence à organização %s.",
	"An organization keeps at least one owner; make another person owner first.":          "Uma organização mantém ao menos um proprietário; torne outra pessoa proprietária antes.",
	"Only an owner can remove an owner.":                                                  "Só um proprietário pode remover um proprietário.",
	"This sign-in does not open that organization; sign in with its e-mail and password.": "Este acesso não abre essa organização; entre com o e-mail e a senha dela.",
	"The account in organization %s is locked for 15 minutes after 10 failed attempts.":   "A conta na organização %s está bloqueada por 15 minutos após 10 tentativas.",

	// Settings (branding, time zone).
	"%s[display_name] cannot be empty; send null to inherit the organization's name.": "%s[display_name] não pode ficar vazio.",
	"%s[logo_url] must be an https:// URL (the hosted page is served over HTTPS).":    "%s[logo_url] deve ser uma URL https:// (a página hospedada é servida por HTTPS).",
	"%s[%s] must be a hex colour such as #0A7C55.":                                    "%s[%s] deve ser uma cor hexadecimal, como #0A7C55.",
	"%s[border_style] must be rounded, rectangular or pill.":                          "%s[border_style] deve ser rounded, rectangular ou pill.",
	"name cannot be empty.": "O nome não pode ficar vazio.",

	"Your role does not allow this.": "Seu papel não permite esta ação.",

	// Account.
	"the password must have at least %d characters.": "A senha deve ter ao menos %d caracteres.",
	"the password must have at most 1024 bytes.":     "A senha deve ter no máximo 1024 bytes.",
	"language must be pt-BR or en.":                  "O idioma deve ser pt-BR ou en.",
	"start the set-up first.":                        "Comece a configuração antes.",
	"the code is wrong.":                             "O código está incorreto.",
	"the password is wrong.":                         "A senha está incorreta.",
	"unknown action.":                                "Ação desconhecida.",

	// Sandbox clock.
	"Time travel is disabled; start the server with --allow-time-travel (test mode only).": "A viagem no tempo está desativada; inicie o servidor com --allow-time-travel (só no modo de teste).",
	"advance must be a duration between 1s and the maximum, such as 24h or 30m.":           "O avanço deve ser uma duração de ao menos 1s, como 24h ou 30m.",
}

// ptBRKinds names, in Portuguese, the kinds of objects a "No such …" error names.
var ptBRKinds = map[string]string{
	"event": "evento", "webhook_endpoint": "endpoint de webhook", "api key": "chave de API", "user": "pessoa",
	"organization": "organização", "customer": "cliente", "payment_intent": "pagamento", "invoice": "fatura",
	"subscription": "assinatura", "checkout_session": "sessão de checkout", "dispute": "disputa",
}

// ErrorText is the message of an operation's error in lang: the English message, or its
// translation from the error's format and values. An error with no translation is described by
// its code and field in Portuguese rather than shown in English.
func ErrorText(lang string, e *domain.Error) string {
	if lang == "en" {
		return e.Message
	}
	if e.Format == domain.NotFoundFormat && len(e.Args) == 2 {
		kind := fmt.Sprint(e.Args[0])
		if k, ok := ptBRKinds[kind]; ok {
			kind = k
		}
		return fmt.Sprintf("Não existe %s com o id '%s'.", kind, e.Args[1])
	}
	if e.Format != "" {
		if t, ok := ptBRErrors[e.Format]; ok {
			return fmt.Sprintf(t, e.Args...)
		}
	}
	if t, ok := ptBRErrors[e.Message]; ok {
		return t
	}
	switch {
	case e.Code == domain.CodeParameterMissing:
		return fmt.Sprintf("Falta o campo obrigatório %s.", e.Param)
	case e.Code == domain.CodeResourceMissing:
		return "Objeto não encontrado."
	case e.Param != "":
		return fmt.Sprintf("O valor de %s é inválido.", e.Param)
	case e.Status == 409:
		return "Esta operação não é possível no estado atual do objeto."
	}
	return "Não foi possível concluir a operação."
}

// HasErrorText reports whether format has a translation (tests list the formats a page shows).
func HasErrorText(format string) bool {
	_, ok := ptBRErrors[format]
	return ok
}
