package apipix

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"troco/server/payments"
	"troco/server/processors"
)

// Pix Automático through the API Pix: a recurrence (POST /locrec for its QR's location, POST
// /rec, GET /rec/{idRec} for the QR and its status, PATCH /rec/{idRec} to cancel it), each
// renewal's recurring charge (PUT /cobr/{txid}, GET /cobr/{txid}) and its retries (POST
// /cobr/{txid}/retentativa/{data}), and the webhooks of both (PUT /webhookrec, PUT /webhookcobr).

// RecAccount is the receiver's account a recurring charge names (recebedor of /cobr).
type RecAccount struct {
	Agencia, Conta, TipoConta string
}

// ParseRecAccount reads --pix-account: "AGENCIA/CONTA/TIPO" (TIPO CORRENTE, POUPANCA or
// PAGAMENTO), the account Pix Automático charges are paid into.
func ParseRecAccount(s string) (RecAccount, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 || len(parts[0]) > 4 || parts[1] == "" || len(parts[1]) > 20 {
		return RecAccount{}, fmt.Errorf("--pix-account must be AGENCIA/CONTA/TIPO, e.g. 0001/123456/CORRENTE (agência of at most 4 digits, conta of at most 20)")
	}
	switch parts[2] {
	case "CORRENTE", "POUPANCA", "PAGAMENTO":
	default:
		return RecAccount{}, fmt.Errorf("--pix-account: the account type must be CORRENTE, POUPANCA or PAGAMENTO, not %q", parts[2])
	}
	return RecAccount{Agencia: parts[0], Conta: parts[1], TipoConta: parts[2]}, nil
}

// The API Pix objects of Pix Automático troco uses (checked against the Banco Central's OpenAPI
// by a test).
type (
	// PayloadLocationRecSolicitada is the body of POST /locrec.
	PayloadLocationRecSolicitada struct {
		Tipo string `json:"tipo"`
	}
	// PayloadLocationRecGerada is a recurrence's payload location.
	PayloadLocationRecGerada struct {
		ID       int64  `json:"id"`
		Location string `json:"location"`
		Criacao  string `json:"criacao,omitempty"`
	}
	// RecSolicitada is the body of POST /rec.
	RecSolicitada struct {
		Vinculo             Vinculo       `json:"vinculo"`
		Calendario          RecCalendario `json:"calendario"`
		PoliticaRetentativa string        `json:"politicaRetentativa"`
		Loc                 int64         `json:"loc,omitempty"`
	}
	// Vinculo is what the recurrence pays for and who pays it.
	Vinculo struct {
		Objeto   string     `json:"objeto,omitempty"`
		Contrato string     `json:"contrato"`
		Devedor  DevedorRec `json:"devedor"`
	}
	// DevedorRec is the payer of a recurrence: a name and a CPF or CNPJ.
	DevedorRec struct {
		CPF  string `json:"cpf,omitempty"`
		CNPJ string `json:"cnpj,omitempty"`
		Nome string `json:"nome"`
	}
	// RecCalendario is a recurrence's first payment date, last date and periodicity.
	RecCalendario struct {
		DataInicial   string `json:"dataInicial"`
		DataFinal     string `json:"dataFinal,omitempty"`
		Periodicidade string `json:"periodicidade"`
	}
	// RecCompleta is a recurrence as GET /rec/{idRec} answers it (the fields troco reads).
	RecCompleta struct {
		IDRec               string                    `json:"idRec"`
		Vinculo             Vinculo                   `json:"vinculo"`
		Calendario          RecCalendario             `json:"calendario"`
		PoliticaRetentativa string                    `json:"politicaRetentativa"`
		Status              string                    `json:"status"`
		Loc                 *PayloadLocationRecGerada `json:"loc,omitempty"`
		Encerramento        *Encerramento             `json:"encerramento,omitempty"`
		DadosQR             *DadosQR                  `json:"dadosQR,omitempty"`
	}
	// RecsConsultadas is the answer of GET /rec.
	RecsConsultadas struct {
		Recs []RecPesquisada `json:"recs"`
	}
	// RecPesquisada is a recurrence of a GET /rec list (the fields troco reads).
	RecPesquisada struct {
		IDRec   string  `json:"idRec"`
		Vinculo Vinculo `json:"vinculo"`
		Status  string  `json:"status"`
	}
	// Encerramento says why a recurrence or a recurring charge ended.
	Encerramento struct {
		Rejeicao     *Motivo       `json:"rejeicao,omitempty"`
		Cancelamento *Cancelamento `json:"cancelamento,omitempty"`
	}
	// Motivo is a rejection: a code of the message catalogue and its text.
	Motivo struct {
		Codigo    string `json:"codigo"`
		Descricao string `json:"descricao"`
	}
	// Cancelamento is a cancellation: who asked for it, its code and text.
	Cancelamento struct {
		Solicitante string `json:"solicitante"`
		Codigo      string `json:"codigo"`
		Descricao   string `json:"descricao"`
	}
	// DadosQR is the recurrence's QR (JORNADA_2: the payer scans it to authorize).
	DadosQR struct {
		Jornada       string `json:"jornada,omitempty"`
		PixCopiaECola string `json:"pixCopiaECola,omitempty"`
	}
	// RecRevisada is the body of PATCH /rec/{idRec} (troco only cancels).
	RecRevisada struct {
		Status string `json:"status"`
	}
	// CobRSolicitada is the body of PUT /cobr/{txid}.
	CobRSolicitada struct {
		IDRec         string           `json:"idRec"`
		InfoAdicional string           `json:"infoAdicional,omitempty"`
		Calendario    VencimentoCobR   `json:"calendario"`
		Valor         CobValor         `json:"valor"`
		AjusteDiaUtil bool             `json:"ajusteDiaUtil"`
		Recebedor     RecebedorConta   `json:"recebedor"`
		Devedor       *DevedorEndereco `json:"devedor,omitempty"`
	}
	// VencimentoCobR is the due date of a recurring charge to create.
	VencimentoCobR struct {
		DataDeVencimento string `json:"dataDeVencimento"`
	}
	// CobRCalendario is a recurring charge's due date and creation date.
	CobRCalendario struct {
		Criacao          string `json:"criacao,omitempty"`
		DataDeVencimento string `json:"dataDeVencimento"`
	}
	// RecebedorConta is the receiver's account of a recurring charge.
	RecebedorConta struct {
		Agencia   string `json:"agencia,omitempty"`
		Conta     string `json:"conta"`
		TipoConta string `json:"tipoConta"`
	}
	// DevedorEndereco is the payer's e-mail and address on a recurring charge.
	DevedorEndereco struct {
		Email string `json:"email,omitempty"`
	}
	// CobRCompleta is a recurring charge as GET /cobr/{txid} answers it.
	CobRCompleta struct {
		IDRec               string         `json:"idRec"`
		TxID                string         `json:"txid"`
		Calendario          CobRCalendario `json:"calendario"`
		Valor               CobValor       `json:"valor"`
		Status              string         `json:"status"`
		PoliticaRetentativa string         `json:"politicaRetentativa,omitempty"`
		Pix                 []Pix          `json:"pix,omitempty"`
		Tentativas          []Tentativa    `json:"tentativas,omitempty"`
		Encerramento        *Encerramento  `json:"encerramento,omitempty"`
	}
	// Tentativa is one attempt to settle a recurring charge on a date.
	Tentativa struct {
		DataLiquidacao string  `json:"dataLiquidacao"`
		Tipo           string  `json:"tipo"`
		Status         string  `json:"status"`
		EndToEndID     string  `json:"endToEndId"`
		Rejeicao       *Motivo `json:"rejeicao,omitempty"`
	}
	// WebhookRecConfig is the body of PUT /webhookrec and PUT /webhookcobr.
	WebhookRecConfig struct {
		WebhookURL string `json:"webhookUrl"`
	}
)

// Recurrence and recurring-charge statuses of the API Pix.
const (
	RecCriada    = "CRIADA"
	RecAprovada  = "APROVADA"
	RecRejeitada = "REJEITADA"
	RecExpirada  = "EXPIRADA"
	RecCancelada = "CANCELADA"

	CobRCriada    = "CRIADA"
	CobRAtiva     = "ATIVA"
	CobRConcluida = "CONCLUIDA"
	CobRExpirada  = "EXPIRADA"
	CobRRejeitada = "REJEITADA"
	CobRCancelada = "CANCELADA"

	TentativaPaga      = "PAGA"
	TentativaRejeitada = "REJEITADA"
	TentativaExpirada  = "EXPIRADA"
	TentativaCancelada = "CANCELADA"

	// PermiteRetentativa: up to three retries within seven days of the due date.
	PermiteRetentativa = "PERMITE_3R_7D"
)

// periodicidade maps troco's intervals onto the API Pix's.
var periodicidade = map[string]string{"week": "SEMANAL", "month": "MENSAL", "quarter": "TRIMESTRAL", "year": "ANUAL"}

// recStatus maps the API Pix recurrence statuses onto troco's authorization statuses.
var recStatus = map[string]string{RecCriada: "pending", RecAprovada: "approved", RecRejeitada: "rejected", RecExpirada: "expired", RecCancelada: "canceled"}

var _ payments.PixAutoProcessor = (*Client)(nil)

// CreateRecurrence creates a recurrence the payer authorizes by scanning its QR: a location
// (POST /locrec), the recurrence on it (POST /rec, vinculo.contrato = req.Contract, retries
// allowed), then its QR (GET /rec/{idRec}). POST is not idempotent: a creation whose answer was
// lost is found again by its contract (LookupRecurrence).
func (c *Client) CreateRecurrence(ctx context.Context, req payments.RecRequest) (payments.RecResult, error) {
	per, ok := periodicidade[req.Interval]
	if !ok {
		return payments.RecResult{}, fmt.Errorf("%w: interval %q has no API Pix periodicity", payments.ErrNotSent, req.Interval)
	}
	var loc PayloadLocationRecGerada
	if err := c.do(ctx, http.MethodPost, "/locrec", PayloadLocationRecSolicitada{Tipo: "rec"}, &loc); err != nil {
		// Whatever became of it, a location alone is no recurrence: nothing was created.
		return payments.RecResult{}, fmt.Errorf("%w: the PSP did not create the QR's location: %w", payments.ErrNotSent, err)
	}
	dev := DevedorRec{Nome: truncate(req.DebtorName, 140)}
	if len(req.DebtorDocument) == 14 {
		dev.CNPJ = req.DebtorDocument
	} else {
		dev.CPF = req.DebtorDocument
	}
	body := RecSolicitada{Vinculo: Vinculo{Objeto: truncate(req.Object, 35), Contrato: req.Contract, Devedor: dev},
		Calendario:          RecCalendario{DataInicial: req.StartDate, DataFinal: req.EndDate, Periodicidade: per},
		PoliticaRetentativa: PermiteRetentativa, Loc: loc.ID}
	var rec RecCompleta
	if err := c.do(ctx, http.MethodPost, "/rec", body, &rec); err != nil {
		var se *processors.StatusError
		if errors.As(err, &se) && se.Status < 500 {
			c.cfg.Log.Error("api pix: recurrence refused", "status", se.Status, "body", se.Body)
			return payments.RecResult{}, fmt.Errorf("%w: the PSP refused the recurrence (HTTP %d)", payments.ErrNotSent, se.Status)
		}
		return payments.RecResult{}, processors.Classify(err)
	}
	if rec.IDRec == "" {
		return payments.RecResult{}, errors.New("api pix: the recurrence has no idRec")
	}
	return c.LookupRecurrence(ctx, rec.IDRec, "")
}

// LookupRecurrence reads a recurrence by its idRec or, without one, finds it by its contract
// among the recurrences of the last 30 days (GET /rec?inicio&fim).
func (c *Client) LookupRecurrence(ctx context.Context, idRec, contract string) (payments.RecResult, error) {
	var rec RecCompleta
	if idRec == "" {
		now := c.cfg.Now().UTC()
		q := url.Values{"inicio": {now.AddDate(0, 0, -30).Format(time.RFC3339)}, "fim": {now.Add(time.Hour).Format(time.RFC3339)}}
		var list RecsConsultadas
		if err := c.do(ctx, http.MethodGet, "/rec?"+q.Encode(), nil, &list); err != nil {
			return payments.RecResult{}, err
		}
		for _, r := range list.Recs {
			if r.Vinculo.Contrato == contract {
				idRec = r.IDRec
			}
		}
		if idRec == "" {
			return payments.RecResult{}, nil
		}
	}
	err := c.do(ctx, http.MethodGet, "/rec/"+url.PathEscape(idRec), nil, &rec)
	var se *processors.StatusError
	if errors.As(err, &se) && se.Status == http.StatusNotFound {
		return payments.RecResult{}, nil
	}
	if err != nil {
		return payments.RecResult{}, err
	}
	r := payments.RecResult{Found: true, IDRec: rec.IDRec, Status: recStatus[rec.Status]}
	if r.Status == "" {
		r.Status = "pending"
	}
	if rec.DadosQR != nil {
		r.Code = rec.DadosQR.PixCopiaECola
	}
	if e := rec.Encerramento; e != nil {
		if m := e.Rejeicao; m != nil {
			r.ReasonCode, r.Reason = m.Codigo, m.Descricao
		}
		if m := e.Cancelamento; m != nil {
			r.ReasonCode, r.Reason = m.Codigo, m.Descricao
		}
	}
	return r, nil
}

// CancelRecurrence cancels a recurrence (PATCH /rec/{idRec} status CANCELADA); cancelling one
// already canceled is not an error.
func (c *Client) CancelRecurrence(ctx context.Context, idRec string) error {
	err := processors.Retry(ctx, 2, func() error {
		return c.do(ctx, http.MethodPatch, "/rec/"+url.PathEscape(idRec), RecRevisada{Status: RecCancelada}, nil)
	})
	var se *processors.StatusError
	if errors.As(err, &se) && se.Status < 500 {
		if r, lerr := c.LookupRecurrence(ctx, idRec, ""); lerr == nil && r.Status == "canceled" {
			return nil
		}
		return fmt.Errorf("%w: the PSP refused to cancel the recurrence (HTTP %d)", payments.ErrNotSent, se.Status)
	}
	return processors.Classify(err)
}

// ChargeRecurrence asks for attempt n of a recurring charge: attempt 0 creates it (PUT
// /cobr/{txid}, idempotent by txid), a later one asks for a retry on req.RetryDate (POST
// /cobr/{txid}/retentativa/{data}; a retry already asked for that date is read back).
func (c *Client) ChargeRecurrence(ctx context.Context, req payments.RecChargeRequest) (payments.RecChargeResult, error) {
	if req.Attempt == 0 {
		if c.cfg.RecAccount == nil {
			return payments.RecChargeResult{}, fmt.Errorf("%w: no receiving account for Pix Automático (--pix-account)", payments.ErrNotSent)
		}
		body := CobRSolicitada{IDRec: req.IDRec, InfoAdicional: truncate(req.Description, 140), Calendario: VencimentoCobR{DataDeVencimento: req.DueDate},
			Valor: CobValor{Original: Valor(req.Amount)}, AjusteDiaUtil: true,
			Recebedor: RecebedorConta{Agencia: c.cfg.RecAccount.Agencia, Conta: c.cfg.RecAccount.Conta, TipoConta: c.cfg.RecAccount.TipoConta}}
		var cob CobRCompleta
		if err := c.putCharge(ctx, "/cobr/", req.TxID, body, &cob); err != nil {
			return payments.RecChargeResult{}, err
		}
		return recChargeResult(cob, 0), nil
	}
	path := "/cobr/" + url.PathEscape(req.TxID) + "/retentativa/" + url.PathEscape(req.RetryDate)
	var cob CobRCompleta
	sent := false
	err := processors.Retry(ctx, 2, func() error {
		err := c.do(ctx, http.MethodPost, path, nil, &cob)
		if err != nil && !processors.NotSent(err) {
			sent = true
		}
		return err
	})
	var se *processors.StatusError
	switch {
	case err == nil:
	case errors.As(err, &se) && se.Status < 500:
		// Refused: maybe the first try was made and its answer lost; read the charge.
		r, lerr := c.LookupRecurringCharge(ctx, req.TxID, req.Attempt)
		if lerr == nil && r.Found {
			return r, nil
		}
		c.cfg.Log.Error("api pix: retry refused", "txid", req.TxID, "status", se.Status, "body", se.Body)
		return payments.RecChargeResult{}, fmt.Errorf("%w: the PSP refused the retry (HTTP %d)", payments.ErrNotSent, se.Status)
	case !sent:
		return payments.RecChargeResult{}, processors.Classify(err)
	default:
		return payments.RecChargeResult{}, err
	}
	return recChargeResult(cob, req.Attempt), nil
}

// LookupRecurringCharge reads a recurring charge (GET /cobr/{txid}) and says what became of
// its attempt n (its tentativa n): not made yet (Found false), waiting, paid or failed.
func (c *Client) LookupRecurringCharge(ctx context.Context, txid string, attempt int) (payments.RecChargeResult, error) {
	var cob CobRCompleta
	err := c.do(ctx, http.MethodGet, "/cobr/"+url.PathEscape(txid), nil, &cob)
	var se *processors.StatusError
	if errors.As(err, &se) && se.Status == http.StatusNotFound {
		return payments.RecChargeResult{}, nil
	}
	if err != nil {
		return payments.RecChargeResult{}, err
	}
	return recChargeResult(cob, attempt), nil
}

// recChargeResult reads attempt n of a recurring charge: its tentativa n decides (PAGA: paid;
// REJEITADA, EXPIRADA, CANCELADA: failed with its rejection), and the charge's own end
// (concluded with its PIX; rejected, expired, canceled) decides for a charge without it.
func recChargeResult(cob CobRCompleta, n int) payments.RecChargeResult {
	r := payments.RecChargeResult{Found: true, Status: payments.RecChargeWaiting}
	if n > 0 && len(cob.Tentativas) <= n {
		return payments.RecChargeResult{} // the retry was not made
	}
	paid := func() {
		r.Status = payments.RecChargePaid
		for _, p := range cob.Pix {
			amount, _ := ParseValor(p.Valor)
			r.PaidAmount, r.EndToEndID = amount, p.EndToEndID
		}
	}
	fail := func(m *Motivo, fallback string) {
		r.Status, r.FailureCode, r.FailureMessage = payments.RecChargeFailed, fallback, "the PSP ended the recurring charge"
		if m != nil {
			r.FailureCode, r.FailureMessage = m.Codigo, m.Descricao
		}
	}
	if len(cob.Tentativas) > n {
		t := cob.Tentativas[n]
		switch t.Status {
		case TentativaPaga:
			paid()
			if r.EndToEndID == "" {
				r.EndToEndID = t.EndToEndID
			}
			return r
		case TentativaRejeitada, TentativaExpirada, TentativaCancelada:
			fail(t.Rejeicao, t.Status)
			r.Final = cob.Status != CobRAtiva && cob.Status != CobRCriada
			return r
		}
	}
	switch cob.Status {
	case CobRConcluida:
		paid()
	case CobRRejeitada, CobRExpirada, CobRCancelada:
		var m *Motivo
		if e := cob.Encerramento; e != nil {
			m = e.Rejeicao
			if c := e.Cancelamento; m == nil && c != nil {
				m = &Motivo{Codigo: c.Codigo, Descricao: c.Descricao}
			}
		}
		fail(m, cob.Status)
		r.Final = true
	}
	return r
}

// RegisterRecWebhooks registers webhookURL for the recurrences (PUT /webhookrec; the PSP posts
// to webhookURL + "/rec") and the recurring charges (PUT /webhookcobr; + "/cobr").
func (c *Client) RegisterRecWebhooks(ctx context.Context, webhookURL string) error {
	for _, p := range []string{"/webhookrec", "/webhookcobr"} {
		err := processors.Retry(ctx, 3, func() error { return c.do(ctx, http.MethodPut, p, WebhookRecConfig{WebhookURL: webhookURL}, nil) })
		if err != nil {
			return fmt.Errorf("PUT %s: %w", p, err)
		}
	}
	return nil
}
