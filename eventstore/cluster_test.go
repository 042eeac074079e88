package eventstore

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
	"github.com/cargostream/cargostream/eventstore/natstest"
)

// TestAClusterNodeLostUnderWriteLoadLosesNoAcknowledgedDecision writes
// two-event decisions to a stream of three replicas from 8 writers, stops
// the stream's leader part way, and checks that writes go on once a new
// leader is elected and that every acknowledged decision is there whole.
func TestAClusterNodeLostUnderWriteLoadLosesNoAcknowledgedDecision(t *testing.T) {
	c, s := openOnCluster(t)
	ctx := context.Background()

	var mu sync.Mutex
	acked := map[string]bool{}
	var failed int
	write := func(name string) {
		_, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: name}, 0, decisionOf(name, 2))
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			acked[name] = true
		case errors.Is(err, domain.ErrStoreUnavailable), errors.Is(err, domain.ErrAggregateChanged):
			failed++ // during the failover: the caller retries
		default:
			t.Errorf("%s: %v", name, err)
		}
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				write(fmt.Sprintf("w%d-%d", w, i))
			}
		}()
	}
	waitFor := func(n int, what string) {
		deadline := time.Now().Add(30 * time.Second)
		for count() < n {
			if time.Now().After(deadline) {
				close(stop)
				wg.Wait()
				t.Fatalf("%s: %d acknowledged decisions after 30 s, want %d", what, count(), n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor(200, "before the node is lost")
	leader := s.stream.CachedInfo().Cluster.Leader
	info, err := s.stream.Info(ctx)
	if err == nil {
		leader = info.Cluster.Leader
	}
	for _, n := range c.Nodes {
		if n.Name() == leader {
			n.Shutdown()
		}
	}
	lost := time.Now()
	before := count()
	waitFor(before+200, "after the leader "+leader+" was lost")
	t.Logf("leader %s lost: 200 more decisions acknowledged %s later; %d writes failed meanwhile and would be retried",
		leader, time.Since(lost).Round(time.Millisecond), failed)
	close(stop)
	wg.Wait()

	for name := range acked {
		recs, err := s.Load(ctx, domain.Aggregate{Type: "quote", ID: name})
		if err != nil || len(recs) != 2 {
			t.Errorf("acknowledged %s has %d of 2 events (%v)", name, len(recs), err)
		}
	}
}

// TestJobsDueLaterOnAClusterAreHandedOutOnceDue puts jobs due later
// together, in atomic batches, on a queue of three replicas, and steps
// the queue stream's leader down again and again while they come due: the
// copies the leader makes when they are due carry their batch's headers,
// and are stored all the same, once each (the leader change from a review).
func TestJobsDueLaterOnAClusterAreHandedOutOnceDue(t *testing.T) {
	_, s := openOnCluster(t)
	ctx := context.Background()
	q := openQueue(t, s, "later")
	handouts := work(t, q)
	start := time.Now()
	var jobs []domain.Job
	for i := range 200 {
		jobs = append(jobs, domain.Job{ID: fmt.Sprint("later/", i), Due: start.Add(2*time.Second + time.Duration(i)*20*time.Millisecond)})
	}
	for batch := range slices.Chunk(jobs, 50) {
		if err := q.Put(ctx, batch...); err != nil {
			t.Fatal(err)
		}
	}
	stop, stepped := make(chan struct{}), make(chan int)
	go func() {
		n := 0
		defer func() { stepped <- n }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(700 * time.Millisecond):
				m, err := s.nc.Request("$JS.API.STREAM.LEADER.STEPDOWN."+q.stream, nil, 2*time.Second)
				if err == nil && strings.Contains(string(m.Data), `"success":true`) {
					n++
				}
			}
		}
	}()
	due := map[string]time.Time{}
	for _, j := range jobs {
		due[j.ID] = j.Due
	}
	got := map[string]bool{}
	for range jobs {
		h := next(t, handouts)
		if h.at.Before(due[h.id]) || h.attempt != 1 || got[h.id] {
			t.Errorf("job %s handed out %s before due, as attempt %d (again: %v); want once, when due", h.id, due[h.id].Sub(h.at), h.attempt, got[h.id])
		}
		got[h.id] = true
	}
	close(stop)
	if n := <-stepped; n == 0 {
		t.Error("the stream's leader never changed")
	}
}

// openOnCluster starts a cluster of three servers for the test (skipped
// with -short) and opens a store of three replicas on it.
func openOnCluster(t *testing.T) (*natstest.Cluster, *Store) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	c := natstest.StartCluster(t)
	return c, openForTest(t, Options{URL: c.URL(), Replicas: 3})
}
