package commands

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/google/uuid"
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
// Counts gather in memory and are written every few seconds (and at
// shutdown) to a key-value bucket shared by all replicas, one key per
// organisation and day, with compare-and-set: requests cost no write.
// Each meter writes its whole totals of the day under a name of its own
// in the key's value, never an increment: a write whose acknowledgement
// was lost, though it was stored, and that is therefore written again
// changes nothing, where an added increment was counted twice.
type UsageMeter struct {
	bucket KeyValues
	log    *slog.Logger
	mu     sync.Mutex
	days   map[usageDay]*dayCounts
	// failed counts the flushes in a row that left counts unstored
	// (flushLogged's, one at a time), and failedTold is when one of them
	// was last logged.
	failed     int
	failedTold time.Time
}

// usageDay is an organisation's day, days since 1970-01-01 UTC.
type usageDay struct {
	org string
	day int64
}

// dayCounts are this meter's counts of one organisation's day.
type dayCounts struct {
	// name is the entry of the day's value that holds them, made anew
	// for each dayCounts: counts of a day dropped from memory and counted
	// again (a request that ran over midnight for a day) never replace
	// the ones stored before.
	name   string
	counts map[string]int64 // by endpoint and status, "/api/quotes 201"
	dirty  bool             // counted since they were last stored
}

// NewUsageMeter returns a meter that keeps its counts in bucket.
func NewUsageMeter(bucket KeyValues, log *slog.Logger) *UsageMeter {
	return &UsageMeter{bucket: bucket, log: log, days: map[usageDay]*dayCounts{}}
}

// usageKept is how long a day's counts are kept: a year and a month, so
// that a year's usage is there a month after it ends.
const usageKept = 400 * 24 * time.Hour

// OpenUsageMeter returns a meter that keeps its counts in the bucket
// "usage" that open opens (eventstore.Store.Bucket), each day's for
// usageKept: the service's meter, and the one of a test's service.
func OpenUsageMeter[B KeyValues](ctx context.Context, open func(context.Context, string, time.Duration) (B, error), log *slog.Logger) (*UsageMeter, error) {
	bucket, err := open(ctx, "usage", usageKept)
	if err != nil {
		return nil, err
	}
	return NewUsageMeter(bucket, log), nil
}

func dayNumber(t time.Time) int64 { return t.Unix() / secondsPerDay }

const secondsPerDay = 24 * 60 * 60

// usageFlushEvery is how often counts go to the bucket.
const usageFlushEvery = 5 * time.Second

// usageKey is the key of an organisation's day. Versions before whole
// totals added increments to legacyUsageKey, which is still read.
func usageKey(org string, day time.Time) string {
	return "counts." + org + "." + day.UTC().Format(time.DateOnly)
}

func legacyUsageKey(org string, day time.Time) string {
	return "usage." + org + "." + day.UTC().Format(time.DateOnly)
}

// Count counts a request of organisation org to endpoint (its route
// pattern) answered with status at time at.
func (u *UsageMeter) Count(org, endpoint string, status int, at time.Time) {
	d := usageDay{org: org, day: dayNumber(at)}
	u.mu.Lock()
	defer u.mu.Unlock()
	c := u.days[d]
	if c == nil {
		c = &dayCounts{name: uuid.NewString(), counts: map[string]int64{}}
		u.days[d] = c
	}
	c.counts[endpoint+" "+strconv.Itoa(status)]++
	c.dirty = true
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
// flush. The event store out of reach (an election, NATS restarted) is a
// warning, as for every other part that waits for it; the first failure of
// a run is logged, then one a minute at most, as the reactors' failures
// are (a line every 5 s of an outage, 88 through a cluster review's node
// losses, was noise); and once counts are stored again after failures,
// that is told, with how many there were: an ERROR line every 5 s of an
// election, and nothing once it ended, left an operator to guess whether
// the counts were ever stored.
func (u *UsageMeter) flushLogged(ctx context.Context) {
	err := u.flush(ctx)
	switch {
	case err == nil && u.failed > 0:
		u.log.Info("usage counts stored again", "failedInARow", u.failed)
		u.failed = 0
	case err != nil:
		u.failed++
		if now := time.Now(); u.failed == 1 || now.Sub(u.failedTold) >= time.Minute {
			u.failedTold = now
			u.log.Log(ctx, domain.FailureLevel(err), "usage counts not stored; kept for the next try", "failedInARow", u.failed, "err", err)
		}
	}
}

// flush writes the counts counted since the last flush. Counts that could
// not be stored are written at the next. Days before yesterday that are
// stored leave memory: no request is counted for them any more.
func (u *UsageMeter) flush(ctx context.Context) error {
	type write struct {
		day    usageDay
		c      *dayCounts
		counts map[string]int64
	}
	var writes []write
	u.mu.Lock()
	for d, c := range u.days {
		if c.dirty {
			writes = append(writes, write{d, c, maps.Clone(c.counts)})
			c.dirty = false
		}
	}
	u.mu.Unlock()
	var firstErr error
	for _, w := range writes {
		err := u.store(ctx, usageKey(w.day.org, time.Unix(w.day.day*secondsPerDay, 0)), w.c.name, w.counts)
		if err != nil {
			firstErr = cmp.Or(firstErr, err)
			u.mu.Lock()
			w.c.dirty = true
			u.mu.Unlock()
		}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	for d, c := range u.days {
		if !c.dirty && d.day < dayNumber(time.Now())-1 {
			delete(u.days, d)
		}
	}
	return firstErr
}

// store writes counts as the entry name of key's value, with
// compare-and-set: the other entries are other meters'.
func (u *UsageMeter) store(ctx context.Context, key, name string, counts map[string]int64) error {
	for range 20 {
		raw, rev, found, err := u.bucket.GetRevision(ctx, key)
		if err != nil {
			return err
		}
		entries := map[string]map[string]int64{}
		if found {
			if err := json.Unmarshal(raw, &entries); err != nil {
				return fmt.Errorf("usage counts of %s: %w", key, err)
			}
		}
		entries[name] = counts
		next, _ := json.Marshal(entries)
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
// endpoint and status ("/api/quotes/{id} 200"): this meter's from memory,
// every other meter's as last stored, and those an earlier version
// stored.
func (u *UsageMeter) Counts(ctx context.Context, org string, day time.Time) (map[string]int64, error) {
	out := map[string]int64{}
	u.mu.Lock()
	own := u.days[usageDay{org: org, day: dayNumber(day)}]
	ownName := ""
	if own != nil {
		ownName = own.name
		for name, n := range own.counts {
			out[name] += n
		}
	}
	u.mu.Unlock()
	entries := map[string]map[string]int64{}
	if err := u.read(ctx, usageKey(org, day), &entries); err != nil {
		return nil, err
	}
	delete(entries, ownName) // in memory, as far as counted
	legacy := map[string]int64{}
	if err := u.read(ctx, legacyUsageKey(org, day), &legacy); err != nil {
		return nil, err
	}
	for _, counts := range append(slices.Collect(maps.Values(entries)), legacy) {
		for k, n := range counts {
			out[k] += n
		}
	}
	return out, nil
}

// read decodes the value of key into v, left as it is if key has none.
func (u *UsageMeter) read(ctx context.Context, key string, v any) error {
	raw, found, err := u.bucket.Get(ctx, key)
	if err != nil || !found {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("usage counts of %s: %w", key, err)
	}
	return nil
}
