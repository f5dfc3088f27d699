package checkout

import (
	"errors"
	"slices"
	"strings"

	"troco/db"
	"troco/server/core"
	"troco/server/discounts"
	"troco/server/domain"
	"troco/server/payments"
)

// Discounts on checkout sessions (SPEC 2.4, CONTRACT 3): a coupon or promotion code given as
// discount at creation, or a promotion code the buyer enters on the hosted page when
// allow_promotion_codes is true (the two exclude each other). The server computes
// discount_amount from the subtotal (server/discounts: percent rounded half up to the centavo,
// amount_off capped at the subtotal), spreads it over the line items' total_amount, and
// total_amount = subtotal_amount − discount_amount + tax_amount is what the payment intent
// charges. A redemption counts only once the session is paid (or completes with nothing to pay):
// times_redeemed is derived from checkout_discounts and the session's payment_status.
//
// Subscription mode: the discount applies to what is due at confirmation (the first payment;
// zero during a trial) and becomes the subscription's coupon, whose duration (once, repeating,
// forever) then applies to the renewals.

// applied is a discount resolved for a session: its coupon and, when the discount came through a
// promotion code, that code.
type applied struct {
	coupon *domain.Coupon
	promo  *domain.PromotionCode
}

// id is what the session's discount field shows: the promotion code's id, else the coupon's.
func (d *applied) id() string {
	if d.promo != nil {
		return d.promo.ID
	}
	return d.coupon.ID
}

// problem reports why the discount cannot be redeemed now, and how to name it in a message.
func (d *applied) problem(tx *db.Tx) (discounts.Reason, string) {
	if d.promo != nil {
		return discounts.PromotionCodeProblem(d.promo, tx.Now), "promotion code " + d.promo.Code
	}
	return discounts.CouponProblem(d.coupon, tx.Now), "coupon " + d.coupon.ID
}

// sessionDiscount resolves the discount of a create body: a coupon_ or promo_ id of the scope
// that can be redeemed now (unknown: 404; expired, exhausted, inactive: 400; both naming
// discount). It cannot be combined with allow_promotion_codes.
func sessionDiscount(tx *db.Tx, s domain.Scope, p SessionParams) (*applied, error) {
	if p.Discount == nil {
		return nil, nil
	}
	if p.AllowPromotionCodes != nil && *p.AllowPromotionCodes {
		return nil, domain.Invalid("discount", "discount and allow_promotion_codes cannot be combined: pre-apply a discount, or let the buyer enter a promotion code.")
	}
	d, err := findApplied(tx, s, *p.Discount, false)
	if err != nil {
		return nil, err
	}
	if r, what := d.problem(tx); r != "" {
		return nil, discounts.Refuse("discount", r, what)
	}
	return d, nil
}

// findApplied looks a discount id up in scope. anyState also finds deleted coupons (to explain
// why a discount applied earlier no longer works); otherwise they are a 404.
func findApplied(tx *db.Tx, s domain.Scope, id string, anyState bool) (*applied, error) {
	if strings.HasPrefix(id, domain.PrefixPromotionCode) {
		p, err := tx.FindPromotionCodeByID(s, id)
		if errors.Is(err, db.ErrNotFound) {
			return nil, domain.NotFound("discount", "promotion code", id)
		}
		if err != nil {
			return nil, err
		}
		return &applied{coupon: p.Coupon, promo: p}, nil
	}
	find := tx.FindCouponByID
	if anyState {
		find = tx.FindCouponAnyState
	}
	c, err := find(s, id)
	if errors.Is(err, db.ErrNotFound) {
		return nil, domain.NotFound("discount", "coupon", id)
	}
	if err != nil {
		return nil, err
	}
	return &applied{coupon: c}, nil
}

// applyDiscount prices cs with d (nil removes the discount): discount_amount, the line items'
// total_amount and total_amount; an open session's payment_status follows the total. A total
// between 1 and 49 centavos (below the payments minimum) is refused, naming param.
func applyDiscount(cs *domain.CheckoutSession, d *applied, param string) error {
	var amount int64
	if d != nil {
		if c := d.coupon.Currency; c != nil && *c != cs.Currency {
			return discounts.Refuse(param, discounts.ReasonCurrency, "coupon "+d.coupon.ID)
		}
		amount = discounts.Amount(cs.SubtotalAmount, d.coupon)
	}
	total := cs.SubtotalAmount - amount + cs.TaxAmount
	if d != nil && total > 0 && total < payments.MinAmount {
		return discounts.Refuse(param, discounts.ReasonBelowMinimum, "")
	}
	subtotals := make([]int64, len(cs.LineItems))
	for i, li := range cs.LineItems {
		subtotals[i] = li.SubtotalAmount
	}
	shares := discounts.Allocate(amount, subtotals)
	cs.LineItems = slices.Clone(cs.LineItems) // a copy of the session made before keeps its items
	for i := range cs.LineItems {
		cs.LineItems[i].TotalAmount = subtotals[i] - shares[i]
	}
	cs.DiscountAmount, cs.TotalAmount, cs.Discount = amount, total, nil
	if d != nil {
		id := d.id()
		cs.Discount = &id
	}
	if cs.Status == domain.CheckoutOpen {
		cs.PaymentStatus = domain.CheckoutUnpaid
		if total == 0 {
			cs.PaymentStatus = domain.CheckoutNoPaymentRequired
		}
	}
	return nil
}

// recordDiscount writes which coupon and promotion code a session applies (the rows
// times_redeemed counts once the session is paid).
func recordDiscount(tx *db.Tx, s domain.Scope, sessionID string, d *applied) error {
	if d == nil {
		return tx.ClearCheckoutDiscount(s, sessionID)
	}
	var promo *string
	if d.promo != nil {
		promo = &d.promo.ID
	}
	return tx.SetCheckoutDiscount(s, sessionID, d.coupon.ID, promo)
}

// ApplyPromotionCode is the buyer entering a promotion code on the hosted page of an open
// session that allows them: the code (any case) must be active and redeemable now; it replaces
// a code applied before. The amounts are recomputed and the session's payment intent, if an
// earlier attempt created one, follows the new total (it is canceled and let go when nothing is
// left to charge). No event is emitted (Stripe has no checkout.session.updated): the amounts show
// in later reads and in checkout.session.completed. A refused code is a *discounts.Error naming
// promotion_code.
func (svc *Service) ApplyPromotionCode(tx *db.Tx, a domain.Actor, id, code string) (*domain.CheckoutSession, error) {
	cs, err := openForPromotionCode(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	code = strings.TrimSpace(code)
	if code == "" {
		return nil, domain.Missing("promotion_code")
	}
	p, err := core.FindRedeemablePromotionCode(tx, a.Scope, code, "promotion_code")
	if err != nil {
		return nil, err
	}
	return cs, svc.setDiscount(tx, a, cs, &applied{coupon: p.Coupon, promo: p}, "promotion_code")
}

// RemovePromotionCode takes the buyer's promotion code off an open session.
func (svc *Service) RemovePromotionCode(tx *db.Tx, a domain.Actor, id string) (*domain.CheckoutSession, error) {
	cs, err := openForPromotionCode(tx, a.Scope, id)
	if err != nil || cs.Discount == nil {
		return cs, err
	}
	return cs, svc.setDiscount(tx, a, cs, nil, "promotion_code")
}

func openForPromotionCode(tx *db.Tx, s domain.Scope, id string) (*domain.CheckoutSession, error) {
	cs, err := GetSession(tx, s, id)
	if err != nil {
		return nil, err
	}
	if cs.Status != domain.CheckoutOpen || !tx.Now.Before(cs.ExpiresAt.Time) {
		return nil, stateConflict(cs, "changed")
	}
	if !cs.AllowPromotionCodes {
		return nil, discounts.Refuse("promotion_code", discounts.ReasonNotAllowed, "")
	}
	return cs, nil
}

// setDiscount applies d to an open session and writes it, keeping its payment intent in step.
func (svc *Service) setDiscount(tx *db.Tx, a domain.Actor, cs *domain.CheckoutSession, d *applied, param string) error {
	if err := applyDiscount(cs, d, param); err != nil {
		return err
	}
	if cs.PaymentIntent != nil {
		piID := *cs.PaymentIntent
		if cs.TotalAmount == 0 {
			// Nothing to charge any more. The session lets go of the intent first, so the intent's
			// cancellation (through the payments hook) does not concern it.
			cs.PaymentIntent = nil
			if err := tx.UpdateCheckoutSession(a.Scope, cs); err != nil {
				return err
			}
			if _, err := svc.Payments.CancelIfOpen(tx, a, piID, "abandoned"); err != nil {
				return err
			}
		} else {
			pi, err := svc.Payments.GetIntent(tx, a.Scope, piID)
			if err != nil {
				return err
			}
			if pi.Amount != cs.TotalAmount {
				amount := cs.TotalAmount
				if _, err := svc.Payments.UpdateOwned(tx, a, piID, payments.IntentParams{Amount: &amount}); err != nil {
					return err
				}
			}
		}
	}
	if err := tx.UpdateCheckoutSession(a.Scope, cs); err != nil {
		return err
	}
	return recordDiscount(tx, a.Scope, cs.ID, d)
}

// checkDiscount refuses to charge a session whose discount can no longer be redeemed (it
// expired, ran out, was deactivated or deleted since it was applied): a 400 naming discount
// that changes nothing. The buyer removes a promotion code to pay the full price; a pre-applied
// discount needs a new session.
func checkDiscount(tx *db.Tx, s domain.Scope, cs *domain.CheckoutSession) error {
	if cs.Discount == nil {
		return nil
	}
	d, err := findApplied(tx, s, *cs.Discount, true)
	if err != nil {
		return err
	}
	if r, what := d.problem(tx); r != "" {
		return discounts.Refuse("discount", r, what)
	}
	return nil
}

// DiscountLabel is how the hosted page names a session's discount: the promotion code the buyer
// typed, else the coupon's name (empty when it has none).
func DiscountLabel(tx *db.Tx, s domain.Scope, cs *domain.CheckoutSession) (string, error) {
	if cs.Discount == nil {
		return "", nil
	}
	d, err := findApplied(tx, s, *cs.Discount, true)
	if err != nil {
		if _, ok := domain.AsError(err); ok {
			return "", nil
		}
		return "", err
	}
	if d.promo != nil {
		return d.promo.Code, nil
	}
	if d.coupon.Name != nil {
		return *d.coupon.Name, nil
	}
	return "", nil
}
