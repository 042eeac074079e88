package domain

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"time"
)

// Reasons a quote cannot be priced.
const (
	ReasonNoRoute              = "no_route"
	ReasonNoRate               = "no_rate"
	ReasonCommodityNotAccepted = "commodity_not_accepted"
	DefaultVolumeDivisor       = 6000 // cm³ per kg, IATA standard
	PriceValidityHours         = 48
	pricingWindowDays          = 7
	maxPriceOptions            = 10
)

// ChargeableWeight is the larger of the gross weight and the volume weight
// (Σ l×w×h×pieces cm³ / divisor), rounded up to the next half kilogram.
// The half kilos are counted to a millionth first: decimal centimetres
// carry float noise (64.4×50×150 cm / 6000 is 80.50000000000001, not
// 80.5), which the ceiling would charge as another half kilo.
func ChargeableWeight(grossKg float64, dims []DimensionLine, divisor float64) float64 {
	cm3 := 0.0
	for _, d := range dims {
		cm3 += d.L * d.W * d.H * float64(d.Pieces)
	}
	return upToHalfKg(max(grossKg, cm3/divisor))
}

// upToHalfKg rounds kg up to the next half kilogram, counting the halves
// to a millionth first so that float noise is not charged. Any weight
// above 0 is at least the first half kilogram: counted to a millionth, a
// few micrograms would be 0 kg, and a price per kg of them infinite.
func upToHalfKg(kg float64) float64 {
	halves := math.Ceil(math.Round(kg*2*1e6) / 1e6)
	if kg > 0 {
		halves = max(halves, 1)
	}
	return halves / 2
}

// PriceOption is one bookable flight at a price.
type PriceOption struct {
	FlightID      string  `json:"flightId"`
	Carrier       string  `json:"carrier"`
	FlightNumber  string  `json:"flightNumber"`
	DepartureDate string  `json:"departureDate"`
	PricePerKg    float64 `json:"pricePerKg"`
	TotalAmount   float64 `json:"totalAmount"`
	Currency      string  `json:"currency"`
	ValidityHours int     `json:"validityHours"`
	// The weight priced, at the volume divisor of the carrier's card:
	// airlines count volume weight differently. Options priced before
	// cards had a divisor have neither (see Divisor, Quote.PricedWeight).
	ChargeableWeightKg float64 `json:"chargeableWeightKg,omitempty"`
	VolumeDivisor      int     `json:"volumeDivisor,omitempty"`
}

// Divisor is the volume divisor the option was priced at, cm³ per kg:
// the standard for an option priced before cards had one.
func (o PriceOption) Divisor() int { return cmp.Or(o.VolumeDivisor, DefaultVolumeDivisor) }

// PriceQuote finds the flights that can carry a quote's shipment and
// prices each from the carrier's best-matching rate card. flights are the
// candidate departures (any route), cards every carrier's rate cards, ref
// the reference data that tells the UN number of the quote's commodity
// (nil: its handling codes alone tell goods for cargo aircraft only). It
// returns the options, earliest departure first (cheapest first on a
// day: carriers may quote in different currencies), or a refusal reason.
func PriceQuote(q Quote, ref Lookup, flights []Flight, cards []RateCard, now time.Time) ([]PriceOption, error) {
	var options []PriceOption
	reason := ReasonNoRoute
	worse := func(r string) { // keep the reason that got furthest
		order := []string{ReasonNoRoute, ReasonNoCapacity, ReasonNoRate, ReasonCommodityNotAccepted}
		if slices.Index(order, r) > slices.Index(order, reason) {
			reason = r
		}
	}
	known := q.knownCommodity(ref)
	codes := q.handlingCodes(known)
	// Goods for cargo aircraft only: marked CAO, or a commodity whose
	// reference entry is such dangerous goods (RLI, lithium ion batteries
	// on their own, UN3480; UN1089 of the loaded dangerous-goods table),
	// which the manifest would refuse on one from the shipment's e-DGD.
	cao := forbiddenOnPassengerAircraft(ref, q.SHC, known.UNNumber)
	var zone, earliest, latest string // the window of dates, for flights from zone
	for i, f := range flights {
		// Departure dates are local to the origin, so "today" is too: in
		// the evening west of Greenwich it is already tomorrow in UTC, and
		// the night's flights are still to go. The flights of a route
		// share their origin's zone: the window is worked out once.
		if i == 0 || f.OriginZone != zone {
			zone = f.OriginZone
			earliest = max(q.DeliveryToAirlineDate, localDate(now, zone))
			start, _ := time.Parse(time.DateOnly, earliest)
			latest = start.AddDate(0, 0, pricingWindowDays).Format(time.DateOnly)
		}
		if departs := f.departureDate(); f.Origin != q.Origin || f.Destination != q.Destination || departs < earliest || departs > latest ||
			f.ClosedAt(now) ||
			(len(q.AirlineFilter) > 0 && !slices.Contains(q.AirlineFilter, f.Carrier)) {
			continue
		}
		if kg, m3 := f.room(); kg < q.WeightKg || m3 < q.VolumeM3 {
			worse(ReasonNoCapacity)
			continue
		}
		card, ok := bestCard(cards, f)
		if !ok {
			worse(ReasonNoRate)
			continue
		}
		if !card.Accepts(codes) || (cao && f.PassengerAircraft()) {
			worse(ReasonCommodityNotAccepted)
			continue
		}
		cw := ChargeableWeight(q.WeightKg, q.Dimensions, float64(card.Divisor()))
		total := card.Charge(cw, codes)
		options = append(options, PriceOption{
			FlightID: f.ID, Carrier: f.Carrier, FlightNumber: f.FlightNumber, DepartureDate: f.DepartureDate,
			PricePerKg: pricePerKg(total, cw, card.Currency), TotalAmount: total, Currency: card.Currency,
			ValidityHours: PriceValidityHours, ChargeableWeightKg: cw, VolumeDivisor: card.Divisor(),
		})
	}
	if len(options) == 0 {
		return nil, Refusal(reason, "%s", refusalText[reason])
	}
	slices.SortStableFunc(options, func(a, b PriceOption) int {
		if c := cmp.Compare(a.DepartureDate, b.DepartureDate); c != 0 {
			return c
		}
		return cmp.Compare(a.TotalAmount, b.TotalAmount)
	})
	if len(options) > maxPriceOptions {
		options = options[:maxPriceOptions]
	}
	return options, nil
}

// pricePerKg is a total divided by the chargeable weight, to the cent,
// or to the minor unit of a currency of three decimals (a rate of 0.765
// dinars a kg shown 0.77 was 385 for 500 kg, where the total is 382.5);
// half up, as amounts are: 25.50 for 20 kg is 1.275 a kg, which a float64
// holds as 1.27499999999999991 and a plain rounding made 1.27.
func pricePerKg(total, cw float64, currency string) float64 {
	return roundHalfUp(total/cw, max(2, minorUnitsOf(currency)))
}

// knownCommodity is the reference data's entry of the quote's commodity
// (the zero KnownCommodity when none). It is looked up when priced, not
// recorded on the RFQ: reference data tells it, and QuoteRequested events
// stay as they were.
func (q Quote) knownCommodity(ref Lookup) KnownCommodity {
	return knownCommodity(ref, q.Commodity.Code)
}

// knownCommodity is the reference entry of the commodity of code (the zero
// KnownCommodity when there is none, or no code).
func knownCommodity(ref Lookup, code string) KnownCommodity {
	if ref == nil || code == "" {
		return KnownCommodity{}
	}
	c, _ := ref.Commodity(code)
	return c
}

// dangerousGoodsCode is the special handling code of dangerous goods.
const dangerousGoodsCode = "DGR"

// handlingCodes are the codes a card refuses (notAccepted) and charges
// surcharges for, each once: the quote's special handling codes, its
// commodity's code, and DGR for a commodity whose reference entry, known,
// is dangerous goods. The reference commodities go by IATA's codes (RLI,
// PER, AVI), and a shipper may name the goods by their commodity alone: a
// card that refuses RLI refuses lithium batteries however the RFQ names
// them, and one with a DGR surcharge charges it on them.
func (q Quote) handlingCodes(known KnownCommodity) []string {
	codes := slices.Clone(q.SHC)
	add := func(code string) {
		if code != "" && !slices.Contains(codes, code) {
			codes = append(codes, code)
		}
	}
	add(q.Commodity.Code)
	if known.DangerousGoods {
		add(dangerousGoodsCode)
	}
	return codes
}

var refusalText = map[string]string{
	ReasonNoRoute:              "no flight of the allowed airlines serves this route within 7 days of the delivery date",
	ReasonNoCapacity:           "no flight on this route has room for the shipment",
	ReasonNoRate:               "no airline on this route has a valid rate for it",
	ReasonCommodityNotAccepted: "no flight on this route takes the goods: its airline refuses a special handling code or the commodity's code, or it carries passengers and they are forbidden on passenger aircraft (CAO, lithium batteries on their own, UN3480 or UN3090, or dangerous goods the reference data forbids on passenger aircraft)",
}

// zones caches location: time.LoadLocation reads its file on every call,
// and pricing asks for each candidate flight, scheduling for each flight.
var zones sync.Map // name → loadedZone

type loadedZone struct {
	loc *time.Location
	err error
}

// location is time.LoadLocation(name), loaded once.
func location(name string) (*time.Location, error) {
	z, ok := zones.Load(name)
	if !ok {
		loc, err := time.LoadLocation(name)
		z, _ = zones.LoadOrStore(name, loadedZone{loc, err})
	}
	return z.(loadedZone).loc, z.(loadedZone).err
}

// localDate is the date at t in zone (UTC's when the zone is unknown).
func localDate(t time.Time, zone string) string {
	loc, err := location(zone)
	if err != nil || zone == "" {
		loc = time.UTC
	}
	return t.In(loc).Format(time.DateOnly)
}

func bestCard(cards []RateCard, f Flight) (RateCard, bool) {
	best, bestScore := RateCard{}, -1
	for _, c := range cards {
		score, ok := c.Matches(f.Origin, f.Destination)
		if ok && c.Carrier == f.Carrier && c.ValidOn(f.DepartureDate) && score > bestScore {
			best, bestScore = c, score
		}
	}
	return best, bestScore >= 0
}
