package server

import (
	"bytes"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"troco/db"
	"troco/pages"
	"troco/server/boleto"
	"troco/server/calendar"
	"troco/server/document"
	"troco/server/domain"
	"troco/server/invoices"
	"troco/server/payments"
	"troco/server/pix"
)

// The public artefacts of a payment intent: the PIX QR image and the printable boleto. The
// buyer's browser opens them without an API key, so they are served at
// /payment-intents/{id}/pix.png and /payment-intents/{id}/boleto and require the intent's
// client_secret (compared in constant time); a wrong or missing secret is a 404 like an unknown
// id, so the URLs cannot be probed.

// pixQRSize is the side of the served QR image, in pixels.
const pixQRSize = 320

// publicIntent loads an intent by id for a public page and checks its client secret.
func (s *Server) publicIntent(r *http.Request) (*domain.PaymentIntent, *domain.Organization, error) {
	id := pathID(r)
	var pi *domain.PaymentIntent
	var org *domain.Organization
	err := s.db.Read(r.Context(), func(tx *db.Tx) error {
		var sc domain.Scope
		var err error
		if pi, sc, err = tx.FindPaymentIntentAnyScope(id); err != nil {
			return err
		}
		org, err = tx.FindOrganizationByID(sc.OrgID)
		return err
	})
	if errors.Is(err, db.ErrNotFound) || (err == nil && !payments.SecretMatches(pi.ClientSecret, r.URL.Query().Get("client_secret"))) {
		return nil, nil, domain.NotFound("id", "payment intent", id)
	}
	return pi, org, err
}

func writePNG(w http.ResponseWriter, png []byte) {
	h := w.Header()
	h.Set("Content-Type", "image/png")
	h.Set("Content-Length", strconv.Itoa(len(png)))
	h.Set("Cache-Control", "private, max-age=300")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	w.Write(png)
}

// pixPNG is the QR of the intent's PIX code, or of the PIX printed on its boleto.
func pixPNG(pi *domain.PaymentIntent) ([]byte, error) {
	switch d := pi.PaymentData; {
	case d != nil && d.Pix != nil:
		return pix.QRPNG(d.Pix.Code, pixQRSize)
	case d != nil && d.Boleto != nil && d.Boleto.PixCode != "":
		return pix.QRPNG(d.Boleto.PixCode, pixQRSize)
	}
	return nil, domain.NotFound("id", "PIX code for payment intent", pi.ID)
}

// handlePixQRPublic serves GET /payment-intents/:id/pix.png?client_secret=….
func (s *Server) handlePixQRPublic() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pi, _, err := s.publicIntent(r)
		if err == nil {
			var png []byte
			if png, err = pixPNG(pi); err == nil {
				writePNG(w, png)
				return
			}
		}
		s.writeError(w, r, err)
	})
}

// handlePixQRAPI serves GET /v1/payment-intents/:id/pix.png with an API key.
func (s *Server) handlePixQRAPI() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var pi *domain.PaymentIntent
		err := s.db.Read(r.Context(), func(tx *db.Tx) error {
			var err error
			pi, err = s.pay.GetIntent(tx, authFrom(r.Context()).Actor.Scope, id)
			return err
		})
		if err == nil {
			var png []byte
			if png, err = pixPNG(pi); err == nil {
				writePNG(w, png)
				return
			}
		}
		s.writeError(w, r, err)
	})
}

// handleBoletoPage serves the printable boleto at GET /payment-intents/:id/boleto?client_secret=….
func (s *Server) handleBoletoPage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pi, org, err := s.publicIntent(r)
		if err == nil && (pi.PaymentData == nil || pi.PaymentData.Boleto == nil) {
			err = domain.NotFound("id", "boleto for payment intent", pi.ID)
		}
		if e, ok := domain.AsError(err); ok && e.Status == http.StatusNotFound {
			s.renderMessage(w, r, http.StatusNotFound, pages.StateNotFound) // a page, in the visitor's language
			return
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		page, err := boletoPage(pi, org, s.cfg.Calendar)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		// A boleto that pays an invoice carries the invoice's late terms.
		_ = s.db.Read(r.Context(), func(tx *db.Tx) error {
			if inv, err := tx.FindInvoiceByPaymentIntent(domain.Scope{OrgID: org.ID, Livemode: pi.Livemode}, pi.ID); err == nil {
				if ins := invoices.BoletoInstructions(inv); ins != "" {
					// Payable after the due date with the fine and interest: not "do not accept".
					page.Instructions = append(withoutInstruction(page.Instructions, noLatePayment), ins)
					if page.Livemode {
						page.PaymentPlace = "Pagável em qualquer banco, lotérica ou aplicativo de banco, também após o vencimento"
					}
				}
			}
			return nil
		})
		var buf bytes.Buffer
		if err := pages.PaymentBoleto(page).Render(r.Context(), &buf); err != nil {
			s.writeError(w, r, err)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'")
		w.WriteHeader(http.StatusOK)
		w.Write(buf.Bytes())
	})
}

func boletoPage(pi *domain.PaymentIntent, org *domain.Organization, cal *calendar.Calendar) (pages.PaymentBoletoPage, error) {
	b := pi.PaymentData.Boleto
	svg, err := boleto.SVG(b.Barcode, boleto.DefaultBarHeight)
	if err != nil {
		return pages.PaymentBoletoPage{}, err
	}
	line, err := boleto.FormatLine(b.DigitableLine)
	if err != nil {
		return pages.PaymentBoletoPage{}, err
	}
	due := b.DueDate
	if d, err := boleto.ParseDate(b.DueDate); err == nil {
		due = d.Time().Format("02/01/2006")
	}
	p := pages.PaymentBoletoPage{Livemode: pi.Livemode, BankName: "troco", BankCode: boleto.BankCodeWithDV(b.Barcode[:3]),
		Payee: org.ShownName(), Amount: formatBRL(pi.Amount), DueDate: due, DigitableLine: line, BarcodeSVG: svg, Reference: pi.ID, PixCode: b.PixCode,
		NossoNumero: boleto.NossoNumero(b.Barcode), DocumentNumber: documentNumber(pi.ID), DocumentDate: pi.CreatedAt.Time.Format("02/01/2006"),
		PaymentPlace: "Pagável em qualquer banco, lotérica ou aplicativo de banco até o vencimento"}
	if !pi.Livemode {
		p.PaymentPlace = "Boleto simulado (ambiente de testes): não pode ser pago em um banco"
	}
	if org.Document != nil {
		if doc, err := document.Parse(*org.Document); err == nil {
			p.PayeeDocument = doc.Mask()
		}
	}
	if org.ShownName() != org.Name {
		p.Payee += " (" + org.Name + ")"
	}
	p.PayeeAddress = formatAddress(org.Address)
	if b.PixCode != "" {
		p.PixQRURL = payments.PixImagePath(pi.ID) + "?client_secret=" + url.QueryEscape(pi.ClientSecret)
	}
	if d, err := boleto.ParseDate(b.DueDate); err == nil && !cal.IsBusinessDay(d.Time()) {
		p.ChargesFrom = cal.OnOrAfter(d.Time()).Format("02/01/2006")
	}
	if n := pi.Buyer.Name; n != nil {
		p.PayerName = *n
	}
	if d := pi.Buyer.Document; d != nil {
		if doc, err := document.Parse(*d); err == nil {
			p.PayerDocument = doc.Mask()
		}
	}
	p.PayerAddress = formatAddress(pi.Buyer.Address)
	p.Instructions = []string{noLatePayment, "Pagamento de " + p.Amount + " a " + org.ShownName() + "."}
	if p.PixCode != "" {
		p.Instructions = append(p.Instructions, "Pague com o código de barras ou com o PIX abaixo: o mesmo valor, uma vez só.")
	}
	if pi.Description != nil && strings.TrimSpace(*pi.Description) != "" {
		p.Instructions = append(p.Instructions, "Referente a: "+domain.Portuguese(*pi.Description))
	}
	p.Instructions = append(p.Instructions, "Referência do pagamento: "+pi.ID)
	switch pi.Status {
	case domain.PIStatusSucceeded:
		p.Notice = "Este boleto já foi pago."
	case domain.PIStatusCanceled:
		p.Notice = "Este pagamento foi cancelado; o boleto não deve ser pago."
	case domain.PIStatusRequiresPaymentMethod:
		p.Notice = "Este boleto expirou e não pode mais ser pago."
	}
	return p, nil
}

// noLatePayment is the instruction of a boleto without late terms: the bank refuses it after
// its due date.
const noLatePayment = "Não receber após o vencimento."

func withoutInstruction(ins []string, drop string) []string {
	out := ins[:0:0]
	for _, s := range ins {
		if s != drop {
			out = append(out, s)
		}
	}
	return out
}

// documentNumber is the boleto's "número do documento": the last ten characters of the payment
// intent id, upper case (the field holds at most 15 characters on bank forms).
func documentNumber(id string) string {
	return strings.ToUpper(id[max(0, len(id)-10):])
}

// formatAddress writes a Brazilian postal address on one line: "Avenida Paulista, 1000 · Bela
// Vista · São Paulo/SP · CEP 01310-100".
func formatAddress(a *domain.Address) string {
	if a == nil {
		return ""
	}
	cep := a.PostalCode
	if len(cep) == 8 {
		cep = cep[:5] + "-" + cep[5:]
	}
	parts := []string{strings.TrimSpace(a.Line1 + ", " + a.Number), a.Line2, a.Neighborhood, a.City + "/" + a.State, "CEP " + cep}
	var kept []string
	for _, s := range parts {
		if s := strings.Trim(s, ", /"); s != "" && s != "CEP" {
			kept = append(kept, strings.TrimSpace(s))
		}
	}
	return strings.Join(kept, " · ")
}

// formatBRL writes centavos the Brazilian way: R$ 1.234,56.
func formatBRL(centavos int64) string {
	sign := ""
	if centavos < 0 {
		sign, centavos = "-", -centavos
	}
	whole := strconv.FormatInt(centavos/100, 10)
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(c)
	}
	return sign + "R$ " + b.String() + "," + strconv.FormatInt(centavos%100/10, 10) + strconv.FormatInt(centavos%10, 10)
}
