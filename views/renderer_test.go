package views

import (
	"fmt"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/projections"
)

func TestRendererShowsQuotesAsTheirEventsMadeThemToThoseWhoMaySee(t *testing.T) {
	at := time.Date(2026, 11, 26, 9, 30, 0, 0, time.UTC)
	quotes := projections.NewQuotes()
	identity := identityOf(
		domain.OrganizationCreated{OrganizationID: "f1", Role: domain.RoleForwarder, CreatedAt: at},
		domain.OrganizationCreated{OrganizationID: "f2", Role: domain.RoleForwarder, CreatedAt: at},
	)
	requested := domain.QuoteRequested{QuoteID: "q1", OrganizationID: "f1", Origin: "FRA", Destination: "JFK", Pieces: 2,
		GrossWeightKg: 350.5, Commodity: domain.Commodity{Code: "GEN"}, RequestedAt: at}
	rec := domain.Record{Aggregate: domain.Aggregate{Type: domain.AggregateQuote, ID: "q1"}}
	quotes.Apply(rec, requested)
	// Priced before the dispatcher comes to quote.created, as the pricing
	// reactor runs beside it.
	quotes.Apply(rec, domain.QuotePriced{QuoteID: "q1", ChargeableWeightKg: 350.5, PricedAt: at.Add(time.Second)})
	r := &Renderer{Identity: identity, Quotes: quotes}

	data, ok := r.Render(domain.AggregateQuote, "q1", requested, "f1")
	if q, isQuote := data.(QuoteJSON); !ok || !isQuote || q.Status != domain.QuoteStatusPending || q.ChargeableWeightKg != nil {
		t.Errorf("quote.created to its forwarder = %+v, %v; want the quote pending, as requested", data, ok)
	}
	data, ok = r.Render(domain.AggregateQuote, "q1", domain.QuotePriced{QuoteID: "q1"}, "f1")
	if q, isQuote := data.(QuoteJSON); !ok || !isQuote || q.Status != domain.QuoteStatusPriced {
		t.Errorf("quote.priced to its forwarder = %+v, %v; want the quote priced", data, ok)
	}
	// A retry of quote.priced that goes out once the quote is booked, and
	// one of quote.accepted once the booking is cancelled, show the quote
	// as their events made it.
	priced := domain.QuotePriced{QuoteID: "q1", ChargeableWeightKg: 350.5, PricedAt: at.Add(time.Second),
		Options: []domain.PriceOption{{FlightID: "LH8400-2026-11-27", Carrier: "LH", TotalAmount: 1016.45, Currency: "EUR", ValidityHours: 48}}}
	accepted := domain.QuoteAccepted{QuoteID: "q1", BookingID: "b1", FlightID: "LH8400-2026-11-27", AcceptedAt: at.Add(time.Minute)}
	quotes.Apply(rec, priced)
	for _, tt := range []struct {
		name  string
		since domain.Event // applied to the read model first
		e     domain.Event
		want  string
	}{
		{"quote.priced", accepted, priced, domain.QuoteStatusPriced},
		{"quote.accepted", domain.QuoteReopened{QuoteID: "q1", BookingID: "b1", ReopenedAt: at.Add(time.Hour)}, accepted, domain.QuoteStatusAccepted},
	} {
		quotes.Apply(rec, tt.since)
		data, ok := r.Render(domain.AggregateQuote, "q1", tt.e, "f1")
		if q, isQuote := data.(QuoteJSON); !ok || !isQuote || q.Status != tt.want || len(q.PriceOptions) != 1 {
			t.Errorf("%s once the quote is %T = %+v, %v; want it %s", tt.name, tt.since, data, ok, tt.want)
		}
	}
	if _, ok := r.Render(domain.AggregateQuote, "q1", requested, "f2"); ok {
		t.Error("quote.created is rendered for another forwarder")
	}
	if _, ok := r.Render(domain.AggregateQuote, "q1", requested, "nobody"); ok {
		t.Error("quote.created is rendered for an unknown organisation")
	}
}

// booking.created and stock.requested show the resource as their first
// event made it, as quote.created does: the booking reactor confirms a
// booking (and an airline may reply to a stock request) before the
// dispatcher comes to the event, and the read model then holds the later
// state.
func TestRendererShowsBookingsAndStockRequestsAsTheEventDeliveredMadeThem(t *testing.T) {
	at := time.Date(2026, 11, 26, 9, 30, 0, 0, time.UTC)
	bookings, stock := projections.NewBookings(), projections.NewAWBStock()
	identity := identityOf(
		domain.OrganizationCreated{OrganizationID: "f1", Role: domain.RoleForwarder, CreatedAt: at},
		domain.OrganizationCreated{OrganizationID: "f2", Role: domain.RoleForwarder, CreatedAt: at},
	)
	requested := domain.BookingRequested{BookingID: "b1", QuoteID: "q1", FlightID: "LH8400-2026-11-27", OrganizationID: "f1",
		Pieces: 2, WeightKg: 350.5, Commodity: "RLI", SHC: []string{"DGR", "CAO"}, Shipper: domain.FullParty{Name: "ACME Batteries GmbH"}, RequestedAt: at}
	confirmed := domain.BookingConfirmed{BookingID: "b1", FlightID: "LH8400-2026-11-27", AWBNumber: "020-12345675", ConfirmedAt: at.Add(time.Second),
		Price: domain.BookingPrice{PricePerKg: 2.1, Currency: "EUR", QuotedTotal: 736.05}}
	rec := domain.Record{Aggregate: domain.Aggregate{Type: domain.AggregateBooking, ID: "b1"}}
	cancelled := domain.BookingCancelled{BookingID: "b1", Reason: "shipper withdrew", CancelledAt: at.Add(time.Hour)}
	bookings.Apply(rec, requested)
	bookings.Apply(rec, confirmed)
	bookings.Apply(rec, cancelled) // the read model is past the events delivered
	stockRequested := domain.StockRequested{RequestID: "s1", OrganizationID: "f1", AirlinePrefix: "020", RequestedStock: 100, ValidityPeriod: 6, SubmittedAt: at}
	srec := domain.Record{Aggregate: domain.Aggregate{Type: domain.AggregateStockRequest, ID: "s1"}}
	stock.Apply(srec, stockRequested)
	replied := domain.StockReplied{RequestID: "s1", OrganizationID: "f1", AirlinePrefix: "020", Status: domain.StockStatusApproved,
		AllocatedStock: 100, ValidFrom: "2026-11-26", ValidTo: "2027-05-26", Range: domain.AWBRange{First: 1, Count: 100}, RepliedAt: at.Add(time.Minute)}
	stock.Apply(srec, replied)
	replied.Status, replied.AllocatedStock, replied.Range = domain.StockStatusPartiallyApproved, 50, domain.AWBRange{First: 1, Count: 50}
	stock.Apply(srec, replied) // a later reply
	r := &Renderer{Identity: identity, Bookings: bookings, Stock: stock}

	tests := []struct {
		name         string
		agg, id      string
		e            domain.Event
		org          string
		visible      bool
		status, awb  string
		allocated    int
		processedNil bool
	}{
		{"booking.created", domain.AggregateBooking, "b1", requested, "f1", true, domain.BookingStatusPending, "", 0, false},
		{"booking.confirmed", domain.AggregateBooking, "b1", confirmed, "f1", true, domain.BookingStatusConfirmed, "020-12345675", 0, false},
		{"booking.created to another forwarder", domain.AggregateBooking, "b1", requested, "f2", false, "", "", 0, false},
		{"stock.requested", domain.AggregateStockRequest, "s1", stockRequested, "f1", true, domain.StockStatusPending, "", 0, true},
		{"booking.cancelled", domain.AggregateBooking, "b1", cancelled, "f1", true, domain.BookingStatusCancelled, "020-12345675", 0, false},
		{"stock.replied, the first reply", domain.AggregateStockRequest, "s1", domain.StockReplied{RequestID: "s1", OrganizationID: "f1", AirlinePrefix: "020",
			Status: domain.StockStatusApproved, AllocatedStock: 100, Range: domain.AWBRange{First: 1, Count: 100}, RepliedAt: at.Add(time.Minute)}, "f1", true, domain.StockStatusApproved, "", 100, false},
		{"stock.replied, the later reply", domain.AggregateStockRequest, "s1", replied, "f1", true, domain.StockStatusPartiallyApproved, "", 50, false},
		{"stock.requested to another forwarder", domain.AggregateStockRequest, "s1", stockRequested, "f2", false, "", "", 0, false},
	}
	for _, tt := range tests {
		data, ok := r.Render(tt.agg, tt.id, tt.e, tt.org)
		if ok != tt.visible {
			t.Errorf("%s: rendered %v, want %v", tt.name, ok, tt.visible)
			continue
		}
		if !ok {
			continue
		}
		switch d := data.(type) {
		case BookingJSON:
			// Every event's data shows the goods and parties booked, as
			// the booking's GET does.
			if d.Status != tt.status || d.AWBNumber != tt.awb || fmt.Sprintf("%s %v %s", d.Commodity, d.SHC, d.Shipper.Name) != "RLI [DGR CAO] ACME Batteries GmbH" {
				t.Errorf("%s = %+v, want status %s, AWB %q and the goods and shipper booked", tt.name, d, tt.status, tt.awb)
			}
			// The price is agreed on confirmation, and stays.
			if priced := d.Price == confirmed.Price; priced != (tt.status != domain.BookingStatusPending) {
				t.Errorf("%s: price %+v, want %+v from confirmation on", tt.name, d.Price, confirmed.Price)
			}
		case StockRequestJSON:
			if d.Status != tt.status || d.AllocatedStock != tt.allocated || (d.ProcessedAt == nil) != tt.processedNil {
				t.Errorf("%s = %+v, want status %s, %d allocated, processedAt null %v", tt.name, d, tt.status, tt.allocated, tt.processedNil)
			}
		default:
			t.Errorf("%s = %T", tt.name, data)
		}
	}
}

// A shut-out tenant (disabled or deleted organisation) gets no more data
// through its webhooks than through the API: an airline disabled must not
// go on receiving every new RFQ open to it.
func TestRendererRendersNothingForAnOrganisationThatIsNotActive(t *testing.T) {
	at := time.Date(2026, 11, 26, 9, 30, 0, 0, time.UTC)
	quotes := projections.NewQuotes()
	identity := identityOf(
		domain.OrganizationCreated{OrganizationID: "f1", Role: domain.RoleForwarder, CreatedAt: at},
		domain.OrganizationCreated{OrganizationID: "lh", Role: domain.RoleAirline, AWBPrefix: "020", AirlineCode: "LH", CreatedAt: at},
	)
	requested := domain.QuoteRequested{QuoteID: "q1", OrganizationID: "f1", Origin: "FRA", Destination: "JFK", Pieces: 2,
		GrossWeightKg: 350.5, Commodity: domain.Commodity{Code: "GEN"}, RequestedAt: at}
	quotes.Apply(domain.Record{Aggregate: domain.Aggregate{Type: domain.AggregateQuote, ID: "q1"}}, requested)
	r := &Renderer{Identity: identity, Quotes: quotes}
	if _, ok := r.Render(domain.AggregateQuote, "q1", requested, "lh"); !ok {
		t.Fatal("quote.created is not rendered for an active airline it is open to")
	}
	for _, tt := range []struct {
		status  domain.CredentialStatus
		visible bool
	}{
		{domain.StatusDisabled, false},
		{domain.StatusActive, true},
		{domain.StatusDeleted, false},
	} {
		identity.Apply(domain.Record{}, domain.OrganizationStatusChanged{OrganizationID: "lh", Status: tt.status, ChangedAt: at})
		if _, ok := r.Render(domain.AggregateQuote, "q1", requested, "lh"); ok != tt.visible {
			t.Errorf("quote.created to an airline %s: rendered %v, want %v", tt.status, ok, tt.visible)
		}
		if got := r.Receives("lh"); got != tt.visible {
			t.Errorf("an airline %s receives deliveries: %v, want %v", tt.status, got, tt.visible)
		}
	}
}

// A demo organisation's credentials are public: with demo mode off it is
// closed whole, and so are the subscriptions anyone registered with them.
func TestRendererRendersNothingForADemoOrganisationWithoutDemoMode(t *testing.T) {
	at := time.Date(2026, 11, 26, 9, 30, 0, 0, time.UTC)
	quotes := projections.NewQuotes()
	identity := identityOf(
		domain.OrganizationCreated{OrganizationID: "f1", Role: domain.RoleForwarder, CreatedAt: at},
		domain.OrganizationCreated{OrganizationID: "demo-lh", Role: domain.RoleAirline, AWBPrefix: "020", AirlineCode: "LH", Demo: true, CreatedAt: at},
	)
	requested := domain.QuoteRequested{QuoteID: "q1", OrganizationID: "f1", Origin: "FRA", Destination: "JFK", Pieces: 2,
		GrossWeightKg: 350.5, Commodity: domain.Commodity{Code: "GEN"}, RequestedAt: at}
	quotes.Apply(domain.Record{Aggregate: domain.Aggregate{Type: domain.AggregateQuote, ID: "q1"}}, requested)
	for _, demo := range []bool{true, false} {
		r := &Renderer{Identity: identity, Quotes: quotes, Demo: demo}
		if _, ok := r.Render(domain.AggregateQuote, "q1", requested, "demo-lh"); ok != demo {
			t.Errorf("quote.created to the demo airline, demo mode %v: rendered %v, want %v", demo, ok, demo)
		}
	}
}

// flight.status shows the flight as its event made it (the read model may
// be at a later status), to its airline and to the forwarders booked on
// it with their own bookings' ids; nobody else renders it.
func TestRendererShowsAFlightStatusToItsAirlineAndTheForwardersBookedOnIt(t *testing.T) {
	at := time.Date(2026, 11, 26, 9, 30, 0, 0, time.UTC)
	flights, bookings := projections.NewFlights(), projections.NewBookings()
	identity := identityOf(
		domain.OrganizationCreated{OrganizationID: "f1", Role: domain.RoleForwarder, CreatedAt: at},
		domain.OrganizationCreated{OrganizationID: "f2", Role: domain.RoleForwarder, CreatedAt: at},
		domain.OrganizationCreated{OrganizationID: "lh", Role: domain.RoleAirline, AWBPrefix: "020", AirlineCode: "LH", CreatedAt: at},
		domain.OrganizationCreated{OrganizationID: "ek", Role: domain.RoleAirline, AWBPrefix: "176", AirlineCode: "EK", CreatedAt: at},
		domain.OrganizationCreated{OrganizationID: "ops", Role: domain.RoleAdmin, CreatedAt: at},
	)
	const flightID = "LH8400-2026-11-27"
	frec := domain.Record{Aggregate: domain.Aggregate{Type: domain.AggregateFlight, ID: flightID}}
	flights.Apply(frec, domain.FlightScheduled{FlightID: flightID, Carrier: "LH", AWBPrefix: "020", FlightNumber: "LH8400", Origin: "FRA",
		Destination: "JFK", DepartureDate: "2026-11-27", DepartureTime: "10:05", ArrivalDate: "2026-11-27", ArrivalTime: "12:55",
		DepartsAt: at.Add(24 * time.Hour), AircraftType: "B77F", CapacityKg: 1000, CapacityM3: 10, ScheduledAt: at})
	for _, b := range []struct {
		id, org string
		outcome domain.Event
	}{
		{"b1", "f1", domain.BookingConfirmed{BookingID: "b1", FlightID: flightID, AWBNumber: "020-12345675", ConfirmedAt: at}},
		{"b2", "f2", domain.BookingRejected{BookingID: "b2", Reason: domain.ReasonFlightClosed, RejectedAt: at}},
	} {
		rec := domain.Record{Aggregate: domain.Aggregate{Type: domain.AggregateBooking, ID: b.id}}
		bookings.Apply(rec, domain.BookingRequested{BookingID: b.id, QuoteID: "q-" + b.id, FlightID: flightID, OrganizationID: b.org,
			Pieces: 1, WeightKg: 100, RequestedAt: at})
		bookings.Apply(rec, b.outcome)
	}
	delayed := domain.FlightStatusChanged{FlightID: flightID, Status: domain.FlightStatusDelayed, Previous: domain.FlightStatusScheduled, ChangedAt: at}
	flights.Apply(frec, delayed)
	// Cancelled before the dispatcher comes to the delay.
	flights.Apply(frec, domain.FlightStatusChanged{FlightID: flightID, Status: domain.FlightStatusCancelled, Previous: domain.FlightStatusDelayed,
		ChangedAt: at.Add(time.Hour)})
	r := &Renderer{Identity: identity, Flights: flights, Bookings: bookings}

	for _, tt := range []struct {
		org      string
		told     bool
		bookings string
	}{
		{"f1", true, "[b1]"},
		{"lh", true, "[]"},
		{"f2", false, ""}, // its booking was rejected
		{"ek", false, ""},
		{"ops", false, ""},
	} {
		data, ok := r.Render(domain.AggregateFlight, flightID, delayed, tt.org)
		if ok != tt.told {
			t.Errorf("flight.status to %s: rendered %v, want %v", tt.org, ok, tt.told)
			continue
		}
		if !ok {
			continue
		}
		d, isStatus := data.(FlightStatusJSON)
		if !isStatus || d.ID != flightID || d.Status != domain.FlightStatusDelayed || d.PreviousStatus != domain.FlightStatusScheduled ||
			!d.ChangedAt.Equal(at) || d.DepartureTime != "10:05" || fmt.Sprint(d.BookingIDs) != tt.bookings {
			t.Errorf("flight.status to %s = %+v, want the flight delayed from scheduled at %s, with bookings %s", tt.org, data, at, tt.bookings)
		}
	}
}

// flight.status shows the estimate of its own delay, whatever the read
// model holds by the time it is rendered: a later delay's estimate, or
// none, a delay without one having followed.
func TestRendererShowsAFlightStatusWithItsOwnDelaysEstimate(t *testing.T) {
	at := time.Date(2026, 11, 26, 9, 30, 0, 0, time.UTC)
	departs := at.Add(24 * time.Hour)
	flights := projections.NewFlights()
	identity := identityOf(domain.OrganizationCreated{OrganizationID: "lh", Role: domain.RoleAirline, AWBPrefix: "020", AirlineCode: "LH", CreatedAt: at})
	const flightID = "LH8400-2026-11-27"
	frec := domain.Record{Aggregate: domain.Aggregate{Type: domain.AggregateFlight, ID: flightID}}
	flights.Apply(frec, domain.FlightScheduled{FlightID: flightID, Carrier: "LH", AWBPrefix: "020", FlightNumber: "LH8400", Origin: "FRA",
		Destination: "JFK", DepartureDate: "2026-11-27", DepartureTime: "10:05", ArrivalDate: "2026-11-27", ArrivalTime: "12:55",
		DepartsAt: departs, AircraftType: "B77F", CapacityKg: 1000, CapacityM3: 10, ScheduledAt: at})
	delay := func(previous string, by time.Duration) domain.FlightStatusChanged {
		e := domain.FlightStatusChanged{FlightID: flightID, Status: domain.FlightStatusDelayed, Previous: previous, ChangedAt: at}
		if by > 0 {
			e.EstimatedDepartsAt, e.EstimatedArrivesAt = departs.Add(by), departs.Add(by+9*time.Hour)
		}
		return e
	}
	delays := []domain.FlightStatusChanged{delay(domain.FlightStatusScheduled, 2*time.Hour), delay(domain.FlightStatusDelayed, 5*time.Hour),
		delay(domain.FlightStatusDelayed, 0)}
	for _, e := range delays {
		flights.Apply(frec, e)
	}
	r := &Renderer{Identity: identity, Flights: flights, Bookings: projections.NewBookings()}
	for i, want := range []string{"2026-11-27T11:30:00Z 2026-11-27T20:30:00Z", "2026-11-27T14:30:00Z 2026-11-27T23:30:00Z", "- -"} {
		data, _ := r.Render(domain.AggregateFlight, flightID, delays[i], "lh")
		d, _ := data.(FlightStatusJSON)
		got := "- -"
		if !d.EstimatedDepartsAt.IsZero() || !d.EstimatedArrivesAt.IsZero() {
			got = d.EstimatedDepartsAt.Format(time.RFC3339) + " " + d.EstimatedArrivesAt.Format(time.RFC3339)
		}
		if got != want {
			t.Errorf("flight.status of delay %d estimates %s, want %s", i+1, got, want)
		}
	}
}

// identityOf is the identity read model of the organisations created.
func identityOf(orgs ...domain.OrganizationCreated) *projections.Identity {
	identity := projections.NewIdentity()
	for _, o := range orgs {
		identity.Apply(domain.Record{Aggregate: domain.Aggregate{Type: domain.AggregateOrganization, ID: o.OrganizationID}}, o)
	}
	return identity
}
