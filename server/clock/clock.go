// Package clock is troco's single source of time. Everything that needs "now" receives a Clock;
// the sandbox's time travel (CONTRACT 9) moves an Offset clock forward.
package clock

import (
	"sync/atomic"
	"time"
)

// Clock tells the current instant, in UTC.
type Clock interface {
	Now() time.Time
}

// Real is the wall clock.
type Real struct{}

// Now returns the wall-clock time in UTC.
func (Real) Now() time.Time { return time.Now().UTC() }

// Offset is a clock running at real speed, shifted forward by an adjustable offset; the sandbox
// advances it to make future jobs due now.
type Offset struct {
	base   Clock
	offset atomic.Int64 // nanoseconds
}

// NewOffset returns a clock that reads base plus offset.
func NewOffset(base Clock, offset time.Duration) *Offset {
	c := &Offset{base: base}
	c.offset.Store(int64(offset))
	return c
}

// Now returns the shifted instant.
func (c *Offset) Now() time.Time { return c.base.Now().Add(time.Duration(c.offset.Load())).UTC() }

// Advance moves the clock forward by d (never backward) and returns the new offset.
func (c *Offset) Advance(d time.Duration) time.Duration {
	if d < 0 {
		d = 0
	}
	return time.Duration(c.offset.Add(int64(d)))
}

// AdvanceTo moves the clock forward to offset if it is behind it (never backward) and returns
// the offset now in force: how a replica catches up with a time travel made by another.
func (c *Offset) AdvanceTo(offset time.Duration) time.Duration {
	for {
		cur := c.offset.Load()
		if int64(offset) <= cur {
			return time.Duration(cur)
		}
		if c.offset.CompareAndSwap(cur, int64(offset)) {
			return offset
		}
	}
}

// Wall returns the instant of c without sandbox time travel: what the clock of someone outside
// troco reads (a webhook receiver checking the signature's timestamp tolerance). For any clock
// other than an Offset it is c.Now().
func Wall(c Clock) time.Time {
	if o, ok := c.(*Offset); ok {
		return o.base.Now().UTC()
	}
	return c.Now()
}

// Offset returns the current shift from the base clock.
func (c *Offset) Offset() time.Duration { return time.Duration(c.offset.Load()) }

// Fixed is a clock stopped at a settable instant, for tests.
type Fixed struct{ t atomic.Int64 }

// NewFixed returns a clock stopped at t.
func NewFixed(t time.Time) *Fixed {
	c := &Fixed{}
	c.Set(t)
	return c
}

// Now returns the stopped instant.
func (c *Fixed) Now() time.Time { return time.Unix(0, c.t.Load()).UTC() }

// Set stops the clock at t.
func (c *Fixed) Set(t time.Time) { c.t.Store(t.UnixNano()) }

// Add moves the clock by d.
func (c *Fixed) Add(d time.Duration) { c.t.Add(int64(d)) }
