package commands

import (
	"context"
	"fmt"

	"github.com/cargostream/cargostream/domain"
)

// transaction is a decision across aggregates in the making: its parts,
// each decided under its aggregate's lock, which it holds until all of
// them are handed to the store together (see transact).
type transaction struct {
	ctx    context.Context
	h      *Handler
	how    loading
	parts  []*part
	waits  []func() error              // fill in what decideIn could not at once, after the locks
	locked map[domain.Aggregate]func() // the aggregates' locks, with their releases
}

// transact carries out a decision across aggregates: decide decides its
// parts, one aggregate after another, with decideIn, and they are stored
// together, in one atomic batch, or not at all. A refusal or failure from
// decide stores nothing; a conflict on any part decides every part again,
// on fresh states. Each part is a command with an id of its own, so a
// retried transaction repeats nothing that it stored before.
//
// Each part is decided as execute decides a command, on the aggregate's
// pending state when there is one, so that transactions on a busy
// aggregate share batches. The locks are taken in the order decide names
// the aggregates and held until the parts are handed over; a command
// holds one lock at a time, so transactions that name aggregates in the
// same order never wait for each other in a circle. Every transaction
// names its aggregates in this order, leaving out those it does not
// touch: AWB prefix, stock request, flight, AWB ledger, quote, booking,
// waybill, a shipment's filings or a document, shipments (by AWB number).
// Apart from those, an airline's creation names its identifier
// claims before its organisation, and a webhook's registration or
// deletion its organisation's webhook quota before the webhook; no other
// transaction touches them.
func transact(ctx context.Context, h *Handler, decide func(*transaction) error) error {
	return transactFrom(ctx, h, loadCached, decide)
}

// transactFrom is transact, whose first try loads the aggregates as first
// says.
func transactFrom(ctx context.Context, h *Handler, first loading, decide func(*transaction) error) error {
	how := first
	return retryOnConflict(ctx, func() error {
		t := &transaction{ctx: ctx, h: h, how: how, locked: map[domain.Aggregate]func(){}}
		how = loadFresh // a conflict means another writer: load from the store
		if err := t.decide(decide); err != nil {
			return err
		}
		var err error
		// The locks are let go. Every part's wait settles its pipeline
		// step: wait for all.
		for _, wait := range t.waits {
			if e := wait(); err == nil {
				err = e
			}
		}
		return err
	})
}

// decide decides t's parts and hands them to the store together, then
// releases the aggregates' locks, even when decide panics: the reactors
// park an event whose handling panics and go on, and a lock left held
// would stop every later command on its aggregate.
func (t *transaction) decide(decide func(*transaction) error) error {
	defer func() {
		for _, unlock := range t.locked {
			unlock()
		}
	}()
	if err := decide(t); err != nil || len(t.parts) == 0 {
		return err
	}
	return t.h.handOver(t.ctx, t.parts...)
}

// decideIn decides the command m on agg as a part of t. Its result's State
// is agg's state after m at once (with its events, or as it stands when m
// decided nothing or ran before). So is the rest of the result, as execute
// gives it, when m decided nothing, and all of it but the Event when m ran
// before: its own event, which the store is asked for once transact has
// let go of t's locks, so that no command on agg waits for that round
// trip. When m decided events, the rest is filled in once transact has
// stored the transaction, and the whole result emptied if it was not. A
// refusal stops the transaction, which then stores nothing.
func decideIn[S any](t *transaction, agg domain.Aggregate, m Meta, evolve func(S, domain.Event) S, decide func(S) ([]domain.Event, error)) (*Result[S], error) {
	if t.locked[agg] != nil {
		return nil, fmt.Errorf("commands: a transaction decides on %s twice", agg)
	}
	t.locked[agg] = t.h.aggregates.lock(agg.String())
	now, stored, p, err := decideHeld(t.ctx, t.h, agg, m, evolve, decide, t.how)
	if err != nil {
		return nil, err
	}
	res := &now
	if p != nil {
		t.parts = append(t.parts, p)
	}
	if stored != nil {
		t.waits = append(t.waits, func() (err error) {
			*res, err = stored() // none, if it fails
			return err
		})
	}
	return res, nil
}
