package server

import (
	"bytes"
	"encoding/json"
	"net/http"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
	"troco/server/webhooks"
)

// webhookEnv is what the endpoint operations need from the server's configuration.
func (s *Server) webhookEnv() core.WebhookEnv {
	return core.WebhookEnv{Secrets: s.cfg.Secrets, AllowPrivate: s.cfg.AllowPrivateWebhooks}
}

// checkWebhookURL resolves a live endpoint's host before the write transaction (DNS never runs on
// the single writer); core re-checks the rules that need no network inside the transaction.
func (s *Server) checkWebhookURL(r *http.Request, p *core.WebhookEndpointParams) error {
	if !p.URL.Set || p.URL.Null {
		return nil
	}
	return webhooks.CheckURL(r.Context(), p.URL.V, authFrom(r.Context()).Actor.Livemode, s.cfg.AllowPrivateWebhooks, nil)
}

// mutateShowingSecret is mutate for the two answers that show a signing secret (create and
// rotate). mutate commits, and stores for Idempotency-Key replays, the endpoint without its
// secret; the secret is added to this answer only. troco never stores a secret in clear, so a
// replay answers the endpoint without it (rotate the secret if the first answer was lost).
func (s *Server) mutateShowingSecret(w http.ResponseWriter, r *http.Request, op func(tx *db.Tx, a domain.Actor) (*domain.WebhookEndpoint, error)) {
	s.mutateShowingSecretAs(w, r, http.StatusOK, op)
}

// mutateShowingSecretAs is mutateShowingSecret answering ok (201 for /api/v1 creation).
func (s *Server) mutateShowingSecretAs(w http.ResponseWriter, r *http.Request, ok int, op func(tx *db.Tx, a domain.Actor) (*domain.WebhookEndpoint, error)) {
	var secret string
	cw := &captureWriter{header: w.Header()}
	s.mutateAs(cw, r, ok, func(tx *db.Tx, a domain.Actor) (any, error) {
		ep, err := op(tx, a)
		if err != nil {
			return nil, err
		}
		shown := *ep
		secret, shown.Secret = ep.Secret, ""
		return &shown, nil
	})
	body := bytes.TrimSuffix(cw.body.Bytes(), []byte("\n"))
	if cw.status == ok && secret != "" && bytes.HasSuffix(body, []byte("}")) {
		quoted, _ := json.Marshal(secret)
		body = append(append(append(body[:len(body)-1:len(body)-1], `,"secret":`...), quoted...), '}')
	}
	writeRaw(w, cw.status, body)
}

// captureWriter keeps a handler's answer so it can be amended before it is sent.
type captureWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (c *captureWriter) Header() http.Header { return c.header }

func (c *captureWriter) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
}

func (c *captureWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	return c.body.Write(b)
}

func (s *Server) handleWebhookEndpointCreate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p core.WebhookEndpointParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		if err := s.checkWebhookURL(r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutateShowingSecret(w, r, func(tx *db.Tx, a domain.Actor) (*domain.WebhookEndpoint, error) {
			return core.CreateWebhookEndpoint(tx, a, s.webhookEnv(), p)
		})
	})
}

func (s *Server) handleWebhookEndpointGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.GetWebhookEndpoint(tx, a.Scope, id) })
	})
}

func (s *Server) handleWebhookEndpointUpdate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p core.WebhookEndpointParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		if err := s.checkWebhookURL(r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			return core.UpdateWebhookEndpoint(tx, a, s.webhookEnv(), id, p)
		})
	})
}

func (s *Server) handleWebhookEndpointDelete() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.DeleteWebhookEndpoint(tx, a, id) })
	})
}

func (s *Server) handleWebhookEndpointList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseList(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			items, more, err := tx.ListWebhookEndpoints(a.Scope, q.ListParams)
			return listOf(r, items, more), err
		})
	})
}

func (s *Server) handleWebhookEndpointRotateSecret() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p core.RotateSecretParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutateShowingSecret(w, r, func(tx *db.Tx, a domain.Actor) (*domain.WebhookEndpoint, error) {
			return core.RotateWebhookSecret(tx, a, s.webhookEnv(), id, p)
		})
	})
}

func (s *Server) handleWebhookDeliveryList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		q, err := parseList(r, "event", "status")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		f := db.WebhookDeliveryFilter{Event: q.str("event"), Status: q.str("status")}
		if f.Status != "" && f.Status != domain.DeliverySucceeded && f.Status != domain.DeliveryFailed {
			s.writeError(w, r, domain.Invalid("status", "status must be succeeded or failed."))
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			if _, err := core.GetWebhookEndpoint(tx, a.Scope, id); err != nil {
				return nil, err
			}
			items, more, err := tx.ListWebhookDeliveries(a.Scope, id, f, q.ListParams)
			return listOf(r, items, more), err
		})
	})
}

func (s *Server) handleEventRedeliver() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p core.RedeliverParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.RedeliverEvent(tx, a, id, p) })
	})
}
