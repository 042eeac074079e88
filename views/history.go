package views

import (
	"encoding/json"
	"time"

	"github.com/cargostream/cargostream/domain"
)

// HistoryEntryJSON is one event of a resource's history, with its
// envelope: when, what (and its id, which webhook deliveries of it name),
// of which aggregate, by whom, and the request
// (correlation id) and event (causation id) it followed from. Data is the
// event as stored, or the part of it the reader may see.
type HistoryEntryJSON struct {
	Sequence      uint64          `json:"sequence"`
	OccurredAt    time.Time       `json:"occurredAt"`
	Type          string          `json:"type"`
	EventID       string          `json:"eventId"`
	AggregateType string          `json:"aggregateType"`
	AggregateID   string          `json:"aggregateId"`
	Actor         string          `json:"actor"`
	CorrelationID string          `json:"correlationId"`
	CausationID   string          `json:"causationId,omitempty"`
	Data          json.RawMessage `json:"data"`
}

// ToHistoryEntryJSON leaves out the command id, tenant and client address
// of the envelope: they are the operator's (the client address is in the
// audit log), and add nothing to the story.
func ToHistoryEntryJSON(r domain.Record) HistoryEntryJSON {
	return HistoryEntryJSON{Sequence: r.Sequence, OccurredAt: r.OccurredAt, Type: r.Type, EventID: r.EventID, AggregateType: r.Aggregate.Type,
		AggregateID: r.Aggregate.ID, Actor: r.Actor, CorrelationID: r.CorrelationID, CausationID: r.CausationID, Data: r.Data}
}
