package eventstore

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Envelope headers. They carry everything about an event but its payload,
// so consumers can filter and route without decoding the body. They use
// our own prefix: the Nats- prefix is reserved by the server.
const (
	hdrType          = "Cargo-Event-Type"
	hdrSchemaVersion = "Cargo-Schema-Version"
	hdrEventID       = "Cargo-Event-Id"
	hdrCommandID     = "Cargo-Command-Id"
	hdrCorrelationID = "Cargo-Correlation-Id"
	hdrCausationID   = "Cargo-Causation-Id"
	hdrActor         = "Cargo-Actor"
	hdrTenant        = "Cargo-Tenant"
	hdrOccurredAt    = "Cargo-Occurred-At"
)

// Aggregate names the stream of one aggregate instance, such as the quote
// with a given id. Each aggregate has a subject of its own, which is what
// optimistic concurrency is checked against.
type Aggregate struct {
	Type string
	ID   string
}

func (a Aggregate) String() string { return a.Type + "/" + a.ID }

// validToken reports whether s can be one token of a NATS subject.
func validToken(s string) bool {
	return s != "" && !strings.ContainsAny(s, ". \t\r\n*>")
}

// Event is an event to append, or one read back as part of a Record.
type Event struct {
	Type          string
	SchemaVersion int
	EventID       string
	CommandID     string
	CorrelationID string
	CausationID   string
	Actor         string
	Tenant        string
	OccurredAt    time.Time
	Data          []byte
}

// Record is a stored event with its position in the stream.
type Record struct {
	Event
	Aggregate Aggregate
	Sequence  uint64 // stream sequence: the global order of all events
}

func (e Event) header() nats.Header {
	h := nats.Header{}
	h.Set(hdrType, e.Type)
	h.Set(hdrSchemaVersion, strconv.Itoa(e.SchemaVersion))
	h.Set(hdrEventID, e.EventID)
	h.Set(hdrOccurredAt, e.OccurredAt.UTC().Format(time.RFC3339Nano))
	for k, v := range map[string]string{
		hdrCommandID: e.CommandID, hdrCorrelationID: e.CorrelationID, hdrCausationID: e.CausationID,
		hdrActor: e.Actor, hdrTenant: e.Tenant,
	} {
		if v != "" {
			h.Set(k, v)
		}
	}
	return h
}

// recordFrom turns a stored message back into a Record.
func (s *Store) recordFrom(subject string, seq uint64, h nats.Header, data []byte) (Record, error) {
	agg, ok := s.aggregateOf(subject)
	if !ok {
		return Record{}, fmt.Errorf("eventstore: subject %q is not an aggregate subject", subject)
	}
	version, err := strconv.Atoi(h.Get(hdrSchemaVersion))
	if err != nil {
		return Record{}, fmt.Errorf("eventstore: sequence %d: bad %s header %q", seq, hdrSchemaVersion, h.Get(hdrSchemaVersion))
	}
	at, err := time.Parse(time.RFC3339Nano, h.Get(hdrOccurredAt))
	if err != nil {
		return Record{}, fmt.Errorf("eventstore: sequence %d: bad %s header: %w", seq, hdrOccurredAt, err)
	}
	r := Record{
		Aggregate: agg,
		Sequence:  seq,
		Event: Event{
			Type:          h.Get(hdrType),
			SchemaVersion: version,
			EventID:       h.Get(hdrEventID),
			CommandID:     h.Get(hdrCommandID),
			CorrelationID: h.Get(hdrCorrelationID),
			CausationID:   h.Get(hdrCausationID),
			Actor:         h.Get(hdrActor),
			Tenant:        h.Get(hdrTenant),
			OccurredAt:    at,
			Data:          data,
		},
	}
	return s.upcast(r)
}

func (s *Store) recordFromMsg(m jetstream.Msg) (Record, error) {
	meta, err := m.Metadata()
	if err != nil {
		return Record{}, err
	}
	return s.recordFrom(m.Subject(), meta.Sequence.Stream, m.Headers(), m.Data())
}

func (s *Store) subject(a Aggregate) string {
	return s.prefix + ".evt." + a.Type + "." + a.ID
}

func (s *Store) aggregateOf(subject string) (Aggregate, bool) {
	rest, ok := strings.CutPrefix(subject, s.prefix+".evt.")
	if !ok {
		return Aggregate{}, false
	}
	typ, id, ok := strings.Cut(rest, ".")
	return Aggregate{Type: typ, ID: id}, ok
}
