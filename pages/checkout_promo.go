package pages

// promoTexts explain to the buyer why a promotion code was refused, by discounts.Reason (and
// "missing" for an empty field): Portuguese, English.
var promoTexts = map[string][2]string{
	"missing":        {"Digite o código do cupom.", "Enter the promotion code."},
	"not_found":      {"Cupom inválido. Confira o código e tente de novo.", "Invalid promotion code. Check the code and try again."},
	"inactive":       {"Este cupom não está mais ativo.", "This promotion code is no longer active."},
	"expired":        {"Este cupom expirou.", "This promotion code has expired."},
	"exhausted":      {"Este cupom atingiu o limite de usos.", "This promotion code has reached its usage limit."},
	"coupon_deleted": {"Este cupom não é mais válido.", "This promotion code is no longer valid."},
	"below_minimum":  {"Com este cupom o total ficaria abaixo do mínimo de R$ 0,50.", "With this code the total would fall below the R$0.50 minimum."},
	"not_allowed":    {"Esta compra não aceita cupons.", "This checkout does not accept promotion codes."},
	"currency":       {"Este cupom não vale para a moeda desta compra.", "This promotion code does not apply to this currency."},
}

// PromoText explains a refused promotion code (a discounts.Reason) in the language.
func (l Lang) PromoText(reason string) string {
	m, ok := promoTexts[reason]
	if !ok {
		return l.T("error_generic")
	}
	if l == En {
		return m[1]
	}
	return m[0]
}
