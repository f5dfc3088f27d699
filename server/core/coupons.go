package core

import (
	"crypto/rand"
	"errors"
	"regexp"
	"slices"
	"strings"
	"time"

	"troco/db"
	"troco/server/discounts"
	"troco/server/domain"
)

// Coupons and promotion codes (CONTRACT 2: coupon_, promo_), shaped like Stripe's. percent_off is
// an integer percent (1 to 100; Stripe's name, without its decimals, so money stays integer);
// amount_off is centavos of brl. The math and the redemption rules are in server/discounts;
// applying a discount to a checkout session is in server/checkout/discounts.go.

// Limits of coupons and promotion codes (troco's choices; Stripe's where it has them).
const (
	maxCouponName       = 40
	maxDurationInMonths = 120
)

// promotionCodeText is what a code may contain: letters, digits, dash and underscore.
var promotionCodeText = regexp.MustCompile(`^[A-Za-z0-9_-]{3,50}$`)

// CouponParams is the body of POST /v1/coupons.
type CouponParams struct {
	Name             domain.Opt[string]            `json:"name"`
	PercentOff       *int64                        `json:"percent_off"`
	AmountOff        *int64                        `json:"amount_off"`
	Currency         *string                       `json:"currency"`
	Duration         *string                       `json:"duration"`
	DurationInMonths *int                          `json:"duration_in_months"`
	MaxRedemptions   *int64                        `json:"max_redemptions"`
	RedeemBy         *string                       `json:"redeem_by"`
	Metadata         domain.Opt[map[string]string] `json:"metadata"`
}

// CouponUpdateParams is the body of POST /v1/coupons/{id}: only the name and metadata change
// (Stripe's rule: the terms of a coupon are fixed once customers may hold it).
type CouponUpdateParams struct {
	Name     domain.Opt[string]            `json:"name"`
	Metadata domain.Opt[map[string]string] `json:"metadata"`
}

// futureInstant parses an RFC 3339 timestamp that must be after now.
func futureInstant(param, raw string, now time.Time) (domain.Time, error) {
	t, err := domain.ParseTimestamp(raw)
	if err != nil {
		return domain.Time{}, domain.Invalid(param, "%s must be an RFC 3339 timestamp with a time zone, such as 2030-01-31T23:59:59Z.", param)
	}
	if !t.After(now) {
		return domain.Time{}, domain.Invalid(param, "%s must be in the future.", param)
	}
	return domain.At(t), nil
}

// finishCoupon fills the fields computed at read time.
func finishCoupon(c *domain.Coupon, now time.Time) *domain.Coupon {
	if c != nil {
		c.Valid = discounts.CouponValid(c, now)
	}
	return c
}

// CreateCoupon creates a coupon and emits coupon.created.
func CreateCoupon(tx *db.Tx, a domain.Actor, p CouponParams) (*domain.Coupon, error) {
	c := &domain.Coupon{Duration: domain.CouponDurationOnce, Metadata: domain.Metadata{}}
	switch {
	case p.PercentOff != nil && p.AmountOff != nil:
		return nil, domain.Invalid("amount_off", "A coupon takes either percent_off or amount_off, not both.")
	case p.PercentOff != nil:
		if *p.PercentOff < 1 || *p.PercentOff > discounts.MaxPercentOff {
			return nil, domain.Invalid("percent_off", "percent_off must be an integer percent between 1 and 100.")
		}
		if p.Currency != nil {
			return nil, domain.Invalid("currency", "currency applies only to amount_off coupons.")
		}
		v := *p.PercentOff
		c.PercentOff = &v
	case p.AmountOff != nil:
		if err := domain.ValidateAmount("amount_off", *p.AmountOff, 1); err != nil {
			return nil, err
		}
		cur := ""
		if p.Currency != nil {
			cur = *p.Currency
		}
		cur, err := domain.ValidateCurrency("currency", cur)
		if err != nil {
			return nil, err
		}
		v := *p.AmountOff
		c.AmountOff, c.Currency = &v, &cur
	default:
		return nil, domain.Missing("percent_off")
	}
	if p.Duration != nil {
		if !slices.Contains(domain.CouponDurations, *p.Duration) {
			return nil, domain.Invalid("duration", "duration must be once, repeating or forever.")
		}
		c.Duration = *p.Duration
	}
	switch {
	case c.Duration == domain.CouponDurationRepeating && p.DurationInMonths == nil:
		return nil, domain.Missing("duration_in_months")
	case c.Duration == domain.CouponDurationRepeating:
		if *p.DurationInMonths < 1 || *p.DurationInMonths > maxDurationInMonths {
			return nil, domain.Invalid("duration_in_months", "duration_in_months must be between 1 and %d.", maxDurationInMonths)
		}
		v := *p.DurationInMonths
		c.DurationInMonths = &v
	case p.DurationInMonths != nil:
		return nil, domain.Invalid("duration_in_months", "duration_in_months applies only when duration is repeating.")
	}
	if p.MaxRedemptions != nil {
		if *p.MaxRedemptions < 1 {
			return nil, domain.Invalid("max_redemptions", "max_redemptions must be a positive integer.")
		}
		v := *p.MaxRedemptions
		c.MaxRedemptions = &v
	}
	if p.RedeemBy != nil {
		t, err := futureInstant("redeem_by", *p.RedeemBy, tx.Now)
		if err != nil {
			return nil, err
		}
		c.RedeemBy = t
	}
	if err := applyCouponText(c, p.Name, p.Metadata); err != nil {
		return nil, err
	}
	if err := tx.CreateCoupon(a.Scope, c); err != nil {
		return nil, err
	}
	finishCoupon(c, tx.Now)
	return c, emit(tx, a, "coupon.created", c, nil)
}

func applyCouponText(c *domain.Coupon, name domain.Opt[string], md domain.Opt[map[string]string]) error {
	if err := applyText(&c.Name, name, "name", maxCouponName); err != nil {
		return err
	}
	m, err := domain.ApplyMetadata(c.Metadata, md)
	if err != nil {
		return err
	}
	c.Metadata = m
	return nil
}

// GetCoupon returns a coupon of the scope (a deleted one is a 404).
func GetCoupon(tx *db.Tx, s domain.Scope, id string) (*domain.Coupon, error) {
	c, err := tx.FindCouponByID(s, id)
	if err != nil {
		return nil, notFound(err, "id", "coupon", id)
	}
	return finishCoupon(c, tx.Now), nil
}

// UpdateCoupon changes a coupon's name or metadata and emits coupon.updated.
func UpdateCoupon(tx *db.Tx, a domain.Actor, id string, p CouponUpdateParams) (*domain.Coupon, error) {
	c, err := GetCoupon(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	before := *c
	if err := applyCouponText(c, p.Name, p.Metadata); err != nil {
		return nil, err
	}
	if err := tx.UpdateCoupon(a.Scope, c); err != nil {
		return nil, err
	}
	return c, emit(tx, a, "coupon.updated", c, &before)
}

// DeleteCoupon deletes a coupon and emits coupon.deleted. It can no longer be applied (nor its
// promotion codes); sessions that already applied it keep their discount record.
func DeleteCoupon(tx *db.Tx, a domain.Actor, id string) (*domain.Deleted, error) {
	c, err := GetCoupon(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if err := tx.DeleteCoupon(a.Scope, id); err != nil {
		return nil, err
	}
	c.Valid = false
	return &domain.Deleted{ID: id, Object: "coupon", Deleted: true}, emit(tx, a, "coupon.deleted", c, nil)
}

// ListCoupons pages the coupons of a scope with their computed fields.
func ListCoupons(tx *db.Tx, s domain.Scope, lp db.ListParams) ([]*domain.Coupon, bool, error) {
	out, more, err := tx.ListCoupons(s, lp)
	for _, c := range out {
		finishCoupon(c, tx.Now)
	}
	return out, more, err
}

// PromotionCodeParams is the body of POST /v1/promotion-codes.
type PromotionCodeParams struct {
	Coupon         string                        `json:"coupon"`
	Code           *string                       `json:"code"`
	Active         *bool                         `json:"active"`
	MaxRedemptions *int64                        `json:"max_redemptions"`
	ExpiresAt      *string                       `json:"expires_at"`
	Metadata       domain.Opt[map[string]string] `json:"metadata"`
}

// PromotionCodeUpdateParams is the body of POST /v1/promotion-codes/{id}.
type PromotionCodeUpdateParams struct {
	Active   *bool                         `json:"active"`
	Metadata domain.Opt[map[string]string] `json:"metadata"`
}

// codeAlphabet generates codes without look-alike characters (no 0/O, 1/I/L).
const codeAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

func generateCode() string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		panic("core: crypto/rand failed: " + err.Error())
	}
	for i := range b {
		b[i] = codeAlphabet[int(b[i])%len(codeAlphabet)]
	}
	return string(b)
}

func errCodeTaken(code string) error {
	return domain.Invalid("code", "An active promotion code %q already exists in this environment (codes are compared without case); deactivate it or choose another code.", code)
}

func finishPromotionCode(p *domain.PromotionCode, now time.Time) *domain.PromotionCode {
	if p != nil {
		finishCoupon(p.Coupon, now)
	}
	return p
}

// CreatePromotionCode creates a customer-facing code for a coupon of the scope and emits
// promotion_code.created. Without code, an 8-character code is generated.
func CreatePromotionCode(tx *db.Tx, a domain.Actor, p PromotionCodeParams) (*domain.PromotionCode, error) {
	if p.Coupon == "" {
		return nil, domain.Missing("coupon")
	}
	c, err := tx.FindCouponByID(a.Scope, p.Coupon)
	if err != nil {
		return nil, notFound(err, "coupon", "coupon", p.Coupon)
	}
	if r := discounts.CouponProblem(c, tx.Now); r != "" {
		return nil, discounts.Refuse("coupon", r, "coupon "+c.ID)
	}
	pc := &domain.PromotionCode{Coupon: c, Active: true, Metadata: domain.Metadata{}}
	if p.Code != nil {
		code := strings.TrimSpace(*p.Code)
		if !promotionCodeText.MatchString(code) {
			return nil, domain.Invalid("code", "code must be 3 to 50 letters, digits, dashes or underscores.")
		}
		pc.Code = code
	} else {
		pc.Code = generateCode()
	}
	if p.Active != nil {
		pc.Active = *p.Active
	}
	if p.MaxRedemptions != nil {
		if *p.MaxRedemptions < 1 {
			return nil, domain.Invalid("max_redemptions", "max_redemptions must be a positive integer.")
		}
		v := *p.MaxRedemptions
		pc.MaxRedemptions = &v
	}
	if p.ExpiresAt != nil {
		t, err := futureInstant("expires_at", *p.ExpiresAt, tx.Now)
		if err != nil {
			return nil, err
		}
		pc.ExpiresAt = t
	}
	if pc.Metadata, err = domain.ApplyMetadata(pc.Metadata, p.Metadata); err != nil {
		return nil, err
	}
	if err := tx.CreatePromotionCode(a.Scope, pc); err != nil {
		if errors.Is(err, db.ErrConflict) {
			return nil, errCodeTaken(pc.Code)
		}
		return nil, err
	}
	finishPromotionCode(pc, tx.Now)
	return pc, emit(tx, a, "promotion_code.created", pc, nil)
}

// GetPromotionCode returns a promotion code of the scope.
func GetPromotionCode(tx *db.Tx, s domain.Scope, id string) (*domain.PromotionCode, error) {
	p, err := tx.FindPromotionCodeByID(s, id)
	if err != nil {
		return nil, notFound(err, "id", "promotion code", id)
	}
	return finishPromotionCode(p, tx.Now), nil
}

// UpdatePromotionCode (de)activates a code or changes its metadata and emits
// promotion_code.updated.
func UpdatePromotionCode(tx *db.Tx, a domain.Actor, id string, p PromotionCodeUpdateParams) (*domain.PromotionCode, error) {
	pc, err := GetPromotionCode(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	before := *pc
	if p.Active != nil {
		pc.Active = *p.Active
	}
	if pc.Metadata, err = domain.ApplyMetadata(pc.Metadata, p.Metadata); err != nil {
		return nil, err
	}
	if err := tx.UpdatePromotionCode(a.Scope, pc); err != nil {
		if errors.Is(err, db.ErrConflict) {
			e := errCodeTaken(pc.Code).(*domain.Error)
			e.Param = "active"
			return nil, e
		}
		return nil, err
	}
	return pc, emit(tx, a, "promotion_code.updated", pc, &before)
}

// ListPromotionCodes pages the promotion codes of a scope with their coupons.
func ListPromotionCodes(tx *db.Tx, s domain.Scope, f db.PromotionCodeFilter, lp db.ListParams) ([]*domain.PromotionCode, bool, error) {
	out, more, err := tx.ListPromotionCodes(s, f, lp)
	for _, p := range out {
		finishPromotionCode(p, tx.Now)
	}
	return out, more, err
}

// FindRedeemablePromotionCode returns the active promotion code whose text is code (any case)
// if it can be redeemed now; otherwise a *discounts.Error naming param.
func FindRedeemablePromotionCode(tx *db.Tx, s domain.Scope, code, param string) (*domain.PromotionCode, error) {
	p, err := tx.FindActivePromotionCodeByCode(s, code)
	if errors.Is(err, db.ErrNotFound) {
		return nil, discounts.Refuse(param, discounts.ReasonNotFound, quoteCode(code))
	}
	if err != nil {
		return nil, err
	}
	if r := discounts.PromotionCodeProblem(p, tx.Now); r != "" {
		return nil, discounts.Refuse(param, r, "promotion code "+p.Code)
	}
	return finishPromotionCode(p, tx.Now), nil
}

func quoteCode(code string) string {
	if len(code) > 50 {
		code = code[:50] + "..."
	}
	return `"` + code + `"`
}
