package domain

import (
	"encoding/json"
)

func marshalStringMap(m map[string]string) ([]byte, error) {
	return json.Marshal(map[string]string(m))
}

// List is the list envelope of SPEC 2.8.
type List[T any] struct {
	Object  string `json:"object"`
	Data    []T    `json:"data"`
	HasMore bool   `json:"has_more"`
	URL     string `json:"url"`
}

// NewList wraps data in a list envelope; data is never null on the wire.
func NewList[T any](url string, data []T, hasMore bool) List[T] {
	if data == nil {
		data = []T{}
	}
	return List[T]{Object: "list", Data: data, HasMore: hasMore, URL: url}
}

// Deleted is the answer of a DELETE.
type Deleted struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
}
