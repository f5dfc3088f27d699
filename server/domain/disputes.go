package domain

// Dispute is a chargeback or inquiry on a charge (CONTRACT 17, Stripe's dispute object).
type Dispute struct {
	ID                  string          `json:"id"`
	Object              string          `json:"object"`
	Amount              int64           `json:"amount"`
	Charge              string          `json:"charge"`
	CreatedAt           Time            `json:"created_at"`
	Currency            string          `json:"currency"`
	Evidence            DisputeEvidence `json:"evidence"`
	EvidenceDetails     EvidenceDetails `json:"evidence_details"`
	IsChargeRefundable  bool            `json:"is_charge_refundable"`
	Livemode            bool            `json:"livemode"`
	Metadata            Metadata        `json:"metadata"`
	PaymentIntent       string          `json:"payment_intent"`
	Reason              string          `json:"reason"`
	Status              string          `json:"status"`
	UpdatedAt           Time            `json:"updated_at"`
	FundsWithdrawn      bool            `json:"-"`
	BalanceTransactions []string        `json:"balance_transactions"`
}

// DisputeEvidence is the evidence a merchant submits: Stripe's field names, each a text or (for
// the fields of DisputeFileFields) a dispute_evidence file id; absent fields are null.
type DisputeEvidence map[string]*string

// EvidenceDetails says until when evidence is accepted and what was sent.
type EvidenceDetails struct {
	DueBy           Time `json:"due_by"`
	HasEvidence     bool `json:"has_evidence"`
	PastDue         bool `json:"past_due"`
	SubmissionCount int  `json:"submission_count"`
}

// Dispute statuses; warning_* are inquiries (no funds move unless one is lost).
const (
	DisputeWarningNeedsResponse = "warning_needs_response"
	DisputeWarningUnderReview   = "warning_under_review"
	DisputeWarningClosed        = "warning_closed"
	DisputeNeedsResponse        = "needs_response"
	DisputeUnderReview          = "under_review"
	DisputeWon                  = "won"
	DisputeLost                 = "lost"
)

// DisputeClosed reports whether a dispute status is final.
func DisputeClosed(status string) bool {
	return status == DisputeWon || status == DisputeLost || status == DisputeWarningClosed
}

// DisputeStatuses lists every status (list filter values).
var DisputeStatuses = []string{DisputeWarningNeedsResponse, DisputeWarningUnderReview, DisputeWarningClosed, DisputeNeedsResponse, DisputeUnderReview, DisputeWon, DisputeLost}

// DisputeTextFields and DisputeFileFields are the evidence fields (Stripe's names).
var (
	DisputeTextFields = []string{"access_activity_log", "billing_address", "cancellation_policy_disclosure", "cancellation_rebuttal",
		"customer_email_address", "customer_name", "customer_purchase_ip", "duplicate_charge_explanation", "duplicate_charge_id",
		"product_description", "refund_policy_disclosure", "refund_refusal_explanation", "service_date", "shipping_address",
		"shipping_carrier", "shipping_date", "shipping_tracking_number", "uncategorized_text"}
	DisputeFileFields = []string{"cancellation_policy", "customer_communication", "customer_signature", "duplicate_charge_documentation",
		"receipt", "refund_policy", "service_documentation", "shipping_documentation", "uncategorized_file"}
)

// EmptyEvidence returns evidence with every field present and null.
func EmptyEvidence() DisputeEvidence {
	e := DisputeEvidence{}
	for _, f := range DisputeTextFields {
		e[f] = nil
	}
	for _, f := range DisputeFileFields {
		e[f] = nil
	}
	return e
}

// Ledger entry types of disputes.
const (
	TxnTypeDispute         = "dispute"
	TxnTypeDisputeReversal = "dispute_reversal"
)
