package domain

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// CodeUnknownFlight: a booking of a flight that does not exist.
const CodeUnknownFlight FieldCode = "UNKNOWN_FLIGHT"

// Booking states.
const (
	BookingStatusPending   = "pending"
	BookingStatusConfirmed = "confirmed"
	BookingStatusRejected  = "rejected"
	BookingStatusCancelled = "cancelled"
)

// Reasons a booking is refused.
const (
	ReasonQuoteNotPriced = "quote_not_priced"
	ReasonNoOption       = "no_option_for_flight"
	ReasonOptionExpired  = "option_expired"
	ReasonNotYourQuote   = "not_your_quote"
	ReasonUnknownFlight  = "unknown_flight"
	ReasonAWBPrefix      = "awb_wrong_airline"
	ReasonExceedsQuote   = "exceeds_quote"
	ReasonFlightCanceled = "flight_cancelled"
)

// ReasonForwarderCancelled is why a booking the forwarder cancelled was
// (its cancellation records no reason, as ReasonFlightCanceled is one).
const ReasonForwarderCancelled = "forwarder_cancelled"

// quoteTolerance is how much more than quoted a booking may carry: the
// weighing at acceptance rarely matches the RFQ to the kilo.
const quoteTolerance = 1.05

// FullParty is a shipper or consignee of a booking.
type FullParty struct {
	Name    string `json:"name"`
	Address string `json:"address,omitempty"`
	Contact string `json:"contact,omitempty"`
}

// trimmed is p without the white space around its parts: " " is no name.
func (p FullParty) trimmed() FullParty {
	return FullParty{Name: strings.TrimSpace(p.Name), Address: strings.TrimSpace(p.Address), Contact: strings.TrimSpace(p.Contact)}
}

// RoutingLeg is one leg of a booked routing.
type RoutingLeg struct {
	From         string `json:"from"`
	To           string `json:"to"`
	Carrier      string `json:"carrier"`
	FlightNumber string `json:"flightNumber"`
	Date         string `json:"date"`
}

// Booking is a forwarder's booking of one quoted flight, with the cargo
// and parties its request carried: those who handle it (the airline's
// acceptance, its cold store) read them off the booking.
type Booking struct {
	ID                 string
	QuoteID            string
	FlightID           string
	OrganizationID     string
	Status             string
	Pieces             int
	WeightKg           float64
	VolumeM3           float64
	ChargeableWeightKg float64
	Commodity          string
	SHC                []string
	Shipper            FullParty
	Consignee          FullParty
	Routing            []RoutingLeg
	Dimensions         []DimensionLine
	AWBNumber          string
	Reason             string
	CreatedAt          time.Time
	ConfirmedAt        time.Time    // zero until confirmed
	Price              BookingPrice // zero until confirmed, and for bookings confirmed before prices were recorded
}

// BookingPrice is the rate a booking was confirmed at: its quote's price
// option for the flight, as quoted. QuotedTotal is the option's total for
// the weight the quote priced, not recomputed for the booking's own (up to
// 5 % more): the rate card it came from may have changed since, and the
// carrier invoices the weight it measures at acceptance anyway.
type BookingPrice struct {
	PricePerKg  float64 `json:"pricePerKg"`
	Currency    string  `json:"currency"`
	QuotedTotal float64 `json:"quotedTotal"`
}

// PriceOf is the price a booking is confirmed at under option o.
func PriceOf(o PriceOption) BookingPrice {
	return BookingPrice{PricePerKg: o.PricePerKg, Currency: o.Currency, QuotedTotal: o.TotalAmount}
}

// TookNumber reports whether the booking's AWB number was taken for it
// from the forwarder's stock, which its confirmation does: before, the
// number is only the one it asks for, which another booking may use.
func (b Booking) TookNumber() bool {
	return b.AWBNumber != "" && !b.ConfirmedAt.IsZero()
}

// NumberHeldBy reports whether the booking's AWB number is organisation
// orgID's own to file a master waybill under without using up stock: the
// number was taken for its booking when the booking was confirmed.
func (b Booking) NumberHeldBy(orgID string) bool {
	return b.AWBNumber != "" && orgID != "" && b.OrganizationID == orgID
}

// Journey is where a confirmed booking carries its shipment: its quote's
// origin and destination. The zero Journey is an AWB number without one,
// against which nothing is checked.
type Journey struct {
	Origin, Destination string
}

// checkBooked: the origin and destination a waybill or filing names, known
// airports, are the booked journey's (MISMATCH naming the booking's).
// Pieces and weight are not: a booking's are an estimate, the cargo is
// weighed at acceptance.
func (j Journey) checkBooked(p *Problems, origin, destination Airport) {
	if j.Origin != "" && origin.IATACode != "" && origin.IATACode != j.Origin {
		p.Add("origin", CodeMismatch, "must be the booking's origin, %s", j.Origin)
	}
	if j.Destination != "" && destination.IATACode != "" && destination.IATACode != j.Destination {
		p.Add("destination", CodeMismatch, "must be the booking's destination, %s", j.Destination)
	}
}

// VisibleTo: the forwarder that booked, the carrier of the flight (by
// flight id prefix), and admins.
func (b Booking) VisibleTo(p Principal) bool {
	switch p.Role {
	case RoleAdmin:
		return true
	case RoleForwarder:
		return b.OrganizationID == p.OrganizationID
	case RoleAirline:
		return p.AirlineCode != "" && strings.HasPrefix(b.FlightID, p.AirlineCode)
	}
	return false
}

// BookingRequested records a booking as filed.
type BookingRequested struct {
	BookingID          string          `json:"bookingId"`
	QuoteID            string          `json:"quoteId"`
	FlightID           string          `json:"flightId"`
	OrganizationID     string          `json:"organizationId"`
	Pieces             int             `json:"pieces"`
	WeightKg           float64         `json:"weightKg"`
	VolumeM3           float64         `json:"volumeM3"`
	ChargeableWeightKg float64         `json:"chargeableWeightKg"`
	Commodity          string          `json:"commodity"`
	Shipper            FullParty       `json:"shipper"`
	Consignee          FullParty       `json:"consignee"`
	AWBNumber          string          `json:"awbNumber,omitempty"` // asked for by the forwarder
	Routing            []RoutingLeg    `json:"routing,omitempty"`
	Dimensions         []DimensionLine `json:"dimensionsCm,omitempty"`
	SHC                []string        `json:"shc,omitempty"`
	RequestedAt        time.Time       `json:"requestedAt"`
}

func (BookingRequested) EventType() string  { return "BookingRequested" }
func (BookingRequested) SetsStatus() string { return BookingStatusPending }

// BookingConfirmed records a booking the airline's capacity holds.
type BookingConfirmed struct {
	BookingID   string    `json:"bookingId"`
	FlightID    string    `json:"flightId"`
	AWBNumber   string    `json:"awbNumber,omitempty"`
	ConfirmedAt time.Time `json:"confirmedAt"`
	// Left out by confirmations stored before prices were recorded.
	Price BookingPrice `json:"price,omitzero"`
}

func (BookingConfirmed) EventType() string  { return "BookingConfirmed" }
func (BookingConfirmed) SetsStatus() string { return BookingStatusConfirmed }

// BookingRejected records a booking that could not be confirmed.
type BookingRejected struct {
	BookingID  string    `json:"bookingId"`
	Reason     string    `json:"reason"`
	Message    string    `json:"message"`
	RejectedAt time.Time `json:"rejectedAt"`
}

func (BookingRejected) EventType() string  { return "BookingRejected" }
func (BookingRejected) SetsStatus() string { return BookingStatusRejected }

// BookingCancelled records a booking withdrawn by its forwarder.
type BookingCancelled struct {
	BookingID   string    `json:"bookingId"`
	Reason      string    `json:"reason,omitempty"` // flight_cancelled when the airline cancelled the flight
	CancelledAt time.Time `json:"cancelledAt"`
	// CapacityReleased: the booking's capacity was given back with it,
	// in one transaction with the flight (see WithCapacityReleased), and
	// the booking reactor leaves the flight alone.
	CapacityReleased bool `json:"capacityReleased,omitempty"`
}

func (BookingCancelled) EventType() string  { return "BookingCancelled" }
func (BookingCancelled) SetsStatus() string { return BookingStatusCancelled }

// RequestBooking is a forwarder's booking of a quoted flight. Cargo
// fields left out are taken from the quote.
type RequestBooking struct {
	BookingID          string
	QuoteID            string
	FlightID           string
	OrganizationID     string
	Pieces             *int
	WeightKg           *float64 // weight or grossWeightKg
	GrossWeightKg      *float64
	ChargeableWeightKg *float64
	VolumeM3           *float64
	Commodity          string
	Shipper            FullParty
	Consignee          FullParty
	AWBPrefix          string
	AWBSerial          string
	// Waybill is the MAWB filed under the AWB number asked for (see
	// AWBAsked), nil when none is.
	Waybill *MAWBCreated
	// Airline is the organisation of the flight's airline, if the
	// service has one (AirlineKnown): see CheckAirlineTakesBookings.
	Airline      Organization
	AirlineKnown bool
	Routing      []RoutingLeg
	Dimensions   []SentDimensionLine
	SHC          []string
	At           time.Time
}

// AWBAsked is the AWB number c asks for, canonical, or "" when it asks
// for none or for no valid one (which DecideRequestBooking refuses).
func (c RequestBooking) AWBAsked() string {
	if c.AWBPrefix == "" && c.AWBSerial == "" {
		return ""
	}
	var ignored Problems
	return awbOfParts(&ignored, "awb", c.AWBPrefix, c.AWBSerial)
}

// DecideRequestBooking validates a booking against the quote it refers to
// and the flight it books, f (as stored; none if there is no such flight),
// and files it as pending. A flight closed already refuses it at once
// (flight_closed, a conflict); the binding checks (capacity, the option's
// validity, the flight still open) are made when it is confirmed.
func DecideRequestBooking(b Booking, q Quote, f Flight, c RequestBooking) ([]Event, error) {
	var p Problems
	if c.QuoteID == "" {
		p.Add("quoteId", CodeRequired, "is required")
	}
	if c.FlightID == "" {
		p.Add("flightId", CodeRequired, "is required")
	} else if !ValidIdentifier(c.FlightID) || !f.Exists() {
		p.Add("flightId", CodeUnknownFlight, "no flight %q", c.FlightID)
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	if q.ID == "" || q.OrganizationID != c.OrganizationID {
		return nil, Errorf(NotFound, "no quote %s", c.QuoteID)
	}
	e := BookingRequested{
		BookingID: c.BookingID, QuoteID: q.ID, FlightID: c.FlightID, OrganizationID: c.OrganizationID,
		Pieces: q.Pieces, WeightKg: q.WeightKg, VolumeM3: q.VolumeM3, Commodity: q.Commodity.Code,
		Shipper: c.Shipper.trimmed(), Consignee: c.Consignee.trimmed(), SHC: q.SHC, Dimensions: q.Dimensions,
		RequestedAt: c.At,
	}
	if e.Shipper.Name == "" {
		e.Shipper.Name = q.Shipper.Name
	}
	if e.Consignee.Name == "" {
		e.Consignee.Name = q.Consignee.Name
	}
	// The quote was priced, and accepted or refused by the airline, for
	// its commodity and handling codes: a booking may drop a code, but not
	// bring other goods (file a new RFQ for them).
	if commodity := strings.ToUpper(strings.TrimSpace(c.Commodity)); commodity != "" && commodity != e.Commodity {
		p.Add("commodity", CodeMismatch, "is %.20q but the quote is for %q: file a new RFQ for other goods", commodity, e.Commodity)
	}
	// Codes sent replace the quote's, an empty list too: the booking
	// drops them all. Left out (nil), they are the quote's.
	if c.SHC != nil {
		e.SHC = upperList(&p, "shc", c.SHC, specialHandlingCodePattern, "must be a three-letter special handling code")
		for i, code := range c.SHC {
			if code = strings.ToUpper(strings.TrimSpace(code)); specialHandlingCodePattern.MatchString(code) && !slices.Contains(q.SHC, code) {
				p.Add("shc["+strconv.Itoa(i)+"]", CodeMismatch, "%s was not on the quote (%s): file a new RFQ for it", code, strings.Join(q.SHC, ", "))
			}
		}
	}
	// What is made of the cargo (its pieces against its lines, its
	// chargeable weight) is checked only on cargo that passed: on a value
	// refused it would say again, as a mismatch with what the service made
	// of that value (+Inf kg, the quote's lines), what is refused already.
	refusedBefore := len(p)
	if c.Pieces != nil {
		if e.Pieces = *c.Pieces; e.Pieces < 1 || e.Pieces > maxPieces {
			p.Add("pieces", CodeInvalidRange, "must be 1 to %d", maxPieces)
		}
	}
	// A bad weight is named as it was sent: weight, or grossWeightKg.
	weight, weightField := c.GrossWeightKg, "grossWeightKg"
	if c.WeightKg != nil && c.GrossWeightKg != nil && *c.WeightKg != *c.GrossWeightKg {
		p.Add("weight", CodeMismatch, "is %g kg but grossWeightKg is %g kg", *c.WeightKg, *c.GrossWeightKg)
	} else if weight == nil {
		weight, weightField = c.WeightKg, "weight"
	}
	if weight != nil {
		if e.WeightKg = *weight; !(e.WeightKg > 0 && e.WeightKg <= maxWeightKg) {
			p.Add(weightField, CodeInvalidRange, "must be more than 0 and at most %d kg", maxWeightKg)
		}
	}
	if len(c.Dimensions) > 0 {
		probe := RequestQuote{Origin: "AAA", Destination: "BBB", GrossWeightKg: &e.WeightKg, Dimensions: c.Dimensions, At: c.At}
		if n, err := probe.normalise(nil); err != nil {
			for _, f := range err.(*Error).Fields {
				if strings.HasPrefix(f.Field, "dimensionsCm") {
					p = append(p, f)
				}
			}
		} else {
			e.Dimensions, e.VolumeM3 = n.Dimensions, n.VolumeM3
			// Lines sent without pieces give them. Lines refused give
			// none: their pieces, left out or out of range, would be
			// reported again as disagreeing with the quote's lines.
			if c.Pieces == nil {
				e.Pieces = linePieces(e.Dimensions)
			}
		}
	}
	if c.VolumeM3 != nil {
		if v := *c.VolumeM3; !(v > 0 && v <= maxVolumeM3) {
			p.Add("volume", CodeInvalidRange, "must be more than 0 and at most %d m³", maxVolumeM3)
		} else if len(c.Dimensions) == 0 {
			// The booked volume replaces the quote's dimension lines.
			e.VolumeM3, e.Dimensions = v, nil
		} else if math.Abs(v-e.VolumeM3) > 0.001 {
			p.Add("volume", CodeMismatch, "is %g m³ but the dimensions make %g m³", v, e.VolumeM3)
		}
	}
	// The dimension lines, the quote's or the booking's, describe every
	// piece: pieces that differ from them leave the volume unknown.
	cargoPassed := len(p) == refusedBefore
	if n := linePieces(e.Dimensions); cargoPassed && len(e.Dimensions) > 0 && e.Pieces != n {
		p.Add("pieces", CodeMismatch, "is %d but the dimension lines add up to %d: send dimensionsCm for the pieces booked", e.Pieces, n)
	}
	// At the divisor the option for the flight was priced at: the
	// carrier's. A flight the quote has no option for (no option: the
	// standard) is refused at confirmation (no_option_for_flight).
	option, quoted := q.Option(c.FlightID)
	divisor := option.Divisor()
	e.ChargeableWeightKg = ChargeableWeight(e.WeightKg, e.Dimensions, float64(divisor))
	if len(e.Dimensions) == 0 {
		// Without dimension lines, the volume stands for them.
		e.ChargeableWeightKg = upToHalfKg(max(e.WeightKg, e.VolumeM3*1e6/float64(divisor)))
	}
	switch {
	case c.ChargeableWeightKg != nil && !(*c.ChargeableWeightKg > 0):
		p.Add("chargeableWeightKg", CodeInvalidRange, "must be more than 0 kg")
	case c.ChargeableWeightKg != nil && cargoPassed && math.Abs(*c.ChargeableWeightKg-e.ChargeableWeightKg) > 0.001:
		whose := "the carrier's"
		if !quoted {
			whose = fmt.Sprintf("the standard: quote %s has no price option for flight %s to take the carrier's from", q.ID, c.FlightID)
		}
		p.Add("chargeableWeightKg", CodeMismatch, "is %g kg but the service computes %g kg (the larger of gross weight and volume weight at %d cm³/kg, %s, rounded up to 0.5 kg)",
			*c.ChargeableWeightKg, e.ChargeableWeightKg, divisor, whose)
	}
	if c.AWBPrefix != "" || c.AWBSerial != "" {
		e.AWBNumber = awbOfParts(&p, "awb", c.AWBPrefix, c.AWBSerial)
	}
	// A MAWB filed first names the journey its number goes: a booking
	// under it goes the same way, as a MAWB filed under a booking's
	// number must (Journey.checkBooked).
	if m := c.Waybill; m != nil && e.AWBNumber != "" && q.Origin != "" && (m.Origin != q.Origin || m.Destination != q.Destination) {
		p.Add("awb", CodeMismatch, "%s has a MAWB from %s to %s, and this booking goes from %s to %s", e.AWBNumber, m.Origin, m.Destination, q.Origin, q.Destination)
	}
	for name, party := range map[string]FullParty{"shipper": e.Shipper, "consignee": e.Consignee} {
		checkLength(&p, name+".name", party.Name, maxText)
		checkLength(&p, name+".address", party.Address, 500)
		checkLength(&p, name+".contact", party.Contact, maxText)
	}
	if len(c.Routing) > 10 {
		p.Add("routing", CodeTooMany, "must have at most 10 legs")
	} else if len(c.Routing) > 0 {
		// Codes are kept as the service keeps them everywhere: trimmed,
		// in upper case, flight numbers canonical (LH 08400 is LH8400).
		e.Routing = make([]RoutingLeg, len(c.Routing))
		for i, leg := range c.Routing {
			leg = RoutingLeg{From: strings.ToUpper(strings.TrimSpace(leg.From)), To: strings.ToUpper(strings.TrimSpace(leg.To)),
				Carrier: strings.ToUpper(strings.TrimSpace(leg.Carrier)), FlightNumber: CanonicalFlightNumber(strings.TrimSpace(leg.FlightNumber)),
				Date: strings.TrimSpace(leg.Date)}
			e.Routing[i] = leg
			field := "routing[" + strconv.Itoa(i) + "]."
			checkAirport(&p, field+"from", leg.From)
			checkAirport(&p, field+"to", leg.To)
			// The legs are one journey: each goes somewhere, from where
			// the one before arrived, not before it.
			switch {
			case leg.From != "" && leg.From == leg.To:
				p.Add(field+"to", CodeInvalidValue, "must differ from from")
			case i > 0 && e.Routing[i-1].To != leg.From:
				p.Add(field+"from", CodeMismatch, "must be where the leg before arrives, %s", e.Routing[i-1].To)
			}
			if !airlineCodePattern.MatchString(leg.Carrier) {
				p.Add(field+"carrier", CodeInvalidFormat, "must be a two-character IATA airline code")
			}
			if !flightNumberPattern.MatchString(leg.FlightNumber) {
				p.Add(field+"flightNumber", CodeInvalidFormat, "must be an airline code and 1 to 4 digits, such as LH8160")
			}
			if _, err := time.Parse(time.DateOnly, leg.Date); err != nil {
				p.Add(field+"date", CodeInvalidDate, "must be a date as YYYY-MM-DD")
			} else if i > 0 && leg.Date < e.Routing[i-1].Date {
				p.Add(field+"date", CodeInvalidDate, "must not be before the leg before, %s", e.Routing[i-1].Date)
			}
		}
		checkJourney(&p, e.Routing, q, f)
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	if err := f.refuseBookingAt(c.At); err != nil {
		return nil, err
	}
	if err := CheckAirlineTakesBookings(c.Airline, c.AirlineKnown, f.ID); err != nil {
		return nil, err
	}
	if b.ID != "" {
		return nil, Errorf(Conflict, "booking %s already exists", c.BookingID)
	}
	return []Event{e}, nil
}

// checkJourney: the legs are the journey of the quote, from its origin
// to its destination, and the booked flight is one of them, as it flies:
// from its origin to its destination, under its carrier. A leg that named
// the flight between other airports (LH8160, which flies FRA–ORD, as
// FRA–MUC) would show the airline's booking list a journey its cargo
// does not make.
func checkJourney(p *Problems, legs []RoutingLeg, q Quote, f Flight) {
	last := len(legs) - 1
	if legs[0].From != q.Origin {
		p.Add("routing[0].from", CodeMismatch, "must be the quote's origin, %s", q.Origin)
	}
	if legs[last].To != q.Destination {
		p.Add("routing["+strconv.Itoa(last)+"].to", CodeMismatch, "must be the quote's destination, %s", q.Destination)
	}
	number, date, _ := strings.Cut(f.ID, "-")
	i := slices.IndexFunc(legs, func(l RoutingLeg) bool { return l.FlightNumber == number && l.Date == date })
	if i < 0 {
		p.Add("routing", CodeMismatch, "has no leg on the flight booked, %s on %s", number, date)
		return
	}
	// An end of the journey already found wrong is told once.
	field := "routing[" + strconv.Itoa(i) + "]."
	if legs[i].From != f.Origin && !(i == 0 && legs[0].From != q.Origin) {
		p.Add(field+"from", CodeMismatch, "is the flight booked, %s, which departs from %s", f.ID, f.Origin)
	}
	if legs[i].To != f.Destination && !(i == last && legs[last].To != q.Destination) {
		p.Add(field+"to", CodeMismatch, "is the flight booked, %s, which flies to %s", f.ID, f.Destination)
	}
	if legs[i].Carrier != f.Carrier {
		p.Add(field+"carrier", CodeMismatch, "is the flight booked, %s, which %s operates", f.ID, f.Carrier)
	}
}

// CheckBookable is the confirmation's check of the quote: the booking's
// forwarder owns it, it is priced, it has an option for the flight, the
// option has not expired, and the booking carries no more than 5% above
// what was priced, refused in that order (README's). Quote accepted by
// this very booking passes.
func CheckBookable(q Quote, b Booking, now time.Time) error {
	switch {
	case q.OrganizationID != b.OrganizationID:
		return Refusal(ReasonNotYourQuote, "quote %s belongs to another forwarder", q.ID)
	case q.Status == QuoteStatusAccepted && q.BookingID == b.ID:
		return nil
	case q.Status != QuoteStatusPriced:
		return Refusal(ReasonQuoteNotPriced, "quote %s is %s, not priced", q.ID, q.Status)
	}
	o, ok := q.Option(b.FlightID)
	if !ok {
		return Refusal(ReasonNoOption, "quote %s has no price option for flight %s", q.ID, b.FlightID)
	}
	if !now.Before(q.OptionsExpire()) {
		return Refusal(ReasonOptionExpired, "the price options of quote %s expired at %s", q.ID, q.OptionsExpire().Format(time.RFC3339))
	}
	// A quote filed without dimensions priced no volume (it is 0): only
	// its chargeable weight bounds the booking, whose own volume weight
	// counts in its chargeable weight. Else no booking stating a volume
	// could ever be made on it.
	// The bound is rounded up to 0.5 kg as the booking's chargeable weight
	// is: cargo of exactly 5 % more (403.2 kg on 384) is 403.5 kg chargeable.
	if priced := q.PricedWeight(o); b.ChargeableWeightKg > upToHalfKg(priced*quoteTolerance) || (q.VolumeM3 > 0 && b.VolumeM3 > q.VolumeM3*quoteTolerance+0.001) {
		return Refusal(ReasonExceedsQuote, "the booking (%g kg chargeable, %g m³) exceeds what quote %s priced (%g kg, %g m³) by more than 5%%",
			b.ChargeableWeightKg, b.VolumeM3, q.ID, priced, q.VolumeM3)
	}
	return nil
}

// DecideConfirmBooking confirms a pending booking once, at price (see
// PriceOf).
func DecideConfirmBooking(b Booking, awb string, price BookingPrice, at time.Time) ([]Event, error) {
	if b.Status != BookingStatusPending {
		return nil, nil
	}
	return []Event{BookingConfirmed{BookingID: b.ID, FlightID: b.FlightID, AWBNumber: awb, ConfirmedAt: at, Price: price}}, nil
}

// DecideRejectBooking rejects a pending booking once.
func DecideRejectBooking(b Booking, refusal error, at time.Time) ([]Event, error) {
	if b.Status != BookingStatusPending {
		return nil, nil
	}
	msg := refusal.Error()
	if e, ok := refusal.(*Error); ok {
		msg = e.Message
	}
	return []Event{BookingRejected{BookingID: b.ID, Reason: ReasonOf(refusal), Message: msg, RejectedAt: at}}, nil
}

// DecideCancelBooking withdraws a booking that is pending or confirmed.
func DecideCancelBooking(b Booking, flight Flight, reason string, at time.Time) ([]Event, error) {
	switch {
	case b.Status == "":
		return nil, Errorf(NotFound, "no such booking")
	case b.Status == BookingStatusCancelled:
		return nil, nil
	case b.Status == BookingStatusRejected:
		return nil, Errorf(Conflict, "booking %s was rejected and cannot be cancelled", b.ID)
	case flight.Status == FlightStatusDeparted || flight.Status == FlightStatusArrived:
		// The cargo flew (or was offloaded, which the airline reports):
		// its capacity is spent, not given back.
		return nil, Errorf(Conflict, "flight %s has %s: booking %s can no longer be cancelled", flight.ID, flight.Status, b.ID)
	case reason != ReasonFlightCanceled && b.AWBNumber != "" && flight.Loaded[b.AWBNumber].Pieces > 0:
		// Its cargo is with the airline, on the flight's manifest:
		// cancelled, the booking would give back capacity the flight
		// still carries it in, and the flight depart with it.
		return nil, Errorf(Conflict, "booking %s's shipment %s is on the manifest of flight %s: the airline offloads it first (POST /api/offloads)",
			b.ID, b.AWBNumber, flight.ID)
	}
	return []Event{BookingCancelled{BookingID: b.ID, Reason: reason, CancelledAt: at}}, nil
}

// WithCapacityReleased is events, a cancellation's, saying that the
// booking's capacity is given back with it.
func WithCapacityReleased(events []Event) []Event {
	for i, e := range events {
		if c, ok := e.(BookingCancelled); ok {
			c.CapacityReleased = true
			events[i] = c
		}
	}
	return events
}

// EvolveBooking applies an event to a booking.
func EvolveBooking(b Booking, e Event) Booking {
	switch e := e.(type) {
	case BookingRequested:
		// The lists are copies, so that a Booking handed to readers and
		// the event it came from never share an array.
		return Booking{ID: e.BookingID, QuoteID: e.QuoteID, FlightID: e.FlightID, OrganizationID: e.OrganizationID,
			Status: BookingStatusPending, Pieces: e.Pieces, WeightKg: e.WeightKg, VolumeM3: e.VolumeM3,
			ChargeableWeightKg: e.ChargeableWeightKg, Commodity: e.Commodity, SHC: slices.Clone(e.SHC),
			Shipper: e.Shipper, Consignee: e.Consignee, Routing: slices.Clone(e.Routing), Dimensions: slices.Clone(e.Dimensions),
			AWBNumber: e.AWBNumber, CreatedAt: e.RequestedAt}
	case BookingConfirmed:
		b.Status, b.AWBNumber, b.ConfirmedAt, b.Price = BookingStatusConfirmed, e.AWBNumber, e.ConfirmedAt, e.Price
	case BookingRejected:
		b.Status, b.Reason = BookingStatusRejected, e.Reason
	case BookingCancelled:
		b.Status, b.Reason = BookingStatusCancelled, e.Reason
	}
	return b
}

// linePieces is the pieces of dimension lines.
func linePieces(lines []DimensionLine) int {
	n := 0
	for _, d := range lines {
		n += d.Pieces
	}
	return n
}
