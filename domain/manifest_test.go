package domain

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDecideSubmitManifest(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	flight := Flight{ID: "LH8400-2026-11-26", Carrier: "LH", AWBPrefix: "020", FlightNumber: "LH8400", Origin: "FRA", Status: FlightStatusScheduled}
	num := func(v float64) *float64 { return &v }
	pieces := func(v int) *int { return &v }
	known := func(awb string, n int, kg, m3 float64) ManifestCandidate {
		return ManifestCandidate{Load: Load{AWBNumber: awb, Pieces: n, WeightKg: kg, VolumeM3: m3}, Known: true}
	}
	base := func() SubmitManifest {
		return SubmitManifest{ManifestID: "m1", Carrier: "LH", At: now,
			Shipments: []ManifestCandidate{known("020-00000011", 2, 100, 0.5), known("020-00000022", 3, 250.5, 1)}}
	}
	tests := []struct {
		name   string
		flight func(f *Flight)
		change func(c *SubmitManifest)
		want   string // the error's first field code and field, its code, or ""
		diffs  []ManifestDifference
	}{
		{"totals computed", nil, func(*SubmitManifest) {}, "", nil},
		{"totals agree", nil, func(c *SubmitManifest) { c.TotalPieces, c.TotalWeight, c.TotalVolume = pieces(5), num(350.5), num(1.5) }, "", nil},
		{"totals differ", nil, func(c *SubmitManifest) { c.TotalPieces, c.TotalWeight = pieces(6), num(362) }, "",
			[]ManifestDifference{{"totalPieces", 6, 5}, {"totalWeight", 362, 350.5}}},
		{"unknown AWB", nil, func(c *SubmitManifest) { c.Shipments[1].Known = false }, "AWB_NOT_ON_FLIGHT awbNumbers[1]", nil},
		{"AWB carried away", nil, func(c *SubmitManifest) {
			c.Shipments[1].Known, c.Shipments[1].LeftOn = false, Flight{ID: "LH8402-2026-11-25", Destination: "ORD"}
		}, "AWB_NOT_ON_FLIGHT awbNumbers[1]", nil},
		{"AWB on board another flight", nil, func(c *SubmitManifest) { c.Shipments[1].OnBoard = "LH8402-2026-11-26" }, "AWB_ON_OTHER_FLIGHT awbNumbers[1]", nil},
		{"AWB twice", nil, func(c *SubmitManifest) { c.Shipments[1] = c.Shipments[0] }, "DUPLICATE awbNumbers[1]", nil},
		{"empty", nil, func(c *SubmitManifest) { c.Shipments = nil }, "REQUIRED awbNumbers", nil},
		{"other flight in body", nil, func(c *SubmitManifest) { c.FlightID = "LH8401-2026-11-26" }, "MISMATCH flightId", nil},
		{"negative weight", nil, func(c *SubmitManifest) { c.TotalWeight = num(-1) }, "INVALID_RANGE totalWeight", nil},
		{"no pieces", nil, func(c *SubmitManifest) { c.TotalPieces = pieces(0) }, "INVALID_RANGE totalPieces", nil},
		{"weightless", nil, func(c *SubmitManifest) { c.TotalWeight = num(0) }, "INVALID_RANGE totalWeight", nil},
		{"volume unknown", nil, func(c *SubmitManifest) { c.TotalVolume = num(0) }, "", []ManifestDifference{{"totalVolume", 0, 1.5}}},
		{"volume out of range", nil, func(c *SubmitManifest) { c.TotalVolume = num(1e9) }, "INVALID_RANGE totalVolume", nil},
		{"too many AWBs", nil, func(c *SubmitManifest) {
			for i := range MaxManifestShipments {
				c.Shipments = append(c.Shipments, known(fmt.Sprintf("020-%08d", i), 1, 1, 0))
			}
		}, "TOO_MANY awbNumbers", nil},
		{"another airline's flight", nil, func(c *SubmitManifest) { c.Carrier = "AF" }, "forbidden", nil},
		{"batteries for cargo aircraft only on a passenger aircraft", func(f *Flight) { f.AircraftType = "A359" },
			func(c *SubmitManifest) { c.Shipments[1].CargoAircraftOnly = "UN3480" }, "CARGO_AIRCRAFT_ONLY awbNumbers[1]", nil},
		{"batteries for cargo aircraft only on a freighter", func(f *Flight) { f.AircraftType = "B77F" },
			func(c *SubmitManifest) { c.Shipments[1].CargoAircraftOnly = "UN3480" }, "", nil},
		{"batteries for cargo aircraft only on a type the service does not know", nil,
			func(c *SubmitManifest) { c.Shipments[1].CargoAircraftOnly = "UN3090" }, "", nil},
		{"cargo not secured, on a freighter", func(f *Flight) { f.AircraftType = "B77F" },
			func(c *SubmitManifest) { c.Shipments[1].SecurityStatus = "NSC" }, "NOT_SECURED awbNumbers[1]", nil},
		{"cargo secured for cargo aircraft only, on a passenger aircraft", func(f *Flight) { f.AircraftType = "A359" },
			func(c *SubmitManifest) { c.Shipments[1].SecurityStatus = "SCO" }, "CARGO_AIRCRAFT_ONLY awbNumbers[1]", nil},
		{"cargo secured for cargo aircraft only, on a freighter", func(f *Flight) { f.AircraftType = "B77F" },
			func(c *SubmitManifest) { c.Shipments[1].SecurityStatus = "SCO" }, "", nil},
		{"cargo secured as high risk, on a passenger aircraft", func(f *Flight) { f.AircraftType = "A359" },
			func(c *SubmitManifest) { c.Shipments[1].SecurityStatus = "SHR" }, "", nil},
		{"cancelled flight", func(f *Flight) { f.Status = FlightStatusCancelled }, func(*SubmitManifest) {}, "conflict", nil},
		{"no flight", func(f *Flight) { *f = Flight{} }, func(*SubmitManifest) {}, "not_found", nil},
	}
	for _, tt := range tests {
		f, c := flight, base()
		if tt.flight != nil {
			tt.flight(&f)
		}
		tt.change(&c)
		events, err := DecideSubmitManifest(f, c)
		if got := problemOf(err); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
			continue
		}
		if err == nil {
			m := events[0].(ManifestSubmitted)
			if !reflect.DeepEqual(m.Differences, tt.diffs) || len(m.Shipments) != 2 || m.Origin != "FRA" {
				t.Errorf("%s: recorded %+v", tt.name, m)
			}
		}
	}
}

// problemOf names an error for a table: its first field's code and field,
// its code and reason for a refusal, or its code.
func problemOf(err error) string {
	e, ok := err.(*Error)
	switch {
	case err == nil:
		return ""
	case !ok:
		return err.Error()
	case len(e.Fields) > 0:
		return string(e.Fields[0].Code) + " " + e.Fields[0].Field
	case e.Reason != "":
		return string(e.Code) + " " + e.Reason
	}
	return string(e.Code)
}

// outcomeOf names what a decision did for a table: its events, each as
// tell names it ("; " between them; one that is not an E by its type), ""
// for none, or its error as problemOf does.
func outcomeOf[E Event](events []Event, err error, tell func(E) string) string {
	if err != nil {
		return problemOf(err)
	}
	names := make([]string, len(events))
	for i, e := range events {
		names[i] = e.EventType()
		if e, ok := e.(E); ok {
			names[i] = tell(e)
		}
	}
	return strings.Join(names, "; ")
}

// given is the state an aggregate's history makes.
func given[S any](evolve func(S, Event) S, history ...Event) S {
	var s S
	for _, e := range history {
		s = evolve(s, e)
	}
	return s
}

func TestOffloadAgainstLoad(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	f := Flight{ID: "LH8400-2026-11-26", Carrier: "LH", FlightNumber: "LH8400", Origin: "FRA", Status: FlightStatusScheduled}
	f = EvolveFlight(f, ManifestSubmitted{FlightID: f.ID, Shipments: []Load{{"020-00000011", 4, 100, 2}}, TotalWeightKg: 120, TotalVolumeM3: 2})
	num := func(v float64) *float64 { return &v }
	pieces := func(v int) *int { return &v }
	offload := func(n int, kg float64) ReportOffload {
		return ReportOffload{AWBNumber: "020-00000011", Reason: "Space", Pieces: pieces(n), WeightKg: num(kg), Carrier: "LH", At: now}
	}
	events, err := DecideReportOffload(f, offload(1, 25))
	if err != nil {
		t.Fatal(err)
	}
	if o := events[0].(OffloadReported); o.VolumeM3 != 0.5 || o.Origin != "FRA" {
		t.Errorf("offload %+v", o)
	}
	f = EvolveFlight(f, events[0])
	if l := f.Loaded["020-00000011"]; l.Pieces != 3 || l.WeightKg != 75 || f.ActualKg != 95 || f.ActualM3 != 1.5 {
		t.Errorf("after offload: %+v, actual %g kg %g m³", l, f.ActualKg, f.ActualM3)
	}
	for _, tt := range []struct {
		name string
		c    ReportOffload
		want string
	}{
		{"more pieces than loaded", offload(4, 10), "EXCEEDS_LOADED pieces"},
		{"more weight than loaded", offload(1, 80), "EXCEEDS_LOADED weight"},
		{"no reason", func() ReportOffload { c := offload(1, 1); c.Reason = ""; return c }(), "REQUIRED reason"},
		{"not loaded", func() ReportOffload { c := offload(1, 1); c.AWBNumber = "020-00000022"; return c }(), "AWB_NOT_ON_FLIGHT awbNumber"},
		{"no pieces", func() ReportOffload { c := offload(1, 1); c.Pieces = nil; return c }(), "REQUIRED pieces"},
		{"no weight", func() ReportOffload { c := offload(1, 1); c.WeightKg = nil; return c }(), "REQUIRED weight"},
		{"weightless", offload(1, 0), "INVALID_RANGE weight"},
		{"no pieces at all", offload(0, 1), "INVALID_RANGE pieces"},
		{"reason too long", func() ReportOffload { c := offload(1, 1); c.Reason = strings.Repeat("x", 201); return c }(), "TOO_LONG reason"},
		{"notes too long", func() ReportOffload { c := offload(1, 1); c.Notes = strings.Repeat("x", 2001); return c }(), "TOO_LONG notes"},
		{"all the weight, not all pieces", offload(1, 75), "EXCEEDS_LOADED weight"},
		{"another airline", func() ReportOffload { c := offload(1, 1); c.Carrier = "AF"; return c }(), "forbidden"},
	} {
		if _, err := DecideReportOffload(f, tt.c); problemOf(err) != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, problemOf(err), tt.want)
		}
	}
	// The last pieces take what is left, whatever weight they report;
	// nothing on board, the flight carries nothing, though its manifest
	// weighed 20 kg more than the shipment.
	events, _ = DecideReportOffload(f, offload(3, 70))
	if f = EvolveFlight(f, events[0]); len(f.Loaded) != 0 || f.ActualKg != 0 || f.ActualM3 != 0 {
		t.Errorf("after the rest: %+v, %g kg %g m³", f.Loaded, f.ActualKg, f.ActualM3)
	}
	for _, status := range []string{FlightStatusDeparted, FlightStatusArrived} {
		f.Status = status
		if _, err := DecideReportOffload(f, offload(1, 1)); problemOf(err) != "conflict" {
			t.Errorf("offload from a %s flight = %v", status, err)
		}
	}
	if _, err := DecideSubmitManifest(f, SubmitManifest{Carrier: "LH"}); problemOf(err) != "conflict" {
		t.Errorf("manifest of an arrived flight = %v", err)
	}
}

// The last pieces of an AWB take off what is left of it on board, and
// the offload records that, so that the flight's actual weight, the
// offload and the shipment's DIS/OFLD agree; the weight reported, when
// it differs, is kept beside it.
func TestTheLastPiecesOffloadedRecordWhatIsLeftOfTheAWB(t *testing.T) {
	manifested := EvolveFlight(Flight{ID: "LH8400-2026-11-26", Carrier: "LH", Origin: "FRA", Status: FlightStatusScheduled},
		ManifestSubmitted{Shipments: []Load{{"020-00000011", 3, 600, 3}}, TotalWeightKg: 650, TotalVolumeM3: 3.5})
	offload := func(n int, kg float64) ReportOffload {
		return ReportOffload{AWBNumber: "020-00000011", Reason: "Space", Pieces: &n, WeightKg: &kg, Carrier: "LH"}
	}
	for _, tt := range []struct {
		name                       string
		before                     []ReportOffload
		last                       ReportOffload
		wantKg, wantM3, reportedKg float64
		actualKg                   float64
	}{
		{"all pieces reported lighter record all that was loaded", nil, offload(3, 100), 600, 3, 100, 0},
		{"all pieces at the weight loaded record it once", nil, offload(3, 600), 600, 3, 0, 0},
		{"the rest after a part records what the part left", []ReportOffload{offload(1, 150)}, offload(2, 400), 450, 2.25, 400, 0},
		{"a part records the weight reported", nil, offload(1, 150), 150, 0.75, 0, 500},
	} {
		f := manifested
		for _, c := range tt.before {
			events, err := DecideReportOffload(f, c)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			f = EvolveFlight(f, events[0])
		}
		events, err := DecideReportOffload(f, tt.last)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		o := events[0].(OffloadReported)
		if o.WeightKg != tt.wantKg || o.VolumeM3 != tt.wantM3 || o.ReportedWeightKg != tt.reportedKg {
			t.Errorf("%s: offload of %g kg %g m³ (reported %g kg), want %g kg %g m³ (reported %g kg)",
				tt.name, o.WeightKg, o.VolumeM3, o.ReportedWeightKg, tt.wantKg, tt.wantM3, tt.reportedKg)
		}
		if f = EvolveFlight(f, o); f.ActualKg != tt.actualKg || OffloadedStatus(o).Weight == nil || *OffloadedStatus(o).Weight != tt.wantKg {
			t.Errorf("%s: the flight carries %g kg after it, want %g kg; the shipment's status says %v kg", tt.name, f.ActualKg, tt.actualKg, *OffloadedStatus(o).Weight)
		}
	}
}

// A cancelled flight carries nothing: its actual load is 0, whatever its
// manifest said, while it still knows who was on board when it was
// cancelled, each of whom is offloaded.
func TestACancelledFlightCarriesNothingButKnowsWhoWasOnBoard(t *testing.T) {
	scheduled := Flight{ID: "LH8400-2026-11-26", Carrier: "LH", Origin: "FRA", Status: FlightStatusScheduled}
	manifested := EvolveFlight(scheduled, ManifestSubmitted{FlightID: scheduled.ID, Shipments: []Load{{"020-00000011", 4, 100, 2}},
		TotalWeightKg: 120, TotalVolumeM3: 2})
	for _, tt := range []struct {
		status         string
		wantKg, wantM3 float64
	}{
		{FlightStatusDelayed, 120, 2},
		{FlightStatusDeparted, 120, 2},
		{FlightStatusCancelled, 0, 0},
	} {
		f := EvolveFlight(manifested, FlightStatusChanged{FlightID: scheduled.ID, Status: tt.status})
		if f.ActualKg != tt.wantKg || f.ActualM3 != tt.wantM3 {
			t.Errorf("%s: actual %g kg %g m³, want %g kg %g m³", tt.status, f.ActualKg, f.ActualM3, tt.wantKg, tt.wantM3)
		}
		if st := FlightChangeStatuses(f, FlightStatusChanged{Status: tt.status}, "c1"); tt.status == FlightStatusCancelled &&
			(len(st) != 1 || st[0].XFSUCode() != "DIS_OFLD" || *st[0].Pieces != 4) {
			t.Errorf("%s: statuses of those on board = %+v, want the one shipment offloaded", tt.status, st)
		}
	}
}

// A revised manifest lists what the earlier one loaded and it leaves out.
func TestRevisedManifestDrops(t *testing.T) {
	f := Flight{ID: "LH8400-2026-11-26", Carrier: "LH", AWBPrefix: "020", Origin: "FRA", Status: FlightStatusScheduled}
	f = EvolveFlight(f, ManifestSubmitted{FlightID: f.ID, Shipments: []Load{{"020-00000011", 2, 100, 1}, {"020-00000022", 3, 200, 2}}})
	events, err := DecideSubmitManifest(f, SubmitManifest{ManifestID: "m2", Carrier: "LH",
		Shipments: []ManifestCandidate{{Load: Load{"020-00000011", 2, 100, 1}, Known: true}}})
	if err != nil {
		t.Fatal(err)
	}
	m := events[0].(ManifestSubmitted)
	if len(m.Dropped) != 1 || m.Dropped[0].AWBNumber != "020-00000022" || m.Dropped[0].Pieces != 3 {
		t.Errorf("dropped = %+v", m.Dropped)
	}
	if st := DroppedStatus(m, m.Dropped[0]); st.XFSUCode() != "DIS_OFLD" || st.Source != StatusFromManifest || *st.Pieces != 3 {
		t.Errorf("status of the dropped shipment = %+v", st)
	}
}

// A flight's load is the manifest's totals, as weighed, less what is
// offloaded; once every shipment is offloaded it is none, though the
// totals weighed more than the shipments declared.
func TestAFlightsLoadIsTheManifestsLessItsOffloads(t *testing.T) {
	a, b := Load{"020-00000011", 2, 100, 1}, Load{"020-00000022", 3, 200, 2}
	empty := Flight{ID: "LH8400-2026-11-26", Status: FlightStatusScheduled}
	// Weighed at 330 kg and 3.5 m³ where the shipments declared 300 and 3.
	loaded := EvolveFlight(empty, ManifestSubmitted{FlightID: empty.ID, Shipments: []Load{a, b}, TotalWeightKg: 330, TotalVolumeM3: 3.5})
	offload := func(l Load, pieces int, kg, m3 float64) OffloadReported {
		return OffloadReported{FlightID: empty.ID, AWBNumber: l.AWBNumber, Pieces: pieces, WeightKg: kg, VolumeM3: m3}
	}
	tests := []struct {
		name     string
		offloads []OffloadReported
		want     string // the flight's actual weight and volume
	}{
		{"as manifested", nil, "330 3.5"},
		{"one shipment offloaded", []OffloadReported{offload(b, 3, 200, 2)}, "130 1.5"},
		{"part of one offloaded", []OffloadReported{offload(b, 1, 50, 0.5)}, "280 3"},
		{"every shipment offloaded", []OffloadReported{offload(b, 3, 200, 2), offload(a, 2, 100, 1)}, "0 0"},
		{"every piece offloaded in parts", []OffloadReported{offload(a, 2, 100, 1), offload(b, 1, 50, 0.5), offload(b, 2, 150, 1.5)}, "0 0"},
	}
	for _, tt := range tests {
		f := loaded
		for _, o := range tt.offloads {
			f = EvolveFlight(f, o)
		}
		if got := fmt.Sprint(f.ActualKg, " ", f.ActualM3); got != tt.want {
			t.Errorf("%s: load %s, want %s", tt.name, got, tt.want)
		}
	}
}

// The shipments a manifest puts on board are those the flight did not
// have on board before it: a revised manifest's others were there.
func TestTheShipmentsAManifestPutsOnBoardAreThoseTheFlightDidNotHave(t *testing.T) {
	a, b, c := Load{"020-00000011", 2, 100, 1}, Load{"020-00000022", 3, 200, 2}, Load{"020-00000033", 1, 10, 0.1}
	empty := Flight{ID: "LH8400-2026-11-26", Status: FlightStatusScheduled}
	loaded := EvolveFlight(empty, ManifestSubmitted{FlightID: empty.ID, Shipments: []Load{a, b}})
	offloaded := EvolveFlight(loaded, OffloadReported{FlightID: empty.ID, AWBNumber: b.AWBNumber, Pieces: 3, WeightKg: 200, VolumeM3: 2})
	for _, tt := range []struct {
		name   string
		before Flight
		loads  []Load
		want   []Load
	}{
		{"a first manifest", empty, []Load{a, b}, []Load{a, b}},
		{"a revised manifest adding one", loaded, []Load{a, b, c}, []Load{c}},
		{"a revised manifest leaving one out", loaded, []Load{a}, nil},
		{"a revised manifest naming one offloaded since", offloaded, []Load{a, b}, []Load{b}},
	} {
		if got := (ManifestSubmitted{Shipments: tt.loads}).Boarding(tt.before); !slices.Equal(got, tt.want) {
			t.Errorf("%s: boarding %v, want %v", tt.name, got, tt.want)
		}
	}
}

// Each shipment a manifest lists or leaves out gets its status with it,
// in one atomic batch: a revision may list and take off at most
// MaxManifestShipments in all.
func TestARevisedManifestListsAndTakesOffAtMostSoManyShipmentsInAll(t *testing.T) {
	f := Flight{ID: "LH8400-2026-11-26", Carrier: "LH", AWBPrefix: "020", Origin: "FRA", Status: FlightStatusScheduled}
	candidates := func(from, n int) []ManifestCandidate {
		var out []ManifestCandidate
		for i := range n {
			out = append(out, ManifestCandidate{Load: Load{fmt.Sprintf("020-%08d", from+i), 1, 10, 0.1}, Known: true})
		}
		return out
	}
	var loads []Load
	for _, c := range candidates(10000000, 600) {
		loads = append(loads, c.Load)
	}
	f = EvolveFlight(f, ManifestSubmitted{FlightID: f.ID, Shipments: loads})
	for _, tt := range []struct {
		name      string
		shipments []ManifestCandidate
		want      string
	}{
		{"the same 600 and 399 more", append(candidates(10000000, 600), candidates(20000000, 399)...), ""},
		{"399 of them, taking 201 off", candidates(10000000, 399), ""},
		{"400 others, taking the 600 off", candidates(20000000, 400),
			"awbNumbers:TOO_MANY a revised manifest lists 400 AWBs and takes 600 off LH8400-2026-11-26: at most 999 in all, as each gets its status with the manifest; take some off with a revision of their own first"},
	} {
		_, err := DecideSubmitManifest(f, SubmitManifest{ManifestID: "m2", Carrier: "LH", Shipments: tt.shipments})
		got := ""
		if e, ok := errors.AsType[*Error](err); ok && len(e.Fields) == 1 {
			got = e.Fields[0].Field + ":" + string(e.Fields[0].Code) + " " + e.Fields[0].Message
		} else if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// Once a flight has departed, a revised manifest may add cargo found on
// board, but not leave out cargo it loaded: that would offload it from a
// flight in the air, which an offload report may not (cargo missing on
// arrival is a DIS event).
func TestRevisedManifestOfADepartedFlightDropsNothing(t *testing.T) {
	f := Flight{ID: "LH8400-2026-11-26", Carrier: "LH", AWBPrefix: "020", Origin: "FRA", Status: FlightStatusScheduled}
	f = EvolveFlight(f, ManifestSubmitted{FlightID: f.ID, Shipments: []Load{{"020-00000011", 2, 100, 1}, {"020-00000022", 3, 200, 2}}})
	f.Status = FlightStatusDeparted
	both := []ManifestCandidate{{Load: Load{"020-00000011", 2, 100, 1}, Known: true}, {Load: Load{"020-00000022", 3, 200, 2}, Known: true}}
	found := ManifestCandidate{Load: Load{"020-00000033", 1, 10, 0.1}, Known: true}
	if _, err := DecideSubmitManifest(f, SubmitManifest{ManifestID: "m2", Carrier: "LH", Shipments: both[:1]}); problemOf(err) != "conflict" {
		t.Errorf("a revised manifest of a departed flight leaving a shipment out = %v, want a conflict", err)
	}
	events, err := DecideSubmitManifest(f, SubmitManifest{ManifestID: "m3", Carrier: "LH", Shipments: append(both, found)})
	if err != nil {
		t.Fatalf("a revised manifest of a departed flight adding a shipment: %v", err)
	}
	if m := events[0].(ManifestSubmitted); len(m.Dropped) != 0 || len(m.Shipments) != 3 {
		t.Errorf("revised manifest = %+v", m)
	}
}

// A revised manifest of a departed flight keeps each shipment it had on
// board as the flight departed with it: pieces offloaded before the
// departure stayed behind (and may go on another flight), so the flight's
// load, and its totals when left out, do not count them again. Cargo found
// on board counts as declared.
func TestARevisedManifestOfADepartedFlightKeepsWhatItDepartedWith(t *testing.T) {
	f := Flight{ID: "LH8400-2026-11-26", Carrier: "LH", AWBPrefix: "020", Origin: "FRA", Status: FlightStatusScheduled}
	f = EvolveFlight(f, ManifestSubmitted{FlightID: f.ID, Shipments: []Load{{"020-00000011", 2, 200, 1}, {"020-00000022", 3, 300, 3}}})
	f = EvolveFlight(f, OffloadReported{FlightID: f.ID, AWBNumber: "020-00000011", Pieces: 1, WeightKg: 100, VolumeM3: 0.5})
	departed := EvolveFlight(f, FlightStatusChanged{FlightID: f.ID, Status: FlightStatusDeparted, ChangedAt: time.Date(2026, 11, 26, 9, 5, 0, 0, time.UTC)})
	partly := ManifestCandidate{Load: Load{"020-00000011", 2, 200, 1}, Known: true}
	whole := ManifestCandidate{Load: Load{"020-00000022", 3, 300, 3}, Known: true}
	found := ManifestCandidate{Load: Load{"020-00000033", 1, 50, 0.5}, Known: true}
	tests := []struct {
		name   string
		flight Flight
		want   string // the manifest's loads and totals, and the flight's load after it
	}{
		{"a departed flight keeps the pieces it left with, and adds what was found on board", departed,
			"[{020-00000011 1 100 0.5} {020-00000022 3 300 3} {020-00000033 1 50 0.5}] 5 450 4 → 450 4"},
		{"a flight on the ground loads the shipment whole again", f,
			"[{020-00000011 2 200 1} {020-00000022 3 300 3} {020-00000033 1 50 0.5}] 6 550 4.5 → 550 4.5"},
	}
	for _, tt := range tests {
		events, err := DecideSubmitManifest(tt.flight, SubmitManifest{ManifestID: "m2", Carrier: "LH", Shipments: []ManifestCandidate{partly, whole, found}})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		m := events[0].(ManifestSubmitted)
		after := EvolveFlight(tt.flight, m)
		if got := fmt.Sprint(m.Shipments, " ", m.TotalPieces, " ", m.TotalWeightKg, " ", m.TotalVolumeM3, " → ", after.ActualKg, " ", after.ActualM3); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

// Cargo a revised manifest adds to a departed flight departed with it:
// the manifest says which, and when the flight departed, for their DEP.
// A manifest before the departure finds nothing on board.
func TestAManifestOfADepartedFlightTellsTheCargoFoundOnBoard(t *testing.T) {
	departed := time.Date(2026, 11, 26, 9, 5, 0, 0, time.UTC)
	f := Flight{ID: "LH8400-2026-11-26", Carrier: "LH", AWBPrefix: "020", Origin: "FRA", Status: FlightStatusScheduled}
	f = EvolveFlight(f, ManifestSubmitted{FlightID: f.ID, Shipments: []Load{{"020-00000011", 2, 100, 1}}})
	onBoard := ManifestCandidate{Load: Load{"020-00000011", 2, 100, 1}, Known: true}
	found := ManifestCandidate{Load: Load{"020-00000033", 1, 10, 0.1}, Known: true}
	revise := func(f Flight) ManifestSubmitted {
		t.Helper()
		events, err := DecideSubmitManifest(f, SubmitManifest{ManifestID: "m2", Carrier: "LH", Shipments: []ManifestCandidate{onBoard, found}})
		if err != nil {
			t.Fatal(err)
		}
		return events[0].(ManifestSubmitted)
	}
	if m := revise(f); len(m.FoundOnBoard) != 0 || !m.DepartedAt.IsZero() {
		t.Errorf("a revision before the departure found %v on board, departed at %v", m.FoundOnBoard, m.DepartedAt)
	}
	f = EvolveFlight(f, FlightStatusChanged{FlightID: f.ID, Status: FlightStatusDeparted, ChangedAt: departed})
	if m := revise(f); !slices.Equal(m.FoundOnBoard, []string{"020-00000033"}) || !m.DepartedAt.Equal(departed) {
		t.Errorf("a revision after the departure found %v on board, departed at %v", m.FoundOnBoard, m.DepartedAt)
	}

	// Each gets its DEP besides its MAN, in the one batch of at most
	// 1,000 events: the shipments on board and those found count.
	var loads []Load
	var candidates []ManifestCandidate
	for i := range 950 {
		c := ManifestCandidate{Load: Load{fmt.Sprintf("020-%08d", 10000000+i), 1, 10, 0.1}, Known: true}
		candidates = append(candidates, c)
		if i < 700 {
			loads = append(loads, c.Load)
		}
	}
	f = EvolveFlight(Flight{ID: f.ID, Carrier: "LH", AWBPrefix: "020", Origin: "FRA", Status: FlightStatusScheduled}, ManifestSubmitted{FlightID: f.ID, Shipments: loads})
	f = EvolveFlight(f, FlightStatusChanged{FlightID: f.ID, Status: FlightStatusDeparted, ChangedAt: departed})
	if _, err := DecideSubmitManifest(f, SubmitManifest{ManifestID: "m3", Carrier: "LH", Shipments: candidates[:849]}); err != nil {
		t.Errorf("700 on board and 149 found: %v", err)
	}
	_, err := DecideSubmitManifest(f, SubmitManifest{ManifestID: "m3", Carrier: "LH", Shipments: candidates})
	want := "awbNumbers:TOO_MANY a revised manifest of departed flight LH8400-2026-11-26 lists 950 AWBs, 250 of them not on board at its departure, each of which gets its DEP as well as its MAN: at most 999 statuses in all; add them in more than one revision"
	if e, ok := errors.AsType[*Error](err); !ok || len(e.Fields) != 1 || e.Fields[0].Field+":"+string(e.Fields[0].Code)+" "+e.Fields[0].Message != want {
		t.Errorf("700 on board and 250 found: %v, want %s", err, want)
	}
}

func TestCarriersAreTheFlightsOnTheGroundSetToCarryAShipment(t *testing.T) {
	booked := Flight{ID: "LH8400-2026-11-26", Status: FlightStatusScheduled}
	other := Flight{ID: "LH8402-2026-11-26", Status: FlightStatusDelayed}
	with := func(f Flight, status string, awbs ...string) Flight {
		f.Status, f.Loaded = status, map[string]Load{}
		for _, awb := range awbs {
			f.Loaded[awb] = Load{AWBNumber: awb}
		}
		return f
	}
	confirmed := Booking{FlightID: booked.ID, Status: BookingStatusConfirmed}
	tests := []struct {
		name  string
		facts ManifestFacts
		want  string // the carriers' ids
	}{
		{"nothing is known of the shipment", ManifestFacts{}, ""},
		{"its confirmed booking's flight, not yet manifested", ManifestFacts{Booking: confirmed, BookedFlight: booked}, booked.ID},
		{"a booking not confirmed", ManifestFacts{Booking: Booking{FlightID: booked.ID, Status: BookingStatusPending}, BookedFlight: booked}, ""},
		{"its booked flight, gone", ManifestFacts{Booking: confirmed, BookedFlight: with(booked, FlightStatusDeparted)}, ""},
		{"its booked flight, manifested with it once", ManifestFacts{Booking: confirmed, BookedFlight: with(booked, FlightStatusScheduled, "020-00000011"),
			Manifested: []Flight{with(booked, FlightStatusScheduled, "020-00000011")}}, booked.ID},
		{"its booked flight, manifested without it", ManifestFacts{Booking: confirmed, BookedFlight: with(booked, FlightStatusScheduled, "020-00000022")}, ""},
		{"another flight whose manifest loads it", ManifestFacts{Manifested: []Flight{with(other, FlightStatusDelayed, "020-00000011")}}, other.ID},
		{"another flight that offloaded it", ManifestFacts{Manifested: []Flight{with(other, FlightStatusDelayed)}}, ""},
		{"another flight cancelled", ManifestFacts{Manifested: []Flight{with(other, FlightStatusCancelled, "020-00000011")}}, ""},
		{"both", ManifestFacts{Booking: confirmed, BookedFlight: booked, Manifested: []Flight{with(other, FlightStatusScheduled, "020-00000011")}},
			booked.ID + " " + other.ID},
	}
	for _, tt := range tests {
		tt.facts.AWBNumber = "020-00000011"
		var ids []string
		for _, f := range tt.facts.Carriers() {
			ids = append(ids, f.ID)
		}
		if got := strings.Join(ids, " "); got != tt.want {
			t.Errorf("%s: carriers %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestDecideSubmitManifestSaysWhatOfAShipmentIsOnBoardAnotherFlight(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	flight := Flight{ID: "LH8400-2026-11-27", FlightNumber: "LH8400", Carrier: "LH", AWBPrefix: "020", Origin: "FRA", Status: FlightStatusScheduled}
	tests := []struct {
		name     string
		onBoard  int // pieces of the 3 declared that LH8402 has on board
		wantText string
	}{
		{"on board whole: offload it there", 3,
			"020-00000022 is on board LH8402-2026-11-26: offload it there, or leave it out of a revised manifest of LH8402-2026-11-26, first"},
		{"on board in part, the rest offloaded there: those go once that flight has left", 2,
			"020-00000022 is on board LH8402-2026-11-26, 2 of its 3 pieces: the pieces offloaded there may go once LH8402-2026-11-26 has departed; " +
				"else offload the rest there, or leave it out of a revised manifest of LH8402-2026-11-26, first"},
	}
	for _, tt := range tests {
		c := ManifestCandidate{Load: Load{AWBNumber: "020-00000022", Pieces: 3, WeightKg: 250.5, VolumeM3: 1}, Known: true,
			OnBoard: "LH8402-2026-11-26", OnBoardPieces: tt.onBoard}
		_, err := DecideSubmitManifest(flight, SubmitManifest{ManifestID: "m1", Carrier: "LH", At: now, Shipments: []ManifestCandidate{c}})
		e, ok := errors.AsType[*Error](err)
		if !ok || len(e.Fields) != 1 || e.Fields[0].Code != CodeOnOtherFlight || e.Fields[0].Message != tt.wantText {
			t.Errorf("%s: %v, want AWB_ON_OTHER_FLIGHT %q", tt.name, err, tt.wantText)
		}
	}
}

func TestAManifestSaysHowCargoACancelledFlightLeftBehindGoesOn(t *testing.T) {
	now := time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)
	flight := Flight{ID: "LH8410-2026-12-01", FlightNumber: "LH8410", Carrier: "LH", AWBPrefix: "020", Origin: "FRA", Status: FlightStatusScheduled}
	tests := []struct {
		name      string
		candidate ManifestCandidate
		wantText  string
	}{
		{"one that came off a cancelled flight here, with no MAWB nor confirmed booking",
			ManifestCandidate{Load: Load{AWBNumber: "020-00000221"}, CancelledOn: "LH8410-2026-11-30"},
			"020-00000221 is neither booked on LH8410-2026-12-01 nor known as waiting at FRA: it came off LH8410-2026-11-30 when that flight " +
				"was cancelled, and goes on as freight on hand once it has a MAWB from FRA or a confirmed booking again"},
		{"one nothing is known of",
			ManifestCandidate{Load: Load{AWBNumber: "020-00000221"}},
			"020-00000221 is neither booked on LH8410-2026-12-01 nor a shipment of prefix 020 waiting at FRA"},
	}
	for _, tt := range tests {
		_, err := DecideSubmitManifest(flight, SubmitManifest{ManifestID: "m1", Carrier: "LH", At: now, Shipments: []ManifestCandidate{tt.candidate}})
		e, ok := errors.AsType[*Error](err)
		if !ok || len(e.Fields) != 1 || e.Fields[0].Code != CodeNotOnFlight || e.Fields[0].Message != tt.wantText {
			t.Errorf("%s: %v, want AWB_NOT_ON_FLIGHT %q", tt.name, err, tt.wantText)
		}
	}
}

func TestNewManifestCandidate(t *testing.T) {
	flight := Flight{ID: "LH8400-2026-11-26", Carrier: "LH", AWBPrefix: "020", Origin: "FRA"}
	fromFRA := Flight{ID: "LH8402-2026-11-25", Carrier: "LH", AWBPrefix: "020", Origin: "FRA"}
	fromMUC := Flight{ID: "LH9000-2026-11-25", Carrier: "LH", AWBPrefix: "020", Origin: "MUC"}
	bookedOn := func(f Flight, status string) Booking {
		return Booking{ID: "b1", FlightID: f.ID, Status: status, Pieces: 2, WeightKg: 100, VolumeM3: 0.5}
	}
	mawbFrom := func(origin string) *MAWBCreated {
		return &MAWBCreated{Origin: origin, Pieces: 3, WeightKg: 120, VolumeM3: 0.7}
	}
	// loading is f in status, its latest manifest loading 020-00000011.
	loading := func(f Flight, status string) Flight {
		f.Status, f.Loaded = status, map[string]Load{"020-00000011": {AWBNumber: "020-00000011", Pieces: 2, WeightKg: 100, VolumeM3: 0.5}}
		return f
	}
	// carrying is f in status, gone at hour h of the day, its manifest
	// loading pieces of 020-00000011.
	toORD, toFRA := fromFRA, fromMUC
	toORD.Destination, toFRA.Destination = "ORD", "FRA"
	carrying := func(f Flight, status string, pieces, h int) Flight {
		f = loading(f, status)
		f.Loaded["020-00000011"] = Load{AWBNumber: "020-00000011", Pieces: pieces}
		f.DepartedAt = time.Date(2026, 11, 25, h, 0, 0, 0, time.UTC)
		return f
	}
	tests := []struct {
		name  string
		facts ManifestFacts
		want  string // known or unknown, with the load
	}{
		{"a confirmed booking on the flight goes, as booked",
			ManifestFacts{AWBNumber: "176-00000011", Booking: bookedOn(flight, BookingStatusConfirmed), BookedFlight: flight}, "known 2 100 0.5"},
		{"a booking on the flight not yet confirmed does not",
			ManifestFacts{AWBNumber: "020-00000011", Booking: bookedOn(flight, BookingStatusPending), BookedFlight: flight}, "unknown 0 0 0"},
		{"the airline's shipment booked on another flight from the origin goes",
			ManifestFacts{AWBNumber: "020-00000011", Booking: bookedOn(fromFRA, BookingStatusConfirmed), BookedFlight: fromFRA}, "known 2 100 0.5"},
		{"the airline's shipment booked on a flight from elsewhere does not",
			ManifestFacts{AWBNumber: "020-00000011", Booking: bookedOn(fromMUC, BookingStatusConfirmed), BookedFlight: fromMUC}, "unknown 2 100 0.5"},
		{"another airline's shipment booked on another flight from the origin does not",
			ManifestFacts{AWBNumber: "176-00000011", Booking: bookedOn(fromFRA, BookingStatusConfirmed), BookedFlight: fromFRA}, "unknown 2 100 0.5"},
		{"the airline's shipment with a MAWB from the origin goes, as the MAWB declares it",
			ManifestFacts{AWBNumber: "020-00000011", MAWB: mawbFrom("FRA")}, "known 3 120 0.7"},
		{"the MAWB's load counts over the booking's",
			ManifestFacts{AWBNumber: "176-00000011", Booking: bookedOn(flight, BookingStatusConfirmed), BookedFlight: flight, MAWB: mawbFrom("MUC")}, "known 3 120 0.7"},
		{"another airline's shipment with a MAWB from the origin does not",
			ManifestFacts{AWBNumber: "176-00000011", MAWB: mawbFrom("FRA")}, "unknown 3 120 0.7"},
		{"a number nothing is known of does not", ManifestFacts{AWBNumber: "020-00000011"}, "unknown 0 0 0"},
		{"a shipment another flight still on the ground has on board is on board there",
			ManifestFacts{AWBNumber: "020-00000011", Booking: bookedOn(fromFRA, BookingStatusConfirmed), BookedFlight: fromFRA,
				Manifested: []Flight{loading(fromFRA, FlightStatusDelayed)}}, "known 2 100 0.5 on LH8402-2026-11-25, 2 pieces"},
		{"one offloaded in part there is on board with the rest",
			ManifestFacts{AWBNumber: "020-00000011", MAWB: mawbFrom("FRA"), Manifested: []Flight{loading(fromFRA, FlightStatusScheduled)}},
			"known 3 120 0.7 on LH8402-2026-11-25, 2 pieces"},
		{"a shipment this flight has on board already is not on board elsewhere",
			ManifestFacts{AWBNumber: "020-00000011", Booking: bookedOn(flight, BookingStatusConfirmed), BookedFlight: flight,
				Manifested: []Flight{loading(flight, FlightStatusScheduled)}}, "known 2 100 0.5"},
		{"a shipment another flight offloaded in full is free to go",
			ManifestFacts{AWBNumber: "020-00000011", Booking: bookedOn(fromFRA, BookingStatusConfirmed), BookedFlight: fromFRA,
				Manifested: []Flight{fromFRA}}, "known 2 100 0.5"},
		{"a shipment of a cancelled flight's manifest is free to go",
			ManifestFacts{AWBNumber: "020-00000011", MAWB: mawbFrom("FRA"), Manifested: []Flight{loading(fromFRA, FlightStatusCancelled)}}, "known 3 120 0.7"},
		{"one whose booking went with the cancelled flight it came off here is not known, and is told so",
			ManifestFacts{AWBNumber: "020-00000011", Booking: bookedOn(fromFRA, BookingStatusCancelled), BookedFlight: fromFRA,
				Manifested: []Flight{loading(fromFRA, FlightStatusCancelled)}}, "unknown 0 0 0 came off cancelled LH8402-2026-11-25"},
		{"one that came off a cancelled flight elsewhere is not told of it",
			ManifestFacts{AWBNumber: "020-00000011", Booking: bookedOn(fromMUC, BookingStatusCancelled), BookedFlight: fromMUC,
				Manifested: []Flight{loading(fromMUC, FlightStatusCancelled)}}, "unknown 0 0 0"},
		{"another airline's shipment that came off a cancelled flight is not told of it",
			ManifestFacts{AWBNumber: "176-00000011", Booking: bookedOn(fromFRA, BookingStatusCancelled), BookedFlight: fromFRA,
				Manifested: []Flight{{ID: fromFRA.ID, Carrier: "LH", Origin: "FRA", Status: FlightStatusCancelled,
					Loaded: map[string]Load{"176-00000011": {AWBNumber: "176-00000011", Pieces: 2}}}}}, "unknown 0 0 0"},
		{"the rest of a shipment a departed flight carried in part may go, as what is left of it",
			ManifestFacts{AWBNumber: "020-00000011", MAWB: mawbFrom("FRA"), Manifested: []Flight{loading(fromFRA, FlightStatusDeparted)}}, "known 1 20 0.2"},
		{"the rest of one two flights carried in part is what neither took",
			ManifestFacts{AWBNumber: "020-00000011", MAWB: mawbFrom("FRA"),
				Manifested: []Flight{carrying(toORD, FlightStatusArrived, 1, 1), carrying(Flight{ID: "LH8404-2026-11-25", Origin: "FRA", Destination: "ORD"}, FlightStatusDeparted, 1, 2)}},
			"known 1 120 0.7"},
		{"part of it a flight took from elsewhere is not taken from here",
			ManifestFacts{AWBNumber: "020-00000011", MAWB: mawbFrom("FRA"), Manifested: []Flight{loading(fromMUC, FlightStatusDeparted)}}, "known 3 120 0.7"},
		{"a shipment a departed flight carried away whole is not waiting at the origin",
			ManifestFacts{AWBNumber: "020-00000011", MAWB: mawbFrom("FRA"), Manifested: []Flight{carrying(toORD, FlightStatusArrived, 3, 1)}},
			"unknown 3 120 0.7 left on LH8402-2026-11-25 for ORD"},
		{"nor is one booked on the flight that another carried away whole",
			ManifestFacts{AWBNumber: "020-00000011", Booking: bookedOn(flight, BookingStatusConfirmed), BookedFlight: flight,
				Manifested: []Flight{carrying(toORD, FlightStatusDeparted, 2, 1)}}, "unknown 2 100 0.5 left on LH8402-2026-11-25 for ORD"},
		{"a shipment a flight carried whole to the origin waits there",
			ManifestFacts{AWBNumber: "020-00000011", MAWB: mawbFrom("MUC"), Manifested: []Flight{carrying(toFRA, FlightStatusArrived, 3, 2)}}, "known 3 120 0.7"},
		{"one carried away and back again waits at the origin",
			ManifestFacts{AWBNumber: "020-00000011", MAWB: mawbFrom("FRA"),
				Manifested: []Flight{carrying(toFRA, FlightStatusArrived, 3, 2), carrying(toORD, FlightStatusArrived, 3, 1)}}, "known 3 120 0.7"},
		{"one carried back to the origin and away again does not",
			ManifestFacts{AWBNumber: "020-00000011", MAWB: mawbFrom("FRA"),
				Manifested: []Flight{carrying(toFRA, FlightStatusArrived, 3, 1), carrying(toORD, FlightStatusDeparted, 3, 2)}},
			"unknown 3 120 0.7 left on LH8402-2026-11-25 for ORD"},
		{"another airline's shipment carried away is not told where",
			ManifestFacts{AWBNumber: "176-00000011", MAWB: mawbFrom("FRA"), Manifested: []Flight{carrying(toORD, FlightStatusArrived, 3, 1)}}, "unknown 3 120 0.7"},
		{"a shipment that stayed behind, as a status since says, waits at the origin",
			ManifestFacts{AWBNumber: "020-00000011", MAWB: mawbFrom("FRA"), Manifested: []Flight{carrying(toORD, FlightStatusDeparted, 3, 1)},
				Statuses: []ShipmentStatusRecorded{{StatusCode: "DIS", Location: "FRA", EventDate: time.Date(2026, 11, 25, 2, 0, 0, 0, time.UTC)}}}, "known 3 120 0.7"},
		{"a status there before the departure says nothing of it",
			ManifestFacts{AWBNumber: "020-00000011", MAWB: mawbFrom("FRA"), Manifested: []Flight{carrying(toORD, FlightStatusDeparted, 3, 1)},
				Statuses: []ShipmentStatusRecorded{{StatusCode: "RCS", Location: "FRA", EventDate: time.Date(2026, 11, 25, 0, 30, 0, 0, time.UTC)}}},
			"unknown 3 120 0.7 left on LH8402-2026-11-25 for ORD"},
		{"another airline's shipment carried to the origin does not, unless booked on the flight",
			ManifestFacts{AWBNumber: "176-00000011", MAWB: mawbFrom("MUC"), Manifested: []Flight{carrying(toFRA, FlightStatusArrived, 3, 2)}}, "unknown 3 120 0.7"},
		{"a shipment declaring lithium ion batteries on their own is for cargo aircraft only",
			ManifestFacts{AWBNumber: "020-00000011", MAWB: mawbFrom("FRA"), Filings: Compliance{DGDs: []DGDSubmitted{{UNNumber: "UN1845"}, {UNNumber: "UN3480"}}}},
			"known 3 120 0.7 for cargo aircraft only: UN3480"},
		{"a shipment whose e-DGD recorded goods the reference data allows on cargo aircraft only is for cargo aircraft only",
			ManifestFacts{AWBNumber: "020-00000011", MAWB: mawbFrom("FRA"), Filings: Compliance{DGDs: []DGDSubmitted{{UNNumber: "UN1089", CargoAircraftOnly: true}}}},
			"known 3 120 0.7 for cargo aircraft only: UN1089"},
		{"a shipment declaring lithium ion batteries in equipment is not",
			ManifestFacts{AWBNumber: "020-00000011", MAWB: mawbFrom("FRA"), Filings: Compliance{DGDs: []DGDSubmitted{{UNNumber: "UN3481"}}}}, "known 3 120 0.7"},
	}
	// A revised manifest of a flight that left with the shipment, which
	// has left another airport since, keeps it.
	gone := carrying(flight, FlightStatusDeparted, 3, 1)
	if c := NewManifestCandidate(gone, ManifestFacts{AWBNumber: "020-00000011", MAWB: mawbFrom("FRA"),
		Manifested: []Flight{gone, carrying(toORD, FlightStatusDeparted, 3, 5)}}); !c.Known || c.LeftOn.ID != "" {
		t.Errorf("the shipment on board a revised manifest's departed flight: %+v, want it known", c)
	}
	for _, tt := range tests {
		c := NewManifestCandidate(flight, tt.facts)
		known := map[bool]string{true: "known", false: "unknown"}[c.Known]
		got := fmt.Sprint(known, " ", c.Pieces, " ", c.WeightKg, " ", c.VolumeM3)
		if c.OnBoard != "" {
			got += fmt.Sprintf(" on %s, %d pieces", c.OnBoard, c.OnBoardPieces)
		}
		if c.LeftOn.ID != "" {
			got += " left on " + c.LeftOn.ID + " for " + c.LeftOn.Destination
		}
		if c.CargoAircraftOnly != "" {
			got += " for cargo aircraft only: " + c.CargoAircraftOnly
		}
		if c.CancelledOn != "" {
			got += " came off cancelled " + c.CancelledOn
		}
		if got != tt.want || c.AWBNumber != tt.facts.AWBNumber {
			t.Errorf("%s: %s of %s, want %s", tt.name, got, c.AWBNumber, tt.want)
		}
	}
}

func TestFlightCheckCarrier(t *testing.T) {
	tests := []struct {
		name   string
		flight Flight
		want   string
	}{
		{"the flight's airline passes", Flight{ID: "LH8400-2026-11-26", Carrier: "LH"}, ""},
		{"it passes a cancelled flight too: that is the decision's to refuse", Flight{ID: "LH8400-2026-11-26", Carrier: "LH", Status: FlightStatusCancelled}, ""},
		{"another airline's flight is refused", Flight{ID: "EK0001-2026-11-26", Carrier: "EK"}, "forbidden: flight EK0001-2026-11-26 is not one of yours"},
		{"a flight not scheduled passes, for the decision to find missing", Flight{}, ""},
	}
	for _, tt := range tests {
		if got := errText(tt.flight.CheckCarrier("LH")); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestAFlightsLoadIsItsAirlinesAndAdmins(t *testing.T) {
	flight := Flight{ID: "LH8400-2026-11-26", Carrier: "LH", AWBPrefix: "020"}
	tests := []struct {
		name   string
		flight Flight
		p      Principal
		want   bool
	}{
		{"the flight's airline sees them", flight, Principal{OrganizationID: "lh", Role: RoleAirline, AirlineCode: "LH"}, true},
		{"an admin sees them", flight, Principal{OrganizationID: "ops", Role: RoleAdmin}, true},
		{"another airline does not", flight, Principal{OrganizationID: "ek", Role: RoleAirline, AirlineCode: "EK"}, false},
		{"a forwarder does not", flight, Principal{OrganizationID: "f1", Role: RoleForwarder}, false},
		{"nobody of an unknown flight", Flight{}, Principal{OrganizationID: "ops", Role: RoleAdmin}, false},
	}
	for _, tt := range tests {
		if got := tt.flight.LoadVisibleTo(tt.p); got != tt.want {
			t.Errorf("%s: visible = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestAFlightsHistoryShowsItsLoadToThoseWhoSeeIt(t *testing.T) {
	flight := Flight{ID: "LH8400-2026-11-26", Carrier: "LH", AWBPrefix: "020"}
	lh, fwd := Principal{OrganizationID: "lh", Role: RoleAirline, AirlineCode: "LH"}, Principal{OrganizationID: "f1", Role: RoleForwarder}
	tests := []struct {
		name string
		p    Principal
		e    Event
		want bool
	}{
		{"the schedule, to a forwarder", fwd, FlightScheduled{}, true},
		{"a status change, to a forwarder", fwd, FlightStatusChanged{}, true},
		{"another aircraft, to a forwarder", fwd, FlightAircraftChanged{}, true},
		{"a reservation, to a forwarder", fwd, CapacityReserved{}, false},
		{"a manifest, to a forwarder", fwd, ManifestSubmitted{}, false},
		{"an offload, to a forwarder", fwd, OffloadReported{}, false},
		{"a manifest, to the flight's airline", lh, ManifestSubmitted{}, true},
		{"a release, to the flight's airline", lh, CapacityReleased{}, true},
	}
	for _, tt := range tests {
		if got := flight.HistoryEventVisibleTo(tt.p, tt.e); got != tt.want {
			t.Errorf("%s: visible = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestAManifestsPartOfAShipmentIsItsLineAlone(t *testing.T) {
	m := ManifestSubmitted{ManifestID: "m1", FlightID: "LH8400-2026-11-26", FlightNumber: "LH8400", Origin: "FRA",
		Shipments:   []Load{{AWBNumber: "020-12345675", Pieces: 2, WeightKg: 350}, {AWBNumber: "020-81140743", Pieces: 1, WeightKg: 90}},
		Dropped:     []Load{{AWBNumber: "020-00000114", Pieces: 3}},
		TotalPieces: 3, TotalWeightKg: 440, Differences: []ManifestDifference{{Field: "totalWeight", Manifested: 440, Declared: 430}}}
	tests := []struct {
		name             string
		awb              string
		shipments, drops int
		names            bool
	}{
		{"a shipment on board", "020-81140743", 1, 0, true},
		{"a shipment dropped", "020-00000114", 0, 1, true},
		{"a shipment the manifest does not name", "176-12345675", 0, 0, false},
	}
	for _, tt := range tests {
		part := m.PartOf(tt.awb)
		if len(part.Shipments) != tt.shipments || len(part.Dropped) != tt.drops || m.Names(tt.awb) != tt.names ||
			part.ManifestID != "m1" || part.FlightID != m.FlightID || part.Origin != "FRA" {
			t.Errorf("%s: part = %+v, names = %v", tt.name, part, m.Names(tt.awb))
		}
		for _, l := range slices.Concat(part.Shipments, part.Dropped) {
			if l.AWBNumber != tt.awb {
				t.Errorf("%s: the part has the line of %s", tt.name, l.AWBNumber)
			}
		}
	}
}
