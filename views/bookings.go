package views

import (
	"time"

	"github.com/cargostream/cargostream/domain"
)

// BookingJSON is the spec's booking, with what a forwarder needs to act
// on it: the reason of a rejection and the cargo as booked.
type BookingJSON struct {
	ID                 string    `json:"id"`
	QuoteID            string    `json:"quoteId"`
	Status             string    `json:"status"`
	FlightID           string    `json:"flightId"`
	AWBNumber          string    `json:"awbNumber,omitempty"` // a string, as the spec types it: left out while there is none
	CreatedAt          time.Time `json:"createdAt"`
	Pieces             int       `json:"pieces"`
	Weight             float64   `json:"weight"`
	Volume             float64   `json:"volume"`
	ChargeableWeightKg float64   `json:"chargeableWeightKg"`
	RejectionReason    *string   `json:"rejectionReason"`
}

// ToBookingJSON shows the AWB number of a booking that holds one, and
// the reason of one rejected.
func ToBookingJSON(b domain.Booking) BookingJSON {
	out := BookingJSON{ID: b.ID, QuoteID: b.QuoteID, Status: b.Status, FlightID: b.FlightID, CreatedAt: b.CreatedAt,
		Pieces: b.Pieces, Weight: b.WeightKg, Volume: b.VolumeM3, ChargeableWeightKg: b.ChargeableWeightKg}
	if b.AWBNumber != "" && b.Status != domain.BookingStatusRejected {
		out.AWBNumber = b.AWBNumber
	}
	if b.Reason != "" && b.Status == domain.BookingStatusRejected {
		out.RejectionReason = &b.Reason
	}
	return out
}
