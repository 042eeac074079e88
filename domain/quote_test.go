package domain

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func ptr[T any](v T) *T { return &v }

func TestDecideRequestQuote(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	base := func() RequestQuote {
		return RequestQuote{QuoteID: "q1", OrganizationID: "f1", Origin: "fra", Destination: " JFK ",
			GrossWeightKg: ptr(100.0), Pieces: ptr(3), SHC: []string{"per", "PER", "col"}, At: now,
			Dimensions: []SentDimensionLine{{L: ptr(100.0), W: ptr(50.0), H: ptr(40.0), Pieces: ptr(2)}, {L: ptr(30.5), W: ptr(20.0), H: ptr(10.0), Pieces: ptr(1)}}}
	}
	tests := []struct {
		name   string
		change func(c *RequestQuote)
		code   ErrorClass
		check  func(t *testing.T, e QuoteRequested)
	}{
		{name: "normalised and measured", check: func(t *testing.T, e QuoteRequested) {
			// 2×100×50×40 + 30.5×20×10 = 406 100 cm³ = 0.406 m³ (to the litre)
			if e.Origin != "FRA" || e.Destination != "JFK" || e.VolumeM3 != 0.406 || e.Pieces != 3 ||
				len(e.SHC) != 2 || e.SHC[0] != "PER" || e.SHC[1] != "COL" || !e.RequestedAt.Equal(now) {
				t.Errorf("event = %+v", e)
			}
		}},
		{name: "pieces from the dimension lines", change: func(c *RequestQuote) { c.Pieces = nil }, check: func(t *testing.T, e QuoteRequested) {
			if e.Pieces != 3 {
				t.Errorf("pieces = %d", e.Pieces)
			}
		}},
		{name: "no dimensions, no volume", change: func(c *RequestQuote) { c.Dimensions = nil }, check: func(t *testing.T, e QuoteRequested) {
			if e.VolumeM3 != 0 || e.Pieces != 3 {
				t.Errorf("event = %+v", e)
			}
		}},
		{name: "yesterday is still accepted", change: func(c *RequestQuote) { c.DeliveryToAirlineDate = "2026-11-24" }},
		{name: "missing weight is a bad request", change: func(c *RequestQuote) { c.GrossWeightKg = nil }, code: InvalidRequest},
		{name: "missing routing is a bad request", change: func(c *RequestQuote) { c.Origin, c.Destination = "", "" }, code: InvalidRequest},
		{name: "a routing without a destination is a bad request", change: func(c *RequestQuote) { c.Destination = " " }, code: InvalidRequest},
		{name: "missing pieces, without dimension lines, is a bad request", change: func(c *RequestQuote) { c.Pieces, c.Dimensions = nil, nil }, code: InvalidRequest},
		{name: "a malformed origin is a bad value", change: func(c *RequestQuote) { c.Origin = "FRANKFURT" }, code: ValidationError},
		{name: "two days ago is past", change: func(c *RequestQuote) { c.DeliveryToAirlineDate = "2026-11-23" }, code: ValidationError},
		{name: "too far ahead", change: func(c *RequestQuote) { c.DeliveryToAirlineDate = "2028-01-01" }, code: ValidationError},
		{name: "heavier than any aircraft", change: func(c *RequestQuote) { c.GrossWeightKg = ptr(600000.0) }, code: ValidationError},
		{name: "bigger than any aircraft", change: func(c *RequestQuote) {
			c.Pieces, c.Dimensions = nil, []SentDimensionLine{{L: ptr(10000.0), W: ptr(10000.0), H: ptr(10000.0), Pieces: ptr(2)}}
		}, code: ValidationError},
		{name: "more pieces than allowed, line by line", change: func(c *RequestQuote) {
			c.Pieces, c.Dimensions = nil, []SentDimensionLine{{L: ptr(1.0), W: ptr(1.0), H: ptr(1.0), Pieces: ptr(99999)}, {L: ptr(1.0), W: ptr(1.0), H: ptr(1.0), Pieces: ptr(99999)}}
		}, code: ValidationError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base()
			if tt.change != nil {
				tt.change(&c)
			}
			events, err := DecideRequestQuote(Quote{}, c, nil)
			if tt.code != "" {
				if ErrorCode(err) != tt.code {
					t.Fatalf("err = %v, want %s", err, tt.code)
				}
				return
			}
			if err != nil || len(events) != 1 {
				t.Fatalf("= %v, %v", events, err)
			}
			if tt.check != nil {
				tt.check(t, events[0].(QuoteRequested))
			}
		})
	}
	if _, err := DecideRequestQuote(Quote{ID: "q1"}, base(), nil); ErrorCode(err) != Conflict {
		t.Errorf("a second RFQ on the same quote = %v", err)
	}
}

func TestQuoteVisibleTo(t *testing.T) {
	open := Quote{OrganizationID: "f1"}
	forEK := Quote{OrganizationID: "f1", AirlineFilter: []string{"EK", "QR"}}
	tests := []struct {
		name       string
		p          Principal
		open, toEK bool
	}{
		{"owner", Principal{OrganizationID: "f1", Role: RoleForwarder}, true, true},
		{"other forwarder", Principal{OrganizationID: "f2", Role: RoleForwarder}, false, false},
		{"listed airline", Principal{OrganizationID: "ek", Role: RoleAirline, AirlineCode: "EK"}, true, true},
		{"unlisted airline", Principal{OrganizationID: "lh", Role: RoleAirline, AirlineCode: "LH"}, true, false},
		{"admin", Principal{Role: RoleAdmin}, true, true},
		{"no role", Principal{OrganizationID: "f1"}, false, false},
	}
	for _, tt := range tests {
		if open.VisibleTo(tt.p) != tt.open || forEK.VisibleTo(tt.p) != tt.toEK {
			t.Errorf("%s: sees open %v, EK-only %v", tt.name, open.VisibleTo(tt.p), forEK.VisibleTo(tt.p))
		}
	}
}

func TestQuoteAsSeenBy(t *testing.T) {
	q := Quote{ID: "q1", Options: []PriceOption{{FlightID: "LH8400-2026-11-26", Carrier: "LH"}, {FlightID: "EK9903-2026-11-27", Carrier: "EK"},
		{FlightID: "LH8402-2026-11-27", Carrier: "LH"}}}
	tests := []struct {
		name string
		p    Principal
		want string // the flights of the options seen
	}{
		{"an airline sees only its own options", Principal{OrganizationID: "lh", Role: RoleAirline, AirlineCode: "LH"}, "[LH8400-2026-11-26 LH8402-2026-11-27]"},
		{"an airline without options sees none of its competitors'", Principal{OrganizationID: "qr", Role: RoleAirline, AirlineCode: "QR"}, "[]"},
		{"the forwarder sees them all", Principal{OrganizationID: "f1", Role: RoleForwarder}, "[LH8400-2026-11-26 EK9903-2026-11-27 LH8402-2026-11-27]"},
		{"an admin sees them all", Principal{OrganizationID: "ops", Role: RoleAdmin}, "[LH8400-2026-11-26 EK9903-2026-11-27 LH8402-2026-11-27]"},
	}
	flightsOf := func(options []PriceOption) string {
		var flights []string
		for _, o := range options {
			flights = append(flights, o.FlightID)
		}
		return fmt.Sprint(flights)
	}
	for _, tt := range tests {
		if got := flightsOf(q.AsSeenBy(tt.p).Options); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
		// A quote's history shows its pricing as the quote is shown, and
		// an empty list of options as one: [], not null.
		priced := QuotePriced{QuoteID: q.ID, Options: q.Options}.AsSeenBy(tt.p)
		if got := flightsOf(priced.Options); got != tt.want || priced.Options == nil {
			t.Errorf("%s: the pricing shows %s, want %s", tt.name, got, tt.want)
		}
	}
	if len(q.Options) != 3 {
		t.Errorf("AsSeenBy changed the quote it was given: %v", q.Options)
	}
}

func TestQuoteAcceptanceAsSeenBy(t *testing.T) {
	accepted := QuoteAccepted{QuoteID: "q1", BookingID: "b1", FlightID: "LH8400-2026-11-26"}
	reopened := QuoteReopened{QuoteID: "q1", BookingID: "b1"}
	tests := []struct {
		name string
		p    Principal
		sees bool // the booking and its flight
	}{
		{"the forwarder sees its booking", Principal{OrganizationID: "f1", Role: RoleForwarder}, true},
		{"an admin sees it", Principal{OrganizationID: "ops", Role: RoleAdmin}, true},
		{"the flight's airline sees it", Principal{OrganizationID: "lh", Role: RoleAirline, AirlineCode: "LH"}, true},
		{"a competing airline learns the quote was taken, not on which flight", Principal{OrganizationID: "ek", Role: RoleAirline, AirlineCode: "EK"}, false},
	}
	for _, tt := range tests {
		a := accepted.AsSeenBy(tt.p)
		if sees := a.BookingID == "b1" && a.FlightID == accepted.FlightID; sees != tt.sees || (!tt.sees && (a.BookingID != "" || a.FlightID != "")) {
			t.Errorf("%s: the acceptance shows booking %q on %q", tt.name, a.BookingID, a.FlightID)
		}
		if r := reopened.AsSeenBy(tt.p, accepted); (r.BookingID == "b1") != tt.sees || (!tt.sees && r.BookingID != "") {
			t.Errorf("%s: the reopening shows booking %q", tt.name, r.BookingID)
		}
	}
	// A reopening of a booking other than the acceptance given tells an
	// airline nothing it could check.
	lh := Principal{OrganizationID: "lh", Role: RoleAirline, AirlineCode: "LH"}
	if r := (QuoteReopened{QuoteID: "q1", BookingID: "b2"}).AsSeenBy(lh, accepted); r.BookingID != "" {
		t.Errorf("the reopening of another booking shows %q to LH", r.BookingID)
	}
}

func TestCreateOrganizationValidate(t *testing.T) {
	tests := []struct {
		name   string
		c      CreateOrganization
		fields []string
	}{
		{"forwarder", CreateOrganization{OrganizationID: "f1", Name: "F", Role: RoleForwarder}, nil},
		{"airline", CreateOrganization{OrganizationID: "lh", Name: "LH", Role: RoleAirline, AWBPrefix: "020", AirlineCode: "lh"}, nil},
		{"airline with a numeric code", CreateOrganization{OrganizationID: "x5", Name: "UPS", Role: RoleAirline, AWBPrefix: "406", AirlineCode: "5X"}, nil},
		{"airline without codes", CreateOrganization{OrganizationID: "a", Name: "A", Role: RoleAirline}, []string{"awbPrefix", "iataCode"}},
		{"forwarder with a prefix", CreateOrganization{OrganizationID: "f", Name: "F", Role: RoleForwarder, AWBPrefix: "020"}, []string{"role"}},
		{"everything wrong", CreateOrganization{OrganizationID: "-x", Role: "shipper"}, []string{"id", "name", "role"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Validate()
			var got []string
			if e, ok := err.(*Error); ok {
				for _, f := range e.Fields {
					got = append(got, f.Field)
				}
			}
			if len(got) != len(tt.fields) {
				t.Fatalf("fields = %v, want %v (%v)", got, tt.fields, err)
			}
			for i := range got {
				if got[i] != tt.fields[i] {
					t.Errorf("fields = %v, want %v", got, tt.fields)
				}
			}
		})
	}
}

// The history of quote q1, of 100 kg in a metre cube (167 kg chargeable):
// priced for flight LH8400-2026-11-26, or rejected.
var (
	q1Requested = QuoteRequested{QuoteID: "q1", OrganizationID: "f1", Origin: "FRA", Destination: "JFK", Pieces: 1, GrossWeightKg: 100,
		Dimensions: []DimensionLine{{L: 100, W: 100, H: 100, Pieces: 1}}}
	q1Priced   = QuotePriced{QuoteID: "q1", ChargeableWeightKg: 167, Options: []PriceOption{{FlightID: "LH8400-2026-11-26"}}}
	q1Rejected = QuoteRejected{QuoteID: "q1", Reason: ReasonNoRoute}
)

func q1AcceptedBy(bookingID string) QuoteAccepted {
	return QuoteAccepted{QuoteID: "q1", BookingID: bookingID, FlightID: "LH8400-2026-11-26"}
}

func TestDecidePriceQuote(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	options := []PriceOption{{FlightID: "LH8400-2026-11-26"}, {FlightID: "EK9903-2026-11-27"}}
	noRoute := Refusal(ReasonNoRoute, "no flight serves this route")
	tests := []struct {
		name    string
		history []Event
		options []PriceOption
		refusal error
		want    string // the quote priced or rejected, or "" for no change
	}{
		{"options", []Event{q1Requested}, options, nil, "q1 priced at 167 kg for LH8400-2026-11-26, EK9903-2026-11-27"},
		{"refused", []Event{q1Requested}, nil, noRoute, `q1 rejected, no_route: "no flight serves this route"`},
		{"priced already", []Event{q1Requested, q1Priced}, options, nil, ""},
		{"rejected already", []Event{q1Requested, q1Rejected}, options, nil, ""},
		{"accepted", []Event{q1Requested, q1Priced, q1AcceptedBy("b1")}, nil, noRoute, ""},
		{"no quote", nil, options, nil, ""},
	}
	for _, tt := range tests {
		events, err := DecidePriceQuote(given(EvolveQuote, tt.history...), tt.options, tt.refusal, at)
		got := outcomeOf(events, err, func(e Event) string {
			switch e := e.(type) {
			case QuotePriced:
				var flights []string
				for _, o := range e.Options {
					flights = append(flights, o.FlightID)
				}
				return fmt.Sprintf("%s priced at %g kg for %s", e.QuoteID, e.ChargeableWeightKg, strings.Join(flights, ", "))
			case QuoteRejected:
				return fmt.Sprintf("%s rejected, %s: %q", e.QuoteID, e.Reason, e.Message)
			}
			return e.EventType()
		})
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestDecideAcceptQuote(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		history []Event
		want    string // the quote's booking and flight, "" for no change, or the error's code and reason
	}{
		{"priced", []Event{q1Requested, q1Priced}, "q1 by b1 for LH8400-2026-11-26"},
		{"given back by another booking", []Event{q1Requested, q1Priced, q1AcceptedBy("b0"), QuoteReopened{QuoteID: "q1", BookingID: "b0"}},
			"q1 by b1 for LH8400-2026-11-26"},
		{"accepted by this booking already", []Event{q1Requested, q1Priced, q1AcceptedBy("b1")}, ""},
		{"accepted by another booking", []Event{q1Requested, q1Priced, q1AcceptedBy("b0")}, "conflict quote_not_priced"},
		{"not priced yet", []Event{q1Requested}, "conflict quote_not_priced"},
		{"rejected", []Event{q1Requested, q1Rejected}, "conflict quote_not_priced"},
		{"no quote", nil, "conflict quote_not_priced"},
	}
	for _, tt := range tests {
		events, err := DecideAcceptQuote(given(EvolveQuote, tt.history...), "b1", "LH8400-2026-11-26", at)
		got := outcomeOf(events, err, func(e QuoteAccepted) string { return e.QuoteID + " by " + e.BookingID + " for " + e.FlightID })
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestDecideReopenQuote(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		history []Event
		want    string // the quote and the booking that gave it back, or "" for no change
	}{
		{"accepted by the booking", []Event{q1Requested, q1Priced, q1AcceptedBy("b1")}, "q1 from b1"},
		{"accepted by another booking", []Event{q1Requested, q1Priced, q1AcceptedBy("b0")}, ""},
		{"given back already", []Event{q1Requested, q1Priced, q1AcceptedBy("b1"), QuoteReopened{QuoteID: "q1", BookingID: "b1"}}, ""},
		{"priced, not accepted", []Event{q1Requested, q1Priced}, ""},
		{"no quote", nil, ""},
	}
	for _, tt := range tests {
		events, err := DecideReopenQuote(given(EvolveQuote, tt.history...), "b1", at)
		got := outcomeOf(events, err, func(e QuoteReopened) string { return e.QuoteID + " from " + e.BookingID })
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestEveryMissingRequiredFieldOfAnRFQIsNamed(t *testing.T) {
	tests := []struct {
		c    RequestQuote
		want string
	}{
		{RequestQuote{Origin: "FRA", Destination: "JFK", Pieces: ptr(1)}, "grossWeightKg is required"},
		{RequestQuote{GrossWeightKg: ptr(1.0), Pieces: ptr(1)}, "routing is required"},
		{RequestQuote{GrossWeightKg: ptr(1.0), Destination: "JFK", Pieces: ptr(1)}, "routing.origin is required"},
		{RequestQuote{GrossWeightKg: ptr(1.0), Origin: "FRA", Destination: "JFK"}, "pieces (or dimensionsCm) is required"},
		{RequestQuote{}, "grossWeightKg, routing and pieces (or dimensionsCm) are required"},
		{RequestQuote{Origin: "FRA", Dimensions: []SentDimensionLine{{L: ptr(1.0), W: ptr(1.0), H: ptr(1.0), Pieces: ptr(1)}}}, "grossWeightKg and routing.destination are required"},
	}
	for _, tt := range tests {
		_, err := DecideRequestQuote(Quote{}, tt.c, nil)
		if ErrorCode(err) != InvalidRequest || ErrorMessage(err) != tt.want {
			t.Errorf("%+v: %v, want invalid_request: %s", tt.c, err, tt.want)
		}
	}
}

// A dimension line's side or count left out (misspelt, as "length" for
// "l", which decoding passes over) is required, not out of range; one
// given as 0 is out of range.
func TestADimensionLeftOutIsRequiredAndOneOfZeroOutOfRange(t *testing.T) {
	line := func(change func(d *SentDimensionLine)) SentDimensionLine {
		d := SentDimensionLine{L: ptr(120.0), W: ptr(80.0), H: ptr(100.0), Pieces: ptr(2)}
		change(&d)
		return d
	}
	required := func(field string) FieldError {
		return FieldError{Field: field, Code: CodeRequired, Message: "is required"}
	}
	tests := []struct {
		name  string
		lines []SentDimensionLine
		want  FieldError
	}{
		{"a line without its length is told l is required", []SentDimensionLine{line(func(d *SentDimensionLine) { d.L = nil })}, required("dimensionsCm[0].l")},
		{"a line without its width is told w is required", []SentDimensionLine{line(func(d *SentDimensionLine) { d.W = nil })}, required("dimensionsCm[0].w")},
		{"a line without its height is told h is required", []SentDimensionLine{line(func(d *SentDimensionLine) { d.H = nil })}, required("dimensionsCm[0].h")},
		{"a line without its pieces is told pieces is required", []SentDimensionLine{line(func(d *SentDimensionLine) { d.Pieces = nil })}, required("dimensionsCm[0].pieces")},
		{"a second line is named by its index", []SentDimensionLine{line(func(*SentDimensionLine) {}), line(func(d *SentDimensionLine) { d.H = nil })}, required("dimensionsCm[1].h")},
		{"a length of 0 is out of range", []SentDimensionLine{line(func(d *SentDimensionLine) { d.L = ptr(0.0) })},
			FieldError{Field: "dimensionsCm[0].l", Code: CodeInvalidRange, Message: "must be more than 0 and at most 10000 cm"}},
		{"pieces of 0 are out of range", []SentDimensionLine{line(func(d *SentDimensionLine) { d.Pieces = ptr(0) })},
			FieldError{Field: "dimensionsCm[0].pieces", Code: CodeInvalidRange, Message: "must be 1 to 99999"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The lines count the pieces: nothing else is wrong.
			c := RequestQuote{Origin: "FRA", Destination: "JFK", GrossWeightKg: ptr(100.0), Dimensions: tt.lines, At: time.Now()}
			_, err := DecideRequestQuote(Quote{}, c, nil)
			e, ok := err.(*Error)
			if !ok || e.Code != ValidationError || len(e.Fields) != 1 || e.Fields[0] != tt.want {
				t.Errorf("= %v, want only %+v", err, tt.want)
			}
		})
	}
}
