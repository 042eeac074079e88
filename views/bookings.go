package views

import (
	"cmp"
	"time"

	"github.com/cargostream/cargostream/domain"
)

// BookingJSON is the spec's booking, with what a forwarder needs to act
// on it (the reason of a rejection and the cargo as booked) and what the
// airline handles it by: the goods, their handling codes, who ships them
// to whom, and how.
type BookingJSON struct {
	ID       string `json:"id"`
	QuoteID  string `json:"quoteId"`
	Status   string `json:"status"`
	FlightID string `json:"flightId"`
	// OrganizationID is not in the spec: the forwarder that filed the
	// booking, the agent the flight's airline deals with and invoices.
	OrganizationID     string    `json:"organizationId"`
	AWBNumber          string    `json:"awbNumber,omitempty"` // a string, as the spec types it: left out while there is none
	CreatedAt          time.Time `json:"createdAt"`
	Pieces             int       `json:"pieces"`
	Weight             float64   `json:"weight"`
	Volume             float64   `json:"volume"`
	ChargeableWeightKg float64   `json:"chargeableWeightKg"`
	Commodity          string    `json:"commodity"` // as the quote's: empty when the RFQ named none
	// Named as the booking request names them. A list or party the
	// booking has none of is left out, not shown empty: the event holds
	// a party neither the request nor its quote named as {"name": ""}.
	SHC             []string               `json:"shc,omitempty"`
	Shipper         domain.FullParty       `json:"shipper,omitzero"`
	Consignee       domain.FullParty       `json:"consignee,omitzero"`
	Routing         []domain.RoutingLeg    `json:"routing,omitempty"`
	Dimensions      []domain.DimensionLine `json:"dimensionsCm,omitempty"`
	RejectionReason *string                `json:"rejectionReason"`
	// CancellationReason is not in the spec: who ended a cancelled
	// booking, the forwarder or the flight's cancellation.
	CancellationReason *string `json:"cancellationReason"`
	// Price is not in the spec: the rate the booking was confirmed at,
	// left out before confirmation and for bookings confirmed before
	// prices were recorded.
	Price domain.BookingPrice `json:"price,omitzero"`
}

// ToBookingJSON shows the AWB number of a booking that holds one, and
// the reason of one rejected or cancelled.
func ToBookingJSON(b domain.Booking) BookingJSON {
	out := BookingJSON{ID: b.ID, QuoteID: b.QuoteID, Status: b.Status, FlightID: b.FlightID, OrganizationID: b.OrganizationID, CreatedAt: b.CreatedAt,
		Pieces: b.Pieces, Weight: b.WeightKg, Volume: b.VolumeM3, ChargeableWeightKg: b.ChargeableWeightKg,
		Commodity: b.Commodity, SHC: b.SHC, Shipper: b.Shipper, Consignee: b.Consignee, Routing: b.Routing, Dimensions: b.Dimensions, Price: b.Price}
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
