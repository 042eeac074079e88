package projections

import (
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
)

// Cargo a revised manifest adds to a departed flight gets its MAN and the
// flight's DEP: the DEP is its latest status, while it is in the air, and
// says when the flight departed.
func TestCargoFoundOnBoardIsDepartedInItsTimeline(t *testing.T) {
	departed := time.Date(2026, 11, 26, 9, 5, 0, 0, time.UTC)
	const awb = "020-22222220"
	m := domain.ManifestSubmitted{ManifestID: "m2", FlightID: "LH400", Origin: "FRA", SubmittedAt: departed.Add(30 * time.Minute),
		Shipments: []domain.Load{{AWBNumber: awb, Pieces: 4, WeightKg: 90}}, FoundOnBoard: []string{awb}, DepartedAt: departed}
	model := NewShipments()
	for i, st := range domain.StatusesFrom(m, domain.Flight{}, "e1") {
		model.Apply(domain.Record{Sequence: uint64(i + 1)}, st)
	}
	var latest domain.ShipmentStatusRecorded
	for _, entry := range model.Timeline(awb) {
		if entry.IsStatus() {
			latest = entry.Event
		}
	}
	if latest.StatusCode != "DEP" || !strings.Contains(latest.Notes, "at 2026-11-26T09:05:00Z") {
		t.Errorf("the latest status is %s (%q), want the DEP saying when the flight departed", latest.StatusCode, latest.Notes)
	}
}
