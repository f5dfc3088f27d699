package cielo

import (
	"troco/server/card"
	"troco/server/domain"
)

// returnCodes maps Cielo's ReturnCode of a refused authorization (the card networks' ABECS
// codes, and Cielo's own) onto troco's decline codes; the category, message and advice come
// from the decline table troco documents for every environment. A code missing here is a
// processing_error: the payment was not made and may be tried again.
var returnCodes = map[string]string{
	"01":    "call_issuer",
	"02":    "call_issuer",
	"04":    "pickup_card",
	"05":    "generic_decline",
	"07":    "pickup_card",
	"12":    "invalid_transaction",
	"13":    "invalid_amount",
	"14":    "invalid_number",
	"15":    "invalid_number",
	"41":    "lost_card",
	"43":    "stolen_card",
	"46":    "invalid_account",
	"51":    "insufficient_funds",
	"54":    "expired_card",
	"55":    "incorrect_pin",
	"57":    "transaction_not_permitted",
	"58":    "service_not_allowed",
	"59":    "fraudulent",
	"61":    "card_velocity_exceeded",
	"62":    "restricted_card",
	"63":    "security_violation",
	"65":    "card_velocity_exceeded",
	"70":    "call_issuer",
	"75":    "pin_try_exceeded",
	"77":    "revocation_of_authorization",
	"78":    "card_not_activated",
	"82":    "invalid_number",
	"91":    "issuer_unavailable",
	"96":    "processing_error",
	"99":    "try_again_later",
	"N7":    "incorrect_cvc",
	"BP171": "fraudulent",
}

// declines indexes the documented declines (category, message, advice) by code.
var declines = func() map[string]card.TestCard {
	m := map[string]card.TestCard{}
	for _, tc := range card.TestCards() {
		if tc.Code != "" {
			m[tc.Code] = tc
		}
	}
	return m
}()

// Decline returns the payment_error of a refused authorization with Cielo's ReturnCode.
func Decline(returnCode string) *domain.PaymentError {
	code, ok := returnCodes[returnCode]
	if !ok {
		code = "processing_error"
	}
	tc, ok := declines[code]
	if !ok {
		tc = card.TestCard{Category: card.CategoryProcessingError, Code: "processing_error", Message: "An error occurred while processing the payment. Try again.", AdviceCode: card.AdviceTryAgainLater}
	}
	pe := &domain.PaymentError{Category: string(tc.Category), Code: tc.Code, Message: tc.Message}
	if tc.AdviceCode != "" {
		a := string(tc.AdviceCode)
		pe.AdviceCode = &a
	}
	return pe
}

// KnownReturnCode reports whether the table maps a code (tests).
func KnownReturnCode(c string) bool { _, ok := returnCodes[c]; return ok }
