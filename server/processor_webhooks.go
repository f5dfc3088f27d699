package server

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"troco/server/domain"
	"troco/server/payments"
)

// PixWebhookTLS makes a TLS configuration ask connecting clients for a certificate signed by
// the PSP's CA (named in the handshake) without requiring one and without checking it there:
// browsers and API clients connect as before, even one that presents a certificate of another
// authority, and the PIX webhook refuses a request whose certificate does not chain to
// --pix-webhook-ca (pspCertificate).
func PixWebhookTLS(cfg *tls.Config, ca *x509.CertPool) {
	cfg.ClientAuth = tls.RequestClientCert
	cfg.ClientCAs = ca
}

// peerCertificates returns the TLS client certificates of a request's connection.
func peerCertificates(r *http.Request) []*x509.Certificate {
	if r.TLS != nil {
		return r.TLS.PeerCertificates
	}
	if rc, ok := r.Context().Value(ctxRawConn).(*rawConn); ok {
		if tc, ok := rc.Conn.(*tls.Conn); ok {
			return tc.ConnectionState().PeerCertificates
		}
	}
	return nil
}

// pixWebhookBody is the API Pix callback: {"pix":[{"endToEndId","txid","valor","horario",…}]}.
type pixWebhookBody struct {
	Pix []struct {
		EndToEndID string `json:"endToEndId"`
		TxID       string `json:"txid"`
		Valor      string `json:"valor"`
		Horario    string `json:"horario"`
	} `json:"pix"`
}

// handlePixWebhook receives the PSP's notifications of PIX payments. The request must carry the
// PSP's TLS client certificate (chained to --pix-webhook-ca, for client authentication); each
// payment is then confirmed with the PSP (GET /pix/{e2eid}) before it settles a charge.
func (s *Server) handlePixWebhook() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.pspCertificate(w, r) {
			return
		}
		raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			s.writeError(w, r, domain.Invalid("", "The body is too large or unreadable."))
			return
		}
		var body pixWebhookBody
		if err := json.Unmarshal(raw, &body); err != nil {
			s.writeError(w, r, domain.Invalid("", "The body must be the API Pix notification: {\"pix\":[…]}."))
			return
		}
		var failed error
		for _, p := range body.Pix {
			amount, ok := parseValor(p.Valor)
			if !ok || p.TxID == "" || p.EndToEndID == "" {
				s.log.Warn("pix webhook: payment without txid, endToEndId or a valid valor ignored", "txid", p.TxID, "end_to_end_id", p.EndToEndID)
				continue
			}
			if err := s.pay.PixNotified(r.Context(), s.db, payments.PixNotification{TxID: p.TxID, EndToEndID: p.EndToEndID, Amount: amount}); err != nil {
				s.log.Error("pix webhook: could not confirm a payment with the PSP; it will be retried", "txid", p.TxID, "err", err)
				failed = errors.Join(failed, err)
			}
		}
		if failed != nil {
			// The PSP retries a notification that was not acknowledged; reconciliation also polls.
			s.writeError(w, r, &domain.Error{Status: http.StatusServiceUnavailable, Type: domain.TypeAPI, Code: "processing_error",
				Message: "Some payments could not be confirmed with the PSP; send the notification again."})
			return
		}
		w.WriteHeader(http.StatusOK)
	})
}

// parseValor reads an API Pix amount ("123.45") as centavos.
func parseValor(v string) (int64, bool) {
	whole, frac, ok := strings.Cut(v, ".")
	if !ok || len(frac) != 2 || whole == "" || len(whole) > 10 {
		return 0, false
	}
	w, err1 := strconv.ParseInt(whole, 10, 64)
	f, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil || w < 0 || f < 0 {
		return 0, false
	}
	return w*100 + f, true
}

// pspCertificate checks that a PSP webhook request carries the PSP's TLS client certificate
// (chained to --pix-webhook-ca, for client authentication); otherwise it answers and returns false.
func (s *Server) pspCertificate(w http.ResponseWriter, r *http.Request) bool {
	if s.cfg.PixWebhookCA == nil || s.cfg.Live == nil {
		s.writeError(w, r, &domain.Error{Status: http.StatusServiceUnavailable, Type: domain.TypeAPI, Code: domain.CodeProcessorUnavailable,
			Message: "The PIX webhook is not configured: start serve with --pix-provider api-pix and --pix-webhook-ca."})
		return false
	}
	certs := peerCertificates(r)
	if len(certs) == 0 {
		s.log.Warn("pix webhook: refused a request without a client certificate", "remote", r.RemoteAddr)
		s.writeError(w, r, &domain.Error{Status: http.StatusUnauthorized, Type: domain.TypeAuthentication, Code: domain.CodeAuthenticationFailed,
			Message: "The PIX webhook requires the PSP's TLS client certificate."})
		return false
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	if _, err := certs[0].Verify(x509.VerifyOptions{Roots: s.cfg.PixWebhookCA, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		s.log.Warn("pix webhook: refused a client certificate not issued by --pix-webhook-ca", "remote", r.RemoteAddr, "subject", certs[0].Subject.String())
		s.writeError(w, r, &domain.Error{Status: http.StatusUnauthorized, Type: domain.TypeAuthentication, Code: domain.CodeAuthenticationFailed,
			Message: "The PIX webhook's client certificate is not the PSP's."})
		return false
	}
	return true
}

// recWebhookBody is the API Pix recurrence callback: {"recs":[{"idRec","status",…}]}.
type recWebhookBody struct {
	Recs []struct {
		IDRec  string `json:"idRec"`
		Status string `json:"status"`
	} `json:"recs"`
}

// cobrWebhookBody is the API Pix recurring-charge callback: {"cobsr":[{"idRec","txid",…}]}.
type cobrWebhookBody struct {
	CobsR []struct {
		IDRec  string `json:"idRec"`
		TxID   string `json:"txid"`
		Status string `json:"status"`
	} `json:"cobsr"`
}

// handleRecWebhook receives the PSP's notifications of Pix Automático recurrences (approved,
// rejected, canceled by the payer, expired); each is read back from the PSP before it changes an
// authorization.
func (s *Server) handleRecWebhook() http.Handler {
	return s.pspWebhook(`{"recs":[…]}`, func(r *http.Request, raw []byte) (bool, error) {
		var body recWebhookBody
		if err := json.Unmarshal(raw, &body); err != nil {
			return false, nil
		}
		var failed error
		for _, n := range body.Recs {
			if n.IDRec == "" {
				continue
			}
			if err := s.pay.RecNotified(r.Context(), s.db, n.IDRec); err != nil {
				s.log.Error("pix automatico webhook: could not confirm a recurrence with the PSP; it will be retried", "id_rec", n.IDRec, "err", err)
				failed = errors.Join(failed, err)
			}
		}
		return true, failed
	})
}

// handleCobRWebhook receives the PSP's notifications of recurring charges (an attempt paid or
// refused); each charge is read back from the PSP before it settles anything.
func (s *Server) handleCobRWebhook() http.Handler {
	return s.pspWebhook(`{"cobsr":[…]}`, func(r *http.Request, raw []byte) (bool, error) {
		var body cobrWebhookBody
		if err := json.Unmarshal(raw, &body); err != nil {
			return false, nil
		}
		var failed error
		for _, n := range body.CobsR {
			if n.TxID == "" {
				continue
			}
			if err := s.pay.CobRNotified(r.Context(), s.db, n.TxID); err != nil {
				s.log.Error("pix automatico webhook: could not confirm a recurring charge with the PSP; it will be retried", "txid", n.TxID, "err", err)
				failed = errors.Join(failed, err)
			}
		}
		return true, failed
	})
}

// pspWebhook is a PSP notification endpoint: the client certificate is checked, the body read
// (1 MiB at most) and handed to apply, which says whether it was the expected shape and whether
// some notification could not be confirmed (503: the PSP sends it again).
func (s *Server) pspWebhook(shape string, apply func(r *http.Request, raw []byte) (bool, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.pspCertificate(w, r) {
			return
		}
		raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			s.writeError(w, r, domain.Invalid("", "The body is too large or unreadable."))
			return
		}
		ok, failed := apply(r, raw)
		if !ok {
			s.writeError(w, r, domain.Invalid("", "The body must be the API Pix notification: %s.", shape))
			return
		}
		if failed != nil {
			s.writeError(w, r, &domain.Error{Status: http.StatusServiceUnavailable, Type: domain.TypeAPI, Code: "processing_error",
				Message: "Some notifications could not be confirmed with the PSP; send the notification again."})
			return
		}
		w.WriteHeader(http.StatusOK)
	})
}
