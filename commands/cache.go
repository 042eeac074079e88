package commands

import (
	"sync"

	"github.com/cargostream/cargostream/eventstore"
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
	entries map[eventstore.Aggregate]cacheEntry
}

type cacheEntry struct {
	state    any               // the aggregate's state, never changed in place
	last     uint64            // sequence of the last event in state
	commands map[string]uint64 // command id → sequence of its last event
}

func (c *aggregateCache) get(agg eventstore.Aggregate) (cacheEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[agg]
	return e, ok
}

// put keeps e unless the cache already holds a newer state.
func (c *aggregateCache) put(agg eventstore.Aggregate, e cacheEntry) {
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
