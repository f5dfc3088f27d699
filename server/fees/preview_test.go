package fees

import (
	"encoding/json"
	"testing"

	"github.com/matryer/is"
)

func TestPreview(t *testing.T) {
	is := is.New(t)

	p := Preview(499, InterestPayerBuyer, 0, "")
	is.Equal(p.MaxCount, 1)
	is.Equal(p.Options, []Option{{Count: 1, InstallmentAmount: 499, TotalAmount: 499}})

	p = Preview(5000, InterestPayerOrganization, 0, "visa")
	is.Equal(p.MaxCount, 10)
	is.Equal(len(p.Options), 10)
	is.Equal(p.Options[9].TotalAmount, int64(5000)) // organization pays the interest

	p = Preview(100000, InterestPayerBuyer, 0, "mastercard")
	is.Equal(p.MaxCount, 12)
	is.Equal(p.Options[9], Option{Count: 10, InstallmentAmount: 11718, TotalAmount: 117180, InterestAmount: 17180})

	p = Preview(100000, InterestPayerBuyer, 3, "elo")
	is.Equal(p.MaxCount, 3)
	is.Equal(len(p.Options), 3)

	is.Equal(PreviewAtRate(100000, InterestPayerBuyer, 200, 0, "").Options[1].InstallmentAmount,
		PriceInstallment(100000, 200, 2)) // custom rate
}

func TestPreviewJSON(t *testing.T) {
	is := is.New(t)
	b, err := json.Marshal(Preview(1000, InterestPayerBuyer, 0, ""))
	is.NoErr(err)
	// 1000·0.0299·1.0299²/(1.0299²−1) = 522.53… → 523
	is.Equal(string(b), `{"max_count":2,"options":[`+
		`{"count":1,"installment_amount":1000,"total_amount":1000,"interest_amount":0},`+
		`{"count":2,"installment_amount":523,"total_amount":1046,"interest_amount":46}]}`)
}
