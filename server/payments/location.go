package payments

import (
	"errors"
	"strings"
	"time"

	"troco/db"
	"troco/server/domain"
	"troco/server/pix"
)

// Kinds of PIX location: a charge's own BR Code (cob, with an expiry) or the PIX printed on a
// boleto (cobv, with a due date).
const (
	LocationCob  = "cob"
	LocationCobv = "cobv"
	LocationRec  = "rec" // a Pix Automático authorization's QR
)

// LocationPayload returns the payload the location of txid answers (the JWS body of a dynamic
// BR Code, BCB "Manual de Padrões para Iniciação do Pix"). caller nil is the public location URL
// (a payer's bank, no key); otherwise a location of another organization or environment is not
// found. An unknown txid, an expired location, or one whose charge failed or was canceled is a
// 404 resource_missing.
func (s *Service) LocationPayload(tx *db.Tx, txid string, caller *domain.Scope) (any, error) {
	missing := domain.NotFound("txid", "PIX location", txid)
	l, err := tx.FindPixLocation(txid)
	if errors.Is(err, db.ErrNotFound) || (err == nil && caller != nil && l.Scope != *caller) {
		return nil, missing
	}
	if err != nil {
		return nil, err
	}
	if !tx.Now.Before(l.ExpiresAt) {
		return nil, missing
	}
	if l.Kind == LocationRec {
		return s.recPayload(tx, l, missing)
	}
	ch, err := tx.FindChargeByID(l.Scope, l.Charge)
	if errors.Is(err, db.ErrNotFound) {
		return nil, missing
	}
	if err != nil {
		return nil, err
	}
	status := pix.StatusActive
	switch ch.Status {
	case domain.ChargeStatusSucceeded:
		status = pix.StatusCompleted
	case domain.ChargeStatusPending:
	default:
		return nil, missing // expired or canceled: the code no longer pays anything
	}
	org, err := tx.FindOrganizationByID(l.Scope.OrgID)
	if err != nil {
		return nil, err
	}
	p := &pix.LocationPayload{
		Revisao: l.Revision,
		Calendario: pix.Calendario{Criacao: ch.CreatedAt.UTC().Format(time.RFC3339),
			Apresentacao: tx.Now.UTC().Format(time.RFC3339)},
		Valor:  pix.Valor{Original: pix.FormatAmount(ch.Amount)},
		Chave:  ReceivingKey(org.ID),
		TxID:   txid,
		Status: status,
	}
	if ch.Description != nil {
		p.Solicitacao = truncate(*ch.Description, 140)
	}
	if b := ch.PaymentMethodDetails.Boleto; b != nil && l.Kind == LocationCobv {
		days := BoletoPixValidityDays
		p.Calendario.DataDeVencimento, p.Calendario.ValidadeAposVencimento = b.DueDate, &days
	} else {
		p.Calendario.Expiracao = int64(l.ExpiresAt.Sub(ch.CreatedAt.Time).Seconds())
	}
	if d := ch.BillingDetails; d.Document != nil && d.Name != nil {
		doc := strings.Map(func(r rune) rune {
			if (r >= '0' && r <= '9') || (r >= 'A' && r <= 'Z') {
				return r
			}
			return -1
		}, strings.ToUpper(*d.Document))
		dev := &pix.Devedor{Nome: *d.Name}
		if len(doc) == 11 {
			dev.CPF = doc
		} else {
			dev.CNPJ = doc
		}
		p.Devedor = dev
	}
	return p, nil
}

// ReceivingKey is the organization's PIX key in the payloads of its locations: a random-key
// (EVP) shaped identifier derived from the organization id until a real key is configured.
func ReceivingKey(orgID string) string {
	return evpKey(orgID)
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n])
	}
	return s
}

// recStatus maps an authorization's status onto the API Pix's recurrence statuses.
var recStatus = map[string]string{domain.PixAuthPending: "CRIADA", domain.PixAuthApproved: "APROVADA", domain.PixAuthRejected: "REJEITADA",
	domain.PixAuthCanceled: "CANCELADA", domain.PixAuthExpired: "EXPIRADA"}

var recPeriod = map[string]string{"week": "SEMANAL", "month": "MENSAL", "quarter": "TRIMESTRAL", "year": "ANUAL"}

// recPayload is the payload of a Pix Automático authorization's QR (its location's Charge is the
// authorization id).
func (s *Service) recPayload(tx *db.Tx, l *db.PixLocation, missing error) (any, error) {
	pa, err := tx.FindPixAuthorization(l.Scope, l.Charge)
	if errors.Is(err, db.ErrNotFound) {
		return nil, missing
	}
	if err != nil {
		return nil, err
	}
	p := &pix.RecPayload{IDRec: l.TxID, Vinculo: pix.RecVinculo{Contrato: pa.ID},
		Calendario: pix.RecCalendario{DataInicial: pa.StartDate, Periodicidade: recPeriod[pa.Interval]},
		Valor:      pix.RecValor{ValorMaximo: pix.FormatAmount(pa.MaxAmount)}, Politica: "PERMITE_3R_7D", Status: recStatus[pa.Status]}
	if pa.EndDate != nil {
		p.Calendario.DataFinal = *pa.EndDate
	}
	if pa.Description != nil {
		p.Vinculo.Objeto = truncate(*pa.Description, 140)
	}
	if cus, err := tx.FindCustomerByID(l.Scope, pa.Customer); err == nil && cus.Name != nil {
		p.Vinculo.Devedor = &pix.Devedor{Nome: *cus.Name}
	}
	return p, nil
}
