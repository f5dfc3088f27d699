package pages

import (
	"time"

	"troco/server/domain"
)

// Portal is what the hosted customer portal shows one customer.
type Portal struct {
	Lang          Lang
	Org           *domain.Organization
	Customer      *domain.Customer
	Zone          *time.Location
	Subscriptions []*domain.Subscription
	Invoices      []*domain.Invoice
	Card          *domain.PaymentMethod
	ReturnURL     string
	CSRF          string
	CSPNonce      string
	Livemode      bool
	Message       string
	Error         bool
	// Products names the products of the subscriptions' prices (id → name).
	Products map[string]string
	// Now is the server's clock (an open invoice past its due instant is overdue).
	Now time.Time
}

// InvLink is the label of an invoice's page link: view and pay while it is owed, view after.
func (p *Portal) InvLink(inv *domain.Invoice) string {
	if inv.Status == domain.InvoiceOpen || inv.Status == domain.InvoiceUncollectible {
		return p.PT("view")
	}
	return p.PT("view_only")
}

var portalMessages = map[string][2]string{
	"title":                 {"Sua conta", "Your account"},
	"subscriptions":         {"Assinaturas", "Subscriptions"},
	"invoices":              {"Faturas", "Invoices"},
	"card":                  {"Forma de pagamento", "Payment method"},
	"no_card":               {"Nenhum cartão salvo.", "No saved card."},
	"update_card":           {"Atualizar cartão", "Update card"},
	"renews":                {"Renova em", "Renews on"},
	"ends":                  {"Termina em", "Ends on"},
	"cancel":                {"Cancelar no fim do período", "Cancel at period end"},
	"resume":                {"Manter assinatura", "Keep subscription"},
	"view":                  {"Ver / pagar", "View / pay"},
	"view_only":             {"Ver", "View"},
	"pdf":                   {"PDF", "PDF"},
	"back":                  {"Voltar para", "Back to"},
	"none":                  {"Nada por aqui.", "Nothing here."},
	"sandbox":               {"Modo de teste: nenhum dinheiro é movimentado.", "Test mode: no money moves."},
	"st_active":             {"Ativa", "Active"},
	"st_trialing":           {"Em teste", "Trial"},
	"st_past_due":           {"Pagamento pendente", "Past due"},
	"st_unpaid":             {"Não paga", "Unpaid"},
	"st_canceled":           {"Cancelada", "Canceled"},
	"st_paused":             {"Pausada", "Paused"},
	"st_incomplete":         {"Incompleta", "Incomplete"},
	"st_incomplete_expired": {"Incompleta expirada", "Incomplete, expired"},
	"card_saved":            {"Cartão atualizado.", "Card updated."},
	"canceled_ok":           {"A assinatura termina no fim do período.", "The subscription ends at the end of the period."},
	"resumed_ok":            {"A assinatura continua.", "The subscription continues."},
	"expired":               {"Este link expirou ou já foi usado. Peça um novo link.", "This link expired or was already used. Ask for a new one."},
	"card_number":           {"Número do cartão", "Card number"},
	"card_exp_month":        {"Mês", "Month"},
	"card_exp_year":         {"Ano", "Year"},
	"card_cvc":              {"CVV", "CVC"},
	"card_name":             {"Nome impresso no cartão", "Name on card"},
	"lang_switch":           {"English", "Português"},
	"bad_form":              {"Não foi possível ler o formulário. Recarregue a página e tente de novo.", "The form could not be read. Reload the page and try again."},
	"form_expired":          {"Este formulário expirou; recarregue a página.", "This form expired; reload the page."},
	"reload":                {"Voltar ao portal", "Back to the portal"},
}

// HasPT says whether key is one of the portal's texts.
func HasPT(key string) bool {
	_, ok := portalMessages[key]
	return ok
}

// PT is the text of a portal key.
func (p *Portal) PT(key string) string {
	m, ok := portalMessages[key]
	if !ok {
		return key
	}
	if p.Lang == En {
		return m[1]
	}
	return m[0]
}

// Day formats an instant's civil date in the customer's zone.
func (p *Portal) Day(t domain.Time) string {
	if t.IsZero() {
		return ""
	}
	lt := t.In(p.Zone)
	if p.Lang == En {
		return lt.Format("Jan 2, 2006")
	}
	return lt.Format("02/01/2006")
}

// SubAmount is what a subscription bills per period.
func SubAmount(s *domain.Subscription) int64 {
	var n int64
	for _, it := range s.Items {
		n += it.Price.UnitAmount * it.Quantity
	}
	return n
}

// SubName names a subscription by its first item: the price's name, else its product's.
func (p *Portal) SubName(s *domain.Subscription) string {
	if len(s.Items) == 0 {
		return s.ID
	}
	if s.Items[0].Price.Name != nil && *s.Items[0].Price.Name != "" {
		return *s.Items[0].Price.Name
	}
	if n := p.Products[s.Items[0].Price.Product]; n != "" {
		return n
	}
	return s.Items[0].Price.Product
}

// Cancelable says whether the portal offers cancel at period end.
func Cancelable(s *domain.Subscription) bool {
	switch s.Status {
	case domain.SubscriptionActive, domain.SubscriptionTrialing, domain.SubscriptionPastDue:
		return !s.CancelAtPeriodEnd
	}
	return false
}

// Resumable says whether the portal offers to keep (or resume) the subscription.
func Resumable(s *domain.Subscription) bool {
	return s.Status == domain.SubscriptionPaused || (s.CancelAtPeriodEnd && !domain.SubscriptionFinal(s.Status))
}

// OtherLang is the other language's code.
func (p *Portal) OtherLang() string {
	if p.Lang == En {
		return "pt-BR"
	}
	return "en"
}
