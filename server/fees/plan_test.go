package fees

import (
	"testing"

	"github.com/matryer/is"
)

func TestPlanFee(t *testing.T) {
	tests := []struct {
		name   string
		method string
		amount int64
		want   int64
	}{
		// 10000·399/10000 = 399, + 39
		{name: "card R$100", method: MethodCreditCard, amount: 10000, want: 438},
		// 12345·0.0399 = 492.5655 → 493, + 39
		{name: "card rounds up above half", method: MethodCreditCard, amount: 12345, want: 532},
		// 1000·0.0399 = 39.9 → 40, + 39
		{name: "card R$10", method: MethodCreditCard, amount: 1000, want: 79},
		// 50·0.0399 = 1.995 → 2, + 39
		{name: "card tiny", method: MethodCreditCard, amount: 50, want: 41},
		// 14880·0.0399 = 593.712 → 594, + 39
		{name: "card rounds down below half", method: MethodCreditCard, amount: 14880, want: 633},
		{name: "pix flat", method: MethodPix, amount: 123456, want: 99},
		{name: "boleto flat", method: MethodBoleto, amount: 123456, want: 349},
		{name: "nothing collected", method: MethodCreditCard, amount: 0, want: 0},
		{name: "unknown method", method: "cash", amount: 10000, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(DefaultPlan.Fee(tt.method, tt.amount), tt.want)
		})
	}
}

func TestPlanFeeHalfUp(t *testing.T) {
	is := is.New(t)
	plan := Plan{CardFeeRate: 5000}                   // 50%: every odd amount lands exactly on half a centavo
	is.Equal(plan.Fee(MethodCreditCard, 1), int64(1)) // 0.5 → 1
	is.Equal(plan.Fee(MethodCreditCard, 3), int64(2)) // 1.5 → 2
	is.Equal(plan.Fee(MethodCreditCard, 4), int64(2)) // 2 exact
	plan = Plan{CardFeeRate: 1}
	is.Equal(plan.Fee(MethodCreditCard, 4999), int64(0))                          // 0.4999 → 0
	is.Equal(plan.Fee(MethodCreditCard, 5000), int64(1))                          // 0.5 → 1
	is.Equal(Plan{CardFeeRate: 10000}.Fee(MethodCreditCard, 1<<62), int64(1<<62)) // no overflow in the product
}

func TestPlanValidate(t *testing.T) {
	is := is.New(t)
	is.NoErr(DefaultPlan.Validate())
	is.True(Plan{CardFeeRate: 10001}.Validate() != nil) // above 100%
	is.True(Plan{CardFeeRate: -1}.Validate() != nil)
	is.True(Plan{PixFee: -1}.Validate() != nil)
}

func TestDefaultPlan(t *testing.T) {
	is := is.New(t)
	is.Equal(DefaultPlan, Plan{CardFeeRate: 399, CardFixedFee: 39, PixFee: 99, BoletoFee: 349}) // CONTRACT 5
}

func TestCardEntries(t *testing.T) {
	is := is.New(t)

	// Buyer pays interest: gross 14880 (12 × 1240), fee 633, nothing deducted for interest.
	entries := DefaultPlan.CardEntries(12345, InterestPayerBuyer, 299, 12)
	is.Equal(len(entries), 12)
	gross, fee, interest, net := sums(entries)
	is.Equal(gross, int64(14880))
	is.Equal(fee, int64(633))
	is.Equal(interest, int64(0))
	is.Equal(net, int64(14880-633))
	for _, e := range entries {
		is.Equal(e.Amount, int64(1240)) // every instalment is the Price-table instalment
	}

	// Organization pays interest: gross 12345, fee 532 on 12345, interest 2535 deducted.
	entries = DefaultPlan.CardEntries(12345, InterestPayerOrganization, 299, 12)
	gross, fee, interest, net = sums(entries)
	is.Equal(gross, int64(12345))
	is.Equal(fee, int64(532))
	is.Equal(interest, int64(2535))
	is.Equal(net, int64(12345-532-2535))

	// 1x: one entry, no interest.
	entries = DefaultPlan.CardEntries(10000, InterestPayerOrganization, 299, 1)
	is.Equal(entries, []Entry{{Installment: 1, InstallmentCount: 1, Amount: 10000, FeeAmount: 438, NetAmount: 9562}})
}
