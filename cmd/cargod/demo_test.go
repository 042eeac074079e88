package main

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/internal/lockedbuf"
	"github.com/cargostream/cargostream/projections"
)

// The demo timetable has a flight on every local day of its window, also
// across the night the clocks go forward: started at 23:30 in Frankfurt
// on the Saturday before summer time, a day of 24 hours later is 00:30 on
// Monday, and Sunday's departures were skipped.
func TestTheDemoTimetableHasEveryDayAcrossSummerTime(t *testing.T) {
	ref := projections.NewReference()
	ref.Apply(domain.Record{}, domain.ReferenceChanged{Kind: domain.RefAirports, Airports: domain.BuiltinAirports()})
	now := time.Date(2027, 3, 27, 22, 30, 0, 0, time.UTC) // 23:30 CET; CEST from 02:00 on the 28th
	lh8400 := demoTimetables["demo-airline-lh"][0]
	for d, want := range []string{"2027-03-27", "2027-03-28", "2027-03-29", "2027-03-30"} {
		f, err := demoFlight(lh8400, now, d, ref)
		if err != nil {
			t.Fatal(err)
		}
		if f.DepartureDate != want {
			t.Errorf("day %d: %s departs on %s, want %s", d, f.FlightNumber, f.DepartureDate, want)
		}
	}
}

// A demo that runs for days seeds its timetable again and again, not
// only at the start; a seed that fails is logged and tried at the next
// tick; and the keeping ends with its context.
func TestARunningDemoKeepsSeedingItsTimetable(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var logged lockedbuf.Buffer
	seeded := make(chan time.Time)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tries := 0
		keepDemoTimetable(ctx, slog.New(slog.NewJSONHandler(&logged, nil)), time.Millisecond, func(now time.Time) error {
			if tries++; tries == 1 {
				return errors.New("the event store did not answer")
			}
			seeded <- now
			return nil
		})
	}()
	first := <-seeded
	if second := <-seeded; !second.After(first) {
		t.Errorf("seeded at %s, then at %s: want a later time each tick", first, second)
	}
	if !strings.Contains(logged.String(), "the event store did not answer") {
		t.Errorf("the failed seed was not logged: %q", logged.String())
	}
	cancel()
	for {
		select {
		case <-seeded: // a tick that came before the end
		case <-done:
			return
		}
	}
}
