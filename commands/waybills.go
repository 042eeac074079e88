package commands

import (
	"context"

	"github.com/cargostream/cargostream/domain"
)

func waybillAggregate(awb string) domain.Aggregate {
	return domain.Aggregate{Type: domain.AggregateWaybill, ID: awb}
}

// waybillCodes name the refusals of an AWB number on a MAWB.
var waybillCodes = map[string]domain.FieldCode{domain.ReasonAWBNotInStock: domain.CodeAWBNotInStock, domain.ReasonAWBUsed: domain.CodeAWBInUse}

// BookingsByAWB finds the booking that holds an AWB number, from the
// bookings read model.
type BookingsByAWB interface {
	ByAWB(awb string) (domain.Booking, bool)
}

// bookedJourney is the journey of booking b, its quote's, if b is
// confirmed and holds its AWB number for organisation orgID; else the zero
// Journey: another's booking is not told.
func (h *Handler) bookedJourney(ctx context.Context, b domain.Booking, orgID string) (domain.Journey, error) {
	if !b.NumberHeldBy(orgID) || b.Status != domain.BookingStatusConfirmed {
		return domain.Journey{}, nil
	}
	q, _, _, err := load(ctx, h, quoteAggregate(b.QuoteID), domain.EvolveQuote, "", loadFresh)
	return domain.Journey{Origin: q.Origin, Destination: q.Destination}, err
}

// CreateMAWB files a forwarder's master air waybill. Its number must be
// the one of the forwarder's own booking (found in bookings), whose
// journey it goes, or else a number of its valid stock, which the MAWB
// then uses up: in the same transaction, so that a number is never used
// up without its MAWB.
func (h *Handler) CreateMAWB(ctx context.Context, m Meta, c domain.CreateMAWB, bookings BookingsByAWB) (Result[domain.Waybills], error) {
	c.OrganizationID = m.Principal.OrganizationID
	c.At = h.now().UTC()
	b, found := bookings.ByAWB(c.AWBNumber)
	var err error
	if c.Booked, err = h.bookedJourney(ctx, b, c.OrganizationID); err != nil {
		return Result[domain.Waybills]{}, err
	}
	// The fields first: a bad MAWB must not use up a number.
	if _, err := domain.DecideCreateMAWB(domain.Waybills{}, c, h.ref); err != nil {
		return Result[domain.Waybills]{}, err
	}
	fromStock := !found || !b.NumberHeldBy(c.OrganizationID)
	var res *Result[domain.Waybills]
	err = transact(ctx, h, func(t *transaction) error {
		if fromStock {
			sub := m
			sub.CommandID = m.CommandID + ":awb"
			if _, err := useAWB(t, sub, c.OrganizationID, c.AWBNumber[:3], c.AWBNumber, domain.MAWBReference(c.AWBNumber)); err != nil {
				if code, ok := waybillCodes[domain.ReasonOf(err)]; ok {
					var p domain.Problems
					p.Add("awbNumber", code, "%s", domain.ErrorMessage(err))
					return p.Err()
				}
				return err
			}
		}
		var err error
		res, err = decideIn(t, waybillAggregate(c.AWBNumber), m, domain.EvolveWaybills,
			func(w domain.Waybills) ([]domain.Event, error) { return domain.DecideCreateMAWB(w, c, h.ref) })
		return err
	})
	if err != nil {
		return Result[domain.Waybills]{}, err
	}
	return *res, nil
}

// CreateHAWB files a house waybill under one of the forwarder's masters.
func (h *Handler) CreateHAWB(ctx context.Context, m Meta, c domain.CreateHAWB) (Result[domain.Waybills], error) {
	c.OrganizationID = m.Principal.OrganizationID
	c.At = h.now().UTC()
	return execute(ctx, h, waybillAggregate(c.MAWBNumber), m, domain.EvolveWaybills,
		func(w domain.Waybills) ([]domain.Event, error) { return domain.DecideCreateHAWB(w, c) })
}
