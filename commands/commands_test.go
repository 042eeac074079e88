package commands

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
)

// openTestStore opens an event store on an embedded server of the test's
// own, closed when the test ends.
func openTestStore(t *testing.T) *eventstore.Store {
	t.Helper()
	store, err := eventstore.Open(context.Background(), eventstore.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	return store
}

// A command run again returns the event it recorded the first time, not
// the aggregate's latest.
func TestRepeatedCommandReturnsItsOwnEvent(t *testing.T) {
	store := openTestStore(t)
	h := New(store, 4, builtinReference())
	fwd := domain.Principal{Subject: "client:f", OrganizationID: "f", Role: domain.RoleForwarder}
	dgd := func(un, class string) domain.SubmitDGD {
		q := 5.0
		return domain.SubmitDGD{DGDSubmitted: domain.DGDSubmitted{AWBNumber: "020-00000011", UNNumber: un, ProperShippingName: "x",
			Class: class, PackingInstructions: "965", ShipperDeclaration: "declared"}, Quantity: &q, NetWeightKg: &q}
	}
	ctx := context.Background()
	first, err := h.SubmitDGD(ctx, NewMeta(fwd, "dgd-a", ""), dgd("UN3480", "9"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.SubmitDGD(ctx, NewMeta(fwd, "dgd-b", ""), dgd("UN3090", "9")); err != nil {
		t.Fatal(err)
	}
	again, err := h.SubmitDGD(ctx, NewMeta(fwd, "dgd-a", ""), dgd("UN3480", "9"))
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
	store := openTestStore(t)
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
