// Package natstest starts real NATS servers inside a test process: a
// JetStream cluster of three nodes on loopback, as production runs on,
// without a server binary of the machine's (which may be too old).
package natstest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Cluster is three nats-server nodes started in the test process, routed
// to each other on loopback, each with its own store directory.
type Cluster struct {
	Nodes []*server.Server
	URLs  []string // client URLs, one per node
	opts  []*server.Options
}

// URL lists every node, for a client that should fail over between them.
func (c *Cluster) URL() string { return strings.Join(c.URLs, ",") }

// FreePorts returns n loopback ports free at this moment, for servers the
// test starts on them later. They are drawn at random from below the
// kernel's ephemeral range where it can tell it (Linux): a port in that
// range, as a listener on port 0 gets, may be taken meanwhile as the
// local port of any loopback connection, which the kernel never gives a
// port below it. Only another test's draw could take one then.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	below := ephemeralLow()
	for len(ports) < n {
		port := 0
		if below > firstDrawnPort {
			port = firstDrawnPort + rand.IntN(below-firstDrawnPort)
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			if port != 0 {
				continue // taken: draw again
			}
			t.Fatal(err)
		}
		defer ln.Close()
		if port = ln.Addr().(*net.TCPAddr).Port; !slices.Contains(ports, port) {
			ports = append(ports, port)
		}
	}
	return ports
}

// firstDrawnPort is the lowest port FreePorts draws: above the well-known
// and most registered services' ports.
const firstDrawnPort = 20000

// ephemeralLow is the first port of the kernel's ephemeral range, or 0
// where it cannot be read.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	low, _ := strconv.Atoi(strings.Fields(string(b) + " 0")[0])
	return low
}

// RefusingPort is a loopback port that refuses connections until the test
// ends: bound, so that nothing else takes it (another test's listener, or
// the local port of a loopback connection, which may even connect to
// itself), and not listening. A port found free (FreePorts) may be taken
// so, and a dial to it then connects.
func RefusingPort(t testing.TB) int {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	bound, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return bound.(*syscall.SockaddrInet4).Port
}

// StartCluster starts three JetStream nodes, syncing every write, routed
// to each other on loopback ports of their own; the test's end stops them.
// A port found free may still be taken before its node listens on it (by
// another test's draw, see FreePorts): a node that cannot listen never
// takes connections, and the cluster is started again on other ports.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	for try := 1; ; try++ {
		c := startCluster(t)
		if c.ready() {
			return c
		}
		for _, srv := range c.Nodes {
			srv.Shutdown()
		}
		if try == 3 {
			t.Fatal("a node did not start, on three sets of ports")
		}
	}
}

func startCluster(t testing.TB) *Cluster {
	ports := FreePorts(t, 6) // a client and a route port per node
	var routes []*url.URL
	for i := range 3 {
		routes = append(routes, &url.URL{Scheme: "nats", Host: fmt.Sprintf("127.0.0.1:%d", ports[3+i])})
	}
	c := &Cluster{}
	for i := range 3 {
		c.opts = append(c.opts, &server.Options{
			ServerName: fmt.Sprint("n", i), Host: "127.0.0.1", Port: ports[i],
			JetStream: true, StoreDir: t.TempDir(), SyncAlways: true, NoSigs: true, NoLog: true,
			Cluster: server.ClusterOpts{Name: "cargo", Host: "127.0.0.1", Port: ports[3+i]},
			Routes:  routes,
		})
		c.Nodes = append(c.Nodes, c.start(t, i))
		c.URLs = append(c.URLs, fmt.Sprintf("nats://127.0.0.1:%d", ports[i]))
	}
	return c
}

// ready reports whether every node takes connections within 10 s.
func (c *Cluster) ready() bool {
	for _, srv := range c.Nodes {
		if !srv.ReadyForConnections(10 * time.Second) {
			return false
		}
	}
	return true
}

// start starts node i from its options, without waiting for it.
func (c *Cluster) start(t testing.TB, i int) *server.Server {
	t.Helper()
	// A server keeps what it was given; each start gets a copy.
	opts := *c.opts[i]
	srv, err := server.NewServer(&opts)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	return srv
}

// Restart starts node i again, after its Shutdown, on its ports and store
// directory, as an operator brings a lost node back, and waits until it
// takes connections.
func (c *Cluster) Restart(t testing.TB, i int) {
	t.Helper()
	c.Nodes[i].WaitForShutdown()
	c.Nodes[i] = c.start(t, i)
	if !c.Nodes[i].ReadyForConnections(10 * time.Second) {
		t.Fatalf("node %s did not start again", c.opts[i].ServerName)
	}
}

// StartServer starts one JetStream node, syncing every write, on port of
// loopback (0: a free one), waits until it takes connections, and returns
// its URL; the test's end stops it. A client may already be waiting for
// it on that port.
func StartServer(t testing.TB, port int) string {
	t.Helper()
	if port == 0 {
		port = server.RANDOM_PORT
	}
	return Start(t, &server.Options{Port: port}).ClientURL()
}

// Start starts one JetStream node on loopback with opts, syncing every
// write to opts.StoreDir (if empty, a directory of the test's), and waits
// until it takes connections; the test's end stops it.
func Start(t testing.TB, opts *server.Options) *server.Server {
	t.Helper()
	if opts.StoreDir == "" {
		opts.StoreDir = t.TempDir()
	}
	opts.Host, opts.JetStream, opts.SyncAlways, opts.NoSigs, opts.NoLog = "127.0.0.1", true, true, true, true
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("the test's NATS server did not start")
	}
	return srv
}

// Publish stores a message with header on the stream of subject, on the
// server at url, as a writer other than the event store might: for tests
// of what readers make of messages the store would not write.
func Publish(t testing.TB, url, subject string, header map[string]string, data []byte) {
	t.Helper()
	js := JetStream(t, url)
	m := nats.NewMsg(subject)
	for k, v := range header {
		m.Header.Set(k, v)
	}
	m.Data = data
	if _, err := js.PublishMsg(context.Background(), m); err != nil {
		t.Fatal(err)
	}
}

// JetStream connects to the server at url, as a client other than the
// event store (an operator's tool) would, until the test's end.
func JetStream(t testing.TB, url string) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// HandMadeStream makes the event stream name, of events on subjects, on
// the server at url, as an operator would by hand: like cargod's, but
// allowing its events to be deleted, so that a test can lose some, as a
// damaged file does.
func HandMadeStream(t testing.TB, url, name, subjects string) jetstream.Stream {
	t.Helper()
	stream, err := JetStream(t, url).CreateStream(context.Background(), jetstream.StreamConfig{Name: name, Subjects: []string{subjects},
		Storage: jetstream.FileStorage, AllowAtomicPublish: true})
	if err != nil {
		t.Fatal(err)
	}
	return stream
}
