package domain

import (
	"cmp"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestDecideRecordStatus(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	base := func() RecordStatus {
		return RecordStatus{AWBNumber: "020-00000011", EventType: "rcs", EventDate: "2026-11-25T10:00:00Z", Location: "fra", At: now}
	}
	tests := []struct {
		name   string
		change func(c *RecordStatus)
		want   string // the XFSU code recorded, or the first problem's code and field
	}{
		{"received", func(*RecordStatus) {}, "RCS"},
		{"offloaded, qualifier in the type", func(c *RecordStatus) { c.EventType, c.EventDate = "DIS/OFLD", "2026-11-25T10:00:00+01:00" }, "DIS_OFLD"},
		{"within the clock tolerance", func(c *RecordStatus) {
			c.EventType, c.DiscrepancyCode, c.EventDate = "DIS", "msca", "2026-11-25T12:10:00Z"
		}, "DIS_MSCA"},
		{"with pieces and weight", func(c *RecordStatus) { c.Pieces, c.Weight = new(0), new(12.5) }, "RCS"},
		{"no type", func(c *RecordStatus) { c.EventType = " " }, "REQUIRED eventType"},
		{"unknown type", func(c *RecordStatus) { c.EventType = "LOST" }, "INVALID_EVENT_TYPE eventType"},
		{"discrepancy without code", func(c *RecordStatus) { c.EventType = "DIS" }, "INVALID_EVENT_TYPE discrepancyCode"},
		{"discrepancy with unknown code", func(c *RecordStatus) { c.EventType = "DIS/LOST" }, "INVALID_EVENT_TYPE eventType"},
		{"qualifier on arrival", func(c *RecordStatus) { c.EventType, c.DiscrepancyCode = "ARR", "OFLD" }, "INVALID_EVENT_TYPE discrepancyCode"},
		{"no location", func(c *RecordStatus) { c.Location = "" }, "REQUIRED location"},
		{"location not a code", func(c *RecordStatus) { c.Location = "Frankfurt" }, "INVALID_FORMAT location"},
		{"unknown location", func(c *RecordStatus) { c.Location = "XXX" }, "UNKNOWN_AIRPORT location"},
		{"no date", func(c *RecordStatus) { c.EventDate = "" }, "REQUIRED eventDate"},
		{"future", func(c *RecordStatus) { c.EventDate = "2026-11-25T13:00:00Z" }, "INVALID_DATE eventDate"},
		{"not a date", func(c *RecordStatus) { c.EventDate = "yesterday" }, "INVALID_DATE eventDate"},
		{"to the nanosecond", func(c *RecordStatus) { c.EventDate = "2026-11-25T10:00:00.123456789Z" }, "RCS"},
		{"finer than a nanosecond", func(c *RecordStatus) { c.EventDate = "2026-11-25T10:00:00.1234567890Z" }, "INVALID_DATE eventDate"},
		{"a fraction after a comma", func(c *RecordStatus) { c.EventDate = "2026-11-25T10:00:00,5Z" }, "INVALID_DATE eventDate"},
		{"a one-digit hour", func(c *RecordStatus) { c.EventDate = "2026-11-25T9:00:00Z" }, "INVALID_DATE eventDate"},
		{"zero date", func(c *RecordStatus) { c.EventDate = "0001-01-01T00:00:00Z" }, "INVALID_DATE eventDate"},
		{"more than a year ago", func(c *RecordStatus) { c.EventDate = "2025-11-24T10:00:00Z" }, "INVALID_DATE eventDate"},
		{"a year ago to the second", func(c *RecordStatus) { c.EventDate = "2025-11-25T12:00:00Z" }, "RCS"},
		{"a year and a second ago", func(c *RecordStatus) { c.EventDate = "2025-11-25T11:59:59Z" }, "INVALID_DATE eventDate"},
		{"a year and a day ago, written with an offset", func(c *RecordStatus) { c.EventDate = "2025-11-25T01:00:00+14:00" }, "INVALID_DATE eventDate"},
		{"15 minutes ahead to the second", func(c *RecordStatus) { c.EventDate = "2026-11-25T12:15:00Z" }, "RCS"},
		{"15 minutes and a second ahead", func(c *RecordStatus) { c.EventDate = "2026-11-25T12:15:01Z" }, "INVALID_DATE eventDate"},
		{"qualifier and code disagree", func(c *RecordStatus) { c.EventType, c.DiscrepancyCode = "DIS/OFLD", "MSCA" }, "MISMATCH discrepancyCode"},
		{"qualifier and code agree", func(c *RecordStatus) { c.EventType, c.DiscrepancyCode = "DIS/OFLD", "ofld" }, "DIS_OFLD"},
		{"negative pieces", func(c *RecordStatus) { c.Pieces = new(-1) }, "INVALID_RANGE pieces"},
		{"negative weight", func(c *RecordStatus) { c.Weight = new(-0.5) }, "INVALID_RANGE weight"},
		{"all the pieces the shipment has", func(c *RecordStatus) { c.Pieces, c.Declared.Pieces = new(2), 2 }, "RCS"},
		{"more pieces than the shipment has", func(c *RecordStatus) { c.EventType, c.Pieces, c.Declared.Pieces = "NFD", new(5), 2 }, "EXCEEDS_SHIPMENT pieces"},
		{"any pieces of a shipment of no known size", func(c *RecordStatus) { c.Pieces = new(5) }, "RCS"},
		{"notes too long", func(c *RecordStatus) { c.Notes = strings.Repeat("x", 2001) }, "TOO_LONG notes"},
	}
	for _, tt := range tests {
		c := base()
		tt.change(&c)
		events, _, err := DecideRecordStatus(Shipment{}, c, knownAirports{})
		if err != nil {
			if got := problemOf(err); got != tt.want {
				t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
			}
			continue
		}
		e := events[0].(ShipmentStatusRecorded)
		if e.XFSUCode() != tt.want || e.Location != "FRA" || e.EventDate.Location() != time.UTC {
			t.Errorf("%s = %+v, want %s", tt.name, e, tt.want)
		}
	}
}

// A status's or a screening's date may be a year old, as the calendar
// counts it, and no older; on 29 February a year ago is the 28th.
func TestADateMayBeAYearOldAsTheCalendarCountsIt(t *testing.T) {
	for _, tt := range []struct {
		name, now, date string
		refused         bool
	}{
		{"a year ago to the second", "2026-11-25T12:00:00Z", "2025-11-25T12:00:00Z", false},
		{"a year and a second ago", "2026-11-25T12:00:00Z", "2025-11-25T11:59:59Z", true},
		{"a year after a 29 February, its 28th", "2029-02-28T12:00:00Z", "2028-02-28T12:00:00Z", false},
		{"a year after a 29 February, its 29th", "2029-02-28T12:00:00Z", "2028-02-29T12:00:00Z", false},
		{"on a 29 February, the 28th a year before", "2028-02-29T12:00:00Z", "2027-02-28T12:00:00Z", false},
		{"on a 29 February, the 1st of March a year before", "2028-02-29T12:00:00Z", "2027-03-01T11:00:00Z", false},
		{"on a 29 February, the 27th a year before", "2028-02-29T12:00:00Z", "2027-02-27T12:00:00Z", true},
		{"on 1 March after a 29 February, the 1st a year before", "2028-03-01T12:00:00Z", "2027-03-01T12:00:00Z", false},
		{"on 1 March after a 29 February, the 28th a year before", "2028-03-01T12:00:00Z", "2027-02-28T12:00:00Z", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			now, _ := time.Parse(time.RFC3339, tt.now)
			var p Problems
			pastDateTime(&p, "eventDate", tt.date, now)
			if refused := len(p) > 0; refused != tt.refused {
				t.Errorf("%s at %s: %v, want refused: %v", tt.date, tt.now, p, tt.refused)
			}
		})
	}
}

// A discrepancy code missing, unknown or on another status than DIS is
// told on the field that sent it (eventType as DIS/LOST, or
// discrepancyCode), and an unknown one by name.
func TestADiscrepancyCodesProblemIsToldOnTheFieldThatSentIt(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		eventType, discrepancyCode string
		want                       string // the first problem's field and message
	}{
		{"DIS", "", "discrepancyCode: a DIS event needs a discrepancy code (OFLD, MSCA, FDCA, …)"},
		{"DIS/XXXX", "", `eventType: "XXXX" is no discrepancy code of a DIS event (OFLD, MSCA, FDCA, …)`},
		{"DIS/OFLD/MSCA", "", `eventType: "OFLD/MSCA" is no discrepancy code of a DIS event (OFLD, MSCA, FDCA, …)`},
		{"DIS", "abcd", `discrepancyCode: "ABCD" is no discrepancy code of a DIS event (OFLD, MSCA, FDCA, …)`},
		{"ARR/OFLD", "", "eventType: only a DIS event takes a discrepancy code"},
		{"ARR", "OFLD", "discrepancyCode: only a DIS event takes a discrepancy code"},
	} {
		c := RecordStatus{AWBNumber: "020-00000011", EventType: tt.eventType, DiscrepancyCode: tt.discrepancyCode,
			EventDate: "2026-11-25T10:00:00Z", Location: "FRA", At: at}
		_, _, err := DecideRecordStatus(Shipment{}, c, knownAirports{})
		got := fmt.Sprint(err)
		if e, ok := err.(*Error); ok && len(e.Fields) > 0 {
			got = e.Fields[0].Field + ": " + e.Fields[0].Message
		}
		if got != tt.want {
			t.Errorf("%s %s: %s, want %s", tt.eventType, tt.discrepancyCode, got, tt.want)
		}
	}
}

// A shipment is as its air waybill declares it, else as its confirmed
// booking does; a booking cancelled or not yet confirmed declares nothing.
// A message names which declared it.
func TestDeclared(t *testing.T) {
	booking := func(status string) Booking {
		return Booking{Status: status, Pieces: 3, WeightKg: 300, VolumeM3: 1.5}
	}
	mawb := &MAWBCreated{Pieces: 2, WeightKg: 250, VolumeM3: 1}
	for _, tt := range []struct {
		name    string
		booking Booking
		mawb    *MAWBCreated
		want    Declaration
	}{
		{"the MAWB over the booking", booking(BookingStatusConfirmed), mawb, Declaration{Load{"020-00000011", 2, 250, 1}, "its MAWB"}},
		{"the MAWB alone", Booking{}, mawb, Declaration{Load{"020-00000011", 2, 250, 1}, "its MAWB"}},
		{"the confirmed booking", booking(BookingStatusConfirmed), nil, Declaration{Load{"020-00000011", 3, 300, 1.5}, "its confirmed booking"}},
		{"a cancelled booking declares nothing", booking(BookingStatusCancelled), nil, Declaration{Load: Load{AWBNumber: "020-00000011"}}},
		{"nothing", Booking{}, nil, Declaration{Load: Load{AWBNumber: "020-00000011"}}},
	} {
		if got := Declared("020-00000011", tt.booking, tt.mawb); got != tt.want {
			t.Errorf("%s = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// errText is an error as a table names it: "" for none, else class and
// message.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestShipmentOwner(t *testing.T) {
	tests := []struct {
		name      string
		ownership ShipmentOwnership
		want      string
	}{
		{"the forwarder that booked owns it over the one that filed the MAWB", ShipmentOwnership{BookedBy: "f1", WaybilledBy: "f2", StockHolder: "f3"}, "f1"},
		{"without a booking, the forwarder that filed the MAWB owns it", ShipmentOwnership{WaybilledBy: "f2", StockHolder: "f3"}, "f2"},
		{"without booking or MAWB, the holder of the number's stock owns it", ShipmentOwnership{StockHolder: "f3"}, "f3"},
		{"a number nobody booked, waybilled or holds is nobody's", ShipmentOwnership{}, ""},
	}
	for _, tt := range tests {
		if got := tt.ownership.Owner(); got != tt.want {
			t.Errorf("%s: owner = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestShipmentVisibleTo(t *testing.T) {
	booked := ShipmentOwnership{AWBNumber: "020-00000011", BookedBy: "f1", WaybilledBy: "f2"}
	tests := []struct {
		name      string
		ownership ShipmentOwnership
		p         Principal
		want      bool
	}{
		{"an admin sees any shipment", booked, Principal{OrganizationID: "ops", Role: RoleAdmin}, true},
		{"the airline of the prefix sees it", booked, Principal{OrganizationID: "lh", Role: RoleAirline, AWBPrefix: "020"}, true},
		{"an airline of another prefix does not", booked, Principal{OrganizationID: "ek", Role: RoleAirline, AWBPrefix: "176"}, false},
		{"the forwarder the shipment is of sees it", booked, Principal{OrganizationID: "f1", Role: RoleForwarder}, true},
		{"a forwarder that filed the MAWB of another's booking does not", booked, Principal{OrganizationID: "f2", Role: RoleForwarder}, false},
		{"the holder of the stock sees a shipment not booked or waybilled",
			ShipmentOwnership{AWBNumber: "020-00000011", StockHolder: "f3"}, Principal{OrganizationID: "f3", Role: RoleForwarder}, true},
	}
	for _, tt := range tests {
		if got := tt.ownership.VisibleTo(tt.p); got != tt.want {
			t.Errorf("%s: visible = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestCheckStatusPoster(t *testing.T) {
	tests := []struct {
		name string
		p    Principal
		want string
	}{
		{"the airline of the prefix posts", Principal{OrganizationID: "lh", Role: RoleAirline, AWBPrefix: "020"}, ""},
		{"an airline of another prefix does not",
			Principal{OrganizationID: "ek", Role: RoleAirline, AWBPrefix: "176"}, "forbidden: status events of 020-00000011 are posted by the airline with prefix 020"},
		{"the forwarder of the shipment does not",
			Principal{OrganizationID: "f1", Role: RoleForwarder}, "forbidden: status events of 020-00000011 are posted by the airline with prefix 020"},
		{"an admin does not either",
			Principal{OrganizationID: "ops", Role: RoleAdmin}, "forbidden: status events of 020-00000011 are posted by the airline with prefix 020"},
		{"a forwarder that shares the prefix's digits is still no airline",
			Principal{OrganizationID: "f2", Role: RoleForwarder, AWBPrefix: "020"}, "forbidden: status events of 020-00000011 are posted by the airline with prefix 020"},
	}
	for _, tt := range tests {
		if got := errText(CheckStatusPoster(tt.p, "020-00000011")); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestShipmentCheckFiler(t *testing.T) {
	stocked := ShipmentOwnership{AWBNumber: "020-00000011", StockHolder: "f1"}
	tests := []struct {
		name      string
		ownership ShipmentOwnership
		p         Principal
		want      string
	}{
		{"a forwarder files for a number of its stock before any MAWB", stocked, Principal{OrganizationID: "f1", Role: RoleForwarder}, ""},
		{"a forwarder does not file for another's shipment", stocked, Principal{OrganizationID: "f2", Role: RoleForwarder},
			"forbidden: 020-00000011 is not a shipment of yours: file for the AWB numbers you booked, waybilled or hold in stock"},
		{"nobody's number is no forwarder's to file for", ShipmentOwnership{AWBNumber: "020-00000022"}, Principal{OrganizationID: "f1", Role: RoleForwarder},
			"forbidden: 020-00000022 is not a shipment of yours: file for the AWB numbers you booked, waybilled or hold in stock"},
	}
	for _, tt := range tests {
		if got := errText(tt.ownership.CheckFiler(tt.p)); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// Every code of the IATA list is taken as posted in the form the service
// answers it in (xfsuCode) and Cargo-XML and ONE Record name it: DIS_OFLD
// as well as DIS/OFLD.
func TestDecideRecordStatusTakesTheXFSUCodes(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	n := 0
	for _, r := range readCSV(t, "fsu-status-codes.csv", ',', nil) {
		xfsu := r["oneRecordCode"]
		if xfsu == "" {
			continue // DIS without its qualifier
		}
		n++
		for _, posted := range []string{xfsu, strings.ReplaceAll(xfsu, "_", "/")} {
			events, _, err := DecideRecordStatus(Shipment{}, RecordStatus{AWBNumber: "020-00000011", EventType: posted, EventDate: "2026-11-25T10:00:00Z",
				Location: "FRA", At: now}, knownAirports{})
			if err != nil {
				t.Errorf("%s: %v", posted, err)
				continue
			}
			if got := events[0].(ShipmentStatusRecorded).XFSUCode(); got != xfsu {
				t.Errorf("%s recorded as %s", posted, got)
			}
		}
	}
	if n == 0 {
		t.Fatal("no codes in the list")
	}
	if code, qualifier := SplitEventType("dis_ofld"); code != "DIS" || qualifier != "OFLD" {
		t.Errorf("SplitEventType(dis_ofld) = %s, %s", code, qualifier)
	}
}

func TestAFlightThatDepartsArrivesOrIsCancelledGivesEachShipmentOnBoardItsStatus(t *testing.T) {
	at := time.Date(2026, 11, 26, 9, 5, 0, 0, time.UTC)
	f := Flight{ID: "LH8400-2026-11-26", Origin: "FRA", Destination: "JFK", Loaded: map[string]Load{
		"020-11111115": {AWBNumber: "020-11111115", Pieces: 2, WeightKg: 80},
		"020-00000011": {AWBNumber: "020-00000011", Pieces: 5, WeightKg: 300},
	}}
	tests := []struct {
		status string
		want   string
	}{
		{FlightStatusDeparted, "020-00000011 DEP FRA 5 300; 020-11111115 DEP FRA 2 80"},
		{FlightStatusArrived, "020-00000011 ARR JFK 5 300; 020-11111115 ARR JFK 2 80"},
		{FlightStatusDelayed, ""},
		// Cargo of a cancelled flight is offloaded: it no longer shows
		// manifested on the flight, and goes on another's manifest.
		{FlightStatusCancelled, "020-00000011 DIS_OFLD FRA 5 300; 020-11111115 DIS_OFLD FRA 2 80"},
	}
	for _, tt := range tests {
		var got []string
		for _, st := range FlightChangeStatuses(f, FlightStatusChanged{FlightID: f.ID, Status: tt.status, ChangedAt: at}, "e1") {
			if st.StatusEventID != "e1" || !st.EventDate.Equal(at) || st.Source != StatusFromFlight || st.FlightID != f.ID {
				t.Errorf("%s: %+v", tt.status, st)
			}
			got = append(got, fmt.Sprint(st.AWBNumber, " ", st.XFSUCode(), " ", st.Location, " ", *st.Pieces, " ", *st.Weight))
		}
		if strings.Join(got, "; ") != tt.want {
			t.Errorf("%s: %q, want %q", tt.status, strings.Join(got, "; "), tt.want)
		}
	}
}

// The statuses a flight's event gives the shipments it names: each under
// the event's own id (a manifest's or offload's, or the flight event's).
func TestTheStatusesAFlightsEventGivesItsShipments(t *testing.T) {
	at := time.Date(2026, 11, 26, 9, 5, 0, 0, time.UTC)
	f := Flight{ID: "LH8400-2026-11-26", Origin: "FRA", Destination: "JFK", Loaded: map[string]Load{"020-11111115": {AWBNumber: "020-11111115", Pieces: 2, WeightKg: 80}}}
	for _, tt := range []struct {
		name  string
		event Event
		want  string
	}{
		{"a manifest", ManifestSubmitted{ManifestID: "m1", FlightID: f.ID, Origin: "FRA", SubmittedAt: at,
			Shipments: []Load{{AWBNumber: "020-11111115", Pieces: 2, WeightKg: 80}}, Dropped: []Load{{AWBNumber: "020-00000011", Pieces: 5, WeightKg: 300}}},
			"020-11111115 MAN m1 2; 020-00000011 DIS_OFLD m1 5"},
		{"a manifest of a departed flight, with cargo found on board", ManifestSubmitted{ManifestID: "m2", FlightID: f.ID, Origin: "FRA", SubmittedAt: at,
			Shipments:    []Load{{AWBNumber: "020-11111115", Pieces: 2, WeightKg: 80}, {AWBNumber: "020-22222220", Pieces: 4, WeightKg: 90}},
			FoundOnBoard: []string{"020-22222220"}, DepartedAt: at.Add(-time.Hour)},
			"020-11111115 MAN m2 2; 020-22222220 MAN m2 4; 020-22222220 DEP m2-DEP 4"},
		{"an offload", OffloadReported{OffloadID: "o1", FlightID: f.ID, Origin: "FRA", AWBNumber: "020-11111115", Pieces: 1, WeightKg: 40, ReportedAt: at},
			"020-11111115 DIS_OFLD o1 1"},
		{"a departure", FlightStatusChanged{FlightID: f.ID, Status: FlightStatusDeparted, ChangedAt: at}, "020-11111115 DEP e1 2"},
		{"a delay", FlightStatusChanged{FlightID: f.ID, Status: FlightStatusDelayed, ChangedAt: at}, ""},
		{"a capacity reserved", CapacityReserved{FlightID: f.ID, BookingID: "b1"}, ""},
	} {
		var got []string
		for _, st := range StatusesFrom(tt.event, f, "e1") {
			got = append(got, fmt.Sprint(st.AWBNumber, " ", st.XFSUCode(), " ", st.StatusEventID, " ", *st.Pieces))
		}
		if strings.Join(got, "; ") != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, strings.Join(got, "; "), tt.want)
		}
	}
}

// A departure or arrival reaches a shipment's record twice when the
// airline posts it and also marks its flight departed or arrived: the
// forwarder should see it once, whichever comes first.
func TestADepartureOrArrivalReportedByTheFlightAndTheAirlineIsRecordedOnce(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	man := func(flight string) ShipmentStatusRecorded {
		return ShipmentStatusRecorded{StatusCode: "MAN", Location: "FRA", FlightID: flight, Source: StatusFromManifest}
	}
	flown := func(code, location, flight string) ShipmentStatusRecorded {
		return ShipmentStatusRecorded{StatusCode: code, Location: location, FlightID: flight, Source: StatusFromFlight}
	}
	offload := func(flight string) ShipmentStatusRecorded {
		return ShipmentStatusRecorded{StatusCode: "DIS", DiscrepancyCode: "OFLD", Location: "FRA", FlightID: flight, Source: StatusFromOffload}
	}
	posted := func(code, location string) RecordStatus {
		return RecordStatus{AWBNumber: "020-00000011", EventType: code, EventDate: "2026-11-25T10:00:00Z", Location: location, At: at}
	}
	tests := []struct {
		name  string
		steps []any // a RecordStatus the airline posts, or a ShipmentStatusRecorded of a manifest, offload or flight
		want  string
	}{
		{"the airline's DEP after the flight's departure is not recorded again",
			[]any{man("F1"), flown("DEP", "FRA", "F1"), posted("DEP", "FRA")}, "MAN/manifest DEP/flight"},
		{"the flight's departure after the airline's DEP is not recorded again",
			[]any{man("F1"), posted("DEP", "FRA"), flown("DEP", "FRA", "F1")}, "MAN/manifest DEP/status"},
		{"the airline's ARR after the flight's arrival is not recorded again",
			[]any{man("F1"), flown("DEP", "FRA", "F1"), flown("ARR", "JFK", "F1"), posted("ARR", "JFK")}, "MAN/manifest DEP/flight ARR/flight"},
		{"the flight's arrival after the airline's ARR is not recorded again",
			[]any{man("F1"), flown("DEP", "FRA", "F1"), posted("ARR", "JFK"), flown("ARR", "JFK", "F1")}, "MAN/manifest DEP/flight ARR/status"},
		{"the airline's DEP posted once the flight has arrived too is not recorded again",
			[]any{man("F1"), flown("DEP", "FRA", "F1"), flown("ARR", "JFK", "F1"), posted("DEP", "FRA")}, "MAN/manifest DEP/flight ARR/flight"},
		{"the flight's departure after the airline's DEP and ARR is not recorded again",
			[]any{man("F1"), posted("DEP", "FRA"), posted("ARR", "JFK"), flown("DEP", "FRA", "F1"), flown("ARR", "JFK", "F1")},
			"MAN/manifest DEP/status ARR/status"},
		{"the airline's DEP posted before any manifest loaded the shipment (its MAN is stored with the manifest) is not the flight's departure",
			[]any{posted("DEP", "FRA"), man("F1"), flown("DEP", "FRA", "F1")}, "DEP/status MAN/manifest DEP/flight"},
		{"a revised manifest of the same flight leaves the airline's DEP the flight's departure",
			[]any{man("F1"), posted("DEP", "FRA"), man("F1"), flown("DEP", "FRA", "F1")}, "MAN/manifest DEP/status MAN/manifest"},
		{"the airline's DEP after the flight's departure is answered by it though it names more pieces than are declared since",
			[]any{man("F1"), flown("DEP", "FRA", "F1"), func() RecordStatus {
				dep := posted("DEP", "FRA")
				dep.Pieces, dep.Declared.Pieces = new(5), 2
				return dep
			}()}, "MAN/manifest DEP/flight"},
		{"a DEP at another airport is another departure",
			[]any{man("F1"), flown("DEP", "FRA", "F1"), posted("DEP", "JFK")}, "MAN/manifest DEP/flight DEP/status"},
		{"an ARR where the shipment departed is no repeat of the DEP",
			[]any{man("F1"), flown("DEP", "FRA", "F1"), posted("ARR", "FRA")}, "MAN/manifest DEP/flight ARR/status"},
		{"the airline's own posts are recorded as posted, as for a part shipment",
			[]any{posted("DEP", "FRA"), posted("DEP", "FRA")}, "DEP/status DEP/status"},
		{"a shipment offloaded and loaded on the next flight departs again",
			[]any{man("F1"), posted("DEP", "FRA"), offload("F1"), man("F2"), flown("DEP", "FRA", "F2")},
			"MAN/manifest DEP/status DIS/offload MAN/manifest DEP/flight"},
		{"a shipment loaded on another flight departs again",
			[]any{man("F1"), posted("DEP", "FRA"), man("F2"), flown("DEP", "FRA", "F2")}, "MAN/manifest DEP/status MAN/manifest DEP/flight"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Shipment
			var got []string
			for _, step := range tt.steps {
				var events []Event
				switch step := step.(type) {
				case RecordStatus:
					var err error
					if events, _, err = DecideRecordStatus(s, step, knownAirports{}); err != nil {
						t.Fatal(err)
					}
				case ShipmentStatusRecorded:
					events = DecideStatusFrom(s, step)
				}
				for _, e := range events {
					s = EvolveShipment(s, e)
					st := e.(ShipmentStatusRecorded)
					got = append(got, st.StatusCode+"/"+cmp.Or(st.Source, "status"))
				}
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("recorded %q, want %q", strings.Join(got, " "), tt.want)
			}
		})
	}
}

// A date-time is RFC 3339 as the OpenAPI document's pattern says: a
// fraction of at most nine digits, and an offset of hours to 23 and
// minutes to 59 (time.Parse reads +24:00 as a day ahead and +00:60 as an
// hour: a typing error stored as another moment).
func TestADateTimeIsRFC3339WithAnOffsetOfHoursTo23AndMinutesTo59(t *testing.T) {
	for _, tt := range []struct {
		value string
		want  string // in UTC, or "" for refused
	}{
		{"2026-11-29T10:00:00Z", "2026-11-29T10:00:00Z"},
		{"2026-11-29T10:00:00.123456789Z", "2026-11-29T10:00:00.123456789Z"},
		{"2026-11-29T10:00:00+01:00", "2026-11-29T09:00:00Z"},
		{"2026-11-29T10:00:00-23:59", "2026-11-30T09:59:00Z"},
		{"2026-11-29T10:00:00+14:00", "2026-11-28T20:00:00Z"},
		{"2026-11-29T10:00:00+24:00", ""},
		{"2026-11-29T10:00:00+00:60", ""},
		{"2026-11-29T10:00:00-99:99", ""},
		{"2026-11-29T10:00:60Z", ""},
		{"2026-11-29T10:00:00.1234567891Z", ""},
		{"2026-11-29t10:00:00z", ""},
		{"2026-11-29T10:00:00", ""},
	} {
		got := ""
		if at, ok := ParseDateTime(tt.value); ok {
			got = at.UTC().Format(time.RFC3339Nano)
		}
		if got != tt.want {
			t.Errorf("ParseDateTime(%q) = %q, want %q", tt.value, got, tt.want)
		}
	}
}
