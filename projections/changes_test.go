package projections

import (
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
)

func TestAWaitForAChangeEndsAtAnEventOfItsAggregateOnly(t *testing.T) {
	a, b := domain.Aggregate{Type: domain.AggregateBooking, ID: "a"}, domain.Aggregate{Type: domain.AggregateBooking, ID: "b"}
	closed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	var c changes
	first, stopFirst := c.wait(a)
	second, stopSecond := c.wait(a)
	other, stopOther := c.wait(b)
	stopSecond() // the first still waits
	c.applied(b)
	if !closed(other) || closed(first) {
		t.Fatalf("an event of b woke b's reader: %v, a's: %v", closed(other), closed(first))
	}
	c.applied(a)
	if !closed(first) || closed(second) {
		t.Fatalf("an event of a woke a's reader: %v, and the one that gave up: %v", closed(first), closed(second))
	}
	stopFirst()
	stopOther()
	stopOther() // twice is once
	again, stopAgain := c.wait(a)
	if closed(again) {
		t.Fatal("a wait after the event is woken by it")
	}
	c.appliedMany()
	if !closed(again) {
		t.Fatal("events applied in batches did not wake a's reader")
	}
	stopAgain()
	if len(c.waiting) != 0 {
		t.Errorf("readers of %d aggregates left once every reader stopped", len(c.waiting))
	}
}

func TestAnAppliedSequenceWakesTheReadersOfItAndOfThoseBeforeOnly(t *testing.T) {
	var w seqWaiters
	waiters := map[uint64]*seqWaiter{}
	for _, seq := range []uint64{7, 3, 9, 3, 5, 12, 4} {
		waiters[seq] = w.add(seq) // the second 3 replaces the first in the map; both wait
	}
	// Readers of 12 and 4 give up (twice is once).
	w.remove(waiters[12])
	w.remove(waiters[4])
	w.remove(waiters[4])
	tests := []struct {
		applied uint64
		woken   []uint64
		left    int
	}{
		{2, nil, 5},
		{5, []uint64{3, 5}, 2},
		{8, []uint64{3, 5, 7}, 1},
		{20, []uint64{3, 5, 7, 9}, 0},
	}
	for _, tt := range tests {
		w.wake(tt.applied)
		for seq, waiter := range waiters {
			select {
			case <-waiter.reached:
				if !slices.Contains(tt.woken, seq) {
					t.Errorf("applied %d woke the reader of %d", tt.applied, seq)
				}
			default:
				if slices.Contains(tt.woken, seq) || (seq != 12 && seq != 4 && tt.applied >= seq) {
					t.Errorf("applied %d left the reader of %d waiting", tt.applied, seq)
				}
			}
		}
		if len(w) != tt.left {
			t.Errorf("applied %d: %d readers left, want %d", tt.applied, len(w), tt.left)
		}
	}
	// A reader woken already gives up: nothing to take out.
	w.remove(waiters[3])
	if len(w) != 0 {
		t.Errorf("%d readers left after a woken one gave up", len(w))
	}
}

// A wait for a change of one of several aggregates (a quote, and the
// flights of its options) ends at an event of any of them, and no other.
func TestAWaitForAChangeOfSeveralAggregatesEndsAtAnEventOfAnyOfThem(t *testing.T) {
	quote := domain.Aggregate{Type: domain.AggregateQuote, ID: "q1"}
	flights := []domain.Aggregate{{Type: domain.AggregateFlight, ID: "LH400"}, {Type: domain.AggregateFlight, ID: "LH402"}}
	other := domain.Aggregate{Type: domain.AggregateFlight, ID: "EK9902"}
	p := NewProjector(nil, slog.New(slog.DiscardHandler))
	for _, woken := range append([]domain.Aggregate{quote}, flights...) {
		changed, stop := p.ChangeOf(quote, flights...)
		p.changes.applied(other)
		// applied wakes the readers before it returns: an event of
		// another aggregate would have ended the wait by now.
		select {
		case <-changed:
			t.Fatalf("an event of %s ended a wait for %s and %v", other, quote, flights)
		default:
		}
		p.changes.applied(woken)
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatalf("an event of %s did not end the wait", woken)
		}
		stop()
		stop() // twice is once
	}
	// It waits on those aggregates alone: another's event finds no reader.
	_, stop := p.ChangeOf(quote, flights...)
	p.changes.mu.Lock()
	waiting := slices.Collect(maps.Keys(p.changes.waiting))
	p.changes.mu.Unlock()
	if want := append([]domain.Aggregate{quote}, flights...); len(waiting) != len(want) || slices.ContainsFunc(want, func(a domain.Aggregate) bool {
		return !slices.Contains(waiting, a)
	}) {
		t.Errorf("waits on %v, want %v", waiting, want)
	}
	stop()
	if len(p.changes.waiting) != 0 {
		t.Errorf("after the wait ended, readers are left for %v", p.changes.waiting)
	}
}

// The readers of a flight's status wake at its status events, and not at
// the capacity every booking takes and gives back.
func TestAWaitForAFlightsStatusEndsAtItsStatusEventsAlone(t *testing.T) {
	flight := domain.Aggregate{Type: domain.AggregateFlight, ID: "LH400-2026-11-27"}
	p := NewProjector(nil, slog.New(slog.DiscardHandler))
	changed, stop := p.ChangeOf(StatusOf(flight.ID))
	defer stop()
	record := func(seq uint64, e domain.Event) domain.Record {
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		return domain.Record{Sequence: seq, Aggregate: flight, Envelope: domain.Envelope{Type: e.EventType(), SchemaVersion: 1, Data: data}}
	}
	for seq, e := range []domain.Event{domain.CapacityReserved{FlightID: flight.ID, BookingID: "b1", WeightKg: 100},
		domain.CapacityReleased{FlightID: flight.ID, BookingID: "b1", WeightKg: 100}} {
		if err := p.apply(record(uint64(seq+1), e)); err != nil {
			t.Fatal(err)
		}
		select {
		case <-changed:
			t.Fatalf("%s woke the readers of the flight's status", e.EventType())
		default: // applied synchronously: a wake would show now
		}
	}
	if err := p.apply(record(3, domain.FlightStatusChanged{FlightID: flight.ID, Status: domain.FlightStatusCancelled})); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	default:
		t.Error("the flight's cancellation did not wake the readers of its status")
	}
}
