package eventstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Consume hands each event matching filters to fn through the durable
// consumer name, which all replicas share: every event is handled until fn
// returns nil for it, by one replica at a time, in stream order. An event
// whose fn fails is delivered again after a pause, so a crash part way
// through is repaired by redelivery; fn must therefore be idempotent.
// Consume returns when ctx ends.
func (s *Store) Consume(ctx context.Context, name string, filters []string, fn func(Record) error, onError func(Record, error)) error {
	cfg := jetstream.ConsumerConfig{
		Durable:       s.prefix + "-" + name,
		Description:   "Cargostream reactor " + name,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       time.Minute,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		MaxAckPending: 1, // one event at a time: reactors see the stream in order
		Replicas:      s.replicas,
	}
	// Several filters need NATS 2.10; one is set the way older servers
	// understand too.
	if len(filters) == 1 {
		cfg.FilterSubject = filters[0]
	} else {
		cfg.FilterSubjects = filters
	}
	cons, err := s.js.CreateOrUpdateConsumer(ctx, s.name, cfg)
	if err != nil {
		return fmt.Errorf("eventstore: consumer %s: %w", name, err)
	}
	for ctx.Err() == nil {
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			if ctx.Err() == nil {
				pause(ctx, time.Second)
			}
			continue
		}
		for m := range batch.Messages() {
			r, err := s.followable(m)
			if err == nil {
				err = fn(r)
			}
			switch {
			case err != nil && ctx.Err() != nil:
				// Cut short by shutdown, which is no failure: redelivered
				// at once, to this process restarted or another replica.
				m.Nak()
			case err != nil:
				onError(r, err)
				m.NakWithDelay(redeliveryDelay(m))
			default:
				// Acknowledged even when shutdown has begun: an event
				// handled but left unacknowledged blocks the consumer
				// (one event at a time) for AckWait, a minute, after a
				// restart. A lost acknowledgement only means a
				// redelivery, which fn tolerates.
				ackCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout)
				m.DoubleAck(ackCtx)
				cancel()
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && ctx.Err() == nil {
			pause(ctx, time.Second)
		}
	}
	return ctx.Err()
}

// ackTimeout bounds the wait for the server to confirm an
// acknowledgement.
const ackTimeout = 5 * time.Second

// redeliveryDelay backs off from a second to a minute as an event keeps
// failing.
func redeliveryDelay(m jetstream.Msg) time.Duration {
	meta, err := m.Metadata()
	if err != nil {
		return time.Second
	}
	d := time.Second << min(meta.NumDelivered, 6)
	return min(d, time.Minute)
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
