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
}

// Render is the data of a webhook delivery of event e of an aggregate:
// the resource as the API returns it to the subscribing organisation,
// and false when that organisation may not see it.
func (r *Renderer) Render(aggregateType, aggregateID string, e domain.Event, orgID string) (any, bool) {
	o, ok := r.Identity.Organization(orgID)
	if !ok {
		return nil, false
	}
	p := o.Principal("webhook")
	switch aggregateType {
	case domain.AggregateQuote:
		return r.renderQuote(aggregateID, e, p)
	case domain.AggregateBooking:
		b, ok := r.Bookings.Get(p, aggregateID)
		if requested, created := e.(domain.BookingRequested); created {
			// booking.created shows the booking as its first event made
			// it, pending (as quote.created does): the read model may
			// hold its confirmation already, as the booking reactor runs
			// beside the dispatcher.
			b = domain.EvolveBooking(domain.Booking{}, requested)
		}
		return ToBookingJSON(b), ok
	case domain.AggregateStockRequest:
		sr, _, ok := r.Stock.Request(p, aggregateID)
		if requested, created := e.(domain.StockRequested); created {
			// stock.requested shows the request pending, as filed, even
			// if the airline has replied by the time it is rendered.
			sr = domain.EvolveStockRequest(domain.StockRequest{}, requested)
		}
		return ToStockRequestJSON(sr), ok
	case domain.AggregateShipment:
		return r.renderStatusEvent(e, p)
	case domain.AggregateWaybill:
		return r.renderWaybill(e, p)
	case domain.AggregateCompliance:
		return r.renderCompliance(e, p)
	case domain.AggregateFlight:
		return r.renderManifest(e, p)
	case domain.AggregateDocument:
		return r.renderDocument(e, p)
	}
	if low, ok := e.(domain.StockLow); ok {
		return low, low.VisibleTo(p)
	}
	return nil, false
}
