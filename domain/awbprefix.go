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
// held before; count 0 only releases.
func DecideAllocateRange(s AWBPrefixStock, prefix, requestID, orgID string, want AWBRange, count int) ([]Event, error) {
	old, had := s.Ranges[requestID]
	var next AWBRange
	switch {
	case count == 0:
	case want.Count > 0:
		next = want
		for id, r := range s.Ranges {
			if id != requestID && r.Overlaps(want) {
				var p Problems
				p.Add("startNumber", CodeRangeOverlap, "%s to %s overlaps %s to %s, already allocated",
					AWBNumber(prefix, want.First), AWBNumber(prefix, want.Last()), AWBNumber(prefix, r.First), AWBNumber(prefix, r.Last()))
				return nil, p.Err()
			}
		}
	case had && count <= old.Count:
		// The same allocation again, or fewer of its numbers: the
		// request keeps the first of those it holds (numbers are used
		// from the lowest), never a range elsewhere, which would take
		// back every number used.
		next = AWBRange{First: old.First, Count: count}
	default:
		var ok bool
		if next, ok = s.freeRange(requestID, count); !ok {
			return nil, Errorf(Conflict, "prefix %s has no free range of %d numbers", prefix, count)
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

// freeRange finds the lowest gap of count serials, ignoring the range of
// requestID (which is being replaced).
func (s AWBPrefixStock) freeRange(requestID string, count int) (AWBRange, bool) {
	var taken []AWBRange
	for id, r := range s.Ranges {
		if id != requestID {
			taken = append(taken, r)
		}
	}
	slices.SortFunc(taken, func(a, b AWBRange) int { return a.First - b.First })
	candidate := AWBRange{First: 1, Count: count}
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
