package views

import (
	"encoding/json"
	"testing"

	"github.com/cargostream/cargostream/domain"
)

// A shipment shows as declared what its status events' pieces are
// checked against (domain.Declared): its MAWB, else its booking while
// confirmed.
func TestAShipmentShowsAsDeclaredItsMAWBElseItsConfirmedBooking(t *testing.T) {
	const awb = "020-81140743"
	booking := func(status string) *domain.Booking {
		return &domain.Booking{ID: "b1", Status: status, AWBNumber: awb, Pieces: 2, WeightKg: 350.5}
	}
	mawb := &domain.MAWBCreated{AWBNumber: awb, Pieces: 3, WeightKg: 400}
	tests := []struct {
		name    string
		booking *domain.Booking
		mawb    *domain.MAWBCreated
		want    string
	}{
		{"a confirmed booking", booking(domain.BookingStatusConfirmed), nil, `{"pieces":2,"weight":350.5}`},
		{"a MAWB over the booking", booking(domain.BookingStatusConfirmed), mawb, `{"pieces":3,"weight":400}`},
		{"a MAWB alone", nil, mawb, `{"pieces":3,"weight":400}`},
		{"a booking cancelled since", booking(domain.BookingStatusCancelled), nil, `{"pieces":null,"weight":null}`},
		{"a booking cancelled since, and a MAWB", booking(domain.BookingStatusCancelled), mawb, `{"pieces":3,"weight":400}`},
		{"nothing declared", nil, nil, `{"pieces":null,"weight":null}`},
	}
	for _, tt := range tests {
		s := Shipment{AWBNumber: awb, Booking: tt.booking, Waybills: domain.Waybills{MAWB: tt.mawb}}
		got, err := json.Marshal(ToShipmentJSON(s).Declared)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.want {
			t.Errorf("%s: declared %s, want %s", tt.name, got, tt.want)
		}
	}
}
