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
	cons, err := s.js.CreateOrUpdateConsumer(ctx, s.name, jetstream.ConsumerConfig{
		Durable:        s.prefix + "-" + name,
		Description:    "Cargostream reactor " + name,
		FilterSubjects: filters,
		AckPolicy:      jetstream.AckExplicitPolicy,
		AckWait:        time.Minute,
		DeliverPolicy:  jetstream.DeliverAllPolicy,
		MaxAckPending:  1, // one event at a time: reactors see the stream in order
		Replicas:       s.replicas,
	})
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
			if err != nil {
				if ctx.Err() == nil { // cut short by shutdown is no failure
					onError(r, err)
				}
				m.NakWithDelay(redeliveryDelay(m))
				continue
			}
			// A lost acknowledgement only means a redelivery, which
			// fn tolerates.
			m.DoubleAck(ctx)
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && ctx.Err() == nil {
			pause(ctx, time.Second)
		}
	}
	return ctx.Err()
}

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
