package views

import (
	"cmp"
	"time"

	"github.com/cargostream/cargostream/domain"
)

// ManifestJSON is the spec's manifest response, with the totals recorded
// and where they differ from the shipments' declarations.
type ManifestJSON struct {
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

func ToManifestJSON(m domain.ManifestSubmitted) ManifestJSON {
	out := ManifestJSON{ManifestID: m.ManifestID, FlightID: m.FlightID, Status: "submitted", AWBNumbers: make([]string, len(m.Shipments)),
		TotalPieces: m.TotalPieces, TotalWeight: m.TotalWeightKg, TotalVolume: m.TotalVolumeM3, Differences: m.Differences, SubmittedAt: m.SubmittedAt}
	for i, s := range m.Shipments {
		out.AWBNumbers[i] = s.AWBNumber
	}
	if out.Differences == nil {
		out.Differences = []domain.ManifestDifference{}
	}
	return out
}

// OffloadJSON is the spec's offload response, with what was recorded:
// the weight taken off the flight, and the weight the report gave.
type OffloadJSON struct {
	OffloadID      string    `json:"offloadId"`
	AWBNumber      string    `json:"awbNumber"`
	Status         string    `json:"status"`
	FlightID       string    `json:"flightId"`
	Reason         string    `json:"reason"`
	Pieces         int       `json:"pieces"`
	Weight         float64   `json:"weight"`
	ReportedWeight float64   `json:"reportedWeight"`
	Notes          string    `json:"notes"`
	ReportedAt     time.Time `json:"reportedAt"`
}

func ToOffloadJSON(o domain.OffloadReported) OffloadJSON {
	return OffloadJSON{OffloadID: o.OffloadID, AWBNumber: o.AWBNumber, Status: "reported", FlightID: o.FlightID, Reason: o.Reason,
		Pieces: o.Pieces, Weight: o.WeightKg, ReportedWeight: cmp.Or(o.ReportedWeightKg, o.WeightKg), Notes: o.Notes, ReportedAt: o.ReportedAt}
}

// renderManifest is the webhook data of a manifest, for the flight's
// airline. Its shipments hear of it as MAN status events.
func (r *Renderer) renderManifest(e domain.Event, p domain.Principal) (any, bool) {
	m, ok := e.(domain.ManifestSubmitted)
	if !ok {
		return nil, false
	}
	f, _ := r.Flights.Get(m.FlightID)
	return ToManifestJSON(m), f.LoadVisibleTo(p)
}
