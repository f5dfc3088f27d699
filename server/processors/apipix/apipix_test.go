package apipix_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/server/domain"
	"troco/server/payments"
	"troco/server/processors/apipix"
	"troco/server/processors/apipix/pixtest"
)

func connector(t *testing.T) (*apipix.Client, *pixtest.Double) {
	t.Helper()
	pki, err := pixtest.NewPKI()
	if err != nil {
		t.Fatal(err)
	}
	d := pixtest.New("cid", "secret", "chave@example.com")
	srv := httptest.NewUnstartedServer(d)
	srv.TLS = pixtest.TLSConfig(pki)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pki.Pool(), Certificates: []tls.Certificate{pki.Client}}}}
	c := apipix.New(apipix.Config{BaseURL: srv.URL, TokenURL: srv.URL + "/oauth/token", ClientID: "cid", ClientSecret: "secret", Chave: "chave@example.com",
		Client: client, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	return c, d
}

// A PIX with a due date is a cobv with the debtor; the PSP's BR Code comes back, a lookup finds
// it (GET /cobv after /cob answers 404), and once paid the lookup reports the payment.
func TestChargeWithDueDateIsACobV(t *testing.T) {
	is := is.New(t)
	c, d := connector(t)
	ctx := context.Background()
	txid := payments.Reference("ch_due_date_test")
	due := time.Now().AddDate(0, 0, 5).Format("2006-01-02")
	res, err := c.StartAsync(ctx, payments.AsyncRequest{Method: domain.MethodPix, Reference: txid, Amount: 12345, DueDate: due, DueValidityDays: 30,
		PayerName: "Ana Souza", PayerDocument: "52998224725", FineRate: 200, InterestRate: 105})
	is.NoErr(err)
	is.True(strings.HasPrefix(res.Code, "000201"))
	kind, cob := d.Charge(txid)
	is.Equal(kind, "cobv")
	valor := cob["valor"].(map[string]any)
	is.Equal(valor["multa"], map[string]any{"modalidade": float64(2), "valorPerc": "2.00"}) // 200 bp: 2% once
	is.Equal(valor["juros"], map[string]any{"modalidade": float64(3), "valorPerc": "1.05"}) // 105 bp: 1.05% a month
	r, err := c.Lookup(ctx, payments.ChargeRef{Method: domain.MethodPix, Reference: txid})
	is.NoErr(err)
	is.True(r.Found && !r.Paid && !r.Expired)
	is.NoErr(d.Pay(txid, -1, false))
	r, err = c.Lookup(ctx, payments.ChargeRef{Method: domain.MethodPix, Reference: txid})
	is.NoErr(err)
	is.True(r.Paid)
	is.Equal(r.PaidAmount, int64(12345))

	// Without late fees the charge carries neither multa nor juros.
	txid2 := payments.Reference("ch_due_date_no_fees")
	_, err = c.StartAsync(ctx, payments.AsyncRequest{Method: domain.MethodPix, Reference: txid2, Amount: 500, DueDate: due, PayerName: "Ana Souza", PayerDocument: "11222333000181"})
	is.NoErr(err)
	_, cob = d.Charge(txid2)
	is.Equal(cob["valor"], map[string]any{"original": "5.00"})
	is.Equal(cob["devedor"].(map[string]any)["cnpj"], "11222333000181")

	// Without a debtor the PSP refuses it: nothing was created, the attempt fails at once.
	_, err = c.StartAsync(ctx, payments.AsyncRequest{Method: domain.MethodPix, Reference: payments.Reference("other"), Amount: 100, DueDate: due})
	is.True(err != nil)
}

// The txid is 26–35 letters and digits and the same for the same charge.
func TestReferenceIsAValidStableTxid(t *testing.T) {
	is := is.New(t)
	a, b := payments.Reference("ch_123"), payments.Reference("ch_123")
	is.Equal(a, b)
	is.True(len(a) >= 26 && len(a) <= 35)
	for _, r := range a {
		is.True((r >= 'a' && r <= 'z') || (r >= '0' && r <= '9'))
	}
	is.True(payments.Reference("ch_124") != a)
}

// A PSP that is unreachable: the error says the request was not sent (the attempt fails, no
// reconciliation needed).
func TestUnreachablePSPIsNotSent(t *testing.T) {
	is := is.New(t)
	c := apipix.New(apipix.Config{BaseURL: "https://127.0.0.1:1", TokenURL: "https://127.0.0.1:1/oauth/token", ClientID: "x", ClientSecret: "y", Chave: "k",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	_, err := c.StartAsync(context.Background(), payments.AsyncRequest{Method: domain.MethodPix, Reference: payments.Reference("z"), Amount: 100, Expires: time.Hour})
	is.True(errors.Is(err, payments.ErrNotSent))
}

// A PSP that does not list a concluded charge's PIX in GET /cob: the lookup finds the payment
// with GET /pix by txid.
func TestLookupFindsThePaymentWithGetPix(t *testing.T) {
	is := is.New(t)
	c, d := connector(t)
	d.OmitPixInCob = true
	ctx := context.Background()
	txid := payments.Reference("ch_get_pix")
	_, err := c.StartAsync(ctx, payments.AsyncRequest{Method: domain.MethodPix, Reference: txid, Amount: 990, Expires: time.Hour})
	is.NoErr(err)
	is.NoErr(d.Pay(txid, -1, false))
	r, err := c.Lookup(ctx, payments.ChargeRef{Method: domain.MethodPix, Reference: txid})
	is.NoErr(err)
	is.True(r.Paid)
	is.Equal(r.PaidAmount, int64(990))
	is.True(strings.HasPrefix(r.EndToEndID, "E"))
}
