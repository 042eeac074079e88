package httpapi

import (
	"net/http"

	"github.com/cargostream/cargostream/domain"
	"github.com/gorilla/mux"
)

// rateCardRequest is an airline's card for the route in the path.
type rateCardRequest struct {
	Currency      string             `json:"currency"`
	MinimumCharge float64            `json:"minimumCharge"`
	WeightBreaks  map[string]float64 `json:"weightBreaks"`
	Surcharges    map[string]float64 `json:"surcharges"`
	NotAccepted   []string           `json:"notAccepted"`
	ValidFrom     string             `json:"validFrom"`
	ValidTo       string             `json:"validTo"`
}

type rateCardJSON struct {
	rateCardRequest
	Carrier     string `json:"carrier"`
	Origin      string `json:"origin"`
	Destination string `json:"destination"`
}

func toRateCardJSON(c domain.RateCard) rateCardJSON {
	out := rateCardJSON{Carrier: c.Carrier, Origin: c.Origin, Destination: c.Destination,
		rateCardRequest: rateCardRequest{Currency: c.Currency, MinimumCharge: c.MinimumCharge, WeightBreaks: map[string]float64{},
			Surcharges: c.Surcharges, NotAccepted: c.NotAccepted, ValidFrom: c.ValidFrom, ValidTo: c.ValidTo}}
	for _, b := range c.Breaks {
		name := "N"
		if b.FromKg > 0 {
			name = uitoa(uint64(b.FromKg))
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

// handleSetRateCard stores the calling airline's card for a route; "*"
// as origin or destination covers every airport.
func (s *Server) handleSetRateCard() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req rateCardRequest
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		v := mux.Vars(r)
		res, err := s.commands.SetRateCard(r.Context(), meta(r), domain.SetRateCard{
			Origin: v["origin"], Destination: v["destination"], Currency: req.Currency, MinimumCharge: req.MinimumCharge,
			WeightBreaks: req.WeightBreaks, Surcharges: req.Surcharges, NotAccepted: req.NotAccepted,
			ValidFrom: req.ValidFrom, ValidTo: req.ValidTo,
		})
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		writeJSON(w, http.StatusOK, toRateCardJSON(res.State))
		return nil
	}
}

// handleListRates lists rate cards: an airline its own, admin all. Rates
// are the airlines' business; forwarders see prices on quotes.
func (s *Server) handleListRates() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var carriers []string
		if p := principal(r.Context()); p.Role == domain.RoleAirline {
			carriers = []string{p.AirlineCode}
		}
		writeList(w, "rates", s.rates.RateCards(carriers), toRateCardJSON)
		return nil
	}
}
