package document

import (
	"errors"
	"testing"

	"github.com/matryer/is"
)

func TestParseValid(t *testing.T) {
	tests := []struct {
		in       string
		wantType Type
		wantNum  string
		wantMask string
	}{
		{"12ABC34501DE35", TypeCNPJ, "12ABC34501DE35", "12.ABC.345/01DE-35"},
		{"12.ABC.345/01DE-35", TypeCNPJ, "12ABC34501DE35", "12.ABC.345/01DE-35"},
		{"12.abc.345/01de-35", TypeCNPJ, "12ABC34501DE35", "12.ABC.345/01DE-35"},
		{"529.982.247-25", TypeCPF, "52998224725", "529.982.247-25"},
		{" 52998224725 ", TypeCPF, "52998224725", "529.982.247-25"},
		{"11.222.333/0001-81", TypeCNPJ, "11222333000181", "11.222.333/0001-81"},
		{"00000000191", TypeCPF, "00000000191", "000.000.001-91"},
		{"00000000000191", TypeCNPJ, "00000000000191", "00.000.000/0001-91"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			is := is.New(t)
			d, err := Parse(tt.in)
			is.NoErr(err) // valid document
			is.Equal(d.Type, tt.wantType)
			is.Equal(d.Number, tt.wantNum) // normalised
			is.Equal(d.Mask(), tt.wantMask)
		})
	}
}

func TestParseInvalid(t *testing.T) {
	tests := []struct {
		in   string
		want error
	}{
		{"", ErrLength},
		{"1234567890", ErrLength},
		{"123456789012", ErrLength},
		{"123456789012345", ErrLength},
		{"529.982.247-24", ErrCheckDigit},
		{"529.982.247-35", ErrCheckDigit},
		{"11.222.333/0001-82", ErrCheckDigit},
		{"12ABC34501DE36", ErrCheckDigit},
		{"12ABC34501DF35", ErrCheckDigit},
		{"00000000192", ErrCheckDigit},
		{"00000000000192", ErrCheckDigit},
		{"111.111.111-11", ErrAllEqual},
		{"00000000000", ErrAllEqual},
		{"00000000000000", ErrAllEqual},
		{"99.999.999/9999-99", ErrAllEqual},
		{"5299822472A", ErrCharacters},    // CPF with a letter
		{"12ABC34501DE3A", ErrCharacters}, // CNPJ letter in a check digit
		{"529_982_247_25", ErrCharacters},
		{"5299822472á", ErrCharacters},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			is := is.New(t)
			_, err := Parse(tt.in)
			is.True(errors.Is(err, tt.want)) // rejected for the expected reason
		})
	}
}

func TestErrorsDistinct(t *testing.T) {
	is := is.New(t)
	errs := []error{ErrLength, ErrCharacters, ErrAllEqual, ErrCheckDigit}
	for i := range errs {
		for j := range errs {
			if i != j {
				is.True(!errors.Is(errs[i], errs[j])) // each reason is its own error
			}
		}
	}
}

func TestActivationOutcome(t *testing.T) {
	rows := TestDocuments()
	is := is.New(t)
	is.Equal(len(rows), 5) // one row per CONTRACT 6 outcome
	for _, row := range rows {
		for _, number := range []string{row.CPF, row.CNPJ} {
			t.Run(number, func(t *testing.T) {
				is := is.New(t)
				d, err := Parse(number)
				is.NoErr(err) // every test document is valid
				is.Equal(ActivationOutcome(d), row.Outcome)
			})
		}
	}
	for _, other := range []string{"52998224725", "11222333000181", "12ABC34501DE35"} {
		d, err := Parse(other)
		is.NoErr(err)
		is.Equal(ActivationOutcome(d), OutcomeApproved) // any other valid document
	}

	rows[0].Outcome = OutcomeDisabledFinal
	is.Equal(TestDocuments()[0].Outcome, OutcomeApproved) // callers get a copy
	is.Equal(MaxActivationAttempts, 3)
}

func TestOutcomeStatus(t *testing.T) {
	tests := []struct {
		outcome    Outcome
		wantStatus string
		wantReason string
	}{
		{OutcomeApproved, "active", ""},
		{OutcomeInReview, "in_review", ""},
		{OutcomeDisabledRetryable, "disabled", ""},
		{OutcomeDisabledFinal, "disabled", "rejected.other"},
		{OutcomeDocumentInUse, "", ""},
	}
	for _, tt := range tests {
		t.Run(string(tt.outcome), func(t *testing.T) {
			is := is.New(t)
			is.Equal(tt.outcome.ActivationStatus(), tt.wantStatus)
			is.Equal(tt.outcome.DisabledReason(), tt.wantReason)
		})
	}
}

func TestAddress(t *testing.T) {
	valid := Address{
		Line1: "Avenida Paulista", Number: "1578", Neighborhood: "Bela Vista",
		City: "São Paulo", State: "SP", PostalCode: "01310-200",
	}
	tests := []struct {
		name      string
		edit      func(a *Address)
		wantParam string
		wantErr   error
	}{
		{"valid", func(a *Address) {}, "", nil},
		{"valid lower-case state and country", func(a *Address) { a.State, a.Country = "sp", "br" }, "", nil},
		{"valid digits-only CEP", func(a *Address) { a.PostalCode = "01310200" }, "", nil},
		{"valid S/N", func(a *Address) { a.Number = "S/N" }, "", nil},
		{"missing line1", func(a *Address) { a.Line1 = "  " }, "billing_address[line1]", ErrAddressRequired},
		{"missing number", func(a *Address) { a.Number = "" }, "billing_address[number]", ErrAddressRequired},
		{"missing neighborhood", func(a *Address) { a.Neighborhood = "" }, "billing_address[neighborhood]", ErrAddressRequired},
		{"missing city", func(a *Address) { a.City = "" }, "billing_address[city]", ErrAddressRequired},
		{"missing state", func(a *Address) { a.State = "" }, "billing_address[state]", ErrAddressRequired},
		{"missing postal code", func(a *Address) { a.PostalCode = "" }, "billing_address[postal_code]", ErrAddressRequired},
		{"unknown state", func(a *Address) { a.State = "XX" }, "billing_address[state]", ErrAddressInvalid},
		{"state name", func(a *Address) { a.State = "São Paulo" }, "billing_address[state]", ErrAddressInvalid},
		{"CEP too short", func(a *Address) { a.PostalCode = "01310-20" }, "billing_address[postal_code]", ErrAddressInvalid},
		{"CEP with letters", func(a *Address) { a.PostalCode = "0131A-200" }, "billing_address[postal_code]", ErrAddressInvalid},
		{"foreign country", func(a *Address) { a.Country = "US" }, "billing_address[country]", ErrAddressInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			a := valid
			tt.edit(&a)
			param, err := a.Validate()
			is.Equal(param, tt.wantParam)
			if tt.wantErr == nil {
				is.NoErr(err) // valid address
				return
			}
			is.True(errors.Is(err, tt.wantErr))                     // reason
			is.Equal(err.Error()[:len(tt.wantParam)], tt.wantParam) // message names the field
		})
	}
}

func TestAddressNormalize(t *testing.T) {
	is := is.New(t)
	got := Address{Line1: " Rua A ", Number: " 10 ", City: "Recife", State: " pe", PostalCode: "50.030-230"}.Normalize()
	is.Equal(got, Address{Line1: "Rua A", Number: "10", City: "Recife", State: "PE", PostalCode: "50030230", Country: "BR"})
}

func TestStates(t *testing.T) {
	is := is.New(t)
	is.Equal(len(states), 27) // 26 states and the Distrito Federal
	seen := map[string]bool{}
	for _, s := range states {
		is.True(!seen[s]) // no duplicates
		seen[s] = true
	}
}
