package eventstore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore/natstest"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// decisionOf is a decision of n events on aggregate crash/<name>, with
// event ids that a retry of the same command repeats.
func decisionOf(name string, n int) []domain.Envelope {
	events := make([]domain.Envelope, n)
	for i := range events {
		events[i] = event("Step", fmt.Sprintf("%s-e%d", name, i), name, fmt.Sprintf(`{"step":%d}`, i))
	}
	return events
}

func TestAFaultBetweenTheEventsOfADecisionStoresNone(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	agg := domain.Aggregate{Type: "stock", ID: "s1"}
	s.committer.betweenEvents = func(sent int, _ *nats.Msg) error { return fmt.Errorf("fault after %d of 3 events", sent) }
	if _, err := s.Append(ctx, agg, 0, decisionOf("d1", 3)); err == nil || !strings.Contains(err.Error(), "fault after 1") {
		t.Fatalf("append with a fault = %v, want the injected fault", err)
	}
	if recs, err := s.Load(ctx, agg); err != nil || len(recs) != 0 {
		t.Fatalf("after the fault the aggregate has %d events (%v), want none", len(recs), err)
	}
	s.committer.betweenEvents = nil
	seqs, err := s.Append(ctx, agg, 0, decisionOf("d1", 3))
	if err != nil || len(seqs) != 3 || seqs[2] != seqs[0]+2 {
		t.Fatalf("retried decision = %v, %v", seqs, err)
	}
	if recs, err := s.Load(ctx, agg); err != nil || len(recs) != 3 {
		t.Errorf("after the retry the aggregate has %d events (%v), want 3", len(recs), err)
	}
}

// A decision sent while the committer's connection is down is refused,
// and stays refused: nothing of it is stored once the connection is back,
// where nats.go would have held its batch and sent it then, after its
// caller had been told that nothing was stored.
func TestADecisionRefusedWhileTheConnectionIsDownIsNotStoredWhenItComesBack(t *testing.T) {
	relay := natstest.StartRelay(t, natstest.Start(t, &server.Options{Port: server.RANDOM_PORT}).Addr().String())
	s := openForTest(t, Options{URL: relay.URL()})
	ctx := context.Background()
	if _, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: "before"}, 0, decisionOf("before", 1)); err != nil {
		t.Fatal(err)
	}
	relay.Cut()
	waitUntil(t, "the committer's connection to be lost", func() bool { return s.committer.nc.Status() == nats.RECONNECTING })
	refused := domain.Aggregate{Type: "quote", ID: "refused"}
	if _, err := s.Append(ctx, refused, 0, decisionOf("refused", 2)); !errors.Is(err, domain.ErrStoreUnavailable) {
		t.Fatalf("a decision sent while the connection is down = %v, want the store unavailable", err)
	}
	relay.Restore()
	waitUntil(t, "the connections to come back", func() bool { return s.committer.nc.IsConnected() && s.nc.IsConnected() })
	// A batch held while reconnecting would have gone out first, and been
	// committed before this one.
	var after []uint64
	waitUntil(t, "a decision to be stored again", func() bool {
		var err error
		after, err = s.Append(ctx, domain.Aggregate{Type: "quote", ID: "after"}, 0, decisionOf("after", 1))
		return err == nil
	})
	if recs, err := s.Load(ctx, refused); err != nil || len(recs) > 0 {
		t.Errorf("the refused decision's events, once the connection is back (and %d is stored) = %d, %v; want none", after[0], len(recs), err)
	}
}

// A decision the committer could not send (its connection keeps nothing
// while it reconnects) was stored nowhere: it is refused at once, without
// the read that tells a lost acknowledgement from a conflict. That read
// goes through the store's other connection, which holds requests while
// it reconnects: it waited out its caller's deadline, and a write was
// answered 503 after 5 s, not at once, while NATS was away.
func TestADecisionNotSentWhileTheConnectionIsDownIsRefusedBeforeItsCallersDeadline(t *testing.T) {
	relay := natstest.StartRelay(t, natstest.Start(t, &server.Options{Port: server.RANDOM_PORT}).Addr().String())
	s := openForTest(t, Options{URL: relay.URL()})
	relay.Cut()
	waitUntil(t, "both connections to be lost", func() bool {
		return s.committer.nc.Status() == nats.RECONNECTING && s.nc.Status() == nats.RECONNECTING
	})
	// A deadline as an HTTP request's, far longer: one refused with it,
	// not before it, waited for an answer that could not come.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: "unsent"}, 0, decisionOf("unsent", 1))
	if !errors.Is(err, domain.ErrStoreUnavailable) || ctx.Err() != nil {
		t.Fatalf("a decision sent while NATS is away = %v (the caller's deadline: %v), want the store unavailable before the deadline", err, ctx.Err())
	}
}

func TestAFewSingleEventsAreStoredOneByOne(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	a := decisionFor(t, s, domain.Aggregate{Type: "quote", ID: "a"}, 0, decisionOf("a0", 1))
	a1 := decisionFor(t, s, domain.Aggregate{Type: "quote", ID: "a"}, 0, decisionOf("a1", 1))
	a1.after, a1.chained = a, true
	b := decisionFor(t, s, domain.Aggregate{Type: "quote", ID: "b"}, 0, decisionOf("b0", 1))
	s.committer.commit([]*decision{a, a1, b})
	for i, d := range []*decision{a, a1, b} {
		if out := outcomeOf(t, d); out.err != nil || out.last != uint64(i+1) {
			t.Errorf("decision %d = %+v, want stored at %d", i, out, i+1)
		}
	}
	for seq := uint64(1); seq <= 3; seq++ {
		if m, err := s.stream.GetMsg(ctx, seq); err != nil || m.Header.Get(hdrBatchID) != "" {
			t.Errorf("event %d: batch id %q (%v), want a plain publish", seq, m.Header.Get(hdrBatchID), err)
		}
	}
}

// A batch some of whose messages never reached the stream's leader (one
// elected while they were sent: seen on a cluster just formed) is refused
// as incomplete, with nothing stored: its decisions go again one by one,
// where they were answered with the error before. The lost message is
// made here by a gap in the batch's sequence numbers, as the server sees
// it then.
func TestABatchTheServerFoundIncompleteIsStoredDecisionByDecision(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	var ds []*decision
	for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
		ds = append(ds, decisionFor(t, s, domain.Aggregate{Type: "quote", ID: id}, 0, decisionOf(id+"0", 1)))
	}
	gaps := 0
	s.committer.betweenEvents = func(event int, next *nats.Msg) error {
		if event == 2 && gaps == 0 {
			gaps++
			next.Header.Set(hdrBatchSequence, "4")
		}
		return nil
	}
	s.committer.commit(ds)
	for i, d := range ds {
		if out := outcomeOf(t, d); out.err != nil || out.last != uint64(i+1) {
			t.Errorf("decision %d = %+v, want stored at %d", i, out, i+1)
		}
	}
	if gaps != 1 {
		t.Errorf("%d batches had a gap, want 1", gaps)
	}
	if info, err := s.stream.Info(context.Background()); err != nil || info.State.Msgs != 6 {
		t.Errorf("the stream holds %v events (%v), want each decision's one", info.State.Msgs, err)
	}
}

func TestDecisionsOfManyAggregatesCommitAsOneBatch(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	// Called directly, as the committer's loop would with three decisions
	// waiting: deterministic, where racing appenders would not be.
	var batch []*decision
	for _, name := range []string{"a", "b", "c"} {
		batch = append(batch, decisionFor(t, s, domain.Aggregate{Type: "quote", ID: name}, 0, decisionOf(name, 2)))
	}
	s.committer.commit(batch)
	var lasts []uint64
	for _, d := range batch {
		out := outcomeOf(t, d)
		if out.err != nil {
			t.Fatalf("%s: %v", d.subject, out.err)
		}
		lasts = append(lasts, out.last)
	}
	if lasts[0] != 2 || lasts[1] != 4 || lasts[2] != 6 {
		t.Errorf("last sequences = %v, want [2 4 6]: the batch's events in order, without gaps", lasts)
	}
	if ids := batchIDsUpTo(t, s, 6); len(ids) != 1 || ids[""] {
		t.Errorf("six events carry batch ids %v, want one", ids)
	}
}

// batchIDsUpTo returns the atomic batch ids of the stream's events up to
// sequence last ("" for an event stored on its own).
func batchIDsUpTo(t *testing.T, s *Store, last uint64) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	for seq := uint64(1); seq <= last; seq++ {
		m, err := s.stream.GetMsg(context.Background(), seq)
		if err != nil {
			t.Fatal(err)
		}
		ids[m.Header.Get(hdrBatchID)] = true
	}
	return ids
}

func TestAStaleDecisionDoesNotStopTheOthersOfItsBatch(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	if _, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: "b"}, 0, decisionOf("b0", 1)); err != nil {
		t.Fatal(err)
	}
	// Another writer's progress, unknown to the committer's cache: the
	// server rejects the whole batch, and each decision is tried alone.
	clear(s.committer.lastSeq)
	batch := []*decision{
		decisionFor(t, s, domain.Aggregate{Type: "quote", ID: "a"}, 0, decisionOf("a", 2)),
		decisionFor(t, s, domain.Aggregate{Type: "quote", ID: "b"}, 0, decisionOf("b1", 2)), // stale: b is at 1
		decisionFor(t, s, domain.Aggregate{Type: "quote", ID: "c"}, 0, decisionOf("c", 2)),
	}
	s.committer.commit(batch)
	for i, want := range []error{nil, errWrongLast, nil} {
		if out := outcomeOf(t, batch[i]); !errors.Is(out.err, want) || (want == nil && out.last == 0) {
			t.Errorf("%s = %+v, want error %v", batch[i].subject, out, want)
		}
	}
	for name, want := range map[string]int{"a": 2, "b": 1, "c": 2} {
		if recs, err := s.Load(ctx, domain.Aggregate{Type: "quote", ID: name}); err != nil || len(recs) != want {
			t.Errorf("quote %s has %d events (%v), want %d", name, len(recs), err, want)
		}
	}
}

func TestPickTakesOneDecisionPerAggregateAndAnswersKnownConflicts(t *testing.T) {
	c := &committer{lastSeq: map[string]lastEvent{"x": {5, "x5"}, "y": {3, "y3"}}, limit: maxBatch}
	d := func(subject string, expected uint64, events int) *decision {
		msgs := make([]*nats.Msg, events)
		for i := range msgs {
			msgs[i] = message(subject, fmt.Sprint(subject, "-", i), nats.Header{}, nil)
		}
		return &decision{ctx: context.Background(), subject: subject, expect: true, expected: expected,
			msgs: msgs, settled: make(chan struct{})}
	}
	job := func(subject string) *decision {
		return &decision{ctx: context.Background(), subject: subject, msgs: make([]*nats.Msg, 1), settled: make(chan struct{})}
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	gone := d("z", 0, 1)
	gone.ctx = cancelled
	// after makes a decision decided after predecessor, as Submit does.
	after := func(predecessor *decision, events int) *decision {
		next := d(predecessor.subject, 0, events)
		next.after = predecessor
		return next
	}
	head, big := d("a", 0, 1), d("b", 0, 600)
	failed, stored := d("f", 0, 1), d("s", 0, 1)
	failed.answer(outcome{err: errors.New("acknowledgement lost")})
	stored.answer(outcome{last: 9})
	// group makes parts one decision across aggregates, as Submit does.
	group := func(parts ...*decision) []*decision {
		for _, p := range parts {
			p.group = parts
		}
		return parts
	}
	big2, head2 := d("b", 0, 600), d("h", 0, 1)
	tests := []struct {
		name             string
		waiting          []*decision
		batch, rest      []int // indexes into waiting
		answered         map[int]error
		forgetsCachedFor string
	}{
		{name: "different aggregates share a batch", waiting: []*decision{d("a", 0, 2), d("b", 0, 1)}, batch: []int{0, 1}},
		{name: "a second decision on an aggregate waits for the next batch",
			waiting: []*decision{d("a", 0, 1), d("a", 1, 1), d("b", 0, 1)}, batch: []int{0, 2}, rest: []int{1}},
		{name: "a decision behind the known last sequence is a conflict at once",
			waiting: []*decision{d("x", 4, 1), d("b", 0, 1)}, batch: []int{1}, answered: map[int]error{0: errWrongLast}},
		{name: "a decision ahead of the cache is left to the server", waiting: []*decision{d("y", 7, 1)},
			batch: []int{0}, forgetsCachedFor: "y"},
		{name: "the batch stops at the server's limit of events",
			waiting: []*decision{d("a", 0, 600), d("b", 0, 600), d("c", 0, 400)}, batch: []int{0, 2}, rest: []int{1}},
		{name: "jobs of a queue, without expectations, share a batch though they share a subject",
			waiting: []*decision{job("q"), job("q"), job("q")}, batch: []int{0, 1, 2}},
		{name: "a decision whose caller gave up is dropped", waiting: []*decision{gone, d("b", 0, 1)},
			batch: []int{1}, answered: map[int]error{0: context.Canceled}},
		{name: "decisions decided one after another on an aggregate share a batch",
			waiting: []*decision{head, after(head, 2), d("c", 0, 1)}, batch: []int{0, 1, 2}},
		{name: "a decision decided after one left for the next batch is left too",
			waiting: []*decision{d("c", 0, 600), big, after(big, 1)}, batch: []int{0}, rest: []int{1, 2}},
		{name: "a decision decided after one that failed is a conflict",
			waiting: []*decision{after(failed, 1)}, answered: map[int]error{0: errWrongLast}},
		{name: "a decision decided after one that was stored goes on its own",
			waiting: []*decision{after(stored, 1)}, batch: []int{0}},
		{name: "the parts of a decision across aggregates share a batch with others",
			waiting: append(group(d("a", 0, 2), d("b", 0, 1)), d("c", 0, 1)), batch: []int{0, 1, 2}},
		{name: "a decision across aggregates waits whole while one of its aggregates has a decision in the batch",
			waiting: append([]*decision{d("a", 0, 1)}, group(d("c", 0, 1), d("a", 1, 1))...), batch: []int{0}, rest: []int{1, 2}},
		{name: "one part behind the known last sequence is a conflict for every part",
			waiting: append(group(d("b", 0, 1), d("x", 4, 1)), d("c", 0, 1)), batch: []int{2},
			answered: map[int]error{0: errWrongLast, 1: errWrongLast}},
		{name: "a decision across aggregates that does not fit what is left of a batch waits whole",
			waiting: append([]*decision{d("a", 0, 600)}, group(d("b", 0, 200), d("c", 0, 300))...), batch: []int{0}, rest: []int{1, 2}},
		{name: "a part decided after a decision left for the next batch holds its whole decision back",
			waiting: append([]*decision{d("c", 0, 600), big2}, group(d("e", 0, 1), after(big2, 1))...), batch: []int{0}, rest: []int{1, 2, 3}},
		{name: "a part decided after one in the batch follows it there, with its decision",
			waiting: append([]*decision{head2}, group(d("e", 0, 1), after(head2, 1))...), batch: []int{0, 1, 2}},
		{name: "a part decided after one that failed fails every part",
			waiting: group(d("g", 0, 1), after(failed, 1)), answered: map[int]error{0: errWrongLast, 1: errWrongLast}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			batch, rest := c.pick(tt.waiting)
			if got, want := indexes(tt.waiting, batch), fmt.Sprint(tt.batch); got != want {
				t.Errorf("batch = %s, want %s", got, want)
			}
			if got, want := indexes(tt.waiting, rest), fmt.Sprint(tt.rest); got != want && !(len(rest) == 0 && len(tt.rest) == 0) {
				t.Errorf("rest = %s, want %s", got, want)
			}
			for i, want := range tt.answered {
				if out := outcomeOf(t, tt.waiting[i]); !errors.Is(out.err, want) {
					t.Errorf("decision %d answered %v, want %v", i, out.err, want)
				}
			}
			if _, ok := c.lastSeq[tt.forgetsCachedFor]; tt.forgetsCachedFor != "" && ok {
				t.Errorf("the cache still holds %s", tt.forgetsCachedFor)
			}
			for _, d := range batch {
				if d.after != nil && !d.chained {
					t.Errorf("%s is in the batch after a decision that is not", d.subject)
				}
			}
		})
	}
	if head.chained || !head.expect {
		t.Error("the first decision of a pipeline lost its expectation")
	}
}

func TestTheCallersALingerWaitsForCountADecisionAcrossAggregatesOnce(t *testing.T) {
	lone := func() *decision { return &decision{} }
	group := func(n int) []*decision {
		parts := make([]*decision, n)
		for i := range parts {
			parts[i] = &decision{}
		}
		for _, p := range parts {
			p.group = parts
		}
		return parts
	}
	for _, tt := range []struct {
		name string
		ds   []*decision
		want int
	}{
		{"none", nil, 0},
		{"lone decisions", []*decision{lone(), lone()}, 2},
		{"a confirmation of four parts", group(4), 1},
		{"both", append(group(2), lone(), group(3)[0]), 3},
	} {
		if got := callers(tt.ds); got != tt.want {
			t.Errorf("%s: %d callers, want %d", tt.name, got, tt.want)
		}
	}
}

func TestADecisionDecidedAfterAStoredOneExpectsItsLastSequence(t *testing.T) {
	c := &committer{lastSeq: map[string]lastEvent{}}
	stored := &decision{ctx: context.Background(), subject: "s", expect: true, settled: make(chan struct{})}
	stored.answer(outcome{last: 9})
	next := &decision{ctx: context.Background(), subject: "s", expect: true, after: stored, msgs: make([]*nats.Msg, 1), settled: make(chan struct{})}
	if batch, _ := c.pick([]*decision{next}); len(batch) != 1 || next.expected != 9 || next.chained || next.after != nil {
		t.Errorf("picked %d; expected %d, chained %v: want it alone, expecting 9", len(batch), next.expected, next.chained)
	}
}

func TestPipelinedDecisionsOnOneAggregateAreStoredInOrder(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	agg := domain.Aggregate{Type: "flight", ID: "f1"}
	var pending []domain.PendingAppend
	var previous domain.PendingAppend
	for i := range 5 {
		p := submitOne(t, s, domain.Submission{Aggregate: agg, After: previous, Events: decisionOf(fmt.Sprint("d", i), 2)})
		pending, previous = append(pending, p), p
	}
	seqs := sequencesOf(t, pending)
	recs, err := s.Load(ctx, agg)
	if err != nil || len(recs) != 10 {
		t.Fatalf("the aggregate has %d events (%v), want 10", len(recs), err)
	}
	for i, r := range recs {
		if want := fmt.Sprintf("d%d-e%d", i/2, i%2); r.Sequence != seqs[i] || r.EventID != want {
			t.Errorf("event %d = %s at %d, want %s at %d", i, r.EventID, r.Sequence, want, seqs[i])
		}
	}
}

func TestWhenAPipelinedDecisionFailsThoseDecidedAfterItFailToo(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	agg := domain.Aggregate{Type: "flight", ID: "f1"}
	if _, err := s.Append(ctx, agg, 0, decisionOf("first", 1)); err != nil {
		t.Fatal(err)
	}
	stale := submitOne(t, s, domain.Submission{Aggregate: agg, Events: decisionOf("stale", 1)}) // the aggregate is at 1
	next := submitOne(t, s, domain.Submission{Aggregate: agg, After: stale, Events: decisionOf("next", 1)})
	for name, p := range map[string]domain.PendingAppend{"the stale decision": stale, "the one decided after it": next} {
		if _, err := p.Wait(ctx); !errors.Is(err, domain.ErrAggregateChanged) {
			t.Errorf("%s = %v, want domain.ErrAggregateChanged", name, err)
		}
	}
	if recs, err := s.Load(ctx, agg); err != nil || len(recs) != 1 {
		t.Errorf("the aggregate has %d events (%v), want the first only", len(recs), err)
	}
}

// Decisions of two events each, so that they go as one atomic batch.
func TestARejectedBatchTriesAPipelineInOrderAndAloneFromTheOthers(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	if _, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: "b"}, 0, decisionOf("b0", 1)); err != nil {
		t.Fatal(err)
	}
	clear(s.committer.lastSeq) // the server, not the cache, finds b stale
	a := decisionFor(t, s, domain.Aggregate{Type: "quote", ID: "a"}, 0, decisionOf("a0", 2))
	a1 := decisionFor(t, s, domain.Aggregate{Type: "quote", ID: "a"}, 0, decisionOf("a1", 2))
	a1.after, a1.chained = a, true
	b := decisionFor(t, s, domain.Aggregate{Type: "quote", ID: "b"}, 0, decisionOf("b1", 2)) // stale: b is at 1
	b1 := decisionFor(t, s, domain.Aggregate{Type: "quote", ID: "b"}, 0, decisionOf("b2", 2))
	b1.after, b1.chained = b, true
	s.committer.commit([]*decision{a, a1, b, b1})
	for i, want := range []error{nil, nil, errWrongLast, errWrongLast} {
		d := []*decision{a, a1, b, b1}[i]
		if out := outcomeOf(t, d); !errors.Is(out.err, want) || (want == nil && out.last == 0) {
			t.Errorf("decision %d = %+v, want error %v", i, out, want)
		}
	}
	for name, want := range map[string]int{"a": 4, "b": 1} {
		if recs, err := s.Load(ctx, domain.Aggregate{Type: "quote", ID: name}); err != nil || len(recs) != want {
			t.Errorf("quote %s has %d events (%v), want %d", name, len(recs), err, want)
		}
	}
}

func TestADecisionAcrossAggregatesIsStoredWholeInOneBatch(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	flight, ledger := domain.Aggregate{Type: "flight", ID: "f1"}, domain.Aggregate{Type: "ledger", ID: "l1"}
	ps, err := s.Submit(ctx,
		domain.Submission{Aggregate: flight, Events: decisionOf("reserve", 1)},
		domain.Submission{Aggregate: ledger, Events: decisionOf("use", 2)})
	if err != nil {
		t.Fatal(err)
	}
	if seqs := sequencesOf(t, ps); fmt.Sprint(seqs) != "[1 2 3]" {
		t.Errorf("sequences %v, want [1 2 3]", seqs)
	}
	// Two one-event parts would be cheaper as plain publishes, one by
	// one, but not whole: they must share one batch.
	if ids := batchIDsUpTo(t, s, 3); len(ids) != 1 || ids[""] {
		t.Errorf("the parts' events carry batch ids %v, want one", ids)
	}
}

func TestAConflictOnOnePartOfADecisionAcrossAggregatesStoresNoPart(t *testing.T) {
	ctx := context.Background()
	a, b, c := domain.Aggregate{Type: "quote", ID: "a"}, domain.Aggregate{Type: "quote", ID: "b"}, domain.Aggregate{Type: "quote", ID: "c"}
	for _, finder := range []string{"the committer", "the server"} {
		t.Run("found by "+finder, func(t *testing.T) {
			s := openForTest(t, Options{DataDir: t.TempDir()})
			if _, err := s.Append(ctx, b, 0, decisionOf("b0", 1)); err != nil {
				t.Fatal(err)
			}
			if finder == "the server" {
				clear(s.committer.lastSeq)
			}
			// Called directly, as the committer's loop would with a
			// decision of its own waiting beside the stale one.
			lone := decisionFor(t, s, c, 0, decisionOf("c", 1))
			parts := []*decision{decisionFor(t, s, a, 0, decisionOf("a", 2)), decisionFor(t, s, b, 0, decisionOf("b1", 1))} // b is at 1
			for _, p := range parts {
				p.group = parts
			}
			batch, rest := s.committer.pick(append([]*decision{lone}, parts...))
			s.committer.commit(batch)
			if len(rest) != 0 {
				t.Fatalf("%d decisions left for later", len(rest))
			}
			if out := outcomeOf(t, lone); out.err != nil {
				t.Errorf("the decision beside the stale one: %v", out.err)
			}
			for i, p := range parts {
				if out := outcomeOf(t, p); !errors.Is(out.err, errWrongLast) {
					t.Errorf("part %d = %+v, want a conflict", i, out)
				}
			}
			for agg, want := range map[domain.Aggregate]int{a: 0, b: 1, c: 1} {
				if recs, err := s.Load(ctx, agg); err != nil || len(recs) != want {
					t.Errorf("%s has %d events (%v), want %d", agg, len(recs), err, want)
				}
			}
		})
	}
}

// A batch the server rejects holds a pipeline through a decision across
// aggregates: X on a, the decision {A after X, B on b}, L on b after B,
// and Y on z beside them. Each goes again on its own, in order, the
// decision across aggregates whole.
func TestARejectedBatchTriesADecisionAcrossAggregatesWholeAndInOrder(t *testing.T) {
	ctx := context.Background()
	a, b, z := domain.Aggregate{Type: "t", ID: "a"}, domain.Aggregate{Type: "t", ID: "b"}, domain.Aggregate{Type: "t", ID: "z"}
	for _, stale := range []string{"y", "x"} {
		t.Run("stale "+stale, func(t *testing.T) {
			s := openForTest(t, Options{DataDir: t.TempDir()})
			for _, agg := range []domain.Aggregate{a, z} {
				if _, err := s.Append(ctx, agg, 0, decisionOf(agg.ID+"0", 1)); err != nil {
					t.Fatal(err)
				}
			}
			clear(s.committer.lastSeq)         // the server finds the stale one
			xExp, yExp := uint64(1), uint64(0) // y stale: z is at 2
			if stale == "x" {
				xExp, yExp = 0, 2
			}
			x := decisionFor(t, s, a, xExp, decisionOf("x", 2))
			pa := decisionFor(t, s, a, 0, decisionOf("pa", 1))
			pa.after = x
			pb := decisionFor(t, s, b, 0, decisionOf("pb", 1))
			parts := []*decision{pa, pb}
			pa.group, pb.group = parts, parts
			y := decisionFor(t, s, z, yExp, decisionOf("y", 1))
			l := decisionFor(t, s, b, 0, decisionOf("l", 1))
			l.after = pb
			waiting := []*decision{x, pa, pb, y, l}
			batch, rest := s.committer.pick(waiting)
			if len(batch) != 5 || len(rest) != 0 {
				t.Fatalf("picked %d and left %d, want all 5 in the batch", len(batch), len(rest))
			}
			s.committer.commit(batch)
			for i, d := range waiting {
				var want error
				if stale == "y" && d == y || stale == "x" && d != y {
					want = errWrongLast
				}
				if out := outcomeOf(t, d); !errors.Is(out.err, want) {
					t.Errorf("decision %d = %+v, want error %v", i, out, want)
				}
			}
			want := map[domain.Aggregate]int{a: 4, b: 2, z: 1}
			if stale == "x" {
				want = map[domain.Aggregate]int{a: 1, b: 0, z: 2}
			}
			for agg, n := range want {
				if recs, err := s.Load(ctx, agg); err != nil || len(recs) != n {
					t.Errorf("%s has %d events (%v), want %d", agg, len(recs), err, n)
				}
			}
		})
	}
}

func TestAFaultBetweenThePartsOfADecisionAcrossAggregatesStoresNone(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	a, b := domain.Aggregate{Type: "flight", ID: "f1"}, domain.Aggregate{Type: "booking", ID: "b1"}
	parts := []domain.Submission{{Aggregate: a, Events: decisionOf("reserve", 1)}, {Aggregate: b, Events: decisionOf("confirm", 1)}}
	s.committer.betweenEvents = func(sent int, _ *nats.Msg) error { return fmt.Errorf("fault after %d of 2 events", sent) }
	ps, err := s.Submit(ctx, parts...)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range ps {
		if _, err := p.Wait(ctx); err == nil || !strings.Contains(err.Error(), "fault after 1") {
			t.Errorf("part %d = %v, want the injected fault", i, err)
		}
	}
	for _, agg := range []domain.Aggregate{a, b} {
		if recs, err := s.Load(ctx, agg); err != nil || len(recs) != 0 {
			t.Fatalf("after the fault %s has %d events (%v), want none", agg, len(recs), err)
		}
	}
	s.committer.betweenEvents = nil
	if ps, err = s.Submit(ctx, parts...); err != nil {
		t.Fatal(err)
	}
	sequencesOf(t, ps) // the retry stores every part
}

func TestADecisionAcrossAggregatesNeedsDistinctAggregatesAndFitsOneBatch(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	a, b := domain.Aggregate{Type: "flight", ID: "f1"}, domain.Aggregate{Type: "booking", ID: "b1"}
	for name, parts := range map[string][]domain.Submission{
		"at least one part":      nil,
		"one part per aggregate": {{Aggregate: a, Events: decisionOf("x", 1)}, {Aggregate: a, Events: decisionOf("y", 1)}},
		"at most 1000 events":    {{Aggregate: a, Events: decisionOf("x", 600)}, {Aggregate: b, Events: decisionOf("y", 401)}},
	} {
		if _, err := s.Submit(context.Background(), parts...); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: Submit = %v, want an error saying so", name, err)
		}
	}
}

func indexes(all, some []*decision) string {
	var out []int
	for _, d := range some {
		for i, a := range all {
			if a == d {
				out = append(out, i)
			}
		}
	}
	return fmt.Sprint(out)
}

// outcomeOf is d's outcome, failing the test if the committer leaves d
// without one.
func outcomeOf(t *testing.T, d *decision) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out := d.wait(ctx)
	if ctx.Err() != nil {
		t.Fatalf("%s was never answered", d.subject)
	}
	return out
}

// sequencesOf waits for each decision of ps and returns the sequences
// of their events, in order, failing the test if one is not stored.
func sequencesOf(t *testing.T, ps []domain.PendingAppend) []uint64 {
	t.Helper()
	var seqs []uint64
	for i, p := range ps {
		got, err := p.Wait(context.Background())
		if err != nil {
			t.Fatalf("decision %d: %v", i, err)
		}
		seqs = append(seqs, got...)
	}
	return seqs
}

// submitOne submits one decision and fails the test if it cannot.
func submitOne(t *testing.T, s *Store, part domain.Submission) domain.PendingAppend {
	t.Helper()
	ps, err := s.Submit(context.Background(), part)
	if err != nil {
		t.Fatal(err)
	}
	return ps[0]
}

// decisionFor builds the decision Append would hand the committer.
// A part of a decision across aggregates that is chained after pipelined
// decisions on its aggregate, and fails because another part is stale,
// is a conflict; its waiter walks the chain to see whether its events
// were stored all the same, while the committer sends those decisions
// one by one (a third decision in their batch is refused) and rewrites
// their chain as each follows the one before. Run with -race: the two
// once touched the chain unsynchronised.
func TestAChainedPartOfAStaleDecisionIsAConflictWhileTheChainIsCommitted(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	stale := domain.Aggregate{Type: "flight", ID: "f1"}
	if _, err := s.Append(ctx, stale, 0, decisionOf("f1", 1)); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		busy := domain.Aggregate{Type: "stock", ID: fmt.Sprintf("s%d", i)}
		first := decisionFor(t, s, busy, 0, decisionOf(fmt.Sprintf("first%d", i), 1))
		second := decisionFor(t, s, busy, 0, decisionOf(fmt.Sprintf("second%d", i), 1))
		second.after = first
		refused := decisionFor(t, s, domain.Aggregate{Type: "quote", ID: fmt.Sprintf("q%d", i)}, 99, decisionOf(fmt.Sprintf("q%d", i), 1))
		onStale := decisionFor(t, s, stale, 0, decisionOf(fmt.Sprintf("stale%d", i), 1)) // the flight is at 1
		onBusy := decisionFor(t, s, busy, 0, decisionOf(fmt.Sprintf("part%d", i), 1))
		onBusy.after = second
		onStale.group = []*decision{onStale, onBusy}
		onBusy.group = onStale.group
		if err := s.committer.handOver(ctx, first, second, refused, onStale, onBusy); err != nil {
			t.Fatal(err)
		}
		if _, err := (&pendingAppend{s: s, agg: busy, d: onBusy}).Wait(ctx); !errors.Is(err, domain.ErrAggregateChanged) {
			t.Fatalf("the part chained after the busy aggregate's decisions = %v, want a conflict", err)
		}
		for _, d := range []*decision{first, second, refused} {
			d.wait(ctx)
		}
	}
}

func decisionFor(t *testing.T, s *Store, agg domain.Aggregate, expected uint64, events []domain.Envelope) *decision {
	t.Helper()
	d, err := newDecision(context.Background(), s.subject(agg), expected, events)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestARetriedMultiEventDecisionGetsItsSequencesBack(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	agg := domain.Aggregate{Type: "stock", ID: "s1"}
	first, err := s.Append(ctx, agg, 0, decisionOf("d1", 2))
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.Append(ctx, agg, 0, decisionOf("d1", 2))
	if err != nil || fmt.Sprint(again) != fmt.Sprint(first) {
		t.Fatalf("retry = %v, %v; want %v", again, err, first)
	}
	if _, err := s.Append(ctx, agg, 0, decisionOf("d2", 2)); !errors.Is(err, domain.ErrAggregateChanged) {
		t.Errorf("another decision with the same stale expectation = %v, want domain.ErrAggregateChanged", err)
	}
}

func TestAStreamMadeWithoutAtomicBatchesIsUpdatedOnOpen(t *testing.T) {
	dir := t.TempDir()
	s := openForTest(t, Options{DataDir: dir})
	cfg := s.stream.CachedInfo().Config
	cfg.AllowAtomicPublish = false
	if _, err := s.js.UpdateStream(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openForTest(t, Options{DataDir: dir})
	if !s.stream.CachedInfo().Config.AllowAtomicPublish {
		t.Fatal("the stream still refuses atomic batches")
	}
	if _, err := s.Append(context.Background(), domain.Aggregate{Type: "stock", ID: "s1"}, 0, decisionOf("d1", 2)); err != nil {
		t.Errorf("a two-event decision after the update: %v", err)
	}
}

func TestConcurrentDecisionsAreStoredWholeAndInOrder(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	const writers, each = 32, 10
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			agg := domain.Aggregate{Type: "counter", ID: fmt.Sprint("w", w)}
			var last uint64
			for i := range each {
				seqs, err := s.Append(ctx, agg, last, decisionOf(fmt.Sprintf("w%d-%d", w, i), 1+i%3))
				if err != nil {
					t.Errorf("writer %d, decision %d: %v", w, i, err)
					return
				}
				last = seqs[len(seqs)-1]
			}
		}()
	}
	wg.Wait()
	batches := map[string]bool{}
	err := s.Read(ctx, nil, 0, 0, func(r domain.Record) error {
		m, err := s.stream.GetMsg(ctx, r.Sequence)
		if err == nil {
			batches[m.Header.Get(hdrBatchID)] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for w := range writers {
		recs, err := s.Load(ctx, domain.Aggregate{Type: "counter", ID: fmt.Sprint("w", w)})
		if err != nil || len(recs) != 19 { // 10 decisions of 1, 2, 3, 1, 2, 3, 1, 2, 3, 1 events
			t.Fatalf("writer %d: %d events, %v", w, len(recs), err)
		}
		for i, r := range recs {
			if want := fmt.Sprintf("w%d-", w); !strings.HasPrefix(r.CommandID, want) || (i > 0 && r.Sequence <= recs[i-1].Sequence) {
				t.Errorf("writer %d, event %d: command %s at %d", w, i, r.CommandID, r.Sequence)
			}
		}
	}
	t.Logf("%d decisions in %d batches", writers*each, len(batches))
}

// crashChildEnv names the data directory of a child process that appends
// decisions until it is killed; see TestKillDuringDecisions.
const crashChildEnv = "CARGO_TEST_CRASH_CHILD_DIR"

// TestCrashChild is the child's side: not a test of its own.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("runs only as the child of TestKillDuringDecisions")
	}
	s, err := Open(context.Background(), Options{DataDir: dir})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	round := os.Getenv("CARGO_TEST_CRASH_ROUND")
	var n atomic.Int64
	var out sync.Mutex
	say := func(f string, args ...any) { out.Lock(); fmt.Printf(f+"\n", args...); out.Unlock() }
	for range 16 {
		go func() {
			for {
				name := fmt.Sprintf("r%s-d%d", round, n.Add(1))
				say("start %s", name)
				if err := crashDecision(context.Background(), s, name); err != nil {
					say("error %s %v", name, err)
					continue
				}
				say("acked %s", name)
			}
		}()
	}
	select {} // until killed
}

// crashDecision is the child's decision: three events on crash/<name> and
// one on crashpart/<name>, stored together.
func crashDecision(ctx context.Context, s *Store, name string) error {
	ps, err := s.Submit(ctx,
		domain.Submission{Aggregate: domain.Aggregate{Type: "crash", ID: name}, Events: decisionOf(name, 3)},
		domain.Submission{Aggregate: domain.Aggregate{Type: "crashpart", ID: name}, Events: decisionOf(name+"-part", 1)})
	if err != nil {
		return err
	}
	for _, p := range ps {
		if _, err := p.Wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

// TestKillDuringDecisions kills a process (kill -9) while it stores
// decisions of four events on two aggregates from 16 goroutines, three
// times over. After each restart every acknowledged decision is there, no
// decision is there in part, and a retry of each one that is missing
// completes it.
func TestKillDuringDecisions(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := t.TempDir()
	ctx := context.Background()
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir, fmt.Sprint("CARGO_TEST_CRASH_ROUND=", round))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		started, acked := map[string]bool{}, map[string]bool{}
		killAt := 100 + rand.IntN(300)
		lines := bufio.NewScanner(stdout)
		for len(acked) < killAt && lines.Scan() {
			verb, name, _ := strings.Cut(lines.Text(), " ")
			switch verb {
			case "start":
				started[name] = true
			case "acked":
				acked[name] = true
			default:
				t.Fatalf("child: %s", lines.Text())
			}
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		if len(acked) < killAt {
			t.Fatalf("round %d: the child stopped after %d acknowledged decisions", round, len(acked))
		}

		s, err := Open(ctx, Options{DataDir: dir})
		if err != nil {
			t.Fatalf("round %d: reopening after the kill: %v", round, err)
		}
		missing := 0
		for name := range started {
			stored := 0
			for _, agg := range []domain.Aggregate{{Type: "crash", ID: name}, {Type: "crashpart", ID: name}} {
				recs, err := s.Load(ctx, agg)
				if err != nil {
					t.Fatalf("round %d: load %s: %v", round, agg, err)
				}
				stored += len(recs)
			}
			switch {
			case stored == 4:
			case stored == 0 && !acked[name]:
				missing++
				if err := crashDecision(ctx, s, name); err != nil {
					t.Errorf("round %d: retrying %s: %v", round, name, err)
				}
			default:
				t.Errorf("round %d: %s has %d of 4 events (acknowledged: %v)", round, name, stored, acked[name])
			}
		}
		t.Logf("round %d: killed after %d acknowledged of %d started decisions; %d not stored were retried",
			round, len(acked), len(started), missing)
		s.Close()
	}
}

func TestJobsPutTogetherAreStoredOnceEach(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	q, err := s.Queue(ctx, "test")
	if err != nil {
		t.Fatal(err)
	}
	jobs := []domain.Job{{ID: "j1", Data: []byte("1")}, {ID: "j2", Data: []byte("2")}, {ID: "j3", Data: []byte("3")}}
	if err := q.Put(ctx, jobs...); err != nil {
		t.Fatal(err)
	}
	// Put again with one new job: the repeated ids spoil a shared batch,
	// and each job is then stored alone, the repeats dropped.
	jobs = append(jobs, domain.Job{ID: "j4", Data: []byte("4")})
	if err := q.Put(ctx, jobs...); err != nil {
		t.Fatalf("putting known jobs again: %v", err)
	}
	info, err := s.js.Stream(ctx, q.stream)
	if err != nil {
		t.Fatal(err)
	}
	if n := info.CachedInfo().State.Msgs; n != 4 {
		t.Errorf("the queue holds %d jobs, want 4", n)
	}
}

// TestAWriteThatFindsNoStreamListeningIsSentAgainUntilOneDoes deletes a
// queue's stream and makes it again a second after jobs began to be put
// (withoutStreamForASecond). One job goes as a plain publish, ten as an
// atomic batch; each is stored, once. A stream just made on a cluster is as good
// as none to a writer until its leader's interest reaches the writer's
// server.
func TestAWriteThatFindsNoStreamListeningIsSentAgainUntilOneDoes(t *testing.T) {
	for name, n := range map[string]int{"a plain publish": 1, "an atomic batch": 10} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := openForTest(t, Options{DataDir: t.TempDir()})
			ctx := context.Background()
			q := openQueue(t, s, "remade")
			var jobs []domain.Job
			for i := range n {
				jobs = append(jobs, domain.Job{ID: fmt.Sprint("j", i)})
			}
			err := withoutStreamForASecond(t, s, q.handle.CachedInfo().Config, func() error { return q.Put(ctx, jobs...) })
			if err != nil {
				t.Fatalf("putting %d jobs while the queue had no stream for a second: %v", n, err)
			}
			info, err := q.handle.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if info.State.Msgs != uint64(n) {
				t.Errorf("the queue holds %d jobs, want %d", info.State.Msgs, n)
			}
		})
	}
}

// withoutStreamForASecond deletes the stream of config, runs write on a
// goroutine, makes the stream again a second later (later than nats.go
// tries a plain publish again, half a second; sooner than commitTimeout),
// and returns write's error.
func withoutStreamForASecond(t *testing.T, s *Store, config jetstream.StreamConfig, write func() error) error {
	t.Helper()
	ctx := context.Background()
	if err := s.js.DeleteStream(ctx, config.Name); err != nil {
		t.Fatal(err)
	}
	written := make(chan error, 1)
	go func() { written <- write() }()
	time.Sleep(time.Second)
	if _, err := s.js.CreateStream(ctx, config); err != nil {
		t.Fatal(err)
	}
	return received(t, "the write to end", written)
}

func TestAnEventStoredBeforeIsNotTakenForTheAggregatesLast(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	agg := domain.Aggregate{Type: "quote", ID: "q"}
	for i, name := range []string{"d1", "d2"} {
		if _, err := s.Append(ctx, agg, uint64(i), decisionOf(name, 1)); err != nil {
			t.Fatal(err)
		}
	}
	// d1 again, expecting the aggregate's last sequence: the server drops
	// it as a duplicate of the event at 1, which is not the last.
	if seqs, err := s.Append(ctx, agg, 2, decisionOf("d1", 1)); !errors.Is(err, domain.ErrAggregateChanged) {
		t.Errorf("d1 again = %v, %v; want domain.ErrAggregateChanged", seqs, err)
	}
	if last := s.committer.lastSeq[s.subject(agg)]; last.seq != 2 {
		t.Errorf("the committer takes the aggregate's last sequence for %d, want 2", last.seq)
	}
	// d2 again, decided on the state after d2: a duplicate too, not
	// where it expected, so a conflict (whose fresh load finds it ran);
	// decided as the first try was, it is stored where it expected.
	if seqs, err := s.Append(ctx, agg, 2, decisionOf("d2", 1)); !errors.Is(err, domain.ErrAggregateChanged) {
		t.Errorf("d2 again after itself = %v, %v; want domain.ErrAggregateChanged", seqs, err)
	}
	if seqs, err := s.Append(ctx, agg, 1, decisionOf("d2", 1)); err != nil || fmt.Sprint(seqs) != "[2]" {
		t.Errorf("d2 again = %v, %v; want [2]", seqs, err)
	}
}

func TestAConflictTheCommitterFindsItselfCostsNoRead(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	agg := domain.Aggregate{Type: "flight", ID: "f1"}
	if _, err := s.Append(ctx, agg, 0, decisionOf("first", 1)); err != nil {
		t.Fatal(err)
	}
	reads := countRequests(t, s, "STREAM.MSG.GET")
	// Stale by the committer's own last sequence, and decided after one
	// that failed: neither was sent, and neither is the aggregate's last.
	stale := submitOne(t, s, domain.Submission{Aggregate: agg, Events: decisionOf("stale", 1)})
	next := submitOne(t, s, domain.Submission{Aggregate: agg, After: stale, Events: decisionOf("next", 1)})
	for _, p := range []domain.PendingAppend{stale, next} {
		if _, err := p.Wait(ctx); !errors.Is(err, domain.ErrAggregateChanged) {
			t.Fatalf("wait = %v, want domain.ErrAggregateChanged", err)
		}
	}
	if n := reads(0); n != 0 {
		t.Errorf("%d reads of a message, want none", n)
	}
	// The read still tells a retry of the aggregate's last decision from
	// a conflict, and costs one.
	if seqs, err := s.Append(ctx, agg, 0, decisionOf("first", 1)); err != nil || fmt.Sprint(seqs) != "[1]" {
		t.Errorf("first again = %v, %v; want [1]", seqs, err)
	}
	if n := reads(1); n != 1 {
		t.Errorf("%d reads of a message, want one", n)
	}
}

// countRequests counts the requests to the JetStream API call api (such
// as STREAM.INFO) on s's stream from now on. The function returned says
// how many reached the server so far, once at least least have: a copy
// may come to the test a moment after the server answered the request.
func countRequests(t *testing.T, s *Store, api string) func(least int) int {
	t.Helper()
	nc, err := s.dial("test", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	sub, err := nc.SubscribeSync("$JS.API." + api + "." + s.name)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return func(least int) int {
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
			if err := nc.Flush(); err != nil {
				t.Fatal(err)
			}
			n, _, err := sub.Pending()
			if err != nil {
				t.Fatal(err)
			}
			if n >= least || time.Now().After(deadline) {
				return n
			}
		}
	}
}

// lossyServer starts a NATS server on loopback with two users: app, who
// may do anything, and lossy, who may publish but whose subscriptions
// (the reply inbox among them) are refused, so that every reply to it is
// lost. It returns the URL for app and a connection as lossy.
// storeWhoseAcknowledgementsAreLost opens a store on a lossy server
// whose committer, until answered is called, publishes through the
// connection that hears no answer (see lossyServer).
func storeWhoseAcknowledgementsAreLost(t *testing.T) (s *Store, answered func()) {
	t.Helper()
	url, lossy := lossyServer(t)
	s = openForTest(t, Options{URL: url, Stream: "CARGO"})
	nc, js := s.committer.nc, s.committer.js
	lossyJS, err := jetstream.New(lossy)
	if err != nil {
		t.Fatal(err)
	}
	s.committer.nc, s.committer.js = lossy, lossyJS // before the committer has work
	return s, func() {
		s.committer.mu.Lock() // the committer's goroutine takes the lock before its next batch
		s.committer.nc, s.committer.js = nc, js
		s.committer.mu.Unlock()
	}
}

func lossyServer(t *testing.T) (string, *nats.Conn) {
	t.Helper()
	srv := natstest.Start(t, &server.Options{Port: server.RANDOM_PORT, Users: []*server.User{
		{Username: "app", Password: "app"},
		{Username: "lossy", Password: "lossy", Permissions: &server.Permissions{
			Subscribe: &server.SubjectPermission{Deny: []string{">"}}}},
	}})
	addr := srv.Addr().String()
	lossy, err := nats.Connect("nats://lossy:lossy@"+addr, nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lossy.Close)
	return "nats://app:app@" + addr, lossy
}

// A batch the server rejects is tried again decision by decision. When
// the server stops answering just then, the decisions after the one whose
// answer is lost are not sent, each to wait its own commitTimeout (and
// Close with them), but answered with that failure.
func TestDecisionsTriedOneByOneAreNotSentOnceTheServerStopsAnswering(t *testing.T) {
	url, lossy := lossyServer(t)
	s, err := Open(context.Background(), Options{URL: url, Stream: "CARGO"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: "b"}, 0, decisionOf("b0", 1)); err != nil {
		t.Fatal(err)
	}
	clear(s.committer.lastSeq) // so the server finds b stale, and rejects the batch
	var ds []*decision
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		ds = append(ds, decisionFor(t, s, domain.Aggregate{Type: "quote", ID: id}, 0, decisionOf(id+"1", 2)))
	}
	js, err := jetstream.New(lossy)
	if err != nil {
		t.Fatal(err)
	}
	sent := 0 // batches sent; the committer's goroutine counts them
	s.committer.betweenEvents = func(event int, _ *nats.Msg) error {
		if event == 1 {
			if sent++; sent == 2 { // the first decision, tried on its own
				s.committer.nc, s.committer.js = lossy, js // from here on no answer comes back
			}
		}
		return nil
	}
	if err := s.committer.handOver(ctx, ds...); err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if out := outcomeOf(t, d); !transient(out.err) {
			t.Errorf("%s = %+v, want no answer", d.subject, out)
		}
	}
	s.Close() // the committer's goroutine is done with sent
	if sent != 2 {
		t.Errorf("%d batches sent, want 2: the whole, then the first decision alone, whose answer was lost", sent)
	}
}

// A decision and one decided after it share a batch whose acknowledgement
// is lost, though the server stored it: each caller is told its
// sequences, the first too, though its events are not the aggregate's
// last; and so is the first decision sent again, as a retry would.
func TestALostAcknowledgementOfADecisionWithAFollowerInItsBatchTellsBothTheirSequences(t *testing.T) {
	s, answered := storeWhoseAcknowledgementsAreLost(t)
	ctx := context.Background()
	agg := domain.Aggregate{Type: "flight", ID: "f1"}
	x := decisionFor(t, s, agg, 0, decisionOf("x", 2))
	l := decisionFor(t, s, agg, 0, decisionOf("l", 1))
	l.after = x
	if err := s.committer.handOver(ctx, x, l); err != nil {
		t.Fatal(err)
	}
	seqsX, errX := (&pendingAppend{s: s, agg: agg, d: x}).Wait(ctx)
	seqsL, errL := (&pendingAppend{s: s, agg: agg, d: l}).Wait(ctx)
	if fmt.Sprint(seqsX, errX, seqsL, errL) != "[1 2] <nil> [3] <nil>" {
		t.Errorf("x = %v, %v; l = %v, %v; want [1 2] and [3]", seqsX, errX, seqsL, errL)
	}
	answered()
	if seqs, err := s.Append(ctx, agg, 0, decisionOf("x", 2)); fmt.Sprint(seqs, err) != "[1 2] <nil>" {
		t.Errorf("x again = %v, %v; want its sequences [1 2]", seqs, err)
	}
}

// A command decided again repeats its event ids. Sent again after its
// first try was stored, it is told stored only if all its events are the
// same as those stored, not when only its last one is.
func TestARetryWhoseEarlierEventDiffersFromTheOneStoredIsAConflict(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	agg := domain.Aggregate{Type: "stock", ID: "s1"}
	if _, err := s.Append(ctx, agg, 0, decisionOf("cmd", 2)); err != nil {
		t.Fatal(err)
	}
	again := decisionOf("cmd", 2)
	again[0].Data = []byte(`{"step":0,"left":41}`) // decided on another state
	if seqs, err := s.Append(ctx, agg, 0, again); !errors.Is(err, domain.ErrAggregateChanged) {
		t.Errorf("the retry = %v, %v; want a conflict: the event stored at 1 is not its first", seqs, err)
	}
	if seqs, err := s.Append(ctx, agg, 0, decisionOf("cmd", 2)); fmt.Sprint(seqs, err) != "[1 2] <nil>" {
		t.Errorf("the same decision again = %v, %v; want its sequences [1 2]", seqs, err)
	}
}

// A decision with an event larger than the server takes is refused at
// once, as too large, and never joins a batch, where it would fail every
// decision beside it; the queue refuses such a job alike.
func TestADecisionTooLargeToStoreIsRefusedAloneAtOnce(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	good := submitOne(t, s, domain.Submission{Aggregate: domain.Aggregate{Type: "quote", ID: "good"}, Events: decisionOf("good", 2)})
	big := decisionOf("big", 2)
	big[1].Data = bytes.Repeat([]byte("x"), int(s.nc.MaxPayload()))
	if _, err := s.Submit(ctx, domain.Submission{Aggregate: domain.Aggregate{Type: "quote", ID: "big"}, Events: big}); domain.ErrorCode(err) != domain.PayloadTooLarge {
		t.Errorf("the large decision = %v, want payload_too_large", err)
	}
	if seqs, err := good.Wait(ctx); err != nil || len(seqs) != 2 {
		t.Errorf("the decision beside it = %v, %v; want it stored", seqs, err)
	}
	q, err := s.Queue(ctx, "jobs")
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Put(ctx, domain.Job{ID: "big", Data: big[1].Data}); domain.ErrorCode(err) != domain.PayloadTooLarge {
		t.Errorf("the large job = %v, want payload_too_large", err)
	}
}

// A decision across aggregates stored by an earlier try, retried after one
// of its aggregates moved on: each part is told its sequences, as its
// events are stored where it expected them, whether the committer finds
// the conflict in its cache or the server does.
func TestARetriedPartOfADecisionAcrossAggregatesStoredBeforeIsToldItsSequencesWhateverFindsTheConflict(t *testing.T) {
	ctx := context.Background()
	a, b := domain.Aggregate{Type: "flight", ID: "f1"}, domain.Aggregate{Type: "ledger", ID: "l1"}
	for _, cache := range []string{"cleared", "kept"} {
		t.Run("cache "+cache, func(t *testing.T) {
			s := openForTest(t, Options{DataDir: t.TempDir()})
			parts := []domain.Submission{{Aggregate: a, Events: decisionOf("reserve", 1)}, {Aggregate: b, Events: decisionOf("use", 1)}}
			ps, err := s.Submit(ctx, parts...)
			if err != nil {
				t.Fatal(err)
			}
			first := sequencesOf(t, ps) // [1 2]
			// a moves on; b's last event is still the group's part.
			if _, err := s.Append(ctx, a, first[0], decisionOf("other", 1)); err != nil {
				t.Fatal(err)
			}
			if cache == "cleared" {
				clear(s.committer.lastSeq)
			}
			ps, err = s.Submit(ctx, parts...)
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range ps {
				if seqs, err := p.Wait(ctx); err != nil || len(seqs) != 1 || seqs[0] != first[i] {
					t.Errorf("part %d = %v, %v; want [%d], stored by the earlier try", i, seqs, err, first[i])
				}
			}
		})
	}
}

// A decision may be followed by one decision only: a second submitted
// after the same one is refused, as it was not decided on the first
// follower's events, and both would be stored one after the other.
func TestASecondDecisionAfterTheSamePendingOneIsRefused(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	agg := domain.Aggregate{Type: "flight", ID: "f1"}
	x := submitOne(t, s, domain.Submission{Aggregate: agg, Events: decisionOf("x", 2)})
	y := submitOne(t, s, domain.Submission{Aggregate: agg, After: x, Events: decisionOf("y", 2)})
	if _, err := s.Submit(ctx, domain.Submission{Aggregate: agg, After: x, Events: decisionOf("z", 2)}); err == nil {
		t.Errorf("z, after x as y is, was taken")
	}
	if seqs := sequencesOf(t, []domain.PendingAppend{x, y}); fmt.Sprint(seqs) != "[1 2 3 4]" {
		t.Errorf("x and y stored at %v, want [1 2 3 4]", seqs)
	}
	recs, err := s.Load(ctx, agg)
	if err != nil || len(recs) != 4 {
		t.Errorf("the aggregate holds %d events (%v), want x's and y's", len(recs), err)
	}
}

// A decision decided after another on its aggregate shares the other's
// batch while both fit the server's limit of 1,000 events; one that does
// not fit goes in the next batch, expecting the other's last sequence.
// Either way both are stored whole, one after the other.
func TestAPipelineAtTheLimitOfABatchIsStoredWholeAndInOrder(t *testing.T) {
	for _, tt := range []struct {
		name          string
		first, second int
		sameBatch     bool
		secondAlone   bool // a single event: a plain publish, no batch id
	}{
		{name: "the two fill one batch exactly", first: 600, second: 400, sameBatch: true},
		{name: "one event too many sends the second in the next batch", first: 600, second: 401},
		{name: "a decision of the limit leaves no room for the one after it", first: 1000, second: 1, secondAlone: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := openForTest(t, Options{DataDir: t.TempDir()})
			ctx := context.Background()
			agg := domain.Aggregate{Type: "flight", ID: "f1"}
			first := decisionFor(t, s, agg, 0, decisionOf("first", tt.first))
			second := decisionFor(t, s, agg, 0, decisionOf("second", tt.second))
			second.after = first
			if err := s.committer.handOver(ctx, first, second); err != nil {
				t.Fatal(err)
			}
			total := uint64(tt.first + tt.second)
			if a, b := outcomeOf(t, first), outcomeOf(t, second); a.err != nil || b.err != nil || a.last != uint64(tt.first) || b.last != total {
				t.Fatalf("first = %+v, second = %+v; want them stored at %d and %d", a, b, tt.first, total)
			}
			batchOf := func(seq uint64) string {
				m, err := s.stream.GetMsg(ctx, seq)
				if err != nil {
					t.Fatal(err)
				}
				return m.Header.Get(hdrBatchID)
			}
			one, two := batchOf(1), batchOf(uint64(tt.first+1))
			switch {
			case one == "" || batchOf(uint64(tt.first)) != one:
				t.Errorf("the first decision's events are not one batch")
			case tt.sameBatch && two != one:
				t.Errorf("the second decision went in batch %q, not the first's %q", two, one)
			case !tt.sameBatch && two == one:
				t.Errorf("the second decision shares the first's batch, of %d events", total)
			case tt.secondAlone != (two == ""):
				t.Errorf("the second decision's batch is %q", two)
			}
			recs, err := s.Load(ctx, agg)
			if err != nil || uint64(len(recs)) != total {
				t.Fatalf("the aggregate has %d events (%v), want %d", len(recs), err, total)
			}
			for i, r := range recs {
				want := fmt.Sprintf("first-e%d", i)
				if i >= tt.first {
					want = fmt.Sprintf("second-e%d", i-tt.first)
				}
				if r.EventID != want || r.Sequence != uint64(i+1) {
					t.Fatalf("event at %d is %s, want %s at %d", r.Sequence, r.EventID, want, i+1)
				}
			}
		})
	}
}

// Two callers decide on the same state of an aggregate at the same
// moment: both decisions reach the committer in one batch window. The
// first is stored, with the decision of a third caller on another
// aggregate, and the second, and only the second, is told of a conflict.
func TestTwoDecisionsOnTheSameStateInOneBatchWindowConflictForTheSecondCallerOnly(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	agg, other := domain.Aggregate{Type: "flight", ID: "f1"}, domain.Aggregate{Type: "quote", ID: "q1"}
	if _, err := s.Append(ctx, agg, 0, decisionOf("created", 1)); err != nil {
		t.Fatal(err)
	}
	first := decisionFor(t, s, agg, 1, decisionOf("first", 2))
	second := decisionFor(t, s, agg, 1, decisionOf("second", 2))
	third := decisionFor(t, s, other, 0, decisionOf("third", 2))
	if err := s.committer.handOver(ctx, first, second, third); err != nil {
		t.Fatal(err)
	}
	wait := func(d *decision, agg domain.Aggregate) string {
		seqs, err := (&pendingAppend{s: s, agg: agg, d: d}).Wait(ctx)
		if errors.Is(err, domain.ErrAggregateChanged) {
			return "conflict"
		}
		return fmt.Sprint(seqs, err)
	}
	if got := wait(first, agg) + " " + wait(second, agg) + " " + wait(third, other); got != "[2 3] <nil> conflict [4 5] <nil>" {
		t.Errorf("first, second, third = %s; want [2 3], a conflict, [4 5]", got)
	}
	if recs, err := s.Load(ctx, agg); err != nil || len(recs) != 3 || recs[2].EventID != "first-e1" {
		t.Errorf("the aggregate holds %d events (%v), want the first decision's after its creation", len(recs), err)
	}
}

// A caller that gives up while its decision is being sent changes nothing
// of the batch: the decision is stored whole, once, with the others of its
// batch, and the caller's retry is told its sequences.
func TestACallerThatGivesUpWhileItsBatchIsSentHasItStoredOnce(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir()})
	agg, other := domain.Aggregate{Type: "stock", ID: "s1"}, domain.Aggregate{Type: "quote", ID: "q1"}
	gone, giveUp := context.WithCancel(context.Background())
	defer giveUp()
	d, err := newDecision(gone, s.subject(agg), 0, decisionOf("d", 3))
	if err != nil {
		t.Fatal(err)
	}
	beside := decisionFor(t, s, other, 0, decisionOf("beside", 2))
	s.committer.betweenEvents = func(sent int, _ *nats.Msg) error {
		if sent == 2 { // part way through the first decision
			giveUp()
		}
		return nil
	}
	if err := s.committer.handOver(context.Background(), d, beside); err != nil {
		t.Fatal(err)
	}
	if out := outcomeOf(t, beside); out.err != nil || out.last != 5 {
		t.Fatalf("the decision beside it = %+v, want it stored at 4 and 5", out)
	}
	s.committer.mu.Lock() // the committer's goroutine takes the lock before its next batch
	s.committer.betweenEvents = nil
	s.committer.mu.Unlock()
	if _, err := (&pendingAppend{s: s, agg: agg, d: d}).Wait(gone); err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("the caller that gave up = %v, want its own cancellation or its sequences", err)
	}
	if seqs, err := s.Append(context.Background(), agg, 0, decisionOf("d", 3)); fmt.Sprint(seqs, err) != "[1 2 3] <nil>" {
		t.Errorf("its retry = %v, %v; want the sequences of the first try, [1 2 3]", seqs, err)
	}
	if info, err := s.stream.Info(context.Background()); err != nil || info.State.Msgs != 5 {
		t.Errorf("the stream holds %v events (%v), want 5: each decision once", info.State.Msgs, err)
	}
}

// A decision across aggregates whose batch the server stored, its
// acknowledgement lost: each part is told its sequences, as each finds its
// own events stored where it expected them, and the decision sent again,
// as its command's retry would, is told the same.
func TestALostAcknowledgementOfADecisionAcrossAggregatesTellsEachPartItsSequences(t *testing.T) {
	s, answered := storeWhoseAcknowledgementsAreLost(t)
	ctx := context.Background()
	flight, ledger := domain.Aggregate{Type: "flight", ID: "f1"}, domain.Aggregate{Type: "ledger", ID: "l1"}
	parts := []domain.Submission{{Aggregate: flight, Events: decisionOf("reserve", 1)}, {Aggregate: ledger, Events: decisionOf("use", 2)}}
	ps, err := s.Submit(ctx, parts...)
	if err != nil {
		t.Fatal(err)
	}
	if seqs := sequencesOf(t, ps); fmt.Sprint(seqs) != "[1 2 3]" {
		t.Errorf("the parts = %v, want [1 2 3]", seqs)
	}
	answered()
	if ps, err = s.Submit(ctx, parts...); err != nil {
		t.Fatal(err)
	}
	if seqs := sequencesOf(t, ps); fmt.Sprint(seqs) != "[1 2 3]" {
		t.Errorf("the decision again = %v, want [1 2 3]", seqs)
	}
	if info, err := s.stream.Info(ctx); err != nil || info.State.Msgs != 3 {
		t.Errorf("the stream holds %v events (%v), want 3", info.State.Msgs, err)
	}
}

// A NATS server may be set to take smaller atomic batches than the 1,000
// messages it takes by default (jetstream { limits { max_batch_size } }).
// Decisions that each fit its limit are stored, though together they do
// not: first each on its own, then in batches cut to the server's limit.
// A decision larger than the limit is refused alone.
func TestDecisionsThatFitTheServersSmallerBatchLimitAreStored(t *testing.T) {
	srv := natstest.Start(t, &server.Options{Port: server.RANDOM_PORT, JetStreamLimits: server.JSLimitOpts{MaxBatchSize: 4}})
	s := openForTest(t, Options{URL: srv.ClientURL(), Stream: "CARGO"})
	ctx := context.Background()
	batchOf := func(seq uint64) string {
		m, err := s.stream.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		return m.Header.Get(hdrBatchID)
	}
	// Each round: three decisions of 2 events, 6 in all, stored at
	// 6*round+1 to 6*round+6, and how their events were batched.
	for round, want := range []string{"each alone", "the first two together"} {
		var ds []*decision
		for _, name := range []string{"a", "b", "c"} {
			agg := domain.Aggregate{Type: "quote", ID: fmt.Sprint(name, round)}
			ds = append(ds, decisionFor(t, s, agg, 0, decisionOf(fmt.Sprint(name, round), 2)))
		}
		if err := s.committer.handOver(ctx, ds...); err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if out := outcomeOf(t, d); out.err != nil {
				t.Fatalf("round %d: %s = %v, want it stored: its 2 events fit the server's limit of 4", round, d.subject, out.err)
			}
		}
		first := uint64(6*round + 1)
		got := "each alone"
		if batchOf(first) == batchOf(first+2) {
			got = "the first two together"
		}
		if got != want || batchOf(first+2) == batchOf(first+4) {
			t.Errorf("round %d: batches of %q, %q, %q; want %s", round, batchOf(first), batchOf(first+2), batchOf(first+4), want)
		}
	}
	// A decision larger than the limit fails alone, as too large: no
	// retry cures it.
	ps, err := s.Submit(ctx, domain.Submission{Aggregate: domain.Aggregate{Type: "quote", ID: "big"}, Events: decisionOf("big", 5)})
	if err != nil {
		t.Fatal(err)
	}
	small := submitOne(t, s, domain.Submission{Aggregate: domain.Aggregate{Type: "quote", ID: "small"}, Events: decisionOf("small", 2)})
	if _, err := ps[0].Wait(ctx); domain.ErrorCode(err) != domain.PayloadTooLarge {
		t.Errorf("a decision of 5 events = %v, want payload_too_large", err)
	}
	if seqs, err := small.Wait(ctx); err != nil || len(seqs) != 2 {
		t.Errorf("the decision after it = %v, %v; want it stored", seqs, err)
	}
}

// A store closed while a batch is being sent lets that batch finish, and
// answers the decisions handed over behind it as refused, without sending
// them; a decision submitted once it is closed is refused at once.
func TestClosingTheStoreFinishesTheBatchInFlightAndRefusesTheDecisionsBehindIt(t *testing.T) {
	s, err := Open(context.Background(), Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sending := make(chan struct{})
	s.committer.betweenEvents = func(int, *nats.Msg) error {
		close(sending)
		<-s.committer.stop // the batch goes on once Close has begun
		return nil
	}
	inFlight := decisionFor(t, s, domain.Aggregate{Type: "quote", ID: "a"}, 0, decisionOf("a", 2))
	if err := s.committer.handOver(ctx, inFlight); err != nil {
		t.Fatal(err)
	}
	<-sending
	var behind []*decision
	for _, name := range []string{"b", "c"} {
		behind = append(behind, decisionFor(t, s, domain.Aggregate{Type: "quote", ID: name}, 0, decisionOf(name, 1)))
	}
	if err := s.committer.handOver(ctx, behind...); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if out := outcomeOf(t, inFlight); out.err != nil || out.last != 2 {
		t.Errorf("the decision in flight = %+v, want it stored at 1 and 2", out)
	}
	for _, d := range behind {
		if out := outcomeOf(t, d); !errors.Is(out.err, errClosed) {
			t.Errorf("%s, handed over behind it = %+v, want it refused as the store closed", d.subject, out)
		}
	}
	if _, err := s.Submit(ctx, domain.Submission{Aggregate: domain.Aggregate{Type: "quote", ID: "d"}, Events: decisionOf("d", 1)}); !errors.Is(err, errClosed) {
		t.Errorf("a decision submitted after Close = %v, want it refused as the store closed", err)
	}
}
