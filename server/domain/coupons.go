package domain

// Coupon durations (Stripe's): how many payments of a subscription a coupon discounts.
const (
	CouponDurationOnce      = "once"
	CouponDurationRepeating = "repeating"
	CouponDurationForever   = "forever"
)

// CouponDurations are the accepted values of duration.
var CouponDurations = []string{CouponDurationOnce, CouponDurationRepeating, CouponDurationForever}

// Coupon is a discount an organization offers (CONTRACT 2 prefix coupon_): either percent_off
// (an integer percent, 1 to 100) or amount_off (centavos of currency). times_redeemed counts the
// checkout sessions that used it and were paid (or completed with nothing to pay); valid says
// whether it can be applied now.
type Coupon struct {
	ID               string   `json:"id"`
	Object           string   `json:"object"`
	AmountOff        *int64   `json:"amount_off"`
	CreatedAt        Time     `json:"created_at"`
	Currency         *string  `json:"currency"`
	Duration         string   `json:"duration"`
	DurationInMonths *int     `json:"duration_in_months"`
	Livemode         bool     `json:"livemode"`
	MaxRedemptions   *int64   `json:"max_redemptions"`
	Metadata         Metadata `json:"metadata"`
	Name             *string  `json:"name"`
	PercentOff       *int64   `json:"percent_off"`
	RedeemBy         Time     `json:"redeem_by"`
	TimesRedeemed    int64    `json:"times_redeemed"`
	UpdatedAt        Time     `json:"updated_at"`
	Valid            bool     `json:"valid"`
	// Deleted is true once the coupon was deleted: it is kept for the sessions and promotion
	// codes that name it, but the API no longer finds it.
	Deleted bool `json:"-"`
}

// PromotionCode is a customer-facing code for a coupon (prefix promo_). code is unique among the
// active codes of an organization and environment, compared without case.
type PromotionCode struct {
	ID             string   `json:"id"`
	Object         string   `json:"object"`
	Active         bool     `json:"active"`
	Code           string   `json:"code"`
	Coupon         *Coupon  `json:"coupon"`
	CreatedAt      Time     `json:"created_at"`
	ExpiresAt      Time     `json:"expires_at"`
	Livemode       bool     `json:"livemode"`
	MaxRedemptions *int64   `json:"max_redemptions"`
	Metadata       Metadata `json:"metadata"`
	TimesRedeemed  int64    `json:"times_redeemed"`
	UpdatedAt      Time     `json:"updated_at"`
}
