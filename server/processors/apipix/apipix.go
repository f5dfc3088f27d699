// Package apipix is the live PIX processor: the Banco Central's API Pix, which every Brazilian
// PSP offers. OAuth 2.0 client credentials over mutual TLS (the token is cached until shortly
// before it expires and fetched again on a 401), immediate charges (PUT /cob/{txid}) whose BR
// Code is the PSP's pixCopiaECola (or built on its location), charges with a due date (PUT
// /cobv/{txid}), the webhook registration (PUT /webhook/{chave}), queries (GET /cob/{txid},
// GET /pix/{e2eid}, GET /pix) and refunds as devoluções (PUT /pix/{e2eid}/devolucao/{id}).
package apipix

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"troco/server/domain"
	"troco/server/payments"
	"troco/server/pix"
	"troco/server/processors"
)

// Config is what the connector needs (serve --pix-*).
type Config struct {
	BaseURL      string // the PSP's API Pix base, e.g. https://pix.psp.com.br/api/v2
	TokenURL     string // the PSP's OAuth token endpoint
	ClientID     string
	ClientSecret string       // read from --pix-client-secret-file
	Chave        string       // the receiving PIX key (--pix-key-chave)
	Client       *http.Client // mTLS client (processors.HTTPClient with the certificate)
	Log          *slog.Logger
	// MerchantName and MerchantCity go into a BR Code built from a location when the PSP does
	// not return pixCopiaECola.
	MerchantName, MerchantCity string
	Now                        func() time.Time
	// RecAccount is the account Pix Automático charges are paid into (--pix-account); without
	// it recurring charges are refused before anything is sent.
	RecAccount *RecAccount
}

// Client is the API Pix connector; it implements payments.Processor for PIX.
type Client struct {
	cfg     Config
	breaker processors.Breaker

	mu      sync.Mutex
	token   string
	expires time.Time
}

// New returns a connector.
func New(cfg Config) *Client {
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.Client == nil {
		cfg.Client, _ = processors.HTTPClient("", nil)
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MerchantName == "" {
		cfg.MerchantName = "TROCO"
	}
	if cfg.MerchantCity == "" {
		cfg.MerchantCity = "SAO PAULO"
	}
	return &Client{cfg: cfg}
}

var _ payments.Processor = (*Client)(nil)

func (c *Client) InTransaction() bool { return false }

func (c *Client) Available(method string) error {
	if method != domain.MethodPix {
		return payments.ErrProcessorUnavailable(method)
	}
	return nil
}

// Valor is an API Pix amount: "123.45".
func Valor(centavos int64) string { return pix.FormatAmount(centavos) }

// ParseValor reads an API Pix amount as centavos.
func ParseValor(v string) (int64, bool) {
	whole, frac, ok := strings.Cut(v, ".")
	if !ok || len(frac) != 2 || whole == "" || len(whole) > 10 {
		return 0, false
	}
	var n int64
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			return 0, false
		}
		n = n*10 + int64(r-'0')
	}
	return n, true
}

// The API Pix objects troco uses (checked against the Banco Central's OpenAPI by a test).
type (
	// CobSolicitada is the body of PUT /cob/{txid}.
	CobSolicitada struct {
		Calendario         Expiracao `json:"calendario"`
		Valor              CobValor  `json:"valor"`
		Chave              string    `json:"chave"`
		SolicitacaoPagador string    `json:"solicitacaoPagador,omitempty"`
	}
	// Expiracao is the calendario of a charge request: its lifetime in seconds.
	Expiracao struct {
		Expiracao int `json:"expiracao,omitempty"`
	}
	// Calendario holds a charge's creation and lifetime (seconds).
	Calendario struct {
		Criacao   string `json:"criacao,omitempty"`
		Expiracao int    `json:"expiracao,omitempty"`
	}
	// CobValor is a charge's amount.
	CobValor struct {
		Original string `json:"original"`
	}
	// CobVSolicitada is the body of PUT /cobv/{txid}: a charge with a due date.
	CobVSolicitada struct {
		Calendario         VencimentoSolicitado `json:"calendario"`
		Devedor            Devedor              `json:"devedor"`
		Valor              CobVValor            `json:"valor"`
		Chave              string               `json:"chave"`
		SolicitacaoPagador string               `json:"solicitacaoPagador,omitempty"`
	}
	// CobVValor is the amount of a charge with a due date and what is owed after it: multa
	// (modalidade 2, a percentage of the amount, once) and juros (modalidade 3, a percentage
	// per month, calendar days), both omitted when zero.
	CobVValor struct {
		Original string      `json:"original"`
		Multa    *Modalidade `json:"multa,omitempty"`
		Juros    *Modalidade `json:"juros,omitempty"`
	}
	// Modalidade is a multa or juros: its kind (the API Pix's domain table) and value.
	Modalidade struct {
		Modalidade int    `json:"modalidade"`
		ValorPerc  string `json:"valorPerc"`
	}
	// VencimentoSolicitado is the calendario of a charge with a due date, as requested.
	VencimentoSolicitado struct {
		DataDeVencimento       string `json:"dataDeVencimento"`
		ValidadeAposVencimento int    `json:"validadeAposVencimento,omitempty"`
	}
	// Vencimento is the calendario of a charge with a due date, as answered.
	Vencimento struct {
		Criacao                string `json:"criacao,omitempty"`
		DataDeVencimento       string `json:"dataDeVencimento"`
		ValidadeAposVencimento int    `json:"validadeAposVencimento,omitempty"`
	}
	// Devedor is the debtor of a charge with a due date.
	Devedor struct {
		CPF  string `json:"cpf,omitempty"`
		CNPJ string `json:"cnpj,omitempty"`
		Nome string `json:"nome"`
	}
	// CobVCompleta is a charge with a due date as the PSP answers it.
	CobVCompleta struct {
		TxID          string     `json:"txid"`
		Calendario    Vencimento `json:"calendario"`
		Status        string     `json:"status"`
		Valor         CobValor   `json:"valor"`
		Chave         string     `json:"chave"`
		PixCopiaECola string     `json:"pixCopiaECola"`
		Pix           []Pix      `json:"pix"`
	}
	// CobCompleta is a charge as the PSP answers it.
	CobCompleta struct {
		TxID          string     `json:"txid"`
		Revisao       int        `json:"revisao"`
		Calendario    Calendario `json:"calendario"`
		Status        string     `json:"status"`
		Valor         CobValor   `json:"valor"`
		Chave         string     `json:"chave"`
		Location      string     `json:"location"`
		PixCopiaECola string     `json:"pixCopiaECola"`
		Pix           []Pix      `json:"pix"`
	}
	// Pix is one received PIX.
	Pix struct {
		EndToEndID string `json:"endToEndId"`
		TxID       string `json:"txid"`
		Valor      string `json:"valor"`
		Horario    string `json:"horario"`
	}
	// PixConsultados is the answer of GET /pix.
	PixConsultados struct {
		Pix []Pix `json:"pix"`
	}
	// DevolucaoSolicitada is the body of PUT /pix/{e2eid}/devolucao/{id}.
	DevolucaoSolicitada struct {
		Valor string `json:"valor"`
	}
	// Devolucao is a refund as the PSP answers it.
	Devolucao struct {
		ID     string `json:"id"`
		RtrID  string `json:"rtrId"`
		Valor  string `json:"valor"`
		Status string `json:"status"`
		Motivo string `json:"motivo,omitempty"`
	}
	// WebhookConfig is the body of PUT /webhook/{chave}.
	WebhookConfig struct {
		WebhookURL string `json:"webhookUrl"`
	}
)

// Charge statuses of the API Pix.
const (
	CobAtiva     = "ATIVA"
	CobConcluida = "CONCLUIDA"
)

// StartAsync opens an immediate charge with txid = the attempt's reference. PUT is idempotent
// for one txid: a retry that finds the charge already created reads it instead.
func (c *Client) StartAsync(ctx context.Context, req payments.AsyncRequest) (payments.AsyncResult, error) {
	if req.Method != domain.MethodPix {
		return payments.AsyncResult{}, fmt.Errorf("%w: the API Pix serves PIX only", payments.ErrNotSent)
	}
	if req.DueDate != "" {
		return c.startCobV(ctx, req)
	}
	body := CobSolicitada{Calendario: Expiracao{Expiracao: int(req.Expires / time.Second)}, Valor: CobValor{Original: Valor(req.Amount)}, Chave: c.cfg.Chave}
	if req.Description != "" {
		body.SolicitacaoPagador = truncate(req.Description, 140)
	}
	var cob CobCompleta
	if err := c.putCharge(ctx, "/cob/", req.Reference, body, &cob); err != nil {
		return payments.AsyncResult{}, err
	}
	code, err := c.brCode(cob, req.Amount)
	if err != nil {
		return payments.AsyncResult{}, err
	}
	return payments.AsyncResult{Code: code, Location: cob.Location}, nil
}

// putCharge creates the charge txid at collection ("/cob/" or "/cobv/") with PUT, idempotent by
// its txid: a retry whose first attempt may have reached the PSP and that is now refused (the
// txid exists) reads the charge instead. A refusal of a first attempt is ErrNotSent (nothing was
// charged); a failure that may have reached the PSP is returned as is, for reconciliation.
func (c *Client) putCharge(ctx context.Context, collection, txid string, body, out any) error {
	path := collection + url.PathEscape(txid)
	sent := false
	err := processors.Retry(ctx, 2, func() error {
		err := c.do(ctx, http.MethodPut, path, body, out)
		var se *processors.StatusError
		if sent && errors.As(err, &se) && se.Status < 500 {
			err = c.do(ctx, http.MethodGet, path, nil, out) // the first attempt created it: read it
		}
		if err != nil && !processors.NotSent(err) {
			sent = true
		}
		return err
	})
	if err == nil {
		return nil
	}
	if !sent {
		return processors.Classify(err)
	}
	var se *processors.StatusError
	if errors.As(err, &se) && se.Status < 500 {
		c.cfg.Log.Error("api pix: charge refused", "path", collection, "txid", txid, "status", se.Status, "body", se.Body)
		return fmt.Errorf("%w: the PSP refused the charge (HTTP %d)", payments.ErrNotSent, se.Status)
	}
	return err
}

// startCobV opens a charge with a due date (PUT /cobv/{txid}); like PUT /cob, a retry that finds
// it already created reads it.
func (c *Client) startCobV(ctx context.Context, req payments.AsyncRequest) (payments.AsyncResult, error) {
	dev := Devedor{Nome: truncate(req.PayerName, 200)}
	if len(req.PayerDocument) == 14 {
		dev.CNPJ = req.PayerDocument
	} else {
		dev.CPF = req.PayerDocument
	}
	body := CobVSolicitada{Calendario: VencimentoSolicitado{DataDeVencimento: req.DueDate, ValidadeAposVencimento: req.DueValidityDays}, Devedor: dev,
		Valor: CobVValor{Original: Valor(req.Amount)}, Chave: c.cfg.Chave}
	if req.FineRate > 0 {
		body.Valor.Multa = &Modalidade{Modalidade: MultaPercentual, ValorPerc: Percent(req.FineRate)}
	}
	if req.InterestRate > 0 {
		body.Valor.Juros = &Modalidade{Modalidade: JurosPercentualMes, ValorPerc: Percent(req.InterestRate)}
	}
	if req.Description != "" {
		body.SolicitacaoPagador = truncate(req.Description, 140)
	}
	var cob CobVCompleta
	if err := c.putCharge(ctx, "/cobv/", req.Reference, body, &cob); err != nil {
		return payments.AsyncResult{}, err
	}
	if cob.PixCopiaECola == "" {
		return payments.AsyncResult{}, errors.New("api pix: the charge with due date has no pixCopiaECola")
	}
	return payments.AsyncResult{Code: cob.PixCopiaECola}, nil
}

// The API Pix modalidades troco uses: a fine as a percentage of the amount, interest as a
// percentage per month counted in calendar days (troco's interest_rate is per 30 days, pro rata
// per day).
const (
	MultaPercentual    = 2
	JurosPercentualMes = 3
)

// Percent writes basis points as the API Pix's valorPerc percentage: 200 is "2.00".
func Percent(bp int64) string { return fmt.Sprintf("%d.%02d", bp/100, bp%100) }

// lookupCobV is Lookup for a charge with a due date.
func (c *Client) lookupCobV(ctx context.Context, txid string) (payments.LookupResult, error) {
	var cob CobVCompleta
	err := c.do(ctx, http.MethodGet, "/cobv/"+url.PathEscape(txid), nil, &cob)
	var se *processors.StatusError
	if errors.As(err, &se) && se.Status == http.StatusNotFound {
		return payments.LookupResult{}, nil
	}
	if err != nil {
		return payments.LookupResult{}, err
	}
	r := payments.LookupResult{Found: true, Code: cob.PixCopiaECola}
	switch cob.Status {
	case CobConcluida:
		for _, p := range cob.Pix {
			if p.TxID == txid {
				amount, _ := ParseValor(p.Valor)
				r.Paid, r.PaidAmount, r.EndToEndID = true, amount, p.EndToEndID
			}
		}
	case CobAtiva:
		if due, err := time.Parse("2006-01-02", cob.Calendario.DataDeVencimento); err == nil &&
			c.cfg.Now().After(due.AddDate(0, 0, cob.Calendario.ValidadeAposVencimento+1).Add(3*time.Hour)) {
			r.Expired = true // past the last payable day in Brasília (UTC-3)
		}
	default:
		r.Expired = true
	}
	return r, nil
}

// brCode is the PSP's pixCopiaECola or, without one, a dynamic BR Code on its location.
func (c *Client) brCode(cob CobCompleta, amount int64) (string, error) {
	if cob.PixCopiaECola != "" {
		return cob.PixCopiaECola, nil
	}
	if cob.Location == "" {
		return "", errors.New("api pix: the charge has neither pixCopiaECola nor location")
	}
	loc := strings.TrimPrefix(strings.TrimPrefix(cob.Location, "https://"), "http://")
	return pix.Payload{MerchantName: c.cfg.MerchantName, MerchantCity: c.cfg.MerchantCity, URL: loc, Amount: amount, SingleUse: true}.Encode()
}

// Lookup answers what the PSP knows of a PIX charge: with an endToEndId (the webhook) it reads
// that PIX (GET /pix/{e2eid}) and requires it to be for the txid; otherwise it reads the charge
// (GET /cob/{txid}) and, for a concluded charge without its PIX, GET /pix by txid.
func (c *Client) Lookup(ctx context.Context, ref payments.ChargeRef) (payments.LookupResult, error) {
	if ref.ProcessorID != "" {
		var p Pix
		err := c.do(ctx, http.MethodGet, "/pix/"+url.PathEscape(ref.ProcessorID), nil, &p)
		var se *processors.StatusError
		if errors.As(err, &se) && se.Status == http.StatusNotFound {
			return payments.LookupResult{}, nil
		}
		if err != nil {
			return payments.LookupResult{}, err
		}
		amount, ok := ParseValor(p.Valor)
		if !ok || p.TxID != ref.Reference {
			return payments.LookupResult{}, nil
		}
		return payments.LookupResult{Found: true, Paid: true, PaidAmount: amount, EndToEndID: p.EndToEndID}, nil
	}
	var cob CobCompleta
	err := c.do(ctx, http.MethodGet, "/cob/"+url.PathEscape(ref.Reference), nil, &cob)
	var se *processors.StatusError
	if errors.As(err, &se) && se.Status == http.StatusNotFound {
		return c.lookupCobV(ctx, ref.Reference) // a charge with a due date, or none
	}
	if err != nil {
		return payments.LookupResult{}, err
	}
	r := payments.LookupResult{Found: true, Code: cob.PixCopiaECola, Location: cob.Location}
	if r.Code == "" && cob.Location != "" {
		amount, _ := ParseValor(cob.Valor.Original)
		r.Code, _ = c.brCode(cob, amount)
	}
	switch cob.Status {
	case CobConcluida:
		pixes := cob.Pix
		if len(pixes) == 0 {
			var list PixConsultados
			q := url.Values{"inicio": {cob.Calendario.Criacao}, "fim": {c.cfg.Now().UTC().Format(time.RFC3339)}, "txid": {ref.Reference}}
			if err := c.do(ctx, http.MethodGet, "/pix?"+q.Encode(), nil, &list); err != nil {
				return r, err
			}
			pixes = list.Pix
		}
		for _, p := range pixes {
			if p.TxID == ref.Reference {
				amount, _ := ParseValor(p.Valor)
				r.Paid, r.PaidAmount, r.EndToEndID = true, amount, p.EndToEndID
				break
			}
		}
	case CobAtiva:
		if created, err := time.Parse(time.RFC3339, cob.Calendario.Criacao); err == nil && cob.Calendario.Expiracao > 0 &&
			c.cfg.Now().After(created.Add(time.Duration(cob.Calendario.Expiracao)*time.Second)) {
			r.Expired = true
		}
	default: // REMOVIDA_PELO_USUARIO_RECEBEDOR, REMOVIDA_PELO_PSP
		r.Expired = true
	}
	return r, nil
}

// Refund requests a devolução of a paid PIX with id = the refund's reference; PUT with the same
// id is idempotent, so a retry never refunds twice.
func (c *Client) Refund(ctx context.Context, req payments.RefundRequest) (payments.RefundResult, error) {
	if req.Charge.ProcessorID == "" {
		return payments.RefundResult{}, fmt.Errorf("%w: the PIX charge has no endToEndId yet", payments.ErrNotSent)
	}
	var d Devolucao
	sent := false
	err := processors.Retry(ctx, 2, func() error {
		err := c.do(ctx, http.MethodPut, "/pix/"+url.PathEscape(req.Charge.ProcessorID)+"/devolucao/"+url.PathEscape(req.Reference), DevolucaoSolicitada{Valor: Valor(req.Amount)}, &d)
		if err != nil && !processors.NotSent(err) {
			sent = true
		}
		return err
	})
	var se *processors.StatusError
	switch {
	case err == nil:
	case errors.As(err, &se) && se.Status < 500:
		return payments.RefundResult{Status: "failed", Message: "the PSP refused the devolução"}, nil
	case !sent:
		return payments.RefundResult{}, processors.Classify(err)
	default:
		return payments.RefundResult{}, err
	}
	switch d.Status {
	case "DEVOLVIDO":
		return payments.RefundResult{Status: "succeeded", ProcessorID: d.RtrID}, nil
	case "NAO_REALIZADO":
		return payments.RefundResult{Status: "failed", Message: d.Motivo}, nil
	}
	return payments.RefundResult{Status: "pending", ProcessorID: d.RtrID}, nil
}

// Capture does not apply to PIX.
func (c *Client) Capture(context.Context, payments.ChargeRef, int64) error {
	return fmt.Errorf("%w: PIX has no capture", payments.ErrNotSent)
}

// Void does not apply to PIX.
func (c *Client) Void(context.Context, payments.ChargeRef) error {
	return fmt.Errorf("%w: PIX has no authorization to void", payments.ErrNotSent)
}

// AuthorizeCard does not apply to PIX.
func (c *Client) AuthorizeCard(context.Context, payments.CardRequest) (payments.CardResult, error) {
	return payments.CardResult{}, fmt.Errorf("%w: the API Pix serves PIX only", payments.ErrNotSent)
}

// SaveCard does not apply to PIX.
func (c *Client) SaveCard(context.Context, payments.SaveCardRequest) (payments.SaveCardResult, error) {
	return payments.SaveCardResult{}, fmt.Errorf("%w: the API Pix serves PIX only", payments.ErrNotSent)
}

// RegisterWebhook registers webhookURL for the receiving key (PUT /webhook/{chave}); the PSP
// then posts each received PIX to webhookURL + "/pix".
func (c *Client) RegisterWebhook(ctx context.Context, webhookURL string) error {
	return processors.Retry(ctx, 3, func() error {
		return c.do(ctx, http.MethodPut, "/webhook/"+url.PathEscape(c.cfg.Chave), WebhookConfig{WebhookURL: webhookURL}, nil)
	})
}

// Check verifies the certificate, the credentials and the key: a token is fetched and the
// key's webhook read (404 when none is registered yet is fine).
func (c *Client) Check(ctx context.Context) error {
	err := c.do(ctx, http.MethodGet, "/webhook/"+url.PathEscape(c.cfg.Chave), nil, nil)
	var se *processors.StatusError
	if errors.As(err, &se) && se.Status == http.StatusNotFound {
		return nil
	}
	return err
}

// accessToken returns the cached token or fetches one (client credentials over mTLS).
func (c *Client) accessToken(ctx context.Context, refresh bool) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !refresh && c.token != "" && c.cfg.Now().Before(c.expires) {
		return c.token, nil
	}
	form := url.Values{"grant_type": {"client_credentials"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.SetBasicAuth(c.cfg.ClientID, c.cfg.ClientSecret)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.cfg.Client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		c.cfg.Log.Error("api pix: token refused; check --pix-client-id, --pix-client-secret-file and the certificate", "status", resp.StatusCode)
		return "", fmt.Errorf("%w: the PSP refused the OAuth credentials (HTTP %d)", payments.ErrNotSent, resp.StatusCode)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
	}
	if err := json.Unmarshal(raw, &tok); err != nil || tok.AccessToken == "" {
		return "", fmt.Errorf("%w: the PSP's token answer has no access_token", payments.ErrNotSent)
	}
	life := time.Duration(tok.ExpiresIn) * time.Second
	if life <= 0 {
		life = 5 * time.Minute
	}
	c.token, c.expires = tok.AccessToken, c.cfg.Now().Add(life-min(life/10, 30*time.Second))
	return c.token, nil
}

// do sends one API Pix request with the bearer token; a 401 (a token expired early or revoked)
// fetches a new token and sends the request once more.
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	if err := c.breaker.Allow(time.Now()); err != nil {
		return err
	}
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return err
		}
	}
	for attempt := range 2 {
		tok, err := c.accessToken(ctx, attempt > 0)
		if err != nil {
			c.breaker.Done(time.Now(), !errors.Is(err, payments.ErrNotSent))
			return err
		}
		req, err := http.NewRequestWithContext(ctx, method, c.cfg.BaseURL+path, bytes.NewReader(payload))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Accept", "application/json")
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		start := time.Now()
		resp, err := c.cfg.Client.Do(req)
		if err != nil {
			c.breaker.Done(time.Now(), true)
			c.cfg.Log.Warn("api pix: request failed", "method", method, "path", req.URL.Path, "err", err, "duration_ms", time.Since(start).Milliseconds())
			return err
		}
		raw, rerr := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		c.breaker.Done(time.Now(), rerr != nil || resp.StatusCode >= 500)
		c.cfg.Log.Info("api pix: request", "method", method, "path", req.URL.Path, "status", resp.StatusCode, "duration_ms", time.Since(start).Milliseconds())
		if rerr != nil {
			return rerr
		}
		if resp.StatusCode == http.StatusUnauthorized && attempt == 0 {
			continue // the token expired: fetch a new one and send again
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			return &processors.StatusError{Status: resp.StatusCode, Body: truncate(string(raw), 300)}
		}
		if out != nil && len(raw) > 0 {
			if err := json.Unmarshal(raw, out); err != nil {
				return fmt.Errorf("api pix: decode answer: %w", err)
			}
		}
		return nil
	}
	return &processors.StatusError{Status: http.StatusUnauthorized, Body: "token refused twice"}
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n])
	}
	return s
}
