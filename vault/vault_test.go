package vault_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/internal/hangwatch"
	"github.com/cargostream/cargostream/internal/storetest"
	"github.com/cargostream/cargostream/vault"
)

// TestMain ends a run that hangs before go test's timeout would, with the
// stacks of the tests still running last (see hangwatch).
func TestMain(m *testing.M) { hangwatch.Main(m) }

var buckets atomic.Int64

// newBucket returns a new bucket of store holding values, put there as
// they are.
func newBucket(t *testing.T, store *eventstore.Store, values map[string][]byte) *eventstore.Bucket {
	t.Helper()
	ctx := context.Background()
	b, err := store.Bucket(ctx, fmt.Sprintf("vault%d", buckets.Add(1)), 0)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range values {
		if err := b.Put(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// entry is a value in a bucket and its revision.
type entry struct {
	value    []byte
	revision uint64
}

// contents returns what b holds.
func contents(t *testing.T, b *eventstore.Bucket) map[string]entry {
	t.Helper()
	ctx := context.Background()
	keys, err := b.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := map[string]entry{}
	for _, k := range keys {
		v, revision, ok, err := b.GetRevision(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			c[k] = entry{v, revision}
		}
	}
	return c
}

func sameContents(a, b map[string]entry) bool {
	if len(a) != len(b) {
		return false
	}
	for k, e := range a {
		if f, ok := b[k]; !ok || f.revision != e.revision || !bytes.Equal(f.value, e.value) {
			return false
		}
	}
	return true
}

func newKey() []byte {
	k := make([]byte, vault.KeySize)
	rand.Read(k)
	return k
}

// sealedWith returns secret as a vault with key stores it under name.
// sealedWhereNil is the bucket contents stored, with secret sealed with
// key under each name whose value is nil.
func sealedWhereNil(t *testing.T, store *eventstore.Store, key []byte, stored map[string][]byte, secret []byte) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for k, v := range stored {
		if v == nil {
			v = sealedWith(t, store, key, k, secret)
		}
		out[k] = v
	}
	return out
}

func sealedWith(t *testing.T, store *eventstore.Store, key []byte, name string, secret []byte) []byte {
	t.Helper()
	b := newBucket(t, store, nil)
	v, err := vault.New(b, vault.Keys{Current: key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Get(context.Background(), name, fixed(secret)); err != nil {
		t.Fatal(err)
	}
	return contents(t, b)[name].value
}

// opens returns the secret stored in b under name, opened by a vault with
// key. Such a vault writes a value that is not sealed with key (sealing
// it): the test fails if it wrote b.
func opens(t *testing.T, b *eventstore.Bucket, key []byte, name string) []byte {
	t.Helper()
	before := contents(t, b)
	v, err := vault.New(b, vault.Keys{Current: key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := v.Get(context.Background(), name, nothingStored)
	if err != nil {
		t.Fatalf("%s does not open with the key: %v", name, err)
	}
	if after := contents(t, b); !sameContents(after, before) {
		t.Errorf("opening %s with the key wrote the bucket: it was not sealed with the key", name)
	}
	return secret
}

func fixed(secret []byte) func() ([]byte, error) {
	return func() ([]byte, error) { return secret, nil }
}

// nothingStored is the generate of a vault that must find a secret.
func nothingStored() ([]byte, error) { return nil, errors.New("no secret is stored") }

// What a vault logs when it generated the secret "s", and when it sealed
// a secret stored otherwise.
const (
	generatedS = `msg="vault: generated a secret and sealed it" secret=s`
	sealedS    = `msg="vault: sealed a secret with the current key" secret=s`
)

func TestGet(t *testing.T) {
	ctx := context.Background()
	store := storetest.Open(t)
	key, other := newKey(), newKey()
	secret := []byte("-----BEGIN PRIVATE KEY-----\nsecret\n-----END PRIVATE KEY-----\n")
	fresh := []byte("a freshly generated secret")
	// Races: a replica with the same keys generates secret and stores it
	// first; an earlier version stores it in plaintext first.
	replicaStores := func(t *testing.T, b *eventstore.Bucket, keys vault.Keys) {
		var log strings.Builder
		replica, err := vault.New(b, keys, slog.New(slog.NewTextHandler(&log, nil)))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := replica.Get(ctx, "s", fixed(secret)); err != nil || !bytes.Equal(got, secret) || !strings.Contains(log.String(), generatedS) {
			t.Fatalf("the other replica got %q, %v; its log:\n%s", got, err, log.String())
		}
	}
	earlierVersionStores := func(t *testing.T, b *eventstore.Bucket, _ vault.Keys) {
		if _, created, err := b.Create(ctx, "s", secret); err != nil || !created {
			t.Fatalf("the earlier version's create: %v, %v", created, err)
		}
	}
	tests := []struct {
		name   string
		stored map[string][]byte // nil: secret sealed with key under its name
		keys   func(dir string) vault.Keys
		// race, if set, stores "s" after the vault read it and found none,
		// before it creates it: it runs in the vault's generate, which
		// the vault calls in between.
		race    func(t *testing.T, b *eventstore.Bucket, keys vault.Keys)
		want    []byte
		err     error
		errText string
		// after: the value stored under "s" must open with this key to
		// want; nil: the bucket is as it was.
		after []byte
		// generated: the log says that this vault generated the secret
		generated bool
		// sealed: the log says that this vault sealed a stored secret
		sealed bool
	}{
		{name: "a new secret is generated and sealed", keys: func(string) vault.Keys { return vault.Keys{Current: key} },
			want: fresh, after: key, generated: true},
		{name: "a sealed secret opens", stored: map[string][]byte{"s": nil}, keys: func(string) vault.Keys { return vault.Keys{Current: key} },
			want: secret},
		{name: "a plaintext secret of an earlier version is sealed in place", stored: map[string][]byte{"s": secret},
			keys: func(string) vault.Keys { return vault.Keys{Current: key} }, want: secret, after: key, sealed: true},
		{name: "a secret sealed with the previous key is sealed with the current one", stored: map[string][]byte{"s": nil},
			keys: func(string) vault.Keys { return vault.Keys{Current: other, Previous: key} }, want: secret, after: other, sealed: true},
		{name: "a wrong key is refused", stored: map[string][]byte{"s": nil}, keys: func(string) vault.Keys { return vault.Keys{Current: other} },
			err: vault.ErrWrongKey, errText: "s was sealed with another key"},
		{name: "a wrong key is refused though a previous one is given", stored: map[string][]byte{"s": nil},
			keys: func(string) vault.Keys { return vault.Keys{Current: other, Previous: newKey()} }, err: vault.ErrWrongKey},
		{name: "a value moved from another name is refused", stored: map[string][]byte{"s": sealedWith(t, store, key, "t", secret)},
			keys: func(string) vault.Keys { return vault.Keys{Current: key} }, err: vault.ErrWrongKey},
		{name: "a sealed secret without the key file is refused", stored: map[string][]byte{"s": nil},
			keys: func(dir string) vault.Keys { return vault.Keys{File: filepath.Join(dir, "secrets.key")} }, err: vault.ErrNoKey, errText: "secrets.key is missing"},
		{name: "no new key file while another secret is sealed", stored: map[string][]byte{"t": nil},
			keys: func(dir string) vault.Keys { return vault.Keys{File: filepath.Join(dir, "secrets.key")} }, err: vault.ErrNoKey, errText: "t is sealed"},
		{name: "without a key or key file nothing is sealed", keys: func(string) vault.Keys { return vault.Keys{} },
			err: vault.ErrNoKey, errText: "one is needed to seal"},
		{name: "a plaintext secret without a key or key file stays", stored: map[string][]byte{"s": secret},
			keys: func(string) vault.Keys { return vault.Keys{} }, err: vault.ErrNoKey},
		{name: "the first replica's secret wins", keys: func(string) vault.Keys { return vault.Keys{Current: key} },
			race: replicaStores, want: secret, after: key},
		{name: "a plaintext secret stored first by an earlier version is sealed", keys: func(string) vault.Keys { return vault.Keys{Current: key} },
			race: earlierVersionStores, want: secret, after: key, sealed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBucket(t, store, sealedWhereNil(t, store, key, tt.stored, secret))
			before := contents(t, b)
			dir := t.TempDir()
			keys := tt.keys(dir)
			generate, raced := fixed(fresh), false
			if tt.race != nil {
				generate = func() ([]byte, error) {
					if !raced {
						raced = true
						tt.race(t, b, keys)
					}
					return fresh, nil
				}
			}
			var log strings.Builder
			v, err := vault.New(b, keys, slog.New(slog.NewTextHandler(&log, nil)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := v.Get(ctx, "s", generate)
			if tt.race != nil && !raced {
				t.Fatal("the vault generated no secret: the race did not run between its read and its create")
			}
			if generated := strings.Contains(log.String(), generatedS); generated != tt.generated {
				t.Errorf("the log says the secret was generated: %v, want %v; the log:\n%s", generated, tt.generated, log.String())
			}
			if sealed := strings.Contains(log.String(), sealedS); sealed != tt.sealed {
				t.Errorf("the log says the stored secret was sealed: %v, want %v; the log:\n%s", sealed, tt.sealed, log.String())
			}
			if tt.err != nil {
				if !errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.errText) {
					t.Fatalf("err = %v, want %v with %q", err, tt.err, tt.errText)
				}
				if _, err := os.Stat(filepath.Join(dir, "secrets.key")); err == nil {
					t.Error("a key file was created")
				}
			} else if err != nil || !bytes.Equal(got, tt.want) {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
			after := contents(t, b)
			if tt.after == nil {
				if !sameContents(after, before) {
					t.Errorf("the bucket changed: %v, before %v", after, before)
				}
				return
			}
			if bytes.Contains(after["s"].value, tt.want) {
				t.Errorf("stored %q: the plaintext shows", after["s"].value)
			}
			if opened := opens(t, b, tt.after, "s"); !bytes.Equal(opened, tt.want) {
				t.Errorf("stored value opens to %q with the current key, want %q", opened, tt.want)
			}
		})
	}
}

// logHook is a log handler that runs on, once, when a record whose
// message starts with msg is handled, before handling it.
type logHook struct {
	slog.Handler
	msg string
	on  func()
	ran bool
}

func (h *logHook) Handle(ctx context.Context, r slog.Record) error {
	if !h.ran && strings.HasPrefix(r.Message, h.msg) {
		h.ran = true
		h.on()
	}
	return h.Handler.Handle(ctx, r)
}

// TestAReplicaThatSealsAPlaintextSecretFirstWins: two replicas seal a
// plaintext secret of an earlier version at once. The one whose update
// comes second finds the revision it read replaced: it reads the secret
// the other sealed, and writes nothing.
//
// The vault runs nothing of the test's between reading a value and
// updating it but its log: creating the key file on the way, it logs so.
// The other replica seals the secret then, with the key in that file.
func TestAReplicaThatSealsAPlaintextSecretFirstWins(t *testing.T) {
	ctx := context.Background()
	secret := []byte("a plaintext secret of an earlier version")
	b := newBucket(t, storetest.Open(t), map[string][]byte{"s": secret})
	file := filepath.Join(t.TempDir(), "secrets.key")
	var sealedFirst entry
	var log, otherLog strings.Builder
	hook := &logHook{Handler: slog.NewTextHandler(&log, nil), msg: "vault: generated the key that seals the secrets", on: func() {
		other, err := vault.New(b, vault.Keys{File: file}, slog.New(slog.NewTextHandler(&otherLog, nil)))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := other.Get(ctx, "s", nothingStored); err != nil || !bytes.Equal(got, secret) || !strings.Contains(otherLog.String(), sealedS) {
			t.Fatalf("the other replica got %q, %v; its log:\n%s", got, err, otherLog.String())
		}
		sealedFirst = contents(t, b)["s"]
	}}
	v, err := vault.New(b, vault.Keys{File: file}, slog.New(hook))
	if err != nil {
		t.Fatal(err)
	}
	got, err := v.Get(ctx, "s", nothingStored)
	if !hook.ran {
		t.Fatalf("the vault did not log that it created the key file; its log:\n%s", log.String())
	}
	if err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("got %q, %v; want %q", got, err, secret)
	}
	if strings.Contains(log.String(), sealedS) {
		t.Errorf("the vault says it sealed the secret, which the other replica sealed first; its log:\n%s", log.String())
	}
	if now := contents(t, b)["s"]; now.revision != sealedFirst.revision || !bytes.Equal(now.value, sealedFirst.value) {
		t.Errorf("the secret the other replica sealed (revision %d) was replaced (revision %d)", sealedFirst.revision, now.revision)
	}
	key, err := vault.ReadKeyFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if opened := opens(t, b, key, "s"); !bytes.Equal(opened, secret) {
		t.Errorf("the stored value opens to %q with the key file, want %q", opened, secret)
	}
}

// TestTheKeyFile: the first secret sealed creates the key file, only its
// owner may read it, and a vault on it later opens the secret.
func TestTheKeyFile(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "secrets.key")
	b := newBucket(t, storetest.Open(t), nil)
	v, err := vault.New(b, vault.Keys{File: file}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a key file before anything was sealed: %v", err)
	}
	secret, err := v.Get(ctx, "s", fixed([]byte("generated")))
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(file)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file %v, mode %v; want one only its owner may read", err, info)
	}
	key, err := vault.ReadKeyFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, keys := range []vault.Keys{{File: file}, {Current: key}} {
		again, err := vault.New(b, keys, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := again.Get(ctx, "s", nil); err != nil || !bytes.Equal(got, secret) {
			t.Errorf("with %+v: %q, %v", keys, got, err)
		}
	}
	if err := vault.CreateFile(file, []byte("another")); !errors.Is(err, os.ErrExist) {
		t.Errorf("vault.CreateFile over the key file: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(file)); len(entries) != 1 {
		t.Errorf("the directory holds %d entries, want the key file alone", len(entries))
	}
	os.WriteFile(file, []byte("not a key\n"), 0o600)
	if _, err := vault.New(b, vault.Keys{File: file}, nil); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("a key file that holds no key: %v", err)
	}
}

func TestParseKey(t *testing.T) {
	tests := []struct {
		in, err string
	}{
		{"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", ""},
		{"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n", ""},
		{"AAECAwQFBgcICQoLDA0ODw==", "16 bytes, not 32"},
		{"not base64!", "not base64"},
		{"", "0 bytes, not 32"},
	}
	for _, tt := range tests {
		key, err := vault.ParseKey(tt.in)
		switch {
		case tt.err == "" && (err != nil || len(key) != vault.KeySize || key[31] != 31):
			t.Errorf("vault.ParseKey(%q) = %v, %v", tt.in, key, err)
		case tt.err != "" && (err == nil || err.Error() != tt.err):
			t.Errorf("vault.ParseKey(%q) error %v, want %q", tt.in, err, tt.err)
		}
	}
}

// TestReseal: a vault given the key being replaced seals again every
// secret the bucket holds, not only those it is asked for, and a secret
// that opens with neither key stops it, naming the secret.
func TestReseal(t *testing.T) {
	ctx := context.Background()
	store := storetest.Open(t)
	old, current := newKey(), newKey()
	secret := []byte("a secret no setting asks for")
	tests := []struct {
		name    string
		stored  map[string][]byte // nil: secret sealed with old under its name
		keys    vault.Keys
		want    int
		errText string
	}{
		{name: "every secret sealed with the previous key is sealed with the current one",
			stored: map[string][]byte{"s": nil, "t": nil}, keys: vault.Keys{Current: current, Previous: old}, want: 2},
		{name: "a plaintext secret of an earlier version is sealed too",
			stored: map[string][]byte{"s": nil, "u": secret}, keys: vault.Keys{Current: current, Previous: old}, want: 2},
		{name: "secrets sealed with the current key already stay as they are",
			stored: map[string][]byte{"s": nil}, keys: vault.Keys{Current: old}, want: 1},
		{name: "an empty bucket has nothing to seal", keys: vault.Keys{Current: current, Previous: old}, want: 0},
		{name: "a wrong previous key is refused, naming the secret",
			stored: map[string][]byte{"s": nil}, keys: vault.Keys{Current: current, Previous: newKey()}, errText: "s was sealed with another key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBucket(t, store, sealedWhereNil(t, store, old, tt.stored, secret))
			before := contents(t, b)
			v, err := vault.New(b, tt.keys, nil)
			if err != nil {
				t.Fatal(err)
			}
			n, err := v.Reseal(ctx)
			if tt.errText != "" {
				if !errors.Is(err, vault.ErrWrongKey) || !strings.Contains(err.Error(), tt.errText) {
					t.Fatalf("err = %v, want %v with %q", err, vault.ErrWrongKey, tt.errText)
				}
				if after := contents(t, b); !sameContents(after, before) {
					t.Errorf("the bucket changed: %v, before %v", after, before)
				}
				return
			}
			if err != nil || n != tt.want {
				t.Fatalf("Reseal = %d, %v; want %d secrets", n, err, tt.want)
			}
			for name := range tt.stored {
				if opened := opens(t, b, tt.keys.Current, name); !bytes.Equal(opened, secret) {
					t.Errorf("%s opens to %q with the current key, want %q", name, opened, secret)
				}
			}
		})
	}
}
