package server

import (
	"bytes"
	"encoding/json"
	"net/url"
	"slices"
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
	if plainJSONText(body) {
		return nil
	}
	return walkJSONText(body)
}

// walkJSONText is checkJSONText's full walk, token by token.
func walkJSONText(body []byte) *domain.Error {
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

// checkFormText applies the JSON bodies' text rules (valid UTF-8, no NUL, no bidirectional
// control character) to every value of a form posted to a page, naming the first field (in name
// order) that breaks one, so a page cannot store what the API refuses.
func checkFormText(f url.Values) *domain.Error {
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range f[k] {
			if e := checkText(v, []byte(v), k); e != nil {
				return e
			}
		}
	}
	return nil
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
	return domain.ForbiddenTextError(param, name, s)
}

// plainJSONText reports, without allocating, whether body certainly passes checkJSONText: one
// valid JSON value in valid UTF-8 with no NUL byte, no \u escape, no bidirectional control
// character, and no key given twice in an object (keys compared as written, so a key with an
// escape sends the body to the full check). Every request body goes through it; when it says
// false, checkJSONText's walk decides and names the field.
func plainJSONText(body []byte) bool {
	if !utf8.Valid(body) || bytes.IndexByte(body, 0) >= 0 || bytes.Contains(body, []byte(`\u`)) || !json.Valid(body) {
		return false
	}
	for i := 0; i+2 < len(body); i++ {
		if body[i] == 0xe2 && (body[i+1] == 0x80 && body[i+2] >= 0xaa && body[i+2] <= 0xae || body[i+1] == 0x81 && body[i+2] >= 0xa6 && body[i+2] <= 0xa9) {
			return false
		}
	}
	var keyBuf [128][]byte // the keys of the open objects, innermost last
	var frameBuf [32]int   // where each open object's keys start in keys; -1 for an array
	keys, frames := keyBuf[:0], frameBuf[:0]
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '{', '[':
			if len(frames) == cap(frames) {
				return false
			}
			start := len(keys)
			if body[i] == '[' {
				start = -1
			}
			frames = append(frames, start)
		case '}', ']':
			if start := frames[len(frames)-1]; start >= 0 {
				keys = keys[:start]
			}
			frames = frames[:len(frames)-1]
		case '"':
			j := i + 1
			for body[j] != '"' {
				if body[j] == '\\' {
					j++
				}
				j++
			}
			str := body[i+1 : j]
			i = j
			k := j + 1
			for k < len(body) && (body[k] == ' ' || body[k] == '\t' || body[k] == '\n' || body[k] == '\r') {
				k++
			}
			if k == len(body) || body[k] != ':' {
				continue // a value
			}
			start := frames[len(frames)-1]
			if bytes.IndexByte(str, '\\') >= 0 || len(keys) == cap(keys) {
				return false
			}
			for _, seen := range keys[start:] {
				if bytes.Equal(seen, str) {
					return false
				}
			}
			keys = append(keys, str)
		}
	}
	return true
}
