package fees

import (
	"fmt"
	"math/big"
)

// InterestPayer says who bears the instalment interest of a card sale.
type InterestPayer string

const (
	// InterestPayerOrganization is the default: the buyer pays the upfront value and the interest is deducted from the organization's net.
	InterestPayerOrganization InterestPayer = "organization"

	// InterestPayerBuyer adds the interest to the buyer's total.
	InterestPayerBuyer InterestPayer = "buyer"
)

// DefaultInstallmentInterestRate is the monthly instalment interest, in basis points, of CONTRACT 5.
const DefaultInstallmentInterestRate int64 = 299

// rateScale is 100% in basis points.
const rateScale = 10000

// ParseInterestPayer reads an `interest_payer` request value; empty means the
// default (organization) and any other unknown value reports false.
func ParseInterestPayer(s string) (InterestPayer, bool) {
	switch InterestPayer(s) {
	case "", InterestPayerOrganization:
		return InterestPayerOrganization, true
	case InterestPayerBuyer:
		return InterestPayerBuyer, true
	}
	return "", false
}

// PriceInstallment returns the Price-table instalment for amount centavos at
// rate basis points per month over count months, rounded up to the centavo:
// PMT = PV·i / (1 − (1+i)^−n).
//
// One instalment (or fewer) carries no interest and returns amount; a rate of
// zero or less means no interest and returns amount/count rounded up.
func PriceInstallment(amount int64, rate int64, count int) int64 {
	if count <= 1 {
		return amount
	}
	return ceilInt64(priceInstallmentExact(amount, rate, count))
}

// priceInstallmentExact evaluates the Price table exactly as a rational number.
func priceInstallmentExact(amount int64, rate int64, count int) *big.Rat {
	pv := new(big.Rat).SetInt64(amount)
	n := big.NewRat(int64(count), 1)
	if rate <= 0 {
		return pv.Quo(pv, n)
	}
	i := big.NewRat(rate, rateScale)
	// growth = (1+i)^n, computed on the integer form ((10000+rate)/10000)^n.
	num := new(big.Int).Exp(big.NewInt(rateScale+rate), big.NewInt(int64(count)), nil)
	den := new(big.Int).Exp(big.NewInt(rateScale), big.NewInt(int64(count)), nil)
	discount := new(big.Rat).SetFrac(den, num) // (1+i)^−n
	divisor := new(big.Rat).Sub(big.NewRat(1, 1), discount)
	pmt := new(big.Rat).Mul(pv, i)
	return pmt.Quo(pmt, divisor)
}

// ceilInt64 rounds r up to an integer; it panics if the result does not fit
// an int64, which no real sale approaches.
func ceilInt64(r *big.Rat) int64 {
	q, m := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int)) // Euclidean: q = floor, m ≥ 0
	if m.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsInt64() {
		panic(fmt.Sprintf("fees: amount %s overflows int64", q))
	}
	return q.Int64()
}

// Option is one instalment choice offered to the buyer, shaped like an entry
// of `installments.options` in the payment preview of CONTRACT 5.
type Option struct {
	// Count is the number of monthly instalments.
	Count int `json:"count"`

	// InstallmentAmount is the largest single instalment the buyer is charged.
	InstallmentAmount int64 `json:"installment_amount"`

	// TotalAmount is what the buyer pays over all instalments.
	TotalAmount int64 `json:"total_amount"`

	// InterestAmount is the Price-table interest: added to TotalAmount when the buyer pays it, deducted from the organization's net otherwise.
	InterestAmount int64 `json:"interest_amount"`
}

// OptionFor computes the instalment option for count instalments of a sale of
// amount centavos at rate basis points per month, with interest borne by payer.
//
// The interest is the same in both cases: PriceInstallment·count − amount
// (zero for one instalment). With InterestPayerBuyer every instalment is the
// Price-table instalment and TotalAmount = InstallmentAmount·count. With
// InterestPayerOrganization (and any unknown payer) the buyer pays exactly
// amount, split by InstallmentAmounts: the first amount%count instalments
// carry one extra centavo, so InstallmentAmount is amount/count rounded up.
func OptionFor(amount int64, payer InterestPayer, rate int64, count int) Option {
	count = max(count, 1)
	interest := int64(0)
	pmt := PriceInstallment(amount, rate, count)
	if count > 1 && rate > 0 {
		interest = pmt*int64(count) - amount
	}
	if payer == InterestPayerBuyer {
		if interest == 0 {
			// No interest: the buyer pays the upfront value, split like the organization case.
			return Option{Count: count, InstallmentAmount: InstallmentAmounts(amount, count)[0], TotalAmount: amount}
		}
		return Option{Count: count, InstallmentAmount: pmt, TotalAmount: pmt * int64(count), InterestAmount: interest}
	}
	return Option{
		Count:             count,
		InstallmentAmount: InstallmentAmounts(amount, count)[0],
		TotalAmount:       amount,
		InterestAmount:    interest,
	}
}

// Options lists OptionFor for every count from 1 to maxCount (at least one
// option, for a single instalment).
func Options(amount int64, payer InterestPayer, rate int64, maxCount int) []Option {
	maxCount = max(maxCount, 1)
	options := make([]Option, 0, maxCount)
	for count := 1; count <= maxCount; count++ {
		options = append(options, OptionFor(amount, payer, rate, count))
	}
	return options
}

// InstallmentAmounts splits total centavos into count instalments that add up
// exactly: each is total/count and the first total%count instalments carry one
// extra centavo, so no two differ by more than one centavo.
func InstallmentAmounts(total int64, count int) []int64 {
	count = max(count, 1)
	return evenSplit(total, count)
}
