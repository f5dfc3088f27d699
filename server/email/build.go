package email

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"troco/pages"
	"troco/server/boleto"
	"troco/server/domain"
)

// Input is everything a message is written from: the objects as their event carried them, and
// the customer's language and zone. Invoice and Subscription are the emitted JSON objects, so the
// fields that billing adds (hosted_invoice_url, invoice_pdf, next_payment_attempt) are shown as
// soon as they exist.
type Input struct {
	Kind         string
	Lang         pages.Lang
	Zone         *time.Location
	Brand        Brand
	CustomerName string
	Sandbox      bool
	// EventAt is when the event happened (the receipt's date when the charge has no better one).
	EventAt      time.Time
	Charge       *domain.Charge
	Intent       *domain.PaymentIntent
	Refund       *domain.Refund
	Invoice      map[string]any
	Subscription map[string]any
}

// ErrNotApplicable means the event's object lacks what its kind of message needs (a PIX e-mail
// for an intent without a PIX code): the message is skipped.
var ErrNotApplicable = errors.New("email: the object has nothing to send")

// Build writes the content of a message of in.Kind.
func Build(in Input) (Content, error) {
	l := in.Lang
	c := Content{Lang: l, Kind: in.Kind, Brand: in.Brand, Sandbox: in.Sandbox, Footer: t(l, "footer", in.Brand.Name)}
	c.Greeting = t(l, "greeting_anon")
	if n := strings.TrimSpace(in.CustomerName); n != "" {
		c.Greeting = t(l, "greeting", firstName(n))
	}
	org := in.Brand.Name
	switch in.Kind {
	case domain.EmailReceipt:
		ch := in.Charge
		if ch == nil {
			return c, ErrNotApplicable
		}
		amount := l.Money(ch.AmountCaptured)
		if ch.AmountCaptured == 0 {
			amount = l.Money(ch.Amount)
		}
		c.Subject = t(l, "receipt_subject", org, amount)
		c.Heading = t(l, "receipt_heading")
		c.Intro = []string{t(l, "receipt_intro", amount)}
		c.Facts = append(c.Facts, Fact{t(l, "amount"), amount}, Fact{t(l, "date"), FormatTime(l, in.EventAt, in.Zone)},
			Fact{t(l, "method"), methodLabel(l, ch.PaymentMethodDetails)})
		if card := ch.PaymentMethodDetails.Card; card != nil && card.Installments > 1 {
			c.Facts = append(c.Facts, Fact{t(l, "installments"), t(l, "installments_fmt", card.Installments, l.Money(ch.Amount/int64(card.Installments)))})
		}
		if ch.Description != nil && *ch.Description != "" {
			c.Facts = append(c.Facts, Fact{t(l, "description"), l.Generated(*ch.Description)})
		}
		c.Facts = append(c.Facts, Fact{t(l, "reference"), ch.ID})
		if ch.ReceiptURL != nil {
			c.Actions = append(c.Actions, Action{t(l, "view_receipt"), *ch.ReceiptURL})
		}
	case domain.EmailBoleto:
		pi := in.Intent
		if pi == nil || pi.PaymentData == nil || pi.PaymentData.Boleto == nil {
			return c, ErrNotApplicable
		}
		b := pi.PaymentData.Boleto
		amount, due := l.Money(pi.Amount), formatCivilDate(l, b.DueDate)
		c.Subject = t(l, "boleto_subject", org, amount, due)
		c.Heading = t(l, "boleto_heading")
		c.Intro = []string{t(l, "boleto_intro", amount)}
		c.Facts = append(c.Facts, Fact{t(l, "amount"), amount}, Fact{t(l, "due"), due})
		if pi.Description != nil && *pi.Description != "" {
			c.Facts = append(c.Facts, Fact{t(l, "description"), l.Generated(*pi.Description)})
		}
		c.CodeLabel, c.Code = t(l, "digitable_line"), b.DigitableLine
		if f, err := boleto.FormatLine(b.DigitableLine); err == nil {
			c.Code = f // grouped as printed on the boleto: 23793.38128 60007.827136 …
		}
		if b.PixCode != "" { // boleto híbrido: the same charge payable by PIX
			c.Code2Lbl, c.Code2 = t(l, "boleto_pix"), b.PixCode
		}
		if b.URL != "" {
			c.Actions = append(c.Actions, Action{t(l, "print_boleto"), b.URL})
		}
	case domain.EmailPix:
		pi := in.Intent
		if pi == nil || pi.PaymentData == nil || pi.PaymentData.Pix == nil {
			return c, ErrNotApplicable
		}
		p := pi.PaymentData.Pix
		amount := l.Money(pi.Amount)
		c.Subject = t(l, "pix_subject", org, amount)
		c.Heading = t(l, "pix_heading")
		c.Intro = []string{t(l, "pix_intro", amount)}
		c.Facts = append(c.Facts, Fact{t(l, "amount"), amount})
		if !p.ExpiresAt.IsZero() {
			c.Facts = append(c.Facts, Fact{t(l, "expires"), FormatTime(l, p.ExpiresAt.Time, in.Zone)})
		}
		if pi.Description != nil && *pi.Description != "" {
			c.Facts = append(c.Facts, Fact{t(l, "description"), l.Generated(*pi.Description)})
		}
		c.CodeLabel, c.Code, c.QRImage = t(l, "pix_code"), p.Code, p.ImageURL
	case domain.EmailInvoice, domain.EmailInvoiceUpcoming, domain.EmailPaymentFailed, domain.EmailInvoiceOverdue:
		inv := in.Invoice
		if inv == nil {
			return c, ErrNotApplicable
		}
		amount := l.Money(num(inv, "amount_remaining", "amount_due", "total_amount"))
		number := str(inv, "number")
		if number == "" {
			number = str(inv, "id")
		}
		switch in.Kind {
		case domain.EmailInvoice:
			if num(inv, "amount_due", "total_amount") <= 0 {
				return c, ErrNotApplicable // nothing to pay (a trial's invoice): paid when finalized
			}
			due := ""
			if at, ok := instant(inv, "due_date"); ok {
				due = FormatDay(l, at, in.Zone)
			}
			c.Subject = t(l, "invoice_subject", org, amount, due)
			c.Heading = t(l, "invoice_heading")
			c.Intro = []string{t(l, "invoice_intro", org, amount)}
			c.Facts = append(c.Facts, Fact{t(l, "invoice_number"), number}, Fact{t(l, "amount"), amount})
			if due != "" {
				c.Facts = append(c.Facts, Fact{t(l, "due"), due})
			}
		case domain.EmailInvoiceUpcoming:
			// The preview of a renewal invoice covers the coming period: it starts at the
			// renewal instant; its period_end is the end of the next period, a month too late.
			on := ""
			if at, ok := instant(inv, "next_payment_attempt", "period_start", "due_date", "created_at"); ok {
				on = FormatDay(l, at, in.Zone)
			}
			c.Subject = t(l, "upcoming_subject", org, on)
			c.Heading = t(l, "upcoming_heading")
			c.Intro = []string{t(l, "upcoming_intro", on, amount)}
			c.Facts = append(c.Facts, Fact{t(l, "renews_on"), on}, Fact{t(l, "amount"), amount})
		case domain.EmailInvoiceOverdue:
			due := ""
			if at, ok := instant(inv, "due_date"); ok {
				due = FormatTime(l, at, in.Zone)
			}
			c.Subject = t(l, "overdue_subject", org, amount)
			c.Heading = t(l, "overdue_heading")
			c.Intro = []string{t(l, "overdue_intro", amount, due)}
			if fine, interest := num(inv, "fine_rate"), num(inv, "interest_rate"); fine > 0 || interest > 0 {
				c.Intro = append(c.Intro, t(l, "overdue_terms", rate(l, fine), rate(l, interest)))
			}
			c.Intro = append(c.Intro, t(l, "overdue_pay"))
			c.Facts = append(c.Facts, Fact{t(l, "invoice_number"), number}, Fact{t(l, "amount"), amount}, Fact{t(l, "due"), due})
		case domain.EmailPaymentFailed:
			c.Subject = t(l, "failed_subject", org)
			c.Heading = t(l, "failed_heading")
			c.Intro = []string{t(l, "failed_intro", amount)}
			c.Facts = append(c.Facts, Fact{t(l, "invoice_number"), number}, Fact{t(l, "amount"), amount})
			if at, ok := instant(inv, "next_payment_attempt"); ok {
				when := FormatTime(l, at, in.Zone)
				c.Intro = append(c.Intro, t(l, "failed_retry", when))
				c.Facts = append(c.Facts, Fact{t(l, "next_attempt"), when})
			} else {
				c.Intro = append(c.Intro, t(l, "failed_final"))
			}
		}
		if u := str(inv, "hosted_invoice_url"); u != "" {
			c.Actions = append(c.Actions, Action{t(l, "view_invoice"), u})
		}
		if u := str(inv, "invoice_pdf"); u != "" {
			c.Actions = append(c.Actions, Action{t(l, "download_pdf"), u})
		}
	case domain.EmailSubscriptionCanceled:
		sub := in.Subscription
		if sub == nil {
			return c, ErrNotApplicable
		}
		c.Subject = t(l, "canceled_subject", org)
		c.Heading = t(l, "canceled_heading")
		c.Intro = []string{t(l, "canceled_intro", org)}
		if at, ok := instant(sub, "ended_at", "canceled_at", "current_period_end"); ok {
			c.Facts = append(c.Facts, Fact{t(l, "ended_on"), FormatDay(l, at, in.Zone)})
		}
		c.Facts = append(c.Facts, Fact{t(l, "reference"), str(sub, "id")})
	case domain.EmailRefund:
		r := in.Refund
		if r == nil {
			return c, ErrNotApplicable
		}
		amount := l.Money(r.Amount)
		c.Subject = t(l, "refund_subject", org, amount)
		c.Heading = t(l, "refund_heading")
		c.Intro = []string{t(l, "refund_intro", org, amount)}
		c.Facts = append(c.Facts, Fact{t(l, "refunded"), amount}, Fact{t(l, "date"), FormatTime(l, in.EventAt, in.Zone)})
		if in.Charge != nil {
			c.Facts = append(c.Facts, Fact{t(l, "method"), methodLabel(l, in.Charge.PaymentMethodDetails)})
			if in.Charge.ReceiptURL != nil {
				c.Actions = append(c.Actions, Action{t(l, "view_receipt"), *in.Charge.ReceiptURL})
			}
		}
		c.Facts = append(c.Facts, Fact{t(l, "reference"), r.ID})
	default:
		return c, ErrNotApplicable
	}
	c.Subject = Header(c.Subject)
	return c, nil
}

func firstName(n string) string {
	if f := strings.Fields(n); len(f) > 0 {
		return f[0]
	}
	return n
}

// methodLabel names the instrument of a charge: "Cartão Visa final 4242", "PIX", "Boleto".
func methodLabel(l pages.Lang, d domain.PaymentMethodDetails) string {
	switch {
	case d.Card != nil:
		brand := d.Card.Brand
		if brand != "" {
			brand = strings.ToUpper(brand[:1]) + brand[1:]
		}
		return t(l, "card", brand, d.Card.Last4)
	case d.Pix != nil || d.Type == domain.MethodPix:
		return t(l, "method_pix")
	case d.Boleto != nil || d.Type == domain.MethodBoleto:
		return t(l, "method_boleto")
	}
	return d.Type
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// num returns the first of keys that holds a number.
func num(m map[string]any, keys ...string) int64 {
	for _, k := range keys {
		if f, ok := m[k].(float64); ok {
			return int64(f)
		}
	}
	return 0
}

// instant returns the first of keys that holds a timestamp (RFC 3339 or Unix seconds).
func instant(m map[string]any, keys ...string) (time.Time, bool) {
	for _, k := range keys {
		switch v := m[k].(type) {
		case string:
			if at, err := time.Parse(time.RFC3339, v); err == nil {
				return at, true
			}
		case float64:
			if v > 0 {
				return time.Unix(int64(v), 0).UTC(), true
			}
		}
	}
	return time.Time{}, false
}

// ReceiptPage writes the hosted receipt page of a charge (its receipt_url): the receipt message
// itself, with the charge's current state (pending, failed, refunded) in place of "received".
func ReceiptPage(in Input) (string, error) {
	in.Kind = domain.EmailReceipt
	c, err := Build(in)
	if err != nil {
		return "", err
	}
	l, ch := in.Lang, in.Charge
	switch {
	case ch.Status == domain.ChargeStatusPending:
		c.Heading, c.Intro = t(l, "receipt_pending"), []string{t(l, "receipt_pending_intro")}
	case !ch.Paid:
		c.Heading, c.Intro = t(l, "receipt_failed"), nil
	case ch.AmountRefunded > 0:
		c.Facts = append(c.Facts, Fact{t(l, "refunded"), l.Money(ch.AmountRefunded)})
	}
	c.Subject = c.Heading + " · " + in.Brand.Name
	c.Actions = nil
	_, html, err := Render(c)
	return html, err
}

// rate writes basis points as a percentage the language's way (200 → "2%", 150 → "1,5%").
func rate(l pages.Lang, bps int64) string {
	whole, frac := bps/100, bps%100
	if frac == 0 {
		return fmt.Sprintf("%d%%", whole)
	}
	sep := ","
	if l == pages.En {
		sep = "."
	}
	return strings.TrimRight(fmt.Sprintf("%d%s%02d", whole, sep, frac), "0") + "%"
}
