package domain

import (
	"bytes"
	"encoding/json"
	"errors"
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
	if m, ok := any(&o.V).(*map[string]string); ok {
		return unmarshalStringMap(b, m)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(&o.V)
}

// unmarshalStringMap decodes an object of strings (metadata); a value of another type is
// reported with its key, so the API names the param metadata[key].
func unmarshalStringMap(b []byte, dst *map[string]string) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				te.Field = k
			}
			return err
		}
		out[k] = s
	}
	*dst = out
	return nil
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
