package projections

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/cargostream/cargostream/domain"
)

// Sources of timeline entries: a status event as posted, or an entry the
// read model derives from another event of the shipment.
const (
	SourceStatus   = "status"
	SourceManifest = domain.StatusFromManifest
	SourceOffload  = domain.StatusFromOffload
	SourceFlight   = domain.StatusFromFlight
	SourceMAWB     = "mawb"
	SourceHAWB     = "hawb"
	SourceDGD      = "dgd"
	SourceCSD      = "csd"
	SourcePLACI    = "placi"
	SourceDocument = "document"
)

// TimelineEntry is one entry of a shipment's timeline. Manifests appear as
// MAN, offloads as DIS/OFLD and its flight's departure and arrival as DEP
// and ARR (status events the shipments reactor records for them), as an
// airline's FSU messages would report them; filings (waybills, declarations, documents) carry their kind as
// the event type (MAWB, HAWB, DGD, CSD, PLACI, DOCUMENT) and have no FSU
// code.
type TimelineEntry struct {
	Event  domain.ShipmentStatusRecorded // not embedded: an entry is not a domain event
	Source string
}

// IsStatus reports whether the entry is a status of the cargo (posted,
// manifest, offload or flight), rather than a filing.
func (e TimelineEntry) IsStatus() bool {
	return e.Source == SourceStatus || e.Source == SourceManifest || e.Source == SourceOffload || e.Source == SourceFlight
}

// Shipments is the read model of shipments by AWB: timelines, waybills
// and declarations.
type Shipments struct {
	mu        sync.RWMutex
	timelines map[string][]TimelineEntry // by event date, then arrival
	waybills  map[string]domain.Waybills
	filings   map[string]domain.Compliance
	// versions are the sequences of the last status event of each
	// shipment aggregate: what a status event's If-Match names.
	versions map[string]uint64
	// flights are the flights whose manifests or offloads named each
	// AWB, in the order they first did: where its history goes on.
	flights map[string][]string
}

// NewShipments returns an empty shipments read model.
func NewShipments() *Shipments {
	return &Shipments{timelines: map[string][]TimelineEntry{}, waybills: map[string]domain.Waybills{}, filings: map[string]domain.Compliance{},
		versions: map[string]uint64{}, flights: map[string][]string{}}
}

// Apply implements ReadModel.
func (m *Shipments) Apply(r domain.Record, e domain.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch r.Aggregate.Type {
	case domain.AggregateWaybill:
		m.waybills[r.Aggregate.ID] = domain.EvolveWaybills(m.waybills[r.Aggregate.ID], e)
	case domain.AggregateCompliance:
		m.filings[r.Aggregate.ID] = domain.EvolveCompliance(m.filings[r.Aggregate.ID], e)
	case domain.AggregateShipment:
		m.versions[r.Aggregate.ID] = r.Sequence
	}
	switch e := e.(type) {
	case domain.ManifestSubmitted:
		for _, l := range slices.Concat(e.Shipments, e.Dropped) {
			m.addFlight(l.AWBNumber, e.FlightID)
		}
	case domain.OffloadReported:
		m.addFlight(e.AWBNumber, e.FlightID)
	case domain.ShipmentStatusRecorded:
		m.add(TimelineEntry{e, cmp.Or(e.Source, SourceStatus)})
	case domain.MAWBCreated:
		m.addFiling(e.AWBNumber, r.EventID, KindMAWB, SourceMAWB, e.CreatedAt, e.Origin, &e.Pieces, &e.WeightKg, "MAWB created")
	case domain.HAWBCreated:
		m.addFiling(e.MAWBNumber, r.EventID, KindHAWB, SourceHAWB, e.CreatedAt, "", &e.Pieces, &e.WeightKg, "HAWB "+e.HAWBNumber+" created")
	case domain.DGDSubmitted:
		m.addFiling(e.AWBNumber, e.DGDID, KindDGD, SourceDGD, e.SubmittedAt, "", nil, &e.NetWeightKg, "e-DGD "+e.UNNumber+" "+e.ProperShippingName)
	case domain.CSDSubmitted:
		m.addFiling(e.AWBNumber, e.CSDID, KindCSD, SourceCSD, e.SubmittedAt, "", nil, nil, "e-CSD, security status "+e.SecurityStatus)
	case domain.PLACISubmitted:
		m.addFiling(e.AWBNumber, e.PLACIID, KindPLACI, SourcePLACI, e.SubmittedAt, e.Origin, e.Pieces, e.WeightKg, "PLACI filed")
	case domain.DocumentUploaded:
		m.addFiling(e.AWBNumber, e.DocumentID, KindDocument, SourceDocument, e.UploadedAt, "", nil, nil, e.DocumentType+" "+e.FileName)
	}
}

// The event types of filings in a timeline.
const (
	KindMAWB     = "MAWB"
	KindHAWB     = "HAWB"
	KindDGD      = "DGD"
	KindCSD      = "CSD"
	KindPLACI    = "PLACI"
	KindDocument = "DOCUMENT"
)

// FilingKinds are the event types of filings, in the order a shipment
// usually gets them.
var FilingKinds = []string{KindMAWB, KindHAWB, KindDGD, KindCSD, KindPLACI, KindDocument}

// IsTimelineType tells whether an event type (with its discrepancy code)
// can be in a timeline: an IATA status code, or a filing's kind.
func IsTimelineType(code, discrepancy string) bool {
	return domain.KnownStatus(code, discrepancy) || (discrepancy == "" && slices.Contains(FilingKinds, code))
}

// addFiling adds the entry of a filing.
func (m *Shipments) addFiling(awb, id, kind, source string, at time.Time, location string, pieces *int, weight *float64, notes string) {
	m.add(TimelineEntry{domain.ShipmentStatusRecorded{AWBNumber: awb, StatusEventID: id, StatusCode: kind, EventDate: at,
		Location: location, Pieces: pieces, Weight: weight, Notes: notes, RecordedAt: at}, source})
}

// add inserts an entry after every entry of the same second: those keep
// arrival order. A status event's date has seconds at most (an FSU,
// minutes), where the service dates a flight's DEP or ARR to the
// nanosecond: an NFD and a DLV posted as at 01:27:04 of a flight that
// arrived at 01:27:04.184 came before its ARR, which was then the
// shipment's latest status though it had been delivered.
func (m *Shipments) add(e TimelineEntry) {
	list := m.timelines[e.Event.AWBNumber]
	i, _ := slices.BinarySearchFunc(list, e, func(a, b TimelineEntry) int {
		if c := a.Event.EventDate.Truncate(time.Second).Compare(b.Event.EventDate.Truncate(time.Second)); c != 0 {
			return c
		}
		return -1
	})
	m.timelines[e.Event.AWBNumber] = inserted(list, i, e)
}

// addFlight notes that a flight's manifest or offload named an AWB.
func (m *Shipments) addFlight(awb, flightID string) {
	if list := m.flights[awb]; !slices.Contains(list, flightID) {
		// A slice handed out by Flights is never written to again.
		m.flights[awb] = append(list[:len(list):len(list)], flightID)
	}
}

// Flights returns the ids of the flights whose manifests or offloads named
// an AWB. The caller must not change the slice.
func (m *Shipments) Flights(awb string) []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.flights[awb]
}

// Timeline returns a shipment's timeline in event order.
func (m *Shipments) Timeline(awb string) []TimelineEntry {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.timelines[awb]
}

// OnRecord reports whether anything is on record of a shipment: status
// events, waybills, filings or documents.
func (m *Shipments) OnRecord(awb string) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.timelines[awb]) > 0
}

// Version returns the version of a shipment's status events: the stream
// sequence of the last one, 0 while it has none.
func (m *Shipments) Version(awb string) uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.versions[awb]
}

// Waybills returns a shipment's master and houses.
func (m *Shipments) Waybills(awb string) domain.Waybills {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.waybills[awb]
}

// Compliance returns a shipment's PLACI, e-CSD and e-DGDs.
func (m *Shipments) Compliance(awb string) domain.Compliance {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.filings[awb]
}
