package projections

import (
	"encoding/json"
	"reflect"
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

// A delivery reads back as its attempts' events say, whatever the form
// of its ids: those in a UUID's canonical form are kept as 16 bytes, any
// other as it came.
func TestADeliveryReadsBackAsRecorded(t *testing.T) {
	at := time.Date(2026, 11, 28, 9, 0, 0, 123456789, time.UTC)
	upper := strings.ToUpper(uuid.NewString())
	tests := []struct {
		name     string
		recorded []domain.WebhookDeliveryAttempted
		want     Delivery
	}{{
		name: "ids that are UUIDs, a failed attempt and its retry",
		recorded: []domain.WebhookDeliveryAttempted{
			{DeliveryID: "6f1c2b1e-58a4-4c51-9a7e-0d2f4b1c9e11", WebhookID: "0b7e5d44-8d8b-4a59-a0a5-2c4b8f0e7d21", EventName: "quote.created",
				EventID: "4d3c2b1a-0f9e-5d8c-8b7a-6a5b4c3d2e1f", EventSeq: 41, Attempt: 1, LatencyMs: 15000, Error: "timeout awaiting the answer",
				Outcome: domain.DeliveryRetrying, NextTryAt: at.Add(time.Minute), At: at},
			{DeliveryID: "6f1c2b1e-58a4-4c51-9a7e-0d2f4b1c9e11", WebhookID: "0b7e5d44-8d8b-4a59-a0a5-2c4b8f0e7d21", EventName: "quote.created",
				EventID: "4d3c2b1a-0f9e-5d8c-8b7a-6a5b4c3d2e1f", EventSeq: 41, Attempt: 2, StatusCode: 204, LatencyMs: 3,
				Outcome: domain.DeliveryDelivered, At: at.Add(time.Minute + time.Nanosecond)},
		},
		want: Delivery{ID: "6f1c2b1e-58a4-4c51-9a7e-0d2f4b1c9e11", WebhookID: "0b7e5d44-8d8b-4a59-a0a5-2c4b8f0e7d21", EventName: "quote.created",
			EventID: "4d3c2b1a-0f9e-5d8c-8b7a-6a5b4c3d2e1f", EventSeq: 41, Status: domain.DeliveryDelivered, Attempts: []Attempt{
				{Attempt: 1, LatencyMs: 15000, Outcome: domain.DeliveryRetrying, Error: "timeout awaiting the answer", At: at, NextTryAt: at.Add(time.Minute)},
				{Attempt: 2, StatusCode: 204, LatencyMs: 3, Outcome: domain.DeliveryDelivered, At: at.Add(time.Minute + time.Nanosecond)},
			}},
	}, {
		name: "ids that are not, and a redelivery sent as its original",
		recorded: []domain.WebhookDeliveryAttempted{{DeliveryID: "d-1", WebhookID: "w1", EventName: "booking.confirmed", EventID: "e-1", EventSeq: 7,
			MessageID: "msg_d-0", Attempt: 1, StatusCode: 200, Outcome: domain.DeliveryDelivered, At: at}},
		want: Delivery{ID: "d-1", WebhookID: "w1", EventName: "booking.confirmed", EventID: "e-1", EventSeq: 7, SentAs: "msg_d-0",
			Status: domain.DeliveryDelivered, Attempts: []Attempt{{Attempt: 1, StatusCode: 200, Outcome: domain.DeliveryDelivered, At: at}}},
	}, {
		name: "a UUID in upper case, kept as it came",
		recorded: []domain.WebhookDeliveryAttempted{{DeliveryID: upper, WebhookID: "w1", EventName: "quote.created", EventID: upper,
			Attempt: 1, Outcome: domain.DeliveryDead, Error: "dial tcp 127.0.0.1:9: connect: connection refused", At: at}},
		want: Delivery{ID: upper, WebhookID: "w1", EventName: "quote.created", EventID: upper, Status: domain.DeliveryDead,
			Attempts: []Attempt{{Attempt: 1, Outcome: domain.DeliveryDead, Error: "dial tcp 127.0.0.1:9: connect: connection refused", At: at}}},
	}, {
		// Not the nil UUID, whose bytes it would share kept as 16 bytes.
		name: "a ping, whose event id is empty",
		recorded: []domain.WebhookDeliveryAttempted{{DeliveryID: "7ec46007-c5af-418e-9173-4800cdc738f7", WebhookID: "w1", EventName: "webhook.ping",
			Attempt: 1, StatusCode: 204, Outcome: domain.DeliveryDelivered, At: at}},
		want: Delivery{ID: "7ec46007-c5af-418e-9173-4800cdc738f7", WebhookID: "w1", EventName: "webhook.ping", Status: domain.DeliveryDelivered,
			Attempts: []Attempt{{Attempt: 1, StatusCode: 204, Outcome: domain.DeliveryDelivered, At: at}}},
	}, {
		name: "the nil UUID as an event id, kept as it came",
		recorded: []domain.WebhookDeliveryAttempted{{DeliveryID: "d-3", WebhookID: "w1", EventName: "quote.created", EventID: uuid.Nil.String(),
			Attempt: 1, StatusCode: 204, Outcome: domain.DeliveryDelivered, At: at}},
		want: Delivery{ID: "d-3", WebhookID: "w1", EventName: "quote.created", EventID: uuid.Nil.String(), Status: domain.DeliveryDelivered,
			Attempts: []Attempt{{Attempt: 1, StatusCode: 204, Outcome: domain.DeliveryDelivered, At: at}}},
	}, {
		name: "a time at another offset, the same instant in UTC, and none at all",
		recorded: []domain.WebhookDeliveryAttempted{{DeliveryID: "d-2", WebhookID: "w1", EventName: "quote.created", EventID: "e-2", Attempt: 1,
			Outcome: domain.DeliveryRetrying, NextTryAt: at.In(time.FixedZone("CET", 3600))}},
		want: Delivery{ID: "d-2", WebhookID: "w1", EventName: "quote.created", EventID: "e-2", Status: domain.DeliveryRetrying,
			Attempts: []Attempt{{Attempt: 1, Outcome: domain.DeliveryRetrying, At: time.Time{}.UTC(), NextTryAt: at}}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewWebhooks()
			for i, a := range tt.recorded {
				m.Apply(domain.Record{Sequence: uint64(10 + i)}, a)
			}
			got, ok := m.Delivery(tt.want.WebhookID, tt.want.ID)
			if !ok {
				t.Fatalf("delivery %s of %s not found", tt.want.ID, tt.want.WebhookID)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			page, total := m.Deliveries(tt.want.WebhookID, []string{tt.want.EventID}, 1, 10)
			if total != 1 || len(page) != 1 || !reflect.DeepEqual(page[0], tt.want) {
				t.Errorf("the page of event %s: %d, %+v", tt.want.EventID, total, page)
			}
			if _, ok := m.Delivery("another", tt.want.ID); ok {
				t.Error("found as another subscription's")
			}
			if n, status := m.Attempts(tt.want.WebhookID, tt.want.ID); n != len(tt.want.Attempts) || status != tt.want.Status {
				t.Errorf("attempts: %d, %s", n, status)
			}
			if n, _ := m.Attempts("another", tt.want.ID); n != 0 {
				t.Errorf("another subscription's delivery has %d attempts", n)
			}
		})
	}
}

// The delivery log keeps no string of an event's: ids that are UUIDs as
// bytes, and what deliveries repeat (subscriptions, event names,
// outcomes, errors) once, in memory of its own, so that a delivery that
// repeats them adds no string.
func TestTheDeliveryLogKeepsNoStringOfAnEventButWhatItRepeats(t *testing.T) {
	m := NewWebhooks()
	var kept []int
	var events []string
	for i := range 3 {
		// Each event's strings in memory of their own, as each event's
		// decoded payload is.
		e := domain.WebhookDeliveryAttempted{DeliveryID: uuid.NewString(), WebhookID: strings.Clone("w1"), EventName: strings.Clone("quote.created"),
			EventID: uuid.NewString(), Attempt: 1, Error: strings.Clone("503 Service Unavailable"), Outcome: strings.Clone(domain.DeliveryRetrying)}
		events = append(events, e.WebhookID, e.EventName, e.Error, e.Outcome)
		m.Apply(domain.Record{Sequence: uint64(i + 1)}, e)
		kept = append(kept, len(m.symbols.names))
	}
	if kept[2] != kept[0] {
		t.Errorf("later deliveries added %d strings: %q", kept[2]-kept[0], m.symbols.names[kept[0]:])
	}
	for _, name := range m.symbols.names {
		for _, s := range events {
			if name != "" && unsafe.StringData(name) == unsafe.StringData(s) {
				t.Errorf("the log keeps %q, an event's", name)
			}
		}
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
