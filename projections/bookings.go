package projections

import (
	"slices"
	"sync"

	"github.com/cargostream/cargostream/domain"
)

// Bookings is the read model of bookings.
type Bookings struct {
	mu       sync.RWMutex
	byID     map[string]domain.Booking
	versions map[string]uint64   // id → sequence of the booking's last event
	order    []string            // oldest first
	byOrg    map[string][]string // forwarder → its booking ids
	byFlight map[string][]string // flight id → its booking ids, oldest first
	// AWB number → every booking that used it, oldest first, the last
	// the one that uses it: a shipment rebooked under its number (see
	// domain.StockLedger.Held) was the earlier booking's until then.
	allByAWB map[string][]string
}

// NewBookings returns an empty bookings read model.
func NewBookings() *Bookings {
	return &Bookings{byID: map[string]domain.Booking{}, versions: map[string]uint64{}, byOrg: map[string][]string{},
		byFlight: map[string][]string{}, allByAWB: map[string][]string{}}
}

// Apply implements ReadModel.
func (m *Bookings) Apply(r domain.Record, e domain.Event) {
	if r.Aggregate.Type != domain.AggregateBooking {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	id := r.Aggregate.ID
	b, existed := m.byID[id]
	b = domain.EvolveBooking(b, e)
	m.byID[id] = b
	m.versions[id] = r.Sequence
	if !existed {
		m.order = append(m.order, id)
		m.byOrg[b.OrganizationID] = append(m.byOrg[b.OrganizationID], id)
		m.byFlight[b.FlightID] = append(m.byFlight[b.FlightID], id)
	}
	if b.Status == domain.BookingStatusConfirmed && b.AWBNumber != "" {
		if ids := m.allByAWB[b.AWBNumber]; !slices.Contains(ids, id) {
			m.allByAWB[b.AWBNumber] = append(ids[:len(ids):len(ids)], id)
		}
	}
}

// AllByAWB returns the ids of every booking that used an AWB number,
// oldest first; the last is ByAWB's. A slice handed out is never written
// to again.
func (m *Bookings) AllByAWB(awb string) []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.allByAWB[awb]
}

// any returns the booking of id, whoever may see it.
func (m *Bookings) any(id string) (domain.Booking, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	b, ok := m.byID[id]
	return b, ok
}

// ByAWB returns the latest booking confirmed under an AWB number (it may
// have been cancelled since: the number is still its shipment's).
func (m *Bookings) ByAWB(awb string) (domain.Booking, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	ids := m.allByAWB[awb]
	if len(ids) == 0 {
		return domain.Booking{}, false
	}
	b, ok := m.byID[ids[len(ids)-1]]
	return b, ok
}

// Get returns a booking p may see; others are reported missing.
func (m *Bookings) Get(p domain.Principal, id string) (domain.Booking, bool) {
	b, _, ok := m.GetVersion(p, id)
	return b, ok
}

// GetVersion is Get, with the booking's version: the stream sequence of
// its last event, which changes whenever the booking does.
func (m *Bookings) GetVersion(p domain.Principal, id string) (domain.Booking, uint64, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	b, ok := m.byID[id]
	if !ok || !b.VisibleTo(p) {
		return domain.Booking{}, 0, false
	}
	return b, m.versions[id], true
}

// OnFlight returns the bookings on a flight that p may see, oldest first,
// whatever their status.
func (m *Bookings) OnFlight(p domain.Principal, flightID string) []domain.Booking {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []domain.Booking
	for _, id := range m.byFlight[flightID] {
		if b := m.byID[id]; b.VisibleTo(p) {
			out = append(out, b)
		}
	}
	return out
}

// BookingFilter narrows a booking list; empty fields match everything.
type BookingFilter struct {
	Status, FlightID, QuoteID string
}

// List returns one page (from 1) of the bookings p may see that match f,
// newest first, and how many match in all.
func (m *Bookings) List(p domain.Principal, f BookingFilter, page, limit int) ([]domain.Booking, int) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	ids := m.order
	if p.Role == domain.RoleForwarder {
		ids = m.byOrg[p.OrganizationID]
	}
	return pageOf(ids, true, func(id string) domain.Booking { return m.byID[id] }, func(b domain.Booking) bool {
		return b.VisibleTo(p) && (f.Status == "" || b.Status == f.Status) && (f.FlightID == "" || b.FlightID == f.FlightID) &&
			(f.QuoteID == "" || b.QuoteID == f.QuoteID)
	}, page, limit)
}
