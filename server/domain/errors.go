package domain

import (
	"errors"
	"fmt"
	"net/http"
)

// Error types of SPEC 7.
const (
	TypeInvalidRequest = "invalid_request_error"
	TypeAPI            = "api_error"
	TypeAuthentication = "authentication_error"
	TypeRateLimit      = "rate_limit_error"
	TypeCard           = "card_error"
)

// Error codes of SPEC 7 and CONTRACT.
const (
	CodeInvalidRequest         = "invalid_request"
	CodeParameterMissing       = "parameter_missing"
	CodeLivemodeMismatch       = "livemode_mismatch"
	CodeIdempotencyKeyReused   = "idempotency_key_reused"
	CodeIdempotencyKeyInvalid  = "idempotency_key_invalid"
	CodeIdempotencyInProgress  = "idempotency_key_in_progress"
	CodeAuthenticationFailed   = "authentication_failed"
	CodePermissionDenied       = "permission_denied"
	CodeResourceMissing        = "resource_missing"
	CodeResourceStateConflict  = "resource_state_conflict"
	CodeOrgAlreadyActive       = "organization_already_active"
	CodeOrgActivationInReview  = "organization_activation_in_review"
	CodeActivationNotRetryable = "activation_not_retryable"
	CodeDocumentAlreadyInUse   = "document_already_in_use"
	CodeSandboxUnsupported     = "sandbox_unsupported"
	CodeOrgDocumentRequired    = "organization_document_required"
	CodeOrgNotActivated        = "organization_not_activated"
	CodeTestmodeRequired       = "testmode_required"
	CodeRateLimit              = "rate_limit"
	CodeHTTPSRequired          = "https_required"
	CodeAPIError               = "api_error"
	CodeServiceUnavailable     = "service_unavailable"
	CodeAlreadyRevoked         = "api_key_already_revoked"
	CodeTimeTravelDisabled     = "time_travel_disabled"
	CodeRequestTooLarge        = "request_too_large"
	CodeUnsupportedMediaType   = "unsupported_media_type"
	CodeNotFound               = "not_found"
	CodeMethodNotAllowed       = "method_not_allowed"
	// CodeMailboxLinkInvalid: a hosted sandbox mailbox link that is altered or expired.
	CodeMailboxLinkInvalid = "mailbox_link_invalid"
)

// Error is the single error shape of the API: it carries the HTTP status and the fields of the
// error envelope. Domain code returns it for every failure a caller can act on.
type Error struct {
	Status  int    `json:"-"`
	Type    string `json:"type"`
	Code    string `json:"code"`
	Param   string `json:"param,omitempty"`
	Message string `json:"message"`
	DocURL  string `json:"doc_url,omitempty"`
	// DeclineCode and AdviceCode qualify a card_error (402) the way Stripe does.
	DeclineCode string `json:"decline_code,omitempty"`
	AdviceCode  string `json:"advice_code,omitempty"`
	// Charge names the failed charge of a declined confirmation.
	Charge string `json:"charge,omitempty"`
	// PaymentIntent is the intent attached to a declined confirmation (402).
	PaymentIntent any `json:"payment_intent,omitempty"`
	// SetupIntent is the setup intent attached to a declined setup confirmation (402).
	SetupIntent any `json:"setup_intent,omitempty"`
	// KeepChanges asks the transaction to commit the writes made before the error (a declined
	// payment is recorded and still answered as an error).
	KeepChanges bool `json:"-"`
	// Pending, set with KeepChanges, says the operation reserved a call to a live processor that
	// must be made outside the transaction (payments.Service.Execute) before the operation runs
	// again and applies its answer.
	Pending any `json:"-"`
	// Format and Args are the message before formatting (Invalid, Missing, NotFound, Conflict):
	// an interface that speaks another language translates Format and applies Args again.
	Format string `json:"-"`
	Args   []any  `json:"-"`
}

func (e *Error) Error() string {
	if e.Param != "" {
		return fmt.Sprintf("%s (%s): %s", e.Code, e.Param, e.Message)
	}
	return e.Code + ": " + e.Message
}

// AsError extracts an *Error from err's chain.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Invalid is a 400 invalid_request naming param.
func Invalid(param, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Type: TypeInvalidRequest, Code: CodeInvalidRequest, Param: param, Message: fmt.Sprintf(format, args...), Format: format, Args: args}
}

// Missing is a 400 parameter_missing naming param.
func Missing(param string) *Error {
	return &Error{Status: http.StatusBadRequest, Type: TypeInvalidRequest, Code: CodeParameterMissing, Param: param, Message: "Missing required param: " + param + ".",
		Format: "Missing required param: %s.", Args: []any{param}}
}

// NotFoundFormat is the message of NotFound.
const NotFoundFormat = "No such %s: '%s'"

// NotFound is a 404 resource_missing; param is "id" when the id came from the path.
func NotFound(param, kind, id string) *Error {
	return &Error{Status: http.StatusNotFound, Type: TypeInvalidRequest, Code: CodeResourceMissing, Param: param, Message: fmt.Sprintf(NotFoundFormat, kind, id),
		Format: NotFoundFormat, Args: []any{kind, id}}
}

// Conflict is a 409 with the given code.
func Conflict(code, format string, args ...any) *Error {
	return &Error{Status: http.StatusConflict, Type: TypeInvalidRequest, Code: code, Message: fmt.Sprintf(format, args...), Format: format, Args: args}
}

// Unauthenticated is a 401 authentication_failed.
func Unauthenticated(msg string) *Error {
	return &Error{Status: http.StatusUnauthorized, Type: TypeAuthentication, Code: CodeAuthenticationFailed, Message: msg}
}

// Forbidden is a 403 permission_denied.
func Forbidden(msg string) *Error {
	return &Error{Status: http.StatusForbidden, Type: TypeInvalidRequest, Code: CodePermissionDenied, Message: msg}
}

// TestmodeRequired is the error of a test helper called with a live key.
func TestmodeRequired() *Error {
	return &Error{Status: http.StatusForbidden, Type: TypeInvalidRequest, Code: CodeTestmodeRequired, Message: "This endpoint is only available with a test key (ch_test_...)."}
}

// Internal is the generic 500 answer; the cause is logged, never sent.
func Internal() *Error {
	return &Error{Status: http.StatusInternalServerError, Type: TypeAPI, Code: CodeAPIError, Message: "An unexpected error occurred. Retry the request; if it persists, contact support with the Request-Id."}
}
