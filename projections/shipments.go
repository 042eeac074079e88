package projections

import (
	"slices"
	"sync"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
)

// Shipments is the read model of shipments by AWB: status timelines and
// waybills.
type Shipments struct {
	mu       sync.RWMutex
	events   map[string][]domain.ShipmentStatusRecorded // by event date, then when recorded
	waybills map[string]domain.Waybills
	filings  map[string]domain.Compliance
}

// NewShipments returns an empty shipments read model.
func NewShipments() *Shipments {
	return &Shipments{events: map[string][]domain.ShipmentStatusRecorded{}, waybills: map[string]domain.Waybills{}, filings: map[string]domain.Compliance{}}
}

// Apply implements ReadModel.
func (m *Shipments) Apply(r eventstore.Record, e domain.Event) {
	switch r.Aggregate.Type {
	case "waybill":
		m.mu.Lock()
		m.waybills[r.Aggregate.ID] = domain.EvolveWaybills(m.waybills[r.Aggregate.ID], e)
		m.mu.Unlock()
		return
	case "compliance":
		m.mu.Lock()
		m.filings[r.Aggregate.ID] = domain.EvolveCompliance(m.filings[r.Aggregate.ID], e)
		m.mu.Unlock()
		return
	}
	s, ok := e.(domain.ShipmentStatusRecorded)
	if !ok {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	list := m.events[s.AWBNumber]
	// After every event of the same date: those keep arrival order.
	i, _ := slices.BinarySearchFunc(list, s, func(a, b domain.ShipmentStatusRecorded) int {
		if c := a.EventDate.Compare(b.EventDate); c != 0 {
			return c
		}
		return -1
	})
	m.events[s.AWBNumber] = slices.Insert(slices.Clone(list), i, s)
}

// Timeline returns a shipment's status events in event order.
func (m *Shipments) Timeline(awb string) []domain.ShipmentStatusRecorded {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.events[awb]
}

// Waybills returns a shipment's master and houses.
func (m *Shipments) Waybills(awb string) domain.Waybills {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.waybills[awb]
}

// Compliance returns a shipment's PLACI and e-CSD.
func (m *Shipments) Compliance(awb string) domain.Compliance {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.filings[awb]
}
