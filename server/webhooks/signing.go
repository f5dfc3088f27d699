// Package webhooks delivers troco's events to webhook endpoints (CONTRACT 8): Standard Webhooks
// signing, the URL rules with their SSRF protection, the retry schedule, and the Dispatcher that
// leases outbox rows and posts them with bounded concurrency. The endpoint operations themselves
// live in package core; the outbox rows are written by db.Tx.InsertEvent.
package webhooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SecretPrefix starts every signing secret (Standard Webhooks convention).
const SecretPrefix = "whsec_"

// secretBytes is the size of a generated signing key (Standard Webhooks allows 24 to 64).
const secretBytes = 32

// Header names of the Standard Webhooks specification.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// NewSecret returns a fresh signing secret: whsec_ plus the standard base64 of 32 random bytes.
func NewSecret() string {
	var b [secretBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("webhooks: crypto/rand failed: " + err.Error())
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b[:])
}

// secretKey returns the HMAC key of a secret: the base64-decoded part after whsec_.
func secretKey(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil || len(key) == 0 {
		return nil, errors.New("webhooks: signing secret is not whsec_ followed by base64")
	}
	return key, nil
}

// Sign returns the Standard Webhooks signature "v1,<base64 HMAC-SHA256(key, id.timestamp.body)>"
// of a message sent at ts.
func Sign(secret, id string, ts time.Time, body []byte) (string, error) {
	key, err := secretKey(secret)
	if err != nil {
		return "", err
	}
	return "v1," + base64.StdEncoding.EncodeToString(mac(key, id, ts.Unix(), body)), nil
}

func mac(key []byte, id string, ts int64, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(id))
	h.Write([]byte{'.'})
	h.Write([]byte(strconv.FormatInt(ts, 10)))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// SignatureHeader signs with every given secret (during a rotation the new and the old one) and
// joins the signatures with spaces, as the webhook-signature header carries them.
func SignatureHeader(secrets []string, id string, ts time.Time, body []byte) (string, error) {
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		sig, err := Sign(s, id, ts, body)
		if err != nil {
			return "", err
		}
		sigs = append(sigs, sig)
	}
	return strings.Join(sigs, " "), nil
}

// ErrInvalidSignature is returned by Verify when no signature matches or the timestamp is stale.
var ErrInvalidSignature = errors.New("webhooks: invalid signature")

// Verify checks a received message the way a receiver should: the timestamp within tolerance of
// now, and at least one v1 signature in the header matching secret (constant-time compare).
func Verify(secret, id, timestamp, signatures string, body []byte, now time.Time, tolerance time.Duration) error {
	key, err := secretKey(secret)
	if err != nil {
		return err
	}
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: timestamp %q is not Unix seconds", ErrInvalidSignature, timestamp)
	}
	if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: timestamp outside the tolerance", ErrInvalidSignature)
	}
	want := mac(key, id, ts, body)
	for _, s := range strings.Fields(signatures) {
		version, sig, ok := strings.Cut(s, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrInvalidSignature
}
