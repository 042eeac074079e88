package projections

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cargostream/cargostream/domain"
)

// Delivery is one delivery of an event to a subscription, with every
// attempt made.
type Delivery struct {
	ID        string
	WebhookID string
	EventName string
	EventID   string
	EventSeq  uint64
	// The webhook-id the receiver was sent, when it is not
	// MessageIDOf(ID): a redelivery's is its original's.
	SentAs   string
	Status   string // the outcome of the last attempt made
	Attempts []Attempt
}

// MessageID is the webhook-id the receiver was sent.
func (d Delivery) MessageID() string { return cmp.Or(d.SentAs, domain.MessageIDOf(d.ID)) }

// Attempt is one attempt at a delivery, as the log shows it: what its
// event says but the delivery's ids and names, which every attempt
// repeats and the Delivery holds once. (Kept whole, attempts were most of
// the log's 0.54 kB a delivery.)
type Attempt struct {
	Attempt    int32
	StatusCode int32 // 0: no answer
	LatencyMs  int64
	Outcome    string // domain.DeliveryDelivered, DeliveryRetrying or DeliveryDead
	Error      string
	At         time.Time
	NextTryAt  time.Time // zero: none
}

// Webhooks is the read model of subscriptions and their delivery logs.
type Webhooks struct {
	mu         sync.RWMutex
	subs       map[string]domain.Webhook
	since      map[string]uint64 // webhook → the sequence it was registered at
	order      []string
	deliveries map[string]*Delivery
	byWebhook  map[string][]string // webhook → delivery ids, oldest first

	// Used by Apply alone, which runs on one goroutine: the strings
	// deliveries repeat (subscriptions, event names, outcomes), and the
	// event id of the delivery before, which the next, of the same event
	// to another subscription, repeats.
	shares  map[string]string
	eventID string
}

// NewWebhooks returns an empty webhooks read model.
func NewWebhooks() *Webhooks {
	return &Webhooks{subs: map[string]domain.Webhook{}, since: map[string]uint64{}, deliveries: map[string]*Delivery{}, byWebhook: map[string][]string{},
		shares: map[string]string{}}
}

// Apply implements ReadModel.
func (m *Webhooks) Apply(r domain.Record, e domain.Event) {
	switch e := e.(type) {
	case domain.WebhookRegistered, domain.WebhookDeleted, domain.WebhookDisabled:
		m.mu.Lock()
		defer m.mu.Unlock()
		id := r.Aggregate.ID
		if _, ok := m.subs[id]; !ok {
			m.order = append(m.order, id)
			m.since[id] = r.Sequence
		}
		m.subs[id] = domain.EvolveWebhook(m.subs[id], e)
	case domain.WebhookDeliveryAttempted:
		m.mu.Lock()
		defer m.mu.Unlock()
		d, ok := m.deliveries[e.DeliveryID]
		if !ok {
			if e.EventID != m.eventID {
				m.eventID = e.EventID
			}
			d = &Delivery{ID: e.DeliveryID, WebhookID: m.share(e.WebhookID), EventName: m.share(e.EventName), EventID: m.eventID, EventSeq: e.EventSeq}
			m.deliveries[e.DeliveryID] = d
			m.byWebhook[d.WebhookID] = append(m.byWebhook[d.WebhookID], d.ID)
		}
		if d.SentAs == "" && e.MessageID != "" && e.MessageID != domain.MessageIDOf(d.ID) {
			d.SentAs = e.MessageID
		}
		a := Attempt{Attempt: int32(e.Attempt), StatusCode: int32(e.StatusCode), LatencyMs: e.LatencyMs, Outcome: m.share(e.Outcome),
			Error: e.Error, At: e.At, NextTryAt: e.NextTryAt}
		// An attempt's record may wait for the store (up to a minute)
		// longer than its retry waits to be made and recorded: the log
		// keeps the attempts in the order made, and the status of the
		// last. A copy, not an insertion in place: a Delivery handed out
		// shares the slice.
		i := len(d.Attempts)
		for i > 0 && d.Attempts[i-1].Attempt > a.Attempt {
			i--
		}
		d.Attempts = inserted(d.Attempts, i, a)
		d.Status = d.Attempts[len(d.Attempts)-1].Outcome
	}
}

// share returns s, or a string equal to it that share returned before: a
// copy of its own, kept once for every delivery that repeats it, not a
// slice of the event it came in.
func (m *Webhooks) share(s string) string {
	if kept, ok := m.shares[s]; ok {
		return kept
	}
	s = strings.Clone(s)
	m.shares[s] = s
	return s
}

// Webhook returns a subscription by id.
func (m *Webhooks) Webhook(id string) (domain.Webhook, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	w, ok := m.subs[id]
	return w, ok
}

// RegisteredAt returns the stream sequence subscription id was registered
// at, 0 for one not known.
func (m *Webhooks) RegisteredAt(id string) uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.since[id]
}

// AnyLive reports whether a live subscription existed before the event at
// stream sequence seq: without one, the event goes to nobody, whatever it
// is, and the dispatcher need not decode it.
func (m *Webhooks) AnyLive(seq uint64) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return slices.ContainsFunc(m.order, func(id string) bool { return m.subs[id].Live() && m.before(id, seq) })
}

// before reports whether subscription id was registered before the event
// at stream sequence seq: a new subscriber is not sent the past.
func (m *Webhooks) before(id string, seq uint64) bool { return m.since[id] < seq }

// Matching returns the live subscriptions that want an event name and
// existed before the event (at stream sequence seq): a new subscriber is
// not sent the past.
func (m *Webhooks) Matching(name string, seq uint64) []domain.Webhook {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []domain.Webhook
	for _, id := range m.order {
		if w := m.subs[id]; w.Wants(name) && m.before(id, seq) {
			out = append(out, w)
		}
	}
	return out
}

// List returns an organisation's subscriptions (all for ""), not deleted.
func (m *Webhooks) List(orgID string) []domain.Webhook {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []domain.Webhook
	for _, id := range m.order {
		if w := m.subs[id]; !w.Deleted && (orgID == "" || w.OrganizationID == orgID) {
			out = append(out, w)
		}
	}
	return out
}

// Deliveries returns one page of a subscription's deliveries, newest
// first, and how many there are: of the events eventIDs only, unless it is
// empty. The filter spares an investigation (cargoctl shipment) reading a
// subscription's whole log to find the deliveries of a few events.
func (m *Webhooks) Deliveries(webhookID string, eventIDs []string, page, limit int) ([]Delivery, int) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	keep := func(*Delivery) bool { return true }
	if len(eventIDs) > 0 {
		wanted := make(map[string]bool, len(eventIDs))
		for _, id := range eventIDs {
			wanted[id] = true
		}
		keep = func(d *Delivery) bool { return wanted[d.EventID] }
	}
	found, total := pageOf(m.byWebhook[webhookID], true, func(id string) *Delivery { return m.deliveries[id] }, keep, page, limit)
	// Copies of the page's deliveries alone: their attempts change.
	out := make([]Delivery, len(found))
	for i, d := range found {
		out[i] = *d
		out[i].Attempts = slices.Clone(d.Attempts)
	}
	return out, total
}

// Delivery returns one delivery of a subscription.
func (m *Webhooks) Delivery(webhookID, id string) (Delivery, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	d, ok := m.deliveries[id]
	if !ok || d.WebhookID != webhookID {
		return Delivery{}, false
	}
	return *d, true
}
