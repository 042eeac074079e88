package commands

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/internal/storetest"
	"github.com/cargostream/cargostream/projections"
)

// world is a store with a flight, a rate card and the reactors' parts,
// driven by hand so a test controls the clock and each step.
type world struct {
	h        *Handler
	store    *eventstore.Store
	reactors *Reactors
	identity *projections.Identity
	flights  *projections.Flights
	now      time.Time
	fwd      domain.Principal
	flightID string
}

func newWorld(t *testing.T, capacityKg float64) *world {
	t.Helper()
	store := storetest.Open(t)
	w := &world{store: store, h: New(store, 4, builtinReference()), flights: projections.NewFlights(), identity: projections.NewIdentity(),
		now: time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC),
		fwd: domain.Principal{Subject: "client:f", OrganizationID: "f", Role: domain.RoleForwarder}}
	w.h.now = func() time.Time { return w.now }
	rates := projections.NewRates()
	projector := projections.NewProjector(store, slog.New(slog.DiscardHandler), w.flights, rates, w.identity)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go projector.Run(ctx)
	w.reactors = NewReactors(w.h, store, struct {
		*projections.Flights
		*projections.Rates
		*projections.Identity
	}{w.flights, rates, w.identity}, projector, slog.New(slog.DiscardHandler))

	lh := domain.Principal{Subject: "client:lh", OrganizationID: "lh", Role: domain.RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}
	res, err := w.h.ScheduleFlights(ctx, NewMeta(lh, "", ""), []domain.ScheduleFlight{{FlightNumber: "LH400", Origin: "FRA", Destination: "JFK",
		DepartureDate: "2026-11-26", DepartureTime: "10:05", ArrivalDate: "2026-11-26", ArrivalTime: "12:55", AircraftType: "B77F",
		CapacityKg: &capacityKg}})
	if err != nil {
		t.Fatal(err)
	}
	w.flightID = res[0].State.ID
	if _, err := w.h.SetRateCard(ctx, NewMeta(lh, "", ""), domain.SetRateCard{Origin: "FRA", Destination: "*", Currency: "EUR",
		MinimumCharge: 50, WeightBreaks: map[string]float64{"N": 4, "100": 3}, ValidFrom: "2026-01-01", ValidTo: "2026-12-31"}); err != nil {
		t.Fatal(err)
	}
	return w
}

// lastRecord is the newest event of an aggregate, as a reactor gets it.
func (w *world) lastRecord(t *testing.T, agg domain.Aggregate) domain.Record {
	t.Helper()
	recs, err := w.store.Load(context.Background(), agg)
	if err != nil || len(recs) == 0 {
		t.Fatalf("load %s: %v", agg, err)
	}
	return recs[len(recs)-1]
}

// pricedQuote files an RFQ of weightKg and runs the pricing reactor on it,
// which prices it with one option.
func (w *world) pricedQuote(t *testing.T, weightKg float64) domain.Quote {
	t.Helper()
	q := w.quote(t, weightKg)
	if q.Status != domain.QuoteStatusPriced || len(q.Options) != 1 {
		t.Fatalf("quote after pricing = %+v", q)
	}
	return q
}

// quote files an RFQ of weightKg and runs the pricing reactor on it.
func (w *world) quote(t *testing.T, weightKg float64) domain.Quote {
	t.Helper()
	res, err := w.h.RequestQuote(context.Background(), NewMeta(w.fwd, "", ""), domain.RequestQuote{
		Origin: "FRA", Destination: "JFK", Pieces: new(1), GrossWeightKg: &weightKg})
	if err != nil {
		t.Fatal(err)
	}
	rec := w.lastRecord(t, quoteAggregate(res.State.ID))
	if err := w.reactors.price(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	q, _, _, _ := load(context.Background(), w.h, quoteAggregate(res.State.ID), domain.EvolveQuote, "", loadFresh)
	return q
}

func (w *world) book(t *testing.T, q domain.Quote) domain.Record {
	t.Helper()
	res, err := w.h.RequestBooking(context.Background(), NewMeta(w.fwd, "", ""), domain.RequestBooking{QuoteID: q.ID, FlightID: w.flightID})
	if err != nil {
		t.Fatal(err)
	}
	return w.lastRecord(t, bookingAggregate(res.State.ID))
}

// confirmedBooking books a priced quote of weightKg and runs the booking
// reactor on it, which confirms it; it returns the booking's request.
func (w *world) confirmedBooking(t *testing.T, weightKg float64) domain.Record {
	t.Helper()
	booked := w.book(t, w.pricedQuote(t, weightKg))
	if err := w.reactors.book(context.Background(), booked); err != nil {
		t.Fatal(err)
	}
	return booked
}

func (w *world) booking(t *testing.T, id string) domain.Booking {
	b, _, _, err := load(context.Background(), w.h, bookingAggregate(id), domain.EvolveBooking, "", loadFresh)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (w *world) flight(t *testing.T) domain.Flight {
	f, _, _, err := load(context.Background(), w.h, flightAggregate(w.flightID), domain.EvolveFlight, "", loadFresh)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestPricingQuotesFromRateCard(t *testing.T) {
	w := newWorld(t, 10000)
	q := w.pricedQuote(t, 120)
	o := q.Options[0]
	// 120 kg at the 100 kg break (3/kg) = 360, above the minimum of 50.
	if o.FlightID != w.flightID || o.TotalAmount != 360 || o.PricePerKg != 3 || o.Currency != "EUR" || o.ValidityHours != 48 {
		t.Errorf("option = %+v", o)
	}
}

func TestConfirmationRejectsAnExpiredOption(t *testing.T) {
	w := newWorld(t, 10000)
	q := w.pricedQuote(t, 100)
	rec := w.book(t, q)
	w.now = w.now.Add(49 * time.Hour)
	if err := w.reactors.book(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	b := w.booking(t, rec.Aggregate.ID)
	if b.Status != domain.BookingStatusRejected || b.Reason != domain.ReasonOptionExpired {
		t.Errorf("booking = %s (%s)", b.Status, b.Reason)
	}
	if f := w.flight(t); f.ReservedKg != 0 || len(f.Reservations) != 0 {
		t.Errorf("an expired booking reserved %g kg", f.ReservedKg)
	}
}

func TestConfirmationAfterACrashReservesOnce(t *testing.T) {
	w := newWorld(t, 10000)
	q := w.pricedQuote(t, 250)
	rec := w.book(t, q)
	// The reactor reserved capacity and then died before confirming.
	_, err := execute(context.Background(), w.h, flightAggregate(w.flightID), step(rec, "reserve"), domain.EvolveFlight,
		func(f domain.Flight) ([]domain.Event, error) {
			return domain.DecideReserveCapacity(f, rec.Aggregate.ID, domain.Reservation{WeightKg: 250}, w.now)
		})
	if err != nil {
		t.Fatal(err)
	}
	// Redelivery, twice for good measure.
	for range 2 {
		if err := w.reactors.book(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}
	if b := w.booking(t, rec.Aggregate.ID); b.Status != domain.BookingStatusConfirmed {
		t.Errorf("booking = %s (%s)", b.Status, b.Reason)
	}
	if f := w.flight(t); f.ReservedKg != 250 || len(f.Reservations) != 1 {
		t.Errorf("reserved %g kg in %d reservations, want 250 in 1", f.ReservedKg, len(f.Reservations))
	}
	// Cancelling gives the capacity back, once.
	res, err := w.h.CancelBooking(context.Background(), NewMeta(w.fwd, "", ""), rec.Aggregate.ID)
	if err != nil || res.State.Status != domain.BookingStatusCancelled {
		t.Fatalf("cancel = %+v, %v", res.State, err)
	}
	cancelled := w.lastRecord(t, bookingAggregate(rec.Aggregate.ID))
	for range 2 {
		if err := w.reactors.book(context.Background(), cancelled); err != nil {
			t.Fatal(err)
		}
	}
	if f := w.flight(t); f.ReservedKg != 0 || len(f.Reservations) != 0 {
		t.Errorf("after cancelling, %g kg reserved", f.ReservedKg)
	}
	// The quote may be booked again.
	if q2, _, _, _ := load(context.Background(), w.h, quoteAggregate(q.ID), domain.EvolveQuote, "", loadFresh); q2.Status != domain.QuoteStatusPriced {
		t.Errorf("quote after its booking was cancelled = %s", q2.Status)
	}
}

func TestAConfirmationSubmitsItsStepsAtOnce(t *testing.T) {
	w := newWorld(t, 10000)
	q := w.pricedQuote(t, 100)
	rec := w.book(t, q)
	log := &submitLog{Store: w.store}
	w.h.store = log
	if err := w.reactors.book(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	if b := w.booking(t, rec.Aggregate.ID); b.Status != domain.BookingStatusConfirmed {
		t.Fatalf("booking = %s (%s)", b.Status, b.Reason)
	}
	// Without stock of the airline, no number: three steps, not four.
	if got := log.submitted(); got != "[[flight quote booking]]" {
		t.Errorf("submitted %s, want the capacity, the quote and the booking at once", got)
	}
}

func TestAConfirmationRefusedAtItsAWBNumberStoresNothingOnTheFlight(t *testing.T) {
	w := newWorld(t, 10000)
	q := w.pricedQuote(t, 100)
	// A number of the flight's airline that the forwarder has no stock of.
	res, err := w.h.RequestBooking(context.Background(), NewMeta(w.fwd, "", ""), domain.RequestBooking{
		QuoteID: q.ID, FlightID: w.flightID, AWBPrefix: "020", AWBSerial: "12345675"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.reactors.book(context.Background(), w.lastRecord(t, bookingAggregate(res.State.ID))); err != nil {
		t.Fatal(err)
	}
	if b := w.booking(t, res.State.ID); b.Status != domain.BookingStatusRejected || b.Reason != domain.ReasonAWBNotInStock {
		t.Errorf("booking = %s (%s), want rejected: %s", b.Status, b.Reason, domain.ReasonAWBNotInStock)
	}
	// The capacity, decided before the number in the same transaction,
	// was never stored: nothing to give back.
	recs, err := w.store.Load(context.Background(), flightAggregate(w.flightID))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Type != (domain.FlightScheduled{}).EventType() {
			t.Errorf("the flight has a %s event", r.Type)
		}
	}
	if q, _, _, _ := load(context.Background(), w.h, quoteAggregate(q.ID), domain.EvolveQuote, "", loadFresh); q.Status != domain.QuoteStatusPriced {
		t.Errorf("quote = %s, want priced still", q.Status)
	}
}

func TestCancelledFlightCancelsItsBookings(t *testing.T) {
	w := newWorld(t, 10000)
	ctx := context.Background()
	var ids []string
	for range 2 {
		rec := w.book(t, w.pricedQuote(t, 100))
		if err := w.reactors.book(ctx, rec); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.Aggregate.ID)
	}
	lh := domain.Principal{Subject: "client:lh", OrganizationID: "lh", Role: domain.RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}
	if _, err := w.h.ChangeFlightStatus(ctx, NewMeta(lh, "", ""), w.flightID, domain.ChangeFlightStatus{Status: domain.FlightStatusCancelled}); err != nil {
		t.Fatal(err)
	}
	// The reactor sees the status change, then each cancellation.
	if err := w.reactors.book(ctx, w.lastRecord(t, flightAggregate(w.flightID))); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		b := w.booking(t, id)
		if b.Status != domain.BookingStatusCancelled || b.Reason != domain.ReasonFlightCanceled {
			t.Errorf("booking on a cancelled flight = %s (%s)", b.Status, b.Reason)
		}
		if err := w.reactors.book(ctx, w.lastRecord(t, bookingAggregate(id))); err != nil {
			t.Fatal(err)
		}
	}
	if f := w.flight(t); f.ReservedKg != 0 {
		t.Errorf("a cancelled flight still holds %g kg", f.ReservedKg)
	}
}

func TestRepeatedCommandIDAppendsOnce(t *testing.T) {
	w := newWorld(t, 1000)
	m := NewMeta(w.fwd, "retried-rfq", "")
	weight := 10.0
	first, err := w.h.RequestQuote(context.Background(), m, domain.RequestQuote{Origin: "FRA", Destination: "JFK", Pieces: new(1), GrossWeightKg: &weight})
	if err != nil {
		t.Fatal(err)
	}
	again, err := w.h.RequestQuote(context.Background(), m, domain.RequestQuote{Origin: "FRA", Destination: "JFK", Pieces: new(1), GrossWeightKg: &weight})
	if err != nil || again.State.ID != first.State.ID || again.Sequence != first.Sequence {
		t.Fatalf("retry = %+v, %v", again, err)
	}
	if recs, _ := w.store.Load(context.Background(), quoteAggregate(first.State.ID)); len(recs) != 1 {
		t.Errorf("%d events after a retried command, want 1", len(recs))
	}
}

// builtinReference is the built-in reference data, as the service loads it.
func builtinReference() *projections.Reference {
	ref := projections.NewReference()
	ref.Apply(domain.Record{}, domain.ReferenceChanged{Airports: domain.BuiltinAirports(),
		Airlines: domain.BuiltinAirlines(), Commodities: domain.BuiltinCommodities()})
	return ref
}

// The same on a flight: after a reservation retried on a replica whose
// cached flight is stale, that replica knows the reservations made in
// between, and the next reservation there does not overbook the flight.
func TestAReservationRetriedOnAReplicaWithAStaleFlightLetsNoneOverbookItThere(t *testing.T) {
	w := newWorld(t, 1000)
	ctx := context.Background()
	h1 := w.h // scheduled the flight: caches it
	h2 := New(w.store, 4, builtinReference())
	h2.now = h1.now
	if _, _, _, err := load(ctx, h1, flightAggregate(w.flightID), domain.EvolveFlight, "", loadFresh); err != nil {
		t.Fatal(err)
	}
	reserve := func(h *Handler, booking string, kg float64) error {
		m := Meta{CommandID: "booked-" + booking + ":reserve", Principal: domain.Principal{Subject: "reactor:reserve"}}
		_, err := execute(ctx, h, flightAggregate(w.flightID), m, domain.EvolveFlight, func(f domain.Flight) ([]domain.Event, error) {
			return domain.DecideReserveCapacity(f, booking, domain.Reservation{WeightKg: kg}, w.now)
		})
		return err
	}
	if err := reserve(h2, "b1", 500); err != nil {
		t.Fatal(err)
	}
	if err := reserve(h2, "b2", 400); err != nil {
		t.Fatal(err)
	}
	// b2's step redelivered to replica 1.
	if err := reserve(h1, "b2", 400); err != nil {
		t.Fatal(err)
	}
	// A new booking on replica 1: 100 kg are left, it asks 400.
	err := reserve(h1, "b3", 400)
	f, _, _, lerr := load(ctx, New(w.store, 4, builtinReference()), flightAggregate(w.flightID), domain.EvolveFlight, "", loadFresh)
	if lerr != nil {
		t.Fatal(lerr)
	}
	if err == nil || f.ReservedKg > f.CapacityKg {
		t.Errorf("b3's reservation = %v; the flight holds %g kg of %g: overbooked (%v in the store)", err, f.ReservedKg, f.CapacityKg, f.Reservations)
	}
}

// hookedLoads is the event store that runs hook, once armed, right after
// answering a load of agg: what happens in the store between a read and
// the decision made on it.
type hookedLoads struct {
	*eventstore.Store
	agg   domain.Aggregate
	armed atomic.Bool
	hook  func()
}

func (s *hookedLoads) LoadAfter(ctx context.Context, agg domain.Aggregate, after uint64) ([]domain.Record, error) {
	recs, err := s.Store.LoadAfter(ctx, agg, after)
	if agg == s.agg && s.armed.CompareAndSwap(true, false) {
		s.hook()
	}
	return recs, err
}

// Two replicas handle one BookingRequested at once (a redelivery while
// the first is still at it), at the moment its quote's options expire:
// one confirms; the other, refused (expired), finds the booking no longer
// pending when it rejects it, and stores nothing: its release would give
// back the capacity the confirmed booking holds.
func TestARejectionRacingAConfirmationOfTheSameBookingGivesBackNoCapacity(t *testing.T) {
	w := newWorld(t, 1000)
	ctx := context.Background()
	w.now = time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC) // priced early: options expire before departure
	q := w.pricedQuote(t, 600)
	rec := w.book(t, q)
	expiry := q.OptionsExpire()

	h2 := New(w.store, 4, builtinReference())
	h2.now = func() time.Time { return expiry.Add(-time.Second) }
	r2 := &Reactors{h: h2, data: w.reactors.data}
	hooked := &hookedLoads{Store: w.store, agg: quoteAggregate(q.ID)}
	hooked.hook = func() {
		if err := r2.confirm(ctx, rec); err != nil {
			t.Errorf("replica 2's confirmation: %v", err)
		}
	}
	w.h.store = hooked
	hooked.armed.Store(true)
	w.now = expiry.Add(time.Second)
	if err := w.reactors.book(ctx, rec); err != nil {
		t.Errorf("replica 1: %v", err)
	}

	fresh := New(w.store, 4, builtinReference())
	b, _, _, _ := load(ctx, fresh, rec.Aggregate, domain.EvolveBooking, "", loadFresh)
	f, _, _, _ := load(ctx, fresh, flightAggregate(w.flightID), domain.EvolveFlight, "", loadFresh)
	if _, held := f.Reservations[b.ID]; b.Status != domain.BookingStatusConfirmed || !held {
		t.Errorf("booking %s is %s, and the flight holds %g kg of %g, for %v; want it confirmed with its capacity held", b.ID, b.Status,
			f.ReservedKg, f.CapacityKg, f.Reservations)
	}
}

func TestAPendingBookingCancelledHoldsNotTheNumberItAskedFor(t *testing.T) {
	w := newWorld(t, 10000)
	ctx := context.Background()
	count := 10
	lh := domain.Principal{Subject: "client:lh", OrganizationID: "lh", Role: domain.RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}
	req, err := w.h.RequestStock(ctx, NewMeta(w.fwd, "", ""), domain.RequestStock{AirlinePrefix: "020",
		RequestedStock: &count, ValidityPeriod: new(12)}, func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.h.ReplyStock(ctx, NewMeta(lh, "", ""), req.State.ID, domain.ReplyStock{Status: domain.StockStatusApproved,
		AllocatedStock: &count, ValidFrom: "2026-11-25", ValidTo: "2027-11-25"}, projections.NewShipments()); err != nil {
		t.Fatal(err)
	}
	first := w.book(t, w.pricedQuote(t, 100))
	if err := w.reactors.book(ctx, first); err != nil {
		t.Fatal(err)
	}
	awb := w.booking(t, first.Aggregate.ID).AWBNumber
	if awb == "" {
		t.Fatal("the first booking took no number")
	}
	// A second booking names the first's number and is cancelled before
	// its confirmation is tried: it never took the number.
	named := func() domain.Record {
		res, err := w.h.RequestBooking(ctx, NewMeta(w.fwd, "", ""), domain.RequestBooking{QuoteID: w.pricedQuote(t, 100).ID,
			FlightID: w.flightID, AWBPrefix: awb[:3], AWBSerial: awb[4:]})
		if err != nil {
			t.Fatal(err)
		}
		return w.lastRecord(t, bookingAggregate(res.State.ID))
	}
	second := named()
	if _, err := w.h.CancelBooking(ctx, NewMeta(w.fwd, "", ""), second.Aggregate.ID); err != nil {
		t.Fatal(err)
	}
	for _, rec := range []domain.Record{second, w.lastRecord(t, bookingAggregate(second.Aggregate.ID))} {
		if err := w.reactors.book(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	// A third that names it is refused: the first still uses it.
	third := named()
	if err := w.reactors.book(ctx, third); err != nil {
		t.Fatal(err)
	}
	if b := w.booking(t, third.Aggregate.ID); b.Status != domain.BookingStatusRejected || b.Reason != domain.ReasonAWBUsed {
		t.Errorf("a booking naming %s, which a confirmed booking uses = %s (%s), want rejected: %s", awb, b.Status, b.Reason, domain.ReasonAWBUsed)
	}
}

// behindLoads is the event store answering loads from a copy that ends
// before sequence from: a node cut off a while, leading the stream again
// for a moment after, answers so.
type behindLoads struct {
	*eventstore.Store
	from uint64
}

func (s behindLoads) LoadAfter(ctx context.Context, agg domain.Aggregate, after uint64) ([]domain.Record, error) {
	recs, err := s.Store.LoadAfter(ctx, agg, after)
	return slices.DeleteFunc(recs, func(r domain.Record) bool { return r.Sequence >= s.from }), err
}

func (s behindLoads) Load(ctx context.Context, agg domain.Aggregate) ([]domain.Record, error) {
	return s.LoadAfter(ctx, agg, 0)
}

// A reactor handed an event that a load of its aggregate lacks (the store
// answered from a copy behind) tries the event again, rather than find
// nothing to do and let it go: an RFQ so read was never priced, a booking
// never confirmed. Once the copy has caught up, the event is handled.
func TestAReactorWhoseLoadLacksItsEventTriesItAgain(t *testing.T) {
	for _, tt := range []struct {
		name  string
		event func(w *world) domain.Record
		react func(r *Reactors, rec domain.Record) error
		done  func(w *world, rec domain.Record) bool
	}{
		{"an RFQ priced",
			func(w *world) domain.Record {
				res, err := w.h.RequestQuote(context.Background(), NewMeta(w.fwd, "", ""), domain.RequestQuote{
					Origin: "FRA", Destination: "JFK", Pieces: new(1), GrossWeightKg: new(100.0)})
				if err != nil {
					t.Fatal(err)
				}
				return w.lastRecord(t, quoteAggregate(res.State.ID))
			},
			func(r *Reactors, rec domain.Record) error { return r.price(context.Background(), rec) },
			func(w *world, rec domain.Record) bool {
				q, _, _, err := load(context.Background(), New(w.store, 4, builtinReference()), rec.Aggregate, domain.EvolveQuote, "", loadFresh)
				return err == nil && q.Status == domain.QuoteStatusPriced
			}},
		{"a booking confirmed",
			func(w *world) domain.Record { return w.book(t, w.pricedQuote(t, 100)) },
			func(r *Reactors, rec domain.Record) error { return r.book(context.Background(), rec) },
			func(w *world, rec domain.Record) bool {
				b, _, _, err := load(context.Background(), New(w.store, 4, builtinReference()), rec.Aggregate, domain.EvolveBooking, "", loadFresh)
				return err == nil && b.Status == domain.BookingStatusConfirmed
			}},
		{"a cancelled booking's quote reopened",
			func(w *world) domain.Record {
				booked := w.confirmedBooking(t, 100)
				if _, err := w.h.CancelBooking(context.Background(), NewMeta(w.fwd, "", ""), booked.Aggregate.ID); err != nil {
					t.Fatal(err)
				}
				return w.lastRecord(t, booked.Aggregate)
			},
			func(r *Reactors, rec domain.Record) error { return r.book(context.Background(), rec) },
			func(w *world, rec domain.Record) bool {
				// Its capacity was given back with the cancellation.
				h := New(w.store, 4, builtinReference())
				b, _, _, err := load(context.Background(), h, rec.Aggregate, domain.EvolveBooking, "", loadFresh)
				if err != nil {
					return false
				}
				q, _, _, err := load(context.Background(), h, quoteAggregate(b.QuoteID), domain.EvolveQuote, "", loadFresh)
				return err == nil && q.Status == domain.QuoteStatusPriced
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, 1000)
			rec := tt.event(w)
			// Another replica's reactor, which has not loaded the
			// aggregate before.
			other := *w.reactors
			other.h = New(behindLoads{Store: w.store, from: rec.Sequence}, 4, builtinReference())
			other.h.now = w.h.now
			if err := tt.react(&other, rec); !errors.Is(err, domain.ErrStoreUnavailable) || tt.done(w, rec) {
				t.Fatalf("handled on a load without the event: %v, done %v; want the store unavailable, and nothing done", err, tt.done(w, rec))
			}
			other.h.store = w.store
			if err := tt.react(&other, rec); err != nil || !tt.done(w, rec) {
				t.Errorf("handled again on a load with it: %v, done %v", err, tt.done(w, rec))
			}
		})
	}
}

// An airline whose organisation is disabled or deleted takes no bookings:
// no one of it could manifest, offload or report its flights. Its flights
// are priced no more, and a booking on an option priced before is
// rejected, flight_closed; once enabled again, they are priced again.
func TestAnAirlineWhoseOrganisationIsNotActiveTakesNoBookings(t *testing.T) {
	w := newWorld(t, 10000)
	ctx := context.Background()
	admin := func() Meta {
		return NewMeta(domain.Principal{Subject: "client:ops", OrganizationID: "ops", Role: domain.RoleAdmin}, "", "")
	}
	if _, err := w.h.CreateOrganization(ctx, admin(), domain.CreateOrganization{OrganizationID: "lh", Name: "Lufthansa Cargo",
		Role: domain.RoleAirline, AWBPrefix: "020", AirlineCode: "LH"}); err != nil {
		t.Fatal(err)
	}
	before := w.pricedQuote(t, 100) // LH's option, while its organisation is active
	for _, status := range []domain.CredentialStatus{domain.StatusDisabled, domain.StatusActive} {
		res, err := w.h.SetOrganizationStatus(ctx, admin(), "lh", status)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.reactors.readers.WaitFor(ctx, res.Sequence); err != nil {
			t.Fatal(err)
		}
		q := w.quote(t, 100)
		if offered := len(q.Options) > 0; offered != (status == domain.StatusActive) {
			t.Errorf("with LH %s, the quote is %s with options %+v", status, q.Status, q.Options)
		}
		if status == domain.StatusDisabled {
			rec := w.book(t, before)
			if err := w.reactors.book(ctx, rec); err != nil {
				t.Fatal(err)
			}
			if b := w.booking(t, rec.Aggregate.ID); b.Status != domain.BookingStatusRejected || b.Reason != domain.ReasonFlightClosed {
				t.Errorf("a booking on an option priced before LH was disabled: %s %s, want rejected, flight_closed", b.Status, b.Reason)
			}
		}
	}
}

// Goods for cargo aircraft only, priced on a flight while a freighter
// flew it, are not booked on it once a passenger aircraft does: the
// booking is rejected, commodity_not_accepted, and takes no capacity, as
// the pricing reactor would not offer the flight now and its manifest
// would refuse them. Other goods are booked, and so are they when a
// freighter flies it still.
func TestABookingOfGoodsForCargoAircraftOnlyIsRejectedOnAFlightNowFlownByAPassengerAircraft(t *testing.T) {
	tests := []struct {
		name      string
		commodity string
		shc       []string
		aircraft  string
		want      string // the booking's status, and its reason if rejected
	}{
		{"CAO on a passenger aircraft", "GEN", []string{"CAO"}, "B77W", "rejected commodity_not_accepted"},
		{"lithium ion batteries on a passenger aircraft", "RLI", nil, "B77W", "rejected commodity_not_accepted"},
		{"general cargo on a passenger aircraft", "GEN", nil, "B77W", "confirmed"},
		{"CAO on another freighter", "GEN", []string{"CAO"}, "B744F", "confirmed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, 10000)
			ctx := context.Background()
			weight := 100.0
			res, err := w.h.RequestQuote(ctx, NewMeta(w.fwd, "", ""), domain.RequestQuote{Origin: "FRA", Destination: "JFK",
				Pieces: new(1), GrossWeightKg: &weight, Commodity: domain.Commodity{Code: tt.commodity, Description: "goods"}, SHC: tt.shc})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.reactors.price(ctx, w.lastRecord(t, quoteAggregate(res.State.ID))); err != nil {
				t.Fatal(err)
			}
			q, _, _, _ := load(ctx, w.h, quoteAggregate(res.State.ID), domain.EvolveQuote, "", loadFresh)
			if _, ok := q.Option(w.flightID); !ok {
				t.Fatalf("the freighter was not priced: %+v", q)
			}
			lh := domain.Principal{Subject: "client:lh", OrganizationID: "lh", Role: domain.RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}
			if _, err := w.h.ChangeFlightAircraft(ctx, NewMeta(lh, "", ""), w.flightID, domain.ChangeFlightAircraft{AircraftType: tt.aircraft},
				func(string) string { return "" }); err != nil {
				t.Fatal(err)
			}
			rec := w.book(t, q)
			if err := w.reactors.book(ctx, rec); err != nil {
				t.Fatal(err)
			}
			b := w.booking(t, rec.Aggregate.ID)
			got := b.Status
			if b.Reason != "" {
				got += " " + b.Reason
			}
			if got != tt.want {
				t.Errorf("booking = %s, want %s", got, tt.want)
			}
			if f := w.flight(t); (b.Status == domain.BookingStatusConfirmed) != (f.ReservedKg == weight) {
				t.Errorf("a %s booking left %g kg reserved", b.Status, f.ReservedKg)
			}
		})
	}
}
