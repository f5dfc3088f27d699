package cli

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"troco/db"
	"troco/server"
	"troco/server/billing"
	"troco/server/checkout"
	"troco/server/clock"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/invoices"
	"troco/server/payments"
	"troco/server/secrets"
)

// triggerKit is what the payment triggers need besides a transaction: the payments engine and
// the checkout service, wired as serve wires them (a settled payment moves its checkout session
// and invoice), and the base URL of the running serve for the URLs the objects carry.
type triggerKit struct {
	pay      *payments.Service
	checkout *checkout.Service
	invoices *invoices.Service
	base     string
}

// newTriggerKit builds the engines. Card fingerprints use serve's master key when the data
// directory has one (so a triggered card matches the same card paid through the API); the file is
// never created here.
func newTriggerKit(dataDir, base string, simDelay time.Duration) (*triggerKit, error) {
	keyring := secrets.Random()
	if _, err := os.Stat(filepath.Join(dataDir, secrets.MasterKeyFile)); err == nil {
		k, err := secrets.LoadOrCreate(dataDir)
		if err != nil {
			return nil, err
		}
		keyring = k
	}
	pay := payments.New(base, simDelay, keyring.DeriveKey("card fingerprint"))
	pay.Owner = checkout.OwnerRules()
	co := &checkout.Service{Payments: pay}
	pay.AfterSettle = func(tx *db.Tx, a domain.Actor, pi *domain.PaymentIntent) error {
		if err := co.IntentSettled(tx, a, pi); err != nil {
			return err
		}
		return invoices.IntentSettled(tx, a, pi)
	}
	return &triggerKit{pay: pay, checkout: co, invoices: &invoices.Service{Payments: pay}, base: base}, nil
}

// openTrigger opens the database on serve's clock: real time plus the offset time travel
// recorded, so triggered objects (a session's expiry, a PIX code's lifetime) and their events
// are dated as serve would date them.
func openTrigger(ctx context.Context, env Env, path string) (*db.DB, error) {
	clk := clock.NewOffset(clock.Real{}, 0)
	d, err := db.Open(ctx, path, db.Options{Schema: env.Schema, PostgresSchema: env.PostgresSchema, Clock: clk, Readers: 1})
	if err != nil {
		return nil, err
	}
	err = d.Read(ctx, func(tx *db.Tx) error {
		v, ok, err := tx.GetSetting(server.ClockOffsetSetting)
		if err != nil || !ok {
			return err
		}
		if secs, err := strconv.ParseInt(v, 10, 64); err == nil && secs > 0 {
			clk.Advance(time.Duration(secs) * time.Second)
		}
		return nil
	})
	if err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// serveSettings are what the last `troco serve` on a database recorded (zero when none did).
type serveSettings struct {
	baseURL, dataDir string
	simDelay         time.Duration
}

func recordedServeSettings(ctx context.Context, d *db.DB) (serveSettings, error) {
	var s serveSettings
	err := d.Read(ctx, func(tx *db.Tx) error {
		for name, dst := range map[string]*string{serveBaseURLSetting: &s.baseURL, serveDataDirSetting: &s.dataDir} {
			v, _, err := tx.GetSetting(name)
			if err != nil {
				return err
			}
			*dst = v
		}
		v, ok, err := tx.GetSetting(serveSimDelaySetting)
		if err != nil || !ok {
			return err
		}
		s.simDelay, _ = time.ParseDuration(v)
		return nil
	})
	return s, err
}

// kept lets a declined payment through: the payments engine records it (failed charge, events)
// and answers a *domain.Error with KeepChanges, which the API commits and answers 402.
func kept(err error) error {
	if e, ok := domain.AsError(err); ok && e.KeepChanges {
		return nil
	}
	return err
}

func (k *triggerKit) intent(tx *db.Tx, a domain.Actor, capture string) (*domain.PaymentIntent, error) {
	amount, currency := int64(1990), "brl"
	p := payments.IntentParams{Amount: &amount, Currency: &currency, Description: text("Troco Trigger payment")}
	if capture != "" {
		p.CaptureMethod = &capture
	}
	return k.pay.CreateIntent(tx, a, p)
}

// payCard creates a payment intent and confirms it with a SPEC 7.1 test card.
func (k *triggerKit) payCard(tx *db.Tx, a domain.Actor, number, capture string) (*domain.PaymentIntent, error) {
	pi, err := k.intent(tx, a, capture)
	if err != nil {
		return nil, err
	}
	c := &payments.CardParams{Number: number, ExpMonth: 12, ExpYear: tx.Now.Year() + 3, CVC: "123", HolderName: "Troco Trigger"}
	if _, err := k.pay.Confirm(tx, a, pi.ID, payments.ConfirmParams{PaymentMethodType: domain.MethodCreditCard, Card: c}); kept(err) != nil {
		return nil, err
	}
	return pi, nil
}

// dispute pays with a dispute test card and opens its dispute now rather than a minute later.
func (k *triggerKit) dispute(tx *db.Tx, a domain.Actor) (*domain.Dispute, error) {
	pi, err := k.payCard(tx, a, "4000000000000259", "")
	if err != nil {
		return nil, err
	}
	if pi, err = k.pay.GetIntent(tx, a.Scope, pi.ID); err != nil {
		return nil, err
	}
	return k.pay.OpenDispute(tx, a, *pi.LatestCharge, "fraudulent", false)
}

func (k *triggerKit) session(tx *db.Tx, a domain.Actor, methods ...string) (*domain.CheckoutSession, error) {
	pr, err := triggerPrice(tx, a)
	if err != nil {
		return nil, err
	}
	qty := int64(1)
	p := checkout.SessionParams{LineItems: []checkout.LineItemParams{{Price: pr.ID, Quantity: &qty}},
		Metadata: map[string]string{"source": "troco trigger"}}
	p.PaymentMethodTypes = methods
	return checkout.CreateSession(tx, a, k.base, p)
}

// pixSession is a PIX-only checkout session the buyer has confirmed: complete, its payment
// waiting (payment_status unpaid).
func (k *triggerKit) pixSession(tx *db.Tx, a domain.Actor) (*domain.CheckoutSession, error) {
	cs, err := k.session(tx, a, domain.MethodPix)
	if err != nil {
		return nil, err
	}
	email := "trigger@example.com"
	return k.checkout.Confirm(tx, a, cs.ID, checkout.ConfirmParams{PaymentMethodType: domain.MethodPix, CustomerEmail: &email}, "")
}

// paymentTriggers are the triggers of payments, checkout sessions, coupons and promotion codes.
var paymentTriggers = map[string]triggerFunc{
	"charge.dispute.created": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		_, err := k.dispute(tx, a)
		return err
	},
	"charge.dispute.funds_withdrawn": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		_, err := k.dispute(tx, a)
		return err
	},
	"charge.dispute.updated": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		d, err := k.dispute(tx, a)
		if err != nil {
			return err
		}
		_, err = k.pay.UpdateDispute(tx, a, d.ID, payments.DisputeParams{Evidence: map[string]*string{"uncategorized_text": strp(payments.WinningEvidence)}})
		return err
	},
	"charge.dispute.closed": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		d, err := k.dispute(tx, a)
		if err != nil {
			return err
		}
		_, err = k.pay.CloseDispute(tx, a, d.ID)
		return err
	},
	"charge.dispute.funds_reinstated": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		d, err := k.dispute(tx, a)
		if err != nil {
			return err
		}
		yes := true
		if _, err = k.pay.UpdateDispute(tx, a, d.ID, payments.DisputeParams{Evidence: map[string]*string{"uncategorized_text": strp(payments.WinningEvidence)}, Submit: &yes}); err != nil {
			return err
		}
		_, err = k.pay.DecideDisputeNow(tx, a, d.ID)
		return err
	},
	"payment_intent.created": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		_, err := k.intent(tx, a, "")
		return err
	},
	"payment_intent.updated": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		pi, err := k.intent(tx, a, "")
		if err != nil {
			return err
		}
		_, err = k.pay.UpdateIntent(tx, a, pi.ID, payments.IntentParams{Description: text("updated by troco trigger")})
		return err
	},
	"payment_intent.canceled": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		pi, err := k.intent(tx, a, "")
		if err != nil {
			return err
		}
		reason := "requested_by_customer"
		_, err = k.pay.CancelIntent(tx, a, pi.ID, payments.CancelParams{CancellationReason: &reason})
		return err
	},
	"payment_intent.succeeded": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		_, err := k.payCard(tx, a, "4242424242424242", "")
		return err
	},
	"payment_intent.payment_failed": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		_, err := k.payCard(tx, a, "4000000000000002", "")
		return err
	},
	"payment_intent.amount_capturable_updated": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		_, err := k.payCard(tx, a, "4242424242424242", "manual")
		return err
	},
	"payment_intent.processing": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		_, err := k.payCard(tx, a, "4000009000000425", "")
		return err
	},
	"payment_intent.pending": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		pi, err := k.intent(tx, a, "")
		if err != nil {
			return err
		}
		email := "trigger@example.com"
		_, err = k.pay.Confirm(tx, a, pi.ID, payments.ConfirmParams{PaymentMethodType: domain.MethodPix, CustomerEmail: &email})
		return err
	},
	"charge.captured": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		pi, err := k.payCard(tx, a, "4242424242424242", "manual")
		if err != nil {
			return err
		}
		_, err = k.pay.CaptureIntent(tx, a, pi.ID, payments.CaptureParams{})
		return err
	},
	"charge.expired": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		pi, err := k.payCard(tx, a, "4242424242424242", "manual")
		if err != nil {
			return err
		}
		_, err = k.pay.ExpireAuthorizationNow(tx, a, pi.ID)
		return err
	},
	"charge.refunded": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		pi, err := k.payCard(tx, a, "4242424242424242", "")
		if err != nil {
			return err
		}
		_, err = k.pay.CreateRefund(tx, a, payments.RefundParams{PaymentIntent: pi.ID})
		return err
	},
	"checkout.session.created": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		_, err := k.session(tx, a)
		return err
	},
	"checkout.session.completed": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		cs, err := k.session(tx, a, domain.MethodCreditCard)
		if err != nil {
			return err
		}
		_, err = k.checkout.TestHelper(tx, a, cs.ID, checkout.HelperSucceed)
		return err
	},
	"checkout.session.expired": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		cs, err := k.session(tx, a)
		if err != nil {
			return err
		}
		_, err = k.checkout.TestHelper(tx, a, cs.ID, checkout.HelperExpire)
		return err
	},
	"checkout.session.async.payment.succeeded": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		cs, err := k.pixSession(tx, a)
		if err != nil {
			return err
		}
		_, err = k.checkout.Simulate(tx, a, cs.ID, true)
		return err
	},
	"checkout.session.async.payment.failed": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		cs, err := k.pixSession(tx, a)
		if err != nil {
			return err
		}
		_, err = k.checkout.Simulate(tx, a, cs.ID, false)
		return err
	},
	"coupon.created": func(tx *db.Tx, a domain.Actor, _ *triggerKit) error {
		_, err := triggerCoupon(tx, a)
		return err
	},
	"coupon.updated": func(tx *db.Tx, a domain.Actor, _ *triggerKit) error {
		c, err := triggerCoupon(tx, a)
		if err != nil {
			return err
		}
		_, err = core.UpdateCoupon(tx, a, c.ID, core.CouponUpdateParams{Name: text("Troco Trigger (updated)")})
		return err
	},
	"coupon.deleted": func(tx *db.Tx, a domain.Actor, _ *triggerKit) error {
		c, err := triggerCoupon(tx, a)
		if err != nil {
			return err
		}
		_, err = core.DeleteCoupon(tx, a, c.ID)
		return err
	},
	// organization.updated: a metadata stamp (troco_trigger = now) on the organization itself, the
	// one change that touches neither its activation nor its settings.
	"organization.updated": func(tx *db.Tx, a domain.Actor, _ *triggerKit) error {
		stamp := map[string]string{"troco_trigger": tx.Now.Format(time.RFC3339Nano)}
		_, err := core.UpdateOrganization(tx, a, core.OrgCaller{}, a.OrgID, core.OrganizationParams{Metadata: domain.Opt[map[string]string]{Set: true, V: stamp}})
		return err
	},
	"promotion_code.created": func(tx *db.Tx, a domain.Actor, _ *triggerKit) error {
		_, err := triggerPromotionCode(tx, a)
		return err
	},
	"promotion_code.updated": func(tx *db.Tx, a domain.Actor, _ *triggerKit) error {
		pc, err := triggerPromotionCode(tx, a)
		if err != nil {
			return err
		}
		off := false
		_, err = core.UpdatePromotionCode(tx, a, pc.ID, core.PromotionCodeUpdateParams{Active: &off})
		return err
	},
}

// savedCard saves a SPEC 7.1 test card on a new customer through a setup intent (emitting
// setup_intent.created, payment_method.attached and setup_intent.succeeded, or
// setup_intent.setup_failed for a declining card).
func (k *triggerKit) savedCard(tx *db.Tx, a domain.Actor, number string) (*domain.SetupIntent, error) {
	c, err := triggerCustomer(tx, a)
	if err != nil {
		return nil, err
	}
	si, err := k.pay.CreateSetupIntent(tx, a, payments.SetupIntentParams{Customer: c.ID})
	if err != nil {
		return nil, err
	}
	card := &payments.CardParams{Number: number, ExpMonth: 12, ExpYear: tx.Now.Year() + 3, CVC: "123", HolderName: "Troco Trigger"}
	if _, err := k.pay.ConfirmSetupIntent(tx, a, si.ID, payments.SetupConfirmParams{Card: card}); kept(err) != nil {
		return nil, err
	}
	return k.pay.GetSetupIntent(tx, a.Scope, si.ID)
}

// invoice creates a draft send_invoice invoice of one R$ 19,90 line for a new customer, or, with
// a customer, a charge_automatically one for that customer.
func (k *triggerKit) invoice(tx *db.Tx, a domain.Actor, customer string) (*domain.Invoice, error) {
	method, days := "send_invoice", 30
	p := invoices.CreateParams{Lines: []invoices.LineParams{{Amount: ptr(int64(1990)), Description: ptr("Troco Trigger")}},
		Metadata: map[string]string{"source": "troco trigger"}}
	if customer == "" {
		c, err := triggerCustomer(tx, a)
		if err != nil {
			return nil, err
		}
		customer = c.ID
		p.DaysUntilDue = &days
	} else {
		method = "charge_automatically"
	}
	p.Customer, p.CollectionMethod = &customer, &method
	return invoices.Create(tx, a, p)
}

func (k *triggerKit) billing() *billing.Service { return billing.New(k.pay, "") }

// subscription subscribes a new customer with a saved 4242 card to a monthly R$ 19,90 price
// (customer.subscription.created, invoice.created, invoice.finalized, invoice.paid).
func (k *triggerKit) subscription(tx *db.Tx, a domain.Actor, edit func(*billing.CreateParams)) (*domain.Subscription, error) {
	si, err := k.savedCard(tx, a, "4242424242424242")
	if err != nil {
		return nil, err
	}
	p, err := triggerProduct(tx, a)
	if err != nil {
		return nil, err
	}
	pr, err := core.CreatePrice(tx, a, core.PriceParams{Product: p.ID, UnitAmount: ptr(int64(1990)), Recurring: &core.RecurringParams{Interval: "month"}})
	if err != nil {
		return nil, err
	}
	params := billing.CreateParams{Customer: si.Customer, DefaultPaymentMethod: si.PaymentMethod, Items: []billing.ItemParams{{Price: &pr.ID}},
		Metadata: map[string]string{"source": "troco trigger"}}
	if edit != nil {
		edit(&params)
	}
	return k.billing().Create(tx, a, params)
}

func (k *triggerKit) pausedSubscription(tx *db.Tx, a domain.Actor) (*domain.Subscription, error) {
	sub, err := k.subscription(tx, a, nil)
	if err != nil {
		return nil, err
	}
	return k.billing().Update(tx, a, sub.ID, billing.UpdateParams{PauseCollection: domain.Opt[billing.PauseParams]{Set: true, V: billing.PauseParams{Behavior: ptr("void")}}})
}

func (k *triggerKit) openInvoice(tx *db.Tx, a domain.Actor) (*domain.Invoice, error) {
	inv, err := k.invoice(tx, a, "")
	if err != nil {
		return nil, err
	}
	return invoices.Finalize(tx, a, inv.ID)
}

func ptr[T any](v T) *T { return &v }

// billingTriggers are the triggers of saved cards, setup intents, invoices and subscriptions.
var billingTriggers = map[string]triggerFunc{
	"setup_intent.created": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		_, err := k.pay.CreateSetupIntent(tx, a, payments.SetupIntentParams{})
		return err
	},
	"setup_intent.succeeded": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		_, err := k.savedCard(tx, a, "4242424242424242")
		return err
	},
	"setup_intent.setup_failed": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		_, err := k.savedCard(tx, a, "4000000000000002")
		return err
	},
	"setup_intent.canceled": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		si, err := k.pay.CreateSetupIntent(tx, a, payments.SetupIntentParams{})
		if err != nil {
			return err
		}
		_, err = k.pay.CancelSetupIntent(tx, a, si.ID, payments.SetupCancelParams{CancellationReason: ptr("requested_by_customer")})
		return err
	},
	"payment_method.detached": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		si, err := k.savedCard(tx, a, "4242424242424242")
		if err != nil {
			return err
		}
		if si.PaymentMethod == nil {
			return errors.New("the setup intent saved no card")
		}
		_, err = k.pay.DetachPaymentMethod(tx, a, *si.PaymentMethod)
		return err
	},
	"invoice.created": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		_, err := k.invoice(tx, a, "")
		return err
	},
	"invoice.updated": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		inv, err := k.invoice(tx, a, "")
		if err != nil {
			return err
		}
		_, err = invoices.Update(tx, a, inv.ID, invoices.UpdateParams{Description: text("updated by troco trigger")})
		return err
	},
	"invoice.finalized": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		_, err := k.openInvoice(tx, a)
		return err
	},
	"invoice.paid": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		inv, err := k.openInvoice(tx, a)
		if err != nil {
			return err
		}
		_, err = k.invoices.Pay(tx, a, inv.ID, invoices.PayParams{PaidOutOfBand: ptr(true)})
		return err
	},
	"invoice.voided": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		inv, err := k.openInvoice(tx, a)
		if err != nil {
			return err
		}
		_, err = k.invoices.Void(tx, a, inv.ID)
		return err
	},
	"invoice.marked_uncollectible": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		inv, err := k.openInvoice(tx, a)
		if err != nil {
			return err
		}
		_, err = invoices.MarkUncollectible(tx, a, inv.ID)
		return err
	},
	// invoice.payment_failed: a card saved with 4000009000000623, which SPEC 7.1 approves once
	// and declines on reuse, pays a charge_automatically invoice.
	"invoice.payment_failed": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		si, err := k.savedCard(tx, a, "4000009000000623")
		if err != nil {
			return err
		}
		if si.Customer == nil || si.PaymentMethod == nil {
			return errors.New("the setup intent saved no card")
		}
		inv, err := k.invoice(tx, a, *si.Customer)
		if err != nil {
			return err
		}
		_, err = k.invoices.Pay(tx, a, inv.ID, invoices.PayParams{PaymentMethod: si.PaymentMethod})
		return kept(err)
	},
	"customer.subscription.created": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		_, err := k.subscription(tx, a, nil)
		return err
	},
	"customer.subscription.updated": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		sub, err := k.subscription(tx, a, nil)
		if err != nil {
			return err
		}
		_, err = k.billing().Update(tx, a, sub.ID, billing.UpdateParams{Metadata: domain.Opt[map[string]string]{Set: true, V: map[string]string{"plan": "updated"}}})
		return err
	},
	"customer.subscription.deleted": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		sub, err := k.subscription(tx, a, nil)
		if err != nil {
			return err
		}
		_, err = k.billing().Cancel(tx, a, sub.ID, billing.CancelParams{})
		return err
	},
	// A trial of two days: its end is less than three days away, so the notice is sent at once.
	"customer.subscription.trial_will_end": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		_, err := k.subscription(tx, a, func(p *billing.CreateParams) { p.TrialPeriodDays = ptr(2) })
		return err
	},
	"customer.subscription.paused": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		_, err := k.pausedSubscription(tx, a)
		return err
	},
	"customer.subscription.resumed": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		sub, err := k.pausedSubscription(tx, a)
		if err != nil {
			return err
		}
		_, err = k.billing().Resume(tx, a, sub.ID)
		return err
	},
	// invoice.overdue: a send_invoice invoice due a second ago, finalized unpaid; the overdue
	// job's step runs at once (it also handles any other invoice already due).
	"invoice.overdue": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		c, err := triggerCustomer(tx, a)
		if err != nil {
			return err
		}
		due := tx.Now.Add(-time.Second).UTC().Format(time.RFC3339)
		inv, err := invoices.Create(tx, a, invoices.CreateParams{Customer: &c.ID, CollectionMethod: ptr("send_invoice"), DueDate: &due,
			Lines: []invoices.LineParams{{Amount: ptr(int64(1990)), Description: ptr("Troco Trigger")}}, Metadata: map[string]string{"source": "troco trigger"}})
		if err != nil {
			return err
		}
		if _, err := invoices.Finalize(tx, a, inv.ID); err != nil {
			return err
		}
		_, err = invoices.RunOverdue(tx, tx.Now, 100)
		return err
	},
	"invoice.upcoming": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		sub, err := k.subscription(tx, a, nil)
		if err != nil {
			return err
		}
		return k.billing().EmitUpcoming(tx, a, sub.ID)
	},
}

// pixAuthorization creates a Pix Automático authorization for a new customer whose e-mail is
// one of the sandbox rules (pixauto_approve, pixauto_reject) or, with "", a pending one.
func (k *triggerKit) pixAuthorization(tx *db.Tx, a domain.Actor, local string) (*domain.PixAuthorization, error) {
	if local == "" {
		local = "trigger"
	}
	cus, err := core.CreateCustomer(tx, a, core.CustomerParams{Email: domain.Opt[string]{Set: true, V: local + "@example.com"}})
	if err != nil {
		return nil, err
	}
	amount, desc := int64(9990), "troco trigger"
	return k.pay.CreatePixAuthorization(tx, a, payments.PixAuthParams{Customer: cus.ID, MaxAmount: &amount, Interval: "month",
		Description: &desc, Origin: k.base})
}

// pixAuthTriggers are the triggers of Pix Automático authorizations.
var pixAuthTriggers = map[string]triggerFunc{
	"pix_authorization.created": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		_, err := k.pixAuthorization(tx, a, "")
		return err
	},
	"pix_authorization.approved": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		_, err := k.pixAuthorization(tx, a, payments.PixAutoApprove)
		return err
	},
	"pix_authorization.rejected": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		_, err := k.pixAuthorization(tx, a, payments.PixAutoReject)
		return err
	},
	"pix_authorization.canceled": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		pa, err := k.pixAuthorization(tx, a, payments.PixAutoApprove)
		if err != nil {
			return err
		}
		_, err = k.pay.CancelPixAuthorization(tx, a, pa.ID)
		return err
	},
	"pix_authorization.expired": func(tx *db.Tx, a domain.Actor, k *triggerKit) error {
		pa, err := k.pixAuthorization(tx, a, "")
		if err != nil {
			return err
		}
		_, err = k.pay.ExpirePixAuthorization(tx, a, pa.ID)
		return err
	},
}

func init() {
	maps.Copy(paymentTriggers, pixAuthTriggers)
	// The same operations emit several types: name each after the one it is for, and let the
	// charge events share their payment intent's.
	paymentTriggers["charge.succeeded"] = paymentTriggers["payment_intent.succeeded"]
	paymentTriggers["charge.failed"] = paymentTriggers["payment_intent.payment_failed"]
	paymentTriggers["charge.pending"] = paymentTriggers["payment_intent.pending"]
	paymentTriggers["refund.created"] = paymentTriggers["charge.refunded"]
	billingTriggers["payment_method.attached"] = billingTriggers["setup_intent.succeeded"]
	maps.Copy(triggers, paymentTriggers)
	maps.Copy(triggers, billingTriggers)
}

func triggerCoupon(tx *db.Tx, a domain.Actor) (*domain.Coupon, error) {
	pct := int64(10)
	return core.CreateCoupon(tx, a, core.CouponParams{Name: text("Troco Trigger 10%"), PercentOff: &pct})
}

func triggerPromotionCode(tx *db.Tx, a domain.Actor) (*domain.PromotionCode, error) {
	c, err := triggerCoupon(tx, a)
	if err != nil {
		return nil, err
	}
	return core.CreatePromotionCode(tx, a, core.PromotionCodeParams{Coupon: c.ID})
}

func strp(s string) *string { return &s }
