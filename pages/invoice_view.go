package pages

import (
	"strings"
	"time"

	"troco/server/document"
	"troco/server/domain"
)

// InvoicePage is what the hosted invoice page shows: the invoice, who issues it and who owes
// it, times in the customer's zone, and how to pay what is due now.
type InvoicePage struct {
	Lang      Lang
	Inv       *domain.Invoice
	Org       *domain.Organization
	Customer  *domain.Customer
	Zone      *time.Location
	Now       time.Time
	Secret    string // the URL's secret, carried by the forms
	CSRF      string // the forms' csrf_token
	PageURL   string // this page (without lang)
	PDFURL    string
	ActionURL string // POST: pay
	SimURL    string // POST: simulate (test mode)
	CSPNonce  string
	Message   string // the outcome of the last action (a decline), already translated
	Pix       *domain.PixData
	Boleto    *domain.BoletoData
	// InProgress: a payment of the invoice may still succeed (a card pending at the card
	// network, processing, or authorized awaiting capture); the page says so and offers no
	// other payment, which would be refused.
	InProgress bool
}

var invoiceMessages = map[string][2]string{
	"title":          {"Fatura", "Invoice"},
	"form_expired":   {"O formulário expirou: confira a fatura e tente de novo.", "The form expired: check the invoice and try again."},
	"issued_by":      {"Emitida por", "Issued by"},
	"billed_to":      {"Cobrada de", "Billed to"},
	"due":            {"Vencimento", "Due"},
	"period":         {"Período", "Period"},
	"paid_at":        {"Paga em", "Paid on"},
	"description":    {"Descrição", "Description"},
	"qty":            {"Qtd.", "Qty"},
	"amount":         {"Valor", "Amount"},
	"subtotal":       {"Subtotal", "Subtotal"},
	"discount":       {"Desconto", "Discount"},
	"fine":           {"Multa", "Late fee"},
	"interest":       {"Juros", "Interest"},
	"total_due":      {"Total a pagar", "Amount due"},
	"total_paid":     {"Total pago", "Amount paid"},
	"pay_card":       {"Pagar com cartão", "Pay by card"},
	"pay_pix":        {"Pagar com PIX", "Pay with PIX"},
	"pay_boleto":     {"Gerar boleto", "Get a boleto"},
	"regen_boleto":   {"Gerar novo boleto com o valor atualizado", "New boleto with the updated amount"},
	"card_number":    {"Número do cartão", "Card number"},
	"card_exp_month": {"Mês", "Month"},
	"card_exp_year":  {"Ano", "Year"},
	"card_cvc":       {"CVV", "CVC"},
	"card_name":      {"Nome impresso no cartão", "Name on card"},
	"pix_waiting":    {"Pague com o código PIX abaixo (copia e cola) ou o QR code.", "Pay with the PIX code below (copy and paste) or the QR code."},
	"boleto_waiting": {"Boleto gerado. Pague até o vencimento do boleto:", "Boleto issued. Pay it by its due date:"},
	"boleto_open":    {"Abrir o boleto", "Open the boleto"},
	"download_pdf":   {"Baixar PDF", "Download PDF"},
	"late_terms":     {"Após o vencimento: multa de %s e juros de %s ao mês, pro rata por dia.", "After the due date: a %s late fee and %s interest a month, pro rata per day."},
	"sandbox":        {"Modo de teste: nenhum dinheiro é movimentado.", "Test mode: no money moves."},
	"sim_pay":        {"Simular pagamento", "Simulate payment"},
	"sim_expire":     {"Simular expiração", "Simulate expiration"},
	"lang_switch":    {"English", "Português"},
	"doc":            {"CPF/CNPJ", "Tax ID"},
	"in_progress":    {"Um pagamento desta fatura está em processamento. Aguarde a confirmação: não é preciso pagar de novo.", "A payment of this invoice is being processed. Wait for its confirmation: there is no need to pay again."},
	"nothing_due":    {"Nada a pagar.", "Nothing is due."},
	"boleto_payer":   {"O boleto precisa do CPF/CNPJ e do endereço de quem paga:", "A boleto needs the payer's CPF/CNPJ and address:"},
	"addr_line1":     {"Endereço (rua)", "Street"},
	"addr_number":    {"Número", "Number"},
	"addr_district":  {"Bairro", "District"},
	"addr_city":      {"Cidade", "City"},
	"addr_state":     {"UF", "State (UF)"},
	"addr_postal":    {"CEP", "Postal code (CEP)"},
	"need_document":  {"Para gerar o boleto, informe um CPF ou CNPJ válido.", "To issue a boleto, enter a valid CPF or CNPJ."},
	"need_address":   {"Para gerar o boleto, informe o endereço completo (rua, número, cidade, UF e CEP).", "To issue a boleto, enter the full address (street, number, city, state and postal code)."},
	"need_name":      {"Para gerar o boleto, o cliente precisa ter um nome; fale com a loja.", "To issue a boleto the customer needs a name; contact the merchant."},
}

// ParamMessage explains a refused boleto request by the param it names (missing or invalid
// CPF/CNPJ, address or name); "" for any other param.
func (p *InvoicePage) ParamMessage(param string) string {
	switch {
	case param == "customer_document":
		return p.IT("need_document")
	case param == "customer_name":
		return p.IT("need_name")
	case strings.HasPrefix(param, "billing_address"):
		return p.IT("need_address")
	}
	return ""
}

// BoletoNeedsPayer reports whether the boleto form must ask for the payer's CPF/CNPJ and address
// (the customer has neither on file).
func (p *InvoicePage) BoletoNeedsPayer() (document, address bool) {
	if p.Customer == nil {
		return true, true
	}
	return p.Customer.Document == nil, p.Customer.Address == nil
}

// IT is the text of an invoice page key.
func (p *InvoicePage) IT(key string) string {
	m, ok := invoiceMessages[key]
	if !ok {
		return key
	}
	if p.Lang == En {
		return m[1]
	}
	return m[0]
}

// When formats an instant in the customer's zone with the zone's name.
func (p *InvoicePage) When(t domain.Time) string {
	if t.IsZero() {
		return ""
	}
	lt := t.In(p.Zone)
	if p.Lang == En {
		return lt.Format("Jan 2, 2006 3:04 PM") + " (" + p.Zone.String() + ")"
	}
	return lt.Format("02/01/2006 15:04") + " (" + p.Zone.String() + ")"
}

// Day formats the civil date of an instant in the customer's zone.
func (p *InvoicePage) Day(t domain.Time) string {
	if t.IsZero() {
		return ""
	}
	lt := t.In(p.Zone)
	if p.Lang == En {
		return lt.Format("Jan 2, 2006")
	}
	return lt.Format("02/01/2006")
}

// Payable says whether the page offers payment.
func (p *InvoicePage) Payable() bool {
	return (p.Inv.Status == domain.InvoiceOpen || p.Inv.Status == domain.InvoiceUncollectible) && p.Inv.AmountRemaining > 0 && !p.InProgress
}

// Sandbox says whether the invoice is a test-mode one (the yellow bar).
func (p *InvoicePage) Sandbox() bool { return !p.Inv.Livemode }

// Waiting says whether a PIX or boleto of this invoice waits for payment.
func (p *InvoicePage) Waiting() bool { return p.Pix != nil || p.Boleto != nil }

// Doc formats a CPF/CNPJ with its mask.
func Doc(d *string) string {
	if d == nil || *d == "" {
		return ""
	}
	doc, err := document.Parse(*d)
	if err != nil {
		return *d
	}
	return doc.Mask()
}

// Rate formats basis points as a percentage: 200 → "2%", 33 → "0,33%".
func (p *InvoicePage) Rate(bps int64) string {
	whole, frac := bps/100, bps%100
	if frac == 0 {
		return itoa64(whole) + "%"
	}
	sep := ","
	if p.Lang == En {
		sep = "."
	}
	return itoa64(whole) + sep + pad2(int(frac)) + "%"
}

// LangURL is this page in the other language.
func (p *InvoicePage) LangURL() string {
	if p.Lang == En {
		return p.PageURL + "&lang=pt-BR"
	}
	return p.PageURL + "&lang=en"
}

// LangParam is the lang value the forms carry.
func (p *InvoicePage) LangParam() string { return string(p.Lang) }

// LineText is a line's description in the page's language: a text troco generated (a
// proration, a trial, a carried credit) is translated, the merchant's own is shown as written.
func (p *InvoicePage) LineText(l domain.InvoiceLine) string {
	return p.Lang.Generated(Text(l.Description))
}

// Generated is a text troco generated (domain.Portuguese) in language l; any other text unchanged.
func (l Lang) Generated(s string) string {
	if l == En {
		return s
	}
	return domain.Portuguese(s)
}

// Text returns a pointer's text or "".
func Text(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
