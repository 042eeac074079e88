// Package projections keeps the read models that GET endpoints are served
// from. A single projector per process follows the event stream (a Stream,
// which the event store implements) and hands each event to every read
// model, in stream order. ShipmentFacts gathers from them the facts that
// domain's rules of a shipment take.
package projections

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cargostream/cargostream/domain"
)

// ReadModel is kept up to date by the projector. Apply is called for every
// event in stream order, one call at a time (while the replay at start
// applies other models at the same time); a model ignores the events it
// does not need.
type ReadModel interface {
	Apply(r domain.Record, e domain.Event)
}

// Stream is what the projector reads of the event stream
// (eventstore.Store implements it): every event in order from a sequence
// on, then live, until ctx ends or fn fails (see Subscribe there); the
// events between two sequences in batches, to catch up (see Replay
// there); the sequence of the newest, as the stream's leader has it and
// as any node of it does (see LastSequenceSeen there); and one event,
// which a snapshot names (see Get there).
type Stream interface {
	Subscribe(ctx context.Context, filters []string, from uint64, fn func(domain.Record) error, idle func() error) error
	Replay(ctx context.Context, from, to uint64, fn func([]domain.Record) error) (uint64, error)
	LastSequence(ctx context.Context) (uint64, error)
	LastSequenceSeen(ctx context.Context) (uint64, error)
	Get(ctx context.Context, agg domain.Aggregate, seq uint64) (domain.Record, error)
	Missing(ctx context.Context, from, to uint64) (bool, error)
}

// Projector feeds read models from the stream.
type Projector struct {
	stream Stream
	models []ReadModel
	log    *slog.Logger

	mu      sync.Mutex
	applied uint64 // last sequence applied to every model
	// waitingSince is when events were first seen waiting (by Lag)
	// since the last apply; zero while none were seen.
	waitingSince time.Time
	// missing are the gaps, first and last sequence, that the stream
	// itself has (see skipMissing).
	missing [][2]uint64
	// The stream's last answer to Lag, when it was asked for (zero if
	// it never answered), and since when it has not answered (zero while
	// it answers), with why.
	streamLast      uint64
	streamAsked     time.Time
	unansweredSince time.Time
	unansweredErr   error
	target          uint64     // stream's last sequence at start: ready once applied
	targetKnown     bool       // target is set: until then, not caught up
	waiters         seqWaiters // readers waiting for a sequence to be applied
	changes         changes    // readers waiting for a change to one aggregate
	resumes         int        // subscriptions that failed and were resumed

	// hold is held while an event is applied as it comes: a rebuild or
	// verification holds it to bring fresh models to exactly where the
	// live ones are, and swap or compare them, while nothing is applied
	// (see aside.go).
	hold sync.Mutex

	// Snapshots, if kept (see KeepSnapshots); used by Run alone.
	snapshots   SnapshotStore
	every       uint64 // events between snapshots; 0: only on stop
	snapshotted uint64 // the sequence the newest snapshot covers
	// notWritten is the sequence of the last snapshot that could not be
	// written: the next is tried every events after it, not at every
	// event (each try serialises every read model while none is applied).
	notWritten uint64
	last       domain.Record // the last event applied
	// replaces is the id of the snapshot named at the start; unusable
	// is that id too when the start ignored it (see partWriter).
	replaces, unusable string
}

// NewProjector returns a projector for models.
func NewProjector(stream Stream, log *slog.Logger, models ...ReadModel) *Projector {
	return &Projector{stream: stream, models: models, log: log}
}

// Run replays the stream into the read models and then follows it, until
// ctx ends: first up to the end the stream has at the start, in batches
// (CaughtUp then turns true), then event by event as they come. A failed
// replay or subscription is resumed after the last applied event.
func (p *Projector) Run(ctx context.Context) {
	gcBack := lessGC()
	p.restore(ctx)
	// A clean stop leaves a snapshot behind, for the next start.
	defer p.snapshot(context.WithoutCancel(ctx), 1, true)
	p.catchUp(ctx)
	gcBack()
	ended := false // the last subscription ended on a failure, logged
	for ctx.Err() == nil {
		apply, idle := p.apply, (func() error)(nil)
		if ended {
			apply, idle = p.tellingResumed(ctx)
		}
		err := p.stream.Subscribe(ctx, nil, p.Applied()+1, apply, idle)
		if ctx.Err() != nil || p.skipMissing(ctx, err) {
			continue
		}
		ended = true
		p.mu.Lock()
		p.resumes++
		p.mu.Unlock()
		// A stall is the consumer's, and a new one mends it: a warning,
		// and no pause (the stall took seconds to tell; a new consumer
		// that cannot be made yet is tried again as it is made). A store
		// that does not answer (a cluster without its quorum) is a
		// warning too, as the reactors' and the usage meter's lines of it
		// are, for a wait cures it: it was an error every 20 s of a lost
		// quorum. Anything else (an event refused) is an error.
		if errors.Is(err, domain.ErrSubscriptionStalled) {
			p.log.Warn("projector subscription ended; resuming", "after", p.Applied(), "resumes", p.Resumes(), "err", err)
			continue
		}
		p.log.Log(ctx, domain.FailureLevel(err), "projector subscription ended; resuming", "after", p.Applied(), "resumes", p.Resumes(), "err", err)
		pause(ctx, time.Second)
	}
}

// tellingResumed is apply, and an idle callback, for the subscription
// begun after one that ended on a failure: the first event it hands over,
// or its first catching up with the stream's end as its leader has it,
// logs that the subscription resumed, so that the line saying it ended
// has one saying when that was over (before, none: a cluster that lost its
// quorum left an ERROR line "ended; resuming" and nothing after it). A
// quiet second is not enough: with no stream leader the subscription walks
// and gets nothing, however many events wait.
func (p *Projector) tellingResumed(ctx context.Context) (func(domain.Record) error, func() error) {
	var told atomic.Bool
	tell := func() {
		if told.CompareAndSwap(false, true) {
			p.log.InfoContext(ctx, "projector subscription resumed", "after", p.Applied(), "resumes", p.Resumes())
		}
	}
	return func(r domain.Record) error {
			err := p.apply(r)
			tell()
			return err
		}, func() error {
			if told.Load() {
				return nil
			}
			look, cancel := context.WithTimeout(ctx, resumedLookTimeout)
			defer cancel()
			// The leader's end: a follower's copy, all a stream without a
			// leader has to show, is the end the subscription already
			// holds while it gets nothing, and "resumed" was logged every
			// 20 s of a lost quorum, each time before its next "ended".
			if last, err := p.stream.LastSequence(look); err == nil && p.Applied() >= last {
				tell()
			}
			return nil
		}
}

// resumedLookTimeout bounds tellingResumed's look at the stream's end. The
// subscription hands over no event while it waits, and a look not
// answered (no node of the stream answering) is asked again at the next
// quiet second. Before, it waited for nats.go's default of 5 s, and an
// event stored meanwhile waited with it.
const resumedLookTimeout = 400 * time.Millisecond

// catchUp replays the stream up to the end it has now.
func (p *Projector) catchUp(ctx context.Context) {
	for ctx.Err() == nil {
		last, err := p.stream.LastSequence(ctx)
		if err == nil {
			p.mu.Lock()
			if !p.targetKnown {
				p.target, p.targetKnown = last, true
			}
			p.mu.Unlock()
			if err = p.replay(ctx, last); err == nil {
				return
			}
		}
		if ctx.Err() != nil {
			return
		}
		p.log.Error("projector replay failed; resuming", "after", p.Applied(), "err", err)
		pause(ctx, time.Second)
	}
}

// replayed is a batch of events read for the replay, with their decoded
// events once decoded is closed.
type replayed struct {
	recs    []domain.Record
	events  []domain.Event // nil where an event could not be decoded
	errs    []error
	decoded chan struct{}
	models  atomic.Int32 // models yet to apply the batch
}

// replay applies the events up to sequence to. It pays for nothing that
// only following needs: events come in batches, read ahead while the
// models work; they are decoded on every core, ahead of the models; each
// model applies them on a goroutine of its own, in order, while the
// others do; and readers waiting for a sequence are woken once a batch.
func (p *Projector) replay(ctx context.Context, to uint64) error {
	for shortRuns := 1; ; shortRuns++ {
		err := p.replayOnce(ctx, to)
		// Ended short of to, the stream held nothing more: its last
		// events are missing, unless a node behind answered.
		short := err == nil && p.Applied() < to
		if short {
			err = &gapError{want: p.Applied() + 1, got: to + 1}
		}
		switch missing := p.skipMissing(ctx, err); {
		case short && missing:
			p.advance(to) // no event after them comes to carry the models past
			return nil
		case short && ctx.Err() == nil:
			// The consumer's node is behind the leader that gave to (or
			// the stream cannot tell): read on once it has caught up, as
			// the replay waited before, and say so every 10 s.
			if shortRuns%100 == 0 {
				p.log.Warn("projector: the replay ended short of the stream's end, and the events left are not known missing; reading on",
					"applied", p.Applied(), "to", to)
			}
			pause(ctx, 100*time.Millisecond)
		case !missing:
			return err
		}
	}
}

// replayOnce is replay, ended by the first gap, or short of to when the
// stream hands over nothing more.
func (p *Projector) replayOnce(ctx context.Context, to uint64) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	workers := runtime.GOMAXPROCS(0)
	toDecode, inOrder := make(chan *replayed, workers), make(chan *replayed, workers+1)
	var readErr error
	go func() {
		defer close(inOrder)
		defer close(toDecode)
		_, readErr = p.stream.Replay(ctx, p.Applied()+1, to, func(recs []domain.Record) error {
			b := &replayed{recs: recs, decoded: make(chan struct{})}
			select {
			case inOrder <- b:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
			toDecode <- b
			return nil
		})
	}()
	for range workers {
		go func() {
			for b := range toDecode {
				b.events, b.errs = make([]domain.Event, len(b.recs)), make([]error, len(b.recs))
				for i, r := range b.recs {
					b.events[i], b.errs[i] = domain.DecodeEvent(r.Type, r.Data)
				}
				close(b.decoded)
			}
		}()
	}
	var models sync.WaitGroup
	queues := make([]chan *replayed, len(p.models))
	for i, m := range p.models {
		queues[i] = make(chan *replayed, 2)
		models.Go(func() {
			for b := range queues[i] {
				for j, e := range b.events {
					if e != nil {
						m.Apply(b.recs[j], e)
					}
				}
				// The last model done with a batch moves applied: each
				// model takes the batches in order, so every model is
				// done with those before.
				if b.models.Add(-1) == 0 {
					p.advance(b.recs[len(b.recs)-1].Sequence)
					p.changes.appliedMany()
				}
			}
		})
	}
	err := p.dispatch(inOrder, queues)
	if err != nil {
		cancel(err)
		for range inOrder {
		}
	}
	for _, q := range queues {
		close(q)
	}
	models.Wait()
	if err != nil {
		return err
	}
	return readErr
}

// dispatch hands the batches, once decoded, to the models, checking that
// they follow on from each other. A batch that would leave a gap is not
// applied at all.
func (p *Projector) dispatch(inOrder <-chan *replayed, queues []chan *replayed) error {
	done := p.Applied()
	for b := range inOrder {
		<-b.decoded
		// The whole batch is checked before anything of it counts as
		// applied: a snapshot taken at a stop in the retry's pause must
		// not claim a batch that never reached the models.
		for _, r := range b.recs {
			if err := p.checkNext(done, r); err != nil {
				return err
			}
			done = r.Sequence
		}
		for i, r := range b.recs {
			if b.errs[i] != nil {
				p.skip(r, b.errs[i])
			}
		}
		if len(b.recs) > 0 {
			p.last = b.recs[len(b.recs)-1]
		}
		b.models.Store(int32(len(queues)))
		for _, q := range queues {
			q <- b
		}
	}
	return nil
}

// startGCPercent is the garbage collector's target (GOGC) while the read
// models are built at start.
const startGCPercent = 300

// lessGC lets the heap grow three times past what is live, not once,
// before the garbage collector runs, until what it returns is called.
// While the read models are built they are most of the heap, and each
// collection marks all of them again: at a million events, that was a
// fifth of the replay. A lower GOGC, or GC turned off, is left alone,
// and a memory limit (GOMEMLIMIT) still holds.
func lessGC() func() {
	old := debug.SetGCPercent(startGCPercent)
	if old < 0 || old >= startGCPercent {
		debug.SetGCPercent(old)
		return func() {}
	}
	return func() { debug.SetGCPercent(old) }
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// errGap ends a subscription that skipped a sequence. The projector
// follows every subject of a stream that never loses a message, so each
// event's sequence is the last one's plus one; a jump means events went
// missing on the way, and the subscription resumes after the last applied.
// Unless the stream lacks them itself (see skipMissing).
var errGap = errors.New("projections: the subscription skipped events")

// gapError is errGap, between the sequence wanted and the one got.
type gapError struct{ want, got uint64 }

func (e *gapError) Error() string {
	return fmt.Sprintf("%v: got sequence %d, want %d", errGap, e.got, e.want)
}

func (e *gapError) Unwrap() error { return errGap }

// checkNext refuses r as the event after sequence after, unless the
// events between them are known to be missing from the stream.
func (p *Projector) checkNext(after uint64, r domain.Record) error {
	want := after + 1
	if r.Sequence == want || p.knownMissing(want, r.Sequence-1) {
		return nil
	}
	return &gapError{want: want, got: r.Sequence}
}

// knownMissing reports whether the sequences from..to are a gap of the
// stream's own that skipMissing found.
func (p *Projector) knownMissing(from, to uint64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Contains(p.missing, [2]uint64{from, to})
}

// skipMissing reports whether err is a gap of events the stream itself
// does not hold (deleted from a stream made by hand that allows it, or
// lost with a damaged file), and then lets the read models go on without
// them, loudly: they cannot have them, and a replay that waited for them
// would keep the replica from ever being ready (it did, retrying every
// second for good). cargoctl verify lists the gap. A gap the stream does
// hold is the subscription's, and is read again.
func (p *Projector) skipMissing(ctx context.Context, err error) bool {
	var gap *gapError
	if !errors.As(err, &gap) {
		return false
	}
	missing, err := p.stream.Missing(ctx, gap.want, gap.got-1)
	if err != nil || !missing {
		return false
	}
	p.log.Error("projector: events are missing from the stream (deleted, or lost with a damaged file); the read models go on without them, and cargoctl verify lists the gap",
		"from", gap.want, "to", gap.got-1)
	p.mu.Lock()
	p.missing = append(p.missing, [2]uint64{gap.want, gap.got - 1})
	p.mu.Unlock()
	return true
}

// apply applies one event, as it comes, and takes a snapshot when one is
// due.
func (p *Projector) apply(r domain.Record) error {
	p.hold.Lock()
	defer p.hold.Unlock()
	// Only this goroutine changes applied: it reads it without the lock.
	if err := p.applyAfter(p.applied, r); err != nil {
		return err
	}
	p.last = r
	p.advance(r.Sequence)
	p.changes.applied(r.Aggregate)
	if movesStatus[r.Type] {
		p.changes.applied(StatusOf(r.Aggregate.ID))
	}
	if p.every > 0 && r.Sequence >= max(p.snapshotted, p.notWritten)+p.every {
		p.snapshot(context.Background(), p.every, false)
	}
	return nil
}

// applyAfter hands r to every model, if it is the event after sequence
// after.
func (p *Projector) applyAfter(after uint64, r domain.Record) error {
	if err := p.checkNext(after, r); err != nil {
		return err
	}
	e, err := domain.DecodeEvent(r.Type, r.Data)
	if err != nil {
		p.skip(r, err)
		return nil
	}
	for _, m := range p.models {
		m.Apply(r, e)
	}
	return nil
}

// skip logs an event that cannot be decoded. An event this version does
// not know (written by a newer one) must not stop every read model: it is
// skipped, loudly.
func (p *Projector) skip(r domain.Record, err error) {
	p.log.Error("projector skips an event it cannot decode", "sequence", r.Sequence, "type", r.Type, "err", err)
}

// advance records that every event up to seq is applied, and wakes the
// readers waiting for it.
func (p *Projector) advance(seq uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if seq <= p.applied {
		return
	}
	p.applied, p.waitingSince = seq, time.Time{}
	p.waiters.wake(seq)
}

// Resumes counts the subscriptions that failed and were resumed.
func (p *Projector) Resumes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.resumes
}

// Applied is the sequence of the last event applied.
func (p *Projector) Applied() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.applied
}

// CaughtUp reports whether the read models hold every event that was in
// the stream when the projector started: false until Run has asked the
// stream where it ends.
func (p *Projector) CaughtUp() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.targetKnown && p.applied >= p.target
}

// Target is the stream's last sequence when the projector started (0
// until Run has asked): the replay at start ends there. A starting
// replica's /readyz tells it, asking the stream nothing.
func (p *Projector) Target() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.target
}

// Lag is how far the read models are behind the stream.
type Lag struct {
	Applied    uint64        // the last sequence applied
	StreamLast uint64        // the stream's last sequence, as it last answered
	Idle       time.Duration // how long events have waited with nothing applied
	// Unanswered is how long the stream has not answered, with why (Err);
	// 0 and nil when it answered now.
	Unanswered time.Duration
	Err        error
}

// Events is the number of events in the stream not applied yet.
func (l Lag) Events() uint64 { return l.StreamLast - min(l.Applied, l.StreamLast) }

// Problem says why read models this far behind should not serve reads,
// or "" when they may: more than maxEvents behind, or nothing applied for
// stalled while events wait.
func (l Lag) Problem(maxEvents uint64, stalled time.Duration) string {
	switch {
	case l.Events() > maxEvents:
		return fmt.Sprintf("read models are %d events behind the stream (at most %d allowed)", l.Events(), maxEvents)
	case l.Events() > 0 && l.Idle > stalled:
		return fmt.Sprintf("read models applied nothing for %s while %d events wait", l.Idle.Round(time.Second), l.Events())
	case l.Err != nil && l.Unanswered > stalled:
		return fmt.Sprintf("the stream has not answered for %s: %v", l.Unanswered.Round(time.Second), l.Err)
	}
	return ""
}

// Lag asks the stream for its last sequence and compares: the one any
// node has, so that an election does not make a replica look behind. A
// stream that does not answer leaves its last answer standing, saying
// for how long (Unanswered): a leader that dies is not answered for until
// the other nodes notice, some seconds (7 s measured on three nodes),
// which on its own would turn every replica unready at once, while their
// read models serve well. It fails before the stream ever answered, and
// on a failure that waiting does not cure.
//
// Calls overlap (a probe and a metrics scrape): an answer, or a failure
// to answer, to a question asked before the answer held was asked for is
// older news, and changes nothing.
func (p *Projector) Lag(ctx context.Context) (Lag, error) {
	asked := time.Now()
	last, err := p.stream.LastSequenceSeen(ctx)
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case !p.streamAsked.IsZero() && asked.Before(p.streamAsked):
		// Older news than the answer held: it changes nothing.
	case err == nil:
		p.streamLast, p.streamAsked, p.unansweredSince, p.unansweredErr = last, asked, time.Time{}, nil
	case p.streamAsked.IsZero() || !errors.Is(err, domain.ErrStoreUnavailable):
		return Lag{}, err // never answered, or a failure a wait does not cure
	case p.unansweredSince.IsZero():
		p.unansweredSince, p.unansweredErr = now, err
	default:
		p.unansweredErr = err
	}
	l := p.lagAt(p.streamLast, now)
	if !p.unansweredSince.IsZero() {
		l.Unanswered, l.Err = now.Sub(p.unansweredSince), p.unansweredErr
	}
	return l, nil
}

// lagAt, with p.mu held, is the lag against a stream at last, now. Events wait from the
// first time they are seen waiting: a quiet replica is not stalled
// because a write landed a moment ago.
//
// The stream holds at least what was applied: an answer given before the
// latest events were applied (at a fresh start, the demo data seeded
// meanwhile) would show the replica ahead of the stream.
func (p *Projector) lagAt(last uint64, now time.Time) Lag {
	l := Lag{Applied: p.applied, StreamLast: max(last, p.applied)}
	switch {
	case l.Events() == 0:
	case p.waitingSince.IsZero():
		p.waitingSince = now
	default:
		l.Idle = now.Sub(p.waitingSince)
	}
	return l
}

// ErrBehind means the read models did not reach a sequence in time.
var ErrBehind = errors.New("projections: read models are behind")

// PastEnd reports whether seq, a sequence a client sent back, is past
// the end of the stream: then no write made it, and waiting would not
// bring it. Only a sequence not applied yet costs a look at the stream.
func (p *Projector) PastEnd(ctx context.Context, seq uint64) bool {
	p.mu.Lock()
	applied := p.applied
	p.mu.Unlock()
	if applied >= seq {
		return false
	}
	last, err := p.stream.LastSequence(ctx)
	return err == nil && seq > last
}

// CatchUp returns once the read models hold every event the stream held
// when it was called, so that a decision read from them is as current as
// the stream; ErrBehind if ctx ends first (see WaitFor), or the stream's
// error if it cannot be asked.
func (p *Projector) CatchUp(ctx context.Context) error {
	last, err := p.stream.LastSequence(ctx)
	if err != nil {
		return err
	}
	return p.WaitFor(ctx, last)
}

// WaitFor returns once the read models have applied sequence seq, so a
// reader sees its own writes; ErrBehind if ctx ends first, wrapping why it
// ended: a request's caller that hung up (context.Canceled) is no sign of
// read models behind, and is answered as a hang-up, not as a 503.
func (p *Projector) WaitFor(ctx context.Context, seq uint64) error {
	p.mu.Lock()
	if p.applied >= seq {
		p.mu.Unlock()
		return nil
	}
	waiter := p.waiters.add(seq)
	p.mu.Unlock()
	select {
	case <-waiter.reached:
		return nil
	case <-ctx.Done():
		p.mu.Lock()
		p.waiters.remove(waiter)
		p.mu.Unlock()
		return fmt.Errorf("%w: %w", ErrBehind, ctx.Err())
	}
}
