package eventstore

import (
	"context"
	"errors"
	"fmt"
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
	kv jetstream.KeyValue
}

// Bucket opens (creating if needed) the bucket name of this store; values
// older than ttl are dropped (0 keeps them).
func (s *Store) Bucket(ctx context.Context, name string, ttl time.Duration) (*Bucket, error) {
	var kv jetstream.KeyValue
	err := s.provision(ctx, "bucket "+name, func(ctx context.Context) (err error) {
		kv, err = s.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:   s.name + "_" + name,
			TTL:      ttl,
			Storage:  jetstream.FileStorage,
			Replicas: s.replicas,
		})
		if err != nil {
			return err
		}
		// Reads go to the bucket's stream directly (direct get), whose
		// servers on a cluster answer only once its replicas are in
		// place, moments after the stream is: until then a read finds
		// no responders. The bucket is provisioned once a read answers.
		if _, err := kv.Get(ctx, "provisioned"); !errors.Is(err, jetstream.ErrKeyNotFound) && err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("eventstore: bucket %s: %w", name, err)
	}
	return &Bucket{kv: kv}, nil
}

// Get returns the value of key, and false when there is none.
func (b *Bucket) Get(ctx context.Context, key string) ([]byte, bool, error) {
	v, _, ok, err := b.GetRevision(ctx, key)
	return v, ok, err
}

// GetRevision is Get with the value's revision, for Update.
func (b *Bucket) GetRevision(ctx context.Context, key string) ([]byte, uint64, bool, error) {
	e, err := b.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, unavailable(fmt.Errorf("eventstore: get %s: %w", key, err))
	}
	return e.Value(), e.Revision(), true, nil
}

// Update replaces the value of key if it is still at revision; false if
// someone changed it first.
func (b *Bucket) Update(ctx context.Context, key string, value []byte, revision uint64) (bool, error) {
	_, err := b.kv.Update(ctx, key, value, revision)
	if errors.Is(err, jetstream.ErrKeyExists) {
		return false, nil
	}
	if err != nil {
		return false, unavailable(fmt.Errorf("eventstore: update %s: %w", key, err))
	}
	return true, nil
}

// Delete removes key.
func (b *Bucket) Delete(ctx context.Context, key string) error {
	if err := b.kv.Delete(ctx, key); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return unavailable(fmt.Errorf("eventstore: delete %s: %w", key, err))
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
			return nil, false, unavailable(fmt.Errorf("eventstore: create %s: %w", key, err))
		}
		v, ok, err := b.Get(ctx, key)
		if err != nil || ok {
			return v, false, err
		}
		// Taken, yet no value to read: deleted since (a request that
		// failed frees its Idempotency-Key), and free to create again;
		// or, on a cluster, read from a replica that has not the other
		// creator's value yet, which comes within moments.
		pause(ctx, 100*time.Millisecond)
	}
	// A replica that lags that long is the store not answering: the
	// caller may retry (a 503), as for any other bucket error.
	return nil, false, fmt.Errorf("%w: eventstore: %s is taken, but its value was not readable within 5 s", domain.ErrStoreUnavailable, key)
}

// Put stores value under key.
func (b *Bucket) Put(ctx context.Context, key string, value []byte) error {
	if _, err := b.kv.Put(ctx, key, value); err != nil {
		return unavailable(fmt.Errorf("eventstore: put %s: %w", key, err))
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
