package commands

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
)

// brokenRoute is pricing data that cannot answer for flights from one
// airport (a bug, say) until it is fixed; it knows no flights or rates.
type brokenRoute struct {
	origin string
	fixed  atomic.Bool
}

func (b *brokenRoute) FlightsBetween(origin, _ string) []domain.Flight {
	if origin == b.origin && !b.fixed.Load() {
		panic("the flight index of " + origin + " is broken")
	}
	return nil
}

func (b *brokenRoute) RateCards([]string) []domain.RateCard { return nil }

func (b *brokenRoute) Airline(string, string) (domain.Organization, bool) {
	return domain.Organization{}, false
}

// caughtUp is read models that have applied everything.
type caughtUp struct{}

func (caughtUp) WaitFor(context.Context, uint64) error { return nil }

func TestThePricingReactorParksAnRFQItFailsOnPricesTheNextAndPricesItWhenRetriedAfterTheFix(t *testing.T) {
	store, err := eventstore.Open(context.Background(), eventstore.Options{DataDir: t.TempDir(), ConsumerAttempts: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	h := New(store, 4, builtinReference())
	data := &brokenRoute{origin: "FRA"}
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		NewReactors(h, store, data, caughtUp{}, slog.New(slog.DiscardHandler)).Run(ctx)
	}()
	defer func() { stop(); <-ran }()

	fwd := domain.Principal{Subject: "client:f", OrganizationID: "f", Role: domain.RoleForwarder}
	rfq := func(origin string) string {
		weight := 100.0
		res, err := h.RequestQuote(ctx, NewMeta(fwd, "", ""), domain.RequestQuote{Origin: origin, Destination: "JFK", Pieces: new(1), GrossWeightKg: &weight})
		if err != nil {
			t.Fatal(err)
		}
		return res.State.ID
	}
	// answered waits until the reactor answered the RFQ (with no
	// flights, by rejecting it).
	answered := func(id string) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
			q, _, _, err := load(ctx, h, quoteAggregate(id), domain.EvolveQuote, "", loadFresh)
			if err != nil {
				t.Fatal(err)
			}
			if q.Status != domain.QuoteStatusPending {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("RFQ %s still pending after a minute", id)
			}
		}
	}
	fromFRA, fromMUC := rfq("FRA"), rfq("MUC")
	answered(fromMUC)

	var parked []eventstore.Parked
	for deadline := time.Now().Add(time.Minute); len(parked) == 0; time.Sleep(10 * time.Millisecond) {
		if parked, err = store.ParkedEvents(ctx); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("nothing parked after a minute")
		}
	}
	if p := parked[0]; len(parked) != 1 || p.Consumer != "pricing" || p.AggregateID != fromFRA || p.Type != "QuoteRequested" ||
		p.Attempts != 2 || p.LastError != "panic: the flight index of FRA is broken" {
		t.Fatalf("parked %+v", parked)
	}

	data.fixed.Store(true)
	if _, err := store.RetryParked(ctx, "pricing", parked[0].Sequence); err != nil {
		t.Fatal(err)
	}
	answered(fromFRA)
}
