package fees

import (
	"errors"
	"math/big"
)

// Payment method types, as sent in `payment_method_type` (CONTRACT 4).
const (
	// MethodCreditCard is a card payment, charged a percentage plus a fixed fee.
	MethodCreditCard = "credit_card"

	// MethodPix is a PIX payment, charged a flat fee.
	MethodPix = "pix"

	// MethodBoleto is a boleto payment, charged a flat fee.
	MethodBoleto = "boleto"
)

// Plan is an organization's processing fee plan; the same plan applies in live and test mode (SPEC 8.6).
type Plan struct {
	// CardFeeRate is the card fee in basis points of the amount charged.
	CardFeeRate int64

	// CardFixedFee is the fixed card fee per sale, in centavos.
	CardFixedFee int64

	// PixFee is the flat PIX fee per payment, in centavos.
	PixFee int64

	// BoletoFee is the flat boleto fee per payment, in centavos.
	BoletoFee int64
}

// DefaultPlan is the fee plan of CONTRACT 5: card 3.99% + R$ 0,39, PIX R$ 0,99, boleto R$ 3,49.
var DefaultPlan = Plan{CardFeeRate: 399, CardFixedFee: 39, PixFee: 99, BoletoFee: 349}

// Validate reports a plan with a negative fee or a card rate above 100%.
func (p Plan) Validate() error {
	if p.CardFeeRate < 0 || p.CardFeeRate > rateScale {
		return errors.New("fees: card fee rate must be between 0 and 10000 basis points")
	}
	if p.CardFixedFee < 0 || p.PixFee < 0 || p.BoletoFee < 0 {
		return errors.New("fees: fees must not be negative")
	}
	return nil
}

// Fee returns the processing fee, in centavos, for one payment of amount
// centavos by method.
//
// Card: amount·CardFeeRate/10000 rounded half up to the centavo (0.5 centavo
// rounds up; computed exactly in integers), plus CardFixedFee, charged once
// per sale whatever the instalment count; amount is what the buyer pays,
// interest included when the buyer bears it. PIX and boleto: the flat fee.
// An amount of zero or less (nothing is collected) and an unknown method cost
// nothing, so callers must validate the method first.
func (p Plan) Fee(method string, amount int64) int64 {
	if amount <= 0 {
		return 0
	}
	switch method {
	case MethodCreditCard:
		return mulDivHalfUp(amount, p.CardFeeRate, rateScale) + p.CardFixedFee
	case MethodPix:
		return p.PixFee
	case MethodBoleto:
		return p.BoletoFee
	}
	return 0
}

// mulDivHalfUp returns a·b/d for non-negative a, b and positive d, rounded
// half up, without overflowing the intermediate product.
func mulDivHalfUp(a, b, d int64) int64 {
	x := new(big.Int).Mul(big.NewInt(a), big.NewInt(b))
	x.Mul(x, big.NewInt(2))
	x.Add(x, big.NewInt(d))
	x.Quo(x, big.NewInt(2*d)) // floor((2ab + d) / 2d) = round half up of ab/d
	return x.Int64()
}

// CardEntries returns the ledger entries of a card sale of amount centavos in
// count instalments: the buyer's gross per OptionFor, the plan's card fee on
// that gross, and the interest deducted from the net when the organization
// bears it.
func (p Plan) CardEntries(amount int64, payer InterestPayer, rate int64, count int) []Entry {
	option := OptionFor(amount, payer, rate, count)
	orgInterest := int64(0)
	if payer != InterestPayerBuyer {
		orgInterest = option.InterestAmount
	}
	return Split(option.TotalAmount, option.Count, p.Fee(MethodCreditCard, option.TotalAmount), orgInterest)
}
