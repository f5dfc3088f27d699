package server

import (
	"encoding/json"
	"net/http"
	"strconv"

	"troco/db"
	"troco/server/domain"
)

// The dynamic BR Code's location. A dynamic PIX code carries a URL (…/pix/v2/{txid}) instead of
// a key; the payer's bank fetches it and gets the charge as a JWS (ES256) signed by this server,
// whose header's jku names the key set at /pix/v2/jwks.json. The location is public (the payer's
// bank has no key to present); GET /v1/pix-payloads/{txid} answers the same JWS to the owning
// organization's API key, and 404 to any other organization or environment.

// jwksPath is where the location signing keys are published.
const jwksPath = "/pix/v2/jwks.json"

// handlePixLocation serves GET /pix/v2/:id: the signed payload of txid :id, or the key set.
func (s *Server) handlePixLocation() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		if id == "jwks.json" {
			body, err := json.Marshal(s.pixKey.JWKS())
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			h := w.Header()
			h.Set("Content-Type", "application/json")
			h.Set("Cache-Control", "public, max-age=300")
			h.Set("Content-Length", strconv.Itoa(len(body)))
			w.WriteHeader(http.StatusOK)
			w.Write(body)
			return
		}
		s.servePixPayload(w, r, id, nil)
	})
}

// handlePixPayloadAPI serves GET /v1/pix-payloads/:id with an API key (scoped).
func (s *Server) handlePixPayloadAPI() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sc := authFrom(r.Context()).Actor.Scope
		s.servePixPayload(w, r, pathID(r), &sc)
	})
}

func (s *Server) servePixPayload(w http.ResponseWriter, r *http.Request, txid string, caller *domain.Scope) {
	var p any
	err := s.db.Read(r.Context(), func(tx *db.Tx) error {
		var err error
		p, err = s.pay.LocationPayload(tx, txid, caller)
		return err
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	jws, err := s.pixKey.Sign(p, s.origin(r)+jwksPath)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/jose")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(jws)))
	w.WriteHeader(http.StatusOK)
	w.Write([]byte(jws))
}
