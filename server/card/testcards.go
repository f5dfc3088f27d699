package card

import (
	"slices"
	"strings"
)

// Outcome is what a simulated card charge does to its payment intent in test mode.
type Outcome string

// Outcomes of SPEC 7.1; OutcomeDeclined leaves the intent in requires_payment_method with a payment_error.
const (
	OutcomeSucceeded       Outcome = "succeeded"
	OutcomeRequiresCapture Outcome = "requires_capture"
	OutcomeProcessing      Outcome = "processing"
	OutcomePending         Outcome = "pending"
	OutcomeDeclined        Outcome = "declined"
)

// Category is payment_error.category (SPEC 2.7).
type Category string

// Categories of SPEC 2.7, in the order of the SPEC 7.1 decline table.
const (
	CategoryIssuerDeclined  Category = "issuer_declined"
	CategoryInvalid         Category = "invalid"
	CategoryBlocked         Category = "blocked"
	CategoryProcessingError Category = "processing_error"
)

// AdviceCode is payment_error.advice_code: what the merchant should do next (Stripe's values).
type AdviceCode string

// Advice codes set on every failing test card.
const (
	AdviceTryAgainLater   AdviceCode = "try_again_later"
	AdviceConfirmCardData AdviceCode = "confirm_card_data"
	AdviceDoNotTryAgain   AdviceCode = "do_not_try_again"
)

// TestCard is one row of SPEC 7.1: a number and the outcome it scripts in test mode.
//
// Category, Code, Message and AdviceCode describe the decline, on the first charge when
// Outcome is OutcomeDeclined or on reuse when ReuseOutcome is. An empty ReuseOutcome means the
// saved card behaves on reuse as on its first charge.
type TestCard struct {
	Number       string
	Outcome      Outcome
	ReuseOutcome Outcome
	Category     Category
	Code         string
	Message      string
	AdviceCode   AdviceCode
}

// Decline is the payment_error of a declined simulated charge (network fields are null in test mode).
type Decline struct {
	Category   Category
	Code       string
	Message    string
	AdviceCode AdviceCode
}

// Result is the simulated outcome of one charge; Decline is nil unless Outcome is OutcomeDeclined.
type Result struct {
	Outcome Outcome
	Decline *Decline
}

// testCards is SPEC 7.1, every row, in the spec's order; messages are copied verbatim.
//
// Advice codes: try_again_later for processing errors and transient issuer declines,
// confirm_card_data for the invalid category, do_not_try_again for blocked cards and the
// remaining issuer declines.
var testCards = []TestCard{
	// Success and waiting.
	{"4242424242424242", OutcomeSucceeded, "", "", "", "", ""},
	{"4000000000003220", OutcomeRequiresCapture, "", "", "", "", ""},
	{"4000009000000425", OutcomeProcessing, "", "", "", "", ""},
	{"4000009000000433", OutcomePending, "", "", "", "", ""},

	// Saved-card reuse: the first charge succeeds; the special outcome applies to a saved card charged again.
	{"4000009000000623", OutcomeSucceeded, OutcomeDeclined, CategoryBlocked, "single_use_card", "This card cannot be reused for this payment.", AdviceDoNotTryAgain},
	{"4000009000000631", OutcomeSucceeded, OutcomeProcessing, "", "", "", ""},

	// Declines: issuer_declined.
	{"4000000000009995", OutcomeDeclined, "", CategoryIssuerDeclined, "insufficient_funds", "The card has insufficient funds to complete the purchase.", AdviceTryAgainLater},
	{"4000009000000011", OutcomeDeclined, "", CategoryIssuerDeclined, "do_not_honor", "The issuer declined the transaction without a specific reason.", AdviceDoNotTryAgain},
	{"4000000000000002", OutcomeDeclined, "", CategoryIssuerDeclined, "generic_decline", "The card was declined.", AdviceDoNotTryAgain},
	{"4000009000000029", OutcomeDeclined, "", CategoryIssuerDeclined, "call_issuer", "The card was declined. The cardholder must contact the issuer.", AdviceDoNotTryAgain},
	{"4000009000000037", OutcomeDeclined, "", CategoryIssuerDeclined, "card_velocity_exceeded", "The card exceeded its balance, credit, or transaction limit.", AdviceTryAgainLater},
	{"4000009000000045", OutcomeDeclined, "", CategoryIssuerDeclined, "invalid_amount", "The transaction amount is not allowed for this card.", AdviceDoNotTryAgain},
	{"4000009000000052", OutcomeDeclined, "", CategoryIssuerDeclined, "invalid_account", "The account linked to the card is invalid or does not exist.", AdviceDoNotTryAgain},
	{"4000009000000060", OutcomeDeclined, "", CategoryIssuerDeclined, "transaction_not_permitted", "This type of transaction is not permitted for the cardholder.", AdviceDoNotTryAgain},
	{"4000009000000078", OutcomeDeclined, "", CategoryIssuerDeclined, "service_not_allowed", "This transaction is not permitted for the card.", AdviceDoNotTryAgain},
	{"4000009000000086", OutcomeDeclined, "", CategoryIssuerDeclined, "card_not_supported", "The card does not support this type of purchase.", AdviceDoNotTryAgain},
	{"4000009000000094", OutcomeDeclined, "", CategoryIssuerDeclined, "currency_not_supported", "The card does not support the transaction currency.", AdviceDoNotTryAgain},
	{"4000009000000102", OutcomeDeclined, "", CategoryIssuerDeclined, "card_not_activated", "The card has not been activated.", AdviceDoNotTryAgain},
	{"4000009000000110", OutcomeDeclined, "", CategoryIssuerDeclined, "authentication_required", "The transaction requires cardholder authentication.", AdviceDoNotTryAgain},
	{"4000009000000128", OutcomeDeclined, "", CategoryIssuerDeclined, "reenter_transaction", "The issuer could not process the transaction. Try again.", AdviceTryAgainLater},
	{"4000009000000136", OutcomeDeclined, "", CategoryIssuerDeclined, "approve_with_id", "The payment could not be authorized.", AdviceTryAgainLater},
	{"4000009000000144", OutcomeDeclined, "", CategoryIssuerDeclined, "not_permitted", "The requested operation is not supported by the card.", AdviceDoNotTryAgain},
	{"4000009000000409", OutcomeDeclined, "", CategoryIssuerDeclined, "testmode_decline", "A test card triggered a decline.", AdviceDoNotTryAgain},
	{"4000009000000417", OutcomeDeclined, "", CategoryIssuerDeclined, "payment_failed", "Payment failed.", AdviceDoNotTryAgain},

	// Declines: invalid.
	{"4000000000000069", OutcomeDeclined, "", CategoryInvalid, "expired_card", "The card has expired.", AdviceConfirmCardData},
	{"4000000000000127", OutcomeDeclined, "", CategoryInvalid, "incorrect_cvc", "The card security code (CVC) is incorrect.", AdviceConfirmCardData},
	{"4000009000000151", OutcomeDeclined, "", CategoryInvalid, "incorrect_number", "The card number is incorrect.", AdviceConfirmCardData},
	{"4000009000000169", OutcomeDeclined, "", CategoryInvalid, "invalid_number", "The card number is invalid or the issuer does not exist.", AdviceConfirmCardData},
	{"4000009000000177", OutcomeDeclined, "", CategoryInvalid, "incorrect_pin", "The card PIN is incorrect.", AdviceConfirmCardData},
	{"4000009000000185", OutcomeDeclined, "", CategoryInvalid, "invalid_pin", "The card PIN is invalid.", AdviceConfirmCardData},
	{"4000009000000193", OutcomeDeclined, "", CategoryInvalid, "pin_try_exceeded", "The allowable number of PIN tries was exceeded.", AdviceConfirmCardData},
	{"4000009000000201", OutcomeDeclined, "", CategoryInvalid, "invalid_transaction", "The transaction is invalid.", AdviceConfirmCardData},
	{"4000009000000219", OutcomeDeclined, "", CategoryInvalid, "no_payment_method", "No payment method available to charge.", AdviceConfirmCardData},
	{"4000009000000227", OutcomeDeclined, "", CategoryInvalid, "card_unusable", "The saved card could not be used.", AdviceConfirmCardData},
	{"4000009000000235", OutcomeDeclined, "", CategoryInvalid, "payment_method_mismatch", "The payment method does not belong to this customer.", AdviceConfirmCardData},
	{"4000009000000458", OutcomeDeclined, "", CategoryInvalid, "new_account_information_available", "Updated card or account information is required.", AdviceConfirmCardData},
	{"4000009000000466", OutcomeDeclined, "", CategoryInvalid, "invalid_cvc", "The card security code has an invalid format.", AdviceConfirmCardData},
	{"4000009000000474", OutcomeDeclined, "", CategoryInvalid, "invalid_expiry_month", "The card expiration month has an invalid format.", AdviceConfirmCardData},
	{"4000009000000482", OutcomeDeclined, "", CategoryInvalid, "invalid_expiry_year", "The card expiration year has an invalid format.", AdviceConfirmCardData},
	{"4000009000000490", OutcomeDeclined, "", CategoryInvalid, "invalid_name", "The cardholder name is invalid.", AdviceConfirmCardData},
	{"4000009000000508", OutcomeDeclined, "", CategoryInvalid, "invalid_request", "The payment request contains invalid data.", AdviceConfirmCardData},
	{"4000009000000516", OutcomeDeclined, "", CategoryInvalid, "invalid_token", "The card token is invalid or expired.", AdviceConfirmCardData},

	// Declines: blocked.
	{"4000009000000243", OutcomeDeclined, "", CategoryBlocked, "lost_card", "The card was reported lost.", AdviceDoNotTryAgain},
	{"4000009000000250", OutcomeDeclined, "", CategoryBlocked, "stolen_card", "The card was reported stolen.", AdviceDoNotTryAgain},
	{"4000009000000268", OutcomeDeclined, "", CategoryBlocked, "pickup_card", "The card cannot be used (retain card).", AdviceDoNotTryAgain},
	{"4000009000000276", OutcomeDeclined, "", CategoryBlocked, "restricted_card", "The card is restricted.", AdviceDoNotTryAgain},
	{"4000009000000284", OutcomeDeclined, "", CategoryBlocked, "fraudulent", "The transaction was flagged as suspected fraud.", AdviceDoNotTryAgain},
	{"4000009000000292", OutcomeDeclined, "", CategoryBlocked, "security_violation", "The transaction was declined for a security violation.", AdviceDoNotTryAgain},
	{"4000009000000300", OutcomeDeclined, "", CategoryBlocked, "stop_payment_order", "A stop payment order applies to this card.", AdviceDoNotTryAgain},
	{"4000009000000318", OutcomeDeclined, "", CategoryBlocked, "revocation_of_authorization", "Authorization for this card has been revoked.", AdviceDoNotTryAgain},
	{"4000009000000326", OutcomeDeclined, "", CategoryBlocked, "revocation_of_all_authorizations", "All authorizations for this card have been revoked.", AdviceDoNotTryAgain},
	{"4000009000000334", OutcomeDeclined, "", CategoryBlocked, "transaction_not_allowed", "The transaction is not allowed.", AdviceDoNotTryAgain},
	{"4000009000000524", OutcomeDeclined, "", CategoryBlocked, "single_use_card", "This card cannot be reused for this payment.", AdviceDoNotTryAgain},

	// Declines: processing_error.
	{"4000009000000441", OutcomeDeclined, "", CategoryProcessingError, "authentication_not_available", "Cardholder authentication is not available for this payment.", AdviceTryAgainLater},
	{"4000009000000342", OutcomeDeclined, "", CategoryProcessingError, "issuer_unavailable", "The card issuer could not be reached. Try again.", AdviceTryAgainLater},
	{"4000009000000359", OutcomeDeclined, "", CategoryProcessingError, "routing_error", "The transaction could not be routed to the issuer.", AdviceTryAgainLater},
	{"4000009000000367", OutcomeDeclined, "", CategoryProcessingError, "duplicate_transaction", "A duplicate transaction was detected.", AdviceTryAgainLater},
	{"4000009000000375", OutcomeDeclined, "", CategoryProcessingError, "try_again_later", "The payment could not be processed. Try again later.", AdviceTryAgainLater},
	{"4000009000000383", OutcomeDeclined, "", CategoryProcessingError, "connection_error", "Could not reach the payment provider. Please try again.", AdviceTryAgainLater},
	{"4000009000000391", OutcomeDeclined, "", CategoryProcessingError, "customer_unavailable", "Customer could not be identified for the charge.", AdviceTryAgainLater},
	{"4000000000000119", OutcomeDeclined, "", CategoryProcessingError, "processing_error", "An error occurred while processing the payment. Try again.", AdviceTryAgainLater},
	{"4000009000000532", OutcomeDeclined, "", CategoryProcessingError, "merchant_not_approved", "The merchant account is not available for this payment.", AdviceTryAgainLater},
	{"4000009000000540", OutcomeDeclined, "", CategoryProcessingError, "authorization_expired", "The authorization expired before capture.", AdviceTryAgainLater},
	{"4000009000000557", OutcomeDeclined, "", CategoryProcessingError, "capture_method_not_supported", "The selected capture method is not supported.", AdviceTryAgainLater},
	{"4000009000000565", OutcomeDeclined, "", CategoryProcessingError, "charge_already_captured", "The payment was already captured.", AdviceTryAgainLater},
	{"4000009000000573", OutcomeDeclined, "", CategoryProcessingError, "charge_already_refunded", "The payment was already refunded.", AdviceTryAgainLater},
	{"4000009000000581", OutcomeDeclined, "", CategoryProcessingError, "partial_refund_not_supported", "This payment does not support partial refunds.", AdviceTryAgainLater},
	{"4000009000000599", OutcomeDeclined, "", CategoryProcessingError, "payment_intent_unexpected_state", "The operation is not allowed in the payment's current state.", AdviceTryAgainLater},
	{"4000009000000607", OutcomeDeclined, "", CategoryProcessingError, "refund_period_expired", "The refund window for this payment has expired.", AdviceTryAgainLater},
	{"4000009000000615", OutcomeDeclined, "", CategoryProcessingError, "refund_state_mismatch", "The refund state could not be reconciled.", AdviceTryAgainLater},
}

// byNumber and messageByCode index testCards; they are built once and never written again.
var (
	byNumber      = indexByNumber(testCards)
	messageByCode = indexMessages(testCards)
)

// indexByNumber maps each test card number to its row.
func indexByNumber(cards []TestCard) map[string]TestCard {
	m := make(map[string]TestCard, len(cards))
	for _, c := range cards {
		m[c.Number] = c
	}
	return m
}

// indexMessages maps each decline code to its SPEC 7.1 message.
func indexMessages(cards []TestCard) map[string]string {
	m := make(map[string]string, len(cards))
	for _, c := range cards {
		if c.Code != "" {
			m[c.Code] = c.Message
		}
	}
	return m
}

// TestCards returns a copy of the SPEC 7.1 table, for pages and docs that list the test cards.
func TestCards() []TestCard {
	return append([]TestCard(nil), testCards...)
}

// LookupTestCard finds the SPEC 7.1 row for a number, after normalizing it.
func LookupTestCard(number string) (TestCard, bool) {
	c, ok := byNumber[Normalize(number)]
	return c, ok
}

// Simulate returns the test-mode outcome of charging number; reuse marks a saved card charged
// again outside the hosted checkout. Numbers outside the table succeed.
func Simulate(number string, reuse bool) Result {
	c, ok := LookupTestCard(number)
	if !ok {
		return Result{Outcome: OutcomeSucceeded}
	}
	outcome := c.Outcome
	if reuse && c.ReuseOutcome != "" {
		outcome = c.ReuseOutcome
	}
	if outcome != OutcomeDeclined {
		return Result{Outcome: outcome}
	}
	return Result{Outcome: outcome, Decline: &Decline{
		Category:   c.Category,
		Code:       c.Code,
		Message:    c.Message,
		AdviceCode: c.AdviceCode,
	}}
}

// Dispute is what a dispute test card (CONTRACT 17) does after its charge succeeds: a dispute
// opens with Reason; an Inquiry is a warning that withdraws no funds unless it is lost.
type Dispute struct {
	Reason  string
	Inquiry bool
}

var disputeCards = map[string]Dispute{
	"4000000000000259": {Reason: "fraudulent"},
	"4000000000002685": {Reason: "product_not_received"},
	"4000000000001976": {Reason: "fraudulent", Inquiry: true},
}

// DisputeFor returns the dispute a test card opens after a successful charge, if any.
func DisputeFor(number string) (Dispute, bool) {
	d, ok := disputeCards[number]
	return d, ok
}

// DisputeCard is one dispute test card and the dispute it opens.
type DisputeCard struct {
	Number string
	Dispute
}

// DisputeCards returns the dispute test cards in number order, for docs that list them.
func DisputeCards() []DisputeCard {
	out := make([]DisputeCard, 0, len(disputeCards))
	for n, d := range disputeCards {
		out = append(out, DisputeCard{Number: n, Dispute: d})
	}
	slices.SortFunc(out, func(a, b DisputeCard) int { return strings.Compare(a.Number, b.Number) })
	return out
}
