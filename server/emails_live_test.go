package server_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	"github.com/matryer/is"

	"troco/server"
	"troco/server/email"
	"troco/server/processors"
	"troco/server/processors/cielo"
	"troco/server/processors/cielo/cielotest"
)

// relaySMTP is a loopback SMTP relay (emersion/go-smtp) recording what it accepts.
type relaySMTP struct {
	mu   sync.Mutex
	msgs []string
	rcpt [][]string
}

type relaySession struct {
	r  *relaySMTP
	to []string
}

func (s *relaySession) AuthMechanisms() []string { return []string{sasl.Plain} }
func (s *relaySession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != "troco" || pass != "relay-secret" {
			return errors.New("bad credentials")
		}
		return nil
	}), nil
}
func (s *relaySession) Mail(string, *smtp.MailOptions) error { return nil }
func (s *relaySession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = append(s.to, to)
	return nil
}
func (s *relaySession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.r.mu.Lock()
	s.r.msgs = append(s.r.msgs, string(b))
	s.r.rcpt = append(s.r.rcpt, s.to)
	s.r.mu.Unlock()
	return nil
}
func (s *relaySession) Reset()        { s.to = nil }
func (s *relaySession) Logout() error { return nil }

type relayLog struct{}

func (relayLog) Printf(string, ...any) {}
func (relayLog) Println(...any)        {}

// A live card payment through the Cielo connector sends the customer's receipt by SMTP, with its
// receipt_url; nothing of it lands in the sandbox mailbox.
func TestLiveCardReceiptIsSentBySMTP(t *testing.T) {
	is := is.New(t)
	relay := &relaySMTP{}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &relaySession{r: relay}, nil }))
	srv.Domain, srv.AllowInsecureAuth, srv.ErrorLog = "localhost", true, relayLog{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	sender, err := email.NewSMTP(email.SMTPConfig{URL: "smtp://troco@" + ln.Addr().String() + "?starttls=none", Password: "relay-secret", From: "recibos@loja.com.br"})
	is.NoErr(err)

	cd := cielotest.New("merchant-0001", liveMerchantKey)
	cieloSrv := httptest.NewTLSServer(cd)
	t.Cleanup(cieloSrv.Close)
	cc := cielo.New(cielo.Config{BaseURL: cieloSrv.URL, QueryURL: cieloSrv.URL, MerchantID: "merchant-0001", MerchantKey: liveMerchantKey, Client: cieloSrv.Client()})
	e := newEnv(t, func(c *server.Config) {
		c.Live = &processors.Router{Card: cc}
		c.SMTP = sender
	})
	e.activate(t)

	cus := e.Do("POST", "/v1/customers", e.Live, map[string]any{"email": "cliente@example.com", "name": "Ana Souza"})
	is.Equal(cus.Status, 200)
	pi := e.payIntent(e.Live, 15000, map[string]any{"customer": cus.Str("id"), "payment_method_types": []string{"credit_card"}})
	r := e.payConfirm(e.Live, pi.Str("id"), map[string]any{"card": payCard(liveApprove)})
	is.Equal(r.Status, 200)
	is.Equal(r.Str("status"), "succeeded")
	ch := e.Do("GET", "/v1/charges/"+r.Str("latest_charge"), e.Live, nil)
	is.True(ch.Str("receipt_url") != "")

	deadline := time.Now().Add(10 * time.Second)
	for {
		is.NoErr(e.Jobs.RunDue(context.Background())) // the mailer job, now
		relay.mu.Lock()
		n := len(relay.msgs)
		relay.mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	relay.mu.Lock()
	defer relay.mu.Unlock()
	is.Equal(len(relay.msgs), 1) // the receipt, once
	is.Equal(relay.rcpt[0], []string{"cliente@example.com"})
	is.True(strings.Contains(relay.msgs[0], "R$ 150,00"))
	is.True(strings.Contains(strings.ReplaceAll(relay.msgs[0], "=\r\n", ""), "/receipts/"+ch.Str("id"))) // the receipt link (quoted-printable joined)
	is.Equal(len(e.mailbox(e.Test, "")), 0)                                                              // live mail never lands in the sandbox mailbox
}
