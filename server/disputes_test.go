package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// Dispute test cards (CONTRACT 17).
const (
	cardDisputeFraud      = "4000000000000259"
	cardDisputeNotReceive = "4000000000002685"
	cardDisputeInquiry    = "4000000000001976"
)

// disputedPayment pays amount with a dispute test card, lets a minute of sandbox time pass and
// returns the payment intent, the charge and the dispute that opened.
func (e *testEnv) disputedPayment(token string, number string, amount int64) (pi, ch string, dp resp) {
	e.t.Helper()
	pi = e.payIntent(token, amount, nil).Str("id")
	r := e.payConfirm(token, pi, map[string]any{"payment_method_type": "credit_card", "card": payCard(number)})
	if r.Status != 200 || r.Str("status") != "succeeded" {
		e.t.Fatalf("confirm: %d %s", r.Status, r.Raw)
	}
	ch = r.Str("latest_charge")
	if n := e.payCount(token, "/v1/disputes?charge="+ch); n != 0 {
		e.t.Fatalf("a dispute opened before its minute: %d", n)
	}
	e.advance(61 * time.Second)
	list := e.Do("GET", "/v1/disputes?charge="+ch, token, nil)
	if len(list.Data()) != 1 {
		e.t.Fatalf("disputes of %s: %s", ch, list.Raw)
	}
	dp = e.Do("GET", "/v1/disputes/"+list.IDs()[0], token, nil)
	return pi, ch, dp
}

func (e *testEnv) ledger(token, ch, typ string) []map[string]any {
	e.t.Helper()
	return e.Do("GET", "/v1/transactions?charge="+ch+"&type="+typ, token, nil).Data()
}

// TestDisputeWon: a fraudulent chargeback withdraws the amount and the dispute fee, is answered
// with winning evidence (a text and a dispute_evidence file), and after --sim-delay is won and
// the amount reinstated.
func TestDisputeWon(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	pi, ch, dp := e.disputedPayment(e.Test, cardDisputeFraud, 10000)
	id := dp.Str("id")
	is.True(strings.HasPrefix(id, "dp_"))
	is.Equal(dp.Str("object"), "dispute")
	is.Equal(dp.Body["amount"], float64(10000))
	is.Equal(dp.Str("reason"), "fraudulent")
	is.Equal(dp.Str("status"), "needs_response")
	is.Equal(dp.Str("charge"), ch)
	is.Equal(dp.Str("payment_intent"), pi)
	is.Equal(dp.Body["livemode"], false)
	is.Equal(dp.Body["is_charge_refundable"], false)
	is.Equal(dig(dp.Body, "evidence.uncategorized_text"), nil)
	created, _ := time.Parse(time.RFC3339, dp.Str("created_at"))
	due, _ := time.Parse(time.RFC3339, digStr(dp.Body, "evidence_details.due_by"))
	is.Equal(due.Sub(created), 7*24*time.Hour) // a week to answer
	is.Equal(e.Do("GET", "/v1/charges/"+ch, e.Test, nil).Body["disputed"], true)
	is.Equal(len(e.payEvents(e.Test, "charge.dispute.created", id)), 1)
	is.Equal(len(e.payEvents(e.Test, "charge.dispute.funds_withdrawn", id)), 1)
	w := e.ledger(e.Test, ch, "dispute")
	is.Equal(len(w), 1) // the withdrawal
	is.Equal(w[0]["amount"], float64(-10000))
	is.Equal(w[0]["fee_amount"], float64(1500)) // the default plan's dispute fee
	is.Equal(w[0]["net_amount"], float64(-11500))
	made, _ := time.Parse(time.RFC3339, w[0]["created_at"].(string))
	is.Equal(w[0]["available_on"], made.Add(-3*time.Hour).Format("2006-01-02")) // every ledger entry has its date (the Brasília day it was made)
	is.Equal(dp.Body["balance_transactions"], []any{w[0]["id"]})

	ref := e.Do("POST", "/v1/refunds", e.Test, map[string]any{"charge": ch})
	is.Equal(ref.Status, 400) // a charged-back charge cannot be refunded as well
	is.Equal(ref.ErrCode(), "charge_disputed")

	receipt := e.uploadFile(e.Test, "dispute_evidence", "nota-fiscal.pdf", "application/pdf", pdfBytes).Str("id")
	up := e.Do("POST", "/v1/disputes/"+id, e.Test, map[string]any{
		"evidence": map[string]any{"uncategorized_text": "winning_evidence", "receipt": receipt, "customer_name": "Ana Souza"},
		"metadata": map[string]string{"case": "42"},
	})
	is.Equal(up.Status, 200)
	is.Equal(up.Str("status"), "needs_response") // saved, not yet submitted
	is.Equal(digStr(up.Body, "evidence.receipt"), receipt)
	is.Equal(dig(up.Body, "evidence_details.has_evidence"), true)
	is.Equal(dig(up.Body, "evidence_details.submission_count"), float64(0))
	is.Equal(len(e.payEvents(e.Test, "charge.dispute.updated", id)), 1)

	del := e.Do("DELETE", "/v1/files/"+receipt, e.Test, nil)
	is.Equal(del.Status, 409) // evidence of an open dispute stays
	cleared := e.Do("POST", "/v1/disputes/"+id, e.Test, map[string]any{"evidence": map[string]any{"customer_name": nil}})
	is.Equal(cleared.Status, 200)
	is.Equal(dig(cleared.Body, "evidence.customer_name"), nil)                        // null clears a field
	is.Equal(digStr(cleared.Body, "evidence.uncategorized_text"), "winning_evidence") // the others are kept

	sub := e.Do("POST", "/v1/disputes/"+id, e.Test, map[string]any{"submit": true})
	is.Equal(sub.Status, 200)
	is.Equal(sub.Str("status"), "under_review")
	is.Equal(dig(sub.Body, "evidence_details.submission_count"), float64(1))
	again := e.Do("POST", "/v1/disputes/"+id, e.Test, map[string]any{"evidence": map[string]any{"product_description": "late"}})
	is.Equal(again.Status, 409) // submitted evidence is final
	is.Equal(e.Do("POST", "/v1/disputes/"+id+"/close", e.Test, nil).Status, 409)

	e.advance(2 * time.Minute)
	is.Equal(e.Do("GET", "/v1/disputes/"+id, e.Test, nil).Str("status"), "under_review") // --sim-delay (3m) not yet over
	e.advance(time.Minute)
	won := e.Do("GET", "/v1/disputes/"+id, e.Test, nil)
	is.Equal(won.Str("status"), "won")
	is.Equal(len(e.payEvents(e.Test, "charge.dispute.funds_reinstated", id)), 1)
	is.Equal(len(e.payEvents(e.Test, "charge.dispute.closed", id)), 1)
	back := e.ledger(e.Test, ch, "dispute_reversal")
	is.Equal(len(back), 1) // the reinstatement
	is.Equal(back[0]["amount"], float64(10000))
	is.Equal(back[0]["net_amount"], float64(10000)) // the fee stays withdrawn
	is.True(back[0]["available_on"] != "")          // every ledger entry has its date
	late := e.Do("POST", "/v1/disputes/"+id, e.Test, map[string]any{"evidence": map[string]any{"uncategorized_text": "more"}})
	is.Equal(late.Status, 409) // a closed dispute
	meta := e.Do("POST", "/v1/disputes/"+id, e.Test, map[string]any{"metadata": map[string]string{"archived": "yes"}})
	is.Equal(meta.Status, 200)                                              // metadata may still change
	is.Equal(e.Do("DELETE", "/v1/files/"+receipt, e.Test, nil).Status, 200) // closed: its evidence may go
}

// TestDisputeLost: losing evidence loses; the funds stay withdrawn.
func TestDisputeLost(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, ch, dp := e.disputedPayment(e.Test, cardDisputeNotReceive, 5000)
	id := dp.Str("id")
	is.Equal(dp.Str("reason"), "product_not_received")
	r := e.Do("POST", "/v1/disputes/"+id, e.Test, map[string]any{"evidence": map[string]any{"uncategorized_text": "losing_evidence"}, "submit": true})
	is.Equal(r.Status, 200)
	e.advance(3 * time.Minute)
	lost := e.Do("GET", "/v1/disputes/"+id, e.Test, nil)
	is.Equal(lost.Str("status"), "lost")
	is.Equal(len(e.payEvents(e.Test, "charge.dispute.closed", id)), 1)
	is.Equal(len(e.payEvents(e.Test, "charge.dispute.funds_reinstated", id)), 0)
	is.Equal(len(e.ledger(e.Test, ch, "dispute")), 1)
	is.Equal(len(e.ledger(e.Test, ch, "dispute_reversal")), 0)
}

// TestDisputeInquiry: an inquiry withdraws nothing; closing it ends it; a refund closes another.
func TestDisputeInquiry(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, ch, dp := e.disputedPayment(e.Test, cardDisputeInquiry, 3000)
	id := dp.Str("id")
	is.Equal(dp.Str("status"), "warning_needs_response")
	is.Equal(dp.Body["is_charge_refundable"], true)
	is.Equal(len(e.payEvents(e.Test, "charge.dispute.funds_withdrawn", id)), 0)
	is.Equal(len(e.ledger(e.Test, ch, "dispute")), 0)
	c := e.Do("POST", "/v1/disputes/"+id+"/close", e.Test, nil)
	is.Equal(c.Status, 200)
	is.Equal(c.Str("status"), "warning_closed")
	is.Equal(len(e.payEvents(e.Test, "charge.dispute.closed", id)), 1)
	is.Equal(e.Do("POST", "/v1/disputes/"+id+"/close", e.Test, nil).Status, 409) // closed already

	_, ch2, dp2 := e.disputedPayment(e.Test, cardDisputeInquiry, 3000)
	ref := e.Do("POST", "/v1/refunds", e.Test, map[string]any{"charge": ch2})
	is.Equal(ref.Status, 200) // an inquiry may be refunded
	is.Equal(e.Do("GET", "/v1/disputes/"+dp2.Str("id"), e.Test, nil).Str("status"), "warning_closed")

	// A losing inquiry withdraws the funds when it is lost.
	_, ch3, dp3 := e.disputedPayment(e.Test, cardDisputeInquiry, 3000)
	r := e.Do("POST", "/v1/disputes/"+dp3.Str("id"), e.Test, map[string]any{"evidence": map[string]any{"uncategorized_text": "losing_evidence"}, "submit": true})
	is.Equal(r.Str("status"), "warning_under_review")
	e.advance(3 * time.Minute)
	is.Equal(e.Do("GET", "/v1/disputes/"+dp3.Str("id"), e.Test, nil).Str("status"), "lost")
	is.Equal(len(e.ledger(e.Test, ch3, "dispute")), 1)
}

// TestDisputeEvidenceRefused: every bad evidence is a 400 naming the field; evidence after the
// due date is 409.
func TestDisputeEvidenceRefused(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, _, dp := e.disputedPayment(e.Test, cardDisputeFraud, 2000)
	id := dp.Str("id")
	_, otherTok := e.NewOrg("Outra", false)
	foreign := e.uploadFile(otherTok, "dispute_evidence", "a.pdf", "", pdfBytes).Str("id")
	liveFile := e.uploadFile(e.Live, "dispute_evidence", "a.pdf", "", pdfBytes).Str("id")
	image := e.uploadFile(e.Test, "product_image", "a.png", "", pngBytes).Str("id")
	for _, tc := range []struct {
		name     string
		evidence map[string]any
		param    string
	}{
		{"another organization's file", map[string]any{"receipt": foreign}, "evidence[receipt]"},
		{"the live environment's file", map[string]any{"shipping_documentation": liveFile}, "evidence[shipping_documentation]"},
		{"a product image", map[string]any{"uncategorized_file": image}, "evidence[uncategorized_file]"},
		{"a missing file", map[string]any{"customer_communication": "file_doesnotexist"}, "evidence[customer_communication]"},
		{"an unknown field", map[string]any{"bogus": "x"}, "evidence[bogus]"},
		{"too long", map[string]any{"uncategorized_text": strings.Repeat("x", 20001)}, "evidence[uncategorized_text]"},
	} {
		r := e.Do("POST", "/v1/disputes/"+id, e.Test, map[string]any{"evidence": tc.evidence})
		is.Equal(r.Status, 400)          // refused
		is.Equal(r.ErrParam(), tc.param) // naming the field
	}
	empty := e.Do("POST", "/v1/disputes/"+id, e.Test, map[string]any{"submit": true})
	is.Equal(empty.Status, 400)
	is.Equal(empty.ErrParam(), "evidence")
	is.Equal(e.Do("GET", "/v1/disputes/"+id, e.Test, nil).Str("status"), "needs_response") // nothing changed

	e.Clock.Advance(7*24*time.Hour + time.Second) // past due_by, before the job ran
	late := e.Do("POST", "/v1/disputes/"+id, e.Test, map[string]any{"evidence": map[string]any{"uncategorized_text": "winning_evidence"}})
	is.Equal(late.Status, 409)
	e.advance(time.Second)
	is.Equal(e.Do("GET", "/v1/disputes/"+id, e.Test, nil).Str("status"), "lost") // unanswered: lost
}

// TestDisputeDueSubmits: evidence saved but not submitted by due_by is submitted as it stands.
func TestDisputeDueSubmits(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, _, dp := e.disputedPayment(e.Test, cardDisputeFraud, 2000)
	id := dp.Str("id")
	is.Equal(e.Do("POST", "/v1/disputes/"+id, e.Test, map[string]any{"evidence": map[string]any{"uncategorized_text": "winning_evidence"}}).Status, 200)
	e.advance(7*24*time.Hour + time.Second)
	r := e.Do("GET", "/v1/disputes/"+id, e.Test, nil)
	is.Equal(r.Str("status"), "under_review")
	is.Equal(dig(r.Body, "evidence_details.past_due"), true)
	e.advance(3 * time.Minute)
	is.Equal(e.Do("GET", "/v1/disputes/"+id, e.Test, nil).Str("status"), "won")
}

func TestDisputeListFilters(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	pi1, ch1, d1 := e.disputedPayment(e.Test, cardDisputeFraud, 2000)
	_, _, d2 := e.disputedPayment(e.Test, cardDisputeInquiry, 2000)
	is.Equal(e.Do("GET", "/v1/disputes", e.Test, nil).IDs(), []string{d2.Str("id"), d1.Str("id")})
	is.Equal(e.Do("GET", "/v1/disputes?payment_intent="+pi1, e.Test, nil).IDs(), []string{d1.Str("id")})
	is.Equal(e.Do("GET", "/v1/disputes?charge="+ch1, e.Test, nil).IDs(), []string{d1.Str("id")})
	is.Equal(e.Do("GET", "/v1/disputes?status=warning_needs_response", e.Test, nil).IDs(), []string{d2.Str("id")})
	bad := e.Do("GET", "/v1/disputes?status=open", e.Test, nil)
	is.Equal(bad.Status, 400)
	is.Equal(bad.ErrParam(), "status")
	is.Equal(len(e.Do("GET", "/v1/disputes", e.Live, nil).Data()), 0) // the other environment
	is.Equal(e.Do("GET", "/v1/disputes/"+d1.Str("id"), e.Live, nil).Status, 404)
	// An ordinary card opens no dispute.
	pi := e.payIntent(e.Test, 2000, nil).Str("id")
	e.payConfirm(e.Test, pi, map[string]any{"payment_method_type": "credit_card", "card": payCard("4242424242424242")})
	e.advance(2 * time.Minute)
	is.Equal(e.payCount(e.Test, "/v1/disputes"), 2)
}

// TestDisputeAfterManualCapture: a dispute test card paid with capture_method manual is disputed
// a minute after its capture (not while only authorized); a canceled authorization is never disputed.
func TestDisputeAfterManualCapture(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	pi := e.payIntent(e.Test, 10000, map[string]any{"capture_method": "manual"}).Str("id")
	r := e.payConfirm(e.Test, pi, map[string]any{"payment_method_type": "credit_card", "card": payCard(cardDisputeFraud)})
	is.Equal(r.Str("status"), "requires_capture")
	ch := r.Str("latest_charge")
	e.advance(2 * time.Minute)
	is.Equal(e.payCount(e.Test, "/v1/disputes?charge="+ch), 0) // authorized only: nothing to dispute yet
	is.Equal(e.Do("POST", "/v1/payment-intents/"+pi+"/capture", e.Test, map[string]any{}).Status, 200)
	is.Equal(e.payCount(e.Test, "/v1/disputes?charge="+ch), 0) // a minute after the capture
	e.advance(61 * time.Second)
	list := e.Do("GET", "/v1/disputes?charge="+ch, e.Test, nil).Data()
	is.Equal(len(list), 1)
	is.Equal(list[0]["reason"], "fraudulent")
	is.Equal(list[0]["amount"], float64(10000))
	is.Equal(e.Do("GET", "/v1/charges/"+ch, e.Test, nil).Body["disputed"], true)

	other := e.payIntent(e.Test, 10000, map[string]any{"capture_method": "manual"}).Str("id")
	r = e.payConfirm(e.Test, other, map[string]any{"payment_method_type": "credit_card", "card": payCard(cardDisputeFraud)})
	is.Equal(e.Do("POST", "/v1/payment-intents/"+other+"/cancel", e.Test, map[string]any{}).Status, 200)
	e.advance(2 * time.Minute)
	is.Equal(e.payCount(e.Test, "/v1/disputes?charge="+r.Str("latest_charge")), 0)
}

// TestDisputeDecisionEventsShowTheDecidedDispute: the money moves after the decision, so
// charge.dispute.funds_reinstated of a won chargeback (and funds_withdrawn of a lost inquiry)
// comes after charge.dispute.closed and carries the dispute as it is then: won (or lost), with
// the ledger entry it made.
func TestDisputeDecisionEventsShowTheDecidedDispute(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	for _, c := range []struct{ card, text, status, money string }{
		{cardDisputeFraud, "winning_evidence", "won", "charge.dispute.funds_reinstated"},
		{cardDisputeInquiry, "losing_evidence", "lost", "charge.dispute.funds_withdrawn"},
	} {
		_, _, dp := e.disputedPayment(e.Test, c.card, 4000)
		id := dp.Str("id")
		r := e.Do("POST", "/v1/disputes/"+id, e.Test, map[string]any{"evidence": map[string]any{"uncategorized_text": c.text}, "submit": true})
		is.Equal(r.Status, 200)
		e.advance(3 * time.Minute)
		final := e.Do("GET", "/v1/disputes/"+id, e.Test, nil)
		is.Equal(final.Str("status"), c.status)
		money := e.payEvents(e.Test, c.money, id)
		is.Equal(len(money), 1)
		is.Equal(digStr(money[0], "data.object.status"), c.status)                                      // the decided dispute
		is.Equal(dig(money[0], "data.object.balance_transactions"), final.Body["balance_transactions"]) // with its ledger entry
		closed := e.payEvents(e.Test, "charge.dispute.closed", id)
		is.Equal(len(closed), 1)
		// Newest first: the money event is listed before (happened after) the decision.
		all := e.Do("GET", "/v1/events?limit=10", e.Test, nil).Data()
		pos := map[string]int{}
		for i, ev := range all {
			if digStr(ev, "data.object.id") == id {
				pos[ev["type"].(string)] = i
			}
		}
		is.True(pos[c.money] < pos["charge.dispute.closed"])
	}
}
