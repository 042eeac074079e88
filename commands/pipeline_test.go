package commands

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/internal/storetest"
)

// The pipeline's tests run commands on a tally: an aggregate whose state
// is the references of its events, in order. Each command adds events
// and logs, under the aggregate's lock, that it decided.

type tally []string

func evolveTally(t tally, e domain.Event) tally {
	return append(slices.Clip(t), e.(domain.AWBNumberUsed).Reference)
}

type tallyWorld struct {
	h   *Handler
	agg domain.Aggregate

	mu        sync.Mutex
	decisions []string // each decision's reference, in the order decided
}

func newTallyWorld(t *testing.T) *tallyWorld {
	t.Helper()
	return &tallyWorld{h: New(storetest.Open(t), 4, builtinReference()), agg: domain.Aggregate{Type: "tally", ID: "t1"}}
}

// decide is the decision of command ref: events references ref, ref+1, …
// (none for 0), logged as ref.
func (w *tallyWorld) decide(ref string, events int) func(tally) ([]domain.Event, error) {
	return func(tally) ([]domain.Event, error) {
		w.mu.Lock()
		w.decisions = append(w.decisions, ref)
		w.mu.Unlock()
		var out []domain.Event
		for i := range events {
			r := ref
			if i > 0 {
				r = fmt.Sprint(ref, "+", i)
			}
			out = append(out, domain.AWBNumberUsed{Reference: r})
		}
		return out, nil
	}
}

func (w *tallyWorld) add(ref string) (Result[tally], error) {
	return execute(context.Background(), w.h, w.agg, w.meta(ref), evolveTally, w.decide(ref, 1))
}

func (w *tallyWorld) meta(ref string) Meta {
	return NewMeta(domain.Principal{Subject: "test"}, "cmd-"+ref, "")
}

// decided returns how often ref was decided.
func (w *tallyWorld) decided(ref string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, d := range w.decisions {
		if d == ref {
			n++
		}
	}
	return n
}

// stored returns the references of the events stored, in order.
func (w *tallyWorld) stored(t *testing.T) []string {
	t.Helper()
	recs, err := w.h.store.Load(context.Background(), w.agg)
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, r := range recs {
		e, err := domain.DecodeEvent(r.Type, r.Data)
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, e.(domain.AWBNumberUsed).Reference)
	}
	return refs
}

// pause decides ref on the aggregate and hands it to the store without
// waiting for it: the aggregate's pipeline runs until stored is called.
// It is a command's transaction (see transactFrom) stopped before its wait.
func (w *tallyWorld) pause(t *testing.T, ref string, events int) (stored func() (Result[tally], error)) {
	t.Helper()
	tx := &transaction{ctx: context.Background(), h: w.h, how: loadCached, locked: map[domain.Aggregate]func(){}}
	var res *Result[tally]
	err := tx.decide(func(tx *transaction) (err error) {
		res, err = decideIn(tx, w.agg, w.meta(ref), evolveTally, w.decide(ref, events))
		return err
	})
	if err != nil || len(tx.waits) != 1 {
		t.Fatalf("decided %d parts: %v", len(tx.waits), err)
	}
	return func() (Result[tally], error) {
		err := tx.waits[0]()
		return *res, err
	}
}

func TestACommandRetriedWhileItsAggregatesPipelineRunsIsNotDecidedAgain(t *testing.T) {
	for _, tt := range []struct {
		name string
		// setup leaves the pipeline running, with r decided before it
		// or in it; the returned func ends it.
		setup func(t *testing.T, w *tallyWorld) func() (Result[tally], error)
	}{
		{"decided before the pipeline began", func(t *testing.T, w *tallyWorld) func() (Result[tally], error) {
			if _, err := w.add("r"); err != nil {
				t.Fatal(err)
			}
			return w.pause(t, "x", 1)
		}},
		{"decided in the pipeline and stored since", func(t *testing.T, w *tallyWorld) func() (Result[tally], error) {
			storedR := w.pause(t, "r", 1)
			storedX := w.pause(t, "x", 1)
			if _, err := storedR(); err != nil {
				t.Fatal(err)
			}
			return storedX
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newTallyWorld(t)
			end := tt.setup(t, w)
			if p, _ := w.h.pipelines.get(w.agg, ""); p == nil {
				t.Fatal("no pipeline runs")
			}
			// The retry waits for the pipeline and finds r stored.
			again, err := w.add("r")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := end(); err != nil {
				t.Fatal(err)
			}
			if n := w.decided("r"); n != 1 {
				t.Errorf("r decided %d times, want once", n)
			}
			if again.Sequence != 1 || again.Event.(domain.AWBNumberUsed).Reference != "r" {
				t.Errorf("the retry = %+v, want r's own event at 1", again)
			}
			if got := strings.Join(w.stored(t), ","); got != "r,x" {
				t.Errorf("stored %s, want r,x", got)
			}
		})
	}
}

func TestACommandThatWaitsForAFreshStateIsDecidedNextWhileOthersWait(t *testing.T) {
	w := newTallyWorld(t)
	// A pipeline with a long decision, still being stored when f asks.
	storedX := w.pause(t, "x", 500)
	key := w.agg.String()
	others := func() int {
		w.h.aggregates.mu.Lock()
		defer w.h.aggregates.mu.Unlock()
		return w.h.aggregates.locks[key].users - 1
	}
	// f finds nothing to do on the pipeline's state, which only a fresh
	// state settles. While f decides on the pending state, c comes.
	cDone := make(chan error, 1)
	fDecisions := 0
	decideF := func(tally) ([]domain.Event, error) {
		w.mu.Lock()
		w.decisions = append(w.decisions, "f")
		w.mu.Unlock()
		if fDecisions++; fDecisions == 1 {
			go func() { _, err := w.add("c"); cDone <- err }()
			for others() == 0 {
				time.Sleep(time.Millisecond)
			}
		}
		return nil, nil
	}
	f, err := execute(context.Background(), w.h, w.agg, w.meta("f"), evolveTally, decideF)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-cDone; err != nil {
		t.Fatal(err)
	}
	x, err := storedX()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(w.decisions, ","); got != "x,f,f,c" {
		t.Errorf("decided %s, want x,f,f,c: f on the pending state, then at once on a fresh one", got)
	}
	if f.Sequence != x.Sequence {
		t.Errorf("f settled on the state at %d, want %d, x's last", f.Sequence, x.Sequence)
	}
}

func TestABurstOfPipelinedCommandsLeavesTheCacheCurrent(t *testing.T) {
	w := newTallyWorld(t)
	const bursts, size = 5, 64
	for b := range bursts {
		var wg sync.WaitGroup
		for i := range size {
			wg.Go(func() {
				if _, err := w.add(fmt.Sprint(b, "-", i)); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if p, _ := w.h.pipelines.get(w.agg, ""); p != nil {
			t.Fatalf("burst %d: a pipeline of %d decisions is left", b, len(p.steps))
		}
		entry, _ := w.h.cache.get(w.agg)
		if want := uint64((b+1)*size + b); entry.last != want || len(entry.state.(tally)) != int(want) {
			t.Fatalf("burst %d: the cache holds %d events up to %d, want %d", b, len(entry.state.(tally)), entry.last, want)
		}
		// The next command decides once: no conflict, no fresh load.
		next := fmt.Sprint("after-", b)
		if _, err := w.add(next); err != nil {
			t.Fatal(err)
		}
		if n := w.decided(next); n != 1 {
			t.Errorf("after burst %d the next command was decided %d times, want once", b, n)
		}
	}
}

// A command retried just as its pipeline ends is not decided again on the
// ended pipeline's state, which holds its own events: whether it was
// decided in the pipeline is asked of the pipeline that was looked at.
// (A race: without that, some of the rounds decide x twice.)
func TestACommandRetriedAsItsPipelineEndsIsNotDecidedAgain(t *testing.T) {
	w := newTallyWorld(t)
	for i := range 300 {
		w.agg = domain.Aggregate{Type: "tally", ID: fmt.Sprint("r", i)}
		w.mu.Lock()
		w.decisions = nil
		w.mu.Unlock()
		storedX := w.pause(t, "x", 1)
		pipe, _ := w.h.pipelines.get(w.agg, "")
		<-pipe.tail.Done()
		done := make(chan error, 1)
		go func() { _, err := storedX(); done <- err }()
		again, err := w.add("x")
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		entry, _ := w.h.cache.get(w.agg)
		if n := w.decided("x"); n > 1 || len(entry.state.(tally)) != 1 {
			t.Fatalf("round %d: x decided %d times; the retry %+v; the cache %v at %d; the store %s", i, n, again, entry.state, entry.last, strings.Join(w.stored(t), ","))
		}
	}
}
