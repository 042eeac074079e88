package eventstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// replayBatch is how many events Replay hands over at a time, and how
// many its consumer keeps buffered ahead of them.
const replayBatch = 1000

// Replay hands the events from sequence from to sequence to (both
// included) to fn, oldest first, replayBatch at a time, until fn returns
// an error or ctx ends, and returns the last sequence it handed over
// (from-1 if none). It is Subscribe for a reader that only catches up,
// such as read models rebuilt at start: one ordered consumer that stops
// at the end, reading ahead while fn works, with no idle callbacks. An
// event it cannot read is handed on without a type (see recordFrom), as
// Subscribe does. fn may keep the slice it is given. It ends before to
// when its consumer has nothing more to hand over (the stream's last
// events missing, or the consumer's node behind: the caller tells which,
// see Missing), and hands over nothing past to.
func (s *Store) Replay(ctx context.Context, from, to uint64, fn func([]domain.Record) error) (uint64, error) {
	from = max(from, 1)
	last := to
	if last < from {
		return from - 1, nil
	}
	msgs, err := s.ordered(ctx, nil, from, jetstream.PullMaxMessages(replayBatch), jetstream.StopAfter(last-from+1))
	if err != nil {
		return from - 1, fmt.Errorf("eventstore: replay: %w", err)
	}
	defer msgs.close()
	stop := context.AfterFunc(ctx, msgs.Stop)
	defer stop()
	done := from - 1
	batch := make([]domain.Record, 0, replayBatch)
	hand := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := fn(batch); err != nil {
			return err
		}
		done, batch = batch[len(batch)-1].Sequence, make([]domain.Record, 0, replayBatch)
		return nil
	}
	for done < last {
		m, err := msgs.Next(ctx, 2*time.Second)
		if ctx.Err() != nil {
			return done, ctx.Err()
		}
		if errors.Is(err, nats.ErrTimeout) {
			// Nothing came: the end, if the consumer has nothing
			// pending (no message would tell, when none is left at all).
			if info, ierr := msgs.consumer().Info(ctx); ierr == nil && info.NumPending == 0 {
				return done, hand()
			}
			continue
		}
		if err != nil {
			return done, fmt.Errorf("eventstore: replay after %d: %w", done, err)
		}
		r, meta, err := s.followableWith(m)
		if err != nil {
			return done, err
		}
		if r.Sequence > last {
			break // to is missing: what follows it is not this replay's
		}
		batch = append(batch, r)
		end := meta.NumPending == 0 // nothing more to hand over now
		if len(batch) == replayBatch || r.Sequence >= last || end {
			if err := hand(); err != nil {
				return done, err
			}
		}
		if end {
			break
		}
	}
	return done, hand()
}
