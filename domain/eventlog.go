package domain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// The event log's vocabulary: how events are addressed, wrapped and read
// back, and how storing them fails. Package eventstore keeps them in
// NATS JetStream; the packages above it speak of them in these terms
// only, through interfaces of their own that the store satisfies.

// Aggregate names the history of one aggregate instance, such as the
// quote with a given id. Each has a subject of its own in the stream,
// which is what optimistic concurrency is checked against.
type Aggregate struct {
	Type string // one of the Aggregate* constants
	ID   string
}

func (a Aggregate) String() string { return a.Type + "/" + a.ID }

// Envelope is an event's payload with everything recorded about it: to
// append, or read back as part of a Record.
type Envelope struct {
	Type          string // the event's EventType
	SchemaVersion int
	EventID       string
	CommandID     string
	CorrelationID string
	CausationID   string
	Actor         string
	Tenant        string
	ClientIP      string // the address the command came from, for the audit log
	OccurredAt    time.Time
	Data          []byte // the event, encoded as JSON
}

// Record is a stored event with its position in the stream.
type Record struct {
	Envelope
	Aggregate Aggregate
	Sequence  uint64 // stream sequence: the global order of all events
	// StoredAt is when the stream stored the event, by the clock of the
	// server that stored it: after OccurredAt, when its command decided
	// it, by as long as the decision waited to be stored.
	StoredAt time.Time
}

// Submission is one aggregate's decision handed to the event store: its
// events, to be stored if the aggregate's last event is still at sequence
// Expected (0: the aggregate has none yet), or, when After is set, right
// after After, the pending decision on the same aggregate it was decided
// after (Expected is not used then).
type Submission struct {
	Aggregate Aggregate
	Expected  uint64
	After     PendingAppend
	Events    []Envelope
}

// PendingAppend is a decision handed to the event store, not yet known to
// be stored.
type PendingAppend interface {
	// Done is closed once the decision has its answer, so that Wait
	// returns at once.
	Done() <-chan struct{}
	// Wait returns the stream sequence of each of the decision's events
	// once they are stored, or ErrAggregateChanged.
	Wait(ctx context.Context) ([]uint64, error)
}

// StoredFile describes a file kept beside the events, such as the file of
// an uploaded document.
type StoredFile struct {
	Name    string
	Size    int64
	ModTime time.Time
}

// StreamProblem is something wrong with one event of the stream, as
// checking the stream finds it (see eventstore's Check).
type StreamProblem struct {
	Sequence  uint64
	Aggregate Aggregate
	Check     string // CheckDecodes, CheckEnvelope or CheckSequence
	Problem   string
}

// What checking the stream looks at.
const (
	CheckDecodes  = "decodes"  // the event's type is known and its payload decodes
	CheckEnvelope = "envelope" // the envelope has everything every write puts in it
	CheckSequence = "sequence" // the stream and each aggregate have no gaps
)

// FailureLevel is the level a failure of the event store is logged at: a
// warning when a wait cures it (ErrStoreUnavailable: an election, a node
// lost), which the store's own lines tell the operator of, where an error
// at every try flooded the log of each election; an error otherwise.
func FailureLevel(err error) slog.Level {
	if errors.Is(err, ErrStoreUnavailable) {
		return slog.LevelWarn
	}
	return slog.LevelError
}

var (
	// ErrAggregateChanged means another writer appended to the aggregate
	// since it was loaded: reload, decide again, and retry.
	ErrAggregateChanged = errors.New("the aggregate changed concurrently")
	// ErrStoreUnavailable means the event store did not answer in time, or
	// its cluster has no leader or quorum. Nothing was stored (an append
	// checks afterwards), and a retry of the same command is safe.
	ErrStoreUnavailable = errors.New("the event store is not available")
	// ErrStoreFull means the event store refused a write for want of room
	// (its disk, or a storage limit, is full). It is ErrStoreUnavailable
	// too: nothing was stored, and the same command succeeds once the
	// operator has made room.
	ErrStoreFull = fmt.Errorf("%w: it has no room for more events", ErrStoreUnavailable)
	// ErrReadBehind means a read of a resource, made to handle one of its
	// events, ended before that event: the store answered from a copy
	// behind the one that handed the event over (a node back from a
	// cut-off, leading for a moment). It is ErrStoreUnavailable too: a
	// moment later the read is whole. One that stays so is an event gone
	// from its resource's reads (lost with a damaged file).
	ErrReadBehind = fmt.Errorf("%w: it answered from a copy behind the event being handled", ErrStoreUnavailable)
	// ErrUnknownEventType means an event's type is not one this version
	// knows: a newer version wrote it (a rolling upgrade). No decision is
	// made on an aggregate that holds one; a replica of that version can.
	ErrUnknownEventType = errors.New("an event of a type this version does not know")
	// ErrSubscriptionStalled ends a subscription whose consumer delivered
	// nothing for seconds while the stream held events for it (its server
	// died, or the consumer went quiet under load): the caller begins
	// again from its last event with a new one.
	ErrSubscriptionStalled = errors.New("the subscription stalled")
	// ErrNoStoredFile means no file of that name is stored.
	ErrNoStoredFile = errors.New("no such file in the store")
)
