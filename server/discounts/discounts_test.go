package discounts

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/server/domain"
)

func pct(p int64) *domain.Coupon    { return &domain.Coupon{PercentOff: &p} }
func amount(a int64) *domain.Coupon { return &domain.Coupon{AmountOff: &a} }

func TestAmount(t *testing.T) {
	is := is.New(t)
	is.Equal(Amount(9999, pct(10)), int64(1000))                    // 999,9 rounds up
	is.Equal(Amount(4990, pct(5)), int64(250))                      // 249,5: half up
	is.Equal(Amount(4970, pct(5)), int64(249))                      // 248,5 → 249 (half up, never to even)
	is.Equal(Amount(101, pct(1)), int64(1))                         // 1,01
	is.Equal(Amount(149, pct(1)), int64(1))                         // 1,49
	is.Equal(Amount(150, pct(1)), int64(2))                         // 1,5
	is.Equal(Amount(5000, pct(100)), int64(5000))                   // never above the subtotal
	is.Equal(Amount(99_999_999_99, pct(100)), int64(99_999_999_99)) // the largest session
	is.Equal(Amount(10000, amount(2500)), int64(2500))
	is.Equal(Amount(10000, amount(15000)), int64(10000)) // capped
	is.Equal(Amount(0, pct(50)), int64(0))
	is.Equal(Amount(1000, nil), int64(0))
}

func TestAllocate(t *testing.T) {
	is := is.New(t)
	is.Equal(Allocate(1000, []int64{1000, 2000, 3000}), []int64{167, 333, 500})
	is.Equal(Allocate(1, []int64{100, 100, 100}), []int64{1, 0, 0}) // a tie goes to the earlier item
	is.Equal(Allocate(2, []int64{100, 100, 100}), []int64{1, 1, 0})
	is.Equal(Allocate(300, []int64{100, 0, 200}), []int64{100, 0, 200}) // the whole subtotal; a free item gets nothing
	is.Equal(Allocate(0, []int64{100}), []int64{0})
	is.Equal(Allocate(5, nil), []int64{})
	// Large amounts do not overflow: discount × amount exceeds int64.
	big := []int64{99_999_999_99, 1}
	sh := Allocate(99_999_999_99, big)
	is.Equal(sh[0]+sh[1], int64(99_999_999_99))
	is.True(sh[0] <= big[0] && sh[1] <= big[1])
	// Shares always sum to the discount and never exceed their item.
	for d := int64(0); d <= 777; d += 7 {
		items := []int64{123, 0, 333, 321}
		sh := Allocate(d, items)
		var sum int64
		for i, s := range sh {
			is.True(s >= 0 && s <= items[i])
			sum += s
		}
		is.Equal(sum, d)
	}
}

func TestProblems(t *testing.T) {
	is := is.New(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	max := int64(2)
	c := &domain.Coupon{MaxRedemptions: &max, RedeemBy: domain.At(now.Add(time.Hour))}
	is.Equal(CouponProblem(c, now), Reason(""))
	is.True(CouponValid(c, now))
	is.Equal(CouponProblem(c, now.Add(time.Hour)), ReasonExpired) // redeem_by is exclusive
	c.TimesRedeemed = 2
	is.Equal(CouponProblem(c, now), ReasonExhausted)
	c.TimesRedeemed = 0
	c.Deleted = true
	is.Equal(CouponProblem(c, now), ReasonCouponDeleted)
	c.Deleted = false

	p := &domain.PromotionCode{Active: true, Coupon: c}
	is.Equal(PromotionCodeProblem(p, now), Reason(""))
	p.Active = false
	is.Equal(PromotionCodeProblem(p, now), ReasonInactive)
	p.Active = true
	p.ExpiresAt = domain.At(now)
	is.Equal(PromotionCodeProblem(p, now), ReasonExpired)
	p.ExpiresAt = domain.Time{}
	one := int64(1)
	p.MaxRedemptions, p.TimesRedeemed = &one, 1
	is.Equal(PromotionCodeProblem(p, now), ReasonExhausted)
	p.MaxRedemptions = nil
	c.TimesRedeemed = 2 // the coupon's own limit applies to its codes
	is.Equal(PromotionCodeProblem(p, now), ReasonExhausted)

	e := Refuse("discount", ReasonExpired, "coupon coupon_x")
	is.Equal(e.Err.Status, 400)
	is.Equal(e.Err.Param, "discount")
	de, ok := domain.AsError(e)
	is.True(ok)
	is.Equal(de.Code, domain.CodeInvalidRequest)
}
