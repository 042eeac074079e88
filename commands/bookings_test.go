package commands

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
)

// A cancellation gives the booking's capacity back with it, in one
// transaction with the flight, so that a manifest of the flight and the
// cancellation cannot both be stored: a manifest stored first makes the
// cancellation conflict and be refused (its shipment is on board); one
// checked against facts read before the cancellation finds the booking's
// reservation gone, and reads them again. Both were stored, in 18 of 20
// races of the two requests sent at once.
func TestACancellationAndAManifestOfItsShipmentAreNotBothStored(t *testing.T) {
	w := newWorld(t, 1000)
	ctx := context.Background()
	booked := w.confirmedBooking(t, 100)
	b := w.booking(t, booked.Aggregate.ID)
	if _, held := w.flight(t).Reservations[b.ID]; b.Status != domain.BookingStatusConfirmed || !held {
		t.Fatalf("booking %s, reservation held %v; want it confirmed, its capacity reserved", b.Status, held)
	}
	// Facts read before the cancellation: the booking confirmed on the
	// flight, with the AWB number it names (the world's forwarder holds
	// no stock, so the booking took none).
	const awb = "020-00000011"
	b.AWBNumber = awb
	stale := domain.SubmitManifest{Shipments: []domain.ManifestCandidate{
		domain.NewManifestCandidate(w.flight(t), domain.ManifestFacts{AWBNumber: awb, Booking: b})}}
	if _, err := w.h.CancelBooking(ctx, NewMeta(w.fwd, "", ""), b.ID); err != nil {
		t.Fatal(err)
	}
	if _, held := w.flight(t).Reservations[b.ID]; held {
		t.Fatalf("the flight still holds the cancelled booking's reservation: the cancellation did not give it back with it")
	}
	cancelled := w.booking(t, b.ID)
	cancelled.AWBNumber = awb
	checks := 0
	lh := domain.Principal{Subject: "client:lh", OrganizationID: "lh", Role: domain.RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}
	_, err := w.h.SubmitManifest(ctx, NewMeta(lh, "", ""), w.flightID, func(context.Context) (domain.SubmitManifest, error) {
		checks++
		if checks == 1 {
			return stale, nil
		}
		return domain.SubmitManifest{Shipments: []domain.ManifestCandidate{
			domain.NewManifestCandidate(w.flight(t), domain.ManifestFacts{AWBNumber: awb, Booking: cancelled})}}, nil
	})
	if checks != 2 || domain.ErrorCode(err) != domain.ValidationError || !strings.Contains(err.Error(), awb) {
		t.Errorf("a manifest checked against facts from before the cancellation: %d checks, %v; want the facts read again, and the shipment refused", checks, err)
	}
}

// failingFlightLoads is the event store failing every load of a flight.
type failingFlightLoads struct {
	*eventstore.Store
}

func (s failingFlightLoads) LoadAfter(ctx context.Context, agg domain.Aggregate, after uint64) ([]domain.Record, error) {
	if agg.Type == domain.AggregateFlight {
		return nil, errors.New("a flight loaded")
	}
	return s.Store.LoadAfter(ctx, agg, after)
}

func (s failingFlightLoads) Load(ctx context.Context, agg domain.Aggregate) ([]domain.Record, error) {
	return s.LoadAfter(ctx, agg, 0)
}

// A cancellation that gave its capacity back with it says so, and the
// booking reactor, which holds its AWB number and reopens its quote, does
// not take the flight's lock and load it to find nothing to give back: on
// the flight every confirmation of it takes.
func TestTheBookingReactorLeavesTheFlightOfACancellationThatGaveItsCapacityBack(t *testing.T) {
	w := newWorld(t, 1000)
	ctx := context.Background()
	booked := w.confirmedBooking(t, 100)
	if _, err := w.h.CancelBooking(ctx, NewMeta(w.fwd, "", ""), booked.Aggregate.ID); err != nil {
		t.Fatal(err)
	}
	cancelled := w.lastRecord(t, booked.Aggregate)
	// Another replica's reactor, which has not loaded the flight.
	other := *w.reactors
	other.h = New(failingFlightLoads{w.store}, 4, builtinReference())
	other.h.now = w.h.now
	if err := other.book(ctx, cancelled); err != nil {
		t.Fatalf("the cancellation handled: %v; want it handled without the flight", err)
	}
	b := w.booking(t, booked.Aggregate.ID)
	q, _, _, err := load(ctx, w.h, quoteAggregate(b.QuoteID), domain.EvolveQuote, "", loadFresh)
	if err != nil || q.Status != domain.QuoteStatusPriced {
		t.Errorf("the quote after the cancellation is handled: %s, %v; want it priced again", q.Status, err)
	}
}
