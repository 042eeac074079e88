package views

import (
	"strconv"

	"github.com/cargostream/cargostream/domain"
)

// RateCardTermsJSON is what an airline's card sets for its route; an
// airline sends the same when it sets a card.
type RateCardTermsJSON struct {
	Currency      string             `json:"currency"`
	MinimumCharge float64            `json:"minimumCharge"`
	WeightBreaks  map[string]float64 `json:"weightBreaks"`
	Surcharges    map[string]float64 `json:"surcharges"`
	NotAccepted   []string           `json:"notAccepted"`
	ValidFrom     string             `json:"validFrom"`
	ValidTo       string             `json:"validTo"`
}

// RateCardJSON is an airline's card with its route.
type RateCardJSON struct {
	RateCardTermsJSON
	VolumeDivisor int    `json:"volumeDivisor"` // cm³ per kg
	Carrier       string `json:"carrier"`
	Origin        string `json:"origin"`
	Destination   string `json:"destination"`
}

// ToRateCardJSON names the weight breaks as the airline set them: "N"
// for the normal rate, the kilograms from which a break applies for the
// others.
func ToRateCardJSON(c domain.RateCard) RateCardJSON {
	out := RateCardJSON{Carrier: c.Carrier, Origin: c.Origin, Destination: c.Destination, VolumeDivisor: c.Divisor(),
		RateCardTermsJSON: RateCardTermsJSON{Currency: c.Currency, MinimumCharge: c.MinimumCharge, WeightBreaks: map[string]float64{},
			Surcharges: c.Surcharges, NotAccepted: c.NotAccepted, ValidFrom: c.ValidFrom, ValidTo: c.ValidTo}}
	for _, b := range c.Breaks {
		name := "N"
		if b.FromKg > 0 {
			name = strconv.FormatUint(uint64(b.FromKg), 10)
		}
		out.WeightBreaks[name] = b.PerKg
	}
	if out.Surcharges == nil {
		out.Surcharges = map[string]float64{}
	}
	if out.NotAccepted == nil {
		out.NotAccepted = []string{}
	}
	return out
}
