package fees

// Entry is the money of one ledger transaction: one per instalment of a card
// sale (one in total for PIX and boleto), as SPEC 2.9 and CONTRACT 5 describe.
type Entry struct {
	// Installment is the 1-based position of this instalment.
	Installment int

	// InstallmentCount is the number of instalments of the sale.
	InstallmentCount int

	// Amount is the gross the buyer pays for this instalment.
	Amount int64

	// FeeAmount is the share of the processing fee charged on this instalment.
	FeeAmount int64

	// InterestAmount is the share of the organization-absorbed instalment interest (zero when the buyer pays it).
	InterestAmount int64

	// NetAmount is what the organization receives: Amount − FeeAmount − InterestAmount.
	NetAmount int64
}

// Split divides a sale into one Entry per instalment whose Amount, FeeAmount,
// InterestAmount and NetAmount each add up exactly to amount, fee, orgInterest
// and amount − fee − orgInterest.
//
// The gross of each entry follows InstallmentAmounts (what the card is charged
// each month). The deductions (fee plus orgInterest) are spread as evenly as
// possible with leftover centavos on the earliest instalments, but never more
// on an entry than its gross, so no entry has a negative net unless the whole
// net is negative; the fee is then spread the same way inside each entry's
// deduction, so no entry has a negative fee or interest either. A count below
// 1 is treated as 1.
func Split(amount int64, count int, fee int64, orgInterest int64) []Entry {
	count = max(count, 1)
	gross := InstallmentAmounts(amount, count)
	deductions := allocate(fee+orgInterest, gross)
	fees := allocate(fee, deductions)
	entries := make([]Entry, count)
	for i := range entries {
		entries[i] = Entry{
			Installment:      i + 1,
			InstallmentCount: count,
			Amount:           gross[i],
			FeeAmount:        fees[i],
			InterestAmount:   deductions[i] - fees[i],
			NetAmount:        gross[i] - deductions[i],
		}
	}
	return entries
}

// evenSplit divides total into n parts that add up exactly; the first |total%n|
// parts carry one centavo more (or less, for a negative total) than the rest.
func evenSplit(total int64, n int) []int64 {
	parts := make([]int64, n)
	base, rest := total/int64(n), total%int64(n)
	for i := range parts {
		parts[i] = base
		switch {
		case rest > 0 && int64(i) < rest:
			parts[i]++
		case rest < 0 && int64(i) < -rest:
			parts[i]--
		}
	}
	return parts
}

// allocate divides total into len(caps) parts that add up exactly, as evenly
// as possible with leftover centavos on the earliest parts, keeping each part
// within [0, caps[i]]. When that is impossible (total negative, a cap negative,
// or total above the sum of caps) it falls back to evenSplit and ignores caps.
func allocate(total int64, caps []int64) []int64 {
	n := len(caps)
	var room int64
	for _, c := range caps {
		if c < 0 {
			return evenSplit(total, n)
		}
		room += c
	}
	if total < 0 || total > room {
		return evenSplit(total, n)
	}
	parts := make([]int64, n)
	remaining := total
	for remaining > 0 {
		open := 0
		for i := range parts {
			if parts[i] < caps[i] {
				open++
			}
		}
		share := remaining / int64(open)
		if share == 0 {
			// Fewer centavos left than open parts: one each, earliest first.
			for i := range parts {
				if remaining == 0 {
					break
				}
				if parts[i] < caps[i] {
					parts[i]++
					remaining--
				}
			}
			break
		}
		for i := range parts {
			give := min(share, caps[i]-parts[i])
			parts[i] += give
			remaining -= give
		}
	}
	return parts
}
