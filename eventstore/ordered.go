package eventstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// orderedRead reads the messages of a stream matching its filters in
// order, without gaps, through an ephemeral consumer of its own (in
// memory, on one node, acknowledging nothing), as nats.go's ordered
// consumer does. When the consumer misses two heartbeats (its node died),
// delivers out of order or fails, or the connection to NATS was made
// again (messages sent meanwhile are lost, and the consumer counts them
// as delivered), the read makes a new consumer from the message after the
// last it handed over, and reads on.
//
// It is its own rather than nats.go's for how long that takes. nats.go
// waits up to 10 s for each try to make the consumer again, and a try sent
// while the cluster elects a new meta leader (the node that died led it)
// gets no answer at all: a replica's read models applied nothing for
// 11–21 s when a node was killed, the write that followed the kill waiting
// for the whole of it. Here each try waits consumerTry, and the tries go
// on, a moment apart, while the cluster answers that it is not ready or
// does not answer, for up to remakeFor: the read goes on as soon as the
// cluster makes consumers again.
//
// A walking read (see walkingRead) does not wait even that long: while
// its consumer is being made, it gets the messages from the stream's
// leader, many requests at once (see getAhead), and hands them over in
// the same order; the leader answers until its followers notice that the
// meta leader is gone (seconds after a kill). The consumer, once made,
// skips what was handed over meanwhile.
//
// Next is called from one goroutine at a time; Stop and close from any.
type orderedRead struct {
	s      *Store
	stream jetstream.Stream
	cfg    jetstream.ConsumerConfig // every consumer's, but its name and start
	// next is the sequence of the message after the last handed over:
	// where a new consumer starts. Set by Next's goroutine, read by a
	// consumer being made in the background too, at each try: a consumer
	// made from where a long walk began would deliver again, to be
	// skipped, all the walk had handed over (at the probe's 2,000 events
	// a second, some 12,000 after the 6 s of an election).
	next    atomic.Uint64
	opts    []jetstream.PullMessagesOpt
	walks   bool            // gets messages from the leader while it has no consumer
	stopped context.Context // ends with Stop
	stop    context.CancelFunc

	// walked are messages a walking read got ahead of handing them over,
	// and caughtUp whether its last ask found none; read and set by
	// Next's goroutine only.
	walked   []*jetstream.RawStreamMsg
	caughtUp bool

	mu  sync.Mutex
	cur *session // nil while a walking read's consumer is being made
	// made is closed when the consumer a walking read last began to make
	// in the background is ready (it is cur then) or given up (for
	// madeErr); nil for a read that does not walk.
	made    chan struct{}
	madeErr error
}

// session is one consumer of a read, and the pulls from it.
type session struct {
	cons jetstream.Consumer
	msgs jetstream.MessagesContext
	// conn is the connection to NATS as it was when the consumer was
	// made (see Store.connection): once it ends, what the consumer sent
	// meanwhile is lost, and the consumer counts it as delivered.
	conn context.Context
	// delivered is the consumer's sequence of the last message it
	// delivered; read and set by Next's goroutine only.
	delivered uint64
}

// end stops the session's pulls and deletes its consumer (see deleteOrdered).
func (se *session) end(stream jetstream.Stream) {
	se.msgs.Stop()
	go deleteOrdered(stream, se.cons.CachedInfo().Name)
}

// readHeartbeat is how often a read's consumer says it is there while it
// has nothing to send (nats.go's shortest): two missed, it is made again.
// nats.go watches for them only while Next waits, a wait at a time, so a
// read waits in slices of nextSlice, a little over two heartbeats.
const (
	readHeartbeat = 500 * time.Millisecond
	nextSlice     = 2*readHeartbeat + 100*time.Millisecond
)

// readOrdered starts a read of the messages of stream matching filters
// from sequence from on, pulling them with opts (passed as they are to
// each consumer the read makes: a StopAfter then counts from a new
// consumer's start), heartbeats every readHeartbeat. Its consumer is made
// within ctx (a caller with somewhere else to turn gives it a short one).
// The caller ends it with close.
func (s *Store) readOrdered(ctx context.Context, stream jetstream.Stream, filters []string, from uint64, opts ...jetstream.PullMessagesOpt) (*orderedRead, error) {
	r := s.newOrderedRead(stream, filters, from, opts)
	if err := r.begin(ctx); err != nil {
		r.stop()
		return nil, err
	}
	return r, nil
}

// walkingRead starts a read of the events matching filter from sequence
// from on, as readOrdered does, but one that walks while it has no
// consumer (see orderedRead), from its start on: it hands over its first
// events before its consumer is made. Its consumer is made in the
// background, for up to remakeFor; if it cannot be, Next says why.
func (s *Store) walkingRead(filter string, from uint64, opts ...jetstream.PullMessagesOpt) *orderedRead {
	r := s.newOrderedRead(s.stream, []string{filter}, from, opts)
	r.walks = true
	r.makeInBackground()
	return r
}

func (s *Store) newOrderedRead(stream jetstream.Stream, filters []string, from uint64, opts []jetstream.PullMessagesOpt) *orderedRead {
	opts = append([]jetstream.PullMessagesOpt{jetstream.PullHeartbeat(readHeartbeat), jetstream.PullExpiry(5 * time.Second)}, opts...)
	r := &orderedRead{s: s, stream: stream, opts: opts, cfg: jetstream.ConsumerConfig{
		DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
		FilterSubjects:    filters,
		AckPolicy:         jetstream.AckNonePolicy,
		InactiveThreshold: 5 * time.Minute, // dropped by the server if close's deletion fails
		Replicas:          1,
		MemoryStorage:     true,
	}}
	r.next.Store(max(from, 1))
	r.stopped, r.stop = context.WithCancel(context.Background())
	return r
}

// consumerTry is how long one try to make a read's consumer waits for the
// cluster's answer: a few milliseconds when it is well, and one that does
// not come in seconds was sent to a node that died or during an election,
// and will not come.
const consumerTry = 2 * time.Second

// remakeFor is how long a read goes on trying to make its consumer while
// the cluster answers that it is not ready, or does not answer: longer
// than an election, after which the read fails and its caller starts
// anew or reports it.
const remakeFor = 20 * time.Second

// start makes a consumer from the read's next message and pulls from it,
// trying again while the cluster is not ready (see remakeFor), until ctx
// ends or the read is stopped.
func (r *orderedRead) start(ctx context.Context) (*session, error) {
	ctx, cancel := context.WithTimeout(ctx, remakeFor)
	defer cancel()
	defer context.AfterFunc(r.stopped, cancel)()
	// A name for each try: a try whose answer was lost may have made its
	// consumer on a node that died meanwhile (a name tried again there
	// went unanswered for all of remakeFor, in a probe with a node
	// killed), so each try makes its own, and those of the tries that
	// went unanswered are deleted, in case they were made.
	var unanswered []string
	defer func() {
		for _, name := range unanswered {
			go deleteOrdered(r.stream, name)
		}
	}()
	cfg := r.cfg
	var cons jetstream.Consumer
	var conn context.Context
	err := retryTransient(ctx, consumerTry, 100*time.Millisecond, time.Second, func(tctx context.Context) error {
		cfg.Name, cfg.OptStartSeq = nuid.Next(), r.next.Load()
		conn = r.s.connection()
		c, err := r.makeConsumer(tctx, cfg)
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.Is(err, nats.ErrTimeout) {
			unanswered = append(unanswered, cfg.Name)
		}
		cons = c
		return err
	}, nil)
	if err != nil {
		if r.stopped.Err() != nil {
			return nil, jetstream.ErrMsgIteratorClosed
		}
		// Tried for all of remakeFor while the server did not answer
		// or said it was not ready: a store that does not answer, which
		// a wait cures, and is told as one (the projector logged each
		// such end of its subscription at ERROR, every 20 s of a NATS
		// server that did not answer).
		return nil, unavailable(err)
	}
	// The consumer exists now; Messages sends its first pull at once.
	if err := r.s.waitRouted(ctx, r.stream.CachedInfo().Config.Name, cfg.Name); err != nil {
		go deleteOrdered(r.stream, cfg.Name)
		return nil, err
	}
	msgs, err := cons.Messages(r.opts...)
	if err != nil {
		go deleteOrdered(r.stream, cfg.Name)
		return nil, err
	}
	return &session{cons: cons, msgs: msgs, conn: conn}, nil
}

// makeConsumer makes a read's consumer with cfg, unless a test refuses it
// (see Store.readConsumersRefused) as a cluster electing its meta leader
// would.
func (r *orderedRead) makeConsumer(ctx context.Context, cfg jetstream.ConsumerConfig) (jetstream.Consumer, error) {
	if r.s.readConsumersRefused.Load() {
		return nil, &jetstream.APIError{Code: 503, ErrorCode: 10008, Description: "JetStream system temporarily unavailable (refused by a test)"}
	}
	return r.stream.CreateOrUpdateConsumer(ctx, cfg)
}

// begin makes the read's consumer (see start) and installs it.
func (r *orderedRead) begin(ctx context.Context) error {
	se, err := r.start(ctx)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.installLocked(se)
}

// installLocked makes se the read's consumer, unless the read was stopped
// meanwhile: se then ends. The caller holds r.mu.
func (r *orderedRead) installLocked(se *session) error {
	if r.stopped.Err() != nil {
		se.end(r.stream)
		return jetstream.ErrMsgIteratorClosed
	}
	r.cur = se
	return nil
}

// makeInBackground makes the walking read's next consumer on a goroutine
// of its own, from the read's next message; Next walks meanwhile.
func (r *orderedRead) makeInBackground() {
	made := make(chan struct{})
	r.mu.Lock()
	r.cur, r.made, r.madeErr = nil, made, nil
	r.mu.Unlock()
	go func() {
		se, err := r.start(r.stopped)
		// The consumer, or why there is none, and the word that it is
		// done, all at once: Next must never see made closed without
		// either.
		r.mu.Lock()
		defer r.mu.Unlock()
		if err == nil {
			err = r.installLocked(se)
		}
		r.madeErr = err
		close(made)
	}()
}

// waitRouted returns once the server this store is connected to routes
// pulls to the consumer named consumer of stream, or after routedWait.
//
// On a cluster, a pull sent right after the consumer was created was lost
// now and then (one read in 250 to 300 on three nodes on loopback): the
// server that runs the consumer answers the creation from the system
// account, over one route connection, and tells the other servers of the
// consumer's pull subject in the stream's account, over another (routes
// are pooled by account since nats-server 2.10). When the answer overtook
// the interest, the client's server dropped the first pull, as it knew no
// one to hand it to, and the read heard nothing until nats.go missed two
// heartbeats and made a new consumer: 10 s with its ordered consumer's default ones. A
// durable consumer just made is pulled from the same way: a queue's
// workers then got no job for 30 s, until nats.go missed two heartbeats
// and pulled again (5 queues in 300 made at once on three nodes), as did
// the retries of parked events, and a reactor's consumer for a second.
//
// A server of no cluster (as the embedded one) runs the consumer itself
// and knows where its pulls go before it answers: there is nothing to ask.
//
// A request to the pull subject that the consumer refuses (a body that is
// no pull request: it answers 400 and hands out nothing) tells: no
// responders while the client's server does not route the subject yet.
// Requests and pulls from one connection are handled in order, so a pull
// sent after an answered probe is routed too. A probe that gets no answer
// at all (the consumer's server is slow or gone) ends the wait: the read
// goes on as it did before, its heartbeats noticing a lost pull.
func (s *Store) waitRouted(ctx context.Context, stream, consumer string) error {
	if s.nc.ConnectedClusterName() == "" {
		return nil
	}
	subject := fmt.Sprintf("$JS.API.CONSUMER.MSG.NEXT.%s.%s", stream, consumer)
	deadline, held := time.Now().Add(routedWait), false
	for pause := time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := s.nc.RequestWithContext(pctx, subject, []byte("{"))
		cancel()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case !errors.Is(err, nats.ErrNoResponders) || time.Now().After(deadline):
			return nil
		}
		if !held {
			held = true
			s.obs.PullHeld()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
}

// routedWait is how long a read waits for its consumer's pull subject to
// be routed to it: the interest comes within a millisecond on loopback;
// one that does not come in seconds is left to nats.go's heartbeats.
const routedWait = 5 * time.Second

// Next returns the next message, waiting for it up to maxWait, or, if
// maxWait is 0, until ctx ends; nats.ErrTimeout if none came. A consumer
// that failed is made again from the message after the last one handed
// over (ctx bounding the tries too, unless the read walks meanwhile), and
// the read goes on; if it cannot be made, Next returns why.
func (r *orderedRead) Next(ctx context.Context, maxWait time.Duration) (jetstream.Msg, error) {
	var deadline time.Time
	if maxWait > 0 {
		deadline = time.Now().Add(maxWait)
	}
	for {
		wait := nextSlice
		if maxWait > 0 {
			if wait = min(wait, time.Until(deadline)); wait <= 0 {
				return nil, nats.ErrTimeout
			}
		}
		r.mu.Lock()
		cur, made := r.cur, r.made
		r.mu.Unlock()
		if cur == nil {
			select {
			case <-made:
				// Made or given up since cur was read: which, ask
				// again.
				r.mu.Lock()
				cur, madeErr := r.cur, r.madeErr
				r.mu.Unlock()
				switch {
				case cur != nil:
					continue
				case r.stopped.Err() != nil:
					return nil, jetstream.ErrMsgIteratorClosed
				}
				return nil, fmt.Errorf("a read's consumer could not be made: %w", madeErr)
			default:
			}
			m, err := r.walk(ctx, wait, made)
			if m != nil || err != nil {
				return m, err
			}
			continue
		}
		r.walked = nil // from the next message on, the consumer delivers them
		name := cur.cons.CachedInfo().Name
		// The wait ends early if the connection is made again: the
		// pull and what it was sent are lost.
		sctx, cancel := context.WithTimeout(ctx, wait)
		stopWatching := context.AfterFunc(cur.conn, cancel)
		m, err := cur.msgs.Next(jetstream.NextContext(sctx))
		stopWatching()
		cancel()
		switch {
		case err == nil:
			meta, merr := m.Metadata()
			if merr != nil {
				return nil, merr
			}
			if meta.Consumer == name && meta.Sequence.Consumer == cur.delivered+1 {
				cur.delivered = meta.Sequence.Consumer
				if meta.Sequence.Stream < r.next.Load() {
					continue // handed over while the read walked
				}
				r.next.Store(meta.Sequence.Stream + 1)
				return m, nil
			}
			err = fmt.Errorf("message %d of consumer %s came after %d of %s", meta.Sequence.Consumer, meta.Consumer, cur.delivered, name)
		case r.stopped.Err() != nil:
			return nil, jetstream.ErrMsgIteratorClosed
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
			// Nothing came in the slice, or the connection was made
			// again. What was sent meanwhile is lost, which a later
			// message would tell by its sequence; with none coming,
			// only the connection tells.
			if cur.conn.Err() == nil {
				continue // the slice is over, not the wait
			}
			err = errors.New("the connection to NATS was made again")
		case errors.Is(err, jetstream.ErrMsgIteratorClosed), errors.Is(err, jetstream.ErrInvalidOption):
			return nil, err
		}
		r.s.log.Warn("eventstore: a read's consumer failed; reading on with a new one", "stream", r.stream.CachedInfo().Config.Name,
			"from", r.next.Load(), "err", err)
		cur.end(r.stream)
		if r.walks {
			r.makeInBackground()
			continue
		}
		if serr := r.begin(ctx); serr != nil {
			if r.stopped.Err() != nil {
				return nil, jetstream.ErrMsgIteratorClosed
			}
			return nil, fmt.Errorf("a read's consumer failed (%w), and no new one could be made: %w", err, serr)
		}
		// The new consumer gets the whole wait: making it may have taken
		// longer, and a caller told "nothing came" would take it for
		// stalled and make yet another (seen in a probe: 7.7 s without
		// events where the first new one would have read on).
		if maxWait > 0 {
			deadline = time.Now().Add(maxWait)
		}
	}
}

// walk hands over the read's next message, got from the stream's leader
// (walkAhead at a time, see getAhead), trying again every walkPause while
// there is none yet or the leader does not answer, for up to wait, or
// until made is closed (the read's consumer is ready): then it returns
// neither a message nor an error.
func (r *orderedRead) walk(ctx context.Context, wait time.Duration, made <-chan struct{}) (jetstream.Msg, error) {
	timeout := time.After(wait)
	for {
		if len(r.walked) == 0 {
			// Caught up, one request asks whether the next has come,
			// not 32 every walkPause.
			ahead := walkAhead
			if r.caughtUp {
				ahead = 1
			}
			r.walked = r.getAhead(ctx, ahead, min(wait, consumerTry))
			r.caughtUp = len(r.walked) == 0
		}
		if r.stopped.Err() != nil {
			return nil, jetstream.ErrMsgIteratorClosed
		}
		if len(r.walked) > 0 {
			m := r.walked[0]
			r.walked = r.walked[1:]
			r.next.Store(m.Sequence + 1)
			return walkedMsg{m: m, stream: r.stream.CachedInfo().Config.Name}, nil
		}
		// Not stored yet, or the leader being elected: the consumer
		// being made says when to give up.
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-r.stopped.Done():
			return nil, jetstream.ErrMsgIteratorClosed
		case <-made:
			return nil, nil
		case <-timeout:
			return nil, nil
		case <-time.After(walkPause):
		}
	}
}

// walkAhead is how many messages a walking read asks for at once: one
// request a message, one after another, fell behind a replica's writes
// (some 2,000 events a second in a probe with a node killed), and the
// read models' lag grew for as long as the read walked.
const walkAhead = 32

// getAhead gets, all at once within timeout (or until the read stops),
// the first message matching the read's filter at or after each of the
// ahead sequences from the read's next one on, and returns them in order,
// each once, up to the first it could not get: with every message
// matching, the ahead messages from the next one. (Each answer is the
// first matching at or after its sequence, so two in a row are the same
// message or have none matching between them: nothing is skipped.)
func (r *orderedRead) getAhead(ctx context.Context, ahead int, timeout time.Duration) []*jetstream.RawStreamMsg {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	defer context.AfterFunc(r.stopped, cancel)()
	from, filter := r.next.Load(), r.cfg.FilterSubjects[0]
	got := make([]*jetstream.RawStreamMsg, ahead)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i], _ = r.stream.GetMsg(ctx, from+uint64(i), jetstream.WithGetMsgSubject(filter)) })
	}
	wg.Wait()
	var out []*jetstream.RawStreamMsg
	for _, m := range got {
		if m == nil {
			break // not stored yet, or not answered
		}
		if len(out) == 0 || m.Sequence > out[len(out)-1].Sequence {
			out = append(out, m)
		}
	}
	return out
}

// walkPause is how long a walking read waits before it asks the leader
// again for a message not stored yet: the delay it adds to a new event,
// for the seconds a consumer takes to make in a failover.
const walkPause = 50 * time.Millisecond

// consumer is the read's consumer now; nil while a walking read's is
// being made.
func (r *orderedRead) consumer() jetstream.Consumer {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil {
		return nil
	}
	return r.cur.cons
}

// Stop stops the read: a Next waiting returns ErrMsgIteratorClosed, and
// a consumer being made is given up.
func (r *orderedRead) Stop() {
	r.stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != nil {
		r.cur.msgs.Stop()
	}
}

// close stops the read and deletes its consumer. Stopping only stops the
// pulls: the consumer would stay on the server until its inactive
// threshold (5 minutes), and busy readers (history reads, rebuilds,
// subscriptions started anew) would leave hundreds there. The deletion is
// not waited for: a subscription ends most often because its server
// stopped answering, and a projector starting anew would wait the
// deletion's whole timeout. (A consumer being made meanwhile is deleted
// by install.)
func (r *orderedRead) close() {
	r.stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != nil {
		r.cur.end(r.stream)
	}
}

// deleteOrdered deletes the consumer name of a read from stream. The
// deletion has a timeout of its own, as a read often ends because its
// context did; if it fails, the server drops the consumer after its
// inactive threshold.
func deleteOrdered(stream jetstream.Stream, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	stream.DeleteConsumer(ctx, name)
}

// walkedMsg is a message a walking read got from the stream's leader.
// Like its consumer's, it is acknowledged to no one.
type walkedMsg struct {
	m      *jetstream.RawStreamMsg
	stream string
}

// Metadata is the message's place in the stream. It has no consumer, and
// how many matching messages follow it is not known: NumPending is 1, so
// that no reader takes the message for the last.
func (w walkedMsg) Metadata() (*jetstream.MsgMetadata, error) {
	return &jetstream.MsgMetadata{Sequence: jetstream.SequencePair{Stream: w.m.Sequence}, NumDelivered: 1,
		NumPending: 1, Timestamp: w.m.Time, Stream: w.stream}, nil
}

func (w walkedMsg) Data() []byte         { return w.m.Data }
func (w walkedMsg) Headers() nats.Header { return w.m.Header }
func (w walkedMsg) Subject() string      { return w.m.Subject }
func (w walkedMsg) Reply() string        { return "" }

// The acknowledgements fail, as they do for any message without a reply
// subject to send them to.
func (walkedMsg) Ack() error                       { return jetstream.ErrMsgNoReply }
func (walkedMsg) DoubleAck(context.Context) error  { return jetstream.ErrMsgNoReply }
func (walkedMsg) Nak() error                       { return jetstream.ErrMsgNoReply }
func (walkedMsg) NakWithDelay(time.Duration) error { return jetstream.ErrMsgNoReply }
func (walkedMsg) InProgress() error                { return jetstream.ErrMsgNoReply }
func (walkedMsg) Term() error                      { return jetstream.ErrMsgNoReply }
func (walkedMsg) TermWithReason(string) error      { return jetstream.ErrMsgNoReply }
