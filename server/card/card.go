// Package card holds the card rules of the platform that need no network and no database:
// number normalisation, Luhn, brand detection, input validation, fingerprints and the
// simulated test-mode outcomes of SPEC 7.1.
package card

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// Brand names a card network as it appears in payment_method_details.card.brand.
type Brand string

// Brands the platform recognises; BrandUnknown is a well-formed number outside every known range.
const (
	BrandVisa       Brand = "visa"
	BrandMastercard Brand = "mastercard"
	BrandAmex       Brand = "amex"
	BrandElo        Brand = "elo"
	BrandHipercard  Brand = "hipercard"
	BrandDiners     Brand = "diners"
	BrandUnknown    Brand = "unknown"
)

// FundingCredit is the funding of every card the platform accepts (it sells credit only).
const FundingCredit = "credit"

// Network returns the value of payment_method_details.card.network, which equals the brand.
func (b Brand) Network() string { return string(b) }

// CVCLength returns how many digits the brand's security code has.
func (b Brand) CVCLength() int {
	if b == BrandAmex {
		return 4
	}
	return 3
}

// ValidLength reports whether a number of n digits is a plausible length for the brand.
func (b Brand) ValidLength(n int) bool {
	switch b {
	case BrandVisa:
		return n == 13 || n == 16 || n == 19
	case BrandAmex:
		return n == 15
	case BrandDiners:
		return n >= 14 && n <= 19
	case BrandMastercard, BrandElo, BrandHipercard:
		return n == 16
	default:
		return n >= 12 && n <= 19
	}
}

// Normalize removes the spaces and dashes people type inside card numbers; any other
// non-digit is kept, so the result fails validation.
func Normalize(number string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return -1
		}
		return r
	}, number)
}

// isDigits reports whether s is non-empty and made only of ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Luhn reports whether the normalized number is all digits and passes the mod-10 check.
func Luhn(number string) bool {
	n := Normalize(number)
	if !isDigits(n) {
		return false
	}
	sum := 0
	double := false
	for i := len(n) - 1; i >= 0; i-- {
		d := int(n[i] - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// prefixRange is an inclusive range of equal-length leading digits that selects a brand.
type prefixRange struct {
	lo, hi string
	brand  Brand
}

// span builds a prefixRange; both bounds must have the same number of digits.
func span(lo, hi string, b Brand) prefixRange { return prefixRange{lo: lo, hi: hi, brand: b} }

// one builds a prefixRange matching a single prefix.
func one(p string, b Brand) prefixRange { return prefixRange{lo: p, hi: p, brand: b} }

// brandRanges lists the prefixes of BR-STANDARDS.md "Cards"; Elo comes first because its
// ranges overlap Visa and Mastercard, and the first match wins.
var brandRanges = []prefixRange{
	one("401178", BrandElo),
	one("401179", BrandElo),
	one("431274", BrandElo),
	one("438935", BrandElo),
	one("451416", BrandElo),
	one("457393", BrandElo),
	one("457631", BrandElo),
	one("457632", BrandElo),
	one("504175", BrandElo),
	span("506699", "506778", BrandElo),
	span("509000", "509999", BrandElo),
	one("627780", BrandElo),
	one("636297", BrandElo),
	one("636368", BrandElo),
	span("650031", "650033", BrandElo),
	span("650035", "650051", BrandElo),
	span("650405", "650439", BrandElo),
	span("650485", "650538", BrandElo),
	span("650541", "650598", BrandElo),
	span("650700", "650718", BrandElo),
	span("650720", "650727", BrandElo),
	span("650901", "650978", BrandElo),
	span("651652", "651679", BrandElo),
	span("655000", "655019", BrandElo),
	span("655021", "655058", BrandElo),

	one("606282", BrandHipercard),

	one("34", BrandAmex),
	one("37", BrandAmex),

	span("300", "305", BrandDiners),
	one("36", BrandDiners),
	one("38", BrandDiners),
	one("39", BrandDiners),

	span("51", "55", BrandMastercard),
	span("2221", "2720", BrandMastercard),

	one("4", BrandVisa),
}

// DetectBrand returns the brand selected by the number's leading digits, or BrandUnknown.
func DetectBrand(number string) Brand {
	n := Normalize(number)
	if !isDigits(n) {
		return BrandUnknown
	}
	for _, r := range brandRanges {
		if len(n) < len(r.lo) {
			continue
		}
		// Equal-length digit strings compare numerically when compared lexically.
		if p := n[:len(r.lo)]; p >= r.lo && p <= r.hi {
			return r.brand
		}
	}
	return BrandUnknown
}

// Last4 returns the last four digits of the normalized number (all of it when shorter).
func Last4(number string) string {
	n := Normalize(number)
	if len(n) <= 4 {
		return n
	}
	return n[len(n)-4:]
}

// Describe returns what may be kept and shown about a card: its brand and last four digits.
func Describe(number string) (brand Brand, last4 string) {
	return DetectBrand(number), Last4(number)
}

// fingerprintLen is the number of base64url characters kept from the HMAC (96 bits).
const fingerprintLen = 16

// Fingerprint identifies a card without storing its number: a keyed HMAC-SHA256 of the
// normalized number, base64url-encoded and truncated, stable for the same key and card.
func Fingerprint(key []byte, number string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(Normalize(number)))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))[:fingerprintLen]
}
