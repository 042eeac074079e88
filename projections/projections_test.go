package projections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/internal/lockedbuf"
	"github.com/cargostream/cargostream/internal/storetest"
)

func TestPageOf(t *testing.T) {
	ids := []string{"1", "2", "3", "4", "5", "6"}
	even := func(s string) bool { return strings.ContainsAny(s, "246") }
	tests := []struct {
		newest      bool
		keep        func(string) bool
		page, limit int
		want        string
		total       int
	}{
		{false, even, 1, 2, "[2 4]", 3},
		{false, even, 2, 2, "[6]", 3},
		{true, even, 1, 2, "[6 4]", 3},
		{true, even, 3, 2, "[]", 3},
		{true, func(string) bool { return false }, 1, 20, "[]", 0},
		// nil keeps all, reading the page alone.
		{false, nil, 1, 4, "[1 2 3 4]", 6},
		{true, nil, 2, 4, "[2 1]", 6},
		{true, nil, 3, 4, "[]", 6},
	}
	for _, tt := range tests {
		got, total := pageOf(ids, tt.newest, func(id string) string { return id }, tt.keep, tt.page, tt.limit)
		if fmt.Sprint(got) != tt.want || total != tt.total {
			t.Errorf("pageOf(newest %v, page %d, limit %d) = %v, %d; want %s, %d", tt.newest, tt.page, tt.limit, got, total, tt.want, tt.total)
		}
	}
}

func TestInsertedIsACopyWithNoRoomToSpare(t *testing.T) {
	tests := []struct {
		name string
		list []int
		at   int
		want []int
	}{
		{"into nothing", nil, 0, []int{9}},
		{"first", []int{1, 2, 3}, 0, []int{9, 1, 2, 3}},
		{"between", []int{1, 2, 3}, 2, []int{1, 2, 9, 3}},
		{"last", []int{1, 2, 3}, 3, []int{1, 2, 3, 9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list := slices.Clip(slices.Clone(tt.list))
			before := slices.Clone(list)
			got := inserted(list, tt.at, 9)
			if !slices.Equal(got, tt.want) || cap(got) != len(tt.want) {
				t.Errorf("inserted = %v with room for %d, want %v with room for %d", got, cap(got), tt.want, len(tt.want))
			}
			if !slices.Equal(list, before) {
				t.Errorf("the list given became %v", list)
			}
		})
	}
}

// A flight's bookings are those p may see of the bookings filed on it,
// oldest first, whatever became of them.
func TestTheBookingsOnAFlightAreThoseTheCallerMaySee(t *testing.T) {
	m := NewBookings()
	for _, b := range []domain.BookingRequested{
		{BookingID: "b1", FlightID: "LH8400-2026-11-27", OrganizationID: "f1"},
		{BookingID: "b2", FlightID: "LH8400-2026-11-27", OrganizationID: "f2"},
		{BookingID: "b3", FlightID: "LH8400-2026-11-28", OrganizationID: "f1"},
		{BookingID: "b4", FlightID: "LH8400-2026-11-27", OrganizationID: "f1"},
	} {
		m.Apply(domain.Record{Aggregate: domain.Aggregate{Type: domain.AggregateBooking, ID: b.BookingID}}, b)
	}
	m.Apply(domain.Record{Aggregate: domain.Aggregate{Type: domain.AggregateBooking, ID: "b1"}}, domain.BookingRejected{BookingID: "b1"})
	tests := []struct {
		name string
		p    domain.Principal
		want string
	}{
		{"a forwarder", domain.Principal{OrganizationID: "f1", Role: domain.RoleForwarder}, "[b1:rejected b4:pending]"},
		{"the flight's airline", domain.Principal{OrganizationID: "lh", Role: domain.RoleAirline, AirlineCode: "LH"}, "[b1:rejected b2:pending b4:pending]"},
		{"another airline", domain.Principal{OrganizationID: "ek", Role: domain.RoleAirline, AirlineCode: "EK"}, "[]"},
	}
	for _, tt := range tests {
		var got []string
		for _, b := range m.OnFlight(tt.p, "LH8400-2026-11-27") {
			got = append(got, b.ID+":"+b.Status)
		}
		if fmt.Sprint(got) != tt.want {
			t.Errorf("%s sees the bookings %v on the flight, want %s", tt.name, got, tt.want)
		}
	}
}

// requestQ1 stores the request of quote q1, and returns its sequences.
func requestQ1(ctx context.Context, store *eventstore.Store) ([]uint64, error) {
	return store.Append(ctx, domain.Aggregate{Type: "quote", ID: "q1"}, 0, []domain.Envelope{{
		Type: "QuoteRequested", SchemaVersion: 1, EventID: "e1", OccurredAt: time.Now(),
		Data: []byte(`{"quoteId":"q1","organizationId":"f1","origin":"FRA","destination":"JFK","pieces":1,"grossWeightKg":5}`)}})
}

func TestProjectorWaitsForSequences(t *testing.T) {
	store := storetest.Open(t)
	quotes := NewQuotes()
	p := NewProjector(store, slog.New(slog.DiscardHandler), quotes)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Run(ctx)
	seqs, err := requestQ1(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	wait, stop := context.WithTimeout(ctx, 5*time.Second)
	defer stop()
	if err := p.WaitFor(wait, seqs[0]); err != nil {
		t.Fatal(err)
	}
	if q, ok := quotes.Get(domain.Principal{Role: domain.RoleAdmin}, "q1"); !ok || q.Status != domain.QuoteStatusPending {
		t.Errorf("quote after WaitFor = %+v, %v", q, ok)
	}
	if p.PastEnd(ctx, seqs[0]) || !p.PastEnd(ctx, seqs[0]+1) {
		t.Errorf("past the end: %d is %v, %d is %v", seqs[0], p.PastEnd(ctx, seqs[0]), seqs[0]+1, p.PastEnd(ctx, seqs[0]+1))
	}
	// A projector that does not run falls behind the stream.
	idle := NewProjector(store, slog.New(slog.DiscardHandler), NewQuotes())
	short, stop2 := context.WithTimeout(ctx, 50*time.Millisecond)
	defer stop2()
	if err := idle.WaitFor(short, seqs[0]); !errors.Is(err, ErrBehind) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting for a sequence not applied in time = %v", err)
	}
	short, stop3 := context.WithTimeout(ctx, 50*time.Millisecond)
	defer stop3()
	if err := idle.CatchUp(short); !errors.Is(err, ErrBehind) {
		t.Errorf("catching up with the stream in time, not running = %v", err)
	}

	// Catching up waits for what the stream holds when it is asked, which
	// no caller named.
	later, err := store.Append(ctx, domain.Aggregate{Type: "quote", ID: "q2"}, 0, []domain.Envelope{{
		Type: "QuoteRequested", SchemaVersion: 1, EventID: "e2", OccurredAt: time.Now(),
		Data: []byte(`{"quoteId":"q2","organizationId":"f1","origin":"FRA","destination":"JFK","pieces":1,"grossWeightKg":5}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CatchUp(wait); err != nil || p.Applied() < later[0] {
		t.Errorf("caught up (%v) at %d, want the stream's %d", err, p.Applied(), later[0])
	}
}

func TestAirlinesSharingAnIATACode(t *testing.T) {
	m := NewReference()
	m.Apply(domain.Record{}, domain.ReferenceChanged{Airlines: []domain.Airline{
		{IATACode: "LH", ICAOCode: "DLH", Name: "Lufthansa", Country: "DE", Alliance: "Star Alliance", Prefix: "220"},
		{IATACode: "LH", ICAOCode: "GEC", Name: "Lufthansa Cargo", Country: "DE", Prefix: "020"},
	}})
	both, total := m.Airlines(AirlineFilter{IATACode: "LH"}, 1, 20)
	if total != 2 || both[0].ICAOCode != "DLH" || both[1].ICAOCode != "GEC" {
		t.Errorf("LH = %+v", both)
	}
	for prefix, icao := range map[string]string{"220": "DLH", "020": "GEC"} {
		if a, ok := m.AirlineByPrefix(prefix); !ok || a.ICAOCode != icao {
			t.Errorf("prefix %s = %+v", prefix, a)
		}
	}
	// A changed row replaces its own airline only.
	m.Apply(domain.Record{}, domain.ReferenceChanged{Airlines: []domain.Airline{
		{IATACode: "LH", ICAOCode: "GEC", Name: "Lufthansa Cargo AG", Country: "DE", Prefix: "020"}}})
	if _, total := m.Airlines(AirlineFilter{IATACode: "LH"}, 1, 20); total != 2 {
		t.Errorf("after an update, %d LH airlines", total)
	}
}

func TestTheProjectorRefusesToSkipASequence(t *testing.T) {
	p := NewProjector(nil, slog.New(slog.DiscardHandler), NewQuotes())
	rec := func(seq uint64) domain.Record {
		return domain.Record{Sequence: seq, Envelope: domain.Envelope{Type: "NotAnEventOfThisVersion"}}
	}
	for _, step := range []struct {
		seq     uint64
		gap     bool
		applied uint64
	}{{1, false, 1}, {2, false, 2}, {4, true, 2}, {2, true, 2}, {3, false, 3}} {
		err := p.apply(rec(step.seq))
		if errors.Is(err, errGap) != step.gap || p.Applied() != step.applied {
			t.Errorf("apply(%d) = %v, applied %d; want gap %v, applied %d", step.seq, err, p.Applied(), step.gap, step.applied)
		}
	}
}

func TestLagSaysWhenReadModelsShouldNotServe(t *testing.T) {
	const maxEvents, stalled = 100, 10 * time.Second
	for _, tt := range []struct {
		name string
		lag  Lag
		want string // part of the problem, "" for none
	}{
		{"caught up and idle", Lag{Applied: 50, StreamLast: 50, Idle: time.Hour}, ""},
		{"a little behind and moving", Lag{Applied: 40, StreamLast: 50, Idle: time.Second}, ""},
		{"too far behind", Lag{Applied: 40, StreamLast: 141, Idle: time.Millisecond}, "101 events behind"},
		{"stuck while events wait", Lag{Applied: 49, StreamLast: 50, Idle: 11 * time.Second}, "applied nothing for 11s while 1 events wait"},
		{"ahead of a stream read a moment earlier", Lag{Applied: 51, StreamLast: 50, Idle: time.Hour}, ""},
		{"a stream not answering a while (an election)", Lag{Applied: 50, StreamLast: 50, Unanswered: 9 * time.Second, Err: errors.New("timeout")}, ""},
		{"a stream not answering for long", Lag{Applied: 50, StreamLast: 50, Unanswered: 11 * time.Second, Err: errors.New("timeout")},
			"the stream has not answered for 11s: timeout"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.lag.Problem(maxEvents, stalled)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("Problem = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestJSONMembersReadObjectsAsTheDecoderWould(t *testing.T) {
	for _, raw := range []string{
		`{}`, ` { "a" : "FRA" , "b" : 12 } `, `{"a":null,"b":true,"c":false,"d":-1.5e3}`,
		`{"nested":{"x":[1,"}",{"y":"]"}],"z":{}},"after":"ok"}`, `{"list":[[],[[]]],"n":0}`,
		`{"q":"a \"quoted\" word","e":"ends in a backslash \\","u":"\u00e9","nl":"line\nbreak","slash":"tab\tand \/"}`,
		`{"café":"Café","x":"\\\""}`, "{\"bad\":\"\xff\"}",
	} {
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		got := jsonMembers([]byte(raw), nil)
		if len(got) != len(want) {
			t.Errorf("%s: %d members, want %d", raw, len(got), len(want))
		}
		for _, m := range got {
			value, ok := want[string(m.name)]
			var text string
			if json.Unmarshal(value, &text) != nil {
				text = string(value)
			}
			// The digest is of the text, however the value is written.
			if !ok || string(m.value) != string(value) || m.text() != text || m.digest() != digestOf([]byte(text)) {
				t.Errorf("%s: member %s = %s (text %q), want %s (text %q), the digest of its text", raw, m.name, m.value, m.text(), value, text)
			}
		}
	}
	// Whatever is not an object yields what could be read, never a panic.
	for _, raw := range []string{``, `[1,2]`, `"a"`, `{`, `{"a"`, `{"a":`, `{"a":,"b":1}`, `{"a":"open`, `{"a":1,"b":[1,2}`, `{"a":"\\"`, `{"a":1 "b":2}`} {
		if got := jsonMembers([]byte(raw), nil); len(got) > 2 || (len(got) > 0 && string(got[0].name) != "a") {
			t.Errorf("%s: %d members", raw, len(got))
		}
	}
}

func TestEventsWaitFromWhenTheyAreFirstSeenWaiting(t *testing.T) {
	p := NewProjector(nil, slog.New(slog.DiscardHandler), NewQuotes())
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	if err := p.apply(domain.Record{Sequence: 1, Envelope: domain.Envelope{Type: "NotAnEventOfThisVersion"}}); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		at   time.Duration // after start, an hour after the last apply
		last uint64
		idle time.Duration
	}{
		{0, 1, 0},                               // caught up
		{time.Second, 2, 0},                     // a write a moment ago: first seen waiting
		{11 * time.Second, 2, 10 * time.Second}, // still waiting
	} {
		if l := p.lagAt(step.last, start.Add(step.at)); l.Idle != step.idle {
			t.Errorf("at +%s with the stream at %d: idle %s, want %s", step.at, step.last, l.Idle, step.idle)
		}
	}
	p.apply(domain.Record{Sequence: 2, Envelope: domain.Envelope{Type: "NotAnEventOfThisVersion"}})
	p.lagAt(3, start.Add(time.Minute))
	if l := p.lagAt(3, start.Add(time.Minute+time.Second)); l.Idle != time.Second {
		t.Errorf("after an apply the wait starts anew: idle %s, want 1s", l.Idle)
	}
}

// blocking is a read model whose Apply waits for release, the first time.
type blocking struct {
	reached chan struct{}
	release chan struct{}
	once    sync.Once
}

func (b *blocking) Apply(domain.Record, domain.Event) {
	b.once.Do(func() {
		close(b.reached)
		<-b.release
	})
}

func TestTheProjectorIsCaughtUpOnlyOnceItHasReplayedWhatTheStreamHeldAtStart(t *testing.T) {
	store := storetest.Open(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var last uint64
	for i := range 3 {
		seqs, err := store.Append(ctx, domain.Aggregate{Type: "quote", ID: fmt.Sprint("q", i)}, 0, []domain.Envelope{{
			Type: "QuoteRequested", SchemaVersion: 1, EventID: fmt.Sprint("e", i), OccurredAt: time.Now(),
			Data: []byte(`{"quoteId":"q","organizationId":"f1","origin":"FRA","destination":"JFK","pieces":1,"grossWeightKg":5}`)}})
		if err != nil {
			t.Fatal(err)
		}
		last = seqs[0]
	}
	model := &blocking{reached: make(chan struct{}), release: make(chan struct{})}
	p := NewProjector(store, slog.New(slog.DiscardHandler), NewQuotes(), model)
	// Before it has asked the stream where it ends, nothing is caught up.
	if applied, target := p.Applied(), p.Target(); p.CaughtUp() || applied != 0 || target != 0 {
		t.Fatalf("before Run: caught up %v, progress %d of %d", p.CaughtUp(), applied, target)
	}
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	<-model.reached
	// Mid-replay the projector knows the end it replays to, without
	// asking the stream again.
	if applied, target := p.Applied(), p.Target(); p.CaughtUp() || applied >= last || target != last {
		t.Errorf("mid-replay: caught up %v, progress %d of %d; want the replay of %d under way", p.CaughtUp(), applied, target, last)
	}
	close(model.release)
	wait, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	if err := p.WaitFor(wait, last); err != nil || !p.CaughtUp() {
		t.Errorf("after the replay: %v, caught up %v", err, p.CaughtUp())
	}
	cancel()
	<-done
}

// endingOnce is a store whose first subscription ends at once with err.
type endingOnce struct {
	*eventstore.Store
	err   error
	ended atomic.Bool
}

func (s *endingOnce) Subscribe(ctx context.Context, filters []string, from uint64, fn func(domain.Record) error, idle func() error) error {
	if s.ended.CompareAndSwap(false, true) {
		return s.err
	}
	return s.Store.Subscribe(ctx, filters, from, fn, idle)
}

// A subscription's end is logged, a stall or a store that does not answer
// (which a wait cures) as a warning and anything else as an error, and so
// is its resumption once the next subscription hands over an event or
// catches up.
func TestAStalledSubscriptionIsAWarningAndAnyOtherEndAnError(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want slog.Level
	}{
		{fmt.Errorf("%w: nothing after 66 for 5s while the stream is at 67", domain.ErrSubscriptionStalled), slog.LevelWarn},
		{domain.ErrStoreUnavailable, slog.LevelWarn},
		{errors.New("eventstore: the event at 12 cannot be read"), slog.LevelError},
	} {
		t.Run(tt.err.Error(), func(t *testing.T) {
			store := storetest.Open(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			logged := &lockedbuf.Buffer{}
			p := NewProjector(&endingOnce{Store: store, err: tt.err}, slog.New(slog.NewTextHandler(logged, nil)), NewQuotes())
			done := make(chan struct{})
			go func() { defer close(done); p.Run(ctx) }()
			waitForResumes(t, p, 1)
			// An event written after it comes through the new subscription.
			seqs, err := requestQ1(ctx, store)
			if err != nil {
				t.Fatal(err)
			}
			wait, stop := context.WithTimeout(ctx, time.Minute)
			defer stop()
			if err := p.WaitFor(wait, seqs[0]); err != nil || p.Resumes() != 1 {
				t.Fatalf("after the subscription ended: %v, %d resumes; want the event applied after 1", err, p.Resumes())
			}
			cancel()
			<-done
			text := logged.String()
			ended := strings.Index(text, "level="+tt.want.String()+` msg="projector subscription ended; resuming"`)
			if ended < 0 || !strings.Contains(text[ended:], `level=INFO msg="projector subscription resumed"`) {
				t.Errorf("logged:\n%s\nwant a line at %s saying the subscription ended, and one after it saying it resumed", text, tt.want)
			}
		})
	}
}

// blindAfterAFailure is a store whose first subscription fails at once,
// and whose second, an event stored meanwhile, hands over nothing and says
// it is idle, as one walking a stream without a leader does after a quiet
// second, before it stalls.
type blindAfterAFailure struct {
	*eventstore.Store
	t     *testing.T
	calls atomic.Int32
}

func (s *blindAfterAFailure) Subscribe(ctx context.Context, filters []string, from uint64, fn func(domain.Record) error, idle func() error) error {
	switch s.calls.Add(1) {
	case 1:
		return domain.ErrStoreUnavailable
	case 2:
		if _, err := requestQ1(ctx, s.Store); err != nil {
			s.t.Error(err)
		}
		for range 3 {
			if err := idle(); err != nil {
				return err
			}
		}
		return fmt.Errorf("%w: nothing after 0 while the stream is at 1", domain.ErrSubscriptionStalled)
	}
	return s.Store.Subscribe(ctx, filters, from, fn, idle)
}

// A subscription begun after a failure is said to have resumed once it
// hands over an event or holds the stream's end, not at a quiet second
// while events wait that it cannot read (a review saw "resumed" logged
// 8 s before a replica's read models, frozen while its cluster had no
// quorum, took the events waiting).
func TestASubscriptionIsSaidToHaveResumedOnceItHasTheEventsThatWait(t *testing.T) {
	store := storetest.Open(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logged := &lockedbuf.Buffer{}
	p := NewProjector(&blindAfterAFailure{Store: store, t: t}, slog.New(slog.NewTextHandler(logged, nil)), NewQuotes())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	wait, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	if err := p.WaitFor(wait, 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	text := logged.String()
	resumed := strings.Index(text, `msg="projector subscription resumed"`)
	if resumed < 0 || !strings.HasPrefix(text[resumed:], `msg="projector subscription resumed" after=1 `) {
		t.Errorf("logged:\n%s\nwant the subscription said to have resumed once after the event waiting, 1, was applied", text)
	}
}

// leaderlessAfterAFailure is a store whose subscriptions fail while its
// stream has no leader, as a cluster that lost its quorum has none: the
// first at once, the second after quiet seconds in which it hands over
// nothing. The node left answers a look at the stream's end from its own
// copy, which holds no event the projector lacks; only the leader's end
// (LastSequence) says there is none.
type leaderlessAfterAFailure struct {
	*eventstore.Store
	calls atomic.Int32
}

func (s *leaderlessAfterAFailure) Subscribe(ctx context.Context, filters []string, from uint64, fn func(domain.Record) error, idle func() error) error {
	switch s.calls.Add(1) {
	case 1:
		return domain.ErrStoreUnavailable
	case 2:
		for range 3 {
			if err := idle(); err != nil {
				return err
			}
		}
		return fmt.Errorf("%w: a read's consumer could not be made", domain.ErrStoreUnavailable)
	}
	return s.Store.Subscribe(ctx, filters, from, fn, idle)
}

func (s *leaderlessAfterAFailure) LastSequence(ctx context.Context) (uint64, error) {
	if n := s.calls.Load(); n == 1 || n == 2 {
		return 0, fmt.Errorf("%w: stream CARGO has no leader", domain.ErrStoreUnavailable)
	}
	return s.Store.LastSequence(ctx)
}

// A subscription begun after a failure is not said to have resumed while
// the stream has no leader, though the node left shows no event beyond
// the read models: the subscription gets nothing, and fails again (a
// cluster that had lost two of its three nodes for 90 s logged "resumed"
// 2 s after each of its four "ended; resuming").
func TestASubscriptionIsNotSaidToHaveResumedWhileTheStreamHasNoLeader(t *testing.T) {
	store := storetest.Open(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logged := &lockedbuf.Buffer{}
	stream := &leaderlessAfterAFailure{Store: store}
	p := NewProjector(stream, slog.New(slog.NewTextHandler(logged, nil)), NewQuotes())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	waitForResumes(t, p, 2)
	seqs, err := requestQ1(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	wait, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	if err := p.WaitFor(wait, seqs[0]); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	text := logged.String()
	if n := strings.Count(text, `msg="projector subscription resumed"`); n != 1 {
		t.Errorf("logged:\n%s\nwant the subscription said to have resumed once, after the stream had a leader again; it was %d times", text, n)
	}
	if last := strings.LastIndex(text, `msg="projector subscription ended; resuming"`); last < 0 || !strings.Contains(text[last:], `msg="projector subscription resumed" after=`) {
		t.Errorf("logged:\n%s\nwant the last \"ended\" followed by \"resumed\"", text)
	}
}

// deafAfterAFailure is a store whose first subscription fails at once, and
// whose nodes, after it, never answer a look at the stream's end, as none
// does while the stream has no leader: the look waits until its context
// ends.
type deafAfterAFailure struct {
	endingOnce
	asked chan struct{}
}

func (s *deafAfterAFailure) LastSequence(ctx context.Context) (uint64, error) {
	if !s.ended.Load() {
		return s.Store.LastSequence(ctx)
	}
	select {
	case s.asked <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return 0, ctx.Err()
}

// The look at the stream's end that tells whether a subscription begun
// after a failure has resumed is bounded: the subscription hands over
// nothing while it waits, and an event stored meanwhile comes through
// within seconds of it, not once the look gives up.
func TestAnUnansweredLookAtTheStreamsEndDoesNotHoldBackTheEventsOfASubscription(t *testing.T) {
	store := storetest.Open(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := &deafAfterAFailure{endingOnce: endingOnce{Store: store, err: domain.ErrStoreUnavailable}, asked: make(chan struct{})}
	p := NewProjector(stream, slog.New(slog.DiscardHandler), NewQuotes())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	defer func() { cancel(); <-done }()
	select {
	case <-stream.asked:
	case <-time.After(time.Minute):
		t.Fatal("the subscription begun after the failure never looked at the stream's end")
	}
	seqs, err := requestQ1(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	wait, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()
	if err := p.WaitFor(wait, seqs[0]); err != nil {
		t.Fatalf("the event stored while the stream's end was looked at: %v; want it applied", err)
	}
}

// silentStream is a store whose LastSequenceSeen fails while silent is set:
// a stream whose leader died, until the other nodes notice.
type silentStream struct {
	*eventstore.Store
	silent atomic.Bool
}

func (s *silentStream) LastSequenceSeen(ctx context.Context) (uint64, error) {
	if s.silent.Load() {
		return 0, domain.ErrStoreUnavailable
	}
	return s.Store.LastSequenceSeen(ctx)
}

// slowStream is a store whose LastSequenceSeen, while held is set, waits
// for a value sent on answer: a question that takes long, overtaken by
// one asked later.
type slowStream struct {
	*eventstore.Store
	held   atomic.Bool
	asked  chan struct{}
	answer chan uint64
}

func (s *slowStream) LastSequenceSeen(ctx context.Context) (uint64, error) {
	if s.held.Load() {
		s.asked <- struct{}{}
		return <-s.answer, nil
	}
	return s.Store.LastSequenceSeen(ctx)
}

// Two questions of the stream's end overlap (a probe and a metrics
// scrape): the answer to the one asked first, coming last, is older than
// the answer held, and must not take its place.
func TestAnAnswerOfTheStreamsEndOvertakenByALaterOneIsNotKept(t *testing.T) {
	ctx := context.Background()
	stream := &slowStream{Store: storetest.Open(t), asked: make(chan struct{}), answer: make(chan uint64)}
	p := NewProjector(stream, slog.New(slog.DiscardHandler), NewQuotes())
	for i := range 3 {
		id := fmt.Sprint("q", i)
		if _, err := stream.Append(ctx, domain.Aggregate{Type: "quote", ID: id}, 0, []domain.Envelope{{Type: "QuoteRequested", SchemaVersion: 1,
			EventID: id, OccurredAt: time.Now(), Data: []byte(`{}`)}}); err != nil {
			t.Fatal(err)
		}
	}
	stream.held.Store(true)
	first := make(chan Lag)
	go func() {
		l, _ := p.Lag(ctx)
		first <- l
	}()
	<-stream.asked // the first question is out
	stream.held.Store(false)
	if later, err := p.Lag(ctx); err != nil || later.StreamLast != 3 {
		t.Fatalf("the later question's lag = %+v, %v", later, err)
	}
	stream.answer <- 1 // the first question's answer: the stream as it was
	if l := <-first; l.StreamLast != 3 {
		t.Errorf("the overtaken question's lag says the stream ends at %d, want 3, as the later answer says", l.StreamLast)
	}
	if l, err := p.Lag(ctx); err != nil || l.StreamLast != 3 {
		t.Errorf("lag afterwards = %+v, %v; want the stream at 3", l, err)
	}
}

// An answer of the stream's end given before the latest events were
// applied (a fresh start seeds its demo data meanwhile) is below them:
// the lag says the stream ends where the replica is, not before it.
func TestTheStreamsEndIsNeverBelowWhatWasApplied(t *testing.T) {
	stream := &slowStream{Store: storetest.Open(t), asked: make(chan struct{}), answer: make(chan uint64)}
	p := NewProjector(stream, slog.New(slog.DiscardHandler), NewQuotes())
	p.applied = 3
	stream.held.Store(true)
	go func() { <-stream.asked; stream.answer <- 1 }()
	if l, err := p.Lag(context.Background()); err != nil || l.StreamLast != 3 || l.Events() != 0 {
		t.Errorf("lag = %+v, %v; want the stream at 3, nothing waiting", l, err)
	}
}

// A stream that stops answering leaves its last answer standing, saying
// for how long it has not answered, so that an election does not turn
// every replica unready at once; one that never answered is an error.
func TestTheLagOfAStreamThatStopsAnsweringIsItsLastAnswer(t *testing.T) {
	ctx := context.Background()
	stream := &silentStream{Store: storetest.Open(t)}
	p := NewProjector(stream, slog.New(slog.DiscardHandler), NewQuotes())
	stream.silent.Store(true)
	if _, err := p.Lag(ctx); !errors.Is(err, domain.ErrStoreUnavailable) {
		t.Errorf("lag of a stream that never answered: %v", err)
	}
	stream.silent.Store(false)
	if _, err := stream.Append(ctx, domain.Aggregate{Type: "quote", ID: "q1"}, 0, []domain.Envelope{{Type: "QuoteRequested", SchemaVersion: 1,
		EventID: "e1", OccurredAt: time.Now(), Data: []byte(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	answered, err := p.Lag(ctx)
	if err != nil || answered.StreamLast != 1 || answered.Err != nil {
		t.Fatalf("lag = %+v, %v", answered, err)
	}
	stream.silent.Store(true)
	first, err := p.Lag(ctx)
	time.Sleep(time.Millisecond) // a clock that moves
	later, _ := p.Lag(ctx)
	if err != nil || first.StreamLast != 1 || !errors.Is(first.Err, domain.ErrStoreUnavailable) || later.Unanswered <= first.Unanswered {
		t.Errorf("lags of a stream that stopped answering: %+v then %+v (%v); want its last answer, not answered for longer", first, later, err)
	}
	stream.silent.Store(false)
	if again, err := p.Lag(ctx); err != nil || again.Err != nil || again.Unanswered != 0 {
		t.Errorf("lag once it answers again = %+v, %v", again, err)
	}
}

// waitForResumes waits up to a minute until p's subscription has ended and
// been begun again n times.
func waitForResumes(t *testing.T, p *Projector, n int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); p.Resumes() < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the subscription was begun again %d times within a minute, want %d", p.Resumes(), n)
		}
	}
}
