package email

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// SMTPConfig is how live e-mail leaves troco (serve --smtp-url, --smtp-password-file,
// --smtp-from, --smtp-dkim-*).
type SMTPConfig struct {
	// URL is smtp://user@host:587 (STARTTLS, required unless ?starttls=opportunistic or
	// ?starttls=none) or smtps://user@host:465 (implicit TLS). A password in the URL is accepted,
	// but Password (read from a file) is preferred and wins.
	URL      string
	Password string
	// From is the sender address; the display name is the organization's.
	From string
	// DKIM signs every message when Domain, Selector and KeyPEM are set.
	DKIMDomain, DKIMSelector string
	DKIMKeyPEM               []byte
	// TLSConfig overrides the client TLS configuration (tests trust their own CA).
	TLSConfig *tls.Config
	// Timeout bounds one connection and send (default 30 s).
	Timeout time.Duration
}

// SMTPSender sends messages through one SMTP server with go-mail, which writes the MIME
// (multipart/alternative, RFC 2047 headers, quoted-printable bodies).
type SMTPSender struct {
	opts  []gomail.Option
	host  string
	from  string
	fromD string
}

// NewSMTP checks cfg and returns a sender; nothing is dialled until the first Send.
func NewSMTP(cfg SMTPConfig) (*SMTPSender, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || u.Host == "" {
		return nil, errors.New("--smtp-url must look like smtp://user@mail.example.com:587 or smtps://user@mail.example.com:465")
	}
	from, err := mail.ParseAddress(cfg.From)
	if err != nil || strings.ContainsAny(cfg.From, "\r\n") {
		return nil, errors.New("--smtp-from must be an e-mail address such as recibos@loja.com.br")
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	host := u.Hostname()
	opts := []gomail.Option{gomail.WithTimeout(timeout)}
	tlsConf := cfg.TLSConfig
	if tlsConf == nil {
		tlsConf = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	tlsConf = tlsConf.Clone()
	if tlsConf.ServerName == "" {
		tlsConf.ServerName = host
	}
	opts = append(opts, gomail.WithTLSConfig(tlsConf))
	authType := gomail.SMTPAuthAutoDiscover
	port := 0
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil || port < 1 || port > 65535 {
			return nil, errors.New("--smtp-url has an invalid port")
		}
	}
	switch u.Scheme {
	case "smtps":
		if port == 0 {
			port = 465
		}
		opts = append(opts, gomail.WithSSL())
	case "smtp":
		if port == 0 {
			port = 587
		}
		switch u.Query().Get("starttls") {
		case "", "required":
			opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
		case "opportunistic":
			opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
		case "none":
			opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
			// Without TLS the only mechanism offered in clear is PLAIN, which the SMTP client
			// then allows to a loopback relay only.
			authType = gomail.SMTPAuthPlain
		default:
			return nil, errors.New("--smtp-url: starttls must be required, opportunistic or none")
		}
	default:
		return nil, fmt.Errorf("--smtp-url scheme must be smtp or smtps, not %q", u.Scheme)
	}
	opts = append(opts, gomail.WithPort(port))
	if user := u.User.Username(); user != "" {
		pass, _ := u.User.Password()
		if cfg.Password != "" {
			pass = cfg.Password
		}
		opts = append(opts, gomail.WithSMTPAuth(authType), gomail.WithUsername(user), gomail.WithPassword(pass))
	}
	if cfg.DKIMDomain != "" || cfg.DKIMSelector != "" || len(cfg.DKIMKeyPEM) > 0 {
		if cfg.DKIMDomain == "" || cfg.DKIMSelector == "" || len(cfg.DKIMKeyPEM) == 0 {
			return nil, errors.New("DKIM signing needs --smtp-dkim-domain, --smtp-dkim-selector and --smtp-dkim-key-file together")
		}
		key, err := gomail.PrivKeyFromPEM(cfg.DKIMKeyPEM)
		if err != nil {
			return nil, fmt.Errorf("--smtp-dkim-key-file: %w", err)
		}
		opts = append(opts, gomail.WithAlwaysDKIMSign(gomail.NewDKIMSigner(cfg.DKIMDomain, cfg.DKIMSelector, key)))
	}
	// Validate the options once, so a bad configuration fails at start-up.
	if _, err := gomail.NewClient(host, opts...); err != nil {
		return nil, fmt.Errorf("--smtp-url: %w", err)
	}
	_, dom, _ := strings.Cut(from.Address, "@")
	return &SMTPSender{opts: opts, host: host, from: from.Address, fromD: dom}, nil
}

// Send delivers one message; an error means the server did not accept it (the mailer retries).
func (s *SMTPSender) Send(ctx context.Context, m Message) error {
	msg := gomail.NewMsg()
	if err := msg.FromFormat(Header(m.FromName), s.from); err != nil {
		return fmt.Errorf("email: from: %w", err)
	}
	if m.ReplyTo != "" {
		if err := msg.ReplyTo(m.ReplyTo); err != nil {
			return fmt.Errorf("email: reply-to: %w", err)
		}
	}
	if strings.ContainsAny(m.To, "\r\n") {
		return errors.New("email: recipient contains a line break")
	}
	if err := msg.To(m.To); err != nil {
		return fmt.Errorf("email: to: %w", err)
	}
	msg.Subject(Header(m.Subject))
	msg.SetMessageIDWithValue(m.ID + "@" + s.fromD)
	msg.SetDate()
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	c, err := gomail.NewClient(s.host, s.opts...)
	if err != nil {
		return err
	}
	err = c.DialAndSendWithContext(ctx, msg)
	var se *gomail.SendError
	if errors.As(err, &se) && se.Reason == gomail.ErrSMTPRcptTo && !se.IsTemp() && se.ErrorCode() >= 500 {
		return fmt.Errorf("%w: %v", ErrRecipientRejected, err)
	}
	return err
}

// ErrRecipientRejected is a permanent (5xx) refusal of the recipient address: retrying cannot
// help, so the message is failed at once. Every other failure is retried.
var ErrRecipientRejected = errors.New("email: the SMTP server rejected the recipient")
