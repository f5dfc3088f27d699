package fees

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestMaxInstallments(t *testing.T) {
	tests := []struct {
		amount       int64
		brandCeiling int
		orgMax       int
		want         int
	}{
		{amount: 0, brandCeiling: 12, want: 1},
		{amount: 499, brandCeiling: 12, want: 1},
		{amount: 500, brandCeiling: 12, want: 1},
		{amount: 999, brandCeiling: 12, want: 1},
		{amount: 1000, brandCeiling: 12, want: 2},
		{amount: 5000, brandCeiling: 12, want: 10},
		{amount: 5999, brandCeiling: 12, want: 11},
		{amount: 6000, brandCeiling: 12, want: 12},
		{amount: 100000, brandCeiling: 12, want: 12},
		{amount: 100000, brandCeiling: 12, orgMax: 3, want: 3},
		{amount: 100000, brandCeiling: 12, orgMax: 20, want: 12}, // higher org ceiling does not win
		{amount: 2000, brandCeiling: 12, orgMax: 6, want: 4},     // amount limit lower than org's
		{amount: 100000, brandCeiling: 6, want: 6},               // a lower brand ceiling wins
		{amount: 100000, brandCeiling: 0, want: 12},              // no brand limit
		{amount: -100, brandCeiling: 12, want: 1},                // never below 1
		{amount: 100000, brandCeiling: BrandCeiling("elo"), want: 12},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d/%d/%d", tt.amount, tt.brandCeiling, tt.orgMax), func(t *testing.T) {
			is := is.New(t)
			is.Equal(MaxInstallments(tt.amount, tt.brandCeiling, tt.orgMax), tt.want)
		})
	}
}

func TestBrandCeiling(t *testing.T) {
	is := is.New(t)
	for _, brand := range []string{"visa", "mastercard", "amex", "elo", "hipercard", "diners", ""} {
		is.Equal(BrandCeiling(brand), MaxInstallmentsAbsolute) // every supported brand allows 12
	}
}

func TestCheckInstallments(t *testing.T) {
	is := is.New(t)

	is.NoErr(CheckInstallments(1, 499, 0, "visa"))    // 1x always allowed
	is.NoErr(CheckInstallments(10, 5000, 0, "visa"))  // at the ceiling
	is.NoErr(CheckInstallments(12, 100000, 0, ""))    // brand not known yet
	is.NoErr(CheckInstallments(3, 100000, 3, "visa")) // at the org ceiling

	err := CheckInstallments(11, 5000, 0, "visa")
	var ie *InstallmentError
	is.True(errors.As(err, &ie)) // over the amount ceiling
	is.Equal(ie.Param, "installments")
	is.Equal(ie.Code, "invalid_request")
	is.Equal(ie.Message, "The number of installments (11) exceeds the maximum allowed for this amount (10).")
	is.Equal(err.Error(), ie.Message)

	err = CheckInstallments(4, 100000, 3, "visa")
	is.True(errors.As(err, &ie)) // over the org ceiling
	is.Equal(ie.Message, "The number of installments (4) exceeds the maximum allowed for this amount (3).")

	err = CheckInstallments(13, 1000000, 0, "visa")
	is.True(errors.As(err, &ie)) // over the absolute ceiling
	is.Equal(ie.Message, "The number of installments (13) exceeds the maximum allowed for this amount (12).")

	for _, count := range []int{0, -1} {
		err = CheckInstallments(count, 100000, 0, "visa")
		is.True(errors.As(err, &ie)) // below one
		is.Equal(ie.Param, "installments")
		is.Equal(ie.Code, "invalid_request")
		is.Equal(ie.Message, fmt.Sprintf("The number of installments (%d) must be at least 1.", count))
	}

	// The message must be identical in live and test: it never names a mode.
	for _, msg := range []string{
		CheckInstallments(0, 5000, 0, "").Error(),
		CheckInstallments(13, 5000, 0, "").Error(),
	} {
		lower := strings.ToLower(msg)
		is.True(!strings.Contains(lower, "test"))    // no mode in message
		is.True(!strings.Contains(lower, "live"))    // no mode in message
		is.True(!strings.Contains(lower, "sandbox")) // no mode in message
	}
}
