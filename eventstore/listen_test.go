package eventstore

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// newUserSeed writes the seed of a new nkey user to a file and returns the
// file and the user's public key.
func newUserSeed(t *testing.T) (file, public string) {
	t.Helper()
	user, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := user.Seed()
	public, _ = user.PublicKey()
	file = filepath.Join(t.TempDir(), "user.nk")
	if err := os.WriteFile(file, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	return file, public
}

// TestTheListenerAcceptsOnlyTheHolderOfItsSeed starts the embedded server
// with a listen address on a data directory of an earlier version (events,
// no seed file), and connects to the port as other processes would.
func TestTheListenerAcceptsOnlyTheHolderOfItsSeed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	older := openForTest(t, Options{DataDir: dir})
	if _, err := older.Append(ctx, domain.Aggregate{Type: "quote", ID: "q1"}, 0, decisionOf("q1", 2)); err != nil {
		t.Fatal(err)
	}
	older.Close()

	s := openForTest(t, Options{DataDir: dir, Listen: "127.0.0.1:-1"})
	seedFile := filepath.Join(dir, ListenSeedFile)
	if info, err := os.Stat(seedFile); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("seed file: %v, mode %v; want one only its owner may read", err, info)
	}
	// The process's own connections still work.
	if _, err := s.Append(ctx, domain.Aggregate{Type: "quote", ID: "q2"}, 0, decisionOf("q2", 1)); err != nil {
		t.Fatalf("append in-process: %v", err)
	}

	seedOption, err := nats.NkeyOptionFromSeed(seedFile)
	if err != nil {
		t.Fatal(err)
	}
	otherSeed, _ := newUserSeed(t)
	otherOption, err := nats.NkeyOptionFromSeed(otherSeed)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		option nats.Option
		admit  bool
	}{
		{"no credentials", nil, false},
		{"another nkey user's seed", otherOption, false},
		{"the in-process user's password", nats.UserInfo(inProcessUser, s.inProcessPassword), false},
		{"a token", nats.Token("cargostream"), false},
		{"the seed in the data directory", seedOption, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []nats.Option
			if tt.option != nil {
				opts = append(opts, tt.option)
			}
			nc, err := nats.Connect(s.ClientURL(), opts...)
			if tt.admit {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				nc.Close()
				return
			}
			if err == nil {
				nc.Close()
				t.Fatal("admitted")
			}
			if !errors.Is(err, nats.ErrAuthorization) {
				t.Errorf("refused with %v, want an authorization violation", err)
			}
		})
	}

	// A tool reads the stream through the port with the seed file.
	tool := openForTest(t, Options{URL: s.ClientURL(), NkeyFile: seedFile, Existing: true})
	if events, err := tool.Load(ctx, domain.Aggregate{Type: "quote", ID: "q1"}); err != nil || len(events) != 2 {
		t.Errorf("the earlier version's events through the port: %d, %v", len(events), err)
	}
	tool.Close()

	// A restart keeps the seed.
	public := s.ListenNkey()
	s.Close()
	again := openForTest(t, Options{DataDir: dir, Listen: "127.0.0.1:-1"})
	if again.ListenNkey() != public {
		t.Errorf("after a restart the listener accepts %s, before %s", again.ListenNkey(), public)
	}
}

// TestTheListenerAcceptsTheNkeyItIsGiven: with ListenNkey the data
// directory gets no seed file, and only that user's seed is accepted.
func TestTheListenerAcceptsTheNkeyItIsGiven(t *testing.T) {
	dir := t.TempDir()
	seedFile, public := newUserSeed(t)
	s := openForTest(t, Options{DataDir: dir, Listen: "127.0.0.1:-1", ListenNkey: public})
	if _, err := os.Stat(filepath.Join(dir, ListenSeedFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a seed file in the data directory: %v", err)
	}
	option, err := nats.NkeyOptionFromSeed(seedFile)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(s.ClientURL(), option)
	if err != nil {
		t.Fatalf("the given user was refused: %v", err)
	}
	nc.Close()
	if nc, err := nats.Connect(s.ClientURL()); !errors.Is(err, nats.ErrAuthorization) {
		if err == nil {
			nc.Close()
		}
		t.Errorf("without credentials: %v, want an authorization violation", err)
	}

	for _, bad := range []string{"not-a-key", mustSeed(t)} {
		if _, err := Open(context.Background(), Options{DataDir: t.TempDir(), Listen: "127.0.0.1:-1", ListenNkey: bad}); err == nil {
			t.Errorf("ListenNkey %.8s… accepted", bad)
		}
	}
}

// mustSeed is a seed where a public key belongs: a mistake to refuse.
func mustSeed(t *testing.T) string {
	file, _ := newUserSeed(t)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAListenAddressInUseIsRefusedSayingSo: the embedded server logs
// nothing, so a port taken by another process must come back as Open's
// error, with the address, and the data directory is free again after it.
func TestAListenAddressInUseIsRefusedSayingSo(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	dir := t.TempDir()
	began := time.Now()
	s, err := Open(context.Background(), Options{DataDir: dir, Listen: held.Addr().String()})
	if err == nil {
		s.Close()
		t.Fatalf("the embedded server started on %s, which another listener holds", held.Addr())
	}
	if !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), held.Addr().String()) {
		t.Errorf("after %s: %v, want the address %s in use", time.Since(began).Round(time.Millisecond), err, held.Addr())
	}
	openForTest(t, Options{DataDir: dir})
}

// TestAListenPortOfZeroIsAnyFreeOne: port 0 is any free port, as with
// every Go listener (and CARGO_ADDR); the server itself reads 0 as its
// default, 4222, which another NATS server on the machine may hold.
func TestAListenPortOfZeroIsAnyFreeOne(t *testing.T) {
	s := openForTest(t, Options{DataDir: t.TempDir(), Listen: "127.0.0.1:0"})
	u, err := url.Parse(s.ClientURL())
	if err != nil || u.Port() == "" || u.Port() == "0" || u.Port() == "4222" {
		t.Fatalf("client URL %q (%v), want a port the system chose", s.ClientURL(), err)
	}
	nc, err := nats.Connect(s.ClientURL(), nats.Timeout(5*time.Second))
	if err == nil {
		nc.Close()
	}
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Errorf("a client without the seed on %s: %v, want it refused as unauthorized", s.ClientURL(), err)
	}
}
