package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"troco/db"
	"troco/server/domain"
)

// mutate runs op in a write transaction and answers with its result. The change, its events and
// (when the request carries an Idempotency-Key) the stored response commit together, so a crash
// or a retry can never see one without the others. An op error rolls back op's writes unless it
// is a *domain.Error with KeepChanges (a declined payment that must still be recorded).
func (s *Server) mutate(w http.ResponseWriter, r *http.Request, op func(tx *db.Tx, a domain.Actor) (any, error)) {
	auth := authFrom(r.Context())
	st, _ := r.Context().Value(ctxIdem).(*idemState)
	var status int
	var body []byte
	err := s.db.Write(context.WithoutCancel(r.Context()), func(tx *db.Tx) error {
		var result any
		var opErr error
		spErr := tx.Savepoint(func() error {
			result, opErr = op(tx, auth.Actor)
			if e, ok := domain.AsError(opErr); ok && e.KeepChanges {
				return nil
			}
			return opErr
		})
		switch {
		case opErr == nil && spErr == nil:
			b, err := json.Marshal(result)
			if err != nil {
				return err
			}
			status, body = http.StatusOK, b
		case opErr != nil:
			e, ok := domain.AsError(opErr)
			if !ok {
				return opErr // unknown failure: roll back everything, answer 500
			}
			status, body = e.Status, mustErrorBody(e)
		default:
			return spErr
		}
		if st != nil && storable(status) {
			err := tx.StoreIdempotentResponse(st.scope.OrgID, st.scope.Livemode, st.key, tx.Now.Add(-idempotencyTTL).Unix(),
				db.IdempotentResponse{Fingerprint: st.fingerprint, Status: status, Body: body})
			if errors.Is(err, db.ErrConflict) {
				return errIdempotencyRace
			}
			if err != nil {
				return err
			}
			st.stored = true
		}
		return nil
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeRaw(w, status, body)
}

// read runs op in a read transaction and answers with its result.
func (s *Server) read(w http.ResponseWriter, r *http.Request, op func(tx *db.Tx, a domain.Actor) (any, error)) {
	auth := authFrom(r.Context())
	var result any
	err := s.db.Read(r.Context(), func(tx *db.Tx) error {
		var err error
		result, err = op(tx, auth.Actor)
		return err
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, result)
}
