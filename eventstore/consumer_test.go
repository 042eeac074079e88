package eventstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore/natstest"
	"github.com/cargostream/cargostream/internal/lockedbuf"
	"github.com/nats-io/nats-server/v2/server"
)

// appendEach appends, for each aggregate id, one event per event id given.
func appendEach(t *testing.T, s *Store, events map[string][]string) {
	t.Helper()
	for id, eventIDs := range events {
		var last uint64
		for _, e := range eventIDs {
			seqs, err := s.Append(context.Background(), domain.Aggregate{Type: "quote", ID: id}, last, []domain.Envelope{event("QuoteRequested", e, "c-"+e, `{}`)})
			if err != nil {
				t.Fatal(err)
			}
			last = seqs[0]
		}
	}
}

// consumeUntil runs Consume until done is closed, or fails the test
// after a minute, which only a hung consumer takes.
func consumeUntil(t *testing.T, s *Store, name string, parallel int, done <-chan struct{}, fn func(ctx context.Context, r domain.Record) error) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() {
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Error("the consumer did not finish within a minute")
		}
		stop()
	}()
	s.Consume(ctx, name, []string{s.Filter("quote", "")}, parallel, func(r domain.Record) error { return fn(ctx, r) }, func(domain.Record, error) {})
}

func TestConsumerKeepsAggregateOrderAndRunsAggregatesConcurrently(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	appendEach(t, s, map[string][]string{"a": {"a1", "a2", "a3"}, "b": {"b1"}})

	var mu sync.Mutex
	var order []string
	inside := map[string]int{} // handlers running, by aggregate
	// a1 and b1 each wait for the other to be inside: only concurrent
	// handling lets both finish.
	met := make(chan struct{})
	var meet sync.WaitGroup
	meet.Add(2)
	go func() { meet.Wait(); close(met) }()
	done := make(chan struct{})
	consumeUntil(t, s, "order", 4, done, func(ctx context.Context, r domain.Record) error {
		mu.Lock()
		inside[r.Aggregate.ID]++
		if inside[r.Aggregate.ID] > 1 {
			t.Errorf("%s handled while an earlier event of its aggregate was", r.EventID)
		}
		mu.Unlock()
		if r.EventID == "a1" || r.EventID == "b1" {
			meet.Done()
			select {
			case <-met:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		mu.Lock()
		defer mu.Unlock()
		inside[r.Aggregate.ID]--
		order = append(order, r.EventID)
		if len(order) == 4 {
			close(done)
		}
		return nil
	})
	var ofA []string
	for _, id := range order {
		if strings.HasPrefix(id, "a") {
			ofA = append(ofA, id)
		}
	}
	if got := strings.Join(ofA, ","); got != "a1,a2,a3" || len(order) != 4 {
		t.Errorf("handled %v; the events of a in order %s, want a1,a2,a3", order, got)
	}
}

func TestConsumerTriesAFailedEventAgainBeforeTheNextOfItsAggregate(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	appendEach(t, s, map[string][]string{"a": {"a1", "a2"}})

	var calls []string
	done := make(chan struct{})
	consumeUntil(t, s, "retry", 4, done, func(ctx context.Context, r domain.Record) error {
		calls = append(calls, r.EventID)
		if len(calls) == 1 {
			return context.DeadlineExceeded // any failure
		}
		if r.EventID == "a2" {
			close(done)
		}
		return nil
	})
	if got := strings.Join(calls, ","); got != "a1,a1,a2" {
		t.Errorf("calls %s, want a1,a1,a2", got)
	}
}

// At debug, each event a consumer handles is a line, with the try that
// succeeded: an operator following a reactor sees what it did; at info
// none is, as reactors handle every event of the stream.
func TestAConsumerLogsEachEventItHandledAtDebugOnly(t *testing.T) {
	for _, tt := range []struct {
		level  slog.Level
		logged bool
	}{
		{slog.LevelDebug, true},
		{slog.LevelInfo, false},
	} {
		t.Run(tt.level.String(), func(t *testing.T) {
			t.Parallel()
			var logs lockedbuf.Buffer
			s := openForTest(t, Options{DataDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: tt.level}))})
			appendEach(t, s, map[string][]string{"a": {"a1", "a2"}})
			tries := 0
			done := make(chan struct{})
			consumeUntil(t, s, "logged", 1, done, func(ctx context.Context, r domain.Record) error {
				if tries++; tries == 1 {
					return context.DeadlineExceeded // any failure
				}
				if r.EventID == "a2" {
					close(done)
				}
				return nil
			})
			// consumeUntil returns once the consumer has stopped, its
			// events' handling over, lines and all.
			first := `msg="eventstore: event handled" consumer=logged sequence=1 type=QuoteRequested aggregate=quote/a attempt=2 took=`
			if got := strings.Contains(logs.String(), first); got != tt.logged {
				t.Errorf("the line %q logged: %v, want %v; logs:\n%s", first, got, tt.logged, logs.String())
			}
		})
	}
}

func TestConsumerHandsTheEventsInHandToTheNextConsumerWhenItStops(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	appendEach(t, s, map[string][]string{"a": {"a1", "a2"}})

	// a1 is under way, a2 waits behind it, when the consumer stops.
	stopping := make(chan struct{})
	consumeUntil(t, s, "handover", 4, stopping, func(ctx context.Context, r domain.Record) error {
		if r.EventID == "a1" {
			close(stopping)
		}
		<-ctx.Done()
		return ctx.Err()
	})
	// An event stored after the stop.
	if _, err := s.Append(context.Background(), domain.Aggregate{Type: "quote", ID: "a"}, 2, []domain.Envelope{event("E", "a3", "c3", "{}")}); err != nil {
		t.Fatal(err)
	}

	// The next consumer gets both events left in hand before the one
	// behind them; the server may return the two in either order.
	var got []string
	done := make(chan struct{})
	consumeUntil(t, s, "handover", 4, done, func(ctx context.Context, r domain.Record) error {
		got = append(got, r.EventID)
		if r.EventID == "a3" {
			close(done)
		}
		return nil
	})
	if g := strings.Join(got, ","); (g != "a1,a2,a3" && g != "a2,a1,a3") || len(got) != 3 {
		t.Errorf("the next consumer handled %v, want a1 and a2, then a3", got)
	}
}

// lineSignal is a log destination that sends on c each time a line
// containing text is written, unless c is full: a logger blocked on it
// would hold up the follower that logs, and the test's end with it.
type lineSignal struct {
	text string
	c    chan struct{}
}

func (w lineSignal) Write(p []byte) (int, error) {
	if strings.Contains(string(p), w.text) {
		select {
		case w.c <- struct{}{}:
		default:
		}
	}
	return len(p), nil
}

func TestRestartedConsumersAndQueueWorkersLeaveNoGoroutineBehind(t *testing.T) {
	restarted := lineSignal{text: "ended; beginning it again", c: make(chan struct{}, 16)}
	s := openForTest(t, Options{DataDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(restarted, nil))})
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	q, err := s.Queue(ctx, "restarts")
	if err != nil {
		t.Fatal(err)
	}
	// Room for every event and job, handed out again or not: a handler
	// blocked on a full channel would count as a goroutine left behind.
	handled, worked := make(chan string, 64), make(chan string, 64)
	go s.Consume(ctx, "restarts", []string{s.Filter("quote", "")}, 1, func(r domain.Record) error { handled <- r.EventID; return nil },
		func(r domain.Record, err error) { t.Errorf("event %s failed: %v", r.EventID, err) })
	go q.Work(ctx, 1, func(_ context.Context, id string, _ []byte, _ int) time.Duration { worked <- id; return 0 })
	// A consumer made anew hands out the earlier events again.
	within := func(what string, c <-chan string, want string) {
		t.Helper()
		timeout := time.After(time.Minute)
		for {
			select {
			case got := <-c:
				if got == want {
					return
				}
			case <-timeout:
				t.Fatalf("%s no %s within a minute", what, want)
			}
		}
	}
	// round shows both followers at work: an event handled, a job done.
	round := func(i int) {
		t.Helper()
		appendEach(t, s, map[string][]string{fmt.Sprint("q", i): {fmt.Sprint("e", i)}})
		if err := q.Put(ctx, domain.Job{ID: fmt.Sprint("j", i)}); err != nil {
			t.Fatal(err)
		}
		within("handled", handled, fmt.Sprint("e", i))
		within("worked", worked, fmt.Sprint("j", i))
	}
	round(0)
	before := ourGoroutines()
	const restarts = 4
	for i := 1; i <= restarts; i++ {
		// Deleting their consumers ends both sessions, with the pull
		// each has waiting; each is begun again.
		for stream, consumer := range map[string]string{s.name: s.prefix + "-restarts", q.stream: "workers"} {
			deleteWhilePulling(t, s, stream, consumer)
		}
		for range 2 {
			select {
			case <-restarted.c:
			case <-time.After(time.Minute):
				t.Fatalf("restart %d: a follower did not begin again within a minute", i)
			}
		}
		round(i)
	}
	// Goroutines of the ended sessions wind down in their own time; one
	// left behind per session would keep 2×restarts more for good.
	deadline := time.Now().Add(30 * time.Second)
	for n := ourGoroutines(); n > before; n = ourGoroutines() {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after %d restarts of two followers, %d before", n, restarts, before)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ourGoroutines counts the goroutines that run, or were started by, this
// package's code: not those of NATS and its server, which come and go on
// their own.
func ourGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "cargostream/eventstore.") {
			count++
		}
	}
	return count
}

// deleteWhilePulling deletes a consumer once a pull waits on it: the
// server then tells the puller (with no pull waiting, the puller hears
// nothing and pulls again in vain).
func deleteWhilePulling(t *testing.T, s *Store, stream, consumer string) {
	t.Helper()
	ctx := context.Background()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		info, err := s.js.Consumer(ctx, stream, consumer)
		if err != nil {
			t.Fatal(err)
		}
		if info.CachedInfo().NumWaiting > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pull waited on %s for a minute", consumer)
		}
	}
	if err := s.js.DeleteConsumer(ctx, stream, consumer); err != nil {
		t.Fatal(err)
	}
}

func TestAStoppingReplicaKeepsTheLaterEventsOfAnAggregateWhileItsStepRunsOn(t *testing.T) {
	url := natstest.StartServer(t, 0)
	stopping := openForTest(t, Options{URL: url, Stream: "CARGO"})
	next := openForTest(t, Options{URL: url, Stream: "CARGO"})
	appendEach(t, stopping, map[string][]string{"a": {"a1"}})

	// a1's step runs on for longer than the pin would last without
	// pulls after the stop: the next replica must not have a2 meanwhile.
	stepRunsOn := consumerPinnedTTL + 2*consumerPullExpiry
	var a1Finished atomic.Bool
	started := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		consumeUntil(t, stopping, "hold", 4, started, func(ctx context.Context, r domain.Record) error {
			close(started)
			<-ctx.Done()
			time.Sleep(stepRunsOn)
			a1Finished.Store(true)
			return nil
		})
	}()
	received(t, "a1 in hand of the stopping replica", started)
	if _, err := stopping.Append(context.Background(), domain.Aggregate{Type: "quote", ID: "a"}, 1, []domain.Envelope{event("E", "a2", "c2", "{}")}); err != nil {
		t.Fatal(err)
	}

	done := make(chan struct{})
	consumeUntil(t, next, "hold", 4, done, func(ctx context.Context, r domain.Record) error {
		if r.EventID == "a2" {
			if !a1Finished.Load() {
				t.Error("the next replica handled a2 while the stopping one still handled a1")
			}
			close(done)
		}
		return nil
	})
	received(t, "the stopping replica to stop", stopped)
}

func TestAStoppingReplicaTakesThePinOfTheConsumerOnlyFromItself(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	appendEach(t, s, map[string][]string{"a": {"a1"}})
	durable := s.prefix + "-unpin"

	// a1 in hand keeps this session pinned while the test looks.
	inHand := make(chan struct{})
	done := make(chan struct{})
	go func() {
		consumeUntil(t, s, "unpin", 4, done, func(ctx context.Context, r domain.Record) error {
			close(inHand)
			<-ctx.Done()
			return nil
		})
	}()
	defer close(done)
	received(t, "a1 in hand", inHand)
	ctx := context.Background()
	pin, err := s.pinOf(ctx, durable)
	if err != nil || pin == "" {
		t.Fatalf("pinned to %q (%v), want a pin", pin, err)
	}
	for _, tt := range []struct {
		name  string
		pin   string // the replica's
		after string // the consumer's
	}{
		{"a replica whose pin went to another leaves that one's", "a pin the server gave before", pin},
		{"the replica pinned gives its pin up", pin, ""},
	} {
		if err := s.unpin(ctx, durable, tt.pin); err != nil {
			t.Fatal(err)
		}
		if after, err := s.pinOf(ctx, durable); err != nil || after != tt.after {
			t.Errorf("%s: pinned to %q (%v) after, want %q", tt.name, after, err, tt.after)
		}
	}
}

// Sessions of a consumer that end before they begin, one after the other
// (the cluster has no quorum: the consumer cannot be made), are logged at
// the first, and not again within the minute: each used to be a line,
// every second, for every consumer and queue. One that began and ended is
// news, and logged.
func TestSessionsEndingBeforeTheyBeginAreLoggedOnceAMinute(t *testing.T) {
	var logged lockedbuf.Buffer
	s := &Store{log: slog.New(slog.NewTextHandler(&logged, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sessions := 0
	s.keepFollowing(ctx, "consumer pricing", func(began func()) error {
		switch sessions++; sessions {
		case 3:
			began() // made its consumer, and later ended
		case 5:
			cancel()
		}
		return fmt.Errorf("%w: no quorum", domain.ErrStoreUnavailable)
	})
	lines := strings.Split(strings.TrimSpace(logged.String()), "\n")
	if sessions != 5 || len(lines) != 3 || !strings.Contains(lines[0], "endedBeforeBeginningInARow=1") ||
		strings.Contains(lines[1], "endedBeforeBeginningInARow") || !strings.Contains(lines[2], "endedBeforeBeginningInARow=1") {
		t.Errorf("%d sessions ended (the 3rd after it began), logged:\n%s\nwant the 1st, the 3rd and the 4th", sessions, logged.String())
	}
}

// A streak of failures is logged at its first failure and then once a
// minute; an end starts a new streak, whose first failure is logged.
func TestAStreakOfFailuresIsLoggedAtItsFirstAndOnceAMinute(t *testing.T) {
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	var s streak
	for _, step := range []struct {
		at     time.Duration
		end    bool // the streak ends before this failure
		logged bool
		n      int
	}{
		{0, false, true, 1},
		{time.Second, false, false, 2},
		{59 * time.Second, false, false, 3},
		{time.Minute, false, true, 4},
		{61 * time.Second, false, false, 5},
		{62 * time.Second, true, true, 1},
		{63 * time.Second, false, false, 2},
		{2*time.Minute + 2*time.Second, false, true, 3},
	} {
		if step.end {
			s.end()
		}
		if logged := s.add(start.Add(step.at)); logged != step.logged || s.n != step.n {
			t.Errorf("a failure at +%s: logged %v, %d in a row; want %v, %d", step.at, logged, s.n, step.logged, step.n)
		}
	}
}

// A consumer's pulls interrupted again and again (heartbeats missed every
// second while a node is replaced) are told once, with how many, and that
// they resumed, whether a message tells of it or a quiet without another
// interruption does (a replica that is not pinned gets no message); a
// later interruption is told again, and its end too, even after one.
func TestInterruptionsOfAConsumersPullsAreToldOnceAndWhenTheyResume(t *testing.T) {
	missed := errors.New("nats: no heartbeat received")
	for _, tc := range []struct {
		name  string
		steps func(told *interruptions)
		want  []string
	}{
		{"messages come again", func(told *interruptions) {
			for range 5 {
				told.interrupted(missed)
			}
			told.resumed()
			told.resumed() // a message after a message: nothing to tell
			told.interrupted(missed)
			told.resumed()
		}, []string{
			`level=WARN msg="eventstore: consumer pricing interrupted" interruptedInARow=1 err="nats: no heartbeat received"`,
			`level=INFO msg="eventstore: consumer pricing resumed" interruptedInARow=5`,
			`level=WARN msg="eventstore: consumer pricing interrupted" interruptedInARow=1 err="nats: no heartbeat received"`,
			`level=INFO msg="eventstore: consumer pricing resumed" interruptedInARow=1`,
		}},
		{"no message comes, but no interruption either", func(told *interruptions) {
			told.interrupted(missed)
			told.interrupted(missed)
			told.quietPassed() // as its timer calls it, quietFor later
		}, []string{
			`level=WARN msg="eventstore: consumer pricing interrupted" interruptedInARow=1 err="nats: no heartbeat received"`,
			`level=INFO msg="eventstore: consumer pricing resumed" interruptedInARow=2`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logged lockedbuf.Buffer
			// The timer never fires in the test: the steps call what it
			// would, so that no interleaving of the two changes the lines.
			told := &interruptions{log: slog.New(slog.NewTextHandler(&logged, nil)), what: "consumer pricing", quietFor: time.Hour, connected: func() bool { return true }}
			defer told.stop()
			tc.steps(told)
			lines := strings.Split(strings.TrimSpace(logged.String()), "\n")
			if len(lines) != len(tc.want) {
				t.Fatalf("logged:\n%s\nwant %d lines", logged.String(), len(tc.want))
			}
			for i, line := range lines {
				if !strings.HasSuffix(line, tc.want[i]) {
					t.Errorf("line %d: %s\nwant it to end %s", i+1, line, tc.want[i])
				}
			}
		})
	}
}

// A consumer's pulls that miss their heartbeats (its server silent for
// a while: paused, or the network between) are told interrupted; once
// the server is heard again the replica must tell that they resumed, though
// no event comes to tell it (none is stored meanwhile; on a cluster, only
// the pinned replica gets any). Before, "resumed" came only with a
// message, after more than one interruption: a cluster probe found
// replicas whose reactors said "interrupted" at a node's loss and nothing
// after.
func TestAConsumerWhosePullsWereInterruptedTellsThatTheyResumedWithoutAnEvent(t *testing.T) {
	t.Parallel()
	relay := natstest.StartRelay(t, natstest.Start(t, &server.Options{Port: server.RANDOM_PORT}).Addr().String())
	var logged lockedbuf.Buffer
	s := openForTest(t, Options{URL: relay.URL(), Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	appendEach(t, s, map[string][]string{"a": {"a1"}})
	handled := make(chan string, 1)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	defer func() { stop(); <-done }()
	go func() {
		defer close(done)
		s.Consume(ctx, "pricing", []string{s.Filter("quote", "")}, 4, func(r domain.Record) error {
			handled <- r.EventID
			return nil
		}, func(domain.Record, error) {})
	}()
	received(t, "a1 handled", handled)
	relay.Pause()
	paused := true
	defer func() {
		if paused {
			relay.Resume()
		}
	}()
	waitUntil(t, "the consumer interrupted", func() bool {
		return strings.Contains(logged.String(), `msg="eventstore: consumer pricing interrupted"`)
	})
	relay.Resume()
	paused = false
	waitUntil(t, "the consumer resumed", func() bool {
		text := logged.String()
		return strings.Contains(text[strings.Index(text, `msg="eventstore: consumer pricing interrupted"`):], `msg="eventstore: consumer pricing resumed"`)
	})
	if strings.Contains(logged.String(), "the connection to NATS is lost") {
		t.Logf("the connection was lost while paused; logged:\n%s", logged.String())
	}
}

// A session newly pinned holds its first events back until every event
// delivered before them is handled (see lanes.gated). A consumer whose
// filter passes over the stream's first events has delivered, and
// acknowledged, none of them: its first event is handled at once, not
// held back until the wait gives up.
func TestAConsumerWhoseFilterPassesOverTheStreamsFirstEventsHandlesItsFirstAtOnce(t *testing.T) {
	t.Parallel()
	var logs lockedbuf.Buffer
	s := openForTest(t, Options{DataDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for i := range 5 {
		id := fmt.Sprint("o", i)
		if _, err := s.Append(context.Background(), domain.Aggregate{Type: "org", ID: id}, 0, []domain.Envelope{event("OrganizationCreated", id, "c-"+id, "{}")}); err != nil {
			t.Fatal(err)
		}
	}
	appendEach(t, s, map[string][]string{"q1": {"e1"}})
	handled := make(chan string, 1)
	ctx, stop := context.WithCancel(context.Background())
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		s.Consume(ctx, "pricing", []string{s.Filter("quote", "")}, 4, func(r domain.Record) error {
			handled <- r.EventID
			return nil
		}, func(domain.Record, error) {})
	}()
	defer func() { stop(); <-consumed }()
	if got := received(t, "the quote's event handled", handled); got != "e1" {
		t.Errorf("handled %s, want e1", got)
	}
	if strings.Contains(logs.String(), "pinned to this replica anew") {
		t.Errorf("the first event was held back:\n%s", logs.String())
	}
}

// A handler that finds the store unavailable, or full, or reads its
// resource as it stood before the event, has not failed: the event is
// tried again, with a warning in the store's log that says which, and
// onError, which reactors log at ERROR with their count of failures
// towards parking, is not called. (A store with no room was said to be
// out of reach.)
func TestTheStoreUnavailableIsNoFailureOfTheHandler(t *testing.T) {
	for _, tt := range []struct {
		unavailable error
		says        string
	}{
		{domain.ErrStoreUnavailable, "could not reach the event store"},
		{domain.ErrStoreFull, "the event store has no room"},
		{domain.ErrReadBehind, "read a resource as it stood before the event"},
	} {
		unavailable := tt.unavailable
		t.Run(unavailable.Error(), func(t *testing.T) {
			var log lockedbuf.Buffer
			s := openForTest(t, Options{DataDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&log, nil))})
			appendEach(t, s, map[string][]string{"a": {"a1"}})
			var tries atomic.Int32
			var failures []error
			ctx, stop := context.WithTimeout(context.Background(), time.Minute)
			defer stop()
			s.Consume(ctx, "unavailable", []string{s.Filter("quote", "")}, 1, func(r domain.Record) error {
				if tries.Add(1) == 1 {
					return fmt.Errorf("loading quote a: %w", unavailable)
				}
				stop() // handled: the positive signal
				return nil
			}, func(_ domain.Record, err error) { failures = append(failures, err) })
			if tries.Load() != 2 || len(failures) != 0 {
				t.Errorf("%d tries, failures %v; want the event tried again and no failure", tries.Load(), failures)
			}
			if !strings.Contains(log.String(), "level=WARN") || !strings.Contains(log.String(), "is tried again") ||
				!strings.Contains(log.String(), tt.says) {
				t.Errorf("the store's log: %s; want a warning that says %q and that the event is tried again", log.String(), tt.says)
			}
		})
	}
}
