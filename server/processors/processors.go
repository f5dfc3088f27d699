// Package processors holds troco's live payment processors: Cielo API 3.0 for cards (package
// cielo) and the Banco Central's API Pix for PIX (package apipix), both implementing
// payments.Processor, and what they share: the Router that picks one per method, HTTP clients
// with timeouts, retries of idempotent requests and a circuit breaker.
package processors

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"troco/server/domain"
	"troco/server/payments"
)

// Router is the live Processor: card calls go to Card, PIX calls to Pix. A method without a
// connector answers processor_unavailable naming its flag.
type Router struct {
	Card payments.Processor
	Pix  payments.Processor
}

var _ payments.Processor = (*Router)(nil)

// InTransaction is false: the connectors do network I/O.
func (r *Router) InTransaction() bool { return false }

func (r *Router) pick(method string) (payments.Processor, error) {
	switch {
	case method == domain.MethodCreditCard && r.Card != nil:
		return r.Card, nil
	case method == domain.MethodPix && r.Pix != nil:
		return r.Pix, nil
	}
	return nil, payments.ErrProcessorUnavailable(method)
}

// Available says whether a connector serves method.
func (r *Router) Available(method string) error {
	_, err := r.pick(method)
	return err
}

func (r *Router) AuthorizeCard(ctx context.Context, req payments.CardRequest) (payments.CardResult, error) {
	p, err := r.pick(domain.MethodCreditCard)
	if err != nil {
		return payments.CardResult{}, errors.Join(payments.ErrNotSent, err)
	}
	return p.AuthorizeCard(ctx, req)
}

func (r *Router) SaveCard(ctx context.Context, req payments.SaveCardRequest) (payments.SaveCardResult, error) {
	p, err := r.pick(domain.MethodCreditCard)
	if err != nil {
		return payments.SaveCardResult{}, errors.Join(payments.ErrNotSent, err)
	}
	return p.SaveCard(ctx, req)
}

func (r *Router) StartAsync(ctx context.Context, req payments.AsyncRequest) (payments.AsyncResult, error) {
	p, err := r.pick(req.Method)
	if err != nil {
		return payments.AsyncResult{}, errors.Join(payments.ErrNotSent, err)
	}
	return p.StartAsync(ctx, req)
}

func (r *Router) Capture(ctx context.Context, ref payments.ChargeRef, amount int64) error {
	p, err := r.pick(ref.Method)
	if err != nil {
		return errors.Join(payments.ErrNotSent, err)
	}
	return p.Capture(ctx, ref, amount)
}

func (r *Router) Void(ctx context.Context, ref payments.ChargeRef) error {
	p, err := r.pick(ref.Method)
	if err != nil {
		return errors.Join(payments.ErrNotSent, err)
	}
	return p.Void(ctx, ref)
}

func (r *Router) Refund(ctx context.Context, req payments.RefundRequest) (payments.RefundResult, error) {
	p, err := r.pick(req.Charge.Method)
	if err != nil {
		return payments.RefundResult{}, errors.Join(payments.ErrNotSent, err)
	}
	return p.Refund(ctx, req)
}

func (r *Router) Lookup(ctx context.Context, ref payments.ChargeRef) (payments.LookupResult, error) {
	p, err := r.pick(ref.Method)
	if err != nil {
		return payments.LookupResult{}, err
	}
	return p.Lookup(ctx, ref)
}

// Timeouts of every processor request: connecting, and the whole request.
const (
	DialTimeout    = 5 * time.Second
	RequestTimeout = 20 * time.Second
)

// HTTPClient returns a client for a processor: TLS 1.2+, extra roots from caFile (the system's
// otherwise), an optional client certificate (mTLS), and timeouts.
func HTTPClient(caFile string, cert *tls.Certificate) (*http.Client, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pool, err := LoadPool(caFile)
		if err != nil {
			return nil, err
		}
		tc.RootCAs = pool
	}
	if cert != nil {
		tc.Certificates = []tls.Certificate{*cert}
	}
	tr := &http.Transport{
		DialContext:           (&net.Dialer{Timeout: DialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       tc,
		TLSHandshakeTimeout:   DialTimeout,
		ResponseHeaderTimeout: RequestTimeout,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{Transport: tr, Timeout: RequestTimeout}, nil
}

// LoadPool reads PEM certificates into a pool (extra roots, or the PSP's client CA).
func LoadPool(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	return pool, nil
}

// ReadSecret reads a secret from a file (trailing newline removed); secrets are never flags.
func ReadSecret(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read secret file: %w", err)
	}
	s := string(b)
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	if s == "" {
		return "", fmt.Errorf("secret file %s is empty", path)
	}
	return s, nil
}

// NotSent reports whether err means the request never reached the processor: the dial failed
// (connection refused, no route, DNS) or the circuit is open.
func NotSent(err error) bool {
	if errors.Is(err, ErrCircuitOpen) || errors.Is(err, payments.ErrNotSent) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// Classify wraps err with payments.ErrNotSent when the request certainly did not reach the
// processor, so the engine fails the attempt instead of waiting for reconciliation.
func Classify(err error) error {
	if err == nil || errors.Is(err, payments.ErrNotSent) {
		return err
	}
	if NotSent(err) {
		return fmt.Errorf("%w: %w", payments.ErrNotSent, err)
	}
	return err
}

// ErrCircuitOpen is returned without calling a processor that failed repeatedly just now.
var ErrCircuitOpen = errors.New("circuit open: the processor failed repeatedly; calls are paused")

// Breaker is a circuit breaker: after Threshold consecutive failures it refuses calls for
// Cooldown, then lets calls through again (Threshold more failures reopen it); a success
// resets the count.
type Breaker struct {
	Threshold int
	Cooldown  time.Duration
	mu        sync.Mutex
	failures  int
	openUntil time.Time
}

// Allow reports whether a call may go out now.
func (b *Breaker) Allow(now time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Before(b.openUntil) {
		return ErrCircuitOpen
	}
	return nil
}

// Done records the result of a call; only failures of the processor count (not refusals).
func (b *Breaker) Done(now time.Time, failed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !failed {
		b.failures = 0
		return
	}
	b.failures++
	threshold := b.Threshold
	if threshold == 0 {
		threshold = 5
	}
	if b.failures >= threshold {
		cool := b.Cooldown
		if cool == 0 {
			cool = 30 * time.Second
		}
		b.openUntil = now.Add(cool)
		b.failures = 0
	}
}

// Retry runs fn up to attempts times while it fails with a transient error (not a processor's
// refusal), waiting a little longer each time. fn must be idempotent (same reference).
func Retry(ctx context.Context, attempts int, fn func() error) error {
	var err error
	for i := range attempts {
		if err = fn(); err == nil || !Transient(err) {
			return err
		}
		if i < attempts-1 {
			select {
			case <-ctx.Done():
				return err
			case <-time.After(time.Duration(100*(i+1)) * time.Millisecond):
			}
		}
	}
	return err
}

// StatusError is a processor's HTTP answer outside 2xx.
type StatusError struct {
	Status int
	Body   string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("processor answered HTTP %d: %s", e.Status, e.Body)
}

// Transient reports whether a failed request is worth sending again: network errors and 5xx,
// 429; not a 4xx refusal.
func Transient(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Status >= 500 || se.Status == http.StatusTooManyRequests
	}
	return !errors.Is(err, ErrCircuitOpen) && !errors.Is(err, context.Canceled)
}

var _ payments.PixAutoProcessor = (*Router)(nil)

// pixAuto is the PIX connector's Pix Automático side.
func (r *Router) pixAuto() (payments.PixAutoProcessor, error) {
	if p, ok := r.Pix.(payments.PixAutoProcessor); ok && r.Pix != nil {
		return p, nil
	}
	return nil, errors.Join(payments.ErrNotSent, payments.ErrProcessorUnavailable(domain.MethodPix))
}

// CreateRecurrence creates a Pix Automático recurrence through the PIX connector.
func (r *Router) CreateRecurrence(ctx context.Context, req payments.RecRequest) (payments.RecResult, error) {
	p, err := r.pixAuto()
	if err != nil {
		return payments.RecResult{}, err
	}
	return p.CreateRecurrence(ctx, req)
}

// LookupRecurrence reads a recurrence through the PIX connector.
func (r *Router) LookupRecurrence(ctx context.Context, idRec, contract string) (payments.RecResult, error) {
	p, err := r.pixAuto()
	if err != nil {
		return payments.RecResult{}, err
	}
	return p.LookupRecurrence(ctx, idRec, contract)
}

// CancelRecurrence cancels a recurrence through the PIX connector.
func (r *Router) CancelRecurrence(ctx context.Context, idRec string) error {
	p, err := r.pixAuto()
	if err != nil {
		return err
	}
	return p.CancelRecurrence(ctx, idRec)
}

// ChargeRecurrence makes an attempt of a recurring charge through the PIX connector.
func (r *Router) ChargeRecurrence(ctx context.Context, req payments.RecChargeRequest) (payments.RecChargeResult, error) {
	p, err := r.pixAuto()
	if err != nil {
		return payments.RecChargeResult{}, err
	}
	return p.ChargeRecurrence(ctx, req)
}

// LookupRecurringCharge reads an attempt of a recurring charge through the PIX connector.
func (r *Router) LookupRecurringCharge(ctx context.Context, txid string, attempt int) (payments.RecChargeResult, error) {
	p, err := r.pixAuto()
	if err != nil {
		return payments.RecChargeResult{}, err
	}
	return p.LookupRecurringCharge(ctx, txid, attempt)
}
