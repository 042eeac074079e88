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
// older than ttl are dropped (0 keeps them). Its reads go to the stream's
// leader, like the events' (see directGets).
func (s *Store) Bucket(ctx context.Context, name string, ttl time.Duration) (*Bucket, error) {
	bucket := s.name + "_" + name
	var kv jetstream.KeyValue
	err := s.provision(ctx, "bucket "+name, func(ctx context.Context) (err error) {
		if _, err := s.js.CreateOrUpdateStream(ctx, bucketStream(bucket, ttl, s.replicas)); err != nil {
			return err
		}
		if kv, err = s.js.KeyValue(ctx, bucket); err != nil {
			return err
		}
		// The bucket's stream on a cluster answers reads only once it
		// has a leader, moments after it is made: until then a read
		// fails. The bucket is provisioned once a read answers.
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

// bucketStream is the stream of a key-value bucket as nats.go's
// CreateOrUpdateKeyValue makes it (prepareKeyValueConfig: one value a
// key, file storage, no size limits) but for directGets. nats.go's
// KeyValue binds to it as to its own.
func bucketStream(bucket string, ttl time.Duration, replicas int) jetstream.StreamConfig {
	// nats.go caps the duplicate window at 2 minutes, and at the TTL
	// when that is shorter: the server refuses a longer one.
	dupes := 2 * time.Minute
	if ttl > 0 && ttl < dupes {
		dupes = ttl
	}
	return jetstream.StreamConfig{
		Name:              "KV_" + bucket,
		Subjects:          []string{"$KV." + bucket + ".>"},
		MaxMsgsPerSubject: 1,
		MaxBytes:          -1,
		MaxAge:            ttl,
		MaxMsgSize:        -1,
		Storage:           jetstream.FileStorage,
		Replicas:          replicas,
		AllowRollup:       true,
		DenyDelete:        true,
		Duplicates:        dupes,
		MaxMsgs:           -1,
		MaxConsumers:      -1,
		Discard:           jetstream.DiscardNew,
		AllowDirect:       directGets,
	}
}

// directGets is AllowDirect of the streams of buckets and object stores:
// off, so that a read is answered by the stream's leader, which has every
// write it acknowledged. nats.go makes them with AllowDirect on, and then
// any of the stream's servers answers a read (a direct get): on a cluster,
// a follower that has not yet applied the last writes, which a write's
// quorum does not wait for. An object or a value stored through one
// replica was then often not found when read at once through another
// (TestAWriteAcknowledgedOnAClusterIsReadAtOnceThroughEveryNode), and an
// Idempotency-Key repeated at once through another replica sometimes
// found the first request still pending (409) after it was answered
// (cmd/cargod's TestARequestRepeatedThroughTheOtherReplica…). The
// events' stream has no direct gets either. A read through the leader is
// one request, as a direct get is; what is lost is spreading reads over
// the followers, which these stores' reads (one per idempotent POST or
// document download, beside its write or its consumer) do not need.
// nats.go chooses how to read from the stream's settings as it binds, so
// a stream made with direct gets by an earlier version is updated as a
// store opens it.
const directGets = false

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
		// failed frees its Idempotency-Key), and free to create again.
		// Not a lagging follower: reads go to the leader (directGets).
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
