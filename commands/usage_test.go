package commands

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/internal/lockedbuf"
	"github.com/cargostream/cargostream/internal/storetest"
)

// today is the start of the current UTC day. A meter keeps today's and
// yesterday's counts in memory and lets older days go once stored: a
// fixed date, once past, would test the letting go alone, and nothing
// that counts a day kept in memory could fail any more.
func today() time.Time { return time.Now().UTC().Truncate(24 * time.Hour) }

// usageBucket is a usage bucket on a store of the test's own.
func usageBucket(t *testing.T) *eventstore.Bucket {
	t.Helper()
	bucket, err := storetest.Open(t).Bucket(t.Context(), "usage", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return bucket
}

func TestUsageMeterKeepsExactCountsAcrossFlushes(t *testing.T) {
	ctx := t.Context()
	bucket := usageBucket(t)
	u := NewUsageMeter(bucket, slog.New(slog.DiscardHandler))
	day := today()
	requests := []struct {
		org, endpoint string
		status        int
		at            time.Time
	}{
		{"acme", "/api/quotes/{id}", 200, day.Add(time.Second)},
		{"acme", "/api/quotes/{id}", 200, day.Add(23 * time.Hour)},
		{"acme", "/api/quotes/{id}", 404, day.Add(time.Hour)},
		{"acme", "/api/quotes", 201, day.Add(-time.Second)}, // the day before
		{"globex", "/api/quotes/{id}", 200, day.Add(time.Hour)},
	}
	want := map[string]map[time.Time]map[string]int64{
		"acme": {
			day:                   {"/api/quotes/{id} 200": 2, "/api/quotes/{id} 404": 1},
			day.AddDate(0, 0, -1): {"/api/quotes 201": 1},
		},
		"globex": {day: {"/api/quotes/{id} 200": 1}},
	}
	check := func(when string, times int64) {
		t.Helper()
		for org, days := range want {
			for d, counts := range days {
				got, err := u.Counts(ctx, org, d)
				if err != nil {
					t.Fatal(err)
				}
				scaled := map[string]int64{}
				for k, n := range counts {
					scaled[k] = n * times
				}
				if !maps.Equal(got, scaled) {
					t.Errorf("%s: counts of %s on %s = %v, want %v", when, org, d.Format(time.DateOnly), got, scaled)
				}
			}
		}
	}
	countAll := func() {
		for _, r := range requests {
			u.Count(r.org, r.endpoint, r.status, r.at)
		}
	}
	countAll()
	check("pending", 1)
	if err := u.flush(ctx); err != nil {
		t.Fatal(err)
	}
	check("stored", 1)
	// Stored and pending add up, and a second flush adds to what is stored.
	countAll()
	check("stored and pending", 2)
	if err := u.flush(ctx); err != nil {
		t.Fatal(err)
	}
	check("stored twice", 2)
	// Counts that could not be stored stay pending for the next flush.
	countAll()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := u.flush(cancelled); err == nil {
		t.Fatal("a flush without a store succeeded")
	}
	check("kept after a failed flush", 3)
	if err := u.flush(ctx); err != nil {
		t.Fatal(err)
	}
	check("stored after a failed flush", 3)
}

// heldBucket holds each write until the test lets it through, so that a
// flush can be looked at while it is under way.
type heldBucket struct {
	KeyValues
	writing chan struct{} // a write is waiting
	release chan struct{} // closed: writes go through
}

func (b heldBucket) Create(ctx context.Context, key string, value []byte) ([]byte, bool, error) {
	b.writing <- struct{}{}
	<-b.release
	return b.KeyValues.Create(ctx, key, value)
}

func (b heldBucket) Update(ctx context.Context, key string, value []byte, revision uint64) (bool, error) {
	b.writing <- struct{}{}
	<-b.release
	return b.KeyValues.Update(ctx, key, value, revision)
}

// GET /api/usage asks Counts at any moment, a flush among them: counts on
// their way to the bucket are neither pending nor stored yet, and must
// still be counted, or the totals drop for the length of a flush.
func TestUsageCountsOnTheirWayToTheBucketAreStillCounted(t *testing.T) {
	ctx := t.Context()
	bucket := usageBucket(t)
	day := today()
	var u *UsageMeter
	// The day's key is created by the first flush, and updated by the
	// second.
	for i, total := range []int64{3, 5} {
		held := heldBucket{KeyValues: bucket, writing: make(chan struct{}, 1), release: make(chan struct{})}
		if u == nil {
			u = NewUsageMeter(held, slog.New(slog.DiscardHandler))
		}
		u.bucket = held
		for range []int{3, 2}[i] {
			u.Count("acme", "/api/quotes", 201, day.Add(time.Hour))
		}
		flushed := make(chan error)
		go func() { flushed <- u.flush(ctx) }()
		<-held.writing // the flush has taken the counts and is storing them
		during, err := u.Counts(ctx, "acme", day)
		close(held.release)
		if err := <-flushed; err != nil {
			t.Fatal(err)
		}
		after, err2 := u.Counts(ctx, "acme", day)
		want := map[string]int64{"/api/quotes 201": total}
		if err != nil || !maps.Equal(during, want) {
			t.Errorf("flush %d: counts while it stores them = %v, %v; want %v", i+1, during, err, want)
		}
		if err2 != nil || !maps.Equal(after, want) {
			t.Errorf("flush %d: counts once stored = %v, %v; want %v", i+1, after, err2, want)
		}
	}
}

// heldRead holds the first read, once it has read, until the test lets it
// go on: for a flush to end while Counts is reading.
type heldRead struct {
	KeyValues
	read, release chan struct{}
	held          atomic.Bool
}

func (b *heldRead) Get(ctx context.Context, key string) ([]byte, bool, error) {
	v, found, err := b.KeyValues.Get(ctx, key)
	if b.held.CompareAndSwap(false, true) {
		b.read <- struct{}{}
		<-b.release
	}
	return v, found, err
}

// countsLater asks u for org's counts of day on a goroutine of its own, so
// that the test can hold the read and act meanwhile; the channel gives
// the answer.
func countsLater(ctx context.Context, t *testing.T, u *UsageMeter, org string, day time.Time) <-chan map[string]int64 {
	counted := make(chan map[string]int64)
	go func() {
		got, err := u.Counts(ctx, org, day)
		if err != nil {
			t.Error(err)
		}
		counted <- got
	}()
	return counted
}

// Counts takes this meter's counts from memory, then reads the bucket,
// whose entry of this meter holds some of them (all, once a flush that
// ends meanwhile stored them): they must not be added again.
func TestUsageCountsReadAsAFlushEndsAreAllCounted(t *testing.T) {
	ctx := t.Context()
	bucket := usageBucket(t)
	u := NewUsageMeter(bucket, slog.New(slog.DiscardHandler))
	day := today()
	u.Count("acme", "/api/quotes", 201, day.Add(time.Hour))
	if err := u.flush(ctx); err != nil {
		t.Fatal(err)
	}
	u.Count("acme", "/api/quotes", 201, day.Add(time.Hour))
	held := &heldRead{KeyValues: bucket, read: make(chan struct{}), release: make(chan struct{})}
	u.bucket = held
	counted := countsLater(ctx, t, u, "acme", day)
	<-held.read // Counts has read the bucket: one stored
	if err := u.flush(ctx); err != nil {
		t.Fatal(err)
	}
	close(held.release) // and now looks at what is in memory
	if got, want := <-counted, map[string]int64{"/api/quotes 201": 2}; !maps.Equal(got, want) {
		t.Errorf("counts = %v, want %v", got, want)
	}
}

// lostAck stores a write but answers the first with an error, as when
// the store's acknowledgement is lost on its way back.
type lostAck struct {
	KeyValues
	lost atomic.Bool
}

func (b *lostAck) Create(ctx context.Context, key string, value []byte) ([]byte, bool, error) {
	v, created, err := b.KeyValues.Create(ctx, key, value)
	if err == nil && b.lost.CompareAndSwap(false, true) {
		return nil, false, context.DeadlineExceeded
	}
	return v, created, err
}

func (b *lostAck) Update(ctx context.Context, key string, value []byte, revision uint64) (bool, error) {
	ok, err := b.KeyValues.Update(ctx, key, value, revision)
	if err == nil && b.lost.CompareAndSwap(false, true) {
		return false, context.DeadlineExceeded
	}
	return ok, err
}

// A flush whose write was stored though it failed as far as the meter
// knows (a timeout) is written again at the next: the counts are counted
// once, by this replica and by another, never twice. Another replica's
// counts, and those an earlier version stored under its key, add up.
func TestUsageCountsStoredByAWriteThatSeemedToFailAreCountedOnce(t *testing.T) {
	ctx := t.Context()
	bucket := usageBucket(t)
	day := today()
	u := NewUsageMeter(&lostAck{KeyValues: bucket}, slog.New(slog.DiscardHandler))
	other := NewUsageMeter(bucket, slog.New(slog.DiscardHandler))
	for range 3 {
		u.Count("acme", "/api/quotes", 201, day.Add(time.Hour))
	}
	if err := u.flush(ctx); err == nil {
		t.Fatal("the flush whose acknowledgement was lost succeeded")
	}
	u.Count("acme", "/api/quotes", 201, day.Add(time.Hour))
	other.Count("acme", "/api/quotes", 201, day.Add(2*time.Hour))
	for _, m := range []*UsageMeter{u, other} {
		if err := m.flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := bucket.Create(ctx, legacyUsageKey("acme", day), []byte(`{"/api/quotes 201":10,"/api/quotes/{id} 200":1}`)); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"/api/quotes 201": 15, "/api/quotes/{id} 200": 1}
	for name, m := range map[string]*UsageMeter{"the replica": u, "another": other, "a third": NewUsageMeter(bucket, slog.New(slog.DiscardHandler))} {
		if got, err := m.Counts(ctx, "acme", day); err != nil || !maps.Equal(got, want) {
			t.Errorf("counts as %s sees them = %v, %v; want %v", name, got, err, want)
		}
	}
}

// heldBeforeRead holds the first read of the day's counts until the test
// lets it go on: for a flush to store and drop a day while Counts runs.
type heldBeforeRead struct {
	KeyValues
	key           string
	read, release chan struct{}
	held          atomic.Bool
}

func (b *heldBeforeRead) Get(ctx context.Context, key string) ([]byte, bool, error) {
	if key == b.key && b.held.CompareAndSwap(false, true) {
		b.read <- struct{}{}
		<-b.release
	}
	return b.KeyValues.Get(ctx, key)
}

// A day before yesterday stays in memory while not stored, leaves it once
// stored, and its counts are then read from the bucket: once, when the
// flush that stores and drops it ends while Counts, which took them from
// memory, reads the bucket; and with those of a request counted for it
// afterwards (one that ran over midnight), stored under an entry of their
// own.
func TestUsageCountsOfADayLeavingMemoryAreCountedOnce(t *testing.T) {
	ctx := t.Context()
	bucket := usageBucket(t)
	day := today().AddDate(0, 0, -3)
	held := &heldBeforeRead{KeyValues: bucket, key: usageKey("acme", day), read: make(chan struct{}), release: make(chan struct{})}
	u := NewUsageMeter(held, slog.New(slog.DiscardHandler))
	for range 2 {
		u.Count("acme", "/api/quotes", 201, day.Add(time.Hour))
	}
	// Not stored, they stay.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := u.flush(cancelled); err == nil {
		t.Fatal("a flush without a store succeeded")
	}
	u.mu.Lock()
	kept := len(u.days)
	u.mu.Unlock()
	if kept != 1 {
		t.Fatalf("%d days in memory after a failed flush, want the 1 not stored", kept)
	}
	counted := countsLater(ctx, t, u, "acme", day)
	<-held.read // Counts has taken the 2 from memory
	if err := u.flush(ctx); err != nil {
		t.Fatal(err)
	}
	u.mu.Lock()
	left := len(u.days)
	u.mu.Unlock()
	if left != 0 {
		t.Errorf("%d days in memory after a day before yesterday was stored, want none", left)
	}
	close(held.release) // and now reads the 2 stored
	if got, want := <-counted, map[string]int64{"/api/quotes 201": 2}; !maps.Equal(got, want) {
		t.Errorf("counts while the day was stored and dropped = %v, want %v", got, want)
	}
	u.Count("acme", "/api/quotes", 201, day.Add(23*time.Hour))
	want := map[string]int64{"/api/quotes 201": 3}
	if got, err := u.Counts(ctx, "acme", day); err != nil || !maps.Equal(got, want) {
		t.Errorf("counts with a request counted after the day was dropped = %v, %v; want %v", got, err, want)
	}
	if err := u.flush(ctx); err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]*UsageMeter{"the replica": u, "another": NewUsageMeter(bucket, slog.New(slog.DiscardHandler))} {
		if got, err := m.Counts(ctx, "acme", day); err != nil || !maps.Equal(got, want) {
			t.Errorf("counts once all are stored, as %s sees them = %v, %v; want %v", name, got, err, want)
		}
	}
}

// failingReads is a usage bucket whose reads fail with err while it is
// set, as the event store's do while out of reach (an election, NATS
// restarted), or broken.
type failingReads struct {
	KeyValues
	mu  sync.Mutex
	err error
}

func (b *failingReads) fail(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.err = err
}

func (b *failingReads) GetRevision(ctx context.Context, key string) ([]byte, uint64, bool, error) {
	b.mu.Lock()
	err := b.err
	b.mu.Unlock()
	if err != nil {
		return nil, 0, false, err
	}
	return b.KeyValues.GetRevision(ctx, key)
}

// Flushes that fail are logged, the first of a run and then one a minute
// at most, with how many in a row, as a warning while the event store is
// out of reach and an error otherwise; the first that stores the counts
// after them says so, with how many failed. Before, every failure was an
// ERROR line (one every 5 s through an election) and nothing told that
// the counts were stored in the end.
func TestFailedFlushesOfUsageCountsAreLoggedAndSoIsTheFirstThatStoresThemAfter(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		level string
	}{
		{"the event store out of reach", fmt.Errorf("%w: eventstore: get counts: context deadline exceeded", domain.ErrStoreUnavailable), "WARN"},
		{"another failure", errors.New("usage counts of counts.acme: unexpected end of JSON input"), "ERROR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logged lockedbuf.Buffer
			bucket := &failingReads{KeyValues: usageBucket(t)}
			u := NewUsageMeter(bucket, slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			}})))
			u.Count("acme", "/api/quotes", 201, time.Now())
			bucket.fail(tc.err)
			u.flushLogged(t.Context())
			u.flushLogged(t.Context())
			bucket.fail(nil)
			u.flushLogged(t.Context())
			u.Count("acme", "/api/quotes", 201, time.Now())
			u.flushLogged(t.Context())
			// The second failure, a moment after the first, is not
			// logged; the line that the counts are stored again counts it.
			want := fmt.Sprintf(`level=%[1]s msg="usage counts not stored; kept for the next try" failedInARow=1 err=%[2]q
level=INFO msg="usage counts stored again" failedInARow=2
`, tc.level, tc.err.Error())
			if logged.String() != want {
				t.Errorf("logged:\n%s\nwant:\n%s", logged.String(), want)
			}
			counts, err := u.Counts(t.Context(), "acme", today())
			if err != nil || counts["/api/quotes 201"] != 2 {
				t.Errorf("counted once stored: %v, %v; want 2 requests", counts, err)
			}
		})
	}
}
