package commands

import (
	"context"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/eventstore"
)

// RecordShipmentStatus records a status event of the shipment with that
// (canonical) AWB number. Each shipment is an aggregate of its own.
func (h *Handler) RecordShipmentStatus(ctx context.Context, m Meta, c domain.RecordStatus) (Result[[]domain.ShipmentStatusRecorded], error) {
	c.StatusEventID = m.DeriveID("statusevent")
	c.At = h.now().UTC()
	return execute(ctx, h, eventstore.Aggregate{Type: "shipment", ID: c.AWBNumber}, m,
		func(s []domain.ShipmentStatusRecorded, e domain.Event) []domain.ShipmentStatusRecorded {
			if e, ok := e.(domain.ShipmentStatusRecorded); ok {
				return append(s[:len(s):len(s)], e)
			}
			return s
		},
		func([]domain.ShipmentStatusRecorded) ([]domain.Event, error) {
			return domain.DecideRecordStatus(c, h.ref)
		})
}
