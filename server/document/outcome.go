package document

import "slices"

// MaxActivationAttempts is how many activation attempts a disabled organization gets (CONTRACT 6).
const MaxActivationAttempts = 3

// Outcome is the simulated result of a test-mode activation, chosen by the organization's
// document.
type Outcome string

// The activation outcomes of CONTRACT 6.
const (
	OutcomeApproved          Outcome = "approved"           // active, payout_account filled
	OutcomeInReview          Outcome = "in_review"          // stays in_review
	OutcomeDisabledRetryable Outcome = "disabled_retryable" // disabled, disabled_reason null, missing non-empty
	OutcomeDisabledFinal     Outcome = "disabled_final"     // disabled, disabled_reason rejected.other
	OutcomeDocumentInUse     Outcome = "document_in_use"    // 409 document_already_in_use at session creation
)

// TestDocument is one row of the CONTRACT 6 table: a CPF and a CNPJ that force an outcome.
type TestDocument struct {
	CPF     string
	CNPJ    string
	Outcome Outcome
}

// testDocuments is the CONTRACT 6 table, the only copy in the code base; every other valid
// document is approved.
var testDocuments = [...]TestDocument{
	{CPF: "00000000191", CNPJ: "00000000000191", Outcome: OutcomeApproved},
	{CPF: "00000000272", CNPJ: "00000000000272", Outcome: OutcomeInReview},
	{CPF: "00000000353", CNPJ: "00000000000353", Outcome: OutcomeDisabledRetryable},
	{CPF: "00000000434", CNPJ: "00000000000434", Outcome: OutcomeDisabledFinal},
	{CPF: "00000000515", CNPJ: "00000000000515", Outcome: OutcomeDocumentInUse},
}

// TestDocuments returns a copy of the CONTRACT 6 table, for tests and sandbox docs.
func TestDocuments() []TestDocument {
	return slices.Clone(testDocuments[:])
}

// ActivationOutcome returns the test-mode activation outcome a valid document forces,
// OutcomeApproved for any document outside the table; live mode must not call it.
func ActivationOutcome(doc Document) Outcome {
	for _, row := range testDocuments {
		if doc.Number == row.CPF || doc.Number == row.CNPJ {
			return row.Outcome
		}
	}
	return OutcomeApproved
}

// ActivationStatus is the organization activation_status the outcome leads to, empty for
// OutcomeDocumentInUse, which stops before any session exists.
func (o Outcome) ActivationStatus() string {
	switch o {
	case OutcomeApproved:
		return "active"
	case OutcomeInReview:
		return "in_review"
	case OutcomeDisabledRetryable, OutcomeDisabledFinal:
		return "disabled"
	}
	return ""
}

// DisabledReason is requirements.disabled_reason for the outcome: rejected.other when the
// rejection is final, empty (JSON null) otherwise.
func (o Outcome) DisabledReason() string {
	if o == OutcomeDisabledFinal {
		return "rejected.other"
	}
	return ""
}
