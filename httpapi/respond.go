package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"github.com/cargostream/cargostream/domain"
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// mediaType is the request's content type without parameters.
func mediaType(r *http.Request) string {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}

func isJSON(mt string) bool { return mt == "application/json" || strings.HasSuffix(mt, "+json") }

// decodeJSON reads a JSON request body into dst, turning every way a body
// can be wrong into an error the client can act on.
func decodeJSON(r *http.Request, dst any) error {
	if !isJSON(mediaType(r)) {
		return errorf(codeUnsupportedMedia, "the body must be application/json")
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return readError(err)
	}
	return unmarshal(body, dst)
}

func readError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return errorf(codePayloadTooLarge, fmt.Sprintf("the body is larger than %d bytes", tooBig.Limit))
	}
	return &httpError{code: string(domain.InvalidRequest), msg: "the body could not be read", err: err}
}

func unmarshal(body []byte, dst any) error {
	if len(strings.TrimSpace(string(body))) == 0 {
		return domain.Errorf(domain.InvalidRequest, "the body is empty; a JSON object is expected")
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	err := dec.Decode(dst)
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntaxErr):
		return domain.Errorf(domain.InvalidRequest, "the body is not valid JSON: %v (at byte %d)", syntaxErr, syntaxErr.Offset)
	case errors.As(err, &typeErr) && typeErr.Field != "":
		var p domain.Problems
		p.Add(typeErr.Field, "INVALID_TYPE", "must be %s, not %s", jsonKind(typeErr.Type.Kind().String()), typeErr.Value)
		return p.Err()
	case errors.As(err, &typeErr):
		return domain.Errorf(domain.InvalidRequest, "the body must be a JSON object, not %s", typeErr.Value)
	case err != nil:
		return domain.Errorf(domain.InvalidRequest, "the body is not valid JSON: %v", err)
	}
	if dec.More() {
		return domain.Errorf(domain.InvalidRequest, "the body has data after the JSON object")
	}
	return exactKeys(body, dst)
}

// exactKeys refuses top-level keys that name a field in another case
// ("AWBNUMBER") and keys given twice: encoding/json takes either for the
// field, and the last one wins without a word.
func exactKeys(body []byte, dst any) error {
	t := reflect.TypeOf(dst)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	fields := map[string]string{} // lower case → as named
	for f := range t.Elem().Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			fields[strings.ToLower(name)] = name
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil { // the opening brace, checked by Decode
		return nil
	}
	var p domain.Problems
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		key, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil
		}
		switch name, known := fields[strings.ToLower(key)]; {
		case known && name != key:
			p.Add(key, domain.CodeInvalidFormat, "field names are case-sensitive: this is %q", name)
		case known && seen[key]:
			p.Add(key, domain.CodeDuplicate, "is given twice")
		}
		seen[key] = true
	}
	return p.Err()
}

// jsonKind names a Go kind the way a JSON client thinks of it.
func jsonKind(kind string) string {
	switch {
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"):
		return "a whole number"
	case strings.HasPrefix(kind, "float"):
		return "a number"
	case kind == "string":
		return "a string"
	case kind == "bool":
		return "true or false"
	case kind == "slice", kind == "array":
		return "an array"
	default:
		return "an object"
	}
}

// pageParams reads page and limit: default 20, at most 100.
func pageParams(q url.Values, p *domain.Problems) (page, limit int) {
	page = intParam(q, "page", 1, 1, 1<<30, p)
	limit = intParam(q, "limit", 20, 1, 100, p)
	return page, limit
}

func intParam(q url.Values, name string, def, min, max int, p *domain.Problems) int {
	s := q.Get(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < min || n > max {
		p.Add(name, domain.CodeInvalidRange, "must be a whole number from %d to %d", min, max)
		return def
	}
	return n
}

// pagination is the spec's pagination object.
type pagination struct {
	Page       int `json:"page"`
	Limit      int `json:"limit"`
	Total      int `json:"total"`
	TotalPages int `json:"totalPages"`
}

func newPagination(page, limit, total int) pagination {
	return pagination{Page: page, Limit: limit, Total: total, TotalPages: (total + limit - 1) / limit}
}

// writeList answers a list as {<key>: [...]}, each item as toJSON makes
// it (an empty list is [], never null).
func writeList[T, J any](w http.ResponseWriter, key string, items []T, toJSON func(T) J) {
	writeJSON(w, http.StatusOK, map[string]any{key: mapItems(items, toJSON)})
}

// writePage answers a page of a list as {<key>: [...], pagination}.
func writePage[T, J any](w http.ResponseWriter, key string, items []T, toJSON func(T) J, page, limit, total int) {
	writeJSON(w, http.StatusOK, map[string]any{key: mapItems(items, toJSON), "pagination": newPagination(page, limit, total)})
}

func mapItems[T, J any](items []T, toJSON func(T) J) []J {
	out := make([]J, len(items))
	for i, it := range items {
		out[i] = toJSON(it)
	}
	return out
}
