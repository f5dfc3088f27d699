package pages

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // Brasília time on hosts without a zoneinfo database
)

// Lang is a language the hosted checkout speaks: Brazilian Portuguese by default, English when
// the browser prefers it.
type Lang string

// Languages of the hosted checkout.
const (
	PtBR Lang = "pt-BR"
	En   Lang = "en"
)

// NegotiateLang picks the page language from an explicit choice (?lang=) or the Accept-Language
// header: the first supported language of the highest quality; pt-BR when nothing matches.
func NegotiateLang(explicit, acceptLanguage string) Lang {
	switch strings.ToLower(explicit) {
	case "en", "en-us", "en-gb":
		return En
	case "pt", "pt-br":
		return PtBR
	}
	best, bestQ := PtBR, -1.0
	for _, part := range strings.Split(acceptLanguage, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		tag = strings.ToLower(strings.TrimSpace(tag))
		var l Lang
		switch {
		case tag == "pt" || strings.HasPrefix(tag, "pt-"):
			l = PtBR
		case tag == "en" || strings.HasPrefix(tag, "en-"):
			l = En
		default:
			continue
		}
		if q > bestQ {
			best, bestQ = l, q
		}
	}
	return best
}

// messages is the one table of the hosted checkout's texts: key → Portuguese, English.
var messages = map[string][2]string{
	"title":                 {"Pagamento", "Checkout"},
	"sandbox_bar":           {"Ambiente de testes: nenhum dinheiro real é movimentado.", "Test mode: no real money moves."},
	"sandbox_mailbox":       {"Ver e-mails de teste", "Open the test mailbox"},
	"sandbox_waiting":       {"Simule o resultado deste pagamento:", "Simulate the outcome of this payment:"},
	"simulate_payment":      {"Simular pagamento", "Simulate payment"},
	"simulate_expiration":   {"Simular expiração", "Simulate expiration"},
	"order_summary":         {"Resumo do pedido", "Order summary"},
	"booking_summary":       {"Sua reserva", "Your booking"},
	"quantity":              {"Qtd.", "Qty"},
	"subtotal":              {"Subtotal", "Subtotal"},
	"discount":              {"Desconto", "Discount"},
	"tax":                   {"Impostos", "Tax"},
	"total":                 {"Total", "Total"},
	"total_due_today":       {"Total a pagar hoje", "Total due today"},
	"then":                  {"depois", "then"},
	"trial_days":            {"%d dias grátis", "%d days free"},
	"every_day":             {"por dia", "per day"},
	"every_week":            {"por semana", "per week"},
	"every_month":           {"por mês", "per month"},
	"every_year":            {"por ano", "per year"},
	"every_n_day":           {"a cada %d dias", "every %d days"},
	"every_n_week":          {"a cada %d semanas", "every %d weeks"},
	"every_n_month":         {"a cada %d meses", "every %d months"},
	"every_n_year":          {"a cada %d anos", "every %d years"},
	"contact":               {"Seus dados", "Your details"},
	"email":                 {"E-mail", "Email"},
	"name":                  {"Nome completo", "Full name"},
	"document":              {"CPF ou CNPJ", "CPF or CNPJ"},
	"document_hint":         {"Somente números ou com pontuação.", "Digits, with or without punctuation."},
	"document_hint_boleto":  {"Obrigatório para pagar com boleto.", "Required to pay by boleto."},
	"phone":                 {"Celular", "Phone"},
	"phone_hint":            {"Com DDD, ex.: (11) 91234-5678", "With area code, e.g. +55 11 91234-5678"},
	"billing_address":       {"Endereço de cobrança", "Billing address"},
	"postal_code":           {"CEP", "Postal code (CEP)"},
	"line1":                 {"Rua", "Street"},
	"number":                {"Número", "Number"},
	"line2":                 {"Complemento", "Address line 2"},
	"neighborhood":          {"Bairro", "Neighbourhood"},
	"city":                  {"Cidade", "City"},
	"state":                 {"UF", "State"},
	"payment_method":        {"Forma de pagamento", "Payment method"},
	"method_credit_card":    {"Cartão de crédito", "Credit card"},
	"method_pix":            {"PIX", "PIX"},
	"method_boleto":         {"Boleto", "Boleto"},
	"card_number":           {"Número do cartão", "Card number"},
	"card_brand":            {"Bandeira", "Brand"},
	"card_exp":              {"Validade (MM/AA)", "Expiry (MM/YY)"},
	"card_exp_placeholder":  {"MM/AA", "MM/YY"},
	"card_cvc":              {"Código de segurança (CVV)", "Security code (CVC)"},
	"card_holder":           {"Nome impresso no cartão", "Name on card"},
	"installments":          {"Parcelamento", "Instalments"},
	"installment_option":    {"%dx de %s", "%d × %s"},
	"no_interest":           {"sem juros", "interest-free"},
	"with_interest":         {"total %s", "total %s"},
	"pix_info":              {"Pague com PIX: o QR Code aparece na próxima tela e o pagamento é confirmado na hora.", "Pay with PIX: the QR code appears on the next screen and payment is confirmed instantly."},
	"boleto_info":           {"O boleto vence em %d dias. A confirmação pode levar até 3 dias úteis após o pagamento.", "The boleto is due in %d days. Confirmation may take up to 3 business days after payment."},
	"save_card":             {"Salvar cartão para próximas compras", "Save card for future purchases"},
	"submit_pay":            {"Pagar", "Pay"},
	"submit_subscribe":      {"Assinar", "Subscribe"},
	"submit_book":           {"Reservar", "Book"},
	"submit_donate":         {"Doar", "Donate"},
	"submit_pix":            {"Gerar PIX", "Get PIX code"},
	"submit_boleto":         {"Gerar boleto", "Get boleto"},
	"submit_free":           {"Confirmar", "Confirm"},
	"processing":            {"Processando…", "Processing…"},
	"cancel_link":           {"Voltar à loja", "Back to the store"},
	"secure":                {"Pagamento processado com segurança por troco.", "Payment securely processed by troco."},
	"expires_at":            {"Esta página expira em %s.", "This page expires at %s."},
	"pix_title":             {"Pague com PIX", "Pay with PIX"},
	"pix_scan":              {"Abra o app do seu banco, escolha PIX e escaneie o QR Code:", "Open your bank's app, choose PIX and scan the QR code:"},
	"pix_copy_label":        {"Ou use o PIX copia e cola:", "Or use PIX copy and paste:"},
	"pix_copy":              {"Copiar código", "Copy code"},
	"pix_copied":            {"Código copiado!", "Code copied!"},
	"pix_expires":           {"O código expira em", "The code expires in"},
	"pix_expires_at":        {"Válido até %s.", "Valid until %s."},
	"pix_qr_alt":            {"QR Code PIX de %s", "PIX QR code for %s"},
	"check_status":          {"Já paguei — atualizar", "I have paid — refresh"},
	"waiting_confirmation":  {"Aguardando a confirmação do pagamento.", "Waiting for the payment to be confirmed."},
	"boleto_title":          {"Seu boleto foi gerado", "Your boleto is ready"},
	"boleto_line":           {"Linha digitável", "Boleto number (linha digitável)"},
	"boleto_due":            {"Vencimento: %s", "Due date: %s"},
	"boleto_print":          {"Imprimir boleto", "Print boleto"},
	"boleto_due_label":      {"Vencimento", "Due date"},
	"boleto_copy":           {"Copiar linha digitável", "Copy number"},
	"boleto_barcode":        {"Código de barras", "Barcode"},
	"boleto_pix_title":      {"Ou pague com PIX", "Or pay with PIX"},
	"boleto_pix_text":       {"O mesmo valor, na hora: escaneie o QR Code ou use o PIX copia e cola. Pague só uma vez: com o boleto ou com o PIX.", "The same amount, instantly: scan the QR code or use PIX copy and paste. Pay once only: by boleto or by PIX."},
	"simulate_boleto":       {"Pagar boleto", "Pay boleto"},
	"simulate_boleto_pix":   {"Pagar PIX", "Pay PIX"},
	"boleto_print_title":    {"Boleto de pagamento", "Payment slip (boleto)"},
	"boleto_payee":          {"Beneficiário", "Payee"},
	"boleto_payer":          {"Pagador", "Payer"},
	"boleto_amount":         {"Valor do documento", "Amount"},
	"boleto_sandbox":        {"BOLETO DE TESTE — SEM VALOR", "TEST BOLETO — NOT PAYABLE"},
	"processing_title":      {"Pagamento em processamento", "Payment processing"},
	"processing_text":       {"Recebemos seu pagamento e ele está sendo processado. Você será avisado quando for confirmado.", "We received your payment and it is being processed. You will be notified once it is confirmed."},
	"success_title":         {"Pagamento confirmado", "Payment confirmed"},
	"success_sub_title":     {"Assinatura confirmada", "Subscription confirmed"},
	"success_free_title":    {"Pedido confirmado", "Order confirmed"},
	"success_text":          {"Obrigado pela compra! Pagamento registrado para %s.", "Thank you for your purchase! Payment recorded for %s."},
	"success_text_anon":     {"Obrigado pela sua compra.", "Thank you for your purchase."},
	"paid_with_pix":         {"Pago com PIX.", "Paid with PIX."},
	"paid_with_boleto":      {"Pago com boleto bancário.", "Paid by boleto."},
	"not_active_title":      {"Pagamentos ainda não disponíveis", "Payments are not available yet"},
	"not_active_text":       {"%s ainda está concluindo o cadastro para receber pagamentos. Nada foi cobrado; tente de novo mais tarde ou fale com a loja.", "%s is still completing its registration to accept payments. Nothing was charged; try again later or contact the store."},
	"paid_with_card":        {"Pago com %s final %s em %dx.", "Paid with %s ending in %s in %d instalment(s)."},
	"continue":              {"Continuar", "Continue"},
	"failed_title":          {"Pagamento não concluído", "Payment not completed"},
	"failed_text":           {"O prazo para pagamento terminou e nada foi cobrado. Volte à loja para tentar de novo.", "The payment window ended and nothing was charged. Go back to the store to try again."},
	"expired_title":         {"Esta página de pagamento expirou", "This checkout page has expired"},
	"expired_text":          {"As páginas de pagamento ficam disponíveis por 24 horas. Nada foi cobrado.", "Checkout pages stay available for 24 hours. Nothing was charged."},
	"canceled_title":        {"Pagamento cancelado", "Payment canceled"},
	"canceled_text":         {"Você saiu do pagamento e nada foi cobrado.", "You left the checkout and nothing was charged."},
	"canceled_resume":       {"Voltar ao pagamento", "Return to checkout"},
	"try_again_title":       {"Página temporariamente indisponível", "Page temporarily unavailable"},
	"try_again_text":        {"Não conseguimos carregar esta página agora e nada foi cobrado. Tente novamente em instantes.", "This page could not be loaded right now and nothing was charged. Try again in a moment."},
	"unavailable_title":     {"Link de pagamento indisponível", "Payment link unavailable"},
	"unavailable_text":      {"Este link foi desativado pelo vendedor. Entre em contato com a loja.", "This payment link was deactivated by the seller. Please contact the store."},
	"notfound_title":        {"Página não encontrada", "Page not found"},
	"notfound_text":         {"Este endereço de pagamento não existe ou está incompleto. Use o link enviado pela loja.", "This checkout address does not exist or is incomplete. Use the link the store sent you."},
	"forbidden_title":       {"Não foi possível enviar o formulário", "The form could not be submitted"},
	"forbidden_text":        {"Sua sessão no navegador expirou. Recarregue a página e tente de novo (os cookies precisam estar ativados).", "Your browser session expired. Reload the page and try again (cookies must be enabled)."},
	"not_activated":         {"Este vendedor ainda não está habilitado a receber pagamentos.", "This seller cannot accept payments yet."},
	"error_title":           {"Não foi possível concluir o pagamento", "The payment could not be completed"},
	"error_field":           {"Verifique o campo destacado.", "Check the highlighted field."},
	"error_generic":         {"Algo deu errado. Tente novamente em instantes.", "Something went wrong. Please try again shortly."},
	"reload":                {"Recarregar", "Reload"},
	"error_summary":         {"Corrija os erros abaixo:", "Please fix the errors below:"},
	"card_saved_notice":     {"Cartões são processados com segurança; o número nunca é armazenado.", "Cards are processed securely; the number is never stored."},
	"free_notice":           {"Nenhum pagamento é necessário agora.", "No payment is required now."},
	"trial_notice":          {"Seu cartão será cobrado no fim do período de teste.", "Your card will be charged when the trial ends."},
	"trial_free_notice":     {"Nada a pagar hoje: a assinatura começa com o período de teste.", "Nothing to pay today: the subscription starts with its trial."},
	"lang_switch":           {"English", "Português"},
	"pix_method_hint":       {"Aprovação imediata", "Instant approval"},
	"boleto_method_hint":    {"Compensa em até 3 dias úteis", "Clears in up to 3 business days"},
	"credit_card_hint":      {"Em até %dx", "Up to %d instalments"},
	"amount_label":          {"Valor", "Amount"},
	"seller":                {"Vendido por %s", "Sold by %s"},
	"minutes_seconds":       {"%02d:%02d", "%02d:%02d"},
	"booking_when":          {"Reserva confirmada ao concluir o pagamento.", "Booking is confirmed once payment completes."},
	"required":              {"obrigatório", "required"},
	"optional":              {"opcional", "optional"},
	"no_methods":            {"Nenhuma forma de pagamento disponível.", "No payment method is available."},
	"copied_aria":           {"Copiado para a área de transferência", "Copied to clipboard"},
	"pix_waiting_sr":        {"Aguardando pagamento PIX", "Waiting for PIX payment"},
	"boleto_waiting_sr":     {"Aguardando pagamento do boleto", "Waiting for boleto payment"},
	"print_back":            {"Voltar", "Back"},
	"print_now":             {"Imprimir", "Print"},
	"declined_try_other":    {"Tente outro cartão ou escolha PIX ou boleto.", "Try another card or choose PIX or boleto."},
	"installments_interest": {"com juros", "with interest"},
	"promo_label":           {"Cupom de desconto", "Promotion code"},
	"promo_apply":           {"Aplicar", "Apply"},
	"promo_remove":          {"Remover", "Remove"},
	"promo_applied":         {"Cupom aplicado:", "Code applied:"},
}

// T returns the text of key in the language (the key itself when it is missing, so a gap shows).
func (l Lang) T(key string) string {
	m, ok := messages[key]
	if !ok {
		return key
	}
	if l == En {
		return m[1]
	}
	return m[0]
}

// Tf formats the text of key with args.
func (l Lang) Tf(key string, args ...any) string { return fmt.Sprintf(l.T(key), args...) }

// HTMLLang is the value of <html lang>.
func (l Lang) HTMLLang() string { return string(l) }

// Money formats centavos as BRL the way the language writes it: "R$ 1.234,56" or "R$1,234.56".
func (l Lang) Money(centavos int64) string {
	neg := centavos < 0
	if neg {
		centavos = -centavos
	}
	units, cents := centavos/100, centavos%100
	digits := strconv.FormatInt(units, 10)
	sep, dec := ".", ","
	if l == En {
		sep, dec = ",", "."
	}
	var b strings.Builder
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteString(sep)
		}
		b.WriteRune(c)
	}
	out := b.String() + dec + pad2(int(cents))
	prefix := "R$ "
	if l == En {
		prefix = "R$"
	}
	if neg {
		return "−" + prefix + out
	}
	return prefix + out
}

// DateTime formats an instant for the buyer in Brasília time (the hosted page's zone; SPEC 9.2
// lets hosted pages render in the customer's zone, and Brazilian buyers are the audience).
func (l Lang) DateTime(t time.Time) string {
	t = t.In(brasilia)
	if l == En {
		return t.Format("Jan 2, 2006 3:04 PM") + " (BRT)"
	}
	return t.Format("02/01/2006 às 15:04") + " (horário de Brasília)"
}

// Date formats a civil date YYYY-MM-DD as 31/12/2026 or Dec 31, 2026.
func (l Lang) Date(civil string) string {
	t, err := time.Parse(time.DateOnly, civil)
	if err != nil {
		return civil
	}
	if l == En {
		return t.Format("Jan 2, 2006")
	}
	return t.Format("02/01/2006")
}

var brasilia = func() *time.Location {
	if loc, err := time.LoadLocation("America/Sao_Paulo"); err == nil {
		return loc
	}
	return time.FixedZone("BRT", -3*3600)
}()

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// declineTexts are buyer-facing explanations of the SPEC 7.1 codes a buyer can act on; other
// codes fall back to their category.
var declineTexts = map[string][2]string{
	"insufficient_funds":         {"Saldo ou limite insuficiente. Use outro cartão ou pague com PIX.", "Insufficient funds. Use another card or pay with PIX."},
	"do_not_honor":               {"O banco emissor recusou a compra. Entre em contato com o banco ou use outro cartão.", "The issuer declined the purchase. Contact your bank or use another card."},
	"generic_decline":            {"O cartão foi recusado. Use outro cartão ou outra forma de pagamento.", "The card was declined. Use another card or payment method."},
	"call_issuer":                {"O cartão foi recusado. Ligue para o banco emissor para liberar a compra.", "The card was declined. Call your bank to authorise the purchase."},
	"card_velocity_exceeded":     {"O cartão atingiu o limite de uso. Use outro cartão.", "The card reached its usage limit. Use another card."},
	"expired_card":               {"O cartão está vencido. Confira a validade ou use outro cartão.", "The card has expired. Check the expiry date or use another card."},
	"incorrect_cvc":              {"O código de segurança (CVV) está incorreto.", "The security code (CVC) is incorrect."},
	"invalid_cvc":                {"O código de segurança (CVV) é inválido.", "The security code (CVC) is invalid."},
	"incorrect_number":           {"O número do cartão está incorreto.", "The card number is incorrect."},
	"invalid_number":             {"O número do cartão é inválido.", "The card number is invalid."},
	"invalid_expiry_month":       {"O mês de validade é inválido.", "The expiry month is invalid."},
	"invalid_expiry_year":        {"O ano de validade é inválido.", "The expiry year is invalid."},
	"lost_card":                  {"O cartão não pode ser usado. Use outro cartão.", "The card cannot be used. Use another card."},
	"stolen_card":                {"O cartão não pode ser usado. Use outro cartão.", "The card cannot be used. Use another card."},
	"fraudulent":                 {"A compra não foi aprovada por segurança. Use outra forma de pagamento.", "The purchase was not approved for security reasons. Use another payment method."},
	"authentication_required":    {"O banco pediu autenticação adicional. Use outro cartão ou pague com PIX.", "The bank requires extra authentication. Use another card or pay with PIX."},
	"reenter_transaction":        {"O banco não conseguiu processar a compra. Tente novamente.", "The bank could not process the purchase. Please try again."},
	"try_again_later":            {"Não foi possível processar agora. Tente novamente em alguns minutos.", "The payment could not be processed now. Try again in a few minutes."},
	"issuer_unavailable":         {"O banco emissor não respondeu. Tente novamente.", "The issuer could not be reached. Please try again."},
	"processing_error":           {"Ocorreu um erro ao processar o pagamento. Tente novamente.", "An error occurred while processing the payment. Please try again."},
	"testmode_decline":           {"Cartão de teste recusado (simulação).", "Test card declined (simulation)."},
	"installments":               {"Número de parcelas indisponível para este valor.", "That number of instalments is not available for this amount."},
	"invalid_request":            {"Os dados do cartão foram recusados. Confira número, validade e nome, ou use outro cartão.", "The card details were refused. Check the number, expiry and name, or use another card."},
	"processor_call_in_progress": {"O cartão ainda está sendo salvo. Recarregue a página em um minuto.", "The card is still being saved. Reload the page in a minute."},
	"processor_unavailable":      {"O processamento de cartões está indisponível agora. Tente mais tarde.", "Card processing is unavailable right now. Try again later."},
	"payment_expired":            {"O código de pagamento expirou. Gere um novo código.", "The payment code expired. Generate a new one."},
}

var categoryTexts = map[string][2]string{
	"issuer_declined":  {"O banco emissor recusou o pagamento. Use outro cartão ou pague com PIX ou boleto.", "The issuer declined the payment. Use another card or pay with PIX or boleto."},
	"invalid":          {"Os dados do cartão são inválidos. Confira e tente novamente.", "The card details are invalid. Check them and try again."},
	"blocked":          {"Este cartão não pode ser usado. Use outro cartão ou outra forma de pagamento.", "This card cannot be used. Use another card or payment method."},
	"processing_error": {"Não foi possível processar o pagamento. Tente novamente.", "The payment could not be processed. Please try again."},
}

// DeclineText explains a decline code (or, failing that, its category) to the buyer.
func (l Lang) DeclineText(code, category string) string {
	pick := func(m [2]string) string {
		if l == En {
			return m[1]
		}
		return m[0]
	}
	if m, ok := declineTexts[code]; ok {
		return pick(m)
	}
	if m, ok := categoryTexts[category]; ok {
		return pick(m)
	}
	return l.T("error_generic")
}

// fieldTexts explain what a form field needs when the server rejected it.
var fieldTexts = map[string][2]string{
	"customer_email":      {"Informe um e-mail válido, como nome@exemplo.com.", "Enter a valid email address, such as name@example.com."},
	"customer_name":       {"Informe seu nome completo.", "Enter your full name."},
	"customer_document":   {"Informe um CPF ou CNPJ válido (os dígitos verificadores são conferidos).", "Enter a valid CPF or CNPJ (check digits are verified)."},
	"customer_phone":      {"Informe um celular com DDD, como (11) 91234-5678.", "Enter a phone number with area code, such as +55 11 91234-5678."},
	"billing_address":     {"Informe o endereço de cobrança.", "Enter the billing address."},
	"postal_code":         {"Informe um CEP válido com 8 dígitos.", "Enter a valid 8-digit CEP."},
	"state":               {"Informe a UF com duas letras, como SP.", "Enter the two-letter state code, such as SP."},
	"line1":               {"Informe a rua.", "Enter the street."},
	"number":              {"Informe o número (ou S/N).", "Enter the number (or S/N)."},
	"neighborhood":        {"Informe o bairro.", "Enter the neighbourhood."},
	"city":                {"Informe a cidade.", "Enter the city."},
	"installments":        {"Esse número de parcelas não está disponível para este valor.", "That number of instalments is not available for this amount."},
	"payment_method_type": {"Escolha uma forma de pagamento.", "Choose a payment method."},
	"card_number":         {"Confira o número do cartão.", "Check the card number."},
	"card_exp":            {"Informe a validade no formato MM/AA.", "Enter the expiry as MM/YY."},
	"card_cvc":            {"Confira o código de segurança (CVV).", "Check the security code (CVC)."},
	"card_name":           {"Informe o nome impresso no cartão.", "Enter the name on the card."},
	"boleto_due_date":     {"Data de vencimento inválida.", "Invalid due date."},
	"discount":            {"O desconto desta compra não é mais válido (expirou ou atingiu o limite de usos). Remova o cupom ou volte à loja.", "The discount of this purchase is no longer valid (it expired or ran out). Remove the code or go back to the store."},
}

// FieldText explains the problem of a rejected field; fallback is the API's message (English).
func (l Lang) FieldText(field, fallback string) string {
	if m, ok := fieldTexts[field]; ok {
		if l == En {
			return m[1]
		}
		return m[0]
	}
	if l == En && fallback != "" {
		return fallback
	}
	return l.T("error_field")
}
