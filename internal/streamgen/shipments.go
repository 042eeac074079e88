package streamgen

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/cargostream/cargostream/domain"
	"github.com/google/uuid"
)

var (
	shippers   = []string{"Bosch Automotive GmbH", "Siemens Healthineers AG", "Fleurop Kenya Ltd", "Shenzhen Electronics Co", "Pharma Nord A/S"}
	consignees = []string{"Acme Distribution Inc", "Global Parts LLC", "Blumen Großhandel GmbH", "Nordic Retail AB", "Sunrise Imports Pte Ltd"}
	goods      = []domain.Commodity{{Code: "GEN", Description: "machine parts"}, {Code: "COU", Description: "express documents"},
		{Code: "PEF", Description: "cut roses"}, {Code: "GEN", Description: "consumer electronics"}, {Code: "PER", Description: "chilled salmon"}}
)

// shipment writes the life of one RFQ, number n: requested, priced by the
// pricing reactor; most are booked, and the booking reactor reserves
// capacity, takes an AWB number, accepts the quote and confirms; the
// airline then posts the shipment's status events. Now and then the
// forwarder's sign-in is audited too.
func (g *gen) shipment(rnd *rand.Rand, n int) error {
	org := g.forwarders[n%len(g.forwarders)]
	a := airlines[rnd.IntN(len(airlines))]
	to := a.destinations[rnd.IntN(len(a.destinations))]
	forwarder := by{principal: domain.Principal{Subject: "client:" + org, OrganizationID: org, Role: domain.RoleForwarder},
		correlation: uuid.NewString(), clientIP: fmt.Sprintf("203.0.113.%d", n%250+1)}
	if n%20 == 0 {
		auth := newAgg[struct{}](domain.AggregateAuthorization, uuid.NewString())
		if _, _, err := decide(g, auth, forwarder, keep[struct{}], func(struct{}) ([]domain.Event, error) {
			return []domain.Event{domain.AuthorizationRecorded{Action: domain.ActionTokenIssued, Subject: forwarder.principal.Subject,
				OrganizationID: org, Detail: "client_credentials", At: time.Now().UTC()}}, nil
		}); err != nil {
			return err
		}
	}

	pieces := 1 + rnd.IntN(12)
	weight := float64(20+rnd.IntN(2400)) / 2
	what := goods[rnd.IntN(len(goods))]
	rfq := domain.RequestQuote{QuoteID: uuid.NewString(), OrganizationID: org, Shipper: domain.Party{Name: shippers[rnd.IntN(len(shippers))]},
		Consignee: domain.Party{Name: consignees[rnd.IntN(len(consignees))]}, Origin: a.hub, Destination: to, Pieces: &pieces,
		GrossWeightKg: &weight, Commodity: what, Dimensions: []domain.SentDimensionLine{{L: new(120.0), W: new(80.0), H: new(float64(40 + rnd.IntN(120))), Pieces: &pieces}},
		DeliveryToAirlineDate: g.now.AddDate(0, 0, 1+rnd.IntN(g.days)).Format(time.DateOnly), At: time.Now().UTC()}
	q := newAgg[domain.Quote](domain.AggregateQuote, rfq.QuoteID)
	_, requested, err := decide(g, q, forwarder, domain.EvolveQuote, func(s domain.Quote) ([]domain.Event, error) {
		return domain.DecideRequestQuote(s, rfq, g.ref)
	})
	if err != nil {
		return err
	}
	pricing := by{principal: domain.Principal{Subject: "reactor:pricing"}, correlation: forwarder.correlation, cause: requested}
	var flights []domain.Flight
	for _, f := range g.routes[a.hub+"-"+to] {
		flights = append(flights, f.view())
	}
	if _, _, err := decide(g, q, pricing, domain.EvolveQuote, func(s domain.Quote) ([]domain.Event, error) {
		now := time.Now().UTC()
		options, refusal := domain.PriceQuote(s, g.ref, flights, g.cards, now)
		return domain.DecidePriceQuote(s, options, refusal, now)
	}); err != nil {
		return err
	}
	if q.state.Status != domain.QuoteStatusPriced || rnd.IntN(10) >= 7 {
		return nil
	}
	return g.book(rnd, q, forwarder)
}

// book books one of a priced quote's first options and takes the booking
// through the booking reactor's steps and the airline's status events.
func (g *gen) book(rnd *rand.Rand, q *agg[domain.Quote], forwarder by) error {
	quote := q.state
	option := quote.Options[rnd.IntN(min(3, len(quote.Options)))]
	forwarder.correlation = uuid.NewString()
	b := newAgg[domain.Booking](domain.AggregateBooking, uuid.NewString())
	flight := g.flights[option.FlightID]
	_, requested, err := decide(g, b, forwarder, domain.EvolveBooking, func(s domain.Booking) ([]domain.Event, error) {
		return domain.DecideRequestBooking(s, quote, flight.view(), domain.RequestBooking{BookingID: b.id.ID, QuoteID: quote.ID, FlightID: option.FlightID,
			OrganizationID: quote.OrganizationID, Shipper: domain.FullParty{Name: quote.Shipper.Name, Address: "Industriestraße 12, 70565 Stuttgart", Contact: "+49 711 400400"},
			Consignee: domain.FullParty{Name: quote.Consignee.Name, Address: "200 Park Avenue, New York, NY 10166", Contact: "+1 212 555 0100"}, At: time.Now().UTC()})
	})
	if err != nil {
		return err
	}
	reactor := by{principal: domain.Principal{Subject: "reactor:bookings"}, correlation: forwarder.correlation, cause: requested}
	_, _, refusal := decide(g, flight, reactor, domain.EvolveFlight, func(f domain.Flight) ([]domain.Event, error) {
		return domain.DecideReserveCapacity(f, b.id.ID, domain.Reservation{WeightKg: b.state.WeightKg, VolumeM3: b.state.VolumeM3}, time.Now().UTC())
	})
	if domain.ReasonOf(refusal) != "" {
		_, _, err := decide(g, b, reactor, domain.EvolveBooking, func(s domain.Booking) ([]domain.Event, error) {
			return domain.DecideRejectBooking(s, refusal, time.Now().UTC())
		})
		return err
	}
	if refusal != nil {
		return refusal
	}
	f := flight.view()
	awb := ""
	if _, _, err := decide(g, g.ledgers[quote.OrganizationID+"-"+f.AWBPrefix], reactor, domain.EvolveStockLedger, func(l domain.StockLedger) ([]domain.Event, error) {
		events, number, err := domain.DecideUseAWB(l, "", b.id.ID, time.Now().UTC().Format(time.DateOnly))
		awb = number
		return events, err
	}); err != nil {
		return err
	}
	if awb == "" {
		return errors.New("streamgen: no AWB number taken")
	}
	if _, _, err := decide(g, q, reactor, domain.EvolveQuote, func(s domain.Quote) ([]domain.Event, error) {
		return domain.DecideAcceptQuote(s, b.id.ID, f.ID, time.Now().UTC())
	}); err != nil {
		return err
	}
	if _, _, err := decide(g, b, reactor, domain.EvolveBooking, func(s domain.Booking) ([]domain.Event, error) {
		return domain.DecideConfirmBooking(s, awb, domain.PriceOf(option), time.Now().UTC())
	}); err != nil {
		return err
	}
	handler := airline(f.Carrier, f.AWBPrefix)
	shipment := newAgg[domain.Shipment](domain.AggregateShipment, awb)
	for i, code := range []string{"RCS", "DEP", "ARR"}[:1+rnd.IntN(3)] {
		now := time.Now().UTC()
		weight := b.state.WeightKg
		if _, _, err := decide(g, shipment, handler, domain.EvolveShipment, func(s domain.Shipment) ([]domain.Event, error) {
			events, _, err := domain.DecideRecordStatus(s, domain.RecordStatus{AWBNumber: awb, StatusEventID: uuid.NewString(), EventType: code,
				EventDate: now.Add(time.Duration(i-3) * time.Hour).Format(time.RFC3339), Location: f.Origin, Pieces: &b.state.Pieces,
				Weight: &weight, At: now}, g.ref)
			return events, err
		}); err != nil {
			return err
		}
	}
	return nil
}
