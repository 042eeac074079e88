package httpapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/views"
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	writeEncoded(w, status, bytes.TrimSuffix(body.Bytes(), newline))
}

// writeEncoded answers with body, JSON encoded before, and a newline, as
// json.Encoder ends it. It says its length: net/http works it out for a
// body of up to 2 kB alone, and sends a longer one, such as a priced
// quote's, in chunks, and the answer to a HEAD of it without a length.
func writeEncoded(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)+len(newline)))
	w.WriteHeader(status)
	w.Write(body)
	w.Write(newline)
}

var newline = []byte("\n") // ends every JSON body, as json.Encoder does

// mediaType is the request's content type without parameters.
func mediaType(r *http.Request) string {
	mt, _ := mediaTypeParams(r)
	return mt
}

// mediaTypeParams is the request's content type and its parameters; ""
// for a header that does not parse, parameters included, and for one sent
// on two lines: of those the first was taken, so that a body a proxy in
// front had checked as the other type was read as the first.
func mediaTypeParams(r *http.Request) (string, map[string]string) {
	lines := r.Header.Values("Content-Type")
	if len(lines) != 1 {
		return "", nil
	}
	mt, params, err := mime.ParseMediaType(lines[0])
	if err != nil {
		return "", nil
	}
	return mt, params
}

// sentContentType says what Content-Type a request came with, for the
// message of a 415.
func sentContentType(r *http.Request) string {
	switch lines := r.Header.Values("Content-Type"); {
	case len(lines) > 1:
		return fmt.Sprintf("Content-Type sent %d times (send it once)", len(lines))
	case len(lines) == 0 || lines[0] == "":
		return "no Content-Type"
	default:
		return fmt.Sprintf("Content-Type %q", clip(lines[0], 100))
	}
}

func isJSON(mt string) bool { return mt == "application/json" || strings.HasSuffix(mt, "+json") }

// decodeJSON reads a JSON request body into dst, turning every way a body
// can be wrong into an error the client can act on.
func decodeJSON(r *http.Request, dst any) error {
	body, err := readJSONBody(r)
	if err != nil {
		return err
	}
	return unmarshal(body, dst)
}

// decodeOptionalJSON is decodeJSON for a body a request may leave out: an
// empty one, whether its length says 0 or it comes chunked, leaves dst as
// it is.
func decodeOptionalJSON(r *http.Request, dst any) error {
	body := bufio.NewReader(r.Body)
	if _, err := body.Peek(1); err == io.EOF {
		return nil
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{body, r.Body}
	return decodeJSON(r, dst)
}

// readJSONBody reads a body sent as JSON: uncompressed UTF-8, as RFC 8259
// has it. A body in another charset or encoding would otherwise be read
// as UTF-8 and stored garbled.
func readJSONBody(r *http.Request) ([]byte, error) {
	if !isJSON(mediaType(r)) {
		// Said with what came: curl -d sends a form's type unless told.
		return nil, errorf(codeUnsupportedMedia, "the body must be JSON, sent with Content-Type: application/json; this request has "+sentContentType(r))
	}
	if err := plainUTF8(r); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, readError(err)
	}
	return body, nil
}

// plainUTF8 refuses a text body declared in another charset than UTF-8,
// or compressed: it would be read as UTF-8 and stored garbled.
func plainUTF8(r *http.Request) error {
	_, params := mediaTypeParams(r)
	if cs := params["charset"]; cs != "" && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "utf8") {
		return errorf(codeUnsupportedMedia, fmt.Sprintf("the body must be UTF-8, not charset %.40q", cs))
	}
	return uncompressed(r)
}

// uncompressed refuses a compressed body: the service reads none
// compressed, and would read one as garbled text, or, on an upload, as a
// malformed multipart body.
func uncompressed(r *http.Request) error {
	if ce := r.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		return errorf(codeUnsupportedMedia, fmt.Sprintf("Content-Encoding %.40q is not accepted: send the body uncompressed", ce))
	}
	return nil
}

func readError(err error) error {
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return errorf(codePayloadTooLarge, fmt.Sprintf("the body is larger than %d bytes", tooBig.Limit))
	case errors.Is(err, io.ErrUnexpectedEOF):
		// The connection ended before the body its Content-Length, or its
		// chunks, announced.
		return clientGone(err)
	}
	return &httpError{code: string(domain.InvalidRequest), msg: "the body could not be read", err: err}
}

// clientGone is the error of a request whose client closed the connection
// before its body ended: a hang-up (499), as at any other moment, not a
// malformed request (400) of a client still there to read it. Which of
// the two it was had hung on whether the server noticed the closed
// connection before the read failed.
func clientGone(err error) error {
	return &httpError{code: codeClientClosedRequest, msg: "the client closed the connection before its body ended", err: err}
}

func unmarshal(body []byte, dst any) error {
	switch trimmed := bytes.TrimSpace(body); {
	case len(trimmed) == 0:
		return domain.Errorf(domain.InvalidRequest, "the body is empty; a JSON object is expected")
	case string(trimmed) == "null":
		return domain.Errorf(domain.InvalidRequest, "the body must be a JSON object, not null")
	case !utf8.Valid(body):
		return domain.Errorf(domain.InvalidRequest, "the body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	err := dec.Decode(dst)
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	// Many serialisers write a whole number as 1.0: where a whole number
	// is expected, it is taken for one, and the body decoded again.
	if errors.As(err, &typeErr) && isWholeKind(typeErr.Type.Kind()) && strings.HasPrefix(typeErr.Value, "number") {
		if fixed := walkBody(body, dst, false).withWholeNumbers(body); fixed != nil {
			reflect.ValueOf(dst).Elem().SetZero()
			body, dec = fixed, json.NewDecoder(bytes.NewReader(fixed))
			err = dec.Decode(dst)
		}
	}
	switch {
	case errors.As(err, &syntaxErr):
		return domain.Errorf(domain.InvalidRequest, "the body is not valid JSON: %v (at byte %d)", syntaxErr, syntaxErr.Offset)
	case errors.As(err, &typeErr) && typeErr.Field != "":
		var p domain.Problems
		field := clientPath(reflect.TypeOf(dst), typeErr.Field)
		// Decoding names the first value of a wrong type; the walk names
		// every one, and what it finds besides, so that a client mends
		// its body at one go. encoding/json names an array's element by
		// the array ("pieces" for pieces[1]): the walk's name of it, where
		// it has one, is the one given.
		// A number out of range the walk names too, by its place
		// (dimensionsCm[1].h), where decoding has only its field.
		walked := walkBody(body, dst, true).problems
		switch {
		case slices.ContainsFunc(walked, func(o domain.FieldError) bool { return isWithin(withoutPlaces(o.Field), field) }):
			// The walk names it, by its place: once is enough.
		case numberOutOfRange(typeErr):
			p.Add(field, domain.CodeInvalidRange, "%s is out of range", strings.TrimPrefix(typeErr.Value, "number "))
		default:
			p.Add(field, "INVALID_TYPE", "must be %s, not %s", jsonKind(typeErr.Type.Kind().String()), typeErr.Value)
		}
		return append(p, walked...).Err()
	case errors.As(err, &typeErr):
		return domain.Errorf(domain.InvalidRequest, "the body must be a JSON object, not %s", typeErr.Value)
	case err != nil:
		return domain.Errorf(domain.InvalidRequest, "the body is not valid JSON: %v", err)
	}
	// Decoder.More says no to a stray ] or } (it reads them as the end of
	// an array or object), so {…}] would pass for JSON: anything but
	// white space after the object is refused.
	if len(bytes.TrimLeft(body[dec.InputOffset():], " \t\r\n")) > 0 {
		return domain.Errorf(domain.InvalidRequest, "the body has data after the JSON object")
	}
	w := walkBody(body, dst, false)
	if err := w.problems.Err(); err != nil {
		return err
	}
	// A number sent as -0 where a number is expected is taken for 0:
	// decoded as sent, it would be stored, and written back, as -0.
	if fixed := w.withWholeNumbers(body); fixed != nil {
		reflect.ValueOf(dst).Elem().SetZero()
		return json.Unmarshal(fixed, dst)
	}
	return nil
}

// clientPath is the path encoding/json gives a field of a value of type
// t, as the client wrote it: encoding/json names a field promoted from an
// embedded struct with the struct's Go name before it
// (RateCardTermsJSON.weightBreaks), which no client wrote.
func clientPath(t reflect.Type, path string) string {
	var out []string
	for name := range strings.SplitSeq(path, ".") {
		for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) {
			t = t.Elem()
		}
		if t == nil || t.Kind() != reflect.Struct {
			out, t = append(out, name), nil
			continue
		}
		if f, ok := t.FieldByName(name); ok && f.Anonymous {
			if _, named := decodedFields(t).byName[name]; !named {
				continue // its fields are t's own, by decodedFields
			}
		}
		out = append(out, name)
		if f, ok := decodedFields(t).byName[name]; ok {
			t = f.Type
		} else {
			t = nil
		}
	}
	return strings.Join(out, ".")
}

// numberOutOfRange tells a number its field cannot hold (1e400, or 1e20
// pieces) from one of the wrong kind (1.5 pieces).
func numberOutOfRange(e *json.UnmarshalTypeError) bool {
	n, ok := strings.CutPrefix(e.Value, "number ")
	if !ok {
		return false
	}
	switch e.Type.Kind() {
	case reflect.Float32, reflect.Float64:
		return true // a number refused by a float field overflows it
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		f, err := strconv.ParseFloat(n, 64)
		if err != nil {
			return true
		}
		// A number below the least int64 reads as that least, -2^63,
		// when it is within float64's precision of it
		// (-9223372036854775809): an int64 field takes -2^63 itself, so
		// a number refused there is beyond it.
		return f == math.Trunc(f) && (f <= math.MinInt64 || f >= math.MaxInt64 || reflect.Zero(e.Type).OverflowInt(int64(f)))
	}
	return false
}

// isWholeKind tells the kinds that hold whole numbers.
func isWholeKind(k reflect.Kind) bool {
	return (k >= reflect.Int && k <= reflect.Int64) || (k >= reflect.Uint && k <= reflect.Uintptr)
}

// bodyWalk walks a decoded body once more, alongside the Go type it went
// into, for what decoding lets pass without a word: a key naming a field
// in another case ("AWBNUMBER") or given twice, at any depth (the last one
// wins), and text holding a character domain.Unprintable names (U+FFFD is
// what encoding/json makes of a lone surrogate), in any value, known
// fields or not. On the way it notes the whole numbers written as
// fractions (1.0, 1e2) where a whole number is expected, and the zeros
// written with a minus sign (-0, -0.0, -1e-400) where any number is.
//
// It reads the bytes itself rather than with json.Decoder.Token, which
// allocates for every token: with the walk a decode of the README's RFQ
// takes 11-13 us against encoding/json's 7-9 us alone in the same run
// (BenchmarkDecodeJSON). The body has been read as UTF-8 and as JSON before (unmarshal
// refuses one that is not), so the walk only finds where each value
// starts and ends, and decodes a string only when a check needs its
// text: a key to look up, a value that may hold an unprintable character.
type bodyWalk struct {
	body     []byte
	pos      int // the next byte to read
	problems domain.Problems
	whole    []wholeNumber
	// at is where the walk is: the keys and indexes down to the value
	// being read, joined into a field path only for a problem, which is
	// rare, rather than for every value.
	at []pathStep
	// kinds has the walk also name every value of a kind its field cannot
	// take: asked only of a body decoding refused for one, as a body
	// decoded has none.
	kinds bool
}

// pathStep is a member's key or an element's index. A key may be "".
type pathStep struct {
	key     []byte // as written between its quotes
	escaped bool   // key holds an escape, to be decoded for its text
	index   int
	element bool // index, not key
}

// name is the key's text.
func (s pathStep) name() string {
	if s.escaped {
		return string(unquoted(s.key))
	}
	return string(s.key)
}

// path is the field path of the value being read: "a.b[2].c".
func (w *bodyWalk) path() string {
	var b strings.Builder
	for _, s := range w.at {
		switch {
		case s.element:
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
		case b.Len() > 0:
			b.WriteString("." + s.name())
		default:
			b.WriteString(s.name())
		}
	}
	return b.String()
}

// wholeNumber is a whole number written otherwise, as a fraction or as
// -0: the bytes start:end of the body, and the number.
type wholeNumber struct {
	start, end int
	n          int64
}

// walkBody walks body, which decoded into dst, or with kinds, which
// decoding refused for a value of a wrong kind (see bodyWalk.kinds).
func walkBody(body []byte, dst any, kinds bool) *bodyWalk {
	// No request's fields lie deeper than eight steps: the path is not
	// grown step by step, as it would be from empty.
	w := &bodyWalk{body: body, at: make([]pathStep, 0, 8), kinds: kinds}
	w.walkValue(reflect.TypeOf(dst))
	return w
}

// withWholeNumbers is body with the whole numbers the walk found written
// otherwise (see wholeNumber) written as whole numbers, or nil when it
// found none.
func (w *bodyWalk) withWholeNumbers(body []byte) []byte {
	if len(w.whole) == 0 {
		return nil
	}
	var out []byte
	last := 0
	for _, n := range w.whole {
		out = append(append(out, body[last:n.start]...), strconv.FormatInt(n.n, 10)...)
		last = n.end
	}
	return append(out, body[last:]...)
}

// checkPrintable adds a problem with field if text holds a character
// domain.Unprintable names: it would garble what is made of the text, the
// audit log among them.
func checkPrintable(p *domain.Problems, field, text string) {
	if at, _ := domain.UnprintableAt(text); at != "" {
		p.Add(field, domain.CodeInvalidFormat, "must not contain %s", at)
	}
}

var (
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// walkValue reads one value; t is the type it decodes into, nil when
// unknown (a field the request does not have, a value decoded its own
// way), where only its text is checked.
func (w *bodyWalk) walkValue(t reflect.Type) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && (t == rawMessageType || reflect.PointerTo(t).Implements(unmarshalerType)) {
		t = nil
	}
	w.skipSpace()
	if w.pos == len(w.body) {
		return
	}
	if c := w.body[w.pos]; w.kinds && t != nil && !takes(t, c) {
		w.problems.Add(w.path(), "INVALID_TYPE", "must be %s, not %s", jsonKind(t.Kind().String()), valueKind(c))
		t = nil // what it holds is none of the field's
	}
	switch c := w.body[w.pos]; {
	case c == '{':
		w.pos++
		w.walkObject(t)
	case c == '[':
		w.pos++
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; w.more(']'); i++ {
			w.at = append(w.at, pathStep{index: i, element: true})
			// Decoding takes null for the zero value, which no element
			// of a list means ("" for a name): only a list of pointers
			// or of anything holds it.
			if w.skipSpace(); elem != nil && elem.Kind() != reflect.Pointer && elem.Kind() != reflect.Interface && bytes.HasPrefix(w.body[w.pos:], []byte("null")) {
				w.problems.Add(w.path(), "INVALID_TYPE", "must be %s, not null", jsonKind(elem.Kind().String()))
			}
			w.walkValue(elem)
			w.at = w.at[:len(w.at)-1]
		}
	case c == '"':
		if raw, escaped, plain := w.readString(); !plain {
			w.checkText(raw, escaped)
		}
	case c == '-' || '0' <= c && c <= '9':
		start := w.pos
		for w.pos < len(w.body) && strings.IndexByte("+-.0123456789Ee", w.body[w.pos]) >= 0 {
			w.pos++
		}
		switch {
		case t == nil:
		case isWholeKind(t.Kind()):
			w.noteWhole(start, t)
		case (t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64) && c == '-':
			w.noteNegativeZero(start, t.Bits())
		}
		if w.kinds && t != nil {
			w.noteOutOfRange(w.body[start:w.pos], t)
		}
	case c == 't' || c == 'f' || c == 'n': // true, false, null
		for w.pos < len(w.body) && 'a' <= w.body[w.pos] && w.body[w.pos] <= 'z' {
			w.pos++
		}
	default:
		w.pos = len(w.body) // not JSON, which decoding has refused already: the walk ends
	}
}

// takes tells whether a field of type t (no pointer) takes a JSON value
// that starts with the byte c, as encoding/json decodes it.
func takes(t reflect.Type, c byte) bool {
	switch k := t.Kind(); {
	case k == reflect.Interface || c == 'n': // null, or anything
		return true
	case c == '{':
		return k == reflect.Struct || k == reflect.Map
	case c == '[':
		return k == reflect.Slice || k == reflect.Array
	case c == '"':
		return k == reflect.String || k == reflect.Slice && t.Elem().Kind() == reflect.Uint8 // []byte from base64
	case c == 't' || c == 'f':
		return k == reflect.Bool
	default:
		return isWholeKind(k) || k == reflect.Float32 || k == reflect.Float64
	}
}

// valueKind names the kind of a JSON value that starts with the byte c,
// as encoding/json's errors do.
func valueKind(c byte) string {
	switch c {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	default:
		return "number"
	}
}

// withoutPlaces is a field's name without the places of list elements
// in it (routing.to for routing[1].to), as encoding/json names it.
func withoutPlaces(field string) string {
	return listPlace.ReplaceAllString(field, "")
}

var listPlace = regexp.MustCompile(`\[[0-9]+\]`)

// isWithin tells whether field is name or lies inside it (name[2],
// name.a).
func isWithin(field, name string) bool {
	rest, ok := strings.CutPrefix(field, name)
	return ok && (rest == "" || rest[0] == '[' || rest[0] == '.')
}

// noteWhole notes the number the body holds from start to w.pos, for a
// field of type t, if it is a whole number written as a fraction that t
// holds.
func (w *bodyWalk) noteWhole(start int, t reflect.Type) {
	text := w.body[start:w.pos]
	if bytes.IndexAny(text, ".eE") < 0 {
		return // written as a whole number: decoding judges it
	}
	// Whole as written (wholeText) is whole as parsed: every float64 past
	// 2^53 is whole, and below it a whole number is exact.
	f, err := strconv.ParseFloat(string(text), 64)
	if w.kinds && err == nil && !wholeText(string(text)) && math.Abs(f) < 1<<53 {
		w.problems.Add(w.path(), "INVALID_TYPE", "must be %s, not number %s", jsonKind(t.Kind().String()), text)
	}
	if err != nil || !wholeText(string(text)) || math.Abs(f) >= 1<<53 {
		return
	}
	n := int64(f)
	if t.Kind() >= reflect.Uint && (n < 0 || reflect.Zero(t).OverflowUint(uint64(n))) ||
		t.Kind() <= reflect.Int64 && reflect.Zero(t).OverflowInt(n) {
		return // decoding refuses it as out of range
	}
	w.whole = append(w.whole, wholeNumber{start: start, end: w.pos, n: n})
}

// noteNegativeZero notes the number the body holds from start to w.pos,
// for a float field of bits bits, if it is 0 written with a minus sign,
// or a negative number too small for the field, which reads as -0
// (-1e-400): JSON writes -0 back as -0, below nothing where a field takes
// 0 and more.
func (w *bodyWalk) noteNegativeZero(start, bits int) {
	if f, err := strconv.ParseFloat(string(w.body[start:w.pos]), bits); err == nil && f == 0 {
		w.whole = append(w.whole, wholeNumber{start: start, end: w.pos})
	}
}

// noteOutOfRange names text, a number for a field of type t, if the
// field cannot hold it, as decoding refuses it (1e400, 1e20 pieces), but
// by its place: decoding names it by its field alone (dimensionsCm.h),
// which does not say which of the list's elements holds it.
func (w *bodyWalk) noteOutOfRange(text []byte, t reflect.Type) {
	switch k := t.Kind(); {
	case k == reflect.Float32 || k == reflect.Float64:
		if _, err := strconv.ParseFloat(string(text), t.Bits()); err == nil {
			return
		}
	case !numberOutOfRange(&json.UnmarshalTypeError{Value: "number " + string(text), Type: t}):
		return
	}
	w.problems.Add(w.path(), domain.CodeInvalidRange, "%s is out of range", text)
}

// wholeText reports whether a JSON number, as written, is whole: no digit
// but 0 after the decimal point once the exponent has moved it. Its
// float64 cannot tell: 1.9999999999999999 and 1e-400 parse to 2 and 0.
func wholeText(text string) bool {
	mantissa, exponent, found := strings.Cut(strings.ToLower(strings.TrimPrefix(text, "-")), "e")
	whole, fraction, _ := strings.Cut(mantissa, ".")
	digits := whole + fraction
	if strings.Trim(digits, "0") == "" {
		return true // 0, whatever its exponent
	}
	shift := 0
	if found {
		var err error
		// Beyond an int, the exponent makes the number infinite, which
		// parsing refuses, or a fraction.
		if shift, err = strconv.Atoi(exponent); err != nil {
			return false
		}
	}
	// The digits from len(whole)+shift on are after the point.
	switch {
	case shift >= len(fraction):
		return true
	case shift <= -len(whole):
		return false
	}
	return strings.Trim(digits[len(whole)+shift:], "0") == ""
}

// walkObject reads the members of an object whose { has been read.
func (w *bodyWalk) walkObject(t reflect.Type) {
	var fields *structFields
	// Only a field given by its own name can be given twice: a key in
	// another case is refused as it stands. The fields so given are few
	// and listed on the stack; the keys of a map are any number, and are
	// kept in a map, made for a map only.
	var given [16]string
	named := given[:0]
	var keys map[string]bool
	isMap := t != nil && t.Kind() == reflect.Map
	if t != nil && t.Kind() == reflect.Struct {
		fields = decodedFields(t)
	}
	for w.more('}') {
		if w.body[w.pos] != '"' {
			w.pos = len(w.body) // not JSON: the walk ends
			return
		}
		raw, escaped, _ := w.readString()
		w.skipSpace()
		if w.pos < len(w.body) && w.body[w.pos] == ':' {
			w.pos++
		}
		key := raw
		if escaped && (fields != nil || isMap) { // only a lookup needs the key's text
			key = unquoted(raw)
		}
		w.at = append(w.at, pathStep{key: raw, escaped: escaped})
		var next reflect.Type
		switch {
		case fields != nil:
			f, known := fields.byName[string(key)]
			if !known {
				f, known = fields.byFoldedName[foldKey(string(key))]
			}
			switch {
			case known && f.Name != string(key):
				w.problems.Add(w.path(), domain.CodeInvalidFormat, "field names are case-sensitive: this is %q", f.Name)
			case known && slices.Contains(named, f.Name):
				w.problems.Add(w.path(), domain.CodeDuplicate, "is given twice")
			case known:
				named = append(named, f.Name)
				next = f.Type
			}
		case isMap:
			if keys[string(key)] {
				w.problems.Add(w.path(), domain.CodeDuplicate, "is given twice")
			} else {
				if keys == nil {
					keys = map[string]bool{}
				}
				keys[string(key)] = true
			}
			next = t.Elem()
		}
		w.walkValue(next)
		w.at = w.at[:len(w.at)-1]
	}
}

// more reads up to the next member or element of the object or array
// being read, past the comma before it, and tells whether there is one:
// at close, which it reads, there is none.
func (w *bodyWalk) more(close byte) bool {
	w.skipSpace()
	if w.pos < len(w.body) && w.body[w.pos] == ',' {
		w.pos++
		w.skipSpace()
	}
	if w.pos == len(w.body) {
		return false
	}
	if w.body[w.pos] == close {
		w.pos++
		return false
	}
	return true
}

// skipSpace reads past the whitespace JSON allows between tokens.
func (w *bodyWalk) skipSpace() {
	for w.pos < len(w.body) {
		switch w.body[w.pos] {
		case ' ', '\t', '\n', '\r':
			w.pos++
		default:
			return
		}
	}
}

// readString reads the string whose opening quote is at w.pos, and
// returns what stands between its quotes. escaped tells that it holds an
// escape, so that its text differs from raw; plain that it holds only
// printable ASCII and no escape, so no character domain.Unprintable
// names.
func (w *bodyWalk) readString() (raw []byte, escaped, plain bool) {
	start := w.pos + 1
	plain = true
	for i := start; i < len(w.body); i++ {
		switch c := w.body[i]; {
		case c == '"':
			w.pos = i + 1
			return w.body[start:i], escaped, plain
		case c == '\\':
			escaped, plain = true, false
			i++ // the character escaped is no closing quote, nor are the hex digits of a \u after it
		case c == 0x7f || c >= utf8.RuneSelf: // DEL, or a byte of a character beyond ASCII
			plain = false
		}
	}
	w.pos = len(w.body) // not JSON: the walk ends
	return w.body[start:], escaped, plain
}

// checkText adds a problem if the text of the string raw, as readString
// returned it, holds a character domain.Unprintable names.
func (w *bodyWalk) checkText(raw []byte, escaped bool) {
	text := raw
	if escaped {
		text = unquoted(raw)
	}
	if bytes.IndexFunc(text, domain.Unprintable) >= 0 {
		checkPrintable(&w.problems, w.path(), string(text))
	}
}

// unquoted is the text of a string written as raw between its quotes,
// decoded by encoding/json, as the body was (a lone surrogate is U+FFFD).
// Only strings holding an escape come here, which are rare.
func unquoted(raw []byte) []byte {
	var text string
	if json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &text) != nil {
		return raw // not JSON, which decoding has refused already
	}
	return []byte(text)
}

// structFields are the fields encoding/json fills in a struct, each named
// as the JSON names it: by that name, and by its folded form, under
// which encoding/json also matches a key.
type structFields struct {
	byName       map[string]reflect.StructField
	byFoldedName map[string]reflect.StructField
}

// fieldsOfType holds the structFields of each request type walked so far:
// a type's fields never change, and every request would otherwise list
// them again.
var fieldsOfType sync.Map // reflect.Type → *structFields

// decodedFields are the fields encoding/json fills in a struct: those of
// an embedded struct without a JSON name are promoted, and yield to the
// struct's own.
func decodedFields(t reflect.Type) *structFields {
	if f, ok := fieldsOfType.Load(t); ok {
		return f.(*structFields)
	}
	folded := map[string]reflect.StructField{}
	var add func(t reflect.Type, promoted bool)
	add = func(t reflect.Type, promoted bool) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			name, _, _ := strings.Cut(tag, ",")
			switch {
			case f.Anonymous && name == "" && tag != "-" && f.Type.Kind() == reflect.Struct:
				add(f.Type, true)
			case !f.IsExported() || name == "-":
			default:
				if name == "" {
					name = f.Name
				}
				if _, shadowed := folded[foldKey(name)]; !promoted || !shadowed {
					f.Name = name
					folded[foldKey(name)] = f
				}
			}
		}
	}
	add(t, false)
	fields := &structFields{byName: map[string]reflect.StructField{}, byFoldedName: folded}
	for _, f := range folded {
		fields.byName[f.Name] = f
	}
	f, _ := fieldsOfType.LoadOrStore(t, fields)
	return f.(*structFields)
}

// foldKey folds a key the way encoding/json matches keys to fields: "ſ"
// (long s) is an S to it, the Kelvin sign a K.
func foldKey(key string) string { return strings.ToLower(strings.ToUpper(key)) }

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

// maxQueryValue bounds every query parameter: the longest text a filter
// compares is a name of 200 characters; codes, ids and dates are shorter.
const maxQueryValue = 200

// repeatedParams are the query parameters that may be given more than
// once: the sets of ids (see idsParam).
var repeatedParams = map[string]bool{"eventId": true}

// checkQuery refuses a query parameter given more than once, but a set of
// ids: every other is read once, and the first would win silently
// (page=2&page=5, or status=priced&status=rejected, whose second is never
// checked). It refuses one whose name or value is not UTF-8 once its
// escapes are decoded (userId=%FF), which no filter matches: the answer
// would be empty, as if nothing were there. With lengths, it refuses one
// longer than maxQueryValue too.
func checkQuery(q url.Values, lengths bool) error {
	var p domain.Problems
	for _, name := range slices.Sorted(maps.Keys(q)) {
		switch {
		case !utf8.ValidString(name):
			p.Add(strings.ToValidUTF8(name, "\uFFFD"), domain.CodeInvalidFormat, "is a parameter name that is not UTF-8 text once its %%-escapes are decoded")
		case slices.ContainsFunc(q[name], func(v string) bool { return !utf8.ValidString(v) }):
			p.Add(name, domain.CodeInvalidFormat, "must be UTF-8 text once its %%-escapes are decoded")
		default:
			// As in a body: a filter with a NUL or a direction override
			// matched nothing, an empty 200 a client took for none.
			for _, v := range q[name] {
				checkPrintable(&p, name, v)
			}
		}
		if n := len(q[name]); n > 1 && !repeatedParams[name] {
			p.Add(name, domain.CodeDuplicate, "is given %d times: give it once", n)
		}
		if lengths && slices.ContainsFunc(q[name], func(v string) bool { return utf8.RuneCountInString(v) > maxQueryValue }) {
			p.Add(name, domain.CodeTooLong, "must be at most %d characters", maxQueryValue)
		}
	}
	return p.Err()
}

// codeParam reads a filter that is a code, trimmed and in upper case as
// the service keeps codes. A value of another shape could match nothing:
// it is refused, as the same code in a body is.
func codeParam(q url.Values, p *domain.Problems, name string, valid func(string) bool, shape string) string {
	v := strings.ToUpper(strings.TrimSpace(q.Get(name)))
	if v != "" && !valid(v) {
		p.Add(name, domain.CodeInvalidFormat, "must be %s", shape)
	}
	return v
}

// idParam reads a filter that is an id: one that cannot be an id is
// refused.
func idParam(q url.Values, p *domain.Problems, name string) string {
	v := q.Get(name)
	if v != "" && !domain.ValidIdentifier(v) {
		p.Add(name, domain.CodeInvalidFormat, "must be an id: 1 to 64 letters, digits, '-' or '_'")
	}
	return v
}

// flightIDParam reads the flightId filter as a body's flightId is read
// (domain.CanonicalFlightID: trimmed, LH 0084 is LH84), then refuses
// what no flight's id can be (a flight number and a date), which matched
// nothing: an empty list a client took for no bookings.
func flightIDParam(q url.Values, p *domain.Problems) string {
	id := domain.CanonicalFlightID(q.Get("flightId"))
	if id != "" && !domain.ValidFlightID(id) {
		p.Add("flightId", domain.CodeInvalidFormat, "must be a flight id, such as LH8400-2026-11-26")
	}
	return id
}

// idsParam reads a filter that is a set of ids, the parameter repeated:
// at most maxIDs of them, each one that can be an id.
func idsParam(q url.Values, p *domain.Problems, name string, maxIDs int) []string {
	ids := q[name]
	if len(ids) > maxIDs {
		p.Add(name, domain.CodeTooMany, "at most %d ids, the parameter repeated; got %d", maxIDs, len(ids))
		return nil
	}
	for _, id := range ids {
		if !domain.ValidIdentifier(id) {
			p.Add(name, domain.CodeInvalidFormat, "must be ids: each 1 to 64 letters, digits, '-' or '_'")
			return nil
		}
	}
	return ids
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

// writeList answers a list as {<key>: [...]}, each item as toJSON makes
// it (an empty list is [], never null).
func writeList[T, J any](w http.ResponseWriter, key string, items []T, toJSON func(T) J) {
	writeJSON(w, http.StatusOK, map[string]any{key: mapItems(items, toJSON)})
}

// writePage answers a page of a list as {<key>: [...], pagination}.
func writePage[T, J any](w http.ResponseWriter, key string, items []T, toJSON func(T) J, page, limit, total int) {
	writeJSON(w, http.StatusOK, map[string]any{key: mapItems(items, toJSON), "pagination": views.ToPaginationJSON(page, limit, total)})
}

func mapItems[T, J any](items []T, toJSON func(T) J) []J {
	out := make([]J, len(items))
	for i, it := range items {
		out[i] = toJSON(it)
	}
	return out
}
