package cielo

import "testing"

// Every Cielo return code maps onto a documented decline code (with its category and message);
// an unknown code is a processing_error.
func TestReturnCodesMapOntoDocumentedDeclines(t *testing.T) {
	for rc, code := range returnCodes {
		if _, ok := declines[code]; !ok {
			t.Errorf("return code %s maps to %q, which is not a documented decline code", rc, code)
		}
		pe := Decline(rc)
		if pe.Code != code || pe.Category == "" || pe.Message == "" || pe.AdviceCode == nil {
			t.Errorf("Decline(%s) = %+v", rc, pe)
		}
	}
	for rc, want := range map[string]string{"05": "generic_decline", "51": "insufficient_funds", "N7": "incorrect_cvc", "54": "expired_card", "41": "lost_card"} {
		if got := Decline(rc); got.Code != want {
			t.Errorf("Decline(%s) = %s, want %s", rc, got.Code, want)
		}
	}
	if got := Decline("ZZ"); got.Code != "processing_error" || got.Category != "processing_error" {
		t.Errorf("unknown code: %+v", got)
	}
}
