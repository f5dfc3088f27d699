package db

import (
	"context"
	"fmt"
	"testing"

	"github.com/matryer/is"

	"troco/server/domain"
)

// TestInsertPaymentIntentIsCreateThenUpdate: an intent written once by NewPaymentIntent and
// InsertPaymentIntent (a create with confirm) leaves the row, column for column, that
// CreatePaymentIntent followed by UpdatePaymentIntent leaves, and reads back the same, for
// intents with every optional field unset and set.
func TestInsertPaymentIntentIsCreateThenUpdate(t *testing.T) {
	is := is.New(t)
	d := openTest(t, Options{})
	s := domain.Scope{OrgID: "org_1"}
	desc, sd, cus, pm, typ, ch, reason := "Pedido <1> \"ação\"", "LOJA", "cus_1", "pm_1", domain.MethodCreditCard, "ch_1", "abandoned"
	three := 3
	base := func() *domain.PaymentIntent {
		return &domain.PaymentIntent{Status: domain.PIStatusRequiresPaymentMethod, Amount: 2500, Currency: "brl", CaptureMethod: "automatic",
			InterestPayer: "organization", PaymentMethodTypes: []string{"credit_card", "pix"}, Metadata: domain.Metadata{"order": "7"}}
	}
	finals := []func(pi *domain.PaymentIntent){
		func(pi *domain.PaymentIntent) {}, // nothing changed
		func(pi *domain.PaymentIntent) { // a paid card
			pi.Status, pi.AmountReceived, pi.PaymentMethod, pi.PaymentMethodType, pi.Installments, pi.LatestCharge = domain.PIStatusSucceeded, 2500, &pm, &typ, &three, &ch
			pi.Buyer = domain.BillingDetails{Name: &desc, Address: &domain.Address{Line1: "Rua A", City: "São Paulo", Country: "BR"}}
			pi.PaymentData = &domain.PaymentData{Type: typ, CreditCard: &domain.CreditCardData{Brand: "visa", Last4: "4242", Installments: 3}}
			pi.Description, pi.StatementDescriptor, pi.Customer = &desc, &sd, &cus
		},
		func(pi *domain.PaymentIntent) { // a declined card
			pi.LastPaymentError = &domain.PaymentError{Code: "card_declined", Message: "The card was declined."}
			pi.LatestCharge, pi.PaymentMethodType = &ch, &typ
			pi.Metadata = domain.Metadata{}
		},
		func(pi *domain.PaymentIntent) { // manual capture, then canceled (every column set)
			pi.Status, pi.AmountCapturable, pi.CaptureMethod, pi.InterestPayer = domain.PIStatusCanceled, 2500, "manual", "buyer"
			pi.CanceledAt, pi.CancellationReason = domain.At(pi.CreatedAt.Time), &reason
		},
	}
	// What each intent left, compared after the transaction (a failed assertion must not stop
	// the writer's goroutine).
	type stored struct{ row, read string }
	read := func(tx *Tx, id string) (stored, error) {
		var cols []any
		for range 27 {
			cols = append(cols, new(any))
		}
		if err := tx.queryRow("SELECT "+paymentIntentCols+" FROM payment_intents WHERE id = ?", id).Scan(cols...); err != nil {
			return stored{}, err
		}
		var st stored
		for i, c := range cols {
			if i == 0 || i == 14 { // id, client_secret (random, elided against the id)
				continue
			}
			st.row += fmt.Sprintf("%d=%#v ", i, *c.(*any))
		}
		pi, err := tx.FindPaymentIntentByID(s, id)
		if err != nil {
			return stored{}, err
		}
		pi.ID, pi.ClientSecret = "", ""
		b, err := domain.MarshalJSON(pi)
		st.read = string(b)
		return st, err
	}
	var twice, once []stored
	err := d.Write(context.Background(), func(tx *Tx) error {
		for _, final := range finals {
			a := base()
			if err := tx.CreatePaymentIntent(s, a); err != nil {
				return err
			}
			final(a)
			if err := tx.UpdatePaymentIntent(s, a); err != nil {
				return err
			}
			b := base()
			if err := tx.NewPaymentIntent(s, b); err != nil {
				return err
			}
			final(b)
			if err := tx.InsertPaymentIntent(s, b); err != nil {
				return err
			}
			sa, err := read(tx, a.ID)
			if err != nil {
				return err
			}
			sb, err := read(tx, b.ID)
			if err != nil {
				return err
			}
			twice, once = append(twice, sa), append(once, sb)
		}
		return nil
	})
	is.NoErr(err)
	is.Equal(len(once), len(finals))
	for i := range finals {
		is.Equal(once[i].row, twice[i].row)   // the same stored row
		is.Equal(once[i].read, twice[i].read) // and it reads back the same
	}
}
