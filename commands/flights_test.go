package commands

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/internal/storetest"
)

// manifestWorld is an airline's two flights from FRA and a shipment it
// holds there, for manifests whose facts a test gives.
type manifestWorld struct {
	t       *testing.T
	h       *Handler
	airline domain.Principal
}

const manifestedAWB = "020-12345675"

func newManifestWorld(t *testing.T) *manifestWorld {
	w := &manifestWorld{t: t, h: New(storetest.Open(t), 4, builtinReference()),
		airline: domain.Principal{Subject: "client:lh", OrganizationID: "lh", Role: domain.RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}}
	departs := time.Now().UTC().Add(2 * time.Hour) // may depart now: 12 hours early at most
	for _, id := range []string{"LH400", "LH402"} {
		_, err := execute(context.Background(), w.h, flightAggregate(id), NewMeta(w.airline, "", ""), domain.EvolveFlight,
			func(domain.Flight) ([]domain.Event, error) {
				return []domain.Event{domain.FlightScheduled{FlightID: id, Carrier: "LH", AWBPrefix: "020", FlightNumber: id,
					Origin: "FRA", Destination: "JFK", DepartsAt: departs, AircraftType: "B77F", CapacityKg: 100000}}, nil
			})
		if err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// facts are what a manifest's check would find of the shipment: on
// board the flight onBoard ("" for none), its statuses at version.
func facts(onBoard string, version uint64) domain.SubmitManifest {
	return domain.SubmitManifest{Shipments: []domain.ManifestCandidate{{Load: domain.Load{AWBNumber: manifestedAWB, Pieces: 1, WeightKg: 100},
		Known: true, OnBoard: onBoard, Version: version}}}
}

// statuses are the shipment's status events as stored, and the version
// they are at.
func (w *manifestWorld) statuses() ([]domain.Record, uint64) {
	return w.statusesOf(manifestedAWB)
}

func (w *manifestWorld) statusesOf(awb string) ([]domain.Record, uint64) {
	w.t.Helper()
	recs, err := w.h.store.LoadAfter(context.Background(), shipmentAggregate(awb), 0)
	if err != nil {
		w.t.Fatal(err)
	}
	if len(recs) == 0 {
		return nil, 0
	}
	return recs, recs[len(recs)-1].Sequence
}

// Two manifests that load one shipment onto two flights at once meet on
// the shipment: the one whose facts were read before the other was
// stored is checked again, on facts that have the shipment on board the
// other flight, and refused.
func TestTheSecondOfTwoManifestsLoadingOneShipmentAtOnceIsCheckedAgainAndRefused(t *testing.T) {
	ctx := context.Background()
	w := newManifestWorld(t)
	checks := 0
	_, err := w.h.SubmitManifest(ctx, NewMeta(w.airline, "", ""), "LH402", func(context.Context) (domain.SubmitManifest, error) {
		checks++
		if checks > 1 {
			_, version := w.statuses()
			return facts("LH400", version), nil
		}
		// The facts are read; then the other manifest is stored.
		stale := facts("", 0)
		if _, err := w.h.SubmitManifest(ctx, NewMeta(w.airline, "", ""), "LH400", func(context.Context) (domain.SubmitManifest, error) {
			return facts("", 0), nil
		}); err != nil {
			t.Fatal(err)
		}
		return stale, nil
	})
	if e, ok := errors.AsType[*domain.Error](err); !ok || len(e.Fields) != 1 || e.Fields[0].Code != domain.CodeOnOtherFlight || checks != 2 {
		t.Fatalf("the manifest of LH402 after %d checks: %v, want AWB_ON_OTHER_FLIGHT after 2", checks, err)
	}
	flight, _, _, err := load(ctx, w.h, flightAggregate("LH402"), domain.EvolveFlight, "", loadFresh)
	if err != nil || len(flight.Loaded) != 0 {
		t.Errorf("LH402 has %v on board (%v)", flight.Loaded, err)
	}

	// The shipment's MAN status, stored with the manifest that loaded it,
	// is the shipments reactor's step for that manifest, which finds it
	// done and records it no second time.
	recs, _ := w.statuses()
	manifests, err := w.h.store.LoadAfter(ctx, flightAggregate("LH400"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&Reactors{h: w.h}).ship(ctx, manifests[len(manifests)-1]); err != nil {
		t.Fatal(err)
	}
	after, _ := w.statuses()
	if len(recs) != 1 || len(after) != 1 || recs[0].Sequence != manifests[len(manifests)-1].Sequence+1 {
		t.Fatalf("the shipment has %d status events with the manifest (want 1, right after it), %d once the reactor has seen it (want 1)", len(recs), len(after))
	}
	if e, err := domain.DecodeEvent(recs[0].Type, recs[0].Data); err != nil || e.(domain.ShipmentStatusRecorded).StatusCode != "MAN" ||
		e.(domain.ShipmentStatusRecorded).FlightID != "LH400" {
		t.Errorf("the shipment's status event is %+v (%v), want MAN on LH400", e, err)
	}
}

// A shipment whose statuses changed since its facts were read, by a
// status event, is looked up again, and the manifest filed on the fresh
// facts, answered with the sequence of its last event; one that changes at every look is refused, after a few, as a
// conflict the airline may send again.
func TestAManifestWhoseShipmentChangedSinceItWasLookedUpIsCheckedAgain(t *testing.T) {
	ctx := context.Background()
	w := newManifestWorld(t)
	_, err := execute(ctx, w.h, shipmentAggregate(manifestedAWB), NewMeta(w.airline, "", ""), domain.EvolveShipment,
		func(domain.Shipment) ([]domain.Event, error) {
			return []domain.Event{domain.ShipmentStatusRecorded{AWBNumber: manifestedAWB, StatusEventID: "rcs", StatusCode: "RCS", Location: "FRA"}}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	_, version := w.statuses()

	checks := 0
	res, err := w.h.SubmitManifest(ctx, NewMeta(w.airline, "", ""), "LH400", func(context.Context) (domain.SubmitManifest, error) {
		checks++
		if checks == 1 {
			return facts("", 0), nil // before the RCS
		}
		return facts("", version), nil
	})
	if _, loaded := res.State.Loaded[manifestedAWB]; err != nil || !loaded || checks != 2 {
		t.Fatalf("after %d checks: %v, the shipment on board %v, want it on board after 2", checks, err, loaded)
	}
	// Its Cargo-Sequence is that of the MAN status, stored after the
	// manifest: a reader that reached it sees both.
	if _, last := w.statuses(); res.Sequence != last {
		t.Errorf("the manifest's sequence is %d, the MAN status's %d", res.Sequence, last)
	}

	checks = 0
	_, err = w.h.SubmitManifest(ctx, NewMeta(w.airline, "", ""), "LH402", func(context.Context) (domain.SubmitManifest, error) {
		checks++
		return facts("", version), nil // never with the MAN on LH400
	})
	if domain.ErrorCode(err) != domain.Conflict || checks != maxManifestChecks {
		t.Errorf("a shipment changed at every look, after %d checks: %v, want a conflict after %d", checks, err, maxManifestChecks)
	}
}

// The statuses a flight's events give its shipments are stored with them,
// in the order they happened, and the shipments reactor, which follows
// the flights' events later, adds none: a shipment taken off a flight and
// loaded again at once ends on board, not offloaded.
func TestAShipmentsStatusesFromItsFlightsAreStoredInTheirOrderWithTheirEvents(t *testing.T) {
	const other = "020-12345686"
	one := 1
	weight := 100.0
	for _, tt := range []struct {
		name string
		do   func(w *manifestWorld) error
		want string // the shipment's statuses: code on flight
	}{
		{"left off a revised manifest and put back on",
			func(w *manifestWorld) error {
				return errors.Join(w.manifest("LH400", manifestedAWB, other), w.manifest("LH400", other), w.manifest("LH400", manifestedAWB, other))
			}, "MAN LH400, DIS_OFLD LH400, MAN LH400"},
		{"offloaded and manifested again",
			func(w *manifestWorld) error {
				loaded := w.manifest("LH400", manifestedAWB)
				_, offloaded := w.h.ReportOffload(context.Background(), NewMeta(w.airline, "", ""), "LH400",
					domain.ReportOffload{AWBNumber: manifestedAWB, Reason: "Space", Pieces: &one, WeightKg: &weight})
				return errors.Join(loaded, offloaded, w.manifest("LH400", manifestedAWB))
			}, "MAN LH400, DIS_OFLD LH400, MAN LH400"},
		{"left behind by a cancelled flight and manifested on another",
			func(w *manifestWorld) error {
				err := w.manifest("LH400", manifestedAWB)
				_, cancelled := w.h.ChangeFlightStatus(context.Background(), NewMeta(w.airline, "", ""), "LH400", domain.ChangeFlightStatus{Status: domain.FlightStatusCancelled})
				return errors.Join(err, cancelled, w.manifest("LH402", manifestedAWB))
			}, "MAN LH400, DIS_OFLD LH400, MAN LH402"},
		{"found on board a departed flight, which then arrives",
			func(w *manifestWorld) error {
				err := w.manifest("LH400", other)
				_, departed := w.h.ChangeFlightStatus(context.Background(), NewMeta(w.airline, "", ""), "LH400", domain.ChangeFlightStatus{Status: domain.FlightStatusDeparted})
				found := w.manifest("LH400", other, manifestedAWB)
				_, arrived := w.h.ChangeFlightStatus(context.Background(), NewMeta(w.airline, "", ""), "LH400", domain.ChangeFlightStatus{Status: domain.FlightStatusArrived})
				return errors.Join(err, departed, found, arrived)
			}, "MAN LH400, DEP LH400, ARR LH400"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newManifestWorld(t)
			if err := tt.do(w); err != nil {
				t.Fatal(err)
			}
			told := func() string {
				recs, _ := w.statuses()
				var got []string
				for _, rec := range recs {
					e, err := domain.DecodeEvent(rec.Type, rec.Data)
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, e.(domain.ShipmentStatusRecorded).XFSUCode()+" "+e.(domain.ShipmentStatusRecorded).FlightID)
				}
				return strings.Join(got, ", ")
			}
			if got := told(); got != tt.want {
				t.Errorf("the shipment's statuses, stored with the flights' events: %s, want %s", got, tt.want)
			}
			ctx := context.Background()
			for _, flight := range []string{"LH400", "LH402"} {
				recs, err := w.h.store.LoadAfter(ctx, flightAggregate(flight), 0)
				if err != nil {
					t.Fatal(err)
				}
				for _, rec := range recs {
					if err := (&Reactors{h: w.h}).ship(ctx, rec); err != nil {
						t.Fatal(err)
					}
				}
			}
			if got := told(); got != tt.want {
				t.Errorf("the shipment's statuses once the reactor has seen the flights' events: %s, want %s", got, tt.want)
			}
		})
	}
}

// manifest files a manifest of flight loading awbs, on the facts as they
// stand (each shipment's statuses at their version).
func (w *manifestWorld) manifest(flight string, awbs ...string) error {
	_, err := w.h.SubmitManifest(context.Background(), NewMeta(w.airline, "", ""), flight, func(context.Context) (domain.SubmitManifest, error) {
		var c domain.SubmitManifest
		for _, awb := range awbs {
			_, version := w.statusesOf(awb)
			c.Shipments = append(c.Shipments, domain.ManifestCandidate{Load: domain.Load{AWBNumber: awb, Pieces: 1, WeightKg: 100}, Known: true, Version: version})
		}
		return c, nil
	})
	return err
}

// A manifest sent again with the same command id, once stored, answers
// the sequence of the statuses stored with it, as the first time.
func TestAManifestSentAgainAnswersTheSequenceOfItsStatuses(t *testing.T) {
	w := newManifestWorld(t)
	m := NewMeta(w.airline, "the-key", "")
	var answered []uint64
	for range 2 {
		res, err := w.h.SubmitManifest(context.Background(), m, "LH400", func(context.Context) (domain.SubmitManifest, error) { return facts("", 0), nil })
		if err != nil {
			t.Fatal(err)
		}
		answered = append(answered, res.Sequence)
	}
	if _, last := w.statuses(); answered[0] != last || answered[1] != last {
		t.Errorf("answered %v, want the MAN status's %d both times", answered, last)
	}

	// Cargo found on board a departed flight: its DEP, after its MAN.
	if _, err := w.h.ChangeFlightStatus(context.Background(), NewMeta(w.airline, "", ""), "LH400", domain.ChangeFlightStatus{Status: domain.FlightStatusDeparted}); err != nil {
		t.Fatal(err)
	}
	const found = "020-12345686"
	m = NewMeta(w.airline, "another-key", "")
	answered = nil
	for range 2 {
		res, err := w.h.SubmitManifest(context.Background(), m, "LH400", func(context.Context) (domain.SubmitManifest, error) {
			c := facts("", 0)
			c.Shipments = append(c.Shipments, domain.ManifestCandidate{Load: domain.Load{AWBNumber: found, Pieces: 1, WeightKg: 100}, Known: true})
			return c, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		answered = append(answered, res.Sequence)
	}
	if recs, last := w.statusesOf(found); len(recs) != 2 || answered[0] != last || answered[1] != last {
		t.Errorf("answered %v, want the sequence of the DEP of the cargo found on board, %d (of %d statuses), both times", answered, last, len(recs))
	}
}

// The shipments reactor leaves alone a flight's event whose statuses were
// stored with it, whatever became of the flight and the shipment since:
// it neither gives a shipment loaded after a departure that departure
// again (its manifest gave it, as cargo found on board), nor records a
// flight's DEP that an earlier DEP the airline posted stood for once the
// shipment has moved on. An event of an earlier version, it answers as
// the flight stood at the event.
func TestTheReactorRecordsOnlyTheStatusesOfEventsStoredWithoutThem(t *testing.T) {
	ctx := context.Background()
	const late = "020-12345686"
	w := newManifestWorld(t)
	meta := func() Meta { return NewMeta(w.airline, "", "") }
	// The airline posts the shipment's DEP, marks the flight departed
	// (which records none for it), adds cargo found on board, and then
	// offloads the shipment at the next stop, as it were.
	if err := w.manifest("LH400", manifestedAWB); err != nil {
		t.Fatal(err)
	}
	_, err := execute(ctx, w.h, shipmentAggregate(manifestedAWB), meta(), domain.EvolveShipment, func(domain.Shipment) ([]domain.Event, error) {
		return []domain.Event{domain.ShipmentStatusRecorded{AWBNumber: manifestedAWB, StatusEventID: "dep", StatusCode: "DEP", Location: "FRA", Source: "status"}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.h.ChangeFlightStatus(ctx, meta(), "LH400", domain.ChangeFlightStatus{Status: domain.FlightStatusDeparted}); err != nil {
		t.Fatal(err)
	}
	if err := w.manifest("LH400", manifestedAWB, late); err != nil {
		t.Fatal(err)
	}
	_, err = execute(ctx, w.h, shipmentAggregate(manifestedAWB), meta(), domain.EvolveShipment, func(domain.Shipment) ([]domain.Event, error) {
		return []domain.Event{domain.ShipmentStatusRecorded{AWBNumber: manifestedAWB, StatusEventID: "dis", StatusCode: "DIS", DiscrepancyCode: "OFLD", Location: "JFK", Source: "status"}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	codes := func(awb string) string {
		recs, _ := w.statusesOf(awb)
		var got []string
		for _, rec := range recs {
			e, _ := domain.DecodeEvent(rec.Type, rec.Data)
			got = append(got, e.(domain.ShipmentStatusRecorded).XFSUCode())
		}
		return strings.Join(got, " ")
	}
	before := codes(manifestedAWB) + " / " + codes(late)
	if want := "MAN DEP MAN DIS_OFLD / MAN DEP"; before != want {
		t.Fatalf("the statuses before the reactor: %s, want %s", before, want)
	}
	recs, err := w.h.store.Load(ctx, flightAggregate("LH400"))
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		if err := (&Reactors{h: w.h}).ship(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	if after := codes(manifestedAWB) + " / " + codes(late); after != before {
		t.Errorf("the statuses once the reactor has seen the flight's events: %s, want them as they were, %s", after, before)
	}

	// The same events as an earlier version stored them, without their
	// statuses: the reactor gives the departure to the shipment on board
	// then, and not to the one loaded after.
	legacy := newManifestWorld(t)
	at := time.Now().UTC()
	store := func(events ...domain.Event) {
		t.Helper()
		_, err := execute(ctx, legacy.h, flightAggregate("LH402"), NewMeta(legacy.airline, "", ""), domain.EvolveFlight,
			func(domain.Flight) ([]domain.Event, error) { return events, nil })
		if err != nil {
			t.Fatal(err)
		}
	}
	store(domain.ManifestSubmitted{ManifestID: "m1", FlightID: "LH402", Origin: "FRA", Shipments: []domain.Load{{AWBNumber: manifestedAWB, Pieces: 1, WeightKg: 100}}, SubmittedAt: at})
	store(domain.FlightStatusChanged{FlightID: "LH402", Status: domain.FlightStatusDeparted, Previous: domain.FlightStatusScheduled, ChangedAt: at})
	store(domain.ManifestSubmitted{ManifestID: "m2", FlightID: "LH402", Origin: "FRA", Shipments: []domain.Load{{AWBNumber: manifestedAWB, Pieces: 1, WeightKg: 100},
		{AWBNumber: late, Pieces: 1, WeightKg: 100}}, SubmittedAt: at})
	if recs, err = legacy.h.store.Load(ctx, flightAggregate("LH402")); err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		if err := (&Reactors{h: legacy.h}).ship(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	w = legacy
	if got, want := codes(manifestedAWB)+" / "+codes(late), "MAN DEP MAN / MAN"; got != want {
		t.Errorf("the statuses the reactor records for an earlier version's events: %s, want %s", got, want)
	}
}

// A rate card set again as it is records nothing: an airline system that
// sends its whole tariff on a schedule filled the card's history and the
// audit log with sets that changed nothing. Another amount is a change.
func TestARateCardSetAgainAsItIsRecordsNothing(t *testing.T) {
	h := New(storetest.Open(t), 4, builtinReference())
	lh := domain.Principal{Subject: "client:lh", OrganizationID: "lh", Role: domain.RoleAirline, AirlineCode: "LH", AWBPrefix: "020"}
	card := func(minimum float64) domain.SetRateCard {
		return domain.SetRateCard{Origin: "fra", Destination: "*", Currency: "eur", MinimumCharge: minimum,
			WeightBreaks: map[string]float64{"N": 4, "100": 3}, Surcharges: map[string]float64{"dgr": 0.6}, NotAccepted: []string{"AVI"},
			ValidFrom: "2026-01-01", ValidTo: "2099-12-31"}
	}
	var sequences []uint64
	for _, minimum := range []float64{50, 50, 60} {
		res, err := h.SetRateCard(context.Background(), NewMeta(lh, "", ""), card(minimum))
		if err != nil {
			t.Fatal(err)
		}
		sequences = append(sequences, res.Sequence)
	}
	if sequences[1] != sequences[0] || sequences[2] == sequences[1] {
		t.Errorf("the card's sequences %v: want the second set, the same card, to record nothing, and the third a change", sequences)
	}
}
