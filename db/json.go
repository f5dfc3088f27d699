package db

import (
	"encoding/json"
	"fmt"

	"troco/server/domain"
)

func marshalJSON(v any) (string, error) {
	b, err := domain.MarshalJSON(v)
	if err != nil {
		return "", fmt.Errorf("db: encode: %w", err)
	}
	return string(b), nil
}

func metadataJSON(m domain.Metadata) string {
	if m == nil {
		return "{}"
	}
	b, _ := json.Marshal(map[string]string(m))
	return string(b)
}

func parseMetadata(s string) domain.Metadata {
	m := domain.Metadata{}
	_ = json.Unmarshal([]byte(s), (*map[string]string)(&m))
	return m
}

func parseAddress(s *string) *domain.Address {
	if s == nil || *s == "" {
		return nil
	}
	var a domain.Address
	if json.Unmarshal([]byte(*s), &a) != nil {
		return nil
	}
	return &a
}

func addressJSON(a *domain.Address) *string {
	if a == nil {
		return nil
	}
	b, _ := json.Marshal(a)
	s := string(b)
	return &s
}

func nullInt(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func timePtr(t domain.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	v := t.Unix()
	return &v
}
