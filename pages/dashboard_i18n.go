package pages

// ptBR translates the dashboard's English interface strings into Portuguese (Brazil).
var ptBR = map[string]string{
	"Home": "Início", "Payments": "Pagamentos", "Checkout sessions": "Sessões de checkout", "Customers": "Clientes",
	"Invoices": "Faturas", "Subscriptions": "Assinaturas", "Events": "Eventos", "Webhooks": "Webhooks",
	"API keys": "Chaves de API", "Request logs": "Logs de requisições", "Settings": "Configurações",
	"Sign in": "Entrar", "Sign out": "Sair", "E-mail": "E-mail", "Password": "Senha",
	"Test mode: sandbox data, no real money moves.": "Modo de teste: dados do sandbox, nenhum dinheiro real se move.",
	"Test mailbox":   "E-mails de teste",
	"Switch to live": "Ir para produção", "Switch to test": "Ir para teste", "Skip to content": "Pular para o conteúdo",
	"Main navigation": "Navegação principal", "Previous": "Anterior", "Next": "Próxima", "Nothing here yet.": "Nada aqui ainda.",
	"Authenticator code": "Código do autenticador", "Verify": "Verificar", "Account": "Conta",
	"The e-mail or password is wrong, or the account is locked for 15 minutes after 10 failed attempts.": "E-mail ou senha incorretos, ou a conta está bloqueada por 15 minutos após 10 tentativas.",
	"The code is wrong.": "O código está incorreto.", "Name": "Nome", "Scopes": "Escopos", "Environment": "Ambiente",
	"Expires at (optional, UTC)": "Expira em (opcional, UTC)", "Create key": "Criar chave", "Revoke": "Revogar",
	"Active keys": "Chaves ativas", "Revoked keys": "Chaves revogadas", "Create a key": "Criar uma chave",
	"Status": "Status", "Amount": "Valor", "Method": "Método", "Created": "Criado em", "Customer": "Cliente", "Description": "Descrição",
	"Type": "Tipo", "Events of this object": "Eventos deste objeto", "Requests for this object": "Requisições deste objeto",
	"Deliveries": "Entregas", "Resend": "Reenviar", "Add endpoint": "Adicionar endpoint", "Endpoint URL": "URL do endpoint",
	"Events to send (comma separated, * for all)": "Eventos a enviar (separados por vírgula, * para todos)",
	"Filter": "Filtrar", "Path": "Caminho", "Key": "Chave", "Request id": "Id da requisição", "Duration": "Duração",
	"Request body": "Corpo da requisição", "Response body": "Corpo da resposta", "Time zone (display only)": "Fuso horário (apenas exibição)",
	"Save": "Salvar", "Audit trail": "Trilha de auditoria", "Who": "Quem", "Action": "Ação", "Object": "Objeto", "Detail": "Detalhe",
	"Today's volume per method": "Volume de hoje por método", "Recent payments": "Pagamentos recentes",
	"Sandbox clock": "Relógio do sandbox", "Advance by (e.g. 24h, 30m)": "Avançar em (ex.: 24h, 30m)", "Advance": "Avançar",
	"Set a password": "Definir senha", "New password (at least 10 characters)": "Nova senha (mínimo de 10 caracteres)",
	"Language": "Idioma", "Two-factor authentication": "Autenticação em dois fatores", "Enable": "Ativar", "Disable": "Desativar",
	"Last used": "Último uso", "Expires": "Expira", "Revoked by": "Revogada por", "Revoked at": "Revogada em", "Secret rotation": "Rotação do segredo",
	"Rotate secret": "Rotacionar segredo", "Search by e-mail": "Buscar por e-mail", "Token (shown once, store it now)": "Token (exibido uma vez, guarde agora)",
	"Attempts": "Tentativas", "People": "Pessoas", "Role": "Papel", "Total": "Total", "Number": "Número", "Due date": "Vencimento",
	"Current period end": "Fim do período atual", "Currency": "Moeda", "Page not found.": "Página não encontrada.",
	"Your role does not allow this.": "Seu papel não permite esta ação.", "Done.": "Feito.",
	"Sign-in link expired or already used.": "Link de acesso expirado ou já utilizado.",
	"Checkout display name":                 "Nome exibido no checkout", "Checkout primary color (#RRGGBB)": "Cor principal do checkout (#RRGGBB)",
	"Checkout logo URL (https)": "URL do logotipo do checkout (https)",
	"Resend to every endpoint":  "Reenviar para todos os endpoints",
	"Disputes":                  "Disputas", "Reason": "Motivo",
	"Add a person": "Adicionar pessoa", "One-time sign-in link for": "Link de acesso único para",
	"The form expired; sign in again.":      "O formulário expirou; entre novamente.",
	"Unknown status %q. Choose one of: %s.": "Status desconhecido %q. Escolha um destes: %s.",
	"expired":                               "expirada", "Remove": "Remover", "Organization": "Organização", "Switch": "Trocar",
	"Switch organization": "Trocar de organização", "Now": "Agora", "Secret": "Segredo",
	"Too many failed sign-ins from your network address. Try again in %d minutes.": "Muitas tentativas de acesso sem sucesso a partir do seu endereço de rede. Tente de novo em %d minutos.",
	"The form could not be read.": "Não foi possível ler o formulário.",
	"The field %s holds invisible control characters or text that is not UTF-8; remove them and send the form again.": "O campo %s contém caracteres de controle invisíveis ou texto que não é UTF-8; remova-os e envie o formulário de novo.", "Method not allowed.": "Método não permitido.",
	"Requests made with this key": "Requisições feitas com esta chave",
	"Sign in first.":              "Entre primeiro.", "Internal error; request": "Erro interno; requisição",
}

// T translates an English interface string into lang (pt-BR by default); unknown strings stay English.
func T(lang, s string) string {
	if lang == "en" {
		return s
	}
	if t, ok := ptBR[s]; ok {
		return t
	}
	return s
}

// ptBRValues names API values (statuses, roles, payment methods) in Portuguese, by kind since
// one value can mean different things ("succeeded" is an approved payment but a delivered
// webhook). English pages show the API value itself; filters keep the API value as the value.
var ptBRValues = map[string]map[string]string{
	"payment": {"requires_payment_method": "Aguardando pagamento", "requires_confirmation": "Aguardando confirmação",
		"requires_action": "Aguardando ação do cliente", "processing": "Processando", "requires_capture": "Aguardando captura",
		"succeeded": "Aprovado", "canceled": "Cancelado"},
	"checkout": {"open": "Aberta", "complete": "Concluída", "expired": "Expirada"},
	"invoice":  {"draft": "Rascunho", "open": "Em aberto", "paid": "Paga", "void": "Anulada", "uncollectible": "Incobrável"},
	"subscription": {"incomplete": "Incompleta", "incomplete_expired": "Incompleta expirada", "trialing": "Em período de teste",
		"active": "Ativa", "past_due": "Em atraso", "canceled": "Cancelada", "unpaid": "Não paga", "paused": "Pausada"},
	"dispute": {"warning_needs_response": "Alerta: aguardando resposta", "warning_under_review": "Alerta: em análise",
		"warning_closed": "Alerta encerrado", "needs_response": "Aguardando resposta", "under_review": "Em análise",
		"won": "Ganha", "lost": "Perdida"},
	"webhook":  {"enabled": "Ativo", "disabled": "Desativado"},
	"delivery": {"succeeded": "Entregue", "failed": "Falhou", "pending": "Pendente"},
	"role":     {"owner": "Proprietário", "admin": "Administrador", "developer": "Desenvolvedor", "viewer": "Leitor"},
	"method":   {"credit_card": "Cartão de crédito", "debit_card": "Cartão de débito", "pix": "Pix", "boleto": "Boleto"},
}

// V is the label of the API value v of the given kind ("payment", "role", "method", …) in lang.
func V(lang, kind, v string) string {
	if lang == "en" {
		return v
	}
	if t, ok := ptBRValues[kind][v]; ok {
		return t
	}
	return v
}
