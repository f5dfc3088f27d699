package domain

import (
	"bytes"
	"encoding/json"
	"sync"
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

// MarshalJSON encodes v as encoding/json does but leaves <, > and & as they are (an API answer
// is not HTML: "<API_KEY>" must read as written, not "\u003cAPI_KEY\u003e").
func MarshalJSON(v any) ([]byte, error) {
	switch o := v.(type) {
	case *PaymentIntent:
		if o != nil {
			return o.AppendJSON(make([]byte, 0, 1024))
		}
	case *Charge:
		if o != nil {
			return o.AppendJSON(make([]byte, 0, 1536))
		}
	case PaymentMethodDetails:
		return o.AppendJSON(make([]byte, 0, 512))
	case BillingDetails:
		return o.AppendJSON(make([]byte, 0, 256)), nil
	case *PaymentData:
		return appendJSONPaymentData(make([]byte, 0, 128), o)
	case *PaymentError:
		return appendJSONPaymentError(make([]byte, 0, 160), o), nil
	case *PaymentCard:
		return appendJSONPaymentCard(make([]byte, 0, 160), o), nil
	case []string:
		return appendJSONStrings(make([]byte, 0, 64), o), nil
	}
	return marshalJSON(v)
}

// marshalJSON is MarshalJSON through encoding/json.
func marshalJSON(v any) ([]byte, error) {
	b := encodeBuffers.Get().(*bytes.Buffer)
	defer func() {
		if b.Cap() <= maxPooledBuffer {
			encodeBuffers.Put(b)
		}
	}()
	b.Reset()
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.Clone(bytes.TrimSuffix(b.Bytes(), []byte{'\n'})), nil
}

// encodeBuffers are MarshalJSON's buffers: an object is encoded into a buffer that already has
// room for it and copied out once, instead of growing a new buffer by doubling (five or six
// allocations and copies for a payment intent).
var encodeBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuffer: a buffer grown past it by a large document is left to the collector.
const maxPooledBuffer = 64 << 10
