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
	"sync"
	"time"

	"github.com/cargostream/cargostream/domain"
)

// ReadModel is kept up to date by the projector. Apply is called for every
// event in stream order, from one goroutine; a model ignores the events it
// does not need.
type ReadModel interface {
	Apply(r domain.Record, e domain.Event)
}

// Stream is what the projector reads of the event stream
// (eventstore.Store implements it): every event in order from a sequence
// on, then live, until ctx ends or fn fails (see Subscribe there); and the
// sequence of the newest.
type Stream interface {
	Subscribe(ctx context.Context, filters []string, from uint64, fn func(domain.Record) error, idle func() error) error
	LastSequence(ctx context.Context) (uint64, error)
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
	target       uint64        // stream's last sequence at start: ready once applied
	changed      chan struct{} // closed (and replaced) whenever applied moves
	resumes      int           // subscriptions that failed and were resumed
}

// NewProjector returns a projector for models.
func NewProjector(stream Stream, log *slog.Logger, models ...ReadModel) *Projector {
	return &Projector{stream: stream, models: models, log: log, changed: make(chan struct{})}
}

// Run replays the stream into the read models and then follows it, until
// ctx ends. A failed subscription is resumed after the last applied event.
func (p *Projector) Run(ctx context.Context) {
	if last, err := p.stream.LastSequence(ctx); err == nil {
		p.mu.Lock()
		p.target = last
		p.mu.Unlock()
	}
	for ctx.Err() == nil {
		err := p.stream.Subscribe(ctx, nil, p.Applied()+1, p.apply, nil)
		if ctx.Err() != nil {
			return
		}
		p.mu.Lock()
		p.resumes++
		p.mu.Unlock()
		p.log.Error("projector subscription ended; resuming", "after", p.Applied(), "resumes", p.Resumes(), "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// errGap ends a subscription that skipped a sequence. The projector
// follows every subject of a stream that never loses a message, so each
// event's sequence is the last one's plus one; a jump means events went
// missing on the way, and the subscription resumes after the last applied.
var errGap = errors.New("projections: the subscription skipped events")

func (p *Projector) apply(r domain.Record) error {
	// Only this goroutine changes applied: it reads it without the lock.
	if want := p.applied + 1; r.Sequence != want {
		return fmt.Errorf("%w: got sequence %d, want %d", errGap, r.Sequence, want)
	}
	e, err := domain.DecodeEvent(r.Type, r.Data)
	if err != nil {
		// An event this version does not know (written by a newer one)
		// must not stop every read model: skip it, loudly.
		p.log.Error("projector skips an event it cannot decode", "sequence", r.Sequence, "type", r.Type, "err", err)
	} else {
		for _, m := range p.models {
			m.Apply(r, e)
		}
	}
	p.mu.Lock()
	p.applied, p.waitingSince = r.Sequence, time.Time{}
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
	return nil
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

// Target is the stream's last sequence when the projector started: the
// replay at start ends there.
func (p *Projector) Target() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.target
}

// CaughtUp reports whether the read models hold every event that was in
// the stream when the projector started.
func (p *Projector) CaughtUp() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.applied >= p.target
}

// Lag is how far the read models are behind the stream.
type Lag struct {
	Applied    uint64        // the last sequence applied
	StreamLast uint64        // the stream's last sequence
	Idle       time.Duration // how long events have waited with nothing applied
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
	}
	return ""
}

// Lag asks the stream for its last sequence and compares.
func (p *Projector) Lag(ctx context.Context) (Lag, error) {
	last, err := p.stream.LastSequence(ctx)
	if err != nil {
		return Lag{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lagAt(last, time.Now()), nil
}

// lagAt, with p.mu held, is the lag against a stream at last, now. Events wait from the
// first time they are seen waiting: a quiet replica is not stalled
// because a write landed a moment ago.
func (p *Projector) lagAt(last uint64, now time.Time) Lag {
	l := Lag{Applied: p.applied, StreamLast: last}
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

// WaitFor returns once the read models have applied sequence seq, so a
// reader sees its own writes; ErrBehind if ctx ends first.
func (p *Projector) WaitFor(ctx context.Context, seq uint64) error {
	for {
		p.mu.Lock()
		applied, changed := p.applied, p.changed
		p.mu.Unlock()
		if applied >= seq {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ErrBehind
		}
	}
}
