// Package streamgen writes a realistic history of air cargo to an event
// store, for the benchmarks and tests of replay: organisations, the
// reference data, timetables, rate cards and AWB stock, then forwarders'
// RFQs priced against the flights, most of them booked, confirmed with an
// AWB number from the forwarder's stock, and followed by status events.
// Every event is decided by the domain, as the commands and reactors
// would decide it, and appended through the store with its envelope; the
// steps of many shipments are written at once, so that the store's group
// commit packs them.
package streamgen

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
	"github.com/cargostream/cargostream/projections"
	"github.com/google/uuid"
)

// Options shape a history.
type Options struct {
	Events     int // about how many events to write (a shipment's steps are never cut)
	Forwarders int // default 40
	Writers    int // shipments written at once; default 1024
}

// airlines publish flights from their hub; each is an organisation.
var airlines = []struct {
	code, prefix, hub, aircraft string
	destinations                []string
}{
	{"LH", "020", "FRA", "B77F", []string{"JFK", "ORD", "PVG", "HKG", "DXB", "NRT", "SIN", "GRU"}},
	{"EK", "176", "DXB", "B77F", []string{"FRA", "JFK", "HKG", "LHR", "SIN", "ORD", "PVG", "NBO"}},
	{"CX", "160", "HKG", "B744F", []string{"FRA", "LHR", "JFK", "ORD", "DXB", "SIN", "NRT", "LAX"}},
	{"QR", "157", "DOH", "B77F", []string{"FRA", "LHR", "JFK", "HKG", "PVG", "SIN", "NBO", "ORD"}},
}

// eventsPerShipment is about how many events one RFQ brings, all steps
// counted; it sizes the timetable and the stock.
const eventsPerShipment = 8

// Embedded opens a store on an embedded server with its files in dir,
// appends a history of about o.Events events to it, and returns it open
// with how many it appended.
func Embedded(ctx context.Context, dir string, o Options) (*eventstore.Store, int, error) {
	store, err := eventstore.Open(ctx, eventstore.Options{DataDir: dir})
	if err != nil {
		return nil, 0, err
	}
	n, err := Write(ctx, store, o)
	if err != nil {
		store.Close()
		return nil, n, err
	}
	return store, n, nil
}

// Write appends a history of about o.Events events to store and returns
// how many it appended.
func Write(ctx context.Context, store *eventstore.Store, o Options) (int, error) {
	if o.Forwarders == 0 {
		o.Forwarders = 40
	}
	if o.Writers == 0 {
		o.Writers = 1024
	}
	g := &gen{writers: o.Writers, ctx: ctx, store: store, ref: projections.NewReference(), now: time.Now().UTC(),
		ledgers: map[string]*agg[domain.StockLedger]{}, prefixes: map[string]*agg[domain.AWBPrefixStock]{},
		hubs: map[string]string{}, routes: map[string][]*agg[domain.Flight]{}, flights: map[string]*agg[domain.Flight]{}}
	shipments := max(o.Events/eventsPerShipment, 1)
	// About 60 bookings to a flight.
	g.days = max(3, shipments/(60*len(airlines)*len(airlines[0].destinations))+1)
	if err := g.setUp(o.Forwarders, shipments); err != nil {
		return int(g.written.Load()), err
	}
	var next atomic.Int64
	err := g.each(o.Writers, func(w int) error {
		rnd := rand.New(rand.NewPCG(uint64(w), 1))
		for int(g.written.Load()) < o.Events && ctx.Err() == nil {
			if err := g.shipment(rnd, int(next.Add(1))); err != nil {
				return err
			}
		}
		return nil
	})
	return int(g.written.Load()), err
}

// gen holds what the history has decided so far, as the aggregates'
// states with their last sequences.
type gen struct {
	writers    int
	ctx        context.Context
	store      *eventstore.Store
	ref        *projections.Reference
	now        time.Time
	forwarders []string
	hubs       map[string]string // airline code → hub
	cards      []domain.RateCard
	routes     map[string][]*agg[domain.Flight] // "FRA-JFK" → its flights
	flights    map[string]*agg[domain.Flight]
	days       int // of the timetable, from tomorrow
	ledgers    map[string]*agg[domain.StockLedger]
	prefixes   map[string]*agg[domain.AWBPrefixStock]
	written    atomic.Int64
}

// agg is one aggregate: its state, and the decisions on it handed to
// the store. Decisions on a busy aggregate (a flight, a forwarder's AWB
// stock) follow each other without waiting to be stored in between, as
// the commands' pipelines do, so that they share the store's batches.
type agg[S any] struct {
	mu    sync.Mutex
	id    domain.Aggregate
	state S
	last  uint64               // the last sequence stored
	tail  domain.PendingAppend // the last decision handed over
}

func newAgg[S any](typ, id string) *agg[S] {
	return &agg[S]{id: domain.Aggregate{Type: typ, ID: id}}
}

// view is the aggregate's state as it is now.
func (a *agg[S]) view() S {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.state
}

// by is who issues a command, and for which request.
type by struct {
	principal          domain.Principal
	correlation, cause string
	clientIP           string
}

// decide lets the domain decide on a's state, appends what it decided
// after a's last decision, and returns the events once stored, with the
// id of the last, which the steps it causes name.
func decide[S any](g *gen, a *agg[S], who by, evolve func(S, domain.Event) S, decide func(S) ([]domain.Event, error)) ([]domain.Event, string, error) {
	a.mu.Lock()
	events, err := decide(a.state)
	if err != nil || len(events) == 0 {
		a.mu.Unlock()
		return events, "", err
	}
	envelopes := make([]domain.Envelope, len(events))
	command := uuid.NewString()
	for i, e := range events {
		data, err := json.Marshal(e)
		if err != nil {
			a.mu.Unlock()
			return nil, "", err
		}
		envelopes[i] = domain.Envelope{Type: e.EventType(), SchemaVersion: 1, EventID: uuid.NewString(), CommandID: command,
			CorrelationID: who.correlation, CausationID: who.cause, Actor: who.principal.Subject, Tenant: who.principal.OrganizationID,
			ClientIP: who.clientIP, OccurredAt: time.Now().UTC(), Data: data}
	}
	pending, err := g.store.Submit(g.ctx, domain.Submission{Aggregate: a.id, Expected: a.last, After: a.tail, Events: envelopes})
	if err == nil {
		for _, e := range events {
			a.state = evolve(a.state, e)
		}
		a.tail = pending[0]
	}
	a.mu.Unlock()
	if err != nil {
		return nil, "", fmt.Errorf("streamgen: %s: %w", a.id, err)
	}
	seqs, err := pending[0].Wait(g.ctx)
	if err != nil {
		return nil, "", fmt.Errorf("streamgen: %s: %w", a.id, err)
	}
	a.mu.Lock()
	a.last = max(a.last, seqs[len(seqs)-1])
	a.mu.Unlock()
	g.written.Add(int64(len(events)))
	return events, envelopes[len(envelopes)-1].EventID, nil
}

func keep[S any](s S, _ domain.Event) S { return s }

var system = by{principal: domain.Principal{Subject: "system:cargod"}, correlation: "streamgen"}

// setUp writes what shipments need: organisations, reference data, rate
// cards, a timetable with room for them, and the forwarders' AWB stock.
func (g *gen) setUp(forwarders, shipments int) error {
	if err := g.reference(); err != nil {
		return err
	}
	var orgs []domain.CreateOrganization
	for _, a := range airlines {
		orgs = append(orgs, domain.CreateOrganization{OrganizationID: "airline-" + a.code, Name: a.code + " Cargo", Role: domain.RoleAirline,
			AWBPrefix: a.prefix, AirlineCode: a.code})
	}
	for i := range forwarders {
		g.forwarders = append(g.forwarders, fmt.Sprintf("forwarder-%02d", i))
		orgs = append(orgs, domain.CreateOrganization{OrganizationID: g.forwarders[i], Name: fmt.Sprintf("Forwarder %02d Logistics", i), Role: domain.RoleForwarder})
	}
	if err := g.each(len(orgs), func(i int) error { return g.org(orgs[i]) }); err != nil {
		return err
	}
	var flights []*agg[domain.Flight]
	var publish []domain.FlightScheduled
	for _, a := range airlines {
		g.hubs[a.code] = a.hub
		if err := g.rateCard(airline(a.code, a.prefix)); err != nil {
			return err
		}
		timetable, err := g.timetable(a.code, a.prefix, a.hub, a.aircraft, a.destinations)
		if err != nil {
			return err
		}
		for _, e := range timetable {
			f := newAgg[domain.Flight](domain.AggregateFlight, e.FlightID)
			g.routes[e.Origin+"-"+e.Destination] = append(g.routes[e.Origin+"-"+e.Destination], f)
			g.flights[f.id.ID] = f
			flights, publish = append(flights, f), append(publish, e)
		}
	}
	if err := g.each(len(flights), func(i int) error {
		_, _, err := decide(g, flights[i], airline(publish[i].Carrier, publish[i].AWBPrefix), domain.EvolveFlight,
			func(f domain.Flight) ([]domain.Event, error) { return domain.DecideScheduleFlight(f, publish[i]) })
		return err
	}); err != nil {
		return err
	}
	// Each ledger gets numbers for twice its share of the bookings.
	perLedger := 2*shipments/(forwarders*len(airlines)) + 100
	for _, a := range airlines {
		g.prefixes[a.prefix] = newAgg[domain.AWBPrefixStock](domain.AggregateAWBPrefix, a.prefix)
		for _, f := range g.forwarders {
			g.ledgers[f+"-"+a.prefix] = newAgg[domain.StockLedger](domain.AggregateStockLedger, f+"-"+a.prefix)
		}
	}
	return g.each(forwarders*len(airlines), func(i int) error {
		a := airlines[i%len(airlines)]
		return g.stock(g.forwarders[i/len(airlines)], a.code, a.prefix, perLedger)
	})
}

// each runs fn for 0 to n-1, as many at once as there are writers, and
// returns the first error.
func (g *gen) each(n int, fn func(i int) error) error {
	var wg sync.WaitGroup
	var next atomic.Int64
	errs := make(chan error, g.writers)
	for range min(n, g.writers) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				if err := fn(i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// org creates an organisation and its API client.
func (g *gen) org(c domain.CreateOrganization) error {
	c.At = g.now
	o := newAgg[domain.Organization](domain.AggregateOrganization, c.OrganizationID)
	if _, _, err := decide(g, o, system, domain.EvolveOrganization, func(s domain.Organization) ([]domain.Event, error) {
		return domain.DecideCreateOrganization(s, c)
	}); err != nil {
		return err
	}
	cl := newAgg[domain.Client](domain.AggregateClient, c.OrganizationID)
	_, _, err := decide(g, cl, system, domain.EvolveClient, func(s domain.Client) ([]domain.Event, error) {
		return domain.DecideCreateClient(s, o.view(), domain.CreateClient{ClientID: c.OrganizationID, OrganizationID: c.OrganizationID,
			SecretHash: "$2a$04$streamgen.streamgen.streamgen.streamgen.streamgen.stre", At: g.now})
	})
	return err
}

// reference imports the built-in reference data in chunks, as an import
// does, and keeps it for the domain's checks.
func (g *gen) reference() error {
	const chunk = 500
	for _, c := range []domain.ReferenceChanged{
		{Kind: domain.RefAirports, Airports: domain.BuiltinAirports()},
		{Kind: domain.RefAirlines, Airlines: domain.BuiltinAirlines()},
		{Kind: domain.RefCommodities, Commodities: domain.BuiltinCommodities()},
	} {
		a := newAgg[domain.Reference](domain.AggregateReference, c.Kind)
		for from := 0; ; from += chunk {
			part := domain.ReferenceChanged{Kind: c.Kind, Source: "built-in", ChangedAt: g.now,
				Airports: window(c.Airports, from, chunk), Airlines: window(c.Airlines, from, chunk), Commodities: window(c.Commodities, from, chunk)}
			if len(part.Airports)+len(part.Airlines)+len(part.Commodities) == 0 {
				break
			}
			events, _, err := decide(g, a, system, domain.EvolveReference, func(r domain.Reference) ([]domain.Event, error) {
				return domain.DecideReferenceChange(r, part)
			})
			if err != nil {
				return err
			}
			for _, e := range events {
				g.ref.Apply(domain.Record{}, e)
			}
		}
	}
	return nil
}

func window[T any](rows []T, from, n int) []T {
	if from >= len(rows) {
		return nil
	}
	return rows[from:min(from+n, len(rows))]
}

// timetable is the daily flights of an airline from its hub, for as many
// days as the shipments need.
func (g *gen) timetable(code, prefix, hub, aircraft string, destinations []string) ([]domain.FlightScheduled, error) {
	from, err := g.zone(hub)
	if err != nil {
		return nil, err
	}
	var flights []domain.FlightScheduled
	for d := 1; d <= g.days; d++ {
		departs := time.Date(g.now.Year(), g.now.Month(), g.now.Day()+d, 10, 0, 0, 0, from)
		for i, to := range destinations {
			zone, err := g.zone(to)
			if err != nil {
				return nil, err
			}
			arrives := departs.Add(9 * time.Hour).In(zone)
			c := domain.ScheduleFlight{Carrier: code, AWBPrefix: prefix, FlightNumber: fmt.Sprintf("%s%d", code, 8000+i),
				Origin: hub, Destination: to, DepartureDate: departs.Format(time.DateOnly), DepartureTime: departs.Format("15:04"),
				ArrivalDate: arrives.Format(time.DateOnly), ArrivalTime: arrives.Format("15:04"), AircraftType: aircraft, At: g.now}
			e, err := c.Normalise("", g.ref)
			if err != nil {
				return nil, fmt.Errorf("streamgen: flight %s %s: %w", c.FlightNumber, c.DepartureDate, err)
			}
			flights = append(flights, e)
		}
	}
	return flights, nil
}

// rateCard sets an airline's rate card from its hub.
func (g *gen) rateCard(airline by) error {
	code, hub := airline.principal.AirlineCode, g.hubs[airline.principal.AirlineCode]
	events, err := domain.DecideSetRateCard(domain.SetRateCard{Carrier: code, Origin: hub, Destination: "*", Currency: "USD", MinimumCharge: 75,
		WeightBreaks: map[string]float64{"N": 4.5, "45": 3.8, "100": 3.2, "300": 2.9, "500": 2.6, "1000": 2.3},
		Surcharges:   map[string]float64{"DGR": 0.6, "PER": 0.25}, ValidFrom: "2020-01-01", ValidTo: "2099-12-31", At: g.now}, g.ref)
	if err != nil {
		return err
	}
	g.cards = append(g.cards, events[0].(domain.RateCardSet).RateCard)
	rc := newAgg[domain.RateCard](domain.AggregateRateCard, domain.RateCardID(code, hub, "*"))
	_, _, err = decide(g, rc, airline, keep[domain.RateCard], func(domain.RateCard) ([]domain.Event, error) { return events, nil })
	return err
}

// airline is who an airline's commands are by.
func airline(code, prefix string) by {
	return by{principal: domain.Principal{Subject: "client:airline-" + code, OrganizationID: "airline-" + code,
		Role: domain.RoleAirline, AirlineCode: code, AWBPrefix: prefix}, correlation: uuid.NewString(), clientIP: "198.51.100.7"}
}

// zone is the time zone of an airport of the reference data.
func (g *gen) zone(code string) (*time.Location, error) {
	a, ok := g.ref.Airport(code)
	if !ok {
		return nil, fmt.Errorf("streamgen: no airport %s in the reference data", code)
	}
	return time.LoadLocation(a.Timezone)
}

// stock has a forwarder ask an airline for AWB numbers, n at least, and
// the airline grant them, as the stock commands do: the request, the
// range on the prefix, the reply, and the forwarder's ledger.
func (g *gen) stock(org, code, prefix string, n int) error {
	forwarder := by{principal: domain.Principal{Subject: "client:" + org, OrganizationID: org, Role: domain.RoleForwarder},
		correlation: uuid.NewString(), clientIP: "192.0.2.10"}
	airline := airline(code, prefix)
	ledger, prefixes := g.ledgers[org+"-"+prefix], g.prefixes[prefix]
	for granted := 0; granted < n; {
		count := min(n-granted, 10000)
		req := newAgg[domain.StockRequest](domain.AggregateStockRequest, uuid.NewString())
		validity := 12
		if _, _, err := decide(g, req, forwarder, domain.EvolveStockRequest, func(r domain.StockRequest) ([]domain.Event, error) {
			return domain.DecideRequestStock(r, domain.RequestStock{RequestID: req.id.ID, OrganizationID: org, AirlinePrefix: prefix,
				RequestedStock: &count, ValidityPeriod: &validity, At: g.now}, func(string) bool { return true })
		}); err != nil {
			return err
		}
		reply := domain.ReplyStock{Status: domain.StockStatusApproved, AllocatedStock: &count, ValidFrom: g.now.Format(time.DateOnly),
			ValidTo: req.state.ValidUntil().Format(time.DateOnly), At: g.now}
		want, err := reply.Validate(req.state)
		if err != nil {
			return err
		}
		if _, _, err := decide(g, prefixes, airline, domain.EvolveAWBPrefixStock, func(s domain.AWBPrefixStock) ([]domain.Event, error) {
			// The generated stream records no shipment before its stock.
			return domain.DecideAllocateRange(s, prefix, req.id.ID, org, want, count, func(int) bool { return false })
		}); err != nil {
			return err
		}
		allocated := prefixes.view().Ranges[req.id.ID]
		if _, _, err := decide(g, req, airline, domain.EvolveStockRequest, func(r domain.StockRequest) ([]domain.Event, error) {
			return domain.DecideReplyStock(r, reply, allocated)
		}); err != nil {
			return err
		}
		if _, _, err := decide(g, ledger, airline, domain.EvolveStockLedger, func(l domain.StockLedger) ([]domain.Event, error) {
			// A new request's range takes no number back.
			return domain.DecideSetStock(l, org, prefix, domain.LedgerRange{RequestID: req.id.ID, Range: allocated,
				ValidFrom: req.state.ValidFrom, ValidTo: req.state.ValidTo}, func(int) bool { return false })
		}); err != nil {
			return err
		}
		granted += count
	}
	return nil
}
