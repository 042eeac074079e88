package vault

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// memBucket is a bucket in memory with revisions, as eventstore's.
type memBucket struct {
	values    map[string][]byte
	revisions map[string]uint64
	// beforeCreate, if set, runs once before the next Create: another
	// replica storing a value first.
	beforeCreate func()
}

func newBucket(values map[string][]byte) *memBucket {
	b := &memBucket{values: map[string][]byte{}, revisions: map[string]uint64{}}
	for k, v := range values {
		b.put(k, v)
	}
	return b
}

func (b *memBucket) put(key string, value []byte) {
	b.values[key] = bytes.Clone(value)
	b.revisions[key]++
}

func (b *memBucket) GetRevision(_ context.Context, key string) ([]byte, uint64, bool, error) {
	v, ok := b.values[key]
	return bytes.Clone(v), b.revisions[key], ok, nil
}

func (b *memBucket) Create(_ context.Context, key string, value []byte) ([]byte, bool, error) {
	if f := b.beforeCreate; f != nil {
		b.beforeCreate = nil
		f()
	}
	if v, ok := b.values[key]; ok {
		return v, false, nil
	}
	b.put(key, value)
	return value, true, nil
}

func (b *memBucket) Update(_ context.Context, key string, value []byte, revision uint64) (bool, error) {
	if b.revisions[key] != revision {
		return false, nil
	}
	b.put(key, value)
	return true, nil
}

func (b *memBucket) Keys(context.Context) ([]string, error) {
	var keys []string
	for k := range b.values {
		keys = append(keys, k)
	}
	return keys, nil
}

func newKey() []byte {
	k := make([]byte, KeySize)
	rand.Read(k)
	return k
}

// sealedWith returns secret as a vault with key stores it under name.
func sealedWith(t *testing.T, key []byte, name string, secret []byte) []byte {
	t.Helper()
	b := newBucket(nil)
	v, err := New(b, Keys{Current: key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Get(context.Background(), name, fixed(secret)); err != nil {
		t.Fatal(err)
	}
	return b.values[name]
}

func fixed(secret []byte) func() ([]byte, error) {
	return func() ([]byte, error) { return secret, nil }
}

func TestGet(t *testing.T) {
	key, other := newKey(), newKey()
	secret := []byte("-----BEGIN PRIVATE KEY-----\nsecret\n-----END PRIVATE KEY-----\n")
	fresh := []byte("a freshly generated secret")
	tests := []struct {
		name    string
		stored  map[string][]byte
		keys    func(dir string) Keys
		race    []byte // stored by another replica just before this one creates
		want    []byte
		err     error
		errText string
		// after: the value stored under "s" must open with this key to
		// want; nil: the bucket is as it was.
		after []byte
		// generated: the log says that this vault generated the secret
		generated bool
	}{
		{name: "a new secret is generated and sealed", keys: func(string) Keys { return Keys{Current: key} },
			want: fresh, after: key, generated: true},
		{name: "a sealed secret opens", stored: map[string][]byte{"s": nil}, keys: func(string) Keys { return Keys{Current: key} },
			want: secret},
		{name: "a plaintext secret of an earlier version is sealed in place", stored: map[string][]byte{"s": secret},
			keys: func(string) Keys { return Keys{Current: key} }, want: secret, after: key},
		{name: "a secret sealed with the previous key is sealed with the current one", stored: map[string][]byte{"s": nil},
			keys: func(string) Keys { return Keys{Current: other, Previous: key} }, want: secret, after: other},
		{name: "a wrong key is refused", stored: map[string][]byte{"s": nil}, keys: func(string) Keys { return Keys{Current: other} },
			err: ErrWrongKey, errText: "s was sealed with another key"},
		{name: "a wrong key is refused though a previous one is given", stored: map[string][]byte{"s": nil},
			keys: func(string) Keys { return Keys{Current: other, Previous: newKey()} }, err: ErrWrongKey},
		{name: "a value moved from another name is refused", stored: map[string][]byte{"s": sealedWith(t, key, "t", secret)},
			keys: func(string) Keys { return Keys{Current: key} }, err: ErrWrongKey},
		{name: "a sealed secret without the key file is refused", stored: map[string][]byte{"s": nil},
			keys: func(dir string) Keys { return Keys{File: filepath.Join(dir, "secrets.key")} }, err: ErrNoKey, errText: "secrets.key is missing"},
		{name: "no new key file while another secret is sealed", stored: map[string][]byte{"t": sealedWith(t, key, "t", secret)},
			keys: func(dir string) Keys { return Keys{File: filepath.Join(dir, "secrets.key")} }, err: ErrNoKey, errText: "t is sealed"},
		{name: "without a key or key file nothing is sealed", keys: func(string) Keys { return Keys{} },
			err: ErrNoKey, errText: "one is needed to seal"},
		{name: "a plaintext secret without a key or key file stays", stored: map[string][]byte{"s": secret},
			keys: func(string) Keys { return Keys{} }, err: ErrNoKey},
		{name: "the first replica's secret wins", keys: func(string) Keys { return Keys{Current: key} },
			race: sealedWith(t, key, "s", secret), want: secret, after: key},
		{name: "a plaintext secret stored first by an earlier version is sealed", keys: func(string) Keys { return Keys{Current: key} },
			race: secret, want: secret, after: key},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stored := map[string][]byte{}
			for k, v := range tt.stored {
				if v == nil {
					v = sealedWith(t, key, k, secret)
				}
				stored[k] = v
			}
			b := newBucket(stored)
			if tt.race != nil {
				b.beforeCreate = func() { b.put("s", tt.race) }
			}
			before := map[string][]byte{}
			for k, v := range b.values {
				before[k] = v
			}
			dir := t.TempDir()
			var log strings.Builder
			v, err := New(b, tt.keys(dir), slog.New(slog.NewTextHandler(&log, nil)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := v.Get(context.Background(), "s", fixed(fresh))
			if generated := strings.Contains(log.String(), `msg="vault: generated a secret and sealed it" secret=s`); generated != tt.generated {
				t.Errorf("the log says the secret was generated: %v, want %v; the log:\n%s", generated, tt.generated, log.String())
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
			if tt.after == nil {
				if len(b.values) != len(before) || !bytes.Equal(b.values["s"], before["s"]) || !bytes.Equal(b.values["t"], before["t"]) {
					t.Errorf("the bucket changed: %q, before %q", b.values, before)
				}
				return
			}
			if bytes.Contains(b.values["s"], tt.want) {
				t.Errorf("stored %q: the plaintext shows", b.values["s"])
			}
			check, _ := New(newBucket(map[string][]byte{"s": b.values["s"]}), Keys{Current: tt.after}, nil)
			if opened, _ := check.Get(context.Background(), "s", nil); !bytes.Equal(opened, tt.want) {
				t.Errorf("stored value opens to %q with the current key, want %q", opened, tt.want)
			}
		})
	}
}

// TestTheKeyFile: the first secret sealed creates the key file, only its
// owner may read it, and a vault on it later opens the secret.
func TestTheKeyFile(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "secrets.key")
	b := newBucket(nil)
	v, err := New(b, Keys{File: file}, nil)
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
	key, err := ReadKeyFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, keys := range []Keys{{File: file}, {Current: key}} {
		again, err := New(b, keys, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := again.Get(ctx, "s", nil); err != nil || !bytes.Equal(got, secret) {
			t.Errorf("with %+v: %q, %v", keys, got, err)
		}
	}
	if err := CreateFile(file, []byte("another")); !errors.Is(err, os.ErrExist) {
		t.Errorf("CreateFile over the key file: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(file)); len(entries) != 1 {
		t.Errorf("the directory holds %d entries, want the key file alone", len(entries))
	}
	os.WriteFile(file, []byte("not a key\n"), 0o600)
	if _, err := New(b, Keys{File: file}, nil); err == nil || !strings.Contains(err.Error(), file) {
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
		key, err := ParseKey(tt.in)
		switch {
		case tt.err == "" && (err != nil || len(key) != KeySize || key[31] != 31):
			t.Errorf("ParseKey(%q) = %v, %v", tt.in, key, err)
		case tt.err != "" && (err == nil || err.Error() != tt.err):
			t.Errorf("ParseKey(%q) error %v, want %q", tt.in, err, tt.err)
		}
	}
}
