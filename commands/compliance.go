package commands

import (
	"context"

	"github.com/cargostream/cargostream/domain"
)

func complianceAggregate(awb string) domain.Aggregate {
	return domain.Aggregate{Type: domain.AggregateCompliance, ID: awb}
}

// SubmitPLACI files pre-loading advance cargo information for an AWB, of
// the journey of its booking (found in bookings) if it has one.
func (h *Handler) SubmitPLACI(ctx context.Context, m Meta, c domain.PLACISubmitted, bookings BookingsByAWB) (Result[domain.Compliance], error) {
	c.PLACIID, c.OrganizationID, c.SubmittedAt = m.DeriveID("placi"), m.Principal.OrganizationID, h.now().UTC()
	b, _ := bookings.ByAWB(c.AWBNumber)
	booked, err := h.bookedJourney(ctx, b, c.OrganizationID)
	if err != nil {
		return Result[domain.Compliance]{}, err
	}
	return execute(ctx, h, complianceAggregate(c.AWBNumber), m, domain.EvolveCompliance,
		func(domain.Compliance) ([]domain.Event, error) { return domain.DecidePLACI(c, booked, h.ref) })
}

// SubmitCSD files an electronic consignment security declaration.
func (h *Handler) SubmitCSD(ctx context.Context, m Meta, c domain.SubmitCSD) (Result[domain.Compliance], error) {
	c.CSDID, c.OrganizationID, c.SubmittedAt = m.DeriveID("csd"), m.Principal.OrganizationID, h.now().UTC()
	return execute(ctx, h, complianceAggregate(c.AWBNumber), m, domain.EvolveCompliance,
		func(domain.Compliance) ([]domain.Event, error) { return domain.DecideCSD(c) })
}

// SubmitDGD files a shipper's declaration for dangerous goods.
func (h *Handler) SubmitDGD(ctx context.Context, m Meta, c domain.SubmitDGD) (Result[domain.Compliance], error) {
	c.DGDID, c.OrganizationID, c.SubmittedAt = m.DeriveID("dgd"), m.Principal.OrganizationID, h.now().UTC()
	return execute(ctx, h, complianceAggregate(c.AWBNumber), m, domain.EvolveCompliance,
		func(domain.Compliance) ([]domain.Event, error) { return domain.DecideDGD(c, h.ref) })
}
