package invoices

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/payments"
)

// PublicBaseSetting is the setting that holds the public base URL of the hosted invoice pages
// (serve's --base-url). Without it the URLs are paths on the server that answered.
const PublicBaseSetting = db.SettingPublicBaseURL

// setHostedURLs gives a finalized invoice its hosted page and PDF addresses, which carry a
// random secret: whoever has the URL (the customer it was sent to) can see and pay the invoice.
func setHostedURLs(tx *db.Tx, inv *domain.Invoice) error {
	if inv.HostedInvoiceURL != nil {
		return nil
	}
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	secret := hex.EncodeToString(b[:])
	base, _, err := tx.GetSetting(PublicBaseSetting)
	if err != nil {
		return err
	}
	page := base + "/invoices/" + inv.ID + "?s=" + secret
	pdf := base + "/invoices/" + inv.ID + "/pdf?s=" + secret
	inv.HostedInvoiceURL, inv.InvoicePDF = &page, &pdf
	return nil
}

// HostedSecretMatches reports, in constant time, whether s is the secret of the invoice's
// hosted URLs.
func HostedSecretMatches(inv *domain.Invoice, s string) bool {
	if inv.HostedInvoiceURL == nil || s == "" {
		return false
	}
	_, want, ok := strings.Cut(*inv.HostedInvoiceURL, "?s=")
	return ok && subtle.ConstantTimeCompare([]byte(want), []byte(s)) == 1
}

// HostedPayParams is what the customer sends from the hosted invoice page.
type HostedPayParams struct {
	Method string // credit_card, pix or boleto
	Card   *payments.CardParams
	Origin string
	// Document and Address, typed on the page, are the payer's CPF/CNPJ and address for a
	// boleto when the customer has none (they are used for this payment, not saved).
	Document *string
	Address  *domain.Address
}

// PayHosted pays an open invoice from its hosted page: by a card typed by the customer (an
// on-session payment, not a reuse of a saved card), or by starting a PIX or a boleto for the
// amount due now (fine and interest included) that settles the invoice when it is paid. A boleto
// or PIX still waiting for an older amount (the invoice accrued a fine since) is replaced by one
// for the updated amount.
func (svc *Service) PayHosted(tx *db.Tx, a domain.Actor, id string, p HostedPayParams) (*domain.Invoice, error) {
	inv, err := Get(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if inv.Status != domain.InvoiceOpen && inv.Status != domain.InvoiceUncollectible {
		return nil, stateConflict(inv, "paid")
	}
	switch p.Method {
	case domain.MethodCreditCard, domain.MethodPix, domain.MethodBoleto:
	default:
		return nil, domain.Invalid("payment_method_type", "payment_method_type must be credit_card, pix or boleto.")
	}
	if p.Method == domain.MethodCreditCard && p.Card == nil {
		return nil, domain.Missing("card")
	}
	next, err := svc.nextAttempt(tx, a, inv, p.Method, true)
	if err != nil {
		return nil, err
	}
	switch {
	case next.Reapply != nil:
		return svc.confirmHosted(tx, a, inv, *inv, next.Reapply.ID, payments.ConfirmParams{Origin: p.Origin})
	case next.Keep != nil:
		return inv, nil
	}
	// A declined attempt's intent (next.Reuse) is left as it is: the customer's new card or
	// PIX is a new, on-session payment.
	cus, err := tx.FindCustomerByID(a.Scope, inv.Customer)
	if err != nil {
		return nil, err
	}
	amount, currency := inv.AmountRemaining, inv.Currency
	desc := domain.InvoicePaymentText(*inv.Number)
	pi, err := svc.Payments.CreateIntent(tx, a, payments.IntentParams{
		Amount: &amount, Currency: &currency, Customer: domain.Opt[string]{Set: true, V: inv.Customer},
		Description: domain.Opt[string]{Set: true, V: desc}, PaymentMethodTypes: []string{p.Method},
		Metadata: domain.Opt[map[string]string]{Set: true, V: map[string]string{"invoice": inv.ID}},
	})
	if err != nil {
		return nil, err
	}
	before := *inv
	inv.PaymentIntent = &pi.ID
	inv.AttemptCount++
	if err := tx.UpdateInvoice(a.Scope, inv); err != nil {
		return nil, err
	}
	cp := payments.ConfirmParams{PaymentMethodType: p.Method, Card: p.Card, Hosted: true, Origin: p.Origin,
		CustomerEmail: cus.Email, CustomerName: cus.Name, CustomerDocument: cus.Document, BillingAddress: cus.Address}
	if p.Method == domain.MethodBoleto {
		if p.Document != nil && cus.Document == nil {
			cp.CustomerDocument = p.Document
		}
		if p.Address != nil && cus.Address == nil {
			cp.BillingAddress = p.Address
		}
	}
	if p.Method == domain.MethodBoleto && !inv.DueDate.IsZero() && inv.DueDate.After(tx.Now.Add(24*time.Hour)) {
		// The boleto falls due on the invoice's due date (its UTC civil date); once that is
		// past, the default (three days) applies and the amount carries the fine and interest.
		d := inv.DueDate.UTC().Format(time.DateOnly)
		cp.BoletoDueDate = &d
	}
	return svc.confirmHosted(tx, a, inv, before, pi.ID, cp)
}

// confirmHosted confirms the intent of a hosted invoice payment and records the outcome on the
// invoice. In live mode the first run only reserves the processor call (its error carries the
// pending call and keeps the changes); the request's next run applies the answer.
func (svc *Service) confirmHosted(tx *db.Tx, a domain.Actor, inv *domain.Invoice, before domain.Invoice, piID string, cp payments.ConfirmParams) (*domain.Invoice, error) {
	confirmed, cerr := svc.Payments.Confirm(tx, a, piID, cp)
	if payments.PendingOf(cerr) != nil {
		return nil, cerr
	}
	if e, ok := domain.AsError(cerr); ok && e.KeepChanges {
		if e.Charge != "" {
			inv.Charge = &e.Charge
		}
		inv.LastPaymentError = FailureOf(nil, e)
		if err := tx.SetChargesInvoice(a.Scope, piID, inv.ID); err != nil {
			return nil, err
		}
		if err := tx.UpdateInvoice(a.Scope, inv); err != nil {
			return nil, err
		}
		if err := core.Emit(tx, a, EventPaymentFailed, inv, &before); err != nil {
			return nil, err
		}
		return nil, e
	}
	if cerr != nil {
		return nil, cerr
	}
	if confirmed.Status == domain.PIStatusSucceeded {
		return inv, markPaid(tx, a, inv, confirmed)
	}
	inv.Charge = confirmed.LatestCharge
	if err := tx.SetChargesInvoice(a.Scope, piID, inv.ID); err != nil {
		return nil, err
	}
	if err := tx.UpdateInvoice(a.Scope, inv); err != nil {
		return nil, err
	}
	return inv, core.Emit(tx, a, EventUpdated, inv, &before)
}

func slicesHas(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// BoletoInstructions is what a boleto that pays an invoice with late terms tells the bank: the
// fine and the interest after its due date (empty when the invoice has none).
func BoletoInstructions(inv *domain.Invoice) string {
	if inv == nil || (inv.FineRate == 0 && inv.InterestRate == 0) {
		return ""
	}
	pct := func(bps int64) string {
		if bps%100 == 0 {
			return fmt.Sprintf("%d%%", bps/100)
		}
		return strings.Replace(fmt.Sprintf("%d.%02d%%", bps/100, bps%100), ".", ",", 1)
	}
	return fmt.Sprintf("Após o vencimento, cobrar multa de %s e juros de mora de %s ao mês, pro rata die. Fatura %s.", pct(inv.FineRate), pct(inv.InterestRate), strDeref(inv.Number))
}

func strDeref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// GetHosted returns an invoice by id and its scope for its hosted page, when secret matches.
func GetHosted(tx *db.Tx, id, secret string) (*domain.Invoice, domain.Scope, error) {
	inv, sc, err := tx.FindInvoiceAnyScope(id)
	if errors.Is(err, db.ErrNotFound) || (err == nil && !HostedSecretMatches(inv, secret)) {
		return nil, sc, domain.NotFound("id", "invoice", id)
	}
	if err != nil {
		return nil, sc, err
	}
	inv.ApplyLateCharges(tx.Now)
	return inv, sc, nil
}
