package eventstore

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"
)

// RawReplay reads every event of the stream, up to its last at the call,
// with a bare ordered consumer that only counts the messages: the
// yardstick of replay, which decodes nothing.
func RawReplay(ctx context.Context, s *Store) (int, error) {
	last, err := s.LastSequence(ctx)
	if err != nil || last == 0 {
		return 0, err
	}
	// The consumer of Replay, with its settings.
	msgs, err := s.ordered(ctx, nil, 1, jetstream.PullMaxMessages(replayBatch), jetstream.StopAfter(last))
	if err != nil {
		return 0, err
	}
	defer msgs.close()
	// The stream never loses an event: its last sequence is its count.
	for n := 1; ; n++ {
		if _, err := msgs.Next(); err != nil {
			return n - 1, fmt.Errorf("raw replay: %w", err)
		}
		if uint64(n) == last {
			return n, nil
		}
	}
}

// RawGets reads the messages at seqs with the stream's plain GetMsg,
// eight at a time as RecordsAt did, decoding nothing: the yardstick of a
// page of the audit log's reads.
func RawGets(ctx context.Context, s *Store, seqs []uint64) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, seq := range seqs {
		g.Go(func() error {
			_, err := s.stream.GetMsg(ctx, seq)
			return err
		})
	}
	return g.Wait()
}
