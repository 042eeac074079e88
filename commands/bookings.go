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

// CancelBooking withdraws one of the caller's bookings and gives its
// capacity back, in one transaction with the flight: a manifest that put
// the booking's shipment on board meanwhile conflicts with it, and the
// cancellation is decided again, and refused, where both were stored (the
// flight departing with a cancelled booking's cargo). The booking reactor
// holds its AWB number and reopens its quote.
func (h *Handler) CancelBooking(ctx context.Context, m Meta, id string) (Result[domain.Booking], error) {
	if !domain.ValidIdentifier(id) {
		return Result[domain.Booking]{}, domain.Errorf(domain.NotFound, "no booking %s", id)
	}
	at := h.now().UTC()
	var res *Result[domain.Booking]
	err := transact(ctx, h, func(t *transaction) error {
		// The booking's flight, which the transaction names first (see
		// transact); a booking's flight never changes.
		b, _, _, err := load(t.ctx, h, bookingAggregate(id), domain.EvolveBooking, "", t.how)
		if err != nil {
			return err
		}
		if b.ID == "" || !b.VisibleTo(m.Principal) {
			return domain.Errorf(domain.NotFound, "no booking %s", id)
		}
		if m.Principal.Role == domain.RoleAirline {
			return domain.Errorf(domain.Forbidden, "only the forwarder cancels its booking")
		}
		f, released, err := releaseIn(t, m.part("release"), b)
		if err != nil {
			return err
		}
		res, err = decideIn(t, bookingAggregate(id), m, domain.EvolveBooking,
			func(b domain.Booking) ([]domain.Event, error) {
				events, err := domain.DecideCancelBooking(b, f, "", at)
				if released {
					// The reactor need not take the flight's lock
					// again to find nothing to give back.
					events = domain.WithCapacityReleased(events)
				}
				return events, err
			})
		return err
	})
	if res == nil {
		return Result[domain.Booking]{}, err
	}
	return *res, err
}
