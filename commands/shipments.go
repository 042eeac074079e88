package commands

import (
	"context"

	"github.com/cargostream/cargostream/domain"
)

// RecordShipmentStatus records a status event of the shipment with that
// (canonical) AWB number. Each shipment is an aggregate of its own. A DEP
// or ARR that repeats one on record (see domain.Shipment.Repeated) is not
// recorded: the result has no event, and repeated is the status on
// record. Its pieces are checked against the shipment as declared, its
// MAWB or confirmed booking (found in bookings) as the store holds them:
// a MAWB filed a moment ago counts, though the read models may not have
// it yet. They are read when the command decides, so a retry that ran
// before, or an event without pieces, does not pay for them. stockHolder
// is the forwarder whose AWB stock alone makes the shipment its own, or
// "": the number is then held in its ledger with the status (see
// recordInStock), cargo the forwarder labelled with it before booking.
func (h *Handler) RecordShipmentStatus(ctx context.Context, m Meta, c domain.RecordStatus, bookings BookingsByAWB, stockHolder string) (res Result[domain.Shipment], repeated *domain.ShipmentStatusRecorded, err error) {
	c.StatusEventID = m.DeriveID("statusevent")
	c.At = h.now().UTC()
	declaredRead := false
	decide := func(s domain.Shipment) ([]domain.Event, error) {
		if c.Pieces != nil && !declaredRead {
			declared, err := h.declared(ctx, c.AWBNumber, bookings)
			if err != nil {
				return nil, err
			}
			c.Declared, declaredRead = declared, true
		}
		// The last decision counts: one on a state found stale is made
		// again.
		events, rep, err := domain.DecideRecordStatus(s, c, h.ref)
		repeated = rep
		return events, err
	}
	if stockHolder != "" {
		res, err = recordInStock(ctx, h, m, stockHolder, c.AWBNumber, shipmentAggregate(c.AWBNumber), domain.EvolveShipment, decide)
	} else {
		res, err = execute(ctx, h, shipmentAggregate(c.AWBNumber), m, domain.EvolveShipment, decide)
	}
	if err != nil || res.Event != nil {
		// A command that ran before answers with its own event, without
		// deciding again.
		return res, nil, err
	}
	return res, repeated, nil
}

// declared is the shipment of an AWB number as declared
// (domain.Declared), from its MAWB and its booking as stored.
func (h *Handler) declared(ctx context.Context, awb string, bookings BookingsByAWB) (domain.Declaration, error) {
	w, _, _, err := load(ctx, h, waybillAggregate(awb), domain.EvolveWaybills, "", loadFresh)
	if err != nil {
		return domain.Declaration{}, err
	}
	var b domain.Booking
	if indexed, ok := bookings.ByAWB(awb); ok {
		if b, _, _, err = load(ctx, h, bookingAggregate(indexed.ID), domain.EvolveBooking, "", loadFresh); err != nil {
			return domain.Declaration{}, err
		}
	}
	return domain.Declared(awb, b, w.MAWB), nil
}

func shipmentAggregate(awb string) domain.Aggregate {
	return domain.Aggregate{Type: domain.AggregateShipment, ID: awb}
}
