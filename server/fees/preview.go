package fees

// PreviewResult is the `installments` object of a `payment_preview`
// (CONTRACT 5); the HTTP layer wraps it with `object` and `livemode`.
type PreviewResult struct {
	// MaxCount is the effective instalment ceiling for the amount.
	MaxCount int `json:"max_count"`

	// Options holds one Option per count from 1 to MaxCount.
	Options []Option `json:"options"`
}

// Preview computes the card instalment options for amount centavos at the
// default interest rate; brand may be empty when the card is not yet known.
// The result is the same in live and test mode.
func Preview(amount int64, payer InterestPayer, orgMax int, brand string) PreviewResult {
	return PreviewAtRate(amount, payer, DefaultInstallmentInterestRate, orgMax, brand)
}

// PreviewAtRate is Preview for an organization whose monthly interest rate
// (basis points) differs from DefaultInstallmentInterestRate.
func PreviewAtRate(amount int64, payer InterestPayer, rate int64, orgMax int, brand string) PreviewResult {
	maxCount := MaxInstallments(amount, BrandCeiling(brand), orgMax)
	return PreviewResult{MaxCount: maxCount, Options: Options(amount, payer, rate, maxCount)}
}
