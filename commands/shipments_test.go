package commands

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/internal/storetest"
)

// bookingIndex is a bookings read model that knows one booking under
// every AWB number, as it stood when the index last heard of it.
type bookingIndex struct{ b domain.Booking }

func (i bookingIndex) ByAWB(string) (domain.Booking, bool) { return i.b, true }

// A status event's pieces are checked against the shipment as the store
// declares it, whatever the read models have heard yet: a MAWB filed a
// moment ago counts, and a booking cancelled since declares nothing.
func TestAStatusEventsPiecesAreCheckedAgainstTheDeclarationAsStored(t *testing.T) {
	ctx := context.Background()
	h := New(storetest.Open(t), 4, builtinReference())
	at := time.Now().UTC()
	airline := domain.Principal{Subject: "client:lh", OrganizationID: "lh", Role: domain.RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}
	store := func(agg domain.Aggregate, events ...domain.Event) {
		t.Helper()
		_, err := execute(ctx, h, agg, NewMeta(airline, "", ""), func(s struct{}, _ domain.Event) struct{} { return s },
			func(struct{}) ([]domain.Event, error) { return events, nil })
		if err != nil {
			t.Fatal(err)
		}
	}
	const withMAWB, cancelled = "020-12345675", "020-12345686"
	store(waybillAggregate(withMAWB), domain.MAWBCreated{AWBNumber: withMAWB, OrganizationID: "f1", Origin: "FRA", Destination: "JFK",
		Pieces: 5, WeightKg: 500, CreatedAt: at})
	store(bookingAggregate("b1"), domain.BookingRequested{BookingID: "b1", QuoteID: "q1", FlightID: "LH400", OrganizationID: "f1", Pieces: 2,
		WeightKg: 200, RequestedAt: at}, domain.BookingConfirmed{BookingID: "b1", FlightID: "LH400", AWBNumber: cancelled, ConfirmedAt: at},
		domain.BookingCancelled{BookingID: "b1", CancelledAt: at})
	// What the index last heard of b1: confirmed, for 2 pieces.
	stale := bookingIndex{domain.Booking{ID: "b1", Status: domain.BookingStatusConfirmed, AWBNumber: cancelled, Pieces: 2}}

	for _, tt := range []struct {
		name     string
		awb      string
		bookings BookingsByAWB
		pieces   int
		want     string // the field code refused and its message, "" for recorded
	}{
		{"all of a MAWB the read models do not know yet", withMAWB, noBookings{}, 5, ""},
		{"more than that MAWB declares", withMAWB, noBookings{}, 6,
			"EXCEEDS_SHIPMENT 020-12345675 has 5 pieces as declared by its MAWB: a status event reports at most all of them"},
		{"more than a booking cancelled since declared", cancelled, stale, 3, ""},
	} {
		status := domain.RecordStatus{AWBNumber: tt.awb, EventType: "RCS", EventDate: at.Format(time.RFC3339), Location: "FRA", Pieces: &tt.pieces}
		_, _, err := h.RecordShipmentStatus(ctx, NewMeta(airline, "", ""), status, tt.bookings, "")
		var got string
		if e, ok := errors.AsType[*domain.Error](err); ok && len(e.Fields) > 0 {
			got = string(e.Fields[0].Code) + " " + e.Fields[0].Message
		} else if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got != tt.want {
			t.Errorf("%s: refused %q (%v), want %q", tt.name, got, err, tt.want)
		}
	}
}

// The declaration is read from the store for a status event whose pieces
// are to be checked, when it is decided: a retry that ran before answers
// from the shipment's history, and an event without pieces needs none.
func TestAStatusEventReadsTheDeclarationOnlyWhenItDecidesOnPieces(t *testing.T) {
	ctx := context.Background()
	store := &loadCounter{Store: storetest.Open(t)}
	h := New(store, 4, builtinReference())
	airline := domain.Principal{Subject: "client:lh", OrganizationID: "lh", Role: domain.RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}
	at := time.Now().UTC().Format(time.RFC3339)
	pieces := 2
	withPieces := domain.RecordStatus{AWBNumber: "020-12345675", EventType: "RCS", EventDate: at, Location: "FRA", Pieces: &pieces}
	withoutPieces := domain.RecordStatus{AWBNumber: "020-12345686", EventType: "RCS", EventDate: at, Location: "FRA"}

	for _, tt := range []struct {
		name      string
		commandID string
		status    domain.RecordStatus
		loads     int64 // of the shipment, its MAWB and no booking
	}{
		{"a status with pieces", "rcs-1", withPieces, 2},
		{"its retry", "rcs-1", withPieces, 0},
		{"a status without pieces", "rcs-2", withoutPieces, 1},
	} {
		store.loads.Store(0)
		if _, _, err := h.RecordShipmentStatus(ctx, NewMeta(airline, tt.commandID, ""), tt.status, noBookings{}, ""); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if n := store.loads.Load(); n != tt.loads {
			t.Errorf("%s: %d loads, want %d", tt.name, n, tt.loads)
		}
	}
}
