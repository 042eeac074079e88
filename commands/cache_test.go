package commands

import (
	"strconv"
	"testing"

	"github.com/cargostream/cargostream/domain"
)

// An aggregate in use stays cached however many others pass through the
// cache, which stays within its bound; one used once goes with its
// generation.
func TestTheCacheKeepsTheAggregatesInUseAndForgetsThoseUsedOnce(t *testing.T) {
	c := newAggregateCache()
	flight := domain.Aggregate{Type: domain.AggregateFlight, ID: "LH400-2026-12-01"}
	firstQuote := domain.Aggregate{Type: domain.AggregateQuote, ID: "q0"}
	c.put(flight, cacheEntry{state: "flight", last: 1})
	for i := range 3 * maxCachedAggregates {
		c.put(domain.Aggregate{Type: domain.AggregateQuote, ID: "q" + strconv.Itoa(i)}, cacheEntry{state: "quote", last: uint64(i + 2)})
		if i%(maxCachedAggregates/4) == 0 { // the flight is booked now and then
			if _, ok := c.get(flight); !ok {
				t.Fatalf("the flight was forgotten after %d quotes", i)
			}
		}
		if n := len(c.entries) + len(c.older); n > maxCachedAggregates {
			t.Fatalf("%d aggregates cached, more than %d", n, maxCachedAggregates)
		}
	}
	if e, ok := c.get(flight); !ok || e.state != "flight" {
		t.Errorf("the flight in use = %v, %v; want its state", e, ok)
	}
	if _, ok := c.get(firstQuote); ok {
		t.Error("the first quote, used once, is still cached")
	}
}

// An entry found in the older generation is the newest state the cache
// holds: put keeps a newer one, and extend builds on it.
func TestAnOlderGenerationsEntryIsTheCachesState(t *testing.T) {
	c := newAggregateCache()
	agg := domain.Aggregate{Type: domain.AggregateFlight, ID: "LH400-2026-12-01"}
	c.put(agg, cacheEntry{state: "at 5", last: 5, commands: newCommandIndex()})
	for i := range maxCachedAggregates / 2 { // agg goes to the older generation
		c.put(domain.Aggregate{Type: domain.AggregateQuote, ID: "q" + strconv.Itoa(i)}, cacheEntry{last: 1})
	}
	if _, ok := c.older[agg]; !ok {
		t.Fatal("the flight is not in the older generation: the test sets up nothing")
	}
	c.put(agg, cacheEntry{state: "at 4", last: 4})
	c.extend(agg, 5, "at 6", 6, "cmd")
	if e, ok := c.get(agg); !ok || e.state != "at 6" || e.last != 6 || e.ran("cmd") != 6 {
		t.Errorf("the flight = %+v, %v; want its state at 6, decided by cmd", e, ok)
	}
}
