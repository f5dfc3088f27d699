package server

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"troco/server/domain"
)

// checkJSONText refuses, before any decoding, what encoding/json would accept silently: a key
// given twice in one object (the decoder keeps the last, so {"amount":1000,"amount":5} would
// check 5 while a log or a proxy reads 1000), invalid UTF-8 (the decoder replaces it with
// U+FFFD), and NUL or bidirectional-control characters in any key or string (they hide text from
// whoever reads it later: a dashboard, a receipt, a log). The error names the field in the API's
// parameter notation (metadata[note], line_items[0][price]). body is known to start with '{'.
func checkJSONText(body []byte) *domain.Error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	type frame struct {
		object    bool
		keys      map[string]struct{}
		key       string // the current key (objects)
		index     int    // the current index (arrays)
		expectKey bool
	}
	var stack []*frame
	path := func(last string) string {
		var b strings.Builder
		for i, f := range stack {
			seg := f.key
			if !f.object {
				seg = strconv.Itoa(f.index)
			}
			if f.object && f.expectKey && i == len(stack)-1 {
				seg = last
			}
			if b.Len() == 0 {
				b.WriteString(seg)
			} else {
				b.WriteString("[" + seg + "]")
			}
		}
		return b.String()
	}
	afterValue := func() {
		if n := len(stack); n > 0 {
			if f := stack[n-1]; f.object {
				f.expectKey = true
			} else {
				f.index++
			}
		}
	}
	prev := int64(0)
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // syntax errors are the decoder's to report
		}
		raw := body[prev:dec.InputOffset()]
		prev = dec.InputOffset()
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, &frame{object: true, keys: map[string]struct{}{}, expectKey: true})
			case '[':
				stack = append(stack, &frame{})
			case '}', ']':
				stack = stack[:len(stack)-1]
				afterValue()
				if len(stack) == 0 {
					return nil
				}
			}
		case string:
			top := stack[len(stack)-1]
			if top.object && top.expectKey {
				param := path(v)
				if e := checkText(v, raw, param); e != nil {
					return e
				}
				if _, dup := top.keys[v]; dup {
					return domain.Invalid(param, "%s is given more than once in the same object.", param)
				}
				top.keys[v] = struct{}{}
				top.key = v
				top.expectKey = false
				continue
			}
			if e := checkText(v, raw, path("")); e != nil {
				return e
			}
			afterValue()
		default:
			afterValue()
		}
	}
}

// checkText checks one decoded string s, read from raw (its bytes in the body, with separators).
func checkText(s string, raw []byte, param string) *domain.Error {
	name := param
	if name == "" {
		name = "the request body"
	}
	if !utf8.Valid(raw) || (strings.ContainsRune(s, utf8.RuneError) && !bytes.Contains(raw, []byte("\uFFFD")) && !bytes.Contains(bytes.ToLower(raw), []byte(`\ufffd`))) {
		return domain.Invalid(param, "%s is not valid UTF-8 text.", name)
	}
	for _, r := range s {
		switch {
		case r == 0:
			return domain.Invalid(param, "%s must not contain the NUL character.", name)
		case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
			return domain.Invalid(param, "%s must not contain bidirectional control characters (U+%04X).", name, r)
		}
	}
	return nil
}
