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
