package domain

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// Chargeable weight is rounded up to the next half kilogram, but a volume
// weight that is a half kilogram exactly stays as it is: 64.4×50×150 cm is
// 483 000 cm³, 80.5 kg at 6000 cm³/kg, though float arithmetic makes it
// 80.50000000000001, which a plain ceiling charges as 81.
func TestChargeableWeight(t *testing.T) {
	tests := []struct {
		name  string
		gross float64
		dims  []DimensionLine
		want  float64
	}{
		{"gross weight, rounded up to the half kilo", 350.1, nil, 350.5},
		{"gross weight on a half kilo", 350.5, nil, 350.5},
		{"volume weight above the gross", 100, []DimensionLine{{L: 120, W: 80, H: 100, Pieces: 2}}, 320},
		{"a volume weight of a half kilo exactly, in decimal centimetres", 10, []DimensionLine{{L: 64.4, W: 50, H: 150, Pieces: 1}}, 80.5},
		{"a whole kilo exactly, in decimal centimetres", 10, []DimensionLine{{L: 1.1, W: 200, H: 300, Pieces: 1}}, 11},
		{"a volume weight just above a half kilo", 10, []DimensionLine{{L: 64.5, W: 50, H: 150, Pieces: 1}}, 81},
		// Rounded up, a weight above 0 is never 0 kg: at 0 a quote's price
		// per kg would be infinite, which no event can carry.
		{"a gross weight of a gram", 0.001, nil, 0.5},
		{"a gross weight of a tenth of a milligram", 0.0000001, nil, 0.5},
	}
	for _, tt := range tests {
		if got := ChargeableWeight(tt.gross, tt.dims, DefaultVolumeDivisor); got != tt.want {
			t.Errorf("%s: chargeable weight = %v kg, want %v", tt.name, got, tt.want)
		}
	}
}

// The flights on offer without a delivery date start today where they
// depart, not today in UTC: in the evening at Los Angeles it is already
// tomorrow in UTC, and a flight leaving LAX at 20:00 local time that day
// is still hours ahead and bookable.
func TestPricingOffersAFlightLaterTodayWestOfUTC(t *testing.T) {
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Skip(err)
	}
	departs := time.Date(2026, 11, 27, 20, 0, 0, 0, la) // 2026-11-28 04:00 UTC
	f := Flight{ID: "AA6-2026-11-27", Carrier: "AA", FlightNumber: "AA6", Origin: "LAX", Destination: "HNL",
		DepartureDate: "2026-11-27", DepartureTime: "20:00", OriginZone: "America/Los_Angeles", DepartsAt: departs.UTC(),
		CapacityKg: 10000, CapacityM3: 50, Status: FlightStatusScheduled}
	card := RateCard{Carrier: "AA", Origin: "LAX", Destination: "HNL", Currency: "USD", MinimumCharge: 50,
		Breaks: []RateBreak{{0, 3}}, ValidFrom: "2026-01-01", ValidTo: "2026-12-31"}
	q := Quote{Origin: "LAX", Destination: "HNL", WeightKg: 100, ChargeableWeightKg: 100}
	now := departs.Add(-3 * time.Hour) // 17:00 in Los Angeles, 01:00 UTC the next day
	options, err := PriceQuote(q, nil, []Flight{f}, []RateCard{card}, now)
	if err != nil || len(options) != 1 || options[0].FlightID != f.ID {
		t.Fatalf("priced at %s: options %+v, %v; want the flight of 20:00 tonight", now.In(la).Format(time.DateTime), options, err)
	}
	// The same quote for delivery on the 27th, its local date, too.
	q.DeliveryToAirlineDate = "2026-11-27"
	if options, err := PriceQuote(q, nil, []Flight{f}, []RateCard{card}, now); err != nil || len(options) != 1 {
		t.Fatalf("delivered on the 27th: options %+v, %v; want the flight of 20:00 tonight", options, err)
	}
}

// A charge is the rate of the weight break the shipment falls in, or a
// heavier break's weight at its rate when cheaper, at least the minimum,
// plus surcharges; and an amount in the card's currency: whole yen, fils
// of a Kuwaiti dinar to the thousandth.
func TestRateCardCharge(t *testing.T) {
	card := func(currency string) RateCard {
		return RateCard{Carrier: "LH", Origin: "FRA", Destination: "JFK", Currency: currency, MinimumCharge: 75,
			Breaks:     []RateBreak{{0, 4.5}, {45, 3.8}, {100, 3.2}, {300, 2.9}, {500, 2.6}, {1000, 2.3}},
			Surcharges: map[string]float64{"DGR": 0.6, "PER": 0.25, "ICE": 0.15}}
	}
	tests := []struct {
		name     string
		currency string
		cw       float64
		shc      []string
		want     float64
	}{
		{"the minimum charge", "EUR", 10, nil, 75},
		{"the normal rate", "EUR", 20, nil, 90},
		{"a heavier break is cheaper", "EUR", 44.5, nil, 171},
		{"on a break", "EUR", 45, nil, 171},
		{"between breaks", "EUR", 60, nil, 228},
		{"from 1000 kg", "EUR", 1200, nil, 2760},
		{"surcharges per kg on top", "EUR", 100, []string{"DGR", "PER"}, 405},
		{"a code without a surcharge", "EUR", 100, []string{"EAP"}, 320},
		{"whole yen", "JPY", 100.5, []string{"PER"}, 347}, // 321.6 + 25.125
		{"Kuwaiti dinar to the fils", "KWD", 100.5, []string{"PER"}, 346.725},
		// Half a cent is rounded up however a float64 holds it:
		// 137.25 + 4.575 is 141.82499999999999 in binary.
		{"half a cent up", "EUR", 30.5, []string{"ICE"}, 141.83},
		{"half a cent up on the minimum", "EUR", 1.5, []string{"ICE"}, 75.23}, // 75 + 0.225
	}
	for _, tt := range tests {
		if got := card(tt.currency).Charge(tt.cw, tt.shc); got != tt.want {
			t.Errorf("%s: %v kg %v = %v %s, want %v", tt.name, tt.cw, tt.shc, got, tt.currency, tt.want)
		}
	}
}

// An option's price per kg is its total over its chargeable weight to the
// cent, or to the fils of a currency of three decimals, half up as amounts
// are, however a float64 holds the half: a minimum charge of 25.50 on 20 kg
// is 1.275 a kg, 1.28 dollars, not 1.27, and 1.275 dinars.
func TestAnOptionsPricePerKgRoundsHalfACentUpOrToTheCurrencysMinorUnit(t *testing.T) {
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	f := Flight{ID: "EK9950-2026-11-28", Carrier: "EK", FlightNumber: "EK9950", Origin: "DXB", Destination: "KWI",
		DepartureDate: "2026-11-28", OriginZone: "Asia/Dubai", DepartsAt: now.Add(24 * time.Hour), CapacityKg: 10000, CapacityM3: 50,
		Status: FlightStatusScheduled}
	tests := []struct {
		name     string
		currency string
		minimum  float64
		perKg    float64
		kg       float64
		want     float64
	}{
		{"the minimum charge of 25.50 on 20 kg", "USD", 25.5, 1, 20, 1.28},
		{"the minimum charge of 100.25 on 50 kg", "EUR", 100.25, 1, 50, 2.01},
		{"the minimum charge of 25.5 dinars on 20 kg, to the fils", "KWD", 25.5, 1, 20, 1.275},
		{"a rate of 0.765 dinars, to the fils", "KWD", 0, 0.765, 500, 0.765},
		{"a rate in yen, to the hundredth as in dollars", "JPY", 0, 955.01, 500, 955.01},
		{"a rate of 3.27 to the cent", "USD", 0, 3.27, 280, 3.27},
		{"915 over 280 kg", "USD", 915, 1, 280, 3.27}, // 3.2678…
		{"a third of a cent down", "EUR", 100, 1, 30, 3.33},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			card := RateCard{Carrier: "EK", Origin: "DXB", Destination: "KWI", Currency: tt.currency, MinimumCharge: tt.minimum,
				Breaks: []RateBreak{{0, tt.perKg}}, ValidFrom: "2026-01-01", ValidTo: "2026-12-31"}
			q := Quote{Origin: "DXB", Destination: "KWI", WeightKg: tt.kg, ChargeableWeightKg: tt.kg}
			options, err := PriceQuote(q, nil, []Flight{f}, []RateCard{card}, now)
			if err != nil {
				t.Fatal(err)
			}
			if got := options[0].PricePerKg; got != tt.want {
				t.Errorf("%g %s for %g kg: %g a kg, want %g", options[0].TotalAmount, tt.currency, tt.kg, got, tt.want)
			}
		})
	}
}

// A booking that states the chargeable weight of its pieces, 80.5 kg for
// 64.4×50×150 cm, is taken: the service computes the same, not 81.
func TestABookingStatingAHalfKiloChargeableWeightIsTaken(t *testing.T) {
	dims := []DimensionLine{{L: 64.4, W: 50, H: 150, Pieces: 1}}
	q := Quote{ID: "q1", OrganizationID: "f1", Pieces: 1, WeightKg: 10, VolumeM3: 0.483, Commodity: Commodity{Code: "GEN"}, Dimensions: dims}
	c := RequestBooking{BookingID: "b1", QuoteID: "q1", FlightID: "LH8400-2026-11-26", OrganizationID: "f1",
		ChargeableWeightKg: new(80.5), At: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)}
	events, err := DecideRequestBooking(Booking{}, q, openFlight(c.FlightID), c)
	if err != nil {
		t.Fatalf("booking stating 80.5 kg: %v", err)
	}
	if got := events[0].(BookingRequested).ChargeableWeightKg; got != 80.5 {
		t.Errorf("chargeable weight = %v kg, want 80.5", got)
	}
}

// Airlines count volume weight differently: each option is priced at the
// chargeable weight its carrier's card counts, and a booking of it is
// weighed so. 100 kg in a cubic metre is 166.67 kg of volume weight at
// the standard 6000 cm³/kg, 200 kg at an express card's 5000.
func TestEachOptionIsPricedAtItsCarriersVolumeDivisor(t *testing.T) {
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	flight := func(carrier string) Flight {
		return Flight{ID: carrier + "400-2026-11-28", Carrier: carrier, FlightNumber: carrier + "400", Origin: "FRA", Destination: "JFK",
			DepartureDate: "2026-11-28", OriginZone: "Europe/Berlin", DepartsAt: now.Add(24 * time.Hour), CapacityKg: 10000, CapacityM3: 50,
			Status: FlightStatusScheduled}
	}
	card := func(carrier string, divisor int) RateCard {
		return RateCard{Carrier: carrier, Origin: "FRA", Destination: "JFK", Currency: "EUR", Breaks: []RateBreak{{0, 2}},
			ValidFrom: "2026-01-01", ValidTo: "2026-12-31", VolumeDivisor: divisor}
	}
	dims := []DimensionLine{{L: 100, W: 100, H: 100, Pieces: 1}}
	q := Quote{ID: "q1", OrganizationID: "f1", Origin: "FRA", Destination: "JFK", Pieces: 1, WeightKg: 100, VolumeM3: 1, Dimensions: dims,
		ChargeableWeightKg: ChargeableWeight(100, dims, DefaultVolumeDivisor)}
	// LH's card was set before cards had a divisor: the standard.
	options, err := PriceQuote(q, nil, []Flight{flight("LH"), flight("EK")}, []RateCard{card("LH", 0), card("EK", 5000)}, now)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range options {
		got = append(got, fmt.Sprintf("%s %g kg at %d: %g EUR, %g a kg", o.Carrier, o.ChargeableWeightKg, o.VolumeDivisor, o.TotalAmount, o.PricePerKg))
	}
	want := []string{"LH 167 kg at 6000: 334 EUR, 2 a kg", "EK 200 kg at 5000: 400 EUR, 2 a kg"}
	if !slices.Equal(got, want) {
		t.Fatalf("options %q, want %q", got, want)
	}
	q.Status, q.Options, q.PricedAt = QuoteStatusPriced, options, now
	tests := []struct {
		name   string
		flight string
		states *float64 // the chargeable weight the booking states
		want   string   // the weight booked, or the problem
	}{
		{"booked on the standard card", "LH400-2026-11-28", nil, "167"},
		{"booked on the express card", "EK400-2026-11-28", nil, "200"},
		{"stating the express card's weight", "EK400-2026-11-28", new(200.0), "200"},
		{"stating the standard weight on the express card", "EK400-2026-11-28", new(167.0),
			"validation_error: chargeableWeightKg: is 167 kg but the service computes 200 kg (the larger of gross weight and volume weight at 5000 cm³/kg, the carrier's, rounded up to 0.5 kg)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events, err := DecideRequestBooking(Booking{}, q, openFlight(tt.flight), RequestBooking{BookingID: "b1", QuoteID: "q1", FlightID: tt.flight, OrganizationID: "f1",
				ChargeableWeightKg: tt.states, At: now})
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				got = fmt.Sprint(events[0].(BookingRequested).ChargeableWeightKg)
			}
			if got != tt.want {
				t.Errorf("booking = %s, want %s", got, tt.want)
			}
		})
	}
}

// BenchmarkPriceQuote prices a quote on a route with two flights a day for
// 90 days, as the pricing reactor does for every RFQ.
func BenchmarkPriceQuote(b *testing.B) {
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	var flights []Flight
	for d := range 90 {
		for _, hour := range []int{10, 18} {
			departs := now.Truncate(24*time.Hour).AddDate(0, 0, d).Add(time.Duration(hour) * time.Hour)
			day := departs.Format(time.DateOnly)
			flights = append(flights, Flight{ID: fmt.Sprintf("LH%d-%s", 400+hour, day), Carrier: "LH", FlightNumber: fmt.Sprintf("LH%d", 400+hour),
				Origin: "FRA", Destination: "JFK", DepartureDate: day, OriginZone: "Europe/Berlin", DepartsAt: departs,
				CapacityKg: 10000, CapacityM3: 50, Status: FlightStatusScheduled})
		}
	}
	cards := []RateCard{{Carrier: "LH", Origin: "FRA", Destination: "JFK", Currency: "EUR", MinimumCharge: 75,
		Breaks: []RateBreak{{0, 2.5}, {100, 2.1}}, ValidFrom: "2026-01-01", ValidTo: "2027-12-31"}}
	q := Quote{Origin: "FRA", Destination: "JFK", WeightKg: 350.5, ChargeableWeightKg: 350.5}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := PriceQuote(q, nil, flights, cards, now); err != nil {
			b.Fatal(err)
		}
	}
}

// builtinCommodities looks commodity codes up in the built-in reference
// data, as a fresh store has it.
type builtinCommodities struct{ Lookup }

// acetaldehyde is UN1089 as the US DOT table has it: cargo aircraft only.
var acetaldehyde = KnownCommodity{Code: "UN1089", Name: "Acetaldehyde", DangerousGoods: true, UNNumber: "UN1089",
	HazardClass: "3", PackingGroup: "I", PassengerAircraftForbidden: true}

func (builtinCommodities) Commodity(code string) (KnownCommodity, bool) {
	known := append(BuiltinCommodities(), acetaldehyde)
	i := slices.IndexFunc(known, func(c KnownCommodity) bool { return c.Code == code })
	if i < 0 {
		return KnownCommodity{}, false
	}
	return known[i], true
}

func (builtinCommodities) DangerousGood(unNumber string) (KnownCommodity, bool) {
	if unNumber == acetaldehyde.UNNumber {
		return acetaldehyde, true
	}
	return KnownCommodity{}, false
}

// Goods for cargo aircraft only are forbidden on passenger aircraft: a
// quote of them is priced on freighters alone (known by ICAO designator or
// IATA code), and on an aircraft type the service does not know, whose
// airline judges. They are those marked CAO,
// and those of a commodity whose reference entry is lithium batteries on
// their own (RLI: UN3480, RLM: UN3090) or dangerous goods the loaded table
// allows on cargo aircraft only (UN1089) whatever the codes say, as the
// manifest refuses them on a passenger aircraft from their e-DGD.
func TestCargoForCargoAircraftOnlyIsPricedOnFreightersAlone(t *testing.T) {
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	flight := func(number, aircraft string) Flight {
		return Flight{ID: number + "-2026-11-28", Carrier: "LH", FlightNumber: number, Origin: "FRA", Destination: "ORD",
			DepartureDate: "2026-11-28", OriginZone: "Europe/Berlin", DepartsAt: now.Add(24 * time.Hour), AircraftType: aircraft,
			CapacityKg: 10000, CapacityM3: 50, Status: FlightStatusScheduled}
	}
	card := RateCard{Carrier: "LH", Origin: "FRA", Destination: "ORD", Currency: "EUR", Breaks: []RateBreak{{0, 2}},
		ValidFrom: "2026-01-01", ValidTo: "2026-12-31"}
	flights := []Flight{flight("LH430", "B77F"), flight("LH432", "A359"), flight("LH434", "B748"), flight("LH436", "XYZ1"),
		flight("LH438", "74N"), flight("LH440", "74H")}
	tests := []struct {
		name      string
		commodity string
		shc       []string
		flights   []Flight
		want      string // the flights offered, or the refusal's reason
	}{
		{"general cargo flies on all", "", nil, flights, "LH430 LH432 LH434 LH436 LH438 LH440"},
		{"a general cargo commodity flies on all", "GEN", nil, flights, "LH430 LH432 LH434 LH436 LH438 LH440"},
		{"lithium ion batteries in equipment fly on all", "", []string{"ELI"}, flights, "LH430 LH432 LH434 LH436 LH438 LH440"},
		{"cargo aircraft only flies on the freighters and the unknown type", "", []string{"DGR", "RLI", "CAO"}, flights, "LH430 LH436 LH438"},
		{"lithium ion batteries on their own fly on the freighters and the unknown type", "RLI", nil, flights, "LH430 LH436 LH438"},
		{"lithium metal batteries on their own fly on the freighters and the unknown type", "RLM", []string{"DGR"}, flights, "LH430 LH436 LH438"},
		{"lithium ion batteries on their own on a freighter", "RLI", nil, flights[:1], "LH430"},
		{"lithium ion batteries on their own on a passenger aircraft", "RLI", nil, flights[1:2], ReasonCommodityNotAccepted},
		{"general cargo on a passenger aircraft", "GEN", nil, flights[1:2], "LH432"},
		{"CAO on passenger aircraft alone", "", []string{"CAO"}, flights[1:3], ReasonCommodityNotAccepted},
		{"CAO on a passenger aircraft published by its IATA code", "", []string{"CAO"}, flights[5:], ReasonCommodityNotAccepted},
		{"dangerous goods the reference data allows on cargo aircraft only fly on the freighters and the unknown type", "UN1089", []string{"DGR"}, flights, "LH430 LH436 LH438"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := Quote{Origin: "FRA", Destination: "ORD", WeightKg: 100, ChargeableWeightKg: 100, SHC: tt.shc,
				Commodity: Commodity{Code: tt.commodity}}
			if got := offered(q, tt.flights, card, now); got != tt.want {
				t.Errorf("offered %s, want %s", got, tt.want)
			}
		})
	}
}

// offered prices q on flights from card: the flight numbers offered, or
// the refusal's reason.
func offered(q Quote, flights []Flight, card RateCard, now time.Time) string {
	options, err := PriceQuote(q, builtinCommodities{}, flights, []RateCard{card}, now)
	if err != nil {
		return ReasonOf(err)
	}
	var got []string
	for _, o := range options {
		got = append(got, o.FlightNumber)
	}
	return strings.Join(got, " ")
}

// A card charges its surcharges, and refuses its notAccepted codes, for the
// RFQ's handling codes, its commodity's code (the reference commodities go
// by IATA's codes: RLI, AVI, PER) and DGR for a commodity of dangerous
// goods, each once: an RFQ of lithium batteries that names them by its
// commodity alone is not priced on the flights of an airline that does
// not carry them, and pays the DGR surcharge of one that does.
func TestACardChargesAndRefusesTheCodesOfTheCommodityAsOfTheHandlingCodes(t *testing.T) {
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	flight := Flight{ID: "EK9902-2026-11-28", Carrier: "EK", FlightNumber: "EK9902", Origin: "FRA", Destination: "DXB",
		DepartureDate: "2026-11-28", OriginZone: "Europe/Berlin", DepartsAt: now.Add(24 * time.Hour), AircraftType: "B77F",
		CapacityKg: 10000, CapacityM3: 50, Status: FlightStatusScheduled}
	refusing := RateCard{Carrier: "EK", Origin: "FRA", Destination: "DXB", Currency: "USD", Breaks: []RateBreak{{0, 3}},
		Surcharges: map[string]float64{"DGR": 0.6, "PER": 0.25}, NotAccepted: []string{"AVI", "RLI"}, ValidFrom: "2026-01-01", ValidTo: "2026-12-31"}
	carrying := refusing
	carrying.NotAccepted = nil
	refusingDGR := refusing
	refusingDGR.NotAccepted = []string{"DGR"}
	tests := []struct {
		name      string
		commodity string
		shc       []string
		card      RateCard
		want      string // the total offered, or the refusal's reason
	}{
		{"general cargo", "GEN", nil, refusing, "300"},
		{"no commodity", "", nil, refusing, "300"},
		{"lithium batteries by their handling code", "", []string{"RLI"}, refusing, ReasonCommodityNotAccepted},
		{"lithium batteries by their commodity", "RLI", nil, refusing, ReasonCommodityNotAccepted},
		{"live animals by their commodity", "AVI", nil, refusing, ReasonCommodityNotAccepted},
		{"lithium batteries in equipment, not refused, pay the DGR surcharge", "ELI", nil, refusing, "360"},
		{"a handling code pays its surcharge", "GEN", []string{"PER"}, carrying, "325"},
		{"a commodity pays the surcharge of its code", "PER", nil, carrying, "325"},
		{"a commodity named as a handling code too pays it once", "PER", []string{"PER"}, carrying, "325"},
		{"a commodity of dangerous goods pays the DGR surcharge", "RLI", nil, carrying, "360"},
		{"dangerous goods named DGR too pay it once", "RLI", []string{"DGR"}, carrying, "360"},
		{"an entry of the dangerous goods table pays it", "UN1089", nil, carrying, "360"},
		{"a card refusing DGR refuses a commodity of dangerous goods", "RLI", nil, refusingDGR, ReasonCommodityNotAccepted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := Quote{Origin: "FRA", Destination: "DXB", WeightKg: 100, ChargeableWeightKg: 100, SHC: tt.shc,
				Commodity: Commodity{Code: tt.commodity}}
			options, err := PriceQuote(q, builtinCommodities{}, []Flight{flight}, []RateCard{tt.card}, now)
			got := ReasonOf(err)
			if err == nil {
				got = fmt.Sprint(options[0].TotalAmount)
			}
			if got != tt.want {
				t.Errorf("priced %s, want %s", got, tt.want)
			}
		})
	}
}

// A flight delayed past its scheduled departure is priced until the
// departure its delay estimates, as it takes bookings till then; without
// an estimate it is priced no more once its scheduled time has come.
func TestADelayedFlightIsPricedUntilItsEstimatedDeparture(t *testing.T) {
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	flight := Flight{ID: "LH400-2026-11-27", Carrier: "LH", FlightNumber: "LH400", Origin: "FRA", Destination: "JFK",
		DepartureDate: "2026-11-27", OriginZone: "Europe/Berlin", DepartsAt: now.Add(-time.Hour), CapacityKg: 10000, CapacityM3: 50,
		Status: FlightStatusDelayed}
	card := RateCard{Carrier: "LH", Origin: "FRA", Destination: "JFK", Currency: "EUR", Breaks: []RateBreak{{0, 2}},
		ValidFrom: "2026-01-01", ValidTo: "2026-12-31"}
	q := Quote{ID: "q1", OrganizationID: "f1", Origin: "FRA", Destination: "JFK", Pieces: 1, WeightKg: 100, ChargeableWeightKg: 100}
	for _, tt := range []struct {
		name      string
		estimated time.Time
		priced    bool
	}{
		{"estimated to depart in two hours", now.Add(2 * time.Hour), true},
		{"estimated to have departed a minute ago", now.Add(-time.Minute), false},
		{"without an estimate", time.Time{}, false},
	} {
		f := flight
		f.EstimatedDepartsAt = tt.estimated
		options, err := PriceQuote(q, nil, []Flight{f}, []RateCard{card}, now)
		if priced := err == nil && len(options) == 1; priced != tt.priced {
			t.Errorf("a flight delayed an hour past its schedule, %s: options %v (%v), want priced %v", tt.name, options, err, tt.priced)
		}
	}
}

// A flight's day is the one it leaves on at its origin: a flight of
// 23:00 delayed past midnight takes cargo delivered to the airline the
// next day, and one on the pricing window's last day delayed past
// midnight leaves after the window.
func TestADelayedFlightIsPricedOnTheDayItsDelayEstimates(t *testing.T) {
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	card := RateCard{Carrier: "LH", Origin: "FRA", Destination: "JFK", Currency: "EUR", Breaks: []RateBreak{{0, 2}},
		ValidFrom: "2026-01-01", ValidTo: "2026-12-31"}
	for _, tt := range []struct {
		name      string
		scheduled string        // the day of the flight's 23:00 departure in Frankfurt
		delivered string        // deliveryToAirlineDate
		delay     time.Duration // estimated, 0 for none
		priced    bool
	}{
		{"on time, for cargo delivered that day", "2026-11-27", "2026-11-27", 0, true},
		{"on time, for cargo delivered the next day", "2026-11-27", "2026-11-28", 0, false},
		{"delayed past midnight, for cargo delivered the next day", "2026-11-27", "2026-11-28", 4 * time.Hour, true},
		{"delayed within the day, for cargo delivered the next day", "2026-11-27", "2026-11-28", 30 * time.Minute, false},
		{"delayed past midnight, for cargo delivered that day", "2026-11-27", "2026-11-27", 4 * time.Hour, true},
		{"on the window's last day, on time", "2026-12-04", "", 0, true},
		{"on the window's last day, delayed past midnight", "2026-12-04", "", 4 * time.Hour, false},
	} {
		day, _ := time.Parse(time.DateOnly, tt.scheduled)
		departs := day.Add(22 * time.Hour) // 23:00 in Frankfurt, in winter
		f := Flight{ID: "LH400-" + tt.scheduled, Carrier: "LH", FlightNumber: "LH400", Origin: "FRA", Destination: "JFK",
			DepartureDate: tt.scheduled, OriginZone: "Europe/Berlin", DepartsAt: departs, CapacityKg: 10000, CapacityM3: 50,
			Status: FlightStatusScheduled}
		if tt.delay > 0 {
			f.Status, f.EstimatedDepartsAt = FlightStatusDelayed, departs.Add(tt.delay)
		}
		q := Quote{ID: "q1", OrganizationID: "f1", Origin: "FRA", Destination: "JFK", Pieces: 1, WeightKg: 100, ChargeableWeightKg: 100,
			DeliveryToAirlineDate: tt.delivered}
		options, err := PriceQuote(q, nil, []Flight{f}, []RateCard{card}, now)
		if priced := err == nil && len(options) == 1; priced != tt.priced {
			t.Errorf("the 23:00 flight %s: options %v (%v), want priced %v", tt.name, options, err, tt.priced)
		}
	}
}
