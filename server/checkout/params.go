package checkout

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"troco/server/core"
	"troco/server/document"
	"troco/server/domain"
	"troco/server/fees"
	"troco/server/payments"
)

// Limits of a session's body (troco's choices where SPEC 8 is silent; Stripe's figures).
const (
	MaxLineItems = 100
	MaxQuantity  = 10000
	maxURLLen    = 2048
	maxNameLen   = 256
	// DefaultBoletoDays is the boleto due date, in days after confirmation (SPEC 8).
	DefaultBoletoDays = 3
	maxBoletoDays     = 60
)

// LineItemParams is one entry of line_items in a create body.
type LineItemParams struct {
	Price string `json:"price"`
	// PriceData creates an archived price (and product) for this session instead of naming one.
	PriceData *core.InlinePriceData `json:"price_data"`
	Quantity  *int64                `json:"quantity"`
}

// Config is the part of a session's body that a payment link also stores and hands to every
// session it creates.
type Config struct {
	PaymentMethodTypes      []string                     `json:"payment_method_types"`
	PaymentMethodCollection *string                      `json:"payment_method_collection"`
	PaymentMethodOptions    *domain.PaymentMethodOptions `json:"payment_method_options"`
	AllowPromotionCodes     *bool                        `json:"allow_promotion_codes"`
	InvoiceCreation         *bool                        `json:"invoice_creation"`
	RequireBillingAddress   *bool                        `json:"require_billing_address"`
	RequireDocument         *bool                        `json:"require_document"`
	RequirePhone            *bool                        `json:"require_phone"`
	SubmitType              *string                      `json:"submit_type"`
	Template                *string                      `json:"template"`
	Branding                *domain.Branding             `json:"branding"`
	CancelURL               *string                      `json:"cancel_url"`
	SuccessURL              *string                      `json:"success_url"`
}

// SessionParams is the body of POST /v1/checkout-sessions (CONTRACT 3).
type SessionParams struct {
	Config
	LineItems        []LineItemParams  `json:"line_items"`
	Mode             *string           `json:"mode"`
	Currency         *string           `json:"currency"`
	Customer         *string           `json:"customer"`
	CustomerEmail    *string           `json:"customer_email"`
	CustomerName     *string           `json:"customer_name"`
	CustomerDocument *string           `json:"customer_document"`
	CustomerPhone    *string           `json:"customer_phone"`
	Discount         *string           `json:"discount"`
	Metadata         map[string]string `json:"metadata"`

	// Offer is what a payment session offers when payment_method_types is absent: the methods
	// the environment can take (payments.Service.DefaultMethods). nil: all of them.
	Offer []string `json:"-"`
}

// validateBranding checks a branding override; its null fields stay null.
func validateBranding(param string, b *domain.Branding) error {
	return domain.ValidateBranding(param, b)
}

// normalize validates a Config and fills its defaults into cs (everything but
// payment_method_types, which depend on the mode and the organization).
func (c *Config) apply(cs *domain.CheckoutSession, mode string) error {
	cs.PaymentMethodCollection = "always"
	if v := c.PaymentMethodCollection; v != nil {
		if *v != "always" && *v != "if_required" {
			return domain.Invalid("payment_method_collection", "payment_method_collection must be always or if_required.")
		}
		if *v == "if_required" && mode == domain.CheckoutModePayment {
			return domain.Invalid("payment_method_collection", "payment_method_collection if_required is for subscription mode (a recurring price in line_items): a payment session always collects a payment method when something is due.")
		}
		cs.PaymentMethodCollection = *v
	}
	cs.SubmitType = "auto"
	if v := c.SubmitType; v != nil {
		if !slices.Contains(domain.SubmitTypes, *v) {
			return domain.Invalid("submit_type", "submit_type must be one of auto, pay, subscribe, book or donate.")
		}
		if mode == domain.CheckoutModeSubscription && *v != "auto" && *v != "subscribe" {
			return domain.Invalid("submit_type", "submit_type %s is for payment mode; a subscription session takes auto or subscribe.", *v)
		}
		if mode == domain.CheckoutModePayment && *v == "subscribe" {
			return domain.Invalid("submit_type", "submit_type subscribe needs a recurring price in line_items.")
		}
		cs.SubmitType = *v
	}
	if v := c.Template; v != nil {
		if !slices.Contains(domain.CheckoutTemplates, *v) {
			return domain.Invalid("template", "template must be minimal, booking or null (the organization's default).")
		}
		t := *v
		cs.Template = &t
	}
	if err := validateBranding("branding", c.Branding); err != nil {
		return err
	}
	if c.Branding != nil {
		b := *c.Branding
		cs.Branding = &b
	}
	for _, u := range []struct {
		name string
		v    *string
		dst  **string
	}{{"cancel_url", c.CancelURL, &cs.CancelURL}, {"success_url", c.SuccessURL, &cs.SuccessURL}} {
		if u.v == nil {
			continue
		}
		if err := domain.ValidateURL(u.name, *u.v, maxURLLen); err != nil {
			return err
		}
		s := *u.v
		*u.dst = &s
	}
	flag := func(p *bool) bool { return p != nil && *p }
	cs.AllowPromotionCodes = flag(c.AllowPromotionCodes)
	cs.InvoiceCreation = flag(c.InvoiceCreation)
	cs.RequireBillingAddress = flag(c.RequireBillingAddress)
	cs.RequireDocument = flag(c.RequireDocument)
	cs.RequirePhone = flag(c.RequirePhone)
	return nil
}

// methodTypes validates requested payment_method_types for mode; nil means the default.
func methodTypes(requested []string, mode string) ([]string, error) {
	if requested == nil {
		if mode == domain.CheckoutModeSubscription {
			return []string{domain.MethodCreditCard}, nil
		}
		return slices.Clone(domain.CheckoutPaymentMethodTypes), nil
	}
	if len(requested) == 0 {
		return nil, domain.Invalid("payment_method_types", "payment_method_types cannot be empty; omit it to offer every method.")
	}
	out := []string{}
	for i, m := range requested {
		if !slices.Contains(domain.CheckoutPaymentMethodTypes, m) {
			return nil, domain.Invalid(fmt.Sprintf("payment_method_types[%d]", i), "payment_method_types accepts credit_card, pix and boleto; got %q.", m)
		}
		if mode == domain.CheckoutModeSubscription && m != domain.MethodCreditCard {
			return nil, domain.Invalid(fmt.Sprintf("payment_method_types[%d]", i), "A subscription renews by charging a saved card, so subscription sessions accept only credit_card.")
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	// Offer in the canonical order whatever the request's order.
	slices.SortFunc(out, func(a, b string) int {
		return slices.Index(domain.CheckoutPaymentMethodTypes, a) - slices.Index(domain.CheckoutPaymentMethodTypes, b)
	})
	return out, nil
}

// methodOptions validates payment_method_options and fills the defaults of the offered methods.
func methodOptions(in *domain.PaymentMethodOptions, offered []string, orgMaxInstallments int) (*domain.PaymentMethodOptions, error) {
	out := &domain.PaymentMethodOptions{}
	var req domain.PaymentMethodOptions
	if in != nil {
		req = *in
	}
	if req.CreditCard != nil && !slices.Contains(offered, domain.MethodCreditCard) ||
		req.Pix != nil && !slices.Contains(offered, domain.MethodPix) ||
		req.Boleto != nil && !slices.Contains(offered, domain.MethodBoleto) {
		// Options for a method that is not offered are kept out of the snapshot, silently when
		// the organization offers nothing yet (live mode before activation).
		if len(offered) > 0 {
			return nil, domain.Invalid("payment_method_options", "payment_method_options may only configure methods listed in payment_method_types.")
		}
	}
	if slices.Contains(offered, domain.MethodCreditCard) {
		o := domain.CardMethodOptions{MaxInstallments: fees.MaxInstallmentsAbsolute, InterestPayer: string(fees.InterestPayerOrganization)}
		if r := req.CreditCard; r != nil {
			if r.MaxInstallments != 0 {
				if r.MaxInstallments < 1 || r.MaxInstallments > fees.MaxInstallmentsAbsolute {
					return nil, domain.Invalid("payment_method_options[credit_card][max_installments]", "max_installments must be between 1 and %d.", fees.MaxInstallmentsAbsolute)
				}
				o.MaxInstallments = r.MaxInstallments
			}
			if r.InterestPayer != "" {
				p, ok := fees.ParseInterestPayer(r.InterestPayer)
				if !ok {
					return nil, domain.Invalid("payment_method_options[credit_card][interest_payer]", "interest_payer must be organization or buyer.")
				}
				o.InterestPayer = string(p)
			}
		}
		if orgMaxInstallments > 0 && o.MaxInstallments > orgMaxInstallments {
			o.MaxInstallments = orgMaxInstallments
		}
		out.CreditCard = &o
	}
	if slices.Contains(offered, domain.MethodPix) {
		// A BR Code stays payable for the payments engine's fixed lifetime; the option states it.
		o := domain.PixMethodOptions{ExpiresAfterSeconds: int64(payments.PixLifetime / time.Second)}
		if r := req.Pix; r != nil && r.ExpiresAfterSeconds != 0 && r.ExpiresAfterSeconds != o.ExpiresAfterSeconds {
			return nil, domain.Invalid("payment_method_options[pix][expires_after_seconds]", "PIX codes stay payable for %d seconds (24 hours); expires_after_seconds cannot be changed.", o.ExpiresAfterSeconds)
		}
		out.Pix = &o
	}
	if slices.Contains(offered, domain.MethodBoleto) {
		o := domain.BoletoMethodOptions{ExpiresAfterDays: DefaultBoletoDays}
		if r := req.Boleto; r != nil && r.ExpiresAfterDays != 0 {
			if r.ExpiresAfterDays < 1 || r.ExpiresAfterDays > maxBoletoDays {
				return nil, domain.Invalid("payment_method_options[boleto][expires_after_days]", "expires_after_days must be between 1 and %d.", maxBoletoDays)
			}
			o.ExpiresAfterDays = r.ExpiresAfterDays
		}
		out.Boleto = &o
	}
	return out, nil
}

// Buyer is the buyer data a session collects (prefilled at creation, completed at confirmation).
type Buyer struct {
	Email, Name, Document, Phone *string
}

// applyBuyer validates buyer fields and copies the given ones into cs.
func applyBuyer(cs *domain.CheckoutSession, b Buyer) error {
	if b.Email != nil {
		e := strings.TrimSpace(*b.Email)
		if e != "" {
			if err := domain.ValidateEmail("customer_email", e); err != nil {
				return err
			}
			cs.CustomerEmail = &e
		}
	}
	if b.Name != nil {
		n := strings.TrimSpace(*b.Name)
		if n != "" {
			if err := domain.ValidateText("customer_name", n, maxNameLen); err != nil {
				return err
			}
			cs.CustomerName = &n
		}
	}
	if b.Phone != nil {
		p := strings.TrimSpace(*b.Phone)
		if p != "" {
			if err := validatePhone(p); err != nil {
				return err
			}
			cs.CustomerPhone = &p
		}
	}
	if b.Document != nil && strings.TrimSpace(*b.Document) != "" {
		doc, err := document.Parse(*b.Document)
		if err != nil {
			return domain.Invalid("customer_document", "customer_document must be a valid CPF (11 digits) or CNPJ (14 characters): %s.", documentProblem(err))
		}
		num, typ := doc.Number, string(doc.Type)
		cs.CustomerDocument, cs.CustomerDocumentType = &num, &typ
	}
	return nil
}

func validatePhone(p string) error { return domain.ValidatePhone("customer_phone", p) }

func documentProblem(err error) string {
	switch err {
	case document.ErrLength:
		return "wrong length"
	case document.ErrCharacters:
		return "invalid characters"
	case document.ErrAllEqual:
		return "all digits are equal"
	case document.ErrCheckDigit:
		return "check digits do not match"
	}
	return "invalid"
}
