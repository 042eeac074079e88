package domain

import (
	"fmt"
	"slices"
	"testing"
)

// Forwarder f1's stock of prefix 020: request r1's range of ten numbers
// valid for a year, and request r2's of ten valid to the end of 2026.
var (
	r1Range = LedgerRange{RequestID: "r1", Range: AWBRange{First: 100, Count: 10}, ValidFrom: "2026-11-01", ValidTo: "2027-10-31"}
	r2Range = LedgerRange{RequestID: "r2", Range: AWBRange{First: 500, Count: 10}, ValidFrom: "2026-11-01", ValidTo: "2026-12-31"}
)

func f1StockOf020(r LedgerRange) StockAllocated {
	return StockAllocated{OrganizationID: "f1", Prefix: "020", Range: r}
}

// f1Used is f1's use of n numbers of prefix 020 from serial first on.
func f1Used(first, n int) []Event {
	var events []Event
	for s := first; s < first+n; s++ {
		events = append(events, AWBNumberUsed{OrganizationID: "f1", AWBNumber: AWBNumber("020", s), Reference: "earlier"})
	}
	return events
}

func TestDecideSetStock(t *testing.T) {
	extended, grown, shrunk, moved, emptied := r1Range, r1Range, r1Range, r1Range, LedgerRange{RequestID: "r1"}
	extended.ValidTo = "2028-10-31"
	grown.Range = AWBRange{First: 100, Count: 20}
	shrunk.Range = AWBRange{First: 100, Count: 5}
	moved.Range = AWBRange{First: 102, Count: 8}
	usedOne := append([]Event{f1StockOf020(r1Range)}, f1Used(101, 1)...)
	held := []Event{f1StockOf020(r1Range)}
	tests := []struct {
		name     string
		history  []Event
		r        LedgerRange
		onRecord int    // a serial with a shipment on record (filings, documents, status events), 0 if none
		want     string // what changes in the ledger, "" for nothing, or the error's code
	}{
		{"a first range", nil, r1Range, 0, "allocated r1 to f1/020: 100..109 until 2027-10-31"},
		{"the same range again", held, r1Range, 0, ""},
		{"its validity extended", held, extended, 0, "allocated r1 to f1/020: 100..109 until 2028-10-31"},
		{"grown around a number used", usedOne, grown, 0, "allocated r1 to f1/020: 100..119 until 2027-10-31"},
		{"shrunk, keeping a number used", usedOne, shrunk, 0, "allocated r1 to f1/020: 100..104 until 2027-10-31"},
		{"moved off a number used", usedOne, moved, 0, "conflict"},
		{"another request's range beside a number used", usedOne, r2Range, 0, "allocated r2 to f1/020: 500..509 until 2026-12-31"},
		{"taken back unused", held, emptied, 0, "withdrawn r1 from f1/020"},
		{"taken back after use", usedOne, emptied, 0, "conflict"},
		{"taken back, never given", nil, emptied, 0, ""},
		{"taken back with a shipment on record on an unused number", held, emptied, 104, "conflict"},
		{"shrunk off an unused number with a shipment on record", held, shrunk, 107, "conflict"},
		{"moved off an unused number with a shipment on record", held, moved, 100, "conflict"},
		{"shrunk, keeping the number with a shipment on record", held, shrunk, 101, "allocated r1 to f1/020: 100..104 until 2027-10-31"},
		{"its validity extended, with a shipment on record", held, extended, 101, "allocated r1 to f1/020: 100..109 until 2028-10-31"},
		{"another request's range beside a number with a shipment on record", held, r2Range, 101,
			"allocated r2 to f1/020: 500..509 until 2026-12-31"},
	}
	for _, tt := range tests {
		events, err := DecideSetStock(given(EvolveStockLedger, tt.history...), "f1", "020", tt.r, func(serial int) bool { return serial == tt.onRecord })
		got := outcomeOf(events, err, func(e Event) string {
			switch e := e.(type) {
			case StockAllocated:
				return fmt.Sprintf("allocated %s to %s/%s: %d..%d until %s",
					e.Range.RequestID, e.OrganizationID, e.Prefix, e.Range.Range.First, e.Range.Range.Last(), e.Range.ValidTo)
			case StockWithdrawn:
				return fmt.Sprintf("withdrawn %s from %s/%s", e.RequestID, e.OrganizationID, e.Prefix)
			}
			return e.EventType()
		})
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// A range that would take back numbers already used is refused naming
// them, singular or plural, the first ten and how many more: "1 numbers …
// already used" told the airline neither which nor whose shipments stood
// in its way.
func TestARangeTakenBackNamesTheNumbersUsedInIt(t *testing.T) {
	wide := LedgerRange{RequestID: "r1", Range: AWBRange{First: 100, Count: 15}, ValidFrom: "2026-11-01", ValidTo: "2027-10-31"}
	moved, emptied := wide, LedgerRange{RequestID: "r1"}
	moved.Range = AWBRange{First: 102, Count: 13}
	const refused = " of the earlier allocation already used (booked, waybilled, or with filings or documents) would be taken back: "
	tests := []struct {
		name  string
		first int // the first serial used
		n     int // how many used from it on
		r     LedgerRange
		want  string
	}{
		{"one number", 101, 1, moved, "1 number" + refused + "020-00001013"},
		{"two, and one kept", 100, 3, moved, "2 numbers" + refused + "020-00001002, 020-00001013"},
		{"more than ten", 100, 12, emptied, "12 numbers" + refused + "020-00001002, 020-00001013, 020-00001024, " +
			"020-00001035, 020-00001046, 020-00001050, 020-00001061, 020-00001072, 020-00001083, 020-00001094 and 2 more"},
	}
	for _, tt := range tests {
		history := append([]Event{f1StockOf020(wide)}, f1Used(tt.first, tt.n)...)
		_, err := DecideSetStock(given(EvolveStockLedger, history...), "f1", "020", tt.r, func(int) bool { return false })
		if ErrorCode(err) != Conflict || ErrorMessage(err) != tt.want {
			t.Errorf("%s: %v, want the conflict %q", tt.name, err, tt.want)
		}
	}
}

// The first filing, document or status of a shipment that is its
// forwarder's by its stock alone holds the number, whoever makes it (the
// airline's RCS of cargo the forwarder labelled with it before booking):
// the airline may not take it back, no booking is given it unless it
// names it, and one that names it takes it.
func TestAFilingOnANumberInStockHoldsIt(t *testing.T) {
	held := []Event{f1StockOf020(r1Range)}
	for _, tt := range []struct {
		name     string
		history  []Event
		awb      string
		byHolder bool
		want     string
	}{
		{"an unused number of a range", held, AWBNumber("020", 103), true, "AWBNumberUsed"},
		{"an unused number of a range, by the airline", held, AWBNumber("020", 103), false, "AWBNumberUsed"},
		{"a number used already", append(slices.Clone(held), f1Used(103, 1)...), AWBNumber("020", 103), true, ""},
		{"a number no range holds (taken back)", held, AWBNumber("020", 203), true, "forbidden"},
		{"a number no range holds (taken back), by the airline, now its own", held, AWBNumber("020", 203), false, ""},
		{"the last but one number of the stock", append(slices.Clone(held), f1Used(100, 8)...), AWBNumber("020", 108), true,
			"AWBNumberUsed; StockLow"},
		{"the last but one number of the stock, by the airline", append(slices.Clone(held), f1Used(100, 8)...), AWBNumber("020", 108), false,
			"AWBNumberUsed; StockLow"},
		{"the last number, low stock told already", append(slices.Clone(held), append(f1Used(100, 9),
			StockLow{OrganizationID: "f1", Prefix: "020", Available: 1, Allocated: 10})...), AWBNumber("020", 109), true, "AWBNumberUsed"},
	} {
		events, err := DecideHoldAWBForRecord(given(EvolveStockLedger, tt.history...), tt.awb, tt.byHolder, "2026-11-26")
		if got := outcomeOf(events, err, func(e Event) string { return e.EventType() }); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}

	events, err := DecideHoldAWBForRecord(given(EvolveStockLedger, held...), AWBNumber("020", 100), false, "2026-11-26")
	if err != nil {
		t.Fatal(err)
	}
	l := given(EvolveStockLedger, append(held, events...)...)
	if _, err := DecideSetStock(l, "f1", "020", LedgerRange{RequestID: "r1"}, func(int) bool { return false }); ErrorCode(err) != Conflict {
		t.Errorf("taking back the range of a number held for its records = %v, want a conflict", err)
	}
	if _, number, err := DecideUseAWB(l, "", "b1", "2026-11-26"); err != nil || number != AWBNumber("020", 101) {
		t.Errorf("a booking naming no number is given %s (%v), want the next, %s", number, err, AWBNumber("020", 101))
	}
	if _, number, err := DecideUseAWB(l, AWBNumber("020", 100), "b2", "2026-11-26"); err != nil || number != AWBNumber("020", 100) {
		t.Errorf("a booking naming the number held is given %s (%v), want it", number, err)
	}
}

func TestDecideUseAWB(t *testing.T) {
	stock := []Event{f1StockOf020(r1Range), f1StockOf020(r2Range)}
	lastThree := slices.Concat(stock, f1Used(100, 10), f1Used(500, 7))
	told := StockLow{OrganizationID: "f1", Prefix: "020", Available: 2, Allocated: 20}
	r2Extended, r2Shortened, r2Fewer, r2More := r2Range, r2Range, r2Range, r2Range
	r2Extended.ValidTo = "2027-06-30"
	r2Shortened.ValidTo = "2026-12-15"
	r2Fewer.Range.Count = 9
	r2More.Range.Count = 11
	lastTwo := slices.Concat(stock, f1Used(100, 10), f1Used(500, 8))
	tests := []struct {
		name    string
		history []Event
		awb     string
		day     string
		want    string // the number used and any warning of low stock, or the error's code and reason
	}{
		{"the next number of the stock that expires first", stock, "", "2026-11-26", "020-00005003 by f1 for b1"},
		{"past the numbers used", slices.Concat(stock, f1Used(500, 2)), "", "2026-11-26", "020-00005025 by f1 for b1"},
		{"the stock that expires first used up", slices.Concat(stock, f1Used(500, 10)), "", "2026-11-26", "020-00001002 by f1 for b1"},
		{"the stock that expires first expired", stock, "", "2027-01-15", "020-00001002 by f1 for b1"},
		{"the number asked for", stock, "020-00001050", "2026-11-26", "020-00001050 by f1 for b1"},
		{"a number asked for, used already", slices.Concat(stock, f1Used(105, 1)), "020-00001050", "2026-11-26", "conflict awb_in_use"},
		{"a number asked for outside the stock", stock, "020-00002004", "2026-11-26", "conflict awb_not_in_stock"},
		{"a number asked for of expired stock", stock, "020-00005003", "2027-01-15", "conflict awb_not_in_stock"},
		{"a number asked for before its stock is valid", stock, "020-00001050", "2026-10-31", "conflict awb_not_in_stock"},
		{"all valid stock used", slices.Concat(stock, f1Used(100, 10), f1Used(500, 10)), "", "2026-11-26", "conflict no_awb_stock"},
		{"no stock", nil, "", "2026-11-26", ""},
		{"a number asked for without stock", nil, "020-00001050", "2026-11-26", "conflict awb_not_in_stock"},
		{"the third number from the end", lastThree, "", "2026-11-26", "020-00005073 by f1 for b1; low: 2 of 20 of 020 with f1"},
		{"the third from the end, low told already", slices.Concat(lastThree, []Event{told}), "", "2026-11-26", "020-00005073 by f1 for b1"},
		{"low told, then stock extended", slices.Concat(lastThree, []Event{told, f1StockOf020(r2Extended)}), "", "2026-11-26",
			"020-00005073 by f1 for b1; low: 2 of 20 of 020 with f1"},
		{"low told, then more numbers given", slices.Concat(lastTwo, []Event{told, f1StockOf020(r2More)}), "", "2026-11-26",
			"020-00005084 by f1 for b1; low: 2 of 21 of 020 with f1"},
		{"low told, then stock shortened", slices.Concat(lastThree, []Event{told, f1StockOf020(r2Shortened)}), "", "2026-11-26",
			"020-00005073 by f1 for b1"},
		{"low told, then fewer numbers given", slices.Concat(lastThree, []Event{told, f1StockOf020(r2Fewer)}), "", "2026-11-26",
			"020-00005073 by f1 for b1"},
		{"the number of a booking cancelled, asked for", slices.Concat(stock, f1Used(105, 1), []Event{released(105)}), "020-00001050", "2026-11-26",
			"020-00001050 by f1 for b1"},
		{"the number of a booking cancelled, asked for once its stock expired", slices.Concat(stock, f1Used(500, 1), []Event{released(500)}),
			"020-00005003", "2027-01-15", "020-00005003 by f1 for b1"},
		{"the number of a booking cancelled, not asked for", slices.Concat(stock, f1Used(500, 1), []Event{released(500)}), "", "2026-11-26",
			"020-00005014 by f1 for b1"},
		{"the number of a booking cancelled, taken again since", slices.Concat(stock, f1Used(105, 1), []Event{released(105)}, f1Used(105, 1)),
			"020-00001050", "2026-11-26", "conflict awb_in_use"},
		{"the number of a MAWB filed before its booking", slices.Concat(stock, []Event{AWBNumberUsed{OrganizationID: "f1", AWBNumber: "020-00001050",
			Reference: MAWBReference("020-00001050")}}), "020-00001050", "2026-11-26", "020-00001050 by f1 for b1"},
		{"the number of a MAWB already booked", slices.Concat(stock, []Event{AWBNumberUsed{OrganizationID: "f1", AWBNumber: "020-00001050",
			Reference: MAWBReference("020-00001050")}}, f1Used(105, 1)), "020-00001050", "2026-11-26", "conflict awb_in_use"},
	}
	for _, tt := range tests {
		events, number, err := DecideUseAWB(given(EvolveStockLedger, tt.history...), tt.awb, "b1", tt.day)
		got := outcomeOf(events, err, func(e Event) string {
			switch e := e.(type) {
			case AWBNumberUsed:
				return e.AWBNumber + " by " + e.OrganizationID + " for " + e.Reference
			case StockLow:
				return fmt.Sprintf("low: %d of %d of %s with %s", e.Available, e.Allocated, e.Prefix, e.OrganizationID)
			}
			return e.EventType()
		})
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
		recorded := "" // none, when it decided nothing
		if len(events) > 0 {
			recorded = events[0].(AWBNumberUsed).AWBNumber
		}
		if err == nil && number != recorded {
			t.Errorf("%s returned %s but recorded %s", tt.name, number, got)
		}
	}
}

// released is the cancellation of f1's booking that used serial of 020.
func released(serial int) Event {
	return AWBNumberReleased{OrganizationID: "f1", AWBNumber: AWBNumber("020", serial), Reference: "cancelled"}
}

func TestDecideReleaseAWB(t *testing.T) {
	stock := []Event{f1StockOf020(r1Range)}
	tests := []struct {
		name    string
		history []Event
		want    string
	}{
		{"a number used", slices.Concat(stock, f1Used(105, 1)), "AWBNumberReleased"},
		{"a number held already", slices.Concat(stock, f1Used(105, 1), []Event{released(105)}), ""},
		{"a number not used", stock, ""},
	}
	for _, tt := range tests {
		events := DecideReleaseAWB(given(EvolveStockLedger, tt.history...), "020-00001050", "b1")
		if got := outcomeOf(events, nil, func(e Event) string { return e.EventType() }); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestStockLowVisibleTo(t *testing.T) {
	low := StockLow{OrganizationID: "f1", Prefix: "020", Available: 1, Allocated: 10}
	tests := []struct {
		name string
		p    Principal
		want bool
	}{
		{"the forwarder whose stock runs low hears of it", Principal{OrganizationID: "f1", Role: RoleForwarder}, true},
		{"the airline of the prefix hears of it", Principal{OrganizationID: "lh", Role: RoleAirline, AWBPrefix: "020"}, true},
		{"an admin hears of it", Principal{OrganizationID: "ops", Role: RoleAdmin}, true},
		{"another forwarder does not", Principal{OrganizationID: "f2", Role: RoleForwarder}, false},
		{"an airline of another prefix does not", Principal{OrganizationID: "ek", Role: RoleAirline, AWBPrefix: "176"}, false},
	}
	for _, tt := range tests {
		if got := low.VisibleTo(tt.p); got != tt.want {
			t.Errorf("%s: visible = %v, want %v", tt.name, got, tt.want)
		}
	}
}
