package views

import (
	"testing"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/cargostream/cargostream/projections"
)

func TestRendererShowsQuotesAsTheirEventsMadeThemToThoseWhoMaySee(t *testing.T) {
	at := time.Date(2026, 11, 26, 9, 30, 0, 0, time.UTC)
	identity, quotes := projections.NewIdentity(), projections.NewQuotes()
	for _, o := range []domain.OrganizationCreated{
		{OrganizationID: "f1", Role: domain.RoleForwarder, CreatedAt: at},
		{OrganizationID: "f2", Role: domain.RoleForwarder, CreatedAt: at},
	} {
		identity.Apply(domain.Record{Aggregate: domain.Aggregate{Type: domain.AggregateOrganization, ID: o.OrganizationID}}, o)
	}
	requested := domain.QuoteRequested{QuoteID: "q1", OrganizationID: "f1", Origin: "FRA", Destination: "JFK", Pieces: 2,
		GrossWeightKg: 350.5, Commodity: domain.Commodity{Code: "GEN"}, RequestedAt: at}
	rec := domain.Record{Aggregate: domain.Aggregate{Type: domain.AggregateQuote, ID: "q1"}}
	quotes.Apply(rec, requested)
	// Priced before the dispatcher comes to quote.created, as the pricing
	// reactor runs beside it.
	quotes.Apply(rec, domain.QuotePriced{QuoteID: "q1", ChargeableWeightKg: 350.5, PricedAt: at.Add(time.Second)})
	r := &Renderer{Identity: identity, Quotes: quotes}

	data, ok := r.Render(domain.AggregateQuote, "q1", requested, "f1")
	if q, isQuote := data.(QuoteJSON); !ok || !isQuote || q.Status != domain.QuoteStatusPending || q.ChargeableWeightKg != nil {
		t.Errorf("quote.created to its forwarder = %+v, %v; want the quote pending, as requested", data, ok)
	}
	data, ok = r.Render(domain.AggregateQuote, "q1", domain.QuotePriced{QuoteID: "q1"}, "f1")
	if q, isQuote := data.(QuoteJSON); !ok || !isQuote || q.Status != domain.QuoteStatusPriced {
		t.Errorf("quote.priced to its forwarder = %+v, %v; want the quote priced", data, ok)
	}
	if _, ok := r.Render(domain.AggregateQuote, "q1", requested, "f2"); ok {
		t.Error("quote.created is rendered for another forwarder")
	}
	if _, ok := r.Render(domain.AggregateQuote, "q1", requested, "nobody"); ok {
		t.Error("quote.created is rendered for an unknown organisation")
	}
}
