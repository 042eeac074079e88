package commands

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
)

// Transactions are tried on tallies (see pipeline_test.go): each part adds
// one event to its tally.

// addTo adds ref to the tally agg as a part of t.
func (w *tallyWorld) addTo(t *transaction, agg domain.Aggregate, ref string) error {
	_, err := decideIn(t, agg, w.meta(ref), evolveTally, w.decide(ref, 1))
	return err
}

// addToBoth adds ref to the tallies a and b in one transaction.
func (w *tallyWorld) addToBoth(a, b domain.Aggregate, refA, refB string) error {
	return transact(context.Background(), w.h, func(t *transaction) error {
		if err := w.addTo(t, a, refA); err != nil {
			return err
		}
		return w.addTo(t, b, refB)
	})
}

// tallyOf returns the references stored on the tally agg, in order.
func (w *tallyWorld) tallyOf(t *testing.T, agg domain.Aggregate) []string {
	t.Helper()
	was := w.agg
	defer func() { w.agg = was }()
	w.agg = agg
	return w.stored(t)
}

func TestATransactionStoresAllItsPartsOrNone(t *testing.T) {
	w := newTallyWorld(t)
	ctx := context.Background()
	a, b := domain.Aggregate{Type: "tally", ID: "a"}, domain.Aggregate{Type: "tally", ID: "b"}
	refused := domain.Refusal(domain.ReasonNoCapacity, "no room on b")
	err := transact(ctx, w.h, func(t *transaction) error {
		if err := w.addTo(t, a, "a1"); err != nil {
			return err
		}
		_, err := decideIn(t, b, w.meta("b1"), evolveTally, func(tally) ([]domain.Event, error) { return nil, refused })
		return err
	})
	if !errors.Is(err, refused) {
		t.Fatalf("transaction = %v, want the refusal", err)
	}
	if got := w.tallyOf(t, a); len(got) != 0 {
		t.Errorf("a part decided before a refusal was stored: %v", got)
	}
	if err := w.addToBoth(a, b, "a2", "b2"); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(w.tallyOf(t, a), w.tallyOf(t, b)); got != "[a2] [b2]" {
		t.Errorf("stored %s, want [a2] [b2]", got)
	}
	// The locks were let go, refused or not: a command goes through.
	if _, err := execute(ctx, w.h, a, w.meta("a3"), evolveTally, w.decide("a3", 1)); err != nil {
		t.Errorf("a command after the transactions: %v", err)
	}
}

func TestATransactionThatPanicsLetsGoOfItsLocks(t *testing.T) {
	w := newTallyWorld(t)
	a, b := domain.Aggregate{Type: "tally", ID: "a"}, domain.Aggregate{Type: "tally", ID: "b"}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the transaction's panic did not reach its caller")
			}
		}()
		transact(context.Background(), w.h, func(t *transaction) error {
			if err := w.addTo(t, a, "a1"); err != nil {
				return err
			}
			_, err := decideIn(t, b, w.meta("b1"), evolveTally, func(tally) ([]domain.Event, error) { panic("a bug in a decide") })
			return err
		})
	}()
	// Both locks were let go: a transaction on both goes through (a lock
	// still held would keep it waiting), and nothing of the one that
	// panicked was stored.
	done := make(chan error, 1)
	go func() { done <- w.addToBoth(a, b, "a2", "b2") }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a transaction after the one that panicked still waits for a lock")
	}
	if got := fmt.Sprint(w.tallyOf(t, a), w.tallyOf(t, b)); got != "[a2] [b2]" {
		t.Errorf("stored %s, want [a2] [b2]", got)
	}
}

func TestATransactionWithAStalePartIsDecidedAgainWhole(t *testing.T) {
	w := newTallyWorld(t)
	ctx := context.Background()
	a, b := domain.Aggregate{Type: "tally", ID: "a"}, domain.Aggregate{Type: "tally", ID: "b"}
	if _, err := execute(ctx, w.h, b, w.meta("b0"), evolveTally, w.decide("b0", 1)); err != nil {
		t.Fatal(err)
	}
	// Another replica moves b on: this handler's cached b is stale.
	other := New(w.h.store, 4, builtinReference())
	if _, err := execute(ctx, other, b, w.meta("b1"), evolveTally, w.decide("b1", 1)); err != nil {
		t.Fatal(err)
	}
	if err := w.addToBoth(a, b, "a1", "b2"); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(w.tallyOf(t, a), w.tallyOf(t, b)); got != "[a1] [b0 b1 b2]" {
		t.Errorf("stored %s, want [a1] [b0 b1 b2]", got)
	}
	if w.decided("a1") != 2 || w.decided("b2") != 2 {
		t.Errorf("a1 decided %d times, b2 %d: want both twice, the second time on fresh states", w.decided("a1"), w.decided("b2"))
	}
}

func TestConcurrentTransactionsOnABusyAggregateAreEachStoredWhole(t *testing.T) {
	w := newTallyWorld(t)
	// Each transaction adds to the shared tally (a flight everyone books)
	// and to one of its own (its booking), as confirmations do.
	shared := domain.Aggregate{Type: "tally", ID: "shared"}
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := domain.Aggregate{Type: "tally", ID: fmt.Sprint("own", i)}
			if err := w.addToBoth(shared, own, fmt.Sprint("s", i), fmt.Sprint("o", i)); err != nil {
				t.Errorf("transaction %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	got := w.tallyOf(t, shared)
	if len(got) != n {
		t.Fatalf("the shared tally has %d events, want %d: %v", len(got), n, got)
	}
	slices.Sort(got)
	if len(slices.Compact(got)) != n {
		t.Errorf("the shared tally repeats an event: %v", got)
	}
	for i := range n {
		if own := w.tallyOf(t, domain.Aggregate{Type: "tally", ID: fmt.Sprint("own", i)}); fmt.Sprint(own) != fmt.Sprintf("[o%d]", i) {
			t.Errorf("own tally %d = %v", i, own)
		}
	}
}

func TestATransactionDecidingOneAggregateTwiceIsAnError(t *testing.T) {
	w := newTallyWorld(t)
	a := domain.Aggregate{Type: "tally", ID: "a"}
	err := w.addToBoth(a, a, "a1", "a2")
	if err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("transaction = %v, want an error naming the aggregate decided twice", err)
	}
	if got := w.tallyOf(t, a); len(got) != 0 {
		t.Errorf("stored %v, want nothing", got)
	}
}
