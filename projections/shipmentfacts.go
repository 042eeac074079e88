package projections

import "github.com/cargostream/cargostream/domain"

// ShipmentFacts gathers from the read models the facts that domain's
// rules of a shipment take as arguments: whose it is, and what is known
// of it when a manifest names it. The rules stay pure; only this reads.
type ShipmentFacts struct {
	Bookings  *Bookings
	Shipments *Shipments
	Stock     *AWBStock
	Flights   *Flights
}

// Ownership is whose the shipment of a (canonical) AWB number is, for
// the access rules of domain.ShipmentOwnership.
func (f ShipmentFacts) Ownership(awb string) domain.ShipmentOwnership {
	o := domain.ShipmentOwnership{AWBNumber: awb}
	if b, ok := f.Bookings.ByAWB(awb); ok {
		o.BookedBy = b.OrganizationID
	}
	if m := f.Shipments.Waybills(awb).MAWB; m != nil {
		o.WaybilledBy = m.OrganizationID
	}
	o.StockHolder, _ = f.Stock.Holder(awb)
	return o
}

// ForManifest is what is known of a (canonical) AWB number a manifest
// names, for domain.NewManifestCandidate.
func (f ShipmentFacts) ForManifest(awb string) domain.ManifestFacts {
	// The version first: the rest is at least as new.
	facts := domain.ManifestFacts{AWBNumber: awb, Version: f.Shipments.Version(awb)}
	facts.MAWB, facts.Filings = f.Shipments.Waybills(awb).MAWB, f.Shipments.Compliance(awb)
	for _, e := range f.Shipments.Timeline(awb) {
		if e.IsStatus() {
			facts.Statuses = append(facts.Statuses, e.Event)
		}
	}
	if b, ok := f.Bookings.ByAWB(awb); ok {
		facts.Booking = b
		facts.BookedFlight, _ = f.Flights.Get(b.FlightID)
	}
	for _, id := range f.Shipments.Flights(awb) {
		if fl, ok := f.Flights.Get(id); ok {
			facts.Manifested = append(facts.Manifested, fl)
		}
	}
	return facts
}
