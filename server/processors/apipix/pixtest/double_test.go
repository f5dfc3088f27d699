package pixtest

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestDevPayTellsWhatHappened: `troco dev psp`'s POST /dev/pay/{txid} says whether the charge
// is unknown (404), was already paid (409, not paid twice: a dynamic BR Code is paid once), or
// was paid but the webhook to troco failed (502 naming the webhook's answer; reconciliation
// finds the payment), instead of calling every failure "Cobrança não encontrada".
func TestDevPayTellsWhatHappened(t *testing.T) {
	is := is.New(t)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	defer down.Close()
	d := New("id", "secret", "chave@example.com")
	d.cobs["tr1"] = &cob{TxID: "tr1", Status: "ATIVA", Chave: "chave@example.com", amount: 1000}
	d.webhooks["chave@example.com"] = down.URL
	pay := func(txid string) (int, string) {
		r := httptest.NewRequest("POST", "/dev/pay/"+txid, nil)
		r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{{}}}
		w := httptest.NewRecorder()
		d.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	st, body := pay("nosuch")
	is.Equal(st, 404)
	st, body = pay("tr1")
	is.Equal(st, 502)                              // paid, but troco's webhook answered 503
	is.True(strings.Contains(body, "503"))         // the webhook's answer is named
	is.True(!strings.Contains(body, "encontrada")) // not "charge not found"
	is.Equal(d.cobs["tr1"].Status, "CONCLUIDA")    // the payment happened
	st, _ = pay("tr1")
	is.Equal(st, 409) // a concluded charge is not paid again
	is.Equal(len(d.cobs["tr1"].Pix), 1)
}
