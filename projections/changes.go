package projections

import (
	"container/heap"
	"sync"

	"github.com/cargostream/cargostream/domain"
)

// changes wakes the readers waiting for a change to some aggregates (a
// long poll on a resource, Prefer: wait) when an event of one of them is
// applied, and only them: a broadcast on every event would wake each of
// hundreds of waiters thousands of times a second to find nothing
// changed.
type changes struct {
	mu      sync.Mutex
	waiting map[domain.Aggregate]map[*changeReader]struct{}
}

// changeReader is one reader's wait: ch is closed at the next event of
// any of aggs, and the reader is then taken out from under all of them.
type changeReader struct {
	ch    chan struct{}
	aggs  []domain.Aggregate
	ended bool
}

// wait returns a channel closed once an event of any of aggs is applied
// after this call, and the function that ends the wait (call it in any
// case).
func (c *changes) wait(aggs ...domain.Aggregate) (<-chan struct{}, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waiting == nil {
		c.waiting = map[domain.Aggregate]map[*changeReader]struct{}{}
	}
	r := &changeReader{ch: make(chan struct{}), aggs: aggs}
	for _, agg := range aggs {
		readers := c.waiting[agg]
		if readers == nil {
			readers = map[*changeReader]struct{}{}
			c.waiting[agg] = readers
		}
		readers[r] = struct{}{}
	}
	return r.ch, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.end(r, false)
	}
}

// end takes r out from under each of its aggregates, closing its channel
// if woken, once. Called with c.mu held.
func (c *changes) end(r *changeReader, woken bool) {
	if r.ended {
		return
	}
	r.ended = true
	if woken {
		close(r.ch)
	}
	for _, agg := range r.aggs {
		if delete(c.waiting[agg], r); len(c.waiting[agg]) == 0 {
			delete(c.waiting, agg)
		}
	}
}

// applied wakes the readers waiting for agg.
func (c *changes) applied(agg domain.Aggregate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for r := range c.waiting[agg] {
		c.end(r, true)
	}
}

// appliedMany wakes every reader: events were applied in batches, whose
// aggregates are not told one by one. Each looks again.
func (c *changes) appliedMany() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, readers := range c.waiting {
		for r := range readers {
			c.end(r, true)
		}
	}
}

// StatusOf is the key under which readers wait for a change of the status
// of the flight flightID alone (see ChangeOf): a long poll on a quote
// watches whether its options' flights close, and every booking's
// capacity moves them.
func StatusOf(flightID string) domain.Aggregate {
	return domain.Aggregate{Type: flightStatus, ID: flightID}
}

// flightStatus is the type of the keys StatusOf makes: made once, not at
// every look of a long poll and every status event.
const flightStatus = domain.AggregateFlight + ".status"

// movesStatus are the flight events that wake the readers of a flight's
// status (StatusOf): those that change its status or its times, and with
// them when it closes; not its capacity or load.
var movesStatus = map[string]bool{
	domain.FlightScheduled{}.EventType():     true,
	domain.FlightStatusChanged{}.EventType(): true,
}

// ChangeOf returns a channel closed once an event of agg, or of any of
// also, is applied after this call, and the function that ends the wait,
// to be called in any case. A reader that registers before it looks at a
// read model misses no change: the event is in the models before the
// channel closes.
func (p *Projector) ChangeOf(agg domain.Aggregate, also ...domain.Aggregate) (changed <-chan struct{}, stop func()) {
	return p.changes.wait(append([]domain.Aggregate{agg}, also...)...)
}

// seqWaiters are the readers waiting for a sequence to be applied (each
// write waits for its own, to be read back), a heap by sequence: an event
// applied wakes those it satisfies and no other, where a broadcast on
// every event woke every waiting writer to look again, each taking the
// projector's lock. Guarded by the projector's mu.
type seqWaiters []*seqWaiter

type seqWaiter struct {
	seq     uint64
	reached chan struct{} // closed once seq is applied
	index   int           // in the heap; -1 once out of it
}

// add returns a waiter whose channel is closed once seq is applied.
func (w *seqWaiters) add(seq uint64) *seqWaiter {
	waiter := &seqWaiter{seq: seq, reached: make(chan struct{})}
	heap.Push(w, waiter)
	return waiter
}

// remove takes out a waiter that gave up, unless it was woken already: a
// sequence that never comes (a client's, when the stream could not be
// asked whether it has it) must not keep its waiters for ever.
func (w *seqWaiters) remove(waiter *seqWaiter) {
	if waiter.index >= 0 {
		heap.Remove(w, waiter.index)
	}
}

// wake wakes the readers of every sequence up to applied.
func (w *seqWaiters) wake(applied uint64) {
	for len(*w) > 0 && (*w)[0].seq <= applied {
		close(heap.Pop(w).(*seqWaiter).reached)
	}
}

func (w seqWaiters) Len() int           { return len(w) }
func (w seqWaiters) Less(i, j int) bool { return w[i].seq < w[j].seq }
func (w seqWaiters) Swap(i, j int) {
	w[i], w[j] = w[j], w[i]
	w[i].index, w[j].index = i, j
}
func (w *seqWaiters) Push(x any) {
	waiter := x.(*seqWaiter)
	waiter.index = len(*w)
	*w = append(*w, waiter)
}
func (w *seqWaiters) Pop() any {
	old := *w
	last := old[len(old)-1]
	last.index = -1
	*w = old[:len(old)-1]
	return last
}
