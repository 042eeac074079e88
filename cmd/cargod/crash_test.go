package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cargostream/cargostream/internal/lockedbuf"
)

// childEnv carries the environment of a cargod that a test runs as a
// child process, so that it can be killed with SIGKILL.
const childEnv = "CARGO_TEST_CHILD_ENV"

// TestChildProcess is the child's side: not a test of its own.
func TestChildProcess(t *testing.T) {
	// Not parallel: in the child it is the only test, and elsewhere it skips at once.
	raw := os.Getenv(childEnv)
	if raw == "" {
		t.Skip("runs only as a child of a crash test")
	}
	var vars map[string]string
	if err := json.Unmarshal([]byte(raw), &vars); err != nil {
		t.Fatal(err)
	}
	err := run(stopOnSignal(), nil, environOf(vars), os.Stdout, os.Stderr)
	t.Fatalf("cargod stopped: %v", err)
}

// startChild starts cargod as a child process on dataDir, with env on top
// of the tests' environment, and returns its base URL, the process and
// what it writes to stderr.
func startChild(t *testing.T, dataDir string, env map[string]string) (string, *exec.Cmd, *lockedbuf.Buffer) {
	t.Helper()
	raw, _ := json.Marshal(testEnv(dataDir, env))
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildProcess$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(raw))
	stderr := &lockedbuf.Buffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if m := listening.FindStringSubmatch(lines.Text()); m != nil {
			go io.Copy(io.Discard, stdout)
			return m[1], cmd, stderr
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	t.Fatalf("the child cargod did not start:\n%s", stderr.String())
	return "", nil, nil
}

// TestKilledUnderWriteLoadEveryAcknowledgedQuoteIsThere kills cargod with
// SIGKILL while 16 clients create quotes, five times over on one data
// directory. After each restart every quote answered 201 is served.
func TestKilledUnderWriteLoadEveryAcknowledgedQuoteIsThere(t *testing.T) {
	// Serial: it SIGKILLs a child process, a whole second cargod under load, which must not share the cores with parallel servers.
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := t.TempDir()
	body, _ := json.Marshal(rfq())
	var acked []string
	for round := range 5 {
		base, cmd, _ := startChild(t, dir, nil)
		s := &testServer{base: base, doc: loadDoc(t)}
		tok := s.demoToken(t, "demo-forwarder")

		var mu sync.Mutex
		var wg sync.WaitGroup
		killAt := len(acked) + 150
		killed := make(chan struct{})
		kill := sync.OnceFunc(func() { cmd.Process.Signal(syscall.SIGKILL); close(killed) })
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-killed:
						return
					default:
					}
					id, ok := postQuote(base, tok, body)
					if !ok {
						continue // refused or cut off by the kill: not acknowledged
					}
					mu.Lock()
					acked = append(acked, id)
					if len(acked) >= killAt {
						kill()
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		cmd.Wait()

		base, cmd, _ = startChild(t, dir, nil)
		s.base = base
		tok = s.demoToken(t, "demo-forwarder")
		missing := 0
		for _, id := range acked {
			if status := getStatus(base+"/api/quotes/"+id, tok); status != http.StatusOK {
				missing++
				t.Errorf("round %d: acknowledged quote %s answers %d after the restart", round, id, status)
			}
		}
		t.Logf("round %d: %d acknowledged quotes so far, %d missing", round, len(acked), missing)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}
}

// postQuote posts an RFQ and returns the new quote's id if the answer
// was 201.
func postQuote(base, token string, body []byte) (string, bool) {
	req, _ := http.NewRequest("POST", base+"/api/quotes", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", false
	}
	defer resp.Body.Close()
	var q quote
	if resp.StatusCode != http.StatusCreated || json.NewDecoder(resp.Body).Decode(&q) != nil || q.ID == "" {
		return "", false
	}
	return q.ID, true
}

func getStatus(url, token string) int {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestBookingsInFlightAtAKillAreConfirmedAfterTheRestart files 40 bookings
// and kills cargod with SIGKILL as soon as they are answered, while the
// booking reactor works on them; after the restart every one is
// confirmed, and the test reports how long that took.
func TestBookingsInFlightAtAKillAreConfirmedAfterTheRestart(t *testing.T) {
	// Serial: it SIGKILLs a child process, a whole second cargod under load, which must not share the cores with parallel servers.
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := t.TempDir()
	base, cmd, _ := startChild(t, dir, nil)
	s := &testServer{base: base, doc: loadDoc(t)}
	fwd := s.demoToken(t, "demo-forwarder")
	var quotes []pricedQuote
	for range 40 {
		quotes = append(quotes, s.quoteOutcome(t, fwd, createQuote(t, s, fwd, rfq()).ID))
	}
	ids := make([]string, len(quotes))
	var wg sync.WaitGroup
	for i, q := range quotes {
		if len(q.PriceOptions) == 0 {
			t.Fatalf("quote %s has no price options: %+v", q.ID, q)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var b booking
			s.mustCreate(t, fwd, "/api/bookings", map[string]any{"quoteId": q.ID, "flightId": q.PriceOptions[0].FlightID}).json(t, &b)
			ids[i] = b.ID
		}()
	}
	wg.Wait()
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	restarted := time.Now()
	base, cmd, _ = startChild(t, dir, nil)
	defer func() { cmd.Process.Signal(syscall.SIGKILL); cmd.Wait() }()
	s.base = base
	fwd = s.demoToken(t, "demo-forwarder")
	pending := 0
	for _, id := range ids {
		var b booking
		s.do(t, request{method: "GET", path: "/api/bookings/" + id, token: fwd}).json(t, &b)
		if b.Status == "pending" {
			pending++
		}
	}
	for _, id := range ids {
		if b := s.bookingOutcome(t, fwd, id); b.Status != "confirmed" {
			t.Errorf("booking %s after the restart = %+v", id, b)
		}
	}
	if pending == 0 {
		// Checked all the same: a booking left in another state fails.
		t.Skip("the reactor confirmed every booking before the kill: nothing was in flight to redeliver")
	}
	t.Logf("%d of %d bookings were pending at the restart; all confirmed %s after it", pending, len(ids), time.Since(restarted).Round(time.Millisecond))
}

// TestASecondSignalStopsAtOnce: the first SIGTERM stops cleanly, waiting
// for the requests in flight (here an upload that stalls); a second ends
// the process at once instead of being swallowed.
func TestASecondSignalStopsAtOnce(t *testing.T) {
	t.Parallel()
	base, cmd, stderr := startChild(t, t.TempDir(), map[string]string{"CARGO_LOG_LEVEL": "info", "CARGO_SHUTDOWN_TIMEOUT": "5m"})
	defer cmd.Process.Kill()
	s := &testServer{base: base, doc: loadDoc(t)}
	tok := s.demoToken(t, "demo-forwarder")
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// With Expect: 100-continue the server says when the handler reads
	// the body: the upload is then in flight for sure.
	fmt.Fprintf(conn, "POST /api/documents HTTP/1.1\r\nHost: cargod\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 1000000\r\nExpect: 100-continue\r\n\r\n", tok)
	answer := bufio.NewReader(conn)
	if line, err := answer.ReadString('\n'); err != nil || !strings.HasPrefix(line, "HTTP/1.1 100") {
		t.Fatalf("the upload was not taken: %q %v", line, err)
	}
	fmt.Fprint(conn, "--b\r\nContent-Disposition: form-data; name=\"documentType\"\r\n\r\nINVOICE\r\n")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the clean stop under way", stderr.String, func(log string) bool { return strings.Contains(log, "shutting down") })
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 128+int(syscall.SIGTERM) || !strings.Contains(stderr.String(), `"level":"WARN","msg":"cargod: a second signal: stopped at once, requests in flight cut off","signal":"terminated"}`) {
		t.Errorf("after a second SIGTERM cargod exited %d:\n%s", code, stderr.String())
	}
}

// TestADrainingReplicaIsNotReadyWhileItStillServes: with
// CARGO_SHUTDOWN_DRAIN, a stop signal first turns /readyz to 503, so
// that a load balancer probing it takes the replica out, while requests
// are still answered, each on a connection closed after it.
func TestADrainingReplicaIsNotReadyWhileItStillServes(t *testing.T) {
	t.Parallel()
	base, cmd, stderr := startChild(t, t.TempDir(), map[string]string{"CARGO_LOG_LEVEL": "info", "CARGO_SHUTDOWN_DRAIN": "5m"})
	defer cmd.Process.Kill()
	s := &testServer{base: base, doc: loadDoc(t)}
	tok := s.demoToken(t, "demo-forwarder")
	if r := s.do(t, request{method: "GET", path: "/readyz"}); r.status != http.StatusOK {
		t.Fatalf("/readyz before the stop = %d, want 200", r.status)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the drain under way", stderr.String, func(log string) bool { return strings.Contains(log, "draining") })
	if r := s.do(t, request{method: "GET", path: "/readyz"}); r.status != http.StatusServiceUnavailable {
		t.Errorf("/readyz while draining = %d %s, want 503", r.status, r.body)
	}
	if r := s.do(t, request{method: "GET", path: "/healthz"}); r.status != http.StatusOK {
		t.Errorf("/healthz while draining = %d, want 200: the process is alive", r.status)
	}
	if r := s.do(t, request{method: "GET", path: "/api/awb-stock", token: tok}); r.status != http.StatusOK || !r.closed {
		t.Errorf("GET /api/awb-stock while draining = %d %s (connection closed: %v), want 200 on a closed connection", r.status, r.body, r.closed)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 128+int(syscall.SIGTERM) {
		t.Errorf("a second SIGTERM while draining: exit %d, want at once with %d:\n%s", code, 128+int(syscall.SIGTERM), stderr.String())
	}
}
