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

// Entries of one second are in the order they were recorded: a status
// posted at a whole second (as FSUs are) after its flight's ARR, dated to
// the nanosecond within that second, is the shipment's latest status, and
// an earlier second still comes first.
func TestStatusesOfOneSecondAreInTheOrderRecorded(t *testing.T) {
	arrived := time.Date(2026, 12, 1, 1, 27, 4, 184_000_000, time.UTC)
	const awb = "020-22222220"
	model := NewShipments()
	for i, st := range []domain.ShipmentStatusRecorded{
		{AWBNumber: awb, StatusEventID: "arr", StatusCode: "ARR", EventDate: arrived},
		{AWBNumber: awb, StatusEventID: "nfd", StatusCode: "NFD", EventDate: arrived.Truncate(time.Second)},
		{AWBNumber: awb, StatusEventID: "dlv", StatusCode: "DLV", EventDate: arrived.Truncate(time.Second)},
		{AWBNumber: awb, StatusEventID: "rcf", StatusCode: "RCF", EventDate: arrived.Add(-time.Second)},
	} {
		model.Apply(domain.Record{Sequence: uint64(i + 1)}, st)
	}
	var order []string
	for _, entry := range model.Timeline(awb) {
		order = append(order, entry.Event.StatusCode)
	}
	if got := strings.Join(order, " "); got != "RCF ARR NFD DLV" {
		t.Errorf("the timeline is %s, want RCF ARR NFD DLV", got)
	}
}
