package domain

import (
	"fmt"
	"unicode/utf8"
)

// Metadata limits of SPEC 8.
const (
	MaxMetadataKeys     = 50
	MaxMetadataKeyLen   = 40
	MaxMetadataValueLen = 500
)

// Metadata is a free map of strings attached to an object; it always marshals as an object.
type Metadata map[string]string

// MarshalJSON renders nil as {}.
func (m Metadata) MarshalJSON() ([]byte, error) {
	if m == nil {
		return []byte("{}"), nil
	}
	return marshalStringMap(m)
}

// ValidMetadataKey reports whether k matches [a-zA-Z0-9_.-]{1,40}.
func ValidMetadataKey(k string) bool {
	if len(k) == 0 || len(k) > MaxMetadataKeyLen {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// ValidateMetadata checks the limits of SPEC 8 and names the failing param.
func ValidateMetadata(m map[string]string) error {
	if len(m) > MaxMetadataKeys {
		return Invalid("metadata", "metadata can have at most %d keys; got %d.", MaxMetadataKeys, len(m))
	}
	for k, v := range m {
		if !ValidMetadataKey(k) {
			return Invalid("metadata", "metadata key %q is invalid: keys are 1 to %d characters of [a-zA-Z0-9_.-].", truncate(k, 60), MaxMetadataKeyLen)
		}
		if utf8.RuneCountInString(v) > MaxMetadataValueLen {
			return Invalid(fmt.Sprintf("metadata[%s]", k), "metadata values can be at most %d characters.", MaxMetadataValueLen)
		}
	}
	return nil
}

// MergeMetadata applies an update to current: keys with an empty value are removed, others set.
func MergeMetadata(current Metadata, update map[string]string) Metadata {
	out := Metadata{}
	for k, v := range current {
		out[k] = v
	}
	for k, v := range update {
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// ApplyMetadata applies an optional metadata update to current, the one way every object's
// metadata changes: absent leaves it, null clears it, an object merges into it (an empty value
// removes a key); the update and the result are both held to the limits of SPEC 8.
func ApplyMetadata(current Metadata, update Opt[map[string]string]) (Metadata, error) {
	switch {
	case !update.Set:
		if current == nil {
			return Metadata{}, nil
		}
		return current, nil
	case update.Null:
		return Metadata{}, nil
	}
	if err := ValidateMetadata(update.V); err != nil {
		return nil, err
	}
	out := MergeMetadata(current, update.V)
	if err := ValidateMetadata(out); err != nil {
		return nil, err
	}
	return out, nil
}
