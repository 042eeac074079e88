package views

import (
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/projections"
)

// A priced quote's option shows whether its flight still takes bookings,
// as the booking's confirmation decides it (flight_closed): not once the
// flight is cancelled, departed or arrived, or its departure time has
// come, whatever its status; a delayed flight before its departure does.
func TestAQuotesPriceOptionShowsItsFlightClosedOnceTheFlightTakesNoMoreBookings(t *testing.T) {
	forwarder := domain.Principal{OrganizationID: "f1", Role: domain.RoleForwarder}
	q := domain.Quote{ID: "q1", OrganizationID: "f1", Status: domain.QuoteStatusPriced, Options: []domain.PriceOption{
		{FlightID: "EK9901-2026-11-30", FlightNumber: "EK9901", Carrier: "EK", DepartureDate: "2026-11-30"},
		{FlightID: "LH430-2026-11-30", FlightNumber: "LH430", Carrier: "LH", DepartureDate: "2026-11-30"},
	}}
	id := q.Options[1].FlightID
	departs := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	before := departs.Add(-time.Hour)
	status := func(s string) domain.Event { return domain.FlightStatusChanged{FlightID: id, Status: s} }
	scheduled := domain.FlightScheduled{FlightID: id, Carrier: "LH", DepartsAt: departs, CapacityKg: 1000, CapacityM3: 10}
	tests := []struct {
		name    string
		history []domain.Event
		now     time.Time
		closed  bool
	}{
		{"scheduled, an hour before departure", []domain.Event{scheduled}, before, false},
		{"delayed, an hour before departure", []domain.Event{scheduled, status(domain.FlightStatusDelayed)}, before, false},
		{"cancelled", []domain.Event{scheduled, status(domain.FlightStatusCancelled)}, before, true},
		{"departed early", []domain.Event{scheduled, status(domain.FlightStatusDeparted)}, before, true},
		{"arrived", []domain.Event{scheduled, status(domain.FlightStatusDeparted), status(domain.FlightStatusArrived)}, before, true},
		{"scheduled, at its departure time", []domain.Event{scheduled}, departs, true},
		{"delayed, past its scheduled departure", []domain.Event{scheduled, status(domain.FlightStatusDelayed)}, departs.Add(time.Hour), true},
		{"not a flight the service holds", nil, before, false},
	}
	for _, tt := range tests {
		flights := projections.NewFlights()
		for i, e := range tt.history {
			flights.Apply(domain.Record{Aggregate: domain.Aggregate{Type: domain.AggregateFlight, ID: id}, Sequence: uint64(i + 1)}, e)
		}
		got := ToQuoteJSON(q, forwarder, FlightClosed(flights, tt.now)).PriceOptions
		if len(got) != 2 || got[1].FlightClosed != tt.closed || got[0].FlightClosed {
			t.Errorf("%s: options %+v, want LH430 closed %v, EK9901 (not held) open", tt.name, got, tt.closed)
		}
		if past := ToQuoteJSON(q, forwarder, nil).PriceOptions; past[1].FlightClosed {
			t.Errorf("%s: without flights to look at, LH430 shows closed", tt.name)
		}
	}
}
