package eventstore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestAJobHeldLongerThanTheAckWaitIsNotHandedOutAgain holds a job in a
// worker for three AckWaits, as a delivery waiting for its subscription's
// turn may: the workers keep it alive, so it is handed out once while in
// hand.
func TestAJobHeldLongerThanTheAckWaitIsNotHandedOutAgain(t *testing.T) {
	t.Parallel()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	q := openQuickQueue(t, "held")
	handouts := make(chan int, 8)
	done := make(chan struct{})
	go q.Work(ctx, 4, func(_ context.Context, id string, _ []byte, attempt int) time.Duration {
		handouts <- attempt
		if attempt == 1 {
			time.Sleep(3 * q.ackWait) // in hand, the work under way
			close(done)
		}
		return 0
	})
	if err := q.Put(ctx, domain.Job{ID: "j1", Data: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	received(t, "the job's first handout to be done", done)
	// A second handout would have come while the first was held (after
	// one AckWait, and again after two), before done.
	if first, again := <-handouts, len(handouts); first != 1 || again != 0 {
		t.Errorf("the job was handed out as attempt %d, then %d times more while in hand", first, again)
	}
}

func TestAJobWhoseWorkerPanicsIsHandedOutAgainAfterTheAckWaitAndTheOtherJobsAreDone(t *testing.T) {
	t.Parallel()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	q := openQuickQueue(t, "panics")
	if err := q.Put(ctx, domain.Job{ID: "j1"}, domain.Job{ID: "j2"}); err != nil {
		t.Fatal(err)
	}
	handouts := make(chan handout, 8)
	go q.Work(ctx, 1, func(_ context.Context, id string, _ []byte, attempt int) time.Duration {
		handouts <- handout{id: id, attempt: attempt, at: time.Now()}
		if id == "j1" && attempt == 1 {
			panic("a bug in the worker")
		}
		return 0
	})
	got := map[string][]handout{}
	for len(got["j1"]) < 2 || len(got["j2"]) < 1 {
		h := next(t, handouts)
		got[h.id] = append(got[h.id], h)
	}
	if first, again := got["j1"][0], got["j1"][1]; again.attempt != 2 || again.at.Sub(first.at) < q.ackWait {
		t.Errorf("the job that panicked was handed out again as attempt %d, %s after the first; want attempt 2 after the AckWait (%s)",
			again.attempt, again.at.Sub(first.at), q.ackWait)
	}
}

// openQuickQueue opens the queue name of a store of its own, which hands
// a job whose worker died out again after a second, not a minute.
func openQuickQueue(t *testing.T, name string) *Queue {
	t.Helper()
	q := openQueue(t, openForTest(t, Options{DataDir: t.TempDir()}), name)
	q.ackWait = time.Second
	return q
}

// openQueue opens the queue name of s.
func openQueue(t *testing.T, s *Store, name string) *Queue {
	t.Helper()
	q, err := s.Queue(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// handout is a job as a worker got it.
type handout struct {
	id, data string
	attempt  int
	at       time.Time
}

// work runs q's workers until the test ends; each job they get is done.
func work(t *testing.T, q *Queue) <-chan handout {
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	handouts := make(chan handout, 64)
	go q.Work(ctx, 4, func(_ context.Context, id string, data []byte, attempt int) time.Duration {
		handouts <- handout{id: id, data: string(data), attempt: attempt, at: time.Now()}
		return 0
	})
	return handouts
}

// next is the next job handed out, failing the test after a minute.
func next(t *testing.T, handouts <-chan handout) handout {
	t.Helper()
	select {
	case h := <-handouts:
		return h
	case <-time.After(time.Minute):
		t.Fatal("no job handed out within a minute")
		return handout{}
	}
}

// workers is the workers' consumer, once their first pull has made it.
func workers(t *testing.T, q *Queue) jetstream.Consumer {
	t.Helper()
	var cons jetstream.Consumer
	waitUntil(t, "the workers' consumer", func() bool {
		var err error
		cons, err = q.s.js.Consumer(context.Background(), q.stream, queueWorkers)
		return err == nil
	})
	return cons
}

// stored is how many messages q's stream holds: jobs and schedules.
func stored(t *testing.T, q *Queue) uint64 {
	t.Helper()
	info, err := q.s.js.Stream(context.Background(), q.stream)
	if err != nil {
		t.Fatal(err)
	}
	return info.CachedInfo().State.Msgs
}

func TestJobsDueLaterWaitOnTheServerWithNothingPendingAndAreHandedOutOnceDue(t *testing.T) {
	t.Parallel()
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	q := openQueue(t, s, "later")
	handouts := work(t, q)
	cons := workers(t, q)
	// Six jobs put together go as one atomic batch (a few go one by one).
	due := time.Now().Add(3 * time.Second)
	var jobs []domain.Job
	for i := range 6 {
		jobs = append(jobs, domain.Job{ID: fmt.Sprint("later/", i), Data: []byte(fmt.Sprint(i)), Due: due})
	}
	if err := q.Put(ctx, jobs...); err != nil {
		t.Fatal(err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	backlog, err := q.Backlog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if waiting := stored(t, q); time.Now().After(due) || waiting != 6 || info.NumPending != 0 || info.NumAckPending != 0 {
		t.Fatalf("while the jobs wait: %d stored, %d pending, %d in hand on the workers' consumer (the check ended %s before due); want 6 stored, none pending or in hand",
			waiting, info.NumPending, info.NumAckPending, time.Until(due))
	}
	if backlog.Pending != 6 || backlog.InHand != 0 {
		t.Errorf("the queue's backlog while the jobs wait: %+v, want 6 pending, none in hand", backlog)
	}
	got := map[string]string{}
	for range jobs {
		h := next(t, handouts)
		if h.at.Before(due) || h.attempt != 1 {
			t.Errorf("job %s handed out %s before due, as attempt %d; want once due, as the first", h.id, due.Sub(h.at), h.attempt)
		}
		got[h.id] = h.data
	}
	for _, j := range jobs {
		if got[j.ID] != string(j.Data) {
			t.Errorf("job %s handed out with %q, want %q", j.ID, got[j.ID], j.Data)
		}
	}
	// The server removes each schedule once it has put its job, and the
	// job once done: nothing is left behind.
	waitUntil(t, "no message left in the queue's stream after its jobs were done", func() bool { return stored(t, q) == 0 })
}

func TestAJobDueLaterPutTwiceIsHandedOutOnce(t *testing.T) {
	t.Parallel()
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	q := openQueue(t, s, "twice")
	due := time.Now().Add(time.Second)
	for range 2 {
		if err := q.Put(ctx, domain.Job{ID: "j", Due: due}); err != nil {
			t.Fatal(err)
		}
	}
	// A job due after it: a second copy would come before this one.
	if err := q.Put(ctx, domain.Job{ID: "after", Due: due.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	handouts := work(t, q)
	if first, second := next(t, handouts), next(t, handouts); first.id != "j" || second.id != "after" {
		t.Errorf("handed out %s, then %s; want j once, then after", first.id, second.id)
	}
}

// A job's id, however long, makes a short subject for its schedule: an id
// of 3,100 bytes in the subject made the publish longer than the server
// takes, which closed the queue's connection (from a review).
func TestAJobDueLaterWithALongIDIsHandedOutUnderIt(t *testing.T) {
	t.Parallel()
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	q := openQueue(t, s, "long")
	id := strings.Repeat("x", 3100)
	if err := q.Put(ctx, domain.Job{ID: id, Due: time.Now().Add(300 * time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	if err := q.Put(ctx, domain.Job{ID: "short"}); err != nil {
		t.Fatalf("a job put after it: %v", err)
	}
	handouts := work(t, q)
	got := map[string]bool{next(t, handouts).id: true, next(t, handouts).id: true}
	if !got[id] || !got["short"] {
		t.Errorf("handed out %d jobs, want the long id's and short", len(got))
	}
}

func TestAJobDueLaterSurvivesARestartOfTheStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	s := openForTest(t, Options{DataDir: dir})
	q := openQueue(t, s, "restart")
	due := time.Now().Add(3 * time.Second)
	if err := q.Put(ctx, domain.Job{ID: "j", Data: []byte("x"), Due: due}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	q = openQueue(t, openForTest(t, Options{DataDir: dir}), "restart")
	if h := next(t, work(t, q)); h.id != "j" || h.data != "x" || h.at.Before(due) {
		t.Errorf("handed out %+v, want j with x once due at %s", h, due)
	}
}

func TestAQueueMadeBeforeJobsCouldWaitOnTheServerKeepsItsJobsAndTakesJobsDueLater(t *testing.T) {
	t.Parallel()
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	// The stream and consumer as the version before made them, and a job
	// it put, whose id is its Nats-Msg-Id alone.
	stream, subject := s.name+"_old", s.prefix+".queue.old"
	if _, err := s.js.CreateStream(ctx, jetstream.StreamConfig{Name: stream, Subjects: []string{subject}, Storage: jetstream.FileStorage,
		Retention: jetstream.WorkQueuePolicy, Duplicates: 24 * time.Hour, AllowAtomicPublish: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.js.CreateConsumer(ctx, stream, jetstream.ConsumerConfig{Durable: queueWorkers, AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: queueAckWait, MaxAckPending: 100_000}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.js.PublishMsg(ctx, message(subject, "before", nats.Header{}, []byte("x"))); err != nil {
		t.Fatal(err)
	}
	q := openQueue(t, s, "old")
	handouts := work(t, q)
	if h := next(t, handouts); h.id != "before" || h.data != "x" {
		t.Errorf("the job put before: handed out %+v, want before with x", h)
	}
	due := time.Now().Add(time.Second)
	if err := q.Put(ctx, domain.Job{ID: "later", Due: due}); err != nil {
		t.Fatal(err)
	}
	if h := next(t, handouts); h.id != "later" || h.at.Before(due) {
		t.Errorf("handed out %+v, want later once due at %s", h, due)
	}
}

func TestAJobIsWaitingFromItsPutUntilItIsDue(t *testing.T) {
	t.Parallel()
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	q := openQueue(t, s, "waiting")
	if err := q.Put(ctx, domain.Job{ID: "later", Due: time.Now().Add(time.Second)}, domain.Job{ID: "now"}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		id   string
		want bool
	}{{"later", true}, {"now", false}, {"never put", false}} {
		if waiting, err := q.Waiting(ctx, tt.id); err != nil || waiting != tt.want {
			t.Errorf("Waiting(%s) = %v, %v; want %v", tt.id, waiting, err, tt.want)
		}
	}
	handouts := work(t, q)
	for next(t, handouts).id != "later" { // now first
	}
	// The server removes the schedule once it has put the job, by the time
	// the job is handed out or moments after.
	waitUntil(t, "the job handed out to wait no longer", func() bool {
		waiting, err := q.Waiting(ctx, "later")
		if err != nil {
			t.Fatal(err)
		}
		return !waiting
	})
}

// A job cancelled while it waits is taken out: it waits no longer, and
// the job put after it is the next handed out. A job due is left as is.
func TestACancelledJobIsNeverHandedOut(t *testing.T) {
	t.Parallel()
	s := openForTest(t, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	q := openQueue(t, s, "cancel")
	if err := q.Put(ctx, domain.Job{ID: "cancelled", Due: time.Now().Add(500 * time.Millisecond)}, domain.Job{ID: "now"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"cancelled", "now", "never put"} {
		if err := q.Cancel(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if waiting, err := q.Waiting(ctx, "cancelled"); err != nil || waiting {
		t.Errorf("the cancelled job waits: %v, %v", waiting, err)
	}
	if err := q.Put(ctx, domain.Job{ID: "after", Due: time.Now().Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	handouts := work(t, q)
	for _, want := range []string{"now", "after"} {
		if h := next(t, handouts); h.id != want {
			t.Errorf("handed out %s, want %s", h.id, want)
		}
	}
}
