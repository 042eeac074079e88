package projections

import (
	"cmp"
	"slices"
	"sync"

	"github.com/cargostream/cargostream/domain"
)

// Flights is the read model of the timetable, with each flight's
// reservations: the source of GET /api/flights, GET /api/capacity and of
// pricing.
type Flights struct {
	mu       sync.RWMutex
	byID     map[string]domain.Flight
	versions map[string]uint64   // id → sequence of the flight's last event
	order    []string            // ids by departure time, then flight number
	byRoute  map[string][]string // "FRA-JFK" → ids
}

// NewFlights returns an empty flights read model.
func NewFlights() *Flights {
	return &Flights{byID: map[string]domain.Flight{}, versions: map[string]uint64{}, byRoute: map[string][]string{}}
}

// Apply implements ReadModel.
func (m *Flights) Apply(r domain.Record, e domain.Event) {
	if r.Aggregate.Type != domain.AggregateFlight {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	id := r.Aggregate.ID
	f, existed := m.byID[id]
	f = domain.EvolveFlight(f, e)
	m.byID[id] = f
	m.versions[id] = r.Sequence
	if existed {
		return
	}
	route := f.Origin + "-" + f.Destination
	m.order = m.insertByDeparture(m.order, f)
	m.byRoute[route] = m.insertByDeparture(m.byRoute[route], f)
}

// insertByDeparture adds f's id to ids, which are kept in departure order.
func (m *Flights) insertByDeparture(ids []string, f domain.Flight) []string {
	i, _ := slices.BinarySearchFunc(ids, f, func(id string, f domain.Flight) int {
		g := m.byID[id]
		if c := g.DepartsAt.Compare(f.DepartsAt); c != 0 {
			return c
		}
		return cmp.Compare(g.ID, f.ID)
	})
	return slices.Insert(ids, i, f.ID)
}

// Get returns a flight by id.
func (m *Flights) Get(id string) (domain.Flight, bool) {
	f, _, ok := m.GetVersion(id)
	return f, ok
}

// GetVersion is Get, with the flight's version: the stream sequence of
// its last event.
func (m *Flights) GetVersion(id string) (domain.Flight, uint64, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	f, ok := m.byID[id]
	return f, m.versions[id], ok
}

// FlightsBetween returns every flight from origin to destination.
func (m *Flights) FlightsBetween(origin, destination string) []domain.Flight {
	m.mu.RLock()
	defer m.mu.RUnlock()
	ids := m.byRoute[origin+"-"+destination]
	out := make([]domain.Flight, len(ids))
	for i, id := range ids {
		out[i] = m.byID[id]
	}
	return out
}

// FlightFilter narrows a flight list; empty fields match everything.
type FlightFilter struct {
	Origin, Destination, Status, Date, FlightNumber, AircraftType string
}

func (f FlightFilter) matches(fl domain.Flight) bool {
	return (f.Origin == "" || fl.Origin == f.Origin) && (f.Destination == "" || fl.Destination == f.Destination) &&
		(f.Status == "" || fl.Status == f.Status) && (f.Date == "" || fl.DepartureDate == f.Date) &&
		(f.FlightNumber == "" || fl.FlightNumber == f.FlightNumber) && (f.AircraftType == "" || fl.AircraftType == f.AircraftType)
}

// List returns one page (from 1) of the flights matching f, by departure,
// and how many match in all.
func (m *Flights) List(f FlightFilter, page, limit int) ([]domain.Flight, int) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	ids := m.order
	if f.Origin != "" && f.Destination != "" {
		ids = m.byRoute[f.Origin+"-"+f.Destination]
	}
	return pageOf(ids, false, func(id string) domain.Flight { return m.byID[id] }, f.matches, page, limit)
}
