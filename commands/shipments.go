package commands

import (
	"context"

	"github.com/cargostream/cargostream/domain"
)

// RecordShipmentStatus records a status event of the shipment with that
// (canonical) AWB number. Each shipment is an aggregate of its own. A DEP
// or ARR that repeats one on record (see domain.Shipment.Repeated) is not
// recorded: the result has no event, and repeated is the status on
// record.
func (h *Handler) RecordShipmentStatus(ctx context.Context, m Meta, c domain.RecordStatus) (res Result[domain.Shipment], repeated *domain.ShipmentStatusRecorded, err error) {
	c.StatusEventID = m.DeriveID("statusevent")
	c.At = h.now().UTC()
	res, err = execute(ctx, h, shipmentAggregate(c.AWBNumber), m, domain.EvolveShipment,
		func(s domain.Shipment) ([]domain.Event, error) {
			// The last decision counts: one on a state found stale is
			// made again.
			events, rep, err := domain.DecideRecordStatus(s, c, h.ref)
			repeated = rep
			return events, err
		})
	if err != nil || res.Event != nil {
		// A command that ran before answers with its own event, without
		// deciding again.
		return res, nil, err
	}
	return res, repeated, nil
}

func shipmentAggregate(awb string) domain.Aggregate {
	return domain.Aggregate{Type: domain.AggregateShipment, ID: awb}
}
