package fees

import (
	"math/big"
	"testing"

	"github.com/matryer/is"
)

// TestPriceInstallmentBRStandards checks the example of BR-STANDARDS.md
// "Instalments": R$ 5.000,00 at 2%/month over 10 → 556.63.
func TestPriceInstallmentBRStandards(t *testing.T) {
	is := is.New(t)

	// 500000·0.02/(1 − 1.02^−10) = 55663.2639… centavos, exactly.
	exact := priceInstallmentExact(500000, 200, 10)
	floor := new(big.Int).Quo(exact.Num(), exact.Denom())
	is.Equal(floor.Int64(), int64(55663)) // R$ 556.63 as BR-STANDARDS prints it (two decimals of 556.6326…)
	is.Equal(exact.FloatString(4), "55663.2639")

	// CONTRACT 5 rounds the instalment up to the centavo, so the buyer is
	// charged R$ 556.64; a fractional centavo is never given away.
	is.Equal(PriceInstallment(500000, 200, 10), int64(55664))
}

func TestPriceInstallment(t *testing.T) {
	tests := []struct {
		name   string
		amount int64
		rate   int64
		count  int
		want   int64
	}{
		{name: "1x has no interest", amount: 10000, rate: 299, count: 1, want: 10000},
		{name: "0x is 1x", amount: 10000, rate: 299, count: 0, want: 10000},
		// 10000·0.0299·1.0299²/(1.0299²−1) = 299·1.06069401/0.06069401 = 5225.351… → 5226
		{name: "R$100 2x", amount: 10000, rate: 299, count: 2, want: 5226},
		// 10000·0.0299/(1−1.0299^−12) = 1004.021… → 1005
		{name: "R$100 12x", amount: 10000, rate: 299, count: 12, want: 1005},
		// 100000·0.0299/(1−1.0299^−10) = 11717.06… → 11718
		{name: "R$1000 10x", amount: 100000, rate: 299, count: 10, want: 11718},
		// 12345·0.0299/(1−1.0299^−3) = 4363.4… → 4364
		{name: "odd amount 3x", amount: 12345, rate: 299, count: 3, want: 4364},
		// 1% over 2: 10000·0.01·1.0201/0.0201 = 5075.124… → 5076
		{name: "1% 2x", amount: 10000, rate: 100, count: 2, want: 5076},
		{name: "no rate splits rounding up", amount: 10001, rate: 0, count: 2, want: 5001},
		{name: "zero amount", amount: 0, rate: 299, count: 6, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(PriceInstallment(tt.amount, tt.rate, tt.count), tt.want)
		})
	}
}

// TestPriceInstallmentIsCeiling checks, for many inputs, that the instalment
// is the smallest whole centavo not below the exact Price-table value.
func TestPriceInstallmentIsCeiling(t *testing.T) {
	is := is.New(t)
	for _, amount := range []int64{1, 499, 500, 1001, 5000, 9999, 12345, 100000, 987654321} {
		for _, rate := range []int64{1, 100, 200, 299, 1000} {
			for count := 2; count <= MaxInstallmentsAbsolute; count++ {
				exact := priceInstallmentExact(amount, rate, count)
				got := big.NewRat(PriceInstallment(amount, rate, count), 1)
				is.True(got.Cmp(exact) >= 0)                                         // not below the exact value
				is.True(new(big.Rat).Sub(got, exact).Cmp(big.NewRat(1, 1)) < 0)      // less than a centavo above
				is.True(PriceInstallment(amount, rate, count)*int64(count) > amount) // interest is positive
			}
		}
	}
}

func TestParseInterestPayer(t *testing.T) {
	is := is.New(t)
	p, ok := ParseInterestPayer("")
	is.True(ok)
	is.Equal(p, InterestPayerOrganization) // default
	p, ok = ParseInterestPayer("organization")
	is.True(ok)
	is.Equal(p, InterestPayerOrganization)
	p, ok = ParseInterestPayer("buyer")
	is.True(ok)
	is.Equal(p, InterestPayerBuyer)
	_, ok = ParseInterestPayer("Buyer")
	is.True(!ok) // values are exact
	_, ok = ParseInterestPayer("merchant")
	is.True(!ok)
}

func TestOptionsBuyer(t *testing.T) {
	is := is.New(t)
	options := Options(10000, InterestPayerBuyer, DefaultInstallmentInterestRate, 3)
	is.Equal(options, []Option{
		{Count: 1, InstallmentAmount: 10000, TotalAmount: 10000, InterestAmount: 0},
		// 5226·2 = 10452; 10452 − 10000 = 452
		{Count: 2, InstallmentAmount: 5226, TotalAmount: 10452, InterestAmount: 452},
		// 10000·0.0299/(1−1.0299^−3) = 3534.62… → 3535; 3535·3 = 10605
		{Count: 3, InstallmentAmount: 3535, TotalAmount: 10605, InterestAmount: 605},
	})
}

func TestOptionsOrganization(t *testing.T) {
	is := is.New(t)
	options := Options(10000, InterestPayerOrganization, DefaultInstallmentInterestRate, 3)
	is.Equal(options, []Option{
		{Count: 1, InstallmentAmount: 10000, TotalAmount: 10000, InterestAmount: 0},
		{Count: 2, InstallmentAmount: 5000, TotalAmount: 10000, InterestAmount: 452},
		// 10000 = 3334 + 3333 + 3333: the first instalment carries the odd centavo
		{Count: 3, InstallmentAmount: 3334, TotalAmount: 10000, InterestAmount: 605},
	})
}

func TestOptionsOddAmount(t *testing.T) {
	is := is.New(t)
	// 12345 in 12 at 2.99%: 12345·0.0299/(1−1.0299^−12) = 1239.41… → 1240; 1240·12 = 14880.
	buyer := OptionFor(12345, InterestPayerBuyer, 299, 12)
	is.Equal(buyer, Option{Count: 12, InstallmentAmount: 1240, TotalAmount: 14880, InterestAmount: 2535})

	// Organization: 12345 = 9·1029 + 3·1028, the interest is the same 2535.
	org := OptionFor(12345, InterestPayerOrganization, 299, 12)
	is.Equal(org, Option{Count: 12, InstallmentAmount: 1029, TotalAmount: 12345, InterestAmount: 2535})
	is.Equal(InstallmentAmounts(12345, 12), []int64{1029, 1029, 1029, 1029, 1029, 1029, 1029, 1029, 1029, 1028, 1028, 1028})

	// An unknown payer behaves as the default.
	is.Equal(OptionFor(12345, "", 299, 12), org)
}

func TestOptionsNoRate(t *testing.T) {
	is := is.New(t)
	// Without interest, both payers pay exactly the amount.
	for _, payer := range []InterestPayer{InterestPayerBuyer, InterestPayerOrganization} {
		is.Equal(OptionFor(10001, payer, 0, 2), Option{Count: 2, InstallmentAmount: 5001, TotalAmount: 10001})
	}
}

func TestOptionsInvariants(t *testing.T) {
	is := is.New(t)
	for _, amount := range []int64{0, 1, 499, 500, 5000, 5001, 12345, 99999, 100000, 1234567} {
		for _, payer := range []InterestPayer{InterestPayerBuyer, InterestPayerOrganization} {
			options := Options(amount, payer, DefaultInstallmentInterestRate, MaxInstallmentsAbsolute)
			is.Equal(len(options), MaxInstallmentsAbsolute)
			for i, o := range options {
				is.Equal(o.Count, i+1)
				is.True(o.InterestAmount >= 0)
				is.True(o.InstallmentAmount*int64(o.Count) >= o.TotalAmount) // the quoted instalment never understates a charge
				is.True(o.InstallmentAmount*int64(o.Count)-o.TotalAmount < int64(o.Count))
				if o.Count == 1 {
					is.Equal(o.InterestAmount, int64(0)) // 1x has no interest
				}
				if payer == InterestPayerBuyer {
					is.Equal(o.TotalAmount, o.InstallmentAmount*int64(o.Count))
					is.Equal(o.InterestAmount, o.TotalAmount-amount)
				} else {
					is.Equal(o.TotalAmount, amount)
				}
			}
		}
	}
	// Same interest whoever pays it.
	buyer := Options(5001, InterestPayerBuyer, 299, 12)
	org := Options(5001, InterestPayerOrganization, 299, 12)
	for i := range buyer {
		is.Equal(buyer[i].InterestAmount, org[i].InterestAmount)
	}
	is.Equal(len(Options(5000, InterestPayerBuyer, 299, 0)), 1) // at least one option
}
