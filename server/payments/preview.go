package payments

import (
	"troco/db"
	"troco/server/domain"
	"troco/server/fees"
)

// PreviewParams is the body of POST /v1/payment-previews (CONTRACT 5).
type PreviewParams struct {
	Amount            *int64  `json:"amount"`
	Currency          *string `json:"currency"`
	PaymentMethodType string  `json:"payment_method_type"`
	InterestPayer     string  `json:"interest_payer"`
}

// Preview is a payment_preview: the instalment options of an amount, without any charge; the
// same in both modes (SPEC 4.8).
type Preview struct {
	Object            string             `json:"object"`
	Livemode          bool               `json:"livemode"`
	Amount            int64              `json:"amount"`
	Currency          string             `json:"currency"`
	PaymentMethodType string             `json:"payment_method_type"`
	InterestPayer     string             `json:"interest_payer"`
	InstallmentRate   int64              `json:"installment_interest_rate"`
	Installments      fees.PreviewResult `json:"installments"`
}

// PaymentPreview computes the instalment ceiling (CONTRACT 5: min(12, amount/500, brand), then
// the organization's max_installments) and every option up to it.
func (s *Service) PaymentPreview(tx *db.Tx, a domain.Actor, p PreviewParams) (*Preview, error) {
	if p.Amount == nil {
		return nil, domain.Missing("amount")
	}
	if err := domain.ValidateAmount("amount", *p.Amount, MinAmount); err != nil {
		return nil, err
	}
	cur := "brl"
	if p.Currency != nil {
		var err error
		if cur, err = domain.ValidateCurrency("currency", *p.Currency); err != nil || *p.Currency == "" {
			return nil, domain.Invalid("currency", "currency must be brl (lowercase ISO 4217).")
		}
	}
	switch p.PaymentMethodType {
	case "", domain.MethodCreditCard:
	default:
		return nil, domain.Invalid("payment_method_type", "Previews list card instalments: payment_method_type must be credit_card.")
	}
	payer, ok := fees.ParseInterestPayer(p.InterestPayer)
	if !ok {
		return nil, domain.Invalid("interest_payer", "interest_payer must be organization or buyer.")
	}
	org, err := tx.FindOrganizationByID(a.OrgID)
	if err != nil {
		return nil, err
	}
	_, rate := planFor(org)
	return &Preview{Object: "payment_preview", Livemode: a.Livemode, Amount: *p.Amount, Currency: cur, PaymentMethodType: domain.MethodCreditCard,
		InterestPayer: string(payer), InstallmentRate: rate, Installments: fees.PreviewAtRate(*p.Amount, payer, rate, org.MaxInstallments, "")}, nil
}
