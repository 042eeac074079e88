package domain

import (
	"cmp"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Weight breaks of a rate card: "N" is the normal rate below 45 kg.
var weightBreaks = []string{"N", "45", "100", "300", "500", "1000"}

var currencyPattern = regexp.MustCompile(`^[A-Z]{3}$`)

// AnyAirport in a rate card's origin or destination matches every airport.
const AnyAirport = "*"

// RateBreak is the rate per kg from a weight on.
type RateBreak struct {
	FromKg float64 `json:"fromKg"`
	PerKg  float64 `json:"perKg"`
}

// RateCard is an airline's tariff between two airports (or any).
type RateCard struct {
	Carrier       string             `json:"carrier"`
	Origin        string             `json:"origin"`
	Destination   string             `json:"destination"`
	Currency      string             `json:"currency"`
	MinimumCharge float64            `json:"minimumCharge"`
	Breaks        []RateBreak        `json:"breaks"`               // ascending; the first is from 0 kg
	Surcharges    map[string]float64 `json:"surcharges,omitempty"` // per kg, by special handling code
	NotAccepted   []string           `json:"notAccepted,omitempty"`
	ValidFrom     string             `json:"validFrom"`
	ValidTo       string             `json:"validTo"`
	// The cm³ a kilogram of volume weight stands for on the card's
	// flights; 0 on cards set before cards had one: the IATA standard
	// (see Divisor).
	VolumeDivisor int `json:"volumeDivisor,omitempty"`
}

// Divisor is the card's volume divisor, cm³ per kg of volume weight.
func (c RateCard) Divisor() int { return cmp.Or(c.VolumeDivisor, DefaultVolumeDivisor) }

// RateCardID is the aggregate id of a carrier's card for a route.
func RateCardID(carrier, origin, destination string) string {
	name := func(code string) string {
		if code == AnyAirport {
			return "ANY"
		}
		return code
	}
	return carrier + "-" + name(origin) + "-" + name(destination)
}

// RateCardSet records a rate card, replacing the carrier's earlier card for
// the same route.
type RateCardSet struct {
	RateCard
	SetAt time.Time `json:"setAt"`
}

func (RateCardSet) EventType() string { return "RateCardSet" }

// Changes is what setting e on a route whose card on record is current
// records: nothing when e is that card again, else e. An airline system
// that sends its whole tariff on a schedule filled the card's history and
// the audit log with sets that changed nothing.
func (e RateCardSet) Changes(current RateCard) []Event {
	if current.Same(e.RateCard) {
		return nil
	}
	return []Event{e}
}

// Same reports whether two cards are one: the same route, currency,
// amounts, codes, dates and divisor (a card set before cards had one is
// at the IATA standard's).
func (c RateCard) Same(o RateCard) bool {
	return c.Carrier == o.Carrier && c.Origin == o.Origin && c.Destination == o.Destination && c.Currency == o.Currency &&
		c.MinimumCharge == o.MinimumCharge && slices.Equal(c.Breaks, o.Breaks) && maps.Equal(c.Surcharges, o.Surcharges) &&
		slices.Equal(c.NotAccepted, o.NotAccepted) && c.ValidFrom == o.ValidFrom && c.ValidTo == o.ValidTo && c.Divisor() == o.Divisor()
}

// SetRateCard is an airline's new card. WeightBreaks maps break names
// (N, 45, 100, 300, 500, 1000) to rates per kg.
type SetRateCard struct {
	Carrier       string
	Origin        string
	Destination   string
	Currency      string
	MinimumCharge float64
	WeightBreaks  map[string]float64
	Surcharges    map[string]float64
	NotAccepted   []string
	ValidFrom     string
	ValidTo       string
	VolumeDivisor *int // nil: DefaultVolumeDivisor
	At            time.Time
}

// The volume divisors a card may set, cm³ per kg: airlines price by the
// IATA standard 6000, some products by 5000 or 4000 (express, courier) or
// 7000; a divisor far outside would make the volume weight meaningless.
const (
	minVolumeDivisor = 1000
	maxVolumeDivisor = 10000
)

// DecideSetRateCard validates and records the card: its airports, but
// AnyAirport, known to ref when there is reference data, as an RFQ's and
// a flight's are.
func DecideSetRateCard(c SetRateCard, ref Lookup) ([]Event, error) {
	var p Problems
	card := RateCard{Carrier: c.Carrier, Origin: strings.ToUpper(c.Origin), Destination: strings.ToUpper(c.Destination),
		Currency: strings.ToUpper(c.Currency), MinimumCharge: c.MinimumCharge, ValidFrom: c.ValidFrom, ValidTo: c.ValidTo,
		VolumeDivisor: DefaultVolumeDivisor}
	if c.VolumeDivisor != nil {
		card.VolumeDivisor = *c.VolumeDivisor
		if card.VolumeDivisor < minVolumeDivisor || card.VolumeDivisor > maxVolumeDivisor {
			p.Add("volumeDivisor", CodeInvalidRange, "must be from %d to %d cm³ per kg (the IATA standard is %d)", minVolumeDivisor, maxVolumeDivisor, DefaultVolumeDivisor)
		}
	}
	for _, end := range []struct{ field, code string }{{"origin", card.Origin}, {"destination", card.Destination}} {
		if end.code != AnyAirport {
			checkAirport(&p, end.field, end.code)
			checkKnownAirport(&p, ref, end.field, end.code)
		}
	}
	if card.Origin != AnyAirport && card.Origin == card.Destination {
		p.Add("destination", CodeInvalidValue, "must differ from the origin")
	}
	// The bounds catch a decimal point in the wrong place: 1,000 a kg and
	// a million in dollars or euros, as many times more as a currency's
	// unit is worth less (4,500 won a kg is an ordinary rate). A currency
	// that is none has no bound: a won rate under a mistyped KWR refused
	// as over 1,000 would be mended where the currency alone was wrong.
	rateBound, minimumBound := amountBound{1000, card.Currency}, amountBound{1e6, card.Currency}
	switch {
	case !currencyPattern.MatchString(card.Currency):
		p.Add("currency", CodeInvalidFormat, "must be an ISO 4217 code such as EUR")
		rateBound, minimumBound = amountBound{}, amountBound{}
	case !slices.Contains(currencies, card.Currency):
		p.Add("currency", CodeInvalidValue, "%s is not an ISO 4217 currency", card.Currency)
		rateBound, minimumBound = amountBound{}, amountBound{}
	}
	if !(c.MinimumCharge >= 0 && minimumBound.holds(c.MinimumCharge)) {
		p.Add("minimumCharge", CodeInvalidRange, "must be at least 0%s", minimumBound.said(""))
	}
	if _, ok := c.WeightBreaks["N"]; !ok {
		p.Add("weightBreaks.N", CodeRequired, "the normal rate N is required")
	}
	for name, rate := range c.WeightBreaks {
		if !slices.Contains(weightBreaks, name) {
			p.Add("weightBreaks."+name, CodeInvalidValue, "weight breaks are N, 45, 100, 300, 500 and 1000")
			continue
		}
		if !(rate > 0 && rateBound.holds(rate)) {
			p.Add("weightBreaks."+name, CodeInvalidRange, "must be more than 0%s", rateBound.said(" per kg"))
			continue
		}
		from := 0.0
		if name != "N" {
			from, _ = strconv.ParseFloat(name, 64)
		}
		card.Breaks = append(card.Breaks, RateBreak{FromKg: from, PerKg: rate})
	}
	slices.SortFunc(card.Breaks, func(a, b RateBreak) int { return int(a.FromKg - b.FromKg) })
	// A heavier shipment is charged less per kg, never more: a rate that
	// rises with its break is a typo.
	for i := 1; i < len(card.Breaks); i++ {
		if lower, b := card.Breaks[i-1], card.Breaks[i]; b.PerKg > lower.PerKg {
			p.Add("weightBreaks."+strconv.FormatFloat(b.FromKg, 'f', -1, 64), CodeInvalidRange,
				"is %g per kg, more than the %g of the lighter break before it: rates fall as weight rises", b.PerKg, lower.PerKg)
		}
	}
	card.Surcharges = make(map[string]float64, len(c.Surcharges))
	for _, key := range slices.Sorted(maps.Keys(c.Surcharges)) {
		code, rate := strings.ToUpper(key), c.Surcharges[key]
		if _, twice := card.Surcharges[code]; twice {
			p.Add("surcharges."+key, CodeDuplicate, "%s is given twice, in another case", code)
		}
		card.Surcharges[code] = rate
		if !specialHandlingCodePattern.MatchString(code) {
			p.Add("surcharges."+code, CodeInvalidFormat, "must be keyed by a three-letter special handling code")
		} else if !(rate >= 0 && rateBound.holds(rate)) {
			p.Add("surcharges."+code, CodeInvalidRange, "must be at least 0%s", rateBound.said(" per kg"))
		}
	}
	card.NotAccepted = upperList(&p, "notAccepted", c.NotAccepted, specialHandlingCodePattern, "must be a three-letter special handling code")
	// A code the card surcharges it carries: refused too, the surcharge
	// never applies, and the analyst meant one or the other.
	for i, code := range c.NotAccepted {
		code = strings.ToUpper(strings.TrimSpace(code))
		if _, surcharged := card.Surcharges[code]; surcharged {
			p.Add("notAccepted["+strconv.Itoa(i)+"]", CodeMismatch, "%s is surcharged too (surcharges.%s): a card carries a code at a surcharge, or refuses it", code, code)
		}
	}
	from, err1 := time.Parse(time.DateOnly, c.ValidFrom)
	to, err2 := time.Parse(time.DateOnly, c.ValidTo)
	if err1 != nil {
		p.Add("validFrom", CodeInvalidDate, "must be a date as YYYY-MM-DD")
	}
	if err2 != nil {
		p.Add("validTo", CodeInvalidDate, "must be a date as YYYY-MM-DD")
	}
	switch {
	case err1 == nil && err2 == nil && to.Before(from):
		p.Add("validTo", CodeInvalidDate, "must not be before validFrom")
	// A day of slack, as for an RFQ's delivery date: a card's dates are
	// the local departure dates it prices, and west of Greenwich
	// yesterday in UTC is still today, with flights to go.
	case err2 == nil && to.Before(c.At.UTC().Truncate(24*time.Hour).AddDate(0, 0, -1)):
		p.Add("validTo", CodeInvalidDate, "must not be in the past: the card would never price anything")
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	return []Event{RateCardSet{RateCard: card, SetAt: c.At}}, nil
}

// VisibleTo: rates are each airline's business, so an airline sees its
// own cards and admins see all; forwarders see prices on quotes.
func (c RateCard) VisibleTo(p Principal) bool {
	return p.Role == RoleAdmin || (p.Role == RoleAirline && c.Carrier == p.AirlineCode)
}

// ValidOn reports whether the card applies on a date (YYYY-MM-DD).
func (c RateCard) ValidOn(date string) bool { return c.ValidFrom <= date && date <= c.ValidTo }

// Matches reports whether the card covers a route, and how specifically:
// 3 for the exact route, 2 and 1 for one wildcard end, 0 for any-to-any.
func (c RateCard) Matches(origin, destination string) (int, bool) {
	if (c.Origin != origin && c.Origin != AnyAirport) || (c.Destination != destination && c.Destination != AnyAirport) {
		return 0, false
	}
	score := 0
	if c.Origin == origin {
		score += 2
	}
	if c.Destination == destination {
		score++
	}
	return score, true
}

// Charge prices a shipment of chargeable weight cw with special handling
// codes shc: the rate of the weight break it falls in, or the charge of a
// higher break if that is lower (the higher break's weight at its rate),
// at least the minimum charge, plus surcharges per kg; in the minor unit
// of the card's currency.
func (c RateCard) Charge(cw float64, shc []string) (total float64) {
	best := math.Inf(1)
	for i, b := range c.Breaks {
		switch {
		case cw >= b.FromKg && (i+1 == len(c.Breaks) || cw < c.Breaks[i+1].FromKg):
			best = min(best, cw*b.PerKg)
		case b.FromKg > cw:
			best = min(best, b.FromKg*b.PerKg)
		}
	}
	total = max(best, c.MinimumCharge)
	for _, code := range shc {
		total += cw * c.Surcharges[code]
	}
	return roundAmount(total, c.Currency)
}

// Accepts reports whether the airline carries all of the codes.
func (c RateCard) Accepts(shc []string) bool {
	for _, code := range shc {
		if slices.Contains(c.NotAccepted, code) {
			return false
		}
	}
	return true
}
