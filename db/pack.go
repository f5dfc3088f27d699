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
	packV1    = 0x01 // an S2 block (github.com/klauspost/compress/s2) with dictionary packDictV1
	packKnown = 0x03 // followed by one byte: the index of a document in knownDocs
	packMinN  = 128  // smaller documents are stored as they are
)

// knownDocs are documents stored by far most often (billing details nobody filled in): packSmall
// stores them as two bytes. Append only: the index is what rows hold.
var knownDocs = []string{
	`{"address":null,"email":null,"name":null,"phone":null,"document":null,"document_type":null}`,
}

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
func packJSON(doc []byte) []byte { return packJSONMin(doc, packMinN) }

// packSmallMinN is the threshold of packSmall: the sub-documents of payments (a charge's card
// details, billing details, a payment method's card) are mostly shorter than packMinN but made of
// the dictionary's own keys and values, so even 30–100 byte documents shrink to a third or less.
const packSmallMinN = 24

// packSmall is packJSON for the short JSON columns of payment objects.
func packSmall(doc []byte) []byte {
	for i, k := range knownDocs {
		if string(doc) == k {
			return []byte{packKnown, byte(i)}
		}
	}
	return packJSONMin(doc, packSmallMinN)
}

func packJSONMin(doc []byte, minN int) []byte {
	forced := len(doc) > 0 && isMarker(doc[0]) // not JSON: packed whatever its size, to read back as it was
	if len(doc) < minN && !forced {
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

// isMarker reports whether b is the first byte of a stored form (JSON text never starts with one).
func isMarker(b byte) bool { return b == packV1 || b == bodyRef || b == packKnown }

// unpackJSON returns the JSON document of a stored value, packed or plain.
func unpackJSON(stored []byte) ([]byte, error) {
	if len(stored) == 2 && stored[0] == packKnown && int(stored[1]) < len(knownDocs) {
		return []byte(knownDocs[stored[1]]), nil
	}
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
	if len(s) < packMinN && (s == "" || !isMarker(s[0])) {
		return s
	}
	return packJSON([]byte(s))
}

// unpackText is unpackJSON for a text column.
func unpackText(s string) (string, error) {
	if s == "" || (s[0] != packV1 && s[0] != packKnown) {
		return s, nil
	}
	b, err := unpackJSON([]byte(s))
	return string(b), err
}

// packSmallText is packText with packSmall's threshold (the request log's bodies: a confirm's
// redacted card is a hundred bytes of the dictionary's first document).
func packSmallText(s string) any {
	if len(s) < packSmallMinN && (s == "" || !isMarker(s[0])) {
		return s
	}
	return packSmall([]byte(s))
}

// elide returns the stored form of a text column that contains id, the row's own id (a
// payment intent's client_secret, a charge's receipt_url, the path of a request about an
// object): the id's first occurrence is left out, marked by a leading 0x01 and a 0x01 in its
// place, since the row holds the id already. A text without id, or with a 0x01 byte of its own,
// is stored as it is; unelide reads both.
func elide(s, id string) string {
	if id == "" || strings.IndexByte(s, 0x01) >= 0 {
		return s
	}
	i := strings.Index(s, id)
	if i < 0 {
		return s
	}
	return "\x01" + s[:i] + "\x01" + s[i+len(id):]
}

// unelide is the text elide stored for id.
func unelide(stored, id string) string {
	if stored == "" || stored[0] != 0x01 {
		return stored
	}
	before, after, ok := strings.Cut(stored[1:], "\x01")
	if !ok {
		return stored
	}
	return before + id + after
}
