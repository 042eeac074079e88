package projections

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/internal/storetest"
)

// appendAt stores e on agg as having occurred at, and returns its
// sequence.
func appendAt(t *testing.T, store *eventstore.Store, agg domain.Aggregate, expected uint64, at time.Time, e domain.Event) uint64 {
	t.Helper()
	data, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	seqs, err := store.Append(context.Background(), agg, expected, []domain.Envelope{{Type: e.EventType(), SchemaVersion: 1,
		EventID: agg.String() + "-" + e.EventType(), Actor: "test", OccurredAt: at, Data: data}})
	if err != nil {
		t.Fatal(err)
	}
	return seqs[0]
}

func TestPastBookingIsFoldedFromItsEventsUpToTheCut(t *testing.T) {
	store := storetest.Open(t)
	agg := domain.Aggregate{Type: domain.AggregateBooking, ID: "b1"}
	requested := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	confirmed := requested.Add(time.Minute)
	// Another aggregate's event first: the booking's begin after sequence 1.
	appendAt(t, store, domain.Aggregate{Type: domain.AggregateBooking, ID: "b0"}, 0, requested, domain.BookingRequested{BookingID: "b0", OrganizationID: "fwd"})
	first := appendAt(t, store, agg, 0, requested, domain.BookingRequested{BookingID: "b1", FlightID: "LH400-2026-07-02", OrganizationID: "fwd", Pieces: 1})
	second := appendAt(t, store, agg, first, confirmed, domain.BookingConfirmed{BookingID: "b1", FlightID: "LH400-2026-07-02", ConfirmedAt: confirmed})
	past := NewPast(store)
	owner := domain.Principal{Role: domain.RoleForwarder, OrganizationID: "fwd"}
	other := domain.Principal{Role: domain.RoleForwarder, OrganizationID: "other"}
	tests := []struct {
		name        string
		who         domain.Principal
		id          string
		cut         Cut
		status      string
		version     uint64
		errContains string
	}{
		{"at the request", owner, "b1", Cut{At: requested}, domain.BookingStatusPending, first, ""},
		{"between the events", owner, "b1", Cut{At: confirmed.Add(-time.Second)}, domain.BookingStatusPending, first, ""},
		{"after both", owner, "b1", Cut{At: confirmed.Add(time.Hour)}, domain.BookingStatusConfirmed, second, ""},
		{"by sequence", owner, "b1", Cut{Sequence: first}, domain.BookingStatusPending, first, ""},
		{"before it", owner, "b1", Cut{At: requested.Add(-time.Nanosecond)}, "", 0, "booking b1 did not exist at 2026-07-01T08:59:59.999999999Z"},
		{"before its sequence", owner, "b1", Cut{Sequence: first - 1}, "", 0, "did not exist at sequence"},
		{"of another forwarder, even before it", other, "b1", Cut{At: requested.Add(-time.Hour)}, "", 0, "no booking b1"},
		{"unknown", owner, "b2", Cut{At: confirmed}, "", 0, "no booking b2"},
		{"not an id", owner, "b.1", Cut{At: confirmed}, "", 0, "no booking b.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, version, err := past.Booking(context.Background(), tt.who, tt.id, tt.cut)
			if tt.errContains != "" {
				if domain.ErrorCode(err) != domain.NotFound || !strings.Contains(err.Error(), tt.errContains) {
					t.Errorf("err = %v, want not_found with %q", err, tt.errContains)
				}
				return
			}
			if err != nil || b.Status != tt.status || version != tt.version {
				t.Errorf("= %s at version %d, %v; want %s at %d", b.Status, version, err, tt.status, tt.version)
			}
		})
	}
}

func TestFoldStopsAtTheFirstEventPastTheCut(t *testing.T) {
	at := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	rec := func(seq uint64, occurred time.Time, status string) domain.Record {
		data, _ := json.Marshal(domain.FlightStatusChanged{FlightID: "LH1-2026-07-01", Status: status})
		return domain.Record{Envelope: domain.Envelope{Type: domain.FlightStatusChanged{}.EventType(), OccurredAt: occurred, Data: data},
			Aggregate: domain.Aggregate{Type: domain.AggregateFlight, ID: "LH1-2026-07-01"}, Sequence: seq}
	}
	// The third event's clock was behind: it is after the second in the
	// stream, which is past the cut, so it is not part of the state then.
	recs := []domain.Record{rec(3, at, domain.FlightStatusDelayed), rec(5, at.Add(time.Hour), domain.FlightStatusDeparted),
		rec(8, at.Add(time.Minute), domain.FlightStatusCancelled)}
	m := NewFlights()
	last := fold(recs, Cut{At: at.Add(30 * time.Minute)}, m)
	f, _ := m.Get("LH1-2026-07-01")
	if last != 3 || f.Status != domain.FlightStatusDelayed {
		t.Errorf("fold = %d, status %s; want 3, delayed", last, f.Status)
	}
}

// A shipment rebooked under its number (the first booking cancelled) was,
// before its second booking, the first's.
func TestAPastShipmentIsOfTheBookingThatHeldItsNumberThen(t *testing.T) {
	ctx := context.Background()
	store := storetest.Open(t)
	const awb = "020-00000011"
	at := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	b1 := domain.Aggregate{Type: domain.AggregateBooking, ID: "b1"}
	b2 := domain.Aggregate{Type: domain.AggregateBooking, ID: "b2"}
	seq := appendAt(t, store, b1, 0, at, domain.BookingRequested{BookingID: "b1", FlightID: "LH400-2026-07-02", OrganizationID: "fwd"})
	confirmed := appendAt(t, store, b1, seq, at, domain.BookingConfirmed{BookingID: "b1", FlightID: "LH400-2026-07-02", AWBNumber: awb, ConfirmedAt: at})
	appendAt(t, store, b1, confirmed, at.Add(time.Hour), domain.BookingCancelled{BookingID: "b1", CancelledAt: at.Add(time.Hour)})
	seq = appendAt(t, store, b2, 0, at.Add(2*time.Hour), domain.BookingRequested{BookingID: "b2", FlightID: "LH402-2026-07-03", OrganizationID: "fwd", AWBNumber: awb})
	appendAt(t, store, b2, seq, at.Add(2*time.Hour), domain.BookingConfirmed{BookingID: "b2", FlightID: "LH402-2026-07-03", AWBNumber: awb, ConfirmedAt: at.Add(2 * time.Hour)})
	live := ShipmentParts{Bookings: NewBookings(), Shipments: NewShipments(), Documents: NewDocuments()}
	for _, agg := range []domain.Aggregate{b1, b2} {
		recs, err := store.Load(ctx, agg)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			e, err := domain.DecodeEvent(r.Type, r.Data)
			if err != nil {
				t.Fatal(err)
			}
			live.Bookings.Apply(r, e)
		}
	}
	then, err := NewPast(store).Shipment(ctx, live, awb, Cut{Sequence: confirmed})
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := then.Bookings.ByAWB(awb); !ok || b.ID != "b1" || b.Status != domain.BookingStatusConfirmed {
		t.Errorf("the shipment's booking at the first's confirmation = %+v (%v), want b1 confirmed", b, ok)
	}
}
