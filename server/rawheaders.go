package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"troco/server/domain"
)

// HTTP/1.1 header values reach a handler trimmed: net/textproto drops the spaces and tabs around
// a value, so "Authorization: Bearer ch_test_… " (a stray trailing space) would look clean, while
// the same header over HTTP/2 keeps it and is refused. SPEC 5.11 refuses a key with stray
// whitespace whatever the protocol, so the HTTPS listener decrypts into a rawConn that notes,
// from the raw bytes of each HTTP/1.1 request head, the API-key header lines carrying whitespace
// beyond the single separator space; bearerToken consults the note of the request's connection.
//
// The http.Server sees a rawConn as a plain connection: HTTP/1.1 is served as usual and HTTP/2
// (negotiated by ALPN during the TLS handshake) is served as prior-knowledge HTTP/2 on the
// decrypted stream, so ServeHTTPS must enable unencrypted HTTP/2 in the server's Protocols.

// TLSListener wraps a TCP listener: every accepted connection is TLS with cfg, seen decrypted.
// The errors net/http answers before any handler runs (a malformed request line or header, a
// header block over the limit) are rewritten into the API's JSON error envelope and logged on log.
func TLSListener(ln net.Listener, cfg *tls.Config, log *slog.Logger) net.Listener {
	if log == nil {
		log = slog.Default()
	}
	return &rawListener{Listener: ln, cfg: cfg, log: log}
}

// PrepareHTTPS configures srv to serve the connections of TLSListener: HTTP/1.1 and HTTP/2 on
// the decrypted stream, and the per-connection raw header notes in each request's context.
func PrepareHTTPS(srv *http.Server) {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	srv.Protocols = &p
	prev := srv.ConnContext
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if prev != nil {
			ctx = prev(ctx, c)
		}
		if rc, ok := c.(*rawConn); ok {
			ctx = context.WithValue(ctx, ctxRawConn, rc)
		}
		return ctx
	}
}

type rawListener struct {
	net.Listener
	cfg *tls.Config
	log *slog.Logger
}

func (l *rawListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &rawConn{Conn: tls.Server(c, l.cfg), lineStart: true, log: l.log}, nil
}

// rawConn is a server-side TLS connection that notes API-key header lines with stray whitespace.
//
// It embeds the *tls.Conn as a plain net.Conn on purpose: a connection that exposes
// ConnectionState is never offered HTTP/2 by net/http, and the handlers do not read Request.TLS.
type rawConn struct {
	net.Conn
	mu        sync.Mutex
	started   bool // the first bytes were seen (an HTTP/2 preface turns scanning off)
	h2        bool
	lineStart bool     // the previous byte read ended a line
	stray     []string // lower-case header name + "\x00" + trimmed value
	log       *slog.Logger
}

// stdlibErrorHeaders is how net/http's own early answers (written straight to the connection in
// one piece, before any handler) separate their status line from their text/plain body. Handler
// responses never contain it: net/http writes their headers sorted, Connection before Content-Type.
const stdlibErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// Write passes responses through, except net/http's early error answers, which it rewrites as
// the JSON error envelope (same status) and logs.
func (c *rawConn) Write(p []byte) (int, error) { return writeEarlyErrorAsJSON(c.Conn, p, c.log) }

// writeEarlyErrorAsJSON writes p to conn, rewriting it first when it is one of net/http's early
// error answers.
func writeEarlyErrorAsJSON(conn net.Conn, p []byte, log *slog.Logger) (int, error) {
	if !bytes.HasPrefix(p, []byte("HTTP/1.1 ")) || !bytes.Contains(p, []byte(stdlibErrorHeaders)) {
		return conn.Write(p)
	}
	statusLine, text, _ := bytes.Cut(p, []byte(stdlibErrorHeaders))
	code, err := strconv.Atoi(string(bytes.TrimPrefix(statusLine, []byte("HTTP/1.1 ")))[:min(3, len(statusLine)-9)])
	if err != nil || code < 400 || code > 599 {
		return conn.Write(p)
	}
	// The body repeats the status line, with net/http's detail after ": " when it has one.
	reason := "malformed request line or header"
	if _, detail, ok := strings.Cut(string(text), ": "); ok && detail != "" {
		reason = detail
	}
	errCode, message := domain.CodeInvalidRequest, "The request could not be read ("+reason+")."
	switch code {
	case http.StatusRequestHeaderFieldsTooLarge:
		errCode, message = domain.CodeRequestTooLarge, "The request headers are larger than the limit."
	case http.StatusNotImplemented:
		message = "The request uses a transfer encoding this server does not support."
	}
	id := domain.NewID(domain.PrefixRequest)
	body, _ := json.Marshal(map[string]any{"error": map[string]string{"type": domain.TypeInvalidRequest, "code": errCode, "message": message}})
	body = append(body, '\n')
	log.Warn("request refused before routing", slog.String("request_id", id), slog.Int("status", code),
		slog.String("reason", reason), slog.String("remote", conn.RemoteAddr().String()))
	out := fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: application/json; charset=utf-8\r\nCache-Control: no-store\r\nRequest-Id: %s\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
		code, http.StatusText(code), id, len(body), body)
	if _, err := io.WriteString(conn, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// PlainListener wraps the optional plain-HTTP listener so that its early errors are answered
// and logged as on the HTTPS listener.
func PlainListener(ln net.Listener, log *slog.Logger) net.Listener {
	if log == nil {
		log = slog.Default()
	}
	return &plainListener{Listener: ln, log: log}
}

type plainListener struct {
	net.Listener
	log *slog.Logger
}

func (l *plainListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &plainConn{Conn: c, log: l.log}, nil
}

type plainConn struct {
	net.Conn
	log *slog.Logger
}

func (c *plainConn) Write(p []byte) (int, error) { return writeEarlyErrorAsJSON(c.Conn, p, c.log) }

type ctxRawConnKey struct{}

var ctxRawConn ctxRawConnKey

func (c *rawConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		var re tls.RecordHeaderError
		if errors.As(err, &re) && re.Conn != nil && looksLikeHTTP(re.RecordHeader) {
			// What net/http answers for a *tls.Conn: plain HTTP on the HTTPS port.
			_, _ = io.WriteString(re.Conn, "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n")
			re.Conn.Close()
		}
	}
	if n > 0 {
		c.scan(p[:n])
	}
	return n, err
}

func looksLikeHTTP(hdr [5]byte) bool {
	switch string(hdr[:]) {
	case "GET /", "HEAD ", "POST ", "PUT /", "OPTIO", "DELET", "PATCH":
		return true
	}
	return false
}

var keyHeaders = [][]byte{[]byte("authorization:"), []byte("x-service-api-key:")}

// scan looks at the start of every line in b for an API-key header and notes it when its value
// has trailing whitespace or more than one leading space (or a leading tab). A line split across
// two reads is not seen; clients write a request head in one piece.
func (c *rawConn) scan(b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started {
		c.started = true
		c.h2 = bytes.HasPrefix(b, []byte("PRI * HTTP/2.0"))
	}
	if c.h2 {
		return
	}
	for i := 0; i < len(b); {
		if c.lineStart {
			c.note(b[i:])
		}
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			c.lineStart = false
			return
		}
		i += j + 1
		c.lineStart = true
	}
}

func (c *rawConn) note(line []byte) {
	if len(line) == 0 || (line[0] != 'a' && line[0] != 'A' && line[0] != 'x' && line[0] != 'X') {
		return
	}
	for _, h := range keyHeaders {
		if len(line) < len(h) || !bytes.EqualFold(line[:len(h)], h) {
			continue
		}
		end := bytes.IndexByte(line, '\n')
		if end < 0 {
			return
		}
		v := bytes.TrimSuffix(line[len(h):end], []byte("\r"))
		trimmed := bytes.Trim(v, " \t")
		lead := len(v) - len(bytes.TrimLeft(v, " \t"))
		if len(trimmed) > 0 && (len(bytes.TrimRight(v, " \t")) != len(v) || lead > 1 || (lead == 1 && v[0] == '\t')) {
			if len(c.stray) < 8 {
				c.stray = append(c.stray, string(h[:len(h)-1])+"\x00"+string(trimmed))
			}
		}
		return
	}
}

// strayKeyWhitespace reports whether the request's connection saw an Authorization or
// X-Service-Api-Key line with the value authz or alt surrounded by stray whitespace. Each request
// that authenticates consumes the notes of its connection.
func strayKeyWhitespace(r *http.Request, authz, alt string) bool {
	c, _ := r.Context().Value(ctxRawConn).(*rawConn)
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	found := false
	for _, s := range c.stray {
		if s == "authorization\x00"+authz || s == "x-service-api-key\x00"+alt {
			found = true
		}
	}
	c.stray = c.stray[:0]
	return found
}

// CloseWrite lets net/http half-close the connection after an early answer, as on a bare TCP
// connection.
func (c *plainConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
