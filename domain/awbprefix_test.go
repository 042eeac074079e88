package domain

import (
	"fmt"
	"testing"
)

func TestDecideAllocateRange(t *testing.T) {
	held := func(requestID string, first, count int) RangeAllocated {
		return RangeAllocated{Prefix: "020", RequestID: requestID, OrganizationID: "f0", Range: AWBRange{First: first, Count: count}}
	}
	// Others hold 100..149 and 300..399.
	others := []Event{held("s2", 100, 50), held("s3", 300, 100)}
	withS1 := append([]Event{held("s1", 200, 50)}, others...)
	tests := []struct {
		name    string
		history []Event
		asked   AWBRange
		count   int
		want    string // the range allocated or released, "" for no change, or the error's (first problem's) code
	}{
		{"the range asked for", others, AWBRange{First: 200, Count: 50}, 50, "allocated s1 of 020 to f1: 200..249"},
		{"a range asked for that overlaps another's", others, AWBRange{First: 140, Count: 20}, 20, "RANGE_OVERLAP startNumber"},
		{"a range asked for that overlaps its own", withS1, AWBRange{First: 220, Count: 50}, 50, "allocated s1 of 020 to f1: 220..269"},
		{"the same range asked for again", withS1, AWBRange{First: 200, Count: 50}, 50, ""},
		{"the first numbers", nil, AWBRange{}, 10, "allocated s1 of 020 to f1: 1..10"},
		{"before the others", others, AWBRange{}, 99, "allocated s1 of 020 to f1: 1..99"},
		{"the gap between the others", others, AWBRange{}, 100, "allocated s1 of 020 to f1: 150..249"},
		{"the whole gap between the others", others, AWBRange{}, 150, "allocated s1 of 020 to f1: 150..299"},
		{"after the others", others, AWBRange{}, 151, "allocated s1 of 020 to f1: 400..550"},
		{"as many as before", withS1, AWBRange{}, 50, ""},
		{"more than before, where its own were", withS1, AWBRange{}, 100, "allocated s1 of 020 to f1: 150..249"},
		{"fewer than before, the first of its own", withS1, AWBRange{}, 10, "allocated s1 of 020 to f1: 200..209"},
		{"none, after some", withS1, AWBRange{}, 0, "released s1 of 020 of f1: 200..249"},
		{"none, after none", others, AWBRange{}, 0, ""},
		{"none left", []Event{held("s2", 1, maxSerial7)}, AWBRange{}, 1, "conflict"},
		{"all that is left", others, AWBRange{}, maxSerial7 - 400 + 1, "allocated s1 of 020 to f1: 400..9999999"},
		{"one more than is left", others, AWBRange{}, maxSerial7 - 400 + 2, "conflict"},
	}
	for _, tt := range tests {
		events, err := DecideAllocateRange(given(EvolveAWBPrefixStock, tt.history...), "020", "s1", "f1", tt.asked, tt.count)
		got := outcomeOf(events, err, func(e Event) string {
			switch e := e.(type) {
			case RangeAllocated:
				return fmt.Sprintf("allocated %s of %s to %s: %d..%d", e.RequestID, e.Prefix, e.OrganizationID, e.Range.First, e.Range.Last())
			case RangeReleased:
				return fmt.Sprintf("released %s of %s of %s: %d..%d", e.RequestID, e.Prefix, e.OrganizationID, e.Range.First, e.Range.Last())
			}
			return e.EventType()
		})
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}
