package commands

import (
	"context"

	"github.com/cargostream/cargostream/domain"
)

// RequestQuote files a forwarder's RFQ. The quote id follows from the
// command id, so a retried RFQ finds the quote its first try created.
func (h *Handler) RequestQuote(ctx context.Context, m Meta, c domain.RequestQuote) (Result[domain.Quote], error) {
	c.QuoteID = m.DeriveID("quote")
	c.OrganizationID = m.Principal.OrganizationID
	c.At = h.now().UTC()
	return create(ctx, h, domain.Aggregate{Type: domain.AggregateQuote, ID: c.QuoteID}, m, domain.EvolveQuote,
		func(q domain.Quote) ([]domain.Event, error) { return domain.DecideRequestQuote(q, c, h.ref) })
}
