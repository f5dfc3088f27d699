package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"troco/server/processors"
	"troco/server/processors/apipix"
	"troco/server/processors/apipix/pixtest"
	"troco/server/processors/cielo"
	"troco/server/processors/cielo/cielotest"
	"troco/server/tlsutil"
)

// liveFlags are the live processor settings shared by serve and processors check. Secrets are
// read from files, never given on the command line.
type liveFlags struct {
	cardProvider, cieloBase, cieloQuery, cieloMerchant, cieloKeyFile, cieloCA                    *string
	pixProvider, pixBase, pixToken, pixClientID, pixSecretFile, pixCert, pixKey, pixChave, pixCA *string
	pixWebhookCA, pixAccount                                                                     *string
}

func addLiveFlags(fs *flagSet) *liveFlags {
	return &liveFlags{
		cardProvider:  fs.str("card-provider", "", "live card processor: cielo (Cielo API 3.0); empty: live cards answer 503 processor_unavailable"),
		cieloBase:     fs.str("cielo-base-url", "https://api.cieloecommerce.cielo.com.br", "Cielo transactional API"),
		cieloQuery:    fs.str("cielo-query-url", "https://apiquery.cieloecommerce.cielo.com.br", "Cielo query API"),
		cieloMerchant: fs.str("cielo-merchant-id", "", "Cielo MerchantId"),
		cieloKeyFile:  fs.str("cielo-merchant-key-file", "", "file holding the Cielo MerchantKey"),
		cieloCA:       fs.str("cielo-ca", "", "extra roots (PEM) for Cielo's server certificate; the system's otherwise"),
		pixProvider:   fs.str("pix-provider", "", "live PIX processor: api-pix (the Banco Central's API Pix, any PSP); empty: live PIX answers 503"),
		pixBase:       fs.str("pix-base-url", "", "the PSP's API Pix base URL (…/api/v2)"),
		pixToken:      fs.str("pix-token-url", "", "the PSP's OAuth 2.0 token URL"),
		pixClientID:   fs.str("pix-client-id", "", "OAuth client_id given by the PSP"),
		pixSecretFile: fs.str("pix-client-secret-file", "", "file holding the OAuth client_secret"),
		pixCert:       fs.str("pix-cert", "", "PEM client certificate for mutual TLS with the PSP (ICP-Brasil)"),
		pixKey:        fs.str("pix-key", "", "PEM private key of --pix-cert"),
		pixChave:      fs.str("pix-key-chave", "", "the receiving PIX key (chave) registered at the PSP"),
		pixCA:         fs.str("pix-ca", "", "extra roots (PEM) for the PSP's server certificate; the system's otherwise"),
		pixWebhookCA:  fs.str("pix-webhook-ca", "", "CA (PEM) of the PSP's client certificate: the PIX webhook accepts only requests signed by it"),
		pixAccount:    fs.str("pix-account", "", "AGENCIA/CONTA/TIPO (TIPO: CORRENTE, POUPANCA or PAGAMENTO): the account Pix Automático charges are paid into; empty: live Pix Automático charges are refused"),
	}
}

// liveSetup is what the flags configure.
type liveSetup struct {
	router    *processors.Router
	cielo     *cielo.Client
	pix       *apipix.Client
	webhookCA *x509.CertPool
}

// build checks the settings and makes the connectors; nothing configured is a nil router.
func (l *liveFlags) build(log *slog.Logger) (*liveSetup, error) {
	s := &liveSetup{}
	switch *l.cardProvider {
	case "":
	case "cielo":
		if *l.cieloMerchant == "" || *l.cieloKeyFile == "" {
			return nil, errors.New("--card-provider cielo needs --cielo-merchant-id and --cielo-merchant-key-file")
		}
		key, err := processors.ReadSecret(*l.cieloKeyFile)
		if err != nil {
			return nil, fmt.Errorf("--cielo-merchant-key-file: %w", err)
		}
		client, err := processors.HTTPClient(*l.cieloCA, nil)
		if err != nil {
			return nil, fmt.Errorf("--cielo-ca: %w", err)
		}
		s.cielo = cielo.New(cielo.Config{BaseURL: *l.cieloBase, QueryURL: *l.cieloQuery, MerchantID: *l.cieloMerchant, MerchantKey: key, Client: client, Log: log})
	default:
		return nil, fmt.Errorf("--card-provider must be cielo (or empty); got %q", *l.cardProvider)
	}
	switch *l.pixProvider {
	case "":
	case "api-pix":
		var missing []string
		for _, f := range []struct {
			name string
			v    *string
		}{{"--pix-base-url", l.pixBase}, {"--pix-token-url", l.pixToken}, {"--pix-client-id", l.pixClientID}, {"--pix-client-secret-file", l.pixSecretFile},
			{"--pix-cert", l.pixCert}, {"--pix-key", l.pixKey}, {"--pix-key-chave", l.pixChave}, {"--pix-webhook-ca", l.pixWebhookCA}} {
			if *f.v == "" {
				missing = append(missing, f.name)
			}
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("--pix-provider api-pix needs %s", strings.Join(missing, ", "))
		}
		secret, err := processors.ReadSecret(*l.pixSecretFile)
		if err != nil {
			return nil, fmt.Errorf("--pix-client-secret-file: %w", err)
		}
		cert, err := tls.LoadX509KeyPair(*l.pixCert, *l.pixKey)
		if err != nil {
			return nil, fmt.Errorf("--pix-cert/--pix-key: %w", err)
		}
		client, err := processors.HTTPClient(*l.pixCA, &cert)
		if err != nil {
			return nil, fmt.Errorf("--pix-ca: %w", err)
		}
		if s.webhookCA, err = processors.LoadPool(*l.pixWebhookCA); err != nil {
			return nil, fmt.Errorf("--pix-webhook-ca: %w", err)
		}
		var account *apipix.RecAccount
		if *l.pixAccount != "" {
			a, err := apipix.ParseRecAccount(*l.pixAccount)
			if err != nil {
				return nil, err
			}
			account = &a
		}
		s.pix = apipix.New(apipix.Config{BaseURL: *l.pixBase, TokenURL: *l.pixToken, ClientID: *l.pixClientID, ClientSecret: secret, Chave: *l.pixChave,
			Client: client, Log: log, RecAccount: account})
	default:
		return nil, fmt.Errorf("--pix-provider must be api-pix (or empty); got %q", *l.pixProvider)
	}
	if s.cielo != nil || s.pix != nil {
		s.router = &processors.Router{}
		if s.cielo != nil {
			s.router.Card = s.cielo
		}
		if s.pix != nil {
			s.router.Pix = s.pix
		}
	}
	return s, nil
}

// processorsCheck is `troco processors check`: it verifies the configured credentials against
// the providers (a Cielo query; an API Pix token over mTLS and the key's webhook).
func processorsCheck(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "processors check")
	lf := addLiveFlags(fs)
	if _, err := fs.parse(args); err != nil {
		return err
	}
	s, err := lf.build(slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return err
	}
	if s.router == nil {
		return errors.New("no live processor configured: give --card-provider cielo and/or --pix-provider api-pix with their settings")
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var failed error
	if s.cielo != nil {
		if err := s.cielo.Check(ctx); err != nil {
			fmt.Fprintf(env.Stdout, "cards (cielo): FAILED: %v\n", err)
			failed = errors.Join(failed, err)
		} else {
			fmt.Fprintln(env.Stdout, "cards (cielo): ok: the MerchantId and MerchantKey are accepted")
		}
	}
	if s.pix != nil {
		if err := s.pix.Check(ctx); err != nil {
			fmt.Fprintf(env.Stdout, "pix (api-pix): FAILED: %v\n", err)
			failed = errors.Join(failed, err)
		} else {
			fmt.Fprintln(env.Stdout, "pix (api-pix): ok: mutual TLS, OAuth token and the receiving key are accepted")
		}
	}
	if failed != nil {
		return errors.New("processors check failed")
	}
	return nil
}

// devPSP is `troco dev psp`: conformance doubles of a PSP's API Pix (and, with --cielo, of
// Cielo) on loopback, with a throwaway PKI, so live mode can be tried on a laptop.
func devPSP(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "dev psp")
	dir := fs.str("dir", "./troco-dev-psp", "where the certificates and secret files are written")
	withCielo := fs.boolean("cielo", false, "also run the Cielo API 3.0 double")
	trocoCA := fs.str("troco-ca", "./troco-data/"+tlsutil.CAFile, "CA of troco's HTTPS certificate (the PSP's webhook calls trust it)")
	if _, err := fs.parse(args); err != nil {
		return err
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		return err
	}
	pki, err := pixtest.NewPKI()
	if err != nil {
		return err
	}
	caPath, certPath, keyPath, err := pki.WriteFiles(*dir)
	if err != nil {
		return err
	}
	secretPath := filepath.Join(*dir, "pix-client-secret")
	if err := os.WriteFile(secretPath, []byte("dev-psp-secret\n"), 0o600); err != nil {
		return err
	}
	psp := pixtest.New("dev-client", "dev-psp-secret", "dev@troco.example")
	roots := x509.NewCertPool()
	if b, err := os.ReadFile(*trocoCA); err == nil {
		roots.AppendCertsFromPEM(b)
	} else {
		fmt.Fprintf(env.Stderr, "warning: %s not readable (%v): webhooks to troco will fail until it exists; start troco serve first or pass --troco-ca\n", *trocoCA, err)
	}
	psp.WebhookClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pki.PSP}}}}
	pspLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	pspSrv := &http.Server{Handler: psp, TLSConfig: pixtest.TLSConfig(pki), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = pspSrv.ServeTLS(pspLn, "", "") }()
	defer pspSrv.Close()
	pspURL := "https://" + pspLn.Addr().String()

	w := env.Stdout
	fmt.Fprintf(w, "API Pix PSP double on %s (mutual TLS)\n", pspURL)
	serveFlags := []string{"--pix-provider api-pix", "--pix-base-url " + pspURL, "--pix-token-url " + pspURL + "/oauth/token", "--pix-client-id dev-client",
		"--pix-client-secret-file " + secretPath, "--pix-cert " + certPath, "--pix-key " + keyPath, "--pix-key-chave dev@troco.example",
		"--pix-ca " + caPath, "--pix-webhook-ca " + caPath, "--pix-account 0001/123456/CORRENTE"}
	if *withCielo {
		cd := cielotest.New("dev-merchant", "dev-merchant-key")
		keyFile := filepath.Join(*dir, "cielo-merchant-key")
		if err := os.WriteFile(keyFile, []byte("dev-merchant-key\n"), 0o600); err != nil {
			return err
		}
		cl, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		srv := &http.Server{Handler: cd, TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pki.Server}}, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.ServeTLS(cl, "", "") }()
		defer srv.Close()
		u := "https://" + cl.Addr().String()
		fmt.Fprintf(w, "Cielo API 3.0 double on %s (card number's last digit picks the outcome: 0, 1, 4 approve; 2 declines)\n", u)
		serveFlags = append(serveFlags, "--card-provider cielo", "--cielo-base-url "+u, "--cielo-query-url "+u, "--cielo-merchant-id dev-merchant",
			"--cielo-merchant-key-file "+keyFile, "--cielo-ca "+caPath)
	}
	fmt.Fprintf(w, "\nstart troco with:\n  troco serve %s\n", strings.Join(serveFlags, " \\\n    "))
	fmt.Fprintf(w, "\npay a PIX charge (its txid is the charge's payment_method_details.pix.txid):\n  curl --cacert %s --cert %s --key %s -X POST %s/dev/pay/<txid>\n",
		caPath, certPath, keyPath, pspURL)
	fmt.Fprintf(w, "\nPix Automático: approve a recurrence (its idRec is in troco's logs) and pay or refuse a recurring charge:\n  curl --cacert %s --cert %s --key %s -X POST %s/dev/rec/<idRec>/APROVADA\n  curl --cacert %s --cert %s --key %s -X POST '%s/dev/cobr/<txid>/refuse?codigo=AM02'\n",
		caPath, certPath, keyPath, pspURL, caPath, certPath, keyPath, pspURL)
	fmt.Fprintln(w, "\nCtrl-C stops the doubles (their state is in memory).")
	if env.Ready != nil {
		env.Ready(pspLn.Addr().String())
	}
	<-ctx.Done()
	return nil
}
