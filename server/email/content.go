// Package email writes and delivers the messages troco sends to an organization's customers:
// receipts, boletos, PIX codes, invoices, renewal notices, failed payments, cancellations and
// refunds. Events queue them (db.Tx.InsertEvent, table domain.EmailForEvent); the Mailer renders
// each one once, in the customer's language and time zone, and delivers it: to the sandbox
// mailbox in test mode, by SMTP in live mode.
package email

import (
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // customers' time zones on hosts without a zoneinfo database

	"troco/pages"
	"troco/server/domain"
)

// DefaultTimezone is the zone of a customer who has not set one.
const DefaultTimezone = "America/Sao_Paulo"

// Locale picks the language of a customer's messages: the first of preferred_locales that troco
// writes (pt-BR or en, matched by language), pt-BR when none is.
func Locale(preferred []string) pages.Lang {
	for _, l := range preferred {
		l = strings.ToLower(l)
		switch {
		case l == "pt" || strings.HasPrefix(l, "pt-"):
			return pages.PtBR
		case l == "en" || strings.HasPrefix(l, "en-"):
			return pages.En
		}
	}
	return pages.PtBR
}

// Zone loads a customer's time zone (DefaultTimezone when empty or unknown).
func Zone(tz string) *time.Location {
	if tz != "" {
		if loc, err := time.LoadLocation(tz); err == nil {
			return loc
		}
	}
	loc, _ := time.LoadLocation(DefaultTimezone)
	return loc
}

// Brand is what a message shows of the organization that sends it.
type Brand struct {
	Name  string
	Logo  string // https URL or empty
	Color string // #RRGGBB
}

// Fact is one labelled value of a message (amount, date, method…).
type Fact struct{ Label, Value string }

// Action is a link button.
type Action struct{ Label, URL string }

// Content is a message before it becomes text and HTML: every kind fills the same shape, so the
// plain-text and HTML parts always say the same thing.
type Content struct {
	Lang      pages.Lang
	Kind      string
	Subject   string
	Heading   string
	Greeting  string
	Intro     []string
	Facts     []Fact
	CodeLabel string // a code to copy: the PIX copia e cola or the boleto's digitable line
	Code      string
	Code2     string // a second code (the boleto's PIX code)
	Code2Lbl  string
	QRImage   string // URL of the PIX QR image
	Actions   []Action
	Outro     []string
	Brand     Brand
	Footer    string
	Sandbox   bool
}

// Absolutize makes every link of the message absolute: a path (a receipt, a hosted invoice, a
// QR image made while no public base URL was known) gets base (https://host[:port]) in front.
// A customer's mail client has no page to resolve a relative link against.
func (c *Content) Absolutize(base string) {
	base = strings.TrimRight(base, "/")
	abs := func(u string) string {
		if base == "" || !strings.HasPrefix(u, "/") || strings.HasPrefix(u, "//") {
			return u
		}
		return base + u
	}
	c.QRImage = abs(c.QRImage)
	for i := range c.Actions {
		c.Actions[i].URL = abs(c.Actions[i].URL)
	}
}

// text is the one table of the messages' texts: key → Portuguese, English.
var text = map[string][2]string{
	"greeting":              {"Olá, %s.", "Hello %s,"},
	"greeting_anon":         {"Olá.", "Hello,"},
	"amount":                {"Valor", "Amount"},
	"date":                  {"Data", "Date"},
	"method":                {"Forma de pagamento", "Payment method"},
	"description":           {"Descrição", "Description"},
	"reference":             {"Referência", "Reference"},
	"due":                   {"Vencimento", "Due"},
	"expires":               {"Válido até", "Valid until"},
	"installments":          {"Parcelas", "Instalments"},
	"invoice_number":        {"Fatura", "Invoice"},
	"next_attempt":          {"Nova tentativa", "Next attempt"},
	"renews_on":             {"Renovação", "Renews on"},
	"ended_on":              {"Encerrada em", "Ended on"},
	"refunded":              {"Valor estornado", "Amount refunded"},
	"view_receipt":          {"Ver recibo", "View receipt"},
	"print_boleto":          {"Abrir boleto para imprimir", "Open the boleto to print"},
	"view_invoice":          {"Ver e pagar a fatura", "View and pay the invoice"},
	"download_pdf":          {"Baixar PDF", "Download PDF"},
	"digitable_line":        {"Linha digitável", "Digitable line"},
	"pix_code":              {"PIX copia e cola", "PIX copy and paste code"},
	"boleto_pix":            {"Ou pague este boleto por PIX", "Or pay this boleto by PIX"},
	"card":                  {"Cartão %s final %s", "%s card ending in %s"},
	"receipt_subject":       {"Recibo de %s: %s", "Your receipt from %s: %s"},
	"receipt_heading":       {"Pagamento confirmado", "Payment received"},
	"receipt_intro":         {"Recebemos o seu pagamento de %s. Guarde este e-mail como comprovante.", "We received your payment of %s. Keep this e-mail as your receipt."},
	"boleto_subject":        {"Seu boleto de %s: %s, vence em %s", "Your boleto from %s: %s, due %s"},
	"boleto_heading":        {"Seu boleto está pronto", "Your boleto is ready"},
	"boleto_intro":          {"Pague o boleto de %s no app do seu banco, em uma lotérica ou em um caixa eletrônico até o vencimento. A compensação leva até 3 dias úteis.", "Pay the boleto of %s in your bank's app, at a lottery shop or an ATM before it is due. It takes up to 3 business days to clear."},
	"pix_subject":           {"Seu código PIX de %s: %s", "Your PIX code from %s: %s"},
	"pix_heading":           {"Pague com PIX", "Pay with PIX"},
	"pix_intro":             {"Abra o app do seu banco, escolha PIX copia e cola e cole o código abaixo para pagar %s. A confirmação é imediata.", "Open your bank's app, choose PIX copy and paste, and paste the code below to pay %s. It confirms instantly."},
	"invoice_subject":       {"Nova fatura de %s: %s, vence em %s", "New invoice from %s: %s, due %s"},
	"invoice_heading":       {"Você tem uma nova fatura", "You have a new invoice"},
	"invoice_intro":         {"%s enviou uma fatura de %s.", "%s sent you an invoice for %s."},
	"upcoming_subject":      {"Sua assinatura de %s será renovada em %s", "Your %s subscription renews on %s"},
	"upcoming_heading":      {"Renovação em breve", "Upcoming renewal"},
	"upcoming_intro":        {"Sua assinatura será renovada em %s, no valor de %s. Nada precisa ser feito se a forma de pagamento estiver em dia.", "Your subscription renews on %s for %s. Nothing to do if your payment method is up to date."},
	"failed_subject":        {"Não conseguimos cobrar sua fatura de %s", "We couldn't collect your %s payment"},
	"failed_heading":        {"Pagamento não aprovado", "Payment failed"},
	"failed_intro":          {"Tentamos cobrar %s e o pagamento não foi aprovado.", "We tried to charge %s and the payment was not approved."},
	"failed_retry":          {"Vamos tentar de novo em %s. Se preferir, atualize a forma de pagamento ou pague a fatura agora.", "We will try again on %s. You can also update your payment method or pay the invoice now."},
	"failed_final":          {"Não faremos novas tentativas automáticas de cobrança. Para pagar a fatura, use o link abaixo.", "No more automatic payment attempts will be made. To pay the invoice, use the link below."},
	"overdue_subject":       {"Fatura vencida de %s: %s", "Overdue invoice from %s: %s"},
	"overdue_heading":       {"Sua fatura venceu", "Your invoice is overdue"},
	"overdue_intro":         {"A fatura de %s venceu em %s e ainda não foi paga.", "The invoice for %s was due on %s and is still unpaid."},
	"overdue_terms":         {"Desde o vencimento incidem multa de %s e juros de %s ao mês, pro rata por dia; o valor atualizado aparece na fatura.", "Since the due date a %s late fee and %s interest a month, pro rata per day, apply; the invoice shows the updated amount."},
	"overdue_pay":           {"Pague agora pela fatura: cartão, PIX ou boleto.", "Pay now from the invoice: card, PIX or boleto."},
	"canceled_subject":      {"Sua assinatura de %s foi cancelada", "Your %s subscription was canceled"},
	"canceled_heading":      {"Assinatura cancelada", "Subscription canceled"},
	"canceled_intro":        {"Sua assinatura de %s foi encerrada. Você não será mais cobrado por ela.", "Your %s subscription has ended. You will not be charged for it again."},
	"refund_subject":        {"Estorno de %s: %s", "Refund from %s: %s"},
	"refund_heading":        {"Estorno realizado", "Refund issued"},
	"refund_intro":          {"%s estornou %s. O valor volta pela mesma forma de pagamento; no cartão, pode levar até duas faturas para aparecer.", "%s refunded %s. It returns to the original payment method; on a card it can take up to two statements to show."},
	"footer":                {"Você recebeu este e-mail porque fez um pagamento a %s pelo troco.", "You received this e-mail because you made a payment to %s through troco."},
	"sandbox":               {"Ambiente de testes: esta mensagem não saiu do troco.", "Test mode: this message never left troco."},
	"method_pix":            {"PIX", "PIX"},
	"method_boleto":         {"Boleto", "Boleto"},
	"installments_fmt":      {"%dx de %s", "%d × %s"},
	"subscription_item":     {"Assinatura", "Subscription"},
	"receipt_pending":       {"Pagamento aguardando confirmação", "Payment pending"},
	"receipt_pending_intro": {"Este pagamento ainda não foi confirmado. O recibo fica disponível aqui assim que for.", "This payment is not confirmed yet. The receipt appears here once it is."},
	"receipt_failed":        {"Pagamento não aprovado", "Payment not approved"},
}

func t(l pages.Lang, key string, args ...any) string {
	m, ok := text[key]
	if !ok {
		return key
	}
	s := m[0]
	if l == pages.En {
		s = m[1]
	}
	if len(args) == 0 {
		return s
	}
	return fmt.Sprintf(s, args...)
}

// FormatTime writes an instant in the customer's zone and language, naming the zone.
func FormatTime(l pages.Lang, at time.Time, loc *time.Location) string {
	at = at.In(loc)
	zone := at.Format("MST")
	if strings.HasPrefix(zone, "-") || strings.HasPrefix(zone, "+") {
		zone = "UTC" + zone
	}
	if l == pages.En {
		return at.Format("Jan 2, 2006, 3:04 PM") + " " + zone
	}
	return at.Format("02/01/2006 às 15:04") + " (" + zone + ")"
}

// FormatDay writes the calendar day of an instant in the customer's zone.
func FormatDay(l pages.Lang, at time.Time, loc *time.Location) string {
	at = at.In(loc)
	if l == pages.En {
		return at.Format("Jan 2, 2006")
	}
	return at.Format("02/01/2006")
}

// formatCivilDate writes a YYYY-MM-DD date (a boleto's due date) in the language.
func formatCivilDate(l pages.Lang, d string) string {
	at, err := time.Parse("2006-01-02", d)
	if err != nil {
		return d
	}
	if l == pages.En {
		return at.Format("Jan 2, 2006")
	}
	return at.Format("02/01/2006")
}

// Header makes a value safe for a mail header: control characters (CR and LF above all, the
// header-injection vector) become spaces, runs of spaces collapse, and the length is bounded.
// go-mail then encodes non-ASCII text (RFC 2047).
func Header(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029' {
			r = ' '
		}
		if r == ' ' {
			if space {
				continue
			}
			space = true
		} else {
			space = false
		}
		b.WriteRune(r)
	}
	out := strings.TrimSpace(b.String())
	if r := []rune(out); len(r) > 200 {
		out = string(r[:200])
	}
	return out
}

// ValidRecipient checks a customer's address before anything is sent to it.
func ValidRecipient(addr string) bool {
	if domain.ValidateEmail("email", addr) != nil {
		return false
	}
	return !strings.ContainsAny(addr, "\"()[]\\:\x00")
}
