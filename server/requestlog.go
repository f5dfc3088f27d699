package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"troco/db"
	"troco/server/card"
	"troco/server/domain"
)

// The request log: every /v1 request made with a known key (refused ones included) is recorded (method, path, status, key,
// request id, duration, bodies with card data and secrets redacted) for the dashboard's request
// logs and each object's page. Entries are written in batches a moment after the answer, so the
// log never adds a commit to the caller's latency; a crash loses at most the last batch of log
// lines, never an operation. The retention job deletes entries older than 7 days.

// maxLoggedBody bounds each stored body.
const maxLoggedBody = 16 << 10

// logCaptureBody keeps the first maxLoggedBody bytes read from a request body.
type logCaptureBody struct {
	io.ReadCloser
	buf bytes.Buffer
}

func (c *logCaptureBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	if room := maxLoggedBody - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(n, room)])
	}
	return n, err
}

// logCaptureWriter keeps the first maxLoggedBody bytes of a response.
type logCaptureWriter struct {
	http.ResponseWriter
	buf    bytes.Buffer
	status int
	event  answeredEvent // see requestlog_ref.go
}

func (c *logCaptureWriter) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *logCaptureWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	if room := maxLoggedBody - c.buf.Len(); room > 0 {
		c.buf.Write(b[:min(len(b), room)])
	}
	return c.ResponseWriter.Write(b)
}

func (c *logCaptureWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// logRequest runs h and queues the request's log entry in scope.
func (s *Server) logRequest(w http.ResponseWriter, r *http.Request, scope domain.Scope, keyID string, start time.Time, h http.Handler) {
	var cb *logCaptureBody
	if r.Body != nil {
		cb = &logCaptureBody{ReadCloser: r.Body}
		r.Body = cb
	}
	cw := &logCaptureWriter{ResponseWriter: w}
	h.ServeHTTP(cw, r)
	respBody, respID, respObject := redactJSON(cw.buf.Bytes())
	entry := &domain.RequestLog{ID: requestID(r.Context()), Method: r.Method, Path: r.URL.Path, Status: cw.status, KeyID: keyID,
		DurationUS: time.Since(start).Microseconds(), ResponseBody: respBody}
	if cb != nil {
		entry.RequestBody = redactBody(cb.buf.Bytes())
	}
	if r.URL.RawQuery != "" {
		entry.Path += "?" + redactQuery(r.URL.RawQuery)
	}
	entry.ResponseEvent, entry.ResponseLen = cw.eventResponse()
	entry.ObjectID = pathID(r)
	if entry.ObjectID == "" && r.Method == http.MethodPost && cw.status < 300 && respObject != "list" {
		entry.ObjectID = respID
	}
	s.reqlog.add(s, scope, entry)
}

// requestLogQueue batches log entries into one write transaction.
type requestLogQueue struct {
	mu      sync.Mutex
	pending []queuedLog
	running bool
}

type queuedLog struct {
	scope domain.Scope
	entry *domain.RequestLog
}

func (q *requestLogQueue) add(s *Server, scope domain.Scope, e *domain.RequestLog) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.pending) >= 50000 {
		return // the database cannot keep up: drop log lines rather than memory
	}
	q.pending = append(q.pending, queuedLog{scope, e})
	if !q.running {
		q.running = true
		go q.flushLoop(s)
	}
}

// flushLoop writes batches until the queue is empty, then exits.
func (q *requestLogQueue) flushLoop(s *Server) {
	for {
		time.Sleep(20 * time.Millisecond)
		q.mu.Lock()
		batch := q.pending
		q.pending = nil
		if len(batch) == 0 {
			q.running = false
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		rows := make([]db.RequestLogRow, len(batch))
		for i, l := range batch { // compress the bodies here, not on the single writer
			rows[i] = db.PrepareRequestLog(l.scope, l.entry)
		}
		err := s.db.Write(context.Background(), func(tx *db.Tx) error {
			for _, r := range rows {
				if err := tx.InsertRequestLogRow(r); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			s.log.Warn("request log not written", "entries", len(batch), "err", err)
		}
	}
}

// FlushRequestLogs waits until every queued request log entry is written (tests, shutdown).
func (s *Server) FlushRequestLogs() {
	for range 500 {
		s.reqlog.mu.Lock()
		idle := !s.reqlog.running
		s.reqlog.mu.Unlock()
		if idle {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sensitiveKeys are JSON fields whose values never reach the request log.
var sensitiveKeys = map[string]bool{
	"number": true, "cvc": true, "cvv": true, "card_number": true, "exp_month": false, "token": true, "secret": true,
	"client_secret": true, "password": true, "authorization_code": true, "signing_secret": true, "account_number": true,
}

// redactBody returns body with card data and secrets replaced by "[redacted]" (a body that is not
// JSON is not stored, only its size).
func redactBody(body []byte) string {
	out, _, _ := redactJSON(body)
	return out
}

// redactJSON is redactBody that also returns the top-level "id" and "object" strings of the
// document. It walks the JSON once, copying it compacted and replacing each string or number that
// is the value of a sensitive field (or an element of an array under one) or that looks like a
// secret or a card number; keys keep their order. It runs for every logged request, so it
// allocates only the result.
func redactJSON(body []byte) (out, id, object string) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return "", "", ""
	}
	if !utf8.Valid(body) { // a refused request's body: keep the log text, as a decoder would
		body = bytes.ToValidUTF8(body, []byte("\uFFFD"))
	}
	if !json.Valid(body) {
		return "[" + itoa(int64(len(body))) + " bytes, not JSON or longer than the log keeps]", "", ""
	}
	r := redactor{in: body, out: make([]byte, 0, len(body))}
	r.value(nil, false, 0)
	return string(r.out), r.id, r.object
}

// redactor is the state of one redactJSON walk over a valid document.
type redactor struct {
	in, out    []byte
	i          int
	id, object string
}

func (r *redactor) space() {
	for r.i < len(r.in) {
		switch r.in[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// value copies the value at r.i; key is the raw (quoted) name of the field holding it, or of the
// field holding the array it is in; sensitive says whether that name is a sensitive key.
func (r *redactor) value(key []byte, sensitive bool, depth int) {
	r.space()
	switch c := r.in[r.i]; {
	case c == '{':
		r.out = append(r.out, '{')
		r.i++
		for first := true; ; first = false {
			r.space()
			if r.in[r.i] == '}' {
				r.i++
				r.out = append(r.out, '}')
				return
			}
			if !first { // a ','
				r.i++
				r.out = append(r.out, ',')
				r.space()
			}
			k := r.str()
			r.out = append(r.out, k...)
			r.space()
			r.i++ // ':'
			r.out = append(r.out, ':')
			r.value(k, sensitiveKey(k), depth+1)
		}
	case c == '[':
		r.out = append(r.out, '[')
		r.i++
		for first := true; ; first = false {
			r.space()
			if r.in[r.i] == ']' {
				r.i++
				r.out = append(r.out, ']')
				return
			}
			if !first {
				r.i++
				r.out = append(r.out, ',')
			}
			r.value(key, sensitive, depth+1)
		}
	case c == '"':
		tok := r.str()
		v := tok[1 : len(tok)-1]
		if bytes.IndexByte(v, '\\') >= 0 {
			v = []byte(unquoteJSON(tok))
		}
		if sensitive || looksSecret(v) {
			r.out = append(r.out, `"[redacted]"`...)
			return
		}
		r.out = append(r.out, tok...)
		if depth == 1 {
			switch string(key) {
			case `"id"`:
				r.id = string(v)
			case `"object"`:
				r.object = string(v)
			}
		}
	case c == '-' || c >= '0' && c <= '9':
		start := r.i
		for r.i < len(r.in) && strings.IndexByte("+-.eE0123456789", r.in[r.i]) >= 0 {
			r.i++
		}
		if tok := r.in[start:r.i]; sensitive || looksLikeCard(tok) {
			r.out = append(r.out, `"[redacted]"`...)
		} else {
			r.out = append(r.out, tok...)
		}
	default: // true, false, null
		start := r.i
		for r.i < len(r.in) && r.in[r.i] >= 'a' && r.in[r.i] <= 'z' {
			r.i++
		}
		r.out = append(r.out, r.in[start:r.i]...)
	}
}

// str returns the string token at r.i, quotes included, and moves past it.
func (r *redactor) str() []byte {
	start := r.i
	r.i++
	for r.in[r.i] != '"' {
		if r.in[r.i] == '\\' {
			r.i++
		}
		r.i++
	}
	r.i++
	return r.in[start:r.i]
}

// unquoteJSON returns the value of a valid JSON string token.
func unquoteJSON(tok []byte) string {
	if bytes.IndexByte(tok, '\\') < 0 {
		return string(tok[1 : len(tok)-1])
	}
	var s string
	_ = json.Unmarshal(tok, &s)
	return s
}

// sensitiveKey reports whether the raw (quoted) field name k, in any case, is a sensitive key.
func sensitiveKey(k []byte) bool {
	name := k[1 : len(k)-1]
	if bytes.IndexByte(name, '\\') >= 0 {
		return sensitiveKeys[strings.ToLower(unquoteJSON(k))]
	}
	for _, c := range name {
		if c >= 'A' && c <= 'Z' {
			return sensitiveKeys[strings.ToLower(string(name))]
		}
	}
	return sensitiveKeys[string(name)]
}

// redactQuery returns a raw query string with the values of sensitive parameters (a client_secret
// opening a payment from the browser, a card number sent by mistake) replaced by "[redacted]",
// by the same rules as bodies; the rest of the query is kept as sent.
func redactQuery(raw string) string {
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			continue
		}
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		// card[number], metadata[password]: the innermost name decides, as in a JSON body.
		if j := strings.LastIndexByte(name, '['); j >= 0 && strings.HasSuffix(name, "]") {
			name = name[j+1 : len(name)-1]
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			val = v
		}
		if sensitiveKeys[strings.ToLower(name)] || looksSecret(val) {
			parts[i] = k + "=%5Bredacted%5D"
		}
	}
	return strings.Join(parts, "&")
}

// looksSecret reports whether s is an API key, a webhook secret or a card number.
func looksSecret[T string | []byte](s T) bool {
	return hasPrefix(s, "ch_live_") || hasPrefix(s, "ch_test_") || hasPrefix(s, "whsec_") || looksLikeCard(s)
}

func hasPrefix[T string | []byte](s T, prefix string) bool {
	return len(s) >= len(prefix) && string(s[:len(prefix)]) == prefix
}

// looksLikeCard reports whether s, without spaces and dashes, is 13 to 19 digits passing Luhn.
func looksLikeCard[T string | []byte](s T) bool {
	if len(s) < 13 {
		return false
	}
	var d [19]byte
	n := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ' || c == '-':
		case c >= '0' && c <= '9' && n < len(d):
			d[n] = c
			n++
		default:
			return false
		}
	}
	return n >= 13 && card.Luhn(string(d[:n]))
}
