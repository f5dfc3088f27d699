package billing

import (
	"context"
	"errors"
	"time"

	"troco/server/calendar"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/invoices"
	"troco/server/payments"
)

// Outcome is what collecting an invoice did.
type Outcome int

// The outcomes of a collection attempt.
const (
	// Paid: the invoice is paid.
	Paid Outcome = iota
	// Waiting: nothing failed and the invoice is still open: a payment settles later (a
	// processing card, a PIX or boleto in flight) or the customer pays it by its due instant.
	Waiting
	// Failed: the attempt failed (declined, no usable payment method); dunning applies.
	Failed
)

// Collector collects a finalized (open) invoice of a subscription. It is the only part of a
// renewal that depends on how the customer pays: the renewal, the state machine and dunning do
// not change when a new way of paying (Pix Automático) adds a Collector for its collection
// method. A Collector returns an error only for a failure of troco itself (the transaction is
// then rolled back); a refused payment is the Failed outcome.
type Collector interface {
	Collect(tx *db.Tx, a domain.Actor, sub *domain.Subscription, inv *domain.Invoice) (Outcome, error)
}

// collectorOf returns the Collector of a subscription: Pix Automático when its default payment
// method is a pix_automatico one (charge_automatically), else the one of its collection method.
func (svc *Service) collectorOf(tx *db.Tx, s domain.Scope, sub *domain.Subscription) (Collector, error) {
	if sub.CollectionMethod == domain.CollectionChargeAutomatically && sub.DefaultPaymentMethod != nil {
		pm, err := tx.FindPaymentMethodByID(s, *sub.DefaultPaymentMethod)
		if err != nil && !errors.Is(err, db.ErrNotFound) {
			return nil, err
		}
		if err == nil && pm.Type == domain.MethodPixAutomatico {
			return svc.collector(domain.MethodPixAutomatico), nil
		}
	}
	return svc.collector(sub.CollectionMethod), nil
}

// collect collects an open invoice of a subscription with its Collector.
func (svc *Service) collect(tx *db.Tx, a domain.Actor, sub *domain.Subscription, inv *domain.Invoice) (Outcome, error) {
	c, err := svc.collectorOf(tx, a.Scope, sub)
	if err != nil {
		return Failed, err
	}
	return c.Collect(tx, a, sub, inv)
}

// RetryScheduler is implemented by a Collector whose failed attempts are retried on its own
// days instead of the card dunning days: RetryAt returns the instant of retry n (0-based) of an
// invoice whose first attempt was at first, or the zero time when no retry n follows.
type RetryScheduler interface {
	RetryAt(first time.Time, n int) time.Time
}

// collector returns the Collector of a collection method (or of pix_automatico).
func (svc *Service) collector(method string) Collector {
	if c, ok := svc.Collectors[method]; ok && c != nil {
		return c
	}
	if method == domain.CollectionSendInvoice {
		return sendInvoice{}
	}
	if method == domain.MethodPixAutomatico {
		return pixAutoCollector{svc}
	}
	return cardCollector{svc}
}

// PendingCall is a live processor call a renewal reserved: it is made after the transaction
// commits (ExecutePending), then the renewal applies its answer (Apply).
type PendingCall struct {
	scope domain.Scope
	sub   string
	p     *payments.Pending
}

// Pending is the reserved call, for an adapter that makes it itself (payments.PendingError).
func (c PendingCall) Pending() *payments.Pending { return c.p }

// Subscription is the id of the subscription whose invoice the call pays.
func (c PendingCall) Subscription() string { return c.sub }

// ApplyCall applies the recorded answer of a reserved call to its subscription (Apply).
func (svc *Service) ApplyCall(tx *db.Tx, c PendingCall) error { return svc.Apply(tx, c.scope, c.sub) }

// Reserved returns the processor calls reserved since the last TakePending, keeping them.
func (svc *Service) Reserved() []PendingCall { return svc.pending }

// TakePending returns and forgets the processor calls reserved since the last call; the caller
// makes them once its transaction committed (and drops them if it rolled back).
func (svc *Service) TakePending() []PendingCall {
	p := svc.pending
	svc.pending = nil
	return p
}

// ExecutePending makes the reserved calls (outside any transaction) and applies each answer to
// its subscription's invoice in a new transaction.
func (svc *Service) ExecutePending(ctx context.Context, store *db.DB, calls []PendingCall) error {
	for _, c := range calls {
		svc.Payments.Execute(ctx, store, c.p)
		err := store.Write(ctx, func(tx *db.Tx) error { return svc.Apply(tx, c.scope, c.sub) })
		if err != nil {
			return err
		}
		// Applying may reserve again (a retry of an unknown outcome): the reconciliation job
		// follows those.
		svc.pending = nil
	}
	return nil
}

// Apply applies the recorded answer of a live processor call to the latest invoice of a
// subscription (paid, or a failed attempt that starts dunning). Nothing happens when no answer
// waits.
func (svc *Service) Apply(tx *db.Tx, s domain.Scope, id string) error {
	sub, err := Get(tx, s, id)
	if err != nil || sub.LatestInvoice == nil {
		return err
	}
	inv, err := tx.FindInvoiceByID(s, *sub.LatestInvoice)
	if err != nil || inv.Status != domain.InvoiceOpen || inv.PaymentIntent == nil {
		return err
	}
	open, err := svc.Payments.HasOpenCall(tx, s, *inv.PaymentIntent)
	if err == nil && !open {
		open, err = svc.Payments.PixAutoCallOpen(tx, s, *inv.PaymentIntent)
	}
	if err != nil || !open {
		return err
	}
	a := domain.Actor{Scope: s}
	out, err := svc.collect(tx, a, sub, inv)
	if err != nil {
		return err
	}
	if out == Failed {
		if err := svc.attemptFailed(tx, a, sub.ID, inv.ID); err != nil {
			return err
		}
	}
	// The job that renewed it scheduled its next wake-up before this answer: schedule again
	// (the retry of a failed attempt).
	return svc.reschedule(tx, s, sub.ID)
}

// reschedule recomputes when the billing job next looks at a subscription.
func (svc *Service) reschedule(tx *db.Tx, s domain.Scope, id string) error {
	sub, err := tx.FindSubscriptionByID(s, id)
	if err != nil {
		return err
	}
	st, err := loadState(tx, s, id)
	if err != nil {
		return err
	}
	return svc.schedule(tx, s, sub, st)
}

// cardCollector charges the subscription's default card (else the customer's newest saved card)
// through the payments engine, as an off-session reuse of the saved card: in the sandbox the
// reuse outcomes of the test cards apply, in live mode the card processor charges it (the call is
// reserved here and made after the transaction commits; see TakePending).
type cardCollector struct{ svc *Service }

func (c cardCollector) Collect(tx *db.Tx, a domain.Actor, sub *domain.Subscription, inv *domain.Invoice) (Outcome, error) {
	onDecline := func(inv *domain.Invoice) { scheduleRetry(sub, inv, nil) }
	paid, err := c.svc.Invoices.Pay(tx, a, inv.ID, invoices.PayParams{PaymentMethod: sub.DefaultPaymentMethod, OnDecline: onDecline})
	if p := payments.PendingOf(err); p != nil {
		c.svc.pending = append(c.svc.pending, PendingCall{scope: a.Scope, sub: sub.ID, p: p})
		return Waiting, nil
	}
	if err == nil {
		if paid.Status == domain.InvoicePaid {
			return Paid, nil
		}
		return Waiting, nil
	}
	if invoices.IsPaymentInProgress(err) {
		// The customer is paying (a PIX or boleto from the hosted invoice page) or a card has
		// not settled: nothing was attempted. The job looks again once that payment settles
		// (settledUnhandled starts the next retry if it fails).
		return Waiting, nil
	}
	e, ok := domain.AsError(err)
	if !ok {
		return Failed, err
	}
	if e.KeepChanges {
		return Failed, nil // declined: Pay recorded the attempt and emitted invoice.payment_failed
	}
	// Refused before any charge (no saved card, the card was detached): record the attempt.
	fresh, err := tx.FindInvoiceByID(a.Scope, inv.ID)
	if err != nil {
		return Failed, err
	}
	before := *fresh
	fresh.AttemptCount++
	fresh.LastPaymentError = invoices.FailureOf(nil, e)
	scheduleRetry(sub, fresh, nil)
	if err := tx.UpdateInvoice(a.Scope, fresh); err != nil {
		return Failed, err
	}
	return Failed, core.Emit(tx, a, invoices.EventPaymentFailed, fresh, &before)
}

// sendInvoice leaves the invoice to the customer: it is due at its due instant.
type sendInvoice struct{}

func (sendInvoice) Collect(*db.Tx, domain.Actor, *domain.Subscription, *domain.Invoice) (Outcome, error) {
	return Waiting, nil
}

// pixAutoCollector charges an invoice under the subscription's Pix Automático authorization (its
// default payment method) for the amount remaining, with the invoice as the charge's reference:
// a reference already paid is never charged again (a renewal run again after a crash). A charge
// refused before anything is charged (the authorization canceled or expired, the amount above
// max_amount) and a charge that fails (insufficient funds) are both a failed attempt
// (invoice.payment_failed); failed attempts are retried on the next business days.
type pixAutoCollector struct{ svc *Service }

func (c pixAutoCollector) Collect(tx *db.Tx, a domain.Actor, sub *domain.Subscription, inv *domain.Invoice) (Outcome, error) {
	pay := c.svc.Payments
	if inv.PaymentIntent != nil {
		// A live attempt reserved or answered: apply the PSP's answer, never charge again.
		open, err := pay.PixAutoCallOpen(tx, a.Scope, *inv.PaymentIntent)
		if err != nil {
			return Failed, err
		}
		if open {
			pi, err := pay.ApplyPixAutoCharge(tx, a, *inv.PaymentIntent)
			if err != nil {
				return Failed, err
			}
			return c.record(tx, a, inv, pi)
		}
	}
	desc := domain.InvoicePaymentText(inv.ID)
	if inv.Number != nil {
		desc = domain.InvoicePaymentText(*inv.Number)
	}
	pi, err := pay.ChargePixAutomatico(tx, a, payments.PixAutoChargeParams{PaymentMethod: *sub.DefaultPaymentMethod,
		Amount: inv.AmountRemaining, Description: &desc, Reference: inv.ID, Metadata: map[string]string{"invoice": inv.ID, "subscription": sub.ID}})
	if p := payments.PendingOf(err); p != nil {
		// Live: the attempt is reserved; the PSP is called once this transaction commits.
		c.svc.pending = append(c.svc.pending, PendingCall{scope: a.Scope, sub: sub.ID, p: p})
		return Waiting, c.link(tx, a, inv.ID, pi)
	}
	if err != nil {
		if _, ok := domain.AsError(err); !ok {
			return Failed, err
		}
		// Refused before any charge: a failed attempt whose reason is the refusal.
		paid, err2 := c.svc.Invoices.RecordCharge(tx, a, inv.ID, nil, err)
		if err2 != nil {
			return Failed, err2
		}
		if paid.Status == domain.InvoicePaid {
			return Paid, nil
		}
		return Failed, nil
	}
	return c.record(tx, a, inv, pi)
}

// record records an attempt's intent on the invoice: paid, failed (invoice.payment_failed), or
// still processing at the PSP (linked; decided later by PixAutoSettled).
func (c pixAutoCollector) record(tx *db.Tx, a domain.Actor, inv *domain.Invoice, pi *domain.PaymentIntent) (Outcome, error) {
	if pi != nil && pi.Status == domain.PIStatusProcessing {
		return Waiting, c.link(tx, a, inv.ID, pi)
	}
	paid, err := c.svc.Invoices.RecordCharge(tx, a, inv.ID, pi)
	if err != nil {
		return Failed, err
	}
	if paid.Status == domain.InvoicePaid {
		return Paid, nil
	}
	return Failed, nil
}

// link makes pi the invoice's payment intent while its attempt is in flight (no attempt is
// counted yet).
func (c pixAutoCollector) link(tx *db.Tx, a domain.Actor, invID string, pi *domain.PaymentIntent) error {
	inv, err := tx.FindInvoiceByID(a.Scope, invID)
	if err != nil {
		return err
	}
	inv.PaymentIntent, inv.Charge = &pi.ID, pi.LatestCharge
	if err := tx.SetChargesInvoice(a.Scope, pi.ID, inv.ID); err != nil {
		return err
	}
	return tx.UpdateInvoice(a.Scope, inv)
}

// PixAutoSettled records on its invoice a live Pix Automático attempt decided after the renewal
// that made it (the PSP settled or refused it on the due date): paid, or a failed attempt that
// starts or continues the business-day retries (invoice.payment_failed).
func (svc *Service) PixAutoSettled(tx *db.Tx, a domain.Actor, pi *domain.PaymentIntent) error {
	inv, err := tx.FindInvoiceByPaymentIntent(a.Scope, pi.ID)
	if errors.Is(err, db.ErrNotFound) {
		return nil
	}
	if err != nil || inv.Status != domain.InvoiceOpen {
		return err
	}
	got, err := svc.Invoices.RecordCharge(tx, a, inv.ID, pi)
	if err != nil || inv.Subscription == nil {
		return err
	}
	if got.Status != domain.InvoicePaid {
		if err := svc.attemptFailed(tx, a, *inv.Subscription, inv.ID); err != nil {
			return err
		}
	}
	return svc.reschedule(tx, a.Scope, *inv.Subscription)
}

// RetryAt is the retry n of a failed Pix Automático charge: on each of the next business days
// after the first attempt, at its time of day in Brasília.
func (c pixAutoCollector) RetryAt(first time.Time, n int) time.Time {
	dates := c.svc.Payments.PixAutoRetryDates(first.In(calendar.Brasilia))
	if n >= len(dates) {
		return time.Time{}
	}
	return calendar.StartOf(dates[n]).Add(first.Sub(calendar.StartOf(calendar.Today(first))))
}
