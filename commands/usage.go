package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// KeyValues is a key-value bucket shared by all replicas
// (eventstore.Bucket implements it): Get and GetRevision report false for
// a key without a value; Create stores a value unless the key has one,
// and returns the value stored afterwards and whether it was this one;
// Update replaces a value still at revision, and reports false when
// someone changed it first.
type KeyValues interface {
	Get(ctx context.Context, key string) ([]byte, bool, error)
	GetRevision(ctx context.Context, key string) ([]byte, uint64, bool, error)
	Create(ctx context.Context, key string, value []byte) ([]byte, bool, error)
	Update(ctx context.Context, key string, value []byte, revision uint64) (bool, error)
}

// UsageMeter counts requests per organisation, day, endpoint and status.
// Counts gather in memory and are added every few seconds (and at
// shutdown) to a key-value bucket shared by all replicas, one key per
// organisation and day, with compare-and-set: requests cost no write.
type UsageMeter struct {
	bucket  KeyValues
	log     *slog.Logger
	mu      sync.Mutex
	pending map[usageCounter]int64
	// storing are the counts a flush has taken from pending and is adding
	// to the bucket, by key: Counts adds them until they are stored, or
	// the totals would drop for the length of a flush.
	storing map[string]*storingCounts
	// settled counts the keys whose flush ended: their counts left
	// storing for the bucket (or pending). Counts reads again when one
	// settled while it read the bucket, which may not hold them yet.
	settled uint64
}

// storingCounts are counts on their way to one key of the bucket.
type storingCounts struct {
	counts map[usageCounter]int64
	// written is set before each write, with base, the revision of the
	// key that write read (0: none): a key still at base or below does
	// not hold these counts; past it, it may.
	written bool
	base    uint64
	done    chan struct{} // closed once they are stored, or back in pending
}

// NewUsageMeter returns a meter that keeps its counts in bucket.
func NewUsageMeter(bucket KeyValues, log *slog.Logger) *UsageMeter {
	return &UsageMeter{bucket: bucket, log: log, storing: map[string]*storingCounts{}}
}

// usageCounter names one count. A request only bumps it: the bucket's
// key and the text of its counts are made when they are flushed.
type usageCounter struct {
	org      string
	day      int64 // days since 1970-01-01, UTC
	endpoint string
	status   int
}

func dayNumber(t time.Time) int64 { return t.Unix() / secondsPerDay }

const secondsPerDay = 24 * 60 * 60

// key is the bucket key the counter is stored under.
func (c usageCounter) key() string {
	return usageKey(c.org, time.Unix(c.day*secondsPerDay, 0))
}

// name is how the counter is named in the stored counts.
func (c usageCounter) name() string { return c.endpoint + " " + strconv.Itoa(c.status) }

// usageFlushEvery is how often counts go to the bucket.
const usageFlushEvery = 5 * time.Second

func usageKey(org string, day time.Time) string {
	return "usage." + org + "." + day.UTC().Format(time.DateOnly)
}

// Count counts a request of organisation org to endpoint (its route
// pattern) answered with status at time at.
func (u *UsageMeter) Count(org, endpoint string, status int, at time.Time) {
	c := usageCounter{org: org, day: dayNumber(at), endpoint: endpoint, status: status}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.pending == nil {
		u.pending = map[usageCounter]int64{}
	}
	u.pending[c]++
}

// Run flushes the counts until ctx ends, and once more then.
func (u *UsageMeter) Run(ctx context.Context) {
	t := time.NewTicker(usageFlushEvery)
	defer t.Stop()
	// A flush begun is finished, even when shutdown begins meanwhile: cut
	// short, it would only log an error and leave its counts to the last
	// flush.
	flush := func() {
		flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), usageFlushTimeout)
		defer cancel()
		u.flushLogged(flushCtx)
	}
	for {
		select {
		case <-t.C:
			flush()
		case <-ctx.Done():
			flush()
			return
		}
	}
}

// usageFlushTimeout bounds one flush, so that a stop never hangs on a
// store that does not answer.
const usageFlushTimeout = 10 * time.Second

// flushLogged flushes, and logs a failure: the counts wait for the next
// flush.
func (u *UsageMeter) flushLogged(ctx context.Context) {
	if err := u.flush(ctx); err != nil {
		u.log.Error("usage counts not stored; kept for the next try", "err", err)
	}
}

// flush adds the pending counts to the bucket. Counts that could not be
// stored stay pending for the next flush.
func (u *UsageMeter) flush(ctx context.Context) error {
	u.mu.Lock()
	byKey := map[string]map[usageCounter]int64{}
	for c, n := range u.pending {
		k := c.key()
		if byKey[k] == nil {
			byKey[k] = map[usageCounter]int64{}
		}
		byKey[k][c] = n
	}
	u.pending = nil
	for key, counts := range byKey {
		u.storing[key] = &storingCounts{counts: counts, done: make(chan struct{})}
	}
	u.mu.Unlock()
	var firstErr error
	for key, counts := range byKey {
		err := u.add(ctx, key, counts)
		u.mu.Lock()
		close(u.storing[key].done)
		delete(u.storing, key)
		u.settled++
		if err != nil {
			firstErr = err
			if u.pending == nil {
				u.pending = map[usageCounter]int64{}
			}
			for c, n := range counts {
				u.pending[c] += n
			}
		}
		u.mu.Unlock()
	}
	return firstErr
}

func (u *UsageMeter) add(ctx context.Context, key string, counts map[usageCounter]int64) error {
	for range 20 {
		raw, rev, found, err := u.bucket.GetRevision(ctx, key)
		if err != nil {
			return err
		}
		stored := map[string]int64{}
		if found {
			json.Unmarshal(raw, &stored)
		}
		for c, n := range counts {
			stored[c.name()] += n
		}
		next, _ := json.Marshal(stored)
		u.mu.Lock()
		u.storing[key].written, u.storing[key].base = true, rev
		u.mu.Unlock()
		if !found {
			_, created, err := u.bucket.Create(ctx, key, next)
			if err != nil || created {
				return err
			}
			continue // another replica created it first
		}
		if ok, err := u.bucket.Update(ctx, key, next, rev); err != nil || ok {
			return err
		}
	}
	return fmt.Errorf("usage counts of %s kept changing under us", key)
}

// Counts returns an organisation's counts of a day, each named by
// endpoint and status ("/api/quotes/{id} 200"): stored, being stored, and
// pending.
func (u *UsageMeter) Counts(ctx context.Context, org string, day time.Time) (map[string]int64, error) {
	key := usageKey(org, day)
	for {
		u.mu.Lock()
		settled := u.settled
		u.mu.Unlock()
		out := map[string]int64{}
		raw, rev, found, err := u.bucket.GetRevision(ctx, key)
		if err != nil {
			return nil, err
		} else if found {
			json.Unmarshal(raw, &out)
		}
		u.mu.Lock()
		if u.settled != settled {
			u.mu.Unlock()
			continue
		}
		s := u.storing[key]
		if s != nil && s.written && rev > s.base {
			// The key moved since the flush read it: by its write, or
			// another replica's. Only the flush can tell, in moments.
			u.mu.Unlock()
			select {
			case <-s.done:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if s != nil {
			for c, n := range s.counts { // all of org's on day: they share its key
				out[c.name()] += n
			}
		}
		for c, n := range u.pending {
			if c.org == org && c.day == dayNumber(day) {
				out[c.name()] += n
			}
		}
		u.mu.Unlock()
		return out, nil
	}
}
