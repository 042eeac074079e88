package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cargostream/cargostream/commands"
	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/projections"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// testSealer is a sealer of subscriptions' secrets with a key of zeros.
func testSealer(t *testing.T) *Sealer {
	t.Helper()
	sealer, err := NewSealer(make([]byte, 32), nil)
	if err != nil {
		t.Fatal(err)
	}
	return sealer
}

// subscriptions is a fixed set of subscriptions, none wanting any event:
// the deliveries of these tests are pings, made through the queue.
type subscriptions map[string]domain.Webhook

func (s subscriptions) Webhook(id string) (domain.Webhook, bool) { w, ok := s[id]; return w, ok }
func (subscriptions) Matching(string, uint64) []domain.Webhook   { return nil }
func (subscriptions) AnyLive(uint64) bool                        { return false }
func (subscriptions) RegisteredAt(string) uint64                 { return 0 }
func (subscriptions) Attempts(string, string) (int, string)      { return 0, "" }

// attempts keeps the attempts the dispatcher records.
type attempts struct {
	mu   sync.Mutex
	all  []domain.WebhookDeliveryAttempted
	more chan struct{} // a receive after each record
}

func (a *attempts) RecordDelivery(_ context.Context, _, _ string, e domain.WebhookDeliveryAttempted) error {
	a.mu.Lock()
	a.all = append(a.all, e)
	a.mu.Unlock()
	a.more <- struct{}{}
	return nil
}

func (*attempts) DisableWebhook(context.Context, string, string, string) (uint64, error) {
	return 0, nil
}

// receiver is a loopback webhook receiver that tells of each request and
// answers it once answer is closed.
func receiver(t *testing.T, answer <-chan struct{}) (url string, arrived <-chan struct{}) {
	arrivals := make(chan struct{}, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrivals <- struct{}{}
		<-answer
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, arrivals
}

// runUntilTheEnd runs d until the test is over: after the test's own
// deferred calls, which may let requests under way finish.
func runUntilTheEnd(t *testing.T, d *Dispatcher) {
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-ran })
}

// answering is a receiver that answers every request at once.
func answering(t *testing.T) (url string, arrived <-chan struct{}) {
	answered := make(chan struct{})
	close(answered)
	return receiver(t, answered)
}

// within fails the test unless c receives within ten seconds.
func within(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(10 * time.Second):
		t.Fatal(what)
	}
}

// testDispatcher is a dispatcher of store's events through queue to
// subs, recorded by recorder, with read models up to date, allowed to
// deliver on loopback, on DefaultSchedule and logging nothing: each test
// sets the rest (Render, Parallel, InHand and the other limits).
func testDispatcher(store *eventstore.Store, queue *eventstore.Queue, subs Subscriptions, recorder Recorder, sealer *Sealer) *Dispatcher {
	return &Dispatcher{Events: store, Queue: queue, Subs: subs, Receives: everyone, Recorder: recorder, Readers: upToDate{}, Sealer: sealer, Guard: Guard{AllowPrivate: true},
		Schedule: DefaultSchedule, Log: slog.New(slog.DiscardHandler)}
}

// everyone is every organisation receiving deliveries.
func everyone(string) bool { return true }

// noData renders every event as an empty object, to every organisation.
func noData(string, string, domain.Event, string) (any, bool) { return map[string]string{}, true }

// storeWithQueue is a store of the test's own, closed when it ends, and
// its webhooks queue.
func storeWithQueue(t *testing.T) (*eventstore.Store, *eventstore.Queue) {
	ctx := context.Background()
	store, err := eventstore.Open(ctx, eventstore.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	queue, err := store.Queue(ctx, "webhooks")
	if err != nil {
		t.Fatal(err)
	}
	return store, queue
}

func TestASlowReceiverHoldsUpNoOtherSubscriptionsDeliveriesAndItsOwnKeepTheirAttempts(t *testing.T) {
	ctx := context.Background()
	store, queue := storeWithQueue(t)
	sealer := testSealer(t)
	release := make(chan struct{})
	slowURL, slowArrived := receiver(t, release)
	fastURL, fastArrived := answering(t)
	subs := subscriptions{
		"slow": {ID: "slow", OrganizationID: "acme", URL: slowURL, SealedSecret: sealer.Seal("whsec_c2xvdw==")},
		"fast": {ID: "fast", OrganizationID: "acme", URL: fastURL, SealedSecret: sealer.Seal("whsec_ZmFzdA==")},
	}
	recorded := &attempts{more: make(chan struct{}, 100)}
	// Four deliveries in hand at once, one request under way to a
	// subscription: six queued for the slow receiver would hold all four
	// if they waited in hand for its turn.
	d := testDispatcher(store, queue, subs, recorded, sealer)
	d.Parallel, d.InHand, d.PerSubscription = 1, 4, 1
	runUntilTheEnd(t, d)
	var once sync.Once
	answerAll := func() { once.Do(func() { close(release) }) }
	defer answerAll() // before Run waits for the requests under way

	const slowOnes = 6
	for range slowOnes {
		if _, err := d.Ping(ctx, subs["slow"], Requester{}); err != nil {
			t.Fatal(err)
		}
	}
	within(t, slowArrived, "the slow receiver had no request")
	if _, err := d.Ping(ctx, subs["fast"], Requester{}); err != nil {
		t.Fatal(err)
	}
	within(t, fastArrived, "the fast receiver's ping was held up behind the slow receiver's deliveries")
	within(t, recorded.more, "the fast receiver's delivery was not recorded")

	answerAll()
	for range slowOnes {
		within(t, recorded.more, "a slow receiver's delivery was not made once it answered")
	}
	recorded.mu.Lock()
	defer recorded.mu.Unlock()
	for _, a := range recorded.all {
		if a.Attempt != 1 || a.Outcome != domain.DeliveryDelivered {
			t.Errorf("delivery %s to %s: attempt %d, %s; want the first, delivered (put back untried, never counted)", a.DeliveryID, a.WebhookID, a.Attempt, a.Outcome)
		}
	}
}

// queued is a job as the queue holds it: its data, as stored and decoded,
// and when it is due (zero: due now).
type queued struct {
	job
	data []byte
	due  time.Time
}

// decoded is data, a job as the queue holds it, due at due.
func decoded(t *testing.T, data []byte, due time.Time) queued {
	t.Helper()
	var j job
	if err := json.Unmarshal(data, &j); err != nil {
		t.Fatal(err)
	}
	return queued{j, data, due}
}

// waiting is job id as q holds it waiting: put due later, and not due yet.
// It fails the test if the job does not wait.
func waiting(t *testing.T, q *eventstore.Queue, id string) queued {
	t.Helper()
	j, ok, err := q.Scheduled(context.Background(), id)
	if err != nil || !ok {
		t.Fatalf("job %s waits: %v, %v; want it waiting in the queue", id, ok, err)
	}
	return decoded(t, j.Data, j.Due)
}

// dueNow is job id as q holds it due now: not waiting, and handed out at
// once, on its first handout, to a worker that keeps it in hand, so that
// the queue still holds it. It fails the test if the queue hands out
// another job first.
func dueNow(t *testing.T, q *eventstore.Queue, id string) queued {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	if waits, err := q.Waiting(ctx, id); err != nil || waits {
		stop()
		t.Fatalf("job %s waits: %v, %v; want it due now", id, waits, err)
	}
	type handout struct {
		id   string
		data []byte
		n    int
	}
	handouts := make(chan handout, 1)
	worked := make(chan struct{})
	go func() {
		defer close(worked)
		q.Work(ctx, 1, func(_ context.Context, id string, data []byte, n int) time.Duration {
			select {
			case handouts <- handout{id, data, n}:
			default:
			}
			return time.Hour
		})
	}()
	defer func() { stop(); <-worked }()
	select {
	case h := <-handouts:
		if h.id != id || h.n != 1 {
			t.Fatalf("the queue handed out job %s (handout %d) first, want %s (its first)", h.id, h.n, id)
		}
		return decoded(t, h.data, time.Time{})
	case <-time.After(10 * time.Second):
		t.Fatalf("the queue did not hand out job %s", id)
		return queued{}
	}
}

// held is how many jobs q holds: due, in hand, or waiting.
func held(t *testing.T, q *eventstore.Queue) uint64 {
	t.Helper()
	backlog, err := q.Backlog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return backlog.Pending + backlog.InHand
}

// sender is a dispatcher whose queue is q, delivering to one subscription
// whose receiver answers statuses in turn, the last from then on, and
// counts the requests.
func sender(t *testing.T, q Queue, statuses ...int) (d *Dispatcher, requests *atomic.Int32, recorded *attempts) {
	requests = new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(requests.Add(1))
		w.WriteHeader(statuses[min(n, len(statuses))-1])
	}))
	t.Cleanup(srv.Close)
	sealer := testSealer(t)
	subs := subscriptions{"hook": {ID: "hook", OrganizationID: "acme", URL: srv.URL, SealedSecret: sealer.Seal("whsec_aG9vaw==")}}
	recorded = &attempts{more: make(chan struct{}, 10)}
	return &Dispatcher{Queue: q, Subs: subs, Receives: everyone, Recorder: recorded, Sealer: sealer, Guard: Guard{AllowPrivate: true}, Schedule: DefaultSchedule,
		Log: slog.New(slog.DiscardHandler), PerSubscription: 1, client: srv.Client()}, requests, recorded
}

func marshal(t *testing.T, j job) []byte {
	data, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestAQueuedJobAttemptsOnItsFirstHandoutAndIsRequeuedWhenItComesAgain(t *testing.T) {
	for _, tt := range []struct {
		name        string
		data        string
		handout     int
		wantAttempt int // 0: none made
	}{
		{"a job due at once attempts on its first handout", `{"tried":0}`, 1, 1},
		{"a retry attempts on its first handout", `{"tried":1}`, 1, 2},
		{"a retry queued by an earlier version, due later, attempts when handed out", `{"tried":1,"retryAt":"2099-01-01T00:00:00Z"}`, 1, 2},
		{"a job that comes again was handed out before: it is requeued", `{"tried":2}`, 2, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, queue := storeWithQueue(t)
			d, requests, recorded := sender(t, queue, http.StatusNoContent)
			data := `{"deliveryId":"x","webhookId":"hook","eventName":"webhook.ping","body":{},` + tt.data[1:]
			if later := d.send(context.Background(), "x", []byte(data), tt.handout); later != 0 {
				t.Fatalf("send = %s, want 0", later)
			}
			if tt.wantAttempt == 0 {
				if n := requests.Load(); n != 0 {
					t.Errorf("%d requests, want none", n)
				}
				if next := dueNow(t, queue, "x~1"); next.Tried != 2 {
					t.Errorf("queued x~1 after %d attempts, want it requeued as it came, after 2", next.Tried)
				}
				return
			}
			if n := requests.Load(); n != 1 || len(recorded.all) != 1 || recorded.all[0].Attempt != tt.wantAttempt {
				t.Errorf("%d requests, attempts recorded %+v; want attempt %d", n, recorded.all, tt.wantAttempt)
			}
		})
	}
}

func TestAJobThatComesAgainAfterItWasPutBackIsNotAttemptedBesideItsCopy(t *testing.T) {
	_, queue := storeWithQueue(t)
	d, requests, recorded := sender(t, queue, http.StatusNoContent)
	// A delivery put back ten times already: put back again, its copy
	// waits a minute, past the end of the test.
	data := marshal(t, job{DeliveryID: "x", WebhookID: "hook", EventName: "webhook.ping", Body: json.RawMessage(`{}`), Requeued: 10})
	// The subscription's turn is taken, and its one place to wait too.
	turn := d.turn("hook")
	turn.underWay <- struct{}{}
	turn.waiting.Store(1)
	if later := d.send(context.Background(), "x", data, 1); later != 0 {
		t.Fatalf("send = %s, want 0: put back", later)
	}
	copied := waiting(t, queue, "x~11")
	if copied.Tried != 0 {
		t.Fatalf("put back: x~11 after %d attempts, want it untried", copied.Tried)
	}
	// Its acknowledgement is lost: the queue hands it out again once the
	// subscription has a turn free.
	turn.done()
	turn.waiting.Store(0)
	if later := d.send(context.Background(), "x", data, 2); later != 0 {
		t.Fatalf("send = %s, want 0: requeued", later)
	}
	if n := requests.Load(); n != 0 || len(recorded.all) != 0 {
		t.Errorf("%d requests, %d attempts recorded; want none: x~11 makes the attempt", n, len(recorded.all))
	}
	if again, n := waiting(t, queue, "x~11"), held(t, queue); n != 1 || !again.due.Equal(copied.due) {
		t.Errorf("the queue holds %d jobs, x~11 due at %s; want x~11 alone, as first put, due at %s", n, again.due, copied.due)
	}
}

func TestAFailedAttemptIsRetriedByTheNextJobOfItsDelivery(t *testing.T) {
	_, queue := storeWithQueue(t)
	d, requests, recorded := sender(t, queue, http.StatusInternalServerError)
	data := marshal(t, job{DeliveryID: "x", WebhookID: "hook", EventName: "webhook.ping", Body: json.RawMessage(`{}`)})
	if later := d.send(context.Background(), "x", data, 1); later != 0 {
		t.Fatalf("send = %s, want 0: the retry is a job of its own", later)
	}
	retry := waiting(t, queue, "x~1")
	if due := time.Until(retry.due); retry.Tried != 1 || due < 3*time.Second || due > 6*time.Second {
		t.Fatalf("queued x~1 after %d attempts, due in %s; want after 1 attempt, due in 5 s ±20%%", retry.Tried, due)
	}
	// The queue hands the retry out once due, and its first handout
	// makes the attempt.
	if later := d.send(context.Background(), "x~1", retry.data, 1); later != 0 {
		t.Fatalf("send = %s, want 0", later)
	}
	if n := requests.Load(); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
	if got := []int{recorded.all[0].Attempt, recorded.all[1].Attempt}; got[0] != 1 || got[1] != 2 {
		t.Errorf("attempts recorded %v, want [1 2]", got)
	}
	if next := waiting(t, queue, "x~2"); next.Tried != 2 {
		t.Errorf("queued x~2 after %d attempts, want 2", next.Tried)
	}
}

func TestADeliveryThatCannotBeRequeuedComesAgainLaterUntried(t *testing.T) {
	_, queue := storeWithQueue(t)
	q := &flaky{Queue: queue, failing: 1, refusal: errors.New("the job is refused")}
	d, requests, _ := sender(t, q, http.StatusNoContent)
	data := marshal(t, job{DeliveryID: "x", WebhookID: "hook", EventName: "webhook.ping", Body: json.RawMessage(`{}`)})
	turn := d.turn("hook")
	turn.underWay <- struct{}{}
	turn.waiting.Store(1)
	if later := d.send(context.Background(), "x", data, 1); later < time.Second {
		t.Errorf("send = %s, want the job handed out again in a second or more", later)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests, want none while the subscription has no turn", n)
	}
}

func TestARetryWaitsOnTheServerNotInHandAndAttemptsOnceDue(t *testing.T) {
	ctx := context.Background()
	store, queue := storeWithQueue(t)
	// The receiver fails the first request and takes the retry.
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	sealer := testSealer(t)
	hook := domain.Webhook{ID: "hook", OrganizationID: "acme", URL: srv.URL, SealedSecret: sealer.Seal("whsec_aG9vaw==")}
	recorded := &attempts{more: make(chan struct{}, 10)}
	d := &Dispatcher{Events: store, Queue: queue, Subs: subscriptions{"hook": hook}, Receives: everyone, Recorder: recorded, Readers: upToDate{}, Sealer: sealer, Guard: Guard{AllowPrivate: true},
		Schedule: []time.Duration{3 * time.Second}, Log: slog.New(slog.DiscardHandler), Parallel: 1}
	runUntilTheEnd(t, d)

	if _, err := d.Ping(ctx, hook, Requester{}); err != nil {
		t.Fatal(err)
	}
	within(t, recorded.more, "the first attempt was not recorded")
	recorded.mu.Lock()
	first := recorded.all[0]
	recorded.mu.Unlock()
	if first.Outcome != domain.DeliveryRetrying {
		t.Fatalf("the first attempt: %s, want retrying", first.Outcome)
	}
	// While the retry waits, the queue holds it, and no worker.
	for {
		backlog, err := queue.Backlog(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if backlog.Pending == 1 && backlog.InHand == 0 {
			break
		}
		if time.Now().After(first.NextTryAt) {
			t.Fatalf("the queue's backlog until the retry was due: %+v; want it pending, not in hand", backlog)
		}
		time.Sleep(10 * time.Millisecond)
	}
	within(t, recorded.more, "the retry was not recorded")
	recorded.mu.Lock()
	defer recorded.mu.Unlock()
	if retry := recorded.all[1]; retry.Attempt != 2 || retry.Outcome != domain.DeliveryDelivered || retry.At.Before(first.NextTryAt) {
		t.Errorf("the retry: attempt %d, %s at %s; want the second, delivered, once due at %s", retry.Attempt, retry.Outcome, retry.At, first.NextTryAt)
	}
}

// flaky is a real queue whose first puts fail, with the store unavailable
// (its stream electing a leader, say) unless refusal is set; it keeps what
// it stored.
type flaky struct {
	*eventstore.Queue
	mu      sync.Mutex
	failing int   // puts yet to fail
	refusal error // what they fail with, if not unavailable
	stored  []domain.Job
}

func (q *flaky) Put(ctx context.Context, jobs ...domain.Job) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.failing > 0 {
		q.failing--
		if q.refusal != nil {
			return q.refusal
		}
		return fmt.Errorf("%w: the queue's stream has no leader", domain.ErrStoreUnavailable)
	}
	if err := q.Queue.Put(ctx, jobs...); err != nil {
		return err
	}
	q.stored = append(q.stored, jobs...)
	return nil
}

// subscribed is subscriptions that each want every event, in the order
// of their ids.
type subscribed struct{ subscriptions }

func (s subscribed) Matching(string, uint64) []domain.Webhook {
	return slices.SortedFunc(maps.Values(s.subscriptions), func(a, b domain.Webhook) int { return strings.Compare(a.ID, b.ID) })
}
func (subscribed) AnyLive(uint64) bool { return true }

// upToDate is read models that have applied every event: the stand-in
// subscriptions are all there are, and in no stream (Applied is 0).
type upToDate struct{}

func (upToDate) Applied() uint64                       { return 0 }
func (upToDate) WaitFor(context.Context, uint64) error { return nil }
func (upToDate) PastEnd(context.Context, uint64) bool  { return false }

// pastTheEnd is read models that will never apply the sequence asked for:
// the stream ends before it.
type pastTheEnd struct{}

func (pastTheEnd) Applied() uint64                       { return 0 }
func (pastTheEnd) WaitFor(context.Context, uint64) error { return projections.ErrBehind }
func (pastTheEnd) PastEnd(context.Context, uint64) bool  { return true }

func TestARetryIsQueuedDueWhenScheduledThoughTheQueueFailsAFewPutsFirst(t *testing.T) {
	for _, tt := range []struct {
		name    string
		attempt func(ctx context.Context, d *Dispatcher) error
	}{
		{"a queued delivery's retry", func(ctx context.Context, d *Dispatcher) error {
			data, err := json.Marshal(job{DeliveryID: "x", WebhookID: "hook", EventName: "webhook.ping", Body: json.RawMessage(`{}`)})
			if err != nil {
				return err
			}
			if later := d.send(ctx, "x", data, 1); later != 0 {
				return fmt.Errorf("send = %s, want 0: the retry stored", later)
			}
			return nil
		}},
		{"a first attempt's retry", func(ctx context.Context, d *Dispatcher) error {
			// An event every subscription wants.
			return d.dispatch(ctx, domain.Record{Envelope: domain.Envelope{Type: "QuoteRequested", EventID: "e", OccurredAt: time.Now(), Data: []byte(`{}`)}, Sequence: 1})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			_, queue := storeWithQueue(t)
			q := &flaky{Queue: queue, failing: 3}
			d, requests, _ := sender(t, q, http.StatusInternalServerError)
			// Longer than a job whose requeue failed waits to come
			// again (a minute), so a retry queued early shows.
			d.Schedule = []time.Duration{2 * time.Hour}
			d.Subs, d.Readers = subscribed{d.Subs.(subscriptions)}, upToDate{}
			d.Render = func(string, string, domain.Event, string) (any, bool) { return map[string]string{}, true }
			if err := tt.attempt(ctx, d); err != nil {
				t.Fatal(err)
			}
			if n := requests.Load(); n != 1 {
				t.Fatalf("%d requests, want 1", n)
			}
			if len(q.stored) != 1 {
				t.Fatalf("stored %d jobs, want the retry", len(q.stored))
			}
			if due := time.Until(q.stored[0].Due); due < 96*time.Minute || due > 144*time.Minute {
				t.Errorf("the retry is due in %s, want 2 h ±20%%", due)
			}
			backlog, err := queue.Backlog(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if backlog.Pending != 1 {
				t.Errorf("the queue's backlog: %+v, want the retry pending", backlog)
			}
		})
	}
}

func TestAnAttemptMadeAgainAfterARequeueFailedIsRecordedToo(t *testing.T) {
	ctx := context.Background()
	store, queue := storeWithQueue(t)
	q := &flaky{Queue: queue, failing: 1, refusal: errors.New("the job is refused")}
	// The third attempt fails, and is made again by the next job, which
	// delivers.
	d, _, _ := sender(t, q, http.StatusInternalServerError, http.StatusNoContent)
	d.Recorder = commands.WebhookRecorder{H: commands.New(store, 4, nil)}
	third := marshal(t, job{DeliveryID: "x", WebhookID: "hook", EventName: "webhook.ping", Body: json.RawMessage(`{}`), Tried: 2, Requeued: 2})
	if later := d.send(ctx, "x~2", third, 1); later == 0 {
		t.Fatal("send = 0, want the job to come again: its retry was refused")
	}
	if later := d.send(ctx, "x~2", third, 2); later != 0 || len(q.stored) != 1 {
		t.Fatalf("send = %s and %d jobs stored, want 0 and the next job", later, len(q.stored))
	}
	next := q.stored[0]
	if later := d.send(ctx, next.ID, next.Data, 1); later != 0 {
		t.Fatalf("send = %s, want 0: delivered", later)
	}
	// The delivery as its log shows it.
	recs, err := store.Load(ctx, domain.Aggregate{Type: domain.AggregateDelivery, ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	model := projections.NewWebhooks()
	for _, r := range recs {
		e, err := domain.DecodeEvent(r.Type, r.Data)
		if err != nil {
			t.Fatal(err)
		}
		model.Apply(r, e)
	}
	delivery, _ := model.Delivery("hook", "x")
	var got []string
	for _, a := range delivery.Attempts {
		got = append(got, fmt.Sprint(a.Attempt, " ", a.Outcome))
	}
	if want := []string{"3 retrying", "3 delivered"}; delivery.Status != domain.DeliveryDelivered || !slices.Equal(got, want) {
		t.Errorf("the delivery is %q with attempts %q, want delivered with %q", delivery.Status, got, want)
	}
}

// The attempts of a ping or a redelivery are recorded as the doing of
// whoever asked for it, under its request's id (the audit log names them,
// cargoctl trace finds them by the request's X-Request-Id); those of an
// event's delivery are the dispatcher's.
func TestAnAttemptIsRecordedAsTheDoingOfWhoAskedForIt(t *testing.T) {
	for _, tt := range []struct {
		name                     string
		j                        job
		wantActor, wantCorrelate string
	}{
		{"a ping an admin asked for", job{DeliveryID: "p", RequestedBy: "client:ops", RequestID: "req-7"}, "client:ops", "req-7"},
		{"an event's delivery", job{DeliveryID: "e"}, "reactor:webhooks", "delivery:e~1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			store, queue := storeWithQueue(t)
			d, _, _ := sender(t, &flaky{Queue: queue}, http.StatusNoContent)
			d.Recorder = commands.WebhookRecorder{H: commands.New(store, 4, nil)}
			tt.j.WebhookID, tt.j.EventName, tt.j.Body = "hook", "webhook.ping", json.RawMessage(`{}`)
			if later := d.send(ctx, tt.j.DeliveryID+"~1", marshal(t, tt.j), 1); later != 0 {
				t.Fatalf("send = %s, want 0: delivered", later)
			}
			recs, err := store.Load(ctx, domain.Aggregate{Type: domain.AggregateDelivery, ID: tt.j.DeliveryID})
			if err != nil || len(recs) != 1 {
				t.Fatalf("the delivery's events: %v, %v", recs, err)
			}
			if r := recs[0]; r.Actor != tt.wantActor || r.Tenant != "acme" || r.CorrelationID != tt.wantCorrelate {
				t.Errorf("the attempt is recorded as %s's for %s under %s, want %s's for acme under %s", r.Actor, r.Tenant, r.CorrelationID,
					tt.wantActor, tt.wantCorrelate)
			}
		})
	}
}

func TestAJobThatComesAgainWhileItsRetryWaitsInTheQueueIsDone(t *testing.T) {
	ctx := context.Background()
	_, queue := storeWithQueue(t)
	q := &flaky{Queue: queue}
	d, requests, _ := sender(t, q, http.StatusInternalServerError)
	d.Schedule = []time.Duration{time.Hour, 2 * time.Hour}
	data := marshal(t, job{DeliveryID: "x", WebhookID: "hook", EventName: "webhook.ping", Body: json.RawMessage(`{}`), Tried: 1, Requeued: 1})
	if later := d.send(ctx, "x~1", data, 1); later != 0 || len(q.stored) != 1 {
		t.Fatalf("send = %s, %d jobs stored; want 0 and the retry", later, len(q.stored))
	}
	// Its acknowledgement is lost, and it comes again, maybe past the
	// hour in which the queue would keep a second put of the retry once.
	if later := d.send(ctx, "x~1", data, 2); later != 0 {
		t.Fatalf("send = %s, want 0: done", later)
	}
	if n := requests.Load(); n != 1 || len(q.stored) != 1 {
		t.Errorf("%d requests, %d jobs stored; want 1 and 1: the retry waiting is the delivery's next job", n, len(q.stored))
	}
}

func TestAnEventWithAPayloadThatCannotBeMadeIsSentToNobody(t *testing.T) {
	_, queue := storeWithQueue(t)
	d, requests, _ := sender(t, queue, http.StatusNoContent)
	hook := d.Subs.(subscriptions)["hook"]
	good, bad := hook, hook
	good.ID, bad.ID, bad.OrganizationID = "a", "b", "bad"
	d.Subs, d.Readers = subscribed{subscriptions{"a": good, "b": bad}}, upToDate{}
	d.Render = func(_, _ string, _ domain.Event, org string) (any, bool) {
		if org == "bad" {
			return make(chan int), true // no JSON
		}
		return map[string]string{}, true
	}
	err := d.dispatch(context.Background(), domain.Record{Envelope: domain.Envelope{Type: "QuoteRequested", EventID: "e", OccurredAt: time.Now(), Data: []byte(`{}`)}, Sequence: 1})
	// The event comes again: a request made now would be made again.
	if n := requests.Load(); err == nil || n != 0 {
		t.Errorf("dispatch = %v after %d requests; want an error, and no request", err, n)
	}
}

// lagging is a replica's real read models, which tell when a wait for
// them begins.
type lagging struct {
	*projections.Projector
	waiting chan struct{}
}

func (l lagging) WaitFor(ctx context.Context, seq uint64) error {
	select {
	case l.waiting <- struct{}{}:
	default:
	}
	return l.Projector.WaitFor(ctx, seq)
}

func TestAPingIsDeliveredByAReplicaThatLearnsOfItsSubscriptionOnlyOnceItHoldsThePing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store, queue := storeWithQueue(t)
	log := slog.New(slog.DiscardHandler)
	sealer := testSealer(t)
	secret := NewSecret()
	verifier, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	verified := make(chan struct{}, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := verifier.Verify(body, r.Header); err != nil {
			t.Errorf("a delivery whose signature does not verify: %v", err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		verified <- struct{}{}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	var running sync.WaitGroup
	defer running.Wait() // before the store closes
	defer cancel()

	// Replica A registers the subscription, and pings it once its read
	// models know it.
	hooksA := projections.NewWebhooks()
	readersA := projections.NewProjector(store, log, hooksA)
	running.Go(func() { readersA.Run(ctx) })
	registered, err := commands.New(store, 4, nil).RegisterWebhook(ctx, commands.NewMeta(domain.Principal{Subject: "user:ops", OrganizationID: "acme"}, "", ""),
		domain.RegisterWebhook{URL: srv.URL, Events: []string{"*"}, SealedSecret: sealer.Seal(secret)})
	if err != nil {
		t.Fatal(err)
	}
	if err := readersA.WaitFor(ctx, registered.Sequence); err != nil {
		t.Fatal(err)
	}
	hook, _ := hooksA.Webhook(registered.State.ID)
	a := &Dispatcher{Events: store, Queue: queue, Subs: hooksA, Receives: everyone, Readers: readersA, Sealer: sealer, Log: log}
	if _, err := a.Ping(ctx, hook, Requester{}); err != nil {
		t.Fatal(err)
	}

	// Replica B's worker takes the ping while its read models have
	// applied nothing yet.
	hooksB := projections.NewWebhooks()
	readersB := lagging{projections.NewProjector(store, log, hooksB), make(chan struct{}, 1)}
	recorded := &attempts{more: make(chan struct{}, 10)}
	b := &Dispatcher{Events: store, Queue: queue, Subs: hooksB, Receives: everyone, Recorder: recorded, Readers: readersB, Sealer: sealer, Guard: Guard{AllowPrivate: true},
		Schedule: DefaultSchedule, Log: log, Parallel: 1}
	running.Go(func() { b.Run(ctx) })
	within(t, readersB.waiting, "replica B did not wait for its read models to learn of the subscription: the ping was dropped")
	running.Go(func() { readersB.Run(ctx) })

	within(t, verified, "the ping did not reach its receiver")
	within(t, recorded.more, "the ping's attempt was not recorded")
	recorded.mu.Lock()
	defer recorded.mu.Unlock()
	if got := recorded.all[0]; got.WebhookID != hook.ID || got.EventName != "webhook.ping" || got.Outcome != domain.DeliveryDelivered {
		t.Errorf("recorded %+v, want the ping to %s delivered", got, hook.ID)
	}
}

// registeredLast is subscriptions whose every subscription was registered
// at sequence seq.
type registeredLast struct {
	subscriptions
	seq uint64
}

func (s registeredLast) RegisteredAt(string) uint64 { return s.seq }

func TestAPingKnowsItsSubscriptionFromItsRegistrationWhileTheReadModelsAreStillApplyingIt(t *testing.T) {
	_, queue := storeWithQueue(t)
	d, _, _ := sender(t, queue, http.StatusNoContent)
	// The webhooks model has the registration, at 42; the read models'
	// applied sequence is not there yet (0 here), as until every model
	// has applied it.
	d.Subs, d.Readers = registeredLast{d.Subs.(subscriptions), 42}, upToDate{}
	id, err := d.Ping(context.Background(), d.Subs.(registeredLast).subscriptions["hook"], Requester{})
	if err != nil {
		t.Fatal(err)
	}
	if got := dueNow(t, queue, id).KnownAt; got != 42 {
		t.Errorf("the ping knows its subscription at %d, want its registration's 42", got)
	}
}

func TestAJobWhoseSubscriptionIsGoneIsDoneWithoutAnAttempt(t *testing.T) {
	for _, tt := range []struct {
		name    string
		webhook string
		subs    subscriptions
		readers ReadModels
	}{
		{"deleted", "hook", subscriptions{"hook": {ID: "hook", Deleted: true}}, upToDate{}},
		{"disabled by its receiver", "hook", subscriptions{"hook": {ID: "hook", Disabled: true}}, upToDate{}},
		{"not known once the read models have applied what the job's queuer had", "other", subscriptions{}, upToDate{}},
		{"not known, and the job's queuer had more than the stream holds (restored from an older backup)", "other", subscriptions{}, pastTheEnd{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, queue := storeWithQueue(t)
			d, requests, recorded := sender(t, queue, http.StatusNoContent)
			d.Subs, d.Readers = tt.subs, tt.readers
			data := marshal(t, job{DeliveryID: "x", WebhookID: tt.webhook, EventName: "webhook.ping", Body: json.RawMessage(`{}`), KnownAt: 7})
			if later := d.send(context.Background(), "x", data, 1); later != 0 {
				t.Fatalf("send = %s, want 0: done", later)
			}
			if n, jobs := requests.Load(), held(t, queue); n != 0 || len(recorded.all) != 0 || jobs != 0 {
				t.Errorf("%d requests, %d attempts recorded, %d jobs queued; want none", n, len(recorded.all), jobs)
			}
		})
	}
}

func TestAJobPutBackByAReplicaTooFarBehindIsAttemptedWhenItComesAgain(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store, queue := storeWithQueue(t)
	d, requests, recorded := sender(t, queue, http.StatusNoContent)
	hook := d.Subs.(subscriptions)["hook"]
	registered, err := commands.New(store, 4, nil).RegisterWebhook(ctx, commands.NewMeta(domain.Principal{Subject: "user:ops", OrganizationID: "acme"}, "", ""),
		domain.RegisterWebhook{URL: hook.URL, Events: []string{"*"}, SealedSecret: hook.SealedSecret})
	if err != nil {
		t.Fatal(err)
	}
	// This replica's read models apply nothing until the job is put back.
	hooks := projections.NewWebhooks()
	readers := projections.NewProjector(store, slog.New(slog.DiscardHandler), hooks)
	d.Subs, d.Readers = hooks, readers
	data := marshal(t, job{DeliveryID: "x", WebhookID: registered.State.ID, EventName: "webhook.ping", Body: json.RawMessage(`{}`), KnownAt: registered.Sequence})
	if later := d.send(ctx, "x", data, 1); later != 0 {
		t.Fatalf("send = %s, want 0: put back", later)
	}
	if n := requests.Load(); n != 0 {
		t.Fatalf("%d requests, want none", n)
	}
	next := dueNow(t, queue, "x~1")
	if next.Tried != 0 {
		t.Fatalf("queued x~1 after %d attempts, want it untried", next.Tried)
	}

	projected := make(chan struct{})
	go func() { defer close(projected); readers.Run(ctx) }()
	defer func() { cancel(); <-projected }()
	if err := readers.WaitFor(ctx, registered.Sequence); err != nil {
		t.Fatal(err)
	}
	if later := d.send(ctx, "x~1", next.data, 1); later != 0 {
		t.Fatalf("send = %s, want 0: delivered", later)
	}
	if n := requests.Load(); n != 1 || len(recorded.all) != 1 || recorded.all[0].Outcome != domain.DeliveryDelivered {
		t.Errorf("%d requests, attempts recorded %+v; want the ping delivered", n, recorded.all)
	}
}

// httpClientGoroutines counts the goroutines of HTTP client connections.
func httpClientGoroutines() int {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "net/http.(*persistConn).readLoop")
}

// Once Run returns, the dispatcher's HTTP client holds no connection to a
// receiver, nor its goroutines, though the receiver keeps its end open.
func TestRunLeavesNoHTTPConnectionOfItsOwnBehind(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store, queue := storeWithQueue(t)
	sealer := testSealer(t)
	url, arrived := answering(t)
	subs := subscriptions{"hook": {ID: "hook", OrganizationID: "acme", URL: url, SealedSecret: sealer.Seal("whsec_aG9vaw==")}}
	recorded := &attempts{more: make(chan struct{}, 10)}
	d := testDispatcher(store, queue, subs, recorded, sealer)
	d.Parallel = 1
	before := httpClientGoroutines()
	ran := make(chan struct{})
	go func() { defer close(ran); d.Run(ctx) }()
	if _, err := d.Ping(ctx, subs["hook"], Requester{}); err != nil {
		t.Fatal(err)
	}
	within(t, arrived, "the ping did not arrive")
	within(t, recorded.more, "the ping was not recorded")
	cancel()
	<-ran
	waitFor(t, "10 s after Run returned, HTTP client connection goroutines of the dispatcher are still running", func() bool {
		return httpClientGoroutines() <= before
	})
}

// unavailableOnce is the service's recorder, whose first record fails with
// the store unavailable for a moment (its stream electing a leader), as
// the queue's puts do in flaky.
type unavailableOnce struct {
	Recorder
	failed atomic.Bool
}

func (r *unavailableOnce) RecordDelivery(ctx context.Context, commandID, correlationID string, e domain.WebhookDeliveryAttempted) error {
	if r.failed.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: the stream has no leader", domain.ErrStoreUnavailable)
	}
	return r.Recorder.RecordDelivery(ctx, commandID, correlationID, e)
}

// An attempt made while the event store does not answer for a moment is
// recorded once it answers: the delivery log misses no request the
// receiver got.
func TestAnAttemptMadeWhileTheStoreIsBrieflyUnavailableIsRecorded(t *testing.T) {
	ctx := context.Background()
	store, queue := storeWithQueue(t)
	d, requests, _ := sender(t, queue, http.StatusNoContent)
	d.Recorder = &unavailableOnce{Recorder: commands.WebhookRecorder{H: commands.New(store, 4, nil)}}
	data := marshal(t, job{DeliveryID: "x", WebhookID: "hook", EventName: "webhook.ping", Body: json.RawMessage(`{}`)})
	if later := d.send(ctx, "x", data, 1); later != 0 {
		t.Fatalf("send = %s, want 0: delivered", later)
	}
	if n := requests.Load(); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
	recs, err := store.Load(ctx, domain.Aggregate{Type: domain.AggregateDelivery, ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Errorf("the receiver got the delivery, and its log holds %d attempts, want 1: send returned, the job done, with its attempt unrecorded", len(recs))
	}
}

// recorderDisabling records attempts in memory, and disables
// subscriptions through the service's recorder, in the store.
type recorderDisabling struct {
	*attempts
	commands.WebhookRecorder
}

func (r recorderDisabling) RecordDelivery(ctx context.Context, commandID, correlationID string, e domain.WebhookDeliveryAttempted) error {
	return r.attempts.RecordDelivery(ctx, commandID, correlationID, e)
}

func (r recorderDisabling) DisableWebhook(ctx context.Context, commandID, id, reason string) (uint64, error) {
	return r.WebhookRecorder.DisableWebhook(ctx, commandID, id, reason)
}

// goneReceiver is a dispatcher with the service's recorder and read
// models, running until the test ends, and one subscription of every
// event whose receiver answers 410 Gone: its first request once the test
// calls answer.
type goneReceiver struct {
	d        *Dispatcher
	store    *eventstore.Store
	queue    *eventstore.Queue
	hooks    *projections.Webhooks
	hook     domain.Webhook
	recorded *attempts
	arrivals *atomic.Int32
	arrived  chan struct{}
	answer   func()
}

// newGoneReceiver starts a goneReceiver whose dispatcher renders with
// render (nil: no event is delivered) and handles parallel events at once.
func newGoneReceiver(t *testing.T, render Render, parallel int) *goneReceiver {
	ctx, cancel := context.WithCancel(context.Background())
	store, queue := storeWithQueue(t)
	log := slog.New(slog.DiscardHandler)
	sealer := testSealer(t)
	g := &goneReceiver{store: store, queue: queue, hooks: projections.NewWebhooks(), recorded: &attempts{more: make(chan struct{}, 10)},
		arrivals: new(atomic.Int32), arrived: make(chan struct{}, 10)}
	release := make(chan struct{})
	var once sync.Once
	g.answer = func() { once.Do(func() { close(release) }) }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.arrivals.Add(1) == 1 {
			g.arrived <- struct{}{}
			<-release
		}
		w.WriteHeader(http.StatusGone)
	}))
	var running sync.WaitGroup
	t.Cleanup(func() { g.answer(); cancel(); running.Wait(); srv.Close() })
	readers := projections.NewProjector(store, log, g.hooks)
	running.Go(func() { readers.Run(ctx) })
	h := commands.New(store, 4, nil)
	registered, err := h.RegisterWebhook(ctx, commands.NewMeta(domain.Principal{Subject: "user:ops", OrganizationID: "acme"}, "", ""),
		domain.RegisterWebhook{URL: srv.URL, Events: []string{"*"}, SealedSecret: sealer.Seal(NewSecret())})
	if err != nil {
		t.Fatal(err)
	}
	if err := readers.WaitFor(ctx, registered.Sequence); err != nil {
		t.Fatal(err)
	}
	g.hook, _ = g.hooks.Webhook(registered.State.ID)
	g.d = &Dispatcher{Events: store, Queue: queue, Subs: g.hooks, Receives: everyone, Recorder: recorderDisabling{g.recorded, commands.WebhookRecorder{H: h}}, Readers: readers,
		Render: render, Sealer: sealer, Guard: Guard{AllowPrivate: true}, Schedule: DefaultSchedule, Log: log, Parallel: parallel, InHand: 4, PerSubscription: 1}
	running.Go(func() { g.d.Run(ctx) })
	return g
}

// A delivery waiting in hand for its subscription's turn goes as the
// subscription is once it gets the turn: after the receiver answered 410
// Gone, which disabled the subscription, it is dropped, not sent. The
// read models apply the disabling a moment after it is stored, and the
// turn is given back only once they have.
func TestADeliveryWaitingForATurnIsNotSentAfterTheReceiverAnswered410(t *testing.T) {
	ctx := context.Background()
	g := newGoneReceiver(t, nil, 1)
	if _, err := g.d.Ping(ctx, g.hook, Requester{}); err != nil {
		t.Fatal(err)
	}
	within(t, g.arrived, "the first ping did not arrive")
	if _, err := g.d.Ping(ctx, g.hook, Requester{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the second ping waiting in hand for the turn", func() bool { return g.d.turn(g.hook.ID).waiting.Load() == 1 })
	g.answer()
	within(t, g.recorded.more, "the 410 was not recorded")
	waitFor(t, "the second ping was neither sent nor dropped", func() bool {
		backlog, err := g.queue.Backlog(ctx)
		return g.arrivals.Load() > 1 || (err == nil && backlog.Pending+backlog.InHand == 0)
	})
	if n := g.arrivals.Load(); n > 1 {
		t.Fatalf("the receiver got %d requests: after it answered 410 Gone, and the subscription was disabled, the delivery that waited for the turn was sent", n)
	}
}

// A delivery in the queue when its organisation is shut out (disabled,
// deleted, or a demo one without demo mode) is dropped, not sent, as its
// subscriptions are sent no new event: here a ping, which goes the way of
// every queued delivery (a retry, a redelivery, one that waited for a
// turn). Another organisation's goes out.
func TestAQueuedDeliveryOfAnOrganisationShutOutIsNotSent(t *testing.T) {
	ctx := context.Background()
	store, queue := storeWithQueue(t)
	sealer := testSealer(t)
	shutOutURL, shutOutArrived := answering(t)
	openURL, openArrived := answering(t)
	subs := subscriptions{
		"shut-out": {ID: "shut-out", OrganizationID: "disabled-org", URL: shutOutURL, SealedSecret: sealer.Seal("whsec_c2h1dA==")},
		"open":     {ID: "open", OrganizationID: "acme", URL: openURL, SealedSecret: sealer.Seal("whsec_b3Blbg==")},
	}
	d := testDispatcher(store, queue, subs, &attempts{more: make(chan struct{}, 10)}, sealer)
	d.Receives = func(org string) bool { return org != "disabled-org" }
	d.Parallel, d.InHand = 1, 4
	for _, id := range []string{"shut-out", "open"} {
		if _, err := d.Ping(ctx, subs[id], Requester{}); err != nil {
			t.Fatal(err)
		}
	}
	runUntilTheEnd(t, d)
	within(t, openArrived, "the open organisation's ping did not arrive")
	waitFor(t, "the shut-out organisation's ping was neither sent nor dropped", func() bool {
		backlog, err := queue.Backlog(ctx)
		return len(shutOutArrived) > 0 || (err == nil && backlog.Pending+backlog.InHand == 0)
	})
	if len(shutOutArrived) > 0 {
		t.Fatal("a delivery queued for an organisation that is shut out was sent")
	}
}

// waitFor fails the test unless cond holds within ten seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
	}
}

// appendEvents stores events of the types given, one after another, on one
// aggregate.
func appendEvents(t *testing.T, store *eventstore.Store, agg domain.Aggregate, types ...string) {
	t.Helper()
	last := uint64(0)
	for i, typ := range types {
		seqs, err := store.Append(context.Background(), agg, last, []domain.Envelope{{Type: typ, EventID: fmt.Sprint(agg.ID, "-", i),
			OccurredAt: time.Now(), Data: []byte(`{}`)}})
		if err != nil {
			t.Fatal(err)
		}
		last = seqs[len(seqs)-1]
	}
}

// A first attempt's retry is queued as soon as that attempt fails, not
// once every first attempt of the event is over: a receiver that does not
// answer (here, not until the test ends; the client waits 15 s) holds up
// no other subscription's retry, due a second after its first attempt.
func TestAFirstAttemptsRetryIsNotHeldUpByAReceiverThatDoesNotAnswer(t *testing.T) {
	store, queue := storeWithQueue(t)
	sealer := testSealer(t)
	release := make(chan struct{})
	deadURL, deadArrived := receiver(t, release)
	var requests atomic.Int32
	retried := make(chan struct{}, 1)
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		retried <- struct{}{}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(failing.Close)
	subs := subscribed{subscriptions{
		"a-dead":    {ID: "a-dead", OrganizationID: "other", URL: deadURL, SealedSecret: sealer.Seal("whsec_ZGVhZA==")},
		"b-failing": {ID: "b-failing", OrganizationID: "acme", URL: failing.URL, SealedSecret: sealer.Seal("whsec_ZmFpbA==")},
	}}
	d := testDispatcher(store, queue, subs, &attempts{more: make(chan struct{}, 100)}, sealer)
	d.Render, d.Schedule, d.Parallel, d.InHand = noData, []time.Duration{time.Second}, 4, 16
	appendEvents(t, store, domain.Aggregate{Type: domain.AggregateQuote, ID: "q1"}, "QuoteRequested")
	runUntilTheEnd(t, d)
	defer close(release) // first: the dead receiver answers once the test is over

	within(t, deadArrived, "the receiver that does not answer had no request")
	within(t, retried, "the other subscription's retry did not come while the first receiver's request hung")
}

// An organisation whose receivers all stop answering, with a backlog on
// each of its subscriptions, holds at most its share of the queue's
// workers: another organisation's ping goes out meanwhile. (Without the
// share, its seven subscriptions, each with a request under way and one
// waiting for it, would hold all eight workers.)
func TestOneOrganisationsReceiversThatStopAnsweringHoldUpNoOtherOrganisationsDeliveries(t *testing.T) {
	ctx := context.Background()
	store, queue := storeWithQueue(t)
	sealer := testSealer(t)
	release := make(chan struct{})
	deadURL, deadArrived := receiver(t, release)
	fastURL, fastArrived := answering(t)
	subs := subscriptions{"fast": {ID: "fast", OrganizationID: "acme", URL: fastURL, SealedSecret: sealer.Seal("whsec_ZmFzdA==")}}
	const deadSubs, perOrganisation = 7, 4
	for i := range deadSubs {
		id := fmt.Sprint("dead-", i)
		subs[id] = domain.Webhook{ID: id, OrganizationID: "other", URL: deadURL + "/" + id, SealedSecret: sealer.Seal("whsec_ZGVhZA==")}
	}
	d := testDispatcher(store, queue, subs, &attempts{more: make(chan struct{}, 100)}, sealer)
	d.Parallel, d.InHand, d.PerSubscription, d.PerOrganisation = 1, 8, 1, perOrganisation
	runUntilTheEnd(t, d)
	defer close(release) // first: the receivers answer once the test is over

	for i := range deadSubs {
		for range 3 { // one under way, one waiting for the turn, one more
			if _, err := d.Ping(ctx, subs[fmt.Sprint("dead-", i)], Requester{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for range perOrganisation / 2 { // as many requests under way as its share lets it have
		within(t, deadArrived, "the receivers that stop answering had fewer requests than their share allows")
	}
	if _, err := d.Ping(ctx, subs["fast"], Requester{}); err != nil {
		t.Fatal(err)
	}
	within(t, fastArrived, "another organisation's ping was held up behind the one whose receivers stopped answering")
}

// A receiver that does not answer holds its event for inlineWait at most:
// the same resource's next event goes to the other subscription while
// that request still hangs, a job stands in for the hanging attempt in
// the queue meanwhile (a crash would leave it to make the attempt), and
// once the attempt is over the stand-in is taken out.
func TestAReceiverThatDoesNotAnswerHoldsUpNoOtherSubscriptionsDeliveryOfTheResourcesNextEvent(t *testing.T) {
	ctx := context.Background()
	store, queue := storeWithQueue(t)
	sealer := testSealer(t)
	release := make(chan struct{})
	deadURL, deadArrived := receiver(t, release)
	fastURL, fastArrived := answering(t)
	subs := subscribed{subscriptions{
		"a-dead": {ID: "a-dead", OrganizationID: "other", URL: deadURL, SealedSecret: sealer.Seal("whsec_ZGVhZA==")},
		"b-fast": {ID: "b-fast", OrganizationID: "acme", URL: fastURL, SealedSecret: sealer.Seal("whsec_ZmFzdA==")},
	}}
	recorded := &attempts{more: make(chan struct{}, 100)}
	d := testDispatcher(store, queue, subs, recorded, sealer)
	d.Render, d.Parallel, d.InHand = noData, 4, 16
	appendEvents(t, store, domain.Aggregate{Type: domain.AggregateQuote, ID: "q1"}, "QuoteRequested", "QuotePriced")
	runUntilTheEnd(t, d)
	var once sync.Once
	answer := func() { once.Do(func() { close(release) }) }
	defer answer()

	within(t, deadArrived, "the receiver that does not answer had no request")
	within(t, fastArrived, "the other receiver had no first event")
	within(t, fastArrived, "the other receiver's delivery of the resource's next event waited for the hanging request")
	// Each event's attempt to the receiver that does not answer hangs,
	// with a job standing in for it: all the queue holds.
	queued := func(n uint64) func() bool {
		return func() bool {
			backlog, err := queue.Backlog(ctx)
			return err == nil && backlog.Pending+backlog.InHand == n
		}
	}
	waitFor(t, "no job stands in for each hanging attempt in the queue", queued(2))
	answer()
	for range 4 {
		within(t, recorded.more, "not every attempt was recorded: two to each receiver")
	}
	waitFor(t, "the stand-ins were not taken out of the queue once the attempts were over", queued(0))
}

// An event whose payload is larger than the queue can store (the NATS
// server's 1 MiB maximum payload; a big resource), whose first attempt to
// one subscription fails: that delivery is given up, recorded dead, as no
// retry of it can be queued, and the event is not handled again, which
// would send it again to the subscriptions that took it.
func TestAnEventTooLargeToQueueARetryOfIsNotSentAgainToASubscriptionThatTookIt(t *testing.T) {
	store, queue := storeWithQueue(t)
	sealer := testSealer(t)
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) }))
	t.Cleanup(failing.Close)
	took := make(chan string, 20)
	taking := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		took <- r.Header.Get("webhook-id")
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(taking.Close)
	subs := subscribed{subscriptions{
		"a-failing": {ID: "a-failing", OrganizationID: "acme", URL: failing.URL, SealedSecret: sealer.Seal("whsec_ZmFpbA==")},
		"b-taking":  {ID: "b-taking", OrganizationID: "other", URL: taking.URL, SealedSecret: sealer.Seal("whsec_dGFrZQ==")},
	}}
	big := strings.Repeat("x", 1100<<10)
	recorded := &attempts{more: make(chan struct{}, 100)}
	d := testDispatcher(store, queue, subs, recorded, sealer)
	d.Render = func(string, string, domain.Event, string) (any, bool) { return map[string]string{"lines": big}, true }
	d.Parallel = 4
	appendEvents(t, store, domain.Aggregate{Type: domain.AggregateQuote, ID: "q1"}, "QuoteRequested")
	runUntilTheEnd(t, d)

	var first string
	select {
	case first = <-took:
	case <-time.After(10 * time.Second):
		t.Fatal("the taking receiver had no request")
	}
	for range 2 {
		select {
		case <-recorded.more:
			// An attempt is recorded: the event was handled.
			continue
		case again := <-took:
			t.Fatalf("the receiver that answered 204 got webhook-id %s again (first %s): the failing subscription's retry could not be queued, and the event's first attempts were all made again", again, first)
		case <-time.After(30 * time.Second):
			t.Fatal("the attempts were not recorded within 30 s")
		}
	}
	recorded.mu.Lock()
	defer recorded.mu.Unlock()
	for _, a := range recorded.all {
		if a.WebhookID == "a-failing" && a.Outcome != domain.DeliveryDead {
			t.Errorf("the failing subscription's attempt is %s, want dead: no retry can be queued", a.Outcome)
		}
	}
}

// An event that comes again (its acknowledgement lost, say) after a slow
// first attempt went on without it and took its stand-in out: the second
// slow attempt has a stand-in again, though the queue keeps a job's id
// once an hour, cancelled or not.
func TestAFirstAttemptThatGoesOnWithoutItsEventAgainHasAStandInAgain(t *testing.T) {
	ctx := context.Background()
	store, queue := storeWithQueue(t)
	sealer := testSealer(t)
	var requests atomic.Int32
	release := make(chan struct{})
	defer close(release)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) == 1 {
			time.Sleep(inlineWait + 500*time.Millisecond) // slow, then answers
		} else {
			<-release // hangs until the test ends
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	subs := subscribed{subscriptions{"slow": {ID: "slow", OrganizationID: "acme", URL: srv.URL, SealedSecret: sealer.Seal("whsec_c2xvdw==")}}}
	recorded := &attempts{more: make(chan struct{}, 100)}
	d := testDispatcher(store, queue, subs, recorded, sealer)
	d.Render, d.Parallel, d.InHand = noData, 4, 16
	d.client = &http.Client{Timeout: 15 * time.Second}
	appendEvents(t, store, domain.Aggregate{Type: domain.AggregateQuote, ID: "q1"}, "QuoteRequested")
	var rec domain.Record
	if err := store.Read(ctx, nil, 1, 1, func(r domain.Record) error { rec = r; return nil }); err != nil || rec.Sequence == 0 {
		t.Fatal("the event could not be read: ", err)
	}
	queued := func(n uint64) func() bool {
		return func() bool {
			backlog, err := queue.Backlog(ctx)
			return err == nil && backlog.Pending+backlog.InHand == n
		}
	}
	if err := d.dispatch(ctx, rec); err != nil {
		t.Fatal(err)
	}
	within(t, recorded.more, "the slow first attempt was not recorded")
	waitFor(t, "the first stand-in was not taken out", queued(0))

	if err := d.dispatch(ctx, rec); err != nil { // the event comes again; its attempt hangs
		t.Fatal(err)
	}
	waitFor(t, "no job stands in for the hanging attempt", queued(1))
}

// An event dispatched while the receiver's 410 is being recorded, whose
// subscriptions were matched before the read models showed it disabled,
// is not sent to it once it gets the turn the 410 gave back: as a delivery
// from the queue, it goes as the subscription is by then.
func TestAnEventMatchedBeforeA410IsNotSentInlineOnceTheTurnIsGivenBack(t *testing.T) {
	ctx := context.Background()
	rendering, rendered := make(chan struct{}, 1), make(chan struct{})
	var once sync.Once
	defer once.Do(func() { close(rendered) })
	render := func(_ string, aggID string, _ domain.Event, _ string) (any, bool) {
		if aggID == "q2" {
			rendering <- struct{}{}
			<-rendered
		}
		return map[string]string{}, true
	}
	g := newGoneReceiver(t, render, 4)
	appendEvents(t, g.store, domain.Aggregate{Type: domain.AggregateQuote, ID: "q1"}, "QuoteRequested")
	within(t, g.arrived, "the first event did not arrive")
	appendEvents(t, g.store, domain.Aggregate{Type: domain.AggregateQuote, ID: "q2"}, "QuoteRequested")
	within(t, rendering, "the second event was not matched") // matched while the subscription is live
	g.answer()
	waitFor(t, "the read models did not show the subscription disabled, its turn given back", func() bool {
		w, ok := g.hooks.Webhook(g.hook.ID)
		return ok && !w.Live() && len(g.d.turn(g.hook.ID).underWay) == 0
	})
	once.Do(func() { close(rendered) })
	waitFor(t, "the second event was not handled", func() bool {
		backlogs, err := g.store.Backlogs(ctx)
		for _, b := range backlogs {
			if b.Consumer == "webhooks" {
				return err == nil && b.Pending+b.InHand == 0
			}
		}
		return false
	})
	if n := g.arrivals.Load(); n > 1 {
		t.Fatalf("the receiver got %d requests: after it answered 410 Gone and this replica showed the subscription disabled, the next event was still sent to it", n)
	}
}

// A delivery too large for the queue whose subscription has no turn free
// (the one request it may have under way hangs) can never be queued: it
// is given up, recorded dead, not sent, and the event is handled, not
// failed over and over until parked.
func TestADeliveryTooLargeToQueueUntriedIsGivenUpAndItsEventHandled(t *testing.T) {
	store, queue := storeWithQueue(t)
	sealer := testSealer(t)
	release := make(chan struct{})
	url, arrived := receiver(t, release)
	subs := subscribed{subscriptions{"hook": {ID: "hook", OrganizationID: "acme", URL: url, SealedSecret: sealer.Seal("whsec_aG9vaw==")}}}
	big := strings.Repeat("x", 1100<<10)
	render := func(_ string, aggID string, _ domain.Event, _ string) (any, bool) {
		if aggID == "big" {
			return map[string]string{"lines": big}, true
		}
		return map[string]string{}, true
	}
	recorded := &attempts{more: make(chan struct{}, 10)}
	d := testDispatcher(store, queue, subs, recorded, sealer)
	d.Render, d.Parallel, d.InHand, d.PerSubscription = render, 4, 4, 1
	runUntilTheEnd(t, d)
	defer close(release) // first: the receiver answers once the test is over

	appendEvents(t, store, domain.Aggregate{Type: domain.AggregateQuote, ID: "small"}, "QuoteRequested")
	within(t, arrived, "the small event's request did not arrive") // and hangs, holding the one turn
	appendEvents(t, store, domain.Aggregate{Type: domain.AggregateQuote, ID: "big"}, "QuoteRequested")
	within(t, recorded.more, "the large delivery was not recorded")
	recorded.mu.Lock()
	a := recorded.all[0]
	recorded.mu.Unlock()
	if a.EventID != "big-0" || a.Outcome != domain.DeliveryDead || a.StatusCode != 0 {
		t.Errorf("recorded %+v, want the large delivery given up, dead, not sent", a)
	}
}

// tooLargeFrom is the shortest "lines" in the body of job j that makes the
// queue refuse j, put under id (j's delivery id and a suffix) due at due,
// as too large. It asks the queue itself: a job due later is larger than
// the same job due at once by the schedule's subject and headers. The jobs
// it puts go under delivery ids of the same length as j's, and those due
// later are taken out again.
func tooLargeFrom(t *testing.T, q *eventstore.Queue, j job, id string, due time.Time) int {
	t.Helper()
	ctx := context.Background()
	suffix, ok := strings.CutPrefix(id, j.DeliveryID)
	if !ok {
		t.Fatalf("id %s is not of delivery %s", id, j.DeliveryID)
	}
	probes := 0
	fits := func(n int) bool {
		probes++
		p := j
		p.DeliveryID = fmt.Sprintf("%0*d", len(j.DeliveryID), probes)
		p.Body = json.RawMessage(`{"lines":"` + strings.Repeat("x", n) + `"}`)
		err := q.Put(ctx, domain.Job{ID: p.DeliveryID + suffix, Data: marshal(t, p), Due: due})
		if domain.ErrorCode(err) == domain.PayloadTooLarge {
			return false
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Cancel(ctx, p.DeliveryID+suffix); err != nil {
			t.Fatal(err)
		}
		return true
	}
	// The server's max_payload, 1 MiB by default, is the bound.
	lo, hi := 0, 2<<20 // fits(lo), !fits(hi)
	for hi-lo > 1 {
		if mid := (lo + hi) / 2; fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// A job the queue took due at once whose next job is a little larger (its
// retry, or itself put back, due later as a schedule with headers of its
// own, or itself requeued with one job more counted) can never be
// requeued: waiting does not make it smaller. It is given up, recorded
// dead, rather than coming back again and again, making its attempt
// again every few seconds in place of its retries, or never (it was
// requeued over and over, due at once, and refused each time).
func TestAQueuedDeliveryWhoseNextJobIsTooLargeForTheQueueIsRecordedDead(t *testing.T) {
	// A whole second is the shortest in a schedule's header: a next job
	// due at any time is at least as large.
	later := time.Now().Add(time.Hour).Truncate(time.Second)
	for _, tt := range []struct {
		name     string
		next     job       // the job that is too large, from delivery xx's job
		due      time.Time // and when it is due
		handout  int
		noTurn   bool // the subscription has no turn free, nor a place to wait for one
		requests int32
		error    string
	}{
		{"its retry", job{Tried: 1, Requeued: 1}, later, 1, false, 1, "too large to queue a retry"},
		{"put back while its subscription has no turn free", job{Requeued: 1}, later, 1, true, 0, "not sent"},
		{"requeued when it comes again", job{Requeued: 1}, time.Time{}, 2, false, 0, "not sent"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			_, queue := storeWithQueue(t)
			q := &flaky{Queue: queue}
			d, requests, recorded := sender(t, q, http.StatusInternalServerError)
			j := job{DeliveryID: "xx", WebhookID: "hook", EventName: "webhook.ping"}
			next := j
			next.Tried, next.Requeued = tt.next.Tried, tt.next.Requeued
			j.Body = json.RawMessage(`{"lines":"` + strings.Repeat("x", tooLargeFrom(t, queue, next, "xx~1", tt.due)) + `"}`)
			if err := q.Put(ctx, domain.Job{ID: "xx", Data: marshal(t, j)}); err != nil {
				t.Fatalf("the queue did not take the job due at once: %v", err)
			}
			if tt.noTurn {
				turn := d.turn("hook")
				turn.underWay <- struct{}{}
				turn.waiting.Store(1)
			}
			if later := d.send(ctx, "xx", marshal(t, j), tt.handout); later != 0 {
				t.Fatalf("send = %s, want 0: done, the job can never be requeued", later)
			}
			if n := requests.Load(); n != tt.requests || len(recorded.all) != 1 {
				t.Fatalf("%d requests, %d attempts recorded; want %d and 1", n, len(recorded.all), tt.requests)
			}
			if a := recorded.all[0]; a.Outcome != domain.DeliveryDead || !a.NextTryAt.IsZero() || !strings.Contains(a.Error, tt.error) {
				t.Errorf("recorded attempt %d: %s, next try %s, %q; want dead, none, saying %q", a.Attempt, a.Outcome, a.NextTryAt, a.Error, tt.error)
			}
			if len(q.stored) != 1 {
				t.Errorf("%d jobs stored, want the first only", len(q.stored))
			}
		})
	}
}

// The delivery log is the subscriber's to read: a name that points at an
// internal address by the time of delivery (DNS rebinding, or a CNAME to
// an internal name) is refused without saying where it points, as at
// registration, or the log would map the service's network for whoever
// registers names.
func TestARefusedConnectionToAnInternalAddressIsLoggedWithoutTheAddress(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("a delivery reached a loopback receiver with private targets not allowed")
	}))
	t.Cleanup(srv.Close)
	_, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	sealer := testSealer(t)
	d := &Dispatcher{Sealer: sealer, Guard: Guard{}, Schedule: DefaultSchedule, Log: slog.New(slog.DiscardHandler)}
	d.client = d.newClient(1)
	w := domain.Webhook{ID: "hook", OrganizationID: "acme", URL: "http://localhost:" + port + "/hooks", SealedSecret: sealer.Seal("whsec_aG9vaw==")}
	attempt, _ := d.attempt(context.Background(), w, job{DeliveryID: "x", WebhookID: "hook", EventName: "webhook.ping", Body: []byte(`{}`)}, 1)
	if attempt.Error == "" || attempt.Outcome == domain.DeliveryDelivered {
		t.Fatalf("attempt = %+v, want it refused", attempt)
	}
	if strings.Contains(attempt.Error, "127.0.0.1") || strings.Contains(attempt.Error, "::1") || !strings.Contains(attempt.Error, "not allowed") {
		t.Errorf("attempt error = %q, want a refusal that names no address", attempt.Error)
	}
}

// The operator's log names the address a refused connection was to, but
// not the URL's user information: Go's client hides the password of the
// URL in its error, not the user, which is a credential of the receiver's
// too (a token given as the user alone, https://sk_live_…@hooks.example).
func TestARefusedConnectionIsLoggedWithoutTheURLsUserInformation(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("a delivery reached a loopback receiver with private targets not allowed")
	}))
	t.Cleanup(srv.Close)
	_, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	tests := []struct {
		name     string
		userInfo string
	}{
		{"a user and a password", "hookuser:hook-password-1"},
		{"a user alone", "sk_live_hook-token-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sealer := testSealer(t)
			var logged bytes.Buffer
			d := &Dispatcher{Sealer: sealer, Guard: Guard{}, Schedule: DefaultSchedule, Log: slog.New(slog.NewJSONHandler(&logged, nil))}
			d.client = d.newClient(1)
			w := domain.Webhook{ID: "hook", OrganizationID: "acme", URL: "http://localhost:" + port + "/hooks",
				SealedUserInfo: sealer.Seal(tt.userInfo), SealedSecret: sealer.Seal("whsec_aG9vaw==")}
			d.attempt(context.Background(), w, job{DeliveryID: "x", WebhookID: "hook", EventName: "webhook.ping", Body: []byte(`{}`)}, 1)
			if !strings.Contains(logged.String(), "webhook target refused") {
				t.Fatalf("logged %s, want the refusal", logged.String())
			}
			user, _, _ := strings.Cut(tt.userInfo, ":")
			if strings.Contains(logged.String(), user) || !strings.Contains(logged.String(), "xxxxx@localhost") {
				t.Errorf("logged %s, want the URL with xxxxx for its user information", logged.String())
			}
		})
	}
}

// An answer's status is all an attempt needs: a receiver that answers 200
// and then trickles its body has the delivery done within a second, not
// once its body ends or the attempt times out. (The timeout here is an
// hour: only the bound on reading the body ends the attempt.)
func TestAReceiverThatTricklesItsBodyAfterA200HasTheAttemptDoneAtOnce(t *testing.T) {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		for {
			w.Write([]byte("."))
			w.(http.Flusher).Flush()
			select {
			case <-stop:
				return
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) })
	sealer := testSealer(t)
	w := domain.Webhook{ID: "hook", OrganizationID: "acme", URL: srv.URL, SealedSecret: sealer.Seal("whsec_aG9vaw==")}
	d := &Dispatcher{Sealer: sealer, Guard: Guard{AllowPrivate: true}, Schedule: DefaultSchedule, Log: slog.New(slog.DiscardHandler)}
	d.client = d.newClient(1)
	d.client.Timeout = time.Hour
	done := make(chan domain.WebhookDeliveryAttempted, 1)
	go func() {
		attempt, _ := d.attempt(context.Background(), w, job{DeliveryID: "x", WebhookID: "hook", EventName: "webhook.ping", Body: json.RawMessage(`{}`)}, 1)
		done <- attempt
	}()
	select {
	case attempt := <-done:
		if attempt.Outcome != domain.DeliveryDelivered || attempt.StatusCode != http.StatusOK {
			t.Errorf("attempt = %s, status %d, error %q; want delivered, 200", attempt.Outcome, attempt.StatusCode, attempt.Error)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the attempt did not end while the receiver trickled its body")
	}
}

// A subscription whose secret is sealed with the key being replaced is
// delivered to, and logged once as such: the operator drops the previous
// key once no subscription in use is.
func TestASecretSealedWithThePreviousKeyIsDeliveredAndLoggedOnce(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(srv.Close)
	oldKey, newKey := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	old, err := NewSealer(oldKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := NewSealer(newKey, oldKey)
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	d := &Dispatcher{Sealer: sealer, Guard: Guard{AllowPrivate: true}, Schedule: DefaultSchedule, Log: slog.New(slog.NewJSONHandler(&logged, nil))}
	d.client = d.newClient(1)
	for _, w := range []domain.Webhook{
		{ID: "before", OrganizationID: "acme", URL: srv.URL, SealedSecret: old.Seal("whsec_aG9vaw==")},
		{ID: "before", OrganizationID: "acme", URL: srv.URL, SealedSecret: old.Seal("whsec_aG9vaw==")},
		{ID: "after", OrganizationID: "acme", URL: srv.URL, SealedSecret: sealer.Seal("whsec_aG9vaw==")},
	} {
		attempt, _ := d.attempt(context.Background(), w, job{DeliveryID: "x", WebhookID: w.ID, EventName: "webhook.ping", Body: json.RawMessage(`{}`)}, 1)
		if attempt.Outcome != domain.DeliveryDelivered {
			t.Errorf("%s: attempt %s, error %q; want delivered", w.ID, attempt.Outcome, attempt.Error)
		}
	}
	if n := strings.Count(logged.String(), `"msg":"webhook secret sealed with CARGO_WEBHOOK_PREVIOUS_KEY","webhook":"before"`); n != 1 || strings.Contains(logged.String(), `"webhook":"after"`) {
		t.Errorf("logged %d times for the subscription sealed before, want once, and never for the one after:\n%s", n, logged.String())
	}
}

// A delivery given up is logged once, with what an operator needs to find
// it: its attempts that are tried again are not, but at debug, where every
// attempt is a line.
func TestADeliveryGivenUpIsLoggedButNotOneTriedAgainSaveAtDebug(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		try     int
		logged  bool
		outcome string
	}{
		{"a failed attempt tried again", http.StatusInternalServerError, 1, false, "retrying"},
		{"the last attempt failed", http.StatusInternalServerError, len(DefaultSchedule) + 1, true, "dead"},
		{"the last attempt had no answer", 0, len(DefaultSchedule) + 1, true, "dead"},
		{"delivered", http.StatusNoContent, 1, false, "delivered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(tt.status) }))
			t.Cleanup(srv.Close)
			// No status: the receiver is down, and the line says null,
			// as the delivery log does, not the 0 no receiver answered.
			status := strconv.Itoa(tt.status)
			if tt.status == 0 {
				srv.Close()
				status = "null"
			}
			sealer := testSealer(t)
			for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
				var logged bytes.Buffer
				d := &Dispatcher{Sealer: sealer, Guard: Guard{AllowPrivate: true}, Schedule: DefaultSchedule, Log: slog.New(slog.NewJSONHandler(&logged, &slog.HandlerOptions{Level: level}))}
				d.client = d.newClient(1)
				w := domain.Webhook{ID: "hook", OrganizationID: "acme", URL: srv.URL, SealedSecret: sealer.Seal("whsec_aG9vaw==")}
				d.attempt(context.Background(), w, job{DeliveryID: "d-1", WebhookID: "hook", EventName: "quote.created", Body: json.RawMessage(`{}`)}, tt.try)
				line := fmt.Sprintf(`"msg":"webhook delivery given up","delivery":"d-1","webhook":"hook","organization":"acme","event":"quote.created","attempt":%d,"status":%s`, tt.try, status)
				if got := strings.Contains(logged.String(), line); got != tt.logged {
					t.Errorf("at %s: given up logged %t, want %t:\n%s", level, got, tt.logged, logged.String())
				}
				made := fmt.Sprintf(`"msg":"webhook attempt made","delivery":"d-1","webhook":"hook","organization":"acme","event":"quote.created","attempt":%d,"status":%s,"outcome":%q,"latencyMs":`, tt.try, status, tt.outcome)
				if got := strings.Contains(logged.String(), made); got != (level == slog.LevelDebug) {
					t.Errorf("at %s: the attempt logged %t:\n%s", level, got, logged.String())
				}
			}
		})
	}
}

// A subscription whose attempts start failing is logged once, with the
// receiver's host, and once when one is delivered again, and counted
// failing meanwhile: a receiver down for hours was logged nowhere until
// its deliveries were given up.
func TestASubscriptionThatStartsFailingIsLoggedOnceAndOnceWhenItDeliversAgain(t *testing.T) {
	var down atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(srv.Close)
	sealer := testSealer(t)
	var logged bytes.Buffer
	w := domain.Webhook{ID: "hook", OrganizationID: "acme", URL: srv.URL + "/hooks?token=s3cret", SealedSecret: sealer.Seal("whsec_aG9vaw==")}
	subs := subscriptions{"hook": w}
	d := &Dispatcher{Subs: subs, Sealer: sealer, Guard: Guard{AllowPrivate: true}, Schedule: DefaultSchedule, Log: slog.New(slog.NewJSONHandler(&logged, nil))}
	d.client = d.newClient(1)
	for i, receiverDown := range []bool{false, true, true, true, false, false, true} {
		down.Store(receiverDown)
		d.attempt(context.Background(), w, job{DeliveryID: fmt.Sprint("d-", i), WebhookID: "hook", EventName: "quote.created", Body: json.RawMessage(`{}`)}, 1)
		if want := map[bool]int{false: 0, true: 1}[receiverDown]; d.Failing() != want {
			t.Errorf("after attempt %d, %d subscriptions failing, want %d", i, d.Failing(), want)
		}
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	failing := `"msg":"webhook subscription failing: its deliveries are tried again on the retry schedule (its delivery log has each attempt)","webhook":"hook","organization":"acme","host":"` + host + `","status":503`
	again := `"msg":"webhook subscription delivers again","webhook":"hook","organization":"acme"`
	if n, m := strings.Count(logged.String(), failing), strings.Count(logged.String(), again); n != 2 || m != 1 {
		t.Errorf("failing logged %d times, delivering again %d, want 2 and 1:\n%s", n, m, logged.String())
	}
	if strings.Contains(logged.String(), "s3cret") {
		t.Errorf("the URL's token was logged:\n%s", logged.String())
	}
	// Failing when deleted, it is failing no more: it is sent nothing.
	w.Deleted = true
	subs["hook"] = w
	if n := d.Failing(); n != 0 {
		t.Errorf("a deleted subscription counted failing: %d", n)
	}
}

// attemptPing makes a first attempt at a ping to a receiver at url, with
// the dispatcher's own HTTP client.
func attemptPing(t *testing.T, url string) (domain.WebhookDeliveryAttempted, time.Duration) {
	return attemptPingAgain(t, url, 1)
}

// attemptPingAgain makes the try-th attempt at a ping, as attemptPing.
func attemptPingAgain(t *testing.T, url string, try int) (domain.WebhookDeliveryAttempted, time.Duration) {
	sealer := testSealer(t)
	w := domain.Webhook{ID: "hook", OrganizationID: "acme", URL: url, SealedSecret: sealer.Seal("whsec_aG9vaw==")}
	d := &Dispatcher{Sealer: sealer, Guard: Guard{AllowPrivate: true}, Schedule: DefaultSchedule, Log: slog.New(slog.DiscardHandler)}
	d.client = d.newClient(1)
	return d.attempt(context.Background(), w, job{DeliveryID: "x", WebhookID: "hook", EventName: "webhook.ping", Body: json.RawMessage(`{}`)}, try)
}

// A receiver's answer is held in memory while its headers arrive: one
// whose headers are larger than any answer needs fails the attempt, so a
// receiver answering endless headers to each request under way holds a
// few KiB of them each, not the HTTP client's default of 10 MiB.
func TestAnAnswerWithHeadersLargerThan64KiBFailsTheAttempt(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := range 64 {
			w.Header().Set(fmt.Sprint("X-Padding-", i), strings.Repeat("a", 2<<10))
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	attempt, retryIn := attemptPing(t, srv.URL)
	if attempt.Outcome != domain.DeliveryRetrying || retryIn == 0 || !strings.Contains(attempt.Error, "headers exceeded") {
		t.Errorf("an answer with 128 KiB of headers: %s, retry in %s, error %q; want retrying, the error naming the headers", attempt.Outcome, retryIn, attempt.Error)
	}
}

// Every attempt is stored for good in the event log: a receiver's reason
// phrase, which may fill the 64 KiB its answer's headers may have, is
// recorded cut to 64 bytes, whole characters, after its status code.
func TestAReceiversReasonPhraseIsRecordedCutTo64Bytes(t *testing.T) {
	for _, tt := range []struct{ reason, want string }{
		{"Internal Server Error", "the receiver answered 500 Internal Server Error"},
		{strings.Repeat("x", 60<<10), "the receiver answered 500 " + strings.Repeat("x", 64) + "…"},
		{strings.Repeat("é", 20<<10), "the receiver answered 500 " + strings.Repeat("é", 32) + "…"},
		{"a" + strings.Repeat("é", 20<<10), "the receiver answered 500 a" + strings.Repeat("é", 31) + "…"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack() // the server writes no reason of a receiver's own
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			fmt.Fprintf(conn, "HTTP/1.1 500 %s\r\nContent-Length: 0\r\n\r\n", tt.reason)
		}))
		attempt, _ := attemptPing(t, srv.URL)
		srv.Close()
		if attempt.StatusCode != http.StatusInternalServerError || attempt.Error != tt.want {
			t.Errorf("a reason of %d bytes: status %d, error %.100q (%d bytes); want 500, %.100q", len(tt.reason), attempt.StatusCode, attempt.Error, len(attempt.Error), tt.want)
		}
	}
}

// Three digits Go's client takes but no HTTP status (099, 000) are
// recorded as no status, as for no answer, with the digits in the error:
// the delivery log's statusCode is 100–999 or null, and 0 read as "no
// answer" beside an error saying one came.
func TestAStatusBelow100IsRecordedAsNoStatus(t *testing.T) {
	for _, status := range []string{"099", "000"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack() // the server writes no such status
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			fmt.Fprintf(conn, "HTTP/1.1 %s Odd\r\nContent-Length: 0\r\n\r\n", status)
		}))
		attempt, retryIn := attemptPing(t, srv.URL)
		srv.Close()
		if attempt.StatusCode != 0 || attempt.Outcome != domain.DeliveryRetrying || retryIn == 0 || !strings.Contains(attempt.Error, "answered "+status+" Odd, which is no HTTP status") {
			t.Errorf("status %s: recorded %d, %s, error %q; want no status, retrying, the error naming the digits as no HTTP status", status, attempt.StatusCode, attempt.Outcome, attempt.Error)
		}
	}
}

// A receiver that resets the connection is recorded as such, and the
// delivery log does not name the address the request came from: this
// replica's, on the operator's network.
func TestAConnectionResetIsRecordedWithoutTheReplicasOwnAddress(t *testing.T) {
	from := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		from <- r.RemoteAddr
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		conn.(*net.TCPConn).SetLinger(0) // closed with a reset
		conn.Close()
	}))
	t.Cleanup(srv.Close)
	attempt, _ := attemptPing(t, srv.URL)
	own := <-from
	if attempt.Outcome != domain.DeliveryRetrying || !strings.Contains(attempt.Error, "connection reset") || strings.Contains(attempt.Error, own) {
		t.Errorf("a reset connection from %s: %s, error %q; want retrying, the reset named, %s not", own, attempt.Outcome, attempt.Error, own)
	}
}

// A lookup that fails names the DNS server it asked, on the operator's
// network: the delivery log shows the failure without it. (Built here as
// the resolver makes it: a test sends nothing to a DNS server.)
func TestAFailedLookupIsShownWithoutTheDNSServer(t *testing.T) {
	err := &url.Error{Op: "Post", URL: "https://hooks.example/cargo", Err: &net.OpError{Op: "dial", Net: "tcp",
		Err: &net.DNSError{Err: "no such host", Name: "hooks.example", Server: "10.0.0.2:53", IsNotFound: true}}}
	got, want := withoutOwnAddresses(err).Error(), `Post "https://hooks.example/cargo": dial tcp: lookup hooks.example: no such host`
	if got != want {
		t.Errorf("shown as %q, want %q", got, want)
	}
}

// A receiver's Retry-After is waited, but never shortens the schedule: a
// receiver that answers 429 with Retry-After: 1 each time would have a
// delivery dead after ten tries in ten seconds.
func TestARetryAfterIsWaitedButDoesNotShortenTheSchedule(t *testing.T) {
	for _, tt := range []struct {
		name       string
		try        int
		retryAfter string
		min, max   time.Duration // of the wait before the next try; 0: dead
	}{
		{"shorter than the first step", 1, "1", 4 * time.Second, 6 * time.Second},
		{"longer than the first step", 1, "60", time.Minute, time.Minute},
		{"shorter than the third step", 3, "1", 24 * time.Minute, 36 * time.Minute},
		{"past the schedule", len(DefaultSchedule) + 1, "1", 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", tt.retryAfter)
				w.WriteHeader(http.StatusTooManyRequests)
			}))
			t.Cleanup(srv.Close)
			attempt, retryIn := attemptPingAgain(t, srv.URL, tt.try)
			if retryIn < tt.min || retryIn > tt.max || (tt.max == 0) != (attempt.Outcome == domain.DeliveryDead) {
				t.Errorf("try %d answered 429, Retry-After %s: %s, next try in %s, want %s to %s", tt.try, tt.retryAfter, attempt.Outcome, retryIn, tt.min, tt.max)
			}
		})
	}
}

// attemptedAlready is subscriptions whose delivery log holds attempts of
// deliveries.
type attemptedAlready struct {
	subscriptions
	log map[string][]string // delivery id → the outcomes of its attempts
}

func (s attemptedAlready) Attempts(_, id string) (int, string) {
	outcomes := s.log[id]
	if len(outcomes) == 0 {
		return 0, ""
	}
	return len(outcomes), outcomes[len(outcomes)-1]
}

// A job that stood in for a first attempt under way when the process
// died, and comes due once the event, come again, made that attempt, is
// done without one: the receiver has had the delivery twice already. One
// whose attempt is not in the log, or whose retry could not be queued
// (the attempt retrying, no other attempt, no retry waiting), makes it;
// so does a retry of a delivery attempted.
func TestAStandInForAFirstAttemptMadeAgainSinceIsDoneWithoutAnAttempt(t *testing.T) {
	ctx := context.Background()
	_, queue := storeWithQueue(t)
	d, requests, recorded := sender(t, queue, http.StatusNoContent)
	d.Subs = attemptedAlready{d.Subs.(subscriptions), map[string][]string{
		"delivered": {domain.DeliveryDelivered},
		"dead":      {domain.DeliveryDead},
		"retried":   {domain.DeliveryRetrying, domain.DeliveryRetrying},
		"waiting":   {domain.DeliveryRetrying},
		"unqueued":  {domain.DeliveryRetrying},
	}}
	standIn := func(delivery string) job {
		return job{DeliveryID: delivery, WebhookID: "hook", EventName: "quote.created", Body: json.RawMessage(`{}`)}
	}
	if err := queue.Put(ctx, domain.Job{ID: "waiting", Data: marshal(t, job{DeliveryID: "waiting", WebhookID: "hook", Tried: 1}), Due: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		delivery string
		attempts int32
	}{
		{"delivered", 0}, {"dead", 0}, {"retried", 0}, {"waiting", 0},
		{"unqueued", 1}, {"not-in-the-log", 1},
	} {
		before := requests.Load()
		if later := d.send(ctx, tt.delivery+"~inline~1", marshal(t, standIn(tt.delivery)), 1); later != 0 || requests.Load()-before != tt.attempts {
			t.Errorf("the stand-in of delivery %s: send = %s, %d requests; want done with %d", tt.delivery, later, requests.Load()-before, tt.attempts)
		}
	}
	retry := standIn("delivered")
	retry.Tried = 1
	before := requests.Load()
	if d.send(ctx, "delivered~1", marshal(t, retry), 1); requests.Load()-before != 1 {
		t.Errorf("a retry of a delivery attempted made %d requests, want 1", requests.Load()-before)
	}
	// A stand-in put back (no turn free, say) goes on under its
	// delivery's next id, which a retry of the delivery may have too: it
	// makes its attempt, or the retry's requeue, kept once under that id,
	// would be lost.
	putBack := standIn("waiting")
	putBack.Requeued = 1
	before = requests.Load()
	if d.send(ctx, "waiting~1", marshal(t, putBack), 1); requests.Load()-before != 1 {
		t.Errorf("a stand-in put back made %d requests, want 1", requests.Load()-before)
	}
	if len(recorded.all) != 4 {
		t.Errorf("%d attempts recorded, want the 4 made", len(recorded.all))
	}
}
