// Package payments is troco's payment engine: everything between "a merchant wants R$ 100,00"
// and "the money is captured, pending, declined, refunded or expired". Like package core, every
// operation is a function on a write transaction that validates, applies the rules, writes the
// change, its ledger entries and its events together; the /v1 handlers, the hosted checkout and
// the jobs all call these functions. There is no net/http here.
//
// Where the rules live:
//   - intents.go: create, update, cancel, capture; the payment intent state machine.
//   - confirm.go: confirmation of a card, PIX or boleto payment and the outcome it records.
//   - async.go: PIX and boleto artefacts, delayed settlement and expiry, the test helpers and
//     the job that applies scheduled transitions; regenerate-boleto.
//   - refunds.go, methods.go (payment methods and setup intents), ledger.go, preview.go.
//   - processor.go: the Processor interface and the sandbox Simulator (SPEC 7.1, 8.5).
package payments

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"troco/db"
	"troco/server/calendar"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/fees"
	"troco/server/secrets"
	"troco/server/simulation"
)

// MinAmount is the smallest payment, in centavos (R$ 0,50, Stripe's Brazilian minimum).
const MinAmount = 50

// Service holds what the operations need beyond the transaction: where public URLs point, the
// sandbox delay, the card fingerprint key and the processor of each environment.
type Service struct {
	// BaseURL prefixes the PIX QR image and boleto page URLs; when empty, the Origin given by
	// the caller (the request's https://host) is used.
	BaseURL string
	// FallbackBase, when set, gives the base of URLs made without a request (jobs) when BaseURL
	// is empty: the address the server learned from its first request.
	FallbackBase func() string
	// SimDelay is the delay of the delayed SPEC 8.5 rules (--sim-delay).
	SimDelay time.Duration
	// FingerprintKey keys card fingerprints (HMAC), so equal cards match without storing them.
	FingerprintKey []byte
	// ReceiptKey signs receipt URLs; derived from FingerprintKey when unset.
	ReceiptKey []byte
	// Sandbox serves test mode; Live serves live mode and is nil until a connector exists, in
	// which case live payments answer processor_unavailable and write nothing.
	Sandbox Processor
	Live    Processor
	// Secrets seals the processor's tokens of saved live cards.
	Secrets *secrets.Keyring
	// Log receives the structured logs of processor calls (never card data or secrets).
	Log *slog.Logger
	// Calendar is the business-day calendar of due dates and receivables (nil: national
	// holidays only).
	Calendar *calendar.Calendar
	// AfterSettle, when set, runs in the same transaction after a waiting payment resolves
	// (settled or expired: delayed rules, simulations, test helpers) and after an intent is
	// captured or canceled, so checkout sessions can move their payment_status and emit their
	// async payment events.
	AfterSettle func(tx *db.Tx, a domain.Actor, pi *domain.PaymentIntent) error
	// PixAutoSettled, when set, runs in the same transaction after a live Pix Automático
	// attempt was decided outside the request that made it (paid or failed: reconciliation, the
	// PSP's webhook), so the invoice it pays records the outcome.
	PixAutoSettled func(tx *db.Tx, a domain.Actor, pi *domain.PaymentIntent) error
	// Owner, when set, holds the rules of the domain that made an intent (a checkout session's
	// intent is paid through its session). Confirm, UpdateIntent and RegenerateBoleto consult it,
	// so no interface (/v1, /api/v1, hosted pages, CLI) can bypass them; the owning domain itself
	// uses ConfirmOwned and UpdateOwned.
	Owner OwnerRules
}

// OwnerRules are the hooks of the domains that own intents, on intents they made. Each func may be nil.
type OwnerRules struct {
	// DirectConfirm refuses (with a *domain.Error) a confirmation of an owned intent.
	DirectConfirm func(tx *db.Tx, scope domain.Scope, piID string) error
	// DirectUpdate refuses updates of an owned intent's fields the owner decides.
	DirectUpdate func(tx *db.Tx, scope domain.Scope, piID string, p IntentParams) error
	// Reissued runs after a boleto was regenerated, in the same transaction.
	Reissued func(tx *db.Tx, a domain.Actor, pi *domain.PaymentIntent) error
}

// New returns a Service with the sandbox simulator and no live processor.
func New(baseURL string, simDelay time.Duration, fingerprintKey []byte) *Service {
	if simDelay <= 0 {
		simDelay = simulation.DefaultDelay
	}
	return &Service{BaseURL: baseURL, SimDelay: simDelay, FingerprintKey: fingerprintKey, Sandbox: Simulator{}}
}

// processor returns the processor of an environment for method, or the processor_unavailable
// error naming the setting to configure.
func (s *Service) processor(livemode bool, method string) (Processor, error) {
	p := s.Sandbox
	if livemode {
		p = s.Live
	}
	if p == nil {
		return nil, errProcessorUnavailable(method)
	}
	if err := p.Available(method); err != nil {
		return nil, err
	}
	return p, nil
}

func (s *Service) origin(callerOrigin string) string {
	if s.BaseURL != "" {
		return s.BaseURL
	}
	if callerOrigin == "" && s.FallbackBase != nil {
		return s.FallbackBase() // a job: the address the server learned
	}
	return callerOrigin
}

// SecretMatches compares a client secret in constant time.
func SecretMatches(want, got string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(want), []byte(got)) == 1
}

// ProviderFlags names the serve flag that configures the live processor of each method.
var ProviderFlags = map[string]string{domain.MethodCreditCard: "--card-provider cielo", domain.MethodPix: "--pix-provider api-pix", domain.MethodBoleto: "--boleto-provider"}

// ErrProcessorUnavailable is the 503 of a live payment whose method has no processor: it names
// the setting and says nothing was charged.
func ErrProcessorUnavailable(method string) *domain.Error { return errProcessorUnavailable(method) }

func errProcessorUnavailable(method string) *domain.Error {
	what, flag := method, ProviderFlags[method]
	if flag == "" {
		what, flag = "this payment method", "--card-provider and --pix-provider"
	}
	msg := fmt.Sprintf("No live payment processor is configured for %s, so it cannot be processed in live mode; nothing was charged. The server operator configures one with %s (see the Going live guide). Use a test key (ch_test_...) to simulate payments.", what, flag)
	if method == domain.MethodBoleto {
		msg = "Live boleto is not supported yet: no boleto provider is configured, so boleto cannot be processed in live mode; nothing was charged. Offer credit_card or pix, or use a test key (ch_test_...) to simulate boletos."
	}
	return &domain.Error{Status: http.StatusServiceUnavailable, Type: domain.TypeAPI, Code: domain.CodeProcessorUnavailable, Message: msg}
}

func errNotActivated() *domain.Error {
	return &domain.Error{Status: http.StatusConflict, Type: domain.TypeInvalidRequest, Code: domain.CodeOrgNotActivated,
		Message: "The organization is not ready to accept payments: live payments are refused until its activation is complete. Nothing was charged."}
}

func stateError(kind, id, status, action string) *domain.Error {
	code := domain.CodePaymentIntentUnexpectedState
	if kind == "setup intent" {
		code = domain.CodeSetupIntentUnexpectedState
	}
	return domain.Conflict(code, "You cannot %s this %s because it has a status of %s.", action, kind, status)
}

func notFound(err error, param, kind, id string) error {
	if errors.Is(err, db.ErrNotFound) {
		return domain.NotFound(param, kind, id)
	}
	return err
}

func emit(tx *db.Tx, a domain.Actor, typ string, obj, prev any) error {
	return core.Emit(tx, a, typ, obj, prev)
}

func strPtr(s string) *string { return &s }

// planFor returns the organization's fee plan and monthly instalment interest (CONTRACT 5); the
// same plan applies in both modes (SPEC 8.6).
func planFor(org *domain.Organization) (fees.Plan, int64) {
	raw, _ := org.FeePlan.(json.RawMessage)
	if v, ok := plans.Load(string(raw)); ok {
		pr := v.(planRate)
		return pr.plan, pr.rate
	}
	p := core.DefaultFeePlan()
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &p)
	}
	pr := planRate{fees.Plan{CardFeeRate: p.CardFeeRate, CardFixedFee: p.CardFeeAmount, PixFee: p.PixFeeAmount, BoletoFee: p.BoletoFeeAmount}, p.InstallmentInterestRate}
	if plansN.Load() < maxCachedPlans {
		if _, loaded := plans.LoadOrStore(string(raw), pr); !loaded {
			plansN.Add(1)
		}
	}
	return pr.plan, pr.rate
}

// plans caches planFor by the stored fee plan's JSON (the same text always decodes to the same
// plan): a card payment asks twice, inside the single writer, and decoding the JSON each time
// was most of the answer. At most maxCachedPlans texts are kept; others are decoded each time.
var (
	plans  sync.Map // string → planRate
	plansN atomic.Int64
)

const maxCachedPlans = 4096

type planRate struct {
	plan fees.Plan
	rate int64
}

func copyMetadata(m domain.Metadata) domain.Metadata {
	out := domain.Metadata{}
	for k, v := range m {
		out[k] = v
	}
	return out
}
