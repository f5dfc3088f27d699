package pages

import "testing"

func TestEveryPromoTextHasBothLanguages(t *testing.T) {
	for k, m := range promoTexts {
		if m[0] == "" || m[1] == "" {
			t.Errorf("promotion code text %q lacks a translation", k)
		}
	}
	if PtBR.PromoText("unknown") != PtBR.T("error_generic") {
		t.Error("an unknown reason falls back to the generic error")
	}
}
