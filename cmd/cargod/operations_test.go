package main

import (
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// rivalForwarder creates a second forwarder and returns its token.
func (s *testServer) rivalForwarder(t *testing.T) string {
	t.Helper()
	admin := s.demoToken(t, "demo-admin")
	s.mustCreate(t, admin, "/api/admin/organizations", map[string]any{"id": "rival-forwarding", "name": "Rival Forwarding", "role": "forwarder"})
	s.mustCreate(t, admin, "/api/admin/clients", map[string]any{"organizationId": "rival-forwarding", "clientId": "rival", "clientSecret": "rival-secret-123"})
	return s.token(t, "rival", "rival-secret-123")
}

// shipmentBooking reads the booking of a shipment.
func (s *testServer) shipmentBooking(t *testing.T, token, awb string) booking {
	t.Helper()
	var sh struct{ Booking *booking }
	s.do(t, request{method: "GET", path: "/api/shipments/" + awb, token: token}).json(t, &sh)
	if sh.Booking == nil {
		t.Fatalf("shipment %s has no booking", awb)
	}
	return *sh.Booking
}

func dgdBody(awb string, change map[string]any) map[string]any {
	m := map[string]any{"awbNumber": awb, "unNumber": "UN1845", "properShippingName": "Dry ice (carbon dioxide, solid)", "class": "9",
		"quantity": 20, "netWeight": 20, "grossWeight": 23.5, "packingInstructions": "954", "limitedQuantity": false, "exceptedQuantity": false,
		"shipperDeclaration": "I hereby declare that the contents of this consignment are fully and accurately described."}
	for k, v := range change {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return m
}

func TestDangerousGoodsDeclaration(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	awb := bookedShipment(t, s, fwd)

	before := time.Now().UTC()
	r := s.mustCreate(t, fwd, "/api/dangerous-goods", dgdBody(awb, nil))
	var d struct {
		DGDID, AWBNumber, Status, ReviewNotes, UNNumber, ProperShippingName, Class string
		PackingGroup, PackingInstructions                                          *string
		Quantity, NetWeight                                                        float64
		GrossWeight                                                                *float64
		LimitedQuantity, ExceptedQuantity                                          bool
		SubmittedAt, ValidUntil                                                    time.Time
	}
	r.json(t, &d)
	if d.DGDID == "" || d.AWBNumber != awb || d.Status != "submitted" || d.ReviewNotes != "" || d.UNNumber != "UN1845" || d.Class != "9" ||
		d.PackingGroup != nil || *d.PackingInstructions != "954" || d.Quantity != 20 || d.NetWeight != 20 || *d.GrossWeight != 23.5 ||
		d.LimitedQuantity || d.ExceptedQuantity || d.SubmittedAt.Before(before.Add(-time.Second)) ||
		!d.ValidUntil.Equal(d.SubmittedAt.Add(7*24*time.Hour)) || r.header.Get("Location") != "/api/shipments/"+awb {
		t.Errorf("e-DGD = %s (%s)", r.body, r.header.Get("Location"))
	}
	// A name other than the reference's is accepted with a review note.
	var noted struct{ ReviewNotes string }
	s.mustCreate(t, fwd, "/api/dangerous-goods", dgdBody(awb, map[string]any{"properShippingName": "Frozen CO2"})).json(t, &noted)
	if !strings.Contains(noted.ReviewNotes, "proper shipping name differs") {
		t.Errorf("review notes = %q", noted.ReviewNotes)
	}

	rival := s.rivalForwarder(t)
	tests := []apiCase{
		{"bad AWB", fwd, "/api/dangerous-goods", dgdBody("020-12345670", nil), 400, "awbNumber:INVALID_AWB_NUMBER"},
		{"bad UN number", fwd, "/api/dangerous-goods", dgdBody(awb, map[string]any{"unNumber": "1845"}), 400, "unNumber:INVALID_UN_NUMBER"},
		{"no UN number", fwd, "/api/dangerous-goods", dgdBody(awb, map[string]any{"unNumber": nil}), 400, "unNumber:INVALID_UN_NUMBER"},
		{"class 10", fwd, "/api/dangerous-goods", dgdBody(awb, map[string]any{"class": "10"}), 400, "class:INVALID_HAZARD_CLASS"},
		{"packing group of a gas", fwd, "/api/dangerous-goods", dgdBody(awb, map[string]any{"unNumber": "UN1950", "class": "2.1", "packingGroup": "II", "packingInstructions": "203"}), 400, "packingGroup:INVALID_PACKING_GROUP"},
		{"flammable liquid without packing group", fwd, "/api/dangerous-goods", dgdBody(awb, map[string]any{"unNumber": "UN1263", "class": "3", "packingInstructions": "353"}), 400, "packingGroup:REQUIRED"},
		{"bad packing instruction", fwd, "/api/dangerous-goods", dgdBody(awb, map[string]any{"packingInstructions": "9540"}), 400, "packingInstructions:INVALID_PACKING_INSTRUCTION"},
		{"Y instruction not a limited quantity", fwd, "/api/dangerous-goods", dgdBody(awb, map[string]any{"unNumber": "UN1263", "class": "3", "packingGroup": "II", "packingInstructions": "Y341"}), 400, "limitedQuantity:MISMATCH"},
		{"limited and excepted", fwd, "/api/dangerous-goods", dgdBody(awb, map[string]any{"limitedQuantity": true, "exceptedQuantity": true}), 400, "exceptedQuantity:INVALID_VALUE"},
		{"class against the reference", fwd, "/api/dangerous-goods", dgdBody(awb, map[string]any{"class": "3", "packingGroup": "II"}), 400, "class:MISMATCH"},
		{"nothing declared", fwd, "/api/dangerous-goods", map[string]any{"awbNumber": awb, "unNumber": "UN1845", "class": "9"}, 400,
			"netWeight:REQUIRED packingInstructions:REQUIRED properShippingName:REQUIRED quantity:REQUIRED shipperDeclaration:REQUIRED"},
		{"gross below net", fwd, "/api/dangerous-goods", dgdBody(awb, map[string]any{"grossWeight": 10}), 400, "grossWeight:INVALID_RANGE"},
		{"shipping name too long", fwd, "/api/dangerous-goods", dgdBody(awb, map[string]any{"properShippingName": strings.Repeat("x", 201)}), 400, "properShippingName:TOO_LONG"},
		{"quantity as text", fwd, "/api/dangerous-goods", dgdBody(awb, map[string]any{"quantity": "20 kg"}), 400, "quantity:INVALID_TYPE"},
		{"nothing weighed", fwd, "/api/dangerous-goods", dgdBody(awb, map[string]any{"quantity": 0, "netWeight": -1}), 400, "netWeight:INVALID_RANGE quantity:INVALID_RANGE"},
		{"by an airline", lh, "/api/dangerous-goods", dgdBody(awb, nil), 403, ""},
		{"for another forwarder's shipment", rival, "/api/dangerous-goods", dgdBody(awb, nil), 403, ""},
	}
	s.runCases(t, "POST", tests)
	var sh struct {
		DangerousGoods []struct{ DGDID, UNNumber string }
	}
	s.do(t, request{method: "GET", path: "/api/shipments/" + awb, token: lh}).json(t, &sh)
	if len(sh.DangerousGoods) != 2 || sh.DangerousGoods[0].DGDID != d.DGDID {
		t.Errorf("shipment e-DGDs = %+v", sh.DangerousGoods)
	}
	if r := s.do(t, request{method: "GET", path: "/api/shipments/" + awb, token: rival}); r.status != http.StatusNotFound {
		t.Errorf("the rival reads the shipment: %d", r.status)
	}
}

func TestManifestAndOffload(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh, ek := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh"), s.demoToken(t, "demo-airline-ek")
	// A flight that leaves soon: the test marks it departed at the end.
	awb := bookedShipmentOn(t, s, fwd, flightWithinTheHour(t, s))
	b := s.shipmentBooking(t, fwd, awb)
	flightNumber, date, _ := strings.Cut(b.FlightID, "-")
	manifests := "/api/flights/" + b.FlightID + "/manifests"
	var sh struct {
		Booking struct {
			Pieces int
			Weight float64
		}
	}
	s.do(t, request{method: "GET", path: "/api/shipments/" + awb, token: fwd}).json(t, &sh)

	// The airline's scales say 12.5 kg more than declared: accepted, and
	// the difference reported.
	r := s.mustCreate(t, lh, manifests, map[string]any{"flightId": b.FlightID, "awbNumbers": []string{awb},
		"totalPieces": sh.Booking.Pieces, "totalWeight": sh.Booking.Weight + 12.5})
	var m struct {
		ManifestID, FlightID, Status string
		AWBNumbers                   []string
		TotalPieces                  int
		TotalWeight, TotalVolume     float64
		Differences                  []struct {
			Field                string
			Manifested, Declared float64
		}
		SubmittedAt time.Time
	}
	r.json(t, &m)
	if m.ManifestID == "" || m.FlightID != b.FlightID || m.Status != "submitted" || len(m.AWBNumbers) != 1 || m.AWBNumbers[0] != awb ||
		m.TotalPieces != sh.Booking.Pieces || m.TotalWeight != sh.Booking.Weight+12.5 || m.TotalVolume <= 0 || m.SubmittedAt.IsZero() ||
		len(m.Differences) != 1 || m.Differences[0].Field != "totalWeight" || m.Differences[0].Declared != sh.Booking.Weight {
		t.Errorf("manifest = %s", r.body)
	}
	if c := s.capacityOf(t, lh, flightNumber, date); c.ActualWeight != sh.Booking.Weight+12.5 {
		t.Errorf("capacity after the manifest = %+v", c)
	}

	offload := func(change map[string]any) map[string]any {
		body := map[string]any{"awbNumber": awb, "flightId": b.FlightID, "reason": "Weight restriction", "pieces": 1, "weight": 100.5, "notes": "next flight"}
		for k, v := range change {
			if v == nil {
				delete(body, k)
			} else {
				body[k] = v
			}
		}
		return body
	}
	r = s.mustCreate(t, lh, "/api/offloads", offload(nil))
	var o struct {
		OffloadID, AWBNumber, Status, FlightID, Reason, Notes string
		Pieces                                                int
		Weight                                                float64
		ReportedAt                                            time.Time
	}
	r.json(t, &o)
	if o.OffloadID == "" || o.AWBNumber != awb || o.Status != "reported" || o.FlightID != b.FlightID || o.Reason != "Weight restriction" ||
		o.Notes != "next flight" || o.Pieces != 1 || o.Weight != 100.5 || o.ReportedAt.IsZero() {
		t.Errorf("offload = %s", r.body)
	}
	if c := s.capacityOf(t, lh, flightNumber, date); c.ActualWeight != sh.Booking.Weight+12.5-100.5 {
		t.Errorf("capacity after the offload = %+v", c)
	}

	tests := []apiCase{
		{"bad AWB", lh, manifests, map[string]any{"awbNumbers": []string{awb, "020-1234567"}}, 400, "awbNumbers[1]:INVALID_AWB_NUMBER"},
		{"AWB not on the flight", lh, manifests, map[string]any{"awbNumbers": []string{"020-99999992"}}, 400, "awbNumbers[0]:AWB_NOT_ON_FLIGHT"},
		{"AWB twice", lh, manifests, map[string]any{"awbNumbers": []string{awb, awb}}, 400, "awbNumbers[1]:DUPLICATE"},
		{"no AWBs", lh, manifests, map[string]any{"flightId": b.FlightID}, 400, "awbNumbers:REQUIRED"},
		{"another flight in the body", lh, manifests, map[string]any{"flightId": "LH1-2026-01-01", "awbNumbers": []string{awb}}, 400, "flightId:MISMATCH"},
		{"negative total", lh, manifests, map[string]any{"awbNumbers": []string{awb}, "totalWeight": -1}, 400, "totalWeight:INVALID_RANGE"},
		{"negative pieces and volume", lh, manifests, map[string]any{"awbNumbers": []string{awb}, "totalPieces": -1, "totalVolume": -0.5}, 400,
			"totalPieces:INVALID_RANGE totalVolume:INVALID_RANGE"},
		{"one AWB as text", lh, manifests, map[string]any{"awbNumbers": awb}, 400, "awbNumbers:INVALID_TYPE"},
		{"manifest by a forwarder", fwd, manifests, map[string]any{"awbNumbers": []string{awb}}, 403, ""},
		{"manifest by another airline", ek, manifests, map[string]any{"awbNumbers": []string{awb}}, 403, ""},
		{"manifest of no flight", lh, "/api/flights/LH9999-2026-01-01/manifests", map[string]any{"awbNumbers": []string{awb}}, 404, ""},
		{"more pieces than loaded", lh, "/api/offloads", offload(map[string]any{"pieces": 99}), 400, "pieces:EXCEEDS_LOADED"},
		{"more weight than loaded", lh, "/api/offloads", offload(map[string]any{"weight": 99999}), 400, "weight:EXCEEDS_LOADED"},
		{"offload of an AWB not loaded", lh, "/api/offloads", offload(map[string]any{"awbNumber": "020-99999992"}), 400, "awbNumber:AWB_NOT_ON_FLIGHT"},
		{"offload with a bad AWB", lh, "/api/offloads", offload(map[string]any{"awbNumber": "020-99999999"}), 400, "awbNumber:INVALID_AWB_NUMBER"},
		{"offload without flight", lh, "/api/offloads", offload(map[string]any{"flightId": nil}), 400, "flightId:REQUIRED"},
		{"offload without reason or amounts", lh, "/api/offloads", offload(map[string]any{"reason": " ", "pieces": nil, "weight": nil}), 400,
			"pieces:REQUIRED reason:REQUIRED weight:REQUIRED"},
		{"offload of nothing, reason too long", lh, "/api/offloads", offload(map[string]any{"reason": strings.Repeat("r", 201), "weight": 0}), 400,
			"reason:TOO_LONG weight:INVALID_RANGE"},
		{"offload with pieces as text", lh, "/api/offloads", offload(map[string]any{"pieces": "1"}), 400, "pieces:INVALID_TYPE"},
		{"offload of no pieces, with long notes", lh, "/api/offloads", offload(map[string]any{"pieces": 0, "notes": strings.Repeat("n", 2001)}), 400,
			"notes:TOO_LONG pieces:INVALID_RANGE"},
		{"offload without reason or amounts", lh, "/api/offloads", offload(map[string]any{"reason": nil, "pieces": nil, "weight": nil}), 400,
			"pieces:REQUIRED reason:REQUIRED weight:REQUIRED"},
		{"offload by a forwarder", fwd, "/api/offloads", offload(nil), 403, ""},
		{"offload by another airline", ek, "/api/offloads", offload(nil), 403, ""},
		{"offload from no flight", lh, "/api/offloads", offload(map[string]any{"flightId": "LH9999-2026-01-01"}), 404, ""},
	}
	s.runCases(t, "POST", tests)

	// The manifest and the offload are on the shipment's timeline, as MAN
	// and DIS/OFLD, for the forwarder too: the shipments reactor records
	// them moments later.
	type timeline struct {
		Events []struct {
			EventID, EventType, Source, Notes string
			XFSUCode, Location                *string
			Pieces                            *int
			Weight                            *float64
		}
	}
	tl := eventually(t, "MAN and DIS/OFLD", func() timeline {
		var tl timeline
		s.do(t, request{method: "GET", path: "/api/shipments/" + awb + "/events", token: fwd}).json(t, &tl)
		return tl
	}, func(tl timeline) bool { return len(tl.Events) >= 2 })
	if len(tl.Events) != 2 {
		t.Fatalf("timeline = %+v", tl.Events)
	}
	man, off := tl.Events[0], tl.Events[1]
	if man.EventID != m.ManifestID || man.EventType != "MAN" || man.Source != "manifest" || *man.XFSUCode != "MAN" || *man.Location != "FRA" ||
		*man.Pieces != sh.Booking.Pieces || *man.Weight != sh.Booking.Weight {
		t.Errorf("MAN = %+v", man)
	}
	if off.EventID != o.OffloadID || off.EventType != "DIS" || off.Source != "offload" || *off.XFSUCode != "DIS_OFLD" || *off.Pieces != 1 ||
		!strings.Contains(off.Notes, "Weight restriction") {
		t.Errorf("OFLD = %+v", off)
	}

	// Freight on hand: a waybilled shipment of LH's prefix from the
	// flight's origin may be manifested; one from elsewhere may not.
	s.approvedStock(t, fwd, "020", 2, "020-50000016", "020-50000020")
	s.mustCreate(t, fwd, "/api/mawb", mawbBody("020-50000016"))
	elsewhere := mawbBody("020-50000020")
	elsewhere["origin"], elsewhere["destination"] = "SIN", "HKG"
	s.mustCreate(t, fwd, "/api/mawb", elsewhere)
	s.mustCreate(t, lh, manifests, map[string]any{"awbNumbers": []string{awb, "020-50000016"}})
	// A revised manifest without it takes it off the flight: DIS/OFLD.
	s.mustCreate(t, lh, manifests, map[string]any{"awbNumbers": []string{awb}})
	eventually(t, "the dropped shipment's DIS/OFLD", func() []string {
		var tl struct{ Events []struct{ XFSUCode *string } }
		s.do(t, request{method: "GET", path: "/api/shipments/020-50000016/events", token: fwd}).json(t, &tl)
		var codes []string
		for _, e := range tl.Events {
			if e.XFSUCode != nil {
				codes = append(codes, *e.XFSUCode)
			}
		}
		return codes
	}, func(codes []string) bool { return strings.Join(codes, " ") == "MAN DIS_OFLD" })
	many := make([]string, 1001)
	for i := range many {
		many[i] = "x"
	}
	s.runCases(t, "POST", []apiCase{
		{"a shipment from elsewhere", lh, manifests, map[string]any{"awbNumbers": []string{"020-50000020"}}, 400, "awbNumbers[0]:AWB_NOT_ON_FLIGHT"},
		{"too many AWBs", lh, manifests, map[string]any{"awbNumbers": many}, 400, "awbNumbers:TOO_MANY"},
		{"another airline's flight, bad AWBs", ek, manifests, map[string]any{"awbNumbers": []string{"x"}}, 403, ""},
	})

	// Once the flight has left, cargo is no longer offloaded; once it has
	// arrived, its manifest is closed.
	// The flight shows when each was reported.
	var reported struct{ DepartedAt, ArrivedAt time.Time }
	for _, status := range []string{"departed", "arrived"} {
		r := s.do(t, request{method: "PATCH", path: "/api/flights/" + b.FlightID, token: lh, body: map[string]any{"status": status}})
		if r.status != http.StatusOK {
			t.Fatalf("flight %s = %d %s", status, r.status, r.body)
		}
		r.json(t, &reported)
	}
	if reported.DepartedAt.IsZero() || reported.ArrivedAt.Before(reported.DepartedAt) {
		t.Errorf("the arrived flight was reported departed at %s and arrived at %s, want both, in that order", reported.DepartedAt, reported.ArrivedAt)
	}
	if r := s.do(t, request{method: "POST", path: "/api/offloads", token: lh, body: offload(nil)}); r.status != http.StatusConflict {
		t.Errorf("offload from an arrived flight = %d %s", r.status, r.body)
	}
	// The shipment on board departed and arrived with it (DEP at the
	// origin, ARR at the destination, what is on board: all of it, which
	// the revised manifest loaded); the one it dropped did neither.
	type flown struct {
		EventType, Source string
		Location          *string
		Pieces            *int
	}
	statusesOf := func(awb string) []flown {
		var tl struct{ Events []flown }
		s.do(t, request{method: "GET", path: "/api/shipments/" + awb + "/events", token: fwd}).json(t, &tl)
		return slices.DeleteFunc(tl.Events, func(e flown) bool { return e.Source != "flight" })
	}
	got := eventually(t, "DEP and ARR of the shipment on board", func() []flown { return statusesOf(awb) }, func(f []flown) bool { return len(f) == 2 })
	if got[0].EventType != "DEP" || *got[0].Location != "FRA" || got[1].EventType != "ARR" || *got[1].Location != "JFK" || *got[1].Pieces != sh.Booking.Pieces {
		t.Errorf("the flown shipment's statuses = %s %s %d, %s %s %d", got[0].EventType, *got[0].Location, *got[0].Pieces,
			got[1].EventType, *got[1].Location, *got[1].Pieces)
	}
	if dropped := statusesOf("020-50000016"); len(dropped) != 0 {
		t.Errorf("the shipment left off the flight has %+v", dropped)
	}
	if c := s.capacityOf(t, lh, flightNumber, date); c.AvailableWeight != 0 {
		t.Errorf("capacity of an arrived flight = %+v", c)
	}
	// The cargo flew: its booking stands, and the capacity is not given back.
	if r := s.do(t, request{method: "POST", path: "/api/bookings/" + b.ID + "/cancel", token: fwd}); r.status != http.StatusConflict {
		t.Errorf("cancel of a flown booking = %d %s", r.status, r.body)
	}
	if r := s.do(t, request{method: "POST", path: manifests, token: lh, body: map[string]any{"awbNumbers": []string{awb}}}); r.status != http.StatusConflict {
		t.Errorf("manifest of an arrived flight = %d %s", r.status, r.body)
	}
}

// nextLH8400 is the departure of LH8400 after the flight id: freight on
// hand at the same origin, which LH may move there.
func (s *testServer) nextLH8400(t *testing.T, lh, id string) string {
	t.Helper()
	var list struct{ Flights []struct{ ID string } }
	s.do(t, request{method: "GET", path: "/api/flights?flightNumber=LH8400&limit=100", token: lh}).json(t, &list)
	i := slices.IndexFunc(list.Flights, func(f struct{ ID string }) bool { return f.ID == id })
	if i < 0 || i+1 == len(list.Flights) {
		t.Fatalf("no LH8400 after %s in %+v", id, list.Flights)
	}
	return list.Flights[i+1].ID
}

// A manifest loads a whole shipment: one on board a flight still on the
// ground goes on another flight's manifest only once it is taken off the
// first, else both flights would count its weight and both could fly it.
func TestAShipmentOnBoardOneFlightGoesOnAnotherOnlyOnceTakenOff(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	awb := bookedShipment(t, s, fwd)
	b := s.shipmentBooking(t, fwd, awb)
	next := s.nextLH8400(t, lh, b.FlightID)
	booked, moved := "/api/flights/"+b.FlightID+"/manifests", "/api/flights/"+next+"/manifests"
	s.runCases(t, "POST", []apiCase{
		{"the flight it is booked on loads it", lh, booked, map[string]any{"awbNumbers": []string{awb}}, 201, ""},
		{"the next flight may not load it while it is on board the first", lh, moved, map[string]any{"awbNumbers": []string{awb}}, 400,
			"awbNumbers[0]:AWB_ON_OTHER_FLIGHT"},
		{"the first flight offloads all of it (the RFQ's two pieces)", lh, "/api/offloads", map[string]any{"awbNumber": awb, "flightId": b.FlightID,
			"reason": "Space", "pieces": 2, "weight": 350.5}, 201, ""},
		{"then the next flight loads it", lh, moved, map[string]any{"awbNumbers": []string{awb}}, 201, ""},
		{"and the first may not load it again while it is on board the next", lh, booked, map[string]any{"awbNumbers": []string{awb}}, 400,
			"awbNumbers[0]:AWB_ON_OTHER_FLIGHT"},
	})
	flightNumber, date, _ := strings.Cut(b.FlightID, "-")
	if c := s.capacityOf(t, lh, flightNumber, date); c.ActualWeight != 0 {
		t.Errorf("the first flight still carries %g kg", c.ActualWeight)
	}
}

// A shipment a flight carried away whole is no longer waiting at that
// flight's origin: a manifest of another flight from there refuses it,
// naming the flight it left on, and the other flight's load is unchanged.
func TestAShipmentAFlightCarriedAwayIsNotManifestedAgainFromItsOrigin(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	flight := flightWithinTheHour(t, s)
	awb := bookedShipmentOn(t, s, fwd, flight)
	s.mustCreate(t, lh, "/api/flights/"+flight+"/manifests", map[string]any{"awbNumbers": []string{awb}})
	if r := s.do(t, request{method: "PATCH", path: "/api/flights/" + flight, token: lh, body: map[string]any{"status": "departed"}}); r.status != http.StatusOK {
		t.Fatalf("flight departed = %d %s", r.status, r.body)
	}
	var list struct{ Flights []struct{ ID string } }
	s.do(t, request{method: "GET", path: "/api/flights?flightNumber=LH8400&limit=100", token: lh}).json(t, &list)
	later := list.Flights[len(list.Flights)-1].ID
	r := s.do(t, request{method: "POST", path: "/api/flights/" + later + "/manifests", token: lh, body: map[string]any{"awbNumbers": []string{awb}}})
	if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "AWB_NOT_ON_FLIGHT") ||
		!strings.Contains(string(r.body), "left on "+flight+", whole, for JFK") {
		t.Errorf("manifest of %s after %s departed with the shipment = %d %s", later, flight, r.status, r.body)
	}
	flightNumber, date, _ := strings.Cut(later, "-")
	if c := s.capacityOf(t, lh, flightNumber, date); c.ActualWeight != 0 {
		t.Errorf("%s carries %g kg", later, c.ActualWeight)
	}
}

// Two manifests that load one shipment onto two flights at once are not
// both filed: the shipment goes on board one, and the other is refused as
// it would be a moment later. Round after round, the shipment offloaded
// from the flight that took it before the next.
func TestOfTwoManifestsLoadingOneShipmentAtOnceOneIsFiled(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	awb := bookedShipment(t, s, fwd) // 2 pieces, 350.5 kg
	b := s.shipmentBooking(t, fwd, awb)
	flights := []string{b.FlightID, s.nextLH8400(t, lh, b.FlightID)}
	for round := range 15 {
		statuses := make([]response, len(flights))
		var wg sync.WaitGroup
		for j, id := range flights {
			wg.Go(func() {
				statuses[j] = s.do(t, request{method: "POST", path: "/api/flights/" + id + "/manifests", token: lh, body: map[string]any{"awbNumbers": []string{awb}}})
			})
		}
		wg.Wait()
		filed := slices.IndexFunc(statuses, func(r response) bool { return r.status == http.StatusCreated })
		other := statuses[1-max(filed, 0)]
		if filed < 0 || other.status != http.StatusBadRequest || !strings.Contains(string(other.body), "AWB_ON_OTHER_FLIGHT") {
			t.Fatalf("round %d: the manifests of %v were answered %d and %d (%s), want one filed and the other refused AWB_ON_OTHER_FLIGHT",
				round, flights, statuses[0].status, statuses[1].status, other.body)
		}
		s.mustCreate(t, lh, "/api/offloads", map[string]any{"awbNumber": awb, "flightId": flights[filed], "reason": "Space", "pieces": 2, "weight": 350.5})
	}
}

// Offloading the last pieces of a shipment takes off what is left of it
// on board, and that is the weight every record of the offload says (its
// answer, the flight's history, the shipment's timeline and the
// forwarder's webhook), as the flight's actual weight drops by it (to
// none, the shipment being the flight's only one); the weight the airline
// reported is kept beside it.
func TestOffloadingTheLastPiecesRecordsTheWeightTakenOff(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	awb := bookedShipment(t, s, fwd) // 2 pieces, 350.5 kg
	b := s.shipmentBooking(t, fwd, awb)
	forwarder := newReceiver(t)
	s.subscribe(t, fwd, forwarder, []string{"shipment.offloaded"}, "")
	s.mustCreate(t, lh, "/api/flights/"+b.FlightID+"/manifests", map[string]any{"awbNumbers": []string{awb}, "totalWeight": 400.5})

	var o struct {
		OffloadID              string
		Pieces                 int
		Weight, ReportedWeight float64
	}
	s.mustCreate(t, lh, "/api/offloads", map[string]any{"awbNumber": awb, "flightId": b.FlightID, "reason": "Space", "pieces": 2, "weight": 100}).json(t, &o)
	if o.Pieces != 2 || o.Weight != 350.5 || o.ReportedWeight != 100 {
		t.Errorf("offload = %+v, want 2 pieces of 350.5 kg taken off, 100 kg reported", o)
	}
	flightNumber, date, _ := strings.Cut(b.FlightID, "-")
	if c := s.capacityOf(t, lh, flightNumber, date); c.ActualWeight != 0 {
		t.Errorf("the flight carries %g kg after the offload, want none: nothing is on board, though the manifest weighed 50 kg beyond the shipment", c.ActualWeight)
	}
	h, _ := s.history(t, lh, "/api/flights/"+b.FlightID)
	if off := h[len(h)-1]; off.Type != "OffloadReported" || off.Data["weight"] != 350.5 || off.Data["reportedWeight"] != 100.0 {
		t.Errorf("the flight's history ends with %s %v", off.Type, off.Data)
	}
	type entry struct {
		EventID, EventType string
		Weight             *float64
	}
	timeline := func() []entry {
		var tl struct{ Events []entry }
		s.do(t, request{method: "GET", path: "/api/shipments/" + awb + "/events?eventType=DIS/OFLD", token: fwd}).json(t, &tl)
		return tl.Events
	}
	if off := eventually(t, "the DIS/OFLD of the offload", timeline, func(e []entry) bool { return len(e) == 1 })[0]; off.EventID != o.OffloadID ||
		off.Weight == nil || *off.Weight != 350.5 {
		t.Errorf("the shipment's DIS/OFLD %s says %v kg, want 350.5 kg", off.EventID, *off.Weight)
	}
	if d := eventually(t, "shipment.offloaded", forwarder.received, func(d []delivery) bool { return len(d) > 0 }); d[0].Data["weight"] != 350.5 {
		t.Errorf("shipment.offloaded = %+v", d[0].Data)
	}
}

// A booking whose shipment is on its flight's manifest stands until the
// airline offloads it: cancelled, it gave back capacity the flight still
// carried the cargo in, and the flight departed with it.
func TestABookingWhoseShipmentIsManifestedIsCancelledOnlyOnceOffloaded(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	awb := bookedShipment(t, s, fwd) // 2 pieces, 350.5 kg
	b := s.shipmentBooking(t, fwd, awb)
	s.mustCreate(t, lh, "/api/flights/"+b.FlightID+"/manifests", map[string]any{"awbNumbers": []string{awb}})
	cancel := func() response {
		return s.do(t, request{method: "POST", path: "/api/bookings/" + b.ID + "/cancel", token: fwd})
	}
	if r := cancel(); r.status != http.StatusConflict || !strings.Contains(string(r.body), "on the manifest of flight "+b.FlightID) {
		t.Errorf("cancelling the manifested booking = %d %s, want 409 naming the manifest", r.status, r.body)
	}
	s.mustCreate(t, lh, "/api/offloads", map[string]any{"awbNumber": awb, "flightId": b.FlightID, "reason": "Space", "pieces": 2, "weight": 350.5})
	if r := cancel(); r.status != http.StatusOK {
		t.Errorf("cancelling it once offloaded = %d %s", r.status, r.body)
	}
}

// Goods for cargo aircraft only, lithium ion batteries on their own
// (UN3480, known without reference data) or those the loaded US DOT table
// forbids on passenger aircraft (UN1089, acetaldehyde): a shipment whose
// e-DGD declares them goes on no passenger aircraft's manifest, as freight
// on hand either, but on a freighter. One a passenger aircraft loaded
// before they were declared stays loaded (the declaration is the
// shipper's, and is filed), and the e-DGD's review notes tell the airline
// to move it.
func TestGoodsForCargoAircraftOnlyGoOnNoPassengerAircraftsManifest(t *testing.T) {
	t.Parallel()
	// Rows of the DOT table as its file has them: forbidden on passenger
	// aircraft, 30 L on a cargo aircraft; and forbidden on both, which
	// the acceptance check decides for a freighter, but which no
	// passenger aircraft takes either (it did before).
	const header = "row_id,id_number,un_number,proper_shipping_name,cross_reference_entries,hazard_class,packing_group,label_codes,special_provisions,symbols,passenger_aircraft_rail_max_qty,cargo_aircraft_only_max_qty,vessel_stowage_location,parse_note\n"
	const table = header + "2,UN1089,1089,Acetaldehyde,\"Ethyl aldehyde, see Acetaldehyde\",3,I,3,B16 T11 TP2 TP7,,Forbidden,30 L,E,\n"
	const forbidden = header + "204,UN0004,0004,\"Ammonium picrate, dry or wetted with less than 10 percent water, by mass\",,1.1D,,1.1D,,,Forbidden,Forbidden,04,\n"
	move := func(un, passenger string) string {
		return un + " goes on cargo aircraft only, and the shipment is set to fly on " + passenger + ", a passenger aircraft (A359): move it to a freighter"
	}
	tests := []struct {
		name  string
		table string // the dangerous-goods table imported first, if any
		dgd   map[string]any
		notes func(passenger string) string
	}{
		{"lithium ion batteries on their own", "", map[string]any{"unNumber": "UN3480", "properShippingName": "Lithium ion batteries",
			"packingInstructions": "965"}, func(p string) string { return move("UN3480", p) }},
		{"goods the DOT table allows on cargo aircraft only", table, map[string]any{"unNumber": "UN1089", "properShippingName": "Acetaldehyde",
			"class": "3", "packingGroup": "I", "packingInstructions": "361"}, func(p string) string { return move("UN1089", p) }},
		{"goods the DOT table forbids on every aircraft", forbidden, map[string]any{"unNumber": "UN0004", "properShippingName": "Ammonium picrate, dry",
			"class": "1.1D", "packingInstructions": "112"}, func(p string) string {
			return "UN0004 is forbidden on passenger aircraft, and the shipment is set to fly on " + p + ", a passenger aircraft (A359): take it off; " +
				"UN0004 is forbidden on cargo aircraft in the reference data: check the ICAO Technical Instructions"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, t.TempDir(), nil)
			fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
			if tt.table != "" {
				if r := s.do(t, request{method: "POST", path: "/api/admin/reference/commodities?source=dangerous-goods", token: s.demoToken(t, "demo-admin"),
					body: tt.table, contentType: "text/csv"}); r.status != http.StatusOK {
					t.Fatalf("import = %d %s", r.status, r.body)
				}
			}
			awb, b, passenger := s.bookedBesideAPassengerFlight(t, fwd, lh)
			var loaded struct{ TotalPieces, TotalWeight float64 }
			s.mustCreate(t, lh, "/api/flights/"+passenger+"/manifests", map[string]any{"awbNumbers": []string{awb}}).json(t, &loaded)

			var dgd struct{ ReviewNotes string }
			s.mustCreate(t, fwd, "/api/dangerous-goods", dgdBody(awb, tt.dgd)).json(t, &dgd)
			if want := tt.notes(passenger); dgd.ReviewNotes != want {
				t.Errorf("the e-DGD's review notes = %q, want %q alone (its booked flight is a freighter)", dgd.ReviewNotes, want)
			}
			s.mustCreate(t, lh, "/api/offloads", map[string]any{"awbNumber": awb, "flightId": passenger, "reason": "Dangerous goods for cargo aircraft only",
				"pieces": loaded.TotalPieces, "weight": loaded.TotalWeight})
			s.runCases(t, "POST", []apiCase{
				{"the passenger aircraft may not load it", lh, "/api/flights/" + passenger + "/manifests", map[string]any{"awbNumbers": []string{awb}}, 400,
					"awbNumbers[0]:CARGO_AIRCRAFT_ONLY"},
				{"the freighter it is booked on loads it", lh, "/api/flights/" + b.FlightID + "/manifests", map[string]any{"awbNumbers": []string{awb}}, 201, ""},
			})
			// Nor does a passenger aircraft take over the freighter while
			// the goods are on board: they would depart with it.
			if r := s.do(t, request{method: "PATCH", path: "/api/flights/" + b.FlightID, token: lh, body: map[string]any{"aircraftType": "A359"}}); r.status != http.StatusConflict ||
				!strings.Contains(string(r.body), awb+" ("+tt.dgd["unNumber"].(string)+")") {
				t.Errorf("a passenger aircraft for the freighter with the goods on board = %d %s, want 409 naming %s", r.status, r.body, awb)
			}
		})
	}
}

// bookedBesideAPassengerFlight books a shipment of fwd on a freighter of
// LH's and publishes, as lh, LH9400, a passenger aircraft (A359) on the
// same route and day; it returns the shipment's AWB number, its booking
// and the passenger flight's id.
func (s *testServer) bookedBesideAPassengerFlight(t *testing.T, fwd, lh string) (awb string, b booking, passenger string) {
	t.Helper()
	awb = bookedShipment(t, s, fwd)
	b = s.shipmentBooking(t, fwd, awb)
	_, date, _ := strings.Cut(b.FlightID, "-")
	s.mustCreate(t, lh, "/api/flights", map[string]any{"flightNumber": "LH9400", "origin": "FRA", "destination": "JFK", "departureDate": date,
		"departureTime": "22:00", "arrivalDate": date, "arrivalTime": "23:55", "aircraftType": "A359"})
	return awb, b, "LH9400-" + date
}

// Cargo whose e-CSD says it is not secured (screening failed: NSC) goes on
// no aircraft's manifest until an e-CSD says it is; cargo secured for cargo
// aircraft only (SCO) goes on a freighter, not on a passenger aircraft, nor
// may a passenger aircraft take over the freighter while it is on board.
func TestAManifestLoadsCargoAsItsSecurityStatusAllows(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	awb, b, passenger := s.bookedBesideAPassengerFlight(t, fwd, lh)
	screened := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)
	csd := func(result, status string) (reviewNotes string) {
		var filed struct{ ReviewNotes string }
		s.mustCreate(t, fwd, "/api/csd", map[string]any{"awbNumber": awb, "screeningMethod": "XRY", "screeningDate": screened,
			"screeningResult": result, "securityStatus": status}).json(t, &filed)
		return filed.ReviewNotes
	}
	manifest := func(flight string) apiCase {
		return apiCase{token: lh, path: "/api/flights/" + flight + "/manifests", body: map[string]any{"awbNumbers": []string{awb}}}
	}
	step := func(name string, c apiCase, status int, fields string) apiCase {
		c.name, c.status, c.fields = name, status, fields
		return c
	}
	csd("fail", "NSC")
	s.runCases(t, "POST", []apiCase{
		step("not secured, on the freighter", manifest(b.FlightID), 400, "awbNumbers[0]:NOT_SECURED"),
		step("not secured, on a passenger aircraft", manifest(passenger), 400, "awbNumbers[0]:NOT_SECURED"),
	})
	csd("pass", "SCO")
	s.runCases(t, "POST", []apiCase{
		step("secured for cargo aircraft only, on a passenger aircraft", manifest(passenger), 400, "awbNumbers[0]:CARGO_AIRCRAFT_ONLY"),
		step("secured for cargo aircraft only, on the freighter", manifest(b.FlightID), 201, ""),
	})
	if r := s.do(t, request{method: "PATCH", path: "/api/flights/" + b.FlightID, token: lh, body: map[string]any{"aircraftType": "A359"}}); r.status != http.StatusConflict ||
		!strings.Contains(string(r.body), awb+" (SCO)") {
		t.Errorf("a passenger aircraft for the freighter with the cargo on board = %d %s, want 409 naming %s", r.status, r.body, awb)
	}
	// Found not secured once on board, the airline is told to take it off.
	want := "the shipment is not secured (NSC), and is set to fly on " + b.FlightID + ": take it off until an e-CSD says it is secured"
	if notes := csd("fail", "NSC"); notes != want {
		t.Errorf("an e-CSD of cargo on board found not secured says %q, want %q", notes, want)
	}
}

// TestShipmentFullLife files everything a shipment goes through and reads
// it back as one timeline, in order, before and after a restart.
func TestShipmentFullLife(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, dir, nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	awb := bookedShipment(t, s, fwd)
	b := s.shipmentBooking(t, fwd, awb)
	now := func() string { return time.Now().UTC().Format(time.RFC3339Nano) }
	status := func(code, location string) {
		t.Helper()
		s.mustCreate(t, lh, "/api/shipments/"+awb+"/events", map[string]any{"eventType": code, "eventDate": now(), "location": location})
	}

	s.mustCreate(t, fwd, "/api/mawb", mawbBody(awb))
	for _, h := range []string{"HAWB1", "HAWB2"} {
		s.mustCreate(t, fwd, "/api/hawb", map[string]any{"hawbNumber": h, "mawbNumber": awb, "pieces": 5, "weight": 250,
			"shipper": party("Shipper " + h), "consignee": party("Consignee " + h)})
	}
	s.mustCreate(t, fwd, "/api/dangerous-goods", dgdBody(awb, nil))
	s.mustCreate(t, fwd, "/api/csd", map[string]any{"awbNumber": awb, "screeningMethod": "XRY", "screeningDate": now(), "screeningResult": "pass"})
	s.mustCreate(t, fwd, "/api/placi", map[string]any{"awbNumber": awb, "origin": "FRA", "destination": "JFK",
		"departureDate": time.Now().UTC().Format(time.DateOnly), "cargoDescription": "CNC milling machine spare parts",
		"shipperName": "ACME Machine Tools", "consigneeName": "Globex Inc"})
	for _, doc := range []string{"INVOICE", "PACKING_LIST"} {
		if r := s.upload(t, fwd, documentParts(awb, doc, doc+".pdf", pdfOf(4096))...); r.status != http.StatusCreated {
			t.Fatalf("upload of %s = %d %s", doc, r.status, r.body)
		}
	}
	status("RCS", "FRA")
	s.mustCreate(t, lh, "/api/flights/"+b.FlightID+"/manifests", map[string]any{"awbNumbers": []string{awb}})
	status("DEP", "FRA")
	status("ARR", "JFK")
	s.mustCreate(t, lh, "/api/offloads", map[string]any{"awbNumber": awb, "flightId": b.FlightID, "reason": "Damaged", "pieces": 1, "weight": 50})

	want := "MAWB HAWB HAWB DGD CSD PLACI DOCUMENT DOCUMENT RCS MAN DEP ARR DIS/OFLD"
	type timeline struct {
		Events []struct {
			EventType       string
			DiscrepancyCode *string
		}
	}
	check := func(s *testServer, token string) {
		t.Helper()
		// The MAN and DIS/OFLD come from the shipments reactor, moments
		// after the manifest and the offload.
		tl := eventually(t, "the whole timeline", func() timeline {
			var tl timeline
			s.do(t, request{method: "GET", path: "/api/shipments/" + awb + "/events", token: token}).json(t, &tl)
			return tl
		}, func(tl timeline) bool { return len(tl.Events) >= strings.Count(want, " ")+1 })
		var got []string
		for _, e := range tl.Events {
			if e.DiscrepancyCode != nil {
				e.EventType += "/" + *e.DiscrepancyCode
			}
			got = append(got, e.EventType)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("timeline = %s\nwant       %s", strings.Join(got, " "), want)
		}
	}
	check(s, fwd)
	check(s, lh)
	s.stop()
	s = startServer(t, dir, nil)
	fwd = s.demoToken(t, "demo-forwarder")
	check(s, fwd)
	var sh struct {
		MAWB           *struct{ Pieces int }
		HAWBs          []struct{ HAWBNumber string }
		DangerousGoods []struct{ UNNumber string }
		Documents      []struct{ DocumentType string }
		PLACI, CSD     *struct{ Status string }
		LatestEvent    *struct{ EventType string }
		Declared       struct{ Pieces *int }
		Reported       struct{ Pieces *int }
	}
	s.do(t, request{method: "GET", path: "/api/shipments/" + awb, token: fwd}).json(t, &sh)
	if sh.MAWB == nil || len(sh.HAWBs) != 2 || len(sh.DangerousGoods) != 1 || len(sh.Documents) != 2 || sh.Documents[1].DocumentType != "PACKING_LIST" ||
		sh.PLACI == nil || sh.CSD == nil || sh.LatestEvent.EventType != "DIS" || *sh.Declared.Pieces != 10 || *sh.Reported.Pieces != 10 {
		t.Errorf("shipment after a restart = %+v", sh)
	}
}

func TestOperationsWebhooks(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	awb := bookedShipment(t, s, fwd)
	b := s.shipmentBooking(t, fwd, awb)
	forwarder, airline := newReceiver(t), newReceiver(t)
	s.subscribe(t, fwd, forwarder, []string{"mawb.created", "hawb.created", "placi.submitted", "csd.submitted", "dgd.submitted",
		"shipment.*", "manifest.submitted"}, "")
	s.subscribe(t, lh, airline, []string{"manifest.submitted", "dgd.submitted"}, "")

	s.mustCreate(t, fwd, "/api/mawb", mawbBody(awb))
	s.mustCreate(t, fwd, "/api/hawb", map[string]any{"hawbNumber": "H1", "mawbNumber": awb, "pieces": 1, "weight": 10,
		"shipper": party("Shipper H1"), "consignee": party("Consignee H1")})
	s.mustCreate(t, fwd, "/api/placi", map[string]any{"awbNumber": awb, "origin": "FRA", "destination": "JFK", "departureDate": b.FlightID[len(b.FlightID)-10:],
		"cargoDescription": "CNC milling machine spare parts", "shipperName": "ACME", "consigneeName": "Globex"})
	s.mustCreate(t, fwd, "/api/csd", map[string]any{"awbNumber": awb, "screeningMethod": "XRY", "screeningResult": "pass",
		"screeningDate": time.Now().UTC().Format(time.RFC3339)})
	s.mustCreate(t, fwd, "/api/dangerous-goods", dgdBody(awb, nil))
	s.mustCreate(t, lh, "/api/flights/"+b.FlightID+"/manifests", map[string]any{"awbNumbers": []string{awb}})
	s.mustCreate(t, lh, "/api/offloads", map[string]any{"awbNumber": awb, "flightId": b.FlightID, "reason": "Space", "pieces": 1, "weight": 10})

	// The forwarder hears of its filings, of the MAN its shipment got from
	// the manifest and of the offload, not of the airline's manifest itself;
	// the airline of its manifest and of the e-DGD on its prefix.
	got := eventually(t, "forwarder deliveries", forwarder.received, func(d []delivery) bool { return len(d) >= 7 })
	d := byType(got)
	if len(got) != 7 || d["mawb.created"].Data["awbNumber"] != awb || d["hawb.created"].Data["hawbNumber"] != "H1" ||
		d["placi.submitted"].Data["placiId"] == nil || d["csd.submitted"].Data["securityStatus"] != "SPX" ||
		d["dgd.submitted"].Data["unNumber"] != "UN1845" || d["shipment.status"].Data["xfsuCode"] != "MAN" ||
		d["shipment.offloaded"].Data["source"] != "offload" || d["shipment.offloaded"].Data["xfsuCode"] != "DIS_OFLD" {
		t.Errorf("forwarder deliveries = %+v", got)
	}
	got = eventually(t, "airline deliveries", airline.received, func(d []delivery) bool { return len(d) >= 2 })
	if d := byType(got); len(got) != 2 || d["dgd.submitted"].Type == "" || d["manifest.submitted"].Data["flightId"] != b.FlightID {
		t.Errorf("airline deliveries = %+v", got)
	}
}

// With the US DOT table loaded, an e-DGD is checked against every entry of
// its UN number.
func TestDangerousGoodsAgainstTheDOTTable(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	awb := bookedShipment(t, s, fwd)
	table, err := os.ReadFile("../../refdata/testdata/dg.csv")
	if err != nil {
		t.Fatal(err)
	}
	if r := s.do(t, request{method: "POST", path: "/api/admin/reference/commodities?source=dangerous-goods", token: s.demoToken(t, "demo-admin"),
		body: string(table), contentType: "text/csv"}); r.status != http.StatusOK {
		t.Fatalf("import = %d %s", r.status, r.body)
	}
	aerosol := func(class, name string) map[string]any {
		return dgdBody(awb, map[string]any{"unNumber": "UN1950", "class": class, "properShippingName": name, "packingInstructions": "203", "grossWeight": nil})
	}
	var d struct{ ReviewNotes string }
	s.mustCreate(t, fwd, "/api/dangerous-goods", aerosol("2.2", "Aerosols, non-flammable")).json(t, &d)
	if d.ReviewNotes != "" {
		t.Errorf("notes of a second entry = %q", d.ReviewNotes)
	}
	s.mustCreate(t, fwd, "/api/dangerous-goods", dgdBody(awb, map[string]any{"unNumber": "UN1170", "class": "3", "packingGroup": "I",
		"properShippingName": "Ethanol", "packingInstructions": "361"})).json(t, &d)
	if !strings.Contains(d.ReviewNotes, "packing group I is not listed for UN1170 in the reference data (II, III)") {
		t.Errorf("notes = %q", d.ReviewNotes)
	}
	s.runCases(t, "POST", []apiCase{
		{"a class of no entry", fwd, "/api/dangerous-goods", aerosol("2.3", "Aerosols"), 400, "class:MISMATCH"},
	})
}

// An airline that marks its flight departed and arrived may also post the
// DEP and ARR of the shipments on board, before or after: each shipment's
// timeline, and so its shipment.status webhooks, has each movement once.
func TestADepartureOrArrivalBothTheAirlineAndItsFlightReportIsOnTheTimelineOnce(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	flight := flightWithinTheHour(t, s)
	// The airline posts the movements of one shipment before it marks the
	// flight, of the other after.
	before, after := bookedShipmentOn(t, s, fwd, flight), bookedShipmentOn(t, s, fwd, flight)
	if before >= after {
		// The shipments reactor records a flight's statuses in AWB
		// order: after's are the sign that before's were decided.
		t.Fatalf("AWB numbers %s, %s not in booking order", before, after)
	}
	type entry struct{ EventID, EventType, Source string }
	timeline := func(awb, code string) []entry {
		var tl struct{ Events []entry }
		s.do(t, request{method: "GET", path: "/api/shipments/" + awb + "/events?eventType=" + code, token: fwd}).json(t, &tl)
		return tl.Events
	}
	post := func(awb, code, location string) response {
		return s.do(t, request{method: "POST", path: "/api/shipments/" + awb + "/events", token: lh,
			body: map[string]any{"eventType": code, "eventDate": time.Now().UTC().Format(time.RFC3339), "location": location}})
	}
	s.mustCreate(t, lh, "/api/flights/"+flight+"/manifests", map[string]any{"awbNumbers": []string{before, after}})
	for _, awb := range []string{before, after} {
		eventually(t, "the MAN of "+awb, func() []entry { return timeline(awb, "MAN") }, func(e []entry) bool { return len(e) == 1 })
	}
	for _, m := range []struct{ code, location, status string }{{"DEP", "FRA", "departed"}, {"ARR", "JFK", "arrived"}} {
		if r := post(before, m.code, m.location); r.status != http.StatusCreated {
			t.Fatalf("%s of %s before the flight's = %d %s", m.code, before, r.status, r.body)
		}
		if r := s.do(t, request{method: "PATCH", path: "/api/flights/" + flight, token: lh, body: map[string]any{"status": m.status}}); r.status != http.StatusOK {
			t.Fatalf("flight %s = %d %s", m.status, r.status, r.body)
		}
		flown := eventually(t, "the flight's "+m.code+" of "+after, func() []entry { return timeline(after, m.code) },
			func(e []entry) bool { return len(e) > 0 })
		if got := timeline(before, m.code); len(got) != 1 || got[0].Source != "status" {
			t.Errorf("%s of %s, posted before the flight's: %+v", m.code, before, got)
		}
		r := post(after, m.code, m.location)
		var created struct{ EventID, EventType string }
		r.json(t, &created)
		if r.status != http.StatusOK || created.EventID != flown[0].EventID || created.EventType != m.code {
			t.Errorf("%s of %s posted after the flight's = %d %s, want 200 with %+v", m.code, after, r.status, r.body, flown[0])
		}
		if got := timeline(after, m.code); len(got) != 1 || got[0].Source != "flight" {
			t.Errorf("%s of %s, posted after the flight's: %+v", m.code, after, got)
		}
	}
	// The airline's DEP may come after the flight's arrival too: it is
	// the flight's departure still, not the arrival on record last.
	departed := timeline(after, "DEP")
	r := post(after, "DEP", "FRA")
	var created struct{ EventID, EventType string }
	r.json(t, &created)
	if r.status != http.StatusOK || len(departed) != 1 || created.EventID != departed[0].EventID || created.EventType != "DEP" {
		t.Errorf("DEP of %s posted after the flight's arrival = %d %s, want 200 with %+v", after, r.status, r.body, departed)
	}
	if got := timeline(after, "DEP"); len(got) != 1 {
		t.Errorf("DEP of %s, posted after the flight's arrival: %+v", after, got)
	}
}

// A cancelled flight carries nothing: each shipment on its manifest is
// offloaded (DIS/OFLD, source flight), so its tracking no longer shows it
// manifested on the flight, and the forwarder hears of it.
func TestACancelledFlightOffloadsTheShipmentsOnItsManifest(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh")
	awb := bookedShipment(t, s, fwd)
	b := s.shipmentBooking(t, fwd, awb)
	forwarder := newReceiver(t)
	s.subscribe(t, fwd, forwarder, []string{"shipment.offloaded"}, "")
	s.mustCreate(t, lh, "/api/flights/"+b.FlightID+"/manifests", map[string]any{"awbNumbers": []string{awb}})
	type entry struct {
		EventID, EventType, Source, Notes string
		XFSUCode, Location                *string
		Pieces                            *int
	}
	timeline := func() []entry {
		var tl struct{ Events []entry }
		s.do(t, request{method: "GET", path: "/api/shipments/" + awb + "/events", token: fwd}).json(t, &tl)
		return tl.Events
	}
	eventually(t, "the MAN", timeline, func(e []entry) bool { return len(e) == 1 })
	if r := s.do(t, request{method: "PATCH", path: "/api/flights/" + b.FlightID, token: lh, body: map[string]any{"status": "cancelled"}}); r.status != http.StatusOK {
		t.Fatalf("flight cancelled = %d %s", r.status, r.body)
	}
	got := eventually(t, "the DIS/OFLD of the cancellation", timeline, func(e []entry) bool { return len(e) == 2 })
	if off := got[1]; off.EventType != "DIS" || *off.XFSUCode != "DIS_OFLD" || off.Source != "flight" || *off.Location != "FRA" ||
		*off.Pieces != 2 || !strings.Contains(off.Notes, b.FlightID+" cancelled") {
		t.Errorf("timeline after the cancellation = %+v", got)
	}
	var sh struct{ LatestEvent *struct{ EventType string } }
	s.do(t, request{method: "GET", path: "/api/shipments/" + awb, token: fwd}).json(t, &sh)
	if sh.LatestEvent == nil || sh.LatestEvent.EventType != "DIS" {
		t.Errorf("latest status after the cancellation = %+v", sh.LatestEvent)
	}
	d := eventually(t, "shipment.offloaded", forwarder.received, func(d []delivery) bool { return len(d) > 0 })
	if d[0].Data["eventId"] != got[1].EventID || d[0].Data["source"] != "flight" {
		t.Errorf("delivery = %+v", d[0])
	}
	// Its cargo may go on another flight: its booking went with the
	// flight, so as freight on hand, waybilled at the origin.
	s.mustCreate(t, fwd, "/api/mawb", mawbBody(awb))
	var list struct{ Flights []struct{ ID, Status string } }
	s.do(t, request{method: "GET", path: "/api/flights?flightNumber=LH8400&limit=100", token: lh}).json(t, &list)
	next := ""
	for _, f := range list.Flights {
		if f.ID > b.FlightID && f.Status == "scheduled" && next == "" {
			next = f.ID
		}
	}
	s.mustCreate(t, lh, "/api/flights/"+next+"/manifests", map[string]any{"awbNumbers": []string{awb}})
}
