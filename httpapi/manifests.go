package httpapi

import (
	"context"
	"net/http"
	"strconv"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/views"
)

type manifestRequest struct {
	FlightID    string   `json:"flightId"`
	AWBNumbers  []string `json:"awbNumbers"`
	TotalPieces *int     `json:"totalPieces"`
	TotalWeight *float64 `json:"totalWeight"`
	TotalVolume *float64 `json:"totalVolume"`
}

// handleSubmitManifest files the airline's manifest of one of its flights.
func (s *Server) handleSubmitManifest() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req manifestRequest
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		id := flightIDOf(r)
		// The AWBs are looked up in the read models: a booking, an MAWB
		// or an e-DGD (cargo aircraft only) stored through another
		// replica a moment ago must count. The command looks again if a
		// shipment changes meanwhile.
		check := func(context.Context) (domain.SubmitManifest, error) {
			if err := s.caughtUp(r, "what is known of the AWBs; the manifest was not filed"); err != nil {
				return domain.SubmitManifest{}, err
			}
			flight, _ := s.flights.Get(id)
			// Whose flight it is, and how many AWBs, before any AWB is read.
			if err := flight.CheckCarrier(principal(r.Context()).AirlineCode); err != nil {
				return domain.SubmitManifest{}, err
			}
			var p domain.Problems
			if len(req.AWBNumbers) > domain.MaxManifestShipments {
				p.Add("awbNumbers", domain.CodeTooMany, "at most %d AWBs per manifest", domain.MaxManifestShipments)
				return domain.SubmitManifest{}, p.Err()
			}
			c := domain.SubmitManifest{FlightID: domain.CanonicalFlightID(req.FlightID), TotalPieces: req.TotalPieces, TotalWeight: req.TotalWeight, TotalVolume: req.TotalVolume}
			for i, n := range req.AWBNumbers {
				awb, err := domain.ParseAWB(n)
				if err != nil {
					p.Add("awbNumbers["+strconv.Itoa(i)+"]", domain.CodeInvalidAWBNumber, "%s", err.Error())
					continue
				}
				c.Shipments = append(c.Shipments, domain.NewManifestCandidate(flight, s.shipmentFacts.ForManifest(awb)))
			}
			return c, p.Err()
		}
		res, err := s.commands.SubmitManifest(r.Context(), meta(r), id, check)
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		w.Header().Set("Location", "/api/flights/"+id)
		writeJSON(w, http.StatusCreated, views.ToManifestJSON(res.Event.(domain.ManifestSubmitted)))
		return nil
	}
}

type offloadRequest struct {
	AWBNumber string   `json:"awbNumber"`
	FlightID  string   `json:"flightId"`
	Reason    string   `json:"reason"`
	Pieces    *int     `json:"pieces"`
	Weight    *float64 `json:"weight"`
	Notes     string   `json:"notes"`
}

// handleReportOffload records cargo the airline took off one of its
// flights.
func (s *Server) handleReportOffload() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req offloadRequest
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		awb, err := awbField("awbNumber", req.AWBNumber)
		if err != nil {
			return err
		}
		if req.FlightID == "" {
			var p domain.Problems
			p.Add("flightId", domain.CodeRequired, "is required")
			return p.Err()
		}
		res, err := s.commands.ReportOffload(r.Context(), meta(r), domain.CanonicalFlightID(req.FlightID), domain.ReportOffload{AWBNumber: awb, Reason: req.Reason,
			Pieces: req.Pieces, WeightKg: req.Weight, Notes: req.Notes})
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		w.Header().Set("Location", "/api/shipments/"+awb+"/events")
		writeJSON(w, http.StatusCreated, views.ToOffloadJSON(res.Event.(domain.OffloadReported)))
		return nil
	}
}
