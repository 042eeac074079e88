package domain

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A status refused names every one the API takes, scheduled among them
// (the OpenAPI enum's): a report of it changes nothing on a flight that
// is, and the message said it was none.
func TestAStatusRefusedNamesEveryStatusTaken(t *testing.T) {
	f := Flight{ID: "LH8400-2026-12-01", Status: FlightStatusScheduled, DepartsAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	_, err := DecideChangeFlightStatus(f, ChangeFlightStatus{Status: "boarding"})
	for _, status := range []string{FlightStatusScheduled, FlightStatusDelayed, FlightStatusDeparted, FlightStatusArrived, FlightStatusCancelled} {
		if err == nil || !strings.Contains(err.Error(), status) {
			t.Errorf("the refusal %v does not name %s", err, status)
		}
	}
}

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
		{"delayed again, as on record", flight(FlightStatusDelayed), FlightStatusDelayed, departs, ""},
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
		{"no status", flight(FlightStatusScheduled), "", departs, "REQUIRED status"},
		{"no flight", Flight{}, FlightStatusDelayed, departs, "not_found"},
	}
	for _, tt := range tests {
		events, err := DecideChangeFlightStatus(tt.f, ChangeFlightStatus{Status: tt.to, At: tt.at})
		got := problemOf(err)
		if err == nil && len(events) == 1 {
			got = events[0].(FlightStatusChanged).Status
		}
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
	// A move the table forbids is named as such, whatever the time, in
	// words that read right for every status ("a arrived flight" did not).
	for _, from := range []string{FlightStatusCancelled, FlightStatusArrived} {
		want := "conflict: a flight whose status is " + from + " cannot become departed"
		if _, err := DecideChangeFlightStatus(flight(from), ChangeFlightStatus{Status: FlightStatusDeparted, At: departs.Add(-72 * time.Hour)}); err == nil || err.Error() != want {
			t.Errorf("%s, then departed = %v, want %q", from, err, want)
		}
	}
}

// A delay may estimate the flight's departure, from its scheduled one to
// 72 hours after it (and not already past, see below), and with it its arrival, after the departure and no
// longer than any cargo flight lasts; both in UTC. Another status takes
// no estimate, and a delay of a flight that cannot be delayed is a
// conflict, estimate or not.
// An airline flies a flight with another aircraft, or offers another
// capacity on it, until it leaves: a type given alone brings its typical
// capacity, a capacity given alone keeps the type, the aircraft on record
// sent again changes nothing.
func TestDecideChangeFlightAircraft(t *testing.T) {
	at := time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)
	flight := func(status string) Flight {
		return Flight{ID: "LH8400-2026-11-26", Status: status, AircraftType: "B77F", CapacityKg: 102000, CapacityM3: 653,
			ReservedKg: 30000}
	}
	kg := func(v float64) *float64 { return &v }
	loaded := func(f Flight, awbs ...string) Flight {
		f.Loaded = map[string]Load{}
		for _, awb := range awbs {
			f.Loaded[awb] = Load{AWBNumber: awb, Pieces: 1, WeightKg: 100}
		}
		return f
	}
	tests := []struct {
		name string
		f    Flight
		c    ChangeFlightAircraft
		want string // "type kg m3" recorded, "" for no change, or the error's code
	}{
		{"another freighter, its typical capacity", flight(FlightStatusScheduled), ChangeFlightAircraft{AircraftType: "b744f"}, "B744F 112000 700"},
		{"by IATA code", flight(FlightStatusDelayed), ChangeFlightAircraft{AircraftType: " 33X "}, "33X 64000 475"},
		{"a passenger aircraft with the capacity given", flight(FlightStatusScheduled),
			ChangeFlightAircraft{AircraftType: "A359", CapacityKg: kg(14000), CapacityM3: kg(100)}, "A359 14000 100"},
		{"less capacity on the same aircraft, below what is booked", flight(FlightStatusScheduled), ChangeFlightAircraft{CapacityKg: kg(20000)}, "B77F 20000 653"},
		{"the same type with another volume", flight(FlightStatusScheduled), ChangeFlightAircraft{AircraftType: "B77F", CapacityM3: kg(600)}, "B77F 102000 600"},
		{"the aircraft on record again", flight(FlightStatusScheduled), ChangeFlightAircraft{AircraftType: "B77F", CapacityKg: kg(102000)}, ""},
		{"the aircraft on record again, once departed", flight(FlightStatusDeparted), ChangeFlightAircraft{AircraftType: "B77F"}, ""},
		{"a type whose capacity is not known", flight(FlightStatusScheduled), ChangeFlightAircraft{AircraftType: "AN124"}, "REQUIRED capacityKg"},
		{"a type whose capacity is not known, with it", flight(FlightStatusScheduled),
			ChangeFlightAircraft{AircraftType: "AN124", CapacityKg: kg(120000), CapacityM3: kg(1000)}, "AN124 120000 1000"},
		{"no aircraft type", flight(FlightStatusScheduled), ChangeFlightAircraft{AircraftType: "Boeing 777"}, "INVALID_FORMAT aircraftType"},
		{"a capacity out of range", flight(FlightStatusScheduled), ChangeFlightAircraft{CapacityKg: kg(-1)}, "INVALID_RANGE capacityKg"},
		{"nothing to change", flight(FlightStatusScheduled), ChangeFlightAircraft{}, "REQUIRED aircraftType"},
		{"departed", flight(FlightStatusDeparted), ChangeFlightAircraft{AircraftType: "B744F"}, "conflict"},
		{"cancelled", flight(FlightStatusCancelled), ChangeFlightAircraft{CapacityKg: kg(5000)}, "conflict"},
		{"no flight", Flight{}, ChangeFlightAircraft{AircraftType: "B744F"}, "not_found"},
		{"a passenger aircraft, with batteries for cargo aircraft only on board", loaded(flight(FlightStatusScheduled), "020-00000011", "020-00000022"),
			ChangeFlightAircraft{AircraftType: "A359"}, "conflict"},
		{"another freighter, with batteries for cargo aircraft only on board", loaded(flight(FlightStatusScheduled), "020-00000022"),
			ChangeFlightAircraft{AircraftType: "B744F"}, "B744F 112000 700"},
		{"a passenger aircraft, with other goods on board", loaded(flight(FlightStatusScheduled), "020-00000011"),
			ChangeFlightAircraft{AircraftType: "A359"}, "A359 16000 120"},
	}
	// 020-00000022 has an e-DGD of UN3480, for cargo aircraft only.
	cargoAircraftOnly := func(awb string) string { return map[string]string{"020-00000022": "UN3480"}[awb] }
	_, err := DecideChangeFlightAircraft(loaded(flight(FlightStatusScheduled), "020-00000011", "020-00000022"),
		ChangeFlightAircraft{AircraftType: "A359", At: at}, cargoAircraftOnly)
	if want := "flight LH8400-2026-11-26 has goods no passenger aircraft may carry on board, 020-00000022 (UN3480): a passenger aircraft (A359) cannot fly them; offload them first (POST /api/offloads)"; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("a passenger aircraft for a flight with batteries on board: %v, want %q", err, want)
	}
	for _, tt := range tests {
		tt.c.At = at
		events, err := DecideChangeFlightAircraft(tt.f, tt.c, cargoAircraftOnly)
		got := outcomeOf(events, err, func(e FlightAircraftChanged) string {
			return fmt.Sprint(e.AircraftType, " ", e.CapacityKg, " ", e.CapacityM3)
		})
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
		if len(events) == 1 {
			e := events[0].(FlightAircraftChanged)
			if e.PreviousAircraftType != "B77F" || e.PreviousCapacityKg != 102000 || e.PreviousCapacityM3 != 653 || !e.ChangedAt.Equal(at) {
				t.Errorf("%s: recorded %+v, want the aircraft before (B77F, 102000 kg, 653 m³) and when", tt.name, e)
			}
			f := EvolveFlight(tt.f, e)
			if got := fmt.Sprint(f.AircraftType, " ", f.CapacityKg, " ", f.CapacityM3); got != tt.want || f.ReservedKg != 30000 {
				t.Errorf("%s: the flight then has %s with %g kg booked, want %s with its bookings", tt.name, got, f.ReservedKg, tt.want)
			}
		}
	}
}

// A flight's PATCH changes its status or its aircraft, one at a time.
func TestAFlightChangeIsOfItsStatusOrOfItsAircraft(t *testing.T) {
	kg := 5000.0
	tests := []struct {
		name     string
		status   ChangeFlightStatus
		aircraft ChangeFlightAircraft
		want     string
	}{
		{"a status", ChangeFlightStatus{Status: "delayed"}, ChangeFlightAircraft{}, "status"},
		{"nothing: the status is asked for", ChangeFlightStatus{}, ChangeFlightAircraft{}, "status"},
		{"an aircraft", ChangeFlightStatus{}, ChangeFlightAircraft{AircraftType: "B744F"}, "aircraft"},
		{"a capacity", ChangeFlightStatus{}, ChangeFlightAircraft{CapacityKg: &kg}, "aircraft"},
		{"both", ChangeFlightStatus{Status: "delayed"}, ChangeFlightAircraft{AircraftType: "B744F"}, "INVALID_VALUE status"},
		{"a status with a blank aircraft type, which is none", ChangeFlightStatus{Status: "delayed"}, ChangeFlightAircraft{AircraftType: " "}, "status"},
		{"an estimate and a capacity", ChangeFlightStatus{EstimatedDepartsAt: "2026-11-26T10:00:00Z"}, ChangeFlightAircraft{CapacityKg: &kg}, "INVALID_VALUE status"},
	}
	for _, tt := range tests {
		aircraft, err := FlightChangeOf(tt.status, tt.aircraft)
		got := map[bool]string{true: "aircraft", false: "status"}[aircraft]
		if err != nil {
			got = problemOf(err)
		}
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestADelayEstimatesTheFlightsDepartureAndArrival(t *testing.T) {
	departs := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	scheduled := Flight{ID: "LH8400-2026-11-26", Status: FlightStatusScheduled, DepartsAt: departs}
	tests := []struct {
		name               string
		f                  Flight
		status             string
		departure, arrival string
		want               string // the estimate recorded, departure and arrival ("-" for none), or the first problem's code, field and message
	}{
		{"a delay with both", scheduled, FlightStatusDelayed, "2026-11-26T11:30:00Z", "2026-11-26T20:00:00Z", "2026-11-26T11:30:00Z 2026-11-26T20:00:00Z"},
		{"a delay with an offset, kept in UTC", scheduled, FlightStatusDelayed, "2026-11-26T12:30:00+01:00", "2026-11-26T15:00:00-05:00",
			"2026-11-26T11:30:00Z 2026-11-26T20:00:00Z"},
		{"a delay with its departure alone", scheduled, FlightStatusDelayed, "2026-11-26T11:30:00Z", "", "2026-11-26T11:30:00Z -"},
		{"a delay without an estimate", scheduled, FlightStatusDelayed, "", "", "- -"},
		{"another delay, back on schedule", Flight{ID: scheduled.ID, Status: FlightStatusDelayed, DepartsAt: departs},
			FlightStatusDelayed, "2026-11-26T08:00:00Z", "", "2026-11-26T08:00:00Z -"},
		{"the same delay reported again", Flight{ID: scheduled.ID, Status: FlightStatusDelayed, DepartsAt: departs,
			EstimatedDepartsAt: time.Date(2026, 11, 26, 11, 30, 0, 0, time.UTC), EstimatedArrivesAt: time.Date(2026, 11, 26, 20, 0, 0, 0, time.UTC)},
			FlightStatusDelayed, "2026-11-26T12:30:00+01:00", "2026-11-26T20:00:00Z", "no change"},
		{"a delay reported again with another arrival", Flight{ID: scheduled.ID, Status: FlightStatusDelayed, DepartsAt: departs,
			EstimatedDepartsAt: time.Date(2026, 11, 26, 11, 30, 0, 0, time.UTC), EstimatedArrivesAt: time.Date(2026, 11, 26, 20, 0, 0, 0, time.UTC)},
			FlightStatusDelayed, "2026-11-26T11:30:00Z", "2026-11-26T20:30:00Z", "2026-11-26T11:30:00Z 2026-11-26T20:30:00Z"},
		{"a delay reported again without its estimate", Flight{ID: scheduled.ID, Status: FlightStatusDelayed, DepartsAt: departs,
			EstimatedDepartsAt: time.Date(2026, 11, 26, 11, 30, 0, 0, time.UTC)}, FlightStatusDelayed, "", "", "- -"},
		{"a delay of 72 hours", scheduled, FlightStatusDelayed, "2026-11-29T08:00:00Z", "", "2026-11-29T08:00:00Z -"},
		{"a delay of 72 hours and a minute", scheduled, FlightStatusDelayed, "2026-11-29T08:01:00Z", "",
			"INVALID_DATE estimatedDepartsAt: must be at most 72 hours after the scheduled departure, 2026-11-26T08:00:00Z: a flight held longer is cancelled and flown as another"},
		{"a departure before the schedule", scheduled, FlightStatusDelayed, "2026-11-26T07:59:00Z", "",
			"INVALID_DATE estimatedDepartsAt: must not be before the scheduled departure, 2026-11-26T08:00:00Z: a delay departs later"},
		{"a departure without its offset", scheduled, FlightStatusDelayed, "2026-11-26T11:30:00", "",
			"INVALID_DATE estimatedDepartsAt: must be " + DateTimeShape},
		{"an arrival that is no date-time", scheduled, FlightStatusDelayed, "2026-11-26T11:30:00Z", "tonight",
			"INVALID_DATE estimatedArrivesAt: must be " + DateTimeShape},
		{"an arrival without a departure", scheduled, FlightStatusDelayed, "", "2026-11-26T20:00:00Z",
			"REQUIRED estimatedDepartsAt: is required with estimatedArrivesAt: an arrival is estimated from the departure"},
		{"an arrival at the departure", scheduled, FlightStatusDelayed, "2026-11-26T11:30:00Z", "2026-11-26T11:30:00Z",
			"INVALID_VALUE estimatedArrivesAt: the arrival must be after the departure (estimatedDepartsAt, 2026-11-26T11:30:00Z)"},
		{"an arrival 22 hours after the departure", scheduled, FlightStatusDelayed, "2026-11-26T11:30:00Z", "2026-11-27T09:30:00Z",
			"2026-11-26T11:30:00Z 2026-11-27T09:30:00Z"},
		{"an arrival 22 hours and a minute after the departure", scheduled, FlightStatusDelayed, "2026-11-26T11:30:00Z", "2026-11-27T09:31:00Z",
			"INVALID_VALUE estimatedArrivesAt: must be at most 22 hours after the departure (estimatedDepartsAt, 2026-11-26T11:30:00Z): no cargo flight lasts longer"},
		{"an arrival in the year 9999, beyond what a Duration holds", scheduled, FlightStatusDelayed, "2026-11-26T11:30:00Z", "9999-12-31T23:59:59Z",
			"INVALID_VALUE estimatedArrivesAt: must be at most 22 hours after the departure (estimatedDepartsAt, 2026-11-26T11:30:00Z): no cargo flight lasts longer"},
		{"a departure with an estimated departure", scheduled, FlightStatusDeparted, "2026-11-26T11:30:00Z", "",
			"INVALID_VALUE estimatedDepartsAt: is taken with status delayed alone: a flight reported departed has no estimate"},
		{"a cancellation with an estimated arrival", scheduled, FlightStatusCancelled, "", "2026-11-26T20:00:00Z",
			"INVALID_VALUE estimatedArrivesAt: is taken with status delayed alone: a flight reported cancelled has no estimate"},
		{"a delay of a departed flight", Flight{ID: scheduled.ID, Status: FlightStatusDeparted, DepartsAt: departs}, FlightStatusDelayed,
			"2026-11-26T11:30:00Z", "", "conflict: a flight whose status is departed cannot become delayed"},
	}
	for _, tt := range tests {
		events, err := DecideChangeFlightStatus(tt.f, ChangeFlightStatus{Status: tt.status, EstimatedDepartsAt: tt.departure,
			EstimatedArrivesAt: tt.arrival, At: departs.Add(-time.Hour)})
		if got := statusChangeOutcome(events, err); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// A delay's estimated departure is still to come when it is reported:
// one already past would close the flight at once, as if it had left,
// while it stays delayed. A delay reported after the scheduled departure
// estimates a later one. The estimate on record, sent again once past,
// is no news: it changes nothing, as any report of what is on record.
func TestADelaysEstimatedDepartureIsNotAlreadyPast(t *testing.T) {
	departs := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	onRecord := time.Date(2026, 11, 26, 11, 30, 0, 0, time.UTC)
	tests := []struct {
		name      string
		recorded  time.Time // the estimate on record, zero for none
		departure string
		reported  time.Time
		want      string // as in the test above
	}{
		{"an estimate after the report", time.Time{}, "2026-11-26T11:30:00Z", departs.Add(time.Hour), "2026-11-26T11:30:00Z -"},
		{"an estimate reported at its moment", time.Time{}, "2026-11-26T11:30:00Z", onRecord, "2026-11-26T11:30:00Z -"},
		{"an estimate already past", time.Time{}, "2026-11-26T11:30:00Z", onRecord.Add(time.Minute),
			"INVALID_DATE estimatedDepartsAt: must not be in the past (it is 2026-11-26T11:31:00Z now): a flight that has left is reported departed"},
		{"back on schedule after the scheduled departure", time.Time{}, "2026-11-26T08:00:00Z", departs.Add(time.Hour),
			"INVALID_DATE estimatedDepartsAt: must not be in the past (it is 2026-11-26T09:00:00Z now): a flight that has left is reported departed"},
		{"the estimate on record again, once past", onRecord, "2026-11-26T13:30:00+02:00", onRecord.Add(time.Minute), "no change"},
		{"another estimate already past, with one on record", onRecord, "2026-11-26T11:20:00Z", onRecord.Add(time.Minute),
			"INVALID_DATE estimatedDepartsAt: must not be in the past (it is 2026-11-26T11:31:00Z now): a flight that has left is reported departed"},
	}
	for _, tt := range tests {
		delayed := Flight{ID: "LH8400-2026-11-26", Status: FlightStatusDelayed, DepartsAt: departs, EstimatedDepartsAt: tt.recorded}
		events, err := DecideChangeFlightStatus(delayed, ChangeFlightStatus{Status: FlightStatusDelayed, EstimatedDepartsAt: tt.departure, At: tt.reported})
		if got := statusChangeOutcome(events, err); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// statusChangeOutcome is a status change's decision as the tests of
// estimates write it: the estimate recorded, departure and arrival ("-"
// for none), "no change", or the first problem's code, field and
// message, or the error.
func statusChangeOutcome(events []Event, err error) string {
	if e, ok := err.(*Error); ok && len(e.Fields) > 0 {
		return fmt.Sprintf("%s %s: %s", e.Fields[0].Code, e.Fields[0].Field, e.Fields[0].Message)
	}
	if err == nil && len(events) == 0 {
		return "no change"
	}
	if err != nil || len(events) != 1 {
		return fmt.Sprint(err)
	}
	e := events[0].(FlightStatusChanged)
	return timeOrDash(e.EstimatedDepartsAt) + " " + timeOrDash(e.EstimatedArrivesAt)
}

// timeOrDash writes a time (an estimate, a report) as RFC 3339 in UTC,
// or "-" for none.
func timeOrDash(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Format(time.RFC3339)
}

// A flight shows the estimate of its latest status change: another
// delay's replaces it, a delay without one withdraws it, and a flight
// departed or cancelled has none; a delay stored before delays took an
// estimate has none either.
func TestAFlightShowsTheEstimateOfItsLatestDelay(t *testing.T) {
	at := func(clock string) time.Time { t, _ := time.Parse(time.RFC3339, "2026-11-26T"+clock+":00Z"); return t }
	delayed := func(departs, arrives time.Time) Event {
		return FlightStatusChanged{FlightID: "LH8400-2026-11-26", Status: FlightStatusDelayed, EstimatedDepartsAt: departs, EstimatedArrivesAt: arrives}
	}
	status := func(s string) Event { return FlightStatusChanged{FlightID: "LH8400-2026-11-26", Status: s} }
	stored, err := DecodeEvent(FlightStatusChanged{}.EventType(),
		[]byte(`{"flightId":"LH8400-2026-11-26","status":"delayed","previous":"delayed","changedAt":"2026-11-26T07:00:00Z"}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		history []Event
		want    string // the estimated departure and arrival, "-" for none
	}{
		{"delayed with an estimate", []Event{lh8400Scheduled, delayed(at("10:00"), at("18:00"))}, "2026-11-26T10:00:00Z 2026-11-26T18:00:00Z"},
		{"delayed again, later", []Event{lh8400Scheduled, delayed(at("10:00"), at("18:00")), delayed(at("12:00"), time.Time{})}, "2026-11-26T12:00:00Z -"},
		{"delayed again, without an estimate", []Event{lh8400Scheduled, delayed(at("10:00"), at("18:00")), status(FlightStatusDelayed)}, "- -"},
		{"delayed again by an event stored without estimates", []Event{lh8400Scheduled, delayed(at("10:00"), at("18:00")), stored}, "- -"},
		{"delayed, then departed", []Event{lh8400Scheduled, delayed(at("10:00"), at("18:00")), status(FlightStatusDeparted)}, "- -"},
		{"delayed, then cancelled", []Event{lh8400Scheduled, delayed(at("10:00"), at("18:00")), status(FlightStatusCancelled)}, "- -"},
	}
	for _, tt := range tests {
		f := given(EvolveFlight, tt.history...)
		if got := timeOrDash(f.EstimatedDepartsAt) + " " + timeOrDash(f.EstimatedArrivesAt); got != tt.want {
			t.Errorf("%s: the flight estimates %s, want %s", tt.name, got, tt.want)
		}
	}
	// Stored, a change without an estimate carries none, as stored before.
	if b, _ := json.Marshal(status(FlightStatusDelayed)); strings.Contains(string(b), "estimated") {
		t.Errorf("a delay without an estimate is stored as %s", b)
	}
}

// A flight shows when its airline reported it departed and arrived; the
// departure of a webhook's event, evolved on the flight as it is later,
// shows it not arrived yet, and a delay not departed yet.
func TestAFlightShowsWhenItWasReportedDepartedAndArrived(t *testing.T) {
	at := func(clock string) time.Time { t, _ := time.Parse(time.RFC3339, "2026-11-26T"+clock+":00Z"); return t }
	moved := func(status string, clock string) FlightStatusChanged {
		return FlightStatusChanged{FlightID: "LH8400-2026-11-26", Status: status, ChangedAt: at(clock)}
	}
	departed, arrived := moved(FlightStatusDeparted, "08:10"), moved(FlightStatusArrived, "16:40")
	for _, tt := range []struct {
		name string
		f    Flight
		want string // departed and arrived, "-" for none
	}{
		{"scheduled", given(EvolveFlight, lh8400Scheduled), "- -"},
		{"delayed", given(EvolveFlight, lh8400Scheduled, moved(FlightStatusDelayed, "07:00")), "- -"},
		{"departed", given(EvolveFlight, lh8400Scheduled, departed), "2026-11-26T08:10:00Z -"},
		{"arrived", given(EvolveFlight, lh8400Scheduled, departed, arrived), "2026-11-26T08:10:00Z 2026-11-26T16:40:00Z"},
		{"the departure, on the flight arrived since", EvolveFlight(given(EvolveFlight, lh8400Scheduled, departed, arrived), departed),
			"2026-11-26T08:10:00Z -"},
		{"a delay, on the flight departed since", EvolveFlight(given(EvolveFlight, lh8400Scheduled, departed), moved(FlightStatusDelayed, "07:00")),
			"- -"},
		{"a delay, on the flight arrived since", EvolveFlight(given(EvolveFlight, lh8400Scheduled, departed, arrived), moved(FlightStatusDelayed, "07:00")),
			"- -"},
	} {
		if got := timeOrDash(tt.f.DepartedAt) + " " + timeOrDash(tt.f.ArrivedAt); got != tt.want {
			t.Errorf("%s: departed and arrived %s, want %s", tt.name, got, tt.want)
		}
	}
}

// lh8400Published is flight LH8400 of 2027-03-27 as its timetable gives it.
var lh8400Published = FlightScheduled{FlightID: "LH8400-2027-03-27", Carrier: "LH", AWBPrefix: "020", FlightNumber: "LH8400",
	Origin: "FRA", Destination: "JFK", DepartureDate: "2027-03-27", DepartureTime: "10:05", ArrivalDate: "2027-03-27",
	ArrivalTime: "12:55", AircraftType: "B77F", CapacityKg: 102000, CapacityM3: 650}

func TestDecideScheduleFlight(t *testing.T) {
	published := lh8400Published
	swapped := FlightAircraftChanged{FlightID: "LH8400-2027-03-27", AircraftType: "B744F", CapacityKg: 112000, CapacityM3: 700}
	tests := []struct {
		name    string
		history []Event
		change  func(e *FlightScheduled)
		want    string // the flight scheduled, "" for no change, or the error's code
	}{
		{"a new flight", nil, func(*FlightScheduled) {}, "LH8400-2027-03-27 FRA-JFK 102000 kg 650 m³"},
		{"the same schedule again", []Event{published}, func(*FlightScheduled) {}, ""},
		{"the same schedule, once delayed", []Event{published, FlightStatusChanged{Status: FlightStatusDelayed}}, func(*FlightScheduled) {}, ""},
		{"another departure time", []Event{published}, func(e *FlightScheduled) { e.DepartureTime = "11:05" }, "conflict"},
		{"another destination", []Event{published}, func(e *FlightScheduled) { e.Destination = "ORD" }, "conflict"},
		{"another arrival day", []Event{published}, func(e *FlightScheduled) { e.ArrivalDate = "2027-03-28" }, "conflict"},
		{"another aircraft", []Event{published}, func(e *FlightScheduled) { e.AircraftType = "B748" }, "conflict"},
		{"more capacity", []Event{published}, func(e *FlightScheduled) { e.CapacityKg = 110000 }, "conflict"},
		{"as published, once flown by another aircraft", []Event{published, swapped}, func(*FlightScheduled) {}, ""},
		{"with the aircraft that flies it now", []Event{published, swapped}, func(e *FlightScheduled) {
			e.AircraftType, e.CapacityKg, e.CapacityM3 = "B744F", 112000, 700
		}, ""},
		{"with a third aircraft", []Event{published, swapped}, func(e *FlightScheduled) { e.AircraftType = "B748F" }, "conflict"},
		{"another schedule, once flown by another aircraft", []Event{published, swapped}, func(e *FlightScheduled) { e.DepartureTime = "11:05" }, "conflict"},
	}
	for _, tt := range tests {
		e := published
		tt.change(&e)
		events, err := DecideScheduleFlight(given(EvolveFlight, tt.history...), e)
		got := outcomeOf(events, err, func(e FlightScheduled) string {
			return fmt.Sprintf("%s %s-%s %g kg %g m³", e.FlightID, e.Origin, e.Destination, e.CapacityKg, e.CapacityM3)
		})
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestAFlightPublishedAgainWithAnotherAircraftSaysWhatWasSentAgainstWhatIsOnRecord(t *testing.T) {
	published := lh8400Published
	downsized := FlightAircraftChanged{FlightID: "LH8400-2027-03-27", AircraftType: "B77W", CapacityKg: 1000, CapacityM3: 3.5}
	tests := []struct {
		name    string
		history []Event
		sent    func(e *FlightScheduled)
		want    string
	}{
		{"as published, another aircraft sent", []Event{published},
			func(e *FlightScheduled) { e.AircraftType, e.CapacityKg, e.CapacityM3 = "B748F", 134000, 858 },
			"flight LH8400-2027-03-27 is already scheduled with aircraft B77F, 102000 kg and 650 m³, not B748F, 134000 kg and 858 m³ as sent: " +
				"publishing it does not change its aircraft or capacity; PATCH /api/flights/LH8400-2027-03-27 does"},
		{"once its capacity changed, the type that flies it sent with its typical capacity", []Event{published, downsized},
			func(e *FlightScheduled) { e.AircraftType, e.CapacityKg, e.CapacityM3 = "B77W", 20000, 160 },
			"flight LH8400-2027-03-27 is already scheduled with aircraft B77W, 1000 kg and 3.5 m³ " +
				"(published with B77F, 102000 kg and 650 m³; either, sent again, changes nothing), not B77W, 20000 kg and 160 m³ as sent: " +
				"publishing it does not change its aircraft or capacity; PATCH /api/flights/LH8400-2027-03-27 does"},
	}
	for _, tt := range tests {
		e := published
		tt.sent(&e)
		_, err := DecideScheduleFlight(given(EvolveFlight, tt.history...), e)
		de, ok := errors.AsType[*Error](err)
		if !ok || de.Code != Conflict || de.Message != tt.want {
			t.Errorf("%s: %v, want conflict %q", tt.name, err, tt.want)
		}
	}
}

// Capacity of flight LH8400-2026-11-26: its schedule, and what bookings
// reserve and release of it.
var (
	lh8400Departs   = time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	lh8400Scheduled = FlightScheduled{FlightID: "LH8400-2026-11-26", DepartsAt: lh8400Departs, CapacityKg: 1000, CapacityM3: 10}
)

func reservedOnLH8400(bookingID string, kg, m3 float64) CapacityReserved {
	return CapacityReserved{FlightID: "LH8400-2026-11-26", BookingID: bookingID, WeightKg: kg, VolumeM3: m3}
}

func releasedOnLH8400(bookingID string, kg, m3 float64) CapacityReleased {
	return CapacityReleased{FlightID: "LH8400-2026-11-26", BookingID: bookingID, WeightKg: kg, VolumeM3: m3}
}

// tellCapacity names capacity reserved or released for a table.
func tellCapacity(e Event) string {
	switch e := e.(type) {
	case CapacityReserved:
		return fmt.Sprintf("reserved %s on %s: %g kg %g m³", e.BookingID, e.FlightID, e.WeightKg, e.VolumeM3)
	case CapacityReleased:
		return fmt.Sprintf("released %s on %s: %g kg %g m³", e.BookingID, e.FlightID, e.WeightKg, e.VolumeM3)
	}
	return e.EventType()
}

func TestDecideReserveCapacity(t *testing.T) {
	before := lh8400Departs.Add(-time.Hour)
	status := func(s string) Event { return FlightStatusChanged{FlightID: "LH8400-2026-11-26", Status: s} }
	tests := []struct {
		name    string
		history []Event
		r       Reservation
		now     time.Time
		want    string // what is reserved, "" for no change, or the error's code and reason
	}{
		{"room left", []Event{lh8400Scheduled}, Reservation{400, 4}, before, "reserved b1 on LH8400-2026-11-26: 400 kg 4 m³"},
		{"the last of the room", []Event{lh8400Scheduled, reservedOnLH8400("b0", 600, 6)}, Reservation{400, 4}, before,
			"reserved b1 on LH8400-2026-11-26: 400 kg 4 m³"},
		{"delayed", []Event{lh8400Scheduled, status(FlightStatusDelayed)}, Reservation{400, 4}, before,
			"reserved b1 on LH8400-2026-11-26: 400 kg 4 m³"},
		{"released, then reserved again", []Event{lh8400Scheduled, reservedOnLH8400("b1", 400, 4), releasedOnLH8400("b1", 400, 4)},
			Reservation{500, 5}, before, "reserved b1 on LH8400-2026-11-26: 500 kg 5 m³"},
		{"reserved already", []Event{lh8400Scheduled, reservedOnLH8400("b1", 400, 4)}, Reservation{400, 4}, before, ""},
		{"reserved already, and the flight gone", []Event{lh8400Scheduled, reservedOnLH8400("b1", 400, 4), status(FlightStatusDeparted)},
			Reservation{400, 4}, lh8400Departs, ""},
		{"a kilo too heavy", []Event{lh8400Scheduled, reservedOnLH8400("b0", 600, 6)}, Reservation{401, 4}, before, "conflict no_capacity"},
		{"too bulky", []Event{lh8400Scheduled, reservedOnLH8400("b0", 600, 6)}, Reservation{100, 4.5}, before, "conflict no_capacity"},
		{"cancelled", []Event{lh8400Scheduled, status(FlightStatusCancelled)}, Reservation{400, 4}, before, "conflict flight_closed"},
		{"departed", []Event{lh8400Scheduled, status(FlightStatusDeparted)}, Reservation{400, 4}, before, "conflict flight_closed"},
		{"at departure time", []Event{lh8400Scheduled}, Reservation{400, 4}, lh8400Departs, "conflict flight_closed"},
		{"no flight", nil, Reservation{400, 4}, before, "conflict unknown_flight"},
	}
	for _, tt := range tests {
		events, err := DecideReserveCapacity(given(EvolveFlight, tt.history...), "b1", tt.r, tt.now)
		if got := outcomeOf(events, err, tellCapacity); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestABookingRefusedForRoomIsToldWhatIsLeftAsItsForwarderSeesIt(t *testing.T) {
	before := lh8400Departs.Add(-time.Hour)
	// 1000 kg and 10 m³; another forwarder's booking took 333.3 kg and 2.4 m³.
	history := []Event{lh8400Scheduled, reservedOnLH8400("b0", 333.3, 2.4)}
	_, err := DecideReserveCapacity(given(EvolveFlight, history...), "b1", Reservation{700, 1}, before)
	want := "flight LH8400-2026-11-26 has not the room for 700 kg and 1 m³: 600 kg and 7 m³ are left (at least; rounded down, " +
		"as GET /api/capacity shows it to forwarders)"
	if e, ok := errors.AsType[*Error](err); !ok || e.Reason != ReasonNoCapacity || e.Message != want {
		t.Errorf("a booking of 700 kg on 666.7 kg left: %v, want no_capacity %q (666.7 kg would tell the other booking's 333.3 kg)", err, want)
	}
}

func TestDecideReleaseCapacity(t *testing.T) {
	tests := []struct {
		name    string
		history []Event
		want    string // what is released, or "" for no change
	}{
		{"held", []Event{lh8400Scheduled, reservedOnLH8400("b0", 100, 1), reservedOnLH8400("b1", 400, 4)},
			"released b1 on LH8400-2026-11-26: 400 kg 4 m³"},
		{"another booking's", []Event{lh8400Scheduled, reservedOnLH8400("b0", 100, 1)}, ""},
		{"released already", []Event{lh8400Scheduled, reservedOnLH8400("b1", 400, 4), releasedOnLH8400("b1", 400, 4)}, ""},
		{"no flight", nil, ""},
	}
	for _, tt := range tests {
		events, err := DecideReleaseCapacity(given(EvolveFlight, tt.history...), "b1")
		if got := outcomeOf(events, err, tellCapacity); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
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
		// 02:30 comes twice the night summer time ends: the first, in
		// summer time, on either side of Greenwich.
		{"at a time the clocks repeat, east of Greenwich", func(c *ScheduleFlight) {
			c.DepartureDate, c.DepartureTime, c.ArrivalDate, c.ArrivalTime = "2027-10-31", "02:30", "2027-10-31", "05:30"
		}, "2027-10-31T00:30:00Z"},
		{"at a time the clocks repeat, west of Greenwich", func(c *ScheduleFlight) {
			c.Origin, c.Destination = "JFK", "FRA"
			c.DepartureDate, c.DepartureTime, c.ArrivalDate, c.ArrivalTime = "2027-11-07", "01:30", "2027-11-07", "14:30"
		}, "2027-11-07T05:30:00Z"},
		// A UTC offset, as SSIM gives one beside each local time, names
		// which of the two it is.
		{"at a time the clocks repeat, at the offset of its second showing", func(c *ScheduleFlight) {
			c.DepartureDate, c.DepartureTime, c.ArrivalDate, c.ArrivalTime = "2027-10-31", "02:30", "2027-10-31", "05:30"
			c.DepartureUTCOffset = "+01:00"
		}, "2027-10-31T01:30:00Z"},
		{"at a time the clocks repeat, at the offset of its first showing", func(c *ScheduleFlight) {
			c.DepartureDate, c.DepartureTime, c.ArrivalDate, c.ArrivalTime = "2027-10-31", "02:30", "2027-10-31", "05:30"
			c.DepartureUTCOffset = "+02:00"
		}, "2027-10-31T00:30:00Z"},
		{"at a time the clocks repeat west of Greenwich, at the offset of its second showing", func(c *ScheduleFlight) {
			c.Origin, c.Destination = "JFK", "FRA"
			c.DepartureDate, c.DepartureTime, c.ArrivalDate, c.ArrivalTime = "2027-11-07", "01:30", "2027-11-07", "14:30"
			c.DepartureUTCOffset = "-05:00"
		}, "2027-11-07T06:30:00Z"},
		{"at a time the clocks repeat, at an offset its airport has neither time", func(c *ScheduleFlight) {
			c.DepartureDate, c.DepartureTime, c.ArrivalDate, c.ArrivalTime = "2027-10-31", "02:30", "2027-10-31", "05:30"
			c.DepartureUTCOffset = "+03:00"
		}, "MISMATCH departureUtcOffset"},
		{"at the offset of its airport, with white space", func(c *ScheduleFlight) { c.DepartureUTCOffset = " +01:00 " }, "2027-03-27T09:05:00Z"},
		{"at an offset its airport's clock does not have then", func(c *ScheduleFlight) { c.DepartureUTCOffset = "+02:00" }, "MISMATCH departureUtcOffset"},
		{"at an offset that is no offset", func(c *ScheduleFlight) { c.DepartureUTCOffset = "+1" }, "INVALID_FORMAT departureUtcOffset"},
		{"at an offset of no clock", func(c *ScheduleFlight) { c.DepartureUTCOffset = "+25:00" }, "INVALID_FORMAT departureUtcOffset"},
		{"arriving at an offset its airport's clock does not have then (New York is in summer time)", func(c *ScheduleFlight) { c.ArrivalUTCOffset = "-05:00" }, "MISMATCH arrivalUtcOffset"},
		{"a few days late", func(c *ScheduleFlight) { c.DepartureDate, c.ArrivalDate = "2026-11-20", "2026-11-20" }, "2026-11-20T09:05:00Z"},
		{"long past", func(c *ScheduleFlight) { c.DepartureDate, c.ArrivalDate = "2020-01-01", "2020-01-01" }, "INVALID_DATE departureDate"},
		{"years ahead", func(c *ScheduleFlight) { c.DepartureDate, c.ArrivalDate = "9999-12-31", "9999-12-31" }, "INVALID_DATE departureDate"},
		{"no such zone's airport", func(c *ScheduleFlight) { c.Destination = "XXX" }, "UNKNOWN_AIRPORT destination"},
		{"to where it starts", func(c *ScheduleFlight) { c.Destination = "FRA" }, "INVALID_VALUE destination"},
		{"a freighter variant in lower case", func(c *ScheduleFlight) { c.AircraftType = "b748f" }, "2027-03-27T09:05:00Z"},
		{"an aircraft type no timetable prints", func(c *ScheduleFlight) { c.AircraftType = "B77F; DROP" }, "INVALID_FORMAT aircraftType"},
		{"an aircraft type of a page", func(c *ScheduleFlight) { c.AircraftType = strings.Repeat("B", 9) }, "INVALID_FORMAT aircraftType"},
		{"codes with white space around them, in lower case", func(c *ScheduleFlight) {
			c.FlightNumber, c.Origin, c.Destination, c.AircraftType = " lh 8400 ", " fra", "jfk ", "\tb77f "
		}, "2027-03-27T09:05:00Z"},
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

// A schedule whose arrival is not after its departure says when its local
// times are in UTC, and which of them comes twice and was taken as the
// first: its local times in order, the sender had no way to tell why.
func TestAScheduleArrivingBeforeItsDepartureSaysWhenItsLocalTimesAreInUTC(t *testing.T) {
	tests := []struct {
		name                                   string
		depDate, depTime, arrDate, arrTime, to string
		want                                   string // the first problem, as statusChangeOutcome writes it
	}{
		{"west across five hours of zones", "2027-03-27", "10:00", "2027-03-27", "03:30", "JFK",
			"INVALID_VALUE arrivalTime: the arrival must be after the departure (both local times: in UTC it departs at " +
				"2027-03-27T09:00:00Z and arrives at 2027-03-27T07:30:00Z)"},
		{"into the hour the clocks show twice", "2027-10-31", "02:30", "2027-10-31", "01:25", "LHR",
			"INVALID_VALUE arrivalTime: the arrival must be after the departure (both local times: in UTC it departs at " +
				"2027-10-31T00:30:00Z and arrives at 2027-10-31T00:25:00Z; 02:30 comes twice on 2027-10-31 in Europe/Berlin and " +
				"is taken as the first, in summer time (departureUtcOffset names the other); 01:25 comes twice on 2027-10-31 in Europe/London and " +
				"is taken as the first, in summer time (arrivalUtcOffset names the other))"},
		{"into the hour the clocks show twice, at the offset of its second showing", "2027-10-31", "02:30", "2027-10-31", "01:25", "LHR",
			"INVALID_VALUE arrivalTime: the arrival must be after the departure (both local times: in UTC it departs at " +
				"2027-10-31T01:30:00Z and arrives at 2027-10-31T00:25:00Z; 01:25 comes twice on 2027-10-31 in Europe/London and " +
				"is taken as the first, in summer time (arrivalUtcOffset names the other))"},
		{"longer than any cargo flight", "2027-03-27", "10:00", "2027-03-28", "09:00", "JFK",
			"INVALID_VALUE arrivalTime: must be at most 22 hours after the departure (both local times: in UTC it departs at " +
				"2027-03-27T09:00:00Z and arrives at 2027-03-28T13:00:00Z): no cargo flight lasts longer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ScheduleFlight{Carrier: "LH", AWBPrefix: "020", FlightNumber: "LH8400", Origin: "FRA", Destination: tt.to,
				DepartureDate: tt.depDate, DepartureTime: tt.depTime, ArrivalDate: tt.arrDate, ArrivalTime: tt.arrTime,
				AircraftType: "B77F", At: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)}
			if strings.Contains(tt.name, "second showing") {
				c.DepartureUTCOffset = "+01:00"
			}
			_, err := c.Normalise("", zonedAirports{})
			if got := statusChangeOutcome(nil, err); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// A flight that lands in the hour the clocks show twice, in its second
// showing, is published with the arrival's UTC offset, and is that flight
// from then on: its arrival, and a timetable sent again with or without
// the offset; sent at the other offset, it is another schedule.
func TestAFlightLandingInTheHourShownTwiceLandsAtTheOffsetItWasGiven(t *testing.T) {
	// LHR 01:30 BST to FRA 02:15 CET: 45 minutes, landing once the
	// clocks in Frankfurt have gone back.
	c := ScheduleFlight{Carrier: "LH", AWBPrefix: "020", FlightNumber: "LH4711", Origin: "LHR", Destination: "FRA",
		DepartureDate: "2027-10-31", DepartureTime: "01:30", ArrivalDate: "2027-10-31", ArrivalTime: "02:15",
		AircraftType: "B77F", At: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)}
	if _, err := c.Normalise("", zonedAirports{}); problemOf(err) != "INVALID_VALUE arrivalTime" {
		t.Fatalf("without an offset: %v, want the arrival refused as before the departure (in summer time, 00:15 UTC)", err)
	}
	c.ArrivalUTCOffset = "+02:30"
	want := "MISMATCH arrivalUtcOffset: is +02:30, but 02:15 on 2027-10-31 in Europe/Berlin is at UTC+02:00 or UTC+01:00"
	if _, err := c.Normalise("", zonedAirports{}); statusChangeOutcome(nil, err) != want {
		t.Errorf("at an offset Frankfurt has not then: %s, want %s", statusChangeOutcome(nil, err), want)
	}
	c.ArrivalUTCOffset = "+01:00"
	e, err := c.Normalise("", zonedAirports{})
	if err != nil {
		t.Fatal(err)
	}
	f := given(EvolveFlight, e)
	if got := f.ArrivesAt().Format(time.RFC3339); got != "2027-10-31T01:15:00Z" {
		t.Errorf("arrives at %s, want 2027-10-31T01:15:00Z", got)
	}
	for _, tt := range []struct {
		name, offset string
		want         string // "" for no change, or the error's code
	}{
		{"sent again at its offset", "+01:00", ""},
		{"sent again without one", "", ""},
		{"sent again at the other", "+02:00", "conflict"},
	} {
		again := e
		again.ArrivalUTCOffset = tt.offset
		events, err := DecideScheduleFlight(f, again)
		if got := outcomeOf(events, err, func(FlightScheduled) string { return "scheduled" }); got != tt.want {
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
	for in, want := range map[string]string{"LH0084-2026-11-26": "LH84-2026-11-26", "lh84-2026-11-26": "LH84-2026-11-26", "nodate": "nodate",
		" LH 84-2026-11-26 ": "LH84-2026-11-26"} {
		if got := CanonicalFlightID(in); got != want {
			t.Errorf("flight id %q = %q, want %q", in, got, want)
		}
	}
}

func TestWhatIsLeftOfAFlightIsExactOnlyToThoseWhoSeeItsLoad(t *testing.T) {
	open := Flight{ID: "LH8400-2026-11-26", Carrier: "LH", Status: FlightStatusScheduled, DepartsAt: lh8400Departs, CapacityKg: 10000, CapacityM3: 60,
		ReservedKg: 1350.5, ReservedM3: 7.92, ActualKg: 1200, ActualM3: 8.25}
	closed := open
	closed.Status = FlightStatusDeparted
	lh := Principal{OrganizationID: "lh", Role: RoleAirline, AirlineCode: "LH"}
	ek := Principal{OrganizationID: "ek", Role: RoleAirline, AirlineCode: "EK"}
	fwd := Principal{OrganizationID: "f1", Role: RoleForwarder}
	admin := Principal{OrganizationID: "ops", Role: RoleAdmin}
	tests := []struct {
		name     string
		flight   Flight
		p        Principal
		kg, m3   float64
		seesLoad bool
	}{
		{"the flight's airline, to the gram and the litre", open, lh, 8649.5, 51.75, true},
		{"an admin, to the gram and the litre", open, admin, 8649.5, 51.75, true},
		{"a forwarder, in steps of 100 kg and 1 m³", open, fwd, 8600, 51, false},
		{"another airline, in steps too", open, ek, 8600, 51, false},
		{"nobody, on a flight that takes no more bookings", closed, lh, 0, 0, true},
		{"a full flight is full to everyone", Flight{Carrier: "LH", Status: FlightStatusScheduled, DepartsAt: lh8400Departs, CapacityKg: 1000, CapacityM3: 6, ReservedKg: 1000, ReservedM3: 6.5}, fwd, 0, 0, false},
	}
	for _, tt := range tests {
		kg, m3 := tt.flight.Available(tt.p, lh8400Departs.Add(-time.Hour))
		if kg != tt.kg || m3 != tt.m3 || tt.flight.LoadVisibleTo(tt.p) != tt.seesLoad {
			t.Errorf("%s: %v kg, %v m³, load visible %v; want %v kg, %v m³, %v", tt.name, kg, m3, tt.flight.LoadVisibleTo(tt.p), tt.kg, tt.m3, tt.seesLoad)
		}
	}
}

// smallLH8400 is a flight of 1000 kg and 10 m³, and lh8400Rates a rate
// card for its route, for the tests of what is left to book.
var (
	smallLH8400 = FlightScheduled{FlightID: "LH8400-2026-11-26", Carrier: "LH", FlightNumber: "LH8400", Origin: "FRA", Destination: "JFK",
		DepartureDate: "2026-11-26", DepartsAt: lh8400Departs, CapacityKg: 1000, CapacityM3: 10}
	lh8400Rates = RateCard{Carrier: "LH", Origin: "FRA", Destination: "JFK", Currency: "EUR", Breaks: []RateBreak{{0, 2.5}},
		ValidFrom: "2026-01-01", ValidTo: "2026-12-31"}
)

// What GET /api/capacity shows left of a flight (to the litre, to those
// who see its load) is what the flight takes: a booking of exactly that
// much is confirmed, and pricing offers the flight for it. The sums of
// reservations and releases carry float noise (6.9 reserved after 1.3
// and 6.9, less 1.3, is 6.900000000000001), which the capacity shown
// rounds away.
func TestAFlightTakesABookingOfWhatItShowsLeft(t *testing.T) {
	admin := Principal{OrganizationID: "ops", Role: RoleAdmin}
	before := lh8400Departs.Add(-time.Hour)
	flight, card := smallLH8400, lh8400Rates
	tests := []struct {
		name    string
		history []Event
		kg, m3  float64 // what is shown left
	}{
		{"a booking cancelled beside another", []Event{flight, reservedOnLH8400("b0", 100, 1.3), reservedOnLH8400("b1", 300, 6.9),
			releasedOnLH8400("b0", 100, 1.3)}, 700, 3.1},
		{"two bookings", []Event{flight, reservedOnLH8400("b0", 100, 0.05), reservedOnLH8400("b1", 300, 7.98)}, 600, 1.97},
		{"no booking", []Event{flight}, 1000, 10},
	}
	for _, tt := range tests {
		f := given(EvolveFlight, tt.history...)
		if kg, m3 := f.Available(admin, before); kg != tt.kg || m3 != tt.m3 {
			t.Fatalf("%s: %v kg and %v m³ shown left, want %v and %v", tt.name, kg, m3, tt.kg, tt.m3)
		}
		events, err := DecideReserveCapacity(f, "b2", Reservation{tt.kg, tt.m3}, before)
		if got, want := outcomeOf(events, err, tellCapacity), fmt.Sprintf("reserved b2 on LH8400-2026-11-26: %g kg %g m³", tt.kg, tt.m3); got != want {
			t.Errorf("%s: booking what is shown left = %q, want %q", tt.name, got, want)
		}
		q := Quote{Origin: "FRA", Destination: "JFK", WeightKg: tt.kg, VolumeM3: tt.m3, ChargeableWeightKg: tt.kg}
		if _, err := PriceQuote(q, nil, []Flight{f}, []RateCard{card}, before.Add(-24*time.Hour)); err != nil {
			t.Errorf("%s: pricing what is shown left: %v", tt.name, err)
		}
	}
}

// A flight whose manifest put more on board than its bookings hold shows
// what is left of the larger (Available), and takes no booking of more:
// the cargo on board takes the room, booked or not.
func TestAFlightRefusesABookingOfMoreThanItShowsLeft(t *testing.T) {
	admin := Principal{OrganizationID: "ops", Role: RoleAdmin}
	before := lh8400Departs.Add(-time.Hour)
	flight, card := smallLH8400, lh8400Rates
	manifest := func(kg, m3 float64) ManifestSubmitted {
		return ManifestSubmitted{ManifestID: "m1", FlightID: "LH8400-2026-11-26", Shipments: []Load{{AWBNumber: "020-12345675", Pieces: 10, WeightKg: 600, VolumeM3: 6}},
			TotalPieces: 10, TotalWeightKg: kg, TotalVolumeM3: m3}
	}
	offload := OffloadReported{FlightID: "LH8400-2026-11-26", AWBNumber: "020-12345675", Pieces: 10, WeightKg: 600, VolumeM3: 6}
	tests := []struct {
		name    string
		history []Event
		kg, m3  float64 // what is shown left
	}{
		{"weighed heavier than booked", []Event{flight, reservedOnLH8400("b0", 600, 6), manifest(900, 6)}, 100, 4},
		{"bulkier than booked", []Event{flight, reservedOnLH8400("b0", 600, 6), manifest(600, 9.5)}, 400, 0.5},
		{"manifested as booked", []Event{flight, reservedOnLH8400("b0", 600, 6), manifest(600, 6)}, 400, 4},
		{"heavier, then offloaded", []Event{flight, reservedOnLH8400("b0", 600, 6), manifest(900, 6), offload}, 400, 4},
	}
	for _, tt := range tests {
		f := given(EvolveFlight, tt.history...)
		if kg, m3 := f.Available(admin, before); kg != tt.kg || m3 != tt.m3 {
			t.Fatalf("%s: %v kg and %v m³ shown left, want %v and %v", tt.name, kg, m3, tt.kg, tt.m3)
		}
		for _, r := range []Reservation{{tt.kg + 1, tt.m3}, {tt.kg, tt.m3 + 0.01}} {
			events, err := DecideReserveCapacity(f, "b2", r, before)
			if got := outcomeOf(events, err, tellCapacity); got != "conflict no_capacity" {
				t.Errorf("%s: booking %g kg %g m³ = %q, want conflict no_capacity", tt.name, r.WeightKg, r.VolumeM3, got)
			}
			q := Quote{Origin: "FRA", Destination: "JFK", WeightKg: r.WeightKg, VolumeM3: r.VolumeM3, ChargeableWeightKg: r.WeightKg}
			if _, err := PriceQuote(q, nil, []Flight{f}, []RateCard{card}, before.Add(-24*time.Hour)); ReasonOf(err) != ReasonNoCapacity {
				t.Errorf("%s: pricing %g kg %g m³: %v, want no_capacity", tt.name, r.WeightKg, r.VolumeM3, err)
			}
		}
		events, err := DecideReserveCapacity(f, "b2", Reservation{tt.kg, tt.m3}, before)
		if got, want := outcomeOf(events, err, tellCapacity), fmt.Sprintf("reserved b2 on LH8400-2026-11-26: %g kg %g m³", tt.kg, tt.m3); got != want {
			t.Errorf("%s: booking what is shown left = %q, want %q", tt.name, got, want)
		}
	}
}

// A flight takes no booking at or past its scheduled departure, or the
// later one its delay estimates, whatever its status says (a delayed
// flight, or one its airline has not marked departed yet): what GET
// /api/capacity shows left of it is then nothing, as of a cancelled or
// departed flight. Before it, what is shown left can be booked. ClosedAt,
// what a quote's price option shows of its flight, says the same.
func TestAFlightPastItsDepartureShowsNothingLeftToBook(t *testing.T) {
	admin := Principal{OrganizationID: "ops", Role: RoleAdmin}
	fwd := Principal{OrganizationID: "f1", Role: RoleForwarder}
	status := func(s string) Event { return FlightStatusChanged{FlightID: "LH8400-2026-11-26", Status: s} }
	delayedBy := func(d time.Duration) Event {
		return FlightStatusChanged{FlightID: "LH8400-2026-11-26", Status: FlightStatusDelayed, EstimatedDepartsAt: lh8400Departs.Add(d)}
	}
	tests := []struct {
		name    string
		history []Event
		now     time.Time
		open    bool
	}{
		{"scheduled, an hour before departure", []Event{lh8400Scheduled}, lh8400Departs.Add(-time.Hour), true},
		{"scheduled, at its departure time", []Event{lh8400Scheduled}, lh8400Departs, false},
		{"scheduled, an hour after departure and not marked departed", []Event{lh8400Scheduled}, lh8400Departs.Add(time.Hour), false},
		{"delayed, an hour before departure", []Event{lh8400Scheduled, status(FlightStatusDelayed)}, lh8400Departs.Add(-time.Hour), true},
		{"delayed, an hour after its scheduled departure", []Event{lh8400Scheduled, status(FlightStatusDelayed)}, lh8400Departs.Add(time.Hour), false},
		{"delayed by three hours, an hour after its scheduled departure", []Event{lh8400Scheduled, delayedBy(3 * time.Hour)}, lh8400Departs.Add(time.Hour), true},
		{"delayed by three hours, at its estimated departure", []Event{lh8400Scheduled, delayedBy(3 * time.Hour)}, lh8400Departs.Add(3 * time.Hour), false},
		{"delayed by three hours, then again without an estimate, an hour after its scheduled departure",
			[]Event{lh8400Scheduled, delayedBy(3 * time.Hour), status(FlightStatusDelayed)}, lh8400Departs.Add(time.Hour), false},
		{"departed early", []Event{lh8400Scheduled, status(FlightStatusDeparted)}, lh8400Departs.Add(-time.Hour), false},
		{"cancelled", []Event{lh8400Scheduled, status(FlightStatusCancelled)}, lh8400Departs.Add(-time.Hour), false},
		{"arrived early", []Event{lh8400Scheduled, status(FlightStatusDeparted), status(FlightStatusArrived)}, lh8400Departs.Add(-time.Hour), false},
	}
	for _, tt := range tests {
		f := given(EvolveFlight, tt.history...)
		if closed := f.ClosedAt(tt.now); closed == tt.open {
			t.Errorf("%s: closed %v, want open %v", tt.name, closed, tt.open)
		}
		kg, m3 := f.Available(admin, tt.now)
		seen, _ := f.Available(fwd, tt.now)
		events, err := DecideReserveCapacity(f, "b1", Reservation{100, 1}, tt.now)
		booked := err == nil && len(events) == 1
		if booked != tt.open || (kg > 0 && m3 > 0) != tt.open || (seen > 0) != tt.open {
			t.Errorf("%s: shown left %v kg %v m³ (%v kg to a forwarder), a booking of 100 kg 1 m³: %v; want open %v",
				tt.name, kg, m3, seen, err, tt.open)
		}
	}
	// A booking refused names the departure that closed the flight.
	delayed := given(EvolveFlight, lh8400Scheduled, delayedBy(3*time.Hour))
	want := "conflict: flight LH8400-2026-11-26 reached the departure time its delay estimates, 2026-11-26T11:00:00Z: it takes no more bookings"
	if _, err := DecideReserveCapacity(delayed, "b1", Reservation{100, 1}, lh8400Departs.Add(4*time.Hour)); problemOf(err) != "conflict flight_closed" || err.Error() != want {
		t.Errorf("a booking after the estimated departure = %v (%s), want flight_closed: %s", err, problemOf(err), want)
	}
}

func TestAFlightsArrivalInUTCIsItsLocalArrivalAtTheDestination(t *testing.T) {
	tests := []struct {
		name              string
		date, clock, zone string
		want              string // RFC 3339; "" for the zero time
	}{
		{"New York in winter, five hours behind", "2026-11-28", "14:05", "America/New_York", "2026-11-28T19:05:00Z"},
		{"New York in summer, four hours behind", "2026-07-01", "14:05", "America/New_York", "2026-07-01T18:05:00Z"},
		{"Auckland, the day before in UTC", "2026-11-29", "06:30", "Pacific/Auckland", "2026-11-28T17:30:00Z"},
		{"Kolkata, half an hour off", "2026-11-28", "00:15", "Asia/Kolkata", "2026-11-27T18:45:00Z"},
		{"a time zone this server does not know", "2026-11-28", "14:05", "Mars/Olympus_Mons", ""},
		{"no time zone", "2026-11-28", "14:05", "", ""},
	}
	for _, tt := range tests {
		f := Flight{ArrivalDate: tt.date, ArrivalTime: tt.clock, DestinationZone: tt.zone}
		got := ""
		if at := f.ArrivesAt(); !at.IsZero() {
			got = at.Format(time.RFC3339)
		}
		if got != tt.want {
			t.Errorf("%s: ArrivesAt = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// A flight's status change is told to its airline and to the forwarders
// with a booking on it not rejected, of the bookings they may see, and to
// a forwarder with the ids of its own bookings alone, which are listed
// for a forwarder alone.
func TestAFlightStatusIsToldToItsAirlineAndTheForwardersBookedOnIt(t *testing.T) {
	lh8400 := Flight{ID: "LH8400-2026-11-26", Carrier: "LH", Status: FlightStatusCancelled}
	booking := func(id, org, status string) Booking {
		return Booking{ID: id, OrganizationID: org, FlightID: lh8400.ID, Status: status}
	}
	onIt := []Booking{booking("b1", "f1", BookingStatusConfirmed), booking("b2", "f2", BookingStatusConfirmed),
		booking("b3", "f1", BookingStatusCancelled), booking("b4", "f3", BookingStatusRejected),
		booking("b5", "f4", BookingStatusPending), {ID: "b6", OrganizationID: "f5", FlightID: "LH8400-2026-11-27", Status: BookingStatusConfirmed}}
	forwarder := func(org string) Principal { return Principal{OrganizationID: org, Role: RoleForwarder} }
	tests := []struct {
		name string
		f    Flight
		p    Principal
		want string // the bookings named, or "not told"
	}{
		{"its airline", lh8400, Principal{OrganizationID: "lh", Role: RoleAirline, AirlineCode: "LH"}, "[]"},
		{"another airline", lh8400, Principal{OrganizationID: "ek", Role: RoleAirline, AirlineCode: "EK"}, "not told"},
		{"a forwarder, with its booking confirmed and the one its cancellation cancelled", lh8400, forwarder("f1"), "[b1 b3]"},
		{"a forwarder with a booking pending", lh8400, forwarder("f4"), "[b5]"},
		{"a forwarder whose booking was rejected", lh8400, forwarder("f3"), "not told"},
		{"a forwarder with a booking on the next day's flight", lh8400, forwarder("f5"), "not told"},
		{"a forwarder with no booking", lh8400, forwarder("f9"), "not told"},
		{"an admin", lh8400, Principal{OrganizationID: "ops", Role: RoleAdmin}, "not told"},
		{"the airline of a flight not scheduled", Flight{}, Principal{OrganizationID: "lh", Role: RoleAirline, AirlineCode: "LH"}, "not told"},
	}
	for _, tt := range tests {
		listed := false
		ids, told := tt.f.StatusToldTo(tt.p, func() []Booking { listed = true; return onIt })
		if listed != (tt.p.Role == RoleForwarder) {
			t.Errorf("%s: the bookings on the flight listed: %v, want them listed for a forwarder alone", tt.name, listed)
		}
		got := "not told"
		if told {
			got = fmt.Sprint(ids)
		}
		if got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestValidFlightID(t *testing.T) {
	for _, tt := range []struct {
		id   string
		want bool
	}{
		{"LH8400-2026-11-26", true},
		{"LH84-2026-11-26", true},
		{"4U1-2026-11-26", true},
		{"garbage", false},
		{"LH8400", false},
		{"LH8400-2026-02-30", false},
		{"LH8400-26-11-26", false},
		{"L-2026-11-26", false},
		{"LH8400-2026-11-26-x", false},
	} {
		if got := ValidFlightID(tt.id); got != tt.want {
			t.Errorf("ValidFlightID(%q) = %v, want %v", tt.id, got, tt.want)
		}
	}
}
