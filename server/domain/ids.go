package domain

import (
	"crypto/rand"
	"strings"

	"troco/server/clock"
)

// Identifier prefixes of CONTRACT 2 and SPEC 2.1.
const (
	PrefixActivationSession = "as_"
	PrefixOrganization      = "org_"
	PrefixPlatform          = "plat_"
	PrefixCharge            = "ch_"
	PrefixCustomer          = "cus_"
	PrefixInvoice           = "inv_"
	PrefixPaymentIntent     = "pi_"
	PrefixPaymentMethod     = "pm_"
	PrefixFile              = "file_"
	PrefixEvent             = "evt_"
	PrefixProduct           = "prod_"
	PrefixPrice             = "price_"
	PrefixCheckoutSession   = "cs_"
	PrefixSetupIntent       = "seti_"
	PrefixPaymentLink       = "plink_"
	PrefixRefund            = "re_"
	PrefixSubscription      = "sub_"
	PrefixWebhookEndpoint   = "we_"
	PrefixPortalSession     = "cps_"
	PrefixOnboardingSession = "os_"
	PrefixTransaction       = "txn_"
	PrefixPayoutAccount     = "pa_"
	PrefixAPIKey            = "key_"
	PrefixCoupon            = "coupon_"
	PrefixPromotionCode     = "promo_"
	PrefixLineItem          = "li_"
	PrefixRequest           = "req_"
	PrefixDispute           = "dp_"
)

// idAlphabet is base62 in ASCII order, so identifiers sort as their time parts do.
const idAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// idTimeChars base62 characters hold the millisecond for ≈ 110 years from 1970 (62^7 ms).
const (
	idTimeChars = 7
	idTimeSpace = 62 * 62 * 62 * 62 * 62 * 62 * 62
)

// idChars is the length of an identifier after its prefix.
const idChars = 24

// NewID returns prefix followed by 24 base62 characters: seven that encode the wall-clock
// millisecond, so identifiers made together sit together in the id indexes (a commit then writes
// a few index pages instead of one random page per row: +15 % creates, +45 % confirms in
// docs/PERFORMANCE.md), and 17 random ones (about 101 bits), which alone make an identifier
// unguessable. The time part says no more than created_at does; nothing parses it.
func NewID(prefix string) string {
	out := make([]byte, 0, len(prefix)+idChars)
	out = append(out, prefix...)
	ms := uint64(clock.Real{}.Now().UnixMilli()) % idTimeSpace
	var head [idTimeChars]byte
	for i := idTimeChars - 1; i >= 0; i-- {
		head[i] = idAlphabet[ms%62]
		ms /= 62
	}
	out = append(out, head[:]...)
	return string(appendRandom(out, idChars-idTimeChars))
}

// NewSecret returns prefix followed by 24 random base62 characters (about 142 bits), for values
// that authorize (client secrets): no part of them is predictable.
func NewSecret(prefix string) string {
	return string(appendRandom([]byte(prefix), idChars))
}

// appendRandom appends n uniformly random base62 characters to out.
func appendRandom(out []byte, n int) []byte {
	var buf [idChars]byte
	want := len(out) + n
	for len(out) < want {
		if _, err := rand.Read(buf[:]); err != nil {
			panic("domain: crypto/rand failed: " + err.Error())
		}
		// Rejection sampling keeps the distribution uniform: 62*4 = 248 < 256.
		for _, b := range buf {
			if b < 248 && len(out) < want {
				out = append(out, idAlphabet[b%62])
			}
		}
	}
	return out
}

// HasPrefix reports whether id is a well-formed identifier of the given prefix.
func HasPrefix(id, prefix string) bool {
	if !strings.HasPrefix(id, prefix) || len(id) == len(prefix) || len(id) > 255 {
		return false
	}
	for _, c := range id[len(prefix):] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_') {
			return false
		}
	}
	return true
}
