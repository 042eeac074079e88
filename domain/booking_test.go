package domain

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// bookingIn is booking b1 of flight LH8400-2026-11-26 in a status.
func bookingIn(status string) Booking {
	return Booking{ID: "b1", FlightID: "LH8400-2026-11-26", Status: status}
}

func TestDecideConfirmBooking(t *testing.T) {
	at := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		b    Booking
		want string // the booking, flight, AWB number and price confirmed, or "" for no change
	}{
		{"pending", bookingIn(BookingStatusPending), "b1 on LH8400-2026-11-26 as 020-12345675 at 2.1 EUR/kg, 735 EUR quoted"},
		{"confirmed already", bookingIn(BookingStatusConfirmed), ""},
		{"rejected", bookingIn(BookingStatusRejected), ""},
		{"cancelled", bookingIn(BookingStatusCancelled), ""},
		{"no booking", Booking{}, ""},
	}
	for _, tt := range tests {
		price := PriceOf(PriceOption{FlightID: "LH8400-2026-11-26", PricePerKg: 2.1, TotalAmount: 735, Currency: "EUR", ChargeableWeightKg: 350})
		events, err := DecideConfirmBooking(tt.b, "020-12345675", price, at)
		got := outcomeOf(events, err, func(e BookingConfirmed) string {
			return fmt.Sprintf("%s on %s as %s at %g %s/kg, %g %s quoted", e.BookingID, e.FlightID, e.AWBNumber, e.Price.PricePerKg, e.Price.Currency, e.Price.QuotedTotal, e.Price.Currency)
		})
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestEvolveBookingKeepsThePriceItWasConfirmedAt(t *testing.T) {
	requested := BookingRequested{BookingID: "b1", FlightID: "LH8400-2026-11-26", RequestedAt: time.Date(2026, 11, 26, 7, 0, 0, 0, time.UTC)}
	tests := []struct {
		name      string
		confirmed string // the BookingConfirmed as stored
		want      BookingPrice
	}{
		{"a confirmation with a price", `{"bookingId":"b1","flightId":"LH8400-2026-11-26","confirmedAt":"2026-11-26T08:00:00Z","price":{"pricePerKg":2.1,"currency":"EUR","quotedTotal":735}}`,
			BookingPrice{PricePerKg: 2.1, Currency: "EUR", QuotedTotal: 735}},
		{"a confirmation stored before prices were recorded", `{"bookingId":"b1","flightId":"LH8400-2026-11-26","confirmedAt":"2026-11-26T08:00:00Z"}`, BookingPrice{}},
	}
	for _, tt := range tests {
		var e BookingConfirmed
		if err := json.Unmarshal([]byte(tt.confirmed), &e); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		b := EvolveBooking(EvolveBooking(Booking{}, requested), e)
		if b.Status != BookingStatusConfirmed || b.Price != tt.want {
			t.Errorf("%s: booking %s at %+v, want confirmed at %+v", tt.name, b.Status, b.Price, tt.want)
		}
		// Cancelled, it was still agreed at that price.
		if c := EvolveBooking(b, BookingCancelled{BookingID: "b1"}); c.Price != tt.want {
			t.Errorf("%s, then cancelled: price %+v, want %+v", tt.name, c.Price, tt.want)
		}
	}
}

func TestDecideRejectBooking(t *testing.T) {
	at := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	noRoom := Refusal(ReasonNoCapacity, "flight LH8400-2026-11-26 has 0 kg and 0 m³ left")
	tests := []struct {
		name    string
		b       Booking
		refusal error
		want    string // the booking rejected, its reason and message, or "" for no change
	}{
		{"pending, no room", bookingIn(BookingStatusPending), noRoom, `b1 no_capacity: "flight LH8400-2026-11-26 has 0 kg and 0 m³ left"`},
		{"pending, an error that is no refusal", bookingIn(BookingStatusPending), errors.New("disk full"), `b1 : "disk full"`},
		{"rejected already", bookingIn(BookingStatusRejected), noRoom, ""},
		{"confirmed", bookingIn(BookingStatusConfirmed), noRoom, ""},
		{"cancelled", bookingIn(BookingStatusCancelled), noRoom, ""},
	}
	for _, tt := range tests {
		events, err := DecideRejectBooking(tt.b, tt.refusal, at)
		got := outcomeOf(events, err, func(e BookingRejected) string { return fmt.Sprintf("%s %s: %q", e.BookingID, e.Reason, e.Message) })
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestDecideCancelBooking(t *testing.T) {
	at := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	flight := func(status string) Flight { return Flight{ID: "LH8400-2026-11-26", Status: status} }
	withAWB := bookingIn(BookingStatusConfirmed)
	withAWB.AWBNumber = "020-00000011"
	manifested := flight(FlightStatusScheduled)
	manifested.Loaded = map[string]Load{"020-00000011": {Pieces: 2, WeightKg: 100}}
	cancelledManifested := manifested
	cancelledManifested.Status = FlightStatusCancelled
	tests := []struct {
		name   string
		b      Booking
		f      Flight
		reason string
		want   string // "cancelled", "" for no change, or the error's code
	}{
		{"its shipment on the flight's manifest", withAWB, manifested, "", "conflict"},
		{"its shipment on the manifest of a flight cancelled", withAWB, cancelledManifested, ReasonFlightCanceled, "cancelled"},
		{"another shipment on the flight's manifest", bookingIn(BookingStatusConfirmed), manifested, "", "cancelled"},
		{"confirmed", bookingIn(BookingStatusConfirmed), flight(FlightStatusScheduled), "", "cancelled"},
		{"pending, flight delayed", bookingIn(BookingStatusPending), flight(FlightStatusDelayed), "", "cancelled"},
		{"flight cancelled", bookingIn(BookingStatusConfirmed), flight(FlightStatusCancelled), "", "cancelled"},
		{"cancelled already", bookingIn(BookingStatusCancelled), flight(FlightStatusDeparted), "", ""},
		{"rejected", bookingIn(BookingStatusRejected), flight(FlightStatusScheduled), "", "conflict"},
		{"flight departed", bookingIn(BookingStatusConfirmed), flight(FlightStatusDeparted), "", "conflict"},
		{"flight arrived", bookingIn(BookingStatusConfirmed), flight(FlightStatusArrived), "", "conflict"},
		{"no booking", Booking{}, flight(FlightStatusScheduled), "", "not_found"},
	}
	for _, tt := range tests {
		events, err := DecideCancelBooking(tt.b, tt.f, tt.reason, at)
		got := problemOf(err)
		if err == nil && len(events) == 1 {
			got = "cancelled"
		}
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// openFlight is flight id, scheduled, departing after every moment these
// tests book at.
func openFlight(id string) Flight {
	return Flight{ID: id, Status: FlightStatusScheduled, DepartsAt: time.Date(2026, 12, 31, 10, 35, 0, 0, time.UTC)}
}

// openFlightBetween is openFlight of carrier from origin to destination,
// for a booking's routing to name.
func openFlightBetween(id, carrier, origin, destination string) Flight {
	f := openFlight(id)
	f.Carrier, f.Origin, f.Destination = carrier, origin, destination
	return f
}

// A booking of a flight that takes no more bookings is refused as it is
// filed, a conflict saying which flight and why, where it was filed
// pending and rejected flight_closed moments later. What is wrong with
// the request itself is told first, as for any booking.
func TestABookingOfAClosedFlightIsRefusedWhenFiled(t *testing.T) {
	at := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	q := Quote{ID: "q1", OrganizationID: "f1", Origin: "FRA", Destination: "JFK", Pieces: 1, WeightKg: 100, Status: QuoteStatusPriced}
	flight := func(status string, departs time.Time) Flight {
		return Flight{ID: "LH8400-2026-11-26", Status: status, DepartsAt: departs}
	}
	later := at.Add(2*time.Hour + 35*time.Minute)
	tests := []struct {
		name   string
		f      Flight
		change func(c *RequestBooking)
		want   string // "pending", or the problem: its code and field or reason, and its message
	}{
		{"scheduled, before its departure", flight(FlightStatusScheduled, later), nil, "pending"},
		{"delayed, before its departure", flight(FlightStatusDelayed, later), nil, "pending"},
		{"cancelled", flight(FlightStatusCancelled, later), nil,
			"conflict flight_closed: flight LH8400-2026-11-26 is cancelled: it takes no more bookings"},
		{"departed", flight(FlightStatusDeparted, later), nil,
			"conflict flight_closed: flight LH8400-2026-11-26 is departed: it takes no more bookings"},
		{"arrived", flight(FlightStatusArrived, later), nil,
			"conflict flight_closed: flight LH8400-2026-11-26 is arrived: it takes no more bookings"},
		{"scheduled, at its departure time", flight(FlightStatusScheduled, at), nil,
			"conflict flight_closed: flight LH8400-2026-11-26 reached its departure time, 2026-11-26T08:00:00Z: it takes no more bookings"},
		{"of an airline whose organisation is disabled", flight(FlightStatusScheduled, later),
			func(c *RequestBooking) {
				c.Airline, c.AirlineKnown = Organization{ID: "lh", Status: StatusDisabled}, true
			},
			"conflict flight_closed: flight LH8400-2026-11-26 takes no bookings: its airline's organisation is disabled"},
		{"of an airline the service has no organisation of", flight(FlightStatusScheduled, later), nil, "pending"},
		{"no such flight", Flight{}, nil, `UNKNOWN_FLIGHT flightId: no flight "LH8400-2026-11-26"`},
		{"cancelled, with a volume of nothing", flight(FlightStatusCancelled, later), func(c *RequestBooking) { c.VolumeM3 = new(0.0) },
			"INVALID_RANGE volume: must be more than 0 and at most 1500 m³"},
		{"cancelled, of another forwarder's quote", flight(FlightStatusCancelled, later), func(c *RequestBooking) { c.OrganizationID = "f2" },
			"not_found: no quote q1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := RequestBooking{BookingID: "b1", QuoteID: "q1", FlightID: "LH8400-2026-11-26", OrganizationID: "f1", At: at}
			if tt.change != nil {
				tt.change(&c)
			}
			events, err := DecideRequestBooking(Booking{}, q, tt.f, c)
			got := "pending"
			var e *Error
			switch {
			case errors.As(err, &e) && len(e.Fields) > 0:
				got = problemOf(err) + ": " + e.Fields[0].Message
			case errors.As(err, &e):
				got = problemOf(err) + ": " + e.Message
			case err != nil || len(events) != 1 || events[0].(BookingRequested).FlightID != c.FlightID:
				got = fmt.Sprint(events, err)
			}
			if got != tt.want {
				t.Errorf("= %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDecideRequestBookingCargo(t *testing.T) {
	q := Quote{ID: "q1", OrganizationID: "f1", Origin: "FRA", Destination: "HKG", Pieces: 2, WeightKg: 350.5, VolumeM3: 1.92,
		Commodity: Commodity{Code: "GEN"}, SHC: []string{"EAP", "DGR"}, Dimensions: []DimensionLine{{L: 120, W: 80, H: 100, Pieces: 2}}}
	base := func() RequestBooking {
		return RequestBooking{BookingID: "b1", QuoteID: "q1", FlightID: "EK46-2026-11-26", OrganizationID: "f1", At: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)}
	}
	tests := []struct {
		name   string
		change func(c *RequestBooking)
		want   string // the first problem's code and field, or the pieces booked
	}{
		{"as quoted", func(*RequestBooking) {}, "2"},
		{"lines of their own give the pieces", func(c *RequestBooking) {
			c.Dimensions = []SentDimensionLine{{L: new(120.0), W: new(80.0), H: new(100.0), Pieces: new(3)}}
		}, "3"},
		{"pieces against the quote's lines", func(c *RequestBooking) { c.Pieces = new(5) }, "MISMATCH pieces"},
		{"pieces against its own lines", func(c *RequestBooking) {
			c.Pieces, c.Dimensions = new(4), []SentDimensionLine{{L: new(120.0), W: new(80.0), H: new(100.0), Pieces: new(3)}}
		}, "MISMATCH pieces"},
		{"the quote's commodity", func(c *RequestBooking) { c.Commodity = "gen" }, "2"},
		{"other goods", func(c *RequestBooking) { c.Commodity = "UN3480" }, "MISMATCH commodity"},
		{"a handling code dropped", func(c *RequestBooking) { c.SHC = []string{"eap"} }, "2"},
		{"a handling code added, after a repeat", func(c *RequestBooking) { c.SHC = []string{"EAP", "eap", "AVI"} }, "MISMATCH shc[2]"},
		{"a volume of nothing", func(c *RequestBooking) { c.VolumeM3 = new(0.0) }, "INVALID_RANGE volume"},
		{"a weight of nothing", func(c *RequestBooking) { c.WeightKg = new(0.0) }, "INVALID_RANGE weight"},
		{"a gross weight of nothing", func(c *RequestBooking) { c.GrossWeightKg = new(-1.0) }, "INVALID_RANGE grossWeightKg"},
		{"both, of nothing", func(c *RequestBooking) { c.WeightKg, c.GrossWeightKg = new(0.0), new(0.0) }, "INVALID_RANGE grossWeightKg"},
		{"a journey in two legs", func(c *RequestBooking) {
			c.Routing = []RoutingLeg{{"FRA", "DXB", "EK", "EK46", "2026-11-26"}, {"dxb", "HKG", "EK", "EK380", "2026-11-27"}}
		}, "2"},
		{"a leg to where it starts", func(c *RequestBooking) { c.Routing = []RoutingLeg{{"FRA", "fra", "LH", "LH1", "2026-11-26"}} }, "INVALID_VALUE routing[0].to"},
		{"legs that do not connect", func(c *RequestBooking) {
			c.Routing = []RoutingLeg{{"FRA", "DXB", "EK", "EK46", "2026-11-26"}, {"DOH", "HKG", "QR", "QR816", "2026-11-27"}}
		}, "MISMATCH routing[1].from"},
		{"a leg before the one before", func(c *RequestBooking) {
			c.Routing = []RoutingLeg{{"FRA", "DXB", "EK", "EK46", "2026-11-26"}, {"DXB", "HKG", "EK", "EK380", "2026-11-25"}}
		}, "INVALID_DATE routing[1].date"},
	}
	for _, tt := range tests {
		c := base()
		tt.change(&c)
		events, err := DecideRequestBooking(Booking{}, q, openFlightBetween(c.FlightID, "EK", "FRA", "DXB"), c)
		got := problemOf(err)
		if err == nil {
			got = strconv.Itoa(events[0].(BookingRequested).Pieces)
		}
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// A booking's own dimension lines are checked as an RFQ's: a side or a
// count left out is required, and it is the only problem reported, not
// also pieces that disagree with the quote's lines.
func TestABookingsDimensionLeftOutIsRequired(t *testing.T) {
	q := Quote{ID: "q1", OrganizationID: "f1", Pieces: 2, WeightKg: 350.5, VolumeM3: 1.92, Commodity: Commodity{Code: "GEN"},
		Dimensions: []DimensionLine{{L: 120, W: 80, H: 100, Pieces: 2}}}
	tests := []struct {
		name string
		line SentDimensionLine
		want FieldError
	}{
		{"a line without its length is told l is required", SentDimensionLine{W: new(80.0), H: new(100.0), Pieces: new(2)},
			FieldError{Field: "dimensionsCm[0].l", Code: CodeRequired, Message: "is required"}},
		{"a line without its pieces is told pieces is required", SentDimensionLine{L: new(120.0), W: new(80.0), H: new(100.0)},
			FieldError{Field: "dimensionsCm[0].pieces", Code: CodeRequired, Message: "is required"}},
		{"a length of 0 is out of range", SentDimensionLine{L: new(0.0), W: new(80.0), H: new(100.0), Pieces: new(2)},
			FieldError{Field: "dimensionsCm[0].l", Code: CodeInvalidRange, Message: "must be more than 0 and at most 10000 cm"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := RequestBooking{BookingID: "b1", QuoteID: "q1", FlightID: "LH8400-2026-11-26", OrganizationID: "f1",
				Dimensions: []SentDimensionLine{tt.line}, At: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)}
			_, err := DecideRequestBooking(Booking{}, q, openFlight(c.FlightID), c)
			e, ok := err.(*Error)
			if !ok || e.Code != ValidationError || len(e.Fields) != 1 || e.Fields[0] != tt.want {
				t.Errorf("= %v, want only %+v", err, tt.want)
			}
		})
	}
}

func TestABookingsChargeableWeightIsCheckedOnlyOnCargoThatPassedAndAtTheDivisorItNames(t *testing.T) {
	q := Quote{ID: "q1", OrganizationID: "f1", Status: QuoteStatusPriced, Pieces: 2, WeightKg: 100, VolumeM3: 1.92, Commodity: Commodity{Code: "GEN"},
		Dimensions: []DimensionLine{{L: 120, W: 80, H: 100, Pieces: 2}}, ChargeableWeightKg: 320,
		Options: []PriceOption{{FlightID: "LH8400-2026-11-26", Carrier: "LH", ChargeableWeightKg: 384, VolumeDivisor: 5000}}}
	tests := []struct {
		name   string
		change func(c *RequestBooking)
		want   string // every problem, as code and field
		says   string // in the chargeable weight's message
	}{
		{"the weight of the option's divisor", func(c *RequestBooking) { c.ChargeableWeightKg = new(384.0) }, "", ""},
		{"the weight of the standard divisor", func(c *RequestBooking) { c.ChargeableWeightKg = new(320.0) }, "MISMATCH chargeableWeightKg",
			"computes 384 kg (the larger of gross weight and volume weight at 5000 cm³/kg, the carrier's"},
		{"a flight the quote has no option for", func(c *RequestBooking) { c.FlightID, c.ChargeableWeightKg = "LH8400-2026-12-20", new(384.0) },
			"MISMATCH chargeableWeightKg", "at 6000 cm³/kg, the standard: quote q1 has no price option for flight LH8400-2026-12-20"},
		{"a chargeable weight of nothing", func(c *RequestBooking) { c.ChargeableWeightKg = new(0.0) }, "INVALID_RANGE chargeableWeightKg", ""},
		{"a chargeable weight below nothing, on cargo refused", func(c *RequestBooking) { c.GrossWeightKg, c.ChargeableWeightKg = new(-1.0), new(-384.0) },
			"INVALID_RANGE grossWeightKg, INVALID_RANGE chargeableWeightKg", ""},
		{"a gross weight out of range", func(c *RequestBooking) { c.GrossWeightKg, c.ChargeableWeightKg = new(1e308), new(384.0) },
			"INVALID_RANGE grossWeightKg", ""},
		{"dimensions out of range", func(c *RequestBooking) {
			c.Dimensions, c.ChargeableWeightKg = []SentDimensionLine{{L: new(10000.0), W: new(10000.0), H: new(10000.0), Pieces: new(99999)}}, new(1.0)
		}, "INVALID_RANGE dimensionsCm", ""},
		{"a volume the lines do not make", func(c *RequestBooking) {
			c.Dimensions, c.VolumeM3, c.ChargeableWeightKg = []SentDimensionLine{{L: new(100.0), W: new(100.0), H: new(100.0), Pieces: new(2)}}, new(1.0), new(1.0)
		}, "MISMATCH volume", ""},
		{"pieces out of range against the lines", func(c *RequestBooking) { c.Pieces = new(0) }, "INVALID_RANGE pieces", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := RequestBooking{BookingID: "b1", QuoteID: "q1", FlightID: "LH8400-2026-11-26", OrganizationID: "f1", At: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)}
			tt.change(&c)
			_, err := DecideRequestBooking(Booking{}, q, openFlight(c.FlightID), c)
			var got []string
			var e *Error
			if errors.As(err, &e) {
				for _, f := range e.Fields {
					got = append(got, string(f.Code)+" "+f.Field)
					if f.Field == "chargeableWeightKg" && !strings.Contains(f.Message, tt.says) {
						t.Errorf("%q does not say %q", f.Message, tt.says)
					}
				}
			}
			if strings.Join(got, ", ") != tt.want {
				t.Errorf("= %q, want %q", strings.Join(got, ", "), tt.want)
			}
		})
	}
}

func TestABookingsAWBProblemIsNamedOnThePartOfAWBThatHasIt(t *testing.T) {
	q := Quote{ID: "q1", OrganizationID: "f1", Origin: "FRA", Destination: "JFK", Pieces: 2, WeightKg: 350.5}
	tests := []struct {
		name, prefix, number string
		waybill              *MAWBCreated // filed under the number first
		want                 string       // the first problem's code and field, or the number booked
	}{
		{"prefix and serial", "020", "81140743", nil, "020-81140743"},
		{"the number with its prefix", "020", "020-81140743", nil, "020-81140743"},
		{"the number with its prefix, without the dash", "020", "02081140743", nil, "020-81140743"},
		{"the number with another prefix, without the dash", "020", "17612345675", nil, "MISMATCH awb.number"},
		{"codes with white space", " 020 ", " 81140743 ", nil, "020-81140743"},
		{"no prefix", "", "81140743", nil, "REQUIRED awb.prefix"},
		{"a prefix of two digits", "20", "81140743", nil, "INVALID_AWB_NUMBER awb.prefix"},
		{"no number", "020", "", nil, "REQUIRED awb.number"},
		{"a serial of seven digits", "020", "8114074", nil, "INVALID_AWB_NUMBER awb.number"},
		{"a bad check digit", "020", "81140744", nil, "INVALID_AWB_NUMBER awb.number"},
		{"the number with another prefix", "020", "176-12345675", nil, "MISMATCH awb.number"},
		{"a MAWB filed first for the journey", "020", "81140743", &MAWBCreated{Origin: "FRA", Destination: "JFK"}, "020-81140743"},
		{"a MAWB filed first for another journey", "020", "81140743", &MAWBCreated{Origin: "FRA", Destination: "LHR"}, "MISMATCH awb"},
	}
	for _, tt := range tests {
		c := RequestBooking{BookingID: "b1", QuoteID: "q1", FlightID: "LH8400-2026-11-26", OrganizationID: "f1",
			AWBPrefix: tt.prefix, AWBSerial: tt.number, Waybill: tt.waybill, At: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)}
		events, err := DecideRequestBooking(Booking{}, q, openFlightBetween(c.FlightID, "EK", "FRA", "DXB"), c)
		got := problemOf(err)
		if err == nil {
			got = events[0].(BookingRequested).AWBNumber
		}
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestABookingKeepsTheHandlingCodesOfItsQuoteUnlessItSendsItsOwn(t *testing.T) {
	q := Quote{ID: "q1", OrganizationID: "f1", Pieces: 1, WeightKg: 100, SHC: []string{"EAP", "DGR"}}
	tests := []struct {
		name string
		shc  []string
		want string
	}{
		{"left out: the quote's", nil, "[EAP DGR]"},
		{"one dropped", []string{"dgr"}, "[DGR]"},
		{"every one dropped", []string{}, "[]"},
	}
	for _, tt := range tests {
		events, err := DecideRequestBooking(Booking{}, q, openFlight("LH8400-2026-11-26"), RequestBooking{BookingID: "b1", QuoteID: "q1", FlightID: "LH8400-2026-11-26",
			OrganizationID: "f1", SHC: tt.shc, At: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := fmt.Sprint(events[0].(BookingRequested).SHC); got != tt.want {
			t.Errorf("%s: the booking's codes are %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestABookingsPartiesAreStoredTrimmedAndABlankNameIsTheQuotes(t *testing.T) {
	q := Quote{ID: "q1", OrganizationID: "f1", Pieces: 1, WeightKg: 100, Shipper: Party{Name: "ACME Export GmbH"}, Consignee: Party{Name: "Globex Inc"}}
	tests := []struct {
		name               string
		shipper, consignee FullParty
		want               string
	}{
		{"left out: the quote's names", FullParty{}, FullParty{}, "{ACME Export GmbH  } {Globex Inc  }"},
		{"blank: the quote's names", FullParty{Name: "  "}, FullParty{Name: "\t"}, "{ACME Export GmbH  } {Globex Inc  }"},
		{"their own, trimmed", FullParty{Name: " Initech ", Address: " Main St 1 ", Contact: " ops@initech.example "}, FullParty{Name: "Hooli\n"},
			"{Initech Main St 1 ops@initech.example} {Hooli  }"},
	}
	for _, tt := range tests {
		events, err := DecideRequestBooking(Booking{}, q, openFlight("LH8400-2026-11-26"), RequestBooking{BookingID: "b1", QuoteID: "q1", FlightID: "LH8400-2026-11-26",
			OrganizationID: "f1", Shipper: tt.shipper, Consignee: tt.consignee, At: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		e := events[0].(BookingRequested)
		if got := fmt.Sprint(e.Shipper, " ", e.Consignee); got != tt.want {
			t.Errorf("%s: the booking's parties are %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestABookingKeepsItsRoutingsCodesAsTheServiceKeepsCodes(t *testing.T) {
	q := Quote{ID: "q1", OrganizationID: "f1", Origin: "FRA", Destination: "HKG", Pieces: 1, WeightKg: 100}
	events, err := DecideRequestBooking(Booking{}, q, openFlightBetween("EK46-2026-11-26", "EK", "FRA", "DXB"), RequestBooking{BookingID: "b1", QuoteID: "q1", FlightID: "EK46-2026-11-26", OrganizationID: "f1",
		Routing: []RoutingLeg{{" fra ", "dxb", "ek", "ek 046", "2026-11-26"}, {"DXB ", "hkg", " EK", "EK380", "2026-11-27"}},
		At:      time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	want := []RoutingLeg{{"FRA", "DXB", "EK", "EK46", "2026-11-26"}, {"DXB", "HKG", "EK", "EK380", "2026-11-27"}}
	if got := events[0].(BookingRequested).Routing; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("routing stored as %v, want %v", got, want)
	}
}

// A booking keeps what its request carried (commodity, handling codes,
// parties, routing, dimension lines) through its confirmation, where it
// kept the commodity alone; and shares no list with the event, which a
// reader changing one would change in the other.
func TestABookingKeepsTheCargoAndPartiesItsRequestCarried(t *testing.T) {
	at := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		requested BookingRequested
	}{
		{"dangerous goods with both parties, routing and dimensions", BookingRequested{BookingID: "b1", FlightID: "LH8400-2026-11-26",
			Commodity: "RLI", SHC: []string{"DGR", "RLI"},
			Shipper:    FullParty{Name: "ACME Batteries GmbH", Address: "Hafenstr. 1, Frankfurt", Contact: "+49 69 1234"},
			Consignee:  FullParty{Name: "Globex Inc", Contact: "ops@globex.example"},
			Routing:    []RoutingLeg{{"FRA", "JFK", "LH", "LH8400", "2026-11-26"}},
			Dimensions: []DimensionLine{{L: 120, W: 80, H: 100, Pieces: 2}}}},
		{"general cargo without consignee, codes, routing or dimensions", BookingRequested{BookingID: "b1", FlightID: "LH8400-2026-11-26",
			Commodity: "GEN", Shipper: FullParty{Name: "ACME Machine Tools"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.requested
			b := EvolveBooking(EvolveBooking(Booking{}, e), BookingConfirmed{BookingID: "b1", FlightID: e.FlightID, ConfirmedAt: at})
			got := fmt.Sprint(b.Commodity, b.SHC, b.Shipper, b.Consignee, b.Routing, b.Dimensions)
			if want := fmt.Sprint(e.Commodity, e.SHC, e.Shipper, e.Consignee, e.Routing, e.Dimensions); got != want {
				t.Fatalf("the confirmed booking keeps %s, want %s", got, want)
			}
			for i := range e.SHC {
				e.SHC[i] = "XXX"
			}
			for i := range e.Routing {
				e.Routing[i].FlightNumber = "XX1"
			}
			for i := range e.Dimensions {
				e.Dimensions[i].Pieces = 99
			}
			if after := fmt.Sprint(b.Commodity, b.SHC, b.Shipper, b.Consignee, b.Routing, b.Dimensions); after != got {
				t.Errorf("the booking changed with its event: %s, was %s", after, got)
			}
		})
	}
}

// A booking's routing is the journey of its quote, from its origin to its
// destination, and takes the flight booked as it flies: legs of another
// journey are MISMATCH, where a booking of LH8160 from FRA to ORD was
// confirmed with one leg MUC–JFK on EK1 a week later, and so is the leg of
// the flight booked between airports it does not fly between, or under
// another carrier, where a booking of LH8388 (FRA–HKG) was confirmed with
// the leg FRA–DXB on it.
func TestABookingsRoutingIsTheJourneyOfItsQuoteOnTheFlightBooked(t *testing.T) {
	q := Quote{ID: "q1", OrganizationID: "f1", Origin: "FRA", Destination: "ORD", Pieces: 1, WeightKg: 100}
	tests := []struct {
		name string
		legs []RoutingLeg
		want string // the problems' fields, or "" when accepted
	}{
		{"the flight booked", []RoutingLeg{{"FRA", "ORD", "LH", "LH8160", "2026-12-01"}}, ""},
		{"the flight booked to where it does not fly", []RoutingLeg{{"FRA", "MUC", "LH", "LH8160", "2026-12-01"}, {"MUC", "ORD", "LH", "LH430", "2026-12-02"}},
			"MISMATCH routing[0].to"},
		{"the flight booked from where it does not depart", []RoutingLeg{{"FRA", "DXB", "EK", "EK46", "2026-11-30"}, {"DXB", "ORD", "LH", "LH8160", "2026-12-01"}},
			"MISMATCH routing[1].from"},
		{"the flight booked under another carrier", []RoutingLeg{{"FRA", "ORD", "EK", "LH8160", "2026-12-01"}}, "MISMATCH routing[0].carrier"},
		{"another journey", []RoutingLeg{{"MUC", "JFK", "EK", "EK1", "2026-12-09"}}, "MISMATCH routing[0].from, MISMATCH routing[0].to, MISMATCH routing"},
		{"short of the destination", []RoutingLeg{{"FRA", "JFK", "LH", "LH8160", "2026-12-01"}}, "MISMATCH routing[0].to"},
		{"the flight of another day", []RoutingLeg{{"FRA", "ORD", "LH", "LH8160", "2026-12-02"}}, "MISMATCH routing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecideRequestBooking(Booking{}, q, openFlightBetween("LH8160-2026-12-01", "LH", "FRA", "ORD"), RequestBooking{BookingID: "b1", QuoteID: "q1", FlightID: "LH8160-2026-12-01",
				OrganizationID: "f1", Routing: tt.legs, At: time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)})
			var got []string
			if e, ok := err.(*Error); ok {
				for _, f := range e.Fields {
					got = append(got, string(f.Code)+" "+f.Field)
				}
			} else if err != nil {
				got = []string{err.Error()}
			}
			if strings.Join(got, ", ") != tt.want {
				t.Errorf("problems %q, want %s", got, tt.want)
			}
		})
	}
}

func TestCheckBookableRefusesInTheOrderREADMEGives(t *testing.T) {
	priced := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	q := Quote{ID: "q1", OrganizationID: "f1", Status: QuoteStatusPriced, ChargeableWeightKg: 100, VolumeM3: 1, PricedAt: priced,
		Options: []PriceOption{{FlightID: "LH8400-2026-11-26", Carrier: "LH"}}}
	b := Booking{ID: "b1", QuoteID: "q1", OrganizationID: "f1", FlightID: "LH8400-2026-11-26", ChargeableWeightKg: 100, VolumeM3: 1}
	inTime, late := priced.Add(47*time.Hour), priced.Add(48*time.Hour)
	tests := []struct {
		name   string
		change func(q *Quote, b *Booking)
		now    time.Time
		want   string // the reason, or "" when bookable
	}{
		{"as quoted, in time", func(*Quote, *Booking) {}, inTime, ""},
		{"5% more, in time", func(_ *Quote, b *Booking) { b.ChargeableWeightKg, b.VolumeM3 = 105, 1.05 }, inTime, ""},
		{"another forwarder's", func(_ *Quote, b *Booking) { b.OrganizationID = "f2" }, inTime, ReasonNotYourQuote},
		{"accepted by this booking, late", func(q *Quote, _ *Booking) { q.Status, q.BookingID = QuoteStatusAccepted, "b1" }, late, ""},
		{"accepted by another", func(q *Quote, _ *Booking) { q.Status, q.BookingID = QuoteStatusAccepted, "b0" }, inTime, ReasonQuoteNotPriced},
		{"no option for the flight", func(_ *Quote, b *Booking) { b.FlightID = "LH8400-2026-11-27" }, inTime, ReasonNoOption},
		{"late", func(*Quote, *Booking) {}, late, ReasonOptionExpired},
		{"more than 5% more weight", func(_ *Quote, b *Booking) { b.ChargeableWeightKg = 105.5 }, inTime, ReasonExceedsQuote},
		{"more than 5% more volume", func(_ *Quote, b *Booking) { b.VolumeM3 = 1.06 }, inTime, ReasonExceedsQuote},
		{"a volume on a quote that gave none", func(q *Quote, b *Booking) { q.VolumeM3, b.VolumeM3 = 0, 0.5 }, inTime, ""},
		{"a volume weighing more than quoted on a quote that gave none", func(q *Quote, b *Booking) { q.VolumeM3, b.VolumeM3, b.ChargeableWeightKg = 0, 0.9, 150 },
			inTime, ReasonExceedsQuote},
		{"late and more", func(_ *Quote, b *Booking) { b.ChargeableWeightKg = 200 }, late, ReasonOptionExpired},
		// An option priced at its carrier's divisor bounds the booking
		// by its own chargeable weight, not the quote's at the standard.
		{"as an option at 5000 cm³/kg priced it", func(q *Quote, b *Booking) {
			q.Options[0].ChargeableWeightKg, q.Options[0].VolumeDivisor, b.ChargeableWeightKg = 120, 5000, 126
		}, inTime, ""},
		{"more than 5% more than an option at 5000 cm³/kg priced", func(q *Quote, b *Booking) {
			q.Options[0].ChargeableWeightKg, q.Options[0].VolumeDivisor, b.ChargeableWeightKg = 120, 5000, 126.5
		}, inTime, ReasonExceedsQuote},
		// 5% more than 384 kg is 403.2 kg, which is 403.5 kg chargeable.
		{"exactly 5% more, chargeable to the next 0.5 kg", func(q *Quote, b *Booking) { q.ChargeableWeightKg, b.ChargeableWeightKg = 384, 403.5 }, inTime, ""},
		{"0.5 kg chargeable more than that", func(q *Quote, b *Booking) { q.ChargeableWeightKg, b.ChargeableWeightKg = 384, 404 }, inTime, ReasonExceedsQuote},
	}
	for _, tt := range tests {
		q, b := q, b
		q.Options = slices.Clone(q.Options)
		tt.change(&q, &b)
		if got := ReasonOf(CheckBookable(q, b, tt.now)); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestABookingsNumberIsHeldOnlyByTheForwarderThatBooked(t *testing.T) {
	booked := Booking{OrganizationID: "acme", AWBNumber: "020-10000012"}
	for _, c := range []struct {
		name    string
		booking Booking
		org     string
		want    bool
	}{
		{"the forwarder that booked", booked, "acme", true},
		{"another forwarder", booked, "globex", false},
		{"no organisation", booked, "", false},
		{"a booking without a number yet", Booking{OrganizationID: "acme"}, "acme", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.booking.NumberHeldBy(c.org); got != c.want {
				t.Errorf("NumberHeldBy(%q) = %v, want %v", c.org, got, c.want)
			}
		})
	}
}
