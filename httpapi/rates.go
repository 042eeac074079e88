package httpapi

import (
	"net/http"
	"slices"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/views"
)

// rateCardRequest is an airline's card for the route in the path: the
// terms the API shows of it, and its volume divisor, if not the standard.
type rateCardRequest struct {
	views.RateCardTermsJSON
	VolumeDivisor *int `json:"volumeDivisor"`
}

// handleSetRateCard stores the calling airline's card for a route; "*"
// as origin or destination covers every airport.
func (s *Server) handleSetRateCard() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req rateCardRequest
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		res, err := s.commands.SetRateCard(r.Context(), meta(r), domain.SetRateCard{
			Origin: r.PathValue("origin"), Destination: r.PathValue("destination"), Currency: req.Currency, MinimumCharge: req.MinimumCharge,
			WeightBreaks: req.WeightBreaks, Surcharges: req.Surcharges, NotAccepted: req.NotAccepted,
			ValidFrom: req.ValidFrom, ValidTo: req.ValidTo, VolumeDivisor: req.VolumeDivisor,
		})
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		writeJSON(w, http.StatusOK, views.ToRateCardJSON(res.State))
		return nil
	}
}

// handleListRates lists the rate cards the caller sees (see
// domain.RateCard.VisibleTo).
func (s *Server) handleListRates() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p := principal(r.Context())
		cards := slices.DeleteFunc(s.rates.RateCards(nil), func(c domain.RateCard) bool { return !c.VisibleTo(p) })
		writeList(w, "rates", cards, views.ToRateCardJSON)
		return nil
	}
}
