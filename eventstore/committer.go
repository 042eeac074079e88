package eventstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cargostream/cargostream/domain"
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
	// maxBatch is the server's limit on the messages of one atomic batch,
	// unless it is set lower (see committer.limit).
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
	// after is the decision on the same aggregate that this one was
	// decided after while that one waited to be stored (a pipeline on a
	// busy aggregate). This one is stored right after it: in the same
	// batch, where only the first decision on a subject may carry an
	// expectation and the server stores the others after it or none, or
	// in a later batch with after's last sequence as its expectation. If
	// after fails, so does this one: it was decided on after's outcome.
	after    *decision
	followed atomic.Bool // a decision was submitted after this one
	chained  bool        // in its batch right after `after`, without an expectation
	// group, if set, is every part of a decision across aggregates, this
	// one among them: they go in one batch, and fail together.
	group []*decision
	msgs  []*nats.Msg
	// eventIDs are the events' ids, in the order of msgs, for the
	// waiters that check where they were stored (storedAsDecided):
	// their messages' headers are the committer's, which sets the
	// expectation in them as it commits.
	eventIDs []string
	handed   time.Time     // when it was handed to the committer
	out      outcome       // set by the committer before settled is closed
	settled  chan struct{} // closed once the decision has its outcome
}

// newDecision makes the messages of a decision: each event's envelope,
// with its id as Nats-Msg-Id, to the aggregate's subject.
func newDecision(ctx context.Context, subject string, expected uint64, events []domain.Envelope) (*decision, error) {
	d := &decision{ctx: ctx, subject: subject, expect: true, expected: expected, settled: make(chan struct{})}
	for _, e := range events {
		if e.Type == "" || e.EventID == "" {
			return nil, errors.New("eventstore: an event needs a type and an id")
		}
		d.msgs = append(d.msgs, message(subject, e.EventID, header(e), e.Data))
		d.eventIDs = append(d.eventIDs, e.EventID)
	}
	return d, nil
}

// message is a message to store once: its id is its Nats-Msg-Id.
func message(subject, id string, h nats.Header, data []byte) *nats.Msg {
	h.Set(jetstream.MsgIDHeader, id)
	return &nats.Msg{Subject: subject, Header: h, Data: data}
}

// lastEvent is the sequence and id of an aggregate's last event.
type lastEvent struct {
	seq uint64
	id  string
}

// outcome is what became of a decision: the sequence of its last event,
// or why it was not stored. An error other than errWrongLast leaves it
// open whether the batch was stored (a lost acknowledgement, say).
type outcome struct {
	last uint64
	err  error
	// known marks an errWrongLast the committer found by itself: the
	// decision's events are not the aggregate's last (as far as this
	// process stored it), so the caller need not read the aggregate to
	// tell a conflict from its own earlier try.
	known bool
}

// knownConflict is the outcome of a decision that the committer knows
// to conflict without asking the server.
var knownConflict = outcome{err: errWrongLast, known: true}

// answer gives d its outcome. Only the committer's goroutine answers.
func (d *decision) answer(o outcome) {
	d.out = o
	close(d.settled)
}

// answered reports whether d has its outcome.
func (d *decision) answered() bool {
	select {
	case <-d.settled:
		return true
	default:
		return false
	}
}

// wait returns d's outcome once it has one.
func (d *decision) wait(ctx context.Context) outcome {
	select {
	case <-d.settled:
		return d.out
	case <-ctx.Done():
		return outcome{err: ctx.Err()}
	}
}

type committer struct {
	js jetstream.JetStream
	nc *nats.Conn
	// queue holds the decisions handed over and not yet taken: callers
	// hand over while a batch is in flight, without waiting for it, so
	// that the next batch gathers all of them. wake says there are some.
	mu     sync.Mutex
	queue  []*decision
	closed bool // every decision handed over from now on is refused
	// chainMu guards the after and expected of the decisions handed
	// over: the committer rewrites them when a chained decision comes to
	// follow its stored predecessor (follow), while a waiter may be
	// walking the chain to see where its own events were stored
	// (storedAsDecided).
	chainMu sync.Mutex
	wake    chan struct{}
	stop    chan struct{}
	stopped chan struct{}
	// lastSeq is each aggregate subject's last event as this process
	// stored it. Sequences only grow, so a decision expecting less than
	// this is a conflict whatever other writers did since; one expecting
	// more means another writer moved on, and the server decides.
	lastSeq map[string]lastEvent
	// stored is the stream sequence of the last event stored: for a
	// subscription that heard nothing for a while, proof without asking
	// the server that it missed something.
	stored atomic.Uint64
	// limit is the most events a batch holds: maxBatch, or less once the
	// server refused a batch as larger than it takes (a server set with a
	// smaller max_batch_size): batches of concurrent decisions that each
	// fit it would otherwise all be refused. Only the committer's
	// goroutine uses it.
	limit int
	// betweenEvents, if set, runs before each event of a batch after the
	// first, next, is sent: tests inject faults there.
	betweenEvents func(sent int, next *nats.Msg) error
	obs           Observer // hears of every batch stored
}

// newCommitter starts a committer on a connection of its own, which tells
// obs what it stores.
//
// The connection keeps nothing while it reconnects: a batch sent then
// fails at once. nats.go would otherwise hold it (8 MB) and send it once
// the connection is back, seconds after the committer answered its
// decisions as failed and their callers read that nothing was stored: a
// write refused with a 503 would be stored after all, and a client
// without an Idempotency-Key that retried it would store it twice.
func (s *Store) newCommitter(name string, obs Observer) (*committer, error) {
	nc, err := s.dial("cargostream "+name+" committer", nil, nats.ReconnectBufSize(-1))
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	c := &committer{js: js, nc: nc, wake: make(chan struct{}, 1), stop: make(chan struct{}),
		stopped: make(chan struct{}), lastSeq: map[string]lastEvent{}, limit: maxBatch, obs: obs}
	s.committersMu.Lock()
	defer s.committersMu.Unlock()
	if s.closing {
		nc.Close()
		return nil, errClosed
	}
	s.committers = append(s.committers, c)
	go c.run()
	return c, nil
}

// submit hands decisions to the committer, all at once, and waits for
// their outcomes, in the same order.
func (c *committer) submit(ctx context.Context, ds ...*decision) []outcome {
	outs := make([]outcome, len(ds))
	if err := c.handOver(ctx, ds...); err != nil {
		for i := range outs {
			outs[i] = outcome{err: err}
		}
		return outs
	}
	for i, d := range ds {
		outs[i] = d.wait(ctx)
	}
	return outs
}

// handOver gives decisions to the committer, all at once, without
// waiting for their outcomes.
func (c *committer) handOver(ctx context.Context, ds ...*decision) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := time.Now()
	for _, d := range ds {
		d.handed = now
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errClosed
	}
	c.queue = append(c.queue, ds...)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default: // already woken
	}
	return nil
}

// take returns the decisions handed over since the last take.
func (c *committer) take() []*decision {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.queue
	c.queue = nil
	return q
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
		waiting = append(waiting, c.take()...)
		if len(waiting) == 0 {
			select {
			case <-c.wake:
				continue
			case <-c.stop:
				c.refuse(nil)
				return
			}
		}
		// Whatever else arrived while the last batch was in flight
		// joins this one, and so do the callers of the last batch if
		// they come within the linger: a lone writer never waits. A
		// decision across aggregates is one caller's.
		timer.Reset(linger)
	more:
		for len(waiting) < c.limit && callers(waiting) < lastBatch {
			select {
			case <-c.wake:
				waiting = append(waiting, c.take()...)
			case <-timer.C:
				break more
			}
		}
		timer.Stop()
		select {
		case <-c.stop:
			c.refuse(waiting)
			return
		default:
		}
		var batch []*decision
		batch, waiting = c.pick(waiting)
		c.commit(batch)
		lastBatch = callers(batch)
	}
}

// callers counts the callers whose decisions ds are: one for each
// decision, or for all the parts of a decision across aggregates.
func callers(ds []*decision) int {
	n := 0
	for _, d := range ds {
		if d.group == nil || d == d.group[0] {
			n++
		}
	}
	return n
}

// refuse answers waiting, and every decision handed over from now on,
// with errClosed.
func (c *committer) refuse(waiting []*decision) {
	c.mu.Lock()
	c.closed = true
	waiting = append(waiting, c.queue...)
	c.queue = nil
	c.mu.Unlock()
	for _, d := range waiting {
		d.answer(outcome{err: errClosed})
	}
}

// pick chooses the next batch from the waiting decisions, in their order,
// and returns the rest. Decisions whose expectation is already known to be
// stale are answered here: a single stale one would have the server reject
// the whole batch. A batch holds at most one independent decision per
// aggregate (the server checks a second expectation on a subject against
// the first), followed by those decided after it, and at most c.limit
// events (but for a first unit that alone has more, which the server then
// refuses, saying why). The parts of a decision across aggregates go
// together or wait together.
func (c *committer) pick(waiting []*decision) (batch, rest []*decision) {
	subjects := map[string]bool{}
	picked := map[*decision]bool{}
	events := 0
	for _, d := range waiting {
		if d.group != nil && d != d.group[0] {
			continue // it goes with its group's first part
		}
		unit := d.unit()
		switch c.place(unit, picked, subjects, events) {
		case unitAnswered:
		case unitWaits:
			rest = append(rest, unit...)
		case unitPicked:
			for _, d := range unit {
				batch = append(batch, d)
				picked[d] = true
				events += len(d.msgs)
				if !d.chained {
					subjects[d.subject] = d.expect
				}
			}
		}
	}
	return batch, rest
}

// unit is d, or every part of the decision across aggregates d is part
// of: what goes in a batch together.
func (d *decision) unit() []*decision {
	if d.group != nil {
		return d.group
	}
	return []*decision{d}
}

// placement is what pick does with a unit.
type placement int

const (
	unitPicked   placement = iota // into the batch
	unitWaits                     // for a later batch
	unitAnswered                  // given its outcome without being sent
)

// place judges whether unit joins the batch picked so far (picked, the
// subjects of its independent decisions, its events), marking the parts
// that follow a decision picked before them as chained.
func (c *committer) place(unit []*decision, picked map[*decision]bool, subjects map[string]bool, events int) placement {
	for _, d := range unit {
		if d.after != nil && d.after.answered() && !c.follow(d) {
			answerAll(unit, knownConflict)
			return unitAnswered
		}
	}
	if err := unit[0].ctx.Err(); err != nil {
		answerAll(unit, outcome{err: err})
		return unitAnswered
	}
	size := 0
	for _, d := range unit {
		size += len(d.msgs)
		switch {
		case d.after != nil && !picked[d.after]: // after waits for a later batch
			return unitWaits
		case d.after == nil && d.expect && subjects[d.subject]:
			return unitWaits
		}
	}
	if events > 0 && events+size > c.limit {
		return unitWaits
	}
	for _, d := range unit {
		if o, stale := c.stale(d); stale {
			// The parts are stored together or not at all: as this
			// one is, so are the others. Which is not known here when
			// there are others: each reads whether its events are
			// stored (by an earlier try), as after the server's
			// refusal.
			if len(unit) > 1 {
				o = outcome{err: errWrongLast}
			}
			answerAll(unit, o)
			return unitAnswered
		}
	}
	for _, d := range unit {
		d.chained = d.after != nil
	}
	return unitPicked
}

// answerAll gives every decision of unit that has none yet the outcome o.
func answerAll(unit []*decision, o outcome) {
	for _, d := range unit {
		if !d.answered() {
			d.answer(o)
		}
	}
}

// follow turns d, whose predecessor has its outcome, into a decision of
// its own that expects the predecessor's last sequence; or, when the
// predecessor failed, answers d as a conflict (it was decided on a state
// that never came to be) and reports false.
func (c *committer) follow(d *decision) bool {
	after := d.after
	c.chainMu.Lock()
	defer c.chainMu.Unlock()
	d.after, d.chained = nil, false
	if after.out.err != nil {
		// Never sent, and decided on a state that never came to be:
		// a conflict. (Its events could be stored only if a caller
		// decided a command again after an earlier try stored it; the
		// caller's fresh load after the conflict finds that try.)
		d.answer(knownConflict)
		return false
	}
	d.expected = after.out.last
	return true
}

// stale reports whether d expects less than the aggregate's known last
// sequence, and the outcome it then has: a conflict, known as such unless
// that last event is d's own (stored by an earlier try, which the caller
// then confirms). A cached sequence below the expected one is another
// writer's progress: it is forgotten, and the server judges.
func (c *committer) stale(d *decision) (outcome, bool) {
	if !d.expect || d.after != nil {
		return outcome{}, false
	}
	last, ok := c.lastSeq[d.subject]
	if ok && last.seq < d.expected {
		delete(c.lastSeq, d.subject)
	}
	if !ok || last.seq <= d.expected {
		return outcome{}, false
	}
	if last.id == lastID(d) {
		return outcome{err: errWrongLast}, true
	}
	return knownConflict, true
}

// lastID is the id of d's last event.
func lastID(d *decision) string {
	return d.msgs[len(d.msgs)-1].Header.Get(jetstream.MsgIDHeader)
}

// commit stores a batch and answers its decisions. A batch whose
// acknowledgement was lost is never sent again: nobody knows whether it
// was stored, and the callers find out by reading the aggregates' last
// events. One the server refused, storing none of it, goes again
// decision by decision.
func (c *committer) commit(batch []*decision) {
	if len(batch) == 0 {
		return
	}
	if len(batch) > 1 && len(batch) <= maxOneByOne && loneEvents(batch) {
		c.oneByOne(batch)
		return
	}
	var msgs []*nats.Msg
	for _, d := range batch {
		for i, m := range d.msgs {
			m.Header.Del(jetstream.ExpectedLastSubjSeqHeader)
			if i == 0 && d.expect && !d.chained {
				m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(d.expected, 10))
			}
			msgs = append(msgs, m)
		}
	}
	start := time.Now()
	last, duplicate, err := c.publish(msgs)
	var apiErr *jetstream.APIError
	switch {
	case duplicate && batch[0].expect:
		// An event stored before, within the duplicate window: the ack
		// names where, not the aggregate's last, so it moves nothing. As
		// after a lost acknowledgement, the caller reads whether it is
		// stored where it expected (its own earlier try) or not (a
		// conflict).
		batch[0].answer(outcome{err: errWrongLast})
	case duplicate:
		// A job put before: kept once, as the queue promises.
		batch[0].answer(outcome{last: last})
	case err == nil:
		stored := time.Now()
		c.stored.Store(last)
		// An atomic batch is stored in order and without gaps: its
		// events are the len(msgs) sequences ending at last.
		end := last - uint64(len(msgs))
		for _, d := range batch {
			end += uint64(len(d.msgs))
			if d.expect {
				c.remember(d.subject, lastEvent{seq: end, id: lastID(d)})
			}
			d.answer(outcome{last: end})
		}
		// Metrics after the answers: every write goes through this
		// goroutine, and no caller waits for another's bookkeeping.
		c.obs.BatchStored(len(msgs), stored.Sub(start))
		for _, d := range batch {
			c.obs.DecisionStored(stored.Sub(d.handed))
			for _, m := range d.msgs {
				c.obs.EventStored(m.Header.Get(hdrType))
			}
		}
	case errors.As(err, &apiErr) && rejectedAsConflict(apiErr.ErrorCode):
		for _, d := range batch {
			delete(c.lastSeq, d.subject)
		}
		if len(batch) == len(batch[0].unit()) {
			answerAll(batch, outcome{err: errWrongLast})
			return
		}
		// One decision spoiled the batch and the server does not say
		// which: each goes again on its own, and meets its own fate.
		c.oneByOne(batch)
	case errors.As(err, &apiErr) && apiErr.ErrorCode == errCodeBatchTooLarge && len(batch) > len(batch[0].unit()):
		// The server takes smaller batches than maxBatch (its
		// max_batch_size), and stored none of this one. Each decision
		// goes again on its own, and the batches after it are cut to
		// the server's limit. (One decision alone larger than that
		// is answered with the error: no batch can store it.)
		c.limit = min(c.limit, serverBatchLimit(apiErr, len(msgs)))
		c.oneByOne(batch)
	case errors.As(err, &apiErr) && apiErr.ErrorCode == errCodeBatchIncomplete && len(batch) > len(batch[0].unit()):
		// Some of the batch's messages did not reach the stream's leader
		// (a new one, elected while they were sent), so the server stored
		// none; seen on a cluster just formed. Nothing is in doubt, and
		// each decision goes again on its own. (One decision alone is
		// answered with the error, transient: its caller may try again.)
		c.oneByOne(batch)
	default:
		for _, d := range batch {
			delete(c.lastSeq, d.subject)
			d.answer(outcome{err: err})
		}
	}
}

// maxOneByOne is the most single-event decisions that are stored one
// after another rather than as an atomic batch: a plain publish costs one
// fsync, a batch six flushes and a staging store of its own, whatever its
// size (research: 0.2 ms against 2.4 ms).
const maxOneByOne = 4

// loneEvents reports whether every decision of batch is one event and
// stands alone, not a part of a decision across aggregates.
func loneEvents(batch []*decision) bool {
	for _, d := range batch {
		if len(d.msgs) != 1 || d.group != nil {
			return false
		}
	}
	return true
}

// oneByOne stores the decisions of a batch each on its own (the parts of
// a decision across aggregates together), in order; one decided after
// another goes once that one has its outcome. Once the server does not
// answer one (a lost connection, a node gone), the rest are not sent:
// each would wait commitTimeout in turn, and Close waits for them all.
// They are answered with that failure, and their callers read whether
// they were stored, as after any lost acknowledgement.
func (c *committer) oneByOne(batch []*decision) {
	var silent error
	for _, d := range batch {
		if d.group != nil && d != d.group[0] {
			continue // it went with its group's first part
		}
		unit := d.unit()
		err := silent
		if err == nil {
			err = unit[0].ctx.Err() // its caller gave up meanwhile
		}
		if err != nil {
			answerAll(unit, outcome{err: err})
			continue
		}
		if !c.followAll(unit) {
			continue
		}
		c.commit(unit)
		if err := unit[0].out.err; transient(err) {
			silent = err
		}
	}
}

// followAll turns the chained decisions of unit into decisions of their
// own (see follow); if one of them cannot be, it answers the whole unit
// as a conflict and reports false.
func (c *committer) followAll(unit []*decision) bool {
	for _, d := range unit {
		if d.chained && !c.follow(d) {
			answerAll(unit, knownConflict)
			return false
		}
	}
	return true
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
	errCodeBatchIncomplete    jetstream.ErrorCode = 10176 // atomic publish batch is incomplete
	errCodeBatchTooLarge      jetstream.ErrorCode = 10199 // atomic publish batch is too large: {size}
)

// serverBatchLimit is the most messages the server takes in one atomic
// batch, as its refusal of a batch of sent messages as too large says
// ("atomic publish batch is too large: 100"); half of sent if it does not
// say, so that the batches shrink until they fit.
func serverBatchLimit(refusal *jetstream.APIError, sent int) int {
	_, size, _ := strings.Cut(refusal.Description, "too large: ")
	if n, err := strconv.Atoi(strings.TrimSpace(size)); err == nil && n > 0 {
		return n
	}
	return max(sent/2, 1)
}

func (c *committer) remember(subject string, last lastEvent) {
	if len(c.lastSeq) >= maxKnownSubjects {
		clear(c.lastSeq)
	}
	c.lastSeq[subject] = last
}

// publish stores msgs and returns the sequence of the last. A single
// message is a plain publish, which is atomic by itself and costs one
// fsync instead of a batch's six; more go as one atomic batch (see
// publishBatch). duplicate reports a single message whose id the stream
// had stored before, at the sequence returned (a batch with one is
// refused instead).
//
// Either is sent again while the server answers that no one listens on
// its subject, until commitTimeout: nothing was stored then, as no
// stream's leader got it. The server has no route to the leader yet, as
// for a stream just made on a cluster (its leader's interest comes after
// the answer to the creation: seen once in many runs of the queue's
// cluster test), or the stream is electing one. This loop is the only
// retry: publishOne turns nats.go's own tries of a plain publish off, and
// nats.go has none for a batch.
func (c *committer) publish(msgs []*nats.Msg) (last uint64, duplicate bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	for {
		if len(msgs) == 1 {
			last, duplicate, err = c.publishOne(ctx, msgs[0])
		} else {
			last, err = c.publishBatch(ctx, msgs)
		}
		if !noResponders(err) {
			return last, duplicate, err
		}
		if pause(ctx, jetstream.DefaultPubRetryWait); ctx.Err() != nil {
			return 0, false, err
		}
	}
}

// noResponders reports whether err is the server's answer that no one
// listens on a write's subject: nothing was stored (see publish). nats.go
// says so as ErrNoStreamResponse once its own tries of a publish are over.
func noResponders(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse)
}

// publishOne stores m with a plain publish.
func (c *committer) publishOne(ctx context.Context, m *nats.Msg) (last uint64, duplicate bool, err error) {
	for _, h := range []string{hdrBatchID, hdrBatchSequence, hdrBatchCommit} {
		m.Header.Del(h)
	}
	ack, err := c.js.PublishMsg(ctx, m, jetstream.WithRetryAttempts(0))
	if err != nil {
		return 0, false, err
	}
	return ack.Sequence, ack.Duplicate, nil
}

// publishBatch stores msgs as one atomic batch of a new id: all but the
// last as plain messages, the last as the commit request.
func (c *committer) publishBatch(ctx context.Context, msgs []*nats.Msg) (last uint64, err error) {
	id := uuid.NewString()
	for i, m := range msgs {
		m.Header.Set(hdrBatchID, id)
		m.Header.Set(hdrBatchSequence, strconv.Itoa(i+1))
		m.Header.Del(hdrBatchCommit)
		if i > 0 && c.betweenEvents != nil {
			if err := c.betweenEvents(i, m); err != nil {
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
