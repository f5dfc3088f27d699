package server_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/matryer/is"
)

// TestBrowserCheckoutPromotionCode: a buyer types a promotion code on the hosted page, sees the
// discount, then pays the discounted total by card (skips without Chromium, like the other
// browser tests).
func TestBrowserCheckoutPromotionCode(t *testing.T) {
	is := is.New(t)
	br := newChrome(t)
	e := newEnv(t)
	c := e.coCoupon(e.Test, map[string]any{"percent_off": 15})
	e.coPromo(e.Test, map[string]any{"coupon": c.Str("id"), "code": "BEMVINDO15"})
	s := e.coSimple(e.Test, map[string]any{"allow_promotion_codes": true, "customer_email": "ana@example.com"})
	br.do("open checkout", chromedp.Navigate(s.Str("url")), chromedp.WaitVisible(tid("promotion-code"), chromedp.ByQuery))

	br.do("wrong code",
		chromedp.SendKeys(tid("promotion-code"), "NAOEXISTE", chromedp.ByQuery),
		chromedp.Click(tid("promotion-code-apply"), chromedp.ByQuery),
		chromedp.WaitVisible(tid("promotion-code-error"), chromedp.ByQuery),
	)
	is.True(strings.Contains(br.text("promotion-code-error"), "Cupom inválido"))
	br.shoot("promo-invalid")

	br.do("apply code",
		chromedp.SetValue(tid("promotion-code"), "bemvindo15", chromedp.ByQuery),
		chromedp.Click(tid("promotion-code-apply"), chromedp.ByQuery),
		chromedp.WaitVisible(tid("promotion-code-applied"), chromedp.ByQuery),
	)
	is.Equal(br.text("discount-amount"), "−R$ 15,00")
	is.Equal(br.text("total-amount"), "R$ 85,00")
	is.Equal(br.text("pay-button"), "Pagar R$ 85,00")
	br.shoot("promo-applied")

	br.do("pay",
		chromedp.SendKeys(sel("#name"), "Ana Souza", chromedp.ByQuery),
		chromedp.SendKeys(sel("#card-number"), "4242424242424242", chromedp.ByQuery),
		chromedp.SendKeys(sel("#card-exp"), "1230", chromedp.ByQuery),
		chromedp.SendKeys(sel("#card-cvc"), "123", chromedp.ByQuery),
		chromedp.SendKeys(sel("#card-name"), "ANA SOUZA", chromedp.ByQuery),
		chromedp.Click(tid("pay-button"), chromedp.ByQuery),
		chromedp.WaitVisible(tid("success"), chromedp.ByQuery),
	)
	g := e.Do("GET", "/v1/checkout-sessions/"+s.Str("id"), e.Test, nil)
	is.Equal(g.Str("payment_status"), "paid")
	is.Equal(g.Body["total_amount"], float64(8500))
	is.Equal(e.Do("GET", "/v1/payment-intents/"+g.Str("payment_intent"), e.Test, nil).Body["amount_received"], float64(8500))
}
