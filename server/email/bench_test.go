package email_test

import (
	"context"
	"testing"
	"time"

	"troco/server/domain"
	"troco/server/email"
)

// sandboxEmails queues n test-mode invoice e-mails (the work the sandbox mailbox does per event).
func (e *mailEnv) sandboxEmails(n int) {
	e.t.Helper()
	live := e.Live
	e.Live = domain.Actor{Scope: domain.Scope{OrgID: e.Org.ID, Livemode: false}}
	defer func() { e.Live = live }()
	e.sendInvoices(n, "ana@example.com")
}

// BenchmarkDeliverSandbox measures rendering and storing test-mode messages (no network): the
// figure is messages per second through the mailer.
func BenchmarkDeliverSandbox(b *testing.B) {
	const batch = 500
	e := newMailEnv(b)
	m := email.New(email.Options{DB: e.DB, Clock: e.Clock})
	b.ResetTimer()
	var total int
	var spent time.Duration
	for range b.N {
		b.StopTimer()
		e.sandboxEmails(batch)
		b.StartTimer()
		start := time.Now()
		if err := m.Run(context.Background(), e.Clock.Now()); err != nil {
			b.Fatal(err)
		}
		spent += time.Since(start)
		total += batch
	}
	b.ReportMetric(float64(total)/spent.Seconds(), "msgs/s")
}

// BenchmarkDeliverSMTP measures live delivery to a loopback SMTP server over STARTTLS with AUTH
// (one connection per message, 4 in flight): messages per second accepted by the server.
func BenchmarkDeliverSMTP(b *testing.B) {
	const batch = 200
	e := newMailEnv(b)
	ts := startSMTP(b, modeStartTLS)
	sender, err := email.NewSMTP(email.SMTPConfig{URL: "smtp://troco@" + ts.addr, Password: "s3cret", From: "faturas@padaria.com.br", TLSConfig: ts.tlsConfig()})
	if err != nil {
		b.Fatal(err)
	}
	m := email.New(email.Options{DB: e.DB, Clock: e.Clock, Live: sender})
	b.ResetTimer()
	var total int
	var spent time.Duration
	for range b.N {
		b.StopTimer()
		e.sendInvoices(batch, "ana@example.com")
		b.StartTimer()
		start := time.Now()
		if err := m.Run(context.Background(), e.Clock.Now()); err != nil {
			b.Fatal(err)
		}
		spent += time.Since(start)
		total += batch
	}
	b.ReportMetric(float64(total)/spent.Seconds(), "msgs/s")
	if got := len(ts.messages()); got != total {
		b.Fatalf("server received %d of %d", got, total)
	}
}
