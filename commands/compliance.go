package commands

import (
	"context"

	"github.com/cargostream/cargostream/domain"
)

func complianceAggregate(awb string) domain.Aggregate {
	return domain.Aggregate{Type: domain.AggregateCompliance, ID: awb}
}

// SubmitPLACI files pre-loading advance cargo information for an AWB, of
// the journey of its booking (found in bookings) if it has one;
// stockHolder as file takes it.
func (h *Handler) SubmitPLACI(ctx context.Context, m Meta, c domain.PLACISubmitted, bookings BookingsByAWB, stockHolder string) (Result[domain.Compliance], error) {
	c.PLACIID, c.OrganizationID, c.SubmittedAt = m.DeriveID("placi"), m.Principal.OrganizationID, h.now().UTC()
	b, _ := bookings.ByAWB(c.AWBNumber)
	booked, err := h.bookedJourney(ctx, b, c.OrganizationID)
	if err != nil {
		return Result[domain.Compliance]{}, err
	}
	return h.file(ctx, m, c.AWBNumber, stockHolder, func() ([]domain.Event, error) { return domain.DecidePLACI(c, booked, h.ref) })
}

// SubmitCSD files an electronic consignment security declaration;
// stockHolder as file takes it.
func (h *Handler) SubmitCSD(ctx context.Context, m Meta, c domain.SubmitCSD, stockHolder string) (Result[domain.Compliance], error) {
	c.CSDID, c.OrganizationID, c.SubmittedAt = m.DeriveID("csd"), m.Principal.OrganizationID, h.now().UTC()
	return h.file(ctx, m, c.AWBNumber, stockHolder, func() ([]domain.Event, error) { return domain.DecideCSD(c) })
}

// SubmitDGD files a shipper's declaration for dangerous goods;
// stockHolder as file takes it.
func (h *Handler) SubmitDGD(ctx context.Context, m Meta, c domain.SubmitDGD, stockHolder string) (Result[domain.Compliance], error) {
	c.DGDID, c.OrganizationID, c.SubmittedAt = m.DeriveID("dgd"), m.Principal.OrganizationID, h.now().UTC()
	return h.file(ctx, m, c.AWBNumber, stockHolder, func() ([]domain.Event, error) { return domain.DecideDGD(c, h.ref) })
}

// file records a filing of the shipment awb that decide decides.
// stockHolder is the forwarder whose AWB stock alone makes the shipment
// its own (domain.ShipmentOwnership.HeldInStockBy), or "": the number is
// then held in its ledger with the filing (see recordInStock).
func (h *Handler) file(ctx context.Context, m Meta, awb string, stockHolder string, decide func() ([]domain.Event, error)) (Result[domain.Compliance], error) {
	decideOn := func(domain.Compliance) ([]domain.Event, error) { return decide() }
	if stockHolder != "" {
		return recordInStock(ctx, h, m, stockHolder, awb, complianceAggregate(awb), domain.EvolveCompliance, decideOn)
	}
	return execute(ctx, h, complianceAggregate(awb), m, domain.EvolveCompliance, decideOn)
}
