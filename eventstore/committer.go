package eventstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Group commit. Under SyncAlways every stored message costs one fsync,
// whatever the publishing mode, while a JetStream atomic batch costs a
// fixed six device flushes however many messages it holds. So one
// committer per stream packs the decisions that are waiting into one
// atomic batch, with one batch in flight at a time: a decision commits
// whole or not at all, and many decisions share the flushes. The facts
// behind each choice are in the design's research notes on group commit.

// Atomic batch headers, set by hand: the three are all the protocol is.
const (
	hdrBatchID       = "Nats-Batch-Id"
	hdrBatchSequence = "Nats-Batch-Sequence"
	hdrBatchCommit   = "Nats-Batch-Commit"
)

const (
	// maxBatch is the server's limit on the messages of one atomic batch.
	maxBatch = 1000
	// commitTimeout bounds the wait for a batch's acknowledgement. A batch
	// takes milliseconds; one sent to a cluster node that died gets no
	// answer, and its callers learn after this long whether it was stored.
	// (The server itself abandons a batch not committed within 10 s.)
	commitTimeout = 4 * time.Second
	// linger is the longest the committer waits for the callers of the
	// last batch to come back with their next decisions: without it,
	// batches alternate between a few decisions and all the rest, and a
	// batch of a few costs as much as a full one.
	linger = time.Millisecond
	// maxKnownSubjects bounds the cache of last sequences. Forgetting
	// costs nothing but the local check: the server checks again.
	maxKnownSubjects = 100_000
)

var (
	// errWrongLast is the committer's answer when a decision's expected
	// sequence is not the aggregate's last: a conflict, unless the events
	// are the caller's own, stored by an earlier try.
	errWrongLast = errors.New("eventstore: wrong last sequence")
	// errClosed answers appends made while or after the store closes.
	errClosed = errors.New("eventstore: store is closed")
)

// decision is one Append waiting for the committer: the events of one
// aggregate and the sequence its last event must have now. A queue's job
// is a decision too, of one message and without an expectation.
type decision struct {
	ctx      context.Context
	subject  string
	expect   bool // expected applies; without it the subject is no aggregate
	expected uint64
	msgs     []*nats.Msg
	done     chan outcome // buffered: the committer never waits on a caller
}

// newDecision makes the messages of a decision: each event's envelope,
// with its id as Nats-Msg-Id, to the aggregate's subject.
func newDecision(ctx context.Context, subject string, expected uint64, events []Event) (*decision, error) {
	d := &decision{ctx: ctx, subject: subject, expect: true, expected: expected, done: make(chan outcome, 1)}
	for _, e := range events {
		if e.Type == "" || e.EventID == "" {
			return nil, errors.New("eventstore: an event needs a type and an id")
		}
		d.msgs = append(d.msgs, message(subject, e.EventID, e.header(), e.Data))
	}
	return d, nil
}

// newJob is a queue's job as a decision: one message, no expectation.
func newJob(ctx context.Context, subject, id string, data []byte) *decision {
	return &decision{ctx: ctx, subject: subject, msgs: []*nats.Msg{message(subject, id, nats.Header{}, data)}, done: make(chan outcome, 1)}
}

// message is a message to store once: its id is its Nats-Msg-Id.
func message(subject, id string, h nats.Header, data []byte) *nats.Msg {
	h.Set(jetstream.MsgIDHeader, id)
	return &nats.Msg{Subject: subject, Header: h, Data: data}
}

// outcome is what became of a decision: the sequence of its last event,
// or why it was not stored. An error other than errWrongLast leaves it
// open whether the batch was stored (a lost acknowledgement, say).
type outcome struct {
	last uint64
	err  error
}

type committer struct {
	js       jetstream.JetStream
	nc       *nats.Conn
	incoming chan []*decision // unbuffered: a decision handed over is answered
	stop     chan struct{}
	stopped  chan struct{}
	// lastSeq is each aggregate subject's last sequence as this process
	// stored it. Sequences only grow, so a decision expecting less than
	// this is a conflict whatever other writers did since; one expecting
	// more means another writer moved on, and the server decides.
	lastSeq map[string]uint64
	// betweenEvents, if set, runs before each event of a batch after the
	// first: tests inject faults there.
	betweenEvents func(sent int) error
}

// newCommitter starts a committer on a connection of its own.
func (s *Store) newCommitter(name string) (*committer, error) {
	nc, err := s.dial("cargostream " + name + " committer")
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	c := &committer{js: js, nc: nc, incoming: make(chan []*decision), stop: make(chan struct{}),
		stopped: make(chan struct{}), lastSeq: map[string]uint64{}}
	s.committers = append(s.committers, c)
	go c.run()
	return c, nil
}

// submit hands decisions to the committer, all at once, and waits for
// their outcomes, in the same order.
func (c *committer) submit(ctx context.Context, ds ...*decision) []outcome {
	outs := make([]outcome, len(ds))
	fail := func(err error) []outcome {
		for i := range outs {
			outs[i] = outcome{err: err}
		}
		return outs
	}
	select {
	case c.incoming <- ds:
	case <-c.stopped:
		return fail(errClosed)
	case <-ctx.Done():
		return fail(ctx.Err())
	}
	for i, d := range ds {
		select {
		case outs[i] = <-d.done:
		case <-ctx.Done():
			return fail(ctx.Err())
		}
	}
	return outs
}

// close answers the decisions still waiting, stops the committer once
// the batch in flight is done, and closes its connection.
func (c *committer) close() {
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	<-c.stopped
	c.nc.Close()
}

func (c *committer) run() {
	defer close(c.stopped)
	var waiting []*decision
	lastBatch := 0
	timer := time.NewTimer(0)
	for {
		if len(waiting) == 0 {
			select {
			case ds := <-c.incoming:
				waiting = append(waiting, ds...)
			case <-c.stop:
				return
			}
		}
		// Whatever else arrived while the last batch was in flight
		// joins this one, and so do as many as the last batch held if
		// they come within the linger: a lone writer never waits.
		timer.Reset(linger)
	more:
		for len(waiting) < maxBatch {
			select {
			case ds := <-c.incoming:
				waiting = append(waiting, ds...)
				continue
			default:
			}
			if len(waiting) >= lastBatch {
				break
			}
			select {
			case ds := <-c.incoming:
				waiting = append(waiting, ds...)
			case <-timer.C:
				break more
			}
		}
		timer.Stop()
		select {
		case <-c.stop:
			for _, d := range waiting {
				d.done <- outcome{err: errClosed}
			}
			return
		default:
		}
		var batch []*decision
		batch, waiting = c.pick(waiting)
		c.commit(batch)
		lastBatch = len(batch)
	}
}

// pick chooses the next batch from the waiting decisions, in their order,
// and returns the rest. Decisions whose expectation is already known to be
// stale are answered here: a single stale one would have the server reject
// the whole batch. A batch holds at most one decision per aggregate (the
// server checks a second expectation on a subject against the first) and
// at most maxBatch events.
func (c *committer) pick(waiting []*decision) (batch, rest []*decision) {
	subjects := map[string]bool{}
	events := 0
	for _, d := range waiting {
		switch {
		case d.ctx.Err() != nil:
			d.done <- outcome{err: d.ctx.Err()}
		case c.stale(d):
			d.done <- outcome{err: errWrongLast}
		case (d.expect && subjects[d.subject]), events+len(d.msgs) > maxBatch:
			rest = append(rest, d)
		default:
			batch = append(batch, d)
			subjects[d.subject] = d.expect
			events += len(d.msgs)
		}
	}
	return batch, rest
}

// stale reports whether d expects less than the aggregate's known last
// sequence. A cached sequence below the expected one is another writer's
// progress: it is forgotten, and the server judges.
func (c *committer) stale(d *decision) bool {
	if !d.expect {
		return false
	}
	last, ok := c.lastSeq[d.subject]
	if ok && last < d.expected {
		delete(c.lastSeq, d.subject)
	}
	return ok && last > d.expected
}

// commit stores a batch and answers its decisions. It never sends a batch
// twice: after a lost acknowledgement nobody knows whether it was stored,
// and the callers find out by reading the aggregates' last events.
func (c *committer) commit(batch []*decision) {
	if len(batch) == 0 {
		return
	}
	var msgs []*nats.Msg
	for _, d := range batch {
		for i, m := range d.msgs {
			m.Header.Del(jetstream.ExpectedLastSubjSeqHeader)
			if i == 0 && d.expect {
				m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(d.expected, 10))
			}
			msgs = append(msgs, m)
		}
	}
	last, err := c.publish(msgs)
	var apiErr *jetstream.APIError
	switch {
	case err == nil:
		// An atomic batch is stored in order and without gaps: its
		// events are the len(msgs) sequences ending at last.
		end := last - uint64(len(msgs))
		for _, d := range batch {
			end += uint64(len(d.msgs))
			if d.expect {
				c.remember(d.subject, end)
			}
			d.done <- outcome{last: end}
		}
	case errors.As(err, &apiErr) && rejectedAsConflict(apiErr.ErrorCode):
		for _, d := range batch {
			delete(c.lastSeq, d.subject)
		}
		if len(batch) == 1 {
			batch[0].done <- outcome{err: errWrongLast}
			return
		}
		// One decision spoiled the batch and the server does not say
		// which: each goes again on its own, and meets its own fate.
		for _, d := range batch {
			c.commit([]*decision{d})
		}
	default:
		for _, d := range batch {
			delete(c.lastSeq, d.subject)
			d.done <- outcome{err: err}
		}
	}
}

// rejectedAsConflict reports whether the server refused a batch because an
// expectation failed (10164 on replicated streams and for a subject written
// twice in a batch), because an event id was already stored (10201), or
// because another writer is storing the same event id at this moment
// (10158: two replicas carrying out one command, as when both seed a new
// cluster).
func rejectedAsConflict(code jetstream.ErrorCode) bool {
	return code == jetstream.JSErrCodeStreamWrongLastSequence ||
		code == jetstream.JSErrCodeStreamWrongLastSequenceConstant || code == errCodeBatchDuplicateID ||
		code == errCodeDuplicateInProcess
}

// Error codes nats.go has no name for.
const (
	errCodeBatchDuplicateID   jetstream.ErrorCode = 10201 // atomic publish batch contains duplicate message id
	errCodeDuplicateInProcess jetstream.ErrorCode = 10158 // duplicate message id is in process
)

func (c *committer) remember(subject string, seq uint64) {
	if len(c.lastSeq) >= maxKnownSubjects {
		clear(c.lastSeq)
	}
	c.lastSeq[subject] = seq
}

// publish stores msgs and returns the sequence of the last. A single
// message is a plain publish, which is atomic by itself and costs one
// fsync instead of a batch's six; more go as one atomic batch: all but the
// last as plain messages, the last as the commit request.
func (c *committer) publish(msgs []*nats.Msg) (uint64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	if len(msgs) == 1 {
		m := msgs[0]
		for _, h := range []string{hdrBatchID, hdrBatchSequence, hdrBatchCommit} {
			m.Header.Del(h)
		}
		ack, err := c.js.PublishMsg(ctx, m)
		if err != nil {
			return 0, err
		}
		return ack.Sequence, nil
	}
	id := uuid.NewString()
	for i, m := range msgs {
		m.Header.Set(hdrBatchID, id)
		m.Header.Set(hdrBatchSequence, strconv.Itoa(i+1))
		m.Header.Del(hdrBatchCommit)
		if i > 0 && c.betweenEvents != nil {
			if err := c.betweenEvents(i); err != nil {
				return 0, err
			}
		}
		if i < len(msgs)-1 {
			if err := c.nc.PublishMsg(m); err != nil {
				return 0, err
			}
		}
	}
	commit := msgs[len(msgs)-1]
	commit.Header.Set(hdrBatchCommit, "1")
	reply, err := c.nc.RequestMsgWithContext(ctx, commit)
	if err != nil {
		return 0, err
	}
	var ack struct {
		Error *jetstream.APIError `json:"error"`
		Seq   uint64              `json:"seq"`
		Count int                 `json:"count"`
	}
	if err := json.Unmarshal(reply.Data, &ack); err != nil {
		return 0, fmt.Errorf("eventstore: batch acknowledgement %q: %w", reply.Data, err)
	}
	if ack.Error != nil {
		return 0, ack.Error
	}
	if ack.Count != len(msgs) {
		return 0, fmt.Errorf("eventstore: batch of %d acknowledged with count %d", len(msgs), ack.Count)
	}
	return ack.Seq, nil
}
