package eventstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/nats-io/nats.go/jetstream"
)

const (
	// consumerAckWait is how long an event handed to a process that then
	// died waits before it is delivered again. Events in hand are kept
	// alive by progress acknowledgements every consumerAckWait/3, so long
	// work is never taken away while its process lives.
	consumerAckWait = 2 * time.Second
	// consumerInHand bounds the events delivered but not yet acknowledged,
	// all replicas together: the work waiting behind a slow aggregate.
	consumerInHand = 1000
	// consumerGroup is the priority group the replicas pull through: the
	// server pins it to one of them, so that the events of an aggregate
	// are never handled by two replicas at once (with the wait of a
	// replica newly pinned for the events in hand elsewhere: a change of
	// the consumer's leader drops the pin at once; see lanes.gated).
	// A replica that stops
	// pulling loses the pin after consumerPinnedTTL; its pulls (expiring
	// every consumerPullExpiry, sooner) keep it while it lives, and once
	// it stops, while its steps under way finish (holdPin). The pin
	// outlasts the AckWait of the events a stopped replica left in hand,
	// counted from its last pull (4 s ≥ 1 s + 2 s, with a second to spare
	// for a last progress acknowledgement), so that they are delivered
	// again before the events behind them. Among themselves they may come
	// back in another order: a redelivery the server cannot hand to the
	// pinned replica goes to the back of its queue (nats-server 2.15,
	// consumer.go, getNextMsg). Reactors do not mind: every step loads the
	// current state of what it works on.
	consumerGroup      = "reactors"
	consumerPinnedTTL  = 4 * time.Second
	consumerPullExpiry = 1 * time.Second
)

// pullMessages begins the long-lived pull of cons, each pull expiring after
// expiry, and what tells of its interruptions. The heartbeat is set here,
// half the expiry (nats.go's own default), rather than left to nats.go:
// the quiet that says the pulls are answered again is counted from it.
// nats.go tells of a missed heartbeat at most twice the heartbeat after it
// last told of one (or pulled again), and a third heartbeat leaves room
// for a late timer.
func (s *Store) pullMessages(cons jetstream.Consumer, expiry time.Duration, what string, attrs []any, opts ...jetstream.PullMessagesOpt) (jetstream.MessagesContext, *interruptions, error) {
	heartbeat := expiry / 2
	msgs, err := cons.Messages(append([]jetstream.PullMessagesOpt{jetstream.PullExpiry(expiry), jetstream.PullHeartbeat(heartbeat)}, opts...)...)
	if err != nil {
		return nil, nil, err
	}
	return msgs, &interruptions{log: s.log, what: what, attrs: attrs, quietFor: 3 * heartbeat, connected: s.nc.IsConnected}, nil
}

// Consume hands each event matching filters to fn through the durable
// consumer name, which all replicas share: every event is handled until fn
// returns nil for it, by one replica at a time. The events of one
// aggregate go to fn one after another in stream order; those of
// different aggregates go to fn concurrently, up to parallel at a time.
// An event whose fn fails (or panics) is tried again after a pause, and
// the later events of its aggregate wait for it; after ConsumerAttempts
// failures in a row it is parked (see parked.go) and they go on. Each
// failure goes to onError, but for the store unavailable (or read behind
// the event), which counts for nothing, or for less, and is logged here
// as a warning. The
// retries of parked events that an operator asks for come to fn as well,
// each in its aggregate's turn.
// An event in hand when the process dies is delivered again within
// seconds, so a crash part way through is repaired by redelivery; fn must
// therefore be idempotent. Consume returns when ctx ends, once the events
// in hand are handled or left for the server to deliver again; a consumer
// that fails before (its server lost, say) is begun again.
func (s *Store) Consume(ctx context.Context, name string, filters []string, parallel int, fn func(domain.Record) error, onError func(domain.Record, error)) {
	retries := make(chan struct{})
	go func() {
		defer close(retries)
		s.keepFollowing(ctx, "retries of consumer "+name, func(began func()) error { return s.followRetries(ctx, name, fn, began) })
	}()
	defer func() { <-retries }()
	s.keepFollowing(ctx, "consumer "+name, func(began func()) error {
		return s.consume(ctx, name, filters, parallel, fn, onError, began)
	})
}

// keepFollowing runs session until ctx ends. A session that ends before
// (its consumer could not be made, or its pull closed for good) is logged
// and begun again after a pause: a follower never stops out of sight.
// A session calls began once its consumer is made and pulled from.
//
// Sessions that end before they began, one after the other, as every one
// does while the cluster has no quorum, are logged as a streak (the first,
// then one a minute, with how many ended so): a line a second for each
// consumer and queue buried what else the log said. One that began and
// ended is news, and logged.
func (s *Store) keepFollowing(ctx context.Context, what string, session func(began func()) error) {
	var failed streak // sessions in a row that ended before they began
	for {
		ran := false
		err := session(func() { ran = true })
		if ctx.Err() != nil {
			return
		}
		switch {
		case ran:
			failed.end()
			s.log.Error("eventstore: "+what+" ended; beginning it again", "err", err)
		case failed.add(time.Now()):
			s.log.Error("eventstore: "+what+" ended; beginning it again", "endedBeforeBeginningInARow", failed.n, "err", err)
		}
		pause(ctx, time.Second)
	}
}

// streak counts failures in a row, and says which of them to log: the
// first, then one a minute. A failure that repeats every second for as
// long as a cluster elects its leaders would otherwise bury the rest of
// the log.
type streak struct {
	n    int       // failures in a row
	told time.Time // when one was last logged
}

// add counts a failure at now, and reports whether to log it.
func (s *streak) add(now time.Time) bool {
	s.n++
	if s.n == 1 || now.Sub(s.told) >= time.Minute {
		s.told = now
		return true
	}
	return false
}

// end ends the streak: the next failure is the first of another.
func (s *streak) end() { s.n = 0 }

// interruptions tells of the interruptions of what's pulls (heartbeats
// missed while its consumer's node is replaced, and the like: the
// iterator pulls again by itself) as a streak, and that the pulls resumed:
// once a message comes, or once quietFor has passed without another
// interruption while connected. The iterator tells of a missed heartbeat
// again at most twice its heartbeat after the last, so that quiet means
// the server answers the pulls again (its heartbeats come): a replica
// that is not pinned, or a consumer with no events to hand out, gets no
// message to tell it so. Before, only a message ended the streak, and only
// after more than one interruption was that told: such a replica logged
// "interrupted" and never "resumed", and its next line, maybe an hour
// later, counted every interruption since in the same streak.
type interruptions struct {
	log       *slog.Logger
	what      string
	attrs     []any         // said with each line
	quietFor  time.Duration // with no interruption this long, the pulls are answered again
	connected func() bool   // whether the connection is up: nats.go checks no heartbeat while it is down

	mu    sync.Mutex
	quiet *time.Timer // tells of the resumption once quietFor has passed
	streak
}

func (i *interruptions) interrupted(err error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.add(time.Now()) {
		i.log.Warn("eventstore: "+i.what+" interrupted", append(i.attrs[:len(i.attrs):len(i.attrs)], "interruptedInARow", i.n, "err", err)...)
	}
	if i.quiet == nil {
		i.quiet = time.AfterFunc(i.quietFor, i.quietPassed)
	} else {
		i.quiet.Reset(i.quietFor)
	}
}

// resumed is told of a message: the pulls are answered.
func (i *interruptions) resumed() {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.tellResumed()
}

// quietPassed: no interruption for quietFor. While the connection is down
// nats.go checks no heartbeat: the quiet then says nothing, and is waited
// for again.
func (i *interruptions) quietPassed() {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.n == 0 || i.quiet == nil {
		return // a message told of it first, or the pulls ended
	}
	if !i.connected() {
		i.quiet.Reset(i.quietFor)
		return
	}
	i.tellResumed()
}

// tellResumed ends a streak, telling of it. i.mu is held.
func (i *interruptions) tellResumed() {
	if i.n == 0 {
		return
	}
	if i.quiet != nil {
		i.quiet.Stop()
	}
	i.log.Info("eventstore: "+i.what+" resumed", append(i.attrs[:len(i.attrs):len(i.attrs)], "interruptedInARow", i.n)...)
	i.end()
}

// stop: the pulls ended, and with them what there is to tell.
func (i *interruptions) stop() {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.quiet != nil {
		i.quiet.Stop()
		i.quiet = nil
	}
}

func (s *Store) consume(ctx context.Context, name string, filters []string, parallel int, fn func(domain.Record) error, onError func(domain.Record, error), began func()) error {
	cfg := jetstream.ConsumerConfig{
		Durable:        s.prefix + "-" + name,
		Description:    "Cargostream reactor " + name,
		AckPolicy:      jetstream.AckExplicitPolicy,
		AckWait:        consumerAckWait,
		DeliverPolicy:  jetstream.DeliverAllPolicy,
		MaxAckPending:  consumerInHand,
		PriorityPolicy: jetstream.PriorityPolicyPinned,
		PriorityGroups: []string{consumerGroup},
		PinnedTTL:      consumerPinnedTTL,
		Replicas:       s.replicas,
	}
	// One filter goes in FilterSubject, where consumers made by earlier
	// versions have it, so that starting this version changes no filter.
	if len(filters) == 1 {
		cfg.FilterSubject = filters[0]
	} else {
		cfg.FilterSubjects = filters
	}
	cons, err := s.js.CreateOrUpdateConsumer(ctx, s.name, cfg)
	if err != nil {
		return fmt.Errorf("eventstore: consumer %s: %w", name, err)
	}
	// The consumer may be new: its first pull must not be lost (see
	// waitRouted).
	if err := s.waitRouted(ctx, s.name, cfg.Durable); err != nil {
		return fmt.Errorf("eventstore: consumer %s: %w", name, err)
	}
	// A long-lived pull: an event stored is in hand within milliseconds,
	// with no polling in between.
	msgs, told, err := s.pullMessages(cons, consumerPullExpiry, "consumer "+name, nil, jetstream.PullPriorityGroup(consumerGroup))
	if err != nil {
		return fmt.Errorf("eventstore: consumer %s: %w", name, err)
	}
	began()
	l := &lanes{ctx: ctx, s: s, name: name, cons: cons, fn: fn, onError: onError, slots: make(chan struct{}, max(parallel, 1)),
		queues: map[string][]laneItem{}, pullsEnded: make(chan struct{})}
	s.openSession(name, l)
	drained := make(chan struct{})
	go keepInProgress(consumerAckWait, drained, l.inHand)
	// Once ctx ends, the events already buffered still come out, and
	// wait in hand (see handle) rather than be taken by nobody. A session
	// that ends before leaves nothing waiting for ctx.
	defer context.AfterFunc(ctx, msgs.Drain)()
	var last error
	defer told.stop()
	for {
		m, err := msgs.Next()
		if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
			break
		}
		if err != nil {
			// Missed heartbeats and the like: the iterator pulls
			// again by itself, or closes for good.
			told.interrupted(err)
			last = err
			continue
		}
		told.resumed()
		l.add(laneItem{subject: m.Subject(), m: m})
	}
	close(l.pullsEnded)
	pin := s.closeSession(name, l)
	if pin != "" {
		go holdPin(cons, drained)
	}
	l.wg.Wait()
	close(drained)
	if pin != "" && !l.leftInHand.Load() {
		// Another replica, or this one restarted, need not wait for
		// the pin to time out. With events left in hand it must: the
		// pin outlasts their AckWait, so they are delivered again
		// before the events behind them are delivered at all.
		unpinCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout)
		defer cancel()
		if err := s.unpin(unpinCtx, cfg.Durable, pin); err != nil {
			s.log.Warn("eventstore: consumer "+name+" not unpinned", "err", err)
		}
	}
	return fmt.Errorf("eventstore: consumer %s closed: %w", name, last)
}

// lanes hold the events in hand, a queue per aggregate (subject), each
// queue worked through by one goroutine.
type lanes struct {
	ctx     context.Context
	s       *Store
	name    string // the consumer's
	fn      func(domain.Record) error
	onError func(domain.Record, error)
	slots   chan struct{} // one per event being handled

	cons       jetstream.Consumer
	pullsEnded chan struct{} // closed once the session pulls no more
	leftInHand atomic.Bool   // events not handled because shutdown began

	mu     sync.Mutex
	queues map[string][]laneItem // the first of each is being handled
	pin    string                // the pin the server last gave this session (Nats-Pin-Id)
	closed bool                  // the session pulls no more: a retry goes elsewhere
	wg     sync.WaitGroup

	// Newly pinned, the session holds back the events delivered to it
	// for the first time (see holdBack), until no event delivered before
	// them is in hand elsewhere. The server pins a replica anew
	// when the pin times out (the replica that held it stopped pulling for
	// consumerPinnedTTL, by when its events in hand were delivered again),
	// and also when the consumer's leader changes (a stepdown, or its
	// node lost), which drops the pin at once: the replica that held it
	// may still be handling an aggregate's event, or have its later
	// events queued, and the next pinned would handle the events behind
	// them beside them.
	//
	// What it does not cover (a review's findings, each needing two
	// failures close together): a session that ends while it holds events
	// back leaves them in hand, and the next session takes them, delivered
	// again, to their lanes at once, whatever the former holder still
	// handles; an event the server delivers again while its holder still
	// works on it (its progress acknowledgements lost in an election) is
	// handled twice at once, as at-least-once delivery allows, and its
	// acknowledgement lets the floor pass; and a pin that moves again while
	// a session waits does not move what it waits for.
	gated    bool
	from     uint64     // the consumer's delivery sequence of the first event under the new pin
	heldBack []laneItem // in the order delivered
}

// laneItem is an event delivered, or the retry of a parked event of the
// aggregate, which runs in the aggregate's turn (see parked.go).
type laneItem struct {
	subject string
	m       jetstream.Msg
	retry   func()
}

// add queues it behind the items of its aggregate in hand, starting the
// aggregate's goroutine if there are none. It never blocks: the consumer's
// cap on events in hand bounds the queues.
func (l *lanes) add(it laneItem) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queue(it)
}

// queue is add, with l.mu held. An event under a pin new to the session
// (the first of a session too) gates it: see lanes.gated.
func (l *lanes) queue(it laneItem) {
	if it.m != nil {
		if pin := it.m.Headers().Get("Nats-Pin-Id"); pin != "" && pin != l.pin {
			l.pin = pin
			l.gate(it.m)
		}
		if l.gated && l.holdBack(it) {
			return
		}
	}
	l.enqueue(it)
}

// enqueue queues it behind the items of its aggregate, starting the
// aggregate's goroutine if there are none. l.mu is held.
func (l *lanes) enqueue(it laneItem) {
	q := l.queues[it.subject]
	l.queues[it.subject] = append(q, it)
	if len(q) == 0 {
		l.wg.Add(1)
		go l.work(it.subject)
	}
}

// gate starts holding back the events delivered for the first time, from
// m, the first under a pin new to the session, until every event delivered
// before m is handled (see releaseWhenOthersDone). A session already
// gated stays so, waiting for what it waited for. l.mu is held.
func (l *lanes) gate(m jetstream.Msg) {
	meta, err := m.Metadata()
	if l.gated || err != nil {
		return // handle says why m has no metadata
	}
	l.gated, l.from = true, meta.Sequence.Consumer
	l.wg.Add(1)
	go l.releaseWhenOthersDone(l.from)
}

// holdBack holds it back, while l is gated, if it is delivered for the
// first time: one delivered again was in hand before the pin moved, and
// goes to its lane at once, to be handled before those held back, which
// come after it in the stream. l.mu is held.
func (l *lanes) holdBack(it laneItem) bool {
	meta, err := it.m.Metadata()
	if err != nil || meta.NumDelivered > 1 {
		return false
	}
	l.heldBack = append(l.heldBack, it)
	return true
}

// othersInHandWait bounds how long a session newly pinned holds back its
// events for the earlier ones in hand on another replica: those are kept
// alive while their step runs, and one failing (retried, then parked
// after about 15 s) or waiting for NATS could hold every aggregate's
// events back. Past it, the session goes on, and says so.
const othersInHandWait = time.Minute

// releaseWhenOthersDone queues the events l holds back once the server's
// acknowledgement floor is past the delivery before from: every event
// delivered before the pin moved is then handled, on whichever replica held it (one
// delivered again to this session meanwhile is handled here, in its
// aggregate's lane). The floor counts deliveries, not stream sequences: a
// consumer whose filter passes over many events before the first it
// delivers has acknowledged none of them, and its floor stays at the
// stream's start. Until the session pulls no more: what is held back is
// then left in hand, for the server to deliver again.
func (l *lanes) releaseWhenOthersDone(from uint64) {
	defer l.wg.Done()
	start := time.Now()
	for {
		ctx, cancel := context.WithTimeout(l.ctx, ackTimeout)
		info, err := l.cons.Info(ctx)
		cancel()
		waited := time.Since(start)
		switch {
		case err == nil && info.AckFloor.Consumer+1 >= from:
			if waited > consumerPullExpiry {
				l.s.log.Info("eventstore: consumer "+l.name+", pinned to this replica anew, waited for the earlier events held elsewhere (another replica, or this one before a restart)",
					"from", from, "waited", waited.Round(time.Millisecond).String())
			}
			l.release()
			return
		case waited > othersInHandWait:
			l.s.log.Warn("eventstore: consumer "+l.name+", pinned to this replica anew, goes on while earlier events may still be in hand on another replica",
				"from", from, "waited", waited.Round(time.Second).String(), "err", err)
			l.release()
			return
		}
		select {
		case <-l.pullsEnded:
			l.leftInHand.Store(true)
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// release ends l's gate: the events held back join their aggregates'
// lanes, in the order delivered.
func (l *lanes) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	held := l.heldBack
	l.gated, l.from, l.heldBack = false, 0, nil
	for _, it := range held {
		l.enqueue(it)
	}
}

// openSession makes l the session of consumer name on this replica: the
// one that retries of the consumer's parked events join (see inTurn).
func (s *Store) openSession(name string, l *lanes) {
	s.sessionsMu.Lock()
	defer s.sessionsMu.Unlock()
	s.sessions[name] = l
}

// closeSession stops l taking retries, once its pulls have ended, and
// returns the pin the server last gave it, "" if none.
func (s *Store) closeSession(name string, l *lanes) (pin string) {
	s.sessionsMu.Lock()
	if s.sessions[name] == l {
		delete(s.sessions, name)
	}
	s.sessionsMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	return l.pin
}

// errNotOurTurn means that a retry was not made here: another replica
// handles the consumer's events, or this one has no session of the
// consumer open.
var errNotOurTurn = errors.New("eventstore: a retry of a parked event is not this replica's to make")

// inTurn makes call, the retry of r, a parked event of consumer, in the
// turn of r's aggregate: on the replica the server pinned the consumer
// to, behind the events of the aggregate it holds, so that it never runs
// beside them. It returns call's error, or errNotOurTurn if another
// replica is pinned, or if this one has no session of the consumer open:
// starting, or beginning its session again, it may open one any moment
// and be handed the aggregate's events, which a retry made outside the
// session's lanes would run beside.
func (s *Store) inTurn(ctx context.Context, consumer string, r domain.Record, call func() error) error {
	s.sessionsMu.Lock()
	l := s.sessions[consumer]
	s.sessionsMu.Unlock()
	if l == nil {
		return errNotOurTurn
	}
	pin, err := s.pinOf(ctx, s.prefix+"-"+consumer)
	if err != nil {
		return err
	}
	return l.runInTurn(s.subject(r.Aggregate), pin, call)
}

// pinOf is the id of the client the server pinned the consumer durable
// to (its priority group's), "" if none or no such consumer.
func (s *Store) pinOf(ctx context.Context, durable string) (string, error) {
	cons, err := s.stream.Consumer(ctx, durable)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		return "", nil
	}
	if err != nil {
		return "", unavailable(fmt.Errorf("eventstore: consumer %s: %w", durable, err))
	}
	for _, g := range cons.CachedInfo().PriorityGroups {
		if g.Group == consumerGroup {
			return g.PinnedClientID, nil
		}
	}
	return "", nil
}

// unpin takes pin from the consumer durable, if it is still the one the
// server pinned it to: a replica whose pulls stopped a while lost its pin
// to another, whose events in hand would otherwise go on beside the later
// events of their aggregates handed to a third.
func (s *Store) unpin(ctx context.Context, durable, pin string) error {
	current, err := s.pinOf(ctx, durable)
	if err != nil || current != pin {
		return err
	}
	return s.stream.UnpinConsumer(ctx, durable, consumerGroup)
}

// runInTurn queues call behind the items of subject and returns its
// error once it has run; errNotOurTurn if the server pinned another
// session than l, l holds back its events (newly pinned), or l pulls no
// more.
func (l *lanes) runInTurn(subject, pin string, call func() error) error {
	done := make(chan error, 1)
	l.mu.Lock()
	if l.closed || l.gated || (pin != "" && pin != l.pin) {
		l.mu.Unlock()
		return errNotOurTurn
	}
	l.queue(laneItem{subject: subject, retry: func() {
		if l.ctx.Err() != nil {
			done <- l.ctx.Err()
			return
		}
		l.slots <- struct{}{}
		defer func() { <-l.slots }()
		done <- call()
	}})
	l.mu.Unlock()
	return <-done
}

// work handles the items queued for subject, in order, until none is left.
func (l *lanes) work(subject string) {
	defer l.wg.Done()
	for {
		l.mu.Lock()
		it := l.queues[subject][0]
		l.mu.Unlock()
		if it.retry != nil {
			it.retry()
		} else {
			l.handle(it.m)
		}
		l.mu.Lock()
		q := l.queues[subject][1:]
		if len(q) == 0 {
			delete(l.queues, subject)
			l.mu.Unlock()
			return
		}
		l.queues[subject] = q
		l.mu.Unlock()
	}
}

// handle runs fn on m until it succeeds or shutdown begins, and settles m
// with the server.
func (l *lanes) handle(m jetstream.Msg) {
	r, err := l.s.followable(m)
	if err != nil {
		// Without a position the event can never be handled.
		l.onError(r, err)
		m.Term()
		return
	}
	failures := 0 // that count towards parking
	behind := 0   // reads behind the event (see behindAttempts)
	for attempt := 1; ; attempt++ {
		if l.ctx.Err() != nil {
			// Shutdown is no failure. The event is left in hand: once
			// the progress acknowledgements stop, the server delivers
			// it again within consumerAckWait, to this process
			// restarted or another replica, with the events behind it
			// in stream order. A Nak would be quicker but not safe: the
			// server may hand the event to a pull of this consumer that
			// it has not expired yet, and the next consumer would get
			// the later events of the aggregate first.
			l.leftInHand.Store(true)
			return
		}
		l.slots <- struct{}{}
		began := time.Now()
		err := l.s.call(l.fn, r)
		<-l.slots
		switch {
		case err == nil:
			// Acknowledged even when shutdown has begun, and without
			// waiting for the server to confirm (the store drains its
			// connection on close): a lost acknowledgement only means a
			// redelivery, which fn tolerates, and a confirmed one costs
			// a round trip per event.
			m.Ack()
			// Guarded: the attributes cost allocations on every event
			// even when the line is not written.
			if l.s.log.Enabled(l.ctx, slog.LevelDebug) {
				l.s.log.Debug("eventstore: event handled", "consumer", l.name, "sequence", r.Sequence, "type", r.Type,
					"aggregate", r.Aggregate.String(), "attempt", attempt, "took", time.Since(began).String())
			}
			return
		case l.ctx.Err() == nil:
			// NATS out of reach says nothing about the event; reads
			// behind it do, once they last (see behindAttempts). Neither
			// is the handler's failure, nor counts towards the attempts
			// its onError names: a warning here, where a read behind was
			// an ERROR that blamed the store (once in some 10,000
			// bookings on a busy, healthy cluster).
			switch {
			case errors.Is(err, domain.ErrReadBehind):
				behind++
				l.s.log.Warn("eventstore: consumer "+l.name+" read a resource as it stood before the event it handles; the event is tried again",
					"sequence", r.Sequence, "type", r.Type, "aggregate", r.Aggregate.String(), "reads", behind, "err", err)
			case errors.Is(err, domain.ErrStoreFull):
				// Reached, and refused for want of room: "could not
				// reach" sent the operator to the network.
				l.s.log.Warn("eventstore: consumer "+l.name+" could not store its step for an event: the event store has no room; it is tried again",
					"sequence", r.Sequence, "type", r.Type, "aggregate", r.Aggregate.String(), "attempt", attempt, "err", err)
			case errors.Is(err, domain.ErrStoreUnavailable):
				l.s.log.Warn("eventstore: consumer "+l.name+" could not reach the event store for an event; it is tried again",
					"sequence", r.Sequence, "type", r.Type, "aggregate", r.Aggregate.String(), "attempt", attempt, "err", err)
			default:
				failures++
				l.onError(r, err)
			}
			if (failures >= l.s.attempts || behind >= l.s.attempts+behindAttempts) && l.park(m, r, failures+behind, err) {
				return
			}
			pause(l.ctx, l.s.retryDelay(attempt))
		}
	}
}

// behindAttempts is how many more failures than the store's attempts it
// takes to park an event whose handling keeps reading its resource up to
// before it (domain.ErrReadBehind). A node back from a cut-off answers so
// for a moment, and a retry mends it; one that lasts the 6 more, whose
// pauses reach a minute each (some 5 minutes in all at the default
// attempts), is an event gone from its resource's reads, which no retry
// finds: parked, it no longer holds back the resource's later events.
const behindAttempts = 6

// park parks r, whose handling failed attempts times, the last with
// cause, and settles m: the events behind it go on. It reports false if
// the event could not be parked, and is then to be tried again.
func (l *lanes) park(m jetstream.Msg, r domain.Record, attempts int, cause error) bool {
	if err := l.s.park(l.ctx, l.name, r, attempts, cause); err != nil {
		l.s.log.Error("eventstore: consumer "+l.name+" could not park an event; it is tried again", "sequence", r.Sequence, "err", err)
		return false
	}
	m.Ack()
	l.s.obs.EventParked(l.name)
	l.s.log.Warn("eventstore: event parked after repeated failures; the consumer goes on with the next (cargoctl parked lists it)",
		"consumer", l.name, "sequence", r.Sequence, "type", r.Type, "aggregate", r.Aggregate.String(), "eventId", r.EventID,
		"attempts", attempts, "err", cause)
	return true
}

// inHand is the events the lanes hold: being handled, queued behind, or
// held back.
func (l *lanes) inHand() []jetstream.Msg {
	l.mu.Lock()
	defer l.mu.Unlock()
	var held []jetstream.Msg
	for _, it := range l.heldBack {
		held = append(held, it.m)
	}
	for _, q := range l.queues {
		for _, it := range q {
			if it.m != nil {
				held = append(held, it.m)
			}
		}
	}
	return held
}

// holdPin keeps this replica's pin of the consumer until stop is closed,
// with a pull every consumerPullExpiry that can take no event: at most one
// byte, the server answers it "message size exceeds MaxBytes" rather than
// deliver, yet a pull with the pin renews it. Pulls end when shutdown
// begins, but a step under way may run on; without them the pin would go
// consumerPinnedTTL after the last, and another replica would handle the
// later events of an aggregate while this one still handles an earlier.
func holdPin(cons jetstream.Consumer, stop <-chan struct{}) {
	tick := time.NewTicker(consumerPullExpiry)
	defer tick.Stop()
	for {
		// Nothing to read from the pull: it ends by itself when the
		// server answers or it expires. A failed one (the connection
		// lost, say) is tried again at the next tick.
		cons.Fetch(1, jetstream.FetchMaxBytes(1), jetstream.FetchPriorityGroup(consumerGroup), jetstream.FetchMaxWait(consumerPullExpiry))
		select {
		case <-stop:
			return
		case <-tick.C:
		}
	}
}

// keepInProgress tells the server, every third of ackWait until stop is
// closed, that the messages held returns are still being worked on, so
// that it does not hand them out again while this process lives:
// shutdown included, as handlers finish.
func keepInProgress(ackWait time.Duration, stop <-chan struct{}, held func() []jetstream.Msg) {
	tick := time.NewTicker(ackWait / 3)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		for _, m := range held() {
			m.InProgress()
		}
	}
}

// ackTimeout bounds the wait for the server to confirm an
// acknowledgement.
const ackTimeout = 5 * time.Second

// retryDelay backs off from a second (the store's retryPause) to a
// minute as an event keeps failing.
func (s *Store) retryDelay(attempt int) time.Duration {
	return min(s.retryPause<<min(attempt-1, 6), time.Minute)
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
