package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
)

// subscriptions is a fixed set of subscriptions, none wanting any event:
// the deliveries of these tests are pings, made through the queue.
type subscriptions map[string]domain.Webhook

func (s subscriptions) Webhook(id string) (domain.Webhook, bool) { w, ok := s[id]; return w, ok }
func (subscriptions) Matching(string, uint64) []domain.Webhook   { return nil }
func (subscriptions) AnyLive(uint64) bool                        { return false }

// attempts keeps the attempts the dispatcher records.
type attempts struct {
	mu   sync.Mutex
	all  []domain.WebhookDeliveryAttempted
	more chan struct{} // a receive after each record
}

func (a *attempts) RecordDelivery(_ context.Context, _ string, e domain.WebhookDeliveryAttempted) error {
	a.mu.Lock()
	a.all = append(a.all, e)
	a.mu.Unlock()
	a.more <- struct{}{}
	return nil
}

func (*attempts) DisableWebhook(context.Context, string, string, string) error { return nil }

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

// within fails the test unless c receives within ten seconds.
func within(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(10 * time.Second):
		t.Fatal(what)
	}
}

func TestASlowReceiverHoldsUpNoOtherSubscriptionsDeliveriesAndItsOwnKeepTheirAttempts(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store, err := eventstore.Open(ctx, eventstore.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	queue, err := store.Queue(ctx, "webhooks")
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := NewSealer(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	release, answered := make(chan struct{}), make(chan struct{})
	close(answered)
	slowURL, slowArrived := receiver(t, release)
	fastURL, fastArrived := receiver(t, answered)
	subs := subscriptions{
		"slow": {ID: "slow", OrganizationID: "acme", URL: slowURL, SealedSecret: sealer.Seal("whsec_c2xvdw==")},
		"fast": {ID: "fast", OrganizationID: "acme", URL: fastURL, SealedSecret: sealer.Seal("whsec_ZmFzdA==")},
	}
	recorded := &attempts{more: make(chan struct{}, 100)}
	// Four deliveries in hand at once, one request under way to a
	// subscription: six queued for the slow receiver would hold all four
	// if they waited in hand for its turn.
	d := &Dispatcher{Events: store, Queue: queue, Subs: subs, Recorder: recorded, Sealer: sealer, Guard: Guard{AllowPrivate: true},
		Schedule: DefaultSchedule, Log: slog.New(slog.DiscardHandler), Parallel: 1, InHand: 4, PerSubscription: 1}
	ran := make(chan struct{})
	go func() { defer close(ran); d.Run(ctx) }()
	defer func() { cancel(); <-ran }()
	var once sync.Once
	answerAll := func() { once.Do(func() { close(release) }) }
	defer answerAll() // before Run waits for the requests under way

	const slowOnes = 6
	for range slowOnes {
		if _, err := d.Ping(ctx, subs["slow"]); err != nil {
			t.Fatal(err)
		}
	}
	within(t, slowArrived, "the slow receiver had no request")
	if _, err := d.Ping(ctx, subs["fast"]); err != nil {
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

// jobs is a Queue that keeps what is put, each id once (as the queue's
// de-duplication does), or refuses it all when failing.
type jobs struct {
	mu      sync.Mutex
	byID    map[string]job
	failing bool
}

func (q *jobs) Put(_ context.Context, put ...domain.Job) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.failing {
		return errors.New("the queue's stream has no leader")
	}
	if q.byID == nil {
		q.byID = map[string]job{}
	}
	for _, p := range put {
		var j job
		if err := json.Unmarshal(p.Data, &j); err != nil {
			return err
		}
		if _, ok := q.byID[p.ID]; !ok {
			q.byID[p.ID] = j
		}
	}
	return nil
}

func (*jobs) Work(context.Context, int, func(context.Context, string, []byte, int) time.Duration) {}

// sender is a dispatcher whose queue is q, delivering to one subscription
// whose receiver answers status and counts the requests.
func sender(t *testing.T, q Queue, status int) (d *Dispatcher, requests *atomic.Int32, recorded *attempts) {
	requests = new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	sealer, err := NewSealer(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	subs := subscriptions{"hook": {ID: "hook", OrganizationID: "acme", URL: srv.URL, SealedSecret: sealer.Seal("whsec_aG9vaw==")}}
	recorded = &attempts{more: make(chan struct{}, 10)}
	return &Dispatcher{Queue: q, Subs: subs, Recorder: recorded, Sealer: sealer, Guard: Guard{AllowPrivate: true}, Schedule: DefaultSchedule,
		Log: slog.New(slog.DiscardHandler), PerSubscription: 1, client: srv.Client()}, requests, recorded
}

func marshal(t *testing.T, j job) []byte {
	data, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestAJobThatComesAgainAfterItWasPutBackIsNotAttemptedBesideItsCopy(t *testing.T) {
	q := &jobs{}
	d, requests, recorded := sender(t, q, http.StatusNoContent)
	data := marshal(t, job{DeliveryID: "x", WebhookID: "hook", EventName: "webhook.ping", Body: json.RawMessage(`{}`)})
	// The subscription's turn is taken, and its one place to wait too.
	turn := d.turn("hook")
	turn.underWay <- struct{}{}
	turn.waiting.Store(1)
	if later := d.send(context.Background(), "x", data, 1); later != 0 {
		t.Fatalf("send = %s, want 0: put back", later)
	}
	copied, ok := q.byID["x~1"]
	if !ok || copied.Tried != 0 || copied.RetryAt.IsZero() {
		t.Fatalf("put back: %+v (%v), want x~1 untried and due later", copied, ok)
	}
	// Its acknowledgement is lost: the queue hands it out again once the
	// subscription has a turn free.
	turn.done()
	turn.waiting.Store(0)
	if later := d.send(context.Background(), "x", data, 2); later != 0 {
		t.Fatalf("send = %s, want 0: requeued", later)
	}
	if n := requests.Load(); n != 0 || len(recorded.all) != 0 {
		t.Errorf("%d requests, %d attempts recorded; want none: x~1 makes the attempt", n, len(recorded.all))
	}
	if again := q.byID["x~1"]; len(q.byID) != 1 || !again.RetryAt.Equal(copied.RetryAt) {
		t.Errorf("queued %v; want x~1 as first put", q.byID)
	}
}

func TestAFailedAttemptIsRetriedByTheNextJobOfItsDelivery(t *testing.T) {
	q := &jobs{}
	d, requests, recorded := sender(t, q, http.StatusInternalServerError)
	data := marshal(t, job{DeliveryID: "x", WebhookID: "hook", EventName: "webhook.ping", Body: json.RawMessage(`{}`)})
	if later := d.send(context.Background(), "x", data, 1); later != 0 {
		t.Fatalf("send = %s, want 0: the retry is a job of its own", later)
	}
	retry, ok := q.byID["x~1"]
	if due := time.Until(retry.RetryAt); !ok || retry.Tried != 1 || due < 3*time.Second || due > 6*time.Second {
		t.Fatalf("queued %+v (%v), want x~1 after 1 attempt, due in 5 s ±20%%", retry, ok)
	}
	data = marshal(t, retry)
	if step, _ := retry.next(1, time.Now()); step != waitForIt {
		t.Fatalf("the retry's first handout: %d, want it to wait", step)
	}
	if later := d.send(context.Background(), "x~1", data, 2); later != 0 {
		t.Fatalf("send = %s, want 0", later)
	}
	if n := requests.Load(); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
	if got := []int{recorded.all[0].Attempt, recorded.all[1].Attempt}; got[0] != 1 || got[1] != 2 {
		t.Errorf("attempts recorded %v, want [1 2]", got)
	}
	if next, ok := q.byID["x~2"]; !ok || next.Tried != 2 {
		t.Errorf("queued %+v (%v), want x~2 after 2 attempts", next, ok)
	}
}

func TestADeliveryThatCannotBeRequeuedComesAgainLaterUntried(t *testing.T) {
	q := &jobs{failing: true}
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
