package domain

import (
	"fmt"
	"slices"
	"strings"
)

// Reasons an AWB number cannot be used.
const (
	ReasonAWBUsed       = "awb_in_use"
	ReasonAWBNotInStock = "awb_not_in_stock"
	ReasonNoStock       = "no_awb_stock"
)

// LedgerRange is a range a forwarder holds, and how far it is used.
type LedgerRange struct {
	RequestID string   `json:"requestId"`
	Range     AWBRange `json:"range"`
	ValidFrom string   `json:"validFrom"`
	ValidTo   string   `json:"validTo"`
}

// StockLedger is a forwarder's AWB stock of one airline prefix: the ranges
// it holds and the numbers it has used. Numbers are assigned here, one
// aggregate per forwarder and prefix, so each is used once.
type StockLedger struct {
	OrganizationID string
	Prefix         string
	Ranges         []LedgerRange
	Used           []int // serials used, ascending
	// Held are used serials that a booking of the forwarder may still take
	// by naming them, ascending: their shipment is not booked yet (a MAWB
	// filed first) or no longer (its booking cancelled). Its labels and
	// filings carry the number, so it is booked under it again.
	Held        []int
	LowNotified bool
}

// Allocated counts the numbers of the ledger's ranges.
func (l StockLedger) Allocated() int {
	n := 0
	for _, r := range l.Ranges {
		n += r.Range.Count
	}
	return n
}

// ValidOn reports whether the range may be used on day (YYYY-MM-DD, UTC).
func (r LedgerRange) ValidOn(day string) bool { return r.ValidFrom <= day && day <= r.ValidTo }

// Available counts the unused numbers of the ranges valid on day.
func (l StockLedger) Available(day string) int {
	n := 0
	for _, r := range l.Ranges {
		if r.ValidOn(day) {
			n += r.Range.Count - l.UsedIn(r.Range)
		}
	}
	return n
}

// UsedIn counts the used numbers inside rng.
func (l StockLedger) UsedIn(rng AWBRange) int { return len(l.usedSerials(rng)) }

// usedSerials are the used serials of rng, ascending. The caller must not
// change the slice.
func (l StockLedger) usedSerials(rng AWBRange) []int {
	from, _ := slices.BinarySearch(l.Used, rng.First)
	to, _ := slices.BinarySearch(l.Used, rng.Last()+1)
	return l.Used[from:to]
}

// isUsed reports whether serial is used.
func (l StockLedger) isUsed(serial int) bool {
	_, found := slices.BinarySearch(l.Used, serial)
	return found
}

// isHeld reports whether serial is used and held for a booking that names
// it.
func (l StockLedger) isHeld(serial int) bool {
	_, found := slices.BinarySearch(l.Held, serial)
	return found
}

// nextFree is the lowest unused serial of rng, or -1.
func (l StockLedger) nextFree(rng AWBRange) int {
	i, _ := slices.BinarySearch(l.Used, rng.First)
	for s := rng.First; s <= rng.Last(); s++ {
		if i >= len(l.Used) || l.Used[i] != s {
			return s
		}
		i++
	}
	return -1
}

// StockAllocated records a range added to (or replacing one of) a ledger.
type StockAllocated struct {
	OrganizationID string      `json:"organizationId"`
	Prefix         string      `json:"prefix"`
	Range          LedgerRange `json:"range"`
}

func (StockAllocated) EventType() string { return "StockAllocated" }

// StockWithdrawn records that a request's range left the ledger.
type StockWithdrawn struct {
	OrganizationID string `json:"organizationId"`
	Prefix         string `json:"prefix"`
	RequestID      string `json:"requestId"`
}

func (StockWithdrawn) EventType() string { return "StockWithdrawn" }

// AWBNumberUsed records a number taken, and by what.
type AWBNumberUsed struct {
	OrganizationID string `json:"organizationId"`
	AWBNumber      string `json:"awbNumber"`
	Reference      string `json:"reference"`
}

func (AWBNumberUsed) EventType() string { return "AWBNumberUsed" }

// MAWBReference is the reference of a number used by the MAWB filed
// under it: a booking may take the number afterwards (see Held).
func MAWBReference(awb string) string { return "mawb:" + awb }

// RecordReference is the reference of a number used by the first filing
// or document of a shipment that is its forwarder's by its stock alone
// (no booking or MAWB yet): a booking may take the number afterwards (see
// Held), and the airline can no longer take it back, nor give it and the
// shipment's records to another forwarder.
func RecordReference(awb string) string { return "record:" + awb }

// AWBNumberReleased records that the booking that used a number was
// cancelled: the number stays used, held for a booking that names it.
type AWBNumberReleased struct {
	OrganizationID string `json:"organizationId"`
	AWBNumber      string `json:"awbNumber"`
	Reference      string `json:"reference"` // the booking cancelled
}

func (AWBNumberReleased) EventType() string { return "AWBNumberReleased" }

// StockLow records that a ledger's valid stock fell to its threshold.
type StockLow struct {
	OrganizationID string `json:"organizationId"`
	Prefix         string `json:"prefix"`
	Available      int    `json:"available"`
	Allocated      int    `json:"allocated"`
}

func (StockLow) EventType() string { return "StockLow" }

// VisibleTo: admins, the forwarder whose stock runs low, and the airline
// of its prefix.
func (l StockLow) VisibleTo(p Principal) bool {
	return p.Role == RoleAdmin || l.OrganizationID == p.OrganizationID || (p.Role == RoleAirline && l.Prefix == p.AWBPrefix)
}

// DecideSetStock puts a request's range into the ledger (count 0 takes it
// out). Numbers already used outside the new range cannot be taken back,
// nor can those (serials) onRecord says have a shipment on record (filings,
// documents, status events) though unused: the prefix would give them to
// another forwarder, whose shipment that record would then be, and who
// would read it.
func DecideSetStock(l StockLedger, orgID, prefix string, r LedgerRange, onRecord func(serial int) bool) ([]Event, error) {
	i := slices.IndexFunc(l.Ranges, func(x LedgerRange) bool { return x.RequestID == r.RequestID })
	if i >= 0 {
		old := l.Ranges[i]
		if old == r {
			return nil, nil
		}
		kept := overlap(old.Range, r.Range)
		if used := l.usedOutside(old.Range, kept); len(used) > 0 {
			return nil, Errorf(Conflict, "%s of the earlier allocation already used (booked, waybilled, or with filings or documents) would be taken back: %s",
				countOf(len(used), "number"), awbList(prefix, used))
		}
		for s := old.Range.First; s <= old.Range.Last(); s++ {
			if kept.Count > 0 && kept.Contains(s) {
				continue
			}
			if onRecord(s) {
				return nil, Errorf(Conflict, "%s of the earlier allocation has a shipment on record (filings, documents or status events) and would be taken back", AWBNumber(prefix, s))
			}
		}
	}
	if r.Range.Count == 0 {
		if i < 0 {
			return nil, nil
		}
		return []Event{StockWithdrawn{OrganizationID: orgID, Prefix: prefix, RequestID: r.RequestID}}, nil
	}
	return []Event{StockAllocated{OrganizationID: orgID, Prefix: prefix, Range: r}}, nil
}

// usedOutside lists the used serials of rng that kept (Count 0: none)
// does not hold.
func (l StockLedger) usedOutside(rng, kept AWBRange) []int {
	var out []int
	for _, s := range l.usedSerials(rng) {
		if kept.Count == 0 || !kept.Contains(s) {
			out = append(out, s)
		}
	}
	return out
}

// awbList names the AWB numbers of serials, the first maxListedAWBs of
// them and how many more: an airline taking a range back learns which
// shipments stand in its way.
func awbList(prefix string, serials []int) string {
	names := make([]string, 0, min(len(serials), maxListedAWBs))
	for _, s := range serials[:min(len(serials), maxListedAWBs)] {
		names = append(names, AWBNumber(prefix, s))
	}
	list := strings.Join(names, ", ")
	if more := len(serials) - len(names); more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	return list
}

// maxListedAWBs bounds the AWB numbers a message names.
const maxListedAWBs = 10

// overlap is the part two ranges share (Count 0 if none).
func overlap(a, b AWBRange) AWBRange {
	first, last := max(a.First, b.First), min(a.Last(), b.Last())
	if last < first {
		return AWBRange{}
	}
	return AWBRange{First: first, Count: last - first + 1}
}

// DecideUseAWB takes a number for reference: the one asked for (awb not
// empty), which must lie in a range valid on day and be unused, or else the
// next unused number of the valid range that expires first. Without a
// number asked for and without any stock of the prefix, valid or not, it
// takes none and decides nothing: a booking then goes without a number
// (a refusal is for stock that is all used or out of date). (A retried
// command is answered from history by its command id, so it never takes a
// second number.)
func DecideUseAWB(l StockLedger, awb, reference, day string) ([]Event, string, error) {
	if awb == "" && len(l.Ranges) == 0 {
		return nil, "", nil
	}
	valid := slices.DeleteFunc(slices.Clone(l.Ranges), func(r LedgerRange) bool { return !r.ValidOn(day) })
	slices.SortFunc(valid, func(a, b LedgerRange) int {
		if a.ValidTo != b.ValidTo {
			return strings.Compare(a.ValidTo, b.ValidTo)
		}
		return a.Range.First - b.Range.First
	})
	serial := -1
	if awb != "" {
		_, s := AWBSerial(awb)
		if l.isHeld(s) {
			// Its shipment's number since before, in stock then:
			// whether the stock is still valid does not matter,
			// and what is left of it does not change.
			return []Event{AWBNumberUsed{OrganizationID: l.OrganizationID, AWBNumber: awb, Reference: reference}}, awb, nil
		}
		if !slices.ContainsFunc(valid, func(r LedgerRange) bool { return r.Range.Contains(s) }) {
			return nil, "", Refusal(ReasonAWBNotInStock, "AWB %s is not in your valid stock of prefix %s", awb, l.Prefix)
		}
		if l.isUsed(s) {
			return nil, "", Refusal(ReasonAWBUsed, "AWB %s is already used", awb)
		}
		serial = s
	} else {
		for _, r := range valid {
			if serial = l.nextFree(r.Range); serial >= 0 {
				break
			}
		}
		if serial < 0 {
			return nil, "", Refusal(ReasonNoStock, "no unused AWB number of prefix %s is left in valid stock", l.Prefix)
		}
	}
	number := AWBNumber(l.Prefix, serial)
	used := AWBNumberUsed{OrganizationID: l.OrganizationID, AWBNumber: number, Reference: reference}
	return append([]Event{used}, lowStock(EvolveStockLedger(l, used), day)...), number, nil
}

// lowStock is the StockLow to record when ledger l, as a number just
// taken leaves it, has a tenth of the numbers of its ranges valid on day
// left unused, or 1 where a tenth is less, unless it was told so already
// (since stock was last given).
func lowStock(l StockLedger, day string) []Event {
	allocated := 0
	for _, r := range l.Ranges {
		if r.ValidOn(day) {
			allocated += r.Range.Count
		}
	}
	if available := l.Available(day); !l.LowNotified && allocated > 0 && available <= max(1, allocated/10) {
		return []Event{StockLow{OrganizationID: l.OrganizationID, Prefix: l.Prefix, Available: available, Allocated: allocated}}
	}
	return nil
}

// DecideReleaseAWB holds awb, the number of booking reference that was
// cancelled, for a booking that names it; a number the ledger did not
// give out (or holds already) is left alone.
func DecideReleaseAWB(l StockLedger, awb, reference string) []Event {
	if _, s := AWBSerial(awb); !l.isUsed(s) || l.isHeld(s) {
		return nil
	}
	return []Event{AWBNumberReleased{OrganizationID: l.OrganizationID, AWBNumber: awb, Reference: reference}}
}

// DecideHoldAWBForRecord uses awb, held for a booking that names it (see
// RecordReference), as a filing, document or status of its shipment is
// made while the ledger's stock alone makes it the forwarder's: by the
// forwarder (byHolder), or by the airline (a status of cargo the forwarder
// labelled with the number before booking it). A number used already is
// left alone. One the ledger's ranges no longer hold (taken back since the
// record was authorised) is refused to the forwarder, as its filing then
// is; the airline's record goes on, of a number now its own. A number so
// taken counts as a booking's does towards low stock (StockLow, by the
// stock valid on day): filings alone may use the stock up.
func DecideHoldAWBForRecord(l StockLedger, awb string, byHolder bool, day string) ([]Event, error) {
	_, serial := AWBSerial(awb)
	if l.isUsed(serial) {
		return nil, nil
	}
	if !slices.ContainsFunc(l.Ranges, func(r LedgerRange) bool { return r.Range.Contains(serial) }) {
		if !byHolder {
			return nil, nil
		}
		return nil, Errorf(Forbidden, "%s is not a shipment of yours: file for the AWB numbers you booked, waybilled or hold in stock", awb)
	}
	used := AWBNumberUsed{OrganizationID: l.OrganizationID, AWBNumber: awb, Reference: RecordReference(awb)}
	return append([]Event{used}, lowStock(EvolveStockLedger(l, used), day)...), nil
}

// EvolveStockLedger applies an event to a ledger.
func EvolveStockLedger(l StockLedger, e Event) StockLedger {
	switch e := e.(type) {
	case StockAllocated:
		l.OrganizationID, l.Prefix = e.OrganizationID, e.Prefix
		i := slices.IndexFunc(l.Ranges, func(x LedgerRange) bool { return x.RequestID == e.Range.RequestID })
		// Low stock is told once until more is given: more numbers, or
		// numbers valid longer. A reply that takes numbers back or
		// shortens their validity gives nothing, and must not have the
		// forwarder told again of the shortage it already knows.
		if i < 0 || grants(e.Range, l.Ranges[i]) {
			l.LowNotified = false
		}
		l.Ranges = slices.DeleteFunc(slices.Clone(l.Ranges), func(x LedgerRange) bool { return x.RequestID == e.Range.RequestID })
		l.Ranges = append(l.Ranges, e.Range)
	case StockWithdrawn:
		l.Ranges = slices.DeleteFunc(slices.Clone(l.Ranges), func(x LedgerRange) bool { return x.RequestID == e.RequestID })
	case AWBNumberUsed:
		_, serial := AWBSerial(e.AWBNumber)
		l.Used = withSerial(l.Used, serial)
		if e.Reference == MAWBReference(e.AWBNumber) || e.Reference == RecordReference(e.AWBNumber) {
			l.Held = withSerial(l.Held, serial)
		} else if i, found := slices.BinarySearch(l.Held, serial); found {
			l.Held = slices.Delete(slices.Clone(l.Held), i, i+1)
		}
	case AWBNumberReleased:
		_, serial := AWBSerial(e.AWBNumber)
		l.Held = withSerial(l.Held, serial)
	case StockLow:
		l.LowNotified = true
	}
	return l
}

// grants reports whether next, replacing old, gives a request's forwarder
// more than it had: more numbers, or validity longer at either end.
func grants(next, old LedgerRange) bool {
	return next.Range.Count > old.Range.Count || next.ValidFrom < old.ValidFrom || next.ValidTo > old.ValidTo
}

// withSerial is serials, ascending, with serial in it: a copy if it was
// not, as a ledger's state is shared with its readers.
func withSerial(serials []int, serial int) []int {
	i, found := slices.BinarySearch(serials, serial)
	if found {
		return serials
	}
	return slices.Insert(slices.Clone(serials), i, serial)
}
