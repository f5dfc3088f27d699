package db

import (
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Packed JSON: the large JSON documents troco keeps per payment (event payloads, the responses
// stored for idempotent retries, the request log's bodies) are stored as Zstandard frames
// compressed against a preset dictionary of typical documents (packDictV1), which shrinks a
// 1–1.5 KB object to a few hundred bytes for about 10 µs of CPU (klauspost/compress: the
// dictionary's tables are built once, not per document, which is what makes packing a
// document inside the single writer affordable; compress/flate re-reads its dictionary on
// every Reset, 70–100 µs). A packed value starts with a format byte that JSON text never starts
// with; anything else is plain JSON, so rows written before packing existed read as they were.
const (
	packV1   = 0x01 // a Zstandard frame (RFC 8878) with raw dictionary 1 = packDictV1
	packMinN = 128  // smaller documents are stored as they are
)

var (
	packDict  = []byte(packDictV1)
	packCodec = sync.OnceValues(func() (*zstd.Encoder, *zstd.Decoder) {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderDictRaw(1, packDict))
		if err != nil {
			panic(err)
		}
		dec, err := zstd.NewReader(nil, zstd.WithDecoderDictRaw(1, packDict), zstd.WithDecoderMaxMemory(64<<20))
		if err != nil {
			panic(err)
		}
		return enc, dec
	})
)

// packJSON returns the stored form of a JSON document: packed when that is smaller.
func packJSON(doc []byte) []byte {
	forced := len(doc) > 0 && doc[0] == packV1 // not JSON: packed whatever its size, to read back as it was
	if len(doc) < packMinN && !forced {
		return doc
	}
	enc, _ := packCodec()
	out := make([]byte, 1, len(doc)/3+32)
	out[0] = packV1
	out = enc.EncodeAll(doc, out)
	if len(out) >= len(doc) && !forced {
		return doc
	}
	return out
}

// unpackJSON returns the JSON document of a stored value, packed or plain.
func unpackJSON(stored []byte) ([]byte, error) {
	if len(stored) == 0 || stored[0] != packV1 {
		return stored, nil
	}
	_, dec := packCodec()
	out, err := dec.DecodeAll(stored[1:], make([]byte, 0, 4*len(stored)))
	if err != nil {
		return nil, fmt.Errorf("db: unpack: %w", err)
	}
	return out, nil
}

// packText is packJSON for a text column.
func packText(s string) any {
	if len(s) < packMinN && (s == "" || s[0] != packV1) {
		return s
	}
	return packJSON([]byte(s))
}

// unpackText is unpackJSON for a text column.
func unpackText(s string) (string, error) {
	if s == "" || s[0] != packV1 {
		return s, nil
	}
	b, err := unpackJSON([]byte(s))
	return string(b), err
}
