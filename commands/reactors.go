package commands

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"

	"github.com/cargostream/cargostream/domain"
)

// PricingData is what the pricing and booking reactors read: the read
// models of flights (with their reservations), rate cards, and the
// airlines' organisations (by AWB prefix or IATA code).
type PricingData interface {
	FlightsBetween(origin, destination string) []domain.Flight
	RateCards(carriers []string) []domain.RateCard
	Airline(prefix, code string) (domain.Organization, bool)
}

// bookable is the flights of those that an airline whose organisation
// takes bookings flies (see domain.CheckAirlineTakesBookings). A route's
// flights are a few carriers' many days: each carrier is looked up once.
func (r *Reactors) bookable(flights []domain.Flight) []domain.Flight {
	var out []domain.Flight
	takes := map[string]bool{}
	for _, f := range flights {
		ok, seen := takes[f.Carrier]
		if !seen {
			o, known := r.data.Airline("", f.Carrier)
			ok = domain.CheckAirlineTakesBookings(o, known, f.ID) == nil
			takes[f.Carrier] = ok
		}
		if ok {
			out = append(out, f)
		}
	}
	return out
}

// EventFeed hands events to consumers that all replicas share
// (eventstore.Store implements it): each event to one of them, again
// until it is handled. Filter names the events of an aggregate type, or
// of one aggregate.
type EventFeed interface {
	Consume(ctx context.Context, name string, filters []string, parallel int, fn func(domain.Record) error, onError func(domain.Record, error))
	Filter(aggregateType, id string) string
}

// Waiter waits until the read models have applied a sequence.
type Waiter interface {
	WaitFor(ctx context.Context, seq uint64) error
}

// Reactors are the flows that follow events: pricing quotes; confirming,
// rejecting and cancelling bookings; and giving manifested and offloaded
// shipments their MAN and DIS/OFLD status events. They run on durable
// consumers shared by all replicas, and every step is a command with an id
// derived from the event, so a redelivered event repeats nothing.
type Reactors struct {
	h       *Handler
	feed    EventFeed
	data    PricingData
	readers Waiter
	log     *slog.Logger
}

// NewReactors returns the reactors of h.
func NewReactors(h *Handler, feed EventFeed, data PricingData, readers Waiter, log *slog.Logger) *Reactors {
	return &Reactors{h: h, feed: feed, data: data, readers: readers, log: log}
}

// reactorParallel is how many events, of different aggregates, each
// reactor handles at once. Their commands then reach the event store
// together, where concurrent appends share the cost of a synced write.
const reactorParallel = 64

// Run runs every reactor until ctx ends.
func (r *Reactors) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for name, reactor := range map[string]struct {
		filters []string
		react   func(context.Context, domain.Record) error
	}{
		"pricing":   {[]string{r.feed.Filter(domain.AggregateQuote, "")}, r.price},
		"bookings":  {[]string{r.feed.Filter(domain.AggregateBooking, ""), r.feed.Filter(domain.AggregateFlight, "")}, r.book},
		"shipments": {[]string{r.feed.Filter(domain.AggregateFlight, "")}, r.ship},
	} {
		filters := reactor.filters
		handle := func(rec domain.Record) error { return reactor.react(ctx, rec) }
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Runs until ctx ends: a consumer that fails is begun again.
			r.feed.Consume(ctx, name, filters, reactorParallel, handle, func(rec domain.Record, err error) {
				r.log.Error("reactor failed on an event: it is tried again, and parked after CARGO_REACTOR_ATTEMPTS failures in a row", "reactor", name,
					"sequence", rec.Sequence, "type", rec.Type, "aggregate", rec.Aggregate.String(), "err", err)
			})
		}()
	}
	wg.Wait()
}

// step is the metadata of one command a reactor issues for an event.
func step(rec domain.Record, name string) Meta {
	return Meta{
		CommandID:     rec.EventID + ":" + name,
		CorrelationID: rec.CorrelationID,
		CausationID:   rec.EventID,
		Principal:     domain.Principal{Subject: "reactor:" + name},
		cause:         rec,
	}
}

// loadAfter loads rec's aggregate as it is now, rec included (see
// includes).
func loadAfter[S any](ctx context.Context, h *Handler, rec domain.Record, evolve func(S, domain.Event) S) (S, error) {
	state, entry, _, err := load(ctx, h, rec.Aggregate, evolve, "", loadFresh)
	if err == nil {
		err = includes(rec.Aggregate, entry.last, rec)
	}
	return state, err
}

// price answers a new RFQ with priced options, or rejects it.
func (r *Reactors) price(ctx context.Context, rec domain.Record) error {
	if rec.Type != (domain.QuoteRequested{}).EventType() {
		return nil
	}
	// Price against the flights and rates as they are now, at least as
	// they were when the RFQ came: a card set in between (a reactor
	// behind, an event parked and retried) prices it too.
	if err := r.readers.WaitFor(ctx, rec.Sequence); err != nil {
		return err
	}
	now := r.h.now().UTC()
	_, err := execute(ctx, r.h, rec.Aggregate, step(rec, "pricing"), domain.EvolveQuote, func(q domain.Quote) ([]domain.Event, error) {
		if q.Status != domain.QuoteStatusPending {
			return nil, nil
		}
		options, refusal := domain.PriceQuote(q, r.h.ref, r.bookable(r.data.FlightsBetween(q.Origin, q.Destination)), r.data.RateCards(q.AirlineFilter), now)
		return domain.DecidePriceQuote(q, options, refusal, now)
	})
	return err
}

// book confirms or rejects a new booking; gives back the capacity and the
// quote of a cancelled one, together; and cancels the bookings of a
// cancelled flight.
func (r *Reactors) book(ctx context.Context, rec domain.Record) error {
	switch rec.Type {
	case domain.BookingRequested{}.EventType():
		return r.confirm(ctx, rec)
	case domain.BookingCancelled{}.EventType():
		b, err := loadAfter(ctx, r.h, rec, domain.EvolveBooking)
		if err != nil {
			return err
		}
		e, err := domain.DecodeEvent(rec.Type, rec.Data)
		if err != nil {
			return err
		}
		now := r.h.now().UTC()
		return transact(ctx, r.h, func(t *transaction) error {
			// A cancellation by its forwarder gave the capacity back
			// with it; one of a cancelled flight, or stored by an
			// earlier version, did not.
			if !e.(domain.BookingCancelled).CapacityReleased {
				if err := r.release(t, rec, b); err != nil {
					return err
				}
			}
			if err := r.holdAWB(t, rec, b); err != nil {
				return err
			}
			_, err := decideIn(t, quoteAggregate(b.QuoteID), step(rec, "reopen"), domain.EvolveQuote,
				func(q domain.Quote) ([]domain.Event, error) { return domain.DecideReopenQuote(q, b.ID, now) })
			return err
		})
	case domain.FlightStatusChanged{}.EventType():
		f, err := loadAfter(ctx, r.h, rec, domain.EvolveFlight)
		if err != nil || f.Status != domain.FlightStatusCancelled {
			return err
		}
		now := r.h.now().UTC()
		for _, id := range slices.Sorted(maps.Keys(f.Reservations)) {
			_, err := execute(ctx, r.h, bookingAggregate(id), step(rec, "cancel:"+id), domain.EvolveBooking,
				func(b domain.Booking) ([]domain.Event, error) {
					if b.Status != domain.BookingStatusConfirmed && b.Status != domain.BookingStatusPending {
						return nil, nil
					}
					return domain.DecideCancelBooking(b, f, domain.ReasonFlightCanceled, now)
				})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// confirm takes a pending booking through its checks: the quote, then, in
// one transaction, capacity on the flight (optimistic concurrency on the
// flight: racing bookings never overbook), the AWB number from the
// forwarder's stock, the quote's acceptance and the booking's
// confirmation, all stored together or none. A refusal rejects the
// booking, and gives back capacity held in the same transaction. Each step
// is idempotent, so after a crash the redelivered event finishes the work,
// as it does for a history whose steps were stored one by one (before
// transactions).
func (r *Reactors) confirm(ctx context.Context, rec domain.Record) error {
	b, err := loadAfter(ctx, r.h, rec, domain.EvolveBooking)
	if err != nil || b.Status != domain.BookingStatusPending {
		return err
	}
	now := r.h.now().UTC()
	q, _, _, err := load(ctx, r.h, quoteAggregate(b.QuoteID), domain.EvolveQuote, "", loadFresh)
	if err != nil {
		return err
	}
	refusal := domain.CheckBookable(q, b, now)
	// CheckBookable passed only with an option for the flight.
	option, _ := q.Option(b.FlightID)
	if refusal == nil {
		o, known := r.data.Airline("", option.Carrier)
		refusal = domain.CheckAirlineTakesBookings(o, known, b.FlightID)
	}
	if refusal == nil {
		refusal = transact(ctx, r.h, func(t *transaction) error {
			f, err := decideIn(t, flightAggregate(b.FlightID), step(rec, "reserve"), domain.EvolveFlight,
				func(f domain.Flight) ([]domain.Event, error) {
					events, err := domain.DecideReserveCapacity(f, b.ID, domain.Reservation{WeightKg: b.WeightKg, VolumeM3: b.VolumeM3}, now)
					if err != nil || len(events) == 0 {
						return events, err // refused, or held already
					}
					// Priced while a freighter flew it, the flight may
					// be flown by a passenger aircraft now.
					if err := domain.RefuseOnPassengerAircraft(b, f, r.h.ref); err != nil {
						return nil, err
					}
					return events, nil
				})
			if err != nil {
				return err
			}
			// The flight's prefix never changes: the state the
			// reservation was decided on has it.
			awb, err := r.assignAWB(t, rec, b, f.State.AWBPrefix)
			if err != nil {
				return err
			}
			if _, err := decideIn(t, quoteAggregate(q.ID), step(rec, "accept"), domain.EvolveQuote,
				func(q domain.Quote) ([]domain.Event, error) {
					return domain.DecideAcceptQuote(q, b.ID, b.FlightID, now)
				}); err != nil {
				return err
			}
			_, err = decideIn(t, rec.Aggregate, step(rec, "confirm"), domain.EvolveBooking,
				func(b domain.Booking) ([]domain.Event, error) {
					return stillPending(domain.DecideConfirmBooking(b, awb, domain.PriceOf(option), now))
				})
			return err
		})
	}
	if errors.Is(refusal, errNotPending) {
		return nil
	}
	if refusal == nil || domain.ReasonOf(refusal) == "" {
		return refusal // confirmed, or not a refusal but a failure: retry the event
	}
	err = transact(ctx, r.h, func(t *transaction) error {
		// A history whose steps were stored one by one may hold the
		// capacity.
		if err := r.release(t, rec, b); err != nil {
			return err
		}
		_, err := decideIn(t, rec.Aggregate, step(rec, "reject"), domain.EvolveBooking,
			func(b domain.Booking) ([]domain.Event, error) {
				return stillPending(domain.DecideRejectBooking(b, refusal, now))
			})
		return err
	})
	if errors.Is(err, errNotPending) {
		return nil
	}
	return err
}

// errNotPending is the decision to confirm or reject a booking that is no
// longer pending: another handling of its request (a redelivery to
// another replica while this one was at it) or the forwarder settled it.
// It is an error, not a decision of nothing, so that the transaction
// stores none of its other parts: a part that decides nothing is not
// checked when the others are stored, and a rejection's release would
// give back the capacity of a booking confirmed meanwhile. Made on a
// cached state it is made again on the booking as stored (decideHeld).
var errNotPending = errors.New("commands: the booking is no longer pending")

// stillPending is a decision on a booking, or errNotPending if it decided
// nothing because the booking is no longer pending.
func stillPending(events []domain.Event, err error) ([]domain.Event, error) {
	if err == nil && len(events) == 0 {
		return nil, errNotPending
	}
	return events, err
}

// assignAWB takes the booking's AWB number, as a part of t, from the
// forwarder's stock of the flight's airline, whose AWB prefix is prefix:
// the one asked for, or the next free one. Without any stock of that
// airline, the booking goes without a number.
func (r *Reactors) assignAWB(t *transaction, rec domain.Record, b domain.Booking, prefix string) (string, error) {
	if b.AWBNumber != "" && b.AWBNumber[:3] != prefix {
		return "", domain.Refusal(domain.ReasonAWBPrefix, "AWB %s does not carry the prefix %s of the flight's airline", b.AWBNumber, prefix)
	}
	return useAWB(t, step(rec, "awb"), b.OrganizationID, prefix, b.AWBNumber, b.ID)
}

// release gives back the capacity a booking holds, if any, as a part of t.
func (r *Reactors) release(t *transaction, rec domain.Record, b domain.Booking) error {
	_, _, err := releaseIn(t, step(rec, "release"), b)
	return err
}

// releaseIn gives back the capacity booking b holds on its flight, if
// any, as the part m of t. It returns the flight as it stood, and whether
// there was capacity to give back. A booking of a flight id that names no
// flight holds none.
func releaseIn(t *transaction, m Meta, b domain.Booking) (f domain.Flight, released bool, err error) {
	if !domain.ValidIdentifier(b.FlightID) {
		return f, false, nil
	}
	_, err = decideIn(t, flightAggregate(b.FlightID), m, domain.EvolveFlight,
		func(now domain.Flight) ([]domain.Event, error) {
			f = now
			events, err := domain.DecideReleaseCapacity(now, b.ID)
			released = len(events) > 0
			return events, err
		})
	return f, released, err
}

// holdAWB holds the AWB number of a cancelled booking, as a part of t,
// for the forwarder's booking of the same shipment, which names it: its
// labels and filings carry it. A booking without a number holds none, nor
// does one cancelled before its confirmation: the number it asked for was
// never its own, and may be another booking's.
func (r *Reactors) holdAWB(t *transaction, rec domain.Record, b domain.Booking) error {
	if !b.TookNumber() {
		return nil
	}
	_, err := decideIn(t, ledgerAggregate(b.OrganizationID, b.AWBNumber[:3]), step(rec, "hold-awb"), domain.EvolveStockLedger,
		func(l domain.StockLedger) ([]domain.Event, error) {
			return domain.DecideReleaseAWB(l, b.AWBNumber, b.ID), nil
		})
	return err
}

// flightAt is the flight of rec, one of its events, as it stood right
// after it.
func (r *Reactors) flightAt(ctx context.Context, rec domain.Record) (domain.Flight, error) {
	recs, err := r.h.store.Load(ctx, rec.Aggregate)
	if err != nil {
		return domain.Flight{}, err
	}
	var last uint64
	if len(recs) > 0 {
		last = recs[len(recs)-1].Sequence
	}
	if err := includes(rec.Aggregate, last, rec); err != nil {
		return domain.Flight{}, err
	}
	var f domain.Flight
	for _, past := range recs {
		if past.Sequence > rec.Sequence {
			break
		}
		e, err := domain.DecodeEvent(past.Type, past.Data)
		if err != nil {
			return domain.Flight{}, fmt.Errorf("loading %s: %w", rec.Aggregate, err)
		}
		f = domain.EvolveFlight(f, e)
	}
	return f, nil
}

// ship records, on each shipment of a manifest, its MAN status; on a
// shipment a revised manifest leaves out, and on an offloaded one, its
// DIS/OFLD status; on those on board a flight that departs or arrives,
// DEP or ARR, unless the airline posted it already; on those on board a
// flight that is cancelled, DIS/OFLD: so the shipment's timeline and its
// webhook subscribers (the forwarder's too) hear of them, once. The
// commands store them with their events now (see onFlight), which say so:
// it records them for the events of earlier versions alone.
func (r *Reactors) ship(ctx context.Context, rec domain.Record) error {
	var statuses []domain.ShipmentStatusRecorded
	switch rec.Type {
	case domain.ManifestSubmitted{}.EventType(), domain.OffloadReported{}.EventType(), domain.FlightStatusChanged{}.EventType():
		e, err := domain.DecodeEvent(rec.Type, rec.Data)
		if err != nil {
			return err
		}
		if domain.StatusesStoredWith(e) {
			return nil // stored with the event
		}
		var f domain.Flight
		if e, ok := e.(domain.FlightStatusChanged); ok {
			if e.Status != domain.FlightStatusDeparted && e.Status != domain.FlightStatusArrived && e.Status != domain.FlightStatusCancelled {
				return nil
			}
			// Who was on board: the flight as it stood at the event
			// (a revised manifest of a departed flight may add cargo).
			if f, err = r.flightAt(ctx, rec); err != nil {
				return err
			}
		}
		statuses = domain.StatusesFrom(e, f, rec.EventID)
	}
	for _, sts := range domain.StatusesByShipment(statuses) {
		_, err := execute(ctx, r.h, shipmentAggregate(sts[0].AWBNumber), step(rec, "status:"+sts[0].AWBNumber), domain.EvolveShipment,
			func(s domain.Shipment) ([]domain.Event, error) { return domain.DecideStatusFrom(s, sts...), nil })
		if err != nil {
			return err
		}
	}
	return nil
}
