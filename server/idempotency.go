package server

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

	"troco/db"
	"troco/server/domain"
)

// Idempotency of SPEC 8 rule 1: a key is unique per organization and environment, retained 24 h;
// its first response is stored (except 5xx, 409, 425, 429) and replayed for the same body.
const (
	idempotencyTTL    = 24 * time.Hour
	maxIdempotencyKey = 255
)

// idemState travels in the request context of a request that carries an Idempotency-Key.
type idemState struct {
	scope       domain.Scope
	key         string
	fingerprint string
	stored      bool // the response was stored inside the request's own write transaction
	// provisional: the request stored an answer before its final one (a payment intent created
	// while a live processor call is pending, so a retry after a crash replays that intent instead
	// of creating another); the final response replaces it.
	provisional bool
}

// inflight guards against concurrent duplicates within this process; across replicas (on
// PostgreSQL) the slot is also taken in the database (acquireSharedSlot), and the primary key of
// idempotency_keys still decides between two commits (the later rolls back whole).
type inflight struct {
	mu sync.Mutex
	m  map[string]struct{}
}

func (f *inflight) acquire(k string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, busy := f.m[k]; busy {
		return false
	}
	f.m[k] = struct{}{}
	return true
}

func (f *inflight) release(k string) {
	f.mu.Lock()
	delete(f.m, k)
	f.mu.Unlock()
}

func storable(status int) bool {
	return status < 500 && status != http.StatusConflict && status != 425 && status != http.StatusTooManyRequests
}

var errIdempotencyRace = &domain.Error{Status: http.StatusConflict, Type: domain.TypeInvalidRequest, Code: domain.CodeIdempotencyInProgress, Message: "Another request with this Idempotency-Key completed first; retry to receive its response."}

// withIdempotency wraps a POST or DELETE handler of an authenticated route.
func (s *Server) withIdempotency(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		vals := r.Header.Values("Idempotency-Key")
		if len(vals) == 0 || (r.Method != http.MethodPost && r.Method != http.MethodDelete) {
			next.ServeHTTP(w, r)
			return
		}
		key := vals[0]
		// The limit is in characters (a UTF-8 key of 255 accented letters is 510 bytes); a key
		// that is not UTF-8 text could not be stored as text on PostgreSQL.
		if len(vals) > 1 || key == "" || !utf8.ValidString(key) || utf8.RuneCountInString(key) > maxIdempotencyKey {
			s.writeError(w, r, &domain.Error{Status: http.StatusBadRequest, Type: domain.TypeInvalidRequest, Code: domain.CodeIdempotencyKeyInvalid, Param: "Idempotency-Key",
				Message: "The Idempotency-Key header must be 1 to 255 characters of UTF-8 text."})
			return
		}
		a := authFrom(r.Context())
		// Keyed: a confirm body carries a card number and CVC, which must not be recoverable
		// from a stored unkeyed hash.
		sum := hmac.New(sha256.New, s.cfg.Secrets.DeriveKey("idempotency fingerprint"))
		sum.Write([]byte(r.Method + " " + r.URL.Path + "\n"))
		if isUpload(r) {
			// An upload (up to 10 MiB) is spooled to disk while it is hashed, never read whole.
			spool, err := s.spoolBody(w, r, sum)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			defer spool.Discard()
		} else {
			body, err := s.readBody(w, r)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			sum.Write(body)
		}
		if a.Customer != "" {
			// A customer's keys are their own: two customers of one organization never share one.
			key = "customer:" + a.Customer + ":" + key
		}
		st := &idemState{scope: a.Actor.Scope, key: key, fingerprint: hex.EncodeToString(sum.Sum(nil))}

		// The slot is taken before the stored response is looked up: the request holding it
		// releases it only after its response committed, so a duplicate that gets the slot next
		// finds that response and replays it, instead of running again on the state the first
		// one left (a second confirm answering 409 payment_intent_unexpected_state).
		slot := st.scope.OrgID + "|" + boolStr(st.scope.Livemode) + "|" + key
		if !s.idem.acquire(slot) {
			// Busy: a first run still in progress, or a replay of a stored response.
			// The response found may be committed but not yet on disk (its own request is
			// waiting for the fsync): replayStored waits for it, as that request does.
			if !s.replayStored(w, r, st, true, true) {
				s.writeError(w, r, &domain.Error{Status: http.StatusConflict, Type: domain.TypeInvalidRequest, Code: domain.CodeIdempotencyInProgress, Param: "Idempotency-Key",
					Message: "A request with this Idempotency-Key is still being processed; retry later."})
			}
			return
		}
		defer s.idem.release(slot)
		if s.db.Engine() == "postgres" {
			// Several replicas may serve this database: the slot is also taken in it.
			release, ok, err := s.acquireSharedSlot(r.Context(), st)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			if !ok {
				if !s.replayStored(w, r, st, false, true) {
					s.writeError(w, r, &domain.Error{Status: http.StatusConflict, Type: domain.TypeInvalidRequest, Code: domain.CodeIdempotencyInProgress, Param: "Idempotency-Key",
						Message: "A request with this Idempotency-Key is still being processed; retry later."})
				}
				return
			}
			defer release()
		}
		if s.replayStored(w, r, st, false, false) {
			return
		}

		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), ctxIdem, st)))
		if st.stored || !storable(rec.status) || rec.body.Len() == 0 {
			return
		}
		// Responses produced without a write transaction (validation errors, 404s) are stored now.
		_ = s.db.Write(context.WithoutCancel(r.Context()), func(tx *db.Tx) error {
			return tx.StoreIdempotentResponse(st.scope.OrgID, st.scope.Livemode, key, tx.Now.Add(-idempotencyTTL).Unix(),
				db.IdempotentResponse{Fingerprint: st.fingerprint, Status: rec.status, Body: rec.body.Bytes()})
		})
	})
}

// replayStored answers r from the response stored for st's key, if there is one: a replay of
// the same request, or 400 idempotency_key_reused for another body or endpoint. It reports
// whether it answered. durable makes it wait, before a replay, until what it read is on disk.
// busy says another request holds the key's slot: a provisional answer (storeProvisional) is
// then that request's, still running, and is not replayed (the caller answers 409).
func (s *Server) replayStored(w http.ResponseWriter, r *http.Request, st *idemState, durable, busy bool) bool {
	notBefore := s.cfg.Clock.Now().Add(-idempotencyTTL).Unix()
	var prior *db.IdempotentResponse
	err := s.db.Read(r.Context(), func(tx *db.Tx) error {
		var err error
		prior, err = tx.FindIdempotentResponse(st.scope.OrgID, st.scope.Livemode, st.key, notBefore)
		return err
	})
	switch {
	case errors.Is(err, db.ErrNotFound):
		return false
	case err != nil:
		s.writeError(w, r, err)
	case prior.Fingerprint == provisionalFingerprint(st.fingerprint) && busy:
		return false
	case prior.Fingerprint != st.fingerprint && prior.Fingerprint != provisionalFingerprint(st.fingerprint):
		s.writeError(w, r, &domain.Error{Status: http.StatusBadRequest, Type: domain.TypeInvalidRequest, Code: domain.CodeIdempotencyKeyReused, Param: "Idempotency-Key",
			Message: "This Idempotency-Key was already used with a different request body or endpoint."})
	default:
		if durable {
			if err := s.db.WaitDurable(context.WithoutCancel(r.Context())); err != nil {
				s.writeError(w, r, err)
				return true
			}
		}
		w.Header().Set("Idempotent-Replayed", "true")
		writeResult(w, r, prior.Status, bytes.TrimSuffix(prior.Body, []byte("\n")))
	}
	return true
}

// storeProvisional stores body (200) as the answer of st's request before its final one: a
// payment intent created while a live processor call is pending, so that a retry after a crash
// between the runs replays that intent instead of creating and charging another. It is marked
// in its fingerprint: while the request runs (it holds the key's slot) a duplicate is told to
// retry later rather than given this answer, and the final answer replaces it.
func storeProvisional(tx *db.Tx, st *idemState, body []byte) error {
	err := tx.StoreIdempotentResponse(st.scope.OrgID, st.scope.Livemode, st.key, tx.Now.Add(-idempotencyTTL).Unix(),
		db.IdempotentResponse{Fingerprint: provisionalFingerprint(st.fingerprint), Status: http.StatusOK, Body: body})
	if errors.Is(err, db.ErrConflict) {
		return errIdempotencyRace
	}
	if err == nil {
		st.provisional = true
	}
	return err
}

// provisionalFingerprint is how a provisional answer's fingerprint is stored.
func provisionalFingerprint(fingerprint string) string { return "provisional:" + fingerprint }

func boolStr(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// recorder passes a response through while keeping a copy of its status and body.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
	wrote  bool
}

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// sharedSlotLease bounds how long a replica that died mid-request blocks its key.
const sharedSlotLease = 2 * time.Minute

// acquireSharedSlot takes st's in-flight slot in the database, so that a duplicate arriving on
// another replica waits for (or replays) this request's response. release frees it.
func (s *Server) acquireSharedSlot(ctx context.Context, st *idemState) (release func(), ok bool, err error) {
	owner := domain.NewID("idemslot")
	err = s.db.Write(ctx, func(tx *db.Tx) error {
		var err error
		ok, err = tx.AcquireIdempotencySlot(st.scope.OrgID, st.scope.Livemode, st.key, owner, tx.Now.Add(sharedSlotLease).Unix())
		return err
	})
	if err != nil || !ok {
		return nil, false, err
	}
	release = func() {
		ctx := context.WithoutCancel(ctx)
		free := func() error {
			return s.db.Write(ctx, func(tx *db.Tx) error {
				return tx.ReleaseIdempotencySlot(st.scope.OrgID, st.scope.Livemode, st.key, owner)
			})
		}
		if free() == nil {
			return
		}
		// The database is away (a restart): keep trying for a while in the background, so a
		// retry of this request is not refused until the slot's lease runs out.
		// Every second at most, so a retry is not refused long after the database is back.
		go func() {
			wait := 100 * time.Millisecond
			for waited := time.Duration(0); waited < sharedSlotLease; waited += wait {
				time.Sleep(wait)
				if err := free(); err == nil || errors.Is(err, db.ErrClosed) {
					return
				}
				wait = min(2*wait, time.Second)
			}
		}()
	}
	return release, true, nil
}
