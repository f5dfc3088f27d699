package db

import (
	"strings"

	"troco/server/domain"
)

// Coupons and promotion codes. times_redeemed is never stored: it is the number of checkout
// sessions that used the coupon (or code) and were paid, or completed with nothing to pay,
// counted from checkout_discounts, plus (for a coupon) the subscriptions that applied it
// themselves, so it cannot drift from what it describes.

// redeemedSessions is the join of a session's discount with the session, restricted to the
// sessions that count as a redemption.
const redeemedSessions = `SELECT COUNT(*) FROM checkout_discounts d JOIN checkout_sessions s ON s.id = d.session_id
	WHERE s.status = 'complete' AND s.payment_status IN ('paid', 'no_payment_required') AND `

// A coupon is also redeemed by each subscription that applied it itself (subscriptions.coupon_id;
// one whose coupon came from its checkout session counts as that session).
const couponCols = "id, livemode, name, percent_off, amount_off, currency, duration, duration_in_months, max_redemptions, redeem_by, metadata, deleted, created_at, updated_at, ((" +
	redeemedSessions + "d.coupon_id = coupons.id AND d.org_id = coupons.org_id AND d.livemode = coupons.livemode) + " +
	"(SELECT COUNT(*) FROM subscriptions sb WHERE sb.coupon_id = coupons.id AND sb.org_id = coupons.org_id AND sb.livemode = coupons.livemode))"

func scanCoupon(s scanner) (*domain.Coupon, error) {
	var c domain.Coupon
	var live, deleted int
	var redeemBy *int64
	var metadata string
	var created, updated int64
	if err := s.Scan(&c.ID, &live, &c.Name, &c.PercentOff, &c.AmountOff, &c.Currency, &c.Duration, &c.DurationInMonths, &c.MaxRedemptions,
		&redeemBy, &metadata, &deleted, &created, &updated, &c.TimesRedeemed); err != nil {
		return nil, err
	}
	c.Object = "coupon"
	c.Livemode, c.Deleted = live == 1, deleted == 1
	c.RedeemBy = domain.UnixPtr(redeemBy)
	c.Metadata = parseMetadata(metadata)
	c.CreatedAt, c.UpdatedAt = domain.Unix(created), domain.Unix(updated)
	return &c, nil
}

func nullableUnix(t domain.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	v := t.Unix()
	return &v
}

// CreateCoupon inserts c in scope, assigning its id and timestamps.
func (tx *Tx) CreateCoupon(s domain.Scope, c *domain.Coupon) error {
	c.ID = domain.NewID(domain.PrefixCoupon)
	c.Object = "coupon"
	c.Livemode = s.Livemode
	c.CreatedAt, c.UpdatedAt = domain.At(tx.Now), domain.At(tx.Now)
	if c.Metadata == nil {
		c.Metadata = domain.Metadata{}
	}
	_, err := tx.exec(`INSERT INTO coupons (id, org_id, livemode, name, percent_off, amount_off, currency, duration, duration_in_months, max_redemptions, redeem_by, metadata, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, s.OrgID, boolInt(s.Livemode), c.Name, c.PercentOff, c.AmountOff, c.Currency, c.Duration, c.DurationInMonths, c.MaxRedemptions,
		nullableUnix(c.RedeemBy), metadataJSON(c.Metadata), tx.now(), tx.now())
	return translate(err, "create coupon")
}

// FindCouponByID returns a coupon of the scope that was not deleted.
func (tx *Tx) FindCouponByID(s domain.Scope, id string) (*domain.Coupon, error) {
	c, err := scanCoupon(tx.queryRow("SELECT "+couponCols+" FROM coupons WHERE id = ? AND org_id = ? AND livemode = ? AND deleted = 0", id, s.OrgID, boolInt(s.Livemode)))
	return c, translate(err, "find coupon")
}

// FindCouponAnyState returns a coupon of the scope, deleted or not (the coupon behind a
// promotion code or an applied discount).
func (tx *Tx) FindCouponAnyState(s domain.Scope, id string) (*domain.Coupon, error) {
	c, err := scanCoupon(tx.queryRow("SELECT "+couponCols+" FROM coupons WHERE id = ? AND org_id = ? AND livemode = ?", id, s.OrgID, boolInt(s.Livemode)))
	return c, translate(err, "find coupon")
}

// UpdateCoupon writes the mutable fields of c (name, metadata).
func (tx *Tx) UpdateCoupon(s domain.Scope, c *domain.Coupon) error {
	c.UpdatedAt = domain.At(tx.Now)
	res, err := tx.exec("UPDATE coupons SET name = ?, metadata = ?, updated_at = ? WHERE id = ? AND org_id = ? AND livemode = ? AND deleted = 0",
		c.Name, metadataJSON(c.Metadata), tx.now(), c.ID, s.OrgID, boolInt(s.Livemode))
	return affectedOne(res, err, "update coupon")
}

// DeleteCoupon marks a coupon deleted: it can no longer be found or redeemed; sessions and
// promotion codes that name it keep their record.
func (tx *Tx) DeleteCoupon(s domain.Scope, id string) error {
	res, err := tx.exec("UPDATE coupons SET deleted = 1, updated_at = ? WHERE id = ? AND org_id = ? AND livemode = ? AND deleted = 0", tx.now(), id, s.OrgID, boolInt(s.Livemode))
	return affectedOne(res, err, "delete coupon")
}

// ListCoupons pages the coupons of a scope (not deleted), newest first.
func (tx *Tx) ListCoupons(s domain.Scope, p ListParams) ([]*domain.Coupon, bool, error) {
	var w filter
	w.add("org_id = ?", s.OrgID)
	w.add("livemode = ?", boolInt(s.Livemode))
	w.add("deleted = 0")
	return page(tx, "coupons", couponCols, w, p, func(s scanner) (*domain.Coupon, error) { return scanCoupon(s) })
}

const promotionCodeCols = "id, livemode, active, code, coupon_id, max_redemptions, expires_at, metadata, created_at, updated_at, (" +
	redeemedSessions + "d.promotion_code_id = promotion_codes.id AND d.org_id = promotion_codes.org_id AND d.livemode = promotion_codes.livemode)"

// scanPromotionCode reads a row; Coupon holds only the coupon's id until embedCoupons fills it.
func scanPromotionCode(s scanner) (*domain.PromotionCode, error) {
	var p domain.PromotionCode
	var live, active int
	var couponID string
	var expires *int64
	var metadata string
	var created, updated int64
	if err := s.Scan(&p.ID, &live, &active, &p.Code, &couponID, &p.MaxRedemptions, &expires, &metadata, &created, &updated, &p.TimesRedeemed); err != nil {
		return nil, err
	}
	p.Object = "promotion_code"
	p.Livemode, p.Active = live == 1, active == 1
	p.Coupon = &domain.Coupon{ID: couponID}
	p.ExpiresAt = domain.UnixPtr(expires)
	p.Metadata = parseMetadata(metadata)
	p.CreatedAt, p.UpdatedAt = domain.Unix(created), domain.Unix(updated)
	return &p, nil
}

// PromotionCodeKey is the form in which codes are compared: case does not matter.
func PromotionCodeKey(code string) string { return strings.ToUpper(strings.TrimSpace(code)) }

// CreatePromotionCode inserts p (its Coupon set) in scope. Another active code with the same
// text (any case) is ErrConflict.
func (tx *Tx) CreatePromotionCode(s domain.Scope, p *domain.PromotionCode) error {
	p.ID = domain.NewID(domain.PrefixPromotionCode)
	p.Object = "promotion_code"
	p.Livemode = s.Livemode
	p.CreatedAt, p.UpdatedAt = domain.At(tx.Now), domain.At(tx.Now)
	if p.Metadata == nil {
		p.Metadata = domain.Metadata{}
	}
	_, err := tx.exec(`INSERT INTO promotion_codes (id, org_id, livemode, code, code_key, coupon_id, active, max_redemptions, expires_at, metadata, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ID, s.OrgID, boolInt(s.Livemode), p.Code, PromotionCodeKey(p.Code), p.Coupon.ID, boolInt(p.Active), p.MaxRedemptions, nullableUnix(p.ExpiresAt),
		metadataJSON(p.Metadata), tx.now(), tx.now())
	return translate(err, "create promotion code")
}

// FindPromotionCodeByID returns a promotion code of the scope with its coupon.
func (tx *Tx) FindPromotionCodeByID(s domain.Scope, id string) (*domain.PromotionCode, error) {
	p, err := scanPromotionCode(tx.queryRow("SELECT "+promotionCodeCols+" FROM promotion_codes WHERE id = ? AND org_id = ? AND livemode = ?", id, s.OrgID, boolInt(s.Livemode)))
	if err != nil {
		return nil, translate(err, "find promotion code")
	}
	return p, tx.embedCoupons(s, []*domain.PromotionCode{p})
}

// FindActivePromotionCodeByCode returns the active promotion code of the scope whose text is
// code, compared without case.
func (tx *Tx) FindActivePromotionCodeByCode(s domain.Scope, code string) (*domain.PromotionCode, error) {
	p, err := scanPromotionCode(tx.queryRow("SELECT "+promotionCodeCols+" FROM promotion_codes WHERE org_id = ? AND livemode = ? AND code_key = ? AND active = 1",
		s.OrgID, boolInt(s.Livemode), PromotionCodeKey(code)))
	if err != nil {
		return nil, translate(err, "find promotion code by code")
	}
	return p, tx.embedCoupons(s, []*domain.PromotionCode{p})
}

// UpdatePromotionCode writes the mutable fields of p (active, metadata). Activating a code while
// another active code has the same text is ErrConflict.
func (tx *Tx) UpdatePromotionCode(s domain.Scope, p *domain.PromotionCode) error {
	p.UpdatedAt = domain.At(tx.Now)
	res, err := tx.exec("UPDATE promotion_codes SET active = ?, metadata = ?, updated_at = ? WHERE id = ? AND org_id = ? AND livemode = ?",
		boolInt(p.Active), metadataJSON(p.Metadata), tx.now(), p.ID, s.OrgID, boolInt(s.Livemode))
	return affectedOne(res, err, "update promotion code")
}

// PromotionCodeFilter narrows ListPromotionCodes.
type PromotionCodeFilter struct {
	Active *bool
	Code   string
	Coupon string
}

// ListPromotionCodes pages the promotion codes of a scope, newest first, each with its coupon.
func (tx *Tx) ListPromotionCodes(s domain.Scope, f PromotionCodeFilter, p ListParams) ([]*domain.PromotionCode, bool, error) {
	var w filter
	w.add("org_id = ?", s.OrgID)
	w.add("livemode = ?", boolInt(s.Livemode))
	if f.Active != nil {
		w.add("active = ?", boolInt(*f.Active))
	}
	if f.Code != "" {
		w.add("code_key = ?", PromotionCodeKey(f.Code))
	}
	if f.Coupon != "" {
		w.add("coupon_id = ?", f.Coupon)
	}
	out, more, err := page(tx, "promotion_codes", promotionCodeCols, w, p, func(s scanner) (*domain.PromotionCode, error) { return scanPromotionCode(s) })
	if err != nil {
		return nil, false, err
	}
	return out, more, tx.embedCoupons(s, out)
}

// embedCoupons replaces the id-only Coupon of each code with the coupon (deleted ones included).
func (tx *Tx) embedCoupons(s domain.Scope, codes []*domain.PromotionCode) error {
	byID := map[string]*domain.Coupon{}
	for _, p := range codes {
		id := p.Coupon.ID
		c, ok := byID[id]
		if !ok {
			var err error
			c, err = tx.FindCouponAnyState(s, id)
			if err != nil {
				return err
			}
			byID[id] = c
		}
		p.Coupon = c
	}
	return nil
}

// SetCheckoutDiscount records the coupon (and the promotion code that carried it, if any) a
// session applies; it replaces the session's previous discount.
func (tx *Tx) SetCheckoutDiscount(s domain.Scope, sessionID, couponID string, promotionCodeID *string) error {
	_, err := tx.exec(`INSERT INTO checkout_discounts (session_id, org_id, livemode, coupon_id, promotion_code_id, created_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (session_id) DO UPDATE SET coupon_id = excluded.coupon_id, promotion_code_id = excluded.promotion_code_id, created_at = excluded.created_at`,
		sessionID, s.OrgID, boolInt(s.Livemode), couponID, promotionCodeID, tx.now())
	return translate(err, "set checkout discount")
}

// ClearCheckoutDiscount removes a session's discount record.
func (tx *Tx) ClearCheckoutDiscount(s domain.Scope, sessionID string) error {
	_, err := tx.exec("DELETE FROM checkout_discounts WHERE session_id = ? AND org_id = ? AND livemode = ?", sessionID, s.OrgID, boolInt(s.Livemode))
	return translate(err, "clear checkout discount")
}
