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
	entry := &domain.RequestLog{ID: requestID(r.Context()), Method: r.Method, Path: r.URL.Path, Status: cw.status, KeyID: keyID,
		DurationUS: time.Since(start).Microseconds(), ResponseBody: redactBody(cw.buf.Bytes())}
	if cb != nil {
		entry.RequestBody = redactBody(cb.buf.Bytes())
	}
	if r.URL.RawQuery != "" {
		entry.Path += "?" + redactQuery(r.URL.RawQuery)
	}
	entry.ObjectID = pathID(r)
	if entry.ObjectID == "" && r.Method == http.MethodPost && cw.status < 300 {
		var probe struct {
			ID     string `json:"id"`
			Object string `json:"object"`
		}
		if json.Unmarshal(cw.buf.Bytes(), &probe) == nil && probe.Object != "list" {
			entry.ObjectID = probe.ID
		}
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
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return ""
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "[" + itoa(int64(len(body))) + " bytes, not JSON or longer than the log keeps]"
	}
	out, err := json.Marshal(redactValue("", v))
	if err != nil {
		return ""
	}
	return string(out)
}

func redactValue(key string, v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = redactValue(k, x)
		}
		return t
	case []any:
		for i, x := range t {
			t[i] = redactValue(key, x)
		}
		return t
	case string:
		if sensitiveKeys[strings.ToLower(key)] || looksSecret(t) {
			return "[redacted]"
		}
		return t
	case json.Number:
		if sensitiveKeys[strings.ToLower(key)] || looksLikeCard(string(t)) {
			return "[redacted]"
		}
		return t
	}
	return v
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
func looksSecret(s string) bool {
	return strings.HasPrefix(s, "ch_live_") || strings.HasPrefix(s, "ch_test_") || strings.HasPrefix(s, "whsec_") || looksLikeCard(s)
}

// looksLikeCard reports whether s, without spaces and dashes, is 13 to 19 digits passing Luhn.
func looksLikeCard(s string) bool {
	d := strings.NewReplacer(" ", "", "-", "").Replace(s)
	if len(d) < 13 || len(d) > 19 {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	return card.Luhn(d)
}
