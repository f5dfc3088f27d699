package db

import (
	"fmt"
	"strings"

	"github.com/klauspost/compress/s2"
)

// Packed JSON: the large JSON documents troco keeps per payment (event payloads, the responses
// stored for idempotent retries, the request log's bodies) are stored as S2 blocks (the Snappy
// format extended with a preset dictionary, klauspost/compress/s2) compressed against a
// dictionary of typical documents (packDictV1). That shrinks a 1–1.5 KB object to about 150–300
// bytes for a few µs of CPU: the dictionary's hash table is built once, not per document, which
// is what makes packing an event inside the single writer affordable (Zstandard with the same
// dictionary packs smaller but took ≈ 60 µs per document, compress/flate 70–100 µs, both
// dominated by loading the dictionary for every document). A packed value starts with a
// format byte that JSON text never starts with; anything else is plain JSON, so rows written
// before packing existed read as they always did.
const (
	packV1   = 0x01 // an S2 block (github.com/klauspost/compress/s2) with dictionary packDictV1
	packMinN = 128  // smaller documents are stored as they are
)

// packDict is packDictV1 as an S2 dictionary; its first repeat offset is fixed (the last
// `{"object":{` of the dictionary, how an event's data starts) so that the format never depends
// on a library's search heuristics.
var packDict = func() *s2.Dict {
	d := s2.MakeDictManual([]byte(packDictV1), uint16(strings.LastIndex(packDictV1, `{"object":{`)))
	if d == nil {
		panic("db: bad pack dictionary")
	}
	return d
}()

// packJSON returns the stored form of a JSON document: packed when that is smaller.
func packJSON(doc []byte) []byte {
	forced := len(doc) > 0 && doc[0] == packV1 // not JSON: packed whatever its size, to read back as it was
	if len(doc) < packMinN && !forced {
		return doc
	}
	out := make([]byte, 1+s2.MaxEncodedLen(len(doc)))
	out[0] = packV1
	n := len(packDict.Encode(out[1:], doc))
	if 1+n >= len(doc) && !forced {
		return doc
	}
	return out[:1+n]
}

// unpackJSON returns the JSON document of a stored value, packed or plain.
func unpackJSON(stored []byte) ([]byte, error) {
	if len(stored) == 0 || stored[0] != packV1 {
		return stored, nil
	}
	out, err := packDict.Decode(nil, stored[1:])
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
