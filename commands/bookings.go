package commands

import (
	"context"

	"github.com/cargostream/cargostream/domain"
)

func bookingAggregate(id string) domain.Aggregate {
	return domain.Aggregate{Type: domain.AggregateBooking, ID: id}
}

func quoteAggregate(id string) domain.Aggregate {
	return domain.Aggregate{Type: domain.AggregateQuote, ID: id}
}

// RequestBooking files a booking of a quoted flight as pending; the
// booking reactor confirms or rejects it. The flight is read as stored,
// not as a read model has it, so a booking of a flight just closed is
// refused here rather than filed and rejected moments later.
func (h *Handler) RequestBooking(ctx context.Context, m Meta, c domain.RequestBooking) (Result[domain.Booking], error) {
	c.BookingID = m.DeriveID("booking")
	c.OrganizationID = m.Principal.OrganizationID
	c.At = h.now().UTC()
	var q domain.Quote
	if domain.ValidIdentifier(c.QuoteID) {
		var err error
		if q, _, _, err = load(ctx, h, quoteAggregate(c.QuoteID), domain.EvolveQuote, "", loadFresh); err != nil {
			return Result[domain.Booking]{}, err
		}
	}
	var f domain.Flight
	if domain.ValidIdentifier(c.FlightID) {
		var err error
		if f, _, _, err = load(ctx, h, flightAggregate(c.FlightID), domain.EvolveFlight, "", loadFresh); err != nil {
			return Result[domain.Booking]{}, err
		}
	}
	if awb := c.AWBAsked(); awb != "" {
		w, _, _, err := load(ctx, h, waybillAggregate(awb), domain.EvolveWaybills, "", loadFresh)
		if err != nil {
			return Result[domain.Booking]{}, err
		}
		c.Waybill = w.MAWB
	}
	return create(ctx, h, bookingAggregate(c.BookingID), m, domain.EvolveBooking,
		func(b domain.Booking) ([]domain.Event, error) { return domain.DecideRequestBooking(b, q, f, c) })
}

// CancelBooking withdraws one of the caller's bookings; the booking
// reactor gives its capacity back.
func (h *Handler) CancelBooking(ctx context.Context, m Meta, id string) (Result[domain.Booking], error) {
	if !domain.ValidIdentifier(id) {
		return Result[domain.Booking]{}, domain.Errorf(domain.NotFound, "no booking %s", id)
	}
	at := h.now().UTC()
	return execute(ctx, h, bookingAggregate(id), m, domain.EvolveBooking, func(b domain.Booking) ([]domain.Event, error) {
		if b.ID == "" || !b.VisibleTo(m.Principal) {
			return nil, domain.Errorf(domain.NotFound, "no booking %s", id)
		}
		if m.Principal.Role == domain.RoleAirline {
			return nil, domain.Errorf(domain.Forbidden, "only the forwarder cancels its booking")
		}
		f, _, _, err := load(ctx, h, flightAggregate(b.FlightID), domain.EvolveFlight, "", loadFresh)
		if err != nil {
			return nil, err
		}
		return domain.DecideCancelBooking(b, f, "", at)
	})
}
