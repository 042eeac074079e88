package domain

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Quote states.
const (
	QuoteStatusPending  = "pending"
	QuoteStatusPriced   = "priced"
	QuoteStatusAccepted = "accepted"
	QuoteStatusRejected = "rejected"
)

// Limits of an RFQ. The spec gives none; these are far above real
// shipments and keep any one request small.
const (
	maxText          = 200
	maxNotes         = 2000
	maxPieces        = 99999
	maxWeightKg      = 500000 // more than any freighter's payload
	maxVolumeM3      = 1500   // more than any freighter's hold
	maxDimensionCm   = 10000
	maxDimensionRows = 100
	maxListItems     = 20
	maxDaysAhead     = 366
	maxDaysLate      = 7 // how long after its departure a flight may be published
)

// Party is a shipper or consignee.
type Party struct {
	Name string `json:"name"`
}

// Commodity names what is shipped.
type Commodity struct {
	Code        string `json:"code"`
	Description string `json:"description"`
}

// DimensionLine is a group of identical pieces, in centimetres.
type DimensionLine struct {
	L      float64 `json:"l"`
	W      float64 `json:"w"`
	H      float64 `json:"h"`
	Pieces int     `json:"pieces"`
}

// SentDimensionLine is a dimension line as a request sends it. Its fields
// are pointers because a side or a count left out (often misspelt:
// "length" for "l", which decoding passes over) and one of 0 are
// different mistakes.
type SentDimensionLine struct {
	L      *float64 `json:"l"`
	W      *float64 `json:"w"`
	H      *float64 `json:"h"`
	Pieces *int     `json:"pieces"`
}

// recorded is the line as a QuoteRequested records it; what was left out
// is 0, which RequestQuote.normalise refuses.
func (d SentDimensionLine) recorded() DimensionLine {
	return DimensionLine{L: orZero(d.L), W: orZero(d.W), H: orZero(d.H), Pieces: orZero(d.Pieces)}
}

// orZero is *v, or the zero value when v is nil.
func orZero[T any](v *T) T {
	if v == nil {
		var zero T
		return zero
	}
	return *v
}

// Quote is a forwarder's request for quote and what became of it.
type Quote struct {
	ID                    string
	OrganizationID        string
	Status                string
	Shipper               Party
	Consignee             Party
	Origin                string
	Destination           string
	Pieces                int
	WeightKg              float64
	VolumeM3              float64
	Commodity             Commodity
	Dimensions            []DimensionLine
	SHC                   []string
	DeliveryToAirlineDate string
	Notes                 string
	AirlineFilter         []string
	CreatedAt             time.Time
	ChargeableWeightKg    float64
	Options               []PriceOption
	PricedAt              time.Time
	Reason                string // why it was rejected
	BookingID             string // the booking that accepted it
}

// Option returns the price option for a flight, if the quote has one.
func (q Quote) Option(flightID string) (PriceOption, bool) {
	for _, o := range q.Options {
		if o.FlightID == flightID {
			return o, true
		}
	}
	return PriceOption{}, false
}

// PricedWeight is the chargeable weight option o was priced at: its own,
// at its carrier's volume divisor, or for an option priced before cards
// had one the quote's, at the standard divisor.
func (q Quote) PricedWeight(o PriceOption) float64 {
	return cmp.Or(o.ChargeableWeightKg, q.ChargeableWeightKg)
}

// OptionsExpire is when the price options stop being bookable.
func (q Quote) OptionsExpire() time.Time {
	return q.PricedAt.Add(PriceValidityHours * time.Hour)
}

// VisibleTo reports whether p may see the quote: its forwarder, an airline
// it is open to (no filter, or the airline's code listed), and admins.
func (q Quote) VisibleTo(p Principal) bool {
	switch p.Role {
	case RoleAdmin:
		return true
	case RoleForwarder:
		return q.OrganizationID == p.OrganizationID
	case RoleAirline:
		return len(q.AirlineFilter) == 0 || slices.Contains(q.AirlineFilter, p.AirlineCode)
	}
	return false
}

// PriceOptionsSeenBy says which price options of a quote p sees: an
// airline only those of its own code (carrier), never its competitors'
// prices; anyone else all of them.
func PriceOptionsSeenBy(p Principal) (carrier string, all bool) {
	if p.Role == RoleAirline {
		return p.AirlineCode, false
	}
	return "", true
}

// AsSeenBy is the quote with only the price options p sees (see
// PriceOptionsSeenBy).
func (q Quote) AsSeenBy(p Principal) Quote {
	q.Options = optionsSeenBy(p, q.Options)
	return q
}

// AsSeenBy is the pricing with only the price options p sees (see
// PriceOptionsSeenBy): what a quote's history shows.
func (e QuotePriced) AsSeenBy(p Principal) QuotePriced {
	e.Options = optionsSeenBy(p, e.Options)
	return e
}

// optionsSeenBy are the options of options that p sees.
func optionsSeenBy(p Principal, options []PriceOption) []PriceOption {
	carrier, all := PriceOptionsSeenBy(p)
	if all {
		return options
	}
	own := []PriceOption{}
	for _, o := range options {
		if o.Carrier == carrier {
			own = append(own, o)
		}
	}
	return own
}

// QuoteRequested records an RFQ as filed.
type QuoteRequested struct {
	QuoteID               string          `json:"quoteId"`
	OrganizationID        string          `json:"organizationId"`
	Shipper               Party           `json:"shipper"`
	Consignee             Party           `json:"consignee"`
	Origin                string          `json:"origin"`
	Destination           string          `json:"destination"`
	Pieces                int             `json:"pieces"`
	GrossWeightKg         float64         `json:"grossWeightKg"`
	VolumeM3              float64         `json:"volumeM3"`
	Commodity             Commodity       `json:"commodity"`
	Dimensions            []DimensionLine `json:"dimensionsCm,omitempty"`
	SHC                   []string        `json:"shc,omitempty"`
	DeliveryToAirlineDate string          `json:"deliveryToAirlineDate,omitempty"`
	Notes                 string          `json:"notes,omitempty"`
	AirlineFilter         []string        `json:"airlineFilter,omitempty"`
	RequestedAt           time.Time       `json:"requestedAt"`
}

func (QuoteRequested) EventType() string  { return "QuoteRequested" }
func (QuoteRequested) SetsStatus() string { return QuoteStatusPending }

// RequestQuote is a forwarder's RFQ. Pieces and GrossWeightKg are pointers
// because a missing value and a zero are different mistakes.
type RequestQuote struct {
	QuoteID               string
	OrganizationID        string
	Shipper               Party
	Consignee             Party
	Origin                string
	Destination           string
	Pieces                *int
	GrossWeightKg         *float64
	Commodity             Commodity
	Dimensions            []SentDimensionLine
	SHC                   []string
	DeliveryToAirlineDate string
	Notes                 string
	AirlineFilter         []string
	At                    time.Time
}

// DecideRequestQuote files the RFQ once.
func DecideRequestQuote(q Quote, c RequestQuote, ref Lookup) ([]Event, error) {
	if err := c.checkPresent(); err != nil {
		return nil, err
	}
	e, err := c.normalise(ref)
	if err != nil {
		return nil, err
	}
	if q.ID != "" {
		return nil, Errorf(Conflict, "quote %s already exists", c.QuoteID)
	}
	return []Event{e}, nil
}

// checkPresent refuses an RFQ without a field it cannot do without: the
// gross weight, the routing (origin and destination) and the pieces (or
// dimension lines that count them). The spec's sample answers a missing
// grossWeightKg with invalid_request, not validation_error: every
// missing required field is answered alike.
func (c RequestQuote) checkPresent() error {
	var missing []string
	if c.GrossWeightKg == nil {
		missing = append(missing, "grossWeightKg")
	}
	switch origin, destination := strings.TrimSpace(c.Origin) == "", strings.TrimSpace(c.Destination) == ""; {
	case origin && destination:
		missing = append(missing, "routing")
	case origin:
		missing = append(missing, "routing.origin")
	case destination:
		missing = append(missing, "routing.destination")
	}
	if c.Pieces == nil && len(c.Dimensions) == 0 {
		missing = append(missing, "pieces (or dimensionsCm)")
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return Errorf(InvalidRequest, "%s is required", missing[0])
	}
	return Errorf(InvalidRequest, "%s and %s are required", strings.Join(missing[:len(missing)-1], ", "), missing[len(missing)-1])
}

// normalise validates the RFQ and returns it as the event to record, with
// codes in upper case and the volume worked out from the dimensions.
// Airports and the commodity must be known to ref (nil: not checked).
func (c RequestQuote) normalise(ref Lookup) (QuoteRequested, error) {
	var p Problems
	e := QuoteRequested{
		QuoteID: c.QuoteID, OrganizationID: c.OrganizationID,
		Shipper:       Party{Name: strings.TrimSpace(c.Shipper.Name)},
		Consignee:     Party{Name: strings.TrimSpace(c.Consignee.Name)},
		Origin:        strings.ToUpper(strings.TrimSpace(c.Origin)),
		Destination:   strings.ToUpper(strings.TrimSpace(c.Destination)),
		GrossWeightKg: *c.GrossWeightKg,
		Commodity:     Commodity{Code: strings.ToUpper(strings.TrimSpace(c.Commodity.Code)), Description: strings.TrimSpace(c.Commodity.Description)},
		Notes:         c.Notes,
		RequestedAt:   c.At,
	}
	checkLength(&p, "shipper.name", e.Shipper.Name, maxText)
	checkLength(&p, "consignee.name", e.Consignee.Name, maxText)
	checkLength(&p, "commodity.code", e.Commodity.Code, 20)
	checkLength(&p, "commodity.description", e.Commodity.Description, maxText)
	checkLength(&p, "notes", e.Notes, maxNotes)
	checkRoute(&p, ref, "routing.", e.Origin, e.Destination)
	if code := e.Commodity.Code; ref != nil && code != "" {
		if _, ok := ref.Commodity(code); !ok {
			p.Add("commodity.code", CodeUnknownCommodity, "%s is not a known commodity code (see GET /api/commodities)", code)
		}
	}
	if w := e.GrossWeightKg; !(w > 0 && w <= maxWeightKg) {
		p.Add("grossWeightKg", CodeInvalidRange, "must be more than 0 and at most %d kg", maxWeightKg)
	}

	if c.Dimensions != nil {
		e.Dimensions = make([]DimensionLine, len(c.Dimensions))
		for i, d := range c.Dimensions {
			e.Dimensions[i] = d.recorded()
		}
	}
	dimPieces := 0
	if len(c.Dimensions) > maxDimensionRows {
		p.Add("dimensionsCm", CodeTooMany, "must have at most %d lines", maxDimensionRows)
	} else {
		cm3 := 0.0
		for i, d := range c.Dimensions {
			field := "dimensionsCm[" + strconv.Itoa(i) + "]"
			for _, side := range []struct {
				name string
				v    *float64
			}{{"l", d.L}, {"w", d.W}, {"h", d.H}} {
				switch {
				case side.v == nil:
					p.Add(field+"."+side.name, CodeRequired, "is required")
				case !(*side.v > 0 && *side.v <= maxDimensionCm):
					p.Add(field+"."+side.name, CodeInvalidRange, "must be more than 0 and at most %d cm", maxDimensionCm)
				}
			}
			switch {
			case d.Pieces == nil:
				p.Add(field+".pieces", CodeRequired, "is required")
			case *d.Pieces < 1 || *d.Pieces > maxPieces:
				p.Add(field+".pieces", CodeInvalidRange, "must be 1 to %d", maxPieces)
			}
			line := e.Dimensions[i]
			dimPieces += line.Pieces
			cm3 += line.L * line.W * line.H * float64(line.Pieces)
		}
		e.VolumeM3 = math.Round(cm3/1e3) / 1e3 // cm³ to m³, to the litre
		if e.VolumeM3 > maxVolumeM3 {
			p.Add("dimensionsCm", CodeInvalidRange, "the lines make %g m³, more than the %d m³ any aircraft holds", e.VolumeM3, maxVolumeM3)
		}
	}

	switch {
	case c.Pieces != nil:
		e.Pieces = *c.Pieces
		if e.Pieces < 1 || e.Pieces > maxPieces {
			p.Add("pieces", CodeInvalidRange, "must be 1 to %d", maxPieces)
		} else if len(c.Dimensions) > 0 && dimPieces != e.Pieces {
			p.Add("pieces", CodeMismatch, "is %d but the dimension lines add up to %d", e.Pieces, dimPieces)
		}
	default: // counted by the dimension lines (see checkPresent)
		e.Pieces = dimPieces
		if dimPieces > maxPieces {
			p.Add("dimensionsCm", CodeInvalidRange, "the lines add up to %d pieces, more than %d", dimPieces, maxPieces)
		}
	}

	e.SHC = upperList(&p, "shc", c.SHC, specialHandlingCodePattern, "must be a three-letter special handling code")
	e.AirlineFilter = upperList(&p, "airlineFilter", c.AirlineFilter, airlineCodePattern, "must be a two-character IATA airline code")

	if d := c.DeliveryToAirlineDate; d != "" {
		day, err := time.Parse(time.DateOnly, d)
		today := c.At.UTC().Truncate(24 * time.Hour)
		switch {
		case err != nil:
			p.Add("deliveryToAirlineDate", CodeInvalidDate, "must be a date as YYYY-MM-DD")
		// A day of slack: the forwarder's "today" may be the day
		// before in UTC.
		case day.Before(today.AddDate(0, 0, -1)):
			p.Add("deliveryToAirlineDate", CodeInvalidDate, "must not be in the past")
		case day.After(today.AddDate(0, 0, maxDaysAhead)):
			p.Add("deliveryToAirlineDate", CodeInvalidDate, "must be within %d days", maxDaysAhead)
		}
		e.DeliveryToAirlineDate = d
	}
	return e, p.Err()
}

// QuotePriced records the priced options of a quote.
type QuotePriced struct {
	QuoteID            string        `json:"quoteId"`
	ChargeableWeightKg float64       `json:"chargeableWeightKg"`
	Options            []PriceOption `json:"priceOptions"`
	PricedAt           time.Time     `json:"pricedAt"`
}

func (QuotePriced) EventType() string  { return "QuotePriced" }
func (QuotePriced) SetsStatus() string { return QuoteStatusPriced }

// QuoteRejected records that nothing could be offered, and why.
type QuoteRejected struct {
	QuoteID    string    `json:"quoteId"`
	Reason     string    `json:"reason"`
	Message    string    `json:"message"`
	RejectedAt time.Time `json:"rejectedAt"`
}

func (QuoteRejected) EventType() string  { return "QuoteRejected" }
func (QuoteRejected) SetsStatus() string { return QuoteStatusRejected }

// QuoteAccepted records the booking that took up one of the options.
type QuoteAccepted struct {
	QuoteID    string    `json:"quoteId"`
	BookingID  string    `json:"bookingId"`
	FlightID   string    `json:"flightId"`
	AcceptedAt time.Time `json:"acceptedAt"`
}

func (QuoteAccepted) EventType() string  { return "QuoteAccepted" }
func (QuoteAccepted) SetsStatus() string { return QuoteStatusAccepted }

// AsSeenBy is the acceptance as p may see it: the booking that took the
// quote, and its flight, only to those who may see that booking. An
// airline whose options lost learns that the quote was taken, as its
// status says, not where the forwarder booked: that is the winner's
// business, as its prices are.
func (e QuoteAccepted) AsSeenBy(p Principal) QuoteAccepted {
	if p.Role == RoleAirline && !(Booking{FlightID: e.FlightID}).VisibleTo(p) {
		e.BookingID, e.FlightID = "", ""
	}
	return e
}

// DecidePriceQuote records the outcome of pricing a pending quote: its
// options, or the refusal. A quote that is no longer pending is left as
// it is, so pricing twice changes nothing.
func DecidePriceQuote(q Quote, options []PriceOption, refusal error, at time.Time) ([]Event, error) {
	if q.Status != QuoteStatusPending {
		return nil, nil
	}
	if refusal != nil {
		var msg string
		if e, ok := refusal.(*Error); ok {
			msg = e.Message
		}
		return []Event{QuoteRejected{QuoteID: q.ID, Reason: ReasonOf(refusal), Message: msg, RejectedAt: at}}, nil
	}
	return []Event{QuotePriced{QuoteID: q.ID, ChargeableWeightKg: q.ChargeableWeightKg, Options: options, PricedAt: at}}, nil
}

// QuoteReopened records that the booking which accepted a quote was
// cancelled: the quote is priced again, bookable while its options last.
type QuoteReopened struct {
	QuoteID    string    `json:"quoteId"`
	BookingID  string    `json:"bookingId"`
	ReopenedAt time.Time `json:"reopenedAt"`
}

func (QuoteReopened) EventType() string  { return "QuoteReopened" }
func (QuoteReopened) SetsStatus() string { return QuoteStatusPriced }

// AsSeenBy is the reopening as p may see it, accepted being the
// acceptance it undoes (the quote's last): its booking only to those who
// see that acceptance's (see QuoteAccepted.AsSeenBy).
func (e QuoteReopened) AsSeenBy(p Principal, accepted QuoteAccepted) QuoteReopened {
	if p.Role == RoleAirline && (accepted.BookingID != e.BookingID || accepted.AsSeenBy(p).BookingID == "") {
		e.BookingID = ""
	}
	return e
}

// DecideReopenQuote gives a quote back when the booking that accepted it
// is cancelled; any other quote is left alone.
func DecideReopenQuote(q Quote, bookingID string, at time.Time) ([]Event, error) {
	if q.Status != QuoteStatusAccepted || q.BookingID != bookingID {
		return nil, nil
	}
	return []Event{QuoteReopened{QuoteID: q.ID, BookingID: bookingID, ReopenedAt: at}}, nil
}

// DecideAcceptQuote marks the quote as taken by a booking, once.
func DecideAcceptQuote(q Quote, bookingID, flightID string, at time.Time) ([]Event, error) {
	if q.Status == QuoteStatusAccepted && q.BookingID == bookingID {
		return nil, nil
	}
	if q.Status != QuoteStatusPriced {
		return nil, Refusal(ReasonQuoteNotPriced, "quote %s is %s", q.ID, q.Status)
	}
	return []Event{QuoteAccepted{QuoteID: q.ID, BookingID: bookingID, FlightID: flightID, AcceptedAt: at}}, nil
}

// EvolveQuote applies an event to a quote.
func EvolveQuote(q Quote, e Event) Quote {
	switch e := e.(type) {
	case QuotePriced:
		q.Status, q.Options, q.PricedAt, q.ChargeableWeightKg = QuoteStatusPriced, e.Options, e.PricedAt, e.ChargeableWeightKg
		return q
	case QuoteRejected:
		q.Status, q.Reason = QuoteStatusRejected, e.Reason
		return q
	case QuoteAccepted:
		q.Status, q.BookingID = QuoteStatusAccepted, e.BookingID
		return q
	case QuoteReopened:
		q.Status, q.BookingID = QuoteStatusPriced, ""
		return q
	case QuoteRequested:
		return Quote{
			ID: e.QuoteID, OrganizationID: e.OrganizationID, Status: QuoteStatusPending,
			Shipper: e.Shipper, Consignee: e.Consignee, Origin: e.Origin, Destination: e.Destination,
			Pieces: e.Pieces, WeightKg: e.GrossWeightKg, VolumeM3: e.VolumeM3, Commodity: e.Commodity,
			Dimensions: e.Dimensions, SHC: e.SHC, DeliveryToAirlineDate: e.DeliveryToAirlineDate,
			Notes: e.Notes, AirlineFilter: e.AirlineFilter, CreatedAt: e.RequestedAt,
			ChargeableWeightKg: ChargeableWeight(e.GrossWeightKg, e.Dimensions, DefaultVolumeDivisor),
		}
	}
	return q
}
