package domain

import (
	"fmt"
	"slices"
	"testing"
)

// rangeHeld is a range of prefix 020 given under requestID to f0, not to
// f1, who asks in the allocation tests.
func rangeHeld(requestID string, first, count int) RangeAllocated {
	return RangeAllocated{Prefix: "020", RequestID: requestID, OrganizationID: "f0", Range: AWBRange{First: first, Count: count}}
}

// heldRanges returns the two histories the allocation tests ask s1 in, so
// that both tests ask beside the same gaps: others, where s2 holds
// 100..149 and s3 holds 300..399, and withS1, where s1 holds 200..249 too.
func heldRanges() (others, withS1 []Event) {
	others = []Event{rangeHeld("s2", 100, 50), rangeHeld("s3", 300, 100)}
	return others, append([]Event{rangeHeld("s1", 200, 50)}, others...)
}

func TestDecideAllocateRange(t *testing.T) {
	// Others hold 100..149 and 300..399.
	others, withS1 := heldRanges()
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
		{"none left", []Event{rangeHeld("s2", 1, maxSerial7)}, AWBRange{}, 1, "conflict"},
		{"all that is left", others, AWBRange{}, maxSerial7 - 400 + 1, "allocated s1 of 020 to f1: 400..9999999"},
		{"one more than is left", others, AWBRange{}, maxSerial7 - 400 + 2, "conflict"},
	}
	for _, tt := range tests {
		events, err := DecideAllocateRange(given(EvolveAWBPrefixStock, tt.history...), "020", "s1", "f1", tt.asked, tt.count, func(int) bool { return false })
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

// A number with a shipment on record (an airline's own shipment, filed
// for or reported on before any forwarder held the number) is in use: no
// range gives it to a forwarder, who would own that shipment.
func TestDecideAllocateRangeLeavesOutNumbersWithAShipmentOnRecord(t *testing.T) {
	// Others hold 100..149 and 300..399; s1 holds 200..249.
	others, withS1 := heldRanges()
	tests := []struct {
		name     string
		history  []Event
		asked    AWBRange
		count    int
		onRecord []int // serials with a shipment on record
		want     string
	}{
		{"the first numbers, past one on record", nil, AWBRange{}, 10, []int{5}, "allocated s1 of 020 to f1: 6..15"},
		{"the first numbers, past several on record", nil, AWBRange{}, 10, []int{1, 11, 30}, "allocated s1 of 020 to f1: 12..21"},
		{"the whole gap between the others, where one is on record", others, AWBRange{}, 150, []int{160}, "allocated s1 of 020 to f1: 400..549"},
		{"before the others, clear of one on record in the gap", others, AWBRange{}, 99, []int{160}, "allocated s1 of 020 to f1: 1..99"},
		{"a range asked for holding one on record", others, AWBRange{First: 200, Count: 50}, 50, []int{249}, "RANGE_OVERLAP startNumber"},
		{"a range asked for beside one on record", others, AWBRange{First: 200, Count: 50}, 50, []int{250}, "allocated s1 of 020 to f1: 200..249"},
		{"more than before, around its own number on record", withS1, AWBRange{}, 100, []int{210}, "allocated s1 of 020 to f1: 150..249"},
		{"its own range asked for again, its number on record", withS1, AWBRange{First: 200, Count: 50}, 50, []int{210}, ""},
		{"none left but one on record", []Event{rangeHeld("s2", 2, maxSerial7-1)}, AWBRange{}, 1, []int{1}, "conflict"},
	}
	for _, tt := range tests {
		onRecord := func(serial int) bool { return slices.Contains(tt.onRecord, serial) }
		events, err := DecideAllocateRange(given(EvolveAWBPrefixStock, tt.history...), "020", "s1", "f1", tt.asked, tt.count, onRecord)
		got := outcomeOf(events, err, func(e RangeAllocated) string {
			return fmt.Sprintf("allocated %s of %s to %s: %d..%d", e.RequestID, e.Prefix, e.OrganizationID, e.Range.First, e.Range.Last())
		})
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// An airline may have many numbers of its own on record, one after
// another, below the ranges it gave: the lowest free range is found past
// them with a look at each number of the range given, and a few more, not
// a new search after each of them (a reply with 200 000 such numbers and
// 2 000 ranges given took a minute).
func TestDecideAllocateRangePastManyNumbersOnRecordLooksAtFewNumbers(t *testing.T) {
	const recordedUpTo, count = 100000, 1000
	looks := 0
	onRecord := func(serial int) bool { looks++; return serial <= recordedUpTo }
	events, err := DecideAllocateRange(AWBPrefixStock{}, "020", "s1", "f1", AWBRange{}, count, onRecord)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := events[0].(RangeAllocated).Range, (AWBRange{First: recordedUpTo + 1, Count: count}); got != want {
		t.Errorf("allocated %+v, want %+v", got, want)
	}
	if looks > 3*count {
		t.Errorf("%d numbers looked at for a range of %d", looks, count)
	}
}
