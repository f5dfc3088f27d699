package payments

import (
	"time"

	"troco/db"
	"troco/server/calendar"
	"troco/server/domain"
	"troco/server/fees"
)

// The ledger (SPEC 2.9, 8.6; CONTRACT 5). A captured card sale writes one entry per instalment
// (gross, fee, interest the organization absorbs, net), a settled PIX or boleto one entry, and a
// refund one negative entry (the fee is not returned). Entries are written in the transaction
// that captures or settles the money; in test mode they stay pending with settled_at null.

// recordSale writes the entries of a captured charge.
func (s *Service) recordSale(tx *db.Tx, sc domain.Scope, org *domain.Organization, pi *domain.PaymentIntent, ch *domain.Charge) error {
	plan, rate := planFor(org)
	method := ch.PaymentMethodDetails.Type
	var entries []fees.Entry
	switch method {
	case domain.MethodCreditCard:
		count := 1
		if pi.Installments != nil {
			count = *pi.Installments
		}
		if pi.InterestPayer == string(fees.InterestPayerBuyer) {
			// The captured amount already carries the buyer's interest.
			entries = fees.Split(ch.AmountCaptured, count, plan.Fee(method, ch.AmountCaptured), 0)
		} else {
			entries = plan.CardEntries(ch.AmountCaptured, fees.InterestPayerOrganization, rate, count)
		}
	default:
		entries = fees.Split(ch.AmountCaptured, 1, plan.Fee(method, ch.AmountCaptured), 0)
	}
	for _, e := range entries {
		n, total := e.Installment, e.InstallmentCount
		t := &domain.Transaction{
			Type: domain.TxnTypeCharge, PaymentIntent: pi.ID, Charge: ch.ID, PaymentMethodType: method, Currency: ch.Currency,
			Amount: e.Amount, FeeAmount: e.FeeAmount, InterestAmount: e.InterestAmount, NetAmount: e.NetAmount,
			Status: domain.TxnPending, Installment: &n, InstallmentCount: &total,
		}
		t.AvailableOn = s.availableOn(method, tx.Now, n)
		if err := tx.InsertTransaction(sc, t); err != nil {
			return err
		}
	}
	return nil
}

// recordRefund writes the negative entry of a refund.
func recordRefund(tx *db.Tx, s domain.Scope, ch *domain.Charge, r *domain.Refund) error {
	return tx.InsertTransaction(s, &domain.Transaction{
		Type: domain.TxnTypeRefund, PaymentIntent: ch.PaymentIntent, Charge: ch.ID, Refund: &r.ID, PaymentMethodType: ch.PaymentMethodDetails.Type,
		Currency: r.Currency, Amount: -r.Amount, NetAmount: -r.Amount, Status: domain.TxnPending,
		AvailableOn: calendar.Today(tx.Now).Format(calendar.Layout),
	})
}

// ReceivableDays is how many days after capture each card instalment's money is expected: the
// n-th instalment 30·n days after capture (the acquirers' D+30 per parcela).
const ReceivableDays = 30

// availableOn is the date (YYYY-MM-DD, Brasília) the money of entry n of a sale captured at
// captured is expected, on the business-day calendar: card instalment n 30·n days after capture,
// moved to the next business day; a boleto on the business day after its settlement (bank
// clearing, D+1); PIX on the day itself (PIX settles at once, every day of the year).
func (s *Service) availableOn(method string, captured time.Time, n int) string {
	today := calendar.Today(captured)
	var d time.Time
	switch method {
	case domain.MethodCreditCard:
		d = s.Calendar.OnOrAfter(today.AddDate(0, 0, ReceivableDays*n))
	case domain.MethodBoleto:
		d = s.Calendar.Next(today)
	default:
		d = today
	}
	return d.Format(calendar.Layout)
}
