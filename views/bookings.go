package views

import (
	"cmp"
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
	// CancellationReason is not in the spec: who ended a cancelled
	// booking, the forwarder or the flight's cancellation.
	CancellationReason *string `json:"cancellationReason"`
}

// ToBookingJSON shows the AWB number of a booking that holds one, and
// the reason of one rejected or cancelled.
func ToBookingJSON(b domain.Booking) BookingJSON {
	out := BookingJSON{ID: b.ID, QuoteID: b.QuoteID, Status: b.Status, FlightID: b.FlightID, CreatedAt: b.CreatedAt,
		Pieces: b.Pieces, Weight: b.WeightKg, Volume: b.VolumeM3, ChargeableWeightKg: b.ChargeableWeightKg}
	if b.AWBNumber != "" && b.Status != domain.BookingStatusRejected {
		out.AWBNumber = b.AWBNumber
	}
	switch b.Status {
	case domain.BookingStatusRejected:
		if b.Reason != "" {
			out.RejectionReason = &b.Reason
		}
	case domain.BookingStatusCancelled:
		// A forwarder's cancellation records no reason.
		reason := cmp.Or(b.Reason, domain.ReasonForwarderCancelled)
		out.CancellationReason = &reason
	}
	return out
}
