package email

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"troco/db"
	"troco/server/clock"
	"troco/server/domain"
	"troco/server/jobs"
)

// Message is a rendered e-mail ready for a Sender.
type Message struct {
	// ID is the troco id (em_…); it becomes the Message-ID, so a resend after a crash is
	// recognisable as the same message.
	ID       string
	FromName string
	// ReplyTo is the organization's contact address, so a customer's reply reaches the merchant.
	ReplyTo string
	To      string
	Subject string
	Text    string
	HTML    string
}

// Sender delivers a message to the outside world (SMTP in live mode).
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// Options configure a Mailer.
type Options struct {
	DB     *db.DB
	Clock  clock.Clock
	Logger *slog.Logger
	// Live sends live-mode messages; nil means no SMTP server is configured, and each live
	// message is recorded as skipped (smtp_not_configured). Test mode never uses it.
	Live Sender
	// Lease is how long a claimed message stays reserved for its attempt (default 2 minutes,
	// longer than the SMTP timeout); after a crash it is claimed again once the lease ends.
	Lease time.Duration
	// Batch is how many messages one claim takes (default 100).
	Batch int
	// Workers bounds the SMTP sends in flight (default 4).
	Workers int
	// BaseURL returns the public base URL (https://host[:port]) that makes every link of a
	// message absolute; nil or "" falls back to the stored public base URL setting.
	BaseURL func() string
}

// Retries is the wait before each retry of a message the SMTP server did not accept: about
// three and a half days in all, so a server down for an hour or a weekend loses nothing. After
// the last one the message is failed.
var Retries = []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute,
	30 * time.Minute, 30 * time.Minute, time.Hour, time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour, 12 * time.Hour, 24 * time.Hour, 24 * time.Hour}

// Mailer renders queued messages and delivers them; every replica may run one, since messages
// are leased in a transaction.
type Mailer struct {
	o Options
}

// New returns a Mailer.
func New(o Options) *Mailer {
	if o.Lease <= 0 {
		o.Lease = 2 * time.Minute
	}
	if o.Batch <= 0 {
		o.Batch = 100
	}
	if o.Workers <= 0 {
		o.Workers = 4
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Mailer{o: o}
}

// Job runs the mailer on the scheduler (and at every advance-clock).
func (m *Mailer) Job() jobs.Job {
	return jobs.Job{Name: "deliver-emails", Every: 10 * time.Second, Run: m.Run}
}

// Run delivers every message due at now, batch after batch, until none is left.
func (m *Mailer) Run(ctx context.Context, now time.Time) error {
	return m.run(ctx, now, nil)
}

// DeliverScope delivers the due messages of one organization's environment at once: the
// sandbox mailbox calls it before it lists, so a message is there as soon as its event is.
// Messages another worker (the scheduled job, a concurrent read) holds are waited for, up to
// two seconds, so the read sees them too.
func (m *Mailer) DeliverScope(ctx context.Context, s domain.Scope) error {
	ctx = context.WithoutCancel(ctx) // a client that hangs up must not leave messages leased
	for range 100 {
		now := m.o.Clock.Now()
		if err := m.run(ctx, now, &s); err != nil {
			return err
		}
		var n int
		if err := m.o.DB.Read(ctx, func(tx *db.Tx) error {
			var err error
			n, err = tx.PendingEmailsDue(s, now)
			return err
		}); err != nil || n == 0 {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

func (m *Mailer) run(ctx context.Context, now time.Time, scope *domain.Scope) error {
	// A run starts no SMTP send after half a lease, so a hanging server cannot hold a run (and a
	// graceful shutdown) for long; messages left leased are picked up again after their lease.
	started := m.o.Clock.Now()
	overtime := func() bool { return m.o.Clock.Now().Sub(started) > m.o.Lease/2 }
	for range 10000 {
		if err := ctx.Err(); err != nil {
			return err
		}
		if overtime() {
			return nil
		}
		// A look on a reader first: with nothing due (most runs, most mailbox reads) the
		// writer is not taken at all.
		var due []db.EmailClaim
		if err := m.o.DB.Read(ctx, func(tx *db.Tx) error {
			var err error
			due, err = tx.DueEmails(now, scope, 1)
			return err
		}); err != nil || len(due) == 0 {
			return err
		}
		var batch []db.EmailClaim
		err := m.o.DB.Write(ctx, func(tx *db.Tx) error {
			cands, err := tx.DueEmails(now, scope, m.o.Batch)
			if err != nil {
				return err
			}
			batch, err = tx.LeaseEmails(cands, now, now.Add(m.o.Lease))
			return err
		})
		if err != nil {
			return err
		}
		if len(batch) == 0 {
			return nil
		}
		sem := make(chan struct{}, m.o.Workers)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var firstErr error
		for _, c := range batch {
			if !c.Scope.Livemode {
				// The sandbox mailbox: rendering and storing, no network; done in order.
				if err := m.deliver(ctx, c, now); err != nil && firstErr == nil {
					firstErr = err
				}
				continue
			}
			wg.Add(1)
			sem <- struct{}{}
			if overtime() || ctx.Err() != nil {
				<-sem
				wg.Done()
				continue
			}
			go func(c db.EmailClaim) {
				defer func() { <-sem; wg.Done() }()
				if err := m.deliver(ctx, c, now); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}(c)
		}
		wg.Wait()
		if firstErr != nil {
			return firstErr
		}
	}
	return nil
}

// deliver handles one leased message: render it once, then store it (test) or send it (live).
func (m *Mailer) deliver(ctx context.Context, c db.EmailClaim, now time.Time) error {
	if c.Scope.Livemode && m.o.Live == nil {
		return m.settle(ctx, c, domain.EmailStatusSkipped, domain.EmailSkipNoSMTP, "", now)
	}
	var fromName, replyTo string
	if !c.Rendered {
		p, err := m.prepare(ctx, &c)
		if err != nil {
			return m.retry(ctx, c, now, err)
		}
		if p.skip != "" {
			return m.settle(ctx, c, domain.EmailStatusSkipped, p.skip, "", now)
		}
		fromName, replyTo = p.fromName, p.replyTo
		if !c.Scope.Livemode {
			return m.o.DB.Write(ctx, func(tx *db.Tx) error {
				if ok, err := tx.SaveRenderedEmail(c); err != nil || !ok {
					return err
				}
				_, err := tx.SettleEmail(c, domain.EmailStatusSent, "", "", now)
				return err
			})
		}
		var saved bool
		if err := m.o.DB.Write(ctx, func(tx *db.Tx) error {
			var err error
			saved, err = tx.SaveRenderedEmail(c)
			return err
		}); err != nil || !saved {
			return err // a lost lease: whoever holds it now sends it
		}
	}
	if !c.Scope.Livemode {
		return m.settle(ctx, c, domain.EmailStatusSent, "", "", now)
	}
	if fromName == "" {
		fromName, replyTo = m.sender(ctx, c.Scope.OrgID)
	}
	// The message may have waited behind others of its batch: take the lease afresh for the send.
	var renewed bool
	if err := m.o.DB.Write(ctx, func(tx *db.Tx) error {
		var err error
		renewed, err = tx.RenewEmailLease(&c, m.o.Clock.Now().Add(m.o.Lease))
		return err
	}); err != nil || !renewed {
		return err
	}
	to := ""
	if c.Email.To != nil {
		to = *c.Email.To
	}
	err := m.o.Live.Send(ctx, Message{ID: c.Email.ID, FromName: fromName, ReplyTo: replyTo, To: to, Subject: c.Email.Subject, Text: c.Email.Text, HTML: c.Email.HTML})
	if err != nil {
		m.o.Logger.Warn("email: send failed", "email", c.Email.ID, "attempt", c.Attempt, "error", err)
		return m.retry(ctx, c, now, err)
	}
	return m.settle(ctx, c, domain.EmailStatusSent, "", "", now)
}

func (m *Mailer) settle(ctx context.Context, c db.EmailClaim, status, reason, lastErr string, next time.Time) error {
	return m.o.DB.Write(ctx, func(tx *db.Tx) error {
		_, err := tx.SettleEmail(c, status, reason, lastErr, next)
		return err
	})
}

// retry makes the message due again after its backoff, or failed after the last retry.
func (m *Mailer) retry(ctx context.Context, c db.EmailClaim, now time.Time, cause error) error {
	msg := cause.Error()
	if len(msg) > 500 {
		msg = msg[:500]
	}
	if c.Attempt > len(Retries) || errors.Is(cause, ErrRecipientRejected) {
		return m.settle(ctx, c, domain.EmailStatusFailed, "", msg, now)
	}
	return m.settle(ctx, c, domain.EmailStatusPending, "", msg, now.Add(Retries[c.Attempt-1]))
}

// sender returns the display name and reply-to address of an organization's messages.
func (m *Mailer) sender(ctx context.Context, orgID string) (name, replyTo string) {
	_ = m.o.DB.Read(ctx, func(tx *db.Tx) error {
		o, err := tx.FindOrganizationByID(orgID)
		if err == nil {
			name, replyTo = brandOf(o).Name, replyToOf(o)
		}
		return nil
	})
	return name, replyTo
}

func replyToOf(o *domain.Organization) string {
	if o.Email != nil && ValidRecipient(*o.Email) {
		return *o.Email
	}
	return ""
}

func brandOf(o *domain.Organization) Brand {
	b := Brand{Name: o.ShownName()} // the name buyers see on the checkout, the PIX code and the boleto
	br := o.CheckoutSettings.Branding
	if br.LogoURL != nil {
		b.Logo = *br.LogoURL
	}
	if br.PrimaryColor != nil {
		b.Color = *br.PrimaryColor
	}
	return b
}

type prepared struct {
	skip     string
	fromName string
	replyTo  string
}

// prepare reads what the message is written from, decides whether it is sent at all (the
// organization's settings, the recipient's address) and renders it into c.
func (m *Mailer) prepare(ctx context.Context, c *db.EmailClaim) (prepared, error) {
	var p prepared
	var in Input
	var to, base string
	err := m.o.DB.Read(ctx, func(tx *db.Tx) error {
		org, err := tx.FindOrganizationByID(c.Scope.OrgID)
		if err != nil {
			return err
		}
		if !org.EmailSettings.Enabled(c.Email.Kind) {
			p.skip = domain.EmailSkipDisabled
			return nil
		}
		ev, err := tx.FindEventByID(c.Scope, c.Email.Event)
		if err != nil {
			return err
		}
		raw, _ := ev.Data.Object.(json.RawMessage)
		in = Input{Kind: c.Email.Kind, Brand: brandOf(org), Sandbox: !c.Scope.Livemode, EventAt: ev.CreatedAt.Time}
		p.fromName, p.replyTo = in.Brand.Name, replyToOf(org)
		var customerID *string
		switch c.Email.Kind {
		case domain.EmailReceipt:
			in.Charge = &domain.Charge{}
			if err := json.Unmarshal(raw, in.Charge); err != nil {
				return err
			}
			customerID, to = in.Charge.Customer, deref(in.Charge.BillingDetails.Email)
		case domain.EmailBoleto, domain.EmailPix:
			in.Intent = &domain.PaymentIntent{}
			if err := json.Unmarshal(raw, in.Intent); err != nil {
				return err
			}
			if in.Intent.PaymentData == nil {
				in.Intent.PaymentData = in.Intent.NextAction // the emitted JSON shows it as next_action
			}
			customerID = in.Intent.Customer
			if cur, err := tx.FindPaymentIntentByID(c.Scope, in.Intent.ID); err == nil {
				to = deref(cur.Buyer.Email)
			}
		case domain.EmailRefund:
			in.Refund = &domain.Refund{}
			if err := json.Unmarshal(raw, in.Refund); err != nil {
				return err
			}
			if ch, err := tx.FindChargeByID(c.Scope, in.Refund.Charge); err == nil {
				in.Charge = ch
				customerID, to = ch.Customer, deref(ch.BillingDetails.Email)
			}
		case domain.EmailSubscriptionCanceled:
			if err := json.Unmarshal(raw, &in.Subscription); err != nil {
				return err
			}
			if id := str(in.Subscription, "customer"); id != "" {
				customerID = &id
			}
		default:
			if err := json.Unmarshal(raw, &in.Invoice); err != nil {
				return err
			}
			if id := str(in.Invoice, "customer"); id != "" {
				customerID = &id
			}
		}
		tz := ""
		var locales []string
		if customerID != nil && *customerID != "" {
			if cus, err := tx.FindCustomerAnyState(c.Scope, *customerID); err == nil {
				if cus.Email != nil && *cus.Email != "" {
					to = *cus.Email
				}
				in.CustomerName = deref(cus.Name)
				locales = cus.PreferredLocales
				tz = deref(cus.Timezone)
			} else if !errors.Is(err, db.ErrNotFound) {
				return err
			}
		}
		if in.CustomerName == "" && in.Charge != nil {
			in.CustomerName = deref(in.Charge.BillingDetails.Name)
		}
		in.Lang, in.Zone = Locale(locales), Zone(tz)
		if m.o.BaseURL != nil {
			base = m.o.BaseURL()
		}
		if base == "" {
			if base, _, err = tx.GetSetting(db.SettingPublicBaseURL); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || p.skip != "" {
		return p, err
	}
	switch {
	case to == "":
		p.skip = domain.EmailSkipNoAddress
		return p, nil
	case !ValidRecipient(to):
		c.Email.To = &to
		p.skip = domain.EmailSkipInvalidAddress
		return p, nil
	}
	content, err := Build(in)
	if errors.Is(err, ErrNotApplicable) {
		c.Email.To = &to // listed under the customer's address (to=…&status=skipped)
		p.skip = domain.EmailSkipNotApplicable
		return p, nil
	}
	if err != nil {
		return p, err
	}
	content.Absolutize(base)
	text, html, err := Render(content)
	if err != nil {
		return p, fmt.Errorf("email: render %s: %w", c.Email.Kind, err)
	}
	c.Email.To = &to
	c.Email.Subject, c.Email.Locale, c.Email.Text, c.Email.HTML = content.Subject, string(content.Lang), text, html
	c.Rendered = true
	return p, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ReceiptInput reads what the hosted receipt page of a charge shows, in the charge customer's
// language and zone.
func ReceiptInput(tx *db.Tx, s domain.Scope, chargeID string) (Input, error) {
	ch, err := tx.FindChargeByID(s, chargeID)
	if err != nil {
		return Input{}, err
	}
	org, err := tx.FindOrganizationByID(s.OrgID)
	if err != nil {
		return Input{}, err
	}
	in := Input{Kind: domain.EmailReceipt, Brand: brandOf(org), Sandbox: !s.Livemode, EventAt: ch.CreatedAt.Time, Charge: ch,
		CustomerName: deref(ch.BillingDetails.Name)}
	var locales []string
	tz := ""
	if ch.Customer != nil {
		if cus, err := tx.FindCustomerAnyState(s, *ch.Customer); err == nil {
			if n := deref(cus.Name); n != "" {
				in.CustomerName = n
			}
			locales, tz = cus.PreferredLocales, deref(cus.Timezone)
		}
	}
	in.Lang, in.Zone = Locale(locales), Zone(tz)
	return in, nil
}
