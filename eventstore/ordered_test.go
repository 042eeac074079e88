package eventstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestAReadWhoseConsumerIsDeletedReadsOnFromTheMessageAfterTheLastHandedOver
// deletes a read's consumer on the server after the read handed over its
// first event, while the client holds the next ones already pulled: the
// read makes a new consumer and hands over every later event once, in
// order, including one stored after the deletion.
func TestAReadWhoseConsumerIsDeletedReadsOnFromTheMessageAfterTheLastHandedOver(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	write := func(id string) {
		t.Helper()
		if _, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: id}, 0, []domain.Envelope{event("X", id, id, `{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"a", "b", "c"} {
		write(id)
	}
	msgs, err := s.ordered(ctx, nil, 1, jetstream.PullHeartbeat(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer msgs.close()
	var got []string
	next := func() {
		t.Helper()
		got = append(got, nextID(ctx, t, msgs, got))
	}
	next()
	first := msgs.consumer().CachedInfo().Name
	if err := s.stream.DeleteConsumer(ctx, first); err != nil {
		t.Fatal(err)
	}
	write("d")
	for len(got) < 4 {
		next()
	}
	if want := []string{"a", "b", "c", "d"}; !slices.Equal(got, want) {
		t.Errorf("the read handed over %v, want %v", got, want)
	}
	if now := msgs.consumer().CachedInfo().Name; now == first {
		t.Errorf("the read still names its deleted consumer %s", first)
	}
}

// A read whose connection to NATS is made again as events are sent to it
// hands over every event once, in order: what the consumer sent while the
// connection was down is lost, and the consumer, acknowledging nothing,
// counts it as delivered, so the read makes a new one from the event
// after the last it handed over. (The first version of the read pulled
// again from the same consumer, and waited for good.)
func TestAReadWhoseConnectionIsMadeAgainHandsOverEveryEventOnce(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var writes sync.WaitGroup
	defer writes.Wait() // before ctx ends: a write's answer may come after its event is read
	write := func(id string) {
		defer writes.Done()
		if _, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: id}, 0, []domain.Envelope{event("X", id, id, `{}`)}); err != nil {
			t.Error(err)
		}
	}
	writes.Add(1)
	write("e0")
	msgs, err := s.ordered(ctx, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer msgs.close()
	var got, want []string
	for i := range 20 {
		id := fmt.Sprint("e", i)
		want = append(want, id)
		if i > 0 {
			writes.Add(1)
			go write(id)
			time.Sleep(time.Duration(i%5) * 200 * time.Microsecond)
			s.nc.ForceReconnect()
		}
		got = append(got, nextID(ctx, t, msgs, got))
	}
	if !slices.Equal(got, want) {
		t.Errorf("the read handed over %v, want %v", got, want)
	}
}

// A subscription to every event whose consumer cannot be made (the
// cluster electing its meta leader refuses it), at its start or after its
// consumer was lost, hands over the events by getting them from the
// stream's leader, in order, those stored while it waits too; once the
// consumer can be made, it reads on through it and hands over no event
// twice. (The build before waited up to 20 s for the consumer, handing
// over nothing, and then failed.)
func TestASubscriptionWhoseConsumerCannotBeMadeWalksTheStreamUntilItIs(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	write := func(ids ...string) {
		t.Helper()
		for _, id := range ids {
			if _, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: id}, 0, []domain.Envelope{event("X", id, id, `{}`)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var mu sync.Mutex
	var got []string
	subscribed := make(chan error, 1)
	go func() {
		s.readConsumersRefused.Store(true)
		subscribed <- s.Subscribe(ctx, nil, 1, func(r domain.Record) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, r.EventID)
			return nil
		}, nil)
	}()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			select {
			case err := <-subscribed:
				t.Fatalf("%s: the subscription ended: %v", what, err)
			case <-ctx.Done():
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("%s: the subscription handed over %v", what, got)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	handedOver := func(n int) func() bool {
		return func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(got) >= n
		}
	}
	consumers := func() []string {
		var names []string
		for name := range s.stream.ListConsumers(ctx).Info() {
			names = append(names, name.Name)
		}
		return names
	}

	var before []string // more than a walk gets at once
	for i := range 2*walkAhead + 5 {
		before = append(before, fmt.Sprint("a", i))
	}
	write(before...)
	waitFor("the events stored before", handedOver(len(before)))
	write("b", "c")
	waitFor("events stored while no consumer could be made", handedOver(len(before)+2))
	if names := consumers(); len(names) != 0 {
		t.Fatalf("the stream has consumers %v while none could be made", names)
	}

	s.readConsumersRefused.Store(false)
	waitFor("the consumer made once the cluster allows", func() bool { return len(consumers()) == 1 })
	// From the event after the last walked, not from where the walk began:
	// it would deliver again, to be skipped, all the walk handed over.
	cons, err := s.stream.Consumer(ctx, consumers()[0])
	if err != nil {
		t.Fatal(err)
	}
	if start, want := cons.CachedInfo().Config.OptStartSeq, uint64(len(before)+3); start != want {
		t.Errorf("the consumer made after the walk starts at %d, want %d", start, want)
	}
	write("d", "e")
	waitFor("the events stored after", handedOver(len(before)+4))

	s.readConsumersRefused.Store(true)
	if err := s.stream.DeleteConsumer(ctx, consumers()[0]); err != nil {
		t.Fatal(err)
	}
	write("f")
	waitFor("an event stored after the consumer was lost", handedOver(len(before)+5))
	s.readConsumersRefused.Store(false)
	waitFor("the consumer made again", func() bool { return len(consumers()) == 1 })
	write("g")
	waitFor("the event stored after that", handedOver(len(before)+6))

	cancel()
	if err := <-subscribed; !errors.Is(err, context.Canceled) {
		t.Errorf("the subscription ended with %v, want the context's end", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := append(before, "b", "c", "d", "e", "f", "g"); !slices.Equal(got, want) {
		t.Errorf("the subscription handed over %v, want %v", got, want)
	}
}

// A read whose consumer cannot be made for all of remakeFor, the server
// answering that it is not ready (or not answering), ends with the store
// unavailable, which a wait cures: the projector logs such an end at WARN,
// as the README says. (It ended with the bare deadline, which the
// projector logged at ERROR every 20 s of a NATS server that did not
// answer.)
func TestASubscriptionWhoseConsumerCannotBeMadeEndsWithTheStoreUnavailable(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx, cancel := context.WithTimeout(context.Background(), remakeFor+30*time.Second)
	defer cancel()
	s.readConsumersRefused.Store(true)
	err := s.Subscribe(ctx, []string{s.Filter("quote", "")}, 1, func(domain.Record) error { return nil }, nil)
	if ctx.Err() != nil {
		t.Fatalf("the subscription ended only with its context: %v", err)
	}
	if !errors.Is(err, domain.ErrStoreUnavailable) {
		t.Errorf("the subscription ended with %v, want domain.ErrStoreUnavailable", err)
	}
}

// A walking read of some subjects of the stream gets ahead by asking, at
// once, for the first matching message at or after each of the next
// sequences: interleaved with others, the matching messages come each
// once, in order, none skipped.
func TestAWalkingReadOfSomeSubjectsHandsOverEachMatchingEventOnceInOrder(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var want []string
	for i := range walkAhead + 7 {
		for _, typ := range []string{"quote", "booking", "booking"} {
			id := fmt.Sprint(typ, i)
			if _, err := s.Append(ctx, domain.Aggregate{Type: typ, ID: id}, 0, []domain.Envelope{event("X", id, id, `{}`)}); err != nil {
				t.Fatal(err)
			}
			if typ == "quote" {
				want = append(want, id)
			}
		}
	}
	s.readConsumersRefused.Store(true)
	msgs := s.walkingRead(s.Filter("quote", ""), 1)
	defer msgs.close()
	var got []string
	for len(got) < len(want) {
		got = append(got, nextID(ctx, t, msgs, got))
	}
	if !slices.Equal(got, want) {
		t.Errorf("the read handed over %v, want %v", got, want)
	}
}

// nextID is the id of the aggregate of the read's next event; got, those
// before it, for the failure's message.
func nextID(ctx context.Context, t *testing.T, msgs *orderedRead, got []string) string {
	t.Helper()
	m, err := msgs.Next(ctx, 0)
	if err != nil {
		t.Fatalf("after %v: %v", got, err)
	}
	subject := m.Subject()
	return subject[strings.LastIndexByte(subject, '.')+1:]
}

// A walking read stopped with messages it got ahead still in hand hands
// over none of them: Next says the read is stopped.
func TestAWalkingReadStoppedHandsOverNothingMore(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 3 {
		id := fmt.Sprint("q", i)
		if _, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: id}, 0, []domain.Envelope{event("X", id, id, `{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	s.readConsumersRefused.Store(true)
	msgs := s.walkingRead(s.everyEvent(), 1)
	defer msgs.close()
	if got := nextID(ctx, t, msgs, nil); got != "q0" {
		t.Fatalf("the first event handed over is of %s, want q0", got)
	}
	msgs.Stop()
	if m, err := msgs.Next(ctx, 0); !errors.Is(err, jetstream.ErrMsgIteratorClosed) {
		t.Errorf("after Stop, Next = %v, %v; want ErrMsgIteratorClosed", m, err)
	}
}

// A walking read caught up with the stream asks the leader whether the
// next event has come with one request a walkPause, not walkAhead.
func TestAWalkingReadCaughtUpAsksForOneEventAtATime(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: "q0"}, 0, []domain.Envelope{event("X", "q0", "q0", `{}`)}); err != nil {
		t.Fatal(err)
	}
	s.readConsumersRefused.Store(true)
	msgs := s.walkingRead(s.everyEvent(), 1)
	defer msgs.close()
	nextID(ctx, t, msgs, nil)
	before := s.nc.Stats().OutMsgs
	const wait = 500 * time.Millisecond
	if m, err := msgs.Next(ctx, wait); !errors.Is(err, nats.ErrTimeout) {
		t.Fatalf("Next = %v, %v; want nats.ErrTimeout: nothing was stored", m, err)
	}
	// The first ask after q0 was of walkAhead; then one a walkPause at
	// most. (The background tries to make the consumer are refused before
	// they are sent.)
	if sent, most := s.nc.Stats().OutMsgs-before, uint64(walkAhead+int(wait/walkPause)+1); sent > most {
		t.Errorf("the caught-up read sent %d requests in %s, want at most %d", sent, wait, most)
	}
}
