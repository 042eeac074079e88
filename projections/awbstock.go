package projections

import (
	"cmp"
	"slices"
	"strings"
	"sync"

	"github.com/cargostream/cargostream/domain"
)

// AWBStock is the read model of stock requests and of the forwarders'
// stock ledgers.
type AWBStock struct {
	mu       sync.RWMutex
	requests map[string]domain.StockRequest
	versions map[string]uint64 // request id → sequence of the request's last event
	order    []string          // request ids, oldest first
	ledgers  map[string]domain.StockLedger
}

// NewAWBStock returns an empty AWB stock read model.
func NewAWBStock() *AWBStock {
	return &AWBStock{requests: map[string]domain.StockRequest{}, versions: map[string]uint64{}, ledgers: map[string]domain.StockLedger{}}
}

// Apply implements ReadModel.
func (m *AWBStock) Apply(r domain.Record, e domain.Event) {
	switch r.Aggregate.Type {
	case domain.AggregateStockRequest:
		m.mu.Lock()
		defer m.mu.Unlock()
		id := r.Aggregate.ID
		if _, ok := m.requests[id]; !ok {
			m.order = append(m.order, id)
		}
		m.requests[id] = domain.EvolveStockRequest(m.requests[id], e)
		m.versions[id] = r.Sequence
	case domain.AggregateStockLedger:
		m.mu.Lock()
		defer m.mu.Unlock()
		m.ledgers[r.Aggregate.ID] = domain.EvolveStockLedger(m.ledgers[r.Aggregate.ID], e)
	}
}

// Request returns a stock request p may see, and its version: the
// stream sequence of its last event.
func (m *AWBStock) Request(p domain.Principal, id string) (domain.StockRequest, uint64, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	r, ok := m.requests[id]
	if !ok || !r.VisibleTo(p) {
		return domain.StockRequest{}, 0, false
	}
	return r, m.versions[id], true
}

// Requests returns one page of the stock requests p may see, newest
// first, filtered by status and prefix, and how many match in all.
func (m *AWBStock) Requests(p domain.Principal, status, prefix string, page, limit int) ([]domain.StockRequest, int) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return pageOf(m.order, true, func(id string) domain.StockRequest { return m.requests[id] }, func(r domain.StockRequest) bool {
		return r.VisibleTo(p) && (status == "" || r.Status == status) && (prefix == "" || r.AirlinePrefix == prefix)
	}, page, limit)
}

// Ledgers returns the stock ledgers p may see: a forwarder its own, an
// airline those of its prefix, an admin all; by organisation and prefix.
func (m *AWBStock) Ledgers(p domain.Principal) []domain.StockLedger {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []domain.StockLedger
	for _, l := range m.ledgers {
		if p.Role == domain.RoleAdmin || (p.Role == domain.RoleForwarder && l.OrganizationID == p.OrganizationID) ||
			(p.Role == domain.RoleAirline && l.Prefix == p.AWBPrefix) {
			out = append(out, l)
		}
	}
	// Compared one field at a time: joined, organisation f1's prefix
	// 020 (f1020) would sort before organisation f's 176 (f176).
	slices.SortFunc(out, func(a, b domain.StockLedger) int {
		return cmp.Or(strings.Compare(a.OrganizationID, b.OrganizationID), strings.Compare(a.Prefix, b.Prefix))
	})
	return out
}

// Holder returns the forwarder whose stock holds the (canonical) AWB
// number, if any.
func (m *AWBStock) Holder(awb string) (string, bool) {
	prefix, serial := domain.AWBSerial(awb)
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, l := range m.ledgers {
		if l.Prefix != prefix {
			continue
		}
		for _, r := range l.Ranges {
			if r.Range.First <= serial && serial <= r.Range.Last() {
				return l.OrganizationID, true
			}
		}
	}
	return "", false
}
