package server_test

import (
	"testing"

	"github.com/matryer/is"

	"troco/server/domain"
)

// TestConfirmSeesOrganizationChanges: a card confirmation reads the organization's payment terms
// with the intent (no copy kept between requests): a new instalment ceiling and a new fee plan
// set by the platform apply to the very next confirmation, and another organization sharing the
// same plan text (cached decoded by text) or keeping the default is not affected.
func TestConfirmSeesOrganizationChanges(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	p := newActPlatform(e, "Plataforma Termos")
	mk := func(name string) (string, string) {
		r := e.Do("POST", "/v1/organizations", p.Test, map[string]any{"name": name})
		is.Equal(r.Status, 200)
		id := r.Str("id")
		return id, e.NewKey(id, false, domain.ScopeRead, domain.ScopeWrite)
	}
	id, key := mk("Loja A")
	_, otherKey := mk("Loja B")
	sale := func(key string, installments int) resp {
		pi := e.Do("POST", "/v1/payment-intents", key, map[string]any{"amount": 10000, "currency": "brl"})
		is.Equal(pi.Status, 200)
		return e.Do("POST", "/v1/payment-intents/"+pi.Str("id")+"/confirm", key, map[string]any{
			"payment_method_type": "credit_card", "installments": installments,
			"card": map[string]any{"number": "4242424242424242", "exp_month": 12, "exp_year": 2030, "cvc": "123"}})
	}
	fee := func(key, pi string) float64 {
		txs := e.Do("GET", "/v1/transactions?payment_intent="+pi, key, nil).Data()
		is.Equal(len(txs), 1)
		return txs[0]["fee_amount"].(float64)
	}

	is.Equal(sale(key, 6).Status, 200) // the default ceiling is 12
	r := e.Do("POST", "/v1/organizations/"+id, p.Test, map[string]any{"max_installments": 3})
	is.Equal(r.Status, 200)
	r = sale(key, 6)
	is.Equal(r.Status, 400) // the next confirmation sees the new ceiling
	is.Equal(r.ErrParam(), "installments")
	is.Equal(sale(otherKey, 6).Status, 200) // another organization keeps its own

	before := sale(key, 1)
	is.Equal(before.Status, 200)
	defaultFee := fee(key, before.Str("id"))
	r = e.Do("POST", "/v1/organizations/"+id, p.Live, map[string]any{"fee_plan": map[string]any{"card_fee_rate": 100, "card_fee_amount": 0}})
	is.Equal(r.Status, 200)
	after := sale(key, 1)
	is.Equal(after.Status, 200)
	is.Equal(fee(key, after.Str("id")), float64(100)) // 1% of R$ 100,00 from the very next sale
	is.True(defaultFee != 100)
	other := sale(otherKey, 1)
	is.Equal(fee(otherKey, other.Str("id")), defaultFee) // the other organization keeps the default plan

	r = e.Do("POST", "/v1/organizations/"+id, p.Live, map[string]any{"fee_plan": "default"})
	is.Equal(r.Status, 200)
	back := sale(key, 1)
	is.Equal(fee(key, back.Str("id")), defaultFee) // and back to the default at once
}
