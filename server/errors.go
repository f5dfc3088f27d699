package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"troco/db"
	"troco/server/domain"
)

// writeJSON answers status with v encoded as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := domain.MarshalJSON(v)
	if err != nil {
		status, body = http.StatusInternalServerError, mustErrorBody(domain.Internal())
	}
	writeRaw(w, status, body)
}

func writeRaw(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)+1))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(body)
	w.Write([]byte{'\n'})
}

func mustErrorBody(e *domain.Error) []byte {
	b, _ := domain.MarshalJSON(struct {
		Error *domain.Error `json:"error"`
	}{e})
	return b
}

// apiError converts any error into the public error: domain errors pass through, known storage
// errors map to their codes, and everything else becomes a logged, generic 500.
func (s *Server) apiError(ctx context.Context, err error) *domain.Error {
	if e, ok := domain.AsError(err); ok {
		return e
	}
	switch {
	case errors.Is(err, db.ErrCursorNotFound):
		param := "starting_after"
		var ce *db.CursorError
		if errors.As(err, &ce) {
			param = ce.Param
		}
		return domain.Invalid(param, "The object named by %s does not exist in this list.", param)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &domain.Error{Status: 499, Type: domain.TypeAPI, Code: domain.CodeAPIError, Message: "The request was canceled."}
	case db.IsUnavailable(err):
		// The database restarting or unreachable: nothing was acknowledged, a retry (with the
		// same Idempotency-Key) is safe.
		s.log.WarnContext(ctx, "database unavailable", slog.String("request_id", requestID(ctx)), slog.String("error", err.Error()))
		return &domain.Error{Status: http.StatusServiceUnavailable, Type: domain.TypeAPI, Code: domain.CodeServiceUnavailable,
			Message: "The database is unavailable for a moment; retry the request (with the same Idempotency-Key)."}
	}
	s.log.ErrorContext(ctx, "internal error", slog.String("request_id", requestID(ctx)), slog.String("error", err.Error()))
	return domain.Internal()
}

// writeError answers with the error envelope for err.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e := s.apiError(r.Context(), err)
	writeRaw(w, e.Status, mustErrorBody(e))
}
