package pages

// pixAuthText holds the hosted authorization page's strings: [pt-BR, en].
var pixAuthText = map[string][2]string{
	"title":        {"Autorizar Pix Automático", "Authorize Pix Automático"},
	"sandbox":      {"Ambiente de testes: nenhum dinheiro real é movimentado.", "Test mode: no real money moves."},
	"approve":      {"Aprovar autorização", "Approve authorization"},
	"reject":       {"Recusar autorização", "Reject authorization"},
	"payee":        {"Recebedor", "Payee"},
	"payer":        {"Pagador", "Payer"},
	"max_amount":   {"Valor máximo por cobrança", "Maximum per charge"},
	"interval":     {"Periodicidade", "Frequency"},
	"start":        {"Início", "Starts"},
	"end":          {"Término", "Ends"},
	"description":  {"Descrição", "Description"},
	"scan":         {"Abra o app do seu banco, escolha Pix Automático e escaneie o QR Code:", "Open your bank's app, choose Pix Automático and scan the QR code:"},
	"qr_alt":       {"QR Code da autorização Pix Automático", "QR code of the Pix Automático authorization"},
	"no_end":       {"sem data de término", "no end date"},
	"week":         {"semanal", "weekly"},
	"month":        {"mensal", "monthly"},
	"quarter":      {"trimestral", "quarterly"},
	"year":         {"anual", "yearly"},
	"pending":      {"Aguardando a sua autorização.", "Waiting for your authorization."},
	"approved":     {"Autorização aprovada: as cobranças serão feitas automaticamente.", "Authorization approved: the charges will be made automatically."},
	"rejected":     {"Autorização recusada.", "Authorization rejected."},
	"canceled":     {"Autorização cancelada.", "Authorization canceled."},
	"expired":      {"Esta autorização expirou.", "This authorization expired."},
	"live_answer":  {"Responda no app do seu banco; esta página mostra a resposta quando o banco a confirmar.", "Answer in your bank's app; this page shows the answer once your bank confirms it."},
	"lang_switch":  {"English", "Português"},
	"date_layout":  {"02/01/2006", "Jan 2, 2006"},
	"html_lang":    {"pt-BR", "en"},
	"sandbox_mark": {"TESTE", "TEST"},
}

// PixAuthText is a string of the hosted authorization page in lang (pt-BR unless En).
func PixAuthText(lang Lang, key string) string {
	t := pixAuthText[key]
	if lang == En {
		return t[1]
	}
	return t[0]
}

// T is a string of the page in its language.
func (p PixAuthPage) T(key string) string { return PixAuthText(p.Lang, key) }
