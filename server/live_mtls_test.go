package server_test

import (
	"crypto/tls"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/server/processors/apipix/pixtest"
)

// TestClientCertificateOfAnotherAuthorityStillReachesTheAPI: the listener asks for the PSP's
// client certificate only so that the PIX webhook can check it. A browser or API client that
// presents a certificate of another authority (an e-CPF installed in the browser, a client
// configured for mutual TLS elsewhere) still reaches the API and the hosted pages; only the
// webhook refuses it (401).
func TestClientCertificateOfAnotherAuthorityStillReachesTheAPI(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t, 2*time.Second)
	other, err := pixtest.NewPKI()
	is.NoErr(err)
	roots := e.PSP.WebhookClient.Transport.(*http.Transport).TLSClientConfig.RootCAs
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{other.Client}}}}

	res, err := c.Get(e.URL() + "/healthz")
	is.NoErr(err) // the handshake succeeds
	res.Body.Close()
	is.Equal(res.StatusCode, 200)

	req, err := http.NewRequest("GET", e.URL()+"/v1/payment-intents", nil)
	is.NoErr(err)
	req.Header.Set("Authorization", "Bearer "+e.Live)
	res, err = c.Do(req)
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, 200) // the API answers as usual

	res, err = c.Post(e.URL()+"/processors/pix/webhook/pix", "application/json", strings.NewReader(`{"pix":[]}`))
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, 401) // the webhook still insists on the PSP's certificate
}
