package domain

// PrefixWebhookDelivery identifies one recorded delivery attempt (not in CONTRACT 2; troco's choice).
const PrefixWebhookDelivery = "whd_"

// Webhook endpoint statuses and disabled reasons.
const (
	WebhookEndpointEnabled  = "enabled"
	WebhookEndpointDisabled = "disabled"

	// WebhookDisabledRequested: the integrator paused the endpoint (update with disabled: true).
	WebhookDisabledRequested = "requested"
	// WebhookDisabledFailing: troco disabled it after a long delivery outage.
	WebhookDisabledFailing = "failing"
)

// WebhookEndpoint is a URL that receives the events of one organization and environment
// (CONTRACT 8). The signing secret is stored sealed and shown only when created or rotated.
type WebhookEndpoint struct {
	ID             string   `json:"id"`
	Object         string   `json:"object"`
	CreatedAt      Time     `json:"created_at"`
	UpdatedAt      Time     `json:"updated_at"`
	Description    *string  `json:"description"`
	EnabledEvents  []string `json:"enabled_events"`
	Livemode       bool     `json:"livemode"`
	Metadata       Metadata `json:"metadata"`
	Status         string   `json:"status"`
	DisabledReason *string  `json:"disabled_reason"`
	// Failing is true once a delivery exhausted its retries, until the next successful delivery.
	Failing bool `json:"failing"`
	// FailingSince is the first failed attempt since the last success (start of the outage).
	FailingSince Time   `json:"failing_since"`
	URL          string `json:"url"`
	// PreviousSecretExpiresAt is when the secret replaced by the last rotation stops signing.
	PreviousSecretExpiresAt Time `json:"previous_secret_expires_at"`
	// Secret is set only in the responses that create the endpoint or rotate its secret.
	Secret string `json:"secret,omitempty"`
	// Chaos, test mode only, makes deliveries misbehave on purpose (null: off).
	Chaos *WebhookChaos `json:"chaos"`

	// SealedSecret and SealedPreviousSecret are the secrets sealed by the keyring; never sent.
	SealedSecret         string  `json:"-"`
	SealedPreviousSecret *string `json:"-"`
}

// WebhookDelivery is one recorded attempt to deliver an event to an endpoint.
type WebhookDelivery struct {
	ID              string `json:"id"`
	Object          string `json:"object"`
	CreatedAt       Time   `json:"created_at"`
	Livemode        bool   `json:"livemode"`
	WebhookEndpoint string `json:"webhook_endpoint"`
	Event           string `json:"event"`
	EventType       string `json:"event_type"`
	// Attempt counts the tries of this event at this endpoint, from 1.
	Attempt int `json:"attempt"`
	// Status is succeeded (2xx) or failed.
	Status     string  `json:"status"`
	HTTPStatus *int    `json:"http_status"`
	DurationMS int64   `json:"duration_ms"`
	Error      *string `json:"error"`
	// NextAttemptAt is the scheduled retry after a failure; null after a success or the last try.
	NextAttemptAt Time   `json:"next_attempt_at"`
	URL           string `json:"url"`
	// Chaos says what the endpoint's chaos settings did to this attempt (null without chaos).
	Chaos *DeliveryChaos `json:"chaos"`
}

// WebhookChaos are a test endpoint's chaos settings: with the same seed and the same sequence of
// events, the same deliveries are dropped, duplicated, delayed and reordered. Rates are basis
// points (10000 = every attempt).
type WebhookChaos struct {
	Seed              int64 `json:"seed"`
	DropRate          int   `json:"drop_rate"`
	DuplicateRate     int   `json:"duplicate_rate"`
	MaxDelaySeconds   int   `json:"max_delay_seconds"`
	Reorder           bool  `json:"reorder"`
	FailFirstAttempts int   `json:"fail_first_attempts"`
}

// DeliveryChaos records what chaos did to one attempt. Sequence numbers the events the endpoint
// received since chaos was first set (the input of the seeded decisions, with the attempt).
type DeliveryChaos struct {
	Sequence       int64 `json:"sequence"`
	DelayedSeconds int   `json:"delayed_seconds"`
	Reordered      bool  `json:"reordered"`
	Dropped        bool  `json:"dropped"`
	ForcedFailure  bool  `json:"forced_failure"`
	Duplicated     bool  `json:"duplicated"`
}

// Webhook delivery attempt statuses.
const (
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed"
)
