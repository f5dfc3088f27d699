package server

import (
	"bytes"
	"net/http"

	"troco/db"
)

// A write's response is usually the object of the last event it emitted, byte for byte (a
// created or confirmed payment intent is the object of payment_intent.created or …succeeded):
// the request log then stores a reference to that event instead of a second copy, and redacts
// the object again when it is read (the same redaction of the same bytes, so the log shows what
// it would have stored).

func init() { db.RedactLogBody = redactBody }

// answeredEvent is the last event of the transaction a write committed, noted on the request
// log's writer so that logRequest can compare it with the response.
type answeredEvent struct {
	id   string
	data []byte
}

// noteAnsweredEvent records on the request log's writer, if w has one, the last event of the
// transaction whose result w is about to answer with.
func noteAnsweredEvent(w http.ResponseWriter, id string, data []byte) {
	if id == "" {
		return
	}
	for {
		switch t := w.(type) {
		case *logCaptureWriter:
			t.event = answeredEvent{id, data}
			return
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return
		}
	}
}

// eventResponse reports the event whose object the captured response is, if any.
func (c *logCaptureWriter) eventResponse() (id string, n int) {
	if c.event.id == "" || c.buf.Len() >= maxLoggedBody {
		return "", 0
	}
	body := bytes.TrimSpace(c.buf.Bytes())
	if !db.IsEventObject(c.event.data, body) {
		return "", 0
	}
	return c.event.id, len(body)
}
