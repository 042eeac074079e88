package projections

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/cargostream/cargostream/domain"
)

// Flights is the read model of the timetable, with each flight's
// reservations: the source of GET /api/flights, GET /api/capacity and of
// pricing.
type Flights struct {
	mu       sync.RWMutex
	byID     map[string]domain.Flight
	versions map[string]uint64 // id → sequence of the flight's last event

	// Every flight, and each route's ("FRA-JFK"), by departure: indexes,
	// made again from byID on restore. A flight published out of that
	// order is appended, and its list sorted when next read: a timetable
	// published flight number by flight number, as timetable files list
	// it, would otherwise move a list's tail for each of its flights.
	order   *departures
	byRoute map[string]*departures
}

// A departure is a flight's place in a list by departure.
type departure struct {
	at time.Time
	id string
}

// compareDepartures orders flights by departure, and then by id.
func compareDepartures(a, b departure) int {
	if c := a.at.Compare(b.at); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

// departures is a list of flights in departure order, but for those from
// sorted on: appended since the list was last sorted.
type departures struct {
	list   []departure
	sorted int
}

// add appends d: to the part in order, if it departs after the last.
func (l *departures) add(d departure) {
	n := len(l.list)
	if l.sorted == n && (n == 0 || compareDepartures(l.list[n-1], d) < 0) {
		l.sorted = n + 1
	}
	l.list = append(l.list, d)
}

// inOrder says whether the whole list is in departure order.
func (l *departures) inOrder() bool { return l.sorted == len(l.list) }

// sort sorts what was appended since the list was last sorted, and
// merges it into the rest.
func (l *departures) sort() {
	if l.inOrder() {
		return // sorted by another reader meanwhile
	}
	head, tail := l.list[:l.sorted], l.list[l.sorted:]
	slices.SortFunc(tail, compareDepartures)
	merged := make([]departure, 0, len(l.list))
	for len(head) > 0 && len(tail) > 0 {
		if compareDepartures(tail[0], head[0]) < 0 {
			merged, tail = append(merged, tail[0]), tail[1:]
		} else {
			merged, head = append(merged, head[0]), head[1:]
		}
	}
	l.list = append(append(merged, head...), tail...)
	l.sorted = len(l.list)
}

// NewFlights returns an empty flights read model.
func NewFlights() *Flights {
	return &Flights{byID: map[string]domain.Flight{}, versions: map[string]uint64{}, order: &departures{},
		byRoute: map[string]*departures{}}
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
	if !existed {
		m.add(f)
	}
}

// add puts f in the lists it belongs in.
func (m *Flights) add(f domain.Flight) {
	route := f.Origin + "-" + f.Destination
	if m.byRoute[route] == nil {
		m.byRoute[route] = &departures{}
	}
	for _, l := range []*departures{m.order, m.byRoute[route]} {
		l.add(departure{f.DepartsAt, f.ID})
	}
}

// readSorted takes the read lock and returns the list of route (every
// flight's for "") in departure order, sorting it first, under the write
// lock, if flights were added out of order since it was last read. The
// caller lets go of the read lock.
func (m *Flights) readSorted(route string) []departure {
	list := func() *departures {
		if route == "" {
			return m.order
		}
		return m.byRoute[route]
	}
	for {
		m.mu.RLock()
		l := list()
		if l == nil {
			return nil
		}
		if l.inOrder() {
			return l.list
		}
		m.mu.RUnlock()
		m.mu.Lock()
		list().sort()
		m.mu.Unlock()
	}
}

// restored makes the lists again: a snapshot keeps the flights alone.
func (m *Flights) restored() {
	m.order, m.byRoute = &departures{}, map[string]*departures{}
	for _, f := range m.byID {
		m.add(f)
	}
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
	list := m.readSorted(origin + "-" + destination)
	defer m.mu.RUnlock()
	out := make([]domain.Flight, len(list))
	for i, d := range list {
		out[i] = m.byID[d.id]
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
	route := ""
	if f.Origin != "" && f.Destination != "" {
		route = f.Origin + "-" + f.Destination
	}
	list := m.readSorted(route)
	defer m.mu.RUnlock()
	return pageOf(list, false, func(d departure) domain.Flight { return m.byID[d.id] }, f.matches, page, limit)
}
