package domain

import (
	"bytes"
	"fmt"
	"time"
)

// TimeLayout is the wire format of every timestamp: RFC 3339, UTC, whole seconds, suffix Z.
const TimeLayout = "2006-01-02T15:04:05Z"

// Time is an absolute instant that marshals as RFC 3339 UTC, or null when zero.
type Time struct{ time.Time }

// At wraps t (truncated to the second, in UTC) as a Time.
func At(t time.Time) Time { return Time{t.UTC().Truncate(time.Second)} }

// Unix converts stored Unix seconds to a Time; 0 means absent.
func Unix(sec int64) Time {
	if sec == 0 {
		return Time{}
	}
	return Time{time.Unix(sec, 0).UTC()}
}

// UnixPtr converts nullable stored Unix seconds to a Time.
func UnixPtr(sec *int64) Time {
	if sec == nil {
		return Time{}
	}
	return Unix(*sec)
}

// MarshalJSON renders the instant as "2006-01-02T15:04:05Z" or null.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + t.UTC().Format(TimeLayout) + `"`), nil
}

// UnmarshalJSON accepts null or an RFC 3339 timestamp with a zone (Z or offset).
func (t *Time) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*t = Time{}
		return nil
	}
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return fmt.Errorf("timestamp must be an RFC 3339 string")
	}
	v, err := ParseTimestamp(string(b[1 : len(b)-1]))
	if err != nil {
		return err
	}
	*t = Time{v}
	return nil
}

// ParseTimestamp parses a full RFC 3339 timestamp with Z or a numeric offset; dates without a
// time, times without a zone and impossible dates are rejected.
func ParseTimestamp(s string) (time.Time, error) {
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 timestamp with a time zone", s)
	}
	return v.UTC(), nil
}
