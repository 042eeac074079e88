package webhooks

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
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
