package commands

import (
	"context"
	"strings"
	"testing"

	"github.com/cargostream/cargostream/domain"
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
	booked := w.book(t, w.pricedQuote(t, 100))
	if err := w.reactors.book(ctx, booked); err != nil {
		t.Fatal(err)
	}
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
