package eventstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore/natstest"
	"github.com/nats-io/nats.go/jetstream"
)

// observed records what an Observer hears (but held pulls, which
// cluster tests hear with heldPulls).
type observed struct {
	unobserved
	mu        sync.Mutex
	batches   []int
	decisions int
	events    []string
	parked    []string
}

func (o *observed) BatchStored(events int, took time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.batches = append(o.batches, events)
}

func (o *observed) DecisionStored(took time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.decisions++
}

func (o *observed) EventStored(eventType string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.events = append(o.events, eventType)
}

func (o *observed) EventParked(consumer string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.parked = append(o.parked, consumer)
}

func TestObserverHearsOfEveryBatchDecisionAndEventStored(t *testing.T) {
	obs := &observed{}
	s := openForTest(t, Options{DataDir: t.TempDir(), Observer: obs})
	if _, err := s.Append(context.Background(), domain.Aggregate{Type: "quote", ID: "q1"}, 0, []domain.Envelope{
		event("QuoteRequested", "e1", "c1", `{}`), event("QuotePriced", "e2", "c1", `{}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(context.Background(), domain.Aggregate{Type: "quote", ID: "q2"}, 0, []domain.Envelope{event("QuoteRequested", "e3", "c3", `{}`)}); err != nil {
		t.Fatal(err)
	}
	// The committer tells the observer after it answered the appends.
	waitUntil(t, "the observer to hear of three events", func() bool {
		obs.mu.Lock()
		defer obs.mu.Unlock()
		return len(obs.events) >= 3
	})
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if !slices.Equal(obs.batches, []int{2, 1}) || obs.decisions != 2 ||
		!slices.Equal(obs.events, []string{"QuoteRequested", "QuotePriced", "QuoteRequested"}) {
		t.Errorf("heard batches %v, %d decisions, events %v; want [2 1], 2, QuoteRequested QuotePriced QuoteRequested",
			obs.batches, obs.decisions, obs.events)
	}
}

// waitUntil polls cond until it holds, or fails the test after a minute.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s after a minute", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// received is the next value from ch, or fails the test after a minute:
// a test waiting for a signal that never comes fails, naming it, rather
// than hanging the run.
func received[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		t.Fatalf("still waiting for %s after a minute", what)
		panic("unreachable")
	}
}

// parkedOf lists the parked events, failing the test on an error.
func parkedOf(t *testing.T, s *Store) []Parked {
	t.Helper()
	parked, err := s.ParkedEvents(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return parked
}

// consumeAsPricing consumes the quote stream as "pricing" until the test
// ends, and returns how many times each event, by id, was handled. An
// event is handed to fail first, unless it is nil: what fail returns or
// panics with is the handler's, and only an event it lets by (nil) counts
// as handled.
func consumeAsPricing(t *testing.T, s *Store, fail func(domain.Record) error) (count func(eventID string) int) {
	t.Helper()
	var mu sync.Mutex
	handled := map[string]int{}
	ctx, stop := context.WithCancel(context.Background())
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		s.Consume(ctx, "pricing", []string{s.Filter("quote", "")}, 4, func(r domain.Record) error {
			if fail != nil {
				if err := fail(r); err != nil {
					return err
				}
			}
			mu.Lock()
			defer mu.Unlock()
			handled[r.EventID]++
			return nil
		}, func(domain.Record, error) {})
	}()
	// Registered after the store's own cleanup, this runs first: the
	// consumer stops before the store closes.
	t.Cleanup(func() {
		stop()
		received(t, "the pricing consumer to stop", consumed)
	})
	return func(id string) int {
		mu.Lock()
		defer mu.Unlock()
		return handled[id]
	}
}

func TestAConsumerParksAnEventThatKeepsFailingGoesOnAndHandlesItWhenRetriedAfterTheFix(t *testing.T) {
	for _, tt := range []struct {
		name      string
		fail      func() error
		lastError string
	}{
		{name: "an error", fail: func() error { return errors.New("no rate card for FRA-JFK") }, lastError: "no rate card for FRA-JFK"},
		{name: "a panic", fail: func() error { panic("nil map") }, lastError: "panic: nil map"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			obs := &observed{}
			s := openForTest(t, Options{DataDir: t.TempDir(), ConsumerAttempts: 3, Observer: obs})
			s.retryPause = time.Millisecond
			appendEach(t, s, map[string][]string{"a": {"a1", "a2"}, "b": {"b1"}})

			var failures atomic.Int32
			var fixed atomic.Bool
			count := consumeAsPricing(t, s, func(r domain.Record) error {
				if r.EventID == "a1" && !fixed.Load() {
					failures.Add(1)
					return tt.fail()
				}
				return nil
			})

			// The events behind the poison one, on its aggregate and another,
			// are handled.
			waitUntil(t, "a2 and b1", func() bool { return count("a2") == 1 && count("b1") == 1 })
			if n := failures.Load(); n != 3 {
				t.Errorf("a1 failed %d times before it was parked, want 3", n)
			}
			parked := parkedOf(t, s)
			if len(parked) != 1 {
				t.Fatalf("parked %+v, want a1", parked)
			}
			p := parked[0]
			if p.Consumer != "pricing" || p.Sequence == 0 || p.AggregateType != "quote" || p.AggregateID != "a" || p.Type != "QuoteRequested" ||
				p.EventID != "a1" || p.Attempts != 3 || p.LastError != tt.lastError || p.RetryAsked || p.ParkedAt.IsZero() {
				t.Errorf("parked %+v", p)
			}
			obs.mu.Lock()
			if !slices.Equal(obs.parked, []string{"pricing"}) {
				t.Errorf("the observer heard of parked events of %v, want pricing", obs.parked)
			}
			obs.mu.Unlock()
			backlogs, err := s.Backlogs(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if i := slices.IndexFunc(backlogs, func(b Backlog) bool { return b.Consumer == "pricing" }); i < 0 || backlogs[i].Parked != 1 {
				t.Errorf("backlogs %+v, want pricing with 1 parked", backlogs)
			}

			// Retried before the fix: it fails again and stays parked.
			if asked, err := s.RetryParked(context.Background(), "", p.Sequence); err != nil || len(asked) != 1 {
				t.Fatalf("retry = %+v, %v", asked, err)
			}
			waitUntil(t, "a1 to be parked again", func() bool {
				parked := parkedOf(t, s)
				return len(parked) == 1 && parked[0].Attempts == 4 && !parked[0].RetryAsked
			})
			// The observer hears of it as of the first parking: the count
			// of events parked rises, which is what an alert watches.
			waitUntil(t, "the observer to hear of a1 parked again", func() bool {
				obs.mu.Lock()
				defer obs.mu.Unlock()
				return slices.Equal(obs.parked, []string{"pricing", "pricing"})
			})

			// Retried after the fix: handled, and no longer parked.
			fixed.Store(true)
			if asked, err := s.RetryParked(context.Background(), "pricing", 0); err != nil || len(asked) != 1 || asked[0].EventID != "a1" {
				t.Fatalf("retry = %+v, %v", asked, err)
			}
			waitUntil(t, "a1 handled and its entry gone", func() bool { return count("a1") == 1 && len(parkedOf(t, s)) == 0 })
			if _, err := s.RetryParked(context.Background(), "", 0); !errors.Is(err, ErrNotParked) {
				t.Errorf("retry with nothing parked = %v, want ErrNotParked", err)
			}
		})
	}
}

// An event whose handling keeps reading its resource up to before it is
// parked, after more failures than others: a read behind it is the store's
// for a moment (a node back from a cut-off), and for good an event gone
// from the resource's reads, which would otherwise hold back the
// resource's later events for ever.
func TestAnEventWhoseResourceIsReadBehindItForGoodIsParkedAfterMoreTries(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir(), ConsumerAttempts: 2})
	s.retryPause = time.Millisecond
	appendEach(t, s, map[string][]string{"a": {"a1", "a2"}})

	var calls []string
	done := make(chan struct{})
	consumeUntil(t, s, "pricing", 4, done, func(ctx context.Context, r domain.Record) error {
		calls = append(calls, r.EventID)
		if r.EventID == "a1" {
			return fmt.Errorf("%w: read quote/a up to 0", domain.ErrReadBehind)
		}
		close(done)
		return nil
	})
	want := slices.Repeat([]string{"a1"}, 2+behindAttempts)
	if !slices.Equal(calls, append(want, "a2")) {
		t.Errorf("calls = %v, want a1 %d times and then a2", calls, len(want))
	}
	if parked := parkedOf(t, s); len(parked) != 1 || parked[0].Attempts != len(want) {
		t.Errorf("parked %+v, want a1 after %d attempts", parked, len(want))
	}
}

func TestFailuresWhileNATSIsUnavailableDoNotCountTowardsParking(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir(), ConsumerAttempts: 2})
	s.retryPause = time.Millisecond
	appendEach(t, s, map[string][]string{"a": {"a1"}})

	calls := 0
	done := make(chan struct{})
	consumeUntil(t, s, "pricing", 4, done, func(ctx context.Context, r domain.Record) error {
		calls++
		if calls <= 5 {
			return fmt.Errorf("%w: no quorum", domain.ErrStoreUnavailable)
		}
		close(done)
		return nil
	})
	if parked := parkedOf(t, s); len(parked) != 0 {
		t.Errorf("parked %+v after failures that were NATS's", parked)
	}
}

func TestARetriedEventWaitsForTheLaterEventOfItsAggregateInHandOnAnyReplica(t *testing.T) {
	url := natstest.StartServer(t, 0)
	var replicas []*Store
	for range 2 {
		s := openForTest(t, Options{URL: url, Stream: "CARGO", ConsumerAttempts: 1})
		s.retryPause = time.Millisecond
		replicas = append(replicas, s)
	}
	appendEach(t, replicas[0], map[string][]string{"a": {"a1"}})

	// a1 fails until fixed, and is parked. a2 is being handled when the
	// retry of a1 is asked for: the retry must wait for it, whichever
	// replica's follower of the retries gets it.
	var fixed, a2Inside, a1Handled atomic.Bool
	var a2Replica atomic.Int32
	a2Started, releaseA2 := make(chan struct{}), make(chan struct{})
	ctx, stop := context.WithCancel(context.Background())
	handle := func(replica int, r domain.Record) error {
		switch {
		case r.EventID == "a1" && !fixed.Load():
			return errors.New("no rate card")
		case r.EventID == "a1":
			if a2Inside.Load() {
				t.Error("the retry of a1 ran while a2 was being handled")
			}
			a1Handled.Store(true)
		case r.EventID == "a2":
			a2Replica.Store(int32(replica))
			a2Inside.Store(true)
			close(a2Started)
			// Held until the retry waits behind it (or, not waiting,
			// has run), or the test ends early.
			select {
			case <-releaseA2:
			case <-ctx.Done():
			}
			a2Inside.Store(false)
		}
		return nil
	}
	var consuming sync.WaitGroup
	defer func() { stop(); consuming.Wait() }()
	consume := func(i int) {
		s := replicas[i]
		consuming.Go(func() {
			s.Consume(ctx, "pricing", []string{s.Filter("quote", "")}, 4, func(r domain.Record) error { return handle(i, r) }, func(domain.Record, error) {})
		})
	}
	consume(0)
	waitUntil(t, "a1 to be parked", func() bool { return len(parkedOf(t, replicas[0])) == 1 })
	consume(1)

	if _, err := replicas[0].Append(context.Background(), domain.Aggregate{Type: "quote", ID: "a"}, 1, []domain.Envelope{event("E", "a2", "c2", "{}")}); err != nil {
		t.Fatal(err)
	}
	received(t, "a2 in hand", a2Started)
	// The replica that does not handle the events hands a retry back.
	other := replicas[1-a2Replica.Load()]
	if err := other.inTurn(ctx, "pricing", domain.Record{Aggregate: domain.Aggregate{Type: "quote", ID: "a"}}, func() error {
		t.Error("a retry ran on the replica that does not handle the consumer's events")
		return nil
	}); !errors.Is(err, errNotOurTurn) {
		t.Errorf("a retry on the other replica: %v, want errNotOurTurn", err)
	}
	fixed.Store(true)
	if _, err := replicas[1].RetryParked(context.Background(), "pricing", 0); err != nil {
		t.Fatal(err)
	}
	// a2 is let go once the retry is queued in its aggregate's lane behind
	// it, on the replica that handles it: a retry that does not wait runs
	// instead, and is told above.
	holder := replicas[a2Replica.Load()]
	waitUntil(t, "the retry of a1 queued behind a2", func() bool {
		return a1Handled.Load() || queuedBehind(holder, "pricing", domain.Aggregate{Type: "quote", ID: "a"}) == 1
	})
	close(releaseA2)
	waitUntil(t, "a1 handled on retry and its entry gone", func() bool { return a1Handled.Load() && len(parkedOf(t, replicas[0])) == 0 })
}

// waitingTurn reports whether s's session of consumer holds back an
// event of agg (newly pinned) or has one queued behind another of agg.
func waitingTurn(s *Store, consumer string, agg domain.Aggregate) bool {
	s.sessionsMu.Lock()
	l := s.sessions[consumer]
	s.sessionsMu.Unlock()
	if l == nil {
		return false
	}
	subject := s.subject(agg)
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.queues[subject]) > 1 || slices.ContainsFunc(l.heldBack, func(it laneItem) bool { return it.subject == subject })
}

// queuedBehind counts what s's session of consumer has queued behind the
// item of agg it is handling.
func queuedBehind(s *Store, consumer string, agg domain.Aggregate) int {
	s.sessionsMu.Lock()
	l := s.sessions[consumer]
	s.sessionsMu.Unlock()
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return max(0, len(l.queues[s.subject(agg)])-1)
}

// A retry waits for its aggregate's turn behind the events in hand, which
// may take longer than the retries' acknowledgement wait: handed out again
// meanwhile, it would be made twice (once it is done, the copy handed out
// again comes and is made again).
func TestARetryWaitingForItsAggregatesTurnIsNotHandedOutAgainMeanwhile(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir(), ConsumerAttempts: 1})
	s.retryPause = time.Millisecond
	// Not a minute, so that the wait in turn outlasts it; not a second
	// either, whose progress acknowledgements (every third of it) a CI
	// machine busy with other packages' tests could hold up past it.
	s.retryAckWait = 3 * time.Second
	appendEach(t, s, map[string][]string{"a": {"a1"}})

	// a1 fails until fixed, and is parked. a2 is then handled for as long
	// as the test holds it, and the retry of a1 waits for it.
	var fixed atomic.Bool
	a2Started, release := make(chan struct{}), make(chan struct{})
	ctx, stop := context.WithCancel(context.Background())
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		s.Consume(ctx, "pricing", []string{s.Filter("quote", "")}, 4, func(r domain.Record) error {
			switch {
			case r.EventID == "a1" && !fixed.Load():
				return errors.New("no rate card")
			case r.EventID == "a2":
				close(a2Started)
				// Held until released, or until the test ends
				// early: else Consume, and so the test, would wait
				// for it for ever.
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
			return nil
		}, func(domain.Record, error) {})
	}()
	defer func() { stop(); <-consumed }()
	waitUntil(t, "a1 to be parked", func() bool { return len(parkedOf(t, s)) == 1 })
	bg := context.Background()
	retries := retryBehindA2(t, s, a2Started, &fixed)
	// Handed out once for the parking, once for the retry.
	waitUntil(t, "the retry in hand", func() bool {
		info, err := retries.Info(bg)
		return err == nil && info.NumAckPending == 1 && info.Delivered.Consumer == 2
	})

	// A message taken now from a consumer of the same acknowledgement
	// wait, and not acknowledged, comes again after the retry would.
	probes, err := s.js.CreateStream(bg, jetstream.StreamConfig{Name: "PROBE", Subjects: []string{"probe"}, Storage: jetstream.MemoryStorage})
	if err != nil {
		t.Fatal(err)
	}
	probe, err := probes.CreateConsumer(bg, jetstream.ConsumerConfig{AckPolicy: jetstream.AckExplicitPolicy, AckWait: s.retryAckWait})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.js.Publish(bg, "probe", nil); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := probe.Next(jetstream.FetchMaxWait(30 * time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	info, err := retries.Info(bg)
	if err != nil {
		t.Fatal(err)
	}
	if info.Delivered.Consumer != 2 {
		t.Errorf("the retry was handed out again while it waited for its turn: %d deliveries, want 2", info.Delivered.Consumer)
	}
	close(release)
	waitUntil(t, "a1 handled on retry and its entry gone", func() bool {
		info, err := retries.Info(bg)
		return err == nil && info.NumAckPending == 0 && info.NumPending == 0
	})
	if parked := parkedOf(t, s); len(parked) != 0 {
		t.Errorf("parked %+v after the retry", parked)
	}
}

// The retries' follower pulls entries ahead of the one it makes, and only
// that one is kept in progress: an entry that waited in the pull's buffer
// behind a retry in want of its aggregate's turn longer than the AckWait
// is handed out again, and its second copy must not run the handler again.
func TestAnEntryHandedOutAgainWhileItWaitedBehindAnotherRetryIsRetriedOnce(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir(), ConsumerAttempts: 1})
	s.retryPause, s.retryAckWait = time.Millisecond, 2*time.Second
	appendEach(t, s, map[string][]string{"a": {"a1"}}) // at sequence 1
	appendEach(t, s, map[string][]string{"b": {"b1"}})
	var fixed atomic.Bool
	a2Started, release := make(chan struct{}), make(chan struct{})
	releaseOnce := sync.OnceFunc(func() { close(release) })
	count := consumeAsPricing(t, s, func(r domain.Record) error {
		switch {
		case (r.EventID == "a1" || r.EventID == "b1") && !fixed.Load():
			return errors.New("no rate card")
		case r.EventID == "a2":
			close(a2Started)
			<-release
		}
		return nil
	})
	t.Cleanup(releaseOnce) // runs before the consumer is stopped
	waitUntil(t, "a1 and b1 to be parked", func() bool { return len(parkedOf(t, s)) == 2 })
	bg := context.Background()
	retries := retryBehindA2(t, s, a2Started, &fixed)
	// Whichever retry is made first, one of a1's and b1's waits behind
	// a2 or behind a1's, and an entry in the buffer is handed out again.
	waitUntil(t, "an entry handed out again", func() bool {
		info, err := retries.Info(bg)
		return err == nil && info.NumRedelivered > 0
	})
	releaseOnce()
	waitUntil(t, "every entry settled", func() bool {
		info, err := retries.Info(bg)
		return err == nil && info.NumAckPending == 0 && info.NumPending == 0 && len(parkedOf(t, s)) == 0
	})
	if a1, b1 := count("a1"), count("b1"); a1 != 1 || b1 != 1 {
		t.Errorf("handled a1 %d times and b1 %d times on one retry each, want once", a1, b1)
	}
}

// retryBehindA2 appends a2 to aggregate a (whose a1, at sequence 1, is
// parked), waits for the pricing consumer to hold it (a2Started), has the
// handler fixed and every parked event retried, and returns the retries'
// consumer.
func retryBehindA2(t *testing.T, s *Store, a2Started <-chan struct{}, fixed *atomic.Bool) jetstream.Consumer {
	t.Helper()
	bg := context.Background()
	if _, err := s.Append(bg, domain.Aggregate{Type: "quote", ID: "a"}, 1, []domain.Envelope{event("E", "a2", "c2", "{}")}); err != nil {
		t.Fatal(err)
	}
	received(t, "a2 in hand", a2Started)
	fixed.Store(true)
	if _, err := s.RetryParked(bg, "pricing", 0); err != nil {
		t.Fatal(err)
	}
	retries, err := s.parked.Consumer(bg, s.prefix+"-pricing-retries")
	if err != nil {
		t.Fatal(err)
	}
	return retries
}

// A replica whose session of the consumer is not open yet (it is
// starting, or beginning its session again) may open it any moment and be
// handed the events of the retried event's aggregate: a retry made there
// meanwhile, outside any lane, would run beside them.
func TestARetryIsNotMadeOnAReplicaWithNoSessionOfTheConsumer(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	appendEach(t, s, map[string][]string{"a": {"a1", "a2"}})
	var consuming sync.WaitGroup
	defer consuming.Wait()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	a2Handled := make(chan struct{})
	var once sync.Once
	err := s.inTurn(ctx, "pricing", domain.Record{Aggregate: domain.Aggregate{Type: "quote", ID: "a"}}, func() error {
		// The retry of a1 runs; the replica's session opens.
		consuming.Go(func() {
			s.Consume(ctx, "pricing", []string{s.Filter("quote", "")}, 4, func(r domain.Record) error {
				if r.EventID == "a2" {
					once.Do(func() { close(a2Handled) })
				}
				return nil
			}, func(domain.Record, error) {})
		})
		<-a2Handled
		t.Error("a2 was handled while the retry of a1 ran")
		return nil
	})
	if !errors.Is(err, errNotOurTurn) {
		t.Errorf("a retry on a replica with no session of the consumer: %v, want errNotOurTurn", err)
	}
}

// A parked entry names its event by sequence and id. Restored from a
// backup taken apart from the event stream's, it may name a sequence that
// now holds another event, another aggregate's, or none (past the end of
// a stream restored from an older backup): a retry hands nothing to the
// reactor, and says in the entry what is at the sequence, rather than
// handle another event and drop the entry as done, or give the server's
// "message not found".
func TestARetryOfAnEntryWhoseEventIsNoLongerAtItsSequenceHandlesNothing(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sequence func(a2, b1 uint64) uint64 // where the entry says its event is
		want     string                     // what its last error says then
	}{
		{"another event of its aggregate", func(a2, _ uint64) uint64 { return a2 },
			"is a2, not a2-of-another-stream, the one parked: the stream is not the one it was parked on"},
		{"another aggregate's event", func(_, b1 uint64) uint64 { return b1 },
			"is b1 of quote/b, not a2-of-another-stream, the one parked: the stream is not the one it was parked on"},
		{"no event: past the stream's end", func(_, b1 uint64) uint64 { return b1 + 100 },
			"the stream has no event at sequence 103, where a2-of-another-stream was parked: the stream lost it, or is not the one it was parked on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openForTest(t, Options{DataDir: t.TempDir()})
			appendEach(t, s, map[string][]string{"a": {"a1", "a2"}})
			appendEach(t, s, map[string][]string{"b": {"b1"}})
			count := consumeAsPricing(t, s, nil)
			waitUntil(t, "a1, a2 and b1", func() bool { return count("a1") == 1 && count("a2") == 1 && count("b1") == 1 })
			a, err := s.Load(context.Background(), domain.Aggregate{Type: "quote", ID: "a"})
			if err != nil {
				t.Fatal(err)
			}
			b, err := s.Load(context.Background(), domain.Aggregate{Type: "quote", ID: "b"})
			if err != nil {
				t.Fatal(err)
			}
			// The entry of an event of a that was at this sequence in the
			// stream the entries' backup was taken of.
			gone := Parked{Consumer: "pricing", Sequence: tc.sequence(a[1].Sequence, b[0].Sequence), AggregateType: "quote", AggregateID: "a",
				Type: "QuoteRequested", EventID: "a2-of-another-stream", ParkedAt: time.Now().UTC(), Attempts: 5, LastError: "no rate card for FRA-JFK"}
			if err := s.writeParked(context.Background(), gone, false); err != nil {
				t.Fatal(err)
			}
			if _, err := s.RetryParked(context.Background(), "", gone.Sequence); err != nil {
				t.Fatal(err)
			}
			waitUntil(t, "the entry parked again", func() bool {
				parked := parkedOf(t, s)
				return len(parked) == 1 && parked[0].Attempts == 6 && !parked[0].RetryAsked
			})
			if p := parkedOf(t, s)[0]; p.EventID != gone.EventID || !strings.Contains(p.LastError, tc.want) {
				t.Errorf("parked again with the last error %q, want it to say %q", p.LastError, tc.want)
			}
			if n := count("a2") + count("b1"); n != 2 {
				t.Errorf("a2 and b1 handled %d times together, want once each: the retry handed one over in the place of the parked event", n)
			}
		})
	}
}

// A session's first event may be one delivered again (left in hand by the
// session before, at a restart): it is pinned anew all the same, and once
// every event delivered before is handled, it takes retries of parked
// events, without waiting for an event delivered for the first time.
func TestARetryAskedOfASessionWhoseFirstEventWasDeliveredAgainIsMade(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir(), ConsumerAttempts: 1})
	s.retryPause = time.Millisecond
	appendEach(t, s, map[string][]string{"a": {"a1"}, "x": {"x1"}})

	// The first session parks a1, and stops with x1 in hand.
	ctx, stop := context.WithCancel(context.Background())
	xInHand, stopped := make(chan struct{}, 1), make(chan struct{})
	go func() {
		defer close(stopped)
		s.Consume(ctx, "pricing", []string{s.Filter("quote", "")}, 4, func(r domain.Record) error {
			switch r.EventID {
			case "a1":
				return errors.New("no rate card")
			case "x1":
				xInHand <- struct{}{}
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		}, func(domain.Record, error) {})
	}()
	received(t, "x1 in hand", xInHand)
	waitUntil(t, "a1 to be parked", func() bool { return len(parkedOf(t, s)) == 1 })
	stop()
	received(t, "the first session to stop", stopped)

	count := consumeAsPricing(t, s, nil)
	waitUntil(t, "x1 handled, delivered again", func() bool { return count("x1") == 1 })
	if _, err := s.RetryParked(context.Background(), "pricing", 0); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "a1 handled on retry", func() bool { return count("a1") == 1 })
}
