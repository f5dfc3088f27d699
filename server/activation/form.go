// Package activation holds the hosted activation form: its steps and fields, the Portuguese
// validation of what a seller types, and the mapping between the form and the organization's
// saved data (prefill on the way in, the organization's fields and activation profile on the
// way out). It knows nothing of HTTP or SQL.
package activation

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"troco/server/document"
	"troco/server/domain"
)

// Field kinds, as HTML input types.
const (
	KindText     = "text"
	KindEmail    = "email"
	KindTel      = "tel"
	KindDate     = "date" // shown as a DD/MM/AAAA text field whatever the browser's locale
	KindBank     = "bank" // a searchable list of COMPE bank codes (Banks)
	KindSelect   = "select"
	KindFile     = "file"
	KindCheckbox = "checkbox"
)

// Option is one choice of a select field.
type Option struct {
	Value, Label string
}

// Field is one input of the form.
type Field struct {
	Name         string
	Label        string
	Kind         string
	Required     bool
	Hint         string
	Autocomplete string
	InputMode    string
	MaxLen       int
	Options      []Option
}

// Step is one page of the form.
type Step struct {
	Key    string
	Title  string
	Intro  string
	Fields []Field
}

// Draft keys the server sets itself (never read from a submitted form).
const (
	DraftDocumentFile     = "document_file"
	DraftDocumentFileName = "document_file_name"
)

// MaxUploadBytes caps the identity document a seller uploads.
const MaxUploadBytes = 5 << 20

// UploadMIMETypes are the sniffed content types accepted for the identity document.
var UploadMIMETypes = []string{"application/pdf", "image/png", "image/jpeg"}

// States are the 27 federative units with their names, for the UF select.
var States = []Option{
	{"AC", "Acre"}, {"AL", "Alagoas"}, {"AP", "Amapá"}, {"AM", "Amazonas"}, {"BA", "Bahia"}, {"CE", "Ceará"},
	{"DF", "Distrito Federal"}, {"ES", "Espírito Santo"}, {"GO", "Goiás"}, {"MA", "Maranhão"}, {"MT", "Mato Grosso"},
	{"MS", "Mato Grosso do Sul"}, {"MG", "Minas Gerais"}, {"PA", "Pará"}, {"PB", "Paraíba"}, {"PR", "Paraná"},
	{"PE", "Pernambuco"}, {"PI", "Piauí"}, {"RJ", "Rio de Janeiro"}, {"RN", "Rio Grande do Norte"},
	{"RS", "Rio Grande do Sul"}, {"RO", "Rondônia"}, {"RR", "Roraima"}, {"SC", "Santa Catarina"}, {"SP", "São Paulo"},
	{"SE", "Sergipe"}, {"TO", "Tocantins"},
}

// AccountTypes are the payout account types with their Portuguese labels.
var AccountTypes = []Option{{"checking", "Conta corrente"}, {"savings", "Conta poupança"}, {"payment", "Conta de pagamento"}}

// Steps is the hosted activation form, in order.
var Steps = []Step{
	{Key: "business", Title: "Dados do negócio", Intro: "Confirme os dados cadastrais da organização.", Fields: []Field{
		{Name: "legal_name", Label: "Razão social ou nome completo", Kind: KindText, Required: true, Autocomplete: "organization", MaxLen: 200},
		{Name: "trade_name", Label: "Nome fantasia", Kind: KindText, MaxLen: 200},
		{Name: "email", Label: "E-mail", Kind: KindEmail, Required: true, Autocomplete: "email", MaxLen: 254},
		{Name: "phone", Label: "Telefone com DDD", Kind: KindTel, Required: true, Autocomplete: "tel", InputMode: "tel", Hint: "Exemplo: (11) 91234-5678.", MaxLen: 20},
	}},
	{Key: "representative", Title: "Representante legal", Intro: "Pessoa responsável legalmente pela organização.", Fields: []Field{
		{Name: "rep_name", Label: "Nome completo", Kind: KindText, Required: true, Autocomplete: "name", MaxLen: 200},
		{Name: "rep_document", Label: "CPF", Kind: KindText, Required: true, InputMode: "numeric", Hint: "Somente o CPF da pessoa, com ou sem pontuação.", MaxLen: 18},
		{Name: "rep_birth_date", Label: "Data de nascimento", Kind: KindDate, Required: true, Autocomplete: "bday", Hint: "DD/MM/AAAA.", MaxLen: 10},
	}},
	{Key: "address", Title: "Endereço", Intro: "Endereço da sede ou do domicílio fiscal.", Fields: []Field{
		{Name: "postal_code", Label: "CEP", Kind: KindText, Required: true, Autocomplete: "postal-code", InputMode: "numeric", Hint: "8 dígitos, como 01310-100.", MaxLen: 9},
		{Name: "line1", Label: "Logradouro", Kind: KindText, Required: true, Autocomplete: "address-line1", Hint: "Rua, avenida, praça…", MaxLen: 200},
		{Name: "number", Label: "Número", Kind: KindText, Required: true, Hint: "Use S/N se não houver.", MaxLen: 20},
		{Name: "line2", Label: "Complemento", Kind: KindText, Autocomplete: "address-line2", Hint: "Apartamento, sala, bloco…", MaxLen: 200},
		{Name: "neighborhood", Label: "Bairro", Kind: KindText, Required: true, MaxLen: 200},
		{Name: "city", Label: "Cidade", Kind: KindText, Required: true, Autocomplete: "address-level2", MaxLen: 200},
		{Name: "state", Label: "UF", Kind: KindSelect, Required: true, Autocomplete: "address-level1", Options: States},
	}},
	{Key: "bank", Title: "Conta bancária para repasses", Intro: "A conta deve estar no CPF ou CNPJ da organização.", Fields: []Field{
		{Name: "bank_code", Label: "Banco", Kind: KindBank, Required: true, Hint: "Digite o nome ou o código e escolha na lista, como 341 · Itaú Unibanco.", MaxLen: 80},
		{Name: "branch", Label: "Agência", Kind: KindText, Required: true, InputMode: "numeric", Hint: "Sem o dígito ou com ele após o hífen: 0001 ou 0001-9.", MaxLen: 7},
		{Name: "account_number", Label: "Conta com dígito", Kind: KindText, Required: true, Hint: "Exemplo: 12345-6.", MaxLen: 16},
		{Name: "account_type", Label: "Tipo de conta", Kind: KindSelect, Required: true, Options: AccountTypes},
	}},
	{Key: "documents", Title: "Documentos", Intro: "Envie um documento de identificação do representante (RG, CNH ou contrato social).", Fields: []Field{
		{Name: DraftDocumentFile, Label: "Documento de identificação", Kind: KindFile, Required: true, Hint: "PDF, PNG ou JPEG, até 5 MB."},
		{Name: "accept_terms", Label: "Declaro que as informações prestadas são verdadeiras.", Kind: KindCheckbox, Required: true},
	}},
}

// StepIndex returns the index of the step with key, or -1.
func StepIndex(key string) int {
	return slices.IndexFunc(Steps, func(s Step) bool { return s.Key == key })
}

// Merge copies into draft the values of every known typed field present in form (the file and
// the server's own keys excepted), so a page may carry the fields of any step. Checkboxes are
// read as part of their step: stepKey's unchecked boxes are cleared.
func Merge(draft map[string]string, form map[string][]string, stepKey string) {
	for _, st := range Steps {
		for _, f := range st.Fields {
			if f.Kind == KindFile {
				continue
			}
			v, ok := form[f.Name]
			switch {
			case ok && len(v) > 0:
				val := strings.TrimSpace(v[0])
				if f.MaxLen > 0 && utf8.RuneCountInString(val) > 4*f.MaxLen {
					val = string([]rune(val)[:4*f.MaxLen]) // a bound on what is stored; validation reports the length
				}
				draft[f.Name] = val
			case f.Kind == KindCheckbox && st.Key == stepKey:
				delete(draft, f.Name)
			}
		}
	}
}

// Result is a validated form: the organization's public fields and its activation profile.
type Result struct {
	LegalName string
	Email     string
	Phone     string
	Address   domain.Address
	Profile   domain.ActivationProfile
}

// ValidateStep checks one step of values and returns field → Portuguese message.
func ValidateStep(i int, values map[string]string, now time.Time) map[string]string {
	errs := map[string]string{}
	for _, f := range Steps[i].Fields {
		v := values[f.Name]
		if f.Required && strings.TrimSpace(v) == "" {
			errs[f.Name] = requiredMessage(f)
			continue
		}
		if f.MaxLen > 0 && f.Kind != KindDate && utf8.RuneCountInString(v) > f.MaxLen {
			errs[f.Name] = "Use no máximo " + itoa(f.MaxLen) + " caracteres."
			continue
		}
		if v == "" {
			continue
		}
		if _, bad := domain.ForbiddenTextRune(v); bad || !utf8.ValidString(v) {
			errs[f.Name] = "Remova os caracteres de controle invisíveis deste campo (apague e digite o texto de novo)."
			continue
		}
		if msg := check(f.Name, v, now); msg != "" {
			errs[f.Name] = msg
		}
	}
	return errs
}

// Validate checks every step and returns the result, or the errors and the first failing step.
func Validate(values map[string]string, now time.Time) (*Result, map[string]string, int) {
	all := map[string]string{}
	first := -1
	for i := range Steps {
		errs := ValidateStep(i, values, now)
		if len(errs) > 0 && first < 0 {
			first = i
		}
		for k, v := range errs {
			all[k] = v
		}
	}
	if first >= 0 {
		return nil, all, first
	}
	rep, _ := document.Parse(values["rep_document"])
	birth, _ := parseDate(values["rep_birth_date"])
	addr := document.Address{Line1: values["line1"], Number: values["number"], Line2: values["line2"], Neighborhood: values["neighborhood"],
		City: values["city"], State: values["state"], PostalCode: values["postal_code"]}.Normalize()
	if _, err := addr.Validate(); err != nil {
		// The per-field checks above mirror document.Address; this is the authority.
		return nil, map[string]string{"postal_code": "Endereço inválido: confira CEP e UF."}, StepIndex("address")
	}
	r := &Result{
		LegalName: strings.TrimSpace(values["legal_name"]),
		Email:     strings.TrimSpace(values["email"]),
		Phone:     NormalizePhone(values["phone"]),
		Address: domain.Address{Line1: addr.Line1, Number: addr.Number, Line2: addr.Line2, Neighborhood: addr.Neighborhood,
			City: addr.City, State: addr.State, PostalCode: addr.PostalCode, Country: addr.Country},
		Profile: domain.ActivationProfile{
			TradeName:      strings.TrimSpace(values["trade_name"]),
			Representative: domain.Representative{Name: strings.TrimSpace(values["rep_name"]), Document: rep.Number, BirthDate: birth.Format("2006-01-02")},
			BankAccount: domain.BankAccount{BankCode: BankCode(values["bank_code"]), Branch: NormalizeBranch(values["branch"]),
				AccountNumber: NormalizeAccount(values["account_number"]), AccountType: values["account_type"]},
			DocumentFile: values[DraftDocumentFile],
		},
	}
	return r, nil, -1
}

func requiredMessage(f Field) string {
	switch f.Name {
	case "legal_name":
		return "Informe a razão social ou o nome completo."
	case "email":
		return "Informe o e-mail."
	case "phone":
		return "Informe o telefone com DDD."
	case "rep_name":
		return "Informe o nome completo do representante."
	case "rep_document":
		return "Informe o CPF do representante."
	case "rep_birth_date":
		return "Informe a data de nascimento."
	case "postal_code":
		return "Informe o CEP."
	case "line1":
		return "Informe o logradouro."
	case "number":
		return "Informe o número (ou S/N)."
	case "neighborhood":
		return "Informe o bairro."
	case "city":
		return "Informe a cidade."
	case "state":
		return "Selecione a UF."
	case "bank_code":
		return "Informe o código do banco."
	case "branch":
		return "Informe a agência."
	case "account_number":
		return "Informe a conta com o dígito."
	case "account_type":
		return "Selecione o tipo de conta."
	case DraftDocumentFile:
		return "Envie um documento de identificação (PDF, PNG ou JPEG, até 5 MB)."
	case "accept_terms":
		return "Confirme que as informações são verdadeiras."
	}
	return "Campo obrigatório."
}

var (
	reBankCode = regexp.MustCompile(`^[0-9]{3}$`)
	reBranch   = regexp.MustCompile(`^[0-9]{1,5}(-?[0-9Xx])?$`)
	reAccount  = regexp.MustCompile(`^[0-9]{1,12}-?[0-9Xx]$`)
)

// check validates one non-empty value and returns its Portuguese message, or "".
func check(name, v string, now time.Time) string {
	switch name {
	case "email":
		if domain.ValidateEmail("email", v) != nil {
			return "Informe um e-mail válido, como financeiro@empresa.com.br."
		}
	case "phone":
		if NormalizePhone(v) == "" {
			return "Informe um telefone válido com DDD, como (11) 91234-5678."
		}
	case "rep_document":
		return cpfMessage(v)
	case "rep_birth_date":
		d, err := parseDate(v)
		switch {
		case err != nil:
			return "Data inválida: use o formato DD/MM/AAAA."
		case d.After(now):
			return "A data de nascimento não pode estar no futuro."
		case d.AddDate(18, 0, 0).After(now):
			return "O representante legal deve ter pelo menos 18 anos."
		case d.AddDate(120, 0, 0).Before(now):
			return "Confira o ano de nascimento."
		}
	case "postal_code":
		cep := strings.NewReplacer("-", "", ".", "", " ", "").Replace(v)
		if len(cep) != 8 || !digits(cep) {
			return "O CEP deve ter 8 dígitos, como 01310-100."
		}
	case "state":
		if !slices.ContainsFunc(States, func(o Option) bool { return o.Value == strings.ToUpper(v) }) {
			return "Selecione uma UF válida."
		}
	case "bank_code":
		if BankCode(v) == "" {
			return "Escolha o banco na lista (digite o nome ou o código de 3 dígitos, como 341)."
		}
	case "branch":
		if !reBranch.MatchString(v) {
			return "Agência inválida: use até 5 dígitos e, se houver, o dígito após o hífen (0001-9)."
		}
	case "account_number":
		if !reAccount.MatchString(strings.ReplaceAll(v, ".", "")) {
			return "Conta inválida: informe os números e o dígito, como 12345-6."
		}
	case "account_type":
		if !slices.ContainsFunc(AccountTypes, func(o Option) bool { return o.Value == v }) {
			return "Selecione o tipo de conta."
		}
	case "accept_terms":
		if v != "on" && v != "true" && v != "1" {
			return "Confirme que as informações são verdadeiras."
		}
	}
	return ""
}

// cpfMessage explains why v is not a valid CPF, or returns "".
func cpfMessage(v string) string {
	d, err := document.Parse(v)
	switch {
	case errors.Is(err, document.ErrCheckDigit), errors.Is(err, document.ErrAllEqual):
		return "CPF inválido: confira os números digitados."
	case err != nil:
		return "O CPF deve ter 11 dígitos, como 123.456.789-09."
	case d.Type != document.TypeCPF:
		return "Informe o CPF da pessoa (11 dígitos), não um CNPJ."
	}
	return ""
}

// parseDate reads YYYY-MM-DD (the date input) or DD/MM/AAAA (typed by hand).
// DisplayDate writes a stored or typed date as the form shows it, DD/MM/AAAA (what does not parse
// is shown as typed).
func DisplayDate(v string) string {
	if t, err := parseDate(v); err == nil {
		return t.Format("02/01/2006")
	}
	return v
}

func parseDate(v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	if t, err := time.Parse("2006-01-02", v); err == nil {
		return t, nil
	}
	return time.Parse("02/01/2006", v)
}

// normalizePhone returns +55 and the 10 or 11 digits of a Brazilian phone with area code, or "".
func NormalizePhone(v string) string {
	var b strings.Builder
	for _, r := range v {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case strings.ContainsRune(" ()-+.", r):
		default:
			return ""
		}
	}
	d := b.String()
	if strings.HasPrefix(strings.TrimSpace(v), "+") || len(d) > 11 {
		var ok bool
		if d, ok = strings.CutPrefix(d, "55"); !ok {
			return ""
		}
	}
	if len(d) != 10 && len(d) != 11 || d[0] == '0' || d[1] == '0' {
		return ""
	}
	return "+55" + d
}

// NormalizeBranch writes an agência with its check digit, if any, after a hyphen.
func NormalizeBranch(v string) string {
	v = strings.ToUpper(v)
	if strings.Contains(v, "-") || len(v) <= 4 {
		return v
	}
	return v[:len(v)-1] + "-" + v[len(v)-1:]
}

// NormalizeAccount writes an account number with its check digit after a hyphen.
func NormalizeAccount(v string) string {
	v = strings.ToUpper(strings.ReplaceAll(v, ".", ""))
	if strings.Contains(v, "-") {
		return v
	}
	return v[:len(v)-1] + "-" + v[len(v)-1:]
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// Prefill returns the form values for an organization from its saved record and profile, so a
// seller (or a disabled organization retrying) starts from what is already known.
func Prefill(org *domain.Organization, p domain.ActivationProfile) map[string]string {
	v := map[string]string{"legal_name": org.Name, "trade_name": p.TradeName}
	if org.Email != nil {
		v["email"] = *org.Email
	}
	if org.Phone != nil {
		v["phone"] = FormatPhone(*org.Phone)
	}
	if a := org.Address; a != nil {
		v["postal_code"], v["line1"], v["number"], v["line2"] = FormatCEP(a.PostalCode), a.Line1, a.Number, a.Line2
		v["neighborhood"], v["city"], v["state"] = a.Neighborhood, a.City, a.State
	}
	r := p.Representative
	v["rep_name"], v["rep_birth_date"] = r.Name, r.BirthDate
	switch {
	case r.Document != "":
		v["rep_document"] = document.Document{Type: document.TypeCPF, Number: r.Document}.Mask()
	case org.DocumentType != nil && *org.DocumentType == string(document.TypeCPF) && org.Document != nil:
		v["rep_document"] = document.Document{Type: document.TypeCPF, Number: *org.Document}.Mask()
		if v["rep_name"] == "" {
			v["rep_name"] = org.Name
		}
	}
	b := p.BankAccount
	v["bank_code"], v["branch"], v["account_number"], v["account_type"] = b.BankCode, b.Branch, b.AccountNumber, b.AccountType
	for k, val := range v {
		if val == "" {
			delete(v, k)
		}
	}
	return v
}

// FormatPhone shows +5511912345678 as (11) 91234-5678.
func FormatPhone(p string) string {
	d, ok := strings.CutPrefix(p, "+55")
	if !ok || !digits(d) || len(d) < 10 {
		return p
	}
	return "(" + d[:2] + ") " + d[2:len(d)-4] + "-" + d[len(d)-4:]
}

// FormatCEP shows 01310100 as 01310-100.
func FormatCEP(c string) string {
	if len(c) != 8 || !digits(c) {
		return c
	}
	return c[:5] + "-" + c[5:]
}

// MissingLabel explains a requirements.missing path to the seller.
func MissingLabel(path string) string {
	switch path {
	case "documents.identity":
		return "Documento de identificação: envie novamente um documento legível e dentro da validade."
	case "representative":
		return "Representante legal: confira nome, CPF e data de nascimento."
	case "bank_account":
		return "Conta bancária: a conta deve estar no CPF ou CNPJ da organização."
	case "address":
		return "Endereço: confira CEP, número e UF."
	}
	return "Pendência: " + path
}

// ValidBankCode reports whether v is a 3-digit COMPE bank code.
func ValidBankCode(v string) bool { return reBankCode.MatchString(v) }

// ValidBranch reports whether v is an agência: up to 5 digits and an optional check digit.
func ValidBranch(v string) bool { return reBranch.MatchString(v) }

// ValidAccountNumber reports whether v is an account number with its check digit.
func ValidAccountNumber(v string) bool { return reAccount.MatchString(strings.ReplaceAll(v, ".", "")) }
