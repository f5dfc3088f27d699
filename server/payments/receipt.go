package payments

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strings"
)

// A charge's receipt_url opens the hosted receipt page /receipts/{charge}?s=<signature>: the
// signature is an HMAC of the charge id under the receipt key, so the URL needs no stored secret,
// cannot be guessed from the id, and every charge has one from the moment it exists.

// ReceiptPath is the path of a charge's hosted receipt page.
func ReceiptPath(chargeID string) string { return "/receipts/" + chargeID }

func (s *Service) receiptKey() []byte {
	if len(s.ReceiptKey) > 0 {
		return s.ReceiptKey
	}
	m := hmac.New(sha256.New, s.FingerprintKey)
	m.Write([]byte("receipt url"))
	return m.Sum(nil)
}

// ReceiptSignature signs a charge id for its receipt URL.
func (s *Service) ReceiptSignature(chargeID string) string {
	m := hmac.New(sha256.New, s.receiptKey())
	m.Write([]byte(chargeID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:18])
}

// ReceiptValid reports, in constant time, whether sig is the receipt signature of chargeID.
func (s *Service) ReceiptValid(chargeID, sig string) bool {
	return hmac.Equal([]byte(s.ReceiptSignature(chargeID)), []byte(sig))
}

// receiptURL is the receipt_url of a new charge.
func (s *Service) receiptURL(callerOrigin, chargeID string) *string {
	u := strings.TrimRight(s.origin(callerOrigin), "/") + ReceiptPath(chargeID) + "?s=" + url.QueryEscape(s.ReceiptSignature(chargeID))
	return &u
}
