package core

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"

	"troco/server/domain"
)

// diff returns previous_attributes: the old values of the top-level JSON fields of after that
// differ from before ("updated_at" excepted), each as encoding/json decodes it into an any (a
// field absent from before's JSON is nil). It compares the typed objects field by field and
// encodes only the fields that changed; types it cannot plan exactly as encoding/json would
// (a custom MarshalJSON on the object, embedded structs, the string option) take diffJSON, the
// definition: encode both, decode them into maps and compare.
func diff(before, after any) map[string]any {
	bv, av := reflect.ValueOf(before), reflect.ValueOf(after)
	for bv.Kind() == reflect.Pointer && !bv.IsNil() {
		bv = bv.Elem()
	}
	for av.Kind() == reflect.Pointer && !av.IsNil() {
		av = av.Elem()
	}
	if bv.Kind() != reflect.Struct || av.Type() != bv.Type() {
		return diffJSON(before, after)
	}
	plan := planFor(av.Type())
	if plan == nil {
		return diffJSON(before, after)
	}
	out := map[string]any{}
	for i := range plan {
		f := &plan[i]
		a, b := av.Field(f.index), bv.Field(f.index)
		if f.omitEmpty && isEmpty(a) {
			continue // absent from after's JSON
		}
		if f.omitEmpty && isEmpty(b) {
			out[f.name] = nil // absent from before's JSON
			continue
		}
		if f.equal(b, a) {
			continue
		}
		out[f.name] = f.decode(b)
	}
	return out
}

// diffJSON is the definition of diff: the top-level fields of both objects' JSON compared as
// decoded values.
func diffJSON(before, after any) map[string]any {
	b, a := toMap(before), toMap(after)
	out := map[string]any{}
	for k, av := range a {
		if k == "updated_at" {
			continue
		}
		if bv, ok := b[k]; !ok || !reflect.DeepEqual(av, bv) {
			out[k] = b[k]
		}
	}
	return out
}

func toMap(v any) map[string]any {
	raw, _ := json.Marshal(v)
	m := map[string]any{}
	_ = json.Unmarshal(raw, &m)
	return m
}

// diffField is one top-level JSON field of a struct type.
type diffField struct {
	name      string
	index     int
	omitEmpty bool
	kind      fieldKind
}

type fieldKind int

const (
	kindOther     fieldKind = iota // compared with reflect.DeepEqual, then by their JSON
	kindScalar                     // string, bool, number without a marshaler: ==
	kindPtrScalar                  // pointer to a kindScalar
	kindTime                       // domain.Time: the same second, or both zero (null)
)

var (
	plans       sync.Map // reflect.Type → []diffField (nil slice: use diffJSON)
	marshalerT  = reflect.TypeFor[json.Marshaler]()
	domainTimeT = reflect.TypeFor[domain.Time]()
)

func planFor(t reflect.Type) []diffField {
	if p, ok := plans.Load(t); ok {
		return p.([]diffField)
	}
	p := buildPlan(t)
	plans.Store(t, p)
	return p
}

// buildPlan lists t's JSON fields as encoding/json names them, or returns nil when t is
// outside what diff handles exactly.
func buildPlan(t reflect.Type) []diffField {
	if t.Implements(marshalerT) || reflect.PointerTo(t).Implements(marshalerT) {
		return nil
	}
	var out []diffField
	seen := map[string]bool{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return nil // promoted fields: leave the rules of embedding to encoding/json
		}
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		f := diffField{name: name, index: i}
		if f.name == "" || strings.ContainsAny(f.name, "\"\\") {
			f.name = sf.Name
		}
		for o := range strings.SplitSeq(opts, ",") {
			switch o {
			case "":
			case "omitempty":
				f.omitEmpty = true
			default:
				return nil // string, omitzero, …
			}
		}
		if seen[f.name] {
			return nil
		}
		seen[f.name] = true
		if f.name == "updated_at" {
			continue
		}
		switch {
		case sf.Type == domainTimeT:
			f.kind = kindTime
		case isScalar(sf.Type):
			f.kind = kindScalar
		case sf.Type.Kind() == reflect.Pointer && isScalar(sf.Type.Elem()):
			f.kind = kindPtrScalar
		}
		out = append(out, f)
	}
	if out == nil {
		out = []diffField{}
	}
	return out
}

func isScalar(t reflect.Type) bool {
	if t.Implements(marshalerT) || reflect.PointerTo(t).Implements(marshalerT) {
		return false
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// equal reports whether b and a encode to JSON that decodes to equal values.
func (f *diffField) equal(b, a reflect.Value) bool {
	switch f.kind {
	case kindScalar:
		if scalarEqual(b, a) {
			return true
		}
		if exactJSON(b) && exactJSON(a) {
			return false
		}
	case kindPtrScalar:
		if b.IsNil() || a.IsNil() {
			return b.IsNil() && a.IsNil()
		}
		if scalarEqual(b.Elem(), a.Elem()) {
			return true
		}
		if exactJSON(b.Elem()) && exactJSON(a.Elem()) {
			return false
		}
	case kindTime:
		bt, at := b.Interface().(domain.Time), a.Interface().(domain.Time)
		if bt.IsZero() || at.IsZero() {
			return bt.IsZero() && at.IsZero()
		}
		if bt.Unix() == at.Unix() {
			return true
		}
	default:
		if reflect.DeepEqual(b.Interface(), a.Interface()) {
			return true
		}
	}
	// Different Go values can still have equal JSON (invalid UTF-8 replaced, a marshaler that
	// normalizes): compare what a client would see.
	return reflect.DeepEqual(decodeAny(b), decodeAny(a))
}

func scalarEqual(b, a reflect.Value) bool {
	switch b.Kind() {
	case reflect.String:
		return b.String() == a.String()
	case reflect.Bool:
		return b.Bool() == a.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return b.Int() == a.Int()
	case reflect.Float32, reflect.Float64:
		return b.Float() == a.Float()
	default:
		return b.Uint() == a.Uint()
	}
}

// exactJSON reports whether a client decodes the scalar v's JSON back to a value equal only to
// v's: not so for invalid UTF-8 (replaced by U+FFFD) or integers beyond 2^53 (float64).
func exactJSON(v reflect.Value) bool {
	const exact = 1 << 53
	switch v.Kind() {
	case reflect.String:
		return utf8.ValidString(v.String())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() <= exact && v.Int() >= -exact
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() <= exact
	case reflect.Float32:
		return false // printed with float32 precision
	}
	return true
}

// isEmpty is encoding/json's omitempty test.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// decode is decodeAny(v) for a value of f, without the JSON round trip for scalars (a status, an
// amount, a nullable id): what encoding/json would decode from their JSON, built directly.
func (f *diffField) decode(v reflect.Value) any {
	switch f.kind {
	case kindPtrScalar:
		if v.IsNil() {
			return nil
		}
		if x, ok := scalarAny(v.Elem()); ok {
			return x
		}
	case kindScalar:
		if x, ok := scalarAny(v); ok {
			return x
		}
	}
	return decodeAny(v)
}

// scalarAny is the any encoding/json decodes from the JSON of v, a scalar without a marshaler
// (string, bool, integer), when that is exactly v: a valid UTF-8 string, a bool, an integer
// within ±2^53 as a float64. Anything else (floats, invalid UTF-8, huge integers) is left to
// decodeAny.
func scalarAny(v reflect.Value) (any, bool) {
	const exact = 1 << 53
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); utf8.ValidString(s) {
			return s, true
		}
	case reflect.Bool:
		return v.Bool(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n := v.Int(); n <= exact && n >= -exact {
			return float64(n), true
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if n := v.Uint(); n <= exact {
			return float64(n), true
		}
	}
	return nil, false
}

// decodeAny is a field's value as a client decodes it: its JSON decoded into an any.
func decodeAny(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
	}
	x := v.Interface()
	if v.CanAddr() {
		x = v.Addr().Interface() // as encoding/json sees an addressable field: pointer-receiver marshalers apply
	}
	raw, err := json.Marshal(x)
	if err != nil {
		return nil
	}
	var out any
	_ = json.Unmarshal(raw, &out)
	return out
}
