package domain

import (
	"bytes"
	"encoding/json"
)

// Opt is an optional request field that tells apart "absent", "null" and a value, so updates can
// clear a field with null and leave absent ones untouched.
type Opt[T any] struct {
	Set  bool // the field was present in the request
	Null bool // it was present as null
	V    T
}

// UnmarshalJSON records presence and nullness.
func (o *Opt[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		o.Null = true
		return nil
	}
	return json.Unmarshal(b, &o.V)
}

// Value reports the value when present and not null.
func (o Opt[T]) Value() (T, bool) { return o.V, o.Set && !o.Null }

// Ptr returns a pointer to the value, or nil when absent or null.
func (o Opt[T]) Ptr() *T {
	if !o.Set || o.Null {
		return nil
	}
	v := o.V
	return &v
}
