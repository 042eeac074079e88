package eventstore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Queue is a work queue on a JetStream stream of its own: each job is
// taken by one worker of any replica and removed once done; a job put
// twice under one id within an hour is kept once. Jobs are stored through a
// committer of the queue's own, so the jobs put at the same moment share
// one atomic batch's disk flushes, as events do.
//
// A job due later waits on the server as a scheduled message (ADR-51), on
// a subject of its own under the queue's subject, which the server copies
// to the queue's subject when the job is due: until then no worker holds
// it, and the workers' consumer, filtered on the queue's subject, has it
// neither pending nor in hand. So jobs waiting, however many, hold up no
// job due now.
type Queue struct {
	s         *Store
	name      string
	stream    string
	handle    jetstream.Stream // the stream's, to read it without asking for it first
	subject   string
	committer *committer
	ackWait   time.Duration // how long a job whose worker died waits to be handed out again
}

// Queue opens (creating if needed) the work queue name of this store.
func (s *Store) Queue(ctx context.Context, name string) (*Queue, error) {
	q := &Queue{s: s, name: name, stream: s.name + "_" + name, subject: s.prefix + ".queue." + name, ackWait: queueAckWait}
	err := s.provision(ctx, "queue "+name, func(ctx context.Context) error {
		var err error
		q.handle, err = s.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name:      q.stream,
			Subjects:  []string{q.subject, q.later("*")},
			Storage:   jetstream.FileStorage,
			Retention: jetstream.WorkQueuePolicy,
			// A job is put again within minutes if at all: an event
			// the dispatcher handles again, a job handed out again
			// after a failed requeue. Each id is remembered for the
			// window, and a slow receiver's deliveries put back take a
			// new one each time round.
			Duplicates:         time.Hour,
			Replicas:           s.replicas,
			AllowAtomicPublish: true,
			AllowMsgSchedules:  true,
			// Schedules need it: the server stores each schedule
			// message as its subject's roll-up.
			AllowRollup: true,
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

// Put adds jobs, by id; a job whose id was put within an hour is not added
// again. A job is handed out once due: at once if its due time is zero or
// past. Put returns once the server has stored every one.
func (q *Queue) Put(ctx context.Context, jobs ...domain.Job) error {
	ds := make([]*decision, 0, len(jobs))
	for _, j := range jobs {
		d := q.job(ctx, j)
		if err := q.s.fits(d); err != nil {
			return fmt.Errorf("eventstore: queue put of %s: %w", j.ID, err)
		}
		ds = append(ds, d)
	}
	for _, out := range q.committer.submit(ctx, ds...) {
		if out.err != nil {
			return q.s.refusedWrite(fmt.Errorf("eventstore: queue put: %w", out.err))
		}
	}
	return nil
}

// hdrJobID is the header of a job's id. The server drops the Nats-Msg-Id
// of a scheduled message from the copy it makes when the job is due, so
// the job's id travels in a header of its own too.
const hdrJobID = "Cargo-Job-Id"

// job is j as a decision: one message, no expectation, with j's id as
// its Nats-Msg-Id, which keeps it once. A job due later is a schedule to
// publish it on the queue's subject when due. The server keeps one
// schedule per subject, so each job's has a subject of its own.
//
// The server copies a schedule's headers onto the job it publishes, the
// Nats-Batch-* of the atomic batch that stored the schedule among them
// (nats-server 2.15.2). The copy is stored and handed out as any job;
// only an external single-replica server restarting with such a copy as
// the queue's last message logs that it found no partial batch to
// restore, and carries on.
func (q *Queue) job(ctx context.Context, j domain.Job) *decision {
	subject, h := q.subject, nats.Header{}
	h.Set(hdrJobID, j.ID)
	if time.Until(j.Due) > 0 {
		subject = q.schedule(j.ID)
		// (nats.go's WithScheduleAt would drop the fraction of a second.)
		h.Set(jetstream.ScheduleHeader, "@at "+j.Due.UTC().Format(time.RFC3339Nano))
		h.Set(jetstream.ScheduleTargetHeader, q.subject)
	}
	return &decision{ctx: ctx, subject: subject, msgs: []*nats.Msg{message(subject, j.ID, h, j.Data)}, settled: make(chan struct{})}
}

// later is the subject of the schedule of a job due later, by token.
func (q *Queue) later(token string) string { return q.subject + ".later." + token }

// schedule is the subject of the schedule of job id, due later. An id may
// be long and hold any character; a subject's token holds no dot, space or
// wildcard, and a long one would make the server drop the connection. The
// id's hash is short and as unique.
func (q *Queue) schedule(id string) string {
	sum := sha256.Sum256([]byte(id))
	return q.later(base64.RawURLEncoding.EncodeToString(sum[:]))
}

// Waiting reports whether job id was put due later and is not due yet: its
// schedule is stored, and the server removes it once it has put the job
// in the queue. So a job waiting will be handed out, however long ago it
// was put; a job not waiting may be due, in hand or done, or unknown.
func (q *Queue) Waiting(ctx context.Context, id string) (bool, error) {
	m, err := q.waiting(ctx, id)
	return m != nil, err
}

// Scheduled is job id as it waits (see Waiting): its data, and when it is
// due, read from its schedule on the server; false if it does not wait. It
// shows what a job due later holds without waiting for it to be handed out.
func (q *Queue) Scheduled(ctx context.Context, id string) (domain.Job, bool, error) {
	m, err := q.waiting(ctx, id)
	if m == nil {
		return domain.Job{}, false, err
	}
	at, _ := strings.CutPrefix(m.Header.Get(jetstream.ScheduleHeader), "@at ")
	due, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return domain.Job{}, false, fmt.Errorf("eventstore: queue %s: the schedule of %s: %w", q.stream, id, err)
	}
	return domain.Job{ID: id, Data: m.Data, Due: due}, true, nil
}

// waiting is the schedule of job id, or nil if the job does not wait.
func (q *Queue) waiting(ctx context.Context, id string) (*jetstream.RawStreamMsg, error) {
	m, err := q.handle.GetLastMsgForSubject(ctx, q.schedule(id))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, unavailable(fmt.Errorf("eventstore: queue %s: %w", q.stream, err))
	}
	return m, nil
}

// Cancel takes job id out of the queue if it waits (put due later, and
// not due yet), so that it is never handed out. A job due, in hand or
// done is left as it is.
func (q *Queue) Cancel(ctx context.Context, id string) error {
	if err := q.handle.Purge(ctx, jetstream.WithPurgeSubject(q.schedule(id))); err != nil {
		return unavailable(fmt.Errorf("eventstore: queue %s: cancel %s: %w", q.stream, id, err))
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

// do runs fn on a job, turning a panic into a wait of the AckWait (its
// stack logged), as for a worker that died: a bug on one job (a webhook's
// payload, say) does not bring the process down, to be handed the job
// again, on each replica in turn, and fall.
func (q *Queue) do(ctx context.Context, fn func(ctx context.Context, id string, data []byte, handout int) time.Duration, id string, data []byte, handout int) (later time.Duration) {
	defer func() {
		if v := recover(); v != nil {
			q.s.log.Error("eventstore: a queue's job panicked; it is handed out again later", "queue", q.stream, "job", id, "handout", handout,
				"in", q.ackWait.String(), "panic", v, "stack", string(debug.Stack()))
			later = q.ackWait
		}
	}()
	return fn(ctx, id, data, handout)
}

// Work hands jobs to fn, up to parallel at a time, until ctx ends: each
// job's id and data, and its handout (1 for the first). fn returns 0 when
// the job is done, which removes it, or how long the job waits before it
// is handed out again. A job whose worker dies is handed out again after a
// minute. fn gets a context that outlives ctx, so a job in hand when
// shutdown begins finishes.
func (q *Queue) Work(ctx context.Context, parallel int, fn func(ctx context.Context, id string, data []byte, handout int) (later time.Duration)) {
	q.s.keepFollowing(ctx, "queue "+q.stream+" workers", func(began func()) error { return q.work(ctx, parallel, fn, began) })
}

func (q *Queue) work(ctx context.Context, parallel int, fn func(ctx context.Context, id string, data []byte, handout int) (later time.Duration), began func()) error {
	cons, err := q.s.js.CreateOrUpdateConsumer(ctx, q.stream, jetstream.ConsumerConfig{
		Durable: queueWorkers,
		// Jobs due now: the schedules of jobs due later are not
		// handed out.
		FilterSubject: q.subject,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       q.ackWait,
		// A job handed out again after a delay (its requeue failed)
		// counts as pending on the server meanwhile: a small cap would
		// let a few such jobs hold up all the others. Concurrency is
		// bounded here, by slots.
		MaxAckPending: 100_000,
		Replicas:      q.s.replicas,
	})
	if err != nil {
		return fmt.Errorf("eventstore: queue workers: %w", err)
	}
	// The consumer may be new: its first pull must not be lost (see
	// waitRouted).
	if err := q.s.waitRouted(ctx, q.stream, queueWorkers); err != nil {
		return fmt.Errorf("eventstore: queue workers: %w", err)
	}
	// A long-lived pull: a job put is in hand within milliseconds. The
	// client buffers no more jobs than there are workers, so none waits
	// there long.
	msgs, told, err := q.s.pullMessages(cons, jetstream.DefaultExpires, "queue workers", []any{"queue", q.stream}, jetstream.PullMaxMessages(parallel))
	if err != nil {
		return fmt.Errorf("eventstore: queue workers: %w", err)
	}
	began()
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
	defer told.stop()
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
			told.interrupted(err)
			continue
		}
		told.resumed()
		meta, err := m.Metadata()
		if err != nil {
			<-slots
			m.Term()
			continue
		}
		id, handout := m.Headers().Get(hdrJobID), int(meta.NumDelivered)
		if id == "" { // a job put by a version before Cargo-Job-Id
			id = m.Headers().Get(jetstream.MsgIDHeader)
		}
		held.add(m)
		go func() {
			defer func() { <-slots }()
			defer held.remove(m)
			// The outcome stands even if shutdown began meanwhile. The
			// removal is not waited for: the store drains its connection
			// on close, and only a crash in between makes a job run twice
			// (a webhook receiver dedupes by webhook-id).
			if later := q.do(context.WithoutCancel(ctx), fn, id, m.Data(), handout); later == 0 {
				m.Ack()
			} else {
				m.NakWithDelay(max(later, time.Millisecond))
			}
		}()
	}
	for range parallel { // wait for the jobs in hand
		slots <- struct{}{}
	}
	return fmt.Errorf("eventstore: queue %s workers stopped", q.stream)
}
