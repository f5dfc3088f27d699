package fees

import (
	"fmt"
	"testing"

	"github.com/matryer/is"
)

// sums adds up the money of a split.
func sums(entries []Entry) (gross, fee, interest, net int64) {
	for _, e := range entries {
		gross += e.Amount
		fee += e.FeeAmount
		interest += e.InterestAmount
		net += e.NetAmount
	}
	return gross, fee, interest, net
}

func TestSplitExample(t *testing.T) {
	is := is.New(t)
	// 10000 in 3, fee 438, organization interest 605: deductions 1043 = 348+348+347,
	// of which fee 438 = 146+146+146.
	is.Equal(Split(10000, 3, 438, 605), []Entry{
		{Installment: 1, InstallmentCount: 3, Amount: 3334, FeeAmount: 146, InterestAmount: 202, NetAmount: 2986},
		{Installment: 2, InstallmentCount: 3, Amount: 3333, FeeAmount: 146, InterestAmount: 202, NetAmount: 2985},
		{Installment: 3, InstallmentCount: 3, Amount: 3333, FeeAmount: 146, InterestAmount: 201, NetAmount: 2986},
	})
}

// TestSplitProperties checks, over a grid of amounts, counts, fees and
// interests, that every split adds up exactly and avoids negative entries.
func TestSplitProperties(t *testing.T) {
	amounts := []int64{0, 1, 7, 11, 12, 13, 99, 100, 101, 499, 500, 501, 999, 1001, 4999, 5000, 5001,
		9999, 10000, 10001, 12345, 33333, 99999, 100000, 100003, 1234567, 98765431}
	for _, amount := range amounts {
		for count := 1; count <= MaxInstallmentsAbsolute; count++ {
			deductions := []struct{ fee, interest int64 }{
				{0, 0},
				{DefaultPlan.Fee(MethodCreditCard, amount), 0},
				{DefaultPlan.Fee(MethodCreditCard, amount), OptionFor(amount, InterestPayerOrganization, 299, count).InterestAmount},
				{amount, 0},              // fee eats everything
				{amount / 2, amount / 2}, // net of 0 or 1 centavo
				{amount - 1, 1},          // odd remainders on both sides
				{int64(count - 1), 0},    // a fee remainder with a tiny gross
				{amount + 50, 0},         // fee above the gross: net is negative
				{amount, 13},             // deductions above the gross
			}
			for _, d := range deductions {
				if d.fee < 0 || d.interest < 0 {
					continue
				}
				name := fmt.Sprintf("%d/%dx/fee%d/int%d", amount, count, d.fee, d.interest)
				t.Run(name, func(t *testing.T) {
					is := is.New(t)
					checkSplit(is, amount, count, d.fee, d.interest)
				})
			}
		}
	}
}

func checkSplit(is *is.I, amount int64, count int, fee, interest int64) {
	entries := Split(amount, count, fee, interest)
	is.Equal(len(entries), count)

	gross, feeSum, interestSum, net := sums(entries)
	is.Equal(gross, amount)            // gross adds up
	is.Equal(feeSum, fee)              // fee adds up
	is.Equal(interestSum, interest)    // interest adds up
	is.Equal(net, amount-fee-interest) // net adds up

	wantGross := InstallmentAmounts(amount, count)
	totalNet := amount - fee - interest
	for i, e := range entries {
		is.Equal(e.Installment, i+1)
		is.Equal(e.InstallmentCount, count)
		is.Equal(e.Amount, wantGross[i])                             // the card's monthly charge
		is.Equal(e.NetAmount, e.Amount-e.FeeAmount-e.InterestAmount) // each entry balances
		is.True(e.Amount >= 0)                                       // non-negative gross
		is.True(e.FeeAmount >= 0)                                    // non-negative fee
		is.True(e.InterestAmount >= 0)                               // non-negative interest
		if totalNet >= 0 {
			is.True(e.NetAmount >= 0) // no negative net when avoidable
		}
		if i > 0 {
			is.True(entries[i-1].Amount >= e.Amount)   // odd centavos go first
			is.True(entries[i-1].Amount-e.Amount <= 1) // at most a centavo apart
		}
	}
}

func TestSplitAvoidsNegativeFirstEntry(t *testing.T) {
	is := is.New(t)
	// 12 instalments of 1 centavo, fee 11: a naive "first entry carries the
	// remainder" split would give the first entry a fee of 11 and a net of −10.
	entries := Split(12, 12, 11, 0)
	for _, e := range entries {
		is.True(e.NetAmount >= 0)
		is.True(e.FeeAmount <= e.Amount)
	}
	_, fee, _, net := sums(entries)
	is.Equal(fee, int64(11))
	is.Equal(net, int64(1))
}

func TestSplitSingle(t *testing.T) {
	is := is.New(t)
	// PIX: one entry carrying everything.
	is.Equal(Split(10000, 1, DefaultPlan.Fee(MethodPix, 10000), 0), []Entry{
		{Installment: 1, InstallmentCount: 1, Amount: 10000, FeeAmount: 99, NetAmount: 9901},
	})
	is.Equal(len(Split(10000, 0, 99, 0)), 1) // a count below 1 is one entry
}

func TestAllocateRespectsCaps(t *testing.T) {
	is := is.New(t)
	is.Equal(allocate(10, []int64{1, 100, 2}), []int64{1, 7, 2})
	is.Equal(allocate(5, []int64{5, 0, 0}), []int64{5, 0, 0})
	is.Equal(allocate(4, []int64{3, 3, 3}), []int64{2, 1, 1})
	is.Equal(allocate(10, []int64{1, 1}), []int64{5, 5}) // impossible: even split
	is.Equal(allocate(-5, []int64{1, 1}), []int64{-3, -2})
}
