package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/eventstore/natstest"
	"github.com/cargostream/cargostream/internal/lockedbuf"
	"github.com/cargostream/cargostream/internal/streamgen"
	"github.com/cargostream/cargostream/projections"
	"github.com/nats-io/nats-server/v2/server"
)

// TestThePortOpensBeforeTheEventStoreIsThere starts cargod against a NATS
// server that is not up yet: /healthz answers at once, /readyz and the
// API answer 503 saying that it is starting, and once the server comes the
// API serves.
func TestThePortOpensBeforeTheEventStoreIsThere(t *testing.T) {
	t.Parallel()
	ports := natstest.FreePorts(t, 2)
	httpPort, natsPort := ports[0], ports[1]
	r := startReplica(t.TempDir(), map[string]string{"CARGO_ADDR": fmt.Sprintf("127.0.0.1:%d", httpPort),
		"CARGO_NATS_URL": fmt.Sprintf("nats://127.0.0.1:%d", natsPort), "CARGO_NATS_REPLICAS": "1", "CARGO_DEMO": "true", "CARGO_SIGNING_KEY": "", "CARGO_LOG_LEVEL": "info",
		"CARGO_SECRETS_KEY": testSecretsKey})
	defer func() { r.stop(); <-r.done }()
	s := &testServer{base: fmt.Sprintf("http://127.0.0.1:%d", httpPort), doc: loadDoc(t)}

	eventually(t, "/healthz while NATS is away", func() int {
		resp, err := http.Get(s.base + "/healthz")
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}, func(status int) bool { return status == http.StatusOK })
	// No caller can be told more while the replica starts (none can be
	// authenticated yet): the log says how far it has come.
	if got := s.do(t, request{method: "GET", path: "/readyz"}); got.status != http.StatusServiceUnavailable {
		t.Fatalf("/readyz while starting = %d %s", got.status, got.body)
	} else if string(got.body) != `{"status":"not ready"}`+"\n" {
		t.Errorf("/readyz while starting = %s", got.body)
	}
	eventually(t, "the log while starting", r.stderr.String, func(logged string) bool {
		return strings.Contains(logged, `"msg":"not ready yet","reason":"starting: connecting to NATS`)
	})
	got := s.do(t, request{method: "POST", path: "/api/quotes", body: rfq()})
	if e := got.apiError(t); got.status != http.StatusServiceUnavailable || got.header.Get("Retry-After") == "" ||
		e.Error != "service_unavailable" || !strings.Contains(e.ErrorDescription, "starting") {
		t.Errorf("a request while starting = %d, Retry-After %q, %+v", got.status, got.header.Get("Retry-After"), e)
	}

	natstest.StartServer(t, natsPort)
	if base := r.base(t); base != s.base {
		t.Fatalf("cargod listens on %s, want %s", base, s.base)
	}
	if got := s.do(t, request{method: "GET", path: "/readyz"}); got.status != http.StatusOK {
		t.Errorf("/readyz once started = %d %s", got.status, got.body)
	}
	createQuote(t, s, s.demoToken(t, "demo-forwarder"), rfq())
}

// TestReadyzIsNotReadyWhileAStartReplaysAHistory starts cargod on a
// stream of startupEvents events, written through the domain beforehand:
// /readyz answers 503, and logs the replay's progress (the stream's end
// as the replay found it, fewer events applied), until the read models
// hold them all, and then 200.
func TestReadyzIsNotReadyWhileAStartReplaysAHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a history of events first")
	}
	t.Parallel()
	dir := t.TempDir()
	store, _, err := streamgen.Embedded(context.Background(), dir, streamgen.Options{Events: startupEvents})
	if err != nil {
		t.Fatal(err)
	}
	last, err := store.LastSequence(context.Background())
	store.Close()
	if err != nil {
		t.Fatal(err)
	}

	port := natstest.FreePorts(t, 1)[0]
	r := startReplica(dir, map[string]string{"CARGO_ADDR": fmt.Sprintf("127.0.0.1:%d", port), "CARGO_SNAPSHOTS": "false",
		"CARGO_LOG_LEVEL": "info"})
	defer func() { r.stop(); <-r.done }()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	readyz := func() int {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	type progress struct {
		Msg, Reason string
		Applied     uint64 `json:"appliedSequence"`
		Stream      uint64 `json:"streamSequence"`
	}
	// The answers while starting: the last "not ready yet" line logged.
	logged := func() progress {
		var p progress
		for line := range strings.Lines(r.stderr.String()) {
			var l progress
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "not ready yet" {
				p = l
			}
		}
		return p
	}
	replaying := eventually(t, "/readyz while the history replays", func() progress {
		switch readyz() {
		case http.StatusOK:
			t.Fatalf("/readyz answered 200 before it was seen replaying:\n%s", r.stderr.String())
		case http.StatusServiceUnavailable:
			return logged()
		}
		return progress{}
	}, func(p progress) bool { return strings.HasPrefix(p.Reason, "starting: replaying") && p.Stream > 0 })
	// The stream's end may count the start's own first events (the
	// bootstrap appends what the history lacks while the replay runs).
	if replaying.Stream < last || replaying.Applied >= replaying.Stream {
		t.Errorf("/readyz while replaying logged %+v, want the replay of %d events under way", replaying, last)
	}
	r.base(t)
	// Once the API serves, the reactors may still be catching up on the
	// history, and on a CI machine under -race with other tests' servers
	// beside it that took more than 15 s once: ready means 200 within a
	// minute, and the log says why it is not (the reason of every turn).
	for deadline := time.Now().Add(time.Minute); readyz() != http.StatusOK; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("/readyz once started: not 200 within a minute; readiness logged:\n%s", grepLines(r.stderr.String(), "readiness changed"))
		}
	}
	eventually(t, "the ready line logged", r.stderr.String, func(logged string) bool {
		return strings.Contains(logged, `"msg":"cargod ready"`)
	})
}

// grepLines is the lines of text that contain substr.
func grepLines(text, substr string) string {
	var b strings.Builder
	for line := range strings.Lines(text) {
		if strings.Contains(line, substr) {
			b.WriteString(line)
		}
	}
	return b.String()
}

// A stop while NATS is out of reach does not wait for a snapshot that
// cannot be written: the snapshot is given up, logged, and the next start
// replays from the one before. (It waited the five minutes a snapshot of a
// large stream may take.)
func TestAStopWhileNATSIsAwayEndsWithoutWaitingForTheSnapshot(t *testing.T) {
	t.Parallel()
	nats := natstest.Start(t, &server.Options{Port: server.RANDOM_PORT})
	r := startReplica(t.TempDir(), map[string]string{"CARGO_NATS_URL": nats.ClientURL(), "CARGO_NATS_REPLICAS": "1",
		"CARGO_DEMO": "true", "CARGO_SIGNING_KEY": "", "CARGO_SECRETS_KEY": testSecretsKey})
	s := &testServer{base: r.base(t), doc: loadDoc(t)}
	s.mustCreate(t, s.demoToken(t, "demo-airline-lh"), "/api/flights", shortFlight("LH1700"))
	nats.Shutdown()
	nats.WaitForShutdown()
	r.stop()
	select {
	case <-r.done:
	case <-time.After(time.Minute):
		t.Fatalf("cargod still stopping a minute after it was told to:\n%s", r.stderr.String())
	}
	if logged := r.stderr.String(); !strings.Contains(logged, "snapshot of the read models not written") {
		t.Errorf("the log does not say the snapshot was not written:\n%s", logged)
	}
}

// A clean stop's last line is "cargod stopped", after the snapshot of the
// read models that the stop writes: an operator timing a stop by the log
// sees its end, not a line logged while the snapshot was still to come.
func TestCargodStoppedIsTheLastLineOfACleanStop(t *testing.T) {
	t.Parallel()
	r := startReplica(t.TempDir(), map[string]string{"CARGO_LOG_LEVEL": "info"})
	r.base(t)
	r.stop()
	<-r.done
	if r.err != nil {
		t.Fatalf("a clean stop ended run with %v", r.err)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.Contains(last, `"msg":"cargod stopped"`) || !strings.Contains(r.stderr.String(), "snapshot of the read models written") {
		t.Errorf("the last line of a clean stop is %s, want cargod stopped after the snapshot written:\n%s", last, r.stderr.String())
	}
}

// TestAStopWhileWaitingForNATSIsACleanStop stops cargod (SIGTERM, as a
// supervisor giving up on a replica does) while it waits for a NATS
// server that is not there: run returns no error, so that the process
// exits 0, and the port is closed.
func TestAStopWhileWaitingForNATSIsACleanStop(t *testing.T) {
	t.Parallel()
	ports := natstest.FreePorts(t, 2)
	httpPort, natsPort := ports[0], ports[1]
	r := startReplica(t.TempDir(), map[string]string{"CARGO_ADDR": fmt.Sprintf("127.0.0.1:%d", httpPort),
		"CARGO_NATS_URL": fmt.Sprintf("nats://127.0.0.1:%d", natsPort), "CARGO_NATS_REPLICAS": "1", "CARGO_SECRETS_KEY": testSecretsKey,
		"CARGO_LOG_LEVEL": "info"})
	eventually(t, "the wait for NATS", r.stderr.String, func(log string) bool { return strings.Contains(log, "NATS not ready; trying again") })
	r.stop()
	select {
	case <-r.done:
	case <-time.After(15 * time.Second):
		t.Fatalf("cargod did not stop within 15 s of the stop:\n%s", r.stderr.String())
	}
	if r.err != nil {
		t.Errorf("a stop while waiting for NATS ended run with %v", r.err)
	}
	if resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", httpPort)); err == nil {
		resp.Body.Close()
		t.Errorf("the port still answers after the stop: %s", resp.Status)
	}
}

// TestAPortInUseStopsTheStartNamingItsSetting: each port cargod opens,
// held by another process, stops the start before cargod says it
// listens, with an error that names the setting and the reason.
func TestAPortInUseStopsTheStartNamingItsSetting(t *testing.T) {
	t.Parallel()
	for _, env := range []string{"CARGO_ADDR", "CARGO_METRICS_ADDR", "CARGO_PROFILE_ADDR"} {
		t.Run(env, func(t *testing.T) {
			t.Parallel()
			held, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer held.Close()
			r := startReplica(t.TempDir(), map[string]string{env: held.Addr().String()})
			r.stoppedByItself(t)
			if r.err == nil || !strings.HasPrefix(r.err.Error(), env+": ") || !errors.Is(r.err, syscall.EADDRINUSE) {
				t.Errorf("with %s in use run ended with %v, want an error that names it and the port in use", env, r.err)
			}
			if out := r.stdout.String(); listening.MatchString(out) {
				t.Errorf("with %s in use cargod said it listens before it stopped:\n%s", env, out)
			}
		})
	}
}

// TestAMisspeltSettingIsNamedAtStart: a variable that looks like a setting
// but is none (here a plural) would leave its default unseen; cargod
// names it, and the setting meant, as it starts.
func TestAMisspeltSettingIsNamedAtStart(t *testing.T) {
	t.Parallel()
	r := startReplica(t.TempDir(), map[string]string{"CARGO_LOG_LEVEL": "warn", "CARGO_RATE_LIMIT_PER_MINUTES": "0"})
	defer func() { r.stop(); <-r.done }()
	r.base(t)
	want := `"level":"WARN","msg":"CARGO_RATE_LIMIT_PER_MINUTES is not a setting of cargod: it is ignored; did you mean CARGO_RATE_LIMIT_PER_MINUTE?"`
	if log := r.stderr.String(); !strings.Contains(log, want) {
		t.Errorf("cargod's log at start lacks %s:\n%s", want, log)
	}
}

// TestAStartLogsHowFarItsReplayHasComeUnprobed: the replay of a whole
// stream takes minutes; the log says how far it has come on its own, not
// only when something probes /readyz.
func TestAStartLogsHowFarItsReplayHasComeUnprobed(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a history of events first")
	}
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store, _, err := streamgen.Embedded(ctx, t.TempDir(), streamgen.Options{Events: startupEvents})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	projector := projections.NewProjector(store, slog.New(slog.DiscardHandler), projections.NewModels().All()...)
	done := make(chan struct{})
	go func() { defer close(done); projector.Run(ctx) }()
	defer func() { cancel(); <-done }()

	var logged lockedbuf.Buffer
	if err := waitCaughtUp(ctx, slog.New(slog.NewJSONHandler(&logged, nil)), projector, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	type progress struct {
		Msg     string
		Applied uint64 `json:"appliedSequence"`
		Stream  uint64 `json:"streamSequence"`
		Percent uint64
	}
	var lines []progress
	for line := range strings.Lines(logged.String()) {
		var p progress
		if json.Unmarshal([]byte(line), &p) == nil && p.Msg == "replaying the stream into the read models" {
			lines = append(lines, p)
		}
	}
	if len(lines) == 0 {
		t.Fatalf("no progress of the replay logged:\n%s", logged.String())
	}
	if p := lines[0]; p.Stream != projector.Target() || p.Applied >= p.Stream || p.Percent != 100*p.Applied/p.Stream {
		t.Errorf("first progress line %+v, want the replay of %d events under way", p, projector.Target())
	}
}

// A stream of more replicas than a single NATS server holds is refused by
// the server in its own words: cargod names the setting that asked for
// them, and its value for a single server.
func TestReplicasASingleServerCannotHoldAreNamedWithTheSetting(t *testing.T) {
	t.Parallel()
	nats := natstest.Start(t, &server.Options{Port: server.RANDOM_PORT})
	r := startReplica(t.TempDir(), map[string]string{"CARGO_NATS_URL": nats.ClientURL(), "CARGO_NATS_REPLICAS": "3",
		"CARGO_SIGNING_KEY": "", "CARGO_SECRETS_KEY": testSecretsKey})
	select {
	case <-r.done:
	case <-time.After(time.Minute):
		r.stop()
		t.Fatalf("cargod still starting a minute on:\n%s", r.stderr.String())
	}
	if r.err == nil || !strings.HasPrefix(r.err.Error(), "CARGO_NATS_REPLICAS:") || !strings.Contains(r.err.Error(), "set it to 1 for a single server") {
		t.Errorf("the start ended with %v, want it to name CARGO_NATS_REPLICAS", r.err)
	}
}

// A start that leaves nobody able to manage the service (demo mode off,
// as off loopback, and no admin) says on stdout how to get an admin: the
// README's demo credentials were refused without a word of why.
func TestAStartWithNoAdminSaysHowToGetOne(t *testing.T) {
	t.Parallel()
	const hint = "No active admin organisation"
	for _, tt := range []struct {
		name   string
		before map[string]string // a start on the same data directory before, if any
		env    map[string]string
		hints  bool
	}{
		{name: "demo mode off and no admin secret", env: map[string]string{"CARGO_DEMO": "false"}, hints: true},
		{name: "an admin secret", env: map[string]string{"CARGO_DEMO": "false", "CARGO_ADMIN_SECRET": "bootstrap-admin-secret"}},
		{name: "an admin an earlier start made", before: map[string]string{"CARGO_DEMO": "false", "CARGO_ADMIN_SECRET": "bootstrap-admin-secret"},
			env: map[string]string{"CARGO_DEMO": "false"}},
		{name: "only the demo's admin, with demo mode off", before: map[string]string{}, env: map[string]string{"CARGO_DEMO": "false"}, hints: true},
		{name: "demo mode", env: map[string]string{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if tt.before != nil {
				startServer(t, dir, tt.before).stop()
			}
			s := startServer(t, dir, tt.env)
			if got := strings.Contains(s.stdout.String(), hint); got != tt.hints {
				t.Errorf("says how to get an admin: %v, want %v; stdout:\n%s", got, tt.hints, s.stdout.String())
			}
		})
	}
}

// TestADataDirectoryInUseStopsTheStartNamingTheFix: a second cargod on a
// data directory the first has open stops at start, naming the setting
// and what to do; it said only that the directory was in use.
func TestADataDirectoryInUseStopsTheStartNamingTheFix(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := startReplica(dir, nil)
	defer func() { first.stop(); <-first.done }()
	first.base(t)
	second := startReplica(dir, nil)
	second.stoppedByItself(t)
	if err := second.err; err == nil || !strings.HasPrefix(err.Error(), "CARGO_DATA_DIR: ") || !errors.Is(err, eventstore.ErrDataDirInUse) ||
		!strings.Contains(err.Error(), "give this one a data directory of its own") {
		t.Errorf("the second cargod on %s ended with %v, want the setting, the directory in use and the fix", dir, err)
	}
}

// A stream that lost events (a damaged file, a restore cut short) has
// sequences without one, which the read models built from it lack: a start
// says so in an ERROR line, for the operator to look (cargoctl verify).
func TestAStartOnAStreamThatLostEventsSaysHowMany(t *testing.T) {
	t.Parallel()
	url := natstest.StartServer(t, 0)
	ctx := context.Background()
	stream := natstest.HandMadeStream(t, url, "CARGO", "cargo.evt.>")
	for _, subject := range []string{"cargo.evt.org.lost-1", "cargo.evt.org.lost-2"} {
		natstest.Publish(t, url, subject, nil, []byte(`{}`))
	}
	for _, seq := range []uint64{1, 2} {
		if err := stream.DeleteMsg(ctx, seq); err != nil {
			t.Fatal(err)
		}
	}
	r := startReplica(t.TempDir(), map[string]string{"CARGO_NATS_URL": url, "CARGO_NATS_REPLICAS": "1", "CARGO_SIGNING_KEY": "", "CARGO_SECRETS_KEY": testSecretsKey})
	defer func() { r.stop(); <-r.done }()
	r.base(t)
	const want = `"msg":"cargod: the event stream has sequences without an event: events lost (a damaged file, a restore cut short), which the read models built from it lack; cargoctl verify lists where","stream":"CARGO","missing":2}`
	if !strings.Contains(r.stderr.String(), want) {
		t.Errorf("stderr:\n%s\nwant a line ending %s", r.stderr.String(), want)
	}
}

// A stop that finds a request still in flight after CARGO_SHUTDOWN_TIMEOUT
// cuts it off, says so, and is a stop all the same, without an error (it
// ended with Go's "context deadline exceeded", exit 1, which supervisors
// take for a failure, and no "cargod stopped").
func TestAStopPastTheShutdownTimeoutCutsOffWhatIsInFlightAndIsAStop(t *testing.T) {
	t.Parallel()
	started, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	answered := make(chan error, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String())
		if err == nil {
			resp.Body.Close()
		}
		answered <- err
	}()
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the request did not reach the handler")
	}
	var logs lockedbuf.Buffer
	err = stopServing(srv, 100*time.Millisecond, slog.New(slog.NewJSONHandler(&logs, nil)))
	if err != nil || !strings.Contains(logs.String(), `"msg":"shutting down: requests still in flight after CARGO_SHUTDOWN_TIMEOUT cut off","after":"100ms"`) {
		t.Errorf("stopServing = %v; logged:\n%s", err, logs.String())
	}
	select {
	case err := <-answered:
		if err == nil {
			t.Error("the request in flight was answered, not cut off")
		}
	case <-time.After(30 * time.Second):
		t.Error("the request in flight was not cut off")
	}
}

// A data directory that cannot be made, and a listen port's nkey that is
// no user's public key, stop the start naming the setting to fix, as every
// other setting found wrong does, in a line logged as the others are.
func TestAStartStoppedByADataDirectoryOrAListenNkeyNamesTheSettingInALoggedLine(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, dataDir string
		env           map[string]string
		setting       string
	}{
		{"a data directory under a regular file", filepath.Join(file, "data"), nil, "CARGO_DATA_DIR: "},
		{"a listen nkey that is no user's", t.TempDir(), map[string]string{"CARGO_NATS_LISTEN": "127.0.0.1:0", "CARGO_NATS_LISTEN_NKEY": "Ufoo"}, "CARGO_NATS_LISTEN_NKEY: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := startReplica(tt.dataDir, tt.env)
			r.stoppedByItself(t)
			if r.err == nil || !strings.HasPrefix(r.err.Error(), tt.setting) {
				t.Errorf("run ended with %v, want an error that begins %q", r.err, tt.setting)
			}
			// The error is logged as the other lines are, so that a log
			// collector reads it, and main does not print it again.
			lines := strings.Split(strings.TrimSpace(r.stderr.String()), "\n")
			var last struct{ Level, Msg, Err string }
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Level != "ERROR" || last.Msg != "cargod could not start" || !strings.HasPrefix(last.Err, tt.setting) {
				t.Errorf("the last line logged is %q, want a JSON line at ERROR with the error", lines[len(lines)-1])
			}
			if !errors.As(r.err, new(loggedError)) {
				t.Errorf("run's error %v is not marked as logged: main would print it again", r.err)
			}
		})
	}
}
