package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/julienschmidt/httprouter"

	"troco/server/domain"
)

// statusWriter remembers the status for the request log.
type statusWriter struct {
	http.ResponseWriter
	status     int
	keyIDValue string // set by the auth step for the log line
	route      string // the matched route pattern (routeRecorder); empty when none matched
	// drain is the body of a request refused as too large: observe reads and discards the rest
	// of it once the 413 is written, so that a client that sends its whole body before reading
	// the answer gets the answer instead of a connection reset.
	drain io.ReadCloser
}

// findStatusWriter returns the request's statusWriter beneath any writers that wrap it (the
// request log's capture), or nil.
func findStatusWriter(w http.ResponseWriter) *statusWriter {
	for {
		switch v := w.(type) {
		case *statusWriter:
			return v
		case interface{ Unwrap() http.ResponseWriter }:
			w = v.Unwrap()
		default:
			return nil
		}
	}
}

// Bounds of the reading that follows a 413: beyond them the connection is closed unread.
const (
	maxDrainBytes = 64 << 20
	maxDrainTime  = 30 * time.Second
)

// drainRefusedBody sends the answer written so far and discards the rest of a refused body.
func drainRefusedBody(sw *statusWriter) {
	rc := http.NewResponseController(sw)
	_ = rc.Flush()
	_ = rc.SetReadDeadline(time.Now().Add(maxDrainTime))
	_, _ = io.CopyN(io.Discard, sw.drain, maxDrainBytes)
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// observe gives every request a Request-Id, recovers panics and writes one structured log line
// (never a token or a body).
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := domain.NewID(domain.PrefixRequest)
		w.Header().Set("Request-Id", id)
		ctx := context.WithValue(r.Context(), ctxRequestID, id)
		sw := &statusWriter{ResponseWriter: w}
		r = r.WithContext(ctx)
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.ErrorContext(ctx, "panic", slog.String("request_id", id), slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
				if sw.status == 0 {
					s.writeError(sw, r, domain.Internal())
				}
			}
			attrs := []slog.Attr{
				slog.String("request_id", id), slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.Int("status", sw.status), slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
			}
			if sw.keyIDValue != "" {
				attrs = append(attrs, slog.String("key_id", sw.keyIDValue))
			}
			route := sw.route
			if route == "" {
				route = "unmatched"
			}
			s.cfg.Metrics.Request(route, r.Method, sw.status, time.Since(start))
			s.log.LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
		}()
		if e := checkQuery(r.URL.RawQuery); e != nil && isAPIPath(r.URL.Path) {
			// A page drops a malformed pair (url.Values does) and opens: a buyer who follows a
			// link mangled on the way (?utm_source=50%off) must not get a JSON error.
			s.writeError(sw, r, e)
			return
		}
		if fix, _ := r.Context().Value(ctxURLRepaired).(*urlRepair); fix != nil && fix.query && isAPIPath(r.URL.Path) {
			// A name or value that was not UTF-8 (?email=a%FF), refused as in a JSON body. A
			// page (a payment link opened from a Latin-1 campaign's ?utm_campaign=promo%E7) gets
			// the query repaired and opens: it reads no such parameter, and a buyer must not get
			// a JSON error.
			e := domain.Invalid(fix.key, "The query parameter %s is not valid UTF-8.", fix.key)
			switch {
			case fix.nameBad && fix.nul:
				e = domain.Invalid("", "The query string has a parameter name with the NUL character.")
			case fix.nameBad:
				e = domain.Invalid("", "The query string has a parameter name that is not valid UTF-8.")
			case fix.nul:
				e = domain.Invalid(fix.key, "The query parameter %s must not contain the NUL character.", fix.key)
			}
			s.writeError(sw, r, e)
			return
		}
		next.ServeHTTP(sw, r)
		if sw.drain != nil {
			drainRefusedBody(sw)
		}
	})
}

// api wraps a /v1 handler: authentication for need, rate limit, idempotency.
func (s *Server) api(need string, h http.Handler) http.Handler {
	withIdem := s.withIdempotency(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info, err := s.authenticate(r, need)
		if err != nil && info != nil {
			// A known key refused (revoked, expired, without the scope): recorded in its
			// organization's request log, where its developer looks for why.
			s.logRequest(w, r, info.Actor.Scope, info.Key.ID, start, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				s.writeError(w, r, err)
			}))
			return
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if sw, ok := w.(*statusWriter); ok {
			sw.keyIDValue = info.Key.ID
		}
		s.logRequest(w, r, info.Actor.Scope, info.Key.ID, start, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if s.rateLimited(w, r, info.Key) {
				return
			}
			withIdem.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxAuth, info)))
		}))
	})
}

// checkPathText refuses a path parameter (the id in /v1/customers/:id) that was not valid UTF-8
// once %-decoded (validURLText replaced its bytes): 400 naming it, rather than a 404 for an id
// shown with U+FFFD in place of what was sent.
func (s *Server) checkPathText(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fix, _ := r.Context().Value(ctxURLRepaired).(*urlRepair); fix != nil && fix.path {
			for _, p := range httprouter.ParamsFromContext(r.Context()) {
				if strings.ContainsRune(p.Value, utf8.RuneError) {
					if fix.nul {
						s.writeError(w, r, domain.Invalid(p.Key, "The %s in the URL must not contain the NUL character.", p.Key))
					} else {
						s.writeError(w, r, domain.Invalid(p.Key, "The %s in the URL is not valid UTF-8.", p.Key))
					}
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// isAPIPath reports whether path is under one of the JSON APIs (/v1, /api/v1), as opposed to a
// hosted page or the dashboard.
func isAPIPath(path string) bool {
	return strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/api/")
}

// takesNoQuery reports whether a /v1 route has no query parameters at all: every POST and
// DELETE, and a GET of one object (its path ends in :id) or of its image (pix.png). Lists parse
// their own parameters.
func takesNoQuery(method, path string) bool {
	last := path[strings.LastIndexByte(path, '/')+1:]
	return method != http.MethodGet || strings.HasPrefix(last, ":") || strings.HasSuffix(last, ".png")
}

// rejectBody refuses a DELETE whose body names any parameter (400 naming the first, as Stripe
// answers "Received unknown parameter"): a delete takes none, and a silently ignored field would
// hide a client's mistake. An empty body (whatever its Content-Type) or {} passes.
func (s *Server) rejectBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := s.readBody(w, r)
		if err == nil && len(bytes.TrimSpace(body)) > 0 {
			var none struct{}
			err = s.decode(w, r, &none)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// rejectQuery answers 400 naming the first query parameter of a route that takes none, the way
// unknown body fields and list parameters are refused (never silently ignored).
func (s *Server) rejectQuery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery != "" {
			q := r.URL.Query()
			names := make([]string, 0, len(q))
			for k := range q {
				names = append(names, k)
			}
			if len(names) > 0 {
				sort.Strings(names)
				where := "This request takes no query parameters."
				if r.Method == http.MethodPost {
					where = "This request takes its parameters in the JSON body, not in the query string."
				}
				s.writeError(w, r, domain.Invalid(names[0], "Received unknown parameter: %s. %s", names[0], where))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// checkQuery refuses a query string that does not decode (?limit=%zz, a ';' separator) with a
// 400 naming the parameter, where url.Values would silently drop the pair and the request would
// run as if it were absent.
func checkQuery(raw string) *domain.Error {
	if raw == "" {
		return nil
	}
	if _, err := url.ParseQuery(raw); err == nil {
		return nil
	}
	for _, pair := range strings.Split(raw, "&") {
		if strings.Contains(pair, ";") {
			return domain.Invalid("", "The query string must separate parameters with &, not ;.")
		}
		k, v, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			return domain.Invalid("", "The query string has a malformed parameter name (%q).", k)
		}
		if _, err := url.QueryUnescape(v); err != nil {
			return domain.Invalid(key, "The query parameter %s is malformed (bad %%-escape).", key)
		}
	}
	return domain.Invalid("", "The query string is malformed.")
}
