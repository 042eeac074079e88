package projections

// Models are cargod's read models, one of each.
type Models struct {
	Identity  *Identity
	Quotes    *Quotes
	Flights   *Flights
	Rates     *Rates
	Bookings  *Bookings
	Stock     *AWBStock
	Reference *Reference
	Audit     *Audit
	Webhooks  *Webhooks
	Shipments *Shipments
	Documents *Documents
}

// NewModels returns empty read models.
func NewModels() Models {
	return Models{Identity: NewIdentity(), Quotes: NewQuotes(), Flights: NewFlights(), Rates: NewRates(), Bookings: NewBookings(),
		Stock: NewAWBStock(), Reference: NewReference(), Audit: NewAudit(), Webhooks: NewWebhooks(), Shipments: NewShipments(),
		Documents: NewDocuments()}
}

// All lists the models, for the projector.
func (m Models) All() []ReadModel {
	return []ReadModel{m.Identity, m.Quotes, m.Flights, m.Rates, m.Bookings, m.Stock, m.Reference, m.Audit, m.Webhooks,
		m.Shipments, m.Documents}
}
