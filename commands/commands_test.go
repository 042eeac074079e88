package commands

import (
	"context"
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
