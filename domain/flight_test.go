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

// zonedAirports is reference data of three airports with their zones.
type zonedAirports struct{ Lookup }

func (zonedAirports) Airport(code string) (Airport, bool) {
	zone, ok := map[string]string{"FRA": "Europe/Berlin", "LHR": "Europe/London", "JFK": "America/New_York"}[code]
	return Airport{IATACode: code, Timezone: zone}, ok
}

func TestScheduleFlightNormalise(t *testing.T) {
	base := func() ScheduleFlight {
		return ScheduleFlight{Carrier: "LH", AWBPrefix: "020", FlightNumber: "LH8400", Origin: "FRA", Destination: "JFK",
			DepartureDate: "2027-03-27", DepartureTime: "10:05", ArrivalDate: "2027-03-27", ArrivalTime: "12:55", AircraftType: "B77F",
			At: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)}
	}
	tests := []struct {
		name   string
		change func(c *ScheduleFlight)
		want   string // the first problem's code and field, or the flight's departure in UTC
	}{
		{"in winter time", func(*ScheduleFlight) {}, "2027-03-27T09:05:00Z"},
		{"in summer time", func(c *ScheduleFlight) { c.DepartureDate, c.ArrivalDate = "2027-03-28", "2027-03-28" }, "2027-03-28T08:05:00Z"},
		{"at a time the clocks skip", func(c *ScheduleFlight) {
			c.DepartureDate, c.DepartureTime, c.ArrivalDate, c.ArrivalTime = "2027-03-28", "02:30", "2027-03-28", "05:30"
		}, "INVALID_VALUE departureTime"},
		{"a few days late", func(c *ScheduleFlight) { c.DepartureDate, c.ArrivalDate = "2026-11-20", "2026-11-20" }, "2026-11-20T09:05:00Z"},
		{"long past", func(c *ScheduleFlight) { c.DepartureDate, c.ArrivalDate = "2020-01-01", "2020-01-01" }, "INVALID_DATE departureDate"},
		{"years ahead", func(c *ScheduleFlight) { c.DepartureDate, c.ArrivalDate = "9999-12-31", "9999-12-31" }, "INVALID_DATE departureDate"},
		{"no such zone's airport", func(c *ScheduleFlight) { c.Destination = "XXX" }, "UNKNOWN_AIRPORT destination"},
		{"to where it starts", func(c *ScheduleFlight) { c.Destination = "FRA" }, "INVALID_VALUE destination"},
	}
	for _, tt := range tests {
		c := base()
		tt.change(&c)
		e, err := c.Normalise("", zonedAirports{})
		got := problemOf(err)
		if err == nil {
			got = e.DepartsAt.Format(time.RFC3339)
		}
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestCanonicalFlightNumber(t *testing.T) {
	for in, want := range map[string]string{
		"LH8400": "LH8400", "lh 8400": "LH8400", "LH084": "LH84", "LH0084": "LH84", "LH84": "LH84",
		"9W0012": "9W12", "U21234": "U21234", "LH0": "LH0", "LH0000": "LH0", "LH012A": "LH12A", "LH00A": "LH0A",
		"not a flight": "NOTAFLIGHT",
	} {
		if got := CanonicalFlightNumber(in); got != want {
			t.Errorf("%q = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"LH0084-2026-11-26": "LH84-2026-11-26", "lh84-2026-11-26": "LH84-2026-11-26", "nodate": "nodate"} {
		if got := CanonicalFlightID(in); got != want {
			t.Errorf("flight id %q = %q, want %q", in, got, want)
		}
	}
}
