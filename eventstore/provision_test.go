package eventstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore/natstest"
	"github.com/cargostream/cargostream/internal/lockedbuf"
	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
)

func TestOpenWaitsForAServerThatIsNotUpYet(t *testing.T) {
	// A free loopback port, for a server that starts only later.
	port := natstest.FreePorts(t, 1)[0]

	opened := make(chan error, 1)
	var logged lockedbuf.Buffer
	go func() {
		s, err := Open(context.Background(), Options{URL: fmt.Sprintf("nats://127.0.0.1:%d", port), Stream: "LATE",
			Logger: slog.New(slog.NewTextHandler(&logged, nil))})
		if err == nil {
			t.Cleanup(s.Close)
			_, err = s.Append(context.Background(), domain.Aggregate{Type: "quote", ID: "q1"}, 0, decisionOf("d1", 2))
		}
		opened <- err
	}()
	// The server starts once Open has found it not up and tries again (or
	// has given up, which the select below tells).
	waitUntil(t, "Open to try again", func() bool {
		return len(opened) > 0 || strings.Contains(logged.String(), "NATS not ready; trying again")
	})
	natstest.StartServer(t, port)
	select {
	case err := <-opened:
		if err != nil {
			t.Fatalf("open once the server is up: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("open did not finish within 30 s of the server's start")
	}
}

func TestReplicasStartedTogetherBothOpen(t *testing.T) {
	url := natstest.StartServer(t, 0)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(context.Background(), Options{URL: url})
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			if _, err := s.Bucket(context.Background(), "secrets", 0); err != nil {
				errs <- err
			}
			if _, err := s.Objects(context.Background(), "documents"); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a replica failed to start: %v", err)
	}
}

func TestASettingsMistakeFailsAtOnce(t *testing.T) {
	url := natstest.StartServer(t, 0)
	// Three replicas on a server that is not a cluster: no wait helps.
	_, err := Open(context.Background(), Options{URL: url, Replicas: 3})
	if err == nil || transient(err) {
		t.Fatalf("open with 3 replicas on one server = %v, want an error that is not transient", err)
	}
}

func TestTransientErrorsAreThoseAWaitMayCure(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{context.DeadlineExceeded, true},
		{fmt.Errorf("publish: %w", nats.ErrTimeout), true},
		// An object's chunk, published asynchronously, not acknowledged.
		{fmt.Errorf("put object: %w", jetstream.ErrAsyncPublishTimeout), true},
		{nats.ErrNoResponders, true},
		// What a publish says when no server of the stream answers (a
		// cluster without a leader): nothing was stored.
		{fmt.Errorf("append: %w", jetstream.ErrNoStreamResponse), true},
		{&jetstream.APIError{Code: 503, ErrorCode: 10008, Description: "JetStream system temporarily unavailable"}, true},
		{&jetstream.APIError{Code: 500, ErrorCode: 10074, Description: "replicas > 1 not supported in non-clustered mode"}, false},
		{&jetstream.APIError{Code: 400, ErrorCode: 10071, Description: "wrong last sequence: 5"}, false},
		// A leader change while an atomic batch was sent: none of it stored.
		{&jetstream.APIError{Code: 400, ErrorCode: 10176, Description: "atomic publish batch is incomplete"}, true},
		{errors.New("disk full"), false},
	} {
		if got := transient(tt.err); got != tt.want {
			t.Errorf("transient(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// TestACredentialsFileThatCannotWorkFailsAtOnce: the client reads the
// credentials file at each connection attempt and retries for ever, so
// a file without a user JWT and its seed must fail Open at once, naming
// the file, not leave it waiting for a server that is up.
func TestACredentialsFileThatCannotWorkFailsAtOnce(t *testing.T) {
	url := natstest.StartServer(t, 0)
	file := filepath.Join(t.TempDir(), "cargod.creds")
	if err := os.WriteFile(file, []byte("not a credentials file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := Open(ctx, Options{URL: url, CredsFile: file})
	if err == nil {
		s.Close()
		t.Fatal("Open accepted a credentials file with neither a JWT nor a seed")
	}
	if errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), file) {
		t.Errorf("Open = %v, want at once an error that names %s", err, file)
	}
}

// TestCredentialsAreAUserJWTAndItsSeed: what nsc writes passes the check
// of a credentials file; a seed alone, or a JWT alone, does not.
func TestCredentialsAreAUserJWTAndItsSeed(t *testing.T) {
	account, _ := nkeys.CreateAccount()
	user, _ := nkeys.CreateUser()
	userPublic, _ := user.PublicKey()
	userSeed, _ := user.Seed()
	token, err := jwt.NewUserClaims(userPublic).Encode(account)
	if err != nil {
		t.Fatal(err)
	}
	creds, err := jwt.FormatUserConfig(token, userSeed)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		content []byte
		ok      bool
	}{
		{"a user JWT and its seed", creds, true},
		{"a seed alone", userSeed, false},
		{"a JWT alone", []byte(token), false},
	} {
		file := filepath.Join(t.TempDir(), "user.creds")
		if err := os.WriteFile(file, c.content, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := checkCredentials(file); (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// With ConnectOnce, Open does not wait for a server that is not up: the
// failure of its one attempt is the error, saying why, for a tool to
// report at once.
func TestOpenWithConnectOnceFailsAtItsOneAttemptSayingWhy(t *testing.T) {
	url := fmt.Sprintf("nats://127.0.0.1:%d", natstest.RefusingPort(t))
	// A deadline far beyond one attempt: reaching it is the failure.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	s, err := Open(ctx, Options{URL: url, Existing: true, ConnectOnce: true})
	if err == nil {
		s.Close()
	}
	var connErr *ConnectError
	if !errors.As(err, &connErr) || connErr.URL != url || !errors.Is(err, syscall.ECONNREFUSED) || ctx.Err() != nil {
		t.Errorf("error = %v, want a *ConnectError of %s, connection refused, before the deadline", err, url)
	}
}

// TestTheWaitForAServerSaysWhyItCannotConnect: while Open waits for an
// external server, the warnings say why the connection fails (from the
// client's first retry on), so that a port or host name mistyped is told
// from a cluster still starting.
func TestTheWaitForAServerSaysWhyItCannotConnect(t *testing.T) {
	port := natstest.RefusingPort(t)
	warnings := make(chan string, 100)
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		select {
		case warnings <- string(p):
		default:
		}
		return len(p), nil
	}), nil))
	ctx, cancel := context.WithCancel(context.Background())
	opened := make(chan struct{})
	go func() {
		defer close(opened)
		if s, err := Open(ctx, Options{URL: fmt.Sprintf("nats://127.0.0.1:%d", port), Logger: log}); err == nil {
			s.Close()
		}
	}()
	defer func() { cancel(); <-opened }()
	var seen []string
	for deadline := time.After(30 * time.Second); ; {
		select {
		case w := <-warnings:
			if strings.Contains(w, "NATS not ready") && strings.Contains(w, "connection refused") {
				return
			}
			seen = append(seen, w)
		case <-deadline:
			t.Fatalf("no warning in 30 s of waiting for a server that is not there said why: %s", seen)
		}
	}
}

// writerFunc is an io.Writer made of a function.
type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// A connection to an external server that is lost, and comes back, is
// logged both times, naming the server: a reader following the stream
// (cargoctl events --follow) or an operator reading cargod's log learns
// why nothing comes, from where, and that it comes again. The loss is a
// warning, its end is not (it was a WARN too, and the loss named no
// server).
func TestALostConnectionAndItsReturnAreLogged(t *testing.T) {
	relay := natstest.StartRelay(t, natstest.Start(t, &server.Options{Port: server.RANDOM_PORT}).Addr().String())
	lost := lineSignal{text: `level=WARN msg="eventstore: the connection to NATS is lost; reconnecting" connection=cargostream server=` + relay.URL(),
		c: make(chan struct{}, 16)}
	back := lineSignal{text: `level=INFO msg="eventstore: the connection to NATS is back" connection=cargostream server=` + relay.URL(),
		c: make(chan struct{}, 16)}
	openForTest(t, Options{URL: relay.URL(), Logger: slog.New(slog.NewTextHandler(io.MultiWriter(lost, back), nil))})
	relay.Cut()
	select {
	case <-lost.c:
	case <-time.After(time.Minute):
		t.Fatal("no word of the connection lost within a minute")
	}
	relay.Restore()
	select {
	case <-back.c:
	case <-time.After(time.Minute):
		t.Fatal("no word of the connection back within a minute")
	}
}

// TestAServerWithoutJetStreamIsNamedAsTheCause: such a server answers no
// JetStream request, which alone reads as a cluster still forming. The
// wait, and its end, say what the server says of itself.
func TestAServerWithoutJetStreamIsNamedAsTheCause(t *testing.T) {
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("the test's NATS server did not start")
	}
	var logged lockedbuf.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	s, err := Open(ctx, Options{URL: "nats://" + srv.Addr().String(), Existing: true, ConnectOnce: true,
		Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err == nil {
		s.Close()
		t.Fatal("opened a store on a server without JetStream")
	}
	const why = "has no JetStream; start it with JetStream on"
	if !strings.Contains(err.Error(), why) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("open = %v, want the deadline and why", err)
	}
	if !strings.Contains(logged.String(), why) {
		t.Errorf("the waits logged %q, want why", logged.String())
	}
}
