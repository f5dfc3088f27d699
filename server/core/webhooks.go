package core

import (
	"slices"
	"time"

	"troco/db"
	"troco/server/domain"
	"troco/server/secrets"
	"troco/server/webhooks"
)

// Webhook endpoint limits (troco's choices; CONTRACT 8 is silent).
const (
	MaxWebhookEndpoints      = 16   // per organization and environment (Stripe's figure)
	MaxWebhookDescription    = 5000 // characters
	MaxEnabledEvents         = 256
	DefaultSecretOverlap     = 24 * time.Hour
	MaxSecretOverlapSeconds  = 7 * 24 * 3600
	defaultSecretOverlapSecs = int64(DefaultSecretOverlap / time.Second)
)

// WebhookEndpointParams is the body of webhook endpoint create and update.
type WebhookEndpointParams struct {
	URL           domain.Opt[string]            `json:"url"`
	EnabledEvents domain.Opt[[]string]          `json:"enabled_events"`
	Description   domain.Opt[string]            `json:"description"`
	Metadata      domain.Opt[map[string]string] `json:"metadata"`
	// Disabled pauses (true) or resumes (false) deliveries.
	Disabled domain.Opt[bool] `json:"disabled"`
	// Chaos sets (an object) or clears (null) a test endpoint's chaos settings.
	Chaos domain.Opt[domain.WebhookChaos] `json:"chaos"`
}

// WebhookEnv is what the endpoint operations need besides the transaction: the keyring that seals
// secrets and whether live endpoints may use private addresses.
type WebhookEnv struct {
	Secrets      *secrets.Keyring
	AllowPrivate bool
}

func (p *WebhookEndpointParams) apply(ep *domain.WebhookEndpoint, env WebhookEnv) error {
	if p.URL.Set {
		if p.URL.Null {
			return domain.Invalid("url", "url cannot be null.")
		}
		if _, err := webhooks.ValidateURL(p.URL.V, ep.Livemode, env.AllowPrivate); err != nil {
			return err
		}
		ep.URL = p.URL.V
	}
	if p.EnabledEvents.Set {
		events, err := normalizeEnabledEvents(p.EnabledEvents)
		if err != nil {
			return err
		}
		ep.EnabledEvents = events
	}
	if err := applyText(&ep.Description, p.Description, "description", MaxWebhookDescription); err != nil {
		return err
	}
	if p.Metadata.Set {
		if err := domain.ValidateMetadata(p.Metadata.V); err != nil {
			return err
		}
		ep.Metadata = domain.MergeMetadata(ep.Metadata, p.Metadata.V)
		if err := domain.ValidateMetadata(ep.Metadata); err != nil {
			return err
		}
	}
	if p.Chaos.Set {
		if p.Chaos.Null {
			ep.Chaos = nil
		} else {
			c := p.Chaos.V
			if err := webhooks.ValidateChaos(&c, ep.Livemode); err != nil {
				return err
			}
			ep.Chaos = &c
		}
	}
	if p.Disabled.Set {
		if p.Disabled.Null {
			return domain.Invalid("disabled", "disabled must be true or false.")
		}
		if p.Disabled.V {
			if ep.Status != domain.WebhookEndpointDisabled {
				reason := domain.WebhookDisabledRequested
				ep.Status, ep.DisabledReason = domain.WebhookEndpointDisabled, &reason
			}
		} else {
			ep.Status, ep.DisabledReason = domain.WebhookEndpointEnabled, nil
			ep.Failing, ep.FailingSince = false, domain.Time{}
		}
	}
	return nil
}

// normalizeEnabledEvents checks the list against domain.EventTypes: "*" alone, known types and
// "prefix.*" wildcards, without duplicates.
func normalizeEnabledEvents(o domain.Opt[[]string]) ([]string, error) {
	if o.Null || len(o.V) == 0 {
		return nil, domain.Invalid("enabled_events", `enabled_events must list at least one event type, or ["*"] for every type.`)
	}
	if len(o.V) > MaxEnabledEvents {
		return nil, domain.Invalid("enabled_events", "enabled_events can list at most %d event types.", MaxEnabledEvents)
	}
	out := make([]string, 0, len(o.V))
	for _, t := range o.V {
		if !domain.ValidEventPattern(t) {
			return nil, domain.Invalid("enabled_events", "Unknown event type %q in enabled_events; use \"*\", a type listed in the API reference, or a prefix wildcard such as \"customer.*\".", t)
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	if slices.Contains(out, "*") && len(out) > 1 {
		return nil, domain.Invalid("enabled_events", `"*" already selects every event type; send ["*"] alone.`)
	}
	return out, nil
}

// CreateWebhookEndpoint creates an endpoint with a fresh signing secret, returned in clear only
// in this answer (it is stored sealed).
func CreateWebhookEndpoint(tx *db.Tx, a domain.Actor, env WebhookEnv, p WebhookEndpointParams) (*domain.WebhookEndpoint, error) {
	if !p.URL.Set {
		return nil, domain.Missing("url")
	}
	if !p.EnabledEvents.Set {
		return nil, domain.Missing("enabled_events")
	}
	ep := &domain.WebhookEndpoint{Livemode: a.Livemode, Status: domain.WebhookEndpointEnabled, Metadata: domain.Metadata{}}
	if err := p.apply(ep, env); err != nil {
		return nil, err
	}
	n, err := tx.CountWebhookEndpoints(a.Scope)
	if err != nil {
		return nil, err
	}
	if n >= MaxWebhookEndpoints {
		return nil, domain.Invalid("", "An organization can have at most %d webhook endpoints per environment; delete one first.", MaxWebhookEndpoints)
	}
	secret := webhooks.NewSecret()
	ep.SealedSecret = env.Secrets.Seal(secret)
	if err := tx.CreateWebhookEndpoint(a.Scope, ep); err != nil {
		return nil, err
	}
	if err := auditAPI(tx, a, "webhook_endpoint.created", ep.ID, ep.URL); err != nil {
		return nil, err
	}
	ep.Secret = secret
	return ep, nil
}

// auditAPI records in the organization's audit trail a change made with an API key (who is
// "api:key_…"); the dashboard records its own changes with the person who made them.
func auditAPI(tx *db.Tx, a domain.Actor, action, objectID, detail string) error {
	if a.KeyID == "" {
		return nil
	}
	return tx.InsertAudit(&domain.AuditEntry{OrgID: a.OrgID, UserEmail: "api:" + a.KeyID, Action: action, ObjectID: objectID, Detail: detail})
}

// GetWebhookEndpoint returns an endpoint of the scope (never its secret).
func GetWebhookEndpoint(tx *db.Tx, s domain.Scope, id string) (*domain.WebhookEndpoint, error) {
	ep, err := tx.FindWebhookEndpointByID(s, id)
	return ep, notFound(err, "id", "webhook_endpoint", id)
}

// UpdateWebhookEndpoint applies p; pausing an endpoint cancels its pending deliveries.
func UpdateWebhookEndpoint(tx *db.Tx, a domain.Actor, env WebhookEnv, id string, p WebhookEndpointParams) (*domain.WebhookEndpoint, error) {
	ep, err := GetWebhookEndpoint(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	wasEnabled := ep.Status == domain.WebhookEndpointEnabled
	if err := p.apply(ep, env); err != nil {
		return nil, err
	}
	if err := tx.UpdateWebhookEndpoint(a.Scope, ep); err != nil {
		return nil, err
	}
	if p.Chaos.Set {
		// New settings number the events from 1 again, so a run with a seed can be repeated.
		if err := tx.ResetChaosCounter(ep.ID); err != nil {
			return nil, err
		}
	}
	if wasEnabled && ep.Status != domain.WebhookEndpointEnabled {
		if err := tx.CancelPendingWebhooks(ep.ID); err != nil {
			return nil, err
		}
	}
	if err := auditAPI(tx, a, "webhook_endpoint.updated", ep.ID, ep.URL+" ("+ep.Status+")"); err != nil {
		return nil, err
	}
	return ep, nil
}

// DeleteWebhookEndpoint deletes an endpoint and cancels its pending deliveries.
func DeleteWebhookEndpoint(tx *db.Tx, a domain.Actor, id string) (*domain.Deleted, error) {
	if _, err := GetWebhookEndpoint(tx, a.Scope, id); err != nil {
		return nil, err
	}
	if err := tx.DeleteWebhookEndpoint(a.Scope, id); err != nil {
		return nil, err
	}
	if err := auditAPI(tx, a, "webhook_endpoint.deleted", id, ""); err != nil {
		return nil, err
	}
	return &domain.Deleted{ID: id, Object: "webhook_endpoint", Deleted: true}, nil
}

// RotateSecretParams is the body of POST /v1/webhook-endpoints/{id}/rotate-secret.
type RotateSecretParams struct {
	// ExpireCurrentSecretInSeconds is how long the current secret keeps signing beside the new one
	// (default 24 hours, 0 to stop at once, at most 7 days).
	ExpireCurrentSecretInSeconds *int64 `json:"expire_current_secret_in_seconds"`
}

// RotateWebhookSecret gives the endpoint a new secret, returned in clear only in this answer.
// During the overlap both secrets sign every delivery (two v1 signatures); a secret replaced by
// an earlier rotation stops signing at once.
func RotateWebhookSecret(tx *db.Tx, a domain.Actor, env WebhookEnv, id string, p RotateSecretParams) (*domain.WebhookEndpoint, error) {
	overlap := defaultSecretOverlapSecs
	if p.ExpireCurrentSecretInSeconds != nil {
		overlap = *p.ExpireCurrentSecretInSeconds
	}
	if overlap < 0 || overlap > MaxSecretOverlapSeconds {
		return nil, domain.Invalid("expire_current_secret_in_seconds", "expire_current_secret_in_seconds must be between 0 and %d (7 days).", MaxSecretOverlapSeconds)
	}
	ep, err := GetWebhookEndpoint(tx, a.Scope, id)
	if err != nil {
		return nil, err
	}
	if overlap > 0 {
		old := ep.SealedSecret
		ep.SealedPreviousSecret, ep.PreviousSecretExpiresAt = &old, domain.At(tx.Now.Add(time.Duration(overlap)*time.Second))
	} else {
		ep.SealedPreviousSecret, ep.PreviousSecretExpiresAt = nil, domain.Time{}
	}
	secret := webhooks.NewSecret()
	ep.SealedSecret = env.Secrets.Seal(secret)
	if err := tx.UpdateWebhookEndpoint(a.Scope, ep); err != nil {
		return nil, err
	}
	if err := auditAPI(tx, a, "webhook_endpoint.rotate-secret", ep.ID, ""); err != nil {
		return nil, err
	}
	ep.Secret = secret
	return ep, nil
}

// EventRedelivery is the answer of POST /v1/events/{id}/redeliver: the endpoints the event was
// queued for again.
type EventRedelivery struct {
	Object           string   `json:"object"`
	Event            string   `json:"event"`
	Livemode         bool     `json:"livemode"`
	WebhookEndpoints []string `json:"webhook_endpoints"`
}

// RedeliverParams is the body of POST /v1/events/{id}/redeliver.
type RedeliverParams struct {
	// WebhookEndpoint limits the redelivery to one endpoint; default: every enabled endpoint of
	// the scope that subscribes to the event's type.
	WebhookEndpoint *string `json:"webhook_endpoint"`
}

// RedeliverEvent queues an event again, now, with the same webhook-id, for one endpoint or for
// every subscribed one. The retry window starts over.
func RedeliverEvent(tx *db.Tx, a domain.Actor, eventID string, p RedeliverParams) (*EventRedelivery, error) {
	ev, err := tx.FindEventByID(a.Scope, eventID)
	if err != nil {
		return nil, notFound(err, "id", "event", eventID)
	}
	var targets []*domain.WebhookEndpoint
	if p.WebhookEndpoint != nil {
		ep, err := tx.FindWebhookEndpointByID(a.Scope, *p.WebhookEndpoint)
		if err != nil {
			return nil, notFound(err, "webhook_endpoint", "webhook_endpoint", *p.WebhookEndpoint)
		}
		if ep.Status != domain.WebhookEndpointEnabled {
			return nil, domain.Conflict(domain.CodeResourceStateConflict, "Webhook endpoint %s is disabled; enable it (disabled: false) before redelivering.", ep.ID)
		}
		if !domain.AnyEventPatternMatches(ep.EnabledEvents, ev.Type) {
			return nil, domain.Invalid("webhook_endpoint", "Webhook endpoint %s does not subscribe to %s.", ep.ID, ev.Type)
		}
		targets = append(targets, ep)
	} else {
		all, _, err := tx.ListWebhookEndpoints(a.Scope, db.ListParams{Limit: MaxWebhookEndpoints * 4})
		if err != nil {
			return nil, err
		}
		for _, ep := range all {
			if ep.Status == domain.WebhookEndpointEnabled && domain.AnyEventPatternMatches(ep.EnabledEvents, ev.Type) {
				targets = append(targets, ep)
			}
		}
		if len(targets) == 0 {
			return nil, domain.Conflict(domain.CodeResourceStateConflict, "No enabled webhook endpoint of this environment subscribes to %s.", ev.Type)
		}
	}
	out := &EventRedelivery{Object: "event_redelivery", Event: ev.ID, Livemode: a.Livemode, WebhookEndpoints: []string{}}
	for _, ep := range targets {
		if err := tx.RequeueWebhook(a.Scope, ev.ID, ev.Type, ep.ID); err != nil {
			return nil, err
		}
		out.WebhookEndpoints = append(out.WebhookEndpoints, ep.ID)
	}
	return out, nil
}
