package eventstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Check reads every event of the stream up to sequence to and reports
// each problem to problem, and every event read to progress:
//   - each event decodes (domain.DecodeEvent, after the upcasters);
//   - its envelope is whole: type, schema version, event id (the same as
//     its Nats-Msg-Id), command and correlation ids, actor and time, as
//     commands write them (the tenant is not required: system, reactor
//     and anonymous actors have none);
//   - the stream's sequences follow on from each other, and so do each
//     aggregate's: a decision's first event was stored expecting the
//     aggregate's last event at a sequence (Nats-Expected-Last-Subject-
//     Sequence), which must be the aggregate's event before it in the
//     stream. (Later events of a decision, and decisions chained after
//     another, carry no expectation: they were stored together with it.)
//
// It reads the raw messages, not Records, because the expectations are
// headers that Records leave out.
func (s *Store) Check(ctx context.Context, to uint64, progress func(seq uint64), problem func(domain.StreamProblem)) error {
	if to == 0 {
		return nil
	}
	msgs, err := s.ordered(ctx, nil, 1, jetstream.PullMaxMessages(replayBatch))
	if err != nil {
		return fmt.Errorf("eventstore: check: %w", err)
	}
	defer msgs.close()
	stop := context.AfterFunc(ctx, msgs.Stop)
	defer stop()
	c := checker{s: s, problem: problem, last: map[string]uint64{}}
	for c.done < to {
		m, err := msgs.Next(ctx, 5*time.Second)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, nats.ErrTimeout):
			return fmt.Errorf("eventstore: check: nothing after sequence %d for 5s, while the stream reaches %d", c.done, to)
		case err != nil:
			return fmt.Errorf("eventstore: check after %d: %w", c.done, err)
		}
		meta, err := m.Metadata()
		if err != nil {
			return fmt.Errorf("eventstore: check after %d: %w", c.done, err)
		}
		if meta.Sequence.Stream > to {
			break
		}
		c.event(m.Subject(), meta.Sequence.Stream, m.Headers(), m.Data())
		progress(c.done)
		if meta.NumPending == 0 {
			break
		}
	}
	if c.done < to {
		// Nothing more came: the stream's last events are missing, or
		// the consumer's node is behind its leader, which Missing asks.
		switch missing, err := s.Missing(ctx, c.done+1, to); {
		case err != nil:
			return fmt.Errorf("eventstore: check after %d: %w", c.done, err)
		case !missing:
			return fmt.Errorf("eventstore: check: the events after %d did not come, while the stream reaches %d: check again", c.done, to)
		}
		problem(domain.StreamProblem{Sequence: to, Check: domain.CheckSequence, Problem: noEventsAt(c.done+1, to)})
	}
	return nil
}

// noEventsAt says that the stream has no events at the sequences
// from..to: "at sequence 169" for one, where it said "at sequences 169 to
// 169".
func noEventsAt(from, to uint64) string {
	if from == to {
		return fmt.Sprintf("the stream has no event at sequence %d", from)
	}
	return fmt.Sprintf("the stream has no events at sequences %d to %d", from, to)
}

// checker carries what Check knows of the events read so far.
type checker struct {
	s       *Store
	problem func(domain.StreamProblem)
	done    uint64            // the last sequence read
	last    map[string]uint64 // subject → the sequence of its last event
}

func (c *checker) event(subject string, seq uint64, h nats.Header, data []byte) {
	agg := c.s.aggregateOf(subject)
	report := func(check, format string, args ...any) {
		c.problem(domain.StreamProblem{Sequence: seq, Aggregate: agg, Check: check, Problem: fmt.Sprintf(format, args...)})
	}
	if seq != c.done+1 {
		report(domain.CheckSequence, "%s", noEventsAt(c.done+1, seq-1))
	}
	c.done = seq

	if want, ok := h[jetstream.ExpectedLastSubjSeqHeader]; ok {
		before := c.last[subject]
		switch expected, err := strconv.ParseUint(want[0], 10, 64); {
		case err != nil:
			report(domain.CheckSequence, "bad %s header %q", jetstream.ExpectedLastSubjSeqHeader, want[0])
		case expected != before && before == 0:
			report(domain.CheckSequence, "stored after the aggregate's event at sequence %d, which the stream does not have: this is its first", expected)
		case expected != before && expected == 0:
			report(domain.CheckSequence, "stored as the aggregate's first event, but it has one before, at sequence %d", before)
		case expected != before:
			report(domain.CheckSequence, "stored after the aggregate's event at sequence %d, but its event before is at %d", expected, before)
		}
	}
	c.last[subject] = seq

	r, err := c.s.recordFrom(subject, seq, time.Time{}, h, data) // the envelope is what is checked
	if err != nil {
		report(domain.CheckEnvelope, "%v", err)
		return
	}
	for _, f := range []struct{ header, value string }{
		{hdrType, r.Type}, {hdrEventID, r.EventID}, {hdrCommandID, r.CommandID},
		{hdrCorrelationID, r.CorrelationID}, {hdrActor, r.Actor},
	} {
		if f.value == "" {
			report(domain.CheckEnvelope, "no %s header", f.header)
		}
	}
	if id := h.Get(jetstream.MsgIDHeader); id != r.EventID {
		report(domain.CheckEnvelope, "its %s %q is not its %s %q", hdrEventID, r.EventID, jetstream.MsgIDHeader, id)
	}
	if r.SchemaVersion < 1 {
		report(domain.CheckEnvelope, "schema version %d", r.SchemaVersion)
	}
	if r.Type == "" {
		return
	}
	if _, err := domain.DecodeEvent(r.Type, r.Data); err != nil {
		report(domain.CheckDecodes, "%v", err)
	}
}
