package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
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
