package commands

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cargostream/cargostream/domain"
)

func flightAggregate(id string) domain.Aggregate {
	return domain.Aggregate{Type: domain.AggregateFlight, ID: id}
}

// ScheduleFlight publishes one flight of the calling airline (see
// ScheduleFlights); a problem names its field alone.
func (h *Handler) ScheduleFlight(ctx context.Context, m Meta, flight domain.ScheduleFlight) (Result[domain.Flight], error) {
	res, err := h.scheduleFlights(ctx, m, []domain.ScheduleFlight{flight}, false)
	if err != nil {
		return Result[domain.Flight]{}, err
	}
	return res[0], nil
}

// ScheduleFlights publishes a batch of flights of the calling airline. All
// are validated, and checked against the flights scheduled already, before
// any is stored; each is then its own aggregate, and publishing the same
// flight again changes nothing, so a batch that failed half way (a
// concurrent publisher, a lost connection) can simply be sent again. A
// problem names its item's index with its field ("[0].origin"), in a
// batch of one too.
func (h *Handler) ScheduleFlights(ctx context.Context, m Meta, flights []domain.ScheduleFlight) ([]Result[domain.Flight], error) {
	return h.scheduleFlights(ctx, m, flights, true)
}

func (h *Handler) scheduleFlights(ctx context.Context, m Meta, flights []domain.ScheduleFlight, batch bool) ([]Result[domain.Flight], error) {
	events := make([]domain.FlightScheduled, len(flights))
	var problems domain.Problems
	at := h.now().UTC()
	first := map[string]int{} // flight id → the item that names it first
	for i, c := range flights {
		c.Carrier, c.AWBPrefix, c.At = m.Principal.AirlineCode, m.Principal.AWBPrefix, at
		prefix := ""
		if batch {
			prefix = "[" + itoa(i) + "]."
		}
		e, err := c.Normalise(prefix, h.ref)
		var invalid *domain.Error
		if errors.As(err, &invalid) {
			problems = append(problems, invalid.Fields...)
		} else if err != nil {
			return nil, err
		} else if j, ok := first[e.FlightID]; ok {
			problems.Add(prefix+"flightNumber", domain.CodeDuplicate, "flight %s is item %d of the batch already", e.FlightID, j)
		} else {
			first[e.FlightID] = i
		}
		events[i] = e
	}
	if err := problems.Err(); err != nil {
		return nil, err
	}
	// A flight scheduled otherwise already refuses the whole batch before
	// any of it is stored.
	for _, e := range events {
		f, _, _, err := load(ctx, h, flightAggregate(e.FlightID), domain.EvolveFlight, "", loadFresh)
		if err != nil {
			return nil, err
		}
		if _, err := domain.DecideScheduleFlight(f, e); err != nil {
			return nil, err
		}
	}
	out := make([]Result[domain.Flight], len(events))
	for i, e := range events {
		sub := m
		sub.CommandID = m.CommandID + ":" + e.FlightID
		res, err := execute(ctx, h, flightAggregate(e.FlightID), sub, domain.EvolveFlight,
			func(f domain.Flight) ([]domain.Event, error) { return domain.DecideScheduleFlight(f, e) })
		if err != nil {
			return out[:i], err
		}
		out[i] = res
	}
	return out, nil
}

// ChangeFlightStatus moves one of the calling airline's flights to the
// status c reports, with a delay's estimate; a departure, arrival or
// cancellation gives the shipments on board their DEP, ARR or DIS/OFLD
// with it.
func (h *Handler) ChangeFlightStatus(ctx context.Context, m Meta, flightID string, c domain.ChangeFlightStatus) (Result[domain.Flight], error) {
	c.At = h.now().UTC()
	return onFlight(ctx, h, m, flightID, func(f domain.Flight) (flightChange, error) {
		if err := f.CheckCarrier(m.Principal.AirlineCode); err != nil {
			return flightChange{}, err
		}
		events, err := domain.DecideChangeFlightStatus(f, c)
		return flightChange{events: events}, err
	})
}

// ChangeFlightAircraft records that the calling airline flies one of its
// flights with another aircraft, or offers another capacity on it;
// cargoAircraftOnly tells of a shipment on board whether it holds goods
// for cargo aircraft only (see domain.DecideChangeFlightAircraft).
func (h *Handler) ChangeFlightAircraft(ctx context.Context, m Meta, flightID string, c domain.ChangeFlightAircraft,
	cargoAircraftOnly func(awb string) string) (Result[domain.Flight], error) {
	if !domain.ValidIdentifier(flightID) {
		return Result[domain.Flight]{}, domain.Errorf(domain.NotFound, "no flight %s", flightID)
	}
	c.At = h.now().UTC()
	return execute(ctx, h, flightAggregate(flightID), m, domain.EvolveFlight, func(f domain.Flight) ([]domain.Event, error) {
		if err := f.CheckCarrier(m.Principal.AirlineCode); err != nil {
			return nil, err
		}
		return domain.DecideChangeFlightAircraft(f, c, cargoAircraftOnly)
	})
}

// SetRateCard stores an airline's rate card for a route.
func (h *Handler) SetRateCard(ctx context.Context, m Meta, c domain.SetRateCard) (Result[domain.RateCard], error) {
	c.Carrier, c.At = m.Principal.AirlineCode, h.now().UTC()
	events, err := domain.DecideSetRateCard(c, h.ref)
	if err != nil {
		return Result[domain.RateCard]{}, err
	}
	card := events[0].(domain.RateCardSet)
	agg := domain.Aggregate{Type: domain.AggregateRateCard, ID: domain.RateCardID(card.Carrier, card.Origin, card.Destination)}
	return execute(ctx, h, agg, m, evolveRateCard, func(current domain.RateCard) ([]domain.Event, error) { return card.Changes(current), nil })
}

func evolveRateCard(c domain.RateCard, e domain.Event) domain.RateCard {
	if e, ok := e.(domain.RateCardSet); ok {
		return e.RateCard
	}
	return c
}

// maxManifestChecks bounds how many times a manifest is checked on fresh
// facts because a shipment it loads changed meanwhile.
const maxManifestChecks = 5

// SubmitManifest files the calling airline's manifest of a flight, which
// check gives, its AWBs looked up, with the statuses it gives its
// shipments (see onFlight): the MAN of each shipment it puts on board on
// condition that the shipment's statuses are still at the version its
// facts were read at. So two manifests that load one shipment onto two
// flights at once meet on the shipment, even on two replicas, and the one
// whose facts did not know of the other is checked again on fresh facts,
// from check, which then finds the shipment on board the other flight.
func (h *Handler) SubmitManifest(ctx context.Context, m Meta, flightID string, check func(context.Context) (domain.SubmitManifest, error)) (Result[domain.Flight], error) {
	for checks := 1; ; checks++ {
		c, err := check(ctx)
		if err != nil {
			return Result[domain.Flight]{}, err
		}
		res, err := h.submitManifest(ctx, m, flightID, c)
		var moved shipmentMoved
		if !errors.As(err, &moved) {
			return res, err
		}
		if checks == maxManifestChecks {
			return Result[domain.Flight]{}, domain.Errorf(domain.Conflict,
				"shipment %s changed while the manifest was checked, %d times over: send the manifest again", string(moved), checks)
		}
	}
}

// shipmentMoved is the AWB number of a shipment a manifest would put on
// board whose statuses changed since its facts were read.
type shipmentMoved string

func (s shipmentMoved) Error() string {
	return fmt.Sprintf("shipment %s changed since it was looked up", string(s))
}

// submitManifest files c, with the statuses it gives its shipments; the
// shipments it puts on board only if their statuses are still at the
// versions its facts were read at.
func (h *Handler) submitManifest(ctx context.Context, m Meta, flightID string, c domain.SubmitManifest) (Result[domain.Flight], error) {
	c.ManifestID, c.Carrier, c.At = m.DeriveID("manifest"), m.Principal.AirlineCode, h.now().UTC()
	versions := map[string]uint64{}
	for _, s := range c.Shipments {
		versions[s.AWBNumber] = s.Version
	}
	return onFlight(ctx, h, m, flightID, func(f domain.Flight) (flightChange, error) {
		for _, s := range c.Shipments {
			if s.ReservationGone(f) {
				return flightChange{}, shipmentMoved(s.AWBNumber)
			}
		}
		events, err := domain.DecideSubmitManifest(f, c)
		if err != nil {
			return flightChange{}, err
		}
		guarded := map[string]uint64{}
		for _, l := range events[0].(domain.ManifestSubmitted).Boarding(f) {
			guarded[l.AWBNumber] = versions[l.AWBNumber]
		}
		return flightChange{events: events, guarded: guarded}, nil
	})
}

// ReportOffload records cargo the calling airline took off one of its
// flights, with the shipment's DIS/OFLD.
func (h *Handler) ReportOffload(ctx context.Context, m Meta, flightID string, c domain.ReportOffload) (Result[domain.Flight], error) {
	c.OffloadID, c.Carrier, c.At = m.DeriveID("offload"), m.Principal.AirlineCode, h.now().UTC()
	return onFlight(ctx, h, m, flightID, func(f domain.Flight) (flightChange, error) {
		events, err := domain.DecideReportOffload(f, c)
		return flightChange{events: events}, err
	})
}

// flightChange is what a command on a flight decided: the flight's event
// (one, or none), and the shipments whose statuses it changes only if
// they are still at the version given (by AWB number).
type flightChange struct {
	events  []domain.Event
	guarded map[string]uint64
}

// onFlight runs a command on the flight flightID, and stores the statuses
// its event gives the shipments (domain.StatusesFrom) with it, in one
// decision: so a shipment's statuses follow its flights' events in the
// order they happened (a shipment offloaded and manifested again at once
// is not told the offload last), and its webhooks with them. The event
// says so (domain.WithStatusesStored), and the shipments reactor leaves
// it alone; each status is the reactor's own step for the event all the
// same. A status of a guarded shipment that moved on is shipmentMoved.
func onFlight(ctx context.Context, h *Handler, m Meta, flightID string, decide func(domain.Flight) (flightChange, error)) (Result[domain.Flight], error) {
	if !domain.ValidIdentifier(flightID) {
		return Result[domain.Flight]{}, domain.Errorf(domain.NotFound, "no flight %s", flightID)
	}
	flight := flightAggregate(flightID)
	stored := domain.Record{Envelope: domain.Envelope{EventID: eventID(m, flight, 0), CorrelationID: m.CorrelationID}}
	var res *Result[domain.Flight]
	var statuses []*Result[domain.Shipment]
	ranBefore := true
	err := transact(ctx, h, func(t *transaction) (err error) {
		var change flightChange
		statuses, ranBefore = nil, true
		var told []domain.ShipmentStatusRecorded
		res, err = decideIn(t, flight, m, domain.EvolveFlight, func(f domain.Flight) ([]domain.Event, error) {
			ranBefore = false
			change, err = decide(f)
			if err == nil && len(change.events) > 0 {
				change.events[0] = domain.WithStatusesStored(change.events[0])
				told = domain.StatusesFrom(change.events[0], domain.EvolveFlight(f, change.events[0]), stored.EventID)
			}
			return change.events, err
		})
		if err != nil {
			return err
		}
		// In AWB order: two commands take the shipments' locks in the
		// same order, and never wait for each other in a circle. (Stable:
		// cargo found on board gets its MAN, then its DEP.)
		slices.SortStableFunc(told, func(a, b domain.ShipmentStatusRecorded) int { return cmp.Compare(a.AWBNumber, b.AWBNumber) })
		for _, sts := range domain.StatusesByShipment(told) {
			awb := sts[0].AWBNumber
			sm := step(stored, "status:"+awb)
			if version, ok := change.guarded[awb]; ok {
				sm.IfVersion = &version
			}
			status, err := decideIn(t, shipmentAggregate(awb), sm, domain.EvolveShipment, func(s domain.Shipment) ([]domain.Event, error) {
				return domain.DecideStatusFrom(s, sts...), nil
			})
			if domain.ErrorCode(err) == domain.PreconditionFailed {
				return shipmentMoved(awb)
			}
			if err != nil {
				return err
			}
			statuses = append(statuses, status)
		}
		return nil
	})
	if err != nil {
		return Result[domain.Flight]{}, err
	}
	// A reader that has reached Sequence sees the statuses too: those of
	// a command that ran before as well (they were stored with it).
	if ranBefore && res.Event != nil {
		for _, sts := range domain.StatusesByShipment(domain.StatusesFrom(res.Event, res.State, stored.EventID)) {
			awb := sts[0].AWBNumber
			_, _, done, err := load(ctx, h, shipmentAggregate(awb), domain.EvolveShipment, step(stored, "status:"+awb).CommandID, loadFresh)
			if err != nil {
				return Result[domain.Flight]{}, err
			}
			res.Sequence = max(res.Sequence, done)
		}
	}
	for _, status := range statuses {
		res.Sequence = max(res.Sequence, status.Sequence)
	}
	return *res, nil
}
