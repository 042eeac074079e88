package commands

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
)

// submitLog is the event store, noting the aggregates of each Submit.
type submitLog struct {
	*eventstore.Store
	mu    sync.Mutex
	calls [][]string
}

func (s *submitLog) Submit(ctx context.Context, parts ...domain.Submission) ([]domain.PendingAppend, error) {
	var aggs []string
	for _, p := range parts {
		aggs = append(aggs, p.Aggregate.Type)
	}
	s.mu.Lock()
	s.calls = append(s.calls, aggs)
	s.mu.Unlock()
	return s.Store.Submit(ctx, parts...)
}

// submitted returns the aggregate types of each Submit so far, and forgets them.
func (s *submitLog) submitted() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := fmt.Sprint(s.calls)
	s.calls = nil
	return out
}

// noBookings is a bookings read model without any booking.
type noBookings struct{}

func (noBookings) ByAWB(string) (domain.Booking, bool) { return domain.Booking{}, false }

func TestAMAWBFromStockUsesItsNumberInTheSameTransaction(t *testing.T) {
	stocked, fwd := stockedWorld(t, t.TempDir(), 10)
	log := &submitLog{Store: stocked.store.(*eventstore.Store)}
	h := New(log, 4, builtinReference())
	ctx := context.Background()
	ledgerAgg := ledgerAggregate("f", "020")
	ledger, _, _, err := load(ctx, h, ledgerAgg, domain.EvolveStockLedger, "", loadFresh)
	if err != nil || len(ledger.Ranges) != 1 {
		t.Fatalf("ledger = %+v, %v", ledger, err)
	}
	c := domain.CreateMAWB{AWBNumber: domain.AWBNumber("020", ledger.Ranges[0].Range.First), Origin: "FRA", Destination: "JFK",
		Pieces: new(2), WeightKg: new(150.0), Shipper: domain.FullParty{Name: "Shipper"}, Consignee: domain.FullParty{Name: "Consignee"}}
	m := NewMeta(fwd, "mawb-1", "")
	first, err := h.CreateMAWB(ctx, m, c, noBookings{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := first.Event.(domain.MAWBCreated); !ok || first.Sequence == 0 || first.Version != first.Sequence {
		t.Fatalf("result = %+v, want the MAWB's event at its sequence", first)
	}
	if got := log.submitted(); got != "[[awbledger waybill]]" {
		t.Errorf("submitted %s, want the number's use and the MAWB at once", got)
	}
	recs, err := h.store.Load(ctx, ledgerAgg)
	if err != nil {
		t.Fatal(err)
	}
	used := recs[len(recs)-1]
	if used.Type != (domain.AWBNumberUsed{}).EventType() {
		t.Errorf("the ledger's last event is %s, want the number's use", used.Type)
	}
	// A retry repeats nothing and answers as the first time.
	again, err := h.CreateMAWB(ctx, m, c, noBookings{})
	if err != nil || again.Sequence != first.Sequence {
		t.Fatalf("retry = %+v, %v; want the first result", again, err)
	}
	if recs, err := h.store.Load(ctx, ledgerAgg); err != nil || recs[len(recs)-1].Sequence != used.Sequence {
		t.Errorf("after the retry the ledger's last event is at %d (%v), want %d still", recs[len(recs)-1].Sequence, err, used.Sequence)
	}
}
