package commands

import (
	"context"

	"github.com/cargostream/cargostream/domain"
)

// RecordShipmentStatus records a status event of the shipment with that
// (canonical) AWB number. Each shipment is an aggregate of its own; a
// status event depends on none before it, so the aggregate keeps no state.
func (h *Handler) RecordShipmentStatus(ctx context.Context, m Meta, c domain.RecordStatus) (Result[struct{}], error) {
	c.StatusEventID = m.DeriveID("statusevent")
	c.At = h.now().UTC()
	return execute(ctx, h, shipmentAggregate(c.AWBNumber), m, noState,
		func(struct{}) ([]domain.Event, error) { return domain.DecideRecordStatus(c, h.ref) })
}

func shipmentAggregate(awb string) domain.Aggregate {
	return domain.Aggregate{Type: domain.AggregateShipment, ID: awb}
}

// noState is the evolve function of an aggregate whose decisions need no
// state.
func noState(s struct{}, _ domain.Event) struct{} { return s }
