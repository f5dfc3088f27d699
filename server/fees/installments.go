package fees

import "fmt"

const (
	// MaxInstallmentsAbsolute is the platform-wide instalment ceiling (CONTRACT 5).
	MaxInstallmentsAbsolute = 12

	// MinInstallmentAmount is the smallest instalment, in centavos, that lowers the ceiling for small sales.
	MinInstallmentAmount = 500
)

// BrandCeiling returns the most instalments a card brand allows; every brand
// troco supports (and an unknown or not yet known brand) allows 12.
func BrandCeiling(brand string) int {
	return MaxInstallmentsAbsolute
}

// MaxInstallments returns the effective instalment ceiling of SPEC 8 rule 3:
// the smallest of 12, floor(amount/500) and brandCeiling, then orgMax when it
// is positive and lower, and never below 1.
//
// A brandCeiling of zero or less means "no brand limit" and is ignored, as is
// an orgMax of zero or less (the organization has set no limit).
func MaxInstallments(amount int64, brandCeiling int, orgMax int) int {
	ceiling := int64(MaxInstallmentsAbsolute)
	ceiling = min(ceiling, amount/MinInstallmentAmount)
	if brandCeiling > 0 {
		ceiling = min(ceiling, int64(brandCeiling))
	}
	if orgMax > 0 {
		ceiling = min(ceiling, int64(orgMax))
	}
	return int(max(ceiling, 1))
}

// InstallmentError reports an instalment count the sale does not allow; the
// HTTP layer answers it with 400 and the same message in live and test mode.
type InstallmentError struct {
	// Param names the offending request field, always "installments".
	Param string

	// Code is the public error code, always "invalid_request".
	Code string

	// Message is the English text shown to the client, with no mode in it.
	Message string
}

// Error returns the public message.
func (e *InstallmentError) Error() string {
	return e.Message
}

// CheckInstallments validates an instalment count for a card sale of amount
// centavos, returning an *InstallmentError when count is below 1 or above
// MaxInstallments for that amount, brand and organization ceiling.
func CheckInstallments(count int, amount int64, orgMax int, brand string) error {
	if count < 1 {
		return &InstallmentError{
			Param:   "installments",
			Code:    "invalid_request",
			Message: fmt.Sprintf("The number of installments (%d) must be at least 1.", count),
		}
	}
	ceiling := MaxInstallments(amount, BrandCeiling(brand), orgMax)
	if count > ceiling {
		return &InstallmentError{
			Param:   "installments",
			Code:    "invalid_request",
			Message: fmt.Sprintf("The number of installments (%d) exceeds the maximum allowed for this amount (%d).", count, ceiling),
		}
	}
	return nil
}
