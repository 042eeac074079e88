package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/cargostream/cargostream/domain"
)

type manifestRequest struct {
	FlightID    string   `json:"flightId"`
	AWBNumbers  []string `json:"awbNumbers"`
	TotalPieces *int     `json:"totalPieces"`
	TotalWeight *float64 `json:"totalWeight"`
	TotalVolume *float64 `json:"totalVolume"`
}

// manifestJSON is the spec's manifest response, with the totals recorded
// and where they differ from the shipments' declarations.
type manifestJSON struct {
	ManifestID  string                      `json:"manifestId"`
	FlightID    string                      `json:"flightId"`
	Status      string                      `json:"status"`
	AWBNumbers  []string                    `json:"awbNumbers"`
	TotalPieces int                         `json:"totalPieces"`
	TotalWeight float64                     `json:"totalWeight"`
	TotalVolume float64                     `json:"totalVolume"`
	Differences []domain.ManifestDifference `json:"differences"`
	SubmittedAt time.Time                   `json:"submittedAt"`
}

func toManifestJSON(m domain.ManifestSubmitted) manifestJSON {
	out := manifestJSON{ManifestID: m.ManifestID, FlightID: m.FlightID, Status: "submitted", AWBNumbers: make([]string, len(m.Shipments)),
		TotalPieces: m.TotalPieces, TotalWeight: m.TotalWeightKg, TotalVolume: m.TotalVolumeM3, Differences: m.Differences, SubmittedAt: m.SubmittedAt}
	for i, s := range m.Shipments {
		out.AWBNumbers[i] = s.AWBNumber
	}
	if out.Differences == nil {
		out.Differences = []domain.ManifestDifference{}
	}
	return out
}

// handleSubmitManifest files the airline's manifest of one of its flights.
func (s *Server) handleSubmitManifest() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req manifestRequest
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
		id := flightIDOf(r)
		flight, _ := s.flights.Get(id)
		// Whose flight it is, and how many AWBs, before any AWB is read.
		if flight.Exists() && flight.Carrier != principal(r.Context()).AirlineCode {
			return domain.Errorf(domain.Forbidden, "flight %s is not one of yours", id)
		}
		var p domain.Problems
		if len(req.AWBNumbers) > domain.MaxManifestShipments {
			p.Add("awbNumbers", domain.CodeTooMany, "at most %d AWBs per manifest", domain.MaxManifestShipments)
			return p.Err()
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
		if err := p.Err(); err != nil {
			return err
		}
		res, err := s.commands.SubmitManifest(r.Context(), meta(r), id, c)
		if err != nil {
			return err
		}
		s.settle(w, r, res.Sequence)
		w.Header().Set("Location", "/api/flights/"+id)
		writeJSON(w, http.StatusCreated, toManifestJSON(res.Event.(domain.ManifestSubmitted)))
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

// offloadJSON is the spec's offload response, with what was recorded.
type offloadJSON struct {
	OffloadID  string    `json:"offloadId"`
	AWBNumber  string    `json:"awbNumber"`
	Status     string    `json:"status"`
	FlightID   string    `json:"flightId"`
	Reason     string    `json:"reason"`
	Pieces     int       `json:"pieces"`
	Weight     float64   `json:"weight"`
	Notes      string    `json:"notes"`
	ReportedAt time.Time `json:"reportedAt"`
}

func toOffloadJSON(o domain.OffloadReported) offloadJSON {
	return offloadJSON{OffloadID: o.OffloadID, AWBNumber: o.AWBNumber, Status: "reported", FlightID: o.FlightID, Reason: o.Reason,
		Pieces: o.Pieces, Weight: o.WeightKg, Notes: o.Notes, ReportedAt: o.ReportedAt}
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
		writeJSON(w, http.StatusCreated, toOffloadJSON(res.Event.(domain.OffloadReported)))
		return nil
	}
}

// renderFlightOperation is the webhook data of a manifest, for the
// flight's airline. Its shipments hear of it as MAN status events.
func (s *Server) renderFlightOperation(e domain.Event, p domain.Principal) (any, bool) {
	m, ok := e.(domain.ManifestSubmitted)
	if !ok {
		return nil, false
	}
	f, _ := s.flights.Get(m.FlightID)
	return toManifestJSON(m), f.ManifestsVisibleTo(p)
}
