package domain

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

var specialHandlingCodePattern = regexp.MustCompile(`^[A-Z]{3}$`)

// Unprintable tells the characters text may not hold: controls other
// than tab and line breaks, bidirectional embeddings, overrides and
// isolates, and U+FFFD (what a decoder makes of bytes that are not text).
// Text with them garbles the waybills and messages made from it, or hides
// what it says.
func Unprintable(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case unicode.IsControl(r), r == utf8.RuneError:
		return true
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// rowText checks a text field of a reference data row: at most max
// characters, all printable; required ones not blank.
func rowText(bad *[]string, field, s string, max int, required bool) {
	tooLong := utf8.RuneCountInString(s) > max
	switch {
	case required && (tooLong || strings.TrimSpace(s) == ""):
		*bad = append(*bad, fmt.Sprintf("%s must be 1 to %d characters", field, max))
	case tooLong:
		*bad = append(*bad, fmt.Sprintf("%s must be at most %d characters", field, max))
	default:
		at, r := UnprintableAt(s)
		if r == utf8.RuneError {
			at += ", which stands for bytes that are not UTF-8: save the file as UTF-8"
		}
		if at != "" {
			*bad = append(*bad, field+" holds "+at)
		}
	}
}

// UnprintableAt names the first character of text that Unprintable
// tells, and where it is ("the character U+202E (at character 4)"), and
// returns it; "" and 0 when there is none.
func UnprintableAt(text string) (string, rune) {
	i := strings.IndexFunc(text, Unprintable)
	if i < 0 {
		return "", 0
	}
	r, _ := utf8.DecodeRuneInString(text[i:])
	return fmt.Sprintf("the character %U (at character %d)", r, utf8.RuneCountInString(text[:i])+1), r
}

func checkLength(p *Problems, field, s string, max int) {
	if utf8.RuneCountInString(s) > max {
		p.Add(field, CodeTooLong, "must be at most %d characters", max)
	}
}

func checkAirport(p *Problems, field, code string) {
	switch {
	case code == "":
		p.Add(field, CodeRequired, "is required")
	case !airportCodePattern.MatchString(code):
		p.Add(field, CodeInvalidFormat, "must be a three-letter IATA airport code")
	}
}

// checkRoute checks the two ends of a route, their fields named with
// prefix: airport codes, known ones when reference data is loaded, not the
// same. It returns the airports the reference data knows.
func checkRoute(p *Problems, ref Lookup, prefix, origin, destination string) (from, to Airport) {
	checkAirport(p, prefix+"origin", origin)
	checkAirport(p, prefix+"destination", destination)
	from = checkKnownAirport(p, ref, prefix+"origin", origin)
	to = checkKnownAirport(p, ref, prefix+"destination", destination)
	if airportCodePattern.MatchString(origin) && origin == destination {
		p.Add(prefix+"destination", CodeInvalidValue, "must differ from the origin")
	}
	return from, to
}

// upperList checks a short list of codes, returning them in upper case
// without repeats.
func upperList(p *Problems, field string, in []string, pattern *regexp.Regexp, msg string) []string {
	if len(in) > maxListItems {
		p.Add(field, CodeTooMany, "must have at most %d items", maxListItems)
		return nil
	}
	var out []string
	for i, s := range in {
		s = strings.ToUpper(strings.TrimSpace(s))
		switch {
		case !pattern.MatchString(s):
			p.Add(field+"["+strconv.Itoa(i)+"]", CodeInvalidFormat, "%s", msg)
		case !slices.Contains(out, s):
			out = append(out, s)
		}
	}
	return out
}

// countOf is a count of things as a message says it: "1 piece", "2
// pieces", for the noun "piece".
func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
