package server

import (
	"errors"
	"net/http"

	"troco/db"
	"troco/pages"
	"troco/server/core"
	"troco/server/discounts"
	"troco/server/domain"
)

// Coupons (coupon_) and promotion codes (promo_): thin handlers over server/core/coupons.go; the
// hosted page's promotion-code form is at the end.

func (s *Server) handleCouponCreate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p core.CouponParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.CreateCoupon(tx, a, p) })
	})
}

func (s *Server) handleCouponGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.GetCoupon(tx, a.Scope, id) })
	})
}

func (s *Server) handleCouponUpdate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p core.CouponUpdateParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.UpdateCoupon(tx, a, id, p) })
	})
}

func (s *Server) handleCouponDelete() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.DeleteCoupon(tx, a, id) })
	})
}

func (s *Server) handleCouponList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseList(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			items, more, err := core.ListCoupons(tx, a.Scope, q.ListParams)
			return listOf(r, items, more), err
		})
	})
}

func (s *Server) handlePromotionCodeCreate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p core.PromotionCodeParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.CreatePromotionCode(tx, a, p) })
	})
}

func (s *Server) handlePromotionCodeGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.GetPromotionCode(tx, a.Scope, id) })
	})
}

func (s *Server) handlePromotionCodeUpdate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p core.PromotionCodeUpdateParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.UpdatePromotionCode(tx, a, id, p) })
	})
}

func (s *Server) handlePromotionCodeList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseList(r, "active", "code", "coupon")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		active, err := q.boolean("active")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		f := db.PromotionCodeFilter{Active: active, Code: q.str("code"), Coupon: q.str("coupon")}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			items, more, err := core.ListPromotionCodes(tx, a.Scope, f, q.ListParams)
			return listOf(r, items, more), err
		})
	})
}

// handleHostedPromotionCode is the hosted page's promotion-code form (POST, no JavaScript
// needed): action=apply with promotion_code, or action=remove. It carries the client_secret and
// the CSRF token like the pay form. A valid code redirects back to the page with the new total;
// a refused one re-renders the page with the reason in the buyer's language (400).
func (s *Server) handleHostedPromotionCode() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := s.parseHostedForm(w, r)
		if !ok {
			return
		}
		lang, langParam := pageLang(r)
		paths := hostedPaths{id: v.cs.ID, secret: v.cs.ClientSecret, lang: langParam}
		if v.cs.Status != domain.CheckoutOpen {
			http.Redirect(w, r, paths.page(), http.StatusSeeOther)
			return
		}
		code := r.PostForm.Get("promotion_code")
		remove := r.PostForm.Get("action") == "remove"
		svc := s.checkoutService()
		err := s.hostedWrite(r.Context(), func(tx *db.Tx) error {
			var err error
			if remove {
				_, err = svc.RemovePromotionCode(tx, s.hostedActor(r, v.scope), v.cs.ID)
			} else {
				_, err = svc.ApplyPromotionCode(tx, s.hostedActor(r, v.scope), v.cs.ID, code)
			}
			return err
		})
		if err == nil {
			http.Redirect(w, r, paths.page(), http.StatusSeeOther)
			return
		}
		e, isDomain := domain.AsError(err)
		if !isDomain {
			s.hostedFailure(w, r, err)
			return
		}
		if e.Code == domain.CodeResourceStateConflict {
			http.Redirect(w, r, paths.page(), http.StatusSeeOther)
			return
		}
		if fresh, err := s.loadHosted(r.Context(), v.cs.ID, v.cs.ClientSecret); err == nil {
			v = fresh
		}
		cookie := ensureBrowserCookie(w, r)
		c := s.checkoutView(r, v, lang, langParam, s.csrfToken(v.cs.ID, cookie))
		c.PromoCode = code
		c.PromoError = promotionCodeText(lang, err)
		s.render(w, r, e.Status, pages.CheckoutPage(c))
	})
}

// promotionCodeText explains a refused discount to the buyer.
func promotionCodeText(lang pages.Lang, err error) string {
	var de *discounts.Error
	if errors.As(err, &de) {
		return lang.PromoText(string(de.Reason))
	}
	if e, ok := domain.AsError(err); ok && e.Code == domain.CodeParameterMissing {
		return lang.PromoText("missing")
	}
	return lang.T("error_generic")
}
