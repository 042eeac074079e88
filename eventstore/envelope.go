package eventstore

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cargostream/cargostream/domain"
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
	hdrClientIP      = "Cargo-Client-Ip"
	hdrOccurredAt    = "Cargo-Occurred-At"
)

// validToken reports whether s can be one token of a NATS subject.
func validToken(s string) bool {
	return s != "" && !strings.ContainsAny(s, ". \t\r\n*>")
}

// header is the envelope of e, as message headers.
func header(e domain.Envelope) nats.Header {
	h := nats.Header{}
	h.Set(hdrType, e.Type)
	h.Set(hdrSchemaVersion, strconv.Itoa(e.SchemaVersion))
	h.Set(hdrEventID, e.EventID)
	h.Set(hdrOccurredAt, e.OccurredAt.UTC().Format(time.RFC3339Nano))
	for k, v := range map[string]string{
		hdrCommandID: e.CommandID, hdrCorrelationID: e.CorrelationID, hdrCausationID: e.CausationID,
		hdrActor: e.Actor, hdrTenant: e.Tenant, hdrClientIP: e.ClientIP,
	} {
		if v != "" {
			h.Set(k, v)
		}
	}
	return h
}

// recordFrom turns a stored message back into a Record. A message it
// cannot read (missing or bad envelope headers, a failing upcaster) still
// yields a Record with its sequence and aggregate, but without a type, and
// an error saying why: followers log it and move past it, so one bad
// message cannot stop every read model and reactor.
func (s *Store) recordFrom(subject string, seq uint64, stored time.Time, h nats.Header, data []byte) (domain.Record, error) {
	agg := s.aggregateOf(subject)
	// nats.go's header values are slices of the message's whole header
	// block (nats.DecodeHeadersMsg): a read model keeping one of them (an
	// event id, an actor) would keep all of it, some 600 bytes. Each gets
	// memory of its own here, once, for every holder.
	own := func(key string) string { return strings.Clone(h.Get(key)) }
	// UTC, whichever way it was read (a consumer's metadata gives local
	// time): a snapshot holds it, and compares equal to a replay's.
	r := domain.Record{Aggregate: agg, Sequence: seq, StoredAt: stored.UTC(), Envelope: domain.Envelope{
		EventID: own(hdrEventID), CommandID: own(hdrCommandID), CorrelationID: own(hdrCorrelationID),
		CausationID: own(hdrCausationID), Actor: own(hdrActor), Tenant: own(hdrTenant), ClientIP: own(hdrClientIP), Data: data,
	}}
	var err error
	if r.SchemaVersion, err = strconv.Atoi(h.Get(hdrSchemaVersion)); err != nil {
		return r, fmt.Errorf("eventstore: sequence %d on %s: bad %s header %q", seq, subject, hdrSchemaVersion, h.Get(hdrSchemaVersion))
	}
	if r.OccurredAt, err = time.Parse(time.RFC3339Nano, h.Get(hdrOccurredAt)); err != nil {
		return r, fmt.Errorf("eventstore: sequence %d on %s: bad %s header: %w", seq, subject, hdrOccurredAt, err)
	}
	if agg.ID == "" {
		return r, fmt.Errorf("eventstore: sequence %d: subject %q is not an aggregate subject", seq, subject)
	}
	r.Type = h.Get(hdrType)
	up, err := s.upcast(r)
	if err != nil {
		r.Type = ""
		return r, err
	}
	return up, nil
}

// followable is a consumer's message as a Record, for followers: an
// unreadable one is handed on without a type (see handedOn), which every
// follower ignores.
func (s *Store) followable(m jetstream.Msg) (domain.Record, error) {
	r, _, err := s.followableWith(m)
	return r, err
}

// followableWith is followable, with the message's metadata, read once.
func (s *Store) followableWith(m jetstream.Msg) (domain.Record, *jetstream.MsgMetadata, error) {
	meta, err := m.Metadata()
	if err != nil {
		// No metadata: not even a position to move past.
		return domain.Record{}, nil, fmt.Errorf("eventstore: message without metadata: %w", err)
	}
	r, err := s.recordFrom(m.Subject(), meta.Sequence.Stream, meta.Timestamp, m.Headers(), m.Data())
	return s.handedOn(r, err), meta, nil
}

// handedOn is r, read by recordFrom with err, as the store's readers get
// it: an event whose envelope cannot be read (written into the stream by
// hand, or damaged) is logged and handed on without a type, as an event
// of a type this version does not know: followers skip it, a history
// shows it as stored to admins, and a command on its aggregate is refused
// with 503. Failing the read would fail every read of the aggregate for
// good: the stream is never rewritten.
func (s *Store) handedOn(r domain.Record, err error) domain.Record {
	if err == nil {
		return r
	}
	if _, logged := s.unreadable.LoadOrStore(r.Sequence, true); !logged {
		s.log.Error("eventstore: unreadable event handed on without a type", "sequence", r.Sequence, "err", err)
	}
	r.Type = ""
	return r
}

func (s *Store) subject(a domain.Aggregate) string {
	return s.prefix + ".evt." + a.Type + "." + a.ID
}

// aggregateOf is the aggregate whose events subject holds; the zero
// Aggregate for a subject outside the events' (the stream takes none).
func (s *Store) aggregateOf(subject string) domain.Aggregate {
	rest, ok := strings.CutPrefix(subject, s.prefix+".evt.")
	if !ok {
		return domain.Aggregate{}
	}
	typ, id, _ := strings.Cut(rest, ".")
	return domain.Aggregate{Type: typ, ID: id}
}
