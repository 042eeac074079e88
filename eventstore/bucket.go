package eventstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/nats-io/nats.go/jetstream"
)

// Bucket is a small key-value store shared by all replicas, for state that
// is not an event: the token signing key, and remembered responses to
// idempotent requests. Keys may hold letters, digits, '-', '_' and '='.
// Its errors are domain.ErrStoreUnavailable when a wait may cure them, as
// the stream's are: an Idempotency-Key is looked up before its write, and
// NATS out of reach there is the same 503 to retry, not a 500.
type Bucket struct {
	kv        jetstream.KeyValue
	store     *Store
	stream    string // the bucket's stream
	keyPrefix string // of the subjects of its keys
}

// Bucket opens (creating if needed) the bucket name of this store; values
// older than ttl are dropped (0 keeps them). Its values are read from the
// stream's leader (see lastFromLeader).
func (s *Store) Bucket(ctx context.Context, name string, ttl time.Duration) (*Bucket, error) {
	bucket := s.name + "_" + name
	// nats.go's names of the bucket's stream and subjects.
	b := &Bucket{store: s, stream: "KV_" + bucket, keyPrefix: "$KV." + bucket + "."}
	err := s.provision(ctx, "bucket "+name, func(ctx context.Context) (err error) {
		b.kv, err = s.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:   bucket,
			TTL:      ttl,
			Storage:  jetstream.FileStorage,
			Replicas: s.replicas,
		})
		if err != nil {
			return err
		}
		// The bucket's stream on a cluster answers reads only once it
		// has a leader, moments after it is made: until then a read
		// fails. The bucket is provisioned once a read answers.
		if _, err := s.lastFromLeader(ctx, b.stream, b.keyPrefix+"provisioned"); !errors.Is(err, jetstream.ErrMsgNotFound) && err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("eventstore: bucket %s: %w", name, err)
	}
	return b, nil
}

// Get returns the value of key, and false when there is none.
func (b *Bucket) Get(ctx context.Context, key string) ([]byte, bool, error) {
	v, _, ok, err := b.GetRevision(ctx, key)
	return v, ok, err
}

// GetRevision is Get with the value's revision, for Update. It reads from
// the stream's leader, not as nats.go's KeyValue does (see lastFromLeader).
func (b *Bucket) GetRevision(ctx context.Context, key string) ([]byte, uint64, bool, error) {
	if !validKey(key) {
		return nil, 0, false, fmt.Errorf("eventstore: get %q: %w", key, jetstream.ErrInvalidKey)
	}
	m, err := b.store.lastFromLeader(ctx, b.stream, b.keyPrefix+key)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, unavailable(fmt.Errorf("eventstore: get %s: %w", key, err))
	}
	// A deletion or purge is a marker of the key's: it has no value.
	if op := m.Header.Get("KV-Operation"); op == "DEL" || op == "PURGE" {
		return nil, 0, false, nil
	}
	return m.Data, m.Sequence, true, nil
}

// validKey reports whether key is one nats.go's KeyValue takes: a subject
// token or several, of letters, digits and -/_=.
func validKey(key string) bool {
	if key == "" || key[0] == '.' || key[len(key)-1] == '.' || strings.Contains(key, "..") {
		return false
	}
	return !strings.ContainsFunc(key, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-/_=.", c))
	})
}

// Update replaces the value of key if it is still at revision; false if
// someone changed it first.
func (b *Bucket) Update(ctx context.Context, key string, value []byte, revision uint64) (bool, error) {
	_, err := b.kv.Update(ctx, key, value, revision)
	if errors.Is(err, jetstream.ErrKeyExists) {
		return false, nil
	}
	if err != nil {
		return false, b.store.refusedWrite(fmt.Errorf("eventstore: update %s: %w", key, err))
	}
	return true, nil
}

// Delete removes key.
func (b *Bucket) Delete(ctx context.Context, key string) error {
	if err := b.kv.Delete(ctx, key); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return b.store.refusedWrite(fmt.Errorf("eventstore: delete %s: %w", key, err))
	}
	return nil
}

// Create stores value under key unless the key already has a value. It
// returns the value stored afterwards (so concurrent creators all end up
// with the first one) and whether this call stored it.
func (b *Bucket) Create(ctx context.Context, key string, value []byte) ([]byte, bool, error) {
	for range 50 {
		_, err := b.kv.Create(ctx, key, value)
		if err == nil {
			return value, true, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return nil, false, b.store.refusedWrite(fmt.Errorf("eventstore: create %s: %w", key, err))
		}
		v, ok, err := b.Get(ctx, key)
		if err != nil || ok {
			return v, false, err
		}
		// Taken, yet no value to read: deleted since (a request that
		// failed frees its Idempotency-Key), and free to create again.
		// Not a lagging follower: reads go to the leader (lastFromLeader).
		// The pause keeps a key that other requests take and free again
		// and again from making this a busy loop.
		pause(ctx, 100*time.Millisecond)
	}
	// A key taken yet unreadable that long is the store not answering:
	// the caller may retry (a 503), as for any other bucket error.
	return nil, false, fmt.Errorf("%w: eventstore: %s is taken, but its value was not readable within 5 s", domain.ErrStoreUnavailable, key)
}

// Put stores value under key.
func (b *Bucket) Put(ctx context.Context, key string, value []byte) error {
	if _, err := b.kv.Put(ctx, key, value); err != nil {
		return b.store.refusedWrite(fmt.Errorf("eventstore: put %s: %w", key, err))
	}
	return nil
}

// Keys returns the keys that have a value.
func (b *Bucket) Keys(ctx context.Context) ([]string, error) {
	keys, err := b.kv.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, nil
	}
	if err != nil {
		return nil, unavailable(fmt.Errorf("eventstore: keys of %s: %w", b.kv.Bucket(), err))
	}
	return keys, nil
}
