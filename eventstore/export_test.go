package eventstore

import (
	"context"
	"fmt"

	"github.com/cargostream/cargostream/domain"

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
		if _, err := msgs.Next(ctx, 0); err != nil {
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

// DropRecordCache empties the store's cache of events read by sequence,
// and returns how many it held (an event in both generations counts
// twice) and the bytes it counted them at.
func DropRecordCache(s *Store) (events, counted int) {
	c := s.records
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, gen := range []map[uint64]domain.Record{c.young, c.old} {
		for _, r := range gen {
			events, counted = events+1, counted+recordBytes(r)
		}
	}
	c.young, c.old, c.youngBytes = map[uint64]domain.Record{}, nil, 0
	return events, counted
}

// MessagesSent is how many messages the store has sent NATS on its
// connection (requests among them), for tests that count requests.
func MessagesSent(s *Store) uint64 { return s.nc.Stats().OutMsgs }
