package commands

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
)

// Transactions of one to three parts (in one order of aggregates), single
// commands, refusals and callers that give up, at random on two replicas
// (two handlers, two committers, one server): nothing hangs, every
// transaction is stored whole or not at all, and nothing twice.
func TestTransactionsAndCommandsOfTwoReplicasAtRandomAreStoredWholeOnce(t *testing.T) {
	dir := t.TempDir()
	s1, err := eventstore.Open(context.Background(), eventstore.Options{DataDir: dir, Listen: "127.0.0.1:-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()
	s2, err := eventstore.Open(context.Background(), eventstore.Options{URL: s1.ClientURL(), NkeyFile: filepath.Join(dir, eventstore.ListenSeedFile)})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	w := &tallyWorld{h: New(s1, 4, builtinReference())}
	handlers := []*Handler{w.h, New(s2, 4, builtinReference())}
	shared := []domain.Aggregate{{Type: "tally", ID: "s1"}, {Type: "tally", ID: "s2"}, {Type: "tally", ID: "s3"}}
	refused := domain.Refusal(domain.ReasonNoCapacity, "no")

	type txn struct {
		parts []string // part refs
		aggs  []domain.Aggregate
		err   error
	}
	var mu sync.Mutex
	var txns []*txn
	const workers, ops = 24, 40
	var wg sync.WaitGroup
	done := make(chan struct{})
	for wk := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(wk), 7))
			for op := range ops {
				h := handlers[r.IntN(2)]
				own := domain.Aggregate{Type: "tally", ID: fmt.Sprint("own", wk, "-", r.IntN(3))}
				ref := fmt.Sprint("w", wk, "o", op)
				// Aggregates in one order: shared ones ascending, then its own.
				var aggs []domain.Aggregate
				switch r.IntN(4) {
				case 0:
					aggs = []domain.Aggregate{shared[r.IntN(3)]}
				case 1:
					aggs = []domain.Aggregate{shared[r.IntN(3)], own}
				default:
					i := r.IntN(2)
					aggs = []domain.Aggregate{shared[i], shared[i+1+r.IntN(2-i)], own}
				}
				ctx, cancel := context.WithCancel(context.Background())
				if r.IntN(6) == 0 {
					time.AfterFunc(time.Duration(r.IntN(3000))*time.Microsecond, cancel)
				}
				refuse := r.IntN(8) == 0
				x := &txn{aggs: aggs}
				for _, a := range aggs {
					x.parts = append(x.parts, ref+"@"+a.ID)
				}
				events := 1 + r.IntN(2)
				if len(aggs) == 1 && r.IntN(2) == 0 && !refuse {
					_, x.err = execute(ctx, h, aggs[0], w.meta(x.parts[0]), evolveTally, w.decide(x.parts[0], events))
				} else {
					x.err = transact(ctx, h, func(t *transaction) error {
						for i, a := range aggs {
							p := x.parts[i]
							if refuse && i == len(aggs)-1 {
								_, err := decideIn(t, a, w.meta(p), evolveTally, func(tally) ([]domain.Event, error) { return nil, refused })
								return err
							}
							if _, err := decideIn(t, a, w.meta(p), evolveTally, w.decide(p, events)); err != nil {
								return err
							}
						}
						return nil
					})
				}
				cancel()
				mu.Lock()
				txns = append(txns, x)
				mu.Unlock()
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the transactions still run after 2 minutes")
	}
	// What is stored: each part's reference, once for every stored part.
	count := map[string]int{}
	aggsSeen := map[domain.Aggregate]bool{}
	for _, x := range txns {
		for _, a := range x.aggs {
			aggsSeen[a] = true
		}
	}
	for a := range aggsSeen {
		recs, err := s1.Load(context.Background(), a)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			e, err := domain.DecodeEvent(r.Type, r.Data)
			if err != nil {
				t.Fatal(err)
			}
			if ref := e.(domain.AWBNumberUsed).Reference; !strings.Contains(ref, "+") { // a part's first event
				count[ref]++
			}
		}
	}
	var ok, failed, refusedN, cancelled int
	for _, x := range txns {
		stored := 0
		for _, p := range x.parts {
			if count[p] > 1 {
				t.Errorf("%s stored %d times", p, count[p])
			}
			stored += min(count[p], 1)
		}
		if stored != 0 && stored != len(x.parts) {
			t.Errorf("transaction %v (err %v): %d of %d parts stored", x.parts, x.err, stored, len(x.parts))
		}
		switch {
		case x.err == nil:
			ok++
			if stored != len(x.parts) {
				t.Errorf("transaction %v succeeded but %d of %d parts stored", x.parts, stored, len(x.parts))
			}
		case errors.Is(x.err, refused):
			refusedN++
			if stored != 0 {
				t.Errorf("refused transaction %v stored %d parts", x.parts, stored)
			}
		case errors.Is(x.err, context.Canceled):
			cancelled++
		case errors.Is(x.err, domain.ErrAggregateChanged):
			failed++ // conflicts past the retries: contention, not a fault
		default:
			t.Errorf("transaction %v: %v (stored %d)", x.parts, x.err, stored)
		}
	}
	t.Logf("%d ok, %d refused, %d cancelled, %d given up after conflicts", ok, refusedN, cancelled, failed)
}
