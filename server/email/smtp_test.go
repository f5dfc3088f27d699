package email_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	"github.com/matryer/is"

	"troco/server/email"
	"troco/server/tlsutil"
)

// testSMTP is a real SMTP server (emersion/go-smtp) on a loopback port, recording what it accepts.
type testSMTP struct {
	addr    string
	caPool  *x509.CertPool
	user    string
	pass    string
	mu      sync.Mutex
	got     []received
	failing bool          // answer 451 to every DATA (a server that is down for the moment)
	hang    time.Duration // wait this long before reading DATA (a server that stopped answering)
	tries   int
}

type received struct {
	from   string
	to     []string
	data   []byte
	tls    bool
	authed bool
}

type smtpMode int

const (
	modeStartTLS smtpMode = iota
	modeImplicitTLS
	modePlain // no TLS offered at all
)

func startSMTP(t testing.TB, mode smtpMode) *testSMTP {
	t.Helper()
	dir := t.TempDir()
	lc, err := tlsutil.EnsureLocal(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(lc.CertPath, lc.KeyPath)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, _ := os.ReadFile(lc.CAPath)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	ts := &testSMTP{caPool: pool, user: "troco", pass: "s3cret"}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		_, isTLS := c.TLSConnectionState()
		return &smtpSession{ts: ts, c: c, tlsAtStart: isTLS}, nil
	}))
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	srv.ErrorLog = nopLogger{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tlsConf := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	switch mode {
	case modeStartTLS:
		srv.TLSConfig = tlsConf
	case modeImplicitTLS:
		ln = tls.NewListener(ln, tlsConf)
	case modePlain:
		srv.AllowInsecureAuth = true
	}
	ts.addr = ln.Addr().String()
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ts
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}
func (nopLogger) Println(...any)        {}

func (ts *testSMTP) setFailing(v bool) {
	ts.mu.Lock()
	ts.failing = v
	ts.mu.Unlock()
}

func (ts *testSMTP) messages() []received {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]received(nil), ts.got...)
}

func (ts *testSMTP) tlsConfig() *tls.Config {
	return &tls.Config{RootCAs: ts.caPool, ServerName: "localhost", MinVersion: tls.VersionTLS12}
}

type smtpSession struct {
	ts         *testSMTP
	c          *smtp.Conn
	tlsAtStart bool
	authed     bool
	from       string
	to         []string
}

func (s *smtpSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *smtpSession) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != s.ts.user || password != s.ts.pass {
			return errors.New("invalid credentials")
		}
		s.authed = true
		return nil
	}), nil
}

func (s *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	s.from = from
	return nil
}

func (s *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	if strings.HasPrefix(to, "nobody@") {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"}
	}
	s.to = append(s.to, to)
	return nil
}

func (s *smtpSession) Data(r io.Reader) error {
	s.ts.mu.Lock()
	hang := s.ts.hang
	s.ts.tries++ // every DATA the client starts
	s.ts.mu.Unlock()
	time.Sleep(hang)
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.ts.mu.Lock()
	defer s.ts.mu.Unlock()
	if s.ts.failing {
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
	}
	_, isTLS := s.c.TLSConnectionState()
	s.ts.got = append(s.ts.got, received{from: s.from, to: s.to, data: b, tls: isTLS || s.tlsAtStart, authed: s.authed})
	return nil
}

func (s *smtpSession) Reset()        { s.from, s.to = "", nil }
func (s *smtpSession) Logout() error { return nil }

func sample(id string) email.Message {
	return email.Message{ID: id, FromName: "Padaria Pão Quente", To: "cliente@example.com", Subject: "Recibo de Padaria Pão Quente: R$ 12,50",
		Text: "Olá, Ana.\nRecebemos o seu pagamento.", HTML: "<p>Olá, <b>Ana</b>.</p>", ReplyTo: "contato@padaria.com.br"}
}

// parts returns the message's headers and its text/plain and text/html bodies.
func parts(t *testing.T, raw []byte) (*mail.Message, string, string) {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("parse message: %v", err)
	}
	mt, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("content type %q: %v", m.Header.Get("Content-Type"), err)
	}
	var text, html string
	mr := multipart.NewReader(m.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(p) // multipart decodes quoted-printable
		switch {
		case strings.HasPrefix(p.Header.Get("Content-Type"), "text/plain"):
			text = string(b)
		case strings.HasPrefix(p.Header.Get("Content-Type"), "text/html"):
			html = string(b)
		}
	}
	return m, text, html
}

func TestSMTPStartTLSWithAuth(t *testing.T) {
	is := is.New(t)
	ts := startSMTP(t, modeStartTLS)
	s, err := email.NewSMTP(email.SMTPConfig{URL: "smtp://troco@" + ts.addr, Password: "s3cret", From: "recibos@loja.com.br", TLSConfig: ts.tlsConfig()})
	is.NoErr(err)
	is.NoErr(s.Send(context.Background(), sample("em_1")))
	got := ts.messages()
	is.Equal(len(got), 1)
	is.True(got[0].tls)    // STARTTLS was used
	is.True(got[0].authed) // AUTH with the password from the config
	is.Equal(got[0].to, []string{"cliente@example.com"})
	m, text, html := parts(t, got[0].data)
	dec := new(mime.WordDecoder)
	subj, _ := dec.DecodeHeader(m.Header.Get("Subject"))
	is.Equal(subj, "Recibo de Padaria Pão Quente: R$ 12,50") // RFC 2047 round trip
	from, err := mail.ParseAddress(m.Header.Get("From"))
	is.NoErr(err)
	is.Equal(from.Name, "Padaria Pão Quente")
	is.Equal(from.Address, "recibos@loja.com.br")
	is.True(strings.Contains(m.Header.Get("Message-Id"), "em_1@loja.com.br"))
	is.True(strings.Contains(m.Header.Get("Reply-To"), "contato@padaria.com.br")) // replies reach the merchant
	is.True(strings.Contains(text, "Recebemos o seu pagamento."))
	is.True(strings.Contains(html, "<b>Ana</b>"))
}

func TestSMTPImplicitTLS(t *testing.T) {
	is := is.New(t)
	ts := startSMTP(t, modeImplicitTLS)
	s, err := email.NewSMTP(email.SMTPConfig{URL: "smtps://troco:s3cret@" + ts.addr, From: "recibos@loja.com.br", TLSConfig: ts.tlsConfig()})
	is.NoErr(err)
	is.NoErr(s.Send(context.Background(), sample("em_2")))
	got := ts.messages()
	is.Equal(len(got), 1)
	is.True(got[0].tls)
	is.True(got[0].authed) // the password in the URL
}

func TestSMTPRefusesWithoutTLSOrWithWrongPassword(t *testing.T) {
	is := is.New(t)
	plain := startSMTP(t, modePlain)
	s, err := email.NewSMTP(email.SMTPConfig{URL: "smtp://troco@" + plain.addr, Password: "s3cret", From: "recibos@loja.com.br", TLSConfig: plain.tlsConfig()})
	is.NoErr(err)
	is.True(s.Send(context.Background(), sample("em_3")) != nil) // STARTTLS is required by default: nothing in clear
	is.Equal(len(plain.messages()), 0)

	// starttls=none is an explicit choice (a local relay).
	s, err = email.NewSMTP(email.SMTPConfig{URL: "smtp://" + plain.addr + "?starttls=none", From: "recibos@loja.com.br"})
	is.NoErr(err)
	is.NoErr(s.Send(context.Background(), sample("em_4")))
	is.Equal(len(plain.messages()), 1)

	tlsSrv := startSMTP(t, modeStartTLS)
	s, err = email.NewSMTP(email.SMTPConfig{URL: "smtp://troco@" + tlsSrv.addr, Password: "wrong", From: "recibos@loja.com.br", TLSConfig: tlsSrv.tlsConfig()})
	is.NoErr(err)
	is.True(s.Send(context.Background(), sample("em_5")) != nil) // authentication fails
	is.Equal(len(tlsSrv.messages()), 0)
}

func TestSMTPConfigErrors(t *testing.T) {
	for _, c := range []email.SMTPConfig{
		{URL: "http://mail.example.com", From: "a@b.com"},
		{URL: "smtp://", From: "a@b.com"},
		{URL: "smtp://mail.example.com:99999", From: "a@b.com"},
		{URL: "smtp://mail.example.com?starttls=maybe", From: "a@b.com"},
		{URL: "smtp://mail.example.com", From: "not an address"},
		{URL: "smtp://mail.example.com", From: "a@b.com\r\nBcc: x@y.com"},
		{URL: "smtp://mail.example.com", From: "a@b.com", DKIMDomain: "b.com"},
		{URL: "smtp://mail.example.com", From: "a@b.com", DKIMDomain: "b.com", DKIMSelector: "s1", DKIMKeyPEM: []byte("garbage")},
	} {
		if _, err := email.NewSMTP(c); err == nil {
			t.Errorf("NewSMTP(%+v) accepted a bad configuration", c)
		}
	}
}

// Names, subjects and addresses come from organizations and customers: a line break in them must
// never become a header or a recipient of its own.
func TestSMTPHeaderInjectionIsNeutralised(t *testing.T) {
	is := is.New(t)
	ts := startSMTP(t, modeStartTLS)
	s, err := email.NewSMTP(email.SMTPConfig{URL: "smtp://troco@" + ts.addr, Password: "s3cret", From: "recibos@loja.com.br", TLSConfig: ts.tlsConfig()})
	is.NoErr(err)
	m := sample("em_6")
	m.FromName = "Loja\r\nBcc: evil@attacker.example"
	m.Subject = "Recibo\r\nBcc: evil@attacker.example\nX-Evil: 1"
	is.NoErr(s.Send(context.Background(), m))
	got := ts.messages()
	is.Equal(len(got), 1)
	is.Equal(got[0].to, []string{"cliente@example.com"}) // no extra recipient
	msg, _, _ := parts(t, got[0].data)
	is.Equal(msg.Header.Get("Bcc"), "")    // no injected header
	is.Equal(msg.Header.Get("X-Evil"), "") // none
	dec := new(mime.WordDecoder)
	subj, _ := dec.DecodeHeader(msg.Header.Get("Subject"))
	is.True(!strings.ContainsAny(subj, "\r\n")) // one line
	is.True(strings.Contains(subj, "Recibo"))

	bad := sample("em_7")
	bad.To = "cliente@example.com\r\nRCPT TO:<evil@attacker.example>"
	is.True(s.Send(context.Background(), bad) != nil) // refused
	is.Equal(len(ts.messages()), 1)
}

func TestSMTPDKIMSignature(t *testing.T) {
	is := is.New(t)
	ts := startSMTP(t, modeStartTLS)
	_, key, err := ed25519.GenerateKey(rand.Reader)
	is.NoErr(err)
	der, err := x509.MarshalPKCS8PrivateKey(key)
	is.NoErr(err)
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	s, err := email.NewSMTP(email.SMTPConfig{URL: "smtp://troco@" + ts.addr, Password: "s3cret", From: "recibos@loja.com.br", TLSConfig: ts.tlsConfig(),
		DKIMDomain: "loja.com.br", DKIMSelector: "troco", DKIMKeyPEM: keyPEM})
	is.NoErr(err)
	is.NoErr(s.Send(context.Background(), sample("em_8")))
	got := ts.messages()
	is.Equal(len(got), 1)
	m, _, _ := parts(t, got[0].data)
	sig := m.Header.Get("Dkim-Signature")
	is.True(strings.Contains(sig, "d=loja.com.br")) // signed for the domain
	is.True(strings.Contains(sig, "s=troco"))       // with the selector
}
