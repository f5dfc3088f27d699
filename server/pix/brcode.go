package pix

import (
	"errors"
	"fmt"
	"strings"
)

// GUI is the globally unique identifier that marks merchant account template 26 as PIX.
const GUI = "br.gov.bcb.pix"

// Field limits of the BR Code, from the BCB manual.
const (
	MaxMerchantName = 25 // field 59
	MaxMerchantCity = 15 // field 60
	MaxTxID         = 25 // field 62, sub-field 05
	MaxKey          = 77 // template 26, sub-field 01
	MaxURL          = 77 // template 26, sub-field 25
	maxTemplate     = 99 // any TLV value, and template 26 as a whole
	maxAmountLen    = 13 // field 54
)

// ErrInvalidPayload is wrapped by every error Encode returns, so callers can tell a bad input
// from other failures.
var ErrInvalidPayload = errors.New("pix: invalid payload")

// Payload is what a BR Code says: who is paid, how much, and which charge it settles.
type Payload struct {
	MerchantName string // field 59; accents stripped, truncated to 25
	MerchantCity string // field 60; accents stripped, truncated to 15
	Key          string // PIX key of a static code (template 26, sub-field 01); exclusive with URL
	URL          string // payload location of a dynamic code (sub-field 25), with or without https://
	Description  string // optional free text (sub-field 02); accents stripped
	TxID         string // field 62-05, [A-Za-z0-9] up to 25; empty becomes ***
	Amount       int64  // centavos; 0 leaves field 54 out so the payer types the amount
	SingleUse    bool   // adds field 01 = 12 (a charge that can be paid once)
}

// Encode returns the BR Code ("PIX copia e cola") for p, CRC included.
func (p Payload) Encode() (string, error) {
	name := asciiText(p.MerchantName, MaxMerchantName)
	if name == "" {
		return "", fmt.Errorf("%w: merchant name is required", ErrInvalidPayload)
	}
	city := asciiText(p.MerchantCity, MaxMerchantCity)
	if city == "" {
		return "", fmt.Errorf("%w: merchant city is required", ErrInvalidPayload)
	}

	account := tlv("00", GUI)
	switch {
	case p.Key != "" && p.URL != "":
		return "", fmt.Errorf("%w: key and URL are exclusive", ErrInvalidPayload)
	case p.Key != "":
		if len(p.Key) > MaxKey || !isPrintableASCII(p.Key) || strings.Contains(p.Key, " ") {
			return "", fmt.Errorf("%w: key must be at most %d printable ASCII characters without spaces", ErrInvalidPayload, MaxKey)
		}
		account += tlv("01", p.Key)
	case p.URL != "":
		u := p.URL
		if len(u) >= len("https://") && strings.EqualFold(u[:len("https://")], "https://") {
			u = u[len("https://"):]
		}
		if u == "" || len(u) > MaxURL || !isPrintableASCII(u) || strings.ContainsAny(u, " ") || strings.Contains(u, "://") {
			return "", fmt.Errorf("%w: URL must be an https location of at most %d characters", ErrInvalidPayload, MaxURL)
		}
		account += tlv("25", u)
	default:
		return "", fmt.Errorf("%w: a key or a URL is required", ErrInvalidPayload)
	}
	if d := asciiText(p.Description, maxTemplate); d != "" {
		account += tlv("02", d)
	}
	if len(account) > maxTemplate {
		return "", fmt.Errorf("%w: merchant account template is %d characters, at most %d", ErrInvalidPayload, len(account), maxTemplate)
	}

	txid := p.TxID
	if txid == "" {
		txid = "***"
	} else if len(txid) > MaxTxID || !isAlphanumeric(txid) {
		return "", fmt.Errorf("%w: txid must be 1 to %d characters [A-Za-z0-9]", ErrInvalidPayload, MaxTxID)
	}
	if p.Amount < 0 {
		return "", fmt.Errorf("%w: amount must not be negative", ErrInvalidPayload)
	}

	var b strings.Builder
	b.WriteString(tlv("00", "01"))
	if p.SingleUse {
		b.WriteString(tlv("01", "12"))
	}
	b.WriteString(tlv("26", account))
	b.WriteString(tlv("52", "0000"))
	b.WriteString(tlv("53", "986"))
	if p.Amount > 0 {
		a := FormatAmount(p.Amount)
		if len(a) > maxAmountLen {
			return "", fmt.Errorf("%w: amount does not fit %d characters", ErrInvalidPayload, maxAmountLen)
		}
		b.WriteString(tlv("54", a))
	}
	b.WriteString(tlv("58", "BR"))
	b.WriteString(tlv("59", name))
	b.WriteString(tlv("60", city))
	b.WriteString(tlv("62", tlv("05", txid)))
	b.WriteString("6304")
	b.WriteString(fmt.Sprintf("%04X", CRC16([]byte(b.String()))))
	return b.String(), nil
}

// FormatAmount writes centavos as the dot decimal field 54 carries (12399 → "123.99").
func FormatAmount(centavos int64) string {
	return fmt.Sprintf("%d.%02d", centavos/100, centavos%100)
}

// tlv writes one ID + two-digit length + value; callers keep values within 99 characters.
func tlv(id, value string) string {
	return fmt.Sprintf("%s%02d%s", id, len(value), value)
}

// TxID turns an arbitrary identifier (such as a payment intent id "pi_…") into a field 62-05
// txid of exactly 25 [A-Za-z0-9]: other characters are removed, the last 25 kept, and shorter
// results zero-filled on the left, so ids of one fixed-length prefix scheme stay distinct.
func TxID(id string) string {
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		if isAlphanumeric(id[i : i+1]) {
			b.WriteByte(id[i])
		}
	}
	s := b.String()
	if len(s) > MaxTxID {
		return s[len(s)-MaxTxID:]
	}
	return strings.Repeat("0", MaxTxID-len(s)) + s
}
