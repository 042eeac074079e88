package main

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func party(name string) map[string]any {
	return map[string]any{"name": name, "address": "1 Cargo Road", "contact": "ops@example.com"}
}

func mawbBody(awb string) map[string]any {
	return map[string]any{"awbNumber": awb, "origin": "FRA", "destination": "JFK", "pieces": 10, "weight": 500.0, "volume": 3.2,
		"commodity": "GEN", "shipper": party("ACME Consolidators"), "consignee": party("ACME USA")}
}

// withFields is body with some fields changed.
func withFields(body map[string]any, change map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range body {
		out[k] = v
	}
	for k, v := range change {
		out[k] = v
	}
	return out
}

func TestWaybills(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	s.approvedStock(t, fwd, "020", 5, "", "") // 020-00000011 .. 020-00000055
	const awb = "020-00000011"

	var created struct {
		AWBNumber, Status string
		CreatedAt         time.Time
	}
	r := s.mustCreate(t, fwd, "/api/mawb", mawbBody(awb))
	r.json(t, &created)
	if created.AWBNumber != awb || created.Status != "created" || created.CreatedAt.IsZero() || r.header.Get("Location") != "/api/shipments/"+awb {
		t.Fatalf("MAWB = %+v", created)
	}
	hawb := func(number string, pieces int, weight float64) map[string]any {
		return map[string]any{"hawbNumber": number, "mawbNumber": awb, "pieces": pieces, "weight": weight,
			"shipper": party("Shipper " + number), "consignee": party("Consignee " + number)}
	}
	var h struct {
		HAWBNumber, MAWBNumber, Status string
		Pieces                         int
		Weight                         float64
		Shipper, Consignee             struct{ Name, Address, Contact string }
	}
	s.mustCreate(t, fwd, "/api/hawb", hawb("h1", 6, 300)).json(t, &h)
	if h.HAWBNumber != "H1" || h.MAWBNumber != awb || h.Status != "created" || h.Pieces != 6 || h.Weight != 300 ||
		h.Shipper.Name != "Shipper h1" || h.Consignee.Address != "1 Cargo Road" {
		t.Errorf("HAWB = %+v", h)
	}
	s.mustCreate(t, fwd, "/api/hawb", hawb("H2", 4, 200))

	rival := s.rivalForwarder(t)
	tests := []apiCase{
		{"houses beyond the master", fwd, "/api/hawb", hawb("H3", 1, 1), 400, "pieces:EXCEEDS_MAWB weight:EXCEEDS_MAWB"},
		{"a house of nothing", fwd, "/api/hawb", hawb("H3", 0, 0), 400, "pieces:INVALID_RANGE weight:INVALID_RANGE"},
		{"a house without amounts or consignee", fwd, "/api/hawb", map[string]any{"hawbNumber": "H3", "mawbNumber": awb, "shipper": party("s")}, 400,
			"consignee.name:REQUIRED pieces:REQUIRED weight:REQUIRED"},
		{"a house with mistyped pieces", fwd, "/api/hawb", withFields(hawb("H3", 1, 1), map[string]any{"pieces": "six"}), 400, "pieces:INVALID_TYPE"},
		{"a house with an overlong address", fwd, "/api/hawb", withFields(hawb("H3", 1, 1), map[string]any{
			"shipper": map[string]any{"name": "s", "address": strings.Repeat("a", 501)}}), 400, "shipper.address:TOO_LONG"},
		{"MAWB on another forwarder's number", rival, "/api/mawb", mawbBody("020-00000033"), 400, "awbNumber:AWB_NOT_IN_STOCK"},
		{"MAWB without ends or consignee", fwd, "/api/mawb", withFields(mawbBody("020-00000022"), map[string]any{"origin": "", "destination": nil,
			"consignee": party("")}), 400, "consignee.name:REQUIRED destination:REQUIRED origin:REQUIRED"},
		{"MAWB with mistyped weight", fwd, "/api/mawb", withFields(mawbBody("020-00000022"), map[string]any{"weight": "500 kg"}), 400, "weight:INVALID_TYPE"},
		{"MAWB with a key in the wrong case", fwd, "/api/mawb", withFields(mawbBody("020-00000022"), map[string]any{"Pieces": 3}), 400, "Pieces:INVALID_FORMAT"},
		{"no such master", fwd, "/api/hawb", map[string]any{"hawbNumber": "X1", "mawbNumber": "020-00000022", "pieces": 1, "weight": 1.0,
			"shipper": party("a"), "consignee": party("b")}, 400, "mawbNumber:UNKNOWN_MAWB"},
		{"master number with a bad check digit", fwd, "/api/hawb", map[string]any{"hawbNumber": "X1", "mawbNumber": "020-00000012"}, 400, "mawbNumber:INVALID_AWB_NUMBER"},
		{"MAWB again", fwd, "/api/mawb", mawbBody(awb), 409, ""},
		{"MAWB outside the stock", fwd, "/api/mawb", mawbBody("020-12345675"), 400, "awbNumber:AWB_NOT_IN_STOCK"},
		{"MAWB with bad fields", fwd, "/api/mawb", map[string]any{"awbNumber": "020-00000022", "origin": "QQQ", "destination": "JFK", "weight": -1.0,
			"shipper": party(""), "consignee": party("b")}, 400, "origin:UNKNOWN_AIRPORT pieces:REQUIRED shipper.name:REQUIRED weight:INVALID_RANGE"},
		{"airlines file no MAWB", s.demoToken(t, "demo-airline-lh"), "/api/mawb", mawbBody("020-00000022"), 403, ""},
		{"MAWB number with a bad check digit", fwd, "/api/mawb", mawbBody("020-00000021"), 400, "awbNumber:INVALID_AWB_NUMBER"},
		{"house number with a dash", fwd, "/api/hawb", hawb("H-3", 1, 1), 400, "hawbNumber:INVALID_FORMAT"},
		{"HAWB under another forwarder's master", rival, "/api/hawb", hawb("R1", 1, 1), 400, "mawbNumber:UNKNOWN_MAWB"},
		{"airlines file no HAWB", s.demoToken(t, "demo-airline-lh"), "/api/hawb", hawb("L1", 1, 1), 403, ""},
		{"the first house again", fwd, "/api/hawb", hawb("H1", 1, 1), 409, ""},
		{"MAWB with malformed airports", fwd, "/api/mawb", withFields(mawbBody("020-00000022"), map[string]any{"origin": "FR", "destination": "FR"}), 400,
			"destination:INVALID_FORMAT origin:INVALID_FORMAT"},
		{"MAWB to where it starts", fwd, "/api/mawb", withFields(mawbBody("020-00000022"), map[string]any{"destination": "FRA"}), 400, "destination:INVALID_VALUE"},
		{"MAWB too big and too wordy", fwd, "/api/mawb", withFields(mawbBody("020-00000022"), map[string]any{"volume": 2000, "commodity": strings.Repeat("X", 21)}), 400,
			"commodity:TOO_LONG volume:INVALID_RANGE"},
	}
	s.runCases(t, "POST", tests)
	// A MAWB with bad fields used no number: 020-00000022 is still free.
	s.mustCreate(t, fwd, "/api/mawb", mawbBody("020-00000022"))

	// The shipment reads the master back as filed, its houses with it.
	type filedParty struct{ Name, Address, Contact string }
	var sh struct {
		AWBNumber string
		MAWB      *struct {
			AWBNumber, Origin, Destination, Commodity, Status string
			Pieces                                            int
			Weight, Volume                                    float64
			Shipper, Consignee                                filedParty
			CreatedAt                                         time.Time
		}
		HAWBs    []struct{ HAWBNumber, MAWBNumber, Status string }
		Declared struct {
			Pieces *int
			Weight *float64
		}
	}
	s.do(t, request{method: "GET", path: "/api/shipments/" + awb, token: fwd}).json(t, &sh)
	m := sh.MAWB
	if sh.AWBNumber != awb || m == nil || m.AWBNumber != awb || m.Origin != "FRA" || m.Destination != "JFK" || m.Pieces != 10 ||
		m.Weight != 500 || m.Volume != 3.2 || m.Commodity != "GEN" || m.Status != "created" || !m.CreatedAt.Equal(created.CreatedAt) ||
		m.Shipper != (filedParty{"ACME Consolidators", "1 Cargo Road", "ops@example.com"}) || m.Consignee.Name != "ACME USA" {
		t.Errorf("shipment's MAWB = %+v", m)
	}
	if len(sh.HAWBs) != 2 || sh.HAWBs[0].HAWBNumber != "H1" || sh.HAWBs[1].MAWBNumber != awb || sh.HAWBs[1].Status != "created" ||
		*sh.Declared.Pieces != 10 || *sh.Declared.Weight != 500 {
		t.Errorf("shipment = %+v", sh)
	}
	if r := s.do(t, request{method: "GET", path: "/api/shipments/" + awb, token: s.demoToken(t, "demo-airline-ek")}); r.status != http.StatusNotFound {
		t.Errorf("EK reads an LH MAWB: %d", r.status)
	}
}

func TestMAWBOfABookedShipment(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	awb := bookedShipment(t, s, fwd) // the booking used the number already
	s.mustCreate(t, fwd, "/api/mawb", mawbBody(awb))
}

// A forwarder that files the MAWB of a number from its stock before it
// books the shipment books it under that number: the MAWB used the
// number up, and holds it for the booking that names it.
func TestAShipmentWhoseMAWBWasFiledFirstIsBookedUnderItsNumber(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	s.approvedStock(t, fwd, "020", 5, "", "") // 020-00000011 .. 020-00000055
	s.mustCreate(t, fwd, "/api/mawb", mawbBody("020-00000011"))
	book := func() booking {
		q := s.quoteOutcome(t, fwd, createQuote(t, s, fwd, rfq()).ID)
		var b booking
		s.mustCreate(t, fwd, "/api/bookings", map[string]any{"quoteId": q.ID, "flightId": q.PriceOptions[0].FlightID,
			"awb": map[string]any{"prefix": "020", "number": "00000011"}}).json(t, &b)
		return s.bookingOutcome(t, fwd, b.ID)
	}
	if b := book(); b.Status != "confirmed" || b.AWBNumber == nil || *b.AWBNumber != "020-00000011" {
		t.Fatalf("the booking of the MAWB's number = %+v", b)
	}
	if b := book(); b.Status != "rejected" || *b.RejectionReason != "awb_in_use" {
		t.Errorf("a second booking of the number = %+v", b)
	}
	// A number whose MAWB goes elsewhere is not booked for this journey.
	s.mustCreate(t, fwd, "/api/mawb", withFields(mawbBody("020-00000022"), map[string]any{"destination": "LHR"}))
	q := s.quoteOutcome(t, fwd, createQuote(t, s, fwd, rfq()).ID)
	s.runCases(t, "POST", []apiCase{{"the number of a MAWB to LHR, booked to JFK", fwd, "/api/bookings",
		map[string]any{"quoteId": q.ID, "flightId": q.PriceOptions[0].FlightID, "awb": map[string]any{"prefix": "020", "number": "00000022"}}, 400, "awb:MISMATCH"}})
}

// A MAWB or PLACI of a booked AWB number goes the journey booked, its
// quote's (FRA–JFK); pieces and weight may differ from the booking's,
// which are estimates until the cargo is weighed at acceptance.
func TestAMAWBOrPLACIOfABookedAWBMustGoTheJourneyBooked(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd := s.demoToken(t, "demo-forwarder")
	awb := bookedShipment(t, s, fwd)
	mawb := withFields(mawbBody(awb), map[string]any{"origin": "JFK", "destination": "LAX", "pieces": 7, "weight": 1000.0, "commodity": "AVI"})
	placi := map[string]any{"awbNumber": awb, "origin": "SYD", "destination": "SCL", "departureDate": time.Now().UTC().Format(time.DateOnly),
		"cargoDescription": "CNC milling machine spare parts", "shipperName": "ACME Machine Tools", "consigneeName": "Globex Inc"}
	s.runCases(t, "POST", []apiCase{
		{"a MAWB of another journey", fwd, "/api/mawb", mawb, 400, "destination:MISMATCH origin:MISMATCH"},
		{"a MAWB to elsewhere", fwd, "/api/mawb", withFields(mawbBody(awb), map[string]any{"destination": "ORD"}), 400, "destination:MISMATCH"},
		{"a PLACI of another journey", fwd, "/api/placi", placi, 400, "destination:MISMATCH origin:MISMATCH"},
	})
	for _, f := range s.do(t, request{method: "POST", path: "/api/mawb", token: fwd, body: mawb}).apiError(t).ValidationErrors {
		if want := map[string]string{"origin": "FRA", "destination": "JFK"}[f.Field]; !strings.HasSuffix(f.Message, "booking's "+f.Field+", "+want) {
			t.Errorf("%s: %s, want the booking's %s", f.Field, f.Message, want)
		}
	}
	s.mustCreate(t, fwd, "/api/placi", withFields(placi, map[string]any{"origin": "FRA", "destination": "JFK", "pieces": 7, "weight": 1000.0}))
	s.mustCreate(t, fwd, "/api/mawb", withFields(mawb, map[string]any{"origin": "fra", "destination": "JFK"}))
	var sh struct {
		Declared struct {
			Pieces *int
			Weight *float64
		}
	}
	s.do(t, request{method: "GET", path: "/api/shipments/" + awb, token: fwd}).json(t, &sh)
	if d := sh.Declared; d.Pieces == nil || *d.Pieces != 7 || d.Weight == nil || *d.Weight != 1000 {
		t.Errorf("declared = %+v, want the MAWB's 7 pieces of 1000 kg", d)
	}
}
