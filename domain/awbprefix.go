package domain

import (
	"maps"
	"slices"
)

// AWBPrefixStock is every range allocated of one airline prefix: the guard
// that no two stock requests ever hold the same number.
type AWBPrefixStock struct {
	Prefix string
	Ranges map[string]AWBRange // by stock request id
}

// RangeAllocated records a range given to a stock request, replacing any
// it held before.
type RangeAllocated struct {
	Prefix         string   `json:"prefix"`
	RequestID      string   `json:"requestId"`
	OrganizationID string   `json:"organizationId"`
	Range          AWBRange `json:"range"`
}

func (RangeAllocated) EventType() string { return "RangeAllocated" }

// RangeReleased records that a stock request no longer holds its range.
// OrganizationID, the request's forwarder, is empty in events stored
// before it was added.
type RangeReleased struct {
	Prefix         string   `json:"prefix"`
	RequestID      string   `json:"requestId"`
	OrganizationID string   `json:"organizationId,omitempty"`
	Range          AWBRange `json:"range"`
}

func (RangeReleased) EventType() string { return "RangeReleased" }

// DecideAllocateRange gives a stock request count numbers: the range asked
// for (want.Count > 0), else the first count of those it holds if it held
// as many, or else the lowest free range. It replaces what the request
// held before; count 0 only releases. A number (serial) onRecord says has a
// shipment on record (the airline's own, filed for or reported on while
// no forwarder held the number) is in use, and goes to no request but one
// that holds it already: the forwarder would own that shipment.
func DecideAllocateRange(s AWBPrefixStock, prefix, requestID, orgID string, want AWBRange, count int, onRecord func(serial int) bool) ([]Event, error) {
	old, had := s.Ranges[requestID]
	// recorded is a number of rng, not the request's already, with a
	// shipment on record, or -1: the first, or with last the last, so
	// that a search for a free range goes past a run of them at once.
	recorded := func(rng AWBRange, last bool) int {
		for i := range rng.Count {
			x := rng.First + i
			if last {
				x = rng.Last() - i
			}
			if !(had && old.Contains(x)) && onRecord(x) {
				return x
			}
		}
		return -1
	}
	var next AWBRange
	switch {
	case count == 0:
	case want.Count > 0:
		next = want
		var p Problems
		for id, r := range s.Ranges {
			if id != requestID && r.Overlaps(want) {
				p.Add("startNumber", CodeRangeOverlap, "%s to %s overlaps %s to %s, already allocated",
					AWBNumber(prefix, want.First), AWBNumber(prefix, want.Last()), AWBNumber(prefix, r.First), AWBNumber(prefix, r.Last()))
				return nil, p.Err()
			}
		}
		if x := recorded(want, false); x >= 0 {
			p.Add("startNumber", CodeRangeOverlap, "%s to %s holds %s, which has a shipment on record",
				AWBNumber(prefix, want.First), AWBNumber(prefix, want.Last()), AWBNumber(prefix, x))
			return nil, p.Err()
		}
	case had && count <= old.Count:
		// The same allocation again, or fewer of its numbers: the
		// request keeps the first of those it holds (numbers are used
		// from the lowest), never a range elsewhere, which would take
		// back every number used.
		next = AWBRange{First: old.First, Count: count}
	default:
		for from := 1; ; {
			var ok bool
			if next, ok = s.freeRange(requestID, count, from); !ok {
				return nil, Errorf(Conflict, "prefix %s has no free range of %d numbers", prefix, count)
			}
			x := recorded(next, true)
			if x < 0 {
				break
			}
			from = x + 1
		}
	}
	switch {
	case had && old == next, !had && next.Count == 0:
		return nil, nil
	case next.Count == 0:
		return []Event{RangeReleased{Prefix: prefix, RequestID: requestID, OrganizationID: orgID, Range: old}}, nil
	}
	return []Event{RangeAllocated{Prefix: prefix, RequestID: requestID, OrganizationID: orgID, Range: next}}, nil
}

// freeRange finds the lowest gap of count serials from serial from on,
// ignoring the range of requestID (which is being replaced).
func (s AWBPrefixStock) freeRange(requestID string, count, from int) (AWBRange, bool) {
	var taken []AWBRange
	for id, r := range s.Ranges {
		if id != requestID {
			taken = append(taken, r)
		}
	}
	slices.SortFunc(taken, func(a, b AWBRange) int { return a.First - b.First })
	candidate := AWBRange{First: from, Count: count}
	for _, r := range taken {
		if !candidate.Overlaps(r) && candidate.Last() < r.First {
			break
		}
		if r.Last() >= candidate.First {
			candidate.First = r.Last() + 1
		}
	}
	return candidate, candidate.Last() <= maxSerial7
}

// EvolveAWBPrefixStock applies an event to a prefix's stock.
func EvolveAWBPrefixStock(s AWBPrefixStock, e Event) AWBPrefixStock {
	switch e := e.(type) {
	case RangeAllocated:
		s.Prefix = e.Prefix
		s.Ranges = maps.Clone(s.Ranges)
		if s.Ranges == nil {
			s.Ranges = map[string]AWBRange{}
		}
		s.Ranges[e.RequestID] = e.Range
	case RangeReleased:
		s.Ranges = maps.Clone(s.Ranges)
		delete(s.Ranges, e.RequestID)
	}
	return s
}
