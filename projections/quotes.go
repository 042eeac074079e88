package projections

import (
	"sync"

	"github.com/cargostream/cargostream/domain"
)

// Quotes is the read model of quotes.
type Quotes struct {
	mu       sync.RWMutex
	byID     map[string]domain.Quote
	versions map[string]uint64   // id → sequence of the quote's last event
	order    []string            // ids, oldest first
	byOrg    map[string][]string // forwarder → its quote ids, oldest first
}

// NewQuotes returns an empty quotes read model.
func NewQuotes() *Quotes {
	return &Quotes{byID: map[string]domain.Quote{}, versions: map[string]uint64{}, byOrg: map[string][]string{}}
}

// Apply implements ReadModel.
func (m *Quotes) Apply(r domain.Record, e domain.Event) {
	if r.Aggregate.Type != domain.AggregateQuote {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	id := r.Aggregate.ID
	q, existed := m.byID[id]
	q = domain.EvolveQuote(q, e)
	m.byID[id] = q
	m.versions[id] = r.Sequence
	if !existed {
		m.order = append(m.order, id)
		m.byOrg[q.OrganizationID] = append(m.byOrg[q.OrganizationID], id)
	}
}

// QuoteFilter narrows a quote list; empty fields match everything.
type QuoteFilter struct {
	Status, Origin, Destination string
}

// Matches reports whether q passes the filter.
func (f QuoteFilter) Matches(q domain.Quote) bool {
	return (f.Status == "" || q.Status == f.Status) &&
		(f.Origin == "" || q.Origin == f.Origin) &&
		(f.Destination == "" || q.Destination == f.Destination)
}

// Get returns a quote p may see. A quote p may not see is reported as
// missing, so its existence is not revealed.
func (m *Quotes) Get(p domain.Principal, id string) (domain.Quote, bool) {
	q, _, ok := m.GetVersion(p, id)
	return q, ok
}

// GetVersion is Get, with the quote's version: the stream sequence of
// its last event, which changes whenever the quote does.
func (m *Quotes) GetVersion(p domain.Principal, id string) (domain.Quote, uint64, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	q, ok := m.byID[id]
	if !ok || !q.VisibleTo(p) {
		return domain.Quote{}, 0, false
	}
	return q, m.versions[id], true
}

// List returns one page (from 1) of the quotes p may see that match f,
// newest first, and how many match in all.
func (m *Quotes) List(p domain.Principal, f QuoteFilter, page, limit int) ([]domain.Quote, int) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	ids := m.order
	if p.Role == domain.RoleForwarder {
		ids = m.byOrg[p.OrganizationID]
	}
	return pageOf(ids, true, func(id string) domain.Quote { return m.byID[id] },
		func(q domain.Quote) bool { return q.VisibleTo(p) && f.Matches(q) }, page, limit)
}
