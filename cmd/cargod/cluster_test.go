package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cargostream/cargostream/eventstore/natstest"
)

// replica is one cargod run() against a NATS cluster, started without
// waiting, so that two can start together.
type replica struct {
	stdout, stderr *syncBuffer
	done           chan error
	stop           context.CancelFunc
}

func startReplica(dataDir string, env map[string]string) *replica {
	vars := testEnv(dataDir, env)
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan error, 1), stop: cancel}
	go func() { r.done <- run(ctx, nil, func(k string) string { return vars[k] }, r.stdout, r.stderr) }()
	return r
}

// base waits for the replica to listen and returns its URL.
func (r *replica) base(t *testing.T) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if m := listening.FindStringSubmatch(r.stdout.String()); m != nil {
			return m[1]
		}
		select {
		case err := <-r.done:
			t.Fatalf("a replica stopped at start: %v\n%s", err, r.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("a replica did not start within 60 s\n%s", r.stderr.String())
	return ""
}

// TestTwoReplicasOnAClusterSurviveTheLossOfTheStreamLeader starts two
// cargod replicas together on a fresh three-node cluster (R3 streams), so
// that both provision at once; writes quotes through both while the
// stream's leader node is stopped; and checks that both replicas serve
// every quote that was answered 201.
func TestTwoReplicasOnAClusterSurviveTheLossOfTheStreamLeader(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	c := natstest.StartCluster(t)
	env := map[string]string{"CARGO_NATS_URL": c.URL(), "CARGO_NATS_REPLICAS": "3", "CARGO_DEMO": "true",
		"CARGO_SIGNING_KEY": "", "CARGO_LOG_LEVEL": "error"}
	replicas := []*replica{startReplica(t.TempDir(), env), startReplica(t.TempDir(), env)}
	var servers []*testServer
	for _, r := range replicas {
		defer func() { r.stop(); <-r.done }()
		servers = append(servers, &testServer{base: r.base(t), doc: loadDoc(t)})
	}
	a, b := servers[0], servers[1]
	tokA, tokB := a.demoToken(t, "demo-forwarder"), b.demoToken(t, "demo-forwarder")

	// Written through one, read through the other.
	w := a.do(t, request{method: "POST", path: "/api/quotes", token: tokA, body: rfq()})
	var q quote
	w.json(t, &q)
	if r := b.do(t, request{method: "GET", path: "/api/quotes/" + q.ID, token: tokB,
		header: map[string]string{"Cargo-Sequence": w.header.Get("Cargo-Sequence")}}); w.status != 201 || r.status != 200 {
		t.Fatalf("quote written through A = %d, read through B = %d", w.status, r.status)
	}

	// Eight writers, four on each replica, while the leader goes away.
	body, _ := json.Marshal(rfq())
	var mu sync.Mutex
	acked := map[string]bool{}
	statuses := map[int]int{}
	var lastSeq uint64
	stopWriting := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 8 {
		s, tok := servers[i%2], []string{tokA, tokB}[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Timeout: 30 * time.Second}
			for {
				select {
				case <-stopWriting:
					return
				default:
				}
				req, _ := http.NewRequest("POST", s.base+"/api/quotes", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+tok)
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					t.Errorf("a write hung or failed: %v", err)
					return
				}
				var q quote
				json.NewDecoder(resp.Body).Decode(&q)
				resp.Body.Close()
				mu.Lock()
				statuses[resp.StatusCode]++
				if resp.StatusCode == http.StatusCreated {
					acked[q.ID] = true
					seq, _ := strconv.ParseUint(resp.Header.Get("Cargo-Sequence"), 10, 64)
					lastSeq = max(lastSeq, seq)
				}
				mu.Unlock()
			}
		}()
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	waitFor := func(n int, what string) {
		deadline := time.Now().Add(60 * time.Second)
		for count() < n && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if count() < n {
			close(stopWriting)
			wg.Wait()
			t.Fatalf("%s: %d quotes acknowledged, want %d; statuses %v\n%s\n%s", what, count(), n, statuses, replicas[0].stderr, replicas[1].stderr)
		}
	}
	waitFor(100, "before the node is lost")
	leader := streamLeader(t, c)
	for _, n := range c.Nodes {
		if n.Name() == leader {
			n.Shutdown()
		}
	}
	lost, before := time.Now(), count()
	waitFor(before+100, "after the leader "+leader+" was lost")
	recovered := time.Since(lost)
	close(stopWriting)
	wg.Wait()
	t.Logf("leader %s lost: 100 more quotes acknowledged %s later; answers by status: %v", leader, recovered.Round(time.Millisecond), statuses)
	for status := range statuses {
		if status != http.StatusCreated && status != http.StatusServiceUnavailable {
			t.Errorf("%d answers %d: a failover answers 201 or 503\n%s\n%s", statuses[status], status, replicas[0].stderr, replicas[1].stderr)
		}
	}

	// Both replicas catch up, and serve every acknowledged quote.
	for i, s := range servers {
		deadline := time.Now().Add(30 * time.Second)
		var ready struct{ AppliedSequence uint64 }
		for ready.AppliedSequence < lastSeq && time.Now().Before(deadline) {
			s.do(t, request{method: "GET", path: "/readyz"}).json(t, &ready)
			time.Sleep(50 * time.Millisecond)
		}
		if ready.AppliedSequence < lastSeq {
			f, _ := os.Create("/tmp/stall-goroutines.txt")
			pprof.Lookup("goroutine").WriteTo(f, 1)
			f.Close()
			t.Fatalf("replica %c applied %d of %d within 30 s after the failover\n%s", 'A'+i, ready.AppliedSequence, lastSeq, replicas[i].stderr)
		}
		tok := []string{tokA, tokB}[i]
		missing := 0
		for id := range acked {
			if r := s.do(t, request{method: "GET", path: "/api/quotes/" + id, token: tok}); r.status != 200 {
				missing++
			}
		}
		if missing > 0 {
			t.Errorf("replica %c: %d of %d acknowledged quotes missing", 'A'+i, missing, len(acked))
		}
	}
}

// streamLeader names the node that leads the CARGO stream.
func streamLeader(t *testing.T, c *natstest.Cluster) string {
	t.Helper()
	for _, n := range c.Nodes {
		if n.JetStreamIsStreamLeader("$G", "CARGO") {
			return n.Name()
		}
	}
	t.Fatal("the CARGO stream has no leader")
	return ""
}
