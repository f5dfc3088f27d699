package domain_test

import (
	"testing"

	"github.com/matryer/is"

	"troco/server/domain"
)

// TestPortugueseTranslatesOnlyGeneratedTexts: every text troco generates has its Portuguese; a
// merchant's own text, even one that looks close, is left as written.
func TestPortugueseTranslatesOnlyGeneratedTexts(t *testing.T) {
	is := is.New(t)
	for in, want := range map[string]string{
		domain.ProrationText(true, "1 × Plano", "2026-11-05"): "Tempo não utilizado de 1 × Plano (a partir de 05/11/2026)",
		domain.ProrationText(false, "3 × Pro", "2026-01-31"):  "Tempo restante de 3 × Pro (a partir de 31/01/2026)",
		domain.TrialText("1 × Plano"):                         "Período de teste: 1 × Plano",
		domain.TextCreditCarried:                              "Crédito transferido para a próxima fatura",
		domain.TextCreditPrevious:                             "Crédito da fatura anterior",
		domain.TextCreditDropped:                              "Crédito não utilizado e não transferido: a assinatura terminou (reembolse a cobrança para devolvê-lo)",
		domain.InvoicePaymentText("A1B2C3D4-0001"):            "Fatura A1B2C3D4-0001",
		"Invoice for the consulting":                          "Invoice for the consulting",
		"Trial: the merchant's words":                         "Trial: the merchant's words",
		"Unused time on the boat":                             "Unused time on the boat",
		"Consultoria mensal":                                  "Consultoria mensal",
	} {
		is.Equal(domain.Portuguese(in), want)
	}
}
