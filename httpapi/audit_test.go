package httpapi

import (
	"net/url"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
)

// A bound of a list (from, to) is a date-time as the OpenAPI document's
// pattern has it, to the nanosecond, or a date: a finer fraction, which
// time.Parse would take, is refused like any other malformed bound.
func TestATimeBoundIsADateTimeToTheNanosecondOrADate(t *testing.T) {
	for _, tt := range []struct {
		name, value string
		refused     bool
	}{
		{"a date", "2026-11-25", false},
		{"a date-time", "2026-11-25T14:30:00Z", false},
		{"a date-time to the nanosecond", "2026-11-25T14:30:00.123456789-05:00", false},
		{"a date-time finer than a nanosecond", "2026-11-25T14:30:00.1234567890Z", true},
		{"a fraction after a comma", "2026-11-25T14:30:00,5Z", true},
		{"no date at all", "yesterday", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var p domain.Problems
			from, _ := timeWindow(url.Values{"from": {tt.value}}, &p)
			if refused := len(p) > 0; refused != tt.refused || (!refused && from.IsZero()) {
				t.Errorf("from=%s: %v, read as %v; want refused: %v", tt.value, p, from, tt.refused)
			}
			if tt.refused && (len(p) != 1 || p[0].Field != "from" || p[0].Code != domain.CodeInvalidDate) {
				t.Errorf("from=%s: %v, want one INVALID_DATE on from", tt.value, p)
			}
		})
	}
}

// A date as to takes that day in: from=D&to=D is the day D, as the usage
// figures and cargoctl read a day; a date-time as to is its instant.
func TestADateAsToTakesThatDayIn(t *testing.T) {
	for _, tt := range []struct{ from, to, wantFrom, wantTo string }{
		{"2026-06-21", "2026-06-21", "2026-06-21T00:00:00Z", "2026-06-22T00:00:00Z"},
		{"2026-06-21T10:00:00Z", "2026-06-21T12:00:00Z", "2026-06-21T10:00:00Z", "2026-06-21T12:00:00Z"},
		{"", "2026-12-31", "0001-01-01T00:00:00Z", "2027-01-01T00:00:00Z"},
		{"2026-06-21T12:00:00Z", "2026-06-21", "2026-06-21T12:00:00Z", "2026-06-22T00:00:00Z"},
		{"2026-06-21T23:59:59.999999999Z", "2026-06-21", "2026-06-21T23:59:59Z", "2026-06-22T00:00:00Z"},
	} {
		var p domain.Problems
		from, to := timeWindow(url.Values{"from": {tt.from}, "to": {tt.to}}, &p)
		if len(p) > 0 || from.Format(time.RFC3339) != tt.wantFrom || to.Format(time.RFC3339) != tt.wantTo {
			t.Errorf("from=%s&to=%s: %v to %v (%v), want %s to %s", tt.from, tt.to, from, to, p, tt.wantFrom, tt.wantTo)
		}
	}
}

// A date as to is compared with from as the day it is: the day before
// from is refused, as it was before the day was taken in, and so is a
// date-time from after that day; one within it is not.
func TestADateAsToBeforeFromIsRefused(t *testing.T) {
	for _, tt := range []struct {
		name, from, to string
		refused        bool
	}{
		{"the day before a date", "2026-06-22", "2026-06-21", true},
		{"the day before a date-time", "2026-06-22T00:00:00Z", "2026-06-21", true},
		{"the day before a date-time given with its offset", "2026-06-22T01:00:00+01:00", "2026-06-21", true},
		{"the day of a date-time", "2026-06-21T12:00:00Z", "2026-06-21", false},
		{"the day of a date-time given with its offset", "2026-06-22T01:00:00+02:00", "2026-06-21", false},
		{"a date-time before a date-time", "2026-06-21T12:00:00Z", "2026-06-21T11:59:59Z", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var p domain.Problems
			timeWindow(url.Values{"from": {tt.from}, "to": {tt.to}}, &p)
			if refused := len(p) > 0; refused != tt.refused || (refused && (len(p) != 1 || p[0].Field != "to" || p[0].Code != domain.CodeInvalidDate)) {
				t.Errorf("from=%s&to=%s: %v, want refused (INVALID_DATE on to): %v", tt.from, tt.to, p, tt.refused)
			}
		})
	}
}
