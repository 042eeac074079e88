package views

import (
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/projections"
)

// QuoteJSON is the spec's quote.
type QuoteJSON struct {
	ID           string            `json:"id"`
	Status       string            `json:"status"`
	Origin       string            `json:"origin"`
	Destination  string            `json:"destination"`
	Pieces       int               `json:"pieces"`
	Weight       float64           `json:"weight"` // gross, kg
	Volume       float64           `json:"volume"` // m³
	Commodity    string            `json:"commodity"`
	SHC          []string          `json:"shc"`
	CreatedAt    time.Time         `json:"createdAt"`
	PriceOptions []PriceOptionJSON `json:"priceOptions"`
	// Beyond the spec: why nothing was offered, the weight priced, and
	// when it was priced, left out while it is not (nor ever, rejected).
	RejectionReason    *string   `json:"rejectionReason"`
	ChargeableWeightKg *float64  `json:"chargeableWeightKg"`
	PricedAt           time.Time `json:"pricedAt,omitzero"`
}

// PriceOptionJSON is one flight and price a quote offers.
type PriceOptionJSON struct {
	FlightID      string  `json:"flightId"`
	FlightNumber  string  `json:"flightNumber"`
	DepartureDate string  `json:"departureDate"`
	PricePerKg    float64 `json:"pricePerKg"`
	TotalAmount   float64 `json:"totalAmount"`
	Currency      string  `json:"currency"`
	ValidityHours int     `json:"validityHours"`
	// Beyond the spec: the moment validityHours runs out, after which a
	// booking of the option is rejected option_expired.
	ValidUntil time.Time `json:"validUntil"`
	// Beyond the spec: the weight priced, at the carrier's volume divisor.
	ChargeableWeightKg float64 `json:"chargeableWeightKg"`
	VolumeDivisor      int     `json:"volumeDivisor"`
	// Beyond the spec: the flight takes no more bookings (cancelled,
	// departed, or past its departure time): one is rejected flight_closed.
	FlightClosed bool `json:"flightClosed"`
}

// QuoteListJSON is the spec's list of quotes.
type QuoteListJSON struct {
	Quotes     []QuoteJSON    `json:"quotes"`
	Pagination PaginationJSON `json:"pagination"`
}

// ToQuoteJSON is a quote as p may see it (see domain.Quote.AsSeenBy).
// closed tells which of its options' flights take no more bookings (see
// FlightClosed); nil, where no flight is looked at (a past view, a
// webhook's data), none.
func ToQuoteJSON(q domain.Quote, p domain.Principal, closed func(flightID string) bool) QuoteJSON {
	q = q.AsSeenBy(p)
	shc := q.SHC
	if shc == nil {
		shc = []string{}
	}
	out := QuoteJSON{
		ID: q.ID, Status: q.Status, Origin: q.Origin, Destination: q.Destination, Pieces: q.Pieces,
		Weight: q.WeightKg, Volume: q.VolumeM3, Commodity: q.Commodity.Code, SHC: shc,
		CreatedAt: q.CreatedAt, PriceOptions: make([]PriceOptionJSON, len(q.Options)), PricedAt: q.PricedAt,
	}
	for i, o := range q.Options {
		out.PriceOptions[i] = PriceOptionJSON{FlightID: o.FlightID, FlightNumber: o.FlightNumber, DepartureDate: o.DepartureDate,
			PricePerKg: o.PricePerKg, TotalAmount: o.TotalAmount, Currency: o.Currency, ValidityHours: o.ValidityHours,
			ValidUntil: q.OptionsExpire(), ChargeableWeightKg: q.PricedWeight(o), VolumeDivisor: o.Divisor(), FlightClosed: closed != nil && closed(o.FlightID)}
	}
	if q.Reason != "" {
		out.RejectionReason = &q.Reason
	}
	if !q.PricedAt.IsZero() {
		out.ChargeableWeightKg = &q.ChargeableWeightKg
	}
	return out
}

// FlightClosed tells ToQuoteJSON whether a flight takes no more bookings
// at now (domain.Flight.ClosedAt), as flights holds it; a flight it does
// not hold is not closed.
func FlightClosed(flights *projections.Flights, now time.Time) func(flightID string) bool {
	return func(id string) bool {
		f, ok := flights.Get(id)
		return ok && f.ClosedAt(now)
	}
}

// renderQuote is the webhook data of a quote event: the quote as the
// event made it. The read model may hold later events already: its
// pricing when quote.created goes out (the pricing reactor runs beside
// the dispatcher), its acceptance when a retry of quote.priced does, the
// cancelled booking's reopening when a retry of quote.accepted does. A
// quote event sets what it changes whole, so applying it to what the
// model holds gives that; its first starts the quote afresh.
func (r *Renderer) renderQuote(id string, e domain.Event, p domain.Principal) (any, bool) {
	q, ok := r.Quotes.Get(p, id)
	return ToQuoteJSON(domain.EvolveQuote(q, e), p, nil), ok
}
