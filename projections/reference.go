package projections

import (
	"slices"
	"strings"
	"sync"

	"github.com/cargostream/cargostream/domain"
)

// Reference is the read model of airports, airlines and commodities, with
// indexes for the filters of the reference endpoints and for the lookups
// of validation elsewhere: answers come from memory, never from the stream.
type Reference struct {
	mu sync.RWMutex

	airports          map[string]domain.Airport  // by IATA code
	airportOrder      []string                   // IATA codes, sorted
	airportsByICAO    map[string]map[string]bool // two may share one (Berlin's old and new airports, in OpenFlights)
	airportsByCountry map[string]map[string]bool

	airlines        map[string]domain.Airline // by Key (IATA and ICAO codes)
	airlineOrder    []string                  // keys, sorted
	airlinesByIATA  map[string]map[string]bool
	airlinesByICAO  map[string]map[string]bool
	airlineByPrefix map[string]string

	commodities    map[string]domain.KnownCommodity // by code
	dangerousGoods map[string]string                // commodity code by UN number
	commodityOrder []string
}

// NewReference returns an empty reference read model.
func NewReference() *Reference {
	return &Reference{
		airports: map[string]domain.Airport{}, airportsByICAO: map[string]map[string]bool{}, airportsByCountry: map[string]map[string]bool{},
		airlines: map[string]domain.Airline{}, airlinesByIATA: map[string]map[string]bool{}, airlinesByICAO: map[string]map[string]bool{}, airlineByPrefix: map[string]string{},
		commodities: map[string]domain.KnownCommodity{}, dangerousGoods: map[string]string{},
	}
}

// Apply implements ReadModel.
func (m *Reference) Apply(_ domain.Record, e domain.Event) {
	c, ok := e.(domain.ReferenceChanged)
	if !ok {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range c.Airports {
		if old, ok := m.airports[a.IATACode]; ok {
			delete(m.airportsByICAO[old.ICAOCode], old.IATACode)
			delete(m.airportsByCountry[old.Country], old.IATACode)
		} else {
			m.airportOrder = insertSorted(m.airportOrder, a.IATACode)
		}
		m.airports[a.IATACode] = a
		if a.ICAOCode != "" {
			addToSet(m.airportsByICAO, a.ICAOCode, a.IATACode)
		}
		addToSet(m.airportsByCountry, a.Country, a.IATACode)
	}
	for _, a := range c.Airlines {
		key := a.Key()
		if old, ok := m.airlines[key]; ok {
			if m.airlineByPrefix[old.Prefix] == key {
				delete(m.airlineByPrefix, old.Prefix)
			}
		} else {
			m.airlineOrder = insertSorted(m.airlineOrder, key)
		}
		m.airlines[key] = a
		addToSet(m.airlinesByIATA, a.IATACode, key)
		if a.ICAOCode != "" {
			addToSet(m.airlinesByICAO, a.ICAOCode, key)
		}
		if a.Prefix != "" {
			m.airlineByPrefix[a.Prefix] = key
		}
	}
	for _, k := range c.Commodities {
		if _, ok := m.commodities[k.Code]; !ok {
			m.commodityOrder = insertSorted(m.commodityOrder, k.Code)
		}
		m.commodities[k.Code] = k
		// The dangerous-goods table's row (coded by its UN number) names
		// the goods; other commodities only stand in until one is loaded.
		if k.UNNumber != "" && (k.Code == k.UNNumber || m.dangerousGoods[k.UNNumber] == "") {
			m.dangerousGoods[k.UNNumber] = k.Code
		}
	}
}

func insertSorted(list []string, s string) []string {
	i, _ := slices.BinarySearch(list, s)
	return slices.Insert(list, i, s)
}

func addToSet(index map[string]map[string]bool, key, value string) {
	if index[key] == nil {
		index[key] = map[string]bool{}
	}
	index[key][value] = true
}

// sortedKeys lists a set in order.
func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// contains reports whether s holds sub, ignoring case; sub is lower case.
func contains(s, sub string) bool { return sub == "" || strings.Contains(strings.ToLower(s), sub) }

// Airport returns an airport by IATA code.
func (m *Reference) Airport(code string) (domain.Airport, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	a, ok := m.airports[code]
	return a, ok
}

// AirlineByPrefix returns the airline with an AWB prefix.
func (m *Reference) AirlineByPrefix(prefix string) (domain.Airline, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	a, ok := m.airlines[m.airlineByPrefix[prefix]]
	return a, ok
}

// Commodity returns a commodity by code.
func (m *Reference) Commodity(code string) (domain.KnownCommodity, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	c, ok := m.commodities[code]
	return c, ok
}

// DangerousGood returns the commodity that names a UN number.
func (m *Reference) DangerousGood(unNumber string) (domain.KnownCommodity, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	c, ok := m.commodities[m.dangerousGoods[unNumber]]
	return c, ok
}

// Counts reports how many rows of each kind are loaded.
func (m *Reference) Counts() (airports, airlines, commodities int) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.airports), len(m.airlines), len(m.commodities)
}

// AirportFilter narrows the airport list; codes exact, name and city
// substrings ignoring case.
type AirportFilter struct{ IATACode, ICAOCode, Name, City, Country string }

// Airports returns one page of the airports matching f, by IATA code.
func (m *Reference) Airports(f AirportFilter, page, limit int) ([]domain.Airport, int) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	ids := m.airportOrder
	switch {
	case f.IATACode != "":
		ids = []string{f.IATACode}
	case f.ICAOCode != "":
		ids = sortedKeys(m.airportsByICAO[f.ICAOCode])
	case f.Country != "":
		ids = sortedKeys(m.airportsByCountry[f.Country])
	}
	name, city := strings.ToLower(f.Name), strings.ToLower(f.City)
	return pageOf(ids, false, func(id string) domain.Airport { return m.airports[id] }, func(a domain.Airport) bool {
		return a.IATACode != "" && (f.IATACode == "" || a.IATACode == f.IATACode) && (f.ICAOCode == "" || a.ICAOCode == f.ICAOCode) &&
			(f.Country == "" || a.Country == f.Country) && contains(a.Name, name) && contains(a.City, city)
	}, page, limit)
}

// AirlineFilter narrows the airline list; codes exact, name a substring
// ignoring case.
type AirlineFilter struct{ IATACode, ICAOCode, Name, Country, Alliance string }

// Airlines returns one page of the airlines matching f, by IATA code (and
// ICAO code where two share one).
func (m *Reference) Airlines(f AirlineFilter, page, limit int) ([]domain.Airline, int) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	ids := m.airlineOrder
	switch {
	case f.IATACode != "":
		ids = sortedKeys(m.airlinesByIATA[f.IATACode])
	case f.ICAOCode != "":
		ids = sortedKeys(m.airlinesByICAO[f.ICAOCode])
	}
	name, alliance := strings.ToLower(f.Name), strings.ToLower(f.Alliance)
	return pageOf(ids, false, func(id string) domain.Airline { return m.airlines[id] }, func(a domain.Airline) bool {
		return a.IATACode != "" && (f.IATACode == "" || a.IATACode == f.IATACode) && (f.ICAOCode == "" || a.ICAOCode == f.ICAOCode) &&
			(f.Country == "" || a.Country == f.Country) && (alliance == "" || strings.ToLower(a.Alliance) == alliance) && contains(a.Name, name)
	}, page, limit)
}

// CommodityFilter narrows the commodity list: code and HS code exact (an
// HS code also matches the codes below it), name a substring ignoring
// case, dangerous goods "true" or "false".
type CommodityFilter struct {
	Code, Name, HSCode string
	DangerousGoods     *bool
}

// Commodities returns one page of the commodities matching f, by code.
func (m *Reference) Commodities(f CommodityFilter, page, limit int) ([]domain.KnownCommodity, int) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	ids := m.commodityOrder
	if f.Code != "" {
		ids = []string{f.Code}
	}
	name := strings.ToLower(f.Name)
	return pageOf(ids, false, func(id string) domain.KnownCommodity { return m.commodities[id] }, func(c domain.KnownCommodity) bool {
		return c.Code != "" && (f.Code == "" || c.Code == f.Code) && (f.HSCode == "" || strings.HasPrefix(c.HSCode, f.HSCode)) &&
			(f.DangerousGoods == nil || c.DangerousGoods == *f.DangerousGoods) && contains(c.Name, name)
	}, page, limit)
}
