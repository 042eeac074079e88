package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/eventstore/natstest"
)

// historyEntry is one entry of GET …/history.
type historyEntry struct {
	Sequence                                uint64
	OccurredAt                              time.Time
	Type, AggregateType, AggregateID, Actor string
	CorrelationID                           string
	CausationID                             *string
	Data                                    map[string]any
}

// history reads every page of a history as token.
func (s *testServer) history(t *testing.T, token, path string) ([]historyEntry, int) {
	t.Helper()
	var all []historyEntry
	for page := 1; ; page++ {
		r := s.do(t, request{method: "GET", path: fmt.Sprintf("%s/history?page=%d&limit=5", path, page), token: token})
		if r.status != http.StatusOK {
			return nil, r.status
		}
		var h struct {
			Data       []historyEntry
			Pagination struct{ TotalPages int }
		}
		r.json(t, &h)
		all = append(all, h.Data...)
		if page >= h.Pagination.TotalPages {
			return all, r.status
		}
	}
}

// step is what one entry of a history says: the event, of which
// aggregate, by whom, on which request.
type step struct{ typ, aggregate, actor, correlation string }

func (e historyEntry) step() step {
	return step{e.Type, e.AggregateType + "/" + e.AggregateID, e.Actor, e.CorrelationID}
}

func steps(h []historyEntry) []step {
	out := make([]step, len(h))
	for i, e := range h {
		out[i] = e.step()
	}
	return out
}

func TestAShipmentsHistoryTellsItsWholeLife(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir(), nil)
	fwd, lh, ek, admin := s.demoToken(t, "demo-forwarder"), s.demoToken(t, "demo-airline-lh"), s.demoToken(t, "demo-airline-ek"), s.demoToken(t, "demo-admin")
	rival := s.rivalForwarder(t)
	const forwarder, airline = "client:demo-forwarder", "client:demo-airline-lh"
	requestID := func(r response) string { return r.header.Get("X-Request-Id") }
	flight := flightWithinTheHour(t, s)

	// The rival's shipment on the same flight, so that the manifest names
	// another forwarder's AWB.
	rivalAWB := bookedShipmentOn(t, s, rival, flight)

	s.approvedStock(t, fwd, "020", 10, "", "")
	r := s.mustCreate(t, fwd, "/api/quotes", rfq())
	quoteReq := requestID(r)
	var q quote
	r.json(t, &q)
	s.quoteOutcome(t, fwd, q.ID)
	r = s.mustCreate(t, fwd, "/api/bookings", map[string]any{"quoteId": q.ID, "flightId": flight})
	bookingReq := requestID(r)
	var b booking
	r.json(t, &b)
	if b = s.bookingOutcome(t, fwd, b.ID); b.Status != "confirmed" {
		t.Fatalf("booking = %+v", b)
	}
	awb := *b.AWBNumber
	quoteAgg, bookingAgg, flightAgg := "quote/"+q.ID, "booking/"+b.ID, "flight/"+flight
	waybill, compliance, shipment, statusReactor := "waybill/"+awb, "compliance/"+awb, "shipment/"+awb, "reactor:status:"+awb
	want := []step{
		{"QuoteRequested", quoteAgg, forwarder, quoteReq},
		{"QuotePriced", quoteAgg, "reactor:pricing", quoteReq},
		{"BookingRequested", bookingAgg, forwarder, bookingReq},
		{"CapacityReserved", flightAgg, "reactor:reserve", bookingReq},
		{"QuoteAccepted", quoteAgg, "reactor:accept", bookingReq},
		{"BookingConfirmed", bookingAgg, "reactor:confirm", bookingReq},
	}
	// The reactors' steps may still be under way: each step of the test
	// waits for the history to have caught up before the next request.
	caughtUp := func(want []step) []historyEntry {
		t.Helper()
		return eventually(t, "the history of "+awb, func() []historyEntry {
			h, _ := s.history(t, admin, "/api/shipments/"+awb)
			return h
		}, func(h []historyEntry) bool { return len(h) >= len(want) })
	}
	caughtUp(want)

	r = s.mustCreate(t, fwd, "/api/mawb", mawbBody(awb))
	want = append(want, step{"MAWBCreated", waybill, forwarder, requestID(r)})
	r = s.mustCreate(t, fwd, "/api/hawb", map[string]any{"hawbNumber": "HAWB1", "mawbNumber": awb, "pieces": 1, "weight": 100,
		"shipper": party("ACME Machine Tools"), "consignee": party("Globex Inc")})
	want = append(want, step{"HAWBCreated", waybill, forwarder, requestID(r)})
	r = s.mustCreate(t, fwd, "/api/dangerous-goods", dgdBody(awb, nil))
	want = append(want, step{"DGDSubmitted", compliance, forwarder, requestID(r)})
	r = s.mustCreate(t, lh, "/api/csd", map[string]any{"awbNumber": awb, "screeningMethod": "XRY",
		"screeningDate": time.Now().UTC().Add(-time.Hour).Format(time.RFC3339), "screeningResult": "pass"})
	want = append(want, step{"CSDSubmitted", compliance, airline, requestID(r)})
	r = s.mustCreate(t, fwd, "/api/placi", map[string]any{"awbNumber": awb, "origin": "FRA", "destination": "JFK", "departureDate": today(1),
		"cargoDescription": "Machine parts", "shipperName": "ACME Machine Tools", "consigneeName": "Globex Inc"})
	want = append(want, step{"PLACISubmitted", compliance, forwarder, requestID(r)})
	r = s.upload(t, fwd, documentParts(awb, "INVOICE", "invoice.pdf", pdfOf(2048))...)
	if r.status != http.StatusCreated {
		t.Fatalf("upload: %d %s", r.status, r.body)
	}
	var doc document
	r.json(t, &doc)
	want = append(want, step{"DocumentUploaded", "document/" + doc.DocumentID, forwarder, requestID(r)})
	r = s.mustCreate(t, lh, "/api/flights/"+flight+"/manifests", map[string]any{"flightId": flight, "awbNumbers": []string{rivalAWB, awb}})
	manifestReq := requestID(r)
	want = append(want, step{"ManifestSubmitted", flightAgg, airline, manifestReq},
		step{"ShipmentStatusRecorded", shipment, statusReactor, manifestReq})
	caughtUp(want)
	r = s.mustCreate(t, lh, "/api/shipments/"+awb+"/events", map[string]any{"eventType": "DEP", "eventDate": time.Now().UTC().Format(time.RFC3339), "location": "FRA"})
	want = append(want, step{"ShipmentStatusRecorded", shipment, airline, requestID(r)})
	r = s.mustCreate(t, lh, "/api/offloads", map[string]any{"awbNumber": awb, "flightId": flight, "reason": "Weight restriction", "pieces": 1, "weight": 100})
	offloadReq := requestID(r)
	want = append(want, step{"OffloadReported", flightAgg, airline, offloadReq},
		step{"ShipmentStatusRecorded", shipment, statusReactor, offloadReq})
	whole := caughtUp(want)

	if got := steps(whole); !slices.Equal(got, want) {
		t.Fatalf("the admin's history of %s:\n%s\nwant:\n%s", awb, stepLines(got), stepLines(want))
	}
	for i, e := range whole {
		if i > 0 && e.Sequence <= whole[i-1].Sequence {
			t.Errorf("entry %d (%s) is not after entry %d in the stream", i, e.Type, i-1)
		}
		if e.OccurredAt.IsZero() || e.Data == nil {
			t.Errorf("entry %d: %+v", i, e)
		}
		// A request's own events have no cause; a reactor's follow the
		// event they answer.
		if caused := strings.HasPrefix(e.Actor, "reactor:"); caused != (e.CausationID != nil) {
			t.Errorf("entry %d (%s by %s): causation id %v", i, e.Type, e.Actor, e.CausationID)
		}
	}
	manifestOf := func(h []historyEntry) map[string]any {
		for _, e := range h {
			if e.Type == "ManifestSubmitted" {
				return e.Data
			}
		}
		t.Fatal("no manifest in the history")
		return nil
	}
	// The admin and the flight's airline see the whole manifest; the
	// forwarder its own line of it, without the rival's AWB or the
	// flight's totals.
	if m := manifestOf(whole); len(m["shipments"].([]any)) != 2 || m["totalWeight"] == nil {
		t.Errorf("the admin's manifest = %v", m)
	}
	lhHistory, status := s.history(t, lh, "/api/shipments/"+awb)
	if status != http.StatusOK || !slices.Equal(steps(lhHistory), want) || len(manifestOf(lhHistory)["shipments"].([]any)) != 2 {
		t.Errorf("the airline's history: %d\n%s", status, stepLines(steps(lhHistory)))
	}
	own, status := s.history(t, fwd, "/api/shipments/"+awb)
	if status != http.StatusOK || !slices.Equal(steps(own), want) {
		t.Fatalf("the forwarder's history: %d\n%s", status, stepLines(steps(own)))
	}
	m := manifestOf(own)
	lines, _ := json.Marshal(m["shipments"])
	if strings.Contains(string(lines), rivalAWB) || !strings.Contains(string(lines), awb) || m["totalWeight"] != nil || m["differences"] != nil {
		t.Errorf("the forwarder's manifest shows more than its own line: %v", m)
	}
	for _, e := range own {
		if body, _ := json.Marshal(e.Data); strings.Contains(string(body), rivalAWB) {
			t.Errorf("the forwarder's %s shows the rival's AWB: %s", e.Type, body)
		}
	}

	// Others see nothing of it; the rival sees its own shipment, and of the
	// manifest its own line only.
	for name, token := range map[string]string{"another forwarder": rival, "another airline": ek} {
		if _, status := s.history(t, token, "/api/shipments/"+awb); status != http.StatusNotFound {
			t.Errorf("%s reads the history: %d", name, status)
		}
	}
	theirs, status := s.history(t, rival, "/api/shipments/"+rivalAWB)
	if status != http.StatusOK {
		t.Fatalf("the rival's own history: %d", status)
	}
	for _, e := range theirs {
		if body, _ := json.Marshal(e.Data); strings.Contains(string(body), awb) {
			t.Errorf("the rival's %s shows the forwarder's AWB: %s", e.Type, body)
		}
	}

	// The histories of the aggregates: each the part of the story that is
	// theirs, readable as the resource is.
	aggregates := []struct {
		name, path string
		token      string
		want       []step
		status     int
	}{
		{"the quote, to its forwarder", "/api/quotes/" + q.ID, fwd, only(want, quoteAgg), 200},
		{"the quote, to another forwarder", "/api/quotes/" + q.ID, rival, nil, 404},
		{"the booking, to the flight's airline", "/api/bookings/" + b.ID, lh, only(want, bookingAgg), 200},
		{"the booking, to another airline", "/api/bookings/" + b.ID, ek, nil, 404},
		{"the flight's schedule, to a forwarder", "/api/flights/" + flight, fwd, nil, 200},
		{"an unknown booking", "/api/bookings/nope", admin, nil, 404},
	}
	for _, a := range aggregates {
		t.Run(a.name, func(t *testing.T) {
			h, status := s.history(t, a.token, a.path)
			if status != a.status {
				t.Fatalf("status %d, want %d", status, a.status)
			}
			if a.want != nil && !slices.Equal(steps(h), a.want) {
				t.Errorf("history:\n%s\nwant:\n%s", stepLines(steps(h)), stepLines(a.want))
			}
		})
	}
	// A flight's load is its airline's: a forwarder sees its schedule only.
	forFwd, _ := s.history(t, fwd, "/api/flights/"+flight)
	forLH, _ := s.history(t, lh, "/api/flights/"+flight)
	if len(forFwd) != 1 || forFwd[0].Type != "FlightStatusScheduled" || len(forLH) < 5 {
		t.Errorf("the flight's history: to the forwarder %s\nto its airline %s", stepLines(steps(forFwd)), stepLines(steps(forLH)))
	}
	// An airline sees in a quote's pricing only its own price options.
	ekQuote, status := s.history(t, ek, "/api/quotes/"+q.ID)
	priced := slices.IndexFunc(ekQuote, func(e historyEntry) bool { return e.Type == "QuotePriced" })
	if status != http.StatusOK || priced < 0 {
		t.Fatalf("EK's history of the quote: %d\n%s", status, stepLines(steps(ekQuote)))
	}
	if whole[1].Type != "QuotePriced" || len(whole[1].Data["priceOptions"].([]any)) == 0 {
		t.Fatalf("the admin's pricing has no options: %v", whole[1].Data)
	}
	for _, o := range ekQuote[priced].Data["priceOptions"].([]any) {
		if carrier := o.(map[string]any)["carrier"]; carrier != "EK" {
			t.Errorf("EK sees a price option of %v", carrier)
		}
	}
	// Nor where the forwarder booked: the acceptance names the booking,
	// on LH's flight, to LH and the forwarder, not to EK.
	for _, reader := range []struct {
		name, token   string
		booking, with string
	}{{"EK", ek, "", ""}, {"LH", lh, b.ID, flight}, {"the forwarder", fwd, b.ID, flight}} {
		h, _ := s.history(t, reader.token, "/api/quotes/"+q.ID)
		i := slices.IndexFunc(h, func(e historyEntry) bool { return e.Type == "QuoteAccepted" })
		if i < 0 || h[i].Data["bookingId"] != reader.booking || h[i].Data["flightId"] != reader.with {
			t.Errorf("%s's history of the quote: %s\nits acceptance %v, want booking %q on %q", reader.name, stepLines(steps(h)), h[max(i, 0)].Data, reader.booking, reader.with)
		}
	}
}

// only are the steps of one aggregate.
func only(steps []step, aggregate string) []step {
	var out []step
	for _, s := range steps {
		if s.aggregate == aggregate {
			out = append(out, s)
		}
	}
	return out
}

func stepLines(steps []step) string {
	var b strings.Builder
	for _, s := range steps {
		fmt.Fprintf(&b, "  %-24s %-60s %-24s %s\n", s.typ, s.aggregate, s.actor, s.correlation)
	}
	return b.String()
}

// publishAFlightEventThisVersionCannotDecode stores on a flight's stream,
// past the service, an event as a newer version would write it: a type
// this version does not know (FlightRenumbered, to flightNumber).
func publishAFlightEventThisVersionCannotDecode(t *testing.T, natsURL, flightID, flightNumber string) {
	t.Helper()
	natstest.Publish(t, natsURL, "cargo.evt.flight."+flightID, map[string]string{
		"Cargo-Event-Type": "FlightRenumbered", "Cargo-Schema-Version": "1", "Cargo-Event-Id": "from-a-newer-version", "Cargo-Command-Id": "c1",
		"Cargo-Correlation-Id": "r1", "Cargo-Actor": "client:lh-ops", "Cargo-Occurred-At": time.Now().UTC().Format(time.RFC3339Nano),
	}, []byte(`{"flightNumber":"`+flightNumber+`"}`))
}

// publishADamagedFlightEvent stores on a flight's stream, past the
// service, an event whose envelope cannot be read (its time "yesterday"),
// as a hand-made or damaged message would be.
func publishADamagedFlightEvent(t *testing.T, natsURL, flightID, flightNumber string) {
	t.Helper()
	natstest.Publish(t, natsURL, "cargo.evt.flight."+flightID, map[string]string{
		"Cargo-Event-Type": "FlightStatusChanged", "Cargo-Schema-Version": "1", "Cargo-Event-Id": "damaged", "Cargo-Command-Id": "c1",
		"Cargo-Correlation-Id": "r1", "Cargo-Actor": "client:lh-ops", "Cargo-Occurred-At": "yesterday",
	}, []byte(`{"flightId":"`+flightID+`","status":"cancelled"}`))
}

// The events a version cannot read: a newer version's, and a damaged
// one, with the type an admin's history shows it under.
var unreadableFlightEvents = []struct {
	name    string
	publish func(t *testing.T, natsURL, flightID, flightNumber string)
	shownAs string
}{
	{"of a type this version does not know", publishAFlightEventThisVersionCannotDecode, "FlightRenumbered"},
	{"whose envelope is damaged", publishADamagedFlightEvent, ""},
}

// An event this version cannot decode (a newer version's, during a
// rolling upgrade) does not make the history of its resource a 500: an
// admin, investigating, sees it as stored; others, whom the service cannot
// tell whether it is theirs to see, do not.
func TestAHistoryWithAnEventThisVersionCannotDecodeAnswers(t *testing.T) {
	t.Parallel()
	natsURL := natstest.StartServer(t, 0)
	r := startReplica(t.TempDir(), map[string]string{"CARGO_NATS_URL": natsURL, "CARGO_NATS_REPLICAS": "1", "CARGO_DEMO": "true",
		"CARGO_SIGNING_KEY": "", "CARGO_SECRETS_KEY": testSecretsKey})
	defer func() { r.stop(); <-r.done }()
	s := &testServer{base: r.base(t), doc: loadDoc(t)}
	lh := s.demoToken(t, "demo-airline-lh")
	for i, unreadable := range unreadableFlightEvents {
		t.Run(unreadable.name, func(t *testing.T) {
			var f struct{ ID string }
			s.mustCreate(t, lh, "/api/flights", shortFlight(fmt.Sprint("LH160", i))).json(t, &f)
			unreadable.publish(t, natsURL, f.ID, "LH1699")
			// A write after it is answered once this replica has applied it.
			s.mustCreate(t, lh, "/api/flights", shortFlight(fmt.Sprint("LH161", i)))

			for _, tt := range []struct {
				who   string
				types []string
			}{
				{"demo-admin", []string{"FlightStatusScheduled", unreadable.shownAs}},
				{"demo-airline-lh", []string{"FlightStatusScheduled"}},
				{"demo-forwarder", []string{"FlightStatusScheduled"}},
			} {
				h, status := s.history(t, s.demoToken(t, tt.who), "/api/flights/"+f.ID)
				var types []string
				for _, e := range h {
					types = append(types, e.Type)
				}
				if status != http.StatusOK || !slices.Equal(types, tt.types) {
					t.Errorf("%s: = %d %v, want 200 %v", tt.who, status, types, tt.types)
				}
			}
		})
	}
}
