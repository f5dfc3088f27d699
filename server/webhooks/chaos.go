package webhooks

import (
	"crypto/sha256"
	"encoding/binary"

	"troco/server/domain"
)

// Webhook chaos (test endpoints only): deliveries misbehave on purpose so that a receiver can
// prove it is idempotent and order-independent. Every decision is a pure function of the seed,
// the event's sequence number at the endpoint (1 for the first event it receives after chaos was
// set, counted in the order the events were created) and the attempt number, so the same seed
// and the same sequence of events give the same chaos on every run, replica and restart.
//
//   - the first attempt of an event is held back 0..max_delay_seconds; with reorder, every other
//     event (chosen by the seed) is held back 1–5 seconds more, so later events overtake it;
//   - attempts up to fail_first_attempts fail without being sent, then drop_rate of the others
//     are dropped (not sent, recorded as failed); both are retried on the usual schedule;
//   - duplicate_rate of the attempts that are sent are sent twice, with the same webhook-id.

// Chaos limits.
const (
	MaxChaosDelaySeconds   = 3600
	MaxChaosFailFirst      = 10
	MaxChaosRate           = 10000 // basis points
	chaosReorderMaxSeconds = 5
)

// roll is the seeded pseudo-random number of one decision.
func roll(seed, sequence int64, attempt int, what string) uint64 {
	var b [20]byte
	binary.BigEndian.PutUint64(b[0:8], uint64(seed))
	binary.BigEndian.PutUint64(b[8:16], uint64(sequence))
	binary.BigEndian.PutUint32(b[16:20], uint32(attempt))
	sum := sha256.Sum256(append(b[:], what...))
	return binary.BigEndian.Uint64(sum[:8])
}

// ChaosHold is how long chaos holds back the first attempt of event number sequence, and
// whether that hold is a reordering.
func ChaosHold(c *domain.WebhookChaos, sequence int64) (seconds int, reordered bool) {
	if c.MaxDelaySeconds > 0 {
		seconds = int(roll(c.Seed, sequence, 0, "delay") % uint64(c.MaxDelaySeconds+1))
	}
	if c.Reorder && roll(c.Seed, sequence, 0, "reorder")%2 == 0 {
		seconds += 1 + int(roll(c.Seed, sequence, 0, "reorder-by")%chaosReorderMaxSeconds)
		reordered = true
	}
	return seconds, reordered
}

// ChaosAttempt decides what chaos does to attempt n of event number sequence.
func ChaosAttempt(c *domain.WebhookChaos, sequence int64, attempt int) domain.DeliveryChaos {
	d := domain.DeliveryChaos{Sequence: sequence}
	d.DelayedSeconds, d.Reordered = ChaosHold(c, sequence)
	switch {
	case attempt <= c.FailFirstAttempts:
		d.ForcedFailure = true
	case c.DropRate > 0 && roll(c.Seed, sequence, attempt, "drop")%MaxChaosRate < uint64(c.DropRate):
		d.Dropped = true
	case c.DuplicateRate > 0 && roll(c.Seed, sequence, attempt, "duplicate")%MaxChaosRate < uint64(c.DuplicateRate):
		d.Duplicated = true
	}
	return d
}

// ValidateChaos checks chaos settings; live endpoints refuse them.
func ValidateChaos(c *domain.WebhookChaos, livemode bool) error {
	switch {
	case livemode:
		return domain.Invalid("chaos", "chaos is available on test-mode webhook endpoints only: a live endpoint receives real events.")
	case c.DropRate < 0 || c.DropRate > MaxChaosRate:
		return domain.Invalid("chaos", "chaos.drop_rate must be between 0 and %d basis points.", MaxChaosRate)
	case c.DuplicateRate < 0 || c.DuplicateRate > MaxChaosRate:
		return domain.Invalid("chaos", "chaos.duplicate_rate must be between 0 and %d basis points.", MaxChaosRate)
	case c.MaxDelaySeconds < 0 || c.MaxDelaySeconds > MaxChaosDelaySeconds:
		return domain.Invalid("chaos", "chaos.max_delay_seconds must be between 0 and %d.", MaxChaosDelaySeconds)
	case c.FailFirstAttempts < 0 || c.FailFirstAttempts > MaxChaosFailFirst:
		return domain.Invalid("chaos", "chaos.fail_first_attempts must be between 0 and %d.", MaxChaosFailFirst)
	case c.DropRate == MaxChaosRate:
		return domain.Invalid("chaos", "chaos.drop_rate 10000 would drop every attempt and no event would ever arrive; use at most 9999.")
	}
	return nil
}
