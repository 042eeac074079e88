package eventstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore/natstest"
	"github.com/cargostream/cargostream/internal/lockedbuf"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// backend opens stores on one kind of server. reopen opens the same
// stream again, as a restarted process would.
type backend struct {
	name string
	open func(t *testing.T) (s *Store, reopen func() *Store)
}

// backends are the servers the conformance suite runs against: the
// embedded one; a separate server reached by URL, as a cluster would be
// (started here from the nats-server module, never the machine's own
// package, which is too old); and the server at CARGO_TEST_NATS_URL if set.
func backends(t *testing.T) []backend {
	embedded := backend{name: "embedded", open: func(t *testing.T) (*Store, func() *Store) {
		opts := Options{DataDir: t.TempDir(), Stream: "CARGO"}
		return openForTest(t, opts), func() *Store { return openForTest(t, opts) }
	}}
	byURL := func(name, url string) backend {
		return backend{name: name, open: func(t *testing.T) (*Store, func() *Store) {
			url := url
			if url == "" {
				url = natstest.StartServer(t, 0)
			}
			b := make([]byte, 6)
			rand.Read(b)
			opts := Options{URL: url, Stream: "CARGOTEST_" + strings.ToUpper(hex.EncodeToString(b)), Replicas: 1}
			s := openForTest(t, opts)
			t.Cleanup(func() {
				// Tests remove their own per-run stream; the deny-delete
				// setting protects messages, not the stream.
				c, err := Open(context.Background(), opts)
				if err != nil {
					t.Errorf("cleanup: %v", err)
					return
				}
				defer c.Close()
				ctx := context.Background()
				c.js.DeleteStream(ctx, opts.Stream)
				c.js.DeleteKeyValue(ctx, opts.Stream+"_test")
				c.js.DeleteObjectStore(ctx, opts.Stream+"_test")
			})
			return s, func() *Store { return openForTest(t, opts) }
		}}
	}
	bs := []backend{embedded, byURL("by URL", "")}
	if url := os.Getenv("CARGO_TEST_NATS_URL"); url != "" {
		bs = append(bs, byURL("external", url))
	}
	return bs
}

func openForTest(t testing.TB, o Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

func event(typ, id, commandID string, data string) domain.Envelope {
	return domain.Envelope{Type: typ, SchemaVersion: 1, EventID: id, CommandID: commandID,
		CorrelationID: "corr-" + id, CausationID: "cause-" + id, Actor: "user:alice", Tenant: "org-1",
		OccurredAt: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC), Data: []byte(data)}
}

func TestConformance(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			t.Run("append and load keep the envelope", func(t *testing.T) { testRoundTrip(t, b) })
			t.Run("stale expected sequence conflicts", func(t *testing.T) { testConflict(t, b) })
			t.Run("concurrent commands each append once", func(t *testing.T) { testConcurrent(t, b) })
			t.Run("repeated command id appends once", func(t *testing.T) { testRepeatedCommand(t, b) })
			t.Run("events survive a restart", func(t *testing.T) { testRestart(t, b) })
			t.Run("upcasters bring old events up to date", func(t *testing.T) { testUpcaster(t, b) })
			t.Run("subscribe from a sequence and read with filters", func(t *testing.T) { testSubscribe(t, b) })
			t.Run("replay hands over batches in order up to the end asked for", func(t *testing.T) { testReplay(t, b) })
			t.Run("events are read by sequence in the order asked", func(t *testing.T) { testRecordsAt(t, b) })
			t.Run("messages can be neither deleted nor purged", func(t *testing.T) { testDenyDelete(t, b) })
			t.Run("bucket create keeps the first value", func(t *testing.T) { testBucket(t, b) })
			t.Run("objects stream in and out, and survive a restart", func(t *testing.T) { testObjects(t, b) })
			t.Run("a consumer stopped after an event goes on with the next", func(t *testing.T) { testConsumerResumes(t, b) })
		})
	}
}

func testRoundTrip(t *testing.T, b backend) {
	s, _ := b.open(t)
	ctx := context.Background()
	agg := domain.Aggregate{Type: "quote", ID: "q1"}
	want := event("QuoteRequested", "e1", "c1", `{"a":1}`)
	seqs, err := s.Append(ctx, agg, 0, []domain.Envelope{want, event("QuoteStatusPriced", "e2", "c2", `{"b":2}`)})
	if err != nil || len(seqs) != 2 || seqs[1] != seqs[0]+1 {
		t.Fatalf("append = %v, %v", seqs, err)
	}
	recs, err := s.Load(ctx, agg)
	if err != nil || len(recs) != 2 {
		t.Fatalf("load = %d records, %v", len(recs), err)
	}
	got := recs[0]
	if got.Aggregate != agg || got.Sequence != seqs[0] {
		t.Errorf("position = %v@%d, want %v@%d", got.Aggregate, got.Sequence, agg, seqs[0])
	}
	if got.Type != want.Type || got.SchemaVersion != 1 || got.EventID != want.EventID || got.CommandID != want.CommandID ||
		got.CorrelationID != want.CorrelationID || got.CausationID != want.CausationID || got.Actor != want.Actor ||
		got.Tenant != want.Tenant || !got.OccurredAt.Equal(want.OccurredAt) || string(got.Data) != string(want.Data) {
		t.Errorf("record = %+v, want %+v", got.Envelope, want)
	}
	if recs[1].Type != "QuoteStatusPriced" {
		t.Errorf("second record type = %q", recs[1].Type)
	}
	if recs, err := s.Load(ctx, domain.Aggregate{Type: "quote", ID: "none"}); err != nil || len(recs) != 0 {
		t.Errorf("load of an unknown aggregate = %d, %v", len(recs), err)
	}
	if _, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: "a.b"}, 0, []domain.Envelope{want}); err == nil {
		t.Error("an aggregate id with a dot was accepted")
	}
}

func testConflict(t *testing.T, b backend) {
	s, _ := b.open(t)
	ctx := context.Background()
	agg := domain.Aggregate{Type: "quote", ID: "q1"}
	if _, err := s.Append(ctx, agg, 0, []domain.Envelope{event("A", "e1", "c1", "{}")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, agg, 0, []domain.Envelope{event("A", "e2", "c2", "{}")}); !errors.Is(err, domain.ErrAggregateChanged) {
		t.Fatalf("append with stale expectation = %v, want domain.ErrAggregateChanged", err)
	}
	if recs, _ := s.Load(ctx, agg); len(recs) != 1 {
		t.Errorf("aggregate has %d events after a conflict, want 1", len(recs))
	}
}

func testConcurrent(t *testing.T, b backend) {
	s, _ := b.open(t)
	ctx := context.Background()
	agg := domain.Aggregate{Type: "counter", ID: "c"}
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := fmt.Sprintf("cmd-%d", i)
			// A conflict means another writer's append is stored: each
			// writer retries at most n-1 times.
			for {
				recs, err := s.Load(ctx, agg)
				if err != nil {
					errs <- err
					return
				}
				var last uint64
				if len(recs) > 0 {
					last = recs[len(recs)-1].Sequence
				}
				_, err = s.Append(ctx, agg, last, []domain.Envelope{event("Incremented", cmd+"-e", cmd, "{}")})
				if !errors.Is(err, domain.ErrAggregateChanged) {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("command failed: %v", err)
		}
	}
	recs, err := s.Load(ctx, agg)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for i, r := range recs {
		seen[r.CommandID]++
		if i > 0 && r.Sequence <= recs[i-1].Sequence {
			t.Errorf("sequences out of order: %d after %d", r.Sequence, recs[i-1].Sequence)
		}
	}
	if len(recs) != n || len(seen) != n {
		t.Errorf("%d events from %d commands, want %d from %d", len(recs), len(seen), n, n)
	}
}

func testRepeatedCommand(t *testing.T, b backend) {
	s, _ := b.open(t)
	ctx := context.Background()
	agg := domain.Aggregate{Type: "quote", ID: "q1"}
	e := event("QuoteRequested", "e1", "c1", "{}")
	first, err := s.Append(ctx, agg, 0, []domain.Envelope{e})
	if err != nil {
		t.Fatal(err)
	}
	// The same command retried (say, after a lost acknowledgement) with
	// the same stale expectation must neither conflict nor append.
	again, err := s.Append(ctx, agg, 0, []domain.Envelope{e})
	if err != nil || again[0] != first[0] {
		t.Fatalf("repeat = %v, %v; want sequence %d", again, err, first[0])
	}
	if recs, _ := s.Load(ctx, agg); len(recs) != 1 {
		t.Errorf("%d events after a repeated command, want 1", len(recs))
	}
}

func testRestart(t *testing.T, b backend) {
	s, reopen := b.open(t)
	ctx := context.Background()
	agg := domain.Aggregate{Type: "quote", ID: "q1"}
	if _, err := s.Append(ctx, agg, 0, []domain.Envelope{event("QuoteRequested", "e1", "c1", `{"x":1}`)}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2 := reopen()
	recs, err := s2.Load(ctx, agg)
	if err != nil || len(recs) != 1 || string(recs[0].Data) != `{"x":1}` {
		t.Fatalf("after restart: %v, %v", recs, err)
	}
}

func testUpcaster(t *testing.T, b backend) {
	s, _ := b.open(t)
	ctx := context.Background()
	agg := domain.Aggregate{Type: "quote", ID: "q1"}
	if _, err := s.Append(ctx, agg, 0, []domain.Envelope{event("QuoteRequested", "e1", "c1", `{"w":1}`)}); err != nil {
		t.Fatal(err)
	}
	s.RegisterUpcaster("QuoteRequested", 1, func(d []byte) ([]byte, error) {
		return []byte(strings.Replace(string(d), `"w"`, `"weightKg"`, 1)), nil
	})
	s.RegisterUpcaster("QuoteRequested", 2, func(d []byte) ([]byte, error) { return append(d[:len(d)-1], `,"v":3}`...), nil })
	recs, err := s.Load(ctx, agg)
	if err != nil {
		t.Fatal(err)
	}
	if r := recs[0]; r.SchemaVersion != 3 || string(r.Data) != `{"weightKg":1,"v":3}` {
		t.Errorf("upcast record = v%d %s", r.SchemaVersion, r.Data)
	}
}

func testSubscribe(t *testing.T, b backend) {
	s, _ := b.open(t)
	ctx := context.Background()
	var seqs []uint64
	for i, agg := range []domain.Aggregate{{Type: "quote", ID: "a"}, {Type: "org", ID: "b"}, {Type: "quote", ID: "c"}} {
		got, err := s.Append(ctx, agg, 0, []domain.Envelope{event("E", fmt.Sprint("e", i), fmt.Sprint("c", i), "{}")})
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, got[0])
	}
	// Live subscription from the second event: it sees the second, the
	// third, and then one appended later.
	sub, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	var got []string
	go func() {
		time.Sleep(50 * time.Millisecond)
		s.Append(ctx, domain.Aggregate{Type: "quote", ID: "d"}, 0, []domain.Envelope{event("E", "e9", "c9", "{}")})
	}()
	err := s.Subscribe(sub, nil, seqs[1], func(r domain.Record) error {
		got = append(got, r.Aggregate.ID)
		if len(got) == 3 {
			return errors.New("enough")
		}
		return nil
	}, nil)
	if err == nil || err.Error() != "enough" || strings.Join(got, ",") != "b,c,d" {
		t.Fatalf("subscribe saw %v, ended with %v", got, err)
	}
	got = nil
	err = s.Read(ctx, []string{s.Filter("quote", "")}, 0, 0, func(r domain.Record) error {
		got = append(got, r.Aggregate.ID)
		return nil
	})
	if err != nil || strings.Join(got, ",") != "a,c,d" {
		t.Errorf("read quotes = %v, %v", got, err)
	}
}

func testReplay(t *testing.T, b backend) {
	s, _ := b.open(t)
	ctx := context.Background()
	n := replayBatch + replayBatch/2
	var first, last uint64
	for i := range n {
		seqs, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: fmt.Sprint("q", i)}, 0, []domain.Envelope{event("E", fmt.Sprint("e", i), fmt.Sprint("c", i), "{}")})
		if err != nil {
			t.Fatal(err)
		}
		last = seqs[0]
		if i == 0 {
			first = last
		}
	}
	// Events appended after the end asked for are not handed over.
	if _, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: "later"}, 0, []domain.Envelope{event("E", "later", "later", "{}")}); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	next := first + 1
	done, err := s.Replay(ctx, first+1, last, func(recs []domain.Record) error {
		sizes = append(sizes, len(recs))
		for _, r := range recs {
			if r.Sequence != next || r.Aggregate.ID != fmt.Sprint("q", r.Sequence-first) {
				return fmt.Errorf("got %d of %s, want %d", r.Sequence, r.Aggregate, next)
			}
			next++
		}
		return nil
	})
	if err != nil || done != last || fmt.Sprint(sizes) != fmt.Sprint([]int{replayBatch, n - 1 - replayBatch}) {
		t.Errorf("replay = %d, %v in batches of %v; want %d in batches of [%d %d]", done, err, sizes, last, replayBatch, n-1-replayBatch)
	}
	// An error from fn ends the replay where it was.
	stop := errors.New("stop")
	done, err = s.Replay(ctx, first, last, func([]domain.Record) error { return stop })
	if !errors.Is(err, stop) || done != first-1 {
		t.Errorf("replay stopped by fn = %d, %v", done, err)
	}
	if done, err := s.Replay(ctx, last+1, last, nil); done != last || err != nil {
		t.Errorf("an empty replay = %d, %v", done, err)
	}
}

func testRecordsAt(t *testing.T, b backend) {
	s, _ := b.open(t)
	ctx := context.Background()
	quote, booking := domain.Aggregate{Type: "quote", ID: "q1"}, domain.Aggregate{Type: "booking", ID: "b1"}
	q, err := s.Append(ctx, quote, 0, []domain.Envelope{event("QuoteRequested", "e1", "c1", `{"a":1}`), event("QuotePriced", "e2", "c1", `{"b":2}`)})
	if err != nil {
		t.Fatal(err)
	}
	bk, err := s.Append(ctx, booking, 0, []domain.Envelope{event("BookingRequested", "e3", "c2", `{"c":3}`)})
	if err != nil {
		t.Fatal(err)
	}
	asked := []uint64{bk[0], q[0], bk[0], q[1]}
	recs, err := s.RecordsAt(ctx, asked)
	if err != nil || len(recs) != len(asked) {
		t.Fatalf("records at %v = %d, %v", asked, len(recs), err)
	}
	want := []string{"e3 booking/b1 {\"c\":3}", "e1 quote/q1 {\"a\":1}", "e3 booking/b1 {\"c\":3}", "e2 quote/q1 {\"b\":2}"}
	for i, r := range recs {
		if got := fmt.Sprintf("%s %s/%s %s", r.EventID, r.Aggregate.Type, r.Aggregate.ID, r.Data); got != want[i] || r.Sequence != asked[i] || r.Actor != "user:alice" {
			t.Errorf("record %d = %s at %d by %q, want %s at %d", i, got, r.Sequence, r.Actor, want[i], asked[i])
		}
	}
	if recs, err := s.RecordsAt(ctx, nil); err != nil || len(recs) != 0 {
		t.Errorf("records at no sequence = %v, %v", recs, err)
	}
	// A sequence that holds no event leaves its record zero; the others
	// are read.
	none := bk[0] + 100
	if recs, err := s.RecordsAt(ctx, []uint64{q[0], none}); err != nil || len(recs) != 2 || recs[0].EventID != "e1" || recs[1].Sequence != 0 {
		t.Errorf("records at %d and %d, after the last = %+v, %v; want the first, and a zero record", q[0], none, recs, err)
	}
}

// A page of the audit log reads up to 200 events, eight at a time: against
// a stream that does not answer, each read waits out the request timeout.
// The first read that fails ends the others, and is the error the caller
// gets (not a read it ended, which would say "context canceled").
func TestReadingEventsBySequenceStopsAtTheFirstReadThatFails(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	stalled := &stalledGets{Stream: s.stream, failing: 3, wait: 500 * time.Millisecond}
	s.stream = stalled
	seqs := make([]uint64, 8*maxParallelGets)
	for i := range seqs {
		seqs[i] = uint64(i + 1)
	}
	recs, err := s.RecordsAt(context.Background(), seqs)
	if err == nil || !errors.Is(err, domain.ErrStoreUnavailable) || errors.Is(err, context.Canceled) {
		t.Errorf("records at a stalled stream = %d, %v; want the store unavailable, not a read cancelled", len(recs), err)
	}
	if n := stalled.calls.Load(); n > maxParallelGets {
		t.Errorf("%d reads of the %d asked, one of the first failing; want at most the %d under way then", n, len(seqs), maxParallelGets)
	}
}

// stalledGets is a stream whose read number failing times out at once,
// and whose other reads wait up to wait for their context, then time out.
type stalledGets struct {
	jetstream.Stream
	failing int64
	wait    time.Duration
	calls   atomic.Int64
}

func (s *stalledGets) GetMsg(ctx context.Context, seq uint64, opts ...jetstream.GetMsgOpt) (*jetstream.RawStreamMsg, error) {
	if s.calls.Add(1) == s.failing {
		return nil, nats.ErrTimeout
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(s.wait):
		return nil, nats.ErrTimeout
	}
}

func testDenyDelete(t *testing.T, b backend) {
	s, _ := b.open(t)
	ctx := context.Background()
	seqs, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: "a"}, 0, []domain.Envelope{event("E", "e1", "c1", "{}")})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.stream.DeleteMsg(ctx, seqs[0]); err == nil {
		t.Error("a message was deleted")
	}
	if err := s.stream.Purge(ctx); err == nil {
		t.Error("the stream was purged")
	}
	if recs, _ := s.Load(ctx, domain.Aggregate{Type: "quote", ID: "a"}); len(recs) != 1 {
		t.Errorf("%d events left, want 1", len(recs))
	}
}

func testBucket(t *testing.T, b backend) {
	s, _ := b.open(t)
	ctx := context.Background()
	bk, err := s.Bucket(ctx, "test", 0)
	if err != nil {
		t.Fatal(err)
	}
	if v, created, _ := bk.Create(ctx, "k", []byte("first")); string(v) != "first" || !created {
		t.Errorf("first create = %q, %v", v, created)
	}
	if v, created, _ := bk.Create(ctx, "k", []byte("first")); string(v) != "first" || created {
		t.Errorf("an identical second create = %q, created %v; want the first value, not created", v, created)
	}
	if _, ok, err := bk.Get(ctx, "missing"); ok || err != nil {
		t.Errorf("get missing = %v, %v", ok, err)
	}
}

func TestDataDirLock(t *testing.T) {
	if !lockSupported {
		t.Skip("no data directory lock on this platform")
	}
	dir := t.TempDir()
	s := openForTest(t, Options{DataDir: dir})
	if _, err := Open(context.Background(), Options{DataDir: dir}); !errors.Is(err, ErrDataDirInUse) {
		t.Fatalf("second embedded server on the same directory: %v, want ErrDataDirInUse", err)
	}
	s.Close()
	openForTest(t, Options{DataDir: dir}) // closing released the lock
}

func TestExisting(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := Open(ctx, Options{DataDir: dir, Existing: true}); err == nil {
		t.Fatal("Existing created a stream")
	}
	s := openForTest(t, Options{DataDir: dir})
	if _, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: "q1"}, 0, []domain.Envelope{event("E", "e1", "c1", "{}")}); err != nil {
		t.Fatal(err)
	}
	cfg := s.stream.CachedInfo().Config
	cfg.Description = "changed by an operator"
	if _, err := s.js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s = openForTest(t, Options{DataDir: dir, Existing: true})
	info, err := s.stream.Info(ctx)
	if err != nil || info.Config.Description != "changed by an operator" {
		t.Errorf("after an Existing open the description is %q (%v); it must not be updated", info.Config.Description, err)
	}
	if recs, err := s.Load(ctx, domain.Aggregate{Type: "quote", ID: "q1"}); err != nil || len(recs) != 1 {
		t.Errorf("load = %d records, %v", len(recs), err)
	}
	if _, err := Open(ctx, Options{DataDir: t.TempDir(), Stream: "OTHER", Existing: true}); err == nil {
		t.Error("Existing opened a stream that does not exist")
	}
}

func TestUnreadableEventsDoNotStopFollowers(t *testing.T) {
	var logged lockedbuf.Buffer
	s := openForTest(t, Options{DataDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	ctx := context.Background()
	// A message without the envelope, published around the store.
	if _, err := s.js.Publish(ctx, s.prefix+".evt.quote.poison", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	seqs, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: "good"}, 0, []domain.Envelope{event("QuoteRequested", "e1", "c1", "{}")})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = s.Read(ctx, nil, 0, 0, func(r domain.Record) error {
		got = append(got, fmt.Sprintf("%d:%s", r.Sequence, r.Type))
		return nil
	})
	if want := fmt.Sprintf("1: %d:QuoteRequested", seqs[0]); err != nil || strings.Join(got, " ") != want {
		t.Errorf("read = %v, %v; want %s", got, err, want)
	}
	// A load, and a read by sequence, hand it on without a type too: as
	// an event of a type this version does not know, which a command
	// refuses with 503 and a history shows admins as stored. Failing
	// them would fail every read of the aggregate for good.
	loaded, err := s.Load(ctx, domain.Aggregate{Type: "quote", ID: "poison"})
	if err != nil || len(loaded) != 1 || loaded[0].Sequence != 1 || loaded[0].Type != "" {
		t.Errorf("loading an aggregate with an unreadable event: %+v, %v; want it at sequence 1 without a type", loaded, err)
	}
	bySeq, err := s.RecordsAt(ctx, []uint64{1, seqs[0]})
	if err != nil || len(bySeq) != 2 || bySeq[0].Sequence != 1 || bySeq[0].Type != "" || bySeq[1].Type != "QuoteRequested" {
		t.Errorf("reading the events by sequence: %+v, %v; want the unreadable one without a type", bySeq, err)
	}
	// So does a get: a snapshot covering it is checked by one.
	if got, err := s.Get(ctx, domain.Aggregate{Type: "quote", ID: "poison"}, 1); err != nil || got.Sequence != 1 || got.Type != "" {
		t.Errorf("getting the unreadable event: %+v, %v; want it without a type", got, err)
	}
	// Read five times, it is logged once.
	if n := strings.Count(logged.String(), "unreadable event handed on without a type"); n != 1 {
		t.Errorf("the unreadable event was logged %d times:\n%s", n, logged.String())
	}
}

// testConsumerResumes: an event handled as the process shuts down is
// acknowledged all the same. Else the consumer, one event at a time, would
// hand out nothing after a restart until the event's AckWait, a minute,
// had passed.
func testConsumerResumes(t *testing.T, b backend) {
	s, _ := b.open(t)
	ctx := context.Background()
	if _, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: "q1"}, 0, []domain.Envelope{event("QuoteRequested", "e1", "c1", `{}`), event("QuoteStatusPriced", "e2", "c2", `{}`)}); err != nil {
		t.Fatal(err)
	}
	filters := []string{s.Filter("quote", "")}
	failed := func(r domain.Record, err error) { t.Errorf("event %s failed: %v", r.EventID, err) }
	first, shutdown := context.WithCancel(ctx)
	s.Consume(first, "resume", filters, 1, func(domain.Record) error { shutdown(); return nil }, failed)

	again, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()
	var got []string
	s.Consume(again, "resume", filters, 1, func(r domain.Record) error { got = append(got, r.EventID); stop(); return nil }, failed)
	if err := again.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("consume again ended with %v, want the stop after the event", err)
	}
	if strings.Join(got, ",") != "e2" {
		t.Errorf("after the restart the consumer handled %v, want e2", got)
	}
}

func TestAQuietSubscriptionSeldomAsksWhetherTheStreamGrew(t *testing.T) {
	t.Parallel() // mostly waits
	s, asks := oneEventAskedAbout(t)
	ctx := context.Background()
	// Caught up at once, then idle once per quiet second: nine calls
	// are eight seconds or more without an event.
	idle, enough := 0, errors.New("enough")
	start := time.Now()
	err := s.Subscribe(ctx, nil, 0, func(domain.Record) error { return nil }, func() error {
		if idle++; idle == 9 {
			return enough
		}
		return nil
	})
	quiet := time.Since(start)
	if !errors.Is(err, enough) {
		t.Fatalf("subscribe = %v", err)
	}
	// Once after stallAfter, then once each time the quiet doubles.
	if n, most := asks(0), 1+int(math.Log2(quiet.Seconds()/stallAfter.Seconds())); n > most {
		t.Errorf("asked for the stream's last sequence %d times in %s of quiet, want at most %d", n, quiet.Round(time.Second), most)
	}
}

func TestASubscriptionThatMissesWhatThisProcessStoredEndsWithoutAsking(t *testing.T) {
	t.Parallel() // mostly waits
	s, asks := oneEventAskedAbout(t)
	ctx := context.Background()
	// As if the consumer's server had died after an event stored at 5.
	s.committer.stored.Store(5)
	err := s.Subscribe(ctx, nil, 0, func(domain.Record) error { return nil }, nil)
	if err == nil || !strings.Contains(err.Error(), "stalled: nothing after 1") || !strings.Contains(err.Error(), "stream is at 5") {
		t.Fatalf("subscribe = %v, want a stall after event 1 with the stream at 5", err)
	}
	if n := asks(0); n != 0 {
		t.Errorf("asked the server %d times, want none", n)
	}
}

// oneEventAskedAbout is a store with one event, and the count of the
// requests for its stream's last sequence from now on.
func oneEventAskedAbout(t *testing.T) (*Store, func(int) int) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	if _, err := s.Append(context.Background(), domain.Aggregate{Type: "quote", ID: "q"}, 0, decisionOf("d", 1)); err != nil {
		t.Fatal(err)
	}
	return s, countRequests(t, s, "STREAM.INFO")
}

func TestASlowHandlerIsNotTakenForAStalledSubscription(t *testing.T) {
	t.Parallel() // mostly waits
	s, _ := oneEventAskedAbout(t)
	// Once the slow handler returns, an event is stored that the
	// subscription has yet to hear of: a second later it has not, which
	// is no stall, though stallAfter has passed since the last event.
	idle, enough := 0, errors.New("enough")
	err := s.Subscribe(context.Background(), nil, 0, func(domain.Record) error {
		time.Sleep(stallAfter + time.Second) // the slow work
		s.committer.stored.Store(2)
		return nil
	}, func() error {
		// Caught up after the event, then a second without one.
		if idle++; idle == 2 {
			return enough
		}
		return nil
	})
	if !errors.Is(err, enough) {
		t.Errorf("subscribe = %v, want it to wait on after the slow handler", err)
	}
}

// A filtered subscription is caught up only once it has handed over
// every event its consumer delivered and none is left: not when the
// consumer's stream position jumps to the end past events that do not
// match, and not while delivered events wait in the client's buffer.
func TestAFilteredSubscriptionIsCaughtUpOnlyWhenItHandedOverAllItsConsumerDelivered(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	for i := range 5 {
		typ := "booking"
		if i < 2 {
			typ = "quote"
		}
		id := fmt.Sprint("agg-", i)
		if _, err := s.Append(ctx, domain.Aggregate{Type: typ, ID: id}, 0, []domain.Envelope{event("X", id, id, `{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := s.ordered(ctx, []string{s.Filter("quote", "")}, 1, jetstream.PullMaxMessages(10))
	if err != nil {
		t.Fatal(err)
	}
	defer msgs.close()
	cons := msgs.consumer()
	// Handing over the first quote pulls both into the client's buffer.
	next := func() position {
		m, err := msgs.Next(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		meta, _ := m.Metadata()
		return position{consumer: meta.Consumer, seq: meta.Sequence.Consumer}
	}
	handed := next()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if info, err := cons.Info(ctx); err == nil && info.Delivered.Consumer == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the consumer did not deliver the second quote")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if caughtUp, _ := handedAll(ctx, cons, handed); caughtUp {
		t.Error("caught up with a delivered quote not handed over")
	}
	handed = next()
	if caughtUp, waiting := handedAll(ctx, cons, handed); !caughtUp || waiting != 0 {
		t.Error("not caught up after handing over both quotes, the bookings after them not matching")
	}
}

// A long history loads whole and in order, through a consumer of the load's
// own that it deletes, or, when the server makes no consumer, one event at
// a time.
func TestALongHistoryLoadsWholeAndInOrderWithoutLeavingAConsumer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		server func(t *testing.T, s *Store) // sets the server up for the loads
	}{
		{"through a consumer", func(*testing.T, *Store) {}},
		{"when no consumer can be made", allowNoMoreConsumers},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openForTest(t, Options{DataDir: t.TempDir()})
			ctx := context.Background()
			agg := domain.Aggregate{Type: "awbledger", ID: "long"}
			// 100 events, more than a load walks one by one, among others'.
			var seqs []uint64
			var last uint64
			for i := range 100 {
				got, err := s.Append(ctx, agg, last, []domain.Envelope{event("Step", fmt.Sprint("long-", i), "c", fmt.Sprintf(`{"step":%d}`, i))})
				if err != nil {
					t.Fatal(err)
				}
				last = got[0]
				seqs = append(seqs, last)
				if _, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: fmt.Sprint("q", i)}, 0, decisionOf(fmt.Sprint("q", i), 1)); err != nil {
					t.Fatal(err)
				}
			}
			tc.server(t, s)
			consumers, requests := consumersOnTheServer(t, s), apiRequests(t, s)
			// From the start; leaving more, exactly, and fewer events before the
			// last than a load walks one by one; one; none.
			for _, after := range []uint64{0, seqs[65], seqs[66], seqs[67], seqs[98], seqs[99]} {
				recs, err := s.LoadAfter(ctx, agg, after)
				if err != nil {
					t.Fatalf("after %d: %v", after, err)
				}
				var want []uint64
				for _, seq := range seqs {
					if seq > after {
						want = append(want, seq)
					}
				}
				var got []uint64
				for _, r := range recs {
					got = append(got, r.Sequence)
					if want := fmt.Sprint("long-", slices.Index(seqs, r.Sequence)); r.EventID != want {
						t.Errorf("event at %d is %s, want %s", r.Sequence, r.EventID, want)
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("after %d: loaded %v, want %v", after, got, want)
				}
			}
			// The loads from 0 and from seqs[65] ask for a consumer (direct
			// gets do not count as API requests; asking for the count
			// does, once).
			if asked := apiRequests(t, s) - requests - 1; asked < 2 {
				t.Errorf("the long loads made %d JetStream API requests, want a consumer asked for by each of two", asked)
			}
			if n := consumersComeTo(t, s, consumers); n != consumers {
				t.Errorf("%d consumers on the server after the loads, want the %d before them", n, consumers)
			}
		})
	}
}

// apiRequests is how many JetStream API requests the server has had of the
// store's account, this one among them.
func apiRequests(t *testing.T, s *Store) uint64 {
	t.Helper()
	info, err := s.js.AccountInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.API.Total
}

// allowNoMoreConsumers limits the event stream to one consumer and makes
// it: the server then refuses any other, as a cluster does while it elects
// its meta leader.
func allowNoMoreConsumers(t *testing.T, s *Store) {
	ctx := context.Background()
	cfg := s.stream.CachedInfo().Config
	cfg.MaxConsumers = 1
	if _, err := s.js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := s.js.CreateConsumer(ctx, s.name, jetstream.ConsumerConfig{Durable: "the-only-one"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.js.CreateConsumer(ctx, s.name, jetstream.ConsumerConfig{}); err == nil {
		t.Fatal("the server made a consumer beyond the stream's limit")
	}
}

// consumersComeTo waits until the server's streams have want consumers
// (reads delete theirs without waiting), for ten seconds at most, and
// returns how many they have.
func consumersComeTo(t *testing.T, s *Store, want int) int {
	t.Helper()
	n := consumersOnTheServer(t, s)
	for deadline := time.Now().Add(10 * time.Second); n != want && time.Now().Before(deadline); n = consumersOnTheServer(t, s) {
		time.Sleep(10 * time.Millisecond)
	}
	return n
}

// consumersOnTheServer counts the consumers of all the server's streams.
func consumersOnTheServer(t *testing.T, s *Store) int {
	t.Helper()
	n := 0
	streams := s.js.ListStreams(context.Background())
	for info := range streams.Info() {
		n += info.State.Consumers
	}
	if err := streams.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// Every read through an ordered consumer deletes it when it ends, however
// it ends: the server would keep it for minutes, and a busy service would
// pile up hundreds.
func TestAReadLeavesNoConsumerOnTheServer(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	for i := range 5 {
		id := fmt.Sprint("q", i)
		if _, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: id}, 0, decisionOf(id, 2)); err != nil {
			t.Fatal(err)
		}
	}
	last, err := s.LastSequence(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.writeParked(ctx, Parked{Consumer: "webhooks", Sequence: 1}, false); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	ignore := func(domain.Record) error { return nil }
	for _, tc := range []struct {
		name string
		read func(ctx context.Context) error
		want error
	}{
		{"a read of every event", func(ctx context.Context) error {
			return s.Read(ctx, nil, 0, 0, ignore)
		}, nil},
		{"a read of one aggregate", func(ctx context.Context) error {
			return s.Read(ctx, []string{s.Filter("quote", "q1")}, 0, 0, ignore)
		}, nil},
		{"a read whose fn fails", func(ctx context.Context) error {
			return s.Read(ctx, nil, 0, 0, func(domain.Record) error { return stop })
		}, stop},
		{"a replay", func(ctx context.Context) error {
			_, err := s.Replay(ctx, 1, last, func([]domain.Record) error { return nil })
			return err
		}, nil},
		{"a replay whose fn fails", func(ctx context.Context) error {
			_, err := s.Replay(ctx, 1, last, func([]domain.Record) error { return stop })
			return err
		}, stop},
		{"a subscription whose fn fails", func(ctx context.Context) error {
			return s.Subscribe(ctx, nil, 1, func(domain.Record) error { return stop }, nil)
		}, stop},
		{"a subscription whose idle callback fails", func(ctx context.Context) error {
			return s.Subscribe(ctx, []string{s.Filter("quote", "")}, 1, ignore, func() error { return stop })
		}, stop},
		{"a subscription whose context ends", func(ctx context.Context) error {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			return s.Subscribe(ctx, nil, 1, ignore, func() error { cancel(); return nil })
		}, context.Canceled},
		{"a subscription whose consumer was made anew", func(ctx context.Context) error {
			return s.Subscribe(ctx, nil, last, func(r domain.Record) error {
				if r.Sequence > last {
					return stop
				}
				// Its consumer deleted on the server, the subscription
				// goes on with one under another name, and hears of the
				// next event through it.
				names := s.stream.ConsumerNames(ctx)
				for name := range names.Name() {
					if err := s.stream.DeleteConsumer(ctx, name); err != nil {
						return err
					}
				}
				if err := names.Err(); err != nil {
					return err
				}
				_, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: "later"}, 0, decisionOf("later", 1))
				return err
			}, nil)
		}, stop},
		{"a check of the stream", func(ctx context.Context) error {
			return s.Check(ctx, last, func(uint64) {}, func(domain.StreamProblem) {})
		}, nil},
		{"a list of the parked events", func(ctx context.Context) error {
			_, err := s.ParkedEvents(ctx)
			return err
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := consumersOnTheServer(t, s)
			if err := tc.read(ctx); !errors.Is(err, tc.want) {
				t.Fatalf("the read ended with %v, want %v", err, tc.want)
			}
			if n := consumersComeTo(t, s, before) - before; n != 0 {
				t.Errorf("the read left %d consumers on the server, want none", n)
			}
		})
	}
}

// Close may be called from several places at once (a signal and a
// failing start, say): each call returns once the store is closed, and
// a queue opened meanwhile is refused or closed with it.
func TestCloseCalledAtOnceFromSeveralPlacesClosesTheStoreOnce(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	var wg sync.WaitGroup
	var q *Queue
	var queueErr error
	wg.Go(func() { q, queueErr = s.Queue(context.Background(), "jobs") })
	for range 3 {
		wg.Go(s.Close)
	}
	wg.Wait()
	if s.Connected() {
		t.Errorf("the store is still connected after Close")
	}
	if queueErr == nil {
		if err := q.Put(context.Background(), domain.Job{ID: "late", Data: []byte("x")}); err == nil {
			t.Errorf("a queue opened as the store closed took a job after Close")
		}
	}
	if _, err := s.Append(context.Background(), domain.Aggregate{Type: "quote", ID: "q"}, 0, decisionOf("late", 1)); err == nil {
		t.Errorf("an append after Close was taken")
	}
}

func TestFirstSequenceSinceIsTheFirstEventStoredAtOrAfterTheMoment(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			s, _ := b.open(t)
			ctx := context.Background()
			// Two decisions of two events each, stored a moment apart.
			var moments []time.Time
			for i := range 2 {
				moments = append(moments, time.Now())
				time.Sleep(10 * time.Millisecond)
				id := fmt.Sprint("q", i)
				if _, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: id}, 0, decisionOf(id, 2)); err != nil {
					t.Fatal(err)
				}
				time.Sleep(10 * time.Millisecond)
			}
			for _, tc := range []struct {
				name  string
				since time.Time
				want  uint64
			}{
				{"a moment before every event", moments[0], 1},
				{"a moment between two decisions", moments[1], 3},
				{"a moment after every event", time.Now(), 5},
				{"long before the stream began", time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), 1},
				// The server holds a moment as nanoseconds since 1970 in
				// an int64: one outside 1678 to 2262 must not wrap around.
				{"in the year 1600", time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC), 1},
				{"in the year 1", time.Time{}, 1},
				{"in the year 3000", time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), 5},
			} {
				got, last, err := s.FirstSequenceSince(ctx, tc.since)
				if err != nil || got != tc.want || last != 4 {
					t.Errorf("%s: FirstSequenceSince = %d, %d, %v; want %d, 4", tc.name, got, last, err, tc.want)
				}
			}
		})
	}
}

func TestAQuietSubscriptionAsksLessOftenUnlessTheServerDidNotAnswer(t *testing.T) {
	for _, tt := range []struct {
		quiet    time.Duration
		answered bool
		want     time.Duration
	}{
		{4 * time.Second, true, 8 * time.Second},
		{8 * time.Second, true, 16 * time.Second},
		{2 * time.Minute, true, 2*time.Minute + 10*time.Second}, // at most 10 s more
		// An outage: asked again a few seconds on, however long it lasts.
		{4 * time.Second, false, 7 * time.Second},
		{2 * time.Minute, false, 2*time.Minute + 3*time.Second},
	} {
		if got := nextStallAsk(tt.quiet, tt.answered); got != tt.want {
			t.Errorf("nextStallAsk(%s, answered %v) = %s, want %s", tt.quiet, tt.answered, got, tt.want)
		}
	}
}

// Events read by sequence are kept, and an event many callers want at
// once is read once: 16 readers of the same 20 events make 20 reads of
// the stream, and reading them again none.
func TestEventsReadBySequenceAreReadOnceAndKept(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	var seqs []uint64
	for i := range 20 {
		appended, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: fmt.Sprint("q", i)}, 0,
			[]domain.Envelope{event("QuoteRequested", fmt.Sprint("e", i), fmt.Sprint("c", i), fmt.Sprintf(`{"n":%d}`, i))})
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, appended...)
	}
	counted := &countedGets{Stream: s.stream}
	s.stream = counted
	read := func() {
		recs, err := s.RecordsAt(ctx, seqs)
		if err != nil {
			t.Error(err)
			return
		}
		for i, r := range recs {
			if r.Sequence != seqs[i] || r.EventID != fmt.Sprint("e", i) || string(r.Data) != fmt.Sprintf(`{"n":%d}`, i) {
				t.Errorf("record %d = %+v", i, r)
			}
		}
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(read)
	}
	wg.Wait()
	if n := counted.calls.Load(); n != int64(len(seqs)) {
		t.Errorf("16 readers of %d events read the stream %d times", len(seqs), n)
	}
	read()
	if n := counted.calls.Load(); n != int64(len(seqs)) {
		t.Errorf("reading them again read the stream %d times more", n-int64(len(seqs)))
	}
}

// countedGets is a stream that counts its reads by sequence.
type countedGets struct {
	jetstream.Stream
	calls atomic.Int64
}

func (s *countedGets) GetMsg(ctx context.Context, seq uint64, opts ...jetstream.GetMsgOpt) (*jetstream.RawStreamMsg, error) {
	s.calls.Add(1)
	return s.Stream.GetMsg(ctx, seq, opts...)
}

// TestEveryReadOfAnEventTellsWhenTheStreamStoredIt: a record carries the
// time the server stored its event, whichever way it was read (the
// identity read model revokes tokens by it, and a replay must find what
// the live model found).
func TestEveryReadOfAnEventTellsWhenTheStreamStoredIt(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	agg := domain.Aggregate{Type: "awbledger", ID: "long"}
	var last uint64
	for i := range maxWalk + 8 { // more than a load walks one by one
		got, err := s.Append(ctx, agg, last, []domain.Envelope{event("Step", fmt.Sprint("e", i), fmt.Sprint("c", i), `{}`)})
		if err != nil {
			t.Fatal(err)
		}
		last = got[0]
	}
	stored := map[uint64]time.Time{}
	for seq := uint64(1); seq <= last; seq++ {
		m, err := s.stream.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		stored[seq] = m.Time
	}
	check := func(way string, recs ...domain.Record) {
		t.Helper()
		if len(recs) == 0 {
			t.Errorf("%s: read nothing", way)
		}
		for _, r := range recs {
			if r.StoredAt.IsZero() || !r.StoredAt.Equal(stored[r.Sequence]) {
				t.Errorf("%s: the event at %d says it was stored at %v, the stream at %v", way, r.Sequence, r.StoredAt, stored[r.Sequence])
			}
		}
	}
	loaded, err := s.Load(ctx, agg) // one by one, then through a consumer
	if err != nil {
		t.Fatal(err)
	}
	check("a load", loaded...)
	got, err := s.Get(ctx, agg, last)
	if err != nil {
		t.Fatal(err)
	}
	check("a get", got)
	bySeq, err := s.RecordsAt(ctx, []uint64{1, last})
	if err != nil {
		t.Fatal(err)
	}
	check("a read by sequence", bySeq...)
	var read, replayed, followed []domain.Record
	if err := s.Read(ctx, nil, 1, 0, func(r domain.Record) error { read = append(read, r); return nil }); err != nil {
		t.Fatal(err)
	}
	check("a read", read...)
	if _, err := s.Replay(ctx, 1, last, func(rs []domain.Record) error { replayed = append(replayed, rs...); return nil }); err != nil {
		t.Fatal(err)
	}
	check("a replay", replayed...)
	subscribed, cancel := context.WithCancel(ctx)
	defer cancel()
	err = s.Subscribe(subscribed, nil, 1, func(r domain.Record) error {
		followed = append(followed, r)
		if r.Sequence == last {
			return errFollowedAll
		}
		return nil
	}, nil)
	if !errors.Is(err, errFollowedAll) {
		t.Fatal(err)
	}
	check("a subscription", followed...)
}

var errFollowedAll = errors.New("followed every event")

// A server with no room for more events (its JetStream storage limit, or
// its disk, full) refuses every write: the append says the store is full,
// which is the store unavailable too (nothing stored, the same command
// succeeds once there is room), and the log says what to do, once. The
// writes were refused as if the store had not answered in time.
func TestAStoreWithNoRoomSaysSo(t *testing.T) {
	srv := natstest.Start(t, &server.Options{Port: server.RANDOM_PORT, JetStreamMaxStore: 256 << 10})
	var logged lockedbuf.Buffer
	s := openForTest(t, Options{URL: srv.ClientURL(), Replicas: 1, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	ctx := context.Background()
	data := `{"note":"` + strings.Repeat("x", 8<<10) + `"}`
	var err error
	for i := 0; err == nil && i < 100; i++ {
		_, err = s.Append(ctx, domain.Aggregate{Type: "quote", ID: fmt.Sprint("q", i)}, 0,
			[]domain.Envelope{event("QuoteRequested", fmt.Sprint("e", i), fmt.Sprint("c", i), data)})
	}
	if !errors.Is(err, domain.ErrStoreFull) || !errors.Is(err, domain.ErrStoreUnavailable) {
		t.Fatalf("the last append = %v, want the store full", err)
	}
	_, err = s.Append(ctx, domain.Aggregate{Type: "quote", ID: "again"}, 0, []domain.Envelope{event("QuoteRequested", "again", "again", data)})
	if !errors.Is(err, domain.ErrStoreFull) {
		t.Errorf("the next append = %v, want the store full", err)
	}
	if n := strings.Count(logged.String(), "no room for more events and refuses every write"); n != 1 {
		t.Errorf("said %d times that the server has no room:\n%s", n, logged.String())
	}
}

// A server that has room again after it refused writes for want of it
// is said to, once, at the first append it stores: the ERROR line that it
// has none stops coming, and nothing said the room made was enough.
func TestAStoreWithRoomAgainSaysSoOnce(t *testing.T) {
	opts := &server.Options{Port: server.RANDOM_PORT, JetStreamMaxStore: 256 << 10}
	srv := natstest.Start(t, opts)
	var logged lockedbuf.Buffer
	s := openForTest(t, Options{URL: srv.ClientURL(), Replicas: 1, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	ctx := context.Background()
	data := `{"note":"` + strings.Repeat("x", 8<<10) + `"}`
	appendOne := func(id string) error {
		_, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: id}, 0, []domain.Envelope{event("QuoteRequested", id, id, data)})
		return err
	}
	var err error
	for i := 0; err == nil && i < 100; i++ {
		err = appendOne(fmt.Sprint("q", i))
	}
	if !errors.Is(err, domain.ErrStoreFull) {
		t.Fatalf("the last append = %v, want the store full", err)
	}
	const again = "stores writes again"
	if strings.Contains(logged.String(), again) {
		t.Fatalf("said the server stores writes again while it had no room:\n%s", logged.String())
	}
	// Room made, as an operator would: the storage limit raised, and the
	// server's configuration reloaded.
	more := *opts
	more.Port, more.JetStreamMaxStore = srv.Addr().(*net.TCPAddr).Port, 4<<20
	if err := srv.ReloadOptions(&more); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"after1", "after2"} {
		if err := appendOne(id); err != nil {
			t.Fatalf("append %s once there is room: %v", id, err)
		}
	}
	if n := strings.Count(logged.String(), again); n != 1 {
		t.Errorf("said %d times that the server stores writes again:\n%s", n, logged.String())
	}
}

// fullStore is a store of a server with 256 KiB of room, filled with the
// values of bucket b until it had none (err is the put that found none),
// and its log.
func fullStore(t *testing.T) (s *Store, b *Bucket, value []byte, err error, logged *lockedbuf.Buffer) {
	t.Helper()
	srv := natstest.Start(t, &server.Options{Port: server.RANDOM_PORT, JetStreamMaxStore: 256 << 10})
	logged = &lockedbuf.Buffer{}
	s = openForTest(t, Options{URL: srv.ClientURL(), Replicas: 1, Logger: slog.New(slog.NewTextHandler(logged, nil))})
	if b, err = s.Bucket(context.Background(), "test", 0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Create(context.Background(), "small", []byte("1")); err != nil {
		t.Fatal(err)
	}
	value = make([]byte, 32<<10) // random: incompressible
	rand.Read(value)
	for i := 0; err == nil && i < 100; i++ { // until the server has no room
		err = b.Put(context.Background(), fmt.Sprint("filler", i), value)
	}
	return s, b, value, err, logged
}

// A write the server refuses for want of room says the store is full,
// logged once, whatever it writes: a bucket's (a POST with an
// Idempotency-Key, whose key is taken in a bucket first, was told the
// store did not answer in time, Retry-After: 1, where the same POST
// without a key was told it has no room, Retry-After: 60), a job's (a
// webhook's ping or redelivery, queued at once) and a parked event's.
func TestAWriteOnAServerWithNoRoomSaysTheStoreIsFull(t *testing.T) {
	s, b, value, filled, logged := fullStore(t)
	ctx := context.Background()
	_, rev, _, err := b.GetRevision(ctx, "small")
	if err != nil {
		t.Fatal(err)
	}
	q, err := s.Queue(ctx, "jobs")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		write func() error
	}{
		{"the put that found no room", func() error { return filled }},
		{"a bucket's create", func() error { _, _, err := b.Create(ctx, "new", value); return err }},
		{"a bucket's put", func() error { return b.Put(ctx, "new", value) }},
		{"a bucket's update", func() error { _, err := b.Update(ctx, "small", value, rev); return err }},
		{"a job put", func() error { return q.Put(ctx, domain.Job{ID: "ping", Data: value}) }},
		{"a parked event", func() error {
			return s.writeParked(ctx, Parked{Consumer: "pricing", Sequence: 7, LastError: string(value)}, false)
		}},
	}
	for _, tt := range tests {
		if err := tt.write(); !errors.Is(err, domain.ErrStoreFull) || !errors.Is(err, domain.ErrStoreUnavailable) {
			t.Errorf("%s on a server with no room = %v, want the store full", tt.name, err)
		}
	}
	if n := strings.Count(logged.String(), "no room for more events and refuses every write"); n != 1 {
		t.Errorf("said %d times that the server has no room:\n%s", n, logged.String())
	}
}

// A subscription too slow for its messages has them dropped by nats.go,
// which reports it apart from any call: the log says so, with the
// connection and the subscription's subject (nats.go alone printed a line
// on stderr, outside the log).
func TestASubscriptionTooSlowForItsMessagesIsLoggedWithItsSubject(t *testing.T) {
	var logged lockedbuf.Buffer
	s := openForTest(t, Options{DataDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	release := make(chan struct{})
	sub, err := s.nc.Subscribe("test.slow", func(*nats.Msg) { <-release })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	defer close(release)
	if err := sub.SetPendingLimits(1, -1); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if err := s.nc.Publish("test.slow", nil); err != nil {
			t.Fatal(err)
		}
	}
	want := `msg="eventstore: NATS reports an error" connection=cargostream err="nats: slow consumer, messages dropped" subject=test.slow`
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logged.String(), want); {
		if time.Now().After(deadline) {
			t.Fatalf("logged:\n%s\nwant a line with %s", logged.String(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
