package views

import (
	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/projections"
)

// Renderer makes the data of webhook deliveries from the read models.
type Renderer struct {
	Identity      *projections.Identity
	Quotes        *projections.Quotes
	Bookings      *projections.Bookings
	Stock         *projections.AWBStock
	Flights       *projections.Flights
	ShipmentFacts projections.ShipmentFacts
	// Demo is whether the service runs in demo mode: without it, the
	// demo organisations are closed (see domain.Organization.UsableInDemoMode),
	// and so are the subscriptions anyone registered with their public
	// credentials.
	Demo bool
}

// Render is the data of a webhook delivery of event e of an aggregate:
// the resource as the API returns it to the subscribing organisation,
// and false when that organisation may not see it.
func (r *Renderer) Render(aggregateType, aggregateID string, e domain.Event, orgID string) (any, bool) {
	o, ok := r.receiver(orgID)
	if !ok {
		return nil, false
	}
	p := o.Principal("webhook")
	switch aggregateType {
	case domain.AggregateQuote:
		return r.renderQuote(aggregateID, e, p)
	case domain.AggregateBooking:
		// A delivery shows the booking as its event made it (as
		// quote.created does): the read model may hold later events
		// already, as the booking reactor runs beside the dispatcher
		// (booking.created would show it confirmed, booking.confirmed a
		// cancellation). A booking event sets what it changes whole, so
		// applying it to what the model holds gives that; its first
		// starts the booking afresh.
		b, ok := r.Bookings.Get(p, aggregateID)
		return ToBookingJSON(domain.EvolveBooking(b, e)), ok
	case domain.AggregateStockRequest:
		// The same for a stock request: stock.requested shows it
		// pending even if the airline has replied since, and
		// stock.replied the reply it tells of.
		sr, _, ok := r.Stock.Request(p, aggregateID)
		return ToStockRequestJSON(domain.EvolveStockRequest(sr, e)), ok
	case domain.AggregateShipment:
		return r.renderStatusEvent(e, p)
	case domain.AggregateWaybill:
		return r.renderWaybill(e, p)
	case domain.AggregateCompliance:
		return r.renderCompliance(e, p)
	case domain.AggregateFlight:
		switch e := e.(type) {
		case domain.FlightStatusChanged:
			return r.renderFlightStatus(e, p)
		case domain.FlightAircraftChanged:
			return r.renderFlightAircraft(e, p)
		}
		return r.renderManifest(e, p)
	case domain.AggregateDocument:
		return r.renderDocument(e, p)
	}
	if low, ok := e.(domain.StockLow); ok {
		return low, low.VisibleTo(p)
	}
	return nil, false
}

// Receives is whether organisation orgID's subscriptions may be sent
// anything now (see receiver).
func (r *Renderer) Receives(orgID string) bool {
	_, ok := r.receiver(orgID)
	return ok
}

// receiver is organisation orgID if its subscriptions may be sent
// anything now. A disabled or deleted organisation is shut out, as is a
// demo one without demo mode: its subscriptions would otherwise go on
// receiving what its credentials may no longer read (an airline, every
// new RFQ open to it).
func (r *Renderer) receiver(orgID string) (domain.Organization, bool) {
	o, ok := r.Identity.Organization(orgID)
	return o, ok && o.Status.Active() && o.UsableInDemoMode(r.Demo)
}
