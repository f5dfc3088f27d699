package checkout

import (
	"net/http"

	"troco/server/domain"
	"troco/server/payments"
)

// Service holds what the operations that move money need besides a transaction: the payments
// engine that owns payment intents (their state machine, the simulated outcomes of SPEC 7.1 and
// 8.5, charges and the ledger). The session owns the amount, computed from its prices on the
// server, and the buyer's journey.
type Service struct {
	Payments *payments.Service
}

// ConfirmParams is the body of POST /v1/checkout-sessions/{id}/confirm: the fields of CONTRACT 4,
// shared with the payment intent confirmation.
type ConfirmParams = payments.ConfirmParams

// errNotActivated is SPEC 7's organization_not_activated, with the payments engine's status (409).
func errNotActivated() *domain.Error {
	return &domain.Error{Status: http.StatusConflict, Type: domain.TypeInvalidRequest, Code: domain.CodeOrgNotActivated,
		Message: "The organization is not ready to accept payments: live payments are refused until its activation is complete. Nothing was charged."}
}
