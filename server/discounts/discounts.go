// Package discounts holds the rules of coupons and promotion codes that need no database: what a
// coupon takes off a subtotal, how that discount spreads over line items, and whether a coupon or
// a promotion code can be redeemed at an instant. Operations (create, list, apply to a checkout
// session) live in server/core/coupons.go and server/checkout/discounts.go.
package discounts

import (
	"cmp"
	"fmt"
	"math/bits"
	"net/http"
	"slices"
	"time"

	"troco/server/domain"
)

// MaxPercentOff is the largest percent_off (the whole subtotal).
const MaxPercentOff = 100

// Amount is the discount coupon c gives on subtotal (centavos): percent_off of the subtotal
// rounded half up to the centavo, or amount_off capped at the subtotal. The result is between 0
// and subtotal.
func Amount(subtotal int64, c *domain.Coupon) int64 {
	if c == nil || subtotal <= 0 {
		return 0
	}
	var d int64
	switch {
	case c.PercentOff != nil:
		p := min(max(*c.PercentOff, 0), MaxPercentOff)
		// subtotal ≤ 99 999 999 99 and p ≤ 100: the product fits easily in int64.
		d = (subtotal*p + 50) / 100
	case c.AmountOff != nil:
		d = max(*c.AmountOff, 0)
	}
	return min(d, subtotal)
}

// Allocate splits discount over amounts in proportion to each amount, so that the shares sum to
// discount exactly and no share exceeds its amount: each gets the floor of its exact share, and
// the centavos left go to the largest remainders (the earlier item on a tie). discount must be
// between 0 and the sum of amounts.
func Allocate(discount int64, amounts []int64) []int64 {
	shares := make([]int64, len(amounts))
	var total int64
	for _, a := range amounts {
		total += max(a, 0)
	}
	if discount <= 0 || total <= 0 {
		return shares
	}
	discount = min(discount, total)
	rems := make([]uint64, len(amounts))
	var given int64
	for i, a := range amounts {
		if a <= 0 {
			continue
		}
		// discount·a can exceed int64: multiply in 128 bits. The quotient is at most a.
		hi, lo := bits.Mul64(uint64(discount), uint64(a))
		q, r := bits.Div64(hi, lo, uint64(total))
		shares[i], rems[i] = int64(q), r
		given += int64(q)
	}
	order := make([]int, len(amounts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(rems[y], rems[x]) })
	for _, i := range order {
		if given == discount {
			break
		}
		if rems[i] > 0 {
			shares[i]++
			given++
		}
	}
	return shares
}

// Reason says why a discount cannot be used; the API message and the hosted page's text are
// chosen from it.
type Reason string

// Reasons a discount is refused.
const (
	ReasonNotFound      Reason = "not_found"      // no active promotion code with that text
	ReasonInactive      Reason = "inactive"       // the promotion code was deactivated
	ReasonExpired       Reason = "expired"        // redeem_by or expires_at has passed
	ReasonExhausted     Reason = "exhausted"      // max_redemptions reached
	ReasonCouponDeleted Reason = "coupon_deleted" // the coupon behind a promotion code was deleted
	ReasonBelowMinimum  Reason = "below_minimum"  // the discounted total would be 1 to 49 centavos
	ReasonNotAllowed    Reason = "not_allowed"    // the session does not take promotion codes
	ReasonCurrency      Reason = "currency"       // amount_off in another currency than the session's
)

// Reasons lists every Reason (the hosted page has a text for each).
var Reasons = []Reason{ReasonNotFound, ReasonInactive, ReasonExpired, ReasonExhausted, ReasonCouponDeleted, ReasonBelowMinimum, ReasonNotAllowed, ReasonCurrency}

// CouponProblem reports why coupon c cannot be redeemed at now, or "" when it can. Its
// times_redeemed must be current.
func CouponProblem(c *domain.Coupon, now time.Time) Reason {
	switch {
	case c.Deleted:
		return ReasonCouponDeleted
	case !c.RedeemBy.IsZero() && !now.Before(c.RedeemBy.Time):
		return ReasonExpired
	case c.MaxRedemptions != nil && c.TimesRedeemed >= *c.MaxRedemptions:
		return ReasonExhausted
	}
	return ""
}

// CouponValid is a coupon's valid field: it can be redeemed at now.
func CouponValid(c *domain.Coupon, now time.Time) bool { return CouponProblem(c, now) == "" }

// PromotionCodeProblem reports why promotion code p (with its coupon) cannot be redeemed at now,
// or "" when it can.
func PromotionCodeProblem(p *domain.PromotionCode, now time.Time) Reason {
	switch {
	case !p.Active:
		return ReasonInactive
	case !p.ExpiresAt.IsZero() && !now.Before(p.ExpiresAt.Time):
		return ReasonExpired
	case p.MaxRedemptions != nil && p.TimesRedeemed >= *p.MaxRedemptions:
		return ReasonExhausted
	case p.Coupon == nil:
		return ReasonCouponDeleted
	}
	return CouponProblem(p.Coupon, now)
}

// Error is a refused discount: a 400 naming param, with the Reason the hosted page explains in
// the buyer's language. errors.As finds the *domain.Error inside, so the API answers it as any
// other error.
type Error struct {
	Reason Reason
	Err    *domain.Error
}

func (e *Error) Error() string { return e.Err.Error() }

// Unwrap exposes the API error.
func (e *Error) Unwrap() error { return e.Err }

// Refuse is the error of a discount refused for reason; what names the discount in the message
// ("coupon coupon_…", "promotion code BEMVINDO").
func Refuse(param string, reason Reason, what string) *Error {
	msg := ""
	switch reason {
	case ReasonNotFound:
		msg = fmt.Sprintf("No active promotion code %s exists.", what)
	case ReasonInactive:
		msg = fmt.Sprintf("The %s is not active.", what)
	case ReasonExpired:
		msg = fmt.Sprintf("The %s has expired.", what)
	case ReasonExhausted:
		msg = fmt.Sprintf("The %s reached its max_redemptions.", what)
	case ReasonCouponDeleted:
		msg = fmt.Sprintf("The coupon of the %s was deleted.", what)
	case ReasonBelowMinimum:
		msg = "With this discount the session would charge less than 50 centavos; a session that charges must total 0 or at least 50 centavos (R$ 0,50)."
	case ReasonNotAllowed:
		msg = "This checkout session does not accept promotion codes (allow_promotion_codes is false)."
	case ReasonCurrency:
		msg = fmt.Sprintf("The %s is in another currency than the session.", what)
	default:
		msg = fmt.Sprintf("The %s cannot be used.", what)
	}
	return &Error{Reason: reason, Err: &domain.Error{Status: http.StatusBadRequest, Type: domain.TypeInvalidRequest, Code: domain.CodeInvalidRequest, Param: param, Message: msg}}
}
