package eventstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Queue is a work queue on a JetStream stream of its own: each job is
// taken by one worker of any replica and removed once done; a job put
// twice under one id within a day is kept once.
type Queue struct {
	s       *Store
	stream  string
	subject string
}

// Job is a job as a worker gets it.
type Job struct {
	ID      string
	Data    []byte
	Attempt int // 1 for the first try
}

// Outcome tells the queue what became of a job.
type Outcome struct {
	retryIn time.Duration
	drop    bool
}

var (
	// JobDone removes the job.
	JobDone = Outcome{drop: true}
)

// RetryIn has the job tried again after d.
func RetryIn(d time.Duration) Outcome { return Outcome{retryIn: max(d, time.Millisecond)} }

// Queue opens (creating if needed) the work queue name of this store.
func (s *Store) Queue(ctx context.Context, name string) (*Queue, error) {
	q := &Queue{s: s, stream: s.name + "_" + name, subject: s.prefix + ".queue." + name}
	_, err := s.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:       q.stream,
		Subjects:   []string{q.subject},
		Storage:    jetstream.FileStorage,
		Retention:  jetstream.WorkQueuePolicy,
		Duplicates: 24 * time.Hour,
		Replicas:   s.replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("eventstore: queue %s: %w", name, err)
	}
	return q, nil
}

// Put adds jobs, by id; a job whose id was put within a day is not added
// again. The jobs are published together and Put returns once the server
// has stored every one.
func (q *Queue) Put(ctx context.Context, jobs map[string][]byte) error {
	acks := make([]jetstream.PubAckFuture, 0, len(jobs))
	for id, data := range jobs {
		f, err := q.s.js.PublishMsgAsync(&nats.Msg{Subject: q.subject, Data: data}, jetstream.WithMsgID(id))
		if err != nil {
			return fmt.Errorf("eventstore: queue put %s: %w", id, err)
		}
		acks = append(acks, f)
	}
	for _, f := range acks {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			return fmt.Errorf("eventstore: queue put: %w", err)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Work hands jobs to fn, up to parallel at a time, until ctx ends. A job
// whose worker dies is handed out again after a minute. fn gets a context
// that outlives ctx, so a job under way when shutdown begins finishes.
func (q *Queue) Work(ctx context.Context, parallel int, fn func(context.Context, Job) Outcome) error {
	cons, err := q.s.js.CreateOrUpdateConsumer(ctx, q.stream, jetstream.ConsumerConfig{
		Durable:   "workers",
		AckPolicy: jetstream.AckExplicitPolicy,
		AckWait:   time.Minute,
		// Jobs waiting to be retried count as pending on the server: a
		// small cap would let a few failing jobs hold up all the others.
		// Concurrency is bounded here, by slots.
		MaxAckPending: 100_000,
		Replicas:      q.s.replicas,
	})
	if err != nil {
		return fmt.Errorf("eventstore: queue workers: %w", err)
	}
	slots := make(chan struct{}, parallel)
	for ctx.Err() == nil {
		free := parallel - len(slots)
		if free == 0 {
			pause(ctx, 10*time.Millisecond)
			continue
		}
		batch, err := cons.Fetch(free, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			pause(ctx, time.Second)
			continue
		}
		for m := range batch.Messages() {
			meta, err := m.Metadata()
			if err != nil {
				m.Term()
				continue
			}
			job := Job{ID: m.Headers().Get(jetstream.MsgIDHeader), Data: m.Data(), Attempt: int(meta.NumDelivered)}
			slots <- struct{}{}
			go func() {
				defer func() { <-slots }()
				// The outcome stands even if shutdown began meanwhile:
				// a finished job must not be done twice.
				if out := fn(context.WithoutCancel(ctx), job); out.drop {
					m.DoubleAck(context.WithoutCancel(ctx))
				} else {
					m.NakWithDelay(out.retryIn)
				}
			}()
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && ctx.Err() == nil {
			pause(ctx, time.Second)
		}
	}
	for range parallel { // wait for the jobs in hand
		slots <- struct{}{}
	}
	return ctx.Err()
}
