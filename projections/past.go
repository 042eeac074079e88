package projections

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/cargostream/cargostream/domain"
)

// Histories is what the past states, the histories and the audit log
// take of the event store (eventstore.Store implements it): every event
// of one aggregate, oldest first, the sequence the stream has reached,
// and events by sequence.
type Histories interface {
	Load(ctx context.Context, agg domain.Aggregate) ([]domain.Record, error)
	LastSequence(ctx context.Context) (uint64, error)
	EventsAt
}

// Cut says which events of a history a past state is folded from: those
// up to stream sequence Sequence when it is set, else those that occurred
// at or before At. The zero time is a moment too (the first instant of
// year 1), before every event, not "now".
type Cut struct {
	At       time.Time
	Sequence uint64
}

// everything is the cut of a resource as it is now.
var everything = Cut{Sequence: math.MaxUint64}

func (c Cut) includes(r domain.Record) bool {
	if c.Sequence != 0 {
		return r.Sequence <= c.Sequence
	}
	return !r.OccurredAt.After(c.At)
}

func (c Cut) String() string {
	if c.Sequence != 0 {
		return fmt.Sprintf("sequence %d", c.Sequence)
	}
	return c.At.UTC().Format(time.RFC3339Nano)
}

// Past answers what a resource was at a past moment: its events up to
// then, folded into read models of its own, empty at first, by the same
// Apply as the live ones. So a past state reads exactly as the live one
// read then, and is rendered by the same views.
type Past struct {
	history Histories
}

// NewPast returns the past states of the aggregates in history.
func NewPast(history Histories) *Past { return &Past{history: history} }

// Quote is the quote id as p saw it at cut, and its version then.
func (p *Past) Quote(ctx context.Context, who domain.Principal, id string, cut Cut) (domain.Quote, uint64, error) {
	return pastOf(ctx, p, domain.Aggregate{Type: domain.AggregateQuote, ID: id}, cut, "quote", NewQuotes,
		func(m *Quotes) (domain.Quote, bool) { return m.Get(who, id) })
}

// Booking is the booking id as p saw it at cut, and its version then.
func (p *Past) Booking(ctx context.Context, who domain.Principal, id string, cut Cut) (domain.Booking, uint64, error) {
	return pastOf(ctx, p, domain.Aggregate{Type: domain.AggregateBooking, ID: id}, cut, "booking", NewBookings,
		func(m *Bookings) (domain.Booking, bool) { return m.Get(who, id) })
}

// StockRequest is the stock request id as p saw it at cut, and its
// version then.
func (p *Past) StockRequest(ctx context.Context, who domain.Principal, id string, cut Cut) (domain.StockRequest, uint64, error) {
	return pastOf(ctx, p, domain.Aggregate{Type: domain.AggregateStockRequest, ID: id}, cut, "stock request", NewAWBStock,
		func(m *AWBStock) (domain.StockRequest, bool) {
			r, _, ok := m.Request(who, id)
			return r, ok
		})
}

// Flight is the flight id at cut (every caller sees every flight), and
// its version then.
func (p *Past) Flight(ctx context.Context, id string, cut Cut) (domain.Flight, uint64, error) {
	return pastOf(ctx, p, domain.Aggregate{Type: domain.AggregateFlight, ID: id}, cut, "flight", NewFlights,
		func(m *Flights) (domain.Flight, bool) { return m.Get(id) })
}

// pastOf folds agg's history up to cut into a new model and gets the
// resource from it. A resource the caller may not see now is not found,
// at any moment; one it may see was not there yet before its first event.
func pastOf[M ReadModel, T any](ctx context.Context, p *Past, agg domain.Aggregate, cut Cut, kind string,
	newModel func() M, get func(M) (T, bool)) (T, uint64, error) {
	var none T
	if !domain.ValidIdentifier(agg.ID) {
		return none, 0, domain.Errorf(domain.NotFound, "no %s %s", kind, agg.ID)
	}
	if err := p.reached(ctx, cut); err != nil {
		return none, 0, err
	}
	recs, err := p.history.Load(ctx, agg)
	if err != nil {
		return none, 0, err
	}
	now := newModel()
	fold(recs, everything, now)
	if _, ok := get(now); !ok {
		return none, 0, domain.Errorf(domain.NotFound, "no %s %s", kind, agg.ID)
	}
	then := newModel()
	version := fold(recs, cut, then)
	v, ok := get(then)
	if !ok {
		return none, 0, domain.Errorf(domain.NotFound, "%s %s did not exist at %s", kind, agg.ID, cut)
	}
	return v, version, nil
}

// ShipmentParts are the read models a shipment's representation is drawn
// from, as the live ones or a past moment's.
type ShipmentParts struct {
	Bookings  *Bookings
	Shipments *Shipments
	Documents *Documents
}

// Exists reports whether the parts know a shipment of the AWB number:
// one booked, or with events in its timeline.
func (p ShipmentParts) Exists(awb string) bool {
	_, booked := p.Bookings.ByAWB(awb)
	return booked || len(p.Shipments.Timeline(awb)) > 0
}

// Shipment is the shipment of a (canonical) AWB number at cut: its status
// events, waybills and filings, and the booking and documents the live
// parts know of it, each folded from its events up to cut. Whether the
// caller may see the shipment is the caller's to check
// (domain.ShipmentOwnership).
func (p *Past) Shipment(ctx context.Context, live ShipmentParts, awb string, cut Cut) (ShipmentParts, error) {
	if err := p.reached(ctx, cut); err != nil {
		return ShipmentParts{}, err
	}
	aggs := []domain.Aggregate{
		{Type: domain.AggregateShipment, ID: awb}, {Type: domain.AggregateWaybill, ID: awb}, {Type: domain.AggregateCompliance, ID: awb},
	}
	// Every booking that used the number: at cut, an earlier one may
	// have held it.
	for _, id := range live.Bookings.AllByAWB(awb) {
		aggs = append(aggs, domain.Aggregate{Type: domain.AggregateBooking, ID: id})
	}
	for _, d := range live.Documents.ByAWB(awb) {
		aggs = append(aggs, domain.Aggregate{Type: domain.AggregateDocument, ID: d.DocumentID})
	}
	var recs []domain.Record
	for _, agg := range aggs {
		more, err := p.history.Load(ctx, agg)
		if err != nil {
			return ShipmentParts{}, err
		}
		recs = append(recs, more...)
	}
	// In stream order, as the live read models applied them.
	slices.SortFunc(recs, func(a, b domain.Record) int { return cmp.Compare(a.Sequence, b.Sequence) })
	then := ShipmentParts{Bookings: NewBookings(), Shipments: NewShipments(), Documents: NewDocuments()}
	fold(recs, cut, then.Bookings, then.Shipments, then.Documents)
	if !then.Exists(awb) {
		return ShipmentParts{}, domain.Errorf(domain.NotFound, "shipment %s did not exist at %s", awb, cut)
	}
	return then, nil
}

// reached refuses a cut at a sequence the stream has not reached, as
// the API refuses a time to come: what a resource is then is not known
// yet, and an answer would change as events are stored.
func (p *Past) reached(ctx context.Context, cut Cut) error {
	if cut.Sequence == 0 {
		return nil
	}
	last, err := p.history.LastSequence(ctx)
	if err != nil {
		return err
	}
	if cut.Sequence > last {
		var problems domain.Problems
		problems.Add("seq", domain.CodeInvalidRange, "the stream has not reached sequence %d yet: what a resource will be is not known yet", cut.Sequence)
		return problems.Err()
	}
	return nil
}

// fold applies the events of recs up to the first that cut leaves out to
// models, and returns the sequence of the last one applied, 0 if none
// was. The clocks of replicas may disagree a little: a state is folded
// from a run of events as they were stored, never with a gap. An event
// this version cannot decode (a newer version's) is skipped, as the live
// read models skip it (see Projector.skip), so that a past state reads
// as the live one did.
func fold(recs []domain.Record, cut Cut, models ...ReadModel) uint64 {
	var last uint64
	for _, r := range recs {
		if !cut.includes(r) {
			break
		}
		e, err := domain.DecodeEvent(r.Type, r.Data)
		if err != nil {
			continue
		}
		for _, m := range models {
			m.Apply(r, e)
		}
		last = r.Sequence
	}
	return last
}
