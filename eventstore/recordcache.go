package eventstore

import (
	"strings"
	"sync"

	"github.com/cargostream/cargostream/domain"
)

// DefaultRecordCacheBytes is how much memory RecordsAt's cache of events
// may take when Options say nothing: some 35,000 events of the load
// tool's history (0.9 kB each), the reads of 200 or more pages of 100
// entries of the audit log.
const DefaultRecordCacheBytes = 32 << 20

// recordCache keeps the events RecordsAt read, by stream sequence. An
// event is never changed once stored, so a kept one is never stale: a page
// of the audit log read again (readers read the newest pages, many at
// once) costs no read of the stream, each of which is a round trip to
// the stream's leader and a JSON answer to decode: 160 readers at once got
// 100 to 250 pages a second on two cores that way (BenchmarkAuditPages).
//
// It keeps two generations, each up to half its bytes: events go into the
// young one, and when that is full the old one is dropped and the young
// one becomes the old. An event found in the old one is added to the
// young one again, so that those read often stay. That is close to LRU
// without a list to keep in order under the lock, which every page read
// takes once.
//
// An event being read is read once: the callers that want it meanwhile
// wait for that read (see pendingRead). Without that, 160 pages read at
// once, which want the same events, each read all of them, as if there
// were no cache.
type recordCache struct {
	mu         sync.Mutex
	half       int // bytes of a generation
	young, old map[uint64]domain.Record
	youngBytes int
	pending    map[uint64]*pendingRead
}

// pendingRead is a read of an event under way, which other callers wait
// for.
type pendingRead struct {
	done chan struct{} // closed when the read is over
	r    domain.Record
	err  error // why it was not read
}

// newRecordCache returns a cache of about bytes of memory, or nil (no
// cache) for bytes ≤ 0.
func newRecordCache(bytes int) *recordCache {
	if bytes <= 0 {
		return nil
	}
	return &recordCache{half: bytes / 2, young: map[uint64]domain.Record{}, pending: map[uint64]*pendingRead{}}
}

// cacheMiss is an event the cache does not hold: out[i] is to be read by
// the caller, who then calls done, or, when wait is set, by another,
// whose read wait tells the end of.
type cacheMiss struct {
	i    int
	wait *pendingRead
}

// lookup fills out[i] with the kept event at seqs[i], and returns those
// it does not keep: first those the caller is to read, then those it
// waits for. Each of the first the caller must end with done.
func (c *recordCache) lookup(seqs []uint64, out []domain.Record) []cacheMiss {
	var reads, waits []cacheMiss
	if c == nil {
		for i := range seqs {
			reads = append(reads, cacheMiss{i: i})
		}
		return reads
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, seq := range seqs {
		r, ok := c.young[seq]
		if !ok {
			if r, ok = c.old[seq]; ok {
				c.addLocked(r)
			}
		}
		switch p := c.pending[seq]; {
		case ok:
			out[i] = r
		case p != nil:
			waits = append(waits, cacheMiss{i: i, wait: p})
		default:
			c.pending[seq] = &pendingRead{done: make(chan struct{})}
			reads = append(reads, cacheMiss{i: i})
		}
	}
	// The caller's own reads start first: a wait for one of them (a
	// sequence asked twice) must not hold the place it needs to start.
	return append(reads, waits...)
}

// done ends the read of the event at seq that lookup gave the caller,
// which read r or failed with err: r is kept, unless zero (no event
// there, which a sequence past the last will have), and r or err handed
// to those waiting. A store that did not answer one did not answer them
// either: each trying again would make a page's 503 wait the timeout of
// the store once more.
func (c *recordCache) done(seq uint64, r domain.Record, err error) {
	if c == nil {
		return
	}
	if err == nil && r.Sequence != 0 {
		// The type is a slice of the message's whole header block
		// (see recordFrom), which it would keep: 600 bytes for a
		// 20-byte name.
		r.Type = strings.Clone(r.Type)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending[seq]
	delete(c.pending, seq)
	if err == nil && r.Sequence != 0 {
		c.addLocked(r)
	}
	p.r, p.err = r, err
	close(p.done)
}

func (c *recordCache) addLocked(r domain.Record) {
	if _, ok := c.young[r.Sequence]; ok {
		return
	}
	c.young[r.Sequence] = r
	c.youngBytes += recordBytes(r)
	if c.youngBytes >= c.half {
		c.old, c.young, c.youngBytes = c.young, make(map[uint64]domain.Record, len(c.young)), 0
	}
}

// recordOverhead is what a kept record takes beyond its strings and data:
// the record itself (224 bytes) and its share of the map's slots,
// and the rounding up of its allocations to their size classes.
const recordOverhead = 448

// recordBytes is about the memory r takes in the cache.
func recordBytes(r domain.Record) int {
	return recordOverhead + len(r.Data) + len(r.Type) + len(r.EventID) + len(r.CommandID) + len(r.CorrelationID) + len(r.CausationID) +
		len(r.Actor) + len(r.Tenant) + len(r.ClientIP) + len(r.Aggregate.Type) + len(r.Aggregate.ID)
}
