package projections

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/internal/storetest"
)

func TestAShipmentsHistoryFollowsItOntoOtherFlightsAndShowsOnlyItsPart(t *testing.T) {
	ctx := context.Background()
	f := newHistoryFixture(t)

	// The shipment is booked on one flight, and manifested on and
	// offloaded from another, beside a rival's shipment.
	const awb, rivals, booked, moved = "020-12345675", "020-81140743", "LH1-2026-11-26", "LH2-2026-11-27"
	f.schedule(booked, moved)
	f.append(domain.AggregateBooking, "b1", domain.BookingRequested{BookingID: "b1", FlightID: booked, OrganizationID: "f1", Pieces: 2, WeightKg: 350},
		domain.BookingConfirmed{BookingID: "b1", FlightID: booked, AWBNumber: awb})
	f.append(domain.AggregateFlight, booked, domain.CapacityReserved{FlightID: booked, BookingID: "b1", WeightKg: 350},
		domain.CapacityReserved{FlightID: booked, BookingID: "rivals", WeightKg: 900})
	f.append(domain.AggregateFlight, moved, domain.ManifestSubmitted{ManifestID: "m1", FlightID: moved, Origin: "FRA",
		Shipments:   []domain.Load{{AWBNumber: rivals, Pieces: 5, WeightKg: 900}, {AWBNumber: awb, Pieces: 2, WeightKg: 350}},
		TotalPieces: 7, TotalWeightKg: 1250},
		domain.OffloadReported{OffloadID: "o1", FlightID: moved, AWBNumber: rivals, Pieces: 5, WeightKg: 900},
		domain.OffloadReported{OffloadID: "o2", FlightID: moved, AWBNumber: awb, Pieces: 1, WeightKg: 100})
	f.append(domain.AggregateShipment, awb, domain.ShipmentStatusRecorded{AWBNumber: awb, StatusEventID: "s1", StatusCode: "RCS", Location: "FRA"})

	h := f.history()
	forwarder := domain.Principal{Subject: "client:f1", OrganizationID: "f1", Role: domain.RoleForwarder}
	admin := domain.Principal{Subject: "client:ops", OrganizationID: "ops", Role: domain.RoleAdmin}
	story := []string{"booking/b1 BookingRequested", "booking/b1 BookingConfirmed", "flight/" + booked + " CapacityReserved",
		"flight/" + moved + " ManifestSubmitted", "flight/" + moved + " OffloadReported", "shipment/" + awb + " ShipmentStatusRecorded"}
	for _, tt := range []struct {
		name     string
		p        domain.Principal
		manifest string // the lines of the manifest
		total    bool   // the manifest shows its totals
	}{
		{"to the forwarder, its own line of the manifest", forwarder, awb, false},
		{"to an admin, the whole manifest", admin, rivals + "," + awb, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			page, err := h.Shipment(ctx, tt.p, awb, 1, 100)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i, r := range page.Records {
				got = append(got, r.Aggregate.String()+" "+r.Type)
				if i > 0 && r.Sequence <= page.Records[i-1].Sequence {
					t.Errorf("record %d is not in stream order", i)
				}
				if strings.Contains(string(r.Data), rivals) != (tt.p.Role == domain.RoleAdmin && r.Type == "ManifestSubmitted") {
					t.Errorf("%s: %s", r.Type, r.Data)
				}
				if r.Type != "ManifestSubmitted" {
					continue
				}
				var m struct {
					Shipments   []domain.Load
					TotalWeight *float64
				}
				if err := json.Unmarshal(r.Data, &m); err != nil {
					t.Fatal(err)
				}
				var lines []string
				for _, l := range m.Shipments {
					lines = append(lines, l.AWBNumber)
				}
				if strings.Join(lines, ",") != tt.manifest || (m.TotalWeight != nil) != tt.total {
					t.Errorf("manifest %s", r.Data)
				}
			}
			if !slices.Equal(got, story) || page.Total != len(story) {
				t.Errorf("history (%d):\n%s\nwant:\n%s", page.Total, strings.Join(got, "\n"), strings.Join(story, "\n"))
			}
		})
	}
	if _, err := h.Shipment(ctx, domain.Principal{Subject: "client:f2", OrganizationID: "f2", Role: domain.RoleForwarder}, awb, 1, 100); domain.ErrorCode(err) != domain.NotFound {
		t.Errorf("another forwarder: %v", err)
	}
	// Paged: the second of pages of two.
	if page, err := h.Shipment(ctx, admin, awb, 2, 2); err != nil || len(page.Records) != 2 || page.Records[0].Type != "CapacityReserved" || page.Total != len(story) {
		t.Errorf("page 2 of 2 = %+v, %v", page, err)
	}
}

// A shipment rebooked under its number (see domain.StockLedger.Held) has
// the life of both bookings: the first, cancelled, and its capacity
// given back, then the second.
func TestAShipmentsHistoryHasEveryBookingOfItsNumber(t *testing.T) {
	ctx := context.Background()
	f := newHistoryFixture(t)
	const awb, first, second = "020-12345675", "LH1-2026-11-26", "LH2-2026-11-27"
	f.schedule(first, second)
	f.append(domain.AggregateBooking, "b1", domain.BookingRequested{BookingID: "b1", FlightID: first, OrganizationID: "f1", Pieces: 2, WeightKg: 350},
		domain.BookingConfirmed{BookingID: "b1", FlightID: first, AWBNumber: awb})
	f.append(domain.AggregateFlight, first, domain.CapacityReserved{FlightID: first, BookingID: "b1", WeightKg: 350})
	f.append(domain.AggregateBooking, "b1", domain.BookingCancelled{BookingID: "b1"})
	f.append(domain.AggregateFlight, first, domain.CapacityReleased{FlightID: first, BookingID: "b1", WeightKg: 350})
	f.append(domain.AggregateBooking, "b2", domain.BookingRequested{BookingID: "b2", FlightID: second, OrganizationID: "f1", Pieces: 2, WeightKg: 350,
		AWBNumber: awb}, domain.BookingConfirmed{BookingID: "b2", FlightID: second, AWBNumber: awb})
	f.append(domain.AggregateFlight, second, domain.CapacityReserved{FlightID: second, BookingID: "b2", WeightKg: 350})
	h := f.history()
	page, err := h.Shipment(ctx, domain.Principal{Subject: "client:f1", OrganizationID: "f1", Role: domain.RoleForwarder}, awb, 1, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range page.Records {
		got = append(got, r.Aggregate.String()+" "+r.Type)
	}
	want := []string{"booking/b1 BookingRequested", "booking/b1 BookingConfirmed", "flight/" + first + " CapacityReserved",
		"booking/b1 BookingCancelled", "flight/" + first + " CapacityReleased",
		"booking/b2 BookingRequested", "booking/b2 BookingConfirmed", "flight/" + second + " CapacityReserved"}
	if !slices.Equal(got, want) {
		t.Errorf("history:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A quote booked, its booking cancelled, and booked again under another
// AWB number is in the life of both shipments, each with its own
// acceptance (and reopening), not the other's.
func TestAShipmentsHistoryHasOnlyItsOwnBookingsOfItsQuote(t *testing.T) {
	ctx := context.Background()
	f := newHistoryFixture(t)
	const first, second, flight = "020-12345675", "020-81140743", "LH1-2026-11-26"
	f.schedule(flight)
	f.append(domain.AggregateQuote, "q1", domain.QuoteRequested{QuoteID: "q1", OrganizationID: "f1", Origin: "FRA", Destination: "JFK"},
		domain.QuotePriced{QuoteID: "q1"}, domain.QuoteAccepted{QuoteID: "q1", BookingID: "b1", FlightID: flight})
	f.append(domain.AggregateBooking, "b1", domain.BookingRequested{BookingID: "b1", QuoteID: "q1", FlightID: flight, OrganizationID: "f1"},
		domain.BookingConfirmed{BookingID: "b1", FlightID: flight, AWBNumber: first}, domain.BookingCancelled{BookingID: "b1"})
	f.append(domain.AggregateQuote, "q1", domain.QuoteReopened{QuoteID: "q1", BookingID: "b1"},
		domain.QuoteAccepted{QuoteID: "q1", BookingID: "b2", FlightID: flight})
	f.book("b2", "q1", flight, second)
	h := f.history()
	forwarder := domain.Principal{Subject: "client:f1", OrganizationID: "f1", Role: domain.RoleForwarder}
	for _, tt := range []struct {
		awb  string
		want []string
	}{
		{first, []string{"quote/q1 QuoteRequested", "quote/q1 QuotePriced", "quote/q1 QuoteAccepted b1", "booking/b1 BookingRequested",
			"booking/b1 BookingConfirmed", "booking/b1 BookingCancelled", "quote/q1 QuoteReopened b1"}},
		{second, []string{"quote/q1 QuoteRequested", "quote/q1 QuotePriced", "quote/q1 QuoteAccepted b2", "booking/b2 BookingRequested",
			"booking/b2 BookingConfirmed"}},
	} {
		page, err := h.Shipment(ctx, forwarder, tt.awb, 1, 100)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range page.Records {
			line := r.Aggregate.String() + " " + r.Type
			if r.Type == "QuoteAccepted" || r.Type == "QuoteReopened" {
				var e struct{ BookingID string }
				if err := json.Unmarshal(r.Data, &e); err != nil {
					t.Fatal(err)
				}
				line += " " + e.BookingID
			}
			got = append(got, line)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("the life of %s:\n%s\nwant:\n%s", tt.awb, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
	}
}

// A party an RFQ left out is left out of its QuoteRequested in the
// histories of the quote and of its shipment, where the event stores
// {"name": ""}; one it named is shown.
func TestAPartyAnRFQLeftOutIsLeftOutOfItsRequestInTheHistories(t *testing.T) {
	ctx := context.Background()
	f := newHistoryFixture(t)
	const awb, flight = "020-12345675", "LH1-2026-11-26"
	f.schedule(flight)
	f.append(domain.AggregateQuote, "q1", domain.QuoteRequested{QuoteID: "q1", OrganizationID: "f1", Origin: "FRA", Destination: "JFK",
		Shipper: domain.Party{Name: "ACME Machine Tools"}}, domain.QuoteAccepted{QuoteID: "q1", BookingID: "b1", FlightID: flight})
	f.book("b1", "q1", flight, awb)
	h, p := f.history(), domain.Principal{Subject: "client:f1", OrganizationID: "f1", Role: domain.RoleForwarder}
	for name, read := range map[string]func() (HistoryPage, error){
		"the quote's":    func() (HistoryPage, error) { return h.Quote(ctx, p, "q1", 1, 100) },
		"the shipment's": func() (HistoryPage, error) { return h.Shipment(ctx, p, awb, 1, 100) },
	} {
		t.Run(name, func(t *testing.T) {
			page, err := read()
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(page.Records, func(r domain.Record) bool { return r.Type == "QuoteRequested" })
			if i < 0 {
				t.Fatalf("no QuoteRequested in %+v", page.Records)
			}
			var e map[string]json.RawMessage
			if err := json.Unmarshal(page.Records[i].Data, &e); err != nil {
				t.Fatal(err)
			}
			if _, ok := e["consignee"]; ok || string(e["shipper"]) != `{"name":"ACME Machine Tools"}` || string(e["quoteId"]) != `"q1"` {
				t.Errorf("QuoteRequested = %s, want its shipper and no consignee", page.Records[i].Data)
			}
		})
	}
}

// historyFixture is a store whose read models a running projector keeps,
// for the shipment history tests to write a shipment's life into and read
// it back through History as a caller would.
type historyFixture struct {
	t         *testing.T
	store     *eventstore.Store
	models    Models
	projector *Projector
	lastOf    map[domain.Aggregate]uint64
	last      uint64
}

func newHistoryFixture(t *testing.T) *historyFixture {
	t.Helper()
	store := storetest.Open(t)
	models := NewModels()
	projector := NewProjector(store, slog.New(slog.DiscardHandler), models.All()...)
	run, cancel := context.WithCancel(context.Background())
	// Cleanups run last first: the projector stops before the store closes.
	t.Cleanup(cancel)
	go projector.Run(run)
	return &historyFixture{t: t, store: store, models: models, projector: projector, lastOf: map[domain.Aggregate]uint64{}}
}

// append appends events to one aggregate in turn, each expecting the
// aggregate's last sequence, so that a test writes a stream as commands would.
func (f *historyFixture) append(typ, id string, events ...domain.Event) {
	f.t.Helper()
	agg := domain.Aggregate{Type: typ, ID: id}
	for _, e := range events {
		data, err := json.Marshal(e)
		if err != nil {
			f.t.Fatal(err)
		}
		seqs, err := f.store.Append(context.Background(), agg, f.lastOf[agg], []domain.Envelope{{Type: e.EventType(), SchemaVersion: 1,
			EventID: fmt.Sprint("e", f.last+1), Actor: "client:test", CorrelationID: "c1", OccurredAt: time.Now(), Data: data}})
		if err != nil {
			f.t.Fatal(err)
		}
		f.last, f.lastOf[agg] = seqs[0], seqs[0]
	}
}

// book records booking, of quoteID on flight by forwarder f1, confirmed
// under awb.
func (f *historyFixture) book(bookingID, quoteID, flight, awb string) {
	f.t.Helper()
	f.append(domain.AggregateBooking, bookingID, domain.BookingRequested{BookingID: bookingID, QuoteID: quoteID, FlightID: flight, OrganizationID: "f1"},
		domain.BookingConfirmed{BookingID: bookingID, FlightID: flight, AWBNumber: awb})
}

// schedule schedules FRA to JFK flights of carrier LH, each named by its
// ID, "<flight number>-<departure date>" such as "LH1-2026-11-26".
func (f *historyFixture) schedule(flightIDs ...string) {
	f.t.Helper()
	for _, id := range flightIDs {
		number, date, _ := strings.Cut(id, "-")
		f.append(domain.AggregateFlight, id, domain.FlightScheduled{FlightID: id, Carrier: "LH", AWBPrefix: "020", FlightNumber: number,
			Origin: "FRA", Destination: "JFK", DepartureDate: date})
	}
}

// history waits until the models have every event appended so far, since
// History reads them beside the stream, and returns a History over both.
func (f *historyFixture) history() History {
	f.t.Helper()
	wait, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	if err := f.projector.WaitFor(wait, f.last); err != nil {
		f.t.Fatal(err)
	}
	m := f.models
	return History{Events: f.store, Quotes: m.Quotes, Bookings: m.Bookings, Stock: m.Stock, Flights: m.Flights,
		Documents: m.Documents, ShipmentFacts: ShipmentFacts{Bookings: m.Bookings, Shipments: m.Shipments, Stock: m.Stock, Flights: m.Flights}}
}
