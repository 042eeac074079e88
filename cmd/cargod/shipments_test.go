package main

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

type statusEvent struct {
	EventID, AWBNumber, EventType, XFSUCode, Location, Notes string
	DiscrepancyCode                                          *string
	EventDate, RecordedAt                                    time.Time
	Pieces                                                   *int
	Weight                                                   *float64
}

// bookedShipment books an RFQ from the forwarder's LH stock and returns
// its AWB number.
func bookedShipment(t *testing.T, s *testServer, fwd string) string {
	return bookedShipmentOn(t, s, fwd, "")
}

// bookedShipmentOn books an RFQ on the flight with the id given (the first
// offered when "") and returns its AWB number.
func bookedShipmentOn(t *testing.T, s *testServer, fwd, flightID string) string {
	t.Helper()
	s.approvedStock(t, fwd, "020", 10, "", "")
	q := s.quoteOutcome(t, fwd, createQuote(t, s, fwd, rfq()).ID)
	if flightID == "" {
		flightID = q.PriceOptions[0].FlightID
	}
	var b booking
	s.mustCreate(t, fwd, "/api/bookings", map[string]any{"quoteId": q.ID, "flightId": flightID}).json(t, &b)
	if b = s.bookingOutcome(t, fwd, b.ID); b.Status != "confirmed" || b.AWBNumber == nil {
		t.Fatalf("booking = %+v", b)
	}
	return *b.AWBNumber
}

// flightWithinTheHour schedules LH8300 FRA–JFK to leave within the hour,
// so that it may be marked departed, and returns its id.
func flightWithinTheHour(t *testing.T, s *testServer) string {
	t.Helper()
	fra, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	nyc, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	dep := time.Now().In(fra).Add(30 * time.Minute)
	arr := dep.Add(9 * time.Hour).In(nyc)
	var f struct{ ID string }
	s.mustCreate(t, s.demoToken(t, "demo-airline-lh"), "/api/flights", map[string]any{"flightNumber": "LH8300", "origin": "FRA", "destination": "JFK",
		"departureDate": dep.Format(time.DateOnly), "departureTime": dep.Format("15:04"), "arrivalDate": arr.Format(time.DateOnly),
		"arrivalTime": arr.Format("15:04"), "aircraftType": "B77F"}).json(t, &f)
	return f.ID
}

func TestShipmentTimeline(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir, nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	awb := bookedShipment(t, s, fwd)
	at := func(h int) string {
		return time.Now().UTC().Add(time.Duration(h-10) * time.Hour).Truncate(time.Second).Format(time.RFC3339)
	}
	// Posted out of order: the timeline is by event date.
	posted := map[string]time.Time{} // event id → recorded at
	for _, e := range []map[string]any{
		{"eventType": "RCS", "eventDate": at(1), "location": "FRA", "pieces": 2, "weight": 350.5},
		{"eventType": "DEP", "eventDate": at(4), "location": "fra"},
		{"eventType": "MAN", "eventDate": at(3), "location": "FRA"},
		{"eventType": "DIS/OFLD", "eventDate": at(5), "location": "FRA", "pieces": 1, "notes": "one crate short"},
		{"eventType": "ARR", "eventDate": at(9), "location": "JFK", "pieces": 1, "weight": 175},
	} {
		r := s.do(t, request{method: "POST", path: "/api/shipments/" + awb + "/events", token: lh, body: e})
		var created struct {
			EventID, AWBNumber, EventType string
			RecordedAt                    time.Time
		}
		r.json(t, &created)
		if r.status != http.StatusCreated || created.EventID == "" || created.AWBNumber != awb || created.RecordedAt.IsZero() ||
			created.EventType != strings.ToUpper(e["eventType"].(string)) {
			t.Fatalf("event %v = %d %s", e["eventType"], r.status, r.body)
		}
		posted[created.EventID] = created.RecordedAt
	}
	check := func(s *testServer, tok string) {
		t.Helper()
		var tl struct {
			AWBNumber string
			Events    []statusEvent
		}
		s.do(t, request{method: "GET", path: "/api/shipments/" + awb + "/events", token: tok}).json(t, &tl)
		var codes []string
		for _, e := range tl.Events {
			codes = append(codes, e.XFSUCode)
			if recorded, ok := posted[e.EventID]; e.AWBNumber != awb || !ok || !e.RecordedAt.Equal(recorded) {
				t.Errorf("timeline event %+v is not the one posted", e)
			}
		}
		if tl.AWBNumber != awb || strings.Join(codes, ",") != "RCS,MAN,DEP,DIS_OFLD,ARR" {
			t.Fatalf("timeline of %s = %v", tl.AWBNumber, codes)
		}
		if rcs, arr := tl.Events[0], tl.Events[4]; rcs.Location != "FRA" || *rcs.Pieces != 2 || *rcs.Weight != 350.5 || rcs.DiscrepancyCode != nil ||
			arr.Location != "JFK" || *arr.Pieces != 1 || *arr.Weight != 175 || tl.Events[1].Pieces != nil || tl.Events[2].Location != "FRA" {
			t.Errorf("timeline = %+v", tl.Events)
		}
		var window struct{ Events []statusEvent }
		// From the MAN on, to the offload (excluded).
		from, to := tl.Events[1].EventDate.Format(time.RFC3339), tl.Events[3].EventDate.Format(time.RFC3339)
		s.do(t, request{method: "GET", path: "/api/shipments/" + awb + "/events?from=" + from + "&to=" + to, token: tok}).json(t, &window)
		if len(window.Events) != 2 || window.Events[0].EventType != "MAN" || window.Events[1].EventType != "DEP" {
			t.Errorf("events from %s to %s = %+v", from, to, window.Events)
		}
		for query, fields := range map[string]string{"from=yesterday": "from:INVALID_DATE", "to=2026-13-01": "to:INVALID_DATE",
			"from=2026-12-01&to=2026-11-01": "to:INVALID_DATE", "eventType=FOO": "eventType:INVALID_EVENT_TYPE", "eventType=DIS/LOST": "eventType:INVALID_EVENT_TYPE",
			"eventType=ARR/OFLD": "eventType:INVALID_EVENT_TYPE", "eventType=/OFLD": "eventType:INVALID_EVENT_TYPE"} {
			if r := s.do(t, request{method: "GET", path: "/api/shipments/" + awb + "/events?" + query, token: tok}); r.status != http.StatusBadRequest {
				t.Errorf("%s = %d", query, r.status)
			} else {
				checkFields(t, r, fields)
			}
		}
		var filings struct{ Events []statusEvent }
		if r := s.do(t, request{method: "GET", path: "/api/shipments/" + awb + "/events?eventType=dgd", token: tok}); r.status != 200 {
			t.Errorf("filter by a filing = %d %s", r.status, r.body)
		} else if r.json(t, &filings); len(filings.Events) != 0 {
			t.Errorf("e-DGDs = %+v", filings.Events)
		}
		// The filter takes the code as the events carry it in xfsuCode too.
		for _, filter := range []string{"DIS/OFLD", "DIS_OFLD"} {
			var off struct{ Events []statusEvent }
			s.do(t, request{method: "GET", path: "/api/shipments/" + awb + "/events?eventType=" + filter, token: tok}).json(t, &off)
			if len(off.Events) != 1 || *off.Events[0].DiscrepancyCode != "OFLD" || off.Events[0].Notes != "one crate short" {
				t.Errorf("offloads by %s = %+v", filter, off.Events)
			}
		}
		var sh struct {
			AWBNumber   string
			Booking     *struct{ Status string }
			LatestEvent *statusEvent
			Declared    struct{ Pieces *int }
			Reported    struct {
				Pieces *int
				Weight *float64
			}
			EventCount int
		}
		s.do(t, request{method: "GET", path: "/api/shipments/" + awb, token: tok}).json(t, &sh)
		if sh.Booking == nil || sh.Booking.Status != "confirmed" || sh.LatestEvent.EventType != "ARR" || *sh.Declared.Pieces != 2 ||
			*sh.Reported.Pieces != 1 || *sh.Reported.Weight != 175 || sh.EventCount != 5 {
			t.Errorf("shipment = %+v", sh)
		}
	}
	check(s, fwd)
	check(s, lh)
	s.stop()
	s = startServer(t, dir, nil)
	check(s, s.demoToken(t, "demo-forwarder")) // the same after a restart
}

// A status event reports at most the pieces the shipment has, as its
// MAWB declares them, else its confirmed booking; of a shipment the
// service knows no declaration of, any number.
func TestAStatusEventReportsAtMostThePiecesTheShipmentHas(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	booked := bookedShipment(t, s, fwd) // 2 pieces
	waybilled := bookedShipment(t, s, fwd)
	s.mustCreate(t, fwd, "/api/mawb", withFields(mawbBody(waybilled), map[string]any{"pieces": 3}))
	unknown := "020-99999992" // neither booked nor waybilled
	nfd := func(awb string, pieces int) request {
		return request{method: "POST", path: "/api/shipments/" + awb + "/events", token: lh,
			body: map[string]any{"eventType": "NFD", "eventDate": time.Now().UTC().Format(time.RFC3339), "location": "JFK", "pieces": pieces}}
	}
	for _, tt := range []struct {
		name    string
		req     request
		status  int
		message string // of the refusal
	}{
		{"all the pieces of the booking", nfd(booked, 2), 201, ""},
		{"more pieces than the booking", nfd(booked, 5), 400, booked + " has 2 pieces"},
		{"all the pieces of the MAWB, more than booked", nfd(waybilled, 3), 201, ""},
		{"more pieces than the MAWB", nfd(waybilled, 4), 400, waybilled + " has 3 pieces"},
		{"any pieces of a shipment of no known size", nfd(unknown, 5), 201, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(t, tt.req)
			if r.status != tt.status {
				t.Fatalf("= %d %s", r.status, r.body)
			}
			if r.status == 400 {
				checkFields(t, r, "pieces:EXCEEDS_SHIPMENT")
				if e := r.apiError(t); !strings.Contains(e.ValidationErrors[0].Message, tt.message) {
					t.Errorf("message %q does not say %q", e.ValidationErrors[0].Message, tt.message)
				}
			}
		})
	}
}

func TestShipmentEventRules(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	awb := bookedShipment(t, s, fwd)
	now := time.Now().UTC().Format(time.RFC3339)
	tests := []struct {
		name   string
		token  string
		awb    string
		body   map[string]any
		status int
		fields string
	}{
		{"bad check digit", lh, "020-12345670", map[string]any{"eventType": "RCS", "eventDate": now, "location": "FRA"}, 400, "awb:INVALID_AWB_NUMBER"},
		{"unknown code", lh, awb, map[string]any{"eventType": "XYZ", "eventDate": now, "location": "FRA"}, 400, "eventType:INVALID_EVENT_TYPE"},
		{"DIS without a qualifier", lh, awb, map[string]any{"eventType": "DIS", "eventDate": now, "location": "FRA"}, 400, "discrepancyCode:INVALID_EVENT_TYPE"},
		{"unknown airport", lh, awb, map[string]any{"eventType": "RCS", "eventDate": now, "location": "QQQ"}, 400, "location:UNKNOWN_AIRPORT"},
		{"malformed airport", lh, awb, map[string]any{"eventType": "RCS", "eventDate": now, "location": "FR"}, 400, "location:INVALID_FORMAT"},
		{"negative amounts, long notes", lh, awb, map[string]any{"eventType": "RCS", "eventDate": now, "location": "FRA", "pieces": -1, "weight": -2,
			"notes": strings.Repeat("n", 2001)}, 400, "notes:TOO_LONG pieces:INVALID_RANGE weight:INVALID_RANGE"},
		{"in the future", lh, awb, map[string]any{"eventType": "DEP", "eventDate": time.Now().Add(2 * time.Hour).Format(time.RFC3339), "location": "FRA"}, 400, "eventDate:INVALID_DATE"},
		{"finer than a nanosecond", lh, awb, map[string]any{"eventType": "RCS", "eventDate": time.Now().UTC().Add(-time.Hour).Format("2006-01-02T15:04:05") + ".1234567890Z",
			"location": "FRA"}, 400, "eventDate:INVALID_DATE"},
		{"nothing", lh, awb, map[string]any{}, 400, "eventDate:REQUIRED eventType:REQUIRED location:REQUIRED"},
		{"not the prefix's airline", s.demoToken(t, "demo-airline-ek"), awb, map[string]any{"eventType": "RCS", "eventDate": now, "location": "FRA"}, 403, ""},
		{"a forwarder", fwd, awb, map[string]any{"eventType": "RCS", "eventDate": now, "location": "FRA"}, 403, ""},
		{"with a discrepancy field", lh, awb, map[string]any{"eventType": "DIS", "discrepancyCode": "MSCA", "eventDate": now, "location": "FRA"}, 201, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(t, request{method: "POST", path: "/api/shipments/" + tt.awb + "/events", token: tt.token, body: tt.body})
			if r.status != tt.status {
				t.Fatalf("= %d %s", r.status, r.body)
			}
			if r.status == 400 {
				checkFields(t, r, tt.fields)
			}
		})
	}
	// Nobody but the booking forwarder, the prefix's airline and admins
	// reads the shipment; an unknown AWB is 404.
	rival := s.rivalForwarder(t)
	for _, path := range []string{"/api/shipments/" + awb, "/api/shipments/" + awb + "/events"} {
		if r := s.do(t, request{method: "GET", path: path, token: s.demoToken(t, "demo-airline-ek")}); r.status != 404 {
			t.Errorf("EK reads %s: %d", path, r.status)
		}
		if r := s.do(t, request{method: "GET", path: path, token: rival}); r.status != 404 {
			t.Errorf("another forwarder reads %s: %d", path, r.status)
		}
	}
	if r := s.do(t, request{method: "GET", path: "/api/shipments/020-99999992", token: lh}); r.status != 404 {
		t.Errorf("unknown shipment: %d", r.status)
	}
	for _, path := range []string{"/api/shipments/020-12345670", "/api/shipments/020-1234567/events"} {
		if r := s.do(t, request{method: "GET", path: path, token: lh}); r.status != 400 {
			t.Errorf("%s = %d", path, r.status)
		} else {
			checkFields(t, r, "awb:INVALID_AWB_NUMBER")
		}
	}
}

func TestShipmentWebhooks(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	awb := bookedShipment(t, s, fwd)
	rc := newReceiver(t)
	s.subscribe(t, fwd, rc, []string{"shipment.*"}, "")
	now := time.Now().UTC().Format(time.RFC3339)
	for _, code := range []string{"RCS", "DIS/OFLD"} {
		s.mustCreate(t, lh, "/api/shipments/"+awb+"/events", map[string]any{"eventType": code, "eventDate": now, "location": "FRA"})
	}
	got := eventually(t, "two shipment deliveries", rc.received, func(d []delivery) bool { return len(d) == 2 })
	if d := byType(got); d["shipment.status"].Data["xfsuCode"] != "RCS" || d["shipment.offloaded"].Data["awbNumber"] != awb {
		t.Errorf("deliveries = %+v", got)
	}
}
