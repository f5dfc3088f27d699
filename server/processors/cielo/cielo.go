// Package cielo is the live card processor: Cielo API 3.0 (e-commerce). Authorizations with
// instalments (POST /1/sales/), capture (PUT /1/sales/{PaymentId}/capture), void and refund
// (PUT /1/sales/{PaymentId}/void), queries (GET /1/sales/{PaymentId}, GET
// /1/sales?merchantOrderId=) and card tokens: saved while paying (SaveCard on a sale) or without a
// payment (Cartão Protegido, POST /1/card), then charged by CardToken. 3-D Secure is not used.
package cielo

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"troco/server/card"
	"troco/server/domain"
	"troco/server/payments"
	"troco/server/processors"
)

// Config is what the connector needs (serve --cielo-*).
type Config struct {
	BaseURL     string // transactional API, e.g. https://api.cieloecommerce.cielo.com.br
	QueryURL    string // query API, e.g. https://apiquery.cieloecommerce.cielo.com.br
	MerchantID  string
	MerchantKey string // read from --cielo-merchant-key-file
	Client      *http.Client
	Log         *slog.Logger
}

// Client is the Cielo connector; it implements payments.Processor for cards.
type Client struct {
	cfg     Config
	breaker processors.Breaker
}

// New returns a connector.
func New(cfg Config) *Client {
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	cfg.QueryURL = strings.TrimRight(cfg.QueryURL, "/")
	if cfg.QueryURL == "" {
		cfg.QueryURL = cfg.BaseURL
	}
	if cfg.Client == nil {
		cfg.Client, _ = processors.HTTPClient("", nil)
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Client{cfg: cfg}
}

var _ payments.Processor = (*Client)(nil)

func (c *Client) InTransaction() bool { return false }

func (c *Client) Available(method string) error {
	if method != domain.MethodCreditCard {
		return payments.ErrProcessorUnavailable(method)
	}
	return nil
}

// Sale is Cielo's sale object (the fields troco uses).
type Sale struct {
	MerchantOrderID string    `json:"MerchantOrderId"`
	Customer        *Customer `json:"Customer,omitempty"`
	Payment         Payment   `json:"Payment"`
}

// Customer is the buyer.
type Customer struct {
	Name string `json:"Name"`
}

// Payment is a sale's payment.
type Payment struct {
	Type              string      `json:"Type"`
	Amount            int64       `json:"Amount"`
	Installments      int         `json:"Installments"`
	Capture           bool        `json:"Capture"`
	SoftDescriptor    string      `json:"SoftDescriptor,omitempty"`
	CreditCard        *CreditCard `json:"CreditCard,omitempty"`
	PaymentID         string      `json:"PaymentId,omitempty"`
	Status            int         `json:"Status,omitempty"`
	ReturnCode        string      `json:"ReturnCode,omitempty"`
	ReturnMessage     string      `json:"ReturnMessage,omitempty"`
	AuthorizationCode string      `json:"AuthorizationCode,omitempty"`
	ProofOfSale       string      `json:"ProofOfSale,omitempty"`
	Tid               string      `json:"Tid,omitempty"`
	CapturedAmount    int64       `json:"CapturedAmount,omitempty"`
	VoidedAmount      int64       `json:"VoidedAmount,omitempty"`
}

// CreditCard is the card of a payment: typed (number, holder, expiry, CVC) or a CardToken.
type CreditCard struct {
	CardNumber     string `json:"CardNumber,omitempty"`
	Holder         string `json:"Holder,omitempty"`
	ExpirationDate string `json:"ExpirationDate,omitempty"`
	SecurityCode   string `json:"SecurityCode,omitempty"`
	Brand          string `json:"Brand,omitempty"`
	SaveCard       bool   `json:"SaveCard,omitempty"`
	CardToken      string `json:"CardToken,omitempty"`
}

// Cielo payment statuses.
const (
	StatusNotFinished = 0
	StatusAuthorized  = 1
	StatusConfirmed   = 2
	StatusDenied      = 3
	StatusVoided      = 10
	StatusRefunded    = 11
	StatusPending     = 12
	StatusAborted     = 13
)

// brandNames are Cielo's names of the brands troco accepts.
var brandNames = map[string]string{"visa": "Visa", "mastercard": "Master", "amex": "Amex", "elo": "Elo", "hipercard": "Hipercard", "diners": "Diners"}

// AuthorizeCard creates a sale with MerchantOrderId = the attempt's reference. A request whose
// answer is lost is first looked up by that reference and sent again only when Cielo has no
// sale for it, so a retry never charges twice.
func (c *Client) AuthorizeCard(ctx context.Context, req payments.CardRequest) (payments.CardResult, error) {
	brand := brandNames[req.Brand]
	if brand == "" {
		// A brand Cielo does not take: refused here, nothing sent.
		pe := Decline("57")
		if tc, ok := declines["card_not_supported"]; ok {
			pe.Code, pe.Message = tc.Code, tc.Message
		}
		return payments.CardResult{Outcome: card.OutcomeDeclined, Decline: pe}, nil
	}
	sale := Sale{MerchantOrderID: req.Reference, Payment: Payment{Type: "CreditCard", Amount: req.Amount, Installments: max(req.Installments, 1), Capture: req.Capture}}
	if req.Customer != "" {
		sale.Customer = &Customer{Name: truncate(req.Customer, 255)}
	}
	switch {
	case req.Card != nil:
		sale.Payment.CreditCard = &CreditCard{CardNumber: card.Normalize(req.Card.Number), Holder: truncate(req.Card.HolderName, 25),
			ExpirationDate: fmt.Sprintf("%02d/%04d", req.Card.ExpMonth, req.Card.ExpYear), SecurityCode: req.Card.CVC, Brand: brand, SaveCard: req.SaveCard}
	case req.CardToken != "":
		sale.Payment.CreditCard = &CreditCard{CardToken: req.CardToken, Brand: brand}
	default:
		return payments.CardResult{}, fmt.Errorf("%w: no card and no card token", payments.ErrNotSent)
	}
	var out Sale
	sent := false // whether any attempt may have reached Cielo
	err := processors.Retry(ctx, 2, func() error {
		if sent {
			// The previous attempt may have charged: look before sending again.
			if found, err := c.findSale(ctx, req.Reference); err != nil {
				return err
			} else if found != nil {
				out = *found
				return nil
			}
		}
		err := c.do(ctx, http.MethodPost, c.cfg.BaseURL+"/1/sales/", sale, &out)
		if err != nil && !processors.NotSent(err) {
			sent = true
		}
		return err
	})
	var se *processors.StatusError
	switch {
	case err == nil:
	case errors.As(err, &se) && se.Status == http.StatusBadRequest:
		// Cielo refused the request before authorizing anything (validation errors).
		c.cfg.Log.Warn("cielo: sale refused as invalid", "reference", req.Reference, "body", se.Body)
		return payments.CardResult{Outcome: card.OutcomeDeclined, Decline: invalidRequest()}, nil
	case errors.As(err, &se) && (se.Status == http.StatusUnauthorized || se.Status == http.StatusForbidden):
		c.cfg.Log.Error("cielo: credentials refused; check --cielo-merchant-id and --cielo-merchant-key-file", "status", se.Status)
		return payments.CardResult{}, fmt.Errorf("%w: cielo refused the credentials", payments.ErrNotSent)
	case !sent:
		return payments.CardResult{}, processors.Classify(err)
	default:
		return payments.CardResult{}, err
	}
	return c.result(out.Payment, req.Capture), nil
}

// cardTokenRequest is the body of POST /1/card (Cartão Protegido: a card stored without a sale).
type cardTokenRequest struct {
	CustomerName   string `json:"CustomerName"`
	CardNumber     string `json:"CardNumber"`
	Holder         string `json:"Holder"`
	ExpirationDate string `json:"ExpirationDate"`
	Brand          string `json:"Brand"`
}

// SaveCard stores a typed card at Cielo (POST /1/card) and returns its CardToken; nothing is
// charged. Cielo's refusal of the card data (400) is a decline naming invalid card data. Saving
// again is harmless (Cielo issues a new token each time, nothing is charged), so transient
// failures are retried and every failure is reported as not sent: the card is not saved.
func (c *Client) SaveCard(ctx context.Context, req payments.SaveCardRequest) (payments.SaveCardResult, error) {
	if req.Card == nil {
		return payments.SaveCardResult{}, fmt.Errorf("%w: no card to save", payments.ErrNotSent)
	}
	brand := brandNames[req.Brand]
	if brand == "" {
		pe := Decline("57")
		if tc, ok := declines["card_not_supported"]; ok {
			pe.Code, pe.Message = tc.Code, tc.Message
		}
		return payments.SaveCardResult{Decline: pe}, nil
	}
	name := strings.TrimSpace(req.Customer)
	if name == "" {
		name = req.Card.HolderName
	}
	if name == "" {
		name = "Cliente"
	}
	body := cardTokenRequest{CustomerName: truncate(name, 255), CardNumber: card.Normalize(req.Card.Number), Holder: truncate(req.Card.HolderName, 25),
		ExpirationDate: fmt.Sprintf("%02d/%04d", req.Card.ExpMonth, req.Card.ExpYear), Brand: brand}
	if body.Holder == "" {
		body.Holder = truncate(name, 25)
	}
	var out struct {
		CardToken string `json:"CardToken"`
	}
	err := processors.Retry(ctx, 2, func() error {
		return c.do(ctx, http.MethodPost, c.cfg.BaseURL+"/1/card", body, &out)
	})
	var se *processors.StatusError
	switch {
	case err == nil && out.CardToken == "":
		return payments.SaveCardResult{}, fmt.Errorf("%w: cielo answered without a CardToken", payments.ErrNotSent)
	case err == nil:
		return payments.SaveCardResult{Token: out.CardToken}, nil
	case errors.As(err, &se) && se.Status == http.StatusBadRequest:
		c.cfg.Log.Warn("cielo: card refused for tokenization", "reference", req.Reference, "body", se.Body)
		pe := invalidRequest()
		pe.Message = "The card could not be saved: the card processor refused its data. Check the number, expiry and holder, or use another card."
		return payments.SaveCardResult{Decline: pe}, nil
	case errors.As(err, &se) && (se.Status == http.StatusUnauthorized || se.Status == http.StatusForbidden):
		c.cfg.Log.Error("cielo: credentials refused; check --cielo-merchant-id and --cielo-merchant-key-file", "status", se.Status)
		return payments.SaveCardResult{}, fmt.Errorf("%w: cielo refused the credentials", payments.ErrNotSent)
	case errors.Is(err, payments.ErrNotSent):
		return payments.SaveCardResult{}, err
	default:
		return payments.SaveCardResult{}, fmt.Errorf("%w: %w", payments.ErrNotSent, err)
	}
}

func invalidRequest() *domain.PaymentError {
	pe := Decline("")
	pe.Category, pe.Code, pe.Message = string(card.CategoryInvalid), "invalid_request", "The payment request contains invalid data."
	a := string(card.AdviceConfirmCardData)
	pe.AdviceCode = &a
	return pe
}

// result turns a Cielo payment into the engine's card result.
func (c *Client) result(p Payment, capture bool) payments.CardResult {
	r := payments.CardResult{ProcessorID: p.PaymentID, AuthorizationCode: p.AuthorizationCode}
	if p.CreditCard != nil {
		r.CardToken = p.CreditCard.CardToken
	}
	switch p.Status {
	case StatusConfirmed:
		r.Outcome = card.OutcomeSucceeded
	case StatusAuthorized:
		r.Outcome = card.OutcomeRequiresCapture
		if capture {
			r.Outcome = card.OutcomeSucceeded // never reported by Cielo with Capture true; treated as approved
		}
	case StatusPending:
		r.Outcome = card.OutcomePending
	default:
		r.Outcome = card.OutcomeDeclined
		r.Decline = Decline(p.ReturnCode)
		if !KnownReturnCode(p.ReturnCode) {
			c.cfg.Log.Warn("cielo: unknown return code, reported as processing_error", "return_code", p.ReturnCode, "payment_id", p.PaymentID)
		}
		r.CardToken = ""
	}
	return r
}

// findSale looks up the sale of a MerchantOrderId, or nil when Cielo has none.
func (c *Client) findSale(ctx context.Context, reference string) (*Sale, error) {
	var list struct {
		Payments []struct {
			PaymentID string `json:"PaymentId"`
		} `json:"Payments"`
	}
	err := c.do(ctx, http.MethodGet, c.cfg.QueryURL+"/1/sales?merchantOrderId="+url.QueryEscape(reference), nil, &list)
	var se *processors.StatusError
	if errors.As(err, &se) && se.Status == http.StatusNotFound {
		return nil, nil
	}
	if err != nil || len(list.Payments) == 0 {
		return nil, err
	}
	return c.sale(ctx, list.Payments[len(list.Payments)-1].PaymentID)
}

func (c *Client) sale(ctx context.Context, paymentID string) (*Sale, error) {
	var s Sale
	if err := c.do(ctx, http.MethodGet, c.cfg.QueryURL+"/1/sales/"+url.PathEscape(paymentID), nil, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// Capture captures amount of an authorization; a sale already captured counts as done.
func (c *Client) Capture(ctx context.Context, ref payments.ChargeRef, amount int64) error {
	return c.update(ctx, ref, fmt.Sprintf("/capture?amount=%d", amount), func(p Payment) bool { return p.Status == StatusConfirmed })
}

// Void releases an authorization; a sale already voided counts as done.
func (c *Client) Void(ctx context.Context, ref payments.ChargeRef) error {
	return c.update(ctx, ref, fmt.Sprintf("/void?amount=%d", ref.Amount), func(p Payment) bool { return p.Status == StatusVoided || p.Status == StatusRefunded })
}

// Refund cancels amount of a captured sale (Cielo's partial void). A retry first checks the
// sale's VoidedAmount, so a refund is never made twice.
func (c *Client) Refund(ctx context.Context, req payments.RefundRequest) (payments.RefundResult, error) {
	err := c.update(ctx, req.Charge, fmt.Sprintf("/void?amount=%d", req.Amount), func(p Payment) bool { return p.VoidedAmount >= req.Before+req.Amount })
	var refused *refusedError
	if errors.As(err, &refused) {
		return payments.RefundResult{Status: "failed", Message: refused.msg}, nil
	}
	if err != nil {
		return payments.RefundResult{}, err
	}
	return payments.RefundResult{Status: "succeeded"}, nil
}

type refusedError struct{ msg string }

func (e *refusedError) Error() string { return "cielo refused: " + e.msg }

// update sends a capture or void (path) and checks done; before a retry it reads the sale and
// stops when done already holds.
func (c *Client) update(ctx context.Context, ref payments.ChargeRef, path string, done func(Payment) bool) error {
	if ref.ProcessorID == "" {
		return fmt.Errorf("%w: the charge has no Cielo PaymentId", payments.ErrNotSent)
	}
	sent := false
	err := processors.Retry(ctx, 2, func() error {
		if sent {
			if s, err := c.sale(ctx, ref.ProcessorID); err != nil {
				return err
			} else if done(s.Payment) {
				return nil
			}
		}
		var p Payment
		err := c.do(ctx, http.MethodPut, c.cfg.BaseURL+"/1/sales/"+url.PathEscape(ref.ProcessorID)+path, nil, &p)
		if err != nil && !processors.NotSent(err) {
			sent = true
		}
		var se *processors.StatusError
		if errors.As(err, &se) && se.Status == http.StatusBadRequest {
			return fmt.Errorf("%w: %w", payments.ErrNotSent, &refusedError{msg: se.Body})
		}
		return err
	})
	if err != nil && !sent {
		return processors.Classify(err)
	}
	return err
}

// Lookup finds a sale by PaymentId or MerchantOrderId (reconciliation).
func (c *Client) Lookup(ctx context.Context, ref payments.ChargeRef) (payments.LookupResult, error) {
	var s *Sale
	var err error
	if ref.ProcessorID != "" {
		s, err = c.sale(ctx, ref.ProcessorID)
	} else {
		s, err = c.findSale(ctx, ref.Reference)
	}
	if err != nil || s == nil {
		return payments.LookupResult{}, err
	}
	r := c.result(s.Payment, s.Payment.Capture)
	return payments.LookupResult{Found: true, Card: &r}, nil
}

// StartAsync: Cielo serves no PIX or boleto here.
func (c *Client) StartAsync(context.Context, payments.AsyncRequest) (payments.AsyncResult, error) {
	return payments.AsyncResult{}, fmt.Errorf("%w: cielo connector serves cards only", payments.ErrNotSent)
}

// Check verifies the credentials: a query for a reference that does not exist must answer
// (200 or 404), not 401 (troco processors check).
func (c *Client) Check(ctx context.Context) error {
	_, err := c.findSale(ctx, "trococheck"+strconv.FormatInt(time.Now().Unix(), 10))
	return err
}

// do sends one request with the merchant credentials; the body is never logged (it holds the
// card), and answers outside 2xx are *processors.StatusError.
func (c *Client) do(ctx context.Context, method, u string, body, out any) error {
	if err := c.breaker.Allow(time.Now()); err != nil {
		return err
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("MerchantId", c.cfg.MerchantID)
	req.Header.Set("MerchantKey", c.cfg.MerchantKey)
	req.Header.Set("RequestId", requestID())
	start := time.Now()
	resp, err := c.cfg.Client.Do(req)
	if err != nil {
		c.breaker.Done(time.Now(), true)
		c.cfg.Log.Warn("cielo: request failed", "method", method, "path", req.URL.Path, "err", err, "duration_ms", time.Since(start).Milliseconds())
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	c.breaker.Done(time.Now(), err != nil || resp.StatusCode >= 500)
	c.cfg.Log.Info("cielo: request", "method", method, "path", req.URL.Path, "status", resp.StatusCode, "duration_ms", time.Since(start).Milliseconds())
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &processors.StatusError{Status: resp.StatusCode, Body: truncate(string(raw), 300)}
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("cielo: decode answer: %w", err)
		}
	}
	return nil
}

func requestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n])
	}
	return s
}
