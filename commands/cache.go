package commands

import (
	"maps"
	"sync"

	"github.com/cargostream/cargostream/domain"
)

// maxCachedAggregates bounds the cache; past it the cache starts afresh.
const maxCachedAggregates = 20000

// aggregateCache keeps the state of the aggregates this process loaded
// lately, so that a load reads only the events appended since: a flight
// with hundreds of bookings is not replayed for each new one. The event
// store stays the authority: every load asks it for newer events, and
// every append checks the sequence the state was built to.
type aggregateCache struct {
	mu      sync.Mutex
	entries map[domain.Aggregate]cacheEntry
}

type cacheEntry struct {
	state    any               // the aggregate's state, never changed in place
	last     uint64            // sequence of the last event in state
	commands map[string]uint64 // command id → sequence of its last event
}

func (c *aggregateCache) get(agg domain.Aggregate) (cacheEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[agg]
	return e, ok
}

// put keeps e unless the cache already holds a newer state.
func (c *aggregateCache) put(agg domain.Aggregate, e cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.entries[agg]; ok && old.last >= e.last {
		return
	}
	if len(c.entries) >= maxCachedAggregates {
		clear(c.entries)
	}
	c.entries[agg] = e
}

// extend records e, the state after one more decision, if the cache holds
// the state it was decided after, ending at sequence base: the command
// ids of e are then those of that state and commandID. Otherwise the
// cache is left as it is; a later load reads what it lacks.
func (c *aggregateCache) extend(agg domain.Aggregate, base uint64, e cacheEntry, commandID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.entries[agg]
	if base != 0 && (!ok || old.last != base) {
		return
	}
	e.commands = maps.Clone(old.commands)
	if e.commands == nil {
		e.commands = map[string]uint64{}
	}
	e.commands[commandID] = e.last
	if len(c.entries) >= maxCachedAggregates {
		clear(c.entries)
	}
	c.entries[agg] = e
}

// pipeline is an aggregate's state after the decisions this process has
// handed to the store and not yet seen stored, and the last of them, which
// the next decision follows. Its fields change under the aggregate's lock
// and the pipelines' mutex both.
type pipeline struct {
	state any
	tail  domain.PendingAppend
	// commands are the ids of the commands decided in the pipeline,
	// pending or stored since, and base those of the state it began
	// from: a retried command is not decided again on the pipeline's
	// state, where no expected sequence would catch it.
	commands map[string]int
	base     map[string]uint64
}

// pipelines are the aggregates' pipelines. A pipeline ends when its last
// decision has its answer and the cache holds what it decided.
type pipelines struct {
	mu sync.Mutex
	m  map[domain.Aggregate]*pipeline
}

// get returns agg's pipeline, or nil when nothing is pending on it.
func (ps *pipelines) get(agg domain.Aggregate) *pipeline {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.m[agg]
}

// decided reports whether commandID was decided on agg before or during
// its pipeline.
func (ps *pipelines) decided(agg domain.Aggregate, commandID string) bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p := ps.m[agg]
	if p == nil {
		return false
	}
	_, during := p.commands[commandID]
	return during || p.base[commandID] != 0
}

// push makes tail, of commandID, agg's last pending decision, after which
// agg is in state; base are the command ids of the state a new pipeline
// begins from.
func (ps *pipelines) push(agg domain.Aggregate, state any, tail domain.PendingAppend, commandID string, base map[string]uint64) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.m == nil {
		ps.m = map[domain.Aggregate]*pipeline{}
	}
	p := ps.m[agg]
	if p == nil {
		p = &pipeline{commands: map[string]int{}, base: base}
		ps.m[agg] = p
	}
	p.state, p.tail = state, tail
	p.commands[commandID]++
}

// done ends agg's pipeline if decision, which has its answer, was its
// last.
func (ps *pipelines) done(agg domain.Aggregate, decision domain.PendingAppend) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p := ps.m[agg]
	if p == nil {
		return
	}
	if p.tail == decision {
		delete(ps.m, agg)
	}
}
