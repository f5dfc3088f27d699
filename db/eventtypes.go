package db

import "strings"

// Event types on SQLite: an event's type is stored as two bytes, 0x01 and its position in
// eventTypeCodes plus one, instead of its name (21 bytes on average, in the row and again in
// events_scope_type). Types without a code, and rows written before codes, hold the name; a
// filter on a type looks for both forms (typeFilter). PostgreSQL stores names.
//
// APPEND ONLY: a code is what rows hold. TestEventTypeCodes fails when a type of
// domain.EventTypes has no code.
var eventTypeCodes = []string{
	"customer.created",
	"customer.updated",
	"customer.deleted",
	"product.created",
	"product.updated",
	"product.deleted",
	"price.created",
	"price.updated",
	"price.deleted",
	"coupon.created",
	"coupon.updated",
	"coupon.deleted",
	"promotion_code.created",
	"promotion_code.updated",
	"pix_authorization.created",
	"pix_authorization.approved",
	"pix_authorization.rejected",
	"pix_authorization.canceled",
	"pix_authorization.expired",
	"payment_intent.created",
	"payment_intent.pending",
	"payment_intent.processing",
	"payment_intent.amount_capturable_updated",
	"payment_intent.succeeded",
	"payment_intent.payment_failed",
	"payment_intent.canceled",
	"payment_intent.updated",
	"charge.pending",
	"charge.succeeded",
	"charge.failed",
	"charge.captured",
	"charge.refunded",
	"charge.expired",
	"charge.updated",
	"charge.dispute.created",
	"charge.dispute.updated",
	"charge.dispute.closed",
	"charge.dispute.funds_withdrawn",
	"charge.dispute.funds_reinstated",
	"refund.created",
	"checkout.session.created",
	"checkout.session.completed",
	"checkout.session.expired",
	"checkout.session.async.payment.succeeded",
	"checkout.session.async.payment.failed",
	"payment_method.attached",
	"payment_method.detached",
	"setup_intent.created",
	"setup_intent.succeeded",
	"setup_intent.setup_failed",
	"setup_intent.canceled",
	"invoice.created",
	"invoice.finalized",
	"invoice.paid",
	"invoice.payment_failed",
	"invoice.voided",
	"invoice.marked_uncollectible",
	"invoice.overdue",
	"invoice.updated",
	"invoice.upcoming",
	"customer.subscription.created",
	"customer.subscription.updated",
	"customer.subscription.deleted",
	"customer.subscription.trial_will_end",
	"customer.subscription.paused",
	"customer.subscription.resumed",
	"organization.updated",
	"webhook_endpoint.disabled",
}

// eventTypeCode is the stored form of an event type on SQLite.
var eventTypeCode = func() map[string]string {
	m := make(map[string]string, len(eventTypeCodes))
	for i, t := range eventTypeCodes {
		if i+1 > 0x7f {
			// A code stays one ASCII byte: a byte of 0x80 or more is not valid UTF-8 text, which
			// PostgreSQL refuses and an export garbles. Store further types by name instead.
			panic("db: more than 127 event type codes")
		}
		m[t] = string([]byte{0x01, byte(i + 1)})
	}
	return m
}()

// storedEventType is the type column of an event of type t.
func (tx *Tx) storedEventType(t string) string {
	if c, ok := eventTypeCode[t]; ok && !tx.pg {
		return c
	}
	return t
}

// eventTypeName reads a stored type column.
func eventTypeName(stored string) string {
	if len(stored) == 2 && stored[0] == 0x01 && stored[1] >= 1 && int(stored[1]) <= len(eventTypeCodes) {
		return eventTypeCodes[stored[1]-1]
	}
	return stored
}

// typeFilter narrows events to type t: "" or "*" (all), an exact type, or "prefix.*". It
// returns the alternatives a matching row satisfies: on SQLite the code of each matching type
// and the names (rows without a code); on PostgreSQL the names.
func (tx *Tx) typeFilter(t string) []alt {
	if t == "" || t == "*" {
		return nil
	}
	prefix, wildcard := strings.CutSuffix(t, ".*")
	var alts []alt
	if !tx.pg {
		for _, name := range eventTypeCodes {
			if name == t || wildcard && strings.HasPrefix(name, prefix+".") {
				alts = append(alts, alt{"type = ?", []any{eventTypeCode[name]}})
			}
		}
	}
	if wildcard {
		// '/' sorts right after '.', so [prefix., prefix/) is exactly the names under prefix.
		return append(alts, alt{"type >= ? AND type < ?", []any{prefix + ".", prefix + "/"}})
	}
	return append(alts, alt{"type = ?", []any{t}})
}
