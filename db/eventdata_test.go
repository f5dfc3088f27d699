package db

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"troco/server/domain"
)

// TestEventDataEncoding: an event's data built from its encoded object and previous_attributes
// is byte for byte what encoding the whole EventData gives (what the stored events, the webhooks
// and every stored reference to an event's object rely on), and LastEventObject returns exactly
// the object's part of it.
func TestEventDataEncoding(t *testing.T) {
	is := is.New(t)
	desc, name := "Pedido <1> & \"2\" ação \u2028", "\xff"
	pi := &domain.PaymentIntent{ID: "pi_1", Object: "payment_intent", Amount: 1000, Currency: "brl", Status: "succeeded", Description: &desc,
		Metadata: domain.Metadata{"order": "<7>"}, PaymentMethodTypes: []string{"credit_card"}, CreatedAt: domain.Unix(1.7e9)}
	ch := &domain.Charge{ID: "ch_1", Amount: 1000, BillingDetails: domain.BillingDetails{Name: &name}}
	objects := []any{pi, *pi, ch, nil, "text <b>", 42, map[string]any{"b": 1, "a": []any{"x", nil}}, domain.Metadata{}}
	prevs := []map[string]any{nil, {}, {"status": "requires_payment_method", "amount_received": float64(0), "latest_charge": nil},
		{"metadata": map[string]any{"k": "<v>"}}}
	for _, obj := range objects {
		for _, prev := range prevs {
			d := domain.EventData{Object: obj, PreviousAttributes: prev}
			want, err := domain.MarshalJSON(d)
			is.NoErr(err)
			got, n, err := encodeEventData(d)
			is.NoErr(err)
			is.Equal(string(got), string(want))
			objJSON, err := domain.MarshalJSON(obj)
			is.NoErr(err)
			is.Equal(string(got[len(eventObjectPrefix):len(eventObjectPrefix)+n]), string(objJSON))
		}
	}

	db := openTest(t, Options{})
	s := domain.Scope{OrgID: "org_1"}
	err := db.Write(context.Background(), func(tx *Tx) error {
		obj, body := tx.LastEventObject()
		is.True(obj == nil && body == nil) // no event yet
		if err := tx.InsertEvent(s, &domain.Event{Type: "charge.succeeded", Data: domain.EventData{Object: ch}}); err != nil {
			return err
		}
		if err := tx.InsertEvent(s, &domain.Event{Type: "payment_intent.succeeded", Data: domain.EventData{Object: pi, PreviousAttributes: map[string]any{"status": "processing"}}}); err != nil {
			return err
		}
		obj, body = tx.LastEventObject()
		is.True(obj == any(pi))
		want, _ := domain.MarshalJSON(pi)
		is.Equal(string(body), string(want))
		return nil
	})
	is.NoErr(err)
}
