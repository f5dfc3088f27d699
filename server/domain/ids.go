package domain

import (
	"crypto/rand"
	"strings"
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
)

const idAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewID returns prefix followed by 24 random base62 characters (about 142 bits).
func NewID(prefix string) string {
	const n = 24
	var buf [n]byte
	// Rejection sampling keeps the distribution uniform: 62*4 = 248 < 256.
	out := make([]byte, 0, len(prefix)+n)
	out = append(out, prefix...)
	for len(out) < len(prefix)+n {
		if _, err := rand.Read(buf[:]); err != nil {
			panic("domain: crypto/rand failed: " + err.Error())
		}
		for _, b := range buf {
			if b < 248 && len(out) < len(prefix)+n {
				out = append(out, idAlphabet[b%62])
			}
		}
	}
	return string(out)
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
