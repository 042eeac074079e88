package projections

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/google/uuid"
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
// repeats and the Delivery holds once.
type Attempt struct {
	Attempt    int32
	StatusCode int32 // 0: no answer
	LatencyMs  int64
	Outcome    string // domain.DeliveryDelivered, DeliveryRetrying or DeliveryDead
	Error      string
	At         time.Time
	NextTryAt  time.Time // zero: none
}

// The delivery log keeps each delivery as a deliveryLine: its ids as 16
// bytes, its strings as symbols, its attempts' times as numbers. Kept as
// Delivery and Attempt values, with strings of their own, a delivery was
// 0.36 kB of heap (0.54 kB when each attempt was its whole event), and a
// replica keeps every delivery it has seen.

// deliveryLine is one delivery as the log keeps it.
type deliveryLine struct {
	ID        textID
	EventID   textID
	Webhook   symbol
	EventName symbol
	EventSeq  uint64
	Attempts  []attemptLine // in the order made
}

// attemptLine is one attempt as the log keeps it.
type attemptLine struct {
	AtSeconds, NextTryAtSeconds int64 // Unix; NextTryAt's is the zero time's for none
	AtNanos, NextTryAtNanos     int32
	LatencyMs                   int64
	Attempt, StatusCode         int32
	Outcome, Error              symbol
}

// textID is an id as the delivery log keeps it: an id in a UUID's
// canonical text form (every id the dispatcher and the commands make) as
// its 16 bytes; any other (a hand-made event's) as a symbol. The zero
// textID is no id: a ping's event id, which is empty.
type textID struct {
	UUID [16]byte
	Text symbol // 0: UUID holds the id, or none when it is all zero
}

// idOf is the textID of id, made the first time an id not a UUID is seen.
func (m *Webhooks) idOf(id string) textID {
	if u, ok := canonicalUUID(id); ok {
		return textID{UUID: u}
	}
	return textID{Text: m.symbols.number(id)}
}

// findID is the textID of id, if the log can know it: an id that is
// neither a UUID nor a symbol names nothing kept.
func (m *Webhooks) findID(id string) (textID, bool) {
	if u, ok := canonicalUUID(id); ok {
		return textID{UUID: u}, true
	}
	n, ok := m.symbols.find(id)
	return textID{Text: n}, ok
}

func (m *Webhooks) text(id textID) string {
	if id.Text != 0 || id == (textID{}) {
		return m.symbols.name(id.Text)
	}
	return uuid.UUID(id.UUID).String()
}

// canonicalUUID parses id if it is a UUID written as uuid.UUID's String
// writes one (lower case, with hyphens): an id written otherwise (upper
// case, in braces) is kept as a symbol, so that it reads back as it came.
// So is the nil UUID, whose 16 bytes are the zero textID's: kept as
// bytes, it would read back as no id.
func canonicalUUID(id string) (uuid.UUID, bool) {
	if len(id) != 36 {
		return uuid.UUID{}, false
	}
	u, err := uuid.Parse(id)
	return u, err == nil && u.String() == id && u != uuid.Nil
}

// Webhooks is the read model of subscriptions and their delivery logs.
type Webhooks struct {
	mu    sync.RWMutex
	subs  map[string]domain.Webhook
	since map[string]uint64 // webhook → the sequence it was registered at
	order []string

	deliveries appendLog[deliveryLine]
	byID       map[textID]uint32   // delivery → its line
	byWebhook  map[symbol][]uint32 // webhook → its deliveries' lines, oldest first
	sentAs     map[uint32]string   // line → the webhook-id sent, when not MessageIDOf(its id): a redelivery's
	symbols    symbols
}

// NewWebhooks returns an empty webhooks read model.
func NewWebhooks() *Webhooks {
	return &Webhooks{subs: map[string]domain.Webhook{}, since: map[string]uint64{}, byID: map[textID]uint32{},
		byWebhook: map[symbol][]uint32{}, sentAs: map[uint32]string{}, symbols: newSymbols()}
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
		id := m.idOf(e.DeliveryID)
		n, ok := m.byID[id]
		if !ok {
			n = uint32(m.deliveries.n)
			webhook := m.symbols.number(e.WebhookID)
			m.deliveries.add(deliveryLine{ID: id, EventID: m.idOf(e.EventID), Webhook: webhook, EventName: m.symbols.number(e.EventName),
				EventSeq: e.EventSeq})
			m.byID[id] = n
			m.byWebhook[webhook] = append(m.byWebhook[webhook], n)
		}
		if _, sent := m.sentAs[n]; !sent && e.MessageID != "" && e.MessageID != domain.MessageIDOf(e.DeliveryID) {
			m.sentAs[n] = strings.Clone(e.MessageID)
		}
		d := m.deliveries.ref(int(n))
		a := attemptLine{AtSeconds: e.At.Unix(), AtNanos: int32(e.At.Nanosecond()), NextTryAtSeconds: e.NextTryAt.Unix(),
			NextTryAtNanos: int32(e.NextTryAt.Nanosecond()), LatencyMs: e.LatencyMs, Attempt: int32(e.Attempt), StatusCode: int32(e.StatusCode),
			Outcome: m.symbols.number(e.Outcome), Error: m.symbols.number(e.Error)}
		// An attempt's record may wait for the store (up to a minute)
		// longer than its retry waits to be made and recorded: the log
		// keeps the attempts in the order made, and the status is the
		// last's.
		i := len(d.Attempts)
		for i > 0 && d.Attempts[i-1].Attempt > a.Attempt {
			i--
		}
		d.Attempts = inserted(d.Attempts, i, a)
	}
}

// delivery is line n as the log shows it.
func (m *Webhooks) delivery(n uint32) Delivery {
	line := m.deliveries.ref(int(n))
	d := Delivery{ID: m.text(line.ID), WebhookID: m.symbols.name(line.Webhook), EventName: m.symbols.name(line.EventName),
		EventID: m.text(line.EventID), EventSeq: line.EventSeq, SentAs: m.sentAs[n], Attempts: make([]Attempt, len(line.Attempts))}
	for i, a := range line.Attempts {
		d.Attempts[i] = Attempt{Attempt: a.Attempt, StatusCode: a.StatusCode, LatencyMs: a.LatencyMs, Outcome: m.symbols.name(a.Outcome),
			Error: m.symbols.name(a.Error), At: time.Unix(a.AtSeconds, int64(a.AtNanos)).UTC(),
			NextTryAt: time.Unix(a.NextTryAtSeconds, int64(a.NextTryAtNanos)).UTC()}
	}
	if len(d.Attempts) > 0 {
		d.Status = d.Attempts[len(d.Attempts)-1].Outcome
	}
	return d
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
	webhook, ok := m.symbols.find(webhookID)
	if !ok {
		return nil, 0
	}
	keep := func(uint32) bool { return true }
	if len(eventIDs) > 0 {
		wanted := map[textID]bool{}
		for _, id := range eventIDs {
			if id, ok := m.findID(id); ok {
				wanted[id] = true
			}
		}
		keep = func(n uint32) bool { return wanted[m.deliveries.ref(int(n)).EventID] }
	}
	found, total := pageOf(m.byWebhook[webhook], true, func(n uint32) uint32 { return n }, keep, page, limit)
	out := make([]Delivery, len(found))
	for i, n := range found {
		out[i] = m.delivery(n)
	}
	return out, total
}

// Attempts is how many attempts of delivery id of subscription webhookID
// the log holds, and the delivery's status (that of its last attempt).
func (m *Webhooks) Attempts(webhookID, id string) (int, string) {
	d, _ := m.Delivery(webhookID, id)
	return len(d.Attempts), d.Status
}

// Delivery returns one delivery of a subscription.
func (m *Webhooks) Delivery(webhookID, id string) (Delivery, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	key, known := m.findID(id)
	n, ok := m.byID[key]
	if !known || !ok || m.symbols.name(m.deliveries.ref(int(n)).Webhook) != webhookID {
		return Delivery{}, false
	}
	return m.delivery(n), true
}
