// Package commands is the service's write side. It carries out commands:
// it loads an aggregate from the event store, lets the domain decide, and
// appends the resulting events with optimistic concurrency, retrying on
// conflicts. Beside them run the reactors (flows that follow events) and
// the background jobs: the usage meter's flush and the sweep of orphaned
// document files. What it takes of the store and the read models it
// declares as small interfaces (EventLog, EventFeed, KeyValues,
// StoredFiles, PricingData, ...), which cmd/cargod fills in.
package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/internal/retry"
	"github.com/cenkalti/backoff/v4"
	"github.com/google/uuid"
)

// schemaVersion of the events written now. Bump it per event type, with
// an upcaster, when an event's structure changes.
const schemaVersion = 1

// idNamespace roots the ids derived from command ids (UUID version 5).
var idNamespace = uuid.MustParse("5c1e2a1e-7a43-4b8e-9f0e-6c7a2b8d4f10")

// Meta says who issued a command and which request it belongs to.
type Meta struct {
	CommandID     string // the same command retried carries the same id
	CorrelationID string // the request or flow this command is part of
	CausationID   string // the event or command that caused it, if any
	ClientIP      string // where the request came from, if from a client
	Principal     domain.Principal
	// IfVersion, when set, is the version (the stream sequence of its
	// last event) the aggregate must still be at for the command to
	// run; otherwise it fails with domain.PreconditionFailed and stores
	// nothing. The store's optimistic concurrency check makes it hold
	// at the moment of the write, not only when the state was read.
	IfVersion *uint64
	// cause is the event a reactor's command follows (see step): a state
	// of its aggregate must include it.
	cause domain.Record
}

// NewMeta makes the metadata of a new command by p. commandID may be empty
// for a random one; pass a stable one (say, from an Idempotency-Key) to
// make retries safe.
func NewMeta(p domain.Principal, commandID, correlationID string) Meta {
	if commandID == "" {
		commandID = uuid.NewString()
	}
	if correlationID == "" {
		correlationID = commandID
	}
	return Meta{CommandID: commandID, CorrelationID: correlationID, Principal: p}
}

// part returns the Meta of one part, named step, of a transaction that m
// carries out: a command of its own, so a retry repeats none of it, and
// under no version precondition, which is for m's own aggregate.
func (m Meta) part(step string) Meta {
	m.CommandID, m.IfVersion = m.CommandID+":"+step, nil
	return m
}

// DeriveID returns an id that is the same every time the same command is
// retried, so a retry addresses the aggregate the first try created.
func (m Meta) DeriveID(kind string) string {
	return uuid.NewSHA1(idNamespace, []byte(kind+":"+m.CommandID)).String()
}

// EventLog is what carrying out commands takes of the event store
// (eventstore.Store implements it): an aggregate's events, from the start
// or after a sequence; one event; and storing decisions, waiting for them
// (Append) or not (Submit, which also takes the parts of a decision across
// aggregates, stored all or none).
type EventLog interface {
	Load(ctx context.Context, agg domain.Aggregate) ([]domain.Record, error)
	LoadAfter(ctx context.Context, agg domain.Aggregate, after uint64) ([]domain.Record, error)
	Get(ctx context.Context, agg domain.Aggregate, seq uint64) (domain.Record, error)
	Append(ctx context.Context, agg domain.Aggregate, expected uint64, events []domain.Envelope) ([]uint64, error)
	Submit(ctx context.Context, parts ...domain.Submission) ([]domain.PendingAppend, error)
}

// Handler carries out commands against one event store.
type Handler struct {
	store    EventLog
	ref      domain.Lookup
	now      func() time.Time
	hashCost int
	cache    aggregateCache
	// aggregates serialise the commands of this process on one
	// aggregate: they queue instead of conflicting. A lock per aggregate,
	// not per hash stripe, so that commands on different aggregates never
	// wait for each other and go to the store's committer together.
	// Replicas still meet at the store's optimistic concurrency check.
	aggregates keyedLocks
	// replies queues the replies to one stock request (several steps).
	replies keyedLocks
	// pipelines hold the state of aggregates after the decisions handed
	// to the store and not yet stored.
	pipelines pipelines
}

// New returns a Handler. hashCost is the bcrypt cost for secrets; ref is
// the reference data that validation consults.
func New(store EventLog, hashCost int, ref domain.Lookup) *Handler {
	return &Handler{store: store, ref: ref, now: time.Now, hashCost: hashCost, cache: newAggregateCache()}
}

// Result is an aggregate after a command, the last event the command
// appended (nil if it appended none), the stream sequence a reader must
// have reached to see it, and the aggregate's version in State: the
// sequence of its last event, what Meta.IfVersion names.
type Result[S any] struct {
	State    S
	Event    domain.Event
	Sequence uint64
	Version  uint64
}

// loading says which state of an aggregate a command may decide on
// without asking the store.
type loading int

const (
	// loadFresh asks the store for the events past the cached state.
	loadFresh loading = iota
	// loadCached trusts a cached state to be the newest, as it is while
	// this process is the aggregate's only writer.
	loadCached
	// loadNew trusts, without a cached state, that the aggregate has no
	// events: it is named after the command that creates it, so it has
	// none unless that command ran before, whose events then make the
	// decision conflict and the retry load them.
	loadNew
)

// load rebuilds an aggregate: from the cache, with the events appended
// since, asking the store only as how says. It also reports the sequence
// of the last event that commandID appended, if that command has run
// before.
func load[S any](ctx context.Context, h *Handler, agg domain.Aggregate, evolve func(S, domain.Event) S, commandID string, how loading) (state S, entry cacheEntry, done uint64, err error) {
	entry, _ = h.cache.get(agg)
	if cached, ok := entry.state.(S); ok {
		state = cached
	} else {
		entry = cacheEntry{}
	}
	if how != loadFresh && (entry.last != 0 || how == loadNew) {
		return state, entry, entry.ran(commandID), nil
	}
	recs, err := h.store.LoadAfter(ctx, agg, entry.last)
	if err != nil {
		return state, entry, 0, err
	}
	if len(recs) > 0 {
		commands := entry.commands
		if commands == nil {
			commands = newCommandIndex()
		}
		for _, r := range recs {
			e, err := domain.DecodeEvent(r.Type, r.Data)
			if err != nil {
				return state, entry, 0, fmt.Errorf("loading %s: %w", agg, err)
			}
			state = evolve(state, e)
			if r.CommandID != "" {
				commands.add(r.CommandID, r.Sequence)
			}
			entry.last = r.Sequence
		}
		// Entries are shared: a new one, not a change.
		entry = cacheEntry{state: state, last: entry.last, commands: commands}
		h.cache.put(agg, entry)
	}
	return state, entry, entry.ran(commandID), nil
}

// includes refuses a state of agg, loaded up to sequence last, that lacks
// cause, an event of agg handed to a reactor: the store answered from a
// copy behind the one that handed it (a node cut off a while, leading the
// stream again for a moment after). On a state without its event a
// reactor would find nothing to do, and the event would go unhandled for
// good. The error is domain.ErrReadBehind: the event is tried again.
func includes(agg domain.Aggregate, last uint64, cause domain.Record) error {
	if cause.Aggregate != agg || last >= cause.Sequence {
		return nil
	}
	return fmt.Errorf("%w: the store read %s up to sequence %d, before its event at %d",
		domain.ErrReadBehind, agg, last, cause.Sequence)
}

// execute runs decide against the current state of agg and appends what
// it decides. A command that already ran (same command id in the
// aggregate's history) is not decided again: its result is returned as it
// stands, which makes retried commands safe.
//
// The first try decides on the newest state this process knows without
// asking the store: the state after the decisions on agg it has handed to
// the store and not yet seen stored (its pipeline), or else the cached
// state. The decision then follows those in the store's batches, or
// expects the cached state's sequence, so a state that another replica
// made stale ends in a conflict and a fresh load. A refusal, or nothing to
// do, is only trusted from a fresh state, with nothing pending.
//
// The aggregate is locked while deciding and handing over, not while the
// decision is stored: the next command on a busy aggregate decides on the
// pending state at once, and many decisions on it share a batch.
func execute[S any](ctx context.Context, h *Handler, agg domain.Aggregate, m Meta,
	evolve func(S, domain.Event) S, decide func(S) ([]domain.Event, error)) (Result[S], error) {
	return executeFrom(ctx, h, agg, m, loadCached, evolve, decide)
}

// create is execute for a command that creates the aggregate agg, named
// after the command (Meta.DeriveID): its first try decides on the empty
// state without asking the store, which saves a creation the round trip
// that made up about 40 % of its time. A retried command conflicts, and
// its next try finds its events.
func create[S any](ctx context.Context, h *Handler, agg domain.Aggregate, m Meta,
	evolve func(S, domain.Event) S, decide func(S) ([]domain.Event, error)) (Result[S], error) {
	return executeFrom(ctx, h, agg, m, loadNew, evolve, decide)
}

// executeFrom is execute, whose first try loads agg as first says: a
// transaction of one part.
func executeFrom[S any](ctx context.Context, h *Handler, agg domain.Aggregate, m Meta, first loading,
	evolve func(S, domain.Event) S, decide func(S) ([]domain.Event, error)) (Result[S], error) {
	var res *Result[S]
	err := transactFrom(ctx, h, first, func(t *transaction) (err error) {
		res, err = decideIn(t, agg, m, evolve, decide)
		return err
	})
	if res == nil {
		return Result[S]{}, err
	}
	return *res, err
}

// decideHeld decides, with the aggregate's lock held, and returns the
// command's result as far as the decision tells it (see decideOnce); the
// part to hand to the store, if the command decided any events; and
// stored, if more is to come, which gives the whole result and is called
// once the lock is let go. A decision that needs a state without pending
// decisions waits for the last of them first, still holding the lock: no
// decision joins the pipeline meanwhile, so the wait is one, and this
// decision is the next.
func decideHeld[S any](ctx context.Context, h *Handler, agg domain.Aggregate, m Meta,
	evolve func(S, domain.Event) S, decide func(S) ([]domain.Event, error), how loading) (res Result[S], stored func() (Result[S], error), p *part, err error) {
	if m.IfVersion != nil {
		// A precondition is checked on the state in the store only.
		how = loadFresh
	}
	if pipe, decided := h.pipelines.get(agg, m.CommandID); pipe != nil {
		// Not on the pending state: a fresh one is wanted, or this
		// command decided before (where no expected sequence would catch
		// a second decision), or a command of another kind made it.
		if _, sameKind := pipe.state.(S); how != loadFresh && sameKind && !decided {
			res, stored, p, trusted, err := decideOnce(ctx, h, agg, pipe, m, evolve, decide, how)
			if trusted {
				return res, stored, p, err
			}
		}
		select {
		case <-pipe.tail.Done():
		case <-ctx.Done():
			return Result[S]{}, nil, nil, ctx.Err()
		}
		how = loadFresh
	}
	res, stored, p, trusted, err := decideOnce(ctx, h, agg, nil, m, evolve, decide, how)
	if !trusted {
		res, stored, p, _, err = decideOnce(ctx, h, agg, nil, m, evolve, decide, loadFresh)
	}
	return res, stored, p, err
}

// part is a decision on one aggregate, made under its lock and not yet
// handed to the store: what to submit, and the pipeline step it becomes
// once handed over, decided on pipe's pending state or else on base.
type part struct {
	submission domain.Submission
	pipe       *pipeline
	base       cacheEntry
	step       *pipelineStep
}

// handOver hands parts, decided under their aggregates' locks (still
// held), to the store as one decision, and makes each the last pending
// step of its aggregate.
func (h *Handler) handOver(ctx context.Context, parts ...*part) error {
	subs := make([]domain.Submission, len(parts))
	for i, p := range parts {
		subs[i] = p.submission
	}
	pending, err := h.store.Submit(ctx, subs...)
	if err != nil {
		return err
	}
	for i, p := range parts {
		p.step.pending = pending[i]
		h.pipelines.push(p.submission.Aggregate, p.pipe, p.step, p.base)
	}
	return nil
}

// decideOnce decides on agg's pending state (pipe), or else on its state
// loaded as how says. It returns the command's result as far as the
// decision tells it: whole for a command that decided nothing; all but
// the Event for one that ran before; the State for one that decided
// events. Then the part to hand to the store, if it decided any events,
// and stored, for the last two, which gives the whole result: it waits
// for the part once handed over, or asks the store for the event the
// command stored before. It reports false when it decided nothing on a
// state that was not fresh, which only a fresh state may settle.
func decideOnce[S any](ctx context.Context, h *Handler, agg domain.Aggregate, pipe *pipeline, m Meta,
	evolve func(S, domain.Event) S, decide func(S) ([]domain.Event, error), how loading) (Result[S], func() (Result[S], error), *part, bool, error) {
	var state S
	var entry cacheEntry
	var after domain.PendingAppend
	if pipe != nil {
		state, after = pipe.state.(S), pipe.tail
	} else {
		var done uint64
		var err error
		if state, entry, done, err = load(ctx, h, agg, evolve, m.CommandID, how); err != nil {
			return Result[S]{}, nil, nil, true, err
		}
		if err := includes(agg, entry.last, m.cause); err != nil {
			// A cached state may be behind; a fresh one is not.
			return Result[S]{}, nil, nil, how == loadFresh, err
		}
		if done != 0 {
			// The command ran before: its own event, not the latest.
			res := Result[S]{State: state, Sequence: done, Version: entry.last}
			return res, func() (Result[S], error) { return ranBefore(ctx, h, agg, res) }, nil, true, nil
		}
	}
	events, err := decide(state)
	// A stale version is told only to a caller the aggregate is there
	// for: one it is missing or forbidden to learns that, as without
	// If-Match, and not that it exists, nor its version.
	if pipe == nil && m.IfVersion != nil && *m.IfVersion != entry.last && !concealed(err) {
		return Result[S]{}, nil, nil, true, preconditionFailed(entry.last, *m.IfVersion)
	}
	if err != nil || len(events) == 0 {
		return Result[S]{State: state, Sequence: entry.last, Version: entry.last}, nil, nil, how == loadFresh && pipe == nil, err
	}
	envelopes, err := h.envelopes(agg, m, events)
	if err != nil {
		return Result[S]{}, nil, nil, true, err
	}
	for _, e := range events {
		state = evolve(state, e)
	}
	s := &pipelineStep{state: state, commandID: m.CommandID, follows: after != nil, base: entry.last}
	p := &part{submission: domain.Submission{Aggregate: agg, Expected: entry.last, After: after, Events: envelopes},
		pipe: pipe, base: entry, step: s}
	return Result[S]{State: state}, func() (Result[S], error) {
		seqs, err := s.pending.Wait(ctx)
		var last uint64
		if err == nil {
			last = seqs[len(seqs)-1]
		}
		// The cache takes the pipeline's outcomes in order; the
		// pipeline ends once it took them all, so the next command
		// finds one or the other.
		h.pipelines.settle(&h.cache, agg, s, last)
		if err != nil {
			return Result[S]{}, err
		}
		return Result[S]{State: state, Event: events[len(events)-1], Sequence: last, Version: last}, nil
	}, p, true, nil
}

// preconditionFailed is the error of a command whose aggregate is at
// version, not at the version it named.
func preconditionFailed(version, named uint64) error {
	return domain.Errorf(domain.PreconditionFailed, "If-Match names version %d, but the resource is at version %d now: it changed since; read it again", named, version)
}

// concealed reports whether err keeps an aggregate from its caller.
func concealed(err error) bool {
	code := domain.ErrorCode(err)
	return err != nil && (code == domain.NotFound || code == domain.Forbidden)
}

// retryOnConflict runs attempt until it returns something other than
// domain.ErrAggregateChanged, backing off with jitter, at most a bounded
// number of times.
func retryOnConflict(ctx context.Context, attempt func() error) error {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = 2 * time.Millisecond
	b.MaxInterval = 200 * time.Millisecond
	policy := backoff.WithContext(backoff.WithMaxRetries(b, 50), ctx)
	return backoff.Retry(func() error {
		err := attempt()
		if err != nil && !errors.Is(err, domain.ErrAggregateChanged) {
			return backoff.Permanent(err)
		}
		return err
	}, policy)
}

// ranBefore completes res, the result of a command that ran before on
// agg, with its own event, not the latest: the one at res.Sequence. It is
// asked for after the command's transaction, which may have stored other
// parts just now, so a store that does not answer for a moment is waited
// for: failing here would report a stored transaction as failed.
func ranBefore[S any](ctx context.Context, h *Handler, agg domain.Aggregate, res Result[S]) (Result[S], error) {
	var rec domain.Record
	err := retry.WhileUnavailable(ctx, func() (err error) {
		rec, err = h.store.Get(ctx, agg, res.Sequence)
		return err
	})
	if err != nil {
		return Result[S]{}, err
	}
	e, err := domain.DecodeEvent(rec.Type, rec.Data)
	if err != nil {
		return Result[S]{}, fmt.Errorf("loading %s: %w", agg, err)
	}
	res.Event = e
	return res, nil
}

// envelopes wraps a decision's events for the store, each with an id
// derived from the command, so that a retried command repeats them.
func (h *Handler) envelopes(agg domain.Aggregate, m Meta, events []domain.Event) ([]domain.Envelope, error) {
	out := make([]domain.Envelope, len(events))
	for i, e := range events {
		data, err := json.Marshal(e)
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", e.EventType(), err)
		}
		out[i] = domain.Envelope{
			Type:          e.EventType(),
			SchemaVersion: schemaVersion,
			EventID:       eventID(m, agg, i),
			CommandID:     m.CommandID,
			CorrelationID: m.CorrelationID,
			CausationID:   m.CausationID,
			Actor:         m.Principal.Subject,
			Tenant:        m.Principal.OrganizationID,
			ClientIP:      m.ClientIP,
			OccurredAt:    h.now().UTC(),
			Data:          data,
		}
	}
	return out, nil
}

// eventID is the id of the i-th event command m decides on agg: the same
// every time the command is retried.
func eventID(m Meta, agg domain.Aggregate, i int) string {
	return uuid.NewSHA1(idNamespace, fmt.Appendf(nil, "%s:%s:%d", m.CommandID, agg, i)).String()
}

func itoa(i int) string { return strconv.Itoa(i) }

// keyedLocks serialise work on one key within a process.
type keyedLocks struct {
	mu    sync.Mutex
	locks map[string]*keyedLock
}

type keyedLock struct {
	sync.Mutex
	users int
}

// lock takes the lock of key and returns its release.
func (k *keyedLocks) lock(key string) func() {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyedLock{}
	}
	l := k.locks[key]
	if l == nil {
		l = &keyedLock{}
		k.locks[key] = l
	}
	l.users++
	k.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		k.mu.Lock()
		if l.users--; l.users == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}
