package commands

import (
	"context"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/internal/storetest"
)

// A command run again returns the event it recorded the first time, not
// the aggregate's latest.
func TestRepeatedCommandReturnsItsOwnEvent(t *testing.T) {
	store := storetest.Open(t)
	h := New(store, 4, builtinReference())
	fwd := domain.Principal{Subject: "client:f", OrganizationID: "f", Role: domain.RoleForwarder}
	dgd := func(un, class string) domain.SubmitDGD {
		q := 5.0
		pi := map[string]string{"UN3480": "965", "UN3090": "968"}[un] // each to its own packing instruction
		return domain.SubmitDGD{DGDSubmitted: domain.DGDSubmitted{AWBNumber: "020-00000011", UNNumber: un, ProperShippingName: "x",
			Class: class, PackingInstructions: pi, ShipperDeclaration: "declared"}, Quantity: &q, NetWeightKg: &q}
	}
	ctx := context.Background()
	first, err := h.SubmitDGD(ctx, NewMeta(fwd, "dgd-a", ""), dgd("UN3480", "9"), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.SubmitDGD(ctx, NewMeta(fwd, "dgd-b", ""), dgd("UN3090", "9"), ""); err != nil {
		t.Fatal(err)
	}
	again, err := h.SubmitDGD(ctx, NewMeta(fwd, "dgd-a", ""), dgd("UN3480", "9"), "")
	if err != nil {
		t.Fatal(err)
	}
	a, b := first.Event.(domain.DGDSubmitted), again.Event.(domain.DGDSubmitted)
	if a.DGDID != b.DGDID || b.UNNumber != "UN3480" || again.Sequence != first.Sequence || len(again.State.DGDs) != 2 {
		t.Errorf("repeated command = %+v (seq %d), first %+v (seq %d)", b, again.Sequence, a, first.Sequence)
	}
}

// loadCounter is the event store, counting the loads commands ask of it.
type loadCounter struct {
	*eventstore.Store
	loads atomic.Int64
}

func (c *loadCounter) LoadAfter(ctx context.Context, agg domain.Aggregate, after uint64) ([]domain.Record, error) {
	c.loads.Add(1)
	return c.Store.LoadAfter(ctx, agg, after)
}

// A creation decides on the empty state without loading its new
// aggregate; one retried where the first try is unknown (another replica,
// a restart) conflicts, loads, and answers the first try's result.
func TestACreationLoadsNothingUnlessItRanBefore(t *testing.T) {
	store := storetest.Open(t)
	fwd := domain.Principal{Subject: "client:f", OrganizationID: "f", Role: domain.RoleForwarder}
	weight := 100.0
	rfq := domain.RequestQuote{Origin: "FRA", Destination: "JFK", Pieces: new(1), GrossWeightKg: &weight}
	ctx := context.Background()

	first := &loadCounter{Store: store}
	created, err := New(first, 4, builtinReference()).RequestQuote(ctx, NewMeta(fwd, "rfq-1", ""), rfq)
	if err != nil {
		t.Fatal(err)
	}
	if n := first.loads.Load(); n != 0 {
		t.Errorf("a creation loaded %d times, want 0", n)
	}

	other := &loadCounter{Store: store}
	again, err := New(other, 4, builtinReference()).RequestQuote(ctx, NewMeta(fwd, "rfq-1", ""), rfq)
	if err != nil {
		t.Fatal(err)
	}
	if again.State.ID != created.State.ID || again.Sequence != created.Sequence || other.loads.Load() == 0 {
		t.Errorf("the retry elsewhere = %+v after %d loads, want the first try's %+v", again, other.loads.Load(), created)
	}
	if recs, err := store.Load(ctx, quoteAggregate(created.State.ID)); err != nil || len(recs) != 1 {
		t.Errorf("%d events after the retry (%v), want 1", len(recs), err)
	}
}

// lockWatch is the event store, noting for each event got whether the
// lock of its aggregate was held (or waited for) meanwhile.
type lockWatch struct {
	*eventstore.Store
	h      *Handler
	locked []bool
}

func (l *lockWatch) Get(ctx context.Context, agg domain.Aggregate, seq uint64) (domain.Record, error) {
	l.h.aggregates.mu.Lock()
	_, held := l.h.aggregates.locks[agg.String()] // an entry lives while anybody holds or wants the lock
	l.h.aggregates.mu.Unlock()
	l.locked = append(l.locked, held)
	return l.Store.Get(ctx, agg, seq)
}

// A retried command fetches the event it stored before once its
// aggregate's lock is let go, so other commands on the aggregate do not
// wait for that round trip, and still answers its whole first result.
func TestARetriedCommandFetchesItsOwnEventAfterLettingGoOfItsAggregatesLock(t *testing.T) {
	for _, tt := range []struct {
		name  string
		retry func(w *tallyWorld) (Result[tally], error)
	}{
		{"alone", func(w *tallyWorld) (Result[tally], error) { return w.add("r") }},
		{"beside a new part of a transaction", func(w *tallyWorld) (Result[tally], error) { return w.addBesideANewPart("r", "y") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store := &lockWatch{Store: storetest.Open(t)}
			w := &tallyWorld{h: New(store, 4, builtinReference()), agg: domain.Aggregate{Type: "tally", ID: "t1"}}
			store.h = w.h
			for _, ref := range []string{"r", "x"} {
				if _, err := w.add(ref); err != nil {
					t.Fatal(err)
				}
			}
			again, err := tt.retry(w)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(store.locked); got != "[false]" {
				t.Errorf("the aggregate's lock was held during each get of an event: %s, want one get, without it", got)
			}
			want := Result[tally]{State: tally{"r", "x"}, Event: domain.AWBNumberUsed{Reference: "r"}, Sequence: 1, Version: 2}
			if !reflect.DeepEqual(again, want) {
				t.Errorf("the retry = %+v, want %+v: r's own event", again, want)
			}
		})
	}
}

// addBesideANewPart adds ref to the tally and, in the same transaction,
// other to another tally.
func (w *tallyWorld) addBesideANewPart(ref, other string) (Result[tally], error) {
	var res *Result[tally]
	err := transact(context.Background(), w.h, func(t *transaction) (err error) {
		if res, err = decideIn(t, w.agg, w.meta(ref), evolveTally, w.decide(ref, 1)); err != nil {
			return err
		}
		return w.addTo(t, domain.Aggregate{Type: "tally", ID: "other"}, other)
	})
	if res == nil {
		return Result[tally]{}, err
	}
	return *res, err
}

// unavailableOnce is the event store, whose first get of an event fails
// as a store that does not answer in time fails.
type unavailableOnce struct {
	*eventstore.Store
	gets atomic.Int64
}

func (u *unavailableOnce) Get(ctx context.Context, agg domain.Aggregate, seq uint64) (domain.Record, error) {
	if u.gets.Add(1) == 1 {
		return domain.Record{}, fmt.Errorf("%w: no leader", domain.ErrStoreUnavailable)
	}
	return u.Store.Get(ctx, agg, seq)
}

// A retried command's event is asked for once its transaction is stored,
// here with a new part of another command: a store that does not answer
// that ask at once is waited out, and the transaction answers its whole
// result, not a failure for what it stored.
func TestATransactionWaitsOutAStoreThatDoesNotAnswerAtOnceForAnEventOfAPartThatRanBefore(t *testing.T) {
	store := &unavailableOnce{Store: storetest.Open(t)}
	w := &tallyWorld{h: New(store, 4, builtinReference()), agg: domain.Aggregate{Type: "tally", ID: "t1"}}
	for _, ref := range []string{"r", "x"} {
		if _, err := w.add(ref); err != nil {
			t.Fatal(err)
		}
	}
	again, err := w.addBesideANewPart("r", "y")
	want := Result[tally]{State: tally{"r", "x"}, Event: domain.AWBNumberUsed{Reference: "r"}, Sequence: 1, Version: 2}
	if err != nil || !reflect.DeepEqual(again, want) {
		t.Errorf("the retry = %+v, %v; want %+v: r's own event", again, err, want)
	}
	if gets := store.gets.Load(); gets != 2 {
		t.Errorf("%d gets of r's event, want 2: one unanswered, one answered", gets)
	}
	if recs, err := store.Load(context.Background(), domain.Aggregate{Type: "tally", ID: "other"}); err != nil || len(recs) != 1 {
		t.Errorf("the new part: %d events (%v), want 1", len(recs), err)
	}
}

// A command retried on a replica whose cached state is stale, when its
// first try (on another replica) stored exactly the same events, still
// the aggregate's last: the retry was decided on the stale state, so it is
// not told stored (its events are not where it expected them), and the
// replica answers, and caches, the state as stored.
func TestACommandRetriedOnAReplicaWithAStaleStateAnswersAndCachesTheStateAsStored(t *testing.T) {
	store := storetest.Open(t)
	agg := domain.Aggregate{Type: "tally", ID: "t1"}
	w1 := &tallyWorld{h: New(store, 4, builtinReference()), agg: agg}
	w2 := &tallyWorld{h: New(store, 4, builtinReference()), agg: agg}
	if _, err := w1.add("a"); err != nil { // replica 1 caches [a]
		t.Fatal(err)
	}
	if _, err := w2.add("b"); err != nil { // replica 2 moves it on
		t.Fatal(err)
	}
	if _, err := w2.add("x"); err != nil {
		t.Fatal(err)
	}
	// x retried on replica 1 (same command id).
	again, err := w1.add("x")
	if err != nil {
		t.Fatal(err)
	}
	// The next command on replica 1 decides on the state as stored.
	var seen tally
	if _, err := execute(context.Background(), w1.h, agg, w1.meta("y"), evolveTally, func(s tally) ([]domain.Event, error) {
		seen = s
		return []domain.Event{domain.AWBNumberUsed{Reference: "y"}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	stored := w1.stored(t)
	if fmt.Sprint(again.State) != "[a b x]" {
		t.Errorf("the retry answered state %v, never stored (store: %v)", again.State, stored)
	}
	if fmt.Sprint(seen) != "[a b x]" {
		t.Errorf("y decided on state %v, but the store held [a b x] when y was stored (store now: %v)", seen, stored)
	}
}
