package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// ledgerNet sums the net_amount of every ledger entry of a charge.
func (e *testEnv) ledgerNet(token, ch string) (net int64, n int) {
	e.t.Helper()
	for _, t := range e.Do("GET", "/v1/transactions?charge="+ch+"&limit=100", token, nil).Data() {
		net += int64(t["net_amount"].(float64))
		n++
	}
	return net, n
}

// TestDisputeWonThenRefund: a won chargeback reinstates the funds, after which the charge can be
// refunded like any other (Stripe's behaviour); the ledger nets to the sale minus the dispute fee
// minus the refund.
func TestDisputeWonThenRefund(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, ch, dp := e.disputedPayment(e.Test, cardDisputeFraud, 10000)
	id := dp.Str("id")
	open := e.Do("POST", "/v1/refunds", e.Test, map[string]any{"charge": ch})
	is.Equal(open.Status, 400) // refused while the chargeback is open
	is.Equal(open.ErrCode(), "charge_disputed")
	is.True(strings.Contains(string(open.Raw), "while the dispute is open"))
	r := e.Do("POST", "/v1/disputes/"+id, e.Test, map[string]any{"evidence": map[string]any{"uncategorized_text": "winning_evidence"}, "submit": true})
	is.Equal(r.Status, 200)
	e.advance(3 * time.Minute)
	is.Equal(e.Do("GET", "/v1/disputes/"+id, e.Test, nil).Str("status"), "won")

	sale := e.ledger(e.Test, ch, "charge")
	is.Equal(len(sale), 1)
	saleNet := int64(sale[0]["net_amount"].(float64))

	part := e.Do("POST", "/v1/refunds", e.Test, map[string]any{"charge": ch, "amount": 4000})
	is.Equal(part.Status, 200) // a won dispute no longer blocks refunds
	is.Equal(part.Str("status"), "succeeded")
	rest := e.Do("POST", "/v1/refunds", e.Test, map[string]any{"charge": ch})
	is.Equal(rest.Status, 200) // the remaining amount
	is.Equal(rest.Body["amount"], float64(6000))
	c := e.Do("GET", "/v1/charges/"+ch, e.Test, nil)
	is.Equal(c.Body["amount_refunded"], float64(10000))
	is.Equal(c.Body["refunded"], true)
	is.Equal(c.Body["disputed"], true) // stays true, as Stripe's
	is.Equal(len(e.payEvents(e.Test, "charge.refunded", ch)), 2)

	net, n := e.ledgerNet(e.Test, ch)
	is.Equal(n, 5)                    // sale, withdrawal, reinstatement, two refunds
	is.Equal(net, saleNet-1500-10000) // the dispute fee stays withdrawn; the refunds went back
	is.Equal(len(e.ledger(e.Test, ch, "refund")), 2)
}

// TestDisputeLostRefuses: after a lost dispute a refund is refused for good, with an error that
// says why; nothing is written.
func TestDisputeLostRefuses(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, ch, dp := e.disputedPayment(e.Test, cardDisputeNotReceive, 5000)
	id := dp.Str("id")
	is.Equal(e.Do("POST", "/v1/disputes/"+id+"/close", e.Test, nil).Str("status"), "lost")
	before, nBefore := e.ledgerNet(e.Test, ch)
	ref := e.Do("POST", "/v1/refunds", e.Test, map[string]any{"charge": ch, "amount": 100})
	is.Equal(ref.Status, 400)
	is.Equal(ref.ErrCode(), "charge_disputed")
	is.Equal(ref.ErrParam(), "charge")
	is.True(strings.Contains(string(ref.Raw), "was lost"))
	after, nAfter := e.ledgerNet(e.Test, ch)
	is.Equal(after, before)
	is.Equal(nAfter, nBefore)
	is.Equal(e.Do("GET", "/v1/charges/"+ch, e.Test, nil).Body["amount_refunded"], float64(0))
}
