package server_test

import (
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/matryer/is"

	"troco/server/pix"
)

// getRaw fetches a public (key-less) URL of the test server.
func (e *testEnv) getRaw(t *testing.T, url string) (int, http.Header, []byte) {
	t.Helper()
	res, err := e.Client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, b
}

// verifyLocation checks a location answer with an independent JOSE implementation (jwx): the
// protected header's jku names the key set, which is fetched and verifies the ES256 signature.
func verifyLocation(t *testing.T, e *testEnv, body []byte) map[string]any {
	t.Helper()
	is := is.New(t)
	msg, err := jws.Parse(body)
	is.NoErr(err) // compact JWS
	hdr := msg.Signatures()[0].ProtectedHeaders()
	alg, _ := hdr.Algorithm()
	is.Equal(alg.String(), "ES256")
	jku, ok := hdr.JWKSetURL()
	is.True(ok) // jku present
	is.Equal(jku, e.URL()+"/pix/v2/jwks.json")
	status, h, keys := e.getRaw(t, jku)
	is.Equal(status, 200)
	is.Equal(h.Get("Content-Type"), "application/json")
	set, err := jwk.Parse(keys)
	is.NoErr(err)
	payload, err := jws.Verify(body, jws.WithKeySet(set))
	is.NoErr(err) // signature verifies against the published key set
	var p map[string]any
	is.NoErr(json.Unmarshal(payload, &p))
	return p
}

// TestPixLocationJWS: the URL inside a dynamic BR Code answers a JWS that verifies with the
// published JWKS; unknown and expired ids are 404; the API variant is scoped to its owner.
func TestPixLocationJWS(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	pi := e.payIntent(e.Test, 12345, map[string]any{"description": "Pedido 42"}).Str("id")
	r := e.payConfirm(e.Test, pi, map[string]any{"payment_method_type": "pix", "customer_email": "pending@example.com",
		"customer_name": "Ana Souza", "customer_document": "529.982.247-25"})
	is.Equal(r.Status, 200)
	code, err := pix.Parse(digStr(r.Body, "next_action.pix.code"))
	is.NoErr(err)
	code.TxID = locationID(code)
	is.Equal("https://"+strings.TrimSuffix(code.URL, "/pix/v2/"+code.TxID), e.URL()) // dynamic code: this server's location URL

	status, h, body := e.getRaw(t, "https://"+code.URL)
	is.Equal(status, 200)
	is.Equal(h.Get("Content-Type"), "application/jose")
	p := verifyLocation(t, e, body)
	is.Equal(p["txid"], code.TxID)
	is.Equal(p["status"], "ATIVA")
	is.Equal(dig(p, "valor.original"), "123.45")
	is.Equal(dig(p, "devedor.cpf"), "52998224725")
	is.Equal(dig(p, "devedor.nome"), "Ana Souza")
	is.Equal(dig(p, "calendario.expiracao"), float64(86400))
	is.Equal(p["revisao"], float64(0))
	is.True(p["chave"] != "")
	is.Equal(p["solicitacaoPagador"], "Pedido 42")

	// The owner's API key gets the same payload; another organization and the other
	// environment get 404, as for an unknown txid.
	api, _ := e.TryDo("GET", "/v1/pix-payloads/"+code.TxID, e.Test, nil) // not JSON: a JWS
	is.Equal(api.Status, 200)
	is.Equal(api.Header.Get("Content-Type"), "application/jose")
	is.Equal(verifyLocation(t, e, api.Raw)["txid"], code.TxID)
	_, other := e.NewOrg("Outra Ltda", false)
	for _, key := range []string{other, e.Live} {
		r := e.Do("GET", "/v1/pix-payloads/"+code.TxID, key, nil)
		is.Equal(r.Status, 404) // another organization's or environment's txid
		is.Equal(r.ErrCode(), "resource_missing")
	}
	status, _, _ = e.getRaw(t, e.URL()+"/pix/v2/0000000000000000000000000")
	is.Equal(status, 404) // unknown id

	// Paid: CONCLUIDA. Expired: 404.
	is.Equal(e.Do("POST", "/v1/test-helpers/payment-intents/"+pi+"/succeed", e.Test, nil).Status, 200)
	_, _, body = e.getRaw(t, "https://"+code.URL)
	is.Equal(verifyLocation(t, e, body)["status"], "CONCLUIDA")

	pi2 := e.payIntent(e.Test, 5000, nil).Str("id")
	r = e.payConfirm(e.Test, pi2, map[string]any{"payment_method_type": "pix", "customer_email": "pending@example.com"})
	code2, _ := pix.Parse(digStr(r.Body, "next_action.pix.code"))
	status, _, _ = e.getRaw(t, "https://"+code2.URL)
	is.Equal(status, 200)
	e.Clock.Advance(25 * time.Hour)
	status, _, _ = e.getRaw(t, "https://"+code2.URL)
	is.Equal(status, 404) // past the code's expiry
}

// TestBoletoHibrido: every boleto carries a PIX code for the same charge; paying it by PIX
// settles the intent once and a later payment by barcode is refused (and the other way round).
func TestBoletoHibrido(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct{ first, second string }{{"pix", "boleto"}, {"boleto", "pix"}} {
		t.Run("paid by "+tc.first+" then by "+tc.second, func(t *testing.T) {
			is := is.New(t)
			e := withT(e, t)
			pi := e.payIntent(e.Test, 25990, nil).Str("id")
			r := e.payConfirm(e.Test, pi, boletoBuyer("pending@example.com"))
			is.Equal(r.Status, 200)
			is.Equal(r.Str("status"), "pending")
			raw := digStr(r.Body, "next_action.boleto.pix_code")
			is.NoErr(pix.Verify(raw)) // a valid BR Code beside the barcode and line
			code, _ := pix.Parse(raw)
			is.Equal(code.TxID, "***") // dynamic: the txid is the location's
			code.TxID = locationID(code)
			is.Equal(code.Amount, int64(25990)) // the same amount
			is.True(code.SingleUse)
			is.True(digStr(r.Body, "next_action.boleto.digitable_line") != "")

			ch := e.Do("GET", "/v1/charges/"+r.Str("latest_charge"), e.Test, nil)
			is.Equal(digStr(ch.Body, "payment_method_details.boleto.pix_code"), raw)
			is.Equal(digStr(ch.Body, "payment_method_details.boleto.pix_txid"), code.TxID)
			is.Equal(dig(ch.Body, "payment_method_details.boleto.paid_with"), nil)

			// The location of the printed PIX answers a charge with a due date (cobv).
			_, _, body := e.getRaw(t, "https://"+code.URL)
			p := verifyLocation(t, e, body)
			is.Equal(dig(p, "calendario.dataDeVencimento"), digStr(r.Body, "next_action.boleto.due_date"))
			is.Equal(p["status"], "ATIVA")

			// The printable boleto and its QR.
			page := e.getPage(t, digStr(r.Body, "next_action.boleto.url"))
			is.True(strings.Contains(page, `data-testid="boleto-pix-qr"`))
			is.True(strings.Contains(page, raw))
			status, h, _ := e.getRaw(t, e.URL()+"/payment-intents/"+pi+"/pix.png?client_secret="+r.Str("client_secret"))
			is.Equal(status, 200)
			is.Equal(h.Get("Content-Type"), "image/png")

			first := e.Do("POST", "/v1/test-helpers/payment-intents/"+pi+"/succeed", e.Test, map[string]any{"paid_with": tc.first})
			is.Equal(first.Status, 200)
			is.Equal(first.Str("status"), "succeeded")
			ch = e.Do("GET", "/v1/charges/"+r.Str("latest_charge"), e.Test, nil)
			is.Equal(digStr(ch.Body, "payment_method_details.boleto.paid_with"), tc.first)

			second := e.Do("POST", "/v1/test-helpers/payment-intents/"+pi+"/succeed", e.Test, map[string]any{"paid_with": tc.second})
			is.Equal(second.Status, 409) // already paid the other way
			is.Equal(second.ErrCode(), "payment_intent_unexpected_state")

			is.Equal(e.payCount(e.Test, "/v1/charges?payment_intent="+pi), 1)
			is.Equal(e.payCount(e.Test, "/v1/transactions?payment_intent="+pi), 1) // money recorded once
			is.Equal(len(e.payEvents(e.Test, "payment_intent.succeeded", pi)), 1)
			_, _, body = e.getRaw(t, "https://"+code.URL)
			is.Equal(verifyLocation(t, e, body)["status"], "CONCLUIDA")
		})
	}
	t.Run("bad paid_with", func(t *testing.T) {
		is := is.New(t)
		e := withT(e, t)
		pi := e.payIntent(e.Test, 5000, nil).Str("id")
		e.payConfirm(e.Test, pi, boletoBuyer("pending@example.com"))
		for _, tc := range []struct {
			path string
			body map[string]any
		}{
			{"succeed", map[string]any{"paid_with": "cheque"}},
			{"expire", map[string]any{"paid_with": "pix"}},
		} {
			r := e.Do("POST", "/v1/test-helpers/payment-intents/"+pi+"/"+tc.path, e.Test, tc.body)
			is.Equal(r.Status, 400)
			is.Equal(r.ErrParam(), "paid_with")
		}
		pixPI := e.payIntent(e.Test, 5000, nil).Str("id")
		e.payConfirm(e.Test, pixPI, map[string]any{"payment_method_type": "pix", "customer_email": "pending@example.com"})
		r := e.Do("POST", "/v1/test-helpers/payment-intents/"+pixPI+"/succeed", e.Test, map[string]any{"paid_with": "boleto"})
		is.Equal(r.Status, 400) // a PIX charge has no barcode
		is.Equal(r.ErrParam(), "paid_with")
		is.Equal(e.Do("GET", "/v1/payment-intents/"+pi, e.Test, nil).Str("status"), "pending") // nothing changed
	})
}

// locationID is the last path segment of a dynamic code's location URL (its txid).
func locationID(c pix.Code) string {
	return c.URL[strings.LastIndexByte(c.URL, '/')+1:]
}

// getPage fetches an HTML page of the test server by absolute URL.
func (e *testEnv) getPage(t *testing.T, url string) string {
	t.Helper()
	status, _, b := e.getRaw(t, url)
	if status != 200 {
		t.Fatalf("GET %s: %d %s", url, status, b)
	}
	return string(b)
}

// TestPixLocationJWKSCertificateChain: the location signing key is published with its
// certificate (x5c, x5t, x5t#S256); go-jose accepts the set (it checks that the certificate holds
// the key and matches the thumbprints), crypto/x509 verifies the chain for the location's host,
// and a location's JWS verifies with the certificate's key.
func TestPixLocationJWKSCertificateChain(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	status, _, raw := e.getRaw(t, e.URL()+"/pix/v2/jwks.json")
	is.Equal(status, 200)
	var doc struct {
		Keys []map[string]any `json:"keys"`
	}
	is.NoErr(json.Unmarshal(raw, &doc))
	is.Equal(len(doc.Keys), 1)
	is.True(doc.Keys[0]["x5c"] != nil)
	is.True(doc.Keys[0]["x5t#S256"] != nil)
	var set jose.JSONWebKeySet
	is.NoErr(json.Unmarshal(raw, &set)) // go-jose checks x5c against the key and the thumbprints
	k := set.Keys[0]
	is.True(len(k.Certificates) >= 1)
	leaf := k.Certificates[0]
	is.True(leaf.KeyUsage&x509.KeyUsageDigitalSignature != 0)
	pub, ok := k.Key.(*ecdsa.PublicKey)
	is.True(ok)
	is.True(pub.Equal(leaf.PublicKey)) // the certificate is the signing key's
	roots := x509.NewCertPool()
	roots.AddCert(k.Certificates[len(k.Certificates)-1])
	host, _, err := net.SplitHostPort(strings.TrimPrefix(e.URL(), "https://"))
	is.NoErr(err)
	_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: host, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	is.NoErr(err) // the chain verifies for the location's host

	// A location's JWS verifies with the certificate's key.
	pi := e.payIntent(e.Test, 1000, nil).Str("id")
	r := e.payConfirm(e.Test, pi, map[string]any{"payment_method_type": "pix", "customer_email": "pending@example.com"})
	is.Equal(r.Status, 200)
	code, err := pix.Parse(digStr(r.Body, "next_action.pix.code"))
	is.NoErr(err)
	_, _, body := e.getRaw(t, "https://"+code.URL)
	obj, err := jose.ParseSigned(string(body), []jose.SignatureAlgorithm{jose.ES256})
	is.NoErr(err)
	_, err = obj.Verify(leaf.PublicKey)
	is.NoErr(err)
}
