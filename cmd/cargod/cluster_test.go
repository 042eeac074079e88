package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cargostream/cargostream/eventstore/natstest"
	"github.com/cargostream/cargostream/internal/lockedbuf"
)

// replica is one cargod run() against a NATS cluster, started without
// waiting, so that two can start together.
type replica struct {
	stdout, stderr *lockedbuf.Buffer
	done           chan struct{} // closed when run returns, with err
	err            error
	stop           context.CancelFunc
}

func startReplica(dataDir string, env map[string]string) *replica {
	vars := testEnv(dataDir, env)
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{stdout: &lockedbuf.Buffer{}, stderr: &lockedbuf.Buffer{}, done: make(chan struct{}), stop: cancel}
	go func() {
		defer close(r.done)
		r.err = run(ctx, nil, environOf(vars), r.stdout, r.stderr)
	}()
	return r
}

// stoppedByItself waits for run to return without being stopped (a start
// that fails), for up to 60 s; past that, the test stops it and fails.
func (r *replica) stoppedByItself(t *testing.T) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(60 * time.Second):
		r.stop()
		<-r.done
		t.Fatalf("cargod did not stop by itself within 60 s:\n%s", r.stderr.String())
	}
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
		case <-r.done:
			t.Fatalf("a replica stopped at start: %v\n%s", r.err, r.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("a replica did not start within 60 s\n%s", r.stderr.String())
	return ""
}

// TestTwoReplicasOnAClusterSurviveTheLossOfANode starts two cargod
// replicas together on a fresh three-node cluster (R3 streams), so that
// both provision at once; writes quotes through both while one node is
// stopped, the stream's leader or a follower; and checks that both
// replicas stay current during the outage and serve every quote that was
// answered 201.
func TestTwoReplicasOnAClusterSurviveTheLossOfANode(t *testing.T) {
	// Serial: a cluster and two replicas, whose failovers other tests' servers would slow, competing for the cores.
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	for _, lose := range []string{"leader", "follower"} {
		t.Run("the stream's "+lose, func(t *testing.T) {
			// The two cases, each on a cluster of its own, share the
			// time they mostly spend waiting for elections.
			t.Parallel()
			surviveNodeLoss(t, lose == "leader")
		})
	}
}

// staleBound is how long a replica is waited for, during the outage, to
// apply what the cluster acknowledged: not a figure to meet (the time it
// took is logged; BenchmarkAReadWhoseNodeDies measures it, well under a
// second), but far past the read models' stall watchdog (3 s) and a
// consumer's reset, so that only a replica whose reads froze fails.
const staleBound = time.Minute

func surviveNodeLoss(t *testing.T, leader bool) {
	c := natstest.StartCluster(t)
	// The replicas share the key that seals the signing and webhook keys
	// the first of them generates.
	env := map[string]string{"CARGO_NATS_URL": c.URL(), "CARGO_NATS_REPLICAS": "3", "CARGO_DEMO": "true",
		"CARGO_SIGNING_KEY": "", "CARGO_SECRETS_KEY": testSecretsKey, "CARGO_LOG_LEVEL": "error"}
	replicas := []*replica{startReplica(t.TempDir(), env), startReplica(t.TempDir(), env)}
	var servers []*testServer
	for _, r := range replicas {
		defer func() { r.stop(); <-r.done }()
		servers = append(servers, &testServer{base: r.base(t), doc: loadDoc(t)})
	}
	a, b := servers[0], servers[1]
	tokA, tokB := a.demoToken(t, "demo-forwarder"), b.demoToken(t, "demo-forwarder")
	admin := a.demoToken(t, "demo-admin") // /readyz tells admins the sequence applied
	logs := func() string { return replicas[0].stderr.String() + "\n" + replicas[1].stderr.String() }

	// Written through one, read through the other.
	w := a.do(t, request{method: "POST", path: "/api/quotes", token: tokA, body: rfq()})
	var q quote
	w.json(t, &q)
	if r := b.do(t, request{method: "GET", path: "/api/quotes/" + q.ID, token: tokB,
		header: map[string]string{"Cargo-Sequence": w.header.Get("Cargo-Sequence")}}); w.status != 201 || r.status != 200 {
		t.Fatalf("quote written through A = %d, read through B = %d", w.status, r.status)
	}

	// Eight writers, four on each replica, while the node goes away.
	body, _ := json.Marshal(rfq())
	var mu sync.Mutex
	acked := map[string]bool{}
	statuses := map[int]int{}
	var lastSeq uint64
	var lastWrite time.Time
	var longestGap time.Duration // the longest time without a 201
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
					now := time.Now()
					if !lastWrite.IsZero() {
						longestGap = max(longestGap, now.Sub(lastWrite))
					}
					lastWrite = now
				}
				mu.Unlock()
			}
		}()
	}
	state := func() (int, uint64) { mu.Lock(); defer mu.Unlock(); return len(acked), lastSeq }
	stop := func() {
		select {
		case <-stopWriting:
		default:
			close(stopWriting)
		}
		wg.Wait()
	}
	defer stop()
	waitFor := func(n int, what string) {
		deadline := time.Now().Add(60 * time.Second)
		for count, _ := state(); count < n && time.Now().Before(deadline); count, _ = state() {
			time.Sleep(20 * time.Millisecond)
		}
		if count, _ := state(); count < n {
			stop()
			t.Fatalf("%s: %d quotes acknowledged, want %d; statuses %v\n%s", what, count, n, statuses, logs())
		}
	}
	// applied waits until replica s has applied seq, up to bound.
	applied := func(s *testServer, seq uint64, bound time.Duration) (time.Duration, bool) {
		start := time.Now()
		var ready struct{ AppliedSequence uint64 }
		for time.Since(start) < bound {
			s.do(t, request{method: "GET", path: "/readyz", token: admin}).json(t, &ready)
			if ready.AppliedSequence >= seq {
				return time.Since(start), true
			}
			time.Sleep(20 * time.Millisecond)
		}
		return bound, false
	}

	waitFor(100, "before the node is lost")
	lostName := streamLeader(t, c)
	if !leader {
		lostName = streamFollower(t, c, lostName)
	}
	for _, n := range c.Nodes {
		if n.Name() == lostName {
			n.Shutdown()
		}
	}
	lost := time.Now()
	before, _ := state()
	waitFor(before+100, "after "+lostName+" was lost")
	recovered := time.Since(lost)

	// During the outage, with writes going on, each replica reads what
	// was acknowledged through either within the bound.
	_, seq := state()
	for i, s := range servers {
		took, ok := applied(s, seq, staleBound)
		if !ok {
			stop()
			t.Fatalf("replica %c had not applied sequence %d %s after it was acknowledged, during the outage\n%s", 'A'+i, seq, staleBound, logs())
		}
		t.Logf("replica %c current %s after sequence %d was acknowledged", 'A'+i, took.Round(time.Millisecond), seq)
	}
	stop()
	mu.Lock()
	t.Logf("%s lost: 100 more quotes acknowledged %s later; longest time without a 201: %s; answers by status: %v",
		lostName, recovered.Round(time.Millisecond), longestGap.Round(time.Millisecond), statuses)
	mu.Unlock()
	for status, n := range statuses {
		if status != http.StatusCreated && status != http.StatusServiceUnavailable {
			t.Errorf("%d answers %d: a failover answers 201 or 503\n%s", n, status, logs())
		}
	}

	// Both replicas catch up, and serve every acknowledged quote.
	_, seq = state()
	for i, s := range servers {
		if _, ok := applied(s, seq, 30*time.Second); !ok {
			t.Fatalf("replica %c had not applied sequence %d 30 s after the writes ended\n%s", 'A'+i, seq, replicas[i].stderr)
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

// TestARequestRepeatedThroughTheOtherReplicaIsAnsweredWithTheFirstsResponse
// creates quotes with an Idempotency-Key through one of two replicas on a
// three-node cluster, and repeats each request at once through the other,
// as a client whose answer was lost may, behind a load balancer: each
// repeat must get the stored response. While the bucket of responses
// allowed direct gets, a follower that had not yet applied the response
// answered the repeat's read with the first request's marker, and the
// repeat was 409 (still in progress). That shows in some reads, not all,
// so without the fix this fails with near certainty, not always.
func TestARequestRepeatedThroughTheOtherReplicaIsAnsweredWithTheFirstsResponse(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	t.Parallel()
	c := natstest.StartCluster(t)
	env := map[string]string{"CARGO_NATS_URL": c.URL(), "CARGO_NATS_REPLICAS": "3", "CARGO_DEMO": "true",
		"CARGO_SIGNING_KEY": "", "CARGO_SECRETS_KEY": testSecretsKey, "CARGO_LOG_LEVEL": "error"}
	var servers []*testServer
	for range 2 {
		r := startReplica(t.TempDir(), env)
		defer func() { r.stop(); <-r.done }()
		servers = append(servers, &testServer{base: r.base(t), doc: loadDoc(t)})
	}
	a, b := servers[0], servers[1]
	fwdA, fwdB := a.demoToken(t, "demo-forwarder"), b.demoToken(t, "demo-forwarder")
	// At least 300 requests (2% of them were refused), and for longer
	// than nats-server takes to let a new stream's followers answer
	// direct gets (it checks every 2 s whether they are current).
	refused, n := 0, 0
	for start := time.Now(); n < 300 || time.Since(start) < 3*time.Second; n++ {
		key := map[string]string{"Idempotency-Key": fmt.Sprint("rfq-", n)}
		first := a.do(t, request{method: "POST", path: "/api/quotes", token: fwdA, body: rfq(), header: key})
		if first.status != http.StatusCreated {
			t.Fatalf("through A = %d %s", first.status, first.body)
		}
		again := b.do(t, request{method: "POST", path: "/api/quotes", token: fwdB, body: rfq(), header: key})
		switch {
		case again.status == http.StatusConflict:
			refused++
		case again.status != http.StatusCreated || again.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.body, first.body):
			t.Fatalf("repeated through B = %d %s %v; want A's answer, replayed", again.status, again.body, again.header)
		}
	}
	if refused > 0 {
		t.Errorf("%d of %d requests answered 201 through A were refused (409) when repeated at once through B", refused, n)
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

// streamFollower names a node, not the leader, that holds a replica of
// the CARGO stream.
func streamFollower(t *testing.T, c *natstest.Cluster, leader string) string {
	t.Helper()
	for _, n := range c.Nodes {
		if n.Name() != leader {
			return n.Name()
		}
	}
	t.Fatal("the cluster has no follower")
	return ""
}
