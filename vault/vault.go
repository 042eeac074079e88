// Package vault keeps the service's own secrets, such as the token signing
// key and the webhook key, in a bucket all replicas share, sealed with a
// key that is not kept there: whoever reads the bucket (anyone with access
// to the NATS server) learns nothing from it without the sealing key.
//
// A sealed value is "sealed:v1:", a random 24-byte nonce, and the secret
// encrypted with XChaCha20-Poly1305 under the sealing key, with the
// secret's name as additional data, so that a value cannot be passed off
// under another name. A value without that prefix was stored in plaintext
// by an earlier version: it is sealed in place the first time it is read.
package vault

import (
	"bytes"
	"context"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/chacha20poly1305"
)

// KeySize is the size of a sealing key.
const KeySize = chacha20poly1305.KeySize

// prefix starts every sealed value. Plaintext values of earlier versions
// (PEM, or 32 random bytes) start with it by chance once in 2^80.
var prefix = []byte("sealed:v1:")

// ErrNoKey means a secret must be sealed or opened and there is no
// sealing key: none was given, and the key file does not exist.
var ErrNoKey = errors.New("vault: no sealing key")

// ErrWrongKey means a sealed secret does not open with the sealing key
// (nor with the previous one): it was sealed with another key, or changed.
var ErrWrongKey = errors.New("vault: a secret does not open with the sealing key")

// Bucket is where the sealed values are kept: eventstore's Bucket.
type Bucket interface {
	GetRevision(ctx context.Context, key string) ([]byte, uint64, bool, error)
	Create(ctx context.Context, key string, value []byte) ([]byte, bool, error)
	Update(ctx context.Context, key string, value []byte, revision uint64) (bool, error)
	Keys(ctx context.Context) ([]string, error)
}

// Keys says which sealing keys a Vault uses.
type Keys struct {
	// Current seals and opens; KeySize bytes. Empty: the key in File.
	Current []byte
	// File keeps the current key (in base64) when Current is not given.
	// It is created when the first secret is sealed, never while the
	// bucket holds a sealed secret: a lost key file is an error, not a
	// new key that every sealed secret fails to open with.
	File string
	// Previous is the key being replaced: a secret that opens only with
	// it is sealed again with the current key.
	Previous []byte
}

// Vault gets secrets from a bucket, sealing and opening them.
type Vault struct {
	bucket   Bucket
	file     string
	current  cipher.AEAD // nil until the key file is created
	previous cipher.AEAD // nil: no key is being replaced
	log      *slog.Logger
}

// New returns a vault on bucket. It reads the key file if there is one.
func New(bucket Bucket, keys Keys, log *slog.Logger) (*Vault, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	v := &Vault{bucket: bucket, file: keys.File, log: log}
	current := keys.Current
	if len(current) == 0 && keys.File != "" {
		k, err := ReadKeyFile(keys.File)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		current = k
	}
	var err error
	if len(current) > 0 {
		if v.current, err = chacha20poly1305.NewX(current); err != nil {
			return nil, fmt.Errorf("vault: sealing key: %w", err)
		}
	}
	if len(keys.Previous) > 0 {
		if v.previous, err = chacha20poly1305.NewX(keys.Previous); err != nil {
			return nil, fmt.Errorf("vault: previous sealing key: %w", err)
		}
	}
	return v, nil
}

// Get returns the secret name, generating and storing it when the bucket
// has none; replicas that generate one at the same time all end up with
// the first one stored. A plaintext secret of an earlier version, or one
// sealed with the previous key, is sealed with the current key on the way.
func (v *Vault) Get(ctx context.Context, name string, generate func() ([]byte, error)) ([]byte, error) {
	for {
		stored, revision, ok, err := v.bucket.GetRevision(ctx, name)
		if err != nil {
			return nil, err
		}
		if !ok {
			secret, err := generate()
			if err != nil {
				return nil, err
			}
			sealed, err := v.seal(ctx, name, secret)
			if err != nil {
				return nil, err
			}
			if _, created, err := v.bucket.Create(ctx, name, sealed); err != nil || created {
				if created {
					// As a key deleted to be replaced is: the operator
					// learns that it was, and by which replica.
					v.log.Info("vault: generated a secret and sealed it", "secret", name)
				}
				return secret, err
			}
			continue // another replica stored one first: use that
		}
		secret, why, err := v.open(name, stored)
		if err != nil {
			return nil, err
		}
		if why == "" {
			return secret, nil
		}
		sealed, err := v.seal(ctx, name, secret)
		if err != nil {
			return nil, err
		}
		if updated, err := v.bucket.Update(ctx, name, sealed, revision); err != nil || !updated {
			if err != nil {
				return nil, err
			}
			continue // another replica sealed it first: read that
		}
		v.log.Info("vault: sealed a secret with the current key", "secret", name, "was", why)
		return secret, nil
	}
}

// Reseal seals with the current key every secret in the bucket that is
// not sealed with it, and returns how many secrets the bucket holds, all
// now sealed with the current key. Get seals only the secrets a start
// reads: one that no setting asks for (the generated signing key of an
// installation that now sets its own) would be left sealed with a key
// being replaced, and lost with it.
func (v *Vault) Reseal(ctx context.Context) (int, error) {
	names, err := v.bucket.Keys(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range names {
		_, err := v.Get(ctx, name, func() ([]byte, error) { return nil, errGone })
		if errors.Is(err, errGone) {
			continue // deleted meanwhile: there is nothing to seal
		}
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// errGone is Reseal's generate: a secret it listed is no longer stored.
var errGone = errors.New("vault: the secret is no longer stored")

// open returns the secret a stored value holds, and why it must be sealed
// again: "" when it is sealed with the current key.
func (v *Vault) open(name string, stored []byte) (secret []byte, why string, err error) {
	sealed, ok := bytes.CutPrefix(stored, prefix)
	if !ok {
		return stored, "plaintext, stored by an earlier version", nil
	}
	if v.current == nil {
		return nil, "", v.noKey(name)
	}
	if secret, err := openWith(v.current, name, sealed); err == nil {
		return secret, "", nil
	}
	if v.previous != nil {
		if secret, err := openWith(v.previous, name, sealed); err == nil {
			return secret, "sealed with the previous key", nil
		}
	}
	return nil, "", fmt.Errorf("%w: %s was sealed with another key, or changed", ErrWrongKey, name)
}

func openWith(aead cipher.AEAD, name string, sealed []byte) ([]byte, error) {
	if len(sealed) < aead.NonceSize() {
		return nil, errors.New("vault: sealed value too short")
	}
	nonce, ciphertext := sealed[:aead.NonceSize()], sealed[aead.NonceSize():]
	return aead.Open(nil, nonce, ciphertext, []byte(name))
}

// seal encrypts secret for storage under name, creating the key file if
// this is the first secret sealed.
func (v *Vault) seal(ctx context.Context, name string, secret []byte) ([]byte, error) {
	if v.current == nil {
		if err := v.createKey(ctx); err != nil {
			return nil, err
		}
	}
	nonce := make([]byte, v.current.NonceSize())
	rand.Read(nonce)
	out := append(bytes.Clone(prefix), nonce...)
	return v.current.Seal(out, nonce, secret, []byte(name)), nil
}

// createKey generates the sealing key and writes it to the key file,
// unless a secret in the bucket is sealed already: then the key file was
// lost, and a new key would leave secrets sealed with two keys.
func (v *Vault) createKey(ctx context.Context) error {
	if v.file == "" {
		return fmt.Errorf("%w: one is needed to seal the secrets kept in the bucket", ErrNoKey)
	}
	names, err := v.bucket.Keys(ctx)
	if err != nil {
		return err
	}
	for _, name := range names {
		stored, _, ok, err := v.bucket.GetRevision(ctx, name)
		if err != nil {
			return err
		}
		if ok && bytes.HasPrefix(stored, prefix) {
			return v.noKey(name)
		}
	}
	key := make([]byte, KeySize)
	rand.Read(key)
	if err := CreateFile(v.file, []byte(base64.StdEncoding.EncodeToString(key)+"\n")); err != nil {
		return fmt.Errorf("vault: creating the sealing key: %w", err)
	}
	v.current, _ = chacha20poly1305.NewX(key)
	v.log.Warn("vault: generated the key that seals the secrets kept in JetStream: back it up, apart from the data", "file", v.file)
	return nil
}

// noKey says that the secret name is sealed and there is no key.
func (v *Vault) noKey(name string) error {
	if v.file == "" {
		return fmt.Errorf("%w: %s is sealed, and no key was given to open it with", ErrNoKey, name)
	}
	return fmt.Errorf("%w: %s is sealed, and the key file %s is missing", ErrNoKey, name, v.file)
}

// ParseKey decodes a sealing key written in base64, as in a key file.
func ParseKey(s string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return nil, errors.New("not base64")
	}
	if len(key) != KeySize {
		return nil, fmt.Errorf("%d bytes, not %d", len(key), KeySize)
	}
	return key, nil
}

// ReadKeyFile reads the sealing key kept in path.
func ReadKeyFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("vault: sealing key file: %w", err)
	}
	key, err := ParseKey(string(b))
	if err != nil {
		return nil, fmt.Errorf("vault: sealing key file %s: %w", path, err)
	}
	return key, nil
}

// CreateFile writes a new file that only its owner may read, whole or not
// at all: it is written beside path, synced, and renamed into place, so a
// crash leaves either no file or the complete one. It fails if path
// exists.
func CreateFile(path string, content []byte) error {
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		if err == nil {
			err = os.ErrExist
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after the rename, there is nothing to remove
	// CreateTemp makes the file 0600 already; said here because it matters.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(content); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
