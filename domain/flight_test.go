package domain

import (
	"testing"
	"time"
)

func TestDecideChangeFlightStatus(t *testing.T) {
	departs := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	flight := func(status string) Flight {
		return Flight{ID: "LH8400-2026-11-26", Status: status, DepartsAt: departs}
	}
	tests := []struct {
		name string
		f    Flight
		to   string
		at   time.Time
		want string // the status recorded, "" for no change, or the error's code
	}{
		{"delayed", flight(FlightStatusScheduled), FlightStatusDelayed, departs.Add(-time.Hour), FlightStatusDelayed},
		{"delayed again", flight(FlightStatusDelayed), FlightStatusDelayed, departs, FlightStatusDelayed},
		{"departed on time", flight(FlightStatusScheduled), FlightStatusDeparted, departs, FlightStatusDeparted},
		{"departed late", flight(FlightStatusDelayed), FlightStatusDeparted, departs.Add(5 * time.Hour), FlightStatusDeparted},
		{"departed early", flight(FlightStatusScheduled), FlightStatusDeparted, departs.Add(-12 * time.Hour), FlightStatusDeparted},
		{"departed 13 hours early", flight(FlightStatusScheduled), FlightStatusDeparted, departs.Add(-13 * time.Hour), "conflict"},
		{"cancelled, then departed days early", flight(FlightStatusCancelled), FlightStatusDeparted, departs.Add(-72 * time.Hour), "conflict"},
		{"arrived", flight(FlightStatusDeparted), FlightStatusArrived, departs.Add(8 * time.Hour), FlightStatusArrived},
		{"arrived without departing", flight(FlightStatusScheduled), FlightStatusArrived, departs.Add(8 * time.Hour), "conflict"},
		{"cancelled after departure", flight(FlightStatusDeparted), FlightStatusCancelled, departs, "conflict"},
		{"departed again", flight(FlightStatusDeparted), FlightStatusDeparted, departs, ""},
		{"unknown status", flight(FlightStatusScheduled), "boarding", departs, "INVALID_VALUE status"},
		{"no flight", Flight{}, FlightStatusDelayed, departs, "not_found"},
	}
	for _, tt := range tests {
		events, err := DecideChangeFlightStatus(tt.f, tt.to, tt.at)
		got := problemOf(err)
		if err == nil && len(events) == 1 {
			got = events[0].(FlightStatusChanged).Status
		}
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
	// A move the table forbids is named as such, whatever the time.
	if _, err := DecideChangeFlightStatus(flight(FlightStatusCancelled), FlightStatusDeparted, departs.Add(-72*time.Hour)); err == nil ||
		err.Error() != "conflict: a cancelled flight cannot become departed" {
		t.Errorf("cancelled, then departed = %v", err)
	}
}
