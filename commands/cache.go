package commands

import (
	"sync"

	"github.com/cargostream/cargostream/domain"
)

// maxCachedAggregates bounds the cache (see aggregateCache.set).
const maxCachedAggregates = 20000

// aggregateCache keeps the state of the aggregates this process loaded
// lately, so that a load reads only the events appended since: a flight
// with hundreds of bookings is not replayed for each new one. The event
// store stays the authority: every load asks it for newer events, and
// every append checks the sequence the state was built to.
//
// It keeps two generations: entries, and older, which entries were until
// they filled up. An aggregate looked up in older moves back to entries,
// so those in use (a busy flight, an AWB stock ledger of thousands of
// events) stay, while those used once (most quotes and bookings) go with
// their generation. Emptied whole when full, the cache made every busy
// aggregate's next load read its whole history again, under its lock.
type aggregateCache struct {
	mu             sync.Mutex
	entries, older map[domain.Aggregate]cacheEntry
}

func newAggregateCache() aggregateCache {
	return aggregateCache{entries: map[domain.Aggregate]cacheEntry{}}
}

type cacheEntry struct {
	state    any           // the aggregate's state, never changed in place
	last     uint64        // sequence of the last event in state
	commands *commandIndex // the commands in state and, past last, newer ones
}

// ran returns the sequence of the last event of commandID if the command
// is in the entry's state, else 0.
func (e cacheEntry) ran(commandID string) uint64 {
	if e.commands == nil {
		return 0
	}
	if seq := e.commands.at(commandID); seq <= e.last {
		return seq
	}
	return 0
}

// commandIndex maps the ids of the commands in an aggregate's history to
// the sequence of each one's last event. It only grows, and only with
// sequences the store gave, so the entries of one aggregate share it,
// each seeing the commands up to its own last sequence: a decision adds
// its command instead of copying the ids of a long history (an AWB
// ledger's thousands) under the cache's lock.
type commandIndex struct {
	mu  sync.RWMutex
	seq map[string]uint64
}

func newCommandIndex() *commandIndex { return &commandIndex{seq: map[string]uint64{}} }

// add records that commandID's events reach to sequence seq. Loads of
// the same events may add them in any order: the latest sequence stays.
func (x *commandIndex) add(commandID string, seq uint64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.seq[commandID] = max(x.seq[commandID], seq)
}

func (x *commandIndex) at(commandID string) uint64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.seq[commandID]
}

func (c *aggregateCache) get(agg domain.Aggregate) (cacheEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lookup(agg)
}

// lookup finds agg's entry, and moves it to the newer generation if it
// was in the older. The cache's lock is held.
func (c *aggregateCache) lookup(agg domain.Aggregate) (cacheEntry, bool) {
	if e, ok := c.entries[agg]; ok {
		return e, true
	}
	e, ok := c.older[agg]
	if ok {
		c.set(agg, e)
	}
	return e, ok
}

// put keeps e unless the cache already holds a newer state.
func (c *aggregateCache) put(agg domain.Aggregate, e cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.lookup(agg); ok && old.last >= e.last {
		return
	}
	c.set(agg, e)
}

// extend records state, the aggregate after commandID's decision, which
// ends at sequence last, if the cache holds the state it was decided
// after, ending at base (0: none, a new aggregate). Otherwise the cache
// is left as it is; a later load reads what it lacks.
func (c *aggregateCache) extend(agg domain.Aggregate, base uint64, state any, last uint64, commandID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.lookup(agg)
	switch {
	case ok && old.last == base:
	case !ok && base == 0:
		old.commands = newCommandIndex()
	default:
		return
	}
	old.commands.add(commandID, last)
	c.set(agg, cacheEntry{state: state, last: last, commands: old.commands})
}

// set keeps e as agg's entry in the newer generation. A full newer
// generation (half the cache) becomes the older, and the older goes. The
// cache's lock is held.
func (c *aggregateCache) set(agg domain.Aggregate, e cacheEntry) {
	if _, ok := c.entries[agg]; !ok && len(c.entries) >= maxCachedAggregates/2 {
		c.older, c.entries = c.entries, make(map[domain.Aggregate]cacheEntry, maxCachedAggregates/2)
	}
	c.entries[agg] = e
	delete(c.older, agg)
}

// pipeline is an aggregate's state after the decisions this process has
// handed to the store and not yet seen stored, and the last of them, which
// the next decision follows. state, tail, commands and base change under
// the aggregate's lock and the pipelines' mutex both; steps and written
// under the mutex.
type pipeline struct {
	state any
	tail  domain.PendingAppend
	// commands are the ids of the commands decided in the pipeline,
	// pending or stored since, and base the state it began from: a
	// retried command is not decided again on the pipeline's state,
	// where no expected sequence would catch it.
	commands map[string]bool
	base     cacheEntry
	// steps are the decisions whose outcome the cache has yet to take, in
	// the order they were decided, and written the sequence of the last
	// one taken (0 if it was not stored): the cache takes them in that
	// order, whichever of their callers learns its outcome first, so a
	// burst leaves it current.
	steps   []*pipelineStep
	written uint64
}

// pipelineStep is one decision of a pipeline, as the cache is to take it.
type pipelineStep struct {
	pending   domain.PendingAppend
	state     any // the aggregate after it
	commandID string
	follows   bool   // decided after the step before it
	base      uint64 // else: the sequence of the state it was decided on
	answered  bool
	last      uint64 // once answered: the sequence of its last event, 0 if not stored
}

// pipelines are the aggregates' pipelines. A pipeline ends once the cache
// has taken the outcome of each of its decisions.
type pipelines struct {
	mu sync.Mutex
	m  map[domain.Aggregate]*pipeline
}

// get returns agg's pipeline, or nil when nothing is pending on it, and
// whether commandID was decided on agg before or during that pipeline:
// one look, as the pipeline may end at any moment.
func (ps *pipelines) get(agg domain.Aggregate, commandID string) (pipe *pipeline, decided bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p := ps.m[agg]
	return p, p != nil && (p.commands[commandID] || p.base.ran(commandID) != 0)
}

// push makes s agg's last pending decision: decided on the state of pipe
// if s.follows, else on base.
func (ps *pipelines) push(agg domain.Aggregate, pipe *pipeline, s *pipelineStep, base cacheEntry) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.m == nil {
		ps.m = map[domain.Aggregate]*pipeline{}
	}
	p := ps.m[agg]
	switch {
	case s.follows:
		// pipe goes on, though its decisions may have ended meanwhile.
		p = pipe
	case p == nil:
		p = &pipeline{}
	}
	ps.m[agg] = p
	if !s.follows {
		// The decisions before it are over: it begins anew, from base.
		p.commands, p.base = map[string]bool{}, base
	}
	p.state, p.tail = s.state, s.pending
	p.commands[s.commandID] = true
	p.steps = append(p.steps, s)
}

// settle gives s, a step of agg's pipeline, its outcome: the sequence of
// its last event, or 0 if it was not stored. The cache then takes the
// outcomes that are next in order.
func (ps *pipelines) settle(cache *aggregateCache, agg domain.Aggregate, s *pipelineStep, last uint64) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	s.answered, s.last = true, last
	p := ps.m[agg]
	for len(p.steps) > 0 && p.steps[0].answered {
		s := p.steps[0]
		p.steps[0], p.steps = nil, p.steps[1:]
		base := s.base
		if s.follows {
			base = p.written
		}
		// One decided after a decision that failed failed too.
		if s.last != 0 && (!s.follows || base != 0) {
			cache.extend(agg, base, s.state, s.last, s.commandID)
		}
		p.written = s.last
	}
	if len(p.steps) == 0 {
		delete(ps.m, agg)
	}
}
