package domain

import (
	"slices"
	"strings"
)

// EventType is one kind of event troco emits, with the sentence the API reference prints for it.
type EventType struct {
	Type        string
	Description string
}

// EventTypes is the one table of every event type troco emits (SPEC 6 leaves the list open).
// Webhook endpoints may subscribe only to these (or to "*" and "prefix.*" wildcards); the events
// list filter accepts the same; docs/API.md prints this table. Add a type here before emitting it:
// a test fails when core emits a type that is not listed.
var EventTypes = []EventType{
	{"customer.created", "A customer was created."},
	{"customer.updated", "A customer's fields changed; previous_attributes holds the old values."},
	{"customer.deleted", "A customer was deleted."},
	{"product.created", "A product was created."},
	{"product.updated", "A product changed."},
	{"product.deleted", "A product was deleted."},
	{"price.created", "A price was created (also with a product's default_price_data)."},
	{"price.updated", "A price changed."},
	{"price.deleted", "A price was deleted."},
	{"coupon.created", "A coupon was created."},
	{"coupon.updated", "A coupon's name or metadata changed."},
	{"coupon.deleted", "A coupon was deleted; it can no longer be redeemed."},
	{"promotion_code.created", "A promotion code was created."},
	{"promotion_code.updated", "A promotion code was activated, deactivated or its metadata changed."},

	{"pix_authorization.created", "A Pix Automático authorization was created and waits for the payer."},
	{"pix_authorization.approved", "The payer approved a Pix Automático authorization; payment_method is its pix_automatico payment method."},
	{"pix_authorization.rejected", "The payer rejected a Pix Automático authorization."},
	{"pix_authorization.canceled", "A Pix Automático authorization was canceled; no charge is made under it any more."},
	{"pix_authorization.expired", "A pending Pix Automático authorization expired unanswered."},

	{"payment_intent.created", "A payment intent was created."},
	{"payment_intent.pending", "A payment intent waits for a delayed PIX or boleto settlement."},
	{"payment_intent.processing", "A payment intent is being processed; wait for the next event."},
	{"payment_intent.amount_capturable_updated", "A payment intent was authorized and requires capture."},
	{"payment_intent.succeeded", "A payment intent succeeded."},
	{"payment_intent.payment_failed", "A payment attempt failed; last_payment_error says why."},
	{"payment_intent.canceled", "A payment intent was canceled (also when its checkout session expires)."},
	{"payment_intent.updated", "A payment intent's fields changed (amount, metadata, payment method)."},

	{"charge.pending", "A charge is pending (delayed PIX or boleto, processing cards)."},
	{"charge.succeeded", "A charge succeeded."},
	{"charge.failed", "A charge failed; payment_error is filled."},
	{"charge.captured", "An authorized charge was captured."},
	{"charge.refunded", "A charge was refunded, fully or partly (also when an uncaptured authorization is released)."},
	{"charge.expired", "An uncaptured authorization expired seven days after it was made; its payment intent was canceled."},
	{"charge.updated", "A charge's fields changed."},

	{"charge.dispute.created", "A dispute was opened on a charge (in test mode, a dispute test card a minute after the payment)."},
	{"charge.dispute.updated", "A dispute's evidence, metadata or status changed."},
	{"charge.dispute.closed", "A dispute was closed: won, lost, accepted, or an inquiry closed."},
	{"charge.dispute.funds_withdrawn", "The disputed amount and the dispute fee were withdrawn from the balance."},
	{"charge.dispute.funds_reinstated", "A won dispute returned the disputed amount to the balance."},

	{"refund.created", "A refund was created."},

	{"checkout.session.created", "A checkout session was created (API or payment link)."},
	{"checkout.session.completed", "The buyer confirmed a checkout session."},
	{"checkout.session.expired", "A checkout session expired (24 hours, or the expire test helper)."},
	{"checkout.session.async.payment.succeeded", "A PIX or boleto payment of a completed session settled."},
	{"checkout.session.async.payment.failed", "A PIX or boleto payment of a completed session failed or expired."},

	{"payment_method.attached", "A payment method was saved to a customer."},
	{"payment_method.detached", "A payment method was removed from a customer."},

	{"setup_intent.created", "A setup intent was created."},
	{"setup_intent.succeeded", "A setup intent saved a payment method."},
	{"setup_intent.setup_failed", "A setup intent failed."},
	{"setup_intent.canceled", "A setup intent was canceled."},

	{"invoice.created", "An invoice was created."},
	{"invoice.finalized", "An invoice was finalized."},
	{"invoice.paid", "An invoice was paid."},
	{"invoice.payment_failed", "An invoice payment failed."},
	{"invoice.voided", "An invoice was voided."},
	{"invoice.marked_uncollectible", "An invoice was marked uncollectible."},
	{"invoice.overdue", "An open send_invoice invoice reached its due instant unpaid."},
	{"invoice.updated", "An invoice changed (description, metadata, or a draft's lines and due date); also when a payment attaches to it."},

	{"invoice.upcoming", "A subscription's renewal invoice will be created in a week (data.object is a preview without an id)."},

	{"customer.subscription.created", "A subscription was created."},
	{"customer.subscription.updated", "A subscription changed (renewal, items, status such as past_due)."},
	{"customer.subscription.deleted", "A subscription was canceled (now, at its period's end or by the final dunning action)."},
	{"customer.subscription.trial_will_end", "A subscription's trial ends in three days."},
	{"customer.subscription.paused", "A subscription's collection was paused."},
	{"customer.subscription.resumed", "A paused subscription was resumed."},

	{"organization.updated", "An organization's financial state changed (activation result)."},

	{"webhook_endpoint.disabled", "troco disabled a webhook endpoint after a long delivery outage."},
}

// KnownEventType reports whether t is in EventTypes.
func KnownEventType(t string) bool {
	return slices.ContainsFunc(EventTypes, func(e EventType) bool { return e.Type == t })
}

// ValidEventPattern reports whether p is "*", a known type, or "prefix.*" where prefix is the
// start of at least one known type.
func ValidEventPattern(p string) bool {
	if p == "*" {
		return true
	}
	if prefix, ok := strings.CutSuffix(p, ".*"); ok && prefix != "" && !strings.Contains(prefix, "*") {
		return slices.ContainsFunc(EventTypes, func(e EventType) bool { return strings.HasPrefix(e.Type, prefix+".") })
	}
	return KnownEventType(p)
}

// EventPatternMatches reports whether event type t matches pattern p ("*", exact, "prefix.*").
func EventPatternMatches(p, t string) bool {
	if p == "*" || p == t {
		return true
	}
	if prefix, ok := strings.CutSuffix(p, ".*"); ok {
		return strings.HasPrefix(t, prefix+".")
	}
	return false
}

// AnyEventPatternMatches reports whether t matches one of patterns.
func AnyEventPatternMatches(patterns []string, t string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return EventPatternMatches(p, t) })
}
