package eventstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cargostream/cargostream/domain"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Parking. A consumer of Consume that fails on one event again and again
// (a poison event: one its handler cannot take, or takes with a bug) would
// try it forever while the later events of its aggregate wait. After
// Options.ConsumerAttempts failures in a row it parks the event instead:
// it records an entry on the dead-letter stream <STREAM>_PARKED, subject
// <prefix>.parked.<consumer>.<sequence>, acknowledges the event and goes
// on. The event itself stays where it is in the event stream; the entry
// only points at it, with the last error. An operator who has fixed the
// cause asks for a retry (RetryParked, cargoctl parked retry): the entry is
// written again with RetryAsked, and the event is handed to the handler
// once more, in its aggregate's turn: on the replica that handles the
// consumer's events, after those of the aggregate it holds, never beside
// them. Handled, the entry is removed; failed, it is parked again with the
// new error.
//
// A retry comes after the later events of the event's aggregate, which
// went on without it: consumers here tolerate that, as they tolerate a
// redelivery, since every step loads the current state it works on.

// DefaultConsumerAttempts is how many times in a row a consumer tries an
// event before it parks it, when Options.ConsumerAttempts is 0. With the
// pauses between tries (1, 2, 4 and 8 s) an event is parked about 15 s
// after its first failure. Failures while NATS is unavailable do not count:
// they say nothing about the event.
const DefaultConsumerAttempts = 5

// Parked is an event a consumer gave up on.
type Parked struct {
	Consumer      string    `json:"consumer"`
	Sequence      uint64    `json:"sequence"` // of the event in the event stream
	AggregateType string    `json:"aggregateType"`
	AggregateID   string    `json:"aggregateId"`
	Type          string    `json:"type"`
	EventID       string    `json:"eventId"`
	ParkedAt      time.Time `json:"parkedAt"`
	Attempts      int       `json:"attempts"` // failures so far, retries included
	LastError     string    `json:"lastError"`
	RetryAsked    bool      `json:"retryAsked,omitempty"` // a retry was asked for and is not done yet

	entry uint64 // the entry's sequence in the parked stream
}

// ErrNoParkedStream is the error, for a store opened with Existing, of a
// server without the dead-letter stream. A store that is not (every
// cargod's) makes it as its consumers start: its absence beside the event
// stream means the list of parked events was lost (a backup taken
// without it, a stream deleted), or that no cargod of a version that
// parks events has run on the stream; not that nothing is parked.
var ErrNoParkedStream = errors.New("eventstore: the parked events' stream does not exist")

// parkedStream opens the dead-letter stream: creating or updating it, or,
// for a store opened with Existing, only if it exists (nil if not).
func (s *Store) parkedStream(ctx context.Context) (jetstream.Stream, error) {
	s.parkedMu.Lock()
	defer s.parkedMu.Unlock()
	if s.parked != nil {
		return s.parked, nil
	}
	name := s.name + "_PARKED"
	var st jetstream.Stream
	err := s.provision(ctx, "stream "+name, func(ctx context.Context) (err error) {
		if s.existing {
			st, err = s.js.Stream(ctx, name)
			if errors.Is(err, jetstream.ErrStreamNotFound) {
				return nil
			}
			return err
		}
		st, err = s.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name:        name,
			Description: "Cargostream events that a reactor or the webhook dispatcher gave up on, until they are retried",
			Subjects:    []string{s.prefix + ".parked.>"},
			Storage:     jetstream.FileStorage,
			// An entry per consumer and event: parking an event again
			// replaces its entry, and a handled one is purged.
			MaxMsgsPerSubject: 1,
			Replicas:          s.replicas,
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("eventstore: stream %s: %w", name, err)
	}
	s.parked = st
	return st, nil
}

func (s *Store) parkedSubject(consumer string, seq uint64) string {
	return s.prefix + ".parked." + consumer + "." + strconv.FormatUint(seq, 10)
}

// writeParked stores p as its event's entry; with expect set, only if the
// entry is still the one read at sequence p.entry.
func (s *Store) writeParked(ctx context.Context, p Parked, expect bool) error {
	if _, err := s.parkedStream(ctx); err != nil {
		return err
	}
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	var opts []jetstream.PublishOpt
	if expect {
		opts = append(opts, jetstream.WithExpectLastSequencePerSubject(p.entry))
	}
	if _, err := s.js.Publish(ctx, s.parkedSubject(p.Consumer, p.Sequence), data, opts...); err != nil {
		return s.refusedWrite(fmt.Errorf("eventstore: parking %d of %s: %w", p.Sequence, p.Consumer, err))
	}
	return nil
}

// ParkedEvents lists the parked events in stream order of the events.
// Each entry is read by its subject (there is one a subject): one removed
// meanwhile, its retry done, is passed over, where a read of the stream
// from its start would wait for it without end. A store opened with
// Existing on a server without the dead-letter stream lists none: its
// error is ErrNoParkedStream.
func (s *Store) ParkedEvents(ctx context.Context) ([]Parked, error) {
	st, err := s.parkedStream(ctx)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, fmt.Errorf("%w: %s_PARKED", ErrNoParkedStream, s.name)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(s.prefix+".parked.>"))
	if err != nil {
		return nil, unavailable(fmt.Errorf("eventstore: parked events: %w", err))
	}
	var out []Parked
	for subject := range info.State.Subjects {
		m, err := st.GetLastMsgForSubject(ctx, subject)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return nil, unavailable(fmt.Errorf("eventstore: parked events: %w", err))
		}
		var p Parked
		if err := json.Unmarshal(m.Data, &p); err != nil {
			return nil, fmt.Errorf("eventstore: parked entry %s: %w", subject, err)
		}
		p.entry = m.Sequence
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Parked) int {
		return cmp.Or(cmp.Compare(a.Sequence, b.Sequence), strings.Compare(a.Consumer, b.Consumer))
	})
	return out, nil
}

// ErrNotParked means no parked event matched a retry.
var ErrNotParked = errors.New("eventstore: no such parked event")

// RetryParked asks for parked events to be handled again: the event at
// sequence seq (every consumer's entry of it, or only consumer's when it
// is not ""), or every parked event when seq is 0. The replica that
// handles each consumer's events carries the retry out, soon after, in
// the aggregate's turn; the entries asked for are returned, and
// ErrNotParked if there are none.
func (s *Store) RetryParked(ctx context.Context, consumer string, seq uint64) ([]Parked, error) {
	all, err := s.ParkedEvents(ctx)
	if err != nil {
		return nil, err
	}
	var asked []Parked
	for _, p := range all {
		if (seq != 0 && p.Sequence != seq) || (consumer != "" && p.Consumer != consumer) {
			continue
		}
		p.RetryAsked = true
		if err := s.writeParked(ctx, p, true); err != nil {
			return asked, err
		}
		asked = append(asked, p)
	}
	if len(asked) == 0 {
		return nil, ErrNotParked
	}
	return asked, nil
}

// parkedCounts is the number of parked events of each consumer.
func (s *Store) parkedCounts(ctx context.Context) (map[string]uint64, error) {
	counts := map[string]uint64{}
	st, err := s.parkedStream(ctx)
	if err != nil || st == nil {
		return counts, err
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(s.prefix+".parked.>"))
	if err != nil {
		return nil, unavailable(fmt.Errorf("eventstore: parked events: %w", err))
	}
	for subject, n := range info.State.Subjects {
		rest := strings.TrimPrefix(subject, s.prefix+".parked.")
		consumer, _, _ := strings.Cut(rest, ".")
		counts[consumer] += n
	}
	return counts, nil
}

// park records r as given up on by consumer after attempts failures, the
// last being cause.
func (s *Store) park(ctx context.Context, consumer string, r domain.Record, attempts int, cause error) error {
	return s.writeParked(ctx, Parked{Consumer: consumer, Sequence: r.Sequence, AggregateType: r.Aggregate.Type, AggregateID: r.Aggregate.ID,
		Type: r.Type, EventID: r.EventID, ParkedAt: time.Now().UTC(), Attempts: attempts, LastError: cause.Error()}, false)
}

// followRetries carries out the retries asked for the events consumer
// parked, with fn, until ctx ends: all replicas share one durable consumer
// of the consumer's entries, so each retry is made once.
func (s *Store) followRetries(ctx context.Context, consumer string, fn func(domain.Record) error, began func()) error {
	st, err := s.parkedStream(ctx)
	if err != nil {
		return err
	}
	if st == nil {
		return fmt.Errorf("%w, and a store opened on an existing stream makes none", ErrNoParkedStream)
	}
	cons, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:       s.prefix + "-" + consumer + "-retries",
		Description:   "Cargostream: retries of the events " + consumer + " parked",
		FilterSubject: s.prefix + ".parked." + consumer + ".*",
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       s.retryAckWait,
		Replicas:      s.replicas,
	})
	if err != nil {
		return fmt.Errorf("eventstore: retries of %s: %w", consumer, err)
	}
	// The consumer may be new: its first pull must not be lost (see
	// waitRouted).
	if err := s.waitRouted(ctx, st.CachedInfo().Config.Name, cons.CachedInfo().Name); err != nil {
		return fmt.Errorf("eventstore: retries of %s: %w", consumer, err)
	}
	msgs, told, err := s.pullMessages(cons, jetstream.DefaultExpires, "retries of "+consumer, nil)
	if err != nil {
		return fmt.Errorf("eventstore: retries of %s: %w", consumer, err)
	}
	began()
	stop := context.AfterFunc(ctx, msgs.Stop)
	defer stop()
	defer told.stop()
	for {
		m, err := msgs.Next()
		if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("eventstore: retries of %s closed", consumer)
		}
		if err != nil {
			told.interrupted(err)
			continue
		}
		told.resumed()
		// A retry waits for its aggregate's turn behind the events in
		// hand, which may take longer than the AckWait: handed out
		// again meanwhile, it would be made twice.
		inHand := make(chan struct{})
		go keepInProgress(s.retryAckWait, inHand, func() []jetstream.Msg { return []jetstream.Msg{m} })
		settled, again := s.retry(ctx, m, fn)
		close(inHand)
		switch {
		case settled:
			m.Ack()
		case ctx.Err() == nil:
			m.NakWithDelay(again)
		}
		// Unsettled at shutdown: the server hands the entry out again
		// after s.retryAckWait, to this process restarted or another.
	}
}

// retryPause is how long a retry that could not be settled (NATS out of
// reach, its entry not rewritten) waits before it is tried again.
const retryPause = 5 * time.Second

// retry handles the entry m with fn if a retry was asked for: it removes
// the entry when fn succeeds, and parks the event again when it fails. It
// reports whether m is settled; it is not when shutdown cut the retry
// short, when NATS was out of reach (which, as for a consumer, counts as no
// failure of the event's), or when the entry could not be rewritten: the
// retry is then made again after again. Nor is it when another replica
// handles the consumer's events: the retry is handed back sooner, for
// that replica to take it.
func (s *Store) retry(ctx context.Context, m jetstream.Msg, fn func(domain.Record) error) (settled bool, again time.Duration) {
	var p Parked
	meta, err := m.Metadata()
	if err != nil || json.Unmarshal(m.Data(), &p) != nil || !p.RetryAsked {
		return true, 0 // a parking, not a retry
	}
	p.entry = meta.Sequence.Stream
	// The follower's pulls buffer entries that are not kept in progress
	// (only the one being made is): one that waited behind a retry longer
	// than the AckWait is handed out again, and the copy that comes later
	// finds its entry purged (retried) or rewritten (parked again, or
	// asked again, which comes by itself). Made again, the retry would
	// run the handler twice.
	last, err := s.parked.GetLastMsgForSubject(ctx, m.Subject())
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return true, 0
	case err != nil:
		return false, retryPause
	case last.Sequence != p.entry:
		return true, 0
	}
	r, err := s.Get(ctx, domain.Aggregate{Type: p.AggregateType, ID: p.AggregateID}, p.Sequence)
	var other notOfAggregateError
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		// Past the end of a stream restored from an older backup than
		// the entries', or lost with a damaged file: the server's "API
		// error: code=404 err_code=10037" said none of it.
		err = fmt.Errorf("eventstore: the stream has no event at sequence %d, where %s was parked: the stream lost it, or is not the one it was parked on", p.Sequence, p.EventID)
	case errors.As(err, &other):
		err = fmt.Errorf("eventstore: the event at sequence %d is %s of %s, not %s, the one parked: the stream is not the one it was parked on", p.Sequence, other.eventID, other.is, p.EventID)
	case err == nil && r.EventID != p.EventID:
		// Entries restored from a backup taken apart from the event
		// stream's may name a sequence that holds another event now:
		// handled in the parked one's place, it would drop its entry.
		err = fmt.Errorf("eventstore: the event at sequence %d is %s, not %s, the one parked: the stream is not the one it was parked on", p.Sequence, r.EventID, p.EventID)
	}
	if err == nil {
		err = s.inTurn(ctx, p.Consumer, r, func() error { return s.call(fn, r) })
	}
	switch {
	case errors.Is(err, errNotOurTurn):
		return false, consumerPullExpiry
	case ctx.Err() != nil || errors.Is(err, domain.ErrStoreUnavailable):
		return false, retryPause
	case err == nil:
		if err := s.parked.Purge(ctx, jetstream.WithPurgeSubject(m.Subject())); err != nil {
			s.log.Error("eventstore: a parked event was handled, but its entry stays; the retry is made again", "consumer", p.Consumer, "sequence", p.Sequence, "err", err)
			return false, retryPause
		}
		s.log.Info("eventstore: parked event handled on retry", "consumer", p.Consumer, "sequence", p.Sequence, "type", p.Type,
			"aggregate", p.AggregateType+"/"+p.AggregateID)
		return true, 0
	}
	p.RetryAsked, p.Attempts, p.LastError, p.ParkedAt = false, p.Attempts+1, err.Error(), time.Now().UTC()
	if werr := s.writeParked(ctx, p, true); werr != nil {
		s.log.Error("eventstore: a retried event failed again and could not be parked again; the retry is made again", "consumer", p.Consumer, "sequence", p.Sequence, "err", werr)
		return false, retryPause
	}
	// Counted as the first parking is: a retry that failed is news to
	// whoever alerts on a rise of the count, as the gauge of entries
	// parked stays as it was.
	s.obs.EventParked(p.Consumer)
	s.log.Warn("eventstore: parked event failed again on retry; parked again", "consumer", p.Consumer, "sequence", p.Sequence, "type", p.Type,
		"aggregate", p.AggregateType+"/"+p.AggregateID, "attempts", p.Attempts, "err", err)
	return true, 0
}

// call runs fn on r, turning a panic into an error (its stack logged): a
// handler's bug on one event makes it a poison event, parked in time, and
// does not bring the process down (to be started again, handed the same
// event, and fall).
func (s *Store) call(fn func(domain.Record) error, r domain.Record) (err error) {
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("eventstore: a consumer's handler panicked", "sequence", r.Sequence, "type", r.Type, "panic", v, "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	return fn(r)
}
