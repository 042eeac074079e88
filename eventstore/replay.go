package eventstore

import (
	"context"
	"fmt"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/nats-io/nats.go/jetstream"
)

// replayBatch is how many events Replay hands over at a time, and how
// many its consumer keeps buffered ahead of them.
const replayBatch = 1000

// Replay hands the events from sequence from to sequence to (both
// included, both in the stream) to fn, oldest first, replayBatch at a
// time, until fn returns an error or ctx ends, and returns the last
// sequence it handed over (from-1 if none). It is Subscribe for a reader that only
// catches up, such as read models rebuilt at start: one ordered consumer
// that stops at the end, reading ahead while fn works, with no idle
// callbacks and no per-event checks for the end. An event it cannot read
// is handed on without a type (see recordFrom), as Subscribe does. fn may
// keep the slice it is given. It ends before to, with the last sequence
// it handed over, when the stream holds nothing more: see Missing.
func (s *Store) Replay(ctx context.Context, from, to uint64, fn func([]domain.Record) error) (uint64, error) {
	from = max(from, 1)
	last := to
	if last < from {
		return from - 1, nil
	}
	msgs, err := s.ordered(ctx, nil, from, jetstream.PullMaxMessages(replayBatch), jetstream.StopAfter(last-from+1),
		jetstream.PullHeartbeat(time.Second), jetstream.PullExpiry(5*time.Second))
	if err != nil {
		return from - 1, fmt.Errorf("eventstore: replay: %w", err)
	}
	defer msgs.close()
	stop := context.AfterFunc(ctx, msgs.Stop)
	defer stop()
	done := from - 1
	batch := make([]domain.Record, 0, replayBatch)
	for done < last {
		m, err := msgs.Next()
		if ctx.Err() != nil {
			return done, ctx.Err()
		}
		if err != nil {
			return done, fmt.Errorf("eventstore: replay after %d: %w", done, err)
		}
		r, err := s.followable(m)
		if err != nil {
			return done, err
		}
		batch = append(batch, r)
		// Nothing more in the stream now ends the replay short of to:
		// its last events are missing (deleted, or lost with a damaged
		// file), which the caller is to tell from events not come yet.
		meta, merr := m.Metadata()
		end := merr == nil && meta.NumPending == 0
		if len(batch) == replayBatch || r.Sequence >= last || end {
			if err := fn(batch); err != nil {
				return done, err
			}
			done, batch = r.Sequence, make([]domain.Record, 0, replayBatch)
		}
		if end {
			break
		}
	}
	return done, nil
}
