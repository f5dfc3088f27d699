package domain

import (
	"regexp"
	"strings"
)

// Texts troco writes itself into objects (invoice lines of prorations, trials and carried credit;
// the description of an invoice's payment intent). The API keeps them in English, as Stripe does;
// what a customer reads (hosted pages, PDFs, boletos, e-mails) goes through Portuguese, which
// recognises exactly these shapes and leaves any other text (the merchant's own) as it is.
const (
	textUnusedTime     = "Unused time on "
	textRemainingTime  = "Remaining time on "
	textTrial          = "Trial: "
	textInvoice        = "Invoice "
	TextCreditCarried  = "Credit carried to the next invoice"
	TextCreditDropped  = "Unused credit not carried: the subscription has ended (refund the charge to return it)"
	TextCreditPrevious = "Credit from the previous invoice"
)

// ProrationText is the description of a proration line: the credit for the unused time of item
// (unused) or the charge for the remaining time of item, from the civil date from (YYYY-MM-DD).
func ProrationText(unused bool, item, from string) string {
	what := textRemainingTime
	if unused {
		what = textUnusedTime
	}
	return what + item + " (from " + from + ")"
}

// TrialText is the description of an item's line during a trial.
func TrialText(item string) string { return textTrial + item }

// InvoicePaymentText is the description of the payment intent that pays invoice number (or id).
func InvoicePaymentText(number string) string { return textInvoice + number }

var (
	prorationShape = regexp.MustCompile(`^(Unused|Remaining) time on (.+) \(from (\d{4})-(\d{2})-(\d{2})\)$`)
	itemShape      = regexp.MustCompile(`^\d+ × `)
	invoiceShape   = regexp.MustCompile(`^Invoice ([A-Za-z0-9_-]+)$`)
)

var creditTexts = map[string]string{
	TextCreditCarried:  "Crédito transferido para a próxima fatura",
	TextCreditDropped:  "Crédito não utilizado e não transferido: a assinatura terminou (reembolse a cobrança para devolvê-lo)",
	TextCreditPrevious: "Crédito da fatura anterior",
}

// Portuguese is a text troco generated, in Portuguese (dates as DD/MM/YYYY); any other text is
// returned unchanged.
func Portuguese(s string) string {
	if t, ok := creditTexts[s]; ok {
		return t
	}
	if m := prorationShape.FindStringSubmatch(s); m != nil {
		what := "Tempo restante de "
		if m[1] == "Unused" {
			what = "Tempo não utilizado de "
		}
		return what + m[2] + " (a partir de " + m[5] + "/" + m[4] + "/" + m[3] + ")"
	}
	if rest, ok := strings.CutPrefix(s, textTrial); ok && itemShape.MatchString(rest) {
		return "Período de teste: " + rest
	}
	if m := invoiceShape.FindStringSubmatch(s); m != nil {
		return "Fatura " + m[1]
	}
	return s
}
