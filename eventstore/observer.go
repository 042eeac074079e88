package eventstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Observer hears what the store does, for metrics. Its methods are called
// on the store's busiest paths, the committer's goroutine among them: they
// must be quick, must not block, and may be called concurrently.
type Observer interface {
	// BatchStored: one write of events to the event stream was stored
	// (an atomic batch, or a single event), and the server took took.
	BatchStored(events int, took time.Duration)
	// DecisionStored: a decision's events were stored, took after it was
	// handed to the committer.
	DecisionStored(took time.Duration)
	// EventStored: one event of type eventType was stored.
	EventStored(eventType string)
	// EventParked: consumer gave up on an event and parked it.
	EventParked(consumer string)
	// PullHeld: the first pull of a read, or of a reactor's, a queue's
	// workers' or parked retries' consumer, was held back, as this
	// process's server did not route it to the consumer, new, yet, and
	// would have dropped it (see waitRouted). Once per pull held.
	PullHeld()
}

// unobserved is the Observer of a store given none.
type unobserved struct{}

func (unobserved) BatchStored(int, time.Duration) {}
func (unobserved) DecisionStored(time.Duration)   {}
func (unobserved) EventStored(string)             {}
func (unobserved) EventParked(string)             {}
func (unobserved) PullHeld()                      {}

// Backlog is the work waiting for a consumer that all replicas share.
type Backlog struct {
	Consumer string // the name given to Consume, or "queue:" and a queue's name
	Pending  uint64 // not handed to any replica yet (a queue's: due now or later)
	InHand   uint64 // handed out and not acknowledged: being handled, or (a queue's jobs) waiting after a failure to requeue
	Parked   uint64 // parked events (Consume's consumers only)
}

// Backlogs reads from the server the backlog of every consumer made by
// Consume on this store's stream, whichever replica runs it.
func (s *Store) Backlogs(ctx context.Context) ([]Backlog, error) {
	parked, err := s.parkedCounts(ctx)
	if err != nil {
		return nil, err
	}
	var out []Backlog
	infos := s.stream.ListConsumers(ctx)
	for info := range infos.Info() {
		// Ordered consumers (the projectors', cargoctl's) have no
		// durable name; durables of other programs not our prefix.
		name, ok := strings.CutPrefix(info.Config.Durable, s.prefix+"-")
		if !ok {
			continue
		}
		out = append(out, Backlog{Consumer: name, Pending: info.NumPending, InHand: uint64(info.NumAckPending), Parked: parked[name]})
	}
	if err := infos.Err(); err != nil {
		return nil, fmt.Errorf("eventstore: consumers of %s: %w", s.name, err)
	}
	return out, nil
}

// Backlog reads the queue's backlog from the server. Its pending jobs are
// those due now and those due later: the stream holds nothing else, each
// job stored until done, and a job due later as its schedule.
func (q *Queue) Backlog(ctx context.Context) (Backlog, error) {
	info, err := q.handle.Info(ctx)
	if err != nil {
		return Backlog{}, fmt.Errorf("eventstore: queue %s: %w", q.stream, err)
	}
	jobs := info.State.Msgs
	cons, err := q.s.js.Consumer(ctx, q.stream, queueWorkers)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		return Backlog{Consumer: "queue:" + q.name, Pending: jobs}, nil // no worker has started yet
	}
	if err != nil {
		return Backlog{}, fmt.Errorf("eventstore: queue %s: %w", q.stream, err)
	}
	inHand := uint64(cons.CachedInfo().NumAckPending)
	// The two reads are moments apart: a job done in between must not
	// make the count wrap around.
	return Backlog{Consumer: "queue:" + q.name, Pending: jobs - min(inHand, jobs), InHand: inHand}, nil
}
