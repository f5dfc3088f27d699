package activation

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/server/domain"
)

var now = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

func valid() map[string]string {
	return map[string]string{
		"legal_name": "Loja Ltda", "email": "a@loja.com.br", "phone": "(11) 91234-5678",
		"rep_name": "Maria", "rep_document": "529.982.247-25", "rep_birth_date": "10/03/2008",
		"postal_code": "01310-100", "line1": "Av. Paulista", "number": "1", "neighborhood": "Bela Vista", "city": "São Paulo", "state": "sp",
		"bank_code": "001", "branch": "00019", "account_number": "123456", "account_type": "savings",
		DraftDocumentFile: "file_x", "accept_terms": "on",
	}
}

func TestValidate(t *testing.T) {
	is := is.New(t)
	r, errs, first := Validate(valid(), now)
	is.Equal(len(errs), 0) // a complete form
	is.Equal(first, -1)
	is.Equal(r.Phone, "+5511912345678")
	is.Equal(r.Address.State, "SP")
	is.Equal(r.Address.PostalCode, "01310100")
	is.Equal(r.Profile.Representative, domain.Representative{Name: "Maria", Document: "52998224725", BirthDate: "2008-03-10"}) // 18 today
	is.Equal(r.Profile.BankAccount, domain.BankAccount{BankCode: "001", Branch: "0001-9", AccountNumber: "12345-6", AccountType: "savings"})
}

func TestValidateMessages(t *testing.T) {
	cases := []struct {
		field, value, want string
	}{
		{"legal_name", "", "Informe a razão social ou o nome completo."},
		{"email", "a@b", "Informe um e-mail válido, como financeiro@empresa.com.br."},
		{"phone", "1234", "Informe um telefone válido com DDD, como (11) 91234-5678."},
		{"phone", "+1 415 555 0100", "Informe um telefone válido com DDD, como (11) 91234-5678."},
		{"rep_document", "529.982.247-24", "CPF inválido: confira os números digitados."},
		{"rep_document", "111.111.111-11", "CPF inválido: confira os números digitados."},
		{"rep_document", "1234", "O CPF deve ter 11 dígitos, como 123.456.789-09."},
		{"rep_document", "11.222.333/0001-81", "Informe o CPF da pessoa (11 dígitos), não um CNPJ."},
		{"rep_birth_date", "31/02/1990", "Data inválida: use o formato DD/MM/AAAA."},
		{"rep_birth_date", "11/03/2008", "O representante legal deve ter pelo menos 18 anos."},
		{"rep_birth_date", "2030-01-01", "A data de nascimento não pode estar no futuro."},
		{"postal_code", "0131-100", "O CEP deve ter 8 dígitos, como 01310-100."},
		{"state", "XX", "Selecione uma UF válida."},
		{"bank_code", "1", "Escolha o banco na lista (digite o nome ou o código de 3 dígitos, como 341)."},
		{"bank_code", "999", "Escolha o banco na lista (digite o nome ou o código de 3 dígitos, como 341)."},
		{"bank_code", "3412", "Escolha o banco na lista (digite o nome ou o código de 3 dígitos, como 341)."},
		{"branch", "12345678", "Use no máximo 7 caracteres."},
		{"branch", "12a", "Agência inválida: use até 5 dígitos e, se houver, o dígito após o hífen (0001-9)."},
		{"account_number", "12-34", "Conta inválida: informe os números e o dígito, como 12345-6."},
		{"account_type", "gold", "Selecione o tipo de conta."},
		{DraftDocumentFile, "", "Envie um documento de identificação (PDF, PNG ou JPEG, até 5 MB)."},
		{"accept_terms", "", "Confirme que as informações são verdadeiras."},
		// The API's text rules: a bidirectional override, a NUL or broken UTF-8 never reaches the organization.
		{"legal_name", "Loja \u202eadtL", "Remova os caracteres de controle invisíveis deste campo (apague e digite o texto de novo)."},
		{"rep_name", "Maria\x00", "Remova os caracteres de controle invisíveis deste campo (apague e digite o texto de novo)."},
		{"city", "S\xe3o Paulo", "Remova os caracteres de controle invisíveis deste campo (apague e digite o texto de novo)."},
	}
	for _, tc := range cases {
		t.Run(tc.field+"="+tc.value, func(t *testing.T) {
			is := is.New(t)
			v := valid()
			v[tc.field] = tc.value
			_, errs, first := Validate(v, now)
			is.Equal(errs[tc.field], tc.want)
			is.Equal(len(errs), 1) // only that field
			is.True(first >= 0)
		})
	}
}

func TestMergeIgnoresServerKeys(t *testing.T) {
	is := is.New(t)
	draft := map[string]string{DraftDocumentFile: "file_mine", "accept_terms": "on"}
	Merge(draft, map[string][]string{DraftDocumentFile: {"file_someone_elses"}, "legal_name": {"  Nova  "}, "unknown": {"x"}}, "documents")
	is.Equal(draft[DraftDocumentFile], "file_mine") // never taken from the form
	is.Equal(draft["legal_name"], "Nova")
	_, ok := draft["unknown"]
	is.True(!ok)
	_, ok = draft["accept_terms"]
	is.True(!ok) // an unchecked box of the posted step is cleared
}

func TestPrefill(t *testing.T) {
	is := is.New(t)
	doc, typ, phone := "52998224725", "cpf", "+5511912345678"
	org := &domain.Organization{Name: "Maria ME", Document: &doc, DocumentType: &typ, Phone: &phone,
		Address: &domain.Address{Line1: "Rua A", Number: "1", City: "Recife", State: "PE", PostalCode: "50000000"}}
	v := Prefill(org, domain.ActivationProfile{BankAccount: domain.BankAccount{BankCode: "237"}})
	is.Equal(v["legal_name"], "Maria ME")
	is.Equal(v["phone"], "(11) 91234-5678")
	is.Equal(v["postal_code"], "50000-000")
	is.Equal(v["rep_document"], "529.982.247-25") // a person's own CPF
	is.Equal(v["rep_name"], "Maria ME")
	is.Equal(v["bank_code"], "237")
}

func TestBankCodeFromTheList(t *testing.T) {
	for in, want := range map[string]string{"341": "341", "341 · Itaú Unibanco": "341", " 001 - Banco do Brasil": "001", "999": "", "34": "", "3410": "", "Itaú": ""} {
		if got := BankCode(in); got != want {
			t.Errorf("BankCode(%q) = %q, want %q", in, got, want)
		}
	}
	if BankLabel("260") != "260 · Nubank (Nu Pagamentos)" || BankLabel("999") != "999" {
		t.Error("BankLabel")
	}
	seen := map[string]bool{}
	for _, b := range Banks {
		if len(b.Value) != 3 || seen[b.Value] {
			t.Errorf("bank code %q", b.Value)
		}
		seen[b.Value] = true
	}
}
