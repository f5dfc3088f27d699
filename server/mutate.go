package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"strings"

	"troco/db"
	"troco/server/domain"
	"troco/server/payments"
)

// mutate runs op in a write transaction and answers with its result. The change, its events and
// (when the request carries an Idempotency-Key) the stored response commit together, so a crash
// or a retry can never see one without the others. An op error rolls back op's writes unless it
// is a *domain.Error with KeepChanges (a declined payment that must still be recorded).
//
// An op that reserves a call to a live processor answers an error with Pending (see
// payments.Processor): the reservation commits, the processor is called outside the
// transaction, and op runs again to apply the answer; only that final answer is stored for the
// Idempotency-Key.
func (s *Server) mutate(w http.ResponseWriter, r *http.Request, op func(tx *db.Tx, a domain.Actor) (any, error)) {
	s.mutateAs(w, r, http.StatusOK, op)
}

// mutateAs is mutate answering ok on success: 200, or for /api/v1 201 (with Location) or 204.
func (s *Server) mutateAs(w http.ResponseWriter, r *http.Request, ok int, op func(tx *db.Tx, a domain.Actor) (any, error)) {
	s.mutateWith(w, r, ok, false, op)
}

// mutateEventObject is mutate for an op whose answer, on success, is the object of the last
// event it emitted, not changed after that emit (a created or confirmed payment intent): the
// answer is then the JSON the event already holds for it, not a second encoding of the same
// object (by the single writer, for a request with an Idempotency-Key). Any other answer is
// encoded as mutate does.
func (s *Server) mutateEventObject(w http.ResponseWriter, r *http.Request, op func(tx *db.Tx, a domain.Actor) (any, error)) {
	s.mutateWith(w, r, http.StatusOK, true, op)
}

func (s *Server) mutateWith(w http.ResponseWriter, r *http.Request, ok int, fromEvent bool, op func(tx *db.Tx, a domain.Actor) (any, error)) {
	for range maxProcessorRuns {
		if p := s.mutateRun(w, r, ok, fromEvent, op); p == nil {
			return
		}
	}
	s.writeError(w, r, errors.New("processor call still pending after repeated runs"))
}

// eventAnswer is the JSON of result when it is the object of tx's last event (fromEvent set),
// else nil.
func eventAnswer(tx *db.Tx, fromEvent bool, result any) []byte {
	if !fromEvent || result == nil {
		return nil
	}
	if obj, body := tx.LastEventObject(); samePointer(obj, result) {
		return body
	}
	return nil
}

// samePointer reports whether a and b are the same pointer (== on any values would panic on
// values of an incomparable type).
func samePointer(a, b any) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	return va.Kind() == reflect.Pointer && vb.Kind() == reflect.Pointer && va.Type() == vb.Type() && va.Pointer() == vb.Pointer()
}

// checkEventAnswers (tests) encodes every answer taken from an event again and panics when the
// bytes differ: an op given to mutateEventObject changed its object after emitting it.
var checkEventAnswers = false

func mustMatchEncoding(result any, body []byte) {
	if !checkEventAnswers {
		return
	}
	if b, err := domain.MarshalJSON(result); err != nil || !bytes.Equal(b, body) {
		panic(fmt.Sprintf("mutateEventObject: the answer taken from the event differs from the object's encoding:\nevent:  %s\nobject: %s", body, b))
	}
}

// maxProcessorRuns bounds the runs of one request's op (reserve, apply).
const maxProcessorRuns = 3

// mutateRun is one run of mutate; it answers the request unless op left a processor call
// pending, which it makes before returning it.
func (s *Server) mutateRun(w http.ResponseWriter, r *http.Request, ok int, fromEvent bool, op func(tx *db.Tx, a domain.Actor) (any, error)) *payments.Pending {
	auth := authFrom(r.Context())
	st, _ := r.Context().Value(ctxIdem).(*idemState)
	if st == nil {
		return s.mutateOnce(w, r, ok, fromEvent, auth.Actor, op)
	}
	var pending *payments.Pending
	var status int
	var body []byte
	var evID string
	var evData []byte
	var reused any // the result whose answer is its event's bytes
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
			b := eventAnswer(tx, fromEvent, result)
			if b != nil {
				reused = result
			} else {
				var err error
				if b, err = domain.MarshalJSON(result); err != nil {
					return err
				}
			}
			if ok == http.StatusNoContent {
				b = []byte{} // no body, but a stored one (the column is NOT NULL): a replay is the same 204
			}
			status, body = ok, b
			evID, evData = tx.LastEvent()
		case opErr != nil:
			e, ok := domain.AsError(opErr)
			if !ok {
				return opErr // unknown failure: roll back everything, answer 500
			}
			if pending = payments.PendingOf(e); pending != nil {
				return nil // commit the reservation; the answer comes from the next run
			}
			status, body = e.Status, mustErrorBody(e)
		default:
			return spErr
		}
		if st != nil && storable(status) {
			notBefore := tx.Now.Add(-idempotencyTTL).Unix()
			if st.provisional {
				notBefore = math.MaxInt64 // replace this request's own provisional answer
			}
			err := tx.StoreIdempotentResponse(st.scope.OrgID, st.scope.Livemode, st.key, notBefore,
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
		return nil
	}
	if pending != nil {
		s.pay.Execute(context.WithoutCancel(r.Context()), s.db, pending)
		return pending
	}
	if reused != nil {
		mustMatchEncoding(reused, body)
	}
	noteAnsweredEvent(w, evID, evData)
	writeResult(w, r, status, body)
	return nil
}

// mutateOnce is mutate for a request without an Idempotency-Key: nothing else shares the
// transaction, so op runs directly in the batch's own savepoint and the answer is encoded after
// the commit, off the single writer.
func (s *Server) mutateOnce(w http.ResponseWriter, r *http.Request, ok int, fromEvent bool, a domain.Actor, op func(tx *db.Tx, a domain.Actor) (any, error)) *payments.Pending {
	var result any
	var kept *domain.Error
	var evID string
	var evData, answer []byte
	err := s.db.Write(context.WithoutCancel(r.Context()), func(tx *db.Tx) error {
		var err error
		result, err = op(tx, a)
		evID, evData = tx.LastEvent()
		if err == nil {
			answer = eventAnswer(tx, fromEvent, result)
		}
		if e, ok := domain.AsError(err); ok && e.KeepChanges {
			kept = e // commit what op recorded, answer with the error
			return nil
		}
		return err
	})
	switch {
	case err != nil:
		s.writeError(w, r, err)
	case kept != nil && kept.Pending != nil:
		p := payments.PendingOf(kept)
		s.pay.Execute(context.WithoutCancel(r.Context()), s.db, p)
		return p
	case kept != nil:
		s.writeError(w, r, kept)
	case ok == http.StatusOK && answer != nil:
		mustMatchEncoding(result, answer)
		noteAnsweredEvent(w, evID, evData)
		writeRaw(w, http.StatusOK, answer)
	case ok == http.StatusOK:
		noteAnsweredEvent(w, evID, evData)
		writeJSON(w, http.StatusOK, result)
	default:
		body, err := domain.MarshalJSON(result)
		if err != nil {
			s.writeError(w, r, err)
			return nil
		}
		if ok == http.StatusNoContent {
			body = nil
		}
		noteAnsweredEvent(w, evID, evData)
		writeResult(w, r, ok, body)
	}
	return nil
}

// writeResult answers a successful write: 204 without a body, 201 with a Location header naming
// the new object under the request's path (the collection it was created in), else the body.
func writeResult(w http.ResponseWriter, r *http.Request, status int, body []byte) {
	switch status {
	case http.StatusNoContent:
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
		return
	case http.StatusCreated:
		var obj struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(body, &obj) == nil && obj.ID != "" {
			coll := strings.TrimSuffix(r.URL.Path, "/")
			if strings.HasSuffix(coll, "/refund") {
				coll += "s" // POST …/sales/{id}/refund creates …/sales/{id}/refunds/{refund}
			}
			w.Header().Set("Location", coll+"/"+obj.ID)
		}
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
