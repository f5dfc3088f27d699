package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"reflect"
	"sort"
	"strings"

	"troco/server/domain"
)

// readBody returns the request body, bounded by MaxBodyBytes.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
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
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		if strings.HasPrefix(err.Error(), "json: unknown field ") {
			if path := unknownFieldPath(body, reflect.TypeOf(dst)); path != "" {
				return domain.Invalid(path, "Received unknown parameter: %s.", path)
			}
		}
		return decodeError(err)
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

// unknownFieldPath finds the first key of body that dst's type does not accept and names it in
// the API's parameter notation (recurring[foo], line_items[0][bar]); encoding/json reports only
// the bare key.
func unknownFieldPath(body []byte, t reflect.Type) string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	p, _ := findUnknown(v, t, "")
	return p
}

func findUnknown(v any, t reflect.Type, prefix string) (string, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct && strings.HasPrefix(t.Name(), "Opt[") {
		if f, ok := t.FieldByName("V"); ok {
			return findUnknown(v, f.Type, prefix)
		}
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		fields := jsonFields(t)
		if len(fields) == 0 {
			return "", false // a leaf with its own decoding (timestamps, dates)
		}
		for _, k := range sortedKeys(m) {
			ft, ok := fields[k]
			if !ok {
				for name, typ := range fields {
					if strings.EqualFold(name, k) {
						ft, ok = typ, true
						break
					}
				}
			}
			if !ok {
				return joinParam(prefix, k), true
			}
			if p, found := findUnknown(m[k], ft, joinParam(prefix, k)); found {
				return p, true
			}
		}
	case reflect.Slice, reflect.Array:
		arr, _ := v.([]any)
		for i, el := range arr {
			if p, found := findUnknown(el, t.Elem(), prefix+"["+itoa(int64(i))+"]"); found {
				return p, true
			}
		}
	case reflect.Map:
		m, _ := v.(map[string]any)
		for _, k := range sortedKeys(m) {
			if p, found := findUnknown(m[k], t.Elem(), joinParam(prefix, k)); found {
				return p, true
			}
		}
	}
	return "", false
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

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func joinParam(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "[" + k + "]"
}
