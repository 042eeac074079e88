package commands

import (
	"context"

	"github.com/cargostream/cargostream/domain"
)

// RecordShipmentStatus records a status event of the shipment with that
// (canonical) AWB number. Each shipment is an aggregate of its own. A DEP
// or ARR that repeats one on record (see domain.Shipment.Repeats) is not
// recorded: the result has no event, and its state's Moved is the status
// on record.
func (h *Handler) RecordShipmentStatus(ctx context.Context, m Meta, c domain.RecordStatus) (Result[domain.Shipment], error) {
	c.StatusEventID = m.DeriveID("statusevent")
	c.At = h.now().UTC()
	return execute(ctx, h, shipmentAggregate(c.AWBNumber), m, domain.EvolveShipment,
		func(s domain.Shipment) ([]domain.Event, error) { return domain.DecideRecordStatus(s, c, h.ref) })
}

func shipmentAggregate(awb string) domain.Aggregate {
	return domain.Aggregate{Type: domain.AggregateShipment, ID: awb}
}
