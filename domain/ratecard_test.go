package domain

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRateCardVisibleTo(t *testing.T) {
	card := RateCard{Carrier: "LH", Origin: "FRA", Destination: "JFK"}
	tests := []struct {
		name string
		p    Principal
		want bool
	}{
		{"the airline sees its own card", Principal{OrganizationID: "lh", Role: RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}, true},
		{"another airline does not see it", Principal{OrganizationID: "ek", Role: RoleAirline, AirlineCode: "EK", AWBPrefix: "176"}, false},
		{"an admin sees every card", Principal{OrganizationID: "ops", Role: RoleAdmin}, true},
		{"a forwarder sees prices on quotes, not cards", Principal{OrganizationID: "f1", Role: RoleForwarder}, false},
	}
	for _, tt := range tests {
		if got := card.VisibleTo(tt.p); got != tt.want {
			t.Errorf("%s: visible = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A card's volume divisor is the standard unless it sets one, and one far
// from any airline's is refused.
func TestARateCardsVolumeDivisor(t *testing.T) {
	tests := []struct {
		name    string
		divisor *int
		want    string // the divisor recorded, or the problem
	}{
		{"none set", nil, "6000"},
		{"an express product's", new(5000), "5000"},
		{"the least", new(1000), "1000"},
		{"the most", new(10000), "10000"},
		{"nothing", new(0), "validation_error: volumeDivisor: must be from 1000 to 10000 cm³ per kg (the IATA standard is 6000)"},
		{"below the least", new(999), "validation_error: volumeDivisor: must be from 1000 to 10000 cm³ per kg (the IATA standard is 6000)"},
		{"above the most", new(10001), "validation_error: volumeDivisor: must be from 1000 to 10000 cm³ per kg (the IATA standard is 6000)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events, err := DecideSetRateCard(SetRateCard{Carrier: "LH", Origin: "FRA", Destination: "JFK", Currency: "EUR",
				WeightBreaks: map[string]float64{"N": 4.5}, ValidFrom: "2026-01-01", ValidTo: "2026-12-31", VolumeDivisor: tt.divisor,
				At: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)}, nil)
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				got = strconv.Itoa(events[0].(RateCardSet).Divisor())
			}
			if got != tt.want {
				t.Errorf("divisor %s, want %s", got, tt.want)
			}
		})
	}
}

func TestDecideSetRateCard(t *testing.T) {
	base := func() SetRateCard {
		return SetRateCard{Carrier: "LH", Origin: "fra", Destination: "JFK", Currency: "eur", MinimumCharge: 75,
			WeightBreaks: map[string]float64{"N": 4.5, "45": 3.8, "100": 3.2}, Surcharges: map[string]float64{"dgr": 0.6},
			ValidFrom: "2026-01-01", ValidTo: "2026-12-31", At: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)}
	}
	tests := []struct {
		name   string
		change func(c *SetRateCard)
		want   string // the first problem's code and field, or "" when accepted
	}{
		{"complete", func(*SetRateCard) {}, ""},
		{"any destination", func(c *SetRateCard) { c.Destination = "*" }, ""},
		{"valid to today", func(c *SetRateCard) { c.ValidTo = "2026-11-26" }, ""},
		{"valid to yesterday in UTC, today west of Greenwich", func(c *SetRateCard) {
			c.ValidTo, c.At = "2026-11-26", time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC) // 17:00 on the 26th at LAX
		}, ""},
		{"valid to two days ago in UTC", func(c *SetRateCard) {
			c.ValidTo, c.At = "2026-11-25", time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)
		}, "INVALID_DATE validTo"},
		{"a flat rate over the breaks", func(c *SetRateCard) { c.WeightBreaks = map[string]float64{"N": 3, "45": 3, "100": 3} }, ""},
		{"no normal rate", func(c *SetRateCard) { delete(c.WeightBreaks, "N") }, "REQUIRED weightBreaks.N"},
		{"a break of no standard weight", func(c *SetRateCard) { c.WeightBreaks["50"] = 3 }, "INVALID_VALUE weightBreaks.50"},
		{"a rate rising with weight", func(c *SetRateCard) { c.WeightBreaks["100"] = 50 }, "INVALID_RANGE weightBreaks.100"},
		{"a rate of nothing", func(c *SetRateCard) { c.WeightBreaks["45"] = 0 }, "INVALID_RANGE weightBreaks.45"},
		{"a surcharge twice, in two cases", func(c *SetRateCard) { c.Surcharges["DGR"] = 500 }, "DUPLICATE surcharges.dgr"},
		{"a surcharge of no handling code", func(c *SetRateCard) { c.Surcharges["DANGER"] = 1 }, "INVALID_FORMAT surcharges.DANGER"},
		{"a currency of no country", func(c *SetRateCard) { c.Currency = "ZZZ" }, "INVALID_VALUE currency"},
		{"a currency of four letters", func(c *SetRateCard) { c.Currency = "EURO" }, "INVALID_FORMAT currency"},
		{"to where it starts", func(c *SetRateCard) { c.Destination = "FRA" }, "INVALID_VALUE destination"},
		{"from any airport", func(c *SetRateCard) { c.Origin = "*" }, ""},
		{"from an airport the reference data does not know", func(c *SetRateCard) { c.Origin = "xxx" }, "UNKNOWN_AIRPORT origin"},
		{"to an airport the reference data does not know", func(c *SetRateCard) { c.Destination = "XXX" }, "UNKNOWN_AIRPORT destination"},
		{"to an airport of no airport's shape", func(c *SetRateCard) { c.Destination = "JF" }, "INVALID_FORMAT destination"},
		{"valid until last year", func(c *SetRateCard) { c.ValidFrom, c.ValidTo = "2025-01-01", "2025-12-31" }, "INVALID_DATE validTo"},
		{"valid to before from", func(c *SetRateCard) { c.ValidFrom = "2027-01-01" }, "INVALID_DATE validTo"},
		{"a negative minimum", func(c *SetRateCard) { c.MinimumCharge = -1 }, "INVALID_RANGE minimumCharge"},
		{"a code not accepted", func(c *SetRateCard) { c.NotAccepted = []string{"avi"} }, ""},
		{"a code surcharged and not accepted", func(c *SetRateCard) { c.NotAccepted = []string{"AVI", " dgr "} }, "MISMATCH notAccepted[1]"},
	}
	for _, tt := range tests {
		c := base()
		tt.change(&c)
		events, err := DecideSetRateCard(c, zonedAirports{})
		if got := problemOf(err); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
			continue
		}
		if err == nil {
			if card := events[0].(RateCardSet).RateCard; card.Currency != "EUR" || card.Surcharges["DGR"] != 0.6 || card.Breaks[0].FromKg != 0 {
				t.Errorf("%s: recorded %+v", tt.name, card)
			}
		}
	}
}

// Without reference data to consult, a rate card's airports are checked
// for their shape only, as an RFQ's and a flight's are.
func TestARateCardsAirportsAreCheckedForTheirShapeOnlyWithoutReferenceData(t *testing.T) {
	tests := []struct {
		name, origin, destination string
		want                      string // the first problem's code and field, or "" when accepted
	}{
		{"an airport no reference data knows", "XXX", "JFK", ""},
		{"an airport of no airport's shape", "FRA", "J1K", "INVALID_FORMAT destination"},
	}
	for _, tt := range tests {
		_, err := DecideSetRateCard(SetRateCard{Carrier: "LH", Origin: tt.origin, Destination: tt.destination, Currency: "EUR",
			WeightBreaks: map[string]float64{"N": 4.5}, ValidFrom: "2026-01-01", ValidTo: "2026-12-31",
			At: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)}, nil)
		if got := problemOf(err); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// A rate card's amounts are bounded to catch a decimal point in the wrong
// place, at 1,000 a kg and a minimum charge of a million in euros, and as
// many times more as a currency's unit is worth less: an ordinary card in
// won or rupiah is taken, one in euros at won's numbers is not.
func TestARateCardsBoundsGrowAsItsCurrencysUnitIsWorthLess(t *testing.T) {
	tests := []struct {
		currency      string
		rate, minimum float64
		want          string // the problem, or "" when accepted
	}{
		{"EUR", 4.5, 75, ""},
		{"EUR", 999.99, 999999, ""},
		{"EUR", 1000, 75, "validation_error: weightBreaks.N: must be more than 0 and less than 1000 per kg in EUR"},
		{"EUR", 4.5, 1e6, "validation_error: minimumCharge: must be at least 0 and less than 1000000 in EUR"},
		{"KWD", 1.4, 25, ""},
		{"INR", 1200, 9000, ""},
		{"JPY", 850, 12000, ""},
		{"JPY", 100000, 12000, "validation_error: weightBreaks.N: must be more than 0 and less than 100000 per kg in JPY"},
		{"KRW", 4500, 100000, ""},
		{"KRW", 4500000, 100000, "validation_error: weightBreaks.N: must be more than 0 and less than 1000000 per kg in KRW"},
		{"IDR", 52000, 1500000, ""},
		{"VND", 120000, 2500000, ""},
		{"VND", 120000, 1e10, "validation_error: minimumCharge: must be at least 0 and less than 10000000000 in VND"},
		{"KWR", 4500, 100000, "validation_error: currency: KWR is not an ISO 4217 currency"},
		{"", -1, -1, "validation_error: currency: must be an ISO 4217 code such as EUR; minimumCharge: must be at least 0; weightBreaks.N: must be more than 0; surcharges.DGR: must be at least 0"},
	}
	for _, tt := range tests {
		t.Run(tt.currency, func(t *testing.T) {
			c := SetRateCard{Carrier: "LH", Origin: "FRA", Destination: "JFK", Currency: tt.currency, MinimumCharge: tt.minimum,
				WeightBreaks: map[string]float64{"N": tt.rate}, Surcharges: map[string]float64{"DGR": tt.rate / 10},
				ValidFrom: "2026-01-01", ValidTo: "2026-12-31", At: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)}
			_, err := DecideSetRateCard(c, zonedAirports{})
			if got := everyProblem(err); got != tt.want {
				t.Errorf("%v %s a kg, at least %v: %q, want %q", tt.rate, tt.currency, tt.minimum, got, tt.want)
			}
		})
	}
}

// everyProblem is an error as errText says it, with the problem of each
// of its fields, where errText says the first.
func everyProblem(err error) string {
	e, ok := err.(*Error)
	if !ok || len(e.Fields) == 0 {
		return errText(err)
	}
	problems := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		problems[i] = f.Field + ": " + f.Message
	}
	return string(e.Code) + ": " + strings.Join(problems, "; ")
}
