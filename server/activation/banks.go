package activation

import "strings"

// Banks are the COMPE codes of the banks and payment institutions a payout account may be held
// at, with their usual names; the activation form offers them as a searchable list ("341 · Itaú
// Unibanco") instead of a code typed from memory.
var Banks = []Option{
	{"001", "Banco do Brasil"}, {"003", "Banco da Amazônia"}, {"004", "Banco do Nordeste do Brasil"}, {"021", "Banestes"},
	{"025", "Banco Alfa"}, {"033", "Santander"}, {"037", "Banpará"}, {"041", "Banrisul"}, {"047", "Banese"},
	{"069", "Banco Crefisa"}, {"070", "BRB – Banco de Brasília"}, {"074", "Banco J. Safra"}, {"077", "Banco Inter"},
	{"085", "Ailos (Cooperativa Central)"}, {"102", "XP Investimentos"}, {"104", "Caixa Econômica Federal"},
	{"119", "Banco Western Union"}, {"121", "Banco Agibank"}, {"133", "Cresol"}, {"136", "Unicred"},
	{"197", "Stone"}, {"208", "Banco BTG Pactual"}, {"212", "Banco Original"}, {"218", "Banco BS2"},
	{"224", "Banco Fibra"}, {"237", "Bradesco"}, {"243", "Banco Master"}, {"246", "Banco ABC Brasil"},
	{"254", "Paraná Banco"}, {"260", "Nubank (Nu Pagamentos)"}, {"290", "PagBank (PagSeguro)"}, {"318", "Banco BMG"},
	{"323", "Mercado Pago"}, {"335", "Banco Digio"}, {"336", "Banco C6"}, {"341", "Itaú Unibanco"},
	{"348", "Banco XP"}, {"364", "Efí (Gerencianet)"}, {"376", "Banco J.P. Morgan"}, {"380", "PicPay"},
	{"389", "Banco Mercantil do Brasil"}, {"403", "Cora"}, {"422", "Banco Safra"}, {"461", "Asaas"},
	{"473", "Banco Caixa Geral – Brasil"}, {"604", "Banco Industrial do Brasil"}, {"612", "Banco Guanabara"},
	{"623", "Banco Pan"}, {"633", "Banco Rendimento"}, {"634", "Banco Triângulo (Tribanco)"}, {"643", "Banco Pine"},
	{"653", "Banco Voiter"}, {"654", "Banco Digimais"}, {"655", "Banco Votorantim (BV)"}, {"707", "Banco Daycoval"},
	{"739", "Banco Cetelem"}, {"741", "Banco Ribeirão Preto"}, {"743", "Banco Semear"}, {"745", "Banco Citibank"},
	{"748", "Sicredi"}, {"756", "Sicoob"},
}

// BankLabel is how the form shows a bank: "341 · Itaú Unibanco", or the code alone when unknown.
func BankLabel(code string) string {
	for _, b := range Banks {
		if b.Value == code {
			return b.Value + " · " + b.Label
		}
	}
	return code
}

// BankCode returns the COMPE code of what the seller chose ("341", "341 · Itaú Unibanco", "341 -
// Itaú"), or "" when it names no bank of the list.
func BankCode(v string) string {
	v = strings.TrimSpace(v)
	if len(v) < 3 {
		return ""
	}
	code := v[:3]
	if rest := strings.TrimSpace(v[3:]); rest != "" && !strings.ContainsRune("·-–—", []rune(rest)[0]) {
		return "" // "3412": a longer number, not a code followed by a name
	}
	for _, b := range Banks {
		if b.Value == code {
			return code
		}
	}
	return ""
}
