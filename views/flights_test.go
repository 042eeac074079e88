package views

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
)

// A flight whose bookings were all cancelled has nothing booked: its
// airline's capacity shows 0 projected, not the -0 that the float noise
// of the reservations' sum (0.7 and 0.6 m³ reserved, then released, leave
// -1.1e-16 m³) rounds to, which JSON writes as -0.
func TestTheCapacityOfAFlightWhoseBookingsWereAllCancelledShowsNothingProjected(t *testing.T) {
	const id = "LH8400-2026-11-26"
	departs := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	reserved := func(b string, kg, m3 float64) domain.Event {
		return domain.CapacityReserved{FlightID: id, BookingID: b, WeightKg: kg, VolumeM3: m3}
	}
	released := func(b string, kg, m3 float64) domain.Event {
		return domain.CapacityReleased{FlightID: id, BookingID: b, WeightKg: kg, VolumeM3: m3}
	}
	tests := []struct {
		name    string
		history []domain.Event
	}{
		{"released in the order reserved", []domain.Event{reserved("b0", 120.7, 0.7), reserved("b1", 80.6, 0.6), released("b0", 120.7, 0.7), released("b1", 80.6, 0.6)}},
		{"released the other way round", []domain.Event{reserved("b0", 120.7, 0.7), reserved("b1", 80.6, 0.6), released("b1", 80.6, 0.6), released("b0", 120.7, 0.7)}},
		{"never booked", nil},
	}
	airline := domain.Principal{OrganizationID: "lh", Role: domain.RoleAirline, AirlineCode: "LH"}
	for _, tt := range tests {
		f := domain.EvolveFlight(domain.Flight{}, domain.FlightScheduled{FlightID: id, Carrier: "LH", DepartsAt: departs, CapacityKg: 1000, CapacityM3: 10})
		for _, e := range tt.history {
			f = domain.EvolveFlight(f, e)
		}
		b, err := json.Marshal(ToCapacityJSON(f, airline, departs.Add(-time.Hour)))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`"projectedWeight":0,`, `"projectedVolume":0,`, `"availableWeight":1000,`, `"availableVolume":10}`} {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s: %s, want %s", tt.name, b, want)
			}
		}
	}
}

// A flight's version moves, for those who may not see its load, only when
// the flight they see changes (see FlightVersion).
func TestAFlightsVersionMovesWithItsLoadOnlyForThoseWhoSeeTheLoad(t *testing.T) {
	const id = "LH8400-2026-11-26"
	scheduled := domain.EvolveFlight(domain.Flight{}, domain.FlightScheduled{FlightID: id, Carrier: "LH", CapacityKg: 1000, CapacityM3: 10})
	booked := domain.EvolveFlight(scheduled, domain.CapacityReserved{FlightID: id, BookingID: "b1", WeightKg: 100, VolumeM3: 1})
	delayed := domain.EvolveFlight(booked, domain.FlightStatusChanged{FlightID: id, Status: domain.FlightStatusDelayed})
	lh := domain.Principal{OrganizationID: "lh", Role: domain.RoleAirline, AirlineCode: "LH"}
	ek := domain.Principal{OrganizationID: "ek", Role: domain.RoleAirline, AirlineCode: "EK"}
	forwarder := domain.Principal{OrganizationID: "f1", Role: domain.RoleForwarder}
	if got := FlightVersion(booked, lh, 42); got != 42 {
		t.Errorf("the airline's version of its flight = %d, want the stream's 42", got)
	}
	for _, p := range []domain.Principal{ek, forwarder} {
		before, after, moved := FlightVersion(scheduled, p, 41), FlightVersion(booked, p, 42), FlightVersion(delayed, p, 43)
		if before != after {
			t.Errorf("%s: the version moved from %d to %d with a booking", p.OrganizationID, before, after)
		}
		if moved == after {
			t.Errorf("%s: the version stayed %d when the flight was delayed", p.OrganizationID, moved)
		}
	}
}
