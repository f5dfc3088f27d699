package email_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/db"
	"troco/pages"
	"troco/server/clock"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/email"
)

// mailEnv is a real SQLite file with one organization, and a way to cause live-mode e-mails.
type mailEnv struct {
	t     testing.TB
	DB    *db.DB
	Clock *clock.Offset
	Org   *domain.Organization
	Live  domain.Actor
}

func newMailEnv(t testing.TB) *mailEnv {
	t.Helper()
	schema, err := os.ReadFile(filepath.Join("..", "..", "schema.sql"))
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewOffset(clock.Real{}, 0)
	d, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "troco.db"), db.Options{Schema: string(schema), Clock: clk, Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	e := &mailEnv{t: t, DB: d, Clock: clk}
	err = d.Write(context.Background(), func(tx *db.Tx) error {
		e.Org, err = core.CreateOrganization(tx, core.OrganizationInput{Name: "Padaria Pão Quente"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	e.Live = domain.Actor{Scope: domain.Scope{OrgID: e.Org.ID, Livemode: true}}
	return e
}

// sendInvoices finalizes n send_invoice invoices of a customer in live mode: n "invoice" e-mails.
func (e *mailEnv) sendInvoices(n int, to string) {
	e.t.Helper()
	err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
		cus, err := core.CreateCustomer(tx, e.Live, core.CustomerParams{Email: domain.Opt[string]{Set: true, V: to}, Name: domain.Opt[string]{Set: true, V: "Ana Souza"}})
		if err != nil {
			return err
		}
		for i := range n {
			num := fmt.Sprintf("PQ-%04d", i+1)
			inv := &domain.Invoice{ID: domain.NewID(domain.PrefixInvoice), Object: "invoice", CollectionMethod: "send_invoice", Customer: cus.ID,
				AmountDue: 5000, AmountRemaining: 5000, Number: &num, Status: "open", DueDate: domain.At(tx.Now.Add(10 * 24 * time.Hour)), Livemode: true}
			if err := core.Emit(tx, e.Live, "invoice.finalized", inv, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *mailEnv) statuses() map[string]int {
	e.t.Helper()
	out := map[string]int{}
	err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		for _, st := range []string{"pending", "sent", "skipped", "failed"} {
			items, _, err := tx.ListEmails(e.Live.Scope, db.EmailFilter{Status: st}, db.ListParams{Limit: 100})
			if err != nil {
				return err
			}
			out[st] = len(items)
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func TestMailerLiveWithoutSMTPRecordsSkipped(t *testing.T) {
	is := is.New(t)
	e := newMailEnv(t)
	e.sendInvoices(2, "ana@example.com")
	m := email.New(email.Options{DB: e.DB, Clock: e.Clock})
	is.NoErr(m.Run(context.Background(), e.Clock.Now()))
	is.Equal(e.statuses()["skipped"], 2) // recorded, with the reason
	var reason string
	_ = e.DB.Read(context.Background(), func(tx *db.Tx) error {
		items, _, _ := tx.ListEmails(e.Live.Scope, db.EmailFilter{Status: "skipped"}, db.ListParams{Limit: 1})
		reason = *items[0].SkipReason
		return nil
	})
	is.Equal(reason, domain.EmailSkipNoSMTP)
}

// An SMTP server that refuses everything for an hour: the mailer retries on its schedule, loses
// nothing, and once the server answers every message arrives exactly once.
func TestMailerRetriesUntilTheServerRecovers(t *testing.T) {
	is := is.New(t)
	e := newMailEnv(t)
	ts := startSMTP(t, modeStartTLS)
	ts.setFailing(true)
	sender, err := email.NewSMTP(email.SMTPConfig{URL: "smtp://troco@" + ts.addr, Password: "s3cret", From: "faturas@padaria.com.br", TLSConfig: ts.tlsConfig()})
	is.NoErr(err)
	m := email.New(email.Options{DB: e.DB, Clock: e.Clock, Live: sender})
	e.sendInvoices(5, "ana@example.com")

	now := e.Clock.Now()
	end := now.Add(time.Hour)
	runs := 0
	for now.Before(end) {
		is.NoErr(m.Run(context.Background(), now))
		runs++
		now = now.Add(time.Minute)
	}
	is.Equal(len(ts.messages()), 0)      // nothing accepted while down
	is.Equal(e.statuses()["pending"], 5) // nothing lost
	ts.mu.Lock()
	tries := ts.tries
	ts.mu.Unlock()
	is.True(tries >= 5*6)   // retried several times each within the hour
	is.True(tries < 5*runs) // on a backoff schedule, not on every run

	ts.setFailing(false)
	for range 6 * 60 { // the next retry is at most an hour away
		is.NoErr(m.Run(context.Background(), now))
		now = now.Add(time.Minute)
	}
	got := ts.messages()
	is.Equal(len(got), 5) // each message once
	seen := map[string]bool{}
	for _, r := range got {
		_, text, _ := parts(t, r.data)
		for i := 1; i <= 5; i++ {
			if strings.Contains(text, fmt.Sprintf("PQ-%04d", i)) {
				is.True(!seen[fmt.Sprint(i)]) // never twice
				seen[fmt.Sprint(i)] = true
			}
		}
	}
	is.Equal(len(seen), 5)
	is.Equal(e.statuses()["sent"], 5)
}

// After the last retry a message is failed, not retried forever.
func TestMailerGivesUpAfterTheLastRetry(t *testing.T) {
	is := is.New(t)
	e := newMailEnv(t)
	ts := startSMTP(t, modeStartTLS)
	ts.setFailing(true)
	sender, err := email.NewSMTP(email.SMTPConfig{URL: "smtp://troco@" + ts.addr, Password: "s3cret", From: "faturas@padaria.com.br", TLSConfig: ts.tlsConfig()})
	is.NoErr(err)
	m := email.New(email.Options{DB: e.DB, Clock: e.Clock, Live: sender})
	e.sendInvoices(1, "ana@example.com")
	now := e.Clock.Now()
	for _, d := range append([]time.Duration{0}, email.Retries...) {
		now = now.Add(d)
		is.NoErr(m.Run(context.Background(), now))
	}
	is.Equal(e.statuses()["failed"], 1)
	ts.mu.Lock()
	is.Equal(ts.tries, len(email.Retries)+1)
	ts.mu.Unlock()
}

// A server that stops answering cannot hold a run: after half a lease no new send starts, and
// the messages not tried stay pending for the next run.
func TestMailerRunStopsStartingSendsAfterHalfALease(t *testing.T) {
	is := is.New(t)
	e := newMailEnv(t)
	ts := startSMTP(t, modeStartTLS)
	ts.mu.Lock()
	ts.hang = 3 * time.Second
	ts.mu.Unlock()
	sender, err := email.NewSMTP(email.SMTPConfig{URL: "smtp://troco@" + ts.addr, Password: "s3cret", From: "faturas@padaria.com.br",
		TLSConfig: ts.tlsConfig(), Timeout: time.Second})
	is.NoErr(err)
	m := email.New(email.Options{DB: e.DB, Clock: e.Clock, Live: sender, Workers: 1, Lease: 2 * time.Second})
	e.sendInvoices(10, "ana@example.com")
	is.NoErr(m.Run(context.Background(), e.Clock.Now()))
	ts.mu.Lock()
	tries := ts.tries
	ts.mu.Unlock()
	is.True(tries <= 3)                   // it stopped starting sends (10 without the limit)
	is.Equal(e.statuses()["pending"], 10) // and lost none
	is.Equal(len(ts.messages()), 0)
}

// A recipient the server rejects for good (550) is failed at once, not retried for days.
func TestMailerFailsARejectedRecipientAtOnce(t *testing.T) {
	is := is.New(t)
	e := newMailEnv(t)
	ts := startSMTP(t, modeStartTLS)
	sender, err := email.NewSMTP(email.SMTPConfig{URL: "smtp://troco@" + ts.addr, Password: "s3cret", From: "faturas@padaria.com.br", TLSConfig: ts.tlsConfig()})
	is.NoErr(err)
	m := email.New(email.Options{DB: e.DB, Clock: e.Clock, Live: sender})
	e.sendInvoices(1, "nobody@example.com")
	is.NoErr(m.Run(context.Background(), e.Clock.Now()))
	is.Equal(e.statuses()["failed"], 1)
	is.Equal(len(ts.messages()), 0)
}

// Two mailers (two replicas) on the same database: every message is sent exactly once.
func TestMailerReplicasSendEachMessageOnce(t *testing.T) {
	is := is.New(t)
	e := newMailEnv(t)
	ts := startSMTP(t, modeStartTLS)
	sender, err := email.NewSMTP(email.SMTPConfig{URL: "smtp://troco@" + ts.addr, Password: "s3cret", From: "faturas@padaria.com.br", TLSConfig: ts.tlsConfig()})
	is.NoErr(err)
	e.sendInvoices(40, "ana@example.com")
	var wg sync.WaitGroup
	for range 2 {
		m := email.New(email.Options{DB: e.DB, Clock: e.Clock, Live: sender, Batch: 5})
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.Run(context.Background(), e.Clock.Now()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	is.Equal(len(ts.messages()), 40)
	is.Equal(e.statuses()["sent"], 40)
}

// Kinds whose events come from billing (renewal notices, cancellations) render from the emitted
// JSON objects, including fields this branch's invoices do not have yet.
func TestBuildBillingKinds(t *testing.T) {
	is := is.New(t)
	ny := email.Zone("America/New_York")
	renew := time.Date(2027, 3, 1, 3, 30, 0, 0, time.UTC) // 22:30 on Feb 28 in New York
	inv := map[string]any{"id": "inv_1", "number": "PQ-0042", "amount_due": float64(4990), "customer": "cus_1",
		"next_payment_attempt": renew.Format(time.RFC3339), "hosted_invoice_url": "https://pay.example/inv_1?s=x", "invoice_pdf": "https://pay.example/inv_1.pdf"}
	for _, c := range []struct {
		kind, lang string
		want       []string
	}{
		{domain.EmailInvoiceUpcoming, "en", []string{"Feb 28, 2027", "R$49.90", "https://pay.example/inv_1?s=x"}},
		{domain.EmailInvoiceUpcoming, "pt-BR", []string{"28/02/2027", "R$ 49,90"}},
		{domain.EmailPaymentFailed, "pt-BR", []string{"Vamos tentar de novo em 28/02/2027 às 22:30", "PQ-0042", "https://pay.example/inv_1.pdf"}},
		{domain.EmailInvoice, "en", []string{"PQ-0042", "View and pay the invoice", "Download PDF"}},
	} {
		in := email.Input{Kind: c.kind, Lang: pages.Lang(c.lang), Zone: ny, Brand: email.Brand{Name: "Padaria"}, Invoice: inv, CustomerName: "Ana Souza"}
		content, err := email.Build(in)
		is.NoErr(err)
		text, html, err := email.Render(content)
		is.NoErr(err)
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s/%s: text lacks %q:\n%s", c.kind, c.lang, w, text)
			}
		}
		is.True(strings.Contains(html, "<html lang=\""+c.lang+"\""))
	}
	sub := map[string]any{"id": "sub_1", "customer": "cus_1", "canceled_at": renew.Format(time.RFC3339)}
	content, err := email.Build(email.Input{Kind: domain.EmailSubscriptionCanceled, Lang: pages.PtBR, Zone: ny, Brand: email.Brand{Name: "Padaria"}, Subscription: sub})
	is.NoErr(err)
	is.Equal(content.Subject, "Sua assinatura de Padaria foi cancelada")
	text, _, _ := email.Render(content)
	is.True(strings.Contains(text, "28/02/2027")) // the customer's day, not UTC's

	// The events that will carry them map to their kinds.
	for typ, kind := range map[string]string{"invoice.upcoming": domain.EmailInvoiceUpcoming, "invoice.payment_failed": domain.EmailPaymentFailed} {
		tr, ok := domain.EmailForEvent(typ, &domain.Invoice{ID: "inv_1", CollectionMethod: "charge_automatically"}, nil)
		is.True(ok)
		is.Equal(tr.Kind, kind)
	}
	sub1 := "sub_1"
	tr, ok := domain.EmailForEvent("invoice.upcoming", &domain.Invoice{Subscription: &sub1}, nil) // a preview has no id
	is.True(ok)
	is.Equal(tr.RelatedObject, "sub_1")
	tr, ok = domain.EmailForEvent("customer.subscription.deleted", &domain.Subscription{ID: "sub_1"}, nil)
	is.True(ok)
	is.Equal(tr.Kind, domain.EmailSubscriptionCanceled)
	_, ok = domain.EmailForEvent("invoice.finalized", &domain.Invoice{ID: "inv_1", CollectionMethod: "charge_automatically"}, nil)
	is.True(!ok) // charged automatically: no "invoice" e-mail
}

func TestRenderEscapesAndNeutralisesHeaders(t *testing.T) {
	is := is.New(t)
	c, err := email.Build(email.Input{Kind: domain.EmailRefund, Lang: pages.PtBR, Zone: email.Zone(""), CustomerName: "<script>alert(1)</script>",
		Brand:  email.Brand{Name: "Loja\r\nBcc: evil@x.com", Color: "red;background:url(x)", Logo: "javascript:alert(1)"},
		Refund: &domain.Refund{ID: "re_1", Amount: 1500}, EventAt: time.Now()})
	is.NoErr(err)
	is.True(!strings.ContainsAny(c.Subject, "\r\n")) // one header line
	_, html, err := email.Render(c)
	is.NoErr(err)
	is.True(!strings.Contains(html, "<script>"))    // escaped
	is.True(!strings.Contains(html, "javascript:")) // no script URL
	is.True(!strings.Contains(html, "url(x)"))      // colour validated
	is.Equal(email.Header("a\r\nb\tc\u2028d"), "a b c d")
	is.True(!email.ValidRecipient("a\"b@example.com"))
	is.True(!email.ValidRecipient("ana@example.com\r\nBcc: x@y.com"))
	is.True(email.ValidRecipient("ana.souza+loja@example.com.br"))
	is.Equal(email.Locale([]string{"fr", "en-GB"}), pages.En)
	is.Equal(email.Locale([]string{"fr"}), pages.PtBR)
	is.Equal(email.Locale(nil), pages.PtBR)
}

// A worker whose lease expired and was taken over cannot renew it: it does not send.
func TestEmailLeaseTakenOverCannotBeRenewed(t *testing.T) {
	is := is.New(t)
	e := newMailEnv(t)
	e.sendInvoices(1, "ana@example.com")
	now := e.Clock.Now()
	lease := func(at time.Time) []db.EmailClaim {
		var got []db.EmailClaim
		is.NoErr(e.DB.Write(context.Background(), func(tx *db.Tx) error {
			cands, err := tx.DueEmails(at, nil, 10)
			if err != nil {
				return err
			}
			got, err = tx.LeaseEmails(cands, at, at.Add(time.Minute))
			return err
		}))
		return got
	}
	first := lease(now)
	is.Equal(len(first), 1)
	is.Equal(len(lease(now.Add(30*time.Second))), 0) // still leased
	second := lease(now.Add(2 * time.Minute))        // the first worker stalled: taken over
	is.Equal(len(second), 1)
	var renewed bool
	is.NoErr(e.DB.Write(context.Background(), func(tx *db.Tx) error {
		var err error
		renewed, err = tx.RenewEmailLease(&first[0], now.Add(5*time.Minute))
		return err
	}))
	is.True(!renewed) // the stalled worker must not send
	is.NoErr(e.DB.Write(context.Background(), func(tx *db.Tx) error {
		var err error
		renewed, err = tx.RenewEmailLease(&second[0], now.Add(5*time.Minute))
		return err
	}))
	is.True(renewed) // the new holder may
}
