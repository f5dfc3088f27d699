package main

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	"github.com/matryer/is"

	"troco/server/domain"
)

// loopbackSMTP is a plain SMTP relay on loopback (emersion/go-smtp) that records what it accepts.
type loopbackSMTP struct {
	mu   sync.Mutex
	msgs []string
	rcpt [][]string
}

type loopbackSession struct {
	s  *loopbackSMTP
	to []string
}

func (l *loopbackSession) AuthMechanisms() []string { return []string{sasl.Plain} }
func (l *loopbackSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != "troco" || pass != "relay-secret" {
			return errors.New("bad credentials")
		}
		return nil
	}), nil
}
func (l *loopbackSession) Mail(string, *smtp.MailOptions) error { return nil }
func (l *loopbackSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	l.to = append(l.to, to)
	return nil
}
func (l *loopbackSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	l.s.mu.Lock()
	l.s.msgs = append(l.s.msgs, string(b))
	l.s.rcpt = append(l.s.rcpt, l.to)
	l.s.mu.Unlock()
	return nil
}
func (l *loopbackSession) Reset()        { l.to = nil }
func (l *loopbackSession) Logout() error { return nil }

type quietLog struct{}

func (quietLog) Printf(string, ...any) {}
func (quietLog) Println(...any)        {}

// TestEndToEndLiveEmailBySMTP: `troco serve --smtp-url … --smtp-password-file … --smtp-from …`
// sends a live send_invoice invoice to the customer through the SMTP server, authenticated with
// the password from the file, while a test-mode message stays in the sandbox mailbox.
func TestEndToEndLiveEmailBySMTP(t *testing.T) {
	is := is.New(t)
	relay := &loopbackSMTP{}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &loopbackSession{s: relay}, nil }))
	srv.Domain, srv.AllowInsecureAuth, srv.ErrorLog = "localhost", true, quietLog{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	go srv.Serve(ln)
	defer srv.Close()

	dir := t.TempDir()
	passFile := filepath.Join(dir, "smtp-password")
	is.NoErr(os.WriteFile(passFile, []byte("relay-secret\n"), 0o600))
	dbPath := filepath.Join(dir, "troco.db")
	sandbox := domain.NewToken(false)
	addr := freeAddr(t)
	in := startServe(t, addr, envFrom(nil), "--addr", addr, "--db", dbPath, "--data-dir", filepath.Join(dir, "data"), "--sandbox-key", sandbox,
		"--allow-time-travel", "--smtp-url", "smtp://troco@"+ln.Addr().String()+"?starttls=none", "--smtp-password-file", passFile,
		"--smtp-from", "faturas@loja.com.br")

	// The banner prints a link to the sandbox mailbox, and it opens.
	m := regexp.MustCompile(`sandbox mailbox [^\n]*: (https://\S+)`).FindStringSubmatch(in.stdout.String())
	is.True(m != nil)
	res, err := in.client.Get(strings.Replace(m[1], "localhost", "127.0.0.1", 1))
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, 200)

	is.Equal(in.do("POST", "/v1/customers", sandbox, map[string]any{"email": "teste@example.com"}).status, 200)
	events := in.do("GET", "/v1/events?limit=1", sandbox, nil)
	org := events.body["data"].([]any)[0].(map[string]any)["organization"].(string)
	var live struct{ Token string }
	cliJSON(t, envFrom(nil), &live, "key", "create", "--org", org, "--env", "live", "--name", "mail", "--db", dbPath)

	// A test-mode payment: its receipt goes to the sandbox mailbox, never to the relay.
	tc := in.do("POST", "/v1/customers", sandbox, map[string]any{"email": "financeiro@cliente.com.br"})
	tpi := in.do("POST", "/v1/payment-intents", sandbox, map[string]any{"amount": 1000, "customer": tc.body["id"]})
	card := map[string]any{"number": "4242424242424242", "exp_month": 12, "exp_year": time.Now().Year() + 2, "cvc": "123"}
	is.Equal(in.do("POST", "/v1/payment-intents/"+tpi.body["id"].(string)+"/confirm", sandbox, map[string]any{"payment_method_type": "credit_card", "card": card}).status, 200)

	cus := in.do("POST", "/v1/customers", live.Token, map[string]any{"email": "financeiro@cliente.com.br", "name": "Ana Souza"})
	is.Equal(cus.status, 200)
	inv := in.do("POST", "/v1/invoices", live.Token, map[string]any{"customer": cus.body["id"], "collection_method": "send_invoice", "days_until_due": 5,
		"lines": []any{map[string]any{"amount": 12000, "description": "Consultoria"}}})
	is.Equal(inv.status, 200)
	fin := in.do("POST", "/v1/invoices/"+inv.body["id"].(string)+"/finalize", live.Token, nil)
	is.Equal(fin.status, 200)

	// The mailer job runs every 10 seconds; time travel runs it now.
	deadline := time.Now().Add(20 * time.Second)
	for {
		is.Equal(in.do("POST", "/v1/test-helpers/advance-clock", sandbox, map[string]any{"seconds": 1}).status, 200)
		relay.mu.Lock()
		n := len(relay.msgs)
		relay.mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	relay.mu.Lock()
	defer relay.mu.Unlock()
	is.Equal(len(relay.msgs), 1) // the live invoice e-mail, once
	is.Equal(relay.rcpt[0], []string{"financeiro@cliente.com.br"})
	is.True(strings.Contains(relay.msgs[0], "faturas@loja.com.br"))
	is.True(strings.Contains(relay.msgs[0], fin.body["number"].(string)))
	// The test-mode receipt never reached the relay: it is in the sandbox mailbox.
	box := in.do("GET", "/v1/test-helpers/emails?to=financeiro@cliente.com.br", sandbox, nil)
	is.Equal(len(box.ids()), 1)
	is.Equal(box.body["data"].([]any)[0].(map[string]any)["kind"], "receipt")
	is.NoErr(in.stop())
}
