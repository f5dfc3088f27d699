package invoices

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/matryer/is"

	"troco/server/domain"
)

func TestPageLines(t *testing.T) {
	is := is.New(t)
	var lines []domain.InvoiceLine
	for _, id := range []string{"li_a", "li_b", "li_c", "li_d", "li_e"} {
		lines = append(lines, domain.InvoiceLine{ID: id})
	}
	ids := func(ls []domain.InvoiceLine) (out []string) {
		for _, l := range ls {
			out = append(out, l.ID)
		}
		return out
	}
	got, more, err := PageLines(lines, 2, "", "")
	is.NoErr(err)
	is.Equal(ids(got), []string{"li_a", "li_b"})
	is.True(more)
	got, more, err = PageLines(lines, 2, "li_d", "")
	is.NoErr(err)
	is.Equal(ids(got), []string{"li_e"})
	is.True(!more)
	got, more, err = PageLines(lines, 2, "", "li_d")
	is.NoErr(err)
	is.Equal(ids(got), []string{"li_b", "li_c"}) // the page just before li_d
	is.True(more)                                // li_a is before it
	got, more, err = PageLines(lines, 10, "", "li_b")
	is.NoErr(err)
	is.Equal(ids(got), []string{"li_a"})
	is.True(!more)
	_, _, err = PageLines(lines, 2, "li_x", "")
	e, ok := domain.AsError(err)
	is.True(ok)
	is.Equal(e.Param, "starting_after")
}

// Recurring billing waits only for nextAttempt's refusal, not for any 409 of the same code.
func TestIsPaymentInProgressOnlyForNextAttemptsRefusal(t *testing.T) {
	pi := &domain.PaymentIntent{ID: "pi_1", Status: domain.PIStatusProcessing}
	refusal := paymentInProgress(pi, "")
	if !IsPaymentInProgress(refusal) || !IsPaymentInProgress(fmt.Errorf("collect: %w", refusal)) {
		t.Fatal("nextAttempt's refusal is not recognised")
	}
	if e, ok := domain.AsError(refusal); !ok || e.Status != http.StatusConflict || e.Code != domain.CodeResourceStateConflict {
		t.Fatalf("the refusal does not answer as a 409 resource_state_conflict: %v", refusal)
	}
	if IsPaymentInProgress(stateConflict(&domain.Invoice{ID: "in_1", Status: domain.InvoicePaid}, "paid")) {
		t.Fatal("an invoice already paid is taken for a payment in progress")
	}
}
