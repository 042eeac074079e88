package projections

import (
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/cargostream/cargostream/domain"
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
				got = append(got, a.Attempt)
			}
			if !slices.Equal(got, c.want) || ds[0].Status != c.status {
				t.Errorf("attempts %v, status %s; want %v, %s", got, ds[0].Status, c.want, c.status)
			}
		})
	}
}

// Every attempt at a delivery names its ids: they are kept once, however
// many attempts there are, each decoded into a copy of its own.
func TestADeliverysAttemptsShareItsIDs(t *testing.T) {
	m := NewWebhooks()
	for i := range 3 {
		// strings.Clone: each attempt's in memory of its own.
		m.Apply(domain.Record{Sequence: uint64(10 + i)}, domain.WebhookDeliveryAttempted{DeliveryID: strings.Clone("d1"),
			WebhookID: strings.Clone("w1"), EventName: "quote.created", EventID: strings.Clone("e1"), Attempt: i + 1, Outcome: "retrying"})
	}
	d, ok := m.Delivery("w1", "d1")
	if !ok || len(d.Attempts) != 3 {
		t.Fatalf("delivery %+v, found %t: want 3 attempts", d, ok)
	}
	tests := []struct {
		name      string
		delivery  string
		ofAttempt func(domain.WebhookDeliveryAttempted) string
	}{
		{"delivery", d.ID, func(a domain.WebhookDeliveryAttempted) string { return a.DeliveryID }},
		{"webhook", d.WebhookID, func(a domain.WebhookDeliveryAttempted) string { return a.WebhookID }},
		{"event", d.EventID, func(a domain.WebhookDeliveryAttempted) string { return a.EventID }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, a := range d.Attempts {
				if got := tt.ofAttempt(a); got != tt.delivery || unsafe.StringData(got) != unsafe.StringData(tt.delivery) {
					t.Errorf("attempt %d: %q in memory of its own, not the delivery's %q", i+1, got, tt.delivery)
				}
			}
		})
	}
}
