package eventstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Queue is a work queue on a JetStream stream of its own: each job is
// taken by one worker of any replica and removed once done; a job put
// twice under one id within a day is kept once. Jobs are stored through a
// committer of the queue's own, so the jobs put at the same moment share
// one atomic batch's disk flushes, as events do.
type Queue struct {
	s         *Store
	name      string
	stream    string
	subject   string
	committer *committer
	ackWait   time.Duration // how long a job whose worker died waits to be handed out again
}

// Queue opens (creating if needed) the work queue name of this store.
func (s *Store) Queue(ctx context.Context, name string) (*Queue, error) {
	q := &Queue{s: s, name: name, stream: s.name + "_" + name, subject: s.prefix + ".queue." + name, ackWait: queueAckWait}
	err := s.provision(ctx, "queue "+name, func(ctx context.Context) error {
		_, err := s.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name:               q.stream,
			Subjects:           []string{q.subject},
			Storage:            jetstream.FileStorage,
			Retention:          jetstream.WorkQueuePolicy,
			Duplicates:         24 * time.Hour,
			Replicas:           s.replicas,
			AllowAtomicPublish: true,
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("eventstore: queue %s: %w", name, err)
	}
	if q.committer, err = s.newCommitter("queue "+name, unobserved{}); err != nil {
		return nil, err
	}
	return q, nil
}

// Put adds jobs, by id; a job whose id was put within a day is not added
// again. Put returns once the server has stored every one.
func (q *Queue) Put(ctx context.Context, jobs map[string][]byte) error {
	ds := make([]*decision, 0, len(jobs))
	for id, data := range jobs {
		ds = append(ds, newJob(ctx, q.subject, id, data))
	}
	for _, out := range q.committer.submit(ctx, ds...) {
		if out.err != nil {
			return unavailable(fmt.Errorf("eventstore: queue put: %w", out.err))
		}
	}
	return nil
}

// queueWorkers is the durable consumer all replicas' workers share.
const queueWorkers = "workers"

// queueAckWait is how long a job whose worker died waits before it is
// handed out again (Queue.ackWait; tests shorten it).
const queueAckWait = time.Minute

// inHand is the jobs a queue's workers hold.
type inHand struct {
	mu   sync.Mutex
	msgs map[jetstream.Msg]bool
}

func (h *inHand) add(m jetstream.Msg) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.msgs == nil {
		h.msgs = map[jetstream.Msg]bool{}
	}
	h.msgs[m] = true
}

func (h *inHand) remove(m jetstream.Msg) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.msgs, m)
}

// held is the jobs in hand.
func (h *inHand) held() []jetstream.Msg {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Collect(maps.Keys(h.msgs))
}

// Work hands jobs to fn, up to parallel at a time, until ctx ends: each
// job's id and data, and the attempt (1 for the first). fn returns 0 when
// the job is done, which removes it, or how long to wait before it is
// tried again. A job whose worker dies is handed out again after a
// minute. fn gets a context that outlives ctx, so a job in hand when
// shutdown begins finishes.
func (q *Queue) Work(ctx context.Context, parallel int, fn func(ctx context.Context, id string, data []byte, attempt int) (retryIn time.Duration)) {
	q.s.keepFollowing(ctx, "queue "+q.stream+" workers", func() error { return q.work(ctx, parallel, fn) })
}

func (q *Queue) work(ctx context.Context, parallel int, fn func(ctx context.Context, id string, data []byte, attempt int) (retryIn time.Duration)) error {
	cons, err := q.s.js.CreateOrUpdateConsumer(ctx, q.stream, jetstream.ConsumerConfig{
		Durable:   queueWorkers,
		AckPolicy: jetstream.AckExplicitPolicy,
		AckWait:   q.ackWait,
		// Jobs waiting to be retried count as pending on the server: a
		// small cap would let a few failing jobs hold up all the others.
		// Concurrency is bounded here, by slots.
		MaxAckPending: 100_000,
		Replicas:      q.s.replicas,
	})
	if err != nil {
		return fmt.Errorf("eventstore: queue workers: %w", err)
	}
	// A long-lived pull: a job put is in hand within milliseconds. The
	// client buffers no more jobs than there are workers, so none waits
	// there long.
	msgs, err := cons.Messages(jetstream.PullMaxMessages(parallel))
	if err != nil {
		return fmt.Errorf("eventstore: queue workers: %w", err)
	}
	// Once ctx ends, the jobs already buffered still come out, and are
	// done like those under way.
	defer context.AfterFunc(ctx, msgs.Drain)()
	// A job may wait in hand longer than the AckWait (for its
	// subscription's turn, say): it is kept alive meanwhile, or the
	// server would hand it out again while it is under way.
	var held inHand
	stopKeeping := make(chan struct{})
	defer close(stopKeeping)
	go keepInProgress(q.ackWait, stopKeeping, held.held)
	slots := make(chan struct{}, parallel)
	for {
		slots <- struct{}{} // a free worker first, then a job
		m, err := msgs.Next()
		if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
			<-slots
			break
		}
		if err != nil {
			// Missed heartbeats and the like: the iterator pulls
			// again by itself.
			<-slots
			q.s.log.Warn("eventstore: queue workers interrupted", "queue", q.stream, "err", err)
			continue
		}
		meta, err := m.Metadata()
		if err != nil {
			<-slots
			m.Term()
			continue
		}
		id, attempt := m.Headers().Get(jetstream.MsgIDHeader), int(meta.NumDelivered)
		held.add(m)
		go func() {
			defer func() { <-slots }()
			defer held.remove(m)
			// The outcome stands even if shutdown began meanwhile. The
			// removal is not waited for: the store drains its connection
			// on close, and only a crash in between makes a job run twice
			// (a webhook receiver dedupes by webhook-id).
			if retryIn := fn(context.WithoutCancel(ctx), id, m.Data(), attempt); retryIn == 0 {
				m.Ack()
			} else {
				m.NakWithDelay(max(retryIn, time.Millisecond))
			}
		}()
	}
	for range parallel { // wait for the jobs in hand
		slots <- struct{}{}
	}
	return fmt.Errorf("eventstore: queue %s workers stopped", q.stream)
}
