package projections

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"unicode/utf8"
)

// jsonMember is one member of a JSON object, its name and its value's
// JSON both slices of the object's bytes.
type jsonMember struct {
	name, value []byte
	plain       bool // a string without escapes: its text is between the quotes
	// leftOut: not in the event, which states it (domain.Restater): its
	// value is the empty text.
	leftOut bool
}

// jsonMembers appends the members of the JSON object data to out, in
// their order, without decoding their values: the audit log compares
// every field of every event, and the decoder would copy each into a map
// first. Names are taken as written (those of events have no escapes).
// Data that is not a JSON object yields what could be read of it, never a
// panic.
func jsonMembers(data []byte, out []jsonMember) []jsonMember {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return out
	}
	i = skipSpace(data, i+1)
	for i < len(data) && data[i] == '"' {
		end, _ := jsonValueEnd(data, i)
		if end < 0 {
			return out
		}
		name := data[i+1 : end-1]
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return out
		}
		i = skipSpace(data, i+1)
		end, escaped := jsonValueEnd(data, i)
		if end <= i {
			return out
		}
		value := data[i:end]
		plain := value[0] == '"' && !escaped && utf8.Valid(value)
		out = append(out, jsonMember{name: name, value: value, plain: plain})
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ',' {
			return out
		}
		i = skipSpace(data, i+1)
	}
	return out
}

// jsonValueEnd returns where the JSON value at data[i] ends, -1 if it
// does not, and whether a string in it has escapes.
func jsonValueEnd(data []byte, i int) (int, bool) {
	depth, escaped := 0, false
	for j := i; j < len(data); j++ {
		c := data[j]
		switch {
		case c == '"':
			end, esc := stringEnd(data, j)
			if end < 0 {
				return -1, escaped
			}
			j, escaped = end, escaped || esc
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth--; depth < 0 {
				return j, escaped // a number or literal, closed by its object
			}
		case depth == 0 && (c == ',' || isSpace(c)):
			return j, escaped // the end of a number or literal
		}
		if depth == 0 && (c == '"' || c == '}' || c == ']') {
			return j + 1, escaped
		}
	}
	if depth == 0 {
		return len(data), escaped
	}
	return -1, escaped
}

// stringEnd returns the index of the quote that ends the JSON string
// opened at data[i], -1 if none does, and whether the string has escapes.
// It looks for quotes, not at every byte: strings are most of an event.
func stringEnd(data []byte, i int) (int, bool) {
	escaped := false
	for j := i + 1; ; {
		k := bytes.IndexByte(data[j:], '"')
		if k < 0 {
			return -1, escaped
		}
		end := j + k
		if bytes.IndexByte(data[j:end], '\\') < 0 {
			return end, escaped
		}
		escaped = true
		// The quote ends the string unless an odd number of
		// backslashes escapes it.
		n := 0
		for n < end-i-1 && data[end-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return end, escaped
		}
		j = end + 1
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// str is the value as a string: a string's text, "" for null; false for
// anything else.
func (m jsonMember) str() (string, bool) {
	switch {
	case m.plain:
		return string(m.value[1 : len(m.value)-1]), true
	case string(m.value) == "null":
		return "", true
	case m.value[0] != '"':
		return "", false // a number, object, array, true or false
	}
	var s string
	err := json.Unmarshal(m.value, &s) // a string with escapes
	return s, err == nil
}

// text is the value as the audit log shows it: a string's text, "" for
// null, or else the JSON as written.
func (m jsonMember) text() string {
	if s, ok := m.str(); ok {
		return s
	}
	return string(m.value)
}

// digest is the first 128 bits of the SHA-256 of the value's text (see
// text), without copying a string without escapes or anything but a
// string: the audit log keeps it, not the text, to tell whether a field
// changed. No one can find two texts with one digest, so no change can be
// made to look like none, as with a faster hash of 64 bits (a collision
// of FNV-1a can be computed; of any 64 bits, found in 2^32 tries).
func (m jsonMember) digest() textDigest {
	switch {
	case m.plain:
		return digestOf(m.value[1 : len(m.value)-1])
	case m.value[0] != '"' && string(m.value) != "null":
		return digestOf(m.value) // its text is its JSON
	}
	return digestOf([]byte(m.text()))
}

// textDigest is what digest returns.
type textDigest [16]byte

func digestOf(b []byte) textDigest {
	sum := sha256.Sum256(b)
	return textDigest(sum[:16])
}
