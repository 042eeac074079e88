package natstest

import (
	"net"
	"sync"
	"testing"
)

// Relay passes TCP connections on to a server, and can cut them all at
// once and take new ones again on the same address: a network that fails
// between a client and its server, which the client sees as a lost
// connection and tries to reconnect through.
type Relay struct {
	t        testing.TB
	upstream string
	addr     string
	mu       sync.Mutex
	ln       net.Listener
	conns    []net.Conn
	hold     sync.RWMutex // held by Pause: nothing is passed on
}

// StartRelay relays a free loopback port to upstream until the test's
// end.
func StartRelay(t testing.TB, upstream string) *Relay {
	t.Helper()
	r := &Relay{t: t, upstream: upstream, addr: "127.0.0.1:0"}
	r.Restore()
	t.Cleanup(r.Cut)
	return r
}

// URL is the relay's, for a NATS client.
func (r *Relay) URL() string { return "nats://" + r.addr }

// Cut closes every connection relayed and stops taking new ones.
func (r *Relay) Cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ln != nil {
		r.ln.Close()
		r.ln = nil
	}
	for _, c := range r.conns {
		c.Close()
	}
	r.conns = nil
}

// Pause passes nothing on, either way, until Resume, and closes no
// connection: a network gone silent, or a server stopped (SIGSTOP), which
// a client notices only by what it no longer hears. The test must Resume
// before it ends.
func (r *Relay) Pause() { r.hold.Lock() }

// Resume passes on what Pause held, and what comes after it.
func (r *Relay) Resume() { r.hold.Unlock() }

// pass copies from src to dst until either fails, holding each write while
// the relay is paused, then closes dst.
func (r *Relay) pass(dst, src net.Conn) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			r.hold.RLock()
			_, werr := dst.Write(buf[:n])
			r.hold.RUnlock()
			if werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Restore takes connections again, on the relay's address.
func (r *Relay) Restore() {
	r.t.Helper()
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		r.t.Fatal(err)
	}
	r.mu.Lock()
	r.ln, r.addr = ln, ln.Addr().String()
	r.mu.Unlock()
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return // cut
			}
			server, err := net.Dial("tcp", r.upstream)
			if err != nil {
				client.Close()
				continue
			}
			r.mu.Lock()
			if r.ln != ln { // cut meanwhile
				r.mu.Unlock()
				client.Close()
				server.Close()
				continue
			}
			r.conns = append(r.conns, client, server)
			r.mu.Unlock()
			go r.pass(server, client)
			go r.pass(client, server)
		}
	}()
}
