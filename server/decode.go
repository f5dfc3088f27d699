package server

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"troco/server/domain"
)

// readBody returns the request body, bounded by MaxBodyBytes.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	orig := r.Body
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			if sw := findStatusWriter(w); sw != nil {
				sw.drain = orig // read the rest after the 413 is written: see observe
			}
			return nil, &domain.Error{Status: http.StatusRequestEntityTooLarge, Type: domain.TypeInvalidRequest, Code: domain.CodeRequestTooLarge, Message: "The request body is larger than the limit of " + humanBytes(s.cfg.MaxBodyBytes) + "."}
		}
		return nil, domain.Invalid("", "The request body could not be read.")
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}

func humanBytes(n int64) string {
	if n%(1<<20) == 0 {
		return itoa(n>>20) + " MiB"
	}
	return itoa(n) + " bytes"
}

// decode reads a JSON object body into dst: unknown fields and wrong types are 400s naming the
// parameter; an empty body decodes as {}.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, dst any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return &domain.Error{Status: http.StatusUnsupportedMediaType, Type: domain.TypeInvalidRequest, Code: domain.CodeUnsupportedMediaType, Message: "Request bodies must be JSON with Content-Type: application/json."}
		}
	}
	body, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	return decodeJSON(body, dst)
}

// decodeJSON is the single JSON decoder of the API.
func decodeJSON(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	trimmed := bytes.TrimSpace(body)
	if trimmed[0] != '{' {
		return domain.Invalid("", "The request body must be a JSON object.")
	}
	if e := checkJSONText(trimmed); e != nil {
		return e
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) || isUnknownField(err) {
			if e := locateParamError(body, reflect.TypeOf(dst)); e != nil {
				return e
			}
		}
		if _, custom := domain.AsError(err); custom && mayFoldKeys(trimmed) {
			// A custom decoder's own refusal (the card's missing number) comes after a key
			// that only folds to a parameter: that key is what the caller got wrong.
			w := paramWalker{data: body}
			if e := w.exactKeys(reflect.TypeOf(dst), ""); e != nil {
				return e
			}
		}
		return decodeError(err)
	}
	if mayFoldKeys(trimmed) {
		// encoding/json matches field names case-insensitively ("Amount" fills amount); the
		// API's parameter names are exact, so a key that only folds to one is unknown.
		w := paramWalker{data: body}
		if e := w.exactKeys(reflect.TypeOf(dst), ""); e != nil {
			return e
		}
	}
	if dec.More() {
		return domain.Invalid("", "The request body must contain a single JSON object.")
	}
	if _, err := dec.Token(); err != io.EOF {
		return domain.Invalid("", "The request body must contain a single JSON object.")
	}
	return nil
}

func decodeError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var de *domain.Error
	switch {
	case errors.As(err, &de):
		return de
	case errors.As(err, &se):
		return domain.Invalid("", "The request body is not valid JSON (at byte %d).", se.Offset)
	case errors.As(err, &te):
		param := jsonPathToParam(te.Field)
		return domain.Invalid(param, "Invalid type for %s: expected %s.", orBody(param), typeName(te.Type.String()))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return domain.Invalid("", "The request body is not valid JSON (unexpected end).")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return domain.Invalid(field, "Received unknown parameter: %s.", field)
	}
	// Errors from custom UnmarshalJSON methods (timestamps, enums) carry their own text.
	return domain.Invalid("", "Invalid request body: %s.", strings.TrimPrefix(err.Error(), "json: "))
}

func orBody(p string) string {
	if p == "" {
		return "the request body"
	}
	return p
}

// jsonPathToParam turns "a.b.c" into "a[b][c]", the API's parameter notation.
func jsonPathToParam(field string) string {
	parts := strings.Split(field, ".")
	out := parts[0]
	for _, p := range parts[1:] {
		out += "[" + p + "]"
	}
	return out
}

func typeName(goType string) string {
	switch {
	case strings.Contains(goType, "int"):
		return "an integer"
	case strings.Contains(goType, "float"), goType == "json.Number":
		return "a number"
	case strings.Contains(goType, "bool"):
		return "a boolean"
	case strings.Contains(goType, "string"):
		if strings.HasPrefix(goType, "map") {
			return "an object"
		}
		if strings.HasPrefix(goType, "[]") {
			return "an array"
		}
		return "a string"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	}
	return "an object"
}

func isUnknownField(err error) bool {
	return strings.HasPrefix(err.Error(), "json: unknown field ")
}

// locateParamError names the first unknown field or wrong type of body, in document order (the
// error encoding/json keeps), with its full path in the API's parameter notation:
// line_items[0][quantity], recurring[foo]. encoding/json gives only the bare key of an unknown
// field, drops array indices and map keys from a wrong type's path and spells embedded structs
// into it, so after a failed decode, and only then, the body is walked again against the type it
// was decoded into. Nil when the walk finds nothing (the caller falls back to the decoder's error).
func locateParamError(body []byte, t reflect.Type) error {
	w := paramWalker{data: body}
	if e := w.value(t, ""); e != nil {
		return e
	}
	return nil
}

// paramWalker reads a body the decoder has already checked for syntax (a decode fails on syntax
// before it fills any field), so it can scan bytes; a byte out of place ends the walk with nil.
type paramWalker struct {
	data []byte
	pos  int
	bad  bool // the body is not what the decoder accepted: stop
}

// fieldCache holds jsonFields per struct type (types are few and fixed).
var fieldCache sync.Map // reflect.Type → map[string]reflect.Type

// structFields is jsonFields(t), computed once per type.
func structFields(t reflect.Type) map[string]reflect.Type {
	if f, ok := fieldCache.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	f := jsonFields(t)
	fieldCache.Store(t, f)
	return f
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonNumberType      = reflect.TypeFor[json.Number]()
)

// value walks the next JSON value against t, at path. Containers the decoder fills element by
// element (structs, slices, maps) are walked; scalars are checked as encoding/json checks them;
// anything else, including types with their own UnmarshalJSON (card, timestamps), is decoded for
// real, so its verdict is encoding/json's.
func (w *paramWalker) value(t reflect.Type, path string) *domain.Error {
	t = decodeTarget(t)
	w.space()
	if w.bad || w.pos >= len(w.data) {
		w.bad = true
		return nil
	}
	c := w.data[w.pos]
	if isCustomDecoded(t) {
		return leafError(w.skip(), t, path)
	}
	if c == 'n' { // null leaves any field as it is
		w.skip()
		return nil
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		if c != '{' {
			return typeError(path, t)
		}
		var fields map[string]reflect.Type
		if t.Kind() == reflect.Struct {
			fields = structFields(t)
		}
		w.pos++
		for w.next('}') {
			k := w.key()
			p := joinParam(path, k)
			ft := t
			if fields != nil {
				// The exact JSON name only: a key encoding/json would match case-insensitively
				// is unknown to the API (decodeJSON refuses it even when the decode succeeds).
				var ok bool
				if ft, ok = fields[k]; !ok {
					return domain.Invalid(p, "Received unknown parameter: %s.", p)
				}
			} else {
				ft = t.Elem()
			}
			if e := w.value(ft, p); e != nil {
				return e
			}
		}
	case reflect.Slice, reflect.Array:
		if c != '[' {
			return typeError(path, t)
		}
		w.pos++
		for i := 0; w.next(']'); i++ {
			if e := w.value(t.Elem(), path+"["+itoa(int64(i))+"]"); e != nil {
				return e
			}
		}
	default:
		if !scalarFits(w.skip(), t) {
			return typeError(path, t)
		}
	}
	return nil
}

// next moves past a separating comma and reports whether another member or element follows
// before the closing byte, which it consumes.
func (w *paramWalker) next(closing byte) bool {
	w.space()
	if w.pos < len(w.data) && w.data[w.pos] == ',' {
		w.pos++
		w.space()
	}
	if w.bad || w.pos >= len(w.data) {
		w.bad = true
		return false
	}
	if w.data[w.pos] == closing {
		w.pos++
		return false
	}
	return true
}

// key reads an object key and its colon.
func (w *paramWalker) key() string {
	raw := w.skip()
	k := ""
	if len(raw) >= 2 && raw[0] == '"' {
		k = string(raw[1 : len(raw)-1])
		if bytes.IndexByte(raw, '\\') >= 0 || !isASCII(raw) {
			_ = json.Unmarshal(raw, &k) // escapes and invalid UTF-8, as the decoder reads them
		}
	} else {
		w.bad = true
	}
	w.space()
	if w.pos < len(w.data) && w.data[w.pos] == ':' {
		w.pos++
	} else {
		w.bad = true
	}
	return k
}

// skip returns the next value's bytes and moves past them.
func (w *paramWalker) skip() []byte {
	w.space()
	start, depth, inString := w.pos, 0, false
	for ; w.pos < len(w.data); w.pos++ {
		c := w.data[w.pos]
		switch {
		case inString:
			if c == '\\' {
				w.pos++
			} else if c == '"' {
				inString = false
				if depth == 0 {
					w.pos++
					return w.data[start:w.pos]
				}
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth == 0 {
				return w.data[start:w.pos]
			}
			depth--
			if depth == 0 {
				w.pos++
				return w.data[start:w.pos]
			}
		case depth == 0 && (c == ',' || c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return w.data[start:w.pos]
		}
	}
	if w.pos > len(w.data) {
		w.pos = len(w.data)
	}
	return w.data[start:w.pos]
}

func (w *paramWalker) space() {
	for w.pos < len(w.data) {
		switch w.data[w.pos] {
		case ' ', '\t', '\n', '\r':
			w.pos++
		default:
			return
		}
	}
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// scalarFits reports whether a JSON literal decodes into a scalar of kind t without an
// UnmarshalTypeError, by encoding/json's rules (a number must parse and fit the field).
func scalarFits(raw []byte, t reflect.Type) bool {
	if len(raw) == 0 {
		return true
	}
	c := raw[0]
	switch t.Kind() {
	case reflect.String:
		return c == '"'
	case reflect.Bool:
		return c == 't' || c == 'f'
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		_, err := strconv.ParseInt(string(raw), 10, t.Bits())
		return err == nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		_, err := strconv.ParseUint(string(raw), 10, t.Bits())
		return err == nil
	case reflect.Float32, reflect.Float64:
		if c == '"' || c == '{' || c == '[' || c == 't' || c == 'f' {
			return false
		}
		_, err := strconv.ParseFloat(string(raw), t.Bits())
		return err == nil
	}
	return true
}

// decodeTarget is the type a JSON value lands in: pointers followed, an Opt[T] seen as its T.
func decodeTarget(t reflect.Type) reflect.Type {
	for {
		switch {
		case t.Kind() == reflect.Pointer:
			t = t.Elem()
		case t.Kind() == reflect.Struct && t.PkgPath() == "troco/server/domain" && strings.HasPrefix(t.Name(), "Opt["):
			f, _ := t.FieldByName("V")
			t = f.Type
		default:
			return t
		}
	}
}

// isCustomDecoded reports whether t is decoded as a whole rather than walked or checked as a
// scalar: its own UnmarshalJSON or UnmarshalText, interfaces, []byte, maps with non-string keys.
func isCustomDecoded(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct, reflect.Array:
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return true // []byte is a base64 string
		}
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return true
		}
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if t == jsonNumberType {
			return true
		}
	default:
		return true
	}
	pt := reflect.PointerTo(t)
	return pt.Implements(jsonUnmarshalerType) || pt.Implements(textUnmarshalerType)
}

// leafError decodes one leaf value for real and names what it rejects; nil when it decodes or
// fails for another reason (a custom decoder's own message, which the caller reports).
func leafError(raw []byte, t reflect.Type, path string) *domain.Error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	err := dec.Decode(reflect.New(t).Interface())
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te):
		p := path
		if te.Field != "" { // a path inside a custom decoder's struct (card[exp_month])
			for _, k := range strings.Split(te.Field, ".") {
				p = joinParam(p, k)
			}
		}
		return typeError(p, te.Type)
	case isUnknownField(err):
		p := joinParam(path, strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`))
		return domain.Invalid(p, "Received unknown parameter: %s.", p)
	}
	return nil
}

func typeError(param string, t reflect.Type) *domain.Error {
	name := "an object"
	if t != nil {
		name = typeName(t.String())
	}
	return domain.Invalid(param, "Invalid type for %s: expected %s.", orBody(param), name)
}

// mayFoldKeys reports whether an object key of body (a string followed by a colon) has a byte
// that lets it match a parameter name only case-insensitively: an ASCII capital, a backslash
// escape, or any non-ASCII byte (encoding/json also folds the Kelvin sign to k and the long s to
// s). Parameter names are lower-case ASCII, so when no key has one, decodeJSON skips exactKeys;
// capitals in values ("Pedido 12") do not count. One pass, no allocation; body is valid JSON.
func mayFoldKeys(body []byte) bool {
	for i := 0; i < len(body); i++ {
		if body[i] != '"' {
			continue
		}
		odd := false
		j := i + 1
		for ; j < len(body) && body[j] != '"'; j++ {
			c := body[j]
			if c == '\\' {
				odd = true
				j++ // the escaped byte, a quote included
				continue
			}
			if c >= 'A' && c <= 'Z' || c >= 0x80 {
				odd = true
			}
		}
		i = j // the closing quote
		if !odd {
			continue
		}
		k := j + 1
		for k < len(body) && (body[k] == ' ' || body[k] == '\t' || body[k] == '\n' || body[k] == '\r') {
			k++
		}
		if k < len(body) && body[k] == ':' {
			return true
		}
	}
	return false
}

// exactKeys walks a body that has decoded into t and refuses the first object key at a struct
// position that is not exactly one of the struct's JSON names (a key encoding/json matched
// case-insensitively). Map keys (metadata) are data and kept as sent. Values of other types,
// custom-decoded ones included, are skipped, except structs sent as objects (the card's fields).
func (w *paramWalker) exactKeys(t reflect.Type, path string) *domain.Error {
	t = decodeTarget(t)
	w.space()
	if w.bad || w.pos >= len(w.data) {
		w.bad = true
		return nil
	}
	switch c := w.data[w.pos]; {
	case c == '{' && (t.Kind() == reflect.Struct || t.Kind() == reflect.Map && t.Key().Kind() == reflect.String):
		var fields map[string]reflect.Type
		if t.Kind() == reflect.Struct {
			fields = structFields(t)
		}
		w.pos++
		for w.next('}') {
			k := w.key()
			p := joinParam(path, k)
			var ft reflect.Type
			if fields == nil {
				ft = t.Elem()
			} else if ft = fields[k]; ft == nil {
				return domain.Invalid(p, "Received unknown parameter: %s.", p)
			}
			if e := w.exactKeys(ft, p); e != nil {
				return e
			}
		}
	case c == '[' && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && t.Elem().Kind() != reflect.Uint8:
		w.pos++
		for i := 0; w.next(']'); i++ {
			if e := w.exactKeys(t.Elem(), path+"["+itoa(int64(i))+"]"); e != nil {
				return e
			}
		}
	default:
		w.skip()
	}
	return nil
}

// jsonFields maps the JSON names of a struct's exported fields (embedded ones included) to types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					out[k] = v
				}
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func joinParam(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "[" + k + "]"
}
