package payments

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/server/boleto"
	"troco/server/card"
	"troco/server/domain"
	"troco/server/pix"
	"troco/server/simulation"
)

// A saved card keeps only its behaviour key, and that key must reproduce card.Simulate for
// every row of SPEC 7.1, first use and reuse alike.
func TestSavedBehaviorMatchesSimulate(t *testing.T) {
	is := is.New(t)
	seen := map[string]string{}
	for _, tc := range card.TestCards() {
		key := BehaviorKey(tc.Number)
		is.True(key != "")                       // every table row has a key
		is.True(!strings.Contains(key, "40000")) // the key is not the number
		if other, dup := seen[key]; dup {
			t.Fatalf("cards %s and %s share behaviour key %q", other, tc.Number, key)
		}
		seen[key] = tc.Number
		for _, reuse := range []bool{false, true} {
			is.Equal(SimulateSaved(key, reuse), card.Simulate(tc.Number, reuse)) // same outcome as the number
		}
	}
	is.Equal(BehaviorKey("5555555555554444"), "")                            // unknown cards have no key
	is.Equal(SimulateSaved("", true).Outcome, card.OutcomeSucceeded)         // and approve
	is.Equal(SimulateSaved("garbage", false).Outcome, card.OutcomeSucceeded) // as does an unknown key
}

func TestSimulatorAsyncRules(t *testing.T) {
	is := is.New(t)
	for _, r := range simulation.Rules() {
		res, err := Simulator{}.StartAsync(context.Background(), AsyncRequest{Method: domain.MethodPix, Email: r.LocalPart + "@example.com"})
		is.NoErr(err)
		is.Equal(res.Initial, r.Initial)
		is.Equal(res.After, r.After)
	}
	res, _ := Simulator{}.StartAsync(context.Background(), AsyncRequest{Email: "ana@example.com"})
	is.Equal(res, AsyncResult{Initial: simulation.StatePending}) // ordinary e-mails wait
}

func TestPixCode(t *testing.T) {
	is := is.New(t)
	org := &domain.Organization{Name: "Padaria São João Ltda", Address: &domain.Address{City: "Ribeirão Preto"}}
	code, txid, err := pixCode(org, "https://localhost:8443", "ch_0123456789abcdefghijABCD", 12345)
	is.NoErr(err)
	is.NoErr(pix.Verify(code)) // CRC and mandatory fields
	c, _ := pix.Parse(code)
	is.Equal(c.Amount, int64(12345))
	is.True(c.SingleUse)
	is.Equal(c.URL, "localhost:8443/pix/v2/"+txid)
	is.Equal(c.MerchantName, "Padaria Sao Joao Ltda")
	is.Equal(len(txid), 25)

	long := "https://" + strings.Repeat("a", 70) + ".example.com"
	code, txid, err = pixCode(&domain.Organization{Name: "Loja"}, long, "ch_x", 100)
	is.NoErr(err)
	is.NoErr(pix.Verify(code)) // a host too long for the URL field falls back to a keyed code
	c, _ = pix.Parse(code)
	is.Equal(c.TxID, txid)
	is.True(c.Key != "")
}

func TestDueDate(t *testing.T) {
	is := is.New(t)
	now := time.Date(2026, 3, 10, 23, 30, 0, 0, time.UTC)
	s := &Service{}
	dueDate := s.dueDate
	d, err := dueDate(now, nil)
	is.NoErr(err)
	is.Equal(d.String(), "2026-03-13") // default: 3 days after confirmation
	// Around Carnaval (16–17 Feb 2026) and Christmas (Friday 25 Dec 2026) the default moves to
	// the next business day; a date the buyer names is kept.
	d, _ = dueDate(time.Date(2026, 2, 13, 12, 0, 0, 0, time.UTC), nil)
	is.Equal(d.String(), "2026-02-18") // Friday + 3 = Carnaval Monday → Ash Wednesday
	d, _ = dueDate(time.Date(2026, 12, 22, 12, 0, 0, 0, time.UTC), nil)
	is.Equal(d.String(), "2026-12-28") // Tuesday + 3 = Christmas → Monday 28
	d, _ = dueDate(time.Date(2026, 12, 23, 12, 0, 0, 0, time.UTC), nil)
	is.Equal(d.String(), "2026-12-28") // Wednesday + 3 = Saturday → Monday 28
	xmas := "2026-12-25"
	d, _ = dueDate(time.Date(2026, 12, 22, 12, 0, 0, 0, time.UTC), &xmas)
	is.Equal(d.String(), xmas)
	ok := "2026-03-10"
	d, err = dueDate(now, &ok)
	is.NoErr(err)
	is.Equal(d, boleto.DateOf(now)) // today is allowed
	for _, bad := range []string{"2026-03-09", "2026-02-30", "10/03/2026", "2026-3-12", "2028-01-01", ""} {
		_, err := dueDate(now, &bad)
		e, isErr := domain.AsError(err)
		is.True(isErr) // rejected
		is.Equal(e.Param, "boleto_due_date")
	}
}
