package projections

import (
	"encoding/json"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/cargostream/cargostream/domain"
	"github.com/google/uuid"
)

func TestDeliveriesOfSomeEventsAreFoundInTheLogNewestFirst(t *testing.T) {
	m := NewWebhooks()
	// Four deliveries to one subscription, oldest first: two of event
	// e1 (the second a redelivery), one each of e2 and e3; and one of e1
	// to another subscription.
	for i, d := range []struct{ webhook, delivery, event string }{
		{"w1", "d1", "e1"}, {"w1", "d2", "e2"}, {"w1", "d3", "e1"}, {"w1", "d4", "e3"}, {"w2", "d5", "e1"},
	} {
		m.Apply(domain.Record{Sequence: uint64(10 + i)}, domain.WebhookDeliveryAttempted{DeliveryID: d.delivery, WebhookID: d.webhook,
			EventName: "quote.created", EventID: d.event, Attempt: 1, Outcome: "delivered"})
	}
	tests := []struct {
		events      []string
		page, limit int
		want        []string
		total       int
	}{
		{nil, 1, 10, []string{"d4", "d3", "d2", "d1"}, 4},
		{[]string{"e1"}, 1, 10, []string{"d3", "d1"}, 2},
		{[]string{"e1", "e3"}, 1, 2, []string{"d4", "d3"}, 3},
		{[]string{"e1", "e3"}, 2, 2, []string{"d1"}, 3},
		{[]string{"e9"}, 1, 10, nil, 0},
	}
	for _, tt := range tests {
		found, total := m.Deliveries("w1", tt.events, tt.page, tt.limit)
		var got []string
		for _, d := range found {
			got = append(got, d.ID)
		}
		if !slices.Equal(got, tt.want) || total != tt.total {
			t.Errorf("events %v, page %d of %d: %v of %d, want %v of %d", tt.events, tt.page, tt.limit, got, total, tt.want, tt.total)
		}
	}
}

func TestAnyLiveCountsOnlySubscriptionsThatLiveAndCameBeforeTheEvent(t *testing.T) {
	webhook := func(id string) domain.Aggregate { return domain.Aggregate{Type: domain.AggregateWebhook, ID: id} }
	for _, c := range []struct {
		name   string
		events []domain.Event // the n-th at sequence n+1
		seq    uint64
		want   bool
	}{
		{name: "no subscription", seq: 5, want: false},
		{name: "one registered before", events: []domain.Event{domain.WebhookRegistered{WebhookID: "w1"}}, seq: 2, want: true},
		{name: "one registered by the event itself", events: []domain.Event{domain.WebhookRegistered{WebhookID: "w1"}}, seq: 1, want: false},
		{name: "one deleted", events: []domain.Event{domain.WebhookRegistered{WebhookID: "w1"}, domain.WebhookDeleted{WebhookID: "w1"}}, seq: 3, want: false},
		{name: "one disabled", events: []domain.Event{domain.WebhookRegistered{WebhookID: "w1"}, domain.WebhookDisabled{WebhookID: "w1"}}, seq: 3, want: false},
		{name: "one deleted, another live", events: []domain.Event{domain.WebhookRegistered{WebhookID: "w1"}, domain.WebhookRegistered{WebhookID: "w2"},
			domain.WebhookDeleted{WebhookID: "w1"}}, seq: 4, want: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := NewWebhooks()
			for i, e := range c.events {
				id := ""
				switch e := e.(type) {
				case domain.WebhookRegistered:
					id = e.WebhookID
				case domain.WebhookDeleted:
					id = e.WebhookID
				case domain.WebhookDisabled:
					id = e.WebhookID
				}
				m.Apply(domain.Record{Aggregate: webhook(id), Sequence: uint64(i + 1)}, e)
			}
			if got := m.AnyLive(c.seq); got != c.want {
				t.Errorf("AnyLive(%d) = %v, want %v", c.seq, got, c.want)
			}
		})
	}
}

func TestADeliverysAttemptsAreInTheOrderMadeAndItsStatusIsTheLastOnesWhateverOrderTheyAreRecordedIn(t *testing.T) {
	attempt := func(n int, outcome string) domain.WebhookDeliveryAttempted {
		return domain.WebhookDeliveryAttempted{DeliveryID: "d1", WebhookID: "w1", EventID: "e1", Attempt: n, Outcome: outcome}
	}
	for _, c := range []struct {
		name     string
		recorded []domain.WebhookDeliveryAttempted
		want     []int
		status   string
	}{
		{"in order", []domain.WebhookDeliveryAttempted{attempt(1, "retrying"), attempt(2, "delivered")}, []int{1, 2}, "delivered"},
		// The first attempt's record waited for the store longer than its retry waited to be made.
		{"the first recorded after its retry", []domain.WebhookDeliveryAttempted{attempt(2, "delivered"), attempt(1, "retrying")}, []int{1, 2}, "delivered"},
		{"the first recorded last of three", []domain.WebhookDeliveryAttempted{attempt(2, "retrying"), attempt(3, "dead"), attempt(1, "retrying")},
			[]int{1, 2, 3}, "dead"},
		// A retry made again under its number, after its next job could not be queued, is recorded after it.
		{"an attempt made again", []domain.WebhookDeliveryAttempted{attempt(1, "retrying"), attempt(2, "retrying"), attempt(2, "delivered")},
			[]int{1, 2, 2}, "delivered"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := NewWebhooks()
			for i, a := range c.recorded {
				m.Apply(domain.Record{Sequence: uint64(10 + i)}, a)
			}
			ds, _ := m.Deliveries("w1", nil, 1, 10)
			if len(ds) != 1 {
				t.Fatalf("%d deliveries", len(ds))
			}
			var got []int
			for _, a := range ds[0].Attempts {
				got = append(got, int(a.Attempt))
			}
			if !slices.Equal(got, c.want) || ds[0].Status != c.status {
				t.Errorf("attempts %v, status %s; want %v, %s", got, ds[0].Status, c.want, c.status)
			}
		})
	}
}

// What deliveries repeat is kept once: a subscription's id and an event
// name in all their deliveries, an event's id in its deliveries to every
// subscription, an outcome in every attempt; each decoded from its event
// into a copy of its own.
func TestDeliveriesKeepOnceWhatTheyRepeat(t *testing.T) {
	m := NewWebhooks()
	seq := uint64(10)
	for _, event := range []string{"e1", "e2"} {
		for _, hook := range []string{"w1", "w2"} {
			for try := range 2 {
				seq++
				// strings.Clone: each attempt's in memory of its own.
				m.Apply(domain.Record{Sequence: seq}, domain.WebhookDeliveryAttempted{DeliveryID: strings.Clone(hook + event),
					WebhookID: strings.Clone(hook), EventName: strings.Clone("quote.created"), EventID: strings.Clone(event),
					Attempt: try + 1, Outcome: strings.Clone("retrying")})
			}
		}
	}
	delivery := func(hook, event string) Delivery {
		d, ok := m.Delivery(hook, hook+event)
		if !ok || len(d.Attempts) != 2 {
			t.Fatalf("delivery %s%s: %+v, found %t; want 2 attempts", hook, event, d, ok)
		}
		return d
	}
	w1e1, w1e2, w2e1 := delivery("w1", "e1"), delivery("w1", "e2"), delivery("w2", "e1")
	tests := []struct {
		name string
		a, b string
	}{
		{"a subscription's id in its deliveries", w1e1.WebhookID, w1e2.WebhookID},
		{"an event name in every delivery", w1e1.EventName, w2e1.EventName},
		{"an event's id in its deliveries to two subscriptions", w1e1.EventID, w2e1.EventID},
		{"an outcome in every attempt", w1e1.Attempts[0].Outcome, w2e1.Attempts[1].Outcome},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.a != tt.b || unsafe.StringData(tt.a) != unsafe.StringData(tt.b) {
				t.Errorf("%q and %q: each in memory of its own", tt.a, tt.b)
			}
		})
	}
}

// BenchmarkDeliveryLog measures the heap the delivery log holds a
// delivery ("B/delivery"): a burst of events to three subscriptions, each
// delivered at the first attempt, every attempt decoded from its stored
// JSON as the projector decodes it, as cargobench's webhook scenario makes
// them.
//
//	go test ./projections -run '^$' -bench DeliveryLog -benchtime 30000x
func BenchmarkDeliveryLog(b *testing.B) {
	hooks := []string{uuid.NewString(), uuid.NewString(), uuid.NewString()}
	at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	// What the model holds is what stays of the events once they are
	// gone: its own memory, and the strings of theirs it keeps.
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	records := make([]domain.Record, 0, b.N)
	events := make([]domain.Event, 0, b.N)
	for i := range b.N {
		e := domain.WebhookDeliveryAttempted{DeliveryID: uuid.NewString(), WebhookID: hooks[i%3], OrgID: "demo-forwarder",
			EventName: "quote.created", EventID: uuid.NewSHA1(uuid.Nil, []byte{byte(i / 3), byte(i / 768), byte(i / 196608)}).String(),
			EventSeq: uint64(i / 3), Attempt: 1, StatusCode: 200, LatencyMs: 3, Outcome: domain.DeliveryDelivered, At: at}
		data, err := json.Marshal(e)
		if err != nil {
			b.Fatal(err)
		}
		decoded, err := domain.DecodeEvent(e.EventType(), data)
		if err != nil {
			b.Fatal(err)
		}
		records = append(records, domain.Record{Sequence: uint64(i + 1), Envelope: domain.Envelope{Type: e.EventType(), Data: data}})
		events = append(events, decoded)
	}
	b.ResetTimer()
	m := NewWebhooks()
	for i := range b.N {
		m.Apply(records[i], events[i])
	}
	b.StopTimer()
	records, events = nil, nil
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric((float64(after.HeapAlloc)-float64(before.HeapAlloc))/float64(b.N), "B/delivery")
	runtime.KeepAlive(m)
}
