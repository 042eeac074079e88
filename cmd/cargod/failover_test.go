package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cargostream/cargostream/eventstore/natstest"
)

// call is one request of a client that gives up after 30 s, for the
// failover tests: a request that takes longer hung.
func call(base, method, path, token string, body any) (response, error) {
	var b []byte
	if body != nil {
		b, _ = json.Marshal(body)
	}
	req, _ := http.NewRequest(method, base+path, bytes.NewReader(b))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	out := response{status: resp.StatusCode, header: resp.Header}
	out.body, err = io.ReadAll(resp.Body)
	return out, err
}

// silentProxy forwards TCP connections to a NATS node until it goes
// silent: then it neither forwards nor closes anything, as a node whose
// machine lost power, or whose network is cut, sends nothing, not even
// the end of a connection.
type silentProxy struct {
	ln     net.Listener
	mu     sync.Mutex
	silent bool
	conns  []net.Conn
}

func startSilentProxy(t *testing.T, upstream string) *silentProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &silentProxy{ln: ln}
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.conns {
			c.Close()
		}
	})
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			p.conns = append(p.conns, client)
			silent := p.silent
			p.mu.Unlock()
			if silent {
				go io.Copy(io.Discard, client)
				continue
			}
			node, err := net.Dial("tcp", strings.TrimPrefix(upstream, "nats://"))
			if err != nil {
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, node)
			p.mu.Unlock()
			go io.Copy(node, client)
			go func() {
				// The node's end of the connection is not passed on.
				io.Copy(client, node)
				io.Copy(io.Discard, client)
			}()
		}
	}()
	return p
}

func (p *silentProxy) URL() string { return "nats://" + p.ln.Addr().String() }

// goSilent stops forwarding: what the client sends is read and dropped,
// and nothing comes back.
func (p *silentProxy) goSilent() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.silent = true
}

// TestAReplicaWhoseNATSNodeGoesSilentWritesAgainThroughAnotherNode starts
// cargod on a three-node cluster, connected to one node through a proxy;
// that node then dies without a word (its machine lost power: the proxy
// keeps the client's connection open and silent). cargod must notice and
// move to another node, so that writes are acknowledged again within a
// bounded time, not after the minutes a connection takes to be declared
// dead by nats.go's default pings (every 2 minutes, 2 unanswered).
func TestAReplicaWhoseNATSNodeGoesSilentWritesAgainThroughAnotherNode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	t.Parallel()
	c := natstest.StartCluster(t)
	proxy := startSilentProxy(t, c.URLs[0])
	// Only the proxied node is named: the others are learnt from it, as
	// a client learns a cluster's nodes.
	r := startReplica(t.TempDir(), map[string]string{"CARGO_NATS_URL": proxy.URL(), "CARGO_NATS_REPLICAS": "3", "CARGO_DEMO": "true",
		"CARGO_SIGNING_KEY": "", "CARGO_SECRETS_KEY": testSecretsKey, "CARGO_LOG_LEVEL": "warn"})
	defer func() { r.stop(); <-r.done }()
	s := &testServer{base: r.base(t), doc: loadDoc(t)}
	fwd := s.demoToken(t, "demo-forwarder")
	s.mustCreate(t, fwd, "/api/quotes", rfq())

	proxy.goSilent()
	c.Nodes[0].Shutdown()
	lost := time.Now()
	statuses := map[int]int{}
	for {
		w, err := call(s.base, "POST", "/api/quotes", fwd, rfq())
		if err != nil {
			t.Fatalf("a write %s after the node died hung or failed: %v", time.Since(lost).Round(time.Millisecond), err)
		}
		statuses[w.status]++
		if w.status == http.StatusCreated {
			var q quote
			w.json(t, &q)
			if got, err := call(s.base, "GET", "/api/quotes/"+q.ID, fwd, nil); err != nil || got.status != http.StatusOK {
				t.Errorf("the quote written after the node died = %d %v", got.status, err)
			}
			break
		}
		if w.status != http.StatusServiceUnavailable {
			t.Fatalf("a write after the node died = %d %s", w.status, w.body)
		}
		if time.Since(lost) > 30*time.Second {
			t.Fatalf("no write acknowledged 30 s after cargod's NATS node went silent; answers %v\n%s", statuses, r.stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("writes acknowledged again %s after cargod's node went silent; answers before %v", time.Since(lost).Round(time.Millisecond), statuses)
}

// TestAReplicaThatMeetsElectionsAsItStartsWaitsForThemAndStarts starts a
// replica on a three-node cluster, and a second once the node leading
// the event stream is stopped, which is started again, and then the next
// leader, for six seconds, as nodes are during a rolling restart of the
// cluster: what the second asks of the stream as it starts and seeds (the
// organisations of the demo, as it would the admin of CARGO_ADMIN_SECRET)
// finds no leader for the seconds of each election. The second must wait
// that out and start, as it waits for a cluster that is not up yet, not
// exit.
func TestAReplicaThatMeetsElectionsAsItStartsWaitsForThemAndStarts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	t.Parallel()
	c := natstest.StartCluster(t)
	env := map[string]string{"CARGO_NATS_URL": c.URL(), "CARGO_NATS_REPLICAS": "3", "CARGO_DEMO": "true", "CARGO_SNAPSHOTS": "false",
		"CARGO_SIGNING_KEY": "", "CARGO_SECRETS_KEY": testSecretsKey, "CARGO_LOG_LEVEL": "warn"}
	first := startReplica(t.TempDir(), env)
	defer func() { first.stop(); <-first.done }()
	(&testServer{base: first.base(t), doc: loadDoc(t)}).demoToken(t, "demo-forwarder")

	// leaderStopped stops the node that leads the event stream, if one
	// does, and returns its index (-1 if none).
	leaderStopped := func() int {
		for i, n := range c.Nodes {
			if n.JetStreamIsStreamLeader("$G", "CARGO") {
				n.Shutdown()
				return i
			}
		}
		return -1
	}
	// The first election is under way before the second starts: it
	// cannot be ready before one, however fast it is.
	i := leaderStopped()
	if i < 0 {
		t.Fatal("no node leads the event stream the first replica uses")
	}
	second := startReplica(t.TempDir(), env)
	defer func() { second.stop(); <-second.done }()
	c.Restart(t, i)
	for start := time.Now(); time.Since(start) < 6*time.Second; {
		time.Sleep(300 * time.Millisecond)
		if i := leaderStopped(); i >= 0 {
			c.Restart(t, i)
		}
	}
	// A token is refused (503) while an election is still under way, as
	// it should be: the last leader stopped may have been just now. The
	// replica started, and grants one once a leader is elected.
	b := &testServer{base: second.base(t), doc: loadDoc(t)}
	eventually(t, "a token of the second replica after the elections", func() response {
		return b.do(t, request{method: "POST", path: "/api/auth/token",
			body: map[string]string{"grantType": "client_credentials", "clientId": "demo-forwarder", "clientSecret": "demo-forwarder-secret"}})
	}, func(r response) bool { return r.status == http.StatusOK })
}
