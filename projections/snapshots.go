package projections

import "sync"

// What each read model keeps in a snapshot: every field but its lock.

func (m *Identity) fields() []any {
	return []any{&m.orgs, &m.orgOrder, &m.clients, &m.users, &m.keys, &m.keyByHash, &m.revokedBefore, &m.revokedIDs}
}
func (m *Identity) lock() *sync.RWMutex { return &m.mu }
func (*Identity) empty() snapshotter    { return NewIdentity() }

func (m *Quotes) fields() []any       { return []any{&m.byID, &m.versions, &m.order, &m.byOrg} }
func (m *Quotes) lock() *sync.RWMutex { return &m.mu }
func (*Quotes) empty() snapshotter    { return NewQuotes() }

func (m *Flights) fields() []any       { return []any{&m.byID, &m.versions} }
func (m *Flights) lock() *sync.RWMutex { return &m.mu }
func (*Flights) empty() snapshotter    { return NewFlights() }

func (m *Rates) fields() []any       { return []any{&m.cards} }
func (m *Rates) lock() *sync.RWMutex { return &m.mu }
func (*Rates) empty() snapshotter    { return NewRates() }

func (m *Bookings) fields() []any {
	return []any{&m.byID, &m.versions, &m.order, &m.byOrg, &m.byFlight, &m.allByAWB}
}
func (m *Bookings) lock() *sync.RWMutex { return &m.mu }
func (*Bookings) empty() snapshotter    { return NewBookings() }

func (m *AWBStock) fields() []any       { return []any{&m.requests, &m.versions, &m.order, &m.ledgers} }
func (m *AWBStock) lock() *sync.RWMutex { return &m.mu }
func (*AWBStock) empty() snapshotter    { return NewAWBStock() }

func (m *Reference) fields() []any {
	return []any{&m.airports, &m.airportOrder, &m.airportsByICAO, &m.airportsByCountry, &m.airlines, &m.airlineOrder,
		&m.airlinesByIATA, &m.airlinesByICAO, &m.airlineByPrefix, &m.commodities, &m.dangerousGoods, &m.commodityOrder}
}
func (m *Reference) lock() *sync.RWMutex { return &m.mu }
func (*Reference) empty() snapshotter    { return NewReference() }

// The audit log's counts of heads and entries follow from their chunks,
// and its symbols' numbers from their names: they are made again on
// restore.
func (m *Audit) fields() []any {
	return []any{&m.heads.chunks, &m.lines.chunks, &m.last, &m.shared, &m.symbols.names}
}
func (m *Audit) lock() *sync.RWMutex { return &m.mu }
func (*Audit) empty() snapshotter    { return NewAudit() }

func (m *Audit) restored() {
	m.heads.counted()
	m.lines.counted()
	m.symbols.restored()
	m.byOrg = map[symbol][]uint32{}
	for n := range m.lines.n {
		m.indexLine(uint32(n))
	}
}

// The delivery log's count of lines follows from their chunks, and its
// symbols' numbers from their names: they are made again on restore.
func (m *Webhooks) fields() []any {
	return []any{&m.subs, &m.since, &m.order, &m.deliveries.chunks, &m.byID, &m.byWebhook, &m.sentAs, &m.symbols.names}
}
func (m *Webhooks) lock() *sync.RWMutex { return &m.mu }
func (*Webhooks) empty() snapshotter    { return NewWebhooks() }

func (m *Webhooks) restored() {
	m.deliveries.counted()
	m.symbols.restored()
}

func (m *Shipments) fields() []any {
	return []any{&m.timelines, &m.waybills, &m.filings, &m.versions, &m.flights}
}
func (m *Shipments) lock() *sync.RWMutex { return &m.mu }
func (*Shipments) empty() snapshotter    { return NewShipments() }

func (m *Documents) fields() []any       { return []any{&m.byID, &m.byAWB, &m.stored} }
func (m *Documents) lock() *sync.RWMutex { return &m.mu }
func (*Documents) empty() snapshotter    { return NewDocuments() }
