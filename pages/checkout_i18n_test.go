package pages

import (
	"testing"

	"github.com/matryer/is"
)

func TestNegotiateLang(t *testing.T) {
	is := is.New(t)
	is.Equal(NegotiateLang("", ""), PtBR) // Portuguese by default
	is.Equal(NegotiateLang("", "en-US,en;q=0.9"), En)
	is.Equal(NegotiateLang("", "pt-BR,pt;q=0.9,en;q=0.8"), PtBR)
	is.Equal(NegotiateLang("", "en;q=0.4,pt;q=0.8"), PtBR) // quality decides
	is.Equal(NegotiateLang("", "fr-FR,de"), PtBR)          // unsupported languages fall back
	is.Equal(NegotiateLang("en", "pt-BR"), En)             // an explicit choice wins
}

func TestMoney(t *testing.T) {
	is := is.New(t)
	is.Equal(PtBR.Money(123456789), "R$ 1.234.567,89")
	is.Equal(En.Money(123456789), "R$1,234,567.89")
	is.Equal(PtBR.Money(5), "R$ 0,05")
	is.Equal(PtBR.Money(100000), "R$ 1.000,00")
	is.Equal(PtBR.Date("2026-03-09"), "09/03/2026")
	is.Equal(Countdown(59), "00:59")
	is.Equal(Countdown(86400), "24:00:00")
}

func TestOnColor(t *testing.T) {
	is := is.New(t)
	is.Equal(OnColor("#0A7C55"), "#ffffff") // dark green: white text
	is.Equal(OnColor("#FFD000"), "#111111") // yellow: dark text
	is.Equal(OnColor("#FFFFFF"), "#111111")
	is.Equal(OnColor("#000000"), "#ffffff")
}

func TestEveryMessageHasBothLanguages(t *testing.T) {
	for k, m := range messages {
		if m[0] == "" || m[1] == "" {
			t.Errorf("message %q lacks a translation", k)
		}
	}
}

func TestDocumentHint(t *testing.T) {
	is := is.New(t)
	c := &Checkout{Lang: PtBR, Methods: []string{"credit_card", "boleto"}, Total: 5000}
	is.Equal(c.DocumentHint(), "Obrigatório para pagar com boleto.")
	c.Total = 0 // nothing to pay: no boleto to require the document for
	is.Equal(c.DocumentHint(), PtBR.T("document_hint"))
}
